#!/usr/bin/env bash
# build.sh - libmicrohttpd for the static kiln (kiln serve), built from
# Debian's own source package.  Debian ships libmicrohttpd only linked with
# GnuTLS (and through it nettle, hogweed, GMP, p11-kit, libtasn1, libidn2),
# which a static kiln cannot take; kiln serve speaks plain HTTP, so the same
# source, with Debian's patches, is configured with HTTPS left out and built
# as a static archive only.
#
# The source comes through apt from the mirror the machine already uses:
# a private apt configuration (packaging/debian_source.sh, in PREFIX.src/apt)
# holds a deb-src entry for each deb entry of the machine's, so neither
# root nor a change to the machine's apt configuration is needed;
# `apt-get source` checks the files against the mirror's signed index.  The
# version is pinned (VERSION below: the
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

rm -rf "$prefix.src"
mkdir -p "$prefix.src"
. "$(dirname "$0")/../debian_source.sh"
debian_source "$prefix.src" "libmicrohttpd=$VERSION" || die "apt-get source libmicrohttpd=$VERSION failed"
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
