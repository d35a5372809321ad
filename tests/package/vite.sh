#!/usr/bin/env bash
# vite.sh - kiln in a real front-end project: a Vite project created from
# the npm registry, kiln installed from the two npm tarballs (no compiler
# run), the README's `postbuild` added, `npm run build`.  Every text asset
# of dist/ of 256 bytes or more has a .gz and a .br that the gzip and brotli
# tools decode to it, smaller ones have none, and `npx kiln check dist`
# passes.  Then nginx, with kiln's snippets, serves dist/ to headless
# Chromium (serve_to_chromium, tests/e2e/lib.sh): the app renders (text our
# script writes at run time is in the page), every response is the right
# sibling and decodes to its source, and a second visit and a reload are
# cache hits and 304s.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"
# create-vite 9 makes a Vite 8 project; npm 10 (older Node.js 20 releases)
# gets create-vite 7, whose projects use Vite 7.
if [ "$(npm --version | cut -d. -f1)" -ge 11 ]; then create_vite=create-vite@9; else create_vite=create-vite@7; fi

trap nginx_stop EXIT

# The project, from the registry.
(cd "$T" && PATH="$STUBS:$PATH" timeout 300 npm exec --yes -- "$create_vite" app --template vanilla --no-interactive) >"$T/create.log" 2>&1
must "$create_vite makes a project" "$T/create.log" [ -f "$T/app/package.json" ]
A=$T/app
must "npm install of the Vite project succeeds" "$T/install.log" \
	eval '(cd "$A" && PATH="$STUBS:$PATH" timeout 300 npm install) >"$T/install.log" 2>&1'
must "kiln installs from the tarballs" /dev/null npm_install_kiln "$A" --prefer-offline
check "no compiler or build tool ran during the installs" [ ! -s "$COMPILER_LOG" ]
[ -s "$COMPILER_LOG" ] && cat "$COMPILER_LOG" >&2

# Text the app's script writes into the page (#out, which browser.py
# reads): present in no file of dist/, so finding it shows the script ran.
cat >>"$A/src/main.js" <<'EOF'

const kilnMark = document.createElement('p')
kilnMark.id = 'out'
kilnMark.textContent = ['OK', 'ran', 'kiln'].reverse().join('-')
document.querySelector('#app').append(kilnMark)
EOF
mark='kiln-ran-OK'
DOC="/usr/bin/python3 $SRC/tests/docs/commands.py $SRC"
readme_script() {
	$DOC get 'README.md#npm-postbuild' |
		node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.parse(s).scripts[process.argv[1]]))' "$1"
}
postbuild=$(readme_script postbuild)
build=$(readme_script build)
check "the npm package's README shows the same scripts" \
	cmp -s <($DOC get 'README.md#npm-postbuild') <($DOC get 'packaging/npm/kiln-precompress/README.md#kiln-precompress:2')
check "the README's postbuild is kiln --brotli dist" [ "$postbuild" = "kiln --brotli dist" ]
check "the README's build is vite build --manifest" [ "$build" = "vite build --manifest" ]
(cd "$A" && npm pkg set scripts.postbuild="$postbuild")
# First with create-vite's own build script (no Vite manifest): kiln
# judges by the names, and may miss a hash, but never takes a name Vite
# did not hash (index.html, favicon.svg and icons.svg from public/).
must "npm run build (vite build, then kiln) succeeds" "$T/build0.log" \
	eval '(cd "$A" && timeout 300 npm run build) >"$T/build0.log" 2>&1'
no_false_positive() {
	python3 - "$A/dist/kiln-manifest.json" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
bad = [k for k, e in files.items() if e.get("immutable") and not k.startswith("assets/")]
code = [k for k in files if k.startswith("assets/") and k.endswith((".js", ".css"))]
missed = [k for k in code if not files[k].get("immutable")]
print("\n".join(bad + missed), file=sys.stderr)
sys.exit(1 if bad or missed or not code else 0)
PY
}
check "without Vite's manifest: nothing outside assets/ immutable, every script and style sheet immutable" no_false_positive
# Then with the README's build script: Vite's account proves every name.
(cd "$A" && npm pkg set scripts.build="$build")
must "npm run build (vite build --manifest, then kiln) succeeds" "$T/build.log" \
	eval '(cd "$A" && timeout 300 npm run build) >"$T/build.log" 2>&1'
check "Vite wrote its manifest" [ -f "$A/dist/.vite/manifest.json" ]
check "kiln ran as postbuild" grep -q '^kiln: [0-9]* assets\?: ' "$T/build.log"
D=$A/dist
check "the mark is in no file of dist/" not grep -rqF "$mark" "$D"

# Every text asset: siblings that decode when 256 bytes or more, none below.
texts=0
while IFS= read -r -d '' f; do
	texts=$((texts + 1))
	rel=${f#"$D"/}
	if [ "$(stat -c %s "$f")" -ge 256 ]; then
		check "$rel: .gz decodes to it" decodes_to "$f.gz" "$f"
		check "$rel: .br decodes to it" decodes_to "$f.br" "$f"
	else
		check "$rel (under 256 bytes): no .gz" [ ! -e "$f.gz" ]
		check "$rel (under 256 bytes): no .br" [ ! -e "$f.br" ]
	fi
done < <(find "$D" -type f \( -name '*.html' -o -name '*.js' -o -name '*.css' -o -name '*.svg' -o -name '*.json' \
	-o -name '*.txt' -o -name '*.xml' -o -name '*.map' -o -name '*.mjs' \) ! -name kiln-manifest.json -print0)
check "dist/ has text assets ($texts)" [ "$texts" -ge 3 ]
js=$(cd "$D" && ls assets/*.js | head -n 1)
css=$(cd "$D" && ls assets/*.css | head -n 1)
check "vite wrote a script and a stylesheet" [ -n "$js" ]
check "... a stylesheet" [ -n "$css" ]
(cd "$A" && npx --no-install kiln check dist) 2>"$T/check.err"
check "npx kiln check dist passes" [ $? -eq 0 ]

# Vite names everything it emits under assets/ NAME-HASH.EXT (its
# build.rollupOptions defaults); index.html keeps its name.  With Vite's
# manifest, kiln's marks exactly those immutable.
immutable_as_vite_names() {
	python3 - "$D/kiln-manifest.json" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
bad = [k for k, e in files.items() if bool(e.get("immutable")) != k.startswith("assets/")]
assets = [k for k in files if k.startswith("assets/")]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad or not assets else 0)
PY
}
check "the manifest marks Vite's hashed assets immutable, and nothing else" immutable_as_vite_names

# nginx with kiln's snippets, and headless Chromium.
serve_to_chromium nginx "$D"

finish
