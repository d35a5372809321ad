#!/usr/bin/env bash
# shards.sh - what --shard costs and buys: a cold tree split into N shards
# run one after another on this machine, against one run of the whole tree.
#
# usage: tests/bench/shards.sh TREE ROUNDS "N..." [kiln options...]
#   e.g. tests/bench/shards.sh /tmp/corpus 3 "1 4 16" --brotli
#
# For each N and each round: a fresh copy of TREE (no manifest, no cache),
# each shard timed on its own (every core, as on a machine of its own),
# then kiln merge.  Prints, per N, the median over the rounds of: the sum
# of the shards (the work on one machine), the slowest shard (what N
# machines would take, before transfers), the merge, and their ratios to
# N = 1.  Plain wall-clock timing (date +%s.%N); a figure, not a test.
set -euo pipefail
tree=${1:?usage: shards.sh TREE ROUNDS "N..." [kiln options]}
rounds=${2:?rounds}
ns=${3:?list of N}
shift 3
KILN=${KILN:-$(dirname "$0")/../../build/kiln}
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-shards.XXXXXX")
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

printf '%-4s %9s %9s %9s %9s %12s\n' N sum slowest merge sum/T1 "(slow+merge)/T1"
t1=
for n in $ns; do
	: >"$work/sum" ; : >"$work/max" ; : >"$work/merge"
	for r in $(seq "$rounds"); do
		rm -rf "$work/t" && cp -a "$tree" "$work/t"
		sync
		sum=0 max=0
		for k in $(seq "$n"); do
			a=$(now)
			if [ "$n" = 1 ]; then "$KILN" -q "$@" "$work/t"; else "$KILN" -q "$@" --shard "$k/$n" "$work/t"; fi
			d=$(echo "$(now) - $a" | bc -l)
			sum=$(echo "$sum + $d" | bc -l)
			max=$(echo "if ($d > $max) $d else $max" | bc -l)
		done
		m=0
		if [ "$n" != 1 ]; then
			a=$(now)
			"$KILN" merge -q "$work/t"
			m=$(echo "$(now) - $a" | bc -l)
		fi
		echo "$sum" >>"$work/sum"; echo "$max" >>"$work/max"; echo "$m" >>"$work/merge"
	done
	s=$(median <"$work/sum"); x=$(median <"$work/max"); m=$(median <"$work/merge")
	[ -n "$t1" ] || t1=$s
	printf '%-4s %8.2fs %8.2fs %8.2fs %9.2f %12.2f\n' "$n" "$s" "$x" "$m" \
		"$(echo "$s / $t1" | bc -l)" "$(echo "($x + $m) / $t1" | bc -l)"
done
