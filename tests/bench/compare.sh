#!/usr/bin/env bash
# compare.sh - kiln side by side with what people run today, on one tree, in
# one run, each on a fresh copy: kiln (gzip and gzip + brotli, on all cores
# and on one; gzip with the manifest and snippet), xargs -P with gzip -9,
# libdeflate-gzip -12 and brotli -q 11, and the npm tools precompress and
# gzipper (pinned, installed into a cache directory).  Prints, per run, wall and CPU seconds, peak RSS, bytes and
# sibling counts for each; then, over all runs, the median and range of
# kiln's ratios against each peer and against the floor
# (max(sum of single-thread encodes / P, longest encode), from kiln_floor).
#
# A benchmark, not a test: it reports; it never fails on speed (it fails only
# when a tool fails or the harness cannot run).
#
# usage: tests/bench/compare.sh [small|full|DIR] [RUNS]
#   env: KILN_BUILD (default build), KILN_BENCH_NPM (npm cache directory),
#        KILN_BENCH_TOOLS (names to run; default all), FLOOR_REPEATS (1)
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
ALL="kiln-gzip kiln-gzip-j1 kiln-gzip+br kiln-gzip+br-j1 kiln-default gzip-9 libdeflate-12 brotli-11 precompress gzipper"
TOOLS=${KILN_BENCH_TOOLS:-$ALL}
for t in "$KILN" "$FLOOR"; do [ -x "$t" ] || { echo "compare.sh: build first ($t missing)" >&2; exit 2; }; done
want() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }
need="gzip libdeflate-gzip brotli /usr/bin/time sha256sum"
if want precompress || want gzipper || ! [ -d "$TREE" ]; then need="$need npm"; fi
for t in $need; do
	command -v "$t" >/dev/null || { echo "compare.sh: $t is missing" >&2; exit 2; }
done
case $RUNS in '' | *[!0-9]* | 0) echo "compare.sh: RUNS must be a positive number" >&2; exit 2 ;; esac

T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-compare.XXXXXX")
trap 'rm -rf "$T"' EXIT
if [ -d "$TREE" ]; then cp -a "$TREE" "$T/src"; else "$top/../shared/corpus/build.sh" "$T/src" "$TREE"; fi

# The npm peers, pinned (the newest releases that run on Debian 12's Node 18
# and Node 20: precompress 13 and gzipper 8 need Node 22).
if want precompress || want gzipper; then
	mkdir -p "$NPM_CACHE"
	[ -f "$NPM_CACHE/package.json" ] || echo '{"name":"kiln-bench","private":true}' >"$NPM_CACHE/package.json"
	[ -x "$NPM_CACHE/node_modules/.bin/precompress" ] && [ -x "$NPM_CACHE/node_modules/.bin/gzipper" ] ||
		npm install --prefix "$NPM_CACHE" --save-exact --no-audit --no-fund precompress@12.0.7 gzipper@7.2.0 >&2
fi

# The files a peer should compress: what kiln would consider (no media by
# extension, no tiny files), so every tool gets the same work.
list() { (cd "$1" && find . -type f -size +255c ! -iregex '.*\.\(jpe?g\|a?png\|gif\|webp\|avif\|heic\|heif\|jxl\|mp3\|mp4\|m4[av]\|mov\|webm\|mkv\|og[gav]\|opus\|flac\|aac\|3gp\|avi\|wmv\|flv\|swf\|mpe?g\|zip\|gz\|tgz\|bz2\|tbz\|xz\|zst\|br\|7z\|rar\|lz4\|lzma\|svgz\|woff2?\|jar\|apk\|epub\|docx\|xlsx\|pptx\|odt\|ods\|odp\)' -print0); }
# Siblings a run made: .gz/.br files in the copy that the source tree lacks.
siblings() { (cd "$1" && find . -type f \( -name '*.gz' -o -name '*.br' \) | LC_ALL=C sort); }
siblings "$T/src" >"$T/before"

declare -A WALL CPU RSS GZ BR N GZSUM
run() { # run NAME RUN# COMMAND... (in a fresh copy $T/w)
	local name=$1 r=$2 k="$1,$2"; shift 2
	rm -rf "$T/w" && cp -a "$T/src" "$T/w" && sync
	/usr/bin/time -f '%e %U %S %M' -o "$T/time" bash -c "cd '$T/w' && $*" >/dev/null 2>"$T/err" ||
		{ echo "compare.sh: $name failed:" >&2; cat "$T/err" >&2; exit 1; }
	read -r w u s m <"$T/time"
	WALL[$k]=$w
	CPU[$k]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	RSS[$k]=$((m / 1024))
	siblings "$T/w" | LC_ALL=C comm -23 - "$T/before" >"$T/new"
	N[$k]=$(wc -l <"$T/new")
	GZ[$k]=$( (cd "$T/w" && awk '/\.gz$/' "$T/new" | tr '\n' '\0' | xargs -0 -r stat -c %s) | awk '{ s += $1 } END { print s + 0 }')
	BR[$k]=$( (cd "$T/w" && awk '/\.br$/' "$T/new" | tr '\n' '\0' | xargs -0 -r stat -c %s) | awk '{ s += $1 } END { print s + 0 }')
	# every new .gz with its digest, to compare bytes between tools; and one
	# digest over all of them, for the table
	(cd "$T/w" && awk '/\.gz$/' "$T/new" | tr '\n' '\0' | xargs -0 -r sha256sum) >"$T/gz.$name.$r"
	GZSUM[$k]=$(sha256sum <"$T/gz.$name.$r" | cut -c1-16)
	(cd "$T/w" && awk '/\.gz$/' "$T/new" | tr '\n' '\0' | xargs -0 -r stat -c '%s %n') >"$T/gzsize.$name.$r"
}

echo "tree: $(find "$T/src" -type f | wc -l) files, $(du -sh "$T/src" | cut -f1); $P cores; $RUNS run(s), every tool on a fresh copy, page cache warm"
FG=() FA=()
X="xargs -0 -r -P$P -n 16"
K="'$KILN' -q --no-manifest --no-nginx-conf"
for r in $(seq "$RUNS"); do
	# the floor is re-measured every run, so that it sees the same machine
	FG[r]=$("$FLOOR" -j "$P" -r "${FLOOR_REPEATS:-1}" "$T/src" | awk '/^floor/ { print $2 }')
	FA[r]=$("$FLOOR" -j "$P" -r "${FLOOR_REPEATS:-1}" --brotli "$T/src" | awk '/^floor/ { print $2 }')
	for n in $TOOLS; do
		case $n in
		kiln-gzip) run "$n" "$r" "$K ." ;;
		kiln-gzip-j1) run "$n" "$r" "$K -j 1 ." ;;
		kiln-gzip+br) run "$n" "$r" "$K --brotli ." ;;
		kiln-gzip+br-j1) run "$n" "$r" "$K --brotli -j 1 ." ;;
		kiln-default) run "$n" "$r" "'$KILN' -q ." ;; # gzip, with manifest and snippet
		gzip-9) run "$n" "$r" "$(declare -f list); list . | $X gzip -9 -k -n" ;;
		libdeflate-12) run "$n" "$r" "$(declare -f list); list . | $X libdeflate-gzip -12 -k" ;;
		brotli-11) run "$n" "$r" "$(declare -f list); list . | $X brotli -q 11 -k" ;;
		precompress) run "$n" "$r" "'$NPM_CACHE/node_modules/.bin/precompress' -s ." ;;
		gzipper) run "$n" "$r" "'$NPM_CACHE/node_modules/.bin/gzipper' compress --gzip --gzip-level 9 --brotli . ." ;;
		*) echo "compare.sh: unknown tool $n (known: $ALL)" >&2; exit 2 ;;
		esac
	done
	printf '\nrun %s: floor gzip %s s, gzip+brotli %s s\n' "$r" "${FG[r]}" "${FA[r]}"
	printf '%-14s %8s %8s %8s %12s %12s %7s  %s\n' tool wall_s cpu_s rss_MB gz_bytes br_bytes siblings gz_digest
	for n in $TOOLS; do
		k="$n,$r"
		printf '%-14s %8s %8s %8s %12s %12s %7s  %s\n' "$n" "${WALL[$k]}" "${CPU[$k]}" "${RSS[$k]}" "${GZ[$k]}" "${BR[$k]}" "${N[$k]}" "${GZSUM[$k]}"
	done
done

# Ratios, one per run (both sides measured in that run); median and range.
stat3() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit }
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.3f (%.3f-%.3f, %d runs)", m, v[1], v[NR], NR }'; }
ratio() { # ratio TABLE A B: A/B per run, where both were measured
	local -n tab=$1
	for r in $(seq "$RUNS"); do
		[ -n "${tab[$2,$r]:-}" ] && [ -n "${tab[$3,$r]:-}" ] &&
			awk -v a="${tab[$2,$r]}" -v b="${tab[$3,$r]}" 'BEGIN { if (b > 0) printf "%.6f\n", a / b }'
	done | stat3
}
vs_floor() { # vs_floor TOOL FLOORS...
	local n=$1; shift
	for r in $(seq "$RUNS"); do
		[ -n "${WALL[$n,$r]:-}" ] && awk -v a="${WALL[$n,$r]}" -v b="${!r}" 'BEGIN { if (b > 0) printf "%.6f\n", a / b }'
	done | stat3
}
same_gz() { # same_gz A B: the .gz both made, compared byte for byte (run 1)
	local both differ
	read -r both differ < <(awk 'NR == FNR { a[substr($0, 67)] = $1; next }
		substr($0, 67) in a { n++; if (a[substr($0, 67)] != $1) d++ } END { print n + 0, d + 0 }' \
		"$T/gz.$1.1" "$T/gz.$2.1")
	if [ "$differ" -eq 0 ]; then echo "yes, all $both that both wrote"; else echo "NO: $differ of $both differ"; fi
}
# common_bytes A B: A's .gz bytes / B's, over the sources both compressed
# (kiln leaves out files that do not shrink enough; a peer compresses all)
common_bytes() {
	for r in $(seq "$RUNS"); do
		awk 'NR == FNR { a[substr($0, index($0, " ") + 1)] = $1; next }
			{ p = substr($0, index($0, " ") + 1) } p in a { x += a[p]; y += $1 }
			END { if (y > 0) printf "%.6f\n", x / y }' "$T/gzsize.$1.$r" "$T/gzsize.$2.$r"
	done | stat3
}
echo
echo "ratios, median (min-max):"
want kiln-gzip && want libdeflate-12 &&
	echo "  kiln gzip wall / xargs libdeflate-gzip -12 wall:  $(ratio WALL kiln-gzip libdeflate-12)  target <= 0.9; identical .gz bytes: $(same_gz kiln-gzip libdeflate-12)"
want kiln-gzip+br && want precompress &&
	echo "  kiln gzip+br wall / precompress wall:             $(ratio WALL kiln-gzip+br precompress)  target <= 1"
want kiln-gzip+br && want gzipper &&
	echo "  kiln gzip+br wall / gzipper wall:                 $(ratio WALL kiln-gzip+br gzipper)"
want kiln-gzip+br && want brotli-11 && want libdeflate-12 &&
	echo "  kiln gzip+br wall / (libdeflate-12 + brotli-11):  $(for r in $(seq "$RUNS"); do awk -v a="${WALL[kiln-gzip+br,$r]}" -v b="${WALL[libdeflate-12,$r]}" -v c="${WALL[brotli-11,$r]}" 'BEGIN { printf "%.6f\n", a / (b + c) }'; done | stat3)"
want kiln-gzip && want gzip-9 &&
	echo "  kiln .gz bytes / gzip -9 .gz bytes, same files:   $(common_bytes kiln-gzip gzip-9)  target <= 0.96"
want kiln-gzip+br && want brotli-11 &&
	echo "  kiln .br bytes / brotli -q 11 .br bytes:          $(ratio BR kiln-gzip+br brotli-11)"
want kiln-gzip && want kiln-gzip-j1 &&
	echo "  kiln gzip -j$P wall / -j1 wall:                     $(ratio WALL kiln-gzip kiln-gzip-j1)  target <= 0.55 (for 2 cores)"
want kiln-gzip+br && want kiln-gzip+br-j1 &&
	echo "  kiln gzip+br -j$P wall / -j1 wall:                  $(ratio WALL kiln-gzip+br kiln-gzip+br-j1)  target <= 0.55 (for 2 cores)"
want kiln-default && want kiln-gzip &&
	echo "  kiln gzip with manifest+snippet / without:        $(ratio WALL kiln-default kiln-gzip)"
want kiln-gzip+br && echo "  kiln gzip+br wall / floor:                        $(vs_floor kiln-gzip+br "${FA[@]}")  target <= 1.10"
want kiln-gzip && echo "  kiln gzip wall / floor:                           $(vs_floor kiln-gzip "${FG[@]}")"
