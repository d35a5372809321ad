#!/usr/bin/env bash
# serve_kiln.sh - `kiln serve DIR`, started here on 127.0.0.1, held to the
# checks the nginx, Caddy and Apache snippets are held to: on the serving
# tree (serve_tree.sh), serve_check.py asks every asset with every
# Accept-Encoding case (body decoded and compared with the source,
# Content-Encoding the smallest accepted sibling, Content-Type, Vary,
# Cache-Control, HEAD, Range, 304s per coding, siblings and kiln's own files
# by their own URLs never sent) and browser.py loads the page in headless
# Chromium twice and reads the access log.  Then what only a server that
# reads the manifest can promise: it refuses to start without this tree's
# manifest; a sibling gone or changed since the manifest is not sent (the
# next one is); a source of another size answers 503, never wrong bytes; a
# link to outside the tree is never followed; a new manifest is picked up
# by the poll and by SIGHUP, and a broken one leaves the last serving; a
# manifest kept out of the tree (--artifacts, --manifest); SIGTERM exits 0.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
trap kiln_serve_stop EXIT

sc() { # sc NAME ARGS...: serve_check.py, its output kept in $T/NAME.out
	local name=$1; shift
	$PY "$E2E/serve_check.py" --not-acceptable "$@" >"$T/$name.out" 2>&1 || { grep -m 30 FAIL "$T/$name.out" >&2; tail -n 1 "$T/$name.out" >&2; return 1; }
}
# get PATH [CURL ARGS...]: GET into $T/body, headers $T/h, status on stdout
get() { local p=$1; shift; curl -s -o "$T/body" -D "$T/h" -w '%{http_code}' "$@" "http://127.0.0.1:$PORT$p"; }
header() { tr -d '\r' <"$T/h" | awk -v n="$1" -F': ' 'tolower($1) == n {print $2}'; }
# until_gzip PATH: ask for PATH with gzip accepted (the response in
# $T/body, its headers in $T/h) until it comes as gzip, for 4 s at most:
# the poll's next look at the manifest.
until_gzip() {
	for _ in $(seq 40); do
		get "$1" -H 'Accept-Encoding: gzip' >/dev/null
		[ "$(header content-encoding)" = gzip ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- 0. docs/serving.md's commands as they stand, on the example site
# (the port made a free one), and the startup line the page shows.
SRC=$(cd "$E2E/../.." && pwd)
mkdir -p "$T/doc" && cp -R "$FIXTURES/site" "$T/doc/dist"
/usr/bin/python3 "$SRC/tests/docs/commands.py" "$SRC" commands 'docs/serving.md#kiln-serve' >"$T/doc.block"
mapfile -d '' -t doc_cmds <"$T/doc.block"
check "docs/serving.md#kiln-serve: two commands, kiln and kiln serve" \
	eval "[ ${#doc_cmds[@]} = 2 ] && [[ '${doc_cmds[1]:-}' == 'kiln serve '* ]]"
if [ ${#doc_cmds[@]} = 2 ]; then
	ln -sf "$KILN" "$T/doc/kiln"
	(cd "$T/doc" && PATH="$T/doc:$PATH" bash -e -c "${doc_cmds[0]}") 2>"$T/doc.kiln"
	check "... the first: exit 0, a manifest" eval "[ $? = 0 ] && [ -s '$T/doc/dist/kiln-manifest.json' ]"
	DOCPORT=$((20000 + RANDOM % 20000))
	(cd "$T/doc" && PATH="$T/doc:$PATH" exec bash -c "exec ${doc_cmds[1]//8080/$DOCPORT}") 2>"$T/doc.err" &
	doc_pid=$!
	for _ in $(seq 50); do grep -q '^kiln: serving' "$T/doc.err" && break; sleep 0.1; done
	# (the block after the commands': the second fence line of the section
	# that is a bare ```, the first closing the commands)
	shown=$(awk '/^## kiln serve/ { p = 1 } p && /^```$/ { if (++n == 2) { getline; print; exit } }' "$SRC/docs/serving.md")
	check "... the second serves, with the startup line the page shows (but the port)" \
		[ "$(sed "s/:$DOCPORT\//:8080\//" "$T/doc.err" | head -n 1)" = "$shown" ]
	code=$(curl -s -o "$T/doc.body" -w '%{http_code}' -H 'Accept-Encoding: br' "http://127.0.0.1:$DOCPORT/")
	check "... and sends the page as its .br ($code)" cmp -s "$T/doc.body" "$T/doc/dist/index.html.br"
	kill "$doc_pid" 2>/dev/null
	wait "$doc_pid"
fi

# ---- 1. The serving tree, all three codings.
bash "$E2E/serve_tree.sh" "$T/site" || fail "serve_tree.sh"
"$KILN" -q --brotli --zstd "$T/site"
check "kiln --brotli --zstd on the serving tree" [ $? -eq 0 ]
if kiln_serve_start "$T/site"; then
	check "the startup line says where and what" \
		grep -q "^kiln: serving .*site at http://127.0.0.1:$PORT/ (12 assets, gzip/br/zstd)" "$SERVE_ERR"
	check "serve_check: every asset, every Accept-Encoding case" \
		sc check1 --base "http://127.0.0.1:$PORT/" --tree "$T/site"
	for how in -0 --http1.1; do
		code=$(get /settings.js $how -H 'Accept-Encoding: gzip')
		check "settings.js, gzip ($how): the .gz ($code)" cmp -s "$T/body" "$T/site/settings.js.gz"
	done
	code=$(get /settings.js -X POST -d x=1)
	check "POST: 405 ($code), Allow: GET, HEAD" [ "$code" = 405 -a "$(header allow)" = "GET, HEAD" ]
	# identity refused and no coding of the asset's accepted: 406 (RFC
	# 9110 12.5.3); a coding left accepted is sent
	code=$(get /settings.js -H 'Accept-Encoding: identity;q=0, gzip;q=0, br;q=0, zstd;q=0')
	check "identity;q=0 and every coding refused: 406 ($code), Vary: Accept-Encoding" \
		[ "$code" = 406 -a "$(header vary)" = Accept-Encoding ]
	code=$(get /settings.js -H 'Accept-Encoding: *;q=0')
	check "*;q=0: 406 ($code)" [ "$code" = 406 ]
	code=$(get /settings.js -H 'Accept-Encoding: identity;q=0, gzip')
	check "identity;q=0, gzip: the .gz ($code)" cmp -s "$T/body" "$T/site/settings.js.gz"
	code=$(get /small.txt -H 'Accept-Encoding: identity;q=0, *;q=0.5')
	check "identity refused, * accepted, an asset without siblings: 406 ($code)" [ "$code" = 406 ]
	long=$(head -c 2033 /dev/zero | tr '\0' x)
	code=$(get /small.txt -H "Accept-Encoding: $long, identity;q=0.5")
	check "an Accept-Encoding past 2 KB, cut: no weight read from the cut refuses identity ($code)" [ "$code" = 200 ]
	# a request target in absolute form (RFC 9112 3.2.2: a server must
	# accept it): its path
	code=$(get /settings.js --request-target "http://127.0.0.1:$PORT/settings.js")
	check "an absolute-form target: 200 ($code), the file" cmp -s "$T/body" "$T/site/settings.js"
	code=$(get / --request-target "http://127.0.0.1:$PORT")
	check "... with no path: the top's index.html ($code)" cmp -s "$T/body" "$T/site/index.html"
	# the access log: the Common Log Format, then kiln's fields
	get /settings.js -H 'Accept-Encoding: gzip, br' >/dev/null
	sleep 0.2
	check "the access log: Common Log Format lines, then ce, ae and ad" \
		grep -Eq '^127\.0\.0\.1 - - \[[0-3][0-9]/[A-Z][a-z]{2}/20[0-9]{2}:[0-2][0-9]:[0-5][0-9]:[0-6][0-9] \+0000\] "GET /settings\.js HTTP/1\.1" 200 [0-9]+ ce="br" ae="gzip, br" ad="-"$' "$LOG"
	check "... a 406 in it too" grep -q '"GET /small.txt HTTP/1.1" 406 [0-9]* ce="-" ae="identity;q=0, \*;q=0.5"' "$LOG"
	mtime=$(date -u -r "$T/site/settings.js" '+%a, %d %b %Y %H:%M:%S GMT')
	code=$(get /settings.js -H "If-Modified-Since: $mtime")
	check "If-Modified-Since the source's mtime: 304 ($code)" [ "$code" = 304 ]
	code=$(get /settings.js -H "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT")
	check "If-Modified-Since before it: 200 ($code)" [ "$code" = 200 ]
	check "Last-Modified is the source's mtime" [ "$(header last-modified)" = "$mtime" ]
	size=$(stat -c %s "$T/site/settings.js")
	code=$(get /settings.js -H "Range: bytes=$size-")
	check "a Range past the end: 416 ($code), Content-Range bytes */$size" \
		[ "$code" = 416 -a "$(header content-range)" = "bytes */$size" ]
	code=$(get /settings.js -H "Range: bytes=-5")
	check "a suffix Range: 206 ($code) and the last 5 bytes" \
		eval "[ $code = 206 ] && tail -c 5 '$T/site/settings.js' | cmp -s - '$T/body'"
	code=$(get /settings.js -H "Range: bytes=0-1,4-5")
	check "two ranges: the whole file, 200 ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/site/settings.js' '$T/body'"
	code=$(get /settings.js -H 'Accept-Encoding: gzip' -H "Range: bytes=0-9")
	check "a Range on the gzip representation counts its bytes ($code)" \
		eval "[ $code = 206 ] && head -c 10 '$T/site/settings.js.gz' | cmp -s - '$T/body'"
	code=$(get /settings.js -H "Range: bytes=0-9" -H 'If-Range: "no-such-etag"')
	check "If-Range with another ETag: the whole file, 200 ($code)" [ "$code" = 200 ]
	# a request's line and fields must fit about half of 16 KiB
	# (REQUEST_MEMORY): a 7 KB cookie is served, 20 KB is not
	code=$(get /settings.js -H "Cookie: big=$(head -c 7000 /dev/zero | tr '\0' c)")
	check "a 7 KB Cookie field: 200 ($code) and the file" \
		eval "[ $code = 200 ] && cmp -s '$T/site/settings.js' '$T/body'"
	code=$(get /settings.js -H "Cookie: big=$(head -c 20000 /dev/zero | tr '\0' c)")
	check "a 20 KB Cookie field: 431 ($code)" [ "$code" = 431 ]
	if [ -x /usr/bin/chromium ]; then
		check "Chromium: the page ran, each script and stylesheet in the smallest coding, 304s and cache hits on the second visit" \
			$PY "$E2E/browser.py" --url "http://127.0.0.1:$PORT/" --tree "$T/site" --log "$LOG" \
			--log-format kiln --out "$T/browser.json"
	else
		fail "chromium is missing (install chromium)"
	fi
	kiln_serve_stop
	check "SIGTERM: exit 0 ($SERVE_STATUS)" [ "$SERVE_STATUS" = 0 ]
else
	fail "kiln serve starts on the serving tree"
fi

# ---- 2. Refusals: no manifest, not a manifest, another tree's manifest.
mkdir -p "$T/bare" && echo hi >"$T/bare/a.txt"
"$KILN" serve --listen 127.0.0.1:0 "$T/bare" 2>"$T/err"
st=$?
check "no manifest: exit 1 ($st)" [ $st = 1 ]
check "... kiln: DIR: has no kiln-manifest.json" grep -q "^kiln: $T/bare: has no kiln-manifest.json" "$T/err"
echo '{"not": "a manifest"}' >"$T/bare/kiln-manifest.json"
"$KILN" serve --listen 127.0.0.1:0 "$T/bare" 2>"$T/err"
check "not a manifest: exit 1, said so" eval "[ $? = 1 ] && grep -q 'is not a manifest' '$T/err'"
bash "$E2E/serve_tree.sh" "$T/other" && mkdir -p "$T/away" && "$KILN" -q --manifest "$T/away/kiln-manifest.json" "$T/other"
mkdir -p "$T/copy" && cp -a "$T/other/." "$T/copy/" && cp "$T/away/kiln-manifest.json" "$T/copy/kiln-manifest.json"
check "(the manifest kept away names its tree)" grep -q '"tree"' "$T/copy/kiln-manifest.json"
"$KILN" serve --listen 127.0.0.1:0 "$T/copy" 2>"$T/err"
check "another tree's manifest: exit 1, said so" eval "[ $? = 1 ] && grep -q \"another tree's record\" '$T/err'"
"$KILN" serve --listen 256.1.1.1:80 "$T/site" 2>"$T/err"
check "a bad --listen address: exit 1" [ $? = 1 ]
"$KILN" serve --listen nonsense "$T/site" 2>/dev/null
check "a malformed --listen: usage error (2)" [ $? = 2 ]
"$KILN" serve --help >"$T/help"
check "serve --help: exit 0, the usage on stdout" eval "[ $? = 0 ] && grep -q '^usage: kiln serve' '$T/help'"
"$KILN" serve 2>/dev/null
check "serve without DIR: usage error ($?)" [ $? = 2 ]
"$KILN" serve "$T/site" "$T/other" 2>/dev/null
check "serve with two DIRs: usage error ($?)" [ $? = 2 ]
"$KILN" -q serve "$T/site" 2>"$T/err"
check "options before the word serve: usage error, said so" eval "[ $? = 2 ] && grep -q 'after the word serve' '$T/err'"

# ---- 3. The tree changed under the server, the manifest not (yet).
cp -a "$T/site" "$T/live"
echo 'outside the tree' >"$T/outside.txt"
if kiln_serve_start "$T/live"; then
	rm "$T/live/settings.js.br"
	code=$(get /settings.js -H 'Accept-Encoding: gzip, br, zstd')
	check "a sibling gone: 200 ($code) with the next smallest one, the .gz" cmp -s "$T/body" "$T/live/settings.js.gz"
	printf 'x' >>"$T/live/settings.js.gz"
	# (the .gz was just sent, and its open file is checked again at most
	# once a second)
	sleep 1.1
	code=$(get /settings.js -H 'Accept-Encoding: gzip, br')
	check "a sibling of another size: not sent; the source ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/settings.js' && [ -z \"\$(header content-encoding)\" ]"
	# a source changed since the manifest: its siblings are not its own
	# any more; it is sent as it is, with an ETag of its own (the source's
	# status is looked at again at most once a second)
	etag_rec=$(get /data.json -H 'Accept-Encoding: gzip' >/dev/null; header etag)
	printf '/* more */' >>"$T/live/data.json"
	sleep 1.1
	code=$(get /data.json -H 'Accept-Encoding: gzip, br, zstd')
	check "a source of another size than the manifest's: 200 ($code), its bytes as they are now, no Content-Encoding" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/data.json' && [ -z \"\$(header content-encoding)\" ]"
	etag_now=$(header etag)
	check "... with an ETag from its status, not the manifest's ($etag_now)" \
		eval "[ '$etag_now' = \"\\\"\$(stat -c '%Y %s' '$T/live/data.json' | awk '{printf \"%x-%x\", \$1, \$2}')\\\"\" ] && [ '$etag_now' != '$etag_rec' ]"
	code=$(get /data.json -H "If-None-Match: $etag_now")
	check "... and a 304 for that ETag ($code)" [ "$code" = 304 ]
	code=$(get /data.json -H 'Range: bytes=0-3')
	check "... and a Range on it ($code)" eval "[ $code = 206 ] && head -c 4 '$T/live/data.json' | cmp -s - '$T/body'"
	# the same size, renamed in (a new inode): the recorded ETag would lie
	V=assets/vendor-Dq4x_Z8k.js
	code=$(get /$V -H 'Accept-Encoding: br'); etag_rec=$(header etag)
	check "($V as its .br first: $code)" cmp -s "$T/body" "$T/live/$V.br"
	tr 'a-z' 'A-Z' <"$T/live/$V" >"$T/new.js" && mv "$T/new.js" "$T/live/$V"
	sleep 1.1
	code=$(get /$V -H 'Accept-Encoding: br, gzip')
	check "a source of the recorded size renamed in: 200 ($code), the new bytes, no Content-Encoding" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/$V' && [ -z \"\$(header content-encoding)\" ]"
	code=$(get /$V)
	check "... the identity request too, under another ETag than the recorded $etag_rec" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/$V' && [ \"\$(header etag)\" != '$etag_rec' ]"
	# the ctime moved, the bytes the same (a chmod, a hard link): its
	# siblings are still its own (its digest read again once)
	A=assets/app.3f9a2c7b.js
	chmod g+w "$T/live/$A"
	sleep 1.1
	code=$(get /$A -H 'Accept-Encoding: br')
	check "a source chmod'ed since the load: its .br still sent ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/$A.br'"
	# other bytes written in place, the size and mtime put back (what a
	# reproducible build may leave): only the ctime tells, then the digest
	/usr/bin/python3 -c 'import os, sys
p = sys.argv[1]; st = os.stat(p)
with open(p, "r+b") as f: b = f.read(); f.seek(0); f.write(b.swapcase())
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))' "$T/live/$A"
	sleep 1.1
	code=$(get /$A -H 'Accept-Encoding: br, gzip, zstd')
	check "a source rewritten in place, its size and mtime kept: the new bytes, no Content-Encoding ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/$A' && [ -z \"\$(header content-encoding)\" ]"
	# (its siblings' ctimes moved since, too: no order of ctimes tells)
	chmod g+w "$T/live/$A".*
	if kiln_serve_start "$T/live"; then
		code=$(get /$A -H 'Accept-Encoding: br, gzip, zstd')
		check "... and so after a restart, its siblings chmod'ed too (the load reads a source its index stamp does not prove) ($code)" \
			eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/$A' && [ -z \"\$(header content-encoding)\" ]"
		code=$(get /index.html -H 'Accept-Encoding: br')
		check "... while an untouched source's .br is still sent ($code)" \
			eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/index.html.br'"
	fi
	# a source deleted: its siblings are left, none of them is sent
	code=$(get /index.html -H 'Accept-Encoding: br')
	check "(index.html as its .br first: $code)" cmp -s "$T/body" "$T/live/index.html.br"
	mv "$T/live/index.html" "$T/index.html.away"
	sleep 1.1
	for ae in br gzip zstd 'br, gzip, zstd' identity; do
		code=$(get /index.html -H "Accept-Encoding: $ae")
		check "a source deleted, Accept-Encoding $ae: 404 ($code)" [ "$code" = 404 ]
	done
	code=$(get / -H 'Accept-Encoding: br')
	check "... and its directory: 404 ($code)" [ "$code" = 404 ]
	code=$(get /index.html.br)
	check "... and its sibling by its own URL: 404 ($code)" [ "$code" = 404 ]
	# ... and so after a restart (the load looks at each source), until it
	# is back: the poll looks again for what the load did not find
	if kiln_serve_start "$T/live"; then
		check "a restart with the source deleted: the startup line counts it" \
			grep -Eq '; [0-9]+ recorded files? not on disk' "$SERVE_ERR"
		code=$(get /index.html -H 'Accept-Encoding: br')
		check "... Accept-Encoding br: 404 ($code), not its sibling" [ "$code" = 404 ]
		mv "$T/index.html.away" "$T/live/index.html"
		for _ in $(seq 40); do grep -q '^kiln: reloaded' "$SERVE_ERR" && break; sleep 0.1; done
		check "the source back: reloaded by the poll, without a new manifest" grep -q '^kiln: reloaded' "$SERVE_ERR"
		code=$(get /index.html -H 'Accept-Encoding: br')
		check "... and its .br sent again ($code)" eval "[ $code = 200 ] && cmp -s '$T/body' '$T/live/index.html.br'"
	fi
	ln -sf "$T/outside.txt" "$T/live/small.txt"
	code=$(get /small.txt)
	check "a source replaced by a link to outside: 404 ($code)" [ "$code" = 404 ]
	check "... nothing of the outside file sent" not grep -q 'outside the tree' "$T/body"
	mv "$T/live/assets" "$T/assets-moved" && ln -s "$T/assets-moved" "$T/live/assets"
	code=$(get /assets/app.3f9a2c7b.js)
	check "a directory replaced by a link: 404 ($code)" [ "$code" = 404 ]
	rm "$T/live/assets" && mv "$T/assets-moved" "$T/live/assets"

	# ---- 4. Deploys: a new manifest is picked up (poll, 1 s), a broken one
	# is not and the last one goes on serving.
	rm -f "$T/live/small.txt"
	mkdir "$T/live/guide" && printf '<!doctype html><title>guide</title>%s\n' $(seq 200) >"$T/live/guide/index.html"
	reloads() { grep -c '^kiln: reloaded' "$SERVE_ERR"; }
	n0=$(reloads)
	"$KILN" -q --brotli --zstd "$T/live"
	for _ in $(seq 40); do [ "$(reloads)" -gt "$n0" ] && break; sleep 0.1; done
	check "a new manifest: reloaded by the poll" [ "$(reloads)" -gt "$n0" ]
	code=$(get /data.json -H 'Accept-Encoding: gzip')
	check "... and the changed source served again, its new .gz ($code)" \
		eval "[ $code = 200 ] && gzip -dc '$T/body' | cmp -s - '$T/live/data.json'"
	code=$(get /guide)
	check "a directory without its '/': 301 ($code) to /guide/" [ "$code" = 301 -a "$(header location)" = /guide/ ]
	code=$(get /guide/ -H 'Accept-Encoding: br')
	check "... and /guide/ is its index.html ($code)" \
		eval "[ $code = 200 ] && brotli -dc <'$T/body' | cmp -s - '$T/live/guide/index.html'"
	cp "$T/live/kiln-manifest.json" "$T/good-manifest.json"
	{ printf '{ broken'; head -c 4000000 /dev/zero | tr '\0' ' '; } >"$T/live/kiln-manifest.json.new" &&
		mv "$T/live/kiln-manifest.json.new" "$T/live/kiln-manifest.json"
	for _ in $(seq 40); do grep -q 'goes on serving' "$SERVE_ERR" && break; sleep 0.1; done
	check "a broken manifest: told once" [ "$(grep -c 'goes on serving' "$SERVE_ERR")" = 1 ]
	# (and not read again while it stays: 4 MB a second otherwise)
	r0=$(awk '/^rchar/ {print $2}' "/proc/$SERVE_PID/io"); sleep 2.5
	r1=$(awk '/^rchar/ {print $2}' "/proc/$SERVE_PID/io")
	check "... and not read again while it stays ($((r1 - r0)) bytes read in 2.5 s)" [ $((r1 - r0)) -lt 1000000 ]
	code=$(get /data.json -H 'Accept-Encoding: gzip')
	check "... and the last one goes on serving ($code)" \
		eval "[ $code = 200 ] && gzip -dc '$T/body' | cmp -s - '$T/live/data.json'"
	cp "$T/good-manifest.json" "$T/live/kiln-manifest.json"
	kill -HUP "$SERVE_PID"
	for _ in $(seq 40); do [ "$(reloads)" -ge $((n0 + 2)) ] && break; sleep 0.1; done
	check "SIGHUP: reloaded" [ "$(reloads)" -ge $((n0 + 2)) ]
	kiln_serve_stop
fi

# ---- 4a. A source edited since kiln ran, its size kept: its siblings no
# longer carry its mtime, so a load (a restart, SIGHUP) never offers them;
# `touch` and kiln again (only the index rewritten) bring them back by the
# poll, no signal needed.
rm -rf "$T/same" && cp -a "$FIXTURES/site" "$T/same"
"$KILN" -q "$T/same"
f=$T/same/assets/app.js
if kiln_serve_start "$T/same" --poll 1; then
	python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[0] = ord("/") if b[0] != ord("/") else ord("(")
open(p, "wb").write(bytes(b))
PY
	kill -HUP "$SERVE_PID"; sleep 1.5
	code=$(get /assets/app.js -H 'Accept-Encoding: gzip')
	check "a same-size edit, then SIGHUP: the source as it is, no .gz ($code)" \
		eval "[ $code = 200 ] && [ -z \"\$(header content-encoding)\" ] && cmp -s '$T/body' '$f'"
	kiln_serve_stop
fi
if kiln_serve_start "$T/same" --poll 1; then
	code=$(get /assets/app.js -H 'Accept-Encoding: gzip')
	check "... and after a restart too ($code)" \
		eval "[ $code = 200 ] && [ -z \"\$(header content-encoding)\" ] && cmp -s '$T/body' '$f'"
	"$KILN" -q "$T/same"
	until_gzip /assets/app.js
	check "kiln again: the poll offers the new .gz, decoding to the source" \
		eval "[ \"\$(header content-encoding)\" = gzip ] && gzip -dc '$T/body' | cmp -s - '$f'"
	touch "$f"; sleep 1.5
	code=$(get /assets/app.js -H 'Accept-Encoding: gzip')
	check "touched: the source as it is ($code)" [ -z "$(header content-encoding)" ]
	"$KILN" -q "$T/same"
	until_gzip /assets/app.js
	check "touched, then kiln (only its index rewritten): the .gz again, no signal" \
		eval "[ \"\$(header content-encoding)\" = gzip ] && gzip -dc '$T/body' | cmp -s - '$f'"
	kiln_serve_stop
fi

# ---- 4b. Deploys under load, while threads ask every asset (a Range now
# and then) and wrk asks the page: no failed request, no body that is not
# the representation its ETag names, every body a release's.  A link
# flipped between two releases with SIGHUP; a directory swapped by
# renames and the old one removed at once; hard-linked releases (cp -al,
# every other one unchanged: its manifest the same file) flipped and the
# old one removed at once; the tree rebuilt in place (sources renamed
# over, then kiln).  No signal but for the first: the poll, or the
# request that finds its file gone, loads the new manifest.
cp -a "$T/site" "$T/rel-a" && cp -a "$T/site" "$T/rel-b"
for f in settings.js data.json index.html assets/app.3f9a2c7b.js; do
	printf '\n/* release b */\n' >>"$T/rel-b/$f"
done
"$KILN" -q --brotli --zstd "$T/rel-a" && "$KILN" -q --brotli --zstd "$T/rel-b"
# deploy_check MODE DIR SERVE-OPTIONS...
deploy_check() {
	local mode=$1 dir=$2 wpid
	shift 2
	kiln_serve_start "$dir" --threads 4 "$@" || return
	wrk -t1 -c4 -d3s "http://127.0.0.1:$PORT/index.html" >"$T/wrk-$mode.out" 2>&1 &
	wpid=$!
	check "serve_deploy.py --mode $mode: deploys under 8 threads, every response whole and a release's" \
		$PY "$E2E/serve_deploy.py" --port "$PORT" --link "$dir" --a "$T/rel-a" --b "$T/rel-b" \
		--pid "$SERVE_PID" --seconds 3 --mode "$mode" --kiln "$KILN" \
		--flips-per-second "$([ "$mode" = inplace ] && echo 2 || echo 5)"
	wait "$wpid"
	check "... and wrk alongside: no socket error, no status but 2xx ($(grep -o '[0-9]* requests in' "$T/wrk-$mode.out"))" \
		eval "grep -q ' requests in ' '$T/wrk-$mode.out' && ! grep -q 'Non-2xx\|Socket errors' '$T/wrk-$mode.out'"
	kiln_serve_stop
	check "... and it exits 0 on SIGTERM after ($SERVE_STATUS)" [ "$SERVE_STATUS" = 0 ]
}
ln -sfn "$T/rel-a" "$T/current"
deploy_check flip "$T/current" --poll 0
cp -a "$T/rel-a" "$T/swapped"
deploy_check swap "$T/swapped"
cp -a "$T/rel-a" "$T/hl.rel0" && ln -sfn "$T/hl.rel0" "$T/hl"
deploy_check hardlink "$T/hl"
cp -a "$T/rel-a" "$T/inplace"
deploy_check inplace "$T/inplace"

# ---- 5. --no-cache-control: none at all.
if kiln_serve_start "$T/site" --no-cache-control; then
	check "--no-cache-control: serve_check, no Cache-Control" \
		sc check5 --base "http://127.0.0.1:$PORT/" --tree "$T/site" --no-cache-control --sample 6
	kiln_serve_stop
fi

# ---- 5a. --verify: a sibling and a source with their recorded sizes but
# other bytes are never sent (without it, only the sizes are checked).
cp -a "$T/site" "$T/ver"
printf 'X' | dd of="$T/ver/settings.js.br" bs=1 seek=10 conv=notrunc 2>/dev/null
printf 'X' | dd of="$T/ver/small.txt" bs=1 seek=3 conv=notrunc 2>/dev/null
if kiln_serve_start "$T/ver" --verify; then
	check "--verify: the startup line counts the two files" \
		grep -q '; 1 recorded file not on disk as recorded, not served; 1 source changed since the manifest, sent as they are' "$SERVE_ERR"
	code=$(get /settings.js -H 'Accept-Encoding: gzip, br')
	check "--verify: a sibling with other bytes is not sent; the .gz ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/ver/settings.js.gz'"
	code=$(get /small.txt)
	check "--verify: a source with other bytes: 200 ($code), as it is" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/ver/small.txt'"
	code=$(get /small.txt -H 'Accept-Encoding: gzip, br, zstd')
	check "... never a sibling ($code)" eval "[ $code = 200 ] && [ -z \"\$(header content-encoding)\" ]"
	kiln_serve_stop
fi

# ---- 5b. --url-prefix /static/: the tree there, nothing elsewhere.
bash "$E2E/serve_tree.sh" "$T/pre" && "$KILN" -q --brotli --zstd --url-prefix /static/ "$T/pre"
if kiln_serve_start "$T/pre" --url-prefix /static/; then
	check "--url-prefix /static/: serve_check under it" \
		sc check5b --base "http://127.0.0.1:$PORT/static/" --tree "$T/pre" --sample 6
	code=$(get /index.html)
	check "... a path outside the prefix: 404 ($code)" [ "$code" = 404 ]
	code=$(get /static)
	check "... the prefix without its '/': 301 to it ($code)" [ "$code" = 301 -a "$(header location)" = /static/ ]
	kiln_serve_stop
fi
"$KILN" serve --url-prefix static "$T/pre" 2>/dev/null
check "--url-prefix without its '/'s: a usage error ($?)" [ $? = 2 ]

# ---- 5c. The manifest kept out of the tree (kiln --artifacts OUTDIR):
# served with the same option, or --manifest; reloaded from there; refused
# for another tree, and missing.
bash "$E2E/serve_tree.sh" "$T/art" && mkdir -p "$T/artdir" &&
	"$KILN" -q --brotli --zstd --artifacts "$T/artdir" "$T/art"
check "(kiln --artifacts: the manifest out of the tree)" \
	eval "[ ! -e '$T/art/kiln-manifest.json' ] && [ -s '$T/artdir/kiln-manifest.json' ]"
"$KILN" serve --listen 127.0.0.1:0 "$T/art" 2>"$T/err"
check "without --artifacts: exit 1, no manifest in the tree" \
	eval "[ $? = 1 ] && grep -q 'has no kiln-manifest.json' '$T/err'"
if kiln_serve_start "$T/art" --artifacts "$T/artdir"; then
	check "--artifacts OUTDIR: serve_check, from OUTDIR's manifest" \
		sc check5c --base "http://127.0.0.1:$PORT/" --tree "$T/art" \
		--manifest "$T/artdir/kiln-manifest.json" --sample 6
	printf '\n/* changed */\n' >>"$T/art/settings.js"
	"$KILN" -q --brotli --zstd --artifacts "$T/artdir" "$T/art"
	for _ in $(seq 40); do grep -q '^kiln: reloaded' "$SERVE_ERR" && break; sleep 0.1; done
	check "... a new manifest there: reloaded by the poll" grep -q '^kiln: reloaded' "$SERVE_ERR"
	code=$(get /settings.js -H 'Accept-Encoding: gzip')
	check "... the changed file's new .gz ($code)" \
		eval "[ $code = 200 ] && gzip -dc '$T/body' | cmp -s - '$T/art/settings.js'"
	kiln_serve_stop
fi
if kiln_serve_start "$T/art" --manifest "$T/artdir/kiln-manifest.json" --artifacts "$T/nowhere"; then
	code=$(get /settings.js -H 'Accept-Encoding: br')
	check "--manifest PATH (it wins over --artifacts): the .br ($code)" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/art/settings.js.br'"
	kiln_serve_stop
fi
"$KILN" serve --listen 127.0.0.1:0 --artifacts "$T/artdir" "$T/site" 2>"$T/err"
check "another tree given that --artifacts: exit 1, another tree's record" \
	eval "[ $? = 1 ] && grep -q \"another tree's record\" '$T/err'"
"$KILN" serve --listen 127.0.0.1:0 --manifest "$T/artdir/none.json" "$T/art" 2>"$T/err"
check "a --manifest that is not there: exit 1, said so" \
	eval "[ $? = 1 ] && grep -q 'cannot read the manifest given with --manifest' '$T/err'"
"$KILN" serve --manifest '' "$T/art" 2>/dev/null
check "--manifest '': a usage error ($?)" [ $? = 2 ]

# ---- 5d. Dotfiles and dot-directories are never sent, though the manifest
# lists them; .well-known (RFC 8615) is served.
mkdir -p "$T/dot/.git" "$T/dot/.well-known" "$T/dot/sub/.cache" && cp "$T/site/index.html" "$T/dot/"
echo '[core] secret' >"$T/dot/.git/config"; echo 'PASSWORD=1' >"$T/dot/.env"
printf 'user:secret %s\n' $(seq 100) >"$T/dot/sub/.htpasswd"; printf 'x %s\n' $(seq 100) >"$T/dot/sub/.cache/x.js"
printf 'Contact: mailto:a@example.org %s\n' $(seq 50) >"$T/dot/.well-known/security.txt"
"$KILN" -q "$T/dot"
check "(the manifest lists the dotfiles)" grep -q '".env"' "$T/dot/kiln-manifest.json"
if kiln_serve_start "$T/dot"; then
	for u in /.git/config /.env /sub/.htpasswd /sub/.htpasswd.gz /sub/.cache/x.js /%2eenv; do
		code=$(get "$u" -H 'Accept-Encoding: gzip')
		check "a dotfile, $u: 404 ($code)" eval "[ $code = 404 ] && ! grep -q secret '$T/body'"
	done
	code=$(get /.well-known/security.txt)
	check "/.well-known/security.txt: 200 ($code), its bytes" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/dot/.well-known/security.txt'"
	kiln_serve_stop
fi

# ---- 6. SIGTERM lets a response in flight finish: 2 MB sent at 1 MB/s,
# the signal after half a second; the body whole, the exit 0.
mkdir -p "$T/big" && head -c 2000000 /dev/urandom >"$T/big/big.bin" && cp "$T/site/index.html" "$T/big/"
"$KILN" -q "$T/big"
if kiln_serve_start "$T/big"; then
	curl -s --limit-rate 1M -o "$T/big.got" "http://127.0.0.1:$PORT/big.bin" &
	cpid=$!
	sleep 0.5
	kiln_serve_stop
	wait "$cpid"
	check "SIGTERM during a 2 s response: curl got it all ($?), the server exited 0 ($SERVE_STATUS)" \
		eval "[ '$SERVE_STATUS' = 0 ] && cmp -s '$T/big.got' '$T/big/big.bin'"
fi
# ... and does not wait for an idle keep-alive connection.
if kiln_serve_start "$T/big"; then
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&3
	sleep 0.3
	t0=$(date +%s%N)
	kiln_serve_stop
	ms=$((($(date +%s%N) - t0) / 1000000))
	exec 3<&-
	check "SIGTERM with an idle keep-alive connection open: exit 0 ($SERVE_STATUS) in $ms ms, not the 5 s grace" \
		eval "[ '$SERVE_STATUS' = 0 ] && [ $ms -lt 2000 ]"
fi
finish
