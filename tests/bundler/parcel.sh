#!/usr/bin/env bash
# parcel.sh - kiln's immutable files on a real Parcel 2 build: app.py's app
# (seed 7, 300 lazily loaded pages, style sheets, images), built from
# index.html with Parcel's API, and public/ copied into the output (its
# assets/ files into the top directory too, beside Parcel's outputs).
# Parcel's own bundle graph says which bundles have a content hash in
# their names (those that need no stable name: all but index.html; and the
# source map it writes beside each); kiln,
# from the tree alone, must mark exactly those immutable.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

A=$T/app
app parcel 7 300 "$A"
cat >"$A/build.js" <<'JS'
const { Parcel } = require('@parcel/core');
const fs = require('fs');
const path = require('path');
(async () => {
  const bundler = new Parcel({
    entries: 'index.html',
    defaultConfig: '@parcel/config-default',
    mode: 'production',
    shouldDisableCache: true,
    shouldAutoInstall: false,
    defaultTargetOptions: { distDir: 'dist', publicUrl: '/', shouldOptimize: false },
  });
  const { bundleGraph } = await bundler.run();
  // and the source map Parcel writes beside each, under its name
  const hashed = bundleGraph.getBundles().filter(b => !b.needsStableName)
    .flatMap(b => [b.filePath, b.filePath + '.map'].filter(f => fs.existsSync(f)))
    .map(f => path.relative('dist', f));
  fs.writeFileSync('hashed.txt', hashed.sort().join('\n') + '\n');
})().catch(e => { console.error(e); process.exit(1); });
JS
must "parcel builds the app" "$T/build.log" \
	eval '(cd "$A" && PARCEL_WORKERS=2 timeout 500 node build.js) >"$T/build.log" 2>&1'
D=$A/dist
cp -r "$A/public/." "$D/"
cp "$A/public/assets/"* "$D/"
check "parcel hashed hundreds of outputs" [ "$(wc -l <"$A/hashed.txt")" -ge 300 ]
check "kiln on parcel's dist/" "$KILN" -q "$D"
tree_check "parcel, the tree alone" "$D" "$A/hashed.txt" name tree
tally_check parcel 5
took
finish
