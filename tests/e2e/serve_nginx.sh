#!/usr/bin/env bash
# serve_nginx.sh - kiln's nginx snippet in a real nginx (Debian's, no module
# but its own) started here on 127.0.0.1: for the serving tree
# (serve_tree.sh: fingerprinted and plain assets, media, small and no-gain
# files, names with spaces and non-ASCII), serve_check.py asks every asset
# with every Accept-Encoding case and checks the body decodes to the source,
# Content-Encoding (the smallest accepted sibling), Content-Type, Vary,
# Cache-Control, HEAD, Range, 304s per coding, and that kiln's own files are
# never sent; browser.py loads the page in headless Chromium twice and
# reads nginx's log.  Then: --no-cache-control, --url-prefix under an
# alias, a snippet older than the tree (a sibling gone, a file added, a
# source gone), siblings asked for by their own URL, a try_files fallback,
# a denied source, the snippet made with hostile globs, and HTTP/1.0 and
# proxied requests.
# KILN_NGINX_FORM picks the snippet's form (docs/serving.md, "nginx"):
#   negotiating  (default) kiln --brotli --zstd: the rewrite module chooses
#   static       kiln --brotli --nginx-brotli-static: nginx's gzip_static and
#                brotli_static choose (the brotli module loaded); and a
#                gzip-only run, whose snippet needs no module, served by an
#                nginx without it
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
FORM=${KILN_NGINX_FORM:-negotiating}
BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
case $FORM in
negotiating) CODINGS=(--brotli --zstd) ;;
static)
	CODINGS=(--brotli --nginx-brotli-static)
	[ -e "$BROTLI_MODULE" ] || { echo "serve_nginx.sh: $BROTLI_MODULE is missing (install libnginx-mod-http-brotli-static)" >&2; exit 1; }
	export NGINX_MAIN="load_module $BROTLI_MODULE;"
	;;
*) echo "serve_nginx.sh: KILN_NGINX_FORM is negotiating or static, not $FORM" >&2; exit 2 ;;
esac
for need in "$NGINX" /etc/nginx/mime.types /usr/bin/chromium; do
	[ -e "$need" ] || { echo "serve_nginx.sh: $need is missing (install nginx-light and chromium)" >&2; exit 1; }
done
# is_form TREE: its snippet is the $FORM form
is_form() {
	if [ "$FORM" = static ]; then grep -q '^gzip_static on;' "$1/kiln.nginx.conf"; else not grep -q 'gzip_static' "$1/kiln.nginx.conf"; fi
}

trap nginx_stop EXIT

# serving NAME ROOT SERVER-BODY: on a free port; sets PORT, LOG.
serving() { NGINX_SERVER=$3 nginx_start "$T/$1" "$2"; }
# nginx_t DIR ROOT SERVER-BODY [HTTP]: the configuration nginx -t reads
nginx_t() { NGINX_SERVER=$3 NGINX_HTTP=${4-"include $2/kiln.nginx.http.conf;"} nginx_conf "$1" "$2" 8; }
at_root() { printf '        location / {\n            include %s/kiln.nginx.conf;\n        }\n' "$1"; }

# links_outside TREE: a sibling, a source and a directory of the served
# TREE replaced by links to outside it: nothing of outside is sent (the
# source itself may be, 200, when only its sibling is a link).  Put back.
links_outside() {
	local tree=$1 u ae code
	rm -rf "$T/outside" && mkdir -p "$T/outside/assets" && echo 'SECRET-OUTSIDE' >"$T/outside/secret.txt"
	cp "$tree/assets/"* "$T/outside/assets/" 2>/dev/null
	echo 'SECRET-OUTSIDE' >>"$T/outside/assets/app.3f9a2c7b.js"
	gzip -kf "$T/outside/secret.txt" && chmod -R a+rX "$T/outside"
	cp -a "$tree/settings.js.gz" "$tree/small.txt" "$T/"
	ln -sf "$T/outside/secret.txt.gz" "$tree/settings.js.gz" && rm -f "$tree/settings.js.br"
	ln -sf "$T/outside/secret.txt" "$tree/small.txt"
	mv "$tree/assets" "$T/assets.away" && ln -s "$T/outside/assets" "$tree/assets"
	for u in settings.js small.txt assets/app.3f9a2c7b.js assets/app.3f9a2c7b.js.gz; do
		for ae in gzip identity; do
			code=$(curl -s --compressed -o "$T/body" -w '%{http_code}' -H "Accept-Encoding: $ae" "http://127.0.0.1:$PORT/$u")
			check "a link to outside the tree on the way to /$u ($ae): nothing of outside sent ($code)" \
				eval "! grep -q SECRET-OUTSIDE '$T/body' && [ $code != 200 -o '$u' = settings.js ]"
		done
	done
	rm "$tree/assets" && mv "$T/assets.away" "$tree/assets"
	rm "$tree/settings.js.gz" "$tree/small.txt" && mv "$T/settings.js.gz" "$T/small.txt" "$tree/"
}

sc() { # sc NAME ARGS...: serve_check.py, its output kept in $T/NAME.out
	local name=$1; shift
	$PY "$E2E/serve_check.py" "$@" >"$T/$name.out" 2>&1 || { grep -m 30 FAIL "$T/$name.out" >&2; tail -n 1 "$T/$name.out" >&2; return 1; }
}

# ---- 1. The serving tree, every coding of the form, served at /.
bash "$E2E/serve_tree.sh" "$T/site" || fail "serve_tree.sh"
# (and a file of its own whose name ends in a sibling's suffix)
mkdir -p "$T/site/files" && tar -C "$T/site" -czf "$T/site/files/bundle.tar.gz" docs
"$KILN" -q "${CODINGS[@]}" "$T/site"
check "kiln ${CODINGS[*]} on the serving tree" [ $? -eq 0 ]
check "... writes the $FORM form of the snippet" is_form "$T/site"
if [ "$FORM" = static ]; then
	check "the app script has .gz and .br (every coding is exercised)" \
		test -f "$T/site/assets/app.3f9a2c7b.js.br" -a -f "$T/site/assets/app.3f9a2c7b.js.gz"
else
	check "the app script has .gz, .br and .zst (every coding is exercised)" \
		test -f "$T/site/assets/app.3f9a2c7b.js.zst" -a -f "$T/site/assets/app.3f9a2c7b.js.br" -a -f "$T/site/assets/app.3f9a2c7b.js.gz"
fi
chmod -R a+rX "$T"
nginx_t "$T/t" "$T/site" "$(at_root "$T/site")"
check "nginx -t accepts the snippet" "$NGINX" -t -q -p "$T/t" -e "$T/t/error.log" -c "$T/t/nginx.conf"
if serving n1 "$T/site" "$(at_root "$T/site")"; then
	check "serve_check: every asset, every Accept-Encoding case" \
		sc check1 --base "http://127.0.0.1:$PORT/" --tree "$T/site"
	# the same with HTTP/1.0 and through a proxy (Via): still the siblings
	for how in -0 "-H Via:1.1_cdn.example"; do
		curl -s $how -H 'Accept-Encoding: gzip' -o "$T/body" "http://127.0.0.1:$PORT/settings.js"
		check "settings.js, gzip ($how): the .gz" cmp -s "$T/body" "$T/site/settings.js.gz"
	done
	check "Chromium: the page ran, each script and stylesheet in the smallest coding, 304s and cache hits on the second visit" \
		$PY "$E2E/browser.py" --url "http://127.0.0.1:$PORT/" --tree "$T/site" --log "$LOG" \
		--log-format nginx --out "$T/browser.json"
	# an unsatisfiable Range with a sibling accepted: a 416 with no
	# Content-Encoding (the HTML nginx sends is not br), and a satisfiable
	# one the first bytes of what the headers say; or (the static form:
	# the static modules send a sibling whole, as RFC 9110 lets a server
	# ignore Range) 200 with all of it
	named() { # the file the Content-Encoding of $T/h names
		case $(tr -d '\r' <"$T/h" | awk -F': ' 'tolower($1) == "content-encoding" {print $2}') in
		gzip) echo "$T/site/settings.js.gz" ;; br) echo "$T/site/settings.js.br" ;;
		zstd) echo "$T/site/settings.js.zst" ;; '') echo "$T/site/settings.js" ;; *) echo /nonexistent ;; esac
	}
	for ae in br gzip 'gzip, br, zstd'; do
		code=$(curl -s -o "$T/body" -D "$T/h" -w '%{http_code}' -H "Accept-Encoding: $ae" -H 'Range: bytes=999999-' "http://127.0.0.1:$PORT/settings.js")
		check "Range past the end, Accept-Encoding $ae: 416 ($code) with no Content-Encoding, or all of what it names" \
			eval "{ [ $code = 416 ] && ! grep -qi '^content-encoding' '$T/h'; } || { [ $code = 200 ] && cmp -s '$T/body' \"\$(named)\"; }"
		code=$(curl -s -o "$T/body" -D "$T/h" -w '%{http_code}' -H "Accept-Encoding: $ae" -H 'Range: bytes=0-9' "http://127.0.0.1:$PORT/settings.js")
		check "Range bytes=0-9, Accept-Encoding $ae: 206 ($code) and the first bytes of what Content-Encoding names, or 200 and all" \
			eval "{ [ $code = 206 ] && head -c 10 \"\$(named)\" | cmp -s - '$T/body'; } || { [ $code = 200 ] && cmp -s '$T/body' \"\$(named)\"; }"
	done
	check "nginx logged no error" nginx_no_errors "$T/n1/error.log"
else
	fail "nginx starts with the snippet"
fi

# ---- 2. A snippet older than the tree: a sibling gone (the next build kept
# no .br) and a file added; the snippet is not regenerated, nginx not
# reloaded.  Never a 404, never a sibling that is not there.
cp -a "$T/site" "$T/old"
if serving n2 "$T/old" "$(at_root "$T/old")"; then
	rm "$T/old/settings.js.br"
	code=$(curl -s -o "$T/body" -w '%{http_code}' -D "$T/h" -H 'Accept-Encoding: br, gzip' "http://127.0.0.1:$PORT/settings.js")
	check "a sibling gone since the snippet: 200 ($code)" [ "$code" = 200 ]
	check "... with the next smallest sibling, the .gz" cmp -s "$T/body" "$T/old/settings.js.gz"
	printf 'added after the snippet was made %s\n' $(seq 100) >"$T/old/added.3f9a2c7b1d4e.txt"
	gzip -9 -n -k "$T/old/added.3f9a2c7b1d4e.txt"
	chmod a+r "$T/old/added.3f9a2c7b1d4e.txt"*
	curl -s -o "$T/body" -D "$T/h" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT/added.3f9a2c7b1d4e.txt"
	check "a file added since: its sibling is found on disk" cmp -s "$T/body" "$T/old/added.3f9a2c7b1d4e.txt.gz"
	check "... and it is revalidated (no-cache) until the snippet is regenerated" grep -qi '^cache-control: no-cache' "$T/h"
fi

# ---- 2b. A source gone before kiln ran again: its sibling is not sent.  A
# sibling asked for by its own URL while its source is there: 404 (rules
# written for the source's URL must not be walked around).  A single-page
# app's fallback (try_files) still works beside the snippet.
if [ -n "$NGINX_PID" ]; then
	rm "$T/old/data.json"
	for ae in 'gzip, deflate, br, zstd' gzip br; do
		code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Accept-Encoding: $ae" "http://127.0.0.1:$PORT/data.json")
		check "a source gone, its siblings left, Accept-Encoding $ae: 404, not a sibling ($code)" [ "$code" = 404 ]
	done
	for sfx in gz br; do
		code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/data.json.$sfx")
		check "... and its .$sfx by its own URL: 404 ($code)" [ "$code" = 404 ]
	done
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/settings.js.gz")
	check "a sibling by its own URL, beside its source: 404 ($code)" [ "$code" = 404 ]
	code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/files/bundle.tar.gz")
	check "a .tar.gz asset of its own (no source beside it): 200 ($code), its bytes" \
		eval "[ $code = 200 ] && cmp -s '$T/body' '$T/old/files/bundle.tar.gz'"
	[ "$FORM" = negotiating ] && links_outside "$T/old"
fi
spa=$(printf '        location / {\n            try_files $uri /index.html;\n            include %s/kiln.nginx.conf;\n        }\n' "$T/site")
if serving n2b "$T/site" "$spa"; then
	curl -s -o "$T/body" -D "$T/h" -H 'Accept-Encoding: gzip, deflate, br, zstd' "http://127.0.0.1:$PORT/app/settings"
	check "try_files beside the snippet: a client route gets index.html" grep -q '^HTTP/1.1 200' "$T/h"
	enc=$(tr -d '\r' <"$T/h" | awk -F': ' 'tolower($1) == "content-encoding" {print $2}')
	case $enc in gzip) d="gzip -dc" ;; br) d="brotli -dc" ;; zstd) d="zstd -dc" ;; *) d=cat ;; esac
	check "... its bytes ($enc)" eval "$d <'$T/body' | cmp -s - '$T/site/index.html'"
else
	fail "nginx starts with try_files and the snippet"
fi
auth=$(printf '        location = /settings.js {\n            deny all;\n        }\n%s' "$(at_root "$T/site")")
if serving n2c "$T/site" "$auth"; then
	for u in settings.js settings.js.gz settings.js.br; do
		code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip, br' "http://127.0.0.1:$PORT/$u")
		check "a denied source: /$u is not sent ($code)" [ "$code" = 403 -o "$code" = 404 ]
	done
else
	fail "nginx starts with a denied source"
fi

# ---- 3. --no-cache-control: no Cache-Control at all.
bash "$E2E/serve_tree.sh" "$T/nocc" && "$KILN" -q "${CODINGS[@]}" --no-cache-control "$T/nocc"
chmod -R a+rX "$T/nocc"
if serving n3 "$T/nocc" "$(at_root "$T/nocc")"; then
	check "--no-cache-control: serve_check, no Cache-Control" \
		sc check3 --base "http://127.0.0.1:$PORT/" --tree "$T/nocc" --no-cache-control --sample 6
fi

# ---- 4. --url-prefix /static/, served from a location with alias.
bash "$E2E/serve_tree.sh" "$T/pre" && "$KILN" -q "${CODINGS[@]}" --url-prefix /static/ "$T/pre"
chmod -R a+rX "$T/pre"
body=$(printf '        location /static/ {\n            alias %s/;\n            include %s/kiln.nginx.conf;\n        }\n' "$T/pre" "$T/pre")
if serving n4 "$T/pre" "$body"; then
	check "--url-prefix /static/ under an alias: serve_check" \
		sc check4 --base "http://127.0.0.1:$PORT/static/" --tree "$T/pre" --sample 6
fi
nginx_stop

# ---- 4b. A gzip-only run gets the static form, which needs no module:
# served by an nginx without the brotli module.
bash "$E2E/serve_tree.sh" "$T/gz" && "$KILN" -q "$T/gz"
chmod -R a+rX "$T/gz"
check "a gzip-only run writes the static form" grep -q '^gzip_static on;' "$T/gz/kiln.nginx.conf"
check "... with no module to load (gzip_static alone)" \
	eval "[ \"\$(grep -c '_static on;' '$T/gz/kiln.nginx.conf')\" = 1 ] && ! grep -q 'needs nginx' '$T/gz/kiln.nginx.conf'"
if NGINX_MAIN= serving n4b "$T/gz" "$(at_root "$T/gz")"; then
	check "a gzip-only run, nginx without the brotli module: serve_check" \
		sc check4b --base "http://127.0.0.1:$PORT/" --tree "$T/gz"
	links_outside "$T/gz"
fi
nginx_stop

# ---- 5. Globs with newlines and directives cannot inject anything through
# the header comments.
fresh_site "$T/evil"
chmod -R a+rX "$T/evil"
"$KILN" -q --immutable $'x\nautoindex on;' --exclude $'y;\n} server { listen 1;' "$T/evil"
nginx_t "$T/t5" "$T/evil" "$(at_root "$T/evil")"
check "a snippet made with hostile globs passes nginx -t" "$NGINX" -t -q -p "$T/t5" -e "$T/t5/error.log" -c "$T/t5/nginx.conf"
check "... and injects no directive" not grep -q '^autoindex\|^} server' "$T/evil/kiln.nginx.conf" "$T/evil/kiln.nginx.http.conf"

# ---- 6. Two trees' http {} files side by side in one nginx (and one of
# them twice), and one of each form: they do not clash.
nginx_t "$T/t6" "$T/site" "$(at_root "$T/site")" "include $T/site/kiln.nginx.http.conf; include $T/pre/kiln.nginx.http.conf; include $T/site/kiln.nginx.http.conf;"
check "two trees' http {} files (one twice) in one nginx pass nginx -t" \
	"$NGINX" -t -q -p "$T/t6" -e "$T/t6/error.log" -c "$T/t6/nginx.conf"
bash "$E2E/serve_tree.sh" "$T/zs" && "$KILN" -q --brotli --zstd "$T/zs"
nginx_t "$T/t6b" "$T/site" "$(at_root "$T/site")" "include $T/site/kiln.nginx.http.conf; include $T/gz/kiln.nginx.http.conf; include $T/zs/kiln.nginx.http.conf;"
check "http {} files of both forms side by side pass nginx -t" \
	"$NGINX" -t -q -p "$T/t6b" -e "$T/t6b/error.log" -c "$T/t6b/nginx.conf"
finish
