#!/usr/bin/env bash
# vite.sh - kiln's immutable files on real Vite builds.  Three apps from
# app.py (seeds 1, 2, 3; 300 lazily loaded pages each, with style sheets
# and images, and public/ files named like words), built by Vite 8 with
# build.manifest: Vite's .vite/manifest.json lists every output it hashed.
# kiln must mark exactly those immutable, three ways: from the tree alone
# (the manifest moved out first), with the manifest at the tree's top, and
# with it given by --fingerprints.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

# hashed_of DIST: Vite's hashed outputs, from its manifest.
hashed_of() {
	python3 - "$1/.vite/manifest.json" <<'PY'
import json, sys
out = set()
for e in json.load(open(sys.argv[1])).values():
    out.add(e["file"])
    out.update(e.get("css", []))
    out.update(e.get("assets", []))
print("\n".join(sorted(out)))
PY
}

for seed in 1 2 3; do
	A=$T/app$seed
	app vite "$seed" 300 "$A"
	cat >"$A/vite.config.mjs" <<'JS'
export default { logLevel: 'warn', build: { manifest: true, assetsInlineLimit: 0 } };
JS
	must "vite builds app $seed" "$T/build$seed.log" \
		eval '(cd "$A" && timeout 300 node node_modules/vite/bin/vite.js build) >"$T/build$seed.log" 2>&1'
	D=$A/dist
	hashed_of "$D" >"$T/hashed$seed"
	mv "$D/.vite" "$T/vite$seed"
	check "kiln on app $seed (no manifest)" "$KILN" -q "$D"
	tree_check "vite app $seed, the tree alone" "$D" "$T/hashed$seed" name tree
	mv "$T/vite$seed" "$D/.vite"
	check "kiln on app $seed (Vite's manifest in it)" "$KILN" -q "$D"
	hashed_check "vite app $seed, with .vite/manifest.json" "$D" "$T/hashed$seed" name bundler
	mv "$D/.vite/manifest.json" "$T/manifest$seed.json"
	check "kiln --fingerprints on app $seed" "$KILN" -q --fingerprints "$T/manifest$seed.json" "$D"
	hashed_check "vite app $seed, --fingerprints" "$D" "$T/hashed$seed" name bundler
done
# the hashes are many distinct draws
check "hundreds of distinct hashes" [ "$(cat "$T"/hashed? | sort -u | wc -l)" -ge 900 ]
tally_check vite 5
took
finish
