#!/usr/bin/env bash
# scale_selftest.sh - the scale benchmark's harness works: scale.sh on one
# 20,000-file tree (gzip at level 1, to keep it short) must build the tree
# it was asked for, run every step to a zero exit status (`kiln check`
# among them: every sibling decodes to its source and the manifest is
# current; `clean` leaves exactly the sources), and print a well-formed
# table.  No timing is asserted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${KILN:?set KILN to the kiln binary}"
out=$(SIZES=20000 SEED=7 KILN_OPTS="--gzip --gzip-level 1" bash "$here/scale.sh" "$KILN")
printf '%s\n' "$out"
fail() { echo "scale_selftest: $*" >&2; exit 1; }
num='[0-9]+(\.[0-9]+)?'
for step in cold unchanged one-changed check clean; do
	printf '%s\n' "$out" | grep -Eq "^20000 +1 +$step( +$num){7}\$" ||
		fail "no well-formed '$step' line"
done
bytes=$(printf '%s\n' "$out" | awk '$1 == 20000 && $3 == "manifest" { print $4 }')
# a manifest entry is a few hundred bytes: 20,000 of them are megabytes
[ -n "$bytes" ] && [ "$bytes" -gt 2000000 ] || fail "manifest of $bytes bytes"
[ "$(printf '%s\n' "$out" | grep -c '^20000 ')" -eq 6 ] || fail "not 6 lines for the size"
printf '%s\n' "$out" | grep -q '^bin 1: medians of 1 round' || fail "no summary"
echo "scale_selftest: ok"
