#!/usr/bin/env bash
# selftest.sh - the benchmark harness measures what it says: a short run of
# compare.sh on the example site (no npm peers), checked line by line, and a
# run where "libdeflate-gzip" is secretly gzip -9, which it must catch.
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
finish
