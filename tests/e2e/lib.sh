# lib.sh - shared helpers for kiln's end-to-end tests (sourced, bash).
#
# Every test gets KILN (the binary), FIXTURES (the fixtures directory) and a
# scratch directory $T removed on success.  Checks count failures and go on,
# so one run shows every broken behaviour; finish() sets the exit status.
set -u
KILN=${KILN:?KILN must name the kiln binary}
FIXTURES=${FIXTURES:?FIXTURES must name the fixtures directory}
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-e2e.XXXXXX")
chmod 755 "$T"
failures=0
checks=0

fail() { failures=$((failures + 1)); printf 'FAIL: %s\n' "$*" >&2; }
not() { ! "$@"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1; shift
	checks=$((checks + 1))
	"$@" || fail "$what"
}
# must DESCRIPTION LOG COMMAND...: a check the rest of the test depends on:
# if COMMAND fails, show the end of LOG (a file, or /dev/null) and stop.
must() {
	local what=$1 log=$2
	shift 2
	if "$@"; then
		check "$what" true
	else
		check "$what" false
		[ -f "$log" ] && tail -n 40 "$log" >&2
		finish
		exit 1
	fi
}
finish() {
	printf '%s: %d checks, %d failed\n' "${0##*/}" "$checks" "$failures" >&2
	if [ "$failures" -eq 0 ]; then rm -rf "$T"; else echo "kept $T" >&2; fi
	[ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
}

# mtime_of FILE: FILE's mtime, seconds and nanoseconds, cut to the
# resolution of the times the kiln under test sets (KILN_MTIME_RESOLUTION_NS:
# 1 for the native kiln, 1000 for the WebAssembly one, whose Node.js sets
# times to the microsecond): a sibling's is its source's.
mtime_of() {
	stat -c %.9Y -- "$1" | awk -v r="${KILN_MTIME_RESOLUTION_NS:-1}" \
		'{ split($1, t, "."); printf "%s.%09d\n", t[1], int(t[2] / r) * r }'
}

# non_utf8_names: whether the kiln under test takes file names that are not
# UTF-8, as Linux allows.  KILN_UTF8_NAMES=1 says it does not (the
# WebAssembly kiln: Node.js names files with strings); it then refuses such
# a name, naming it escaped, with the reason NOT_UTF8.
NOT_UTF8="Invalid or incomplete multibyte or wide character"
non_utf8_names() { [ -z "${KILN_UTF8_NAMES:-}" ]; }

# A fresh copy of the example site.
fresh_site() { # fresh_site DEST
	cp -a "$FIXTURES/site" "$1"
}

# decodes_to SIBLING SOURCE: the sibling decodes (GNU gzip or the brotli
# tool, not kiln's own decoders) to exactly the source's bytes.
decodes_to() {
	case $1 in
	*.gz) gzip -dc -- "$1" | cmp -s - "$2" ;;
	*.br) brotli -dc -- "$1" | cmp -s - "$2" ;;
	*) return 1 ;;
	esac
}

# Every source file (not a .gz/.br) with its sha256, sorted: a fingerprint of
# the sources to compare before and after a run.
sources_digest() { # sources_digest DIR
	(cd "$1" && find . -type f ! -name '*.gz' ! -name '*.br' ! -name kiln-manifest.json ! -name .kiln-manifest.json.index ! -name 'kiln.*.conf' ! -name '.kiln-journal-*' ! -name '.kiln-*.tmp' -print0 | sort -z |
		xargs -0 sha256sum)
	# downloads/archive.tar.gz is a source too
	(cd "$1" && find . -type f -name 'archive.tar.gz' -print0 | sort -z | xargs -0 -r sha256sum)
}

# Every file under DIR with its sha256, sorted; but the index beside the
# manifest, which records inodes and ctimes (lib/index.h): two trees kiln
# made alike differ there, and only there.
tree_digest() {
	(cd "$1" && find . -type f ! -name .kiln-manifest.json.index -print0 | sort -z | xargs -0 -r sha256sum)
}

# all_siblings_decode DIR [--skip-orphans]: every .gz/.br under DIR (but a
# download named archive.tar.gz) decodes, with audit.py's decoders (Python's
# zlib and brotli, in one process: some suites check hundreds of runs), to
# exactly its source's bytes.  A sibling without a source fails, unless
# --skip-orphans.
all_siblings_decode() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "${BASH_SOURCE[0]}")" /usr/bin/python3 - "$@" <<'EOF'
import os, sys
import audit
skip_orphans = "--skip-orphans" in sys.argv[2:]
bad = 0
for top, _, names in os.walk(sys.argv[1]):
    for n in names:
        p = os.path.join(top, n)
        if not n.endswith((".gz", ".br")) or n == "archive.tar.gz":
            continue
        if skip_orphans and not os.path.exists(p[:-3]):
            continue
        try:
            ok = audit.decode("gzip" if n.endswith(".gz") else "br", audit.read(p)) == audit.read(p[:-3])
        except Exception:
            ok = False
        if not ok:
            print(f"bad sibling: {p}", file=sys.stderr)
            bad = 1
sys.exit(bad)
EOF
}

# ---- nginx, for the tests that serve a tree (one instance at a time) ----
#
# nginx_conf DIR ROOT PORT: DIR/nginx.conf, an nginx of the test's own
# (pid, logs and temporary files in DIR) serving ROOT on 127.0.0.1:PORT
# with kiln's snippets: ROOT/kiln.nginx.http.conf at the http level and
# ROOT/kiln.nginx.conf in location /.  Each request is logged to
# DIR/access.log in the format "kiln" that browser.py and serve_check.py
# read.  What a test changes, it sets before the call:
#   NGINX_MAIN    lines at the top (load_module ...)
#   NGINX_HTTP    http-level lines instead of the snippet's include
#   NGINX_SERVER  server-level lines instead of the location / block
#   NGINX_LOG     a log_format string instead of kiln's
NGINX=${NGINX:-/usr/sbin/nginx}
NGINX_KILN_LOG='KILN method="$request_method" uri="$request_uri" status=$status ce="$sent_http_content_encoding" ae="$http_accept_encoding"'
NGINX_PID=
nginx_conf() {
	local d=$1 root=$2 port=$3
	local http=${NGINX_HTTP-"include $root/kiln.nginx.http.conf;"}
	local server=${NGINX_SERVER-"location / { include $root/kiln.nginx.conf; }"}
	local log=${NGINX_LOG:-$NGINX_KILN_LOG}
	mkdir -p "$d"
	cat >"$d/nginx.conf" <<CONF
${NGINX_MAIN:-}
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format kiln '$log';
    access_log $d/access.log kiln;
    client_body_temp_path $d/body;
    $http
    server {
        listen 127.0.0.1:$port;
        root $root;
$server
    }
}
CONF
}

# nginx_start DIR ROOT: stop the one running, then start nginx_conf's on a
# free port (ten tries); sets PORT, NGINX_PID and LOG (the access log).
# Returns 1, with nginx's messages on stderr, when it cannot.
nginx_start() {
	local d=$1 root=$2 try size
	nginx_stop
	for try in 1 2 3 4 5 6 7 8 9 10; do
		PORT=$((20000 + RANDOM % 20000))
		nginx_conf "$d" "$root" "$PORT"
		rm -f "$d/nginx.pid"
		# A try that fails (the port taken) leaves its [emerg] line in
		# start.log, not in the error log the tests read.
		size=$(stat -c %s "$d/error.log" 2>/dev/null || echo 0)
		if ! "$NGINX" -p "$d" -e "$d/error.log" -c "$d/nginx.conf" 2>>"$d/start.log"; then
			tail -c +$((size + 1)) "$d/error.log" >>"$d/start.log" 2>/dev/null
			truncate -s "$size" "$d/error.log" 2>/dev/null
			continue
		fi
		for _ in $(seq 50); do [ -s "$d/nginx.pid" ] && break; sleep 0.1; done
		NGINX_PID=$(cat "$d/nginx.pid")
		LOG=$d/access.log
		for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0; sleep 0.1; done
		nginx_stop
	done
	echo "$(basename "$0"): could not start nginx" >&2
	cat "$d/error.log" "$d/start.log" >&2
	return 1
}

# nginx_stop: stop what nginx_start started, and wait until it is gone.
nginx_stop() {
	local p=$NGINX_PID
	NGINX_PID=
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
}

# nginx_conf_aside DIR NAME CMD...: run CMD, which writes DIR/nginx.conf
# (nginx_conf for the next release), and keep what it wrote as DIR/NAME,
# DIR/nginx.conf staying the one nginx runs with.
nginx_conf_aside() {
	local d=$1 name=$2
	shift 2
	cp "$d/nginx.conf" "$d/nginx.live.conf" && "$@" && mv "$d/nginx.conf" "$d/$name" &&
		mv "$d/nginx.live.conf" "$d/nginx.conf"
}

# nginx_switch_script OUT DIR CONF URL PATTERN: write to OUT a script
# (for browser_dcz.py's --switch) that stops nginx_start's nginx in DIR,
# starts it again on the same port with the configuration CONF, and waits
# until URL's body holds PATTERN.  The next release, served mid-visit.
nginx_switch_script() {
	local out=$1 d=$2 conf=$3 url=$4 pattern=$5
	cat >"$out" <<SW
#!/bin/sh
kill $NGINX_PID || exit 1
for i in \$(seq 50); do kill -0 $NGINX_PID 2>/dev/null || break; sleep 0.1; done
cp "$conf" "$d/nginx.conf" || exit 1
"$NGINX" -p "$d" -e "$d/error.log" -c "$d/nginx.conf" || exit 1
for i in \$(seq 50); do
	curl -s "$url" | grep -q "$pattern" && exit 0
	sleep 0.1
done
exit 1
SW
}

# serve_to_chromium NAME DIR: DIR (a bundler's output, after kiln) served
# by nginx_start's nginx with kiln's snippets (config and logs in $T/NAME),
# then checked as checks of the caller's: serve_check.py asks every asset
# with every Accept-Encoding case (the smallest accepted sibling, its
# Content-Encoding, the body decoded back to the source, Vary,
# Cache-Control, 304s, kiln's own files never sent); browser.py loads the
# page in headless Chromium, whose script must write "kiln-ran-OK" into
# #out, and checks from nginx's log that every script and stylesheet came
# as the right sibling, then that a second visit and a reload take the
# immutable assets from the browser's cache and get a 304 for the page;
# nginx logs no error (but for the favicon.ico Chromium asks for).  Stops
# nginx after.
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logged() { # logged FILE COMMAND...: COMMAND's output into FILE, its FAIL lines shown when it fails
	local out=$1
	shift
	"$@" >"$out" 2>&1 && return 0
	grep -m 30 FAIL "$out" >&2
	return 1
}
serve_to_chromium() {
	local name=$1 dir=$2 need
	for need in "$NGINX" /etc/nginx/mime.types "${CHROMIUM:-/usr/bin/chromium}"; do
		[ -e "$need" ] || { fail "$name: $need is missing (install nginx-light, libnginx-mod-http-brotli-static and chromium)"; return 1; }
	done
	chmod -R a+rX "$dir"
	nginx_start "$T/$name" "$dir" ||
		{ fail "$name: nginx starts with kiln's snippets"; return 1; }
	check "$name: nginx serves every asset, every Accept-Encoding, as its siblings (serve_check.py)" \
		logged "$T/$name/serve_check.out" /usr/bin/python3 "$E2E_DIR/serve_check.py" --base "http://127.0.0.1:$PORT/" --tree "$dir"
	check "$name: Chromium renders the page, gets each script and stylesheet as the right sibling, then cache hits and 304s" \
		logged "$T/$name/browser.out" timeout 120 /usr/bin/python3 "$E2E_DIR/browser.py" --url "http://127.0.0.1:$PORT/" --tree "$dir" --log "$LOG" \
		--log-format nginx --out "$T/$name/browser.json" --chromium "${CHROMIUM:-/usr/bin/chromium}"
	tail -n 1 "$T/$name/serve_check.out" "$T/$name/browser.out" 2>/dev/null | grep -v '^==> \|^$' >&2
	check "$name: nginx logged no error" nginx_no_errors "$T/$name/error.log"
	nginx_stop
}

# nginx_no_errors LOG: true when nginx's error log LOG holds no error
# (but for the favicon.ico Chromium asks for, which no tree here has);
# otherwise the errors go to stderr.
nginx_no_errors() {
	local errors
	errors=$(grep -v 'favicon\.ico' "$1" | grep '\[\(error\|crit\|alert\|emerg\)\]')
	[ -z "$errors" ] && return 0
	printf '%s\n' "$errors" | head -n 5 >&2
	return 1
}

# kiln serve, started and stopped here like nginx above.
#   kiln_serve_start DIR [OPTIONS...]: stop the one running, then start
#   `kiln serve OPTIONS DIR` on a free port (ten tries) with an access log;
#   sets PORT, SERVE_PID, LOG (the access log) and SERVE_ERR (its stderr).
#   Returns 1, with its messages on stderr, when it cannot.
SERVE_PID=
kiln_serve_start() {
	local dir=$1 try
	shift
	kiln_serve_stop
	for try in 1 2 3 4 5 6 7 8 9 10; do
		PORT=$((20000 + RANDOM % 20000))
		LOG=$T/serve-$PORT.log
		SERVE_ERR=$T/serve-$PORT.err
		"$KILN" serve --listen "127.0.0.1:$PORT" --access-log "$LOG" "$@" "$dir" 2>"$SERVE_ERR" &
		SERVE_PID=$!
		for _ in $(seq 50); do
			grep -q '^kiln: serving' "$SERVE_ERR" 2>/dev/null && return 0
			kill -0 "$SERVE_PID" 2>/dev/null || break
			sleep 0.1
		done
		kiln_serve_stop
	done
	echo "$(basename "$0"): could not start kiln serve" >&2
	cat "$SERVE_ERR" >&2
	return 1
}

# kiln_serve_stop: SIGTERM what kiln_serve_start started and wait for it;
# sets SERVE_STATUS to its exit status (empty when none was running).
kiln_serve_stop() {
	local p=$SERVE_PID
	SERVE_PID=
	SERVE_STATUS=
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	wait "$p"
	SERVE_STATUS=$?
}
