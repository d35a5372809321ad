#!/usr/bin/env bash
# selftest.sh - the benchmark harness measures what it says: a short run of
# compare.sh on the example site (no npm peers), checked line by line, and a
# run where "libdeflate-gzip" is secretly gzip -9, which it must catch; then
# serve.sh --quick (every row and client of both scenarios, one round of
# 1 s runs), checked line by line, and a run where kiln's snippet secretly
# compresses on the fly, which it must catch.
# A test of the harness, not of speed: no timing is asserted.
. "$(dirname "$0")/../e2e/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
export KILN_BUILD=${KILN_BUILD:?KILN_BUILD must name the build directory}
export KILN_BENCH_TOOLS="kiln-gzip kiln-gzip-j1 kiln-gzip+br kiln-gzip+br-j1 kiln-default gzip-9 libdeflate-12 brotli-11"

"$here/compare.sh" "$FIXTURES/site" 2 >"$T/out" 2>"$T/err"
check "compare.sh runs (exit $?: $(head -c 300 "$T/err"))" [ -s "$T/out" ]
check "compare.sh runs (exit $?: $(head -c 300 "$T/err"))" [ ! -s "$T/err" ]
# what a peer is given: files over 255 bytes without a media extension
peer_files() { (cd "$FIXTURES/site" && find . -type f -size +255c ! -name '*.png' ! -name '*.woff2' ! -name '*.gz'); }
want=$(peer_files | wc -l)
# what kiln writes there, counted on a run of its own
cp -a "$FIXTURES/site" "$T/k" && "$KILN" -q --brotli --no-manifest --no-nginx-conf "$T/k"
sibs() { find "$1" \( -name '*.gz' -o -name '*.br' \) | wc -l; }
kiln_sibs=$(($(sibs "$T/k") - $(sibs "$FIXTURES/site")))
row() { awk -v t="$1" -v r="$2" '/^run / { run = $2 + 0 } run == r && $1 == t' "$T/out"; }
for r in 1 2; do
	for t in $KILN_BENCH_TOOLS; do
		check "run $r: a row for $t" [ -n "$(row "$t" "$r")" ]
	done
	check "run $r: xargs gzip -9 wrote one .gz per candidate ($want)" [ "$(row gzip-9 "$r" | awk '{ print $7 }')" = "$want" ]
	check "run $r: brotli -q 11 wrote one .br per candidate" [ "$(row brotli-11 "$r" | awk '{ print $7 }')" = "$want" ]
	check "run $r: kiln gzip+brotli: as many siblings as kiln writes ($kiln_sibs)" [ "$(row kiln-gzip+br "$r" | awk '{ print $7 }')" = "$kiln_sibs" ]
	# the byte counts are the files' sizes, summed
	# (gzip -9 -n of each file, the names left out of the header as -n does)
	gz9=$(peer_files | while read -r f; do gzip -9 -n -c "$FIXTURES/site/$f"; done | wc -c)
	check "run $r: gzip -9 bytes are the sum of its .gz sizes ($gz9)" [ "$(row gzip-9 "$r" | awk '{ print $5 }')" = "$gz9" ]
done
check "kiln's .gz equal libdeflate-gzip -12's" grep -q 'identical .gz bytes: yes' "$T/out"
check "ratios are medians of 2 runs" grep -q 'kiln gzip wall / xargs libdeflate-gzip -12 wall: *[0-9.]* ([0-9.]*-[0-9.]*, 2 runs)' "$T/out"
check "a floor is measured" grep -Eq '^run 1: floor gzip [0-9.]+ s, gzip\+brotli [0-9.]+ s' "$T/out"

# A peer that is not what it claims: caught.
mkdir -p "$T/bin"
printf '#!/bin/sh\nshift\nexec gzip -9 -n "$@"\n' >"$T/bin/libdeflate-gzip"
chmod +x "$T/bin/libdeflate-gzip"
KILN_BENCH_TOOLS="kiln-gzip libdeflate-12" PATH="$T/bin:$PATH" "$here/compare.sh" "$FIXTURES/site" 1 >"$T/out2" 2>&1
check "a different encoder behind libdeflate-gzip is caught" grep -q 'identical .gz bytes: NO' "$T/out2"

# serve.sh: nginx with each configuration, wrk, a report per scenario and client
# (and kiln serve's row, when this kiln has it).
KILN_SERVE_ROW=
"$KILN" serve --listen 127.0.0.1:0 "$T/none" 2>&1 | grep -q 'built without' || KILN_SERVE_ROW=1
"$here/serve.sh" --quick "$KILN" >"$T/serve" 2>"$T/serve.err"
check "serve.sh --quick runs (exit $?: $(head -c 300 "$T/serve.err"))" [ ! -s "$T/serve.err" ]
# serve_row SCENARIO CLIENT ROW: that row's coding, B/resp, requests/s,
# p50, p95, p99, nginx us per request (the fields around "(min-max)").
serve_row() {
	awk -v s="$1" -v c="$2" -v r="$3" '
		/^scenario / { sc = $2; sub(/:$/, "", sc) }
		/^client / { cl = $2; sub(/,$/, "", cl) }
		sc == s && cl == c && $1 == r {
			for (i = 2; i <= NF; i++)
				if ($i ~ /^\([0-9]+-[0-9]+\)$/)
					print $(i - 3), $(i - 2), $(i - 1), $(i + 1), $(i + 2), $(i + 3), $(i + 4)
		}' "$T/serve"
}
# sane CODING...: the row's coding is one of them, and its figures are numbers in order
sane() {
	local enc bpr rps p50 p95 p99 us want ok=1
	read -r enc bpr rps p50 p95 p99 us <<<"$ROW"
	for want; do [ "$enc" = "$want" ] && ok=0; done
	[ "$ok" = 0 ] && awk -v b="$bpr" -v r="$rps" -v a="$p50" -v c="$p95" -v d="$p99" -v u="$us" \
		'BEGIN { exit !(b > 0 && r > 0 && a > 0 && a <= c && c <= d && u >= 0) }'
}
check "serve.sh: the machine is stated" grep -Eq '^machine: [0-9]+ cores, .*share these cores' "$T/serve"
check "serve.sh: 1 run of 1 s per row" grep -q '^client gzip, 1 run of 1 s per row' "$T/serve"
for sc in single page; do
	case $sc in
	single) gz=gzip all=gzip best="br zstd" ;;
	page) gz=gzip:6,id:1 all=gzip:6,id:1 best=br:5,zstd:1,id:1 ;;
	esac
	for r in 1 2 3 4 5; do
		ROW=$(serve_row "$sc" gzip "$r")
		check "serve.sh $sc, gzip client, row $r: $gz, figures in order ($ROW)" sane "$gz"
	done
	ROW=$(serve_row "$sc" chromium 1)
	check "serve.sh $sc, chromium client, dynamic row: $all ($ROW)" sane "$all"
	for r in 2 3; do
		ROW=$(serve_row "$sc" chromium "$r")
		# shellcheck disable=SC2086 # best: the codings allowed
		check "serve.sh $sc, chromium client, row $r: the smallest sibling ($ROW)" sane $best
	done
	check "serve.sh $sc: no gzip_static row for the chromium client" [ -z "$(serve_row "$sc" chromium 4)$(serve_row "$sc" chromium 5)" ]
	if [ -n "$KILN_SERVE_ROW" ]; then
		ROW=$(serve_row "$sc" gzip 6)
		check "serve.sh $sc, gzip client, kiln serve row: $gz, figures in order ($ROW)" sane "$gz"
		ROW=$(serve_row "$sc" chromium 6)
		# shellcheck disable=SC2086 # best: the codings allowed
		check "serve.sh $sc, chromium client, kiln serve row: the smallest sibling ($ROW)" sane $best
	fi
	# the static form's rows (its tree has no .zst: br wherever zstd won)
	case $sc in single) sbest=br ;; page) sbest=br:6,id:1 ;; esac
	for r in 7 8; do
		ROW=$(serve_row "$sc" gzip "$r")
		check "serve.sh $sc, gzip client, static form row $r: $gz, figures in order ($ROW)" sane "$gz"
		ROW=$(serve_row "$sc" chromium "$r")
		check "serve.sh $sc, chromium client, static form row $r: $sbest ($ROW)" sane "$sbest"
	done
done
# (rows 2 and 3 against 1 and each other for both clients of both
# scenarios, against gzip_static for the gzip client only)
# and the static form's against the negotiating one's and gzip_static's;
# each line ends with the CPU ratio of each round)
pairs=("2 / row 1:4" "3 / row 2:4" "2 / row 4:2" "3 / row 5:2" "7 / row 2:4" "8 / row 3:4" "7 / row 4:2" "8 / row 5:2")
[ -z "$KILN_SERVE_ROW" ] || pairs+=("6 / row 1:4" "6 / row 3:4" "6 / row 5:2" "6 / row 8:4")
for pair in "${pairs[@]}"; do
	check "serve.sh: ratio row ${pair%:*}, ${pair#*:} times" \
		[ "$(grep -cE "^  row ${pair%:*} +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9.]+$" "$T/serve")" = "${pair#*:}" ]
done
check "serve.sh: no wrk errors" not grep -Eq 'socket errors|timeouts|non-2xx' "$T/serve"

# A snippet that compresses on the fly instead of sending the siblings: caught.
# shellcheck disable=SC2016 # the wrapper's own $@ and $d
printf '#!/bin/sh\n"%s" "$@" || exit\nfor d; do :; done\necho "gzip on; gzip_types application/json;" >"$d/kiln.nginx.conf"\n' \
	"$KILN" >"$T/bin/kiln"
chmod +x "$T/bin/kiln"
SERVE_KILN=0 SERVE_SCENARIOS=single "$here/serve.sh" --quick "$T/bin/kiln" >"$T/serve2" 2>&1
check "serve.sh: a snippet compressing on the fly fails the run (exit $?)" [ $? -ne 0 ]
check "... named: not the .gz sibling" grep -q 'row 2, client gzip, /data.json: the body is not single/data.json.gz' "$T/serve2"
check "... before any measurement" not grep -q '^client ' "$T/serve2"
finish
