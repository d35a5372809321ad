#!/usr/bin/env bash
# build.sh - libmicrohttpd for the static kiln (kiln serve), built from
# Debian's own source package.  Debian ships libmicrohttpd only linked with
# GnuTLS (and through it nettle, hogweed, GMP, p11-kit, libtasn1, libidn2),
# which a static kiln cannot take; kiln serve speaks plain HTTP, so the same
# source, with Debian's patches, is configured with HTTPS left out and built
# as a static archive only.
#
# The source comes through apt from the mirror the machine already uses:
# a private apt configuration in PREFIX.apt holds a deb-src entry for each
# deb entry of /etc/apt/sources.list.d/*.sources (deb822) and
# /etc/apt/sources.list, so neither root nor a change to the machine's
# apt configuration is needed; `apt-get source` checks the files against
# the mirror's signed index.  The version is pinned (VERSION below: the
# one Debian 12's libmicrohttpd-dev has), so every build links the same code.
#
# Writes PREFIX/usr/include/microhttpd.h, PREFIX/usr/lib/libmicrohttpd.a,
# PREFIX/usr/lib/pkgconfig/libmicrohttpd.pc (what CMakeLists.txt links),
# PREFIX/usr/share/doc/libmicrohttpd/copyright (Debian's, which npm-pack
# ships) and PREFIX/packages.txt, "PACKAGE PATH" for the archive (see
# packaging/licence_files.sh).  Nothing to do when PREFIX holds this
# version already.
#
# Needs: build-essential (make, dpkg-dev's dpkg-source) and, to cross-build,
# HOST's compiler (aarch64-linux-gnu: gcc-aarch64-linux-gnu).
#
# usage: build.sh PREFIX [HOST [CC [JOBS]]]
set -euo pipefail
usage="usage: build.sh PREFIX [HOST [CC [JOBS]]]"
prefix=${1:?$usage}
host=${2:-}
cc=${3:-${host:+$host-}gcc}
jobs=${4:-$(nproc)}
VERSION=0.9.75-6
UPSTREAM=${VERSION%-*}
die() { echo "libmicrohttpd/build.sh: $*" >&2; exit 1; }

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
stamp=$prefix/version
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$VERSION ${host:-native} $cc" ] &&
	[ -f "$prefix/usr/lib/libmicrohttpd.a" ]; then
	exit 0
fi
command -v dpkg-source >/dev/null || die "dpkg-source is missing (apt-get install dpkg-dev)"
command -v "$cc" >/dev/null || die "$cc is missing"

# A deb-src stanza for every deb one the machine has.
apt=$prefix.apt
rm -rf "$apt" "$prefix.src"
mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$prefix.src"
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
[ -s "$apt/sources.list.d/deb-src.sources" ] || [ -s "$apt/sources.list" ] ||
	die "no deb entry in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list to take the source from"
aptget() {
	apt-get -q -o Dir::Etc::SourceList="$apt/sources.list" \
		-o Dir::Etc::SourceParts="$apt/sources.list.d" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
		-o APT::Sandbox::User="$(id -un)" "$@"
}
aptget update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; die "apt-get update (deb-src) failed"; }
(cd "$prefix.src" && aptget source "libmicrohttpd=$VERSION") >"$apt/source.log" 2>&1 ||
	{ cat "$apt/source.log" >&2; die "apt-get source libmicrohttpd=$VERSION failed"; }
src=$prefix.src/libmicrohttpd-$UPSTREAM
[ -x "$src/configure" ] || die "no $src/configure after apt-get source"

# HTTPS, and every optional library with it, left out; the library alone
# (no documentation, examples or test programs).
(
	cd "$src"
	./configure ${host:+--host="$host"} CC="$cc" CFLAGS="-O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=2" \
		--prefix="$prefix/usr" --libdir="$prefix/usr/lib" \
		--disable-shared --enable-static --with-pic=no \
		--disable-https --without-gnutls --disable-curl --disable-nls \
		--disable-doc --disable-examples
) >"$prefix.configure.log" 2>&1 || { tail -40 "$prefix.configure.log" >&2; die "configure failed"; }
grep -q 'HTTPS support: *no' "$prefix.configure.log" || die "configure did not leave HTTPS out"
make -C "$src/src/microhttpd" -j "$jobs" >"$prefix.make.log" 2>&1 ||
	{ tail -40 "$prefix.make.log" >&2; die "make failed"; }
rm -rf "$prefix/usr"
{
	make -C "$src/src/include" install &&
		make -C "$src/src/microhttpd" install &&
		make -C "$src" install-pkgconfigDATA
} >>"$prefix.make.log" 2>&1 || { tail -40 "$prefix.make.log" >&2; die "make install failed"; }
rm -f "$prefix/usr/lib/"*.la
mkdir -p "$prefix/usr/share/doc/libmicrohttpd"
cp "$src/debian/copyright" "$prefix/usr/share/doc/libmicrohttpd/copyright"
echo "libmicrohttpd usr/lib/libmicrohttpd.a" >"$prefix/packages.txt"
[ -f "$prefix/usr/lib/libmicrohttpd.a" ] || die "no usr/lib/libmicrohttpd.a"
echo "$VERSION ${host:-native} $cc" >"$stamp"
