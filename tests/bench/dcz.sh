#!/usr/bin/env bash
# dcz.sh KILN OLD NEW - what a dictionary delta saves on one pair of files:
# OLD as the deployed release's version of a script, NEW as the next one's
# (e.g. d3.min.js of d3 7.8.5 and 7.9.0 from npm).  Prints the bytes of
# NEW, its .gz (zopfli), .br and the dcz delta, the delta as a share of the
# .br, and the CPU seconds of a run with and without --previous.  It checks
# that the delta decodes (zstd tool, OLD as dictionary) to NEW; it never
# fails on size or speed.
set -eu
KILN=$1 OLD=$2 NEW=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/r1/assets" "$T/r2/assets"
cp "$OLD" "$T/r1/assets/lib.3f9a2c7b.js"
cp "$NEW" "$T/r2/assets/lib.8e1d0a4f.js"
"$KILN" -q --best "$T/r1"
cp -a "$T/r2" "$T/r2b"
t0=$( { /usr/bin/time -f %U "$KILN" -q -j1 --best "$T/r2b" >/dev/null; } 2>&1 )
t1=$( { /usr/bin/time -f %U "$KILN" -q -j1 --best --previous "$T/r1" "$T/r2" >/dev/null; } 2>&1 )
S=$T/r2/assets/lib.8e1d0a4f.js
D=$(ls "$S".*.dcz)
tail -c +41 "$D" | zstd -q -d -D "$T/r1/assets/lib.3f9a2c7b.js" | cmp - "$S"
n=$(stat -c %s "$S") gz=$(stat -c %s "$S.gz") br=$(stat -c %s "$S.br") dcz=$(stat -c %s "$D")
printf 'new %d bytes: gzip %d, br %d, dcz %d (%.1f%% of br)\n' "$n" "$gz" "$br" "$dcz" \
	"$(echo "100 * $dcz / $br" | bc -l)"
printf 'CPU: --best %s s, --best --previous %s s (one job)\n' "$t0" "$t1"
