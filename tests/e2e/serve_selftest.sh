#!/usr/bin/env bash
# serve_selftest.sh - the serving tools test themselves against a real nginx:
# serve_check.py and browser.py pass a hand-written nginx configuration that
# does right what stock nginx can (Cache-Control by hand, kiln's files
# denied, gzip_static and brotli_static), and report a failure, with the
# expected message, for each thing broken on purpose: nginx compressing on
# the fly, a deleted .br, a corrupted sibling, no Cache-Control, kiln's
# files served, Range off, ETags off, a wrong Content-Type, and (in the
# browser) immutable assets revalidated and a zstd sibling not sent.
# Needs nginx-light, libnginx-mod-http-brotli-static, chromium, python3-brotli
# and python3-zstandard.  Run: KILN=build/kiln FIXTURES=fixtures bash
# tests/e2e/serve_selftest.sh
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
for need in "$NGINX" "$BROTLI_MODULE" /etc/nginx/mime.types "$CHROMIUM"; do
	[ -e "$need" ] || { echo "serve_selftest.sh: $need is missing" >&2; exit 1; }
done

trap nginx_stop EXIT

# serving ROOT BODY: nginx (with the brotli module, without kiln's snippet)
# serving ROOT with BODY inside server {}, on a free port; sets PORT, LOG.
n=0
serving() {
	n=$((n + 1))
	NGINX_MAIN="load_module $BROTLI_MODULE;" NGINX_HTTP= NGINX_SERVER=$2 nginx_start "$T/nginx$n" "$1"
}

# nginx's own static modules, as kiln's first snippets used them: what
# stock nginx gets right about precompressed siblings.
STATIC='gzip off; gzip_static on; gzip_proxied any; gzip_http_version 1.0; brotli_static on; gzip_vary on;'

# A location block: kiln's files denied, the stock modules, Cache-Control
# by hand (the fingerprinted assets are all under assets/).
good_body() { # good_body ROOT [EXTRA directives for both locations]
	cat <<BODY
        location ~ (^|/)(kiln-manifest\.json|kiln\.[a-z.]+\.conf|\.kiln-[^/]*)\$ { return 404; }
        location ~ \.(gz|br|zst)\$ { return 404; }
        location /assets/ {
            $STATIC
            add_header Cache-Control "public, max-age=31536000, immutable";
            ${2:-}
        }
        location / {
            $STATIC
            add_header Cache-Control "no-cache";
            ${2:-}
        }
BODY
}

# mark_immutable TREE: the fingerprinted assets (under assets/) get
# "immutable": "name" in the manifest, as kiln writes it.
mark_immutable() {
	$PY - "$1/kiln-manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k, v in m["files"].items():
    if k.startswith("assets/"):
        v["immutable"] = "name"
json.dump(m, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
}

# What stock nginx gets right: no zstd, no "*", no x-gzip.
SUBSET=(--ae '(none)' --ae '' --ae identity --ae gzip --ae br --ae 'gzip, br' --ae 'br;q=0, gzip'
	--ae 'GZIP, BR' --ae 'br ; q=0 , gzip' --ae 'gzip;q=1.0, br;q=0.5' --ae '*;q=0')

sc() { $PY "$E2E/serve_check.py" --base "http://127.0.0.1:$PORT/" "$@" >"$T/sc.out" 2>&1; }
# expect_fail WHAT PATTERN COMMAND...: COMMAND exits 1 and prints PATTERN
expect_fail() {
	local what=$1 pat=$2; shift 2
	checks=$((checks + 1))
	"$@"
	local rc=$?
	if [ $rc -ne 1 ]; then fail "$what: exit $rc, want 1"; tail -n 5 "$T/sc.out" >&2
	elif ! grep -q -- "$pat" "$T/sc.out"; then fail "$what: no line matching '$pat'"; tail -n 5 "$T/sc.out" >&2
	fi
}
expect_pass() {
	local what=$1; shift
	checks=$((checks + 1))
	"$@" || { fail "$what: exit $?"; grep FAIL "$T/sc.out" | head -n 20 >&2; }
}

# Trees: zstd (the app script keeps all three siblings), and brotli only.
bash "$E2E/serve_tree.sh" "$T/z" && "$KILN" -q --brotli --zstd "$T/z" || fail "tree z"
bash "$E2E/serve_tree.sh" "$T/b" && "$KILN" -q --brotli "$T/b" || fail "tree b"
check "the app script keeps gzip, br and zstd siblings" test -f "$T/z/assets/app.3f9a2c7b.js.zst" -a -f "$T/z/assets/app.3f9a2c7b.js.br"
mark_immutable "$T/z"
mark_immutable "$T/b"
chmod -R a+rX "$T"

# The hand-written configuration passes what stock nginx can do ...
serving "$T/b" "$(good_body "$T/b")" || { finish; exit 1; }
expect_pass "good config, Accept-Encoding values nginx handles" sc --tree "$T/b" "${SUBSET[@]}"
# ... and fails the rest: "*", x-gzip
expect_fail "good config, full list" "Accept-Encoding: \*\]: Content-Encoding absent, want 'br'" sc --tree "$T/b"
grep -q "Accept-Encoding: x-gzip\]: Content-Encoding absent, want 'gzip'" "$T/sc.out" || fail "x-gzip not reported"

# Breakages, each caught.
serving "$T/b" "gzip on; gzip_types text/css application/javascript application/json; gzip_min_length 20; gzip_vary on; location / { add_header Cache-Control no-cache; }"
expect_fail "nginx compressing on the fly" "for the identity representation: status 304, want 200" sc --tree "$T/b" "${SUBSET[@]}"
grep -q "HEAD: Content-Length None" "$T/sc.out" || fail "on-the-fly gzip: HEAD without Content-Length not reported"

cp -a "$T/b" "$T/broken" && rm "$T/broken/assets/vendor-Dq4x_Z8k.js.br"
$PY -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=0x40; open(p,"wb").write(b)' "$T/broken/index.html.gz"
touch -r "$T/broken/index.html" "$T/broken/index.html.gz"
serving "$T/broken" "$(good_body "$T/broken")"
expect_fail "a deleted .br" "vendor-Dq4x_Z8k.js \[Accept-Encoding: br\]: Content-Encoding absent, want 'br'" sc --tree "$T/broken" "${SUBSET[@]}"
grep -q "index.html \[Accept-Encoding: gzip\]: body does not decode as gzip" "$T/sc.out" || fail "a corrupted .gz not reported"

serving "$T/b" "location / { $STATIC }"
expect_fail "the stock modules alone: no Cache-Control" "GET: Cache-Control absent, want 'public, max-age=31536000, immutable'" sc --tree "$T/b" "${SUBSET[@]}"
grep -q "kiln-manifest.json \[Accept-Encoding: (none)\]: kiln's own file answered 200" "$T/sc.out" || fail "the manifest served, not reported"
grep -q "assets/.kiln-journal-XyZ789 \[Accept-Encoding: gzip\]: kiln's own file answered 200" "$T/sc.out" || fail "a journal served, not reported"
serving "$T/b" "location ~ /kiln-manifest\.json|/kiln\.[a-z.]+\.conf|/\.kiln- { return 403; } location ~ \.(gz|br|zst)\$ { return 404; } location / { $STATIC }"
expect_pass "--no-cache-control takes an absent Cache-Control" sc --tree "$T/b" --no-cache-control "${SUBSET[@]}" --expect-own nothing-here.conf
expect_fail "--expect-own: a file that is served" "settings.js \[Accept-Encoding: gzip\]: kiln's own file answered 200" sc --tree "$T/b" --no-cache-control --ae gzip --expect-own settings.js

serving "$T/b" "$(good_body "$T/b" "max_ranges 0; etag off;")"
expect_fail "Range off" "Range bytes=0-9: status 200 (Range ignored), want 206" sc --tree "$T/b" --ae gzip --ae br
grep -q "no ETag on the gzip response" "$T/sc.out" || fail "ETag off not reported"

serving "$T/b" "$(good_body "$T/b" "types { application/x-gzip js; }")"
expect_fail "a wrong Content-Type" "Content-Type 'application/x-gzip' is a compression type" sc --tree "$T/b" --ae gzip

# The browser: passes on the good configuration (brotli tree) ...
serving "$T/b" "$(good_body "$T/b")"
br() { $PY "$E2E/browser.py" --url "http://127.0.0.1:$PORT/" --log "$LOG" --log-format nginx --out "$T/browser.json" "$@" >"$T/sc.out" 2>&1; }
expect_pass "browser, good config" br --tree "$T/b"
check "browser: the marker" grep -q '"marker": "kiln-ran-OK"' "$T/browser.json"
# ... fails when immutable assets are revalidated, and when the smallest
# sibling (zstd) is not sent
serving "$T/b" "location / { $STATIC add_header Cache-Control no-cache; }"
expect_fail "browser, no-cache everywhere" "(immutable) reached the server" br --tree "$T/b"
serving "$T/z" "$(good_body "$T/z")"
expect_fail "browser, zstd not sent" "assets/app.3f9a2c7b.js \[Accept-Encoding: gzip, deflate, br, zstd\]: sent as br, want zstd" br --tree "$T/z"

nginx_stop
finish
