#!/usr/bin/env bash
# rollup.sh - kiln's immutable files on a real Rollup build: app.py's app
# (seed 4, 600 lazily loaded pages: as many chunks), Rollup 4's defaults
# for chunks ("[name]-[hash].js") and assets ("assets/[name]-[hash][extname]",
# 40 of them emitted by a plugin), the entry unhashed ("[name].js", in the
# same directory as the chunks), and public/ copied beside them.  Rollup
# writes no manifest: its own bundle (what generateBundle sees: each file,
# chunk or asset, entry or not) says which outputs its patterns hashed, and
# kiln, from the tree alone, must mark exactly those immutable.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

A=$T/app
app rollup 4 600 "$A"
cat >"$A/rollup.config.mjs" <<'JS'
import { writeFileSync } from 'node:fs';
const data = {
  name: 'kiln-data',
  buildStart() {
    for (let i = 0; i < 40; i++)
      this.emitFile({ type: 'asset', name: `data${i}.json`,
                      source: JSON.stringify({ i, text: 'asset number ' + i * 7919 }).repeat(20) });
  },
  generateBundle(options, bundle) {
    const hashed = Object.values(bundle)
      .filter(f => f.type === 'asset' || !f.isEntry)
      .map(f => f.fileName);
    writeFileSync('hashed.txt', hashed.sort().join('\n') + '\n');
  },
};
export default {
  input: 'src/main.js',
  plugins: [data],
  output: { dir: 'dist', format: 'es', entryFileNames: '[name].js' },
};
JS
must "rollup builds the app" "$T/build.log" \
	eval '(cd "$A" && timeout 300 node node_modules/rollup/dist/bin/rollup -c --silent) >"$T/build.log" 2>&1'
D=$A/dist
cp -r "$A/public/." "$D/"
check "rollup hashed hundreds of outputs" [ "$(wc -l <"$A/hashed.txt")" -ge 500 ]
check "kiln on rollup's dist/" "$KILN" -q "$D"
tree_check "rollup, the tree alone" "$D" "$A/hashed.txt" name tree
tally_check rollup 5
took
finish
