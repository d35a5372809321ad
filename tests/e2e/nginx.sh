#!/usr/bin/env bash
# nginx.sh - proof against a real nginx: the snippet passes `nginx -t` with
# and without brotli, and an nginx started here on 127.0.0.1 with the
# snippet serves every sibling byte for byte, with the right headers, and
# never compresses anything itself.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
NGINX=${NGINX:-/usr/sbin/nginx}
BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
MIME=/etc/nginx/mime.types
for need in "$NGINX" "$BROTLI_MODULE" "$MIME"; do
	[ -e "$need" ] || { echo "nginx.sh: $need is missing (install nginx-light and libnginx-mod-http-brotli-static)" >&2; exit 1; }
done
command -v curl >/dev/null || { echo "nginx.sh: curl is missing" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# write_conf DIR ROOT PORT LOAD_BROTLI: an nginx.conf of our own in DIR.
write_conf() {
	local dir=$1 root=$2 port=$3 load=$4
	mkdir -p "$dir"
	{
		[ "$load" = yes ] && echo "load_module $BROTLI_MODULE;"
		cat <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
    include $MIME;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path $dir/body;
    server {
        listen 127.0.0.1:$port;
        root $root;
        location / {
            include $root/kiln.nginx.conf;
        }
    }
}
CONF
	} >"$dir/nginx.conf"
}

nginx_test() { "$NGINX" -p "$1" -e "$1/error.log" -c "$1/nginx.conf" -t >"$1/t.log" 2>&1; }

# start_nginx DIR ROOT: on a free port; sets PORT.
start_nginx() {
	local dir=$1 root=$2 try
	for try in 1 2 3 4 5 6 7 8 9 10; do
		PORT=$((20000 + RANDOM % 20000))
		write_conf "$dir" "$root" "$PORT" yes
		"$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" 2>>"$dir/start.log" || continue
		for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
		pids+=("$(cat "$dir/nginx.pid")")
		for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0; sleep 0.1; done
	done
	echo "nginx.sh: could not start nginx" >&2
	cat "$dir/error.log" "$dir/start.log" >&2
	return 1
}

# The site, with brotli; a second one with gzip only.
fresh_site "$T/site"
chmod -R a+rX "$T/site"
"$KILN" -q --brotli "$T/site" || fail "kiln --brotli on the site"
fresh_site "$T/gsite"
chmod -R a+rX "$T/gsite"
"$KILN" -q "$T/gsite" || fail "kiln on the site"

write_conf "$T/t1" "$T/site" 8 yes
check "nginx -t accepts the brotli snippet" nginx_test "$T/t1"
write_conf "$T/t2" "$T/gsite" 8 yes
check "nginx -t accepts the gzip-only snippet" nginx_test "$T/t2"
write_conf "$T/t3" "$T/gsite" 8 no
check "the gzip-only snippet needs no brotli module" nginx_test "$T/t3"
write_conf "$T/t4" "$T/site" 8 no
check "the brotli snippet does need the module (nginx -t fails without it)" not nginx_test "$T/t4"

start_nginx "$T/n" "$T/site" || { fail "nginx did not start"; finish; exit 1; }
base="http://127.0.0.1:$PORT"

# get NAME URLPATH [curl options...]: body to $T/r/NAME.body, headers to .hdr
mkdir -p "$T/r"
get() {
	local name=$1 path=$2; shift 2
	curl -s -o "$T/r/$name.body" -D "$T/r/$name.hdr" "$@" "$base/$path"
}
header() { # header NAME FIELD: the value, without CR
	grep -i "^$2:" "$T/r/$1.hdr" | head -n 1 | cut -d: -f2- | sed 's/^ *//; s/\r$//'
}
urlpath() { $PY -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
ctype() { # the content_type the manifest records for a file
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][sys.argv[2]]["content_type"])' \
		"$T/site/kiln-manifest.json" "$1"
}

nassets=0
while IFS= read -r -d '' f; do
	f=${f#./}
	case $f in kiln-manifest.json | kiln.nginx.conf | *.gz.gz) continue ;; esac
	[ -e "$T/site/$f" ] || continue
	# a .gz/.br whose source exists is a sibling, not an asset
	case $f in *.gz | *.br) [ -e "$T/site/${f%.*}" ] && continue ;; esac
	nassets=$((nassets + 1))
	u=$(urlpath "$f")
	src=$T/site/$f
	get br "$u" -H 'Accept-Encoding: br'
	get gz "$u" -H 'Accept-Encoding: gzip'
	get id "$u"
	get both "$u" --compressed
	want_type=$(ctype "$f")
	for r in br gz id; do
		check "$f ($r): 200" grep -q '^HTTP/1.1 200' "$T/r/$r.hdr"
		check "$f ($r): Content-Type is the original's ($want_type)" [ "$(header $r Content-Type)" = "$want_type" ]
	done
	if [ -f "$src.br" ]; then
		check "$f: br request gets the .br bytes" cmp -s "$T/r/br.body" "$src.br"
		check "$f: Content-Encoding: br" [ "$(header br Content-Encoding)" = br ]
		check "$f: Vary on the br response" [ "$(header br Vary)" = Accept-Encoding ]
	else
		check "$f: br request gets the original (no .br)" cmp -s "$T/r/br.body" "$src"
		check "$f: br request not encoded by nginx" [ -z "$(header br Content-Encoding)" ]
	fi
	if [ -f "$src.gz" ]; then
		check "$f: gzip request gets the .gz bytes" cmp -s "$T/r/gz.body" "$src.gz"
		check "$f: Content-Encoding: gzip" [ "$(header gz Content-Encoding)" = gzip ]
		for r in gz id; do
			check "$f ($r): Vary wherever a .gz exists" [ "$(header $r Vary)" = Accept-Encoding ]
		done
		get h10 "$u" -0 -H 'Accept-Encoding: gzip'
		check "$f: HTTP/1.0 client gets the .gz" cmp -s "$T/r/h10.body" "$src.gz"
		get via "$u" -H 'Accept-Encoding: gzip' -H 'Via: 1.1 cdn.example'
		check "$f: proxied request (Via) gets the .gz" cmp -s "$T/r/via.body" "$src.gz"
	else
		check "$f: gzip request gets the original (no .gz)" cmp -s "$T/r/gz.body" "$src"
		check "$f: gzip request not encoded by nginx" [ -z "$(header gz Content-Encoding)" ]
	fi
	check "$f: no Accept-Encoding gets the original" cmp -s "$T/r/id.body" "$src"
	check "$f: identity has no Content-Encoding" [ -z "$(header id Content-Encoding)" ]
	check "$f: curl --compressed receives the source" cmp -s "$T/r/both.body" "$src"
	lm=$(header id Last-Modified)
	check "$f: Last-Modified same for every encoding" [ -n "$lm" ]
	check "$f: Last-Modified same for every encoding" [ "$(header gz Last-Modified)" = "$lm" ]
	check "$f: Last-Modified same for every encoding" [ "$(header br Last-Modified)" = "$lm" ]
	if [ -f "$src.gz" ] && [ -f "$src.br" ]; then
		check "$f: gzip and br ETags differ" [ "$(header gz ETag)" != "$(header br ETag)" ]
	fi
done < <(cd "$T/site" && find . -type f -print0 | sort -z)
check "every asset was requested" [ "$nassets" -eq "$(find "$FIXTURES/site" -type f | wc -l)" ]

# A glob with a newline and a directive cannot inject it through the
# snippet's header comment.
fresh_site "$T/evil"
chmod -R a+rX "$T/evil"
"$KILN" -q --exclude $'x\nautoindex on;' --exclude $'y;\n} server { listen 1;' "$T/evil"
write_conf "$T/t5" "$T/evil" 8 yes
check "a snippet made with hostile globs still passes nginx -t" nginx_test "$T/t5"
check "... and has only the expected directives" [ "$(grep -v '^#' "$T/evil/kiln.nginx.conf" | grep -c .)" -eq 7 ]
start_nginx "$T/n2" "$T/evil" || fail "nginx on the hostile snippet did not start"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/assets/")
check "no directory listing was injected (got $code)" [ "$code" = 403 -o "$code" = 404 ]

finish
