#!/usr/bin/env bash
# vite.sh - kiln in a real front-end project: a Vite project created from
# the npm registry, kiln installed from the two npm tarballs (no compiler
# run), the README's `postbuild` added, `npm run build`.  Every text asset
# of dist/ of 256 bytes or more has a .gz and a .br that the gzip and brotli
# tools decode to it, smaller ones have none, and `npx kiln check dist`
# passes.  Then nginx, with kiln's snippet, serves dist/ to headless
# Chromium: the app renders (text our script writes at run time is in the
# DOM), and the script and stylesheet reached the browser as kiln's
# siblings, byte counts matching.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
for need in "$NGINX" "$CHROMIUM" /etc/nginx/mime.types; do
	[ -e "$need" ] || { echo "vite.sh: $need is missing (install nginx-light, libnginx-mod-http-brotli-static and chromium)" >&2; exit 1; }
done
# create-vite 9 makes a Vite 8 project; npm 10 (older Node.js 20 releases)
# gets create-vite 7, whose projects use Vite 7.
if [ "$(npm --version | cut -d. -f1)" -ge 11 ]; then create_vite=create-vite@9; else create_vite=create-vite@7; fi

# must DESCRIPTION LOG COMMAND...: check COMMAND; if it fails, the rest
# depends on it: show LOG and stop.
must() {
	local what=$1 log=$2
	shift 2
	if "$@"; then
		check "$what" true
	else
		check "$what" false
		[ -f "$log" ] && cat "$log" >&2
		finish
		exit 1
	fi
}

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

# Text the app's script writes into the page: present in no file of dist/,
# so finding it in the DOM shows the script ran.
cat >>"$A/src/main.js" <<'EOF'

const kilnMark = document.createElement('p')
kilnMark.id = 'kiln-mark'
kilnMark.textContent = ['served', 'by', 'kiln', 'siblings'].reverse().join('-')
document.querySelector('#app').append(kilnMark)
EOF
mark='siblings-kiln-by-served'
postbuild=$(awk '/^### npm `postbuild`$/{p=1} p && /^```json$/{b=1; next} b && /^```$/{exit} b' "$SRC/README.md" |
	node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.parse(s).scripts.postbuild))')
check "the README's postbuild is kiln --brotli dist" [ "$postbuild" = "kiln --brotli dist" ]
(cd "$A" && npm pkg set scripts.postbuild="$postbuild")
must "npm run build (vite build, then kiln) succeeds" "$T/build.log" \
	eval '(cd "$A" && timeout 300 npm run build) >"$T/build.log" 2>&1' 
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
# build.rollupOptions defaults); index.html keeps its name.  The manifest
# marks exactly those immutable.
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

# nginx with kiln's snippet, logging what it sent.
chmod -R a+rX "$T"
NGINX_LOG='$request_uri $status $sent_http_content_encoding $body_bytes_sent' nginx_start "$T/nginx" "$D"
check "nginx starts with kiln's snippet" [ $? -eq 0 ]
curl -s -H 'Accept-Encoding: br' -D "$T/h.br" -o "$T/body.br" "http://127.0.0.1:$PORT/$js"
check "nginx sends the script's .br to a br client" cmp -s "$T/body.br" "$D/$js.br"
check "... as Content-Encoding: br" grep -qi '^content-encoding: br' "$T/h.br"
check "... with a year of freshness" grep -qi '^cache-control: public, max-age=31536000, immutable' "$T/h.br"
curl -s -D "$T/h.html" -o /dev/null "http://127.0.0.1:$PORT/"
check "index.html is revalidated (no-cache)" grep -qi '^cache-control: no-cache' "$T/h.html"

mkdir -p "$T/chromium"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$T/chromium" --dump-dom "http://127.0.0.1:$PORT/" >"$T/dom.html" 2>"$T/chromium.log"
check "chromium --dump-dom succeeds" [ $? -eq 0 ]
check "the app rendered: the script's text is in the DOM" grep -qF "<p id=\"kiln-mark\">$mark</p>" "$T/dom.html"
# What nginx sent Chromium for the script and the stylesheet: a sibling,
# byte for byte its size.
sent_sibling() { # sent_sibling ASSET: the log shows a coded response of its sibling's size
	local enc bytes
	read -r enc bytes < <(awk -v u="/$1" '$1 == u && $2 == 200 {print $3, $4}' "$T/nginx/access.log" | tail -n 1)
	case $enc in
	gzip) [ "$bytes" = "$(stat -c %s "$D/$1.gz")" ] ;;
	br) [ "$bytes" = "$(stat -c %s "$D/$1.br")" ] ;;
	*) return 1 ;;
	esac
}
check "Chromium got the script as kiln's sibling" sent_sibling "$js"
check "Chromium got the stylesheet as kiln's sibling" sent_sibling "$css"
check "nginx logged no error" not grep -q '\[\(error\|crit\|alert\|emerg\)\]' "$T/nginx/error.log"

finish
