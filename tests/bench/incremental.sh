#!/usr/bin/env bash
# incremental.sh - what a re-run costs: on a real tree, time a cold run, an
# unchanged re-run, and a run on a fresh copy of the tree with a warm
# --cache (the CI case: dist/ rebuilt from scratch), and print the two
# ratios against the cold run.  Targets: both under 0.05.
#
# A benchmark, not a test: it reports, it never fails on speed.
# usage: tests/bench/incremental.sh [KILN_BINARY] [small|full|DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KILN=${1:-$here/../../build/kiln}
TREE=${2:-small}
RUNS=${3:-3}
OPTS=(--brotli -q)
[ -x "$KILN" ] || { echo "incremental.sh: no kiln binary at $KILN" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-incr.XXXXXX")
trap 'rm -rf "$T"' EXIT
if [ -d "$TREE" ]; then
	cp -a "$TREE" "$T/src"
else
	corpus=$(cd "$here/../../.." && pwd)/shared/corpus/build.sh
	[ -x "$corpus" ] || corpus=$here/../../../shared/corpus/build.sh
	"$corpus" "$T/src" "$TREE"
fi
echo "tree: $(find "$T/src" -type f | wc -l) files, $(du -sh "$T/src" | cut -f1); kiln ${OPTS[*]}; $(nproc) cores"

secs() { # secs COMMAND...: wall seconds of one run
	local t0 t1
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

printf '%-4s %10s %14s %14s %10s %10s\n' run cold unchanged warm-cache ratio1 ratio2
r1s=() r2s=()
for i in $(seq "$RUNS"); do
	rm -rf "$T/a" "$T/b" "$T/cache"
	cp -a "$T/src" "$T/a"
	sync
	cold=$(secs "$KILN" "${OPTS[@]}" --cache "$T/cache" "$T/a")
	again=$(secs "$KILN" "${OPTS[@]}" --cache "$T/cache" "$T/a")
	cp -a "$T/src" "$T/b"
	warm=$(secs "$KILN" "${OPTS[@]}" --cache "$T/cache" "$T/b")
	r1=$(awk -v a="$again" -v c="$cold" 'BEGIN { printf "%.4f", a / c }')
	r2=$(awk -v a="$warm" -v c="$cold" 'BEGIN { printf "%.4f", a / c }')
	r1s+=("$r1") r2s+=("$r2")
	printf '%-4s %10s %14s %14s %10s %10s\n' "$i" "$cold" "$again" "$warm" "$r1" "$r2"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
echo "unchanged re-run / cold: median $(median "${r1s[@]}") (range $(range "${r1s[@]}")), target < 0.05"
echo "fresh copy, warm cache / cold: median $(median "${r2s[@]}") (range $(range "${r2s[@]}")), target < 0.05"
