#!/usr/bin/env bash
# zopfli.sh - Debian's zopfli library for arm64, unpacked into PREFIX
# (PREFIX/usr/include/zopfli, PREFIX/usr/lib/libzopfli.a, the shared
# library's versioned name, which CMakeLists.txt reads the version off, and
# PREFIX/usr/share/doc/libzopfli-dev/copyright, the licence npm-pack ships),
# and PREFIX/packages.txt, "PACKAGE PATH" for every file unpacked (see
# packaging/licence_files.sh).
#
# libzopfli-dev puts its files in /usr/lib rather than a multiarch
# directory, so libzopfli-dev:arm64 cannot be installed beside the amd64
# package the native build needs: its .deb files are downloaded (apt-get
# download, no root needed; the arm64 architecture must be enabled:
# dpkg --add-architecture arm64 && apt-get update) and unpacked here.
#
# usage: zopfli.sh PREFIX
set -euo pipefail
prefix=${1:?usage: zopfli.sh PREFIX}
pkgs="libzopfli-dev:arm64 libzopfli1:arm64"
die() { echo "zopfli.sh: $*" >&2; exit 1; }

[ -f "$prefix/packages.txt" ] && [ -f "$prefix/usr/lib/libzopfli.a" ] && exit 0
dpkg --print-foreign-architectures | grep -qx arm64 ||
	die "the arm64 architecture is not enabled (dpkg --add-architecture arm64 && apt-get update)"
debs=$prefix.debs
rm -rf "$debs" "$prefix"
mkdir -p "$debs"
# apt-get download writes into the current directory
(cd "$debs" && apt-get download $pkgs >/dev/null 2>&1) ||
	(cd "$debs" && apt-get download $pkgs) ||
	die "apt-get download $pkgs failed (apt-get update?)"
mkdir -p "$prefix"
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$prefix"
	pkg=$(dpkg-deb -f "$deb" Package)
	dpkg-deb -c "$deb" | awk -v p="$pkg" '$1 !~ /^d/ { sub(/^\.\//, "", $6); print p, $6 }'
done >"$prefix/packages.txt.tmp"
mv "$prefix/packages.txt.tmp" "$prefix/packages.txt"
rm -rf "$debs"
[ -f "$prefix/usr/lib/libzopfli.a" ] || die "no usr/lib/libzopfli.a in $pkgs"
