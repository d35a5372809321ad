#!/usr/bin/env bash
# pack.sh - the two npm packages of kiln, as tarballs: `npm pack` of
# kiln-precompress (the launcher and the JavaScript API, whose option list
# and TypeScript declarations gen-api.js makes from KILN's --help) and
# kiln-precompress-linux-x64 (the static binary, stripped, with the licences
# of everything linked into it).
#
# usage: pack.sh SRC BUILD VERSION KILN STRIP STATIC_LIBS
#   SRC          the source tree
#   BUILD        the build tree; the tarballs go to BUILD/npm/
#   VERSION      kiln's version, the version of both packages
#   KILN         the static kiln binary
#   STRIP        the strip program
#   STATIC_LIBS  a file naming every .a linked into KILN, one per line
# Run by `cmake --build BUILD --target npm-pack` of a KILN_STATIC=ON build.
# Licences come from the Debian packages the .a files belong to (dpkg).
set -euo pipefail
src=$1 build=$2 version=$3 kiln=$4 strip=$5 static_libs=$6
out=$build/npm
stage=$out/stage
main=kiln-precompress
platform=kiln-precompress-linux-x64

die() { echo "pack.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm is missing"
command -v node >/dev/null || die "node is missing"
file -b "$kiln" | grep -q 'statically linked' || die "$kiln is not statically linked (configure with -DKILN_STATIC=ON)"

rm -rf "$stage" "$out"/*.tgz
mkdir -p "$stage"
for pkg in "$main" "$platform"; do
	cp -R "$src/packaging/npm/$pkg" "$stage/$pkg"
	sed -i "s/@KILN_VERSION@/$version/g" "$stage/$pkg/package.json"
done
chmod 755 "$stage/$main/bin/kiln.js"
node "$src/packaging/npm/gen-api.js" "$kiln" "$stage/$main" || die "gen-api.js failed"

mkdir -p "$stage/$platform/bin" "$stage/$platform/licenses"
"$strip" -o "$stage/$platform/bin/kiln" "$kiln"
chmod 755 "$stage/$platform/bin/kiln"

# LICENSES: the README's section; licenses/PACKAGE: Debian's copyright file
# of each package a linked library came from.
awk '/^## Licences/{p=1} p && /^## / && !/^## Licences/{exit} p' "$src/README.md" >"$stage/$platform/LICENSES"
[ -s "$stage/$platform/LICENSES" ] || die "no '## Licences' section in README.md"
while read -r lib; do
	[ -n "$lib" ] || continue
	deb=$( (dpkg-query -S "$lib" || dpkg-query -S "$(readlink -f "$lib")") 2>/dev/null | head -n 1 | cut -d: -f1)
	[ -n "$deb" ] || die "$lib: not from a Debian package, its licence is unknown"
	cp -L "/usr/share/doc/$deb/copyright" "$stage/$platform/licenses/$deb" ||
		die "$lib: no copyright file for $deb"
done <"$static_libs"

for pkg in "$platform" "$main"; do
	(cd "$stage/$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
done
ls "$out"/*.tgz
