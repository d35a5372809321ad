# static_checks.sh - the checks every static kiln binary passes, whatever
# its architecture: shared by static.sh (x86-64) and arm64.sh (sourced
# after ../e2e/lib.sh).
#
# static_binary_checks BINARY TOOL_PREFIX: `file` says statically linked,
# no program interpreter, no dynamic section; stripped (TOOL_PREFIXstrip,
# into $T/kiln, which the caller may copy into a root of its own) it is
# under 8 MB; its symbols (TOOL_PREFIXnm, into $T/nm, for the caller's own
# checks) hold no name-service lookup and no libxml2 (xar left out).
#
# licence_table_checks LIBS README: every archive LIBS lists (one path a
# line, the static build's static-libs.txt, which the caller checks holds
# what it must) comes from a Debian package
# that has a copyright file and is in README's "Licences" table.
. "$(dirname "${BASH_SOURCE[0]}")/../../packaging/licence_files.sh"
static_max_size=8000000 # bytes, stripped

static_binary_checks() {
	local bin=$1 prefix=$2 size
	file -b "$bin" >"$T/file"
	check "file says statically linked" grep -q 'statically linked' "$T/file"
	check "no program interpreter" not sh -c "readelf -l '$bin' | grep -q INTERP"
	check "no dynamic section" sh -c "readelf -d '$bin' | grep -q 'no dynamic section'"
	"${prefix}strip" -o "$T/kiln" "$bin"
	size=$(stat -c %s "$T/kiln")
	echo "${0##*/}: stripped size $size bytes" >&2
	check "stripped, under $static_max_size bytes ($size)" [ "$size" -lt "$static_max_size" ]
	"${prefix}nm" "$bin" >"$T/nm" 2>/dev/null
	check "symbols to inspect" [ -s "$T/nm" ]
	check "no name-service lookups linked (getpwnam, getgrgid, ...)" \
		not grep -qE ' [TtWw] (getpw(nam|uid|ent)|getgr(nam|gid|ent|ouplist)|initgroups)(_r)?$' "$T/nm"
	check "no libxml2 linked (xar left out)" not grep -qE ' [TtWw] xml[A-Z]' "$T/nm"
}

licence_table_checks() {
	local libs=$1 readme=$2 lib deb copyright
	awk '/^## Licences/{p=1; next} p && /^## /{exit} p' "$readme" >"$T/licences"
	while read -r lib; do
		deb= copyright=
		read -r deb copyright < <(lib_package "$lib")
		check "$lib comes from a Debian package" [ -n "$deb" ]
		check "$lib ($deb) has a copyright file" [ -s "$copyright" ]
		check "$lib ($deb) is in the README's licence table" grep -qF "| \`$deb\` |" "$T/licences"
	done <"$libs"
}
