#!/usr/bin/env bash
# npm_wasm.sh - the kiln-precompress-wasm32 package npm-pack wrote (when the
# WebAssembly build had a kiln): its package.json (no os, no cpu, no
# scripts), kiln.js, kiln.wasm and kiln.worker.js and their licence files;
# then, for macOS on arm64 and Windows on x86-64, an offline install of the
# main and the WebAssembly tarball for that platform (npm's --os and
# --cpu), and a real run through the launcher and the JavaScript API with
# Node made to look like that platform (platform_preload.js): the launcher
# picks the WebAssembly kiln (there is no native package for those
# platforms), `kiln --version` says so, exit
# statuses pass through, and the siblings and manifest are the native
# kiln's, byte for byte.  On "Windows" the WebAssembly kiln applies
# Windows's rules to names: an archive entry named CON.js is refused; on
# "macOS" over a case-insensitive file system, a user's APP.JS.GZ is not
# taken for app.js's gzip sibling, nor replaced.  On
# Linux x86-64 itself the native binary is picked while it is installed,
# and the WebAssembly kiln without it.
#
# Skipped (exit 77) when Emscripten is not installed.
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v emcc >/dev/null; then
	echo "npm_wasm.sh: skipped: no Emscripten (apt-get install emscripten)" >&2
	rm -rf "$T"
	exit 77
fi
. "$(dirname "$0")/npm.sh"
unset KILN_BINARY
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$WASM_TGZ" ] || { echo "npm_wasm.sh: $WASM_TGZ is missing (packaging/wasm/build.sh, then npm-pack)" >&2; exit 1; }

# The package.
mkdir -p "$T/pkg"
tar -xzf "$WASM_TGZ" -C "$T/pkg"
field() { node -e 'const p = require(process.argv[1]); const v = eval("p" + process.argv[2]); console.log(typeof v === "string" ? v : JSON.stringify(v))' "$1" "$2"; }
P=$T/pkg/package/package.json
check "wasm package: name" [ "$(field "$P" .name)" = "$WASM_NAME" ]
check "wasm package: kiln's version" [ "$(field "$P" .version)" = "$VERSION" ]
check "wasm package: no os (it runs everywhere)" [ "$(field "$P" .os)" = undefined ]
check "wasm package: no cpu" [ "$(field "$P" .cpu)" = undefined ]
check "wasm package: licence MIT" [ "$(field "$P" .license)" = MIT ]
check "wasm package: no scripts at all" [ "$(field "$P" .scripts)" = undefined ]
check "wasm package: no bin of its own" [ "$(field "$P" .bin)" = undefined ]
for f in kiln.js kiln.wasm kiln.worker.js; do
	check "wasm package: $f" [ -s "$T/pkg/package/$f" ]
done
check "wasm package: kiln.wasm is WebAssembly" \
	[ "$(head -c 4 "$T/pkg/package/kiln.wasm" | od -An -tx1 | tr -d ' ')" = 0061736d ]
check "wasm package: LICENSES is the README's section" grep -q '^## Licences' "$T/pkg/package/LICENSES"
check "wasm package: kiln's LICENSE (MIT) in the tarball" cmp -s "$T/pkg/package/LICENSE" "$here/../../LICENSE"
for deb in emscripten nettle libarchive zopfli brotli libdeflate libzstd zlib jansson xz-utils; do
	check "wasm package: the copyright file of $deb" [ -s "$T/pkg/package/licenses/$deb" ]
done
check "wasm package: nettle's copyright file is Debian's" grep -q 'LGPL' "$T/pkg/package/licenses/nettle"

# The native kiln's bytes on the example site, to compare with.
fresh_site "$T/native"
"$KILN" -q --brotli --zstd "$T/native" || fail "the native kiln on the site"

for platform in darwin-arm64 win32-x64; do
	on() { KILN_TEST_PLATFORM=$platform NODE_OPTIONS="--require $here/platform_preload.js" "$@"; }
	A=$T/app-$platform
	check "$platform: the preload makes Node look so" [ "$(on node -p 'process.platform + "-" + process.arch')" = "$platform" ]
	new_project "$A"
	(cd "$A" && PATH="$STUBS:$PATH" npm install --save-dev --offline --os="${platform%-*}" --cpu="${platform#*-}" \
		"$WASM_TGZ" "$MAIN_TGZ" >"$T/npm-$platform.log" 2>&1)
	check "$platform: npm install of the main and the wasm tarball succeeds offline" [ $? -eq 0 ] ||
		cat "$T/npm-$platform.log" >&2
	check "$platform: npm install ran no compiler or build tool" [ ! -s "$COMPILER_LOG" ]
	check "$platform: the wasm package is installed" cmp -s "$A/node_modules/$WASM_NAME/kiln.wasm" "$T/pkg/package/kiln.wasm"
	check "$platform: no native package (linux only)" [ ! -e "$A/node_modules/$PLATFORM_NAME" ]

	# the launcher itself (npm's npx does not run under a Node made to look
	# like Windows: its paths turn into Windows's)
	nk() { (cd "$A" && on node node_modules/.bin/kiln "$@"); }
	check "$platform: the launcher picks the WebAssembly kiln" \
		[ "$(cd "$A" && on node -p 'require("./node_modules/kiln-precompress/lib/platform.js").findCommand().build')" = wasm32 ]
	nk --version >"$T/version-$platform"
	check "$platform: npx kiln --version is this kiln" [ "$(head -n 1 "$T/version-$platform")" = "kiln $VERSION" ]
	check "... and says it is the WebAssembly one" grep -q '^emscripten 3\.1\.6, WebAssembly, Node\.js v' "$T/version-$platform"
	fresh_site "$A/site"
	nk -q --brotli --zstd site
	check "$platform: npx kiln --brotli --zstd site: exit 0" [ $? -eq 0 ]
	check "... siblings that decode" decodes_to "$A/site/index.html.br" "$A/site/index.html"
	check "... and gzip ones" decodes_to "$A/site/assets/app.js.gz" "$A/site/assets/app.js"
	check "... the native kiln's bytes: siblings, manifest, snippets" [ "$(tree_digest "$A/site")" = "$(tree_digest "$T/native")" ]
	nk check site
	check "$platform: npx kiln check: exit 0" [ $? -eq 0 ]
	echo '<!-- changed -->' >>"$A/site/index.html"
	nk check site 2>/dev/null
	check "$platform: npx kiln check on a changed tree: exit 3" [ $? -eq 3 ]
	nk --gzip-level 13 site 2>/dev/null
	check "$platform: a usage error: exit 2" [ $? -eq 2 ]

	# The JavaScript API.
	fresh_site "$A/api"
	(cd "$A" && on node -e '
const { precompress } = require("kiln-precompress");
precompress(process.argv[1], { zstd: true }).then(
  (s) => console.log(JSON.stringify(s)),
  (e) => { console.error(e.message); process.exit(1); });' "$A/api" >"$T/api-$platform.json")
	check "$platform: precompress() resolves" [ $? -eq 0 ]
	check "... with kiln's summary of the tree" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if isinstance(s, dict) and s.get("errors", []) == [] and s.get("written", 0) > 10 else 1)' "$T/api-$platform.json"
	check "... having written .zst siblings" sh -c "zstd -qdc '$A/api/assets/app.js.zst' | cmp -s - '$A/api/assets/app.js'"
done

# Windows's names, on "Windows": an archive entry named after a device is
# refused with the reason, the run going on with the others.
mkdir -p "$T/devnames/dist"
cp "$FIXTURES/site/assets/app.js" "$T/devnames/dist/app.js"
cp "$FIXTURES/site/assets/app.js" "$T/devnames/dist/CON.js"
tar -C "$T/devnames" -cf "$T/devnames.tar" dist
A=$T/app-win32-x64
(cd "$A" && KILN_TEST_PLATFORM=win32-x64 NODE_OPTIONS="--require $here/platform_preload.js" \
	node node_modules/.bin/kiln -q "$T/devnames.tar" -o "$T/devnames-out.tar") 2>"$T/devnames.err"
check "win32: an archive entry named CON.js: exit 1" [ $? -eq 1 ]
check "... refused, by name" grep -q 'CON\.js: .*Invalid argument' "$T/devnames.err"
(cd "$A" && KILN_TEST_PLATFORM=darwin-arm64 NODE_OPTIONS="--require $here/platform_preload.js" \
	node node_modules/.bin/kiln -q "$T/devnames.tar" -o "$T/devnames-mac.tar") 2>"$T/devnames-mac.err"
check "darwin: the same archive: exit 0 (CON.js is a name like any there)" [ $? -eq 0 ]

# A '\' in a name on "macOS" is a byte of it (only Windows separates
# paths with it): the file and a directory named so get their siblings.
mkdir -p "$T/bslash/d\\ir"
cp "$FIXTURES/site/assets/app.js" "$T/bslash/b\\s.js"
cp "$FIXTURES/site/assets/app.js" "$T/bslash/d\\ir/x.js"
A=$T/app-darwin-arm64
(cd "$A" && KILN_TEST_PLATFORM=darwin-arm64 NODE_OPTIONS="--require $here/platform_preload.js" \
	node node_modules/.bin/kiln -q "$T/bslash") 2>"$T/bslash.err"
check "darwin: names with '\\': exit 0" [ $? -eq 0 ]
check "... b\\s.js.gz decodes to it" decodes_to "$T/bslash/b\\s.js.gz" "$T/bslash/b\\s.js"
check "... d\\ir/x.js.gz decodes to it" decodes_to "$T/bslash/d\\ir/x.js.gz" "$T/bslash/d\\ir/x.js"

# Names that differ only in case, on "macOS" over a file system made
# case-insensitive as its usual one is (casefold_preload.js): the user's
# own APP.JS.GZ is what the file system finds as app.js.gz, and kiln
# neither replaces it nor takes it for app.js's sibling.
mkdir -p "$T/case/site"
cp "$FIXTURES/site/assets/app.js" "$FIXTURES/site/assets/app.css" "$T/case/site/"
printf 'the user'"'"'s own file\n' >"$T/case/site/APP.JS.GZ"
A=$T/app-darwin-arm64
(cd "$A" && KILN_TEST_PLATFORM=darwin-arm64 KILN_TEST_CASEFOLD_ROOT="$T/case" \
	NODE_OPTIONS="--require $here/platform_preload.js --require $here/casefold_preload.js" \
	node node_modules/.bin/kiln -q --brotli "$T/case/site") 2>"$T/case.err"
check "darwin, case folding: app.js beside the user's APP.JS.GZ: exit 1" [ $? -eq 1 ]
check "... app.js.gz refused, by name: another file's" grep -q 'app\.js\.gz: .*File exists' "$T/case.err" ||
	cat "$T/case.err" >&2
check "... the user's APP.JS.GZ untouched" [ "$(cat "$T/case/site/APP.JS.GZ")" = "the user's own file" ]
check "... the run went on: app.css.br decodes to app.css" decodes_to "$T/case/site/app.css.br" "$T/case/site/app.css"
check "... and no second spelling of it made" [ "$(ls "$T/case/site" | grep -ci '^app\.js\.gz$')" = 1 ]

# Linux x86-64 itself: the native binary while it is installed.
L=$T/linux
new_project "$L"
npm_install_kiln "$L" --offline
check "linux-x64: the native and the wasm package are installed" \
	[ -x "$L/node_modules/$PLATFORM_NAME/bin/kiln" ] && [ -f "$L/node_modules/$WASM_NAME/kiln.js" ]
check "... the launcher picks the native binary" \
	[ "$(cd "$L" && node -p 'require("./node_modules/kiln-precompress/lib/platform.js").findCommand().build')" = native ]
check "... whose --version names no runtime" not sh -c "cd '$L' && npx --no-install kiln --version | grep -q '^emscripten'"
rm -rf "$L/node_modules/$PLATFORM_NAME"
check "... and the WebAssembly kiln without it" \
	[ "$(cd "$L" && node -p 'require("./node_modules/kiln-precompress/lib/platform.js").findCommand().build')" = wasm32 ]
fresh_site "$L/site"
(cd "$L" && npx --no-install kiln -q --brotli --zstd site)
check "... which compresses: exit 0" [ $? -eq 0 ]
check "... the native kiln's bytes" [ "$(tree_digest "$L/site")" = "$(tree_digest "$T/native")" ]

finish
