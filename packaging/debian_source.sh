# debian_source.sh - Debian source packages through apt, for the scripts of
# packaging/ that build a library Debian does not ship the way kiln needs
# it (sourced; see packaging/libmicrohttpd/build.sh, packaging/wasm/build.sh).
#
# debian_source DIR PKG=VERSION...: each source package unpacked into
# DIR/PKG-UPSTREAM (dpkg-source, Debian's patches applied), through a
# private apt configuration in DIR/apt that holds a deb-src entry for each
# deb entry of /etc/apt/sources.list.d/*.sources (deb822) and
# /etc/apt/sources.list: no root, no change to the machine's apt
# configuration; `apt-get source` checks the files against the mirror's
# signed index.  Logs go to DIR/apt/*.log; on failure the log is printed
# and debian_source returns 1.
#
# Needs: dpkg-dev (dpkg-source).
debian_source() {
	local dir=$1 apt f
	shift
	apt=$dir/apt
	command -v dpkg-source >/dev/null ||
		{ echo "debian_source: dpkg-source is missing (apt-get install dpkg-dev)" >&2; return 1; }
	rm -rf "$apt"
	mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# each stanza whose Types lists deb, with Types: deb-src
		awk 'function flush() { if (deb && body != "") printf "Types: deb-src\n%s\n", body; deb = 0; body = "" }
		     /^[ \t]*$/ { flush(); next }
		     /^#/ { next }
		     /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1; next }
		     { body = body $0 "\n" }
		     END { flush() }' "$f"
	done >"$apt/sources.list.d/deb-src.sources"
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^[ \t]*deb[ \t]/deb-src /p' /etc/apt/sources.list
	fi >"$apt/sources.list"
	if ! [ -s "$apt/sources.list.d/deb-src.sources" ] && ! [ -s "$apt/sources.list" ]; then
		echo "debian_source: no deb entry in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list to take the source from" >&2
		return 1
	fi
	debian_source_apt update >"$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; echo "debian_source: apt-get update (deb-src) failed" >&2; return 1; }
	(cd "$dir" && debian_source_apt source "$@") >"$apt/source.log" 2>&1 ||
		{ cat "$apt/source.log" >&2; echo "debian_source: apt-get source $* failed" >&2; return 1; }
}

# apt-get with the private configuration of DIR/apt (set by debian_source).
debian_source_apt() {
	apt-get -q -o Dir::Etc::SourceList="$apt/sources.list" \
		-o Dir::Etc::SourceParts="$apt/sources.list.d" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
		-o APT::Sandbox::User="$(id -un)" "$@"
}
