#!/usr/bin/env bash
# plugins.sh - kiln-precompress's Vite, Rollup and webpack plugins give
# kiln the bundler's own account of its outputs (lib/account.js), so that
# their users get exactly the files the bundler hashed immutable, with no
# manifest of the bundler's in the output: app.py's apps (public/ names of
# every kind reviews found taken for hashes), built with the plugins from
# the source tree (their option list generated from this build's kiln, as
# packaging/npm/pack.sh does) running this build's kiln (KILN_BINARY).
# Vite with its default names and with "[hash:6]" (a hash the name alone
# never takes); Rollup with its default chunk and asset names, the entry
# unhashed; webpack 5 with [contenthash:8].  The bundler's own record of
# what it hashed (the bundle a plugin of the test sees, webpack's stats)
# is the expected answer; kiln's manifest must say "bundler" or "name" for
# exactly those.  tests/package/plugins.sh tests the packed plugins.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$HERE/../.." && pwd)

P=$T/kiln-precompress
cp -r "$SRC/packaging/npm/kiln-precompress" "$P"
must "the plugins' option list from this kiln" "$T/gen.log" \
	eval 'node "$SRC/packaging/npm/gen-api.js" "$KILN" "$P" >"$T/gen.log" 2>&1'
export KILN_BINARY=$KILN

# A plugin that writes what the bundle holds, hashed by the bundler's
# patterns: every chunk and asset but the unhashed entry (ENTRY) and
# index.html.
record() { # record ENTRY_PATTERN
	cat <<JS
import { writeFileSync } from 'node:fs';
const record = {
  name: 'record',
  generateBundle(options, bundle) {
    writeFileSync('hashed.txt', Object.values(bundle).map(f => f.fileName)
      .filter(f => f !== 'index.html' && !/$1/.test(f)).sort().join('\n') + '\n');
  },
};
JS
}

for hash in '' ':6'; do
	A=$T/vite$hash
	app vite 3 24 "$A"
	{ record '^$'; cat <<JS; } >"$A/vite.config.mjs"
import kiln from '$P/vite.mjs';
export default { logLevel: 'warn', plugins: [record, kiln()],
  build: { assetsInlineLimit: 0, rollupOptions: { output: {
    entryFileNames: 'assets/[name]-[hash$hash].js', chunkFileNames: 'assets/[name]-[hash$hash].js',
    assetFileNames: 'assets/[name]-[hash$hash][extname]' } } } };
JS
	must "vite builds with the plugin (hash$hash)" "$T/vite$hash.log" \
		eval '(cd "$A" && timeout 300 node node_modules/vite/bin/vite.js build) >"$T/vite$hash.log" 2>&1'
	check "vite (hash$hash): no manifest of Vite's in the output" [ ! -e "$A/dist/.vite" ]
	hashed_check "vite plugin, [hash$hash]" "$A/dist" "$A/hashed.txt" name bundler
done

A=$T/rollup
app rollup 4 60 "$A"
{ record '^main\.js$'; cat <<JS; } >"$A/rollup.config.mjs"
import kiln from '$P/rollup.mjs';
export default { input: 'src/main.js', plugins: [record, kiln()],
  output: { dir: 'dist', format: 'es', entryFileNames: '[name].js' } };
JS
# public/ copied into the output first (Rollup leaves what it did not write)
mkdir -p "$A/dist"
cp -r "$A/public/." "$A/dist/"
must "rollup builds with the plugin" "$T/rollup.log" \
	eval '(cd "$A" && timeout 300 node node_modules/rollup/dist/bin/rollup -c --silent) >"$T/rollup.log" 2>&1'
hashed_check "rollup plugin" "$A/dist" "$A/hashed.txt" name bundler

A=$T/webpack
app webpack 5 60 "$A"
cat >"$A/webpack.config.js" <<JS
const MiniCssExtractPlugin = require('mini-css-extract-plugin');
const CopyPublic = { apply(c) { c.hooks.thisCompilation.tap('copy', (comp) => {
  comp.hooks.processAssets.tap({ name: 'copy', stage: 0 }, () => {
    const fs = require('fs'), path = require('path');
    const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap(e =>
      e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);
    for (const f of walk(__dirname + '/public'))
      comp.emitAsset(path.relative(__dirname + '/public', f),
        new c.webpack.sources.RawSource(fs.readFileSync(f)), { copied: true, minimized: true });
  }); }); } };
const KilnPlugin = require('$P/webpack.js');
module.exports = {
  mode: 'production',
  entry: { main: './src/main.js' },
  output: { filename: 'static/js/[name].[contenthash:8].js', chunkFilename: 'static/js/[name].[contenthash:8].chunk.js',
            assetModuleFilename: 'assets/[name].[contenthash:8][ext]', path: __dirname + '/dist', clean: true },
  module: { rules: [{ test: /\.css\$/, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
                    { test: /\.svg\$/, type: 'asset/resource' }] },
  plugins: [new MiniCssExtractPlugin({ filename: 'static/css/[name].[contenthash:8].css',
                                       chunkFilename: 'static/css/[name].[contenthash:8].chunk.css' }),
            CopyPublic, new KilnPlugin()],
  performance: { hints: false },
};
JS
must "webpack builds with the plugin" "$T/webpack.log" \
	eval '(cd "$A" && timeout 300 node node_modules/webpack-cli/bin/cli.js --json="$T/stats.json") >"$T/webpack.log" 2>&1'
python3 - "$T/stats.json" >"$T/whashed" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
print("\n".join(sorted(a["name"] for a in stats["assets"] if a.get("info", {}).get("immutable"))))
PY
hashed_check "webpack plugin, [contenthash:8]" "$A/dist" "$T/whashed" name bundler
took
finish
