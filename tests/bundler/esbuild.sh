#!/usr/bin/env bash
# esbuild.sh - kiln's immutable files on a real esbuild build: app.py's app
# (seed 6, 400 pages), every page an entry point besides the app's, code
# splitting, style sheets and images, all named "[name]-[hash]" (esbuild's
# 8 characters of upper-case base32, which the name alone misses whenever
# they hold no digit), and public/ copied beside them.  esbuild's metafile
# lists its outputs, every one named with its hash; kiln must mark exactly
# those immutable, from the tree alone and with the metafile given by
# --fingerprints.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

A=$T/app
app esbuild 6 400 "$A"
cat >"$A/build.js" <<'JS'
const esbuild = require('esbuild');
const fs = require('fs');
const pages = fs.readdirSync('src/pages').filter(f => f.endsWith('.js')).map(f => 'src/pages/' + f);
esbuild.build({
  entryPoints: ['src/main.js', ...pages],
  outdir: 'dist',
  outbase: 'src',
  bundle: true,
  splitting: true,
  format: 'esm',
  entryNames: '[dir]/[name]-[hash]',
  chunkNames: 'chunks/[name]-[hash]',
  assetNames: 'assets/[name]-[hash]',
  loader: { '.svg': 'file' },
  metafile: true,
  logLevel: 'warning',
}).then(r => fs.writeFileSync('meta.json', JSON.stringify(r.metafile)));
JS
must "esbuild builds the app" "$T/build.log" \
	eval '(cd "$A" && timeout 300 node build.js) >"$T/build.log" 2>&1'
D=$A/dist
cp -r "$A/public/." "$D/"
cp "$A/index.html" "$D/"
python3 - "$A/meta.json" >"$T/hashed" <<'PY'
import json, sys
outputs = json.load(open(sys.argv[1]))["outputs"]
print("\n".join(sorted(k[len("dist/"):] for k in outputs)))
PY
check "esbuild hashed hundreds of outputs" [ "$(wc -l <"$T/hashed")" -ge 500 ]
check "kiln on esbuild's dist/" "$KILN" -q "$D"
tree_check "esbuild, the tree alone" "$D" "$T/hashed" name tree
check "kiln --fingerprints with esbuild's metafile" "$KILN" -q --fingerprints "$A/meta.json" "$D"
hashed_check "esbuild, --fingerprints meta.json" "$D" "$T/hashed" name bundler
tally_check esbuild 5
took
finish
