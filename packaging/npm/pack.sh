#!/usr/bin/env bash
# pack.sh - kiln's npm packages, as tarballs: `npm pack` of
# kiln-precompress (the launcher and the JavaScript API, whose option list
# and TypeScript declarations gen-api.js makes from KILN's --help),
# kiln-precompress-linux-x64 (the static binary, stripped, with the licences
# of everything linked into it), when the arm64 build has a binary,
# kiln-precompress-linux-arm64 likewise, and when the WebAssembly build has
# one, kiln-precompress-wasm32 (kiln.js, kiln.wasm, kiln.worker.js and
# their licences).
#
# usage: pack.sh SRC BUILD VERSION KILN STRIP STATIC_LIBS [ARM64_BUILD [WASM_BUILD]]
#   SRC          the source tree
#   BUILD        the build tree; the tarballs go to BUILD/npm/
#   VERSION      kiln's version, the version of every package
#   KILN         the static kiln binary
#   STRIP        the strip program
#   STATIC_LIBS  a file naming every .a linked into KILN, one per line
#   ARM64_BUILD  the arm64 build tree (packaging/arm64/build.sh): when it
#                holds a kiln, it is packed too, stripped with
#                aarch64-linux-gnu-strip, with its static-libs.txt's licences;
#                when not, the main package does not name it
#   WASM_BUILD   the WebAssembly build tree (packaging/wasm/build.sh): when
#                it holds a kiln.js, it is packed, with its static-libs.txt's
#                licences; when not, the main package does not name it
# Run by `cmake --build BUILD --target npm-pack` of a KILN_STATIC=ON build.
# Licences come from the Debian packages the .a files belong to
# (packaging/licence_files.sh).
set -euo pipefail
src=$1 build=$2 version=$3 kiln=$4 strip=$5 static_libs=$6 arm64_build=${7:-} wasm_build=${8:-}
out=$build/npm
stage=$out/stage
main=kiln-precompress
platforms=kiln-precompress-linux-x64
. "$src/packaging/licence_files.sh"

die() { echo "pack.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm is missing"
command -v node >/dev/null || die "node is missing"
file -b "$kiln" | grep -q 'statically linked' || die "$kiln is not statically linked (configure with -DKILN_STATIC=ON)"

if [ -n "$arm64_build" ] && [ -f "$arm64_build/kiln" ]; then
	platforms="$platforms kiln-precompress-linux-arm64"
	file -b "$arm64_build/kiln" | grep -q 'ARM aarch64.*statically linked' ||
		die "$arm64_build/kiln is not a static arm64 binary (packaging/arm64/build.sh)"
	command -v aarch64-linux-gnu-strip >/dev/null || die "aarch64-linux-gnu-strip is missing"
	if command -v qemu-aarch64-static >/dev/null; then
		v=$(qemu-aarch64-static "$arm64_build/kiln" --version | head -n 1)
		[ "$v" = "kiln $version" ] || die "$arm64_build/kiln is '$v', not kiln $version (rebuild it: packaging/arm64/build.sh)"
	fi
fi

if [ -n "$wasm_build" ] && [ -f "$wasm_build/kiln.js" ]; then
	platforms="$platforms kiln-precompress-wasm32"
	v=$(node "$wasm_build/kiln.js" --version | head -n 1)
	[ "$v" = "kiln $version" ] || die "$wasm_build/kiln.js is '$v', not kiln $version (rebuild it: packaging/wasm/build.sh)"
	[ -s "$wasm_build/static-libs.txt" ] || die "no $wasm_build/static-libs.txt (packaging/wasm/build.sh writes it)"
fi

rm -rf "$stage" "$out"/*.tgz
mkdir -p "$stage"
for pkg in "$main" $platforms; do
	cp -R "$src/packaging/npm/$pkg" "$stage/$pkg"
	# kiln's own licence (MIT) in every package: its notice goes with
	# every copy, the binaries' too (npm packs LICENSE whatever "files" says)
	cp "$src/LICENSE" "$stage/$pkg/LICENSE"
	sed -i "s/@KILN_VERSION@/$version/g" "$stage/$pkg/package.json"
done
chmod 755 "$stage/$main/bin/kiln.js"
# The main package names exactly the platform packages written beside it.
node -e '
const fs = require("fs");
const [file, ...platforms] = process.argv.slice(1);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
for (const name of Object.keys(p.optionalDependencies))
  if (!platforms.includes(name)) delete p.optionalDependencies[name];
fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");' "$stage/$main/package.json" $platforms
node "$src/packaging/npm/gen-api.js" "$kiln" "$stage/$main" || die "gen-api.js failed"

# licences PACKAGE STATIC_LIBS: LICENSES (the README's section) and
# licenses/PACKAGE (Debian's copyright file of each package a linked library
# came from).
licences() {
	local pkg=$1 libs=$2 lib deb copyright
	mkdir -p "$stage/$pkg/licenses"
	awk '/^## Licences/{p=1} p && /^## / && !/^## Licences/{exit} p' "$src/README.md" >"$stage/$pkg/LICENSES"
	[ -s "$stage/$pkg/LICENSES" ] || die "no '## Licences' section in README.md"
	while read -r lib; do
		[ -n "$lib" ] || continue
		read -r deb copyright < <(lib_package "$lib") ||
			die "$lib: not from a Debian package, its licence is unknown"
		cp -L "$copyright" "$stage/$pkg/licenses/$deb" ||
			die "$lib: no copyright file for $deb"
	done <"$libs"
}

# platform_files PACKAGE BINARY STRIP STATIC_LIBS: the stripped binary and
# its licences.
platform_files() {
	local pkg=$1 bin=$2 strip=$3 libs=$4
	mkdir -p "$stage/$pkg/bin"
	"$strip" -o "$stage/$pkg/bin/kiln" "$bin"
	chmod 755 "$stage/$pkg/bin/kiln"
	licences "$pkg" "$libs"
}
platform_files kiln-precompress-linux-x64 "$kiln" "$strip" "$static_libs"
case " $platforms " in
*" kiln-precompress-linux-arm64 "*)
	platform_files kiln-precompress-linux-arm64 "$arm64_build/kiln" aarch64-linux-gnu-strip "$arm64_build/static-libs.txt" ;;
esac
case " $platforms " in
*" kiln-precompress-wasm32 "*)
	for f in kiln.js kiln.wasm kiln.worker.js; do
		cp "$wasm_build/$f" "$stage/kiln-precompress-wasm32/$f"
	done
	licences kiln-precompress-wasm32 "$wasm_build/static-libs.txt" ;;
esac

for pkg in $platforms "$main"; do
	(cd "$stage/$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
done
ls "$out"/*.tgz
