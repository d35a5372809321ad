#!/usr/bin/env bash
# npm_arm64.sh - the kiln-precompress-linux-arm64 package npm-pack wrote
# (when the arm64 build had a binary): its package.json (os linux, cpu
# arm64, no scripts), the stripped static aarch64 binary and its licence
# files; then, with Node made to look like Linux on arm64
# (arm64_preload.js: process.arch is 'arm64', and aarch64 programs run
# through qemu-user as an arm64 kernel would run them), an offline install
# of the main and the arm64 tarball takes the arm64 package and leaves out
# the x86-64 one, and `npx kiln` and the JavaScript API run the arm64 kiln through the
# launcher: exit statuses pass through and the siblings decode.  (The
# x86-64 tarball is not given to that install: npm refuses a direct
# dependency of another cpu, EBADPLATFORM, as it would for a user.)  The same
# install seen from x86-64 Node has no binary to run (exit 127).
#
# Skipped (exit 77) when the cross compiler is not installed.
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "npm_arm64.sh: skipped: no arm64 cross compiler (apt-get install gcc-aarch64-linux-gnu qemu-user-static and the :arm64 packages of the README's Quick start)" >&2
	rm -rf "$T"
	exit 77
fi
. "$(dirname "$0")/npm.sh"
unset KILN_BINARY
here=$(cd "$(dirname "$0")" && pwd)
QEMU=$(command -v qemu-aarch64-static) || { echo "npm_arm64.sh: qemu-aarch64-static is missing (apt-get install qemu-user-static)" >&2; exit 1; }
[ -f "$ARM64_TGZ" ] || { echo "npm_arm64.sh: $ARM64_TGZ is missing (packaging/arm64/build.sh, then npm-pack)" >&2; exit 1; }

# The package.
mkdir -p "$T/pkg"
tar -xzf "$ARM64_TGZ" -C "$T/pkg"
field() { node -e 'const p = require(process.argv[1]); const v = eval("p" + process.argv[2]); console.log(typeof v === "string" ? v : JSON.stringify(v))' "$1" "$2"; }
P=$T/pkg/package/package.json
B=$T/pkg/package/bin/kiln
check "arm64 package: name" [ "$(field "$P" .name)" = "$ARM64_NAME" ]
check "arm64 package: kiln's version" [ "$(field "$P" .version)" = "$VERSION" ]
check "arm64 package: os linux" [ "$(field "$P" .os)" = '["linux"]' ]
check "arm64 package: cpu arm64" [ "$(field "$P" .cpu)" = '["arm64"]' ]
check "arm64 package: licence MIT" [ "$(field "$P" .license)" = MIT ]
check "arm64 package: no scripts at all" [ "$(field "$P" .scripts)" = undefined ]
check "arm64 package: no bin of its own" [ "$(field "$P" .bin)" = undefined ]
check "arm64 package: the binary is executable in the tarball" \
	sh -c "tar -tvzf '$ARM64_TGZ' package/bin/kiln | grep -q '^-rwxr-xr-x'"
file -b "$B" >"$T/file"
check "arm64 package: the binary is ARM aarch64" grep -q 'ARM aarch64' "$T/file"
check "arm64 package: statically linked" grep -q 'statically linked' "$T/file"
check "arm64 package: stripped" grep -q ', stripped' "$T/file"
check "arm64 package: LICENSES is the README's section" grep -q '^## Licences' "$T/pkg/package/LICENSES"
check "arm64 package: kiln's LICENSE (MIT) in the tarball" cmp -s "$T/pkg/package/LICENSE" "$(dirname "$0")/../../LICENSE"
for deb in libarchive-dev libzopfli-dev libc6-dev-arm64-cross libgcc-12-dev-arm64-cross; do
	check "arm64 package: the copyright file of $deb" [ -s "$T/pkg/package/licenses/$deb" ]
done
check "arm64 package: zopfli's copyright file is Debian's" \
	grep -q 'Apache' "$T/pkg/package/licenses/libzopfli-dev"

# Node on "arm64": the preload, for npm, npx, the launcher and the API.
arm64_node() { NODE_OPTIONS="--require $here/arm64_preload.js" KILN_TEST_QEMU=$QEMU "$@"; }
check "the preload makes process.arch arm64" [ "$(arm64_node node -p process.arch)" = arm64 ]
A=$T/app
new_project "$A"
(cd "$A" && arm64_node env PATH="$STUBS:$PATH" npm install --save-dev --offline "$ARM64_TGZ" "$MAIN_TGZ" >"$T/npm.log" 2>&1)
check "npm install of the main and the arm64 tarball on arm64 succeeds offline" [ $? -eq 0 ] || cat "$T/npm.log" >&2
check "npm install ran no compiler or build tool" [ ! -s "$COMPILER_LOG" ]
check "the arm64 package is installed" cmp -s "$A/node_modules/$ARM64_NAME/bin/kiln" "$B"
check "the x86-64 package is not (cpu x64)" [ ! -e "$A/node_modules/$PLATFORM_NAME" ]

nk() { (cd "$A" && arm64_node npx --no-install kiln "$@"); }
check "npx kiln --version is this kiln" [ "$(nk --version | head -n 1)" = "kiln $VERSION" ]
check "... the arm64 one" [ "$(cd "$A" && arm64_node node -p 'require("./node_modules/kiln-precompress/lib/platform.js").findBinary()')" = "$A/node_modules/$ARM64_NAME/bin/kiln" ]
fresh_site "$A/site"
nk -q --brotli site
check "npx kiln --brotli site: exit 0" [ $? -eq 0 ]
check "npx kiln wrote decodable siblings" decodes_to "$A/site/index.html.br" "$A/site/index.html"
check "... and gzip ones" decodes_to "$A/site/assets/app.js.gz" "$A/site/assets/app.js"
nk check site
check "npx kiln check: exit 0" [ $? -eq 0 ]
echo '<!-- changed -->' >>"$A/site/index.html"
nk check site 2>/dev/null
check "npx kiln check on a changed tree: exit 3" [ $? -eq 3 ]
nk --gzip-level 13 site 2>/dev/null
check "a usage error: exit 2" [ $? -eq 2 ]

# The JavaScript API, on arm64.
fresh_site "$A/api"
(cd "$A" && arm64_node node -e '
const { precompress } = require("kiln-precompress");
precompress(process.argv[1], { zstd: true }).then(
  (s) => console.log(JSON.stringify(s)),
  (e) => { console.error(e.message); process.exit(1); });' "$A/api" >"$T/api.json")
check "precompress() on arm64 resolves" [ $? -eq 0 ]
check "... with kiln's summary of the tree" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if isinstance(s, dict) and s.get("errors", []) == [] else 1)' "$T/api.json"
check "... having written .zst siblings" sh -c "zstd -qdc '$A/api/assets/app.js.zst' | cmp -s - '$A/api/assets/app.js'"

# The same install from x86-64 Node: its package was left out.
(cd "$A" && npx --no-install kiln --version) 2>"$T/err"
check "x86-64 Node on the arm64 install: exit 127" [ $? -eq 127 ]
check "... naming the package to install" grep -qF "$PLATFORM_NAME is not installed" "$T/err"

finish
