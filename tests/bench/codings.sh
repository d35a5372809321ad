#!/usr/bin/env bash
# codings.sh - kiln's bytes per coding against the tools that make the same
# coding, over the same files, and the time of --best against the floor of
# the same encoders.
#
# usage: tests/bench/codings.sh KILN TREE [--time]
#
# For each coding, kiln runs with that coding alone on a fresh copy of TREE;
# for every source that got a sibling, the peer tool encodes the same source
# and the totals are compared:
#   gzip  kiln --zopfli          vs libdeflate-gzip -12, and zopfli (15 iterations)
#   zstd  kiln --no-gzip --zstd  vs zstd -19
#   br    kiln --no-gzip --brotli vs brotli -q 11
# It also counts files where kiln's .gz is larger than libdeflate-gzip -12's
# (there must be none).  With --time, it times `kiln --best` (cold, then
# warm with a --cache on another fresh copy) and the single-thread floor of
# the same encoders (kiln_floor), on all cores.  It prints figures; it never
# fails on a number (it fails only if a tool is missing or a run fails).
set -euo pipefail
KILN=${1:?usage: codings.sh KILN TREE [--time]}
TREE=${2:?usage: codings.sh KILN TREE [--time]}
TIME=${3:-}
FLOOR=${KILN_FLOOR:-$(dirname "$KILN")/tests/kiln_floor}
for t in libdeflate-gzip zopfli zstd brotli; do
	command -v "$t" >/dev/null || { echo "codings.sh: $t is not installed" >&2; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/kiln-codings.XXXXXX")
trap 'rm -rf "$W"' EXIT
P=$(nproc)

size() { stat -c %s "$1"; }

# siblings DIR SUFFIX: the files kiln added to a copy of TREE (NUL-ended)
siblings() {
	local f
	while IFS= read -r -d '' f; do
		[ -e "$TREE/${f#"$1"/}" ] || printf '%s\0' "$f"
	done < <(find "$1" -type f -name "*$2" -print0)
}

# run NAME OPTIONS...: kiln on a fresh copy of TREE in $W/NAME
run() {
	local name=$1; shift
	rm -rf "$W/$name" && cp -a "$TREE" "$W/$name"
	"$KILN" -q --no-nginx-conf "$@" "$W/$name"
}

# compare CODING SUFFIX PEER-NAME PEER-COMMAND...: totals over kiln's siblings
# (PEER-COMMAND gets each source's path as its last argument)
compare() {
	local dir=$1 suffix=$2 peer=$3; shift 3
	local k=0 p=0 n=0 s src
	while IFS= read -r -d '' s; do
		src=${s%"$suffix"}
		k=$((k + $(size "$s")))
		p=$((p + $("$@" "$src" | wc -c)))  # given the file, as people run them
		n=$((n + 1))
	done < <(siblings "$dir" "$suffix")
	awk -v n="$n" -v k="$k" -v p="$p" -v peer="$peer" -v sfx="$suffix" \
		'BEGIN { printf "%-5s %6d files  kiln %12d  %-24s %12d  kiln/peer %.4f\n", sfx, n, k, peer, p, k / p }'
}

echo "tree: $(find "$TREE" -type f | wc -l) files, $(du -sh "$TREE" | cut -f1); $P cores"

run gz --zopfli --zopfli-iterations 15
compare "$W/gz" .gz "libdeflate-gzip -12" libdeflate-gzip -12 -c
compare "$W/gz" .gz "zopfli --i15" zopfli --i15 -c
larger=0
while IFS= read -r -d '' s; do
	[ "$(size "$s")" -le "$(libdeflate-gzip -12 -c <"${s%.gz}" | wc -c)" ] || larger=$((larger + 1))
done < <(siblings "$W/gz" .gz)
echo ".gz   files where kiln --zopfli is larger than libdeflate-gzip -12: $larger"

run zst --no-gzip --zstd
compare "$W/zst" .zst "zstd -19" zstd -q -19 -c

run br --no-gzip --brotli
compare "$W/br" .br "brotli -q 11" brotli -q 11 -c

if [ "$TIME" = --time ]; then
	rm -rf "$W/b1" "$W/b2" "$W/cache"
	cp -a "$TREE" "$W/b1"
	cp -a "$TREE" "$W/b2"
	t0=$(date +%s.%N)
	"$KILN" -q --best --cache "$W/cache" "$W/b1"
	t1=$(date +%s.%N)
	"$KILN" -q --best --cache "$W/cache" "$W/b2"
	t2=$(date +%s.%N)
	floor=$("$FLOOR" -j "$P" --brotli --zstd --zopfli "$TREE" | awk '$1 == "floor" { print $2 }')
	awk -v c="$(echo "$t1 - $t0" | bc)" -v w="$(echo "$t2 - $t1" | bc)" -v f="$floor" \
		'BEGIN { printf "--best cold %.1f s, floor %.1f s, cold/floor %.3f; warm cache %.2f s, warm/cold %.4f\n", c, f, c / f, w, w / c }'
fi
