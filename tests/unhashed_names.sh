#!/usr/bin/env bash
# unhashed_names.sh - how many names of real unhashed trees the fingerprint rules
# take for hashes: the paths of every file under each DIR (relative to it,
# each tree under its own prefix) are given to test_shape as its corpus,
# which decides them as one tree (the name alone, then the tree's shapes),
# prints "corpus of N unhashed names: X by name, Y by shape", and names
# each one taken (docs/cache-control.md, "What it costs", runs it on
# /usr/share/doc).  Exits as test_shape does (1 when any name is taken, or
# its other checks fail).
set -eu
[ $# -ge 2 ] || { echo "usage: unhashed_names.sh TEST_SHAPE DIR..." >&2; exit 2; }
prog=$1
shift
list=$(mktemp)
trap 'rm -f "$list"' EXIT
n=0
for dir in "$@"; do
	[ -d "$dir" ] || { echo "unhashed_names.sh: $dir: not a directory" >&2; exit 2; }
	n=$((n + 1))
	find "$dir" -type f -printf "t$n/%P\n" >>"$list"
done
echo "unhashed_names.sh: $(wc -l <"$list") files under $*" >&2
"$prog" "$list"
