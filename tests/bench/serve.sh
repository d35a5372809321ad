#!/usr/bin/env bash
# serve.sh - what prebuilt siblings save a server, measured as
# ../shared/BENCHMARKING.md asks.  nginx on 127.0.0.1 serves, in five
# configurations (the rows):
#   1 dynamic      gzip on; gzip_comp_level 6 (nginx compresses every
#                  response; to a client that takes br or zstd it can only
#                  send gzip)
#   2 kiln         kiln's snippet (kiln --brotli --zstd; kiln.nginx.conf in
#                  the location, kiln.nginx.http.conf in http {}, as the
#                  README shows)
#   3 kiln+ofc     the same with open_file_cache max=1000 inactive=60s;
#                  open_file_cache_valid 60s; open_file_cache_errors on
#                  (caches the snippet's three -f tests and the open)
#   4 gzip_static  nginx's own gzip_static on, the simplest prebuilt
#                  serving (gzip client only: it knows no other coding)
#   5 gzip_static+ofc  the same with row 3's open_file_cache lines, so the
#                  snippet is also compared with gzip_static when both
#                  cache their file lookups (gzip client only)
#   6 kiln serve   `kiln serve --threads 1` on the same tree (no nginx: the
#                  manifest is the configuration), when this kiln has it;
#                  its CPU is the whole process's, all threads
#                  (SERVE_KILN=0 leaves the row out)
#   7 kiln static  the snippet's static form: a copy of the tree run with
#                  kiln --brotli --nginx-brotli-static (no .zst: gzip_static
#                  and brotli_static choose), nginx with the brotli_static
#                  module loaded (this row and the next alone), when
#                  libnginx-mod-http-brotli-static is installed
#   8 kiln static+ofc  the same with row 3's open_file_cache lines
# (SERVE_ROWS: the rows to run, default all of them.)
# to two clients: "gzip" (Accept-Encoding: gzip) and "chromium"
# (Accept-Encoding: gzip, deflate, br, zstd), in two scenarios:
#   single  one ~125 KB JSON asset, one URL
#   page    the page of tests/e2e/serve_tree.sh and what it loads (HTML,
#           two stylesheets, three scripts, a PNG: 7 URLs, in turn)
#
# Protocol: every row is checked with curl first (status, Content-Encoding,
# the body byte for byte: the prebuilt rows send the sibling file, the
# dynamic row's body gunzips to the source); a wrong answer stops the
# benchmark.  Then one warm-up run per row (discarded: fills the page
# cache, nginx's open_file_cache, the worker's allocations), then RUNS
# rounds in which every row runs once for each client, interleaved (12345
# 123 12345 123 ...).  The servers stay up across rounds: the measured
# state is warm (page cache and open_file_cache filled), the same for every
# row.  Each run: wrk (HTTP/1.1 keep-alive) for SECONDS; the nginx worker's
# user+system CPU from /proc/PID/stat before and after; what the rest of
# the machine used meanwhile (from /proc/stat, less nginx's CPU and wrk's
# own).  Reported per row: median requests/s with min-max, median
# p50/p95/p99 latency, nginx CPU per request, bytes per response (headers
# included, as wrk counts them); and ratios, each the median over rounds of
# that round's ratio, with min-max.
#
# A benchmark, not a test: it reports; it never fails on speed (it fails
# only when the harness cannot run or a row does not serve what it claims).
#
# usage: tests/bench/serve.sh [--quick] [KILN_BINARY] [SECONDS] [RUNS]
#   defaults: build/kiln, 10 s per run, 5 runs; --quick: 1 s, 1 run, no
#   warm-up (a check of the harness for tests/bench/selftest.sh, under a
#   minute, not a measurement)
#   env: SERVE_WARMUP (seconds, default 3, at most SECONDS; 0: none),
#        SERVE_SCENARIOS ("single page"), SERVE_CONNECTIONS (50),
#        SERVE_THREADS (2), SERVE_ROWS ("1 2 3 4 5 6 7 8"), NGINX
#        (/usr/sbin/nginx), BROTLI_MODULE (Debian's
#        ngx_http_brotli_static_module.so)
# needs: nginx-light, wrk, curl, python3 (Debian packages).
# Loopback is not a network, and wrk shares the cores with nginx: the
# figures compare server CPU per request, not what a link carries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
QUICK=
if [ "${1:-}" = --quick ]; then QUICK=1; shift; fi
KILN=${1:-$here/../../build/kiln}
DURATION=${2:-${QUICK:+1}}
DURATION=${DURATION:-10}
RUNS=${3:-${QUICK:+1}}
RUNS=${RUNS:-5}
WARMUP=${SERVE_WARMUP:-${QUICK:+0}}
WARMUP=${WARMUP:-3}
SCENARIOS=${SERVE_SCENARIOS:-single page}
CONNECTIONS=${SERVE_CONNECTIONS:-50}
THREADS=${SERVE_THREADS:-2}
NGINX=${NGINX:-/usr/sbin/nginx}
for n in "$DURATION" "$RUNS" "$CONNECTIONS" "$THREADS" "${WARMUP}1"; do
	case $n in '' | *[!0-9]* | 0) echo "serve.sh: SECONDS, RUNS and the SERVE_* counts must be whole numbers (all but SERVE_WARMUP positive)" >&2; exit 2 ;; esac
done
[ "$WARMUP" -le "$DURATION" ] || WARMUP=$DURATION
for t in "$NGINX" wrk curl python3; do
	command -v "$t" >/dev/null || { echo "serve.sh: $t is missing (apt-get install nginx-light wrk curl python3)" >&2; exit 2; }
done
[ -e /etc/nginx/mime.types ] || { echo "serve.sh: /etc/nginx/mime.types is missing (apt-get install nginx-light)" >&2; exit 2; }
[ -x "$KILN" ] || { echo "serve.sh: no kiln binary at $KILN (build it first)" >&2; exit 2; }
for s in $SCENARIOS; do
	case $s in single | page) ;; *) echo "serve.sh: unknown scenario $s (single, page)" >&2; exit 2 ;; esac
done

T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-serve.XXXXXX")
chmod 755 "$T"
masters=()
stop_all() {
	local p
	for p in "${masters[@]}"; do kill "$p" 2>/dev/null || true; done
	masters=()
}
trap 'stop_all; [ -n "${SERVE_KEEP:-}" ] || rm -rf "$T"' EXIT
die() { echo "serve.sh: $*" >&2; exit 1; }

BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
ROWS=
for r in ${SERVE_ROWS:-1 2 3 4 5 6 7 8}; do
	case $r in
	[1-5]) ;;
	6) if [ "${SERVE_KILN:-1}" = 0 ] || "$KILN" serve --listen 127.0.0.1:0 "$T/none" 2>&1 | grep -q 'built without'; then continue; fi ;;
	7 | 8) [ -e "$BROTLI_MODULE" ] || { echo "serve.sh: no $BROTLI_MODULE (libnginx-mod-http-brotli-static): rows 7 and 8 left out" >&2; continue; } ;;
	*) echo "serve.sh: SERVE_ROWS: rows are 1 to 8, not $r" >&2; exit 2 ;;
	esac
	ROWS="$ROWS $r"
done
[ -n "$ROWS" ] || { echo "serve.sh: no row to run" >&2; exit 2; }
row_name() { case $1 in 1) echo dynamic ;; 2) echo kiln ;; 3) echo kiln+ofc ;; 4) echo gzip_static ;; 5) echo gzip_static+ofc ;; 6) echo "kiln serve" ;; 7) echo "kiln static" ;; 8) echo "kiln static+ofc" ;; esac; }
# tree_of SCENARIO ROW: the tree the row serves
tree_of() { case $2 in 7 | 8) echo "$T/$1-static" ;; *) echo "$T/$1" ;; esac; }
CLIENTS="gzip chromium"
declare -A AE=([gzip]='gzip' [chromium]='gzip, deflate, br, zstd')
client_ae() { echo "${AE[$1]}"; }
# Rows 4 and 5 only for the gzip client: gzip_static knows no other coding.
has_row() { [ "$2" != 4 ] && [ "$2" != 5 ] || [ "$1" = gzip ]; }

# --- the trees --------------------------------------------------------------
# single: ~125 KB of JSON records, varied enough to compress like real data.
mkdir -p "$T/single"
awk 'BEGIN {
	srand(42); printf "[";
	for (i = 0; i < 975; i++) {
		printf "%s{\"id\":%d,\"sku\":\"SKU-%06d\",\"name\":\"Item %d %s\",\"price\":%.2f,\"stock\":%d,\"tags\":[\"%s\",\"%s\"],\"active\":%s}",
			(i ? "," : ""), i, int(rand() * 999999), i,
			(rand() < 0.5 ? "stoneware mug" : "porcelain bowl"), rand() * 200, int(rand() * 500),
			(rand() < 0.5 ? "kitchen" : "studio"), (rand() < 0.5 ? "glazed" : "raw"),
			(rand() < 0.8 ? "true" : "false");
	}
	printf "]\n";
}' >"$T/single/data.json"
# page: the serving tests' page (index.html) and every asset it loads.
bash "$here/../e2e/serve_tree.sh" "$T/page" || die "serve_tree.sh failed"
for s in single page; do
	# the static form's tree: the same sources, .gz and .br, no .zst
	cp -a "$T/$s" "$T/$s-static"
	"$KILN" -q --brotli --zstd "$T/$s" || die "kiln --brotli --zstd failed on the $s tree"
	"$KILN" -q --brotli --nginx-brotli-static "$T/$s-static" || die "kiln --nginx-brotli-static failed on the $s tree"
done
chmod -R a+rX "$T/single" "$T/page" "$T/single-static" "$T/page-static"
# URL paths per scenario, and the file each one names.
urls() {
	case $1 in
	single) echo /data.json ;;
	page) echo / /assets/index-B2x9_kQ1.css /docs/caf%C3%A9-%C3%BC.css /img/logo.png /settings.js /assets/vendor-Dq4x_Z8k.js /assets/app.3f9a2c7b.js ;;
	esac
}
file_of() { # file_of SCENARIO URL
	case $2 in
	/) echo "$T/$1/index.html" ;;
	*) printf '%s/%s%b\n' "$T" "$1" "$(printf '%s' "$2" | sed 's/%\([0-9A-F][0-9A-F]\)/\\x\1/g')" ;;
	esac
}

# --- nginx, one server per row ----------------------------------------------
OFC='open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s; open_file_cache_errors on;'
row_body() { # row_body ROW TREE: the directives of the location / {}
	case $1 in
	1) echo 'gzip on; gzip_comp_level 6; gzip_vary on; gzip_types text/css application/javascript application/json;' ;;
	2 | 7) echo "include $2/kiln.nginx.conf;" ;;
	3 | 8) echo "$OFC include $2/kiln.nginx.conf;" ;;
	4) echo 'gzip_static on; gzip_vary on;' ;;
	5) echo "$OFC gzip_static on; gzip_vary on;" ;;
	esac
}
conf() { # conf DIR PORT ROW TREE
	local http= main=
	case $3 in 2 | 3 | 7 | 8) http="include $4/kiln.nginx.http.conf;" ;; esac
	case $3 in 7 | 8) main="load_module $BROTLI_MODULE;" ;; esac
	cat >"$1/nginx.conf" <<CONF
$main
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path $1/body;
    $http
    server {
        listen 127.0.0.1:$2;
        root $4;
        location / {
            $(row_body "$3" "$4")
        }
    }
}
CONF
}
# children PID: the processes whose parent is PID (nginx's workers).
children() {
	local f st
	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null <"$f" || continue
		read -ra st <<<"${st##*) }" # state ppid ...
		if [ "${st[1]}" = "$1" ]; then f=${f#/proc/}; echo "${f%/stat}"; fi
	done
}
declare -A PORT WORKERS
start_row() { # start_row SCENARIO ROW
	local dir=$T/nginx-$1-$2 port master=""
	mkdir -p "$dir"
	if [ "$2" = 6 ]; then # kiln serve: its own process is the worker
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			port=$((20000 + RANDOM % 20000))
			"$KILN" serve -q --threads 1 --listen "127.0.0.1:$port" "$T/$1" 2>>"$dir/start.log" &
			master=$!
			for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
			if kill -0 "$master" 2>/dev/null; then masters+=("$master"); break; fi
			master=""
		done
		[ -n "$master" ] || { cat "$dir/start.log" >&2; die "kiln serve did not start"; }
		WORKERS[$1-$2]=$master
		PORT[$1-$2]=$port
		return
	fi
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 20000))
		conf "$dir" "$port" "$2" "$(tree_of "$1" "$2")"
		rm -f "$dir/nginx.pid" "$dir/error.log"
		"$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" 2>>"$dir/start.log" || continue
		for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
		master=$(cat "$dir/nginx.pid")
		masters+=("$master")
		break
	done
	[ -n "$master" ] || { cat "$dir/start.log" "$dir/error.log" >&2; die "nginx did not start for row $2"; }
	for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port$(urls "$1" | cut -d' ' -f1)" && break; sleep 0.1; done
	WORKERS[$1-$2]=$(children "$master" | tr '\n' ' ')
	[ -n "${WORKERS[$1-$2]// /}" ] || die "no nginx worker under $master"
	PORT[$1-$2]=$port
}

# --- what each row must send ------------------------------------------------
# fetch_row SCENARIO ROW CLIENT: every URL once, with one curl: the bodies
# in $T/got/SCENARIO-ROW-CLIENT.N, status and Content-Encoding in .heads.
fetch_row() {
	local s=$1 r=$2 c=$3 u i=0 args=() base=$T/got/$1-$2-$3
	mkdir -p "$T/got"
	for u in $(urls "$s"); do
		i=$((i + 1))
		args+=(-o "$base.$i" "http://127.0.0.1:${PORT[$s-$r]}$u")
	done
	curl -s -H "Accept-Encoding: $(client_ae "$c")" -w '%{http_code} %header{content-encoding}\n' \
		"${args[@]}" >"$base.heads" || die "row $r ($(row_name "$r")), client $c: curl failed"
}
# check_rows SCENARIO: what fetch_row got is what each row claims to send:
# HTTP 200; from the dynamic row, gzip exactly when kiln made a .gz (the
# media types gzip_types lists), the body decoding to the file; from the
# snippet, the smallest sibling whose coding the client accepts, byte for
# byte; from gzip_static, the .gz byte for byte; else the file itself.
# Appends to rows.tsv the codings each row sent ("gzip", or how many URLs
# got each: "br:5,zstd:1,id:1") and the summed body bytes; stops the
# benchmark on any difference.
check_rows() {
	local s=$1 u rows="" c r pairs=()
	for c in $CLIENTS; do
		for r in $ROWS; do if has_row "$c" "$r"; then rows="$rows $r:$c"; fi; done
	done
	for u in $(urls "$s"); do pairs+=("$u" "$(file_of "$s" "$u")"); done
	python3 - "$T" "$s" "$rows" "${pairs[@]}" <<'PY' >>"$T/rows.tsv"
import os, sys, zlib

top, scen, rows, pairs = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
urls = list(zip(pairs[0::2], pairs[1::2]))
suffix = {"gzip": ".gz", "br": ".br", "zstd": ".zst"}
accepts = {"gzip": ["gzip"], "chromium": ["gzip", "br", "zstd"]}
bad = 0
for rc in rows:
    row, client = rc.split(":")
    base = os.path.join(top, "got", "%s-%s-%s" % (scen, row, client))
    heads = open(base + ".heads").read().splitlines()
    counts, total = {}, 0
    if len(heads) != len(urls):
        sys.exit("serve.sh: row %s, client %s: %d answers for %d URLs" % (row, client, len(heads), len(urls)))
    for i, ((url, path), head) in enumerate(zip(urls, heads), 1):
        what = "row %s, client %s, %s" % (row, client, url)
        code, _, enc = head.partition(" ")
        enc = enc.strip() or "identity"
        body = open("%s.%d" % (base, i), "rb").read()
        if row in ("7", "8"):  # the static form's tree, beside the other
            tree = os.path.join(top, scen)
            path = tree + "-static" + path[len(tree):]
        source = open(path, "rb").read()
        have = {c: path + x for c, x in suffix.items() if os.path.exists(path + x)}
        if row == "1":
            want = ("gzip", None) if "gzip" in have else ("identity", path)
        elif row in ("4", "5"):
            want = ("gzip", have["gzip"]) if "gzip" in have else ("identity", path)
        else:
            ok = [c for c in accepts[client] if c in have]
            best = min(ok, key=lambda c: os.path.getsize(have[c])) if ok else None
            want = (best, have[best]) if best else ("identity", path)
        if code != "200":
            print("serve.sh: %s: HTTP %s" % (what, code), file=sys.stderr); bad = 1
        elif enc != want[0]:
            print("serve.sh: %s: Content-Encoding %s, expected %s" % (what, enc, want[0]), file=sys.stderr); bad = 1
        elif want[1] is None:
            try:
                same = zlib.decompress(body, 16 + zlib.MAX_WBITS) == source
            except zlib.error:
                same = False
            if not same:
                print("serve.sh: %s: the gzip body does not decode to the file" % what, file=sys.stderr); bad = 1
        elif body != open(want[1], "rb").read():
            print("serve.sh: %s: the body is not %s" % (what, os.path.relpath(want[1], top)), file=sys.stderr); bad = 1
        total += len(body)
        counts[enc] = counts.get(enc, 0) + 1
    if len(urls) == 1:
        codings = enc
    else:
        codings = ",".join("%s:%d" % ("id" if c == "identity" else c, counts[c])
                           for c in ("gzip", "br", "zstd", "identity") if c in counts)
    print("%s\t%s\t%s\t%s\t%d" % (scen, client, row, codings, total))
sys.exit(bad)
PY
}

# --- one wrk run ----------------------------------------------------------------
cat >"$T/report.lua" <<'LUA'
-- the figures of a run, in one line, from wrk's own merged statistics
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("KILN-RUN %d %d %d %d %d %d %d %d %d\n",
		summary.requests, summary.duration, summary.bytes,
		latency:percentile(50), latency:percentile(95), latency:percentile(99),
		e.connect + e.read + e.write, e.timeout, e.status))
end
LUA
# the page: each connection asks for the URLs given after "--", in turn
cat "$T/report.lua" >"$T/page.lua"
cat >>"$T/page.lua" <<'LUA'
local reqs, n, i = {}, 0, 0
init = function(args)
	for _, p in ipairs(args) do n = n + 1; reqs[n] = wrk.format(nil, p) end
end
request = function()
	i = i % n + 1
	return reqs[i]
end
LUA
# The counters read around a run, without starting a process (under load,
# every fork costs): TICKS, the user+system CPU clock ticks of the given
# processes (fields 14 and 15 of /proc/PID/stat); BUSY and STEAL, the
# machine's busy (user nice system irq softirq) and steal ticks (/proc/stat);
# WAITED, the CPU ticks of this shell's waited-for children (fields 16 and
# 17 of its /proc/PID/stat): around wrk run from this shell, wrk's own CPU.
ticks() {
	local p st
	TICKS=0
	for p in "$@"; do
		read -r st <"/proc/$p/stat"
		read -ra st <<<"${st##*) }" # from field 3, state, on
		TICKS=$((TICKS + st[11] + st[12]))
	done
}
machine() {
	local user nice system irq softirq steal
	read -r _ user nice system _ _ irq softirq steal _ </proc/stat
	BUSY=$((user + nice + system + irq + softirq)) STEAL=$steal
}
waited() {
	local st
	read -r st <"/proc/$$/stat"
	read -ra st <<<"${st##*) }"
	WAITED=$((st[13] + st[14]))
}

# wrk_run SCENARIO ROW CLIENT SECONDS: one run from this shell (not a
# subshell: see waited); its figures in RUN: wrk's requests, duration (us),
# bytes, p50/p95/p99 latency (us), socket errors, timeouts (10 s, so even
# the dynamic row's slowest answers are counted as latencies), non-2xx/3xx
# answers, then the nginx worker's CPU ticks, wrk's, the machine's busy and
# steal ticks, and the wall time (us) between the readings.
wrk_run() {
	local s=$1 r=$2 c=$3 d=$4 script=$T/report.lua url args=() n0 m0 st0 w0 t0 t1 tag rest fig=""
	url=http://127.0.0.1:${PORT[$s-$r]}
	if [ "$s" = page ]; then
		script=$T/page.lua
		read -ra args <<<"$(urls "$s")"
		args=(-- "${args[@]}")
	else
		url=$url$(urls "$s")
	fi
	# shellcheck disable=SC2086 # WORKERS: pids
	ticks ${WORKERS[$s-$r]}; machine; waited
	n0=$TICKS m0=$BUSY st0=$STEAL w0=$WAITED t0=${EPOCHREALTIME//[.,]/}
	wrk -t"$THREADS" -c"$CONNECTIONS" -d"${d}s" --timeout 10s --latency -s "$script" \
		-H "Accept-Encoding: ${AE[$c]}" "$url" "${args[@]}" >"$T/wrk.out" 2>&1 ||
		{ cat "$T/wrk.out" >&2; die "wrk failed (row $r, client $c)"; }
	t1=${EPOCHREALTIME//[.,]/}
	waited; machine
	# shellcheck disable=SC2086 # WORKERS: pids
	ticks ${WORKERS[$s-$r]}
	while read -r tag rest; do [ "$tag" = KILN-RUN ] && fig=$rest; done <"$T/wrk.out"
	[ -n "$fig" ] || { cat "$T/wrk.out" >&2; die "wrk printed no figures (row $r, client $c)"; }
	RUN="$fig $((TICKS - n0)) $((WAITED - w0)) $((BUSY - m0)) $((STEAL - st0)) $((10#$t1 - 10#$t0))"
}

# --- the machine -------------------------------------------------------------------
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
nginx_version=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
wrk_version=$({ wrk -v 2>&1 || true; } | awk 'NR == 1 { print $2 }')
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "machine: $(nproc) cores, ${cpu_model:-unknown CPU}, $(uname -sr); wrk and nginx share these cores, and so does whatever else runs"
echo "servers: $nginx_version, worker_processes 1, sendfile on, access_log off, on 127.0.0.1 (loopback is not a network)"
echo "load: wrk $wrk_version, HTTP/1.1 keep-alive, $THREADS threads, $CONNECTIONS connections, $DURATION s per run, $RUNS run$([ "$RUNS" = 1 ] || echo s) per row, interleaved, $([ "$WARMUP" -gt 0 ] && echo "after one $WARMUP s warm-up run per row" || echo "no warm-up run"); page cache warm (the trees were just written)"
echo "clients: gzip = 'Accept-Encoding: $(client_ae gzip)'; chromium = 'Accept-Encoding: $(client_ae chromium)'"
echo "load average at start: $load_start"

: >"$T/runs.tsv"
: >"$T/rows.tsv"
for s in $SCENARIOS; do
	for r in $ROWS; do start_row "$s" "$r"; done
	# check every row, then warm it up
	for c in $CLIENTS; do
		for r in $ROWS; do if has_row "$c" "$r"; then fetch_row "$s" "$r" "$c"; fi; done
	done
	check_rows "$s" || die "a row does not send what it claims (above)"
	case " $ROWS " in
	*" 7 "* | *" 8 "*) grep -q '^brotli_static on;' "$T/$s-static/kiln.nginx.conf" ||
		die "the $s-static tree's snippet is not the static form (rows 7 and 8)" ;;
	esac
	if [ "$WARMUP" -gt 0 ]; then
		for c in $CLIENTS; do
			for r in $ROWS; do if has_row "$c" "$r"; then wrk_run "$s" "$r" "$c" "$WARMUP"; fi; done
		done
	fi
	for round in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			for r in $ROWS; do
				has_row "$c" "$r" || continue
				wrk_run "$s" "$r" "$c" "$DURATION"
				# shellcheck disable=SC2086 # RUN: numbers, split into columns
				{ printf '%s\t%s\t%s\t%s' "$s" "$c" "$r" "$round"; printf '\t%s' $RUN; printf '\n'; } >>"$T/runs.tsv"
			done
		done
	done
	# nothing went wrong inside nginx
	for r in $ROWS; do
		[ -e "$T/nginx-$s-$r/error.log" ] || continue # kiln serve: no error log
		if grep -q '\[\(error\|crit\|alert\|emerg\)\]' "$T/nginx-$s-$r/error.log"; then
			grep -m 5 '\[\(error\|crit\|alert\|emerg\)\]' "$T/nginx-$s-$r/error.log" >&2
			die "nginx logged errors for row $r ($(row_name "$r")) in the $s scenario"
		fi
	done
	stop_all
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- the report -----------------------------------------------------------------------
ls_siblings() { # ls_siblings FILE: "NAME N B; .gz N B, ..."
	local f=$1 out x
	out="$(basename "$f") $(stat -c %s "$f") B"
	for x in gz br zst; do [ -e "$f.$x" ] && out="$out, .$x $(stat -c %s "$f.$x")"; done
	echo "$out"
}
for s in $SCENARIOS; do
	{
		printf 'scenario %s: ' "$s"
		if [ "$s" = single ]; then
			ls_siblings "$T/single/data.json"
		else
			echo "$(urls page | wc -w) URLs in turn on each connection (the page and what it loads)"
			for u in $(urls page); do printf '  %s: %s\n' "$u" "$(ls_siblings "$(file_of page "$u")")"; done
		fi
	} >>"$T/scenarios.txt"
done
python3 - "$T/rows.tsv" "$T/runs.tsv" "$T/scenarios.txt" "$(getconf CLK_TCK)" "$DURATION" <<'PY'
import statistics, sys

rows_file, runs_file, scen_file, hz, duration = sys.argv[1:6]
hz = float(hz)
names = {"1": "1 dynamic gzip 6", "2": "2 kiln snippet", "3": "3 kiln + open_file_cache", "4": "4 gzip_static",
         "5": "5 gzip_static + open_file_cache", "6": "6 kiln serve", "7": "7 kiln static snippet",
         "8": "8 kiln static + open_file_cache"}
info = {}
for line in open(rows_file):
    s, c, r, enc, body = line.rstrip("\n").split("\t")
    info[s, c, r] = (enc, int(body))
runs = {}
for line in open(runs_file):
    f = line.rstrip("\n").split("\t")
    s, c, r, rnd = f[:4]
    (req, dur_us, nbytes, p50, p95, p99, sockerr, timeouts, staterr,
     nticks, wticks, mbusy, msteal, wall_us) = map(int, f[4:18])
    sec, wall = dur_us / 1e6, wall_us / 1e6
    runs.setdefault((s, c, r), {})[int(rnd)] = dict(
        rps=req / sec, p50=p50 / 1e3, p95=p95 / 1e3, p99=p99 / 1e3,
        cpu=(nticks / hz) * 1e6 / req if req else float("nan"), busy=nticks / hz / sec,
        bpr=nbytes / req if req else 0, sockerr=sockerr, timeouts=timeouts, staterr=staterr,
        others=max(0.0, (mbusy - nticks - wticks) / hz / wall), steal=msteal / hz / wall)

med = statistics.median
def spread(v, fmt):
    return "%s (%s-%s)" % (fmt % med(v), fmt % min(v), fmt % max(v))

scen_text, cur = {}, None
for line in open(scen_file).read().splitlines():
    if line.startswith("scenario "):
        cur = line.split()[1].rstrip(":")
    scen_text.setdefault(cur, []).append(line)
for s in dict.fromkeys(k[0] for k in runs):
    print()
    print("\n".join(scen_text[s]))
    others = [x["others"] for k, v in runs.items() if k[0] == s for x in v.values()]
    steal = [x["steal"] for k, v in runs.items() if k[0] == s for x in v.values()]
    print("other processes (not nginx, not wrk) during the runs: median %.2f cores (max %.2f); steal median %.2f cores"
          % (med(others), max(others), med(steal)))
    for c in dict.fromkeys(k[1] for k in runs if k[0] == s):
        rows = [r for r in "12345678" if (s, c, r) in runs]
        n = len(runs[s, c, rows[0]])
        print()
        print("client %s, %d run%s of %s s per row (medians; min-max for requests/s)" % (c, n, "s" * (n > 1), duration))
        fmt = "%-32s %-17s %6s %20s %7s %7s %7s %8s %6s"
        print(fmt % ("row", "coding", "B/resp", "requests/s", "p50 ms", "p95 ms", "p99 ms", "server us", "server"))
        print(fmt % ("", "", "", "", "", "", "", "per req", "cores"))
        for r in rows:
            v = list(runs[s, c, r].values())
            err = ", ".join("%d %s" % (sum(x[k] for x in v), what) for k, what in
                            (("sockerr", "socket errors"), ("timeouts", "timeouts"), ("staterr", "non-2xx/3xx"))
                            if sum(x[k] for x in v))
            print("%-32s %-17s %6.0f %20s %7.2f %7.2f %7.2f %8.1f %6.2f%s" % (
                names[r], info[s, c, r][0], med([x["bpr"] for x in v]),
                spread([x["rps"] for x in v], "%.0f"),
                med([x["p50"] for x in v]), med([x["p95"] for x in v]), med([x["p99"] for x in v]),
                med([x["cpu"] for x in v]), med([x["busy"] for x in v]),
                ("  (%s)" % err) if err else ""))
        def r3(x):
            return "%.1f" % x if x >= 10 else "%.2f" % x if x >= 1 else "%.3f" % x
        def per_round(a, b, what):
            ra, rb = runs[s, c, a], runs[s, c, b]
            return [ra[i][what] / rb[i][what] for i in sorted(ra)
                    if i in rb and rb[i][what] and ra[i][what] == ra[i][what]]
        def ratio(a, b, what):
            v = per_round(a, b, what)
            return "%s (%s-%s)" % (r3(med(v)), r3(min(v)), r3(max(v))) if v else "-"
        print("%-51s %-22s %-22s %s" % ("ratios, each the median of the %d rounds' (min-max)" % n if n > 1 else "ratios (1 round)",
                                        "requests/s", "server CPU per request", "CPU per request, each round"))
        pairs = [(r, "1") for r in rows[1:] if "1" in rows] + [
            p for p in (("3", "2"), ("2", "4"), ("3", "5"), ("6", "3"), ("6", "5"), ("7", "2"), ("8", "3"),
                        ("7", "4"), ("8", "5"), ("6", "8"))
            if p[0] in rows and p[1] in rows]
        for a, b in pairs:
            print("  %-50s %-22s %-22s %s" % ("row %s / row %s" % (a, b), ratio(a, b, "rps"), ratio(a, b, "cpu"),
                                             " ".join(r3(x) for x in per_round(a, b, "cpu"))))
PY
