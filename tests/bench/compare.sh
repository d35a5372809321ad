#!/usr/bin/env bash
# compare.sh - kiln side by side with what people run today, on one tree, in
# one run, each on a fresh copy: kiln (gzip; gzip + brotli), xargs -P with
# gzip -9, libdeflate-gzip -12 and brotli -q 11, and the npm tools
# precompress and gzipper (pinned, installed into a cache directory).
# Prints wall and CPU seconds, peak RSS, bytes and sibling counts for each,
# kiln's ratios against each peer, and kiln's wall against the floor
# (max(sum of single-thread encodes / P, longest encode), from kiln_floor).
#
# A benchmark, not a test: it reports; it never fails on speed.
# usage: tests/bench/compare.sh [small|full|DIR] [RUNS]
# needs: gzip, libdeflate-tools, brotli, GNU time (Debian: time), npm
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${KILN_BUILD:-$top/build}
KILN=$BUILD/kiln
FLOOR=$BUILD/tests/kiln_floor
TREE=${1:-small}
RUNS=${2:-1}
P=$(nproc)
NPM_CACHE=${KILN_BENCH_NPM:-$HOME/.cache/kiln-bench-npm}
for t in "$KILN" "$FLOOR"; do [ -x "$t" ] || { echo "compare.sh: build first ($t missing)" >&2; exit 2; }; done
for t in gzip libdeflate-gzip brotli /usr/bin/time npm; do
	command -v "$t" >/dev/null || { echo "compare.sh: $t is missing" >&2; exit 2; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-compare.XXXXXX")
trap 'rm -rf "$T"' EXIT
if [ -d "$TREE" ]; then cp -a "$TREE" "$T/src"; else "$top/../shared/corpus/build.sh" "$T/src" "$TREE"; fi

# The npm peers, pinned.
mkdir -p "$NPM_CACHE"
[ -f "$NPM_CACHE/package.json" ] || echo '{"name":"kiln-bench","private":true}' >"$NPM_CACHE/package.json"
[ -x "$NPM_CACHE/node_modules/.bin/precompress" ] && [ -x "$NPM_CACHE/node_modules/.bin/gzipper" ] ||
	npm install --prefix "$NPM_CACHE" --save-exact --no-audit --no-fund precompress@12.0.7 gzipper@7.2.0 >&2

# The files a peer should compress: what kiln would consider (no media by
# extension, no tiny files), so every tool gets the same work.
list() { (cd "$1" && find . -type f -size +255c ! -iregex '.*\.\(jpe?g\|a?png\|gif\|webp\|avif\|heic\|heif\|jxl\|mp3\|mp4\|m4[av]\|mov\|webm\|mkv\|og[gav]\|opus\|flac\|aac\|3gp\|avi\|wmv\|flv\|swf\|mpe?g\|zip\|gz\|tgz\|bz2\|tbz\|xz\|zst\|br\|7z\|rar\|lz4\|lzma\|svgz\|woff2?\|jar\|apk\|epub\|docx\|xlsx\|pptx\|odt\|ods\|odp\)' -print0); }

declare -A WALL CPU RSS GZ BR N
run() { # run NAME COMMAND... (in the copy $T/w)
	local name=$1; shift
	rm -rf "$T/w" && cp -a "$T/src" "$T/w" && sync
	/usr/bin/time -f '%e %U %S %M' -o "$T/time" bash -c "cd '$T/w' && $*" >/dev/null 2>"$T/err" ||
		{ echo "compare.sh: $name failed:" >&2; cat "$T/err" >&2; return 1; }
	read -r w u s m <"$T/time"
	WALL[$name]=$w
	CPU[$name]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	RSS[$name]=$((m / 1024))
	GZ[$name]=$(find "$T/w" -name '*.gz' -newer "$T/time.start" -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	BR[$name]=$(find "$T/w" -name '*.br' -newer "$T/time.start" -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	N[$name]=$(find "$T/w" \( -name '*.gz' -o -name '*.br' \) -newer "$T/time.start" | wc -l)
}

echo "tree: $(find "$T/src" -type f | wc -l) files, $(du -sh "$T/src" | cut -f1); $P cores; $RUNS run(s) each, fresh copy every run"
floor_gz=$("$FLOOR" -j "$P" "$T/src" | awk '/^floor/ { print $2 }')
floor_all=$("$FLOOR" -j "$P" --brotli "$T/src" | awk '/^floor/ { print $2 }')
echo "floor (kiln_floor): gzip $floor_gz s, gzip+brotli $floor_all s"

X="xargs -0 -r -P$P -n 16"
for r in $(seq "$RUNS"); do
	touch "$T/time.start"; sleep 0.01
	run kiln-gzip "'$KILN' -q --no-manifest --no-nginx-conf ."
	run kiln-gzip+br "'$KILN' -q --brotli --no-manifest --no-nginx-conf ."
	run gzip-9 "$(declare -f list); list . | $X gzip -9 -k -n"
	run libdeflate-12 "$(declare -f list); list . | $X libdeflate-gzip -12 -k"
	run brotli-11 "$(declare -f list); list . | $X brotli -q 11 -k"
	run precompress "'$NPM_CACHE/node_modules/.bin/precompress' -s ."
	run gzipper "'$NPM_CACHE/node_modules/.bin/gzipper' compress --gzip --gzip-level 9 --brotli . ."
	printf '\n%-14s %8s %8s %8s %12s %12s %7s\n' tool wall cpu rss_MB gz_bytes br_bytes files
	for n in kiln-gzip kiln-gzip+br gzip-9 libdeflate-12 brotli-11 precompress gzipper; do
		printf '%-14s %8s %8s %8s %12s %12s %7s\n' "$n" "${WALL[$n]}" "${CPU[$n]}" "${RSS[$n]}" "${GZ[$n]}" "${BR[$n]}" "${N[$n]}"
	done
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
	echo
	echo "kiln gzip wall / libdeflate-gzip -12 wall: $(ratio "${WALL[kiln-gzip]}" "${WALL[libdeflate-12]}") (target <= 0.9); .gz bytes equal: $([ "${GZ[kiln-gzip]}" = "${GZ[libdeflate-12]}" ] && echo yes || echo no)"
	echo "kiln gzip+br wall / precompress wall: $(ratio "${WALL[kiln-gzip+br]}" "${WALL[precompress]}") (target <= 1)"
	echo "kiln .gz bytes / gzip -9 .gz bytes: $(ratio "${GZ[kiln-gzip]}" "${GZ[gzip-9]}") (target <= 0.96)"
	echo "kiln gzip+br wall / floor: $(ratio "${WALL[kiln-gzip+br]}" "$floor_all") (target <= 1.10)"
	echo "kiln gzip wall / floor: $(ratio "${WALL[kiln-gzip]}" "$floor_gz")"
done
