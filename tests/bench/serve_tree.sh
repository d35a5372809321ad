#!/usr/bin/env bash
# serve_tree.sh - a real tree through every server: kiln writes the siblings
# and the three snippets on a copy of TREE, then nginx, Caddy and Apache
# (Debian's, started here on 127.0.0.1, configurations as README.md's
# "Serving" gives them) each serve it, and tests/e2e/serve_check.py fetches
# every asset with identity, Chromium's Accept-Encoding and each coding on
# its own (all of its cases for a sample of SAMPLE assets), decodes every
# body and checks the headers.  Twice: with gzip, br and zstd (where .zst is
# kept only when smaller than the .br, so few are), then with gzip and zstd
# alone, so that every asset with siblings is also fetched as zstd.
#
# usage: tests/bench/serve_tree.sh KILN TREE [SAMPLE]
# It reports per server and pass; it exits 1 if any check failed.
set -uo pipefail
KILN=$(realpath "${1:?usage: serve_tree.sh KILN TREE [SAMPLE]}")
TREE=${2:?usage: serve_tree.sh KILN TREE [SAMPLE]}
SAMPLE=${3:-50}
E2E=$(cd "$(dirname "$0")/../e2e" && pwd)
PY=/usr/bin/python3
MODS=/usr/lib/apache2/modules
for t in /usr/sbin/nginx /usr/bin/caddy /usr/sbin/apache2 curl; do
	command -v "$t" >/dev/null || { echo "serve_tree.sh: $t is missing (nginx-light, caddy, apache2, curl)" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/kiln-serve-tree.XXXXXX")
chmod 755 "$W"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.3; rm -rf "$W"' EXIT
failed=0

port() { echo $((20000 + RANDOM % 20000)); }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done; return 1; }

start_nginx() { # ROOT DIR
	local root=$1 d=$2
	mkdir -p "$d"
	PORT=$(port)
	cat >"$d/nginx.conf" <<CONF
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path $d/body;
    include $root/kiln.nginx.http.conf;
    server {
        listen 127.0.0.1:$PORT;
        root $root;
        location / {
            include $root/kiln.nginx.conf;
        }
    }
}
CONF
	/usr/sbin/nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf" || return 1
	for _ in $(seq 50); do [ -s "$d/nginx.pid" ] && break; sleep 0.1; done
	pids+=("$(cat "$d/nginx.pid")")
	wait_up "$PORT"
}

start_caddy() { # ROOT DIR
	local root=$1 d=$2
	mkdir -p "$d"
	PORT=$(port)
	cat >"$d/Caddyfile" <<CONF
{
	admin off
	auto_https off
	storage file_system $d/storage
}
http://127.0.0.1:$PORT {
	root * $root
	import $root/kiln.caddy.conf
}
CONF
	HOME=$d XDG_DATA_HOME=$d XDG_CONFIG_HOME=$d caddy run --config "$d/Caddyfile" --adapter caddyfile >"$d/caddy.log" 2>&1 &
	pids+=("$!")
	wait_up "$PORT"
}

start_apache() { # ROOT DIR
	local root=$1 d=$2 user=
	mkdir -p "$d"
	PORT=$(port)
	[ "$(id -u)" = 0 ] && user=$'User nobody\nGroup nogroup'
	cat >"$d/httpd.conf" <<CONF
ServerRoot "$d"
DefaultRuntimeDir "$d"
PidFile "$d/httpd.pid"
ErrorLog "$d/error.log"
Listen 127.0.0.1:$PORT
ServerName 127.0.0.1
$user
LoadModule mpm_event_module $MODS/mod_mpm_event.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule mime_module $MODS/mod_mime.so
LoadModule rewrite_module $MODS/mod_rewrite.so
LoadModule headers_module $MODS/mod_headers.so
LoadModule setenvif_module $MODS/mod_setenvif.so
LoadModule dir_module $MODS/mod_dir.so
Include /etc/apache2/mods-available/mime.conf
TypesConfig /etc/mime.types
DirectoryIndex index.html
DocumentRoot "$root"
<Directory "$root">
    Require all granted
    Include "$root/kiln.apache.conf"
</Directory>
CONF
	/usr/sbin/apache2 -f "$d/httpd.conf" -k start || return 1
	for _ in $(seq 50); do [ -s "$d/httpd.pid" ] && break; sleep 0.1; done
	pids+=("$(cat "$d/httpd.pid")")
	wait_up "$PORT"
}

for pass in "--brotli --zstd" "--no-brotli --zstd"; do
	name=$(echo "$pass" | tr -d ' -')
	S=$W/$name
	cp -a "$TREE" "$S"
	"$KILN" -q $pass --server nginx,caddy,apache "$S" || { echo "kiln $pass failed" >&2; failed=1; continue; }
	[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$S"
	chmod -R a+rX "$S"
	nz=$(find "$S" -name '*.zst' | wc -l)
	nb=$(find "$S" -name '*.br' | wc -l)
	ng=$(find "$S" -name '*.gz' | wc -l)
	echo "kiln $pass: $(find "$TREE" -type f | wc -l) files; siblings: $ng .gz, $nb .br, $nz .zst"
	for server in nginx caddy apache; do
		if ! "start_$server" "$S" "$W/$name-$server"; then
			echo "$server: did not start" >&2
			failed=1
			continue
		fi
		out=$W/$name-$server.out
		$PY "$E2E/serve_check.py" --base "http://127.0.0.1:$PORT/" --tree "$S" --sample "$SAMPLE" >"$out" 2>&1
		rc=$?
		# Caddy 2.6 sends no Content-Length beside Content-Encoding (Go's
		# ServeContent), so its HEADs of siblings have none: README.md,
		# "Caddy".  Every other failure counts.
		other=$(grep '^FAIL' "$out" | grep -v -c 'HEAD: Content-Length None, the GET body has')
		head=$(grep -c 'HEAD: Content-Length None, the GET body has' "$out")
		echo "$server: $(tail -n 1 "$out"); other than Caddy's HEAD Content-Length: $other failures"
		[ "$server" = caddy ] && echo "  (caddy: $head HEADs of siblings without Content-Length)"
		if [ "$other" -ne 0 ] || { [ "$rc" -ne 0 ] && [ "$server" != caddy ]; }; then
			grep '^FAIL' "$out" | grep -v 'HEAD: Content-Length None' | head -n 10 >&2
			failed=1
		fi
		kill "${pids[-1]}" 2>/dev/null
		sleep 0.5
	done
done
exit $failed
