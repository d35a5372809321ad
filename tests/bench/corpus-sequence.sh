#!/usr/bin/env bash
# corpus-sequence.sh - a real tree through runs with the codings and
# --stream-size changed between them, and edits in between; after every run
# the invariant is audited independently (tests/e2e/audit.py) and
# `kiln check` must agree (exit 0).  Not part of CI (a real corpus takes
# minutes per run); run it on demand:
#
#   tests/bench/corpus-sequence.sh build/kiln TREE
#
# TREE is copied; the copy is edited, never TREE itself.
set -euo pipefail
KILN=${1:?usage: corpus-sequence.sh KILN TREE}
TREE=${2:?usage: corpus-sequence.sh KILN TREE}
AUDIT=$(dirname "$0")/../e2e/audit.py
W=$(mktemp -d "${TMPDIR:-/tmp}/kiln-corpus-seq.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp -a "$TREE" "$W/t"
D=$W/t
fails=0

# a few of the tree's text files, picked once, by name order
mapfile -t texts < <(find "$D" -type f \( -name '*.js' -o -name '*.css' -o -name '*.html' \) | sort | awk 'NR % 97 == 1')
big=$(find "$D" -type f -name '*.js' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)

step() { # step DESCRIPTION OPTIONS...
	local what=$1; shift
	local t0=$(date +%s)
	"$KILN" -q "$@" "$D" || { echo "FAIL: $what: kiln exited $?"; fails=$((fails + 1)); }
	if /usr/bin/python3 "$AUDIT" --quiet "$D"; then a=ok; else a=FAIL; fails=$((fails + 1)); fi
	if "$KILN" check -q "$D"; then c=ok; else c=FAIL; fails=$((fails + 1)); fi
	printf '%-58s audit %-4s check %-4s %4ss\n' "$what" "$a" "$c" "$(($(date +%s) - t0))"
}

edit() { # append to a few files, delete one, add one
	local i=0 f
	for f in "${texts[@]}"; do
		i=$((i + 1))
		case $((i % 3)) in
		0) echo "/* edited $1 */" >>"$f" ;;
		1) touch "$f" ;;
		2) [ -e "$f" ] && rm -f "$f" ;;
		esac
	done
	head -c 20000 "$big" >"$D/added-$1.js"
	echo "// $1" >>"$big"
}

echo "tree: $(find "$D" -type f | wc -l) files, $(du -sh "$D" | cut -f1); big file: ${big#"$D"/} ($(stat -c %s "$big") bytes)"
step "gzip" --gzip-level 9
step "gzip + br" --brotli --brotli-quality 5 --gzip-level 9
edit 1
step "edits; gzip + br, --stream-size 64K (many streamed)" --brotli --brotli-quality 5 --gzip-level 9 --stream-size 64K
step "br dropped, --stream-size 64K" --gzip-level 9 --stream-size 64K
edit 2
step "edits; zstd added, gzip dropped" --no-gzip --zstd --zstd-level 6 --stream-size 64K
step "all three, --stream-size back to default" --brotli --brotli-quality 5 --zstd --zstd-level 6 --gzip-level 9
edit 3
step "edits; all three, everything streamed" --brotli --brotli-quality 5 --zstd --zstd-level 6 --gzip-level 9 --stream-size 1
step "gzip alone, --max-ratio 0.5" --gzip-level 9 --max-ratio 0.5
step "gzip alone, exclude *.map" --gzip-level 9 --exclude '*.map'
step "default settings" 
"$KILN" clean -q "$D"
left=$(find "$D" -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' -o -name 'kiln*' \) | grep -vxFf <(cd "$TREE" && find . -type f | sed "s|^\.|$D|") | wc -l || true)
echo "clean: $left files of kiln's left"
[ "$left" -eq 0 ] || fails=$((fails + 1))
echo "corpus-sequence: $fails failures"
[ "$fails" -eq 0 ]
