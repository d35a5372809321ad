#!/usr/bin/env bash
# webpack.sh - kiln's immutable files on real webpack 5 builds: app.py's app
# (seed 5, 400 lazily loaded pages, style sheets through
# mini-css-extract-plugin, images as asset modules) built twice, with
# [contenthash:8] (as Create React App names its outputs) and with
# [contenthash] (20 hex digits), public/ copied beside the outputs, and
# webpack-manifest-plugin's manifest.json.  webpack itself says which of its
# outputs are immutable (stats.assets[].info.immutable: the name holds a
# content hash); kiln must mark exactly those, from the tree alone (the
# manifest moved out), with manifest.json at the tree's top, and with the
# stats given by --fingerprints.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

for hash in '[contenthash:8]' '[contenthash]'; do
	n=$([ "$hash" = '[contenthash]' ] && echo 20 || echo 8)
	A=$T/app$n
	app webpack 5 400 "$A"
	cat >"$A/webpack.config.js" <<JS
const MiniCssExtractPlugin = require('mini-css-extract-plugin');
const { WebpackManifestPlugin } = require('webpack-manifest-plugin');
module.exports = {
  mode: 'production',
  entry: { main: './src/main.js' },
  output: {
    filename: 'static/js/[name].$hash.js',
    chunkFilename: 'static/js/[name].$hash.chunk.js',
    assetModuleFilename: 'assets/[name].$hash[ext]',
    path: __dirname + '/dist',
    publicPath: '/',
    clean: true,
  },
  module: {
    rules: [
      { test: /\.css\$/, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
      { test: /\.svg\$/, type: 'asset/resource' },
    ],
  },
  plugins: [
    new MiniCssExtractPlugin({ filename: 'static/css/[name].$hash.css',
                               chunkFilename: 'static/css/[name].$hash.chunk.css' }),
    new WebpackManifestPlugin({}),
  ],
  performance: { hints: false },
};
JS
	must "webpack builds the app ($hash)" "$T/build$n.log" \
		eval '(cd "$A" && timeout 300 node node_modules/webpack-cli/bin/cli.js --json="$T/stats$n.json") >"$T/build$n.log" 2>&1'
	D=$A/dist
	cp -r "$A/public/." "$D/"
	cp "$A/index.html" "$D/"
	python3 - "$T/stats$n.json" >"$T/hashed$n" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
print("\n".join(sorted(a["name"] for a in stats["assets"] if a.get("info", {}).get("immutable"))))
PY
	check "webpack hashed hundreds of outputs ($hash)" [ "$(wc -l <"$T/hashed$n")" -ge 300 ]
	mv "$D/manifest.json" "$T/manifest$n.json"
	check "kiln on webpack's dist/ ($hash)" "$KILN" -q "$D"
	tree_check "webpack $hash, the tree alone" "$D" "$T/hashed$n" name tree
	mv "$T/manifest$n.json" "$D/manifest.json"
	check "kiln with webpack-manifest-plugin's manifest.json ($hash)" "$KILN" -q "$D"
	tree_check "webpack $hash, with manifest.json" "$D" "$T/hashed$n" name tree bundler
	rm "$D/manifest.json"
	check "kiln --fingerprints with webpack's stats ($hash)" "$KILN" -q --fingerprints "$T/stats$n.json" "$D"
	hashed_check "webpack $hash, --fingerprints stats.json" "$D" "$T/hashed$n" name bundler
done
tally_check webpack 5
took
finish
