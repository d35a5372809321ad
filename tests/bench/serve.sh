#!/usr/bin/env bash
# serve.sh - what prebuilt siblings save a server: nginx on loopback serving
# one ~125 KB JSON-like asset to gzip-accepting clients, once compressing
# every response itself (gzip on; gzip_comp_level 6) and once with kiln's
# snippet and .gz sibling (gzip_static, gzip off).  Both are driven by wrk
# (HTTP/1.1, keep-alive, 50 connections, same duration).  Prints requests/s,
# transfer rate and the nginx worker's CPU seconds for each, and the ratios.
#
# A benchmark, not a test: it reports, it never fails on speed.
# usage: tests/bench/serve.sh [KILN_BINARY] [SECONDS]
# needs: nginx-light, wrk, curl (Debian packages).  Loopback is not a
# network: the figures compare server CPU per request, not link throughput.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KILN=${1:-$here/../../build/kiln}
DURATION=${2:-10}
NGINX=${NGINX:-/usr/sbin/nginx}
for t in "$NGINX" wrk curl; do
	command -v "$t" >/dev/null || { echo "serve.sh: $t is missing (apt-get install nginx-light wrk curl)" >&2; exit 2; }
done
[ -x "$KILN" ] || { echo "serve.sh: no kiln binary at $KILN (build it first)" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-serve.XXXXXX")
chmod 755 "$T"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT

# The asset: ~125 KB of JSON records, varied enough to compress like real data.
mkdir -p "$T/site"
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
}' >"$T/site/data.json"
size=$(stat -c %s "$T/site/data.json")
"$KILN" -q "$T/site"
chmod -R a+rX "$T/site"

conf() { # conf DIR PORT BODY
	cat >"$1/nginx.conf" <<CONF
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path $1/body;
    server {
        listen 127.0.0.1:$2;
        root $T/site;
        location / {
$3
        }
    }
}
CONF
}

# cpu_seconds PID...: user+system CPU seconds of the processes.
cpu_seconds() {
	local tck total=0 p
	tck=$(getconf CLK_TCK)
	for p in "$@"; do
		total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	awk -v t="$total" -v k="$tck" 'BEGIN { printf "%.2f", t / k }'
}

# run NAME DIRECTIVES: start nginx, warm up, measure; prints one result line.
run() {
	local name=$1 body=$2 dir=$T/$1 port master workers before after out rps tx enc
	mkdir -p "$dir"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 20000))
		conf "$dir" "$port" "$body"
		"$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" 2>/dev/null && break
	done
	for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
	master=$(cat "$dir/nginx.pid")
	pids+=("$master")
	sleep 0.3
	workers=$(pgrep -P "$master" | tr '\n' ' ')
	enc=$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/data.json" |
		tr -d '\r' | awk -F': ' 'tolower($1) == "content-encoding" {print $2}')
	wrk -t2 -c50 -d2s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/data.json" >/dev/null
	# shellcheck disable=SC2086
	before=$(cpu_seconds $workers)
	out=$(wrk -t2 -c50 -d"${DURATION}s" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/data.json")
	# shellcheck disable=SC2086
	after=$(cpu_seconds $workers)
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	tx=$(awk '/^Transfer\/sec:/ {print $2}' <<<"$out")
	kill "$master"
	printf '%s %s %s %s %s\n' "$name" "$rps" "$tx" "$(awk -v a="$before" -v b="$after" 'BEGIN {printf "%.2f", b - a}')" "${enc:-identity}"
}

dynamic=$(run dynamic '            gzip on; gzip_comp_level 6; gzip_types application/json; gzip_vary on;')
static=$(run kiln "            include $T/site/kiln.nginx.conf;")

echo "asset: data.json, $size bytes; .gz sibling $(stat -c %s "$T/site/data.json.gz") bytes (kiln, libdeflate -12)"
echo "wrk: 2 threads, 50 connections, ${DURATION} s, Accept-Encoding: gzip, loopback, $(nproc) cores shared with wrk"
printf '%-10s %12s %12s %16s %10s\n' config 'requests/s' transfer 'nginx CPU s' encoding
for line in "$dynamic" "$static"; do
	read -r n r t c e <<<"$line"
	printf '%-10s %12s %12s %16s %10s\n' "$n" "$r" "$t" "$c" "$e"
done
read -r _ r1 _ c1 _ <<<"$dynamic"
read -r _ r2 _ c2 _ <<<"$static"
awk -v r1="$r1" -v r2="$r2" -v c1="$c1" -v c2="$c2" -v d="$DURATION" 'BEGIN {
	printf "kiln / dynamic: %.2fx requests/s", r2 / r1;
	if (r1 > 0 && r2 > 0 && c1 > 0 && c2 > 0)
		printf "; nginx CPU per request %.1f us vs %.1f us: %.0fx less", 1e6 * c2 / (r2 * d), 1e6 * c1 / (r1 * d), (c1 / r1) / (c2 / r2);
	printf "\n";
}'
