#!/usr/bin/env bash
# serve_caddy.sh - proof against a real Caddy 2.6 (Debian's caddy): kiln's
# kiln.caddy.conf, imported in a site block, makes Caddy send every asset
# of the serve_tree.sh tree in the smallest coding each Accept-Encoding
# accepts, with the right headers, 304s, ranges and Cache-Control, and
# never kiln's own files (serve_check.py); Chromium gets the smallest
# coding and runs the page (browser.py, from Caddy's own log); the same
# under a URL prefix (handle_path) and with --no-cache-control; Caddy's
# parser reads back every URL path of a tree of hostile names exactly.
# Caddy runs unprivileged on 127.0.0.1 from a Caddyfile, data and logs in
# the scratch directory, and is stopped by pid.  Budget: under 2 minutes.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
CADDY=${CADDY:-/usr/bin/caddy}
[ -x "$CADDY" ] || { echo "serve_caddy.sh: $CADDY is missing (install caddy)" >&2; exit 1; }
command -v curl >/dev/null || { echo "serve_caddy.sh: curl is missing" >&2; exit 1; }
BUDGET=${BUDGET:-110}

# Caddy keeps state under HOME / XDG_*: all of it in the scratch directory.
export HOME=$T/home XDG_DATA_HOME=$T/home/data XDG_CONFIG_HOME=$T/home/config
mkdir -p "$HOME"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

over_budget() { [ "$SECONDS" -gt "$BUDGET" ]; }

# write_caddyfile DIR PORT SITE: a Caddyfile of our own in DIR whose one
# site, http://127.0.0.1:PORT, holds SITE and an access log in DIR (JSON,
# as browser.py reads it).
write_caddyfile() {
	local dir=$1 port=$2 site=$3
	mkdir -p "$dir"
	cat >"$dir/Caddyfile" <<CONF
{
	admin off
	auto_https off
	storage file_system $dir/storage
}
http://127.0.0.1:$port {
$site
	log {
		output file $dir/access.log
		format json
	}
}
CONF
}

caddy_adapt() { "$CADDY" adapt --config "$1/Caddyfile" --adapter caddyfile >"$1/adapted.json" 2>"$1/adapt.log"; }
caddy_validate() { "$CADDY" validate --config "$1/Caddyfile" --adapter caddyfile >"$1/validate.log" 2>&1; }

# start_caddy DIR SITE: Caddy serving SITE on a free port; sets PORT.
start_caddy() {
	local dir=$1 site=$2 try pid
	for try in 1 2 3 4 5 6 7 8; do
		PORT=$((20000 + RANDOM % 20000))
		write_caddyfile "$dir" "$PORT" "$site"
		"$CADDY" run --config "$dir/Caddyfile" --adapter caddyfile >"$dir/caddy.log" 2>&1 &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 100); do
			curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
			kill -0 "$pid" 2>/dev/null || break # the port was taken: try another
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
	done
	echo "serve_caddy.sh: could not start caddy" >&2
	cat "$dir/caddy.log" >&2
	return 1
}

# checked RULES_TREE -- COMMAND...: run a checker; its failures must all be
# ones the Caddy 2.6 limitation explains (filter below), else they count.
# The one limitation: Go's http.ServeContent sends no Content-Length when
# Content-Encoding is set, so the HEAD of a sibling has none (GET is
# chunked).  Any other failure line, and a missing summary, fails.
checked() {
	local tree=$1 out=$T/check.$RANDOM rc=0
	shift 2
	"$@" >"$out" 2>&1 || rc=$?
	PYTHONDONTWRITEBYTECODE=1 "$PY" - "$tree" "$out" "${SKIPPED:-}" "$rc" <<'EOF'
import os, re, sys
sys.path.insert(0, os.environ["E2E"])
import serve_rules as R
tree, out, skipped, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tolerated = 0
skipped = set(filter(None, skipped.split("\n")))
by_name = {a.display(): a for a in R.load_assets(tree)}
text = open(out, encoding="utf-8", errors="replace").read()
bad = 0
for line in text.splitlines():
    m = re.match(r"FAIL: (.*) \[Accept-Encoding: (.*?)\]: (.*)$", line)
    if m and m.group(1) in by_name:
        a, ae = by_name[m.group(1)], m.group(2)
        ae = {"(none)": None, '""': ""}.get(ae, ae)
        what = m.group(3)
        if re.fullmatch(r"HEAD: Content-Length None, the GET body has \d+ bytes", what) \
                and R.expected_coding(ae, a.sizes()) is not None:
            tolerated += 1
            continue  # Caddy 2.6: no Content-Length beside Content-Encoding
        if what.startswith("GET: Cache-Control 'no-cache', want 'public") and a.display() in skipped:
            tolerated += 1
            continue  # immutable, but the snippet cannot list its URL path
    if line.startswith("FAIL") or "Traceback" in line:
        print(line, file=sys.stderr)
        bad = 1
if not re.search(r"^(serve_check|browser): ", text, re.M):
    print("no summary line from the checker:\n" + text[-2000:], file=sys.stderr)
    bad = 1
if rc != 0 and (tolerated == 0 or rc != 1):
    print("the checker exited with status %d:\n%s" % (rc, text[-2000:]), file=sys.stderr)
    bad = 1
sys.exit(bad)
EOF
}
export E2E

# --- the page tree, served at / ---------------------------------------------
"$E2E/serve_tree.sh" "$T/site" >/dev/null || fail "serve_tree.sh"
"$KILN" -q --brotli --zstd --server caddy "$T/site" || fail "kiln --server caddy on the tree"
check "kiln wrote kiln.caddy.conf" test -s "$T/site/kiln.caddy.conf"
cp "$T/site/kiln.caddy.conf" "$T/first.conf"
"$KILN" -q --brotli --zstd --server caddy "$T/site" || fail "kiln again on the tree"
check "the snippet is the same on a second run" cmp -s "$T/first.conf" "$T/site/kiln.caddy.conf"
check "the snippet has no encode directive" not grep -qE '^[[:space:]]*encode([[:space:]]|$)' "$T/site/kiln.caddy.conf"

SITE="	root * $T/site
	import $T/site/kiln.caddy.conf"
write_caddyfile "$T/c-site" 8 "$SITE"
check "caddy validate accepts the snippet" caddy_validate "$T/c-site"
start_caddy "$T/c-site" "$SITE" || exit 1
BASE=http://127.0.0.1:$PORT
check "serve_check: the tree at /" checked "$T/site" -- \
	timeout 60 "$PY" "$E2E/serve_check.py" --base "$BASE/" --tree "$T/site"

# What serve_check does not look at.
hdr() { curl -s -o /dev/null -D - "$@" | tr -d '\r'; }
vary_lines() { hdr "$@" | grep -ci '^vary:'; }
check "one Vary on a sibling's response (not Caddy's plus the snippet's)" \
	test "$(vary_lines -H 'Accept-Encoding: br' "$BASE/assets/index-B2x9_kQ1.css")" = 1
check "one Vary on an identity response of an asset with siblings" \
	test "$(vary_lines "$BASE/assets/index-B2x9_kQ1.css")" = 1
check "no Vary for a file without siblings" \
	test "$(vary_lines -H 'Accept-Encoding: gzip' "$BASE/img/logo.png")" = 0
for url in "/x/../kiln-manifest.json" "/kiln-manifest.json/." "//kiln.caddy.conf" "/%6Biln.caddy.conf" \
	"/assets/../kiln.caddy.conf"; do
	code=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip' "$BASE$url")
	check "kiln's own file is not served at $url (got $code)" test "$code" = 404 -o "$code" = 403
done
check "the page's URL / gets index.html's Cache-Control" \
	sh -c "curl -s -o /dev/null -D - '$BASE/' | tr -d '\r' | grep -qx 'Cache-Control: no-cache'"
# The log keeps the client's Accept-Encoding, not the one the snippet hands
# to file_server (browser.py reads it).
curl -s -o /dev/null -H 'Accept-Encoding: gzip;q=0.5, br;q=0.1' "$BASE/settings.js"
check "the access log has the client's Accept-Encoding" \
	grep -qF '"Accept-Encoding":["gzip;q=0.5, br;q=0.1"]' "$T/c-site/access.log"

if ! over_budget; then
	check "browser: Chromium gets the smallest codings and runs the page" checked "$T/site" -- \
		timeout 70 "$PY" "$E2E/browser.py" --url "$BASE/" --tree "$T/site" \
		--log "$T/c-site/access.log" --log-format caddy --out "$T/browser.json" --timeout 60
else
	fail "over the time budget before the browser test"
fi

# Siblings are looked for per request: a stale snippet is safe.  Remove the
# .zst and the .br of the app script: zstd-and-br clients get the .gz; then
# the source of a listed file: a 404 with no (cacheable) Cache-Control.
rm -f "$T/site/assets/app.3f9a2c7b.js.zst" "$T/site/assets/app.3f9a2c7b.js.br"
check "a removed sibling is not served" \
	sh -c "curl -s -o /dev/null -D - -H 'Accept-Encoding: zstd, br, gzip' '$BASE/assets/app.3f9a2c7b.js' | tr -d '\r' | grep -qx 'Content-Encoding: gzip'"
rm -f "$T/site/assets/chunks/lazy.9c1d4e2f.js"
check "an immutable file that is gone: a 404 not marked immutable" \
	sh -c "h=\$(curl -s -o /dev/null -D - '$BASE/assets/chunks/lazy.9c1d4e2f.js' | tr -d '\r'); echo \"\$h\" | grep -q '^HTTP/1.1 404' && ! echo \"\$h\" | grep -qi '^cache-control:.*immutable'"
check "a file the manifest does not list is revalidated" \
	sh -c "echo new >'$T/site/added.txt' && curl -s -o /dev/null -D - '$BASE/added.txt' | tr -d '\r' | grep -qx 'Cache-Control: no-cache'"

# --- under a URL prefix, with handle_path -----------------------------------
"$E2E/serve_tree.sh" "$T/pre" >/dev/null || fail "serve_tree.sh (prefix)"
"$KILN" -q --brotli --zstd --server caddy --url-prefix /static/ "$T/pre" || fail "kiln --url-prefix"
PRE="	handle_path /static/* {
		root * $T/pre
		import $T/pre/kiln.caddy.conf
	}
	handle_path /again/* {
		root * $T/pre
		import $T/pre/kiln.caddy.conf
	}"
start_caddy "$T/c-pre" "$PRE" || exit 1
check "serve_check: the tree at /static/ (handle_path)" checked "$T/pre" -- \
	timeout 60 "$PY" "$E2E/serve_check.py" --base "http://127.0.0.1:$PORT/static/" --tree "$T/pre" \
	--sample 4 --ae gzip --ae 'br;q=0.5, gzip' --ae '*' --ae 'zstd;q=0, *'
# Immutable URLs are listed as the tree is served: under another prefix the
# same files are only revalidated (and are still served right).
check "under another prefix an immutable file is revalidated" \
	sh -c "curl -s -o /dev/null -D - 'http://127.0.0.1:$PORT/again/assets/app.3f9a2c7b.js' | tr -d '\r' | grep -qx 'Cache-Control: no-cache'"

# --- --no-cache-control -------------------------------------------------------
"$E2E/serve_tree.sh" "$T/nocc" >/dev/null || fail "serve_tree.sh (no-cache-control)"
"$KILN" -q --brotli --zstd --server caddy --no-cache-control "$T/nocc" || fail "kiln --no-cache-control"
check "--no-cache-control: the snippet sets no Cache-Control" \
	not grep -qE '^[^#]*Cache-Control' "$T/nocc/kiln.caddy.conf"
start_caddy "$T/c-nocc" "	root * $T/nocc
	import $T/nocc/kiln.caddy.conf" || exit 1
check "serve_check --no-cache-control" checked "$T/nocc" -- \
	timeout 60 "$PY" "$E2E/serve_check.py" --base "http://127.0.0.1:$PORT/" --tree "$T/nocc" \
	--no-cache-control --sample 4 --ae gzip --ae br --ae zstd

# --- hostile names: Caddy reads every listed URL path back exactly ---------------
"$PY" - "$T/weird" <<'EOF' || fail "making the hostile-names tree"
import os, sys
top = os.fsencode(sys.argv[1])
names = [b'quote".js', b"back\\slash.js", b"tick`.js", b'tick`quote".js', b"brace{x}.js",
         b"env{$HOME}.js", b"short{path}.js", b"open{.js",
         b"close}.js", b"}{.js", b"latin1-\xe9.js", b"sp ace \xc3\xa9.js", b"hash#q?.js",
         b"pct%41.js", b"~tilde.js", b"semi;colon,comma.js", b"dir with space/index.html",
         b"app.3f9a2c7b.js", b"a'b.js", b'q"uote sp\xc3\xa9.3f9a2c7b.js', b"t`ick.3f9a2c7b.js",
         b't`i"ck.3f9a2c7b.js', b"br{ace}.3f9a2c7b.js", b"b\\ack.3f9a2c7b.js", b"latin1-\xe9.3f9a2c7b.js"]
for i, n in enumerate(names):
    p = os.path.join(top, n)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(b"".join(b"var v%d = '%s';\n" % (j, n.hex().encode()) for j in range(300 + i)))
EOF
"$KILN" -q --brotli --server caddy "$T/weird" || fail "kiln on the hostile names"
SKIPPED=$("$PY" - "$T/weird" <<'EOF'
import base64, json, os, re, sys
sys.path.insert(0, os.environ["E2E"])
import serve_rules as R
# Immutable assets whose URL paths the snippet cannot list (see
# lib/snippet_caddy.c): no token of an imported Caddyfile reads them back
# (not UTF-8, "{$", "{" before "}", a backslash before a brace in a path
# with a "{", a backtick with a backslash before a '"' or at the end).
for a in R.load_assets(sys.argv[1]):
    if not a.immutable:
        continue
    p = b"/" + a.rel
    try:
        s = p.decode("utf-8")
    except UnicodeDecodeError:
        print(a.display()); continue
    if "{$" in s or re.search(r"\{.*\}", s, re.S) or \
            ("{" in s and re.search(r"\\[{}]", s)) or \
            ("`" in s and re.search(r'\\("|\Z)', s)):
        print(a.display())
EOF
)
check "some immutable hostile names cannot be listed" test -n "$SKIPPED"
WEIRD="	root * $T/weird
	import $T/weird/kiln.caddy.conf"
write_caddyfile "$T/c-weird" 8 "$WEIRD"
check "caddy adapt accepts the hostile-names snippet" caddy_adapt "$T/c-weird"
check "caddy validate accepts the hostile-names snippet" caddy_validate "$T/c-weird"
check "the map's keys are exactly the listable immutable URL paths, byte for byte" \
	"$PY" - "$T/weird" "$T/c-weird/adapted.json" "$SKIPPED" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["E2E"])
import serve_rules as R
skipped = set(filter(None, sys.argv[3].split("\n")))
want = set()
assets = R.load_assets(sys.argv[1])
if sum(a.immutable for a in assets) < 4:
    print("the manifest marks too few hostile names immutable", file=sys.stderr)
    sys.exit(1)
for a in assets:
    if not a.immutable or a.display() in skipped:
        continue
    want.add(b"/" + a.rel)
    if a.rel == b"index.html" or a.rel.endswith(b"/index.html"):
        want.add(b"/" + a.rel[:-len(b"index.html")])
got = set()
def walk(x):
    if isinstance(x, dict):
        if x.get("handler") == "map" and x.get("source") == "{http.request.orig_uri.path}":
            got.update(m["input"].encode("utf-8") for m in x["mappings"])
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(json.load(open(sys.argv[2])))
if got != want:
    print("map keys differ: missing %r, extra %r" % (sorted(want - got), sorted(got - want)), file=sys.stderr)
    sys.exit(1)
EOF
if ! over_budget; then
	start_caddy "$T/c-weird" "$WEIRD" || exit 1
	check "serve_check: the hostile names" checked "$T/weird" -- \
		timeout 60 "$PY" "$E2E/serve_check.py" --base "http://127.0.0.1:$PORT/" --tree "$T/weird" \
		--ae gzip --ae br --ae '*' --ae '(none)'
else
	fail "over the time budget before serving the hostile names"
fi

echo "serve_caddy.sh: ${SECONDS}s" >&2
check "within the time budget (${BUDGET}s)" not over_budget
finish
