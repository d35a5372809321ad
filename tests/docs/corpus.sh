#!/usr/bin/env bash
# corpus.sh - docs/cache-control.md's measurement of the names no bundler
# hashed, run as it stands (commands.py takes it out of the page): from a
# directory where build/ is this build and tests/ the source's, test_shape
# on tests/data/unhashed-names.txt and tests/unhashed_names.sh on
# /usr/share; each must take no name for a hash (exit 0) and say how many
# it read.
. "$(dirname "$0")/../e2e/lib.sh"
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
BUILD=$(cd "$(dirname "$KILN")" && pwd)
W=$T/src
mkdir -p "$W"
ln -s "$BUILD" "$W/build"
ln -s "$SRC/tests" "$W/tests"
/usr/bin/python3 "$SRC/tests/docs/commands.py" "$SRC" commands "docs/cache-control.md#what-it-costs" >"$T/block"
check "the page has the block" [ -s "$T/block" ]
n=0
while IFS= read -r -d '' c; do
	n=$((n + 1))
	(cd "$W" && bash -c "$c") >"$T/out$n" 2>&1
	check "$c: no name taken for a hash" [ $? -eq 0 ]
	check "... and it read a corpus" grep -qE 'corpus of [0-9]+ unhashed names: 0 by name, 0 by shape' "$T/out$n"
done <"$T/block"
check "two commands" [ "$n" -eq 2 ]
finish
