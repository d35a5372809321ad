#!/usr/bin/env bash
# webpack.sh - the fingerprint rule on a real webpack build.  A small app
# (an entry, a lazily imported chunk, a stylesheet through
# mini-css-extract-plugin, an SVG and a font as asset modules with
# webpack's default names) is built by webpack from the npm registry with
# content hashes in every output name, as webpack's caching guide sets it
# up.  webpack itself says which of its outputs are immutable
# (stats.assets[].info.immutable: the name carries a content hash); kiln's
# manifest must mark exactly those, and the hand-written index.html not.
. "$(dirname "$0")/../e2e/lib.sh"
command -v npm >/dev/null || { echo "webpack.sh: npm is missing" >&2; exit 1; }

A=$T/app
mkdir -p "$A/src"
cat >"$A/package.json" <<'JSON'
{ "name": "kiln-webpack-test", "version": "1.0.0", "private": true }
JSON
if ! (cd "$A" && timeout 300 npm install --no-audit --no-fund --save-exact \
	webpack@5.113.0 webpack-cli@7.3.1 css-loader@7.1.5 mini-css-extract-plugin@2.10.2) >"$T/install.log" 2>&1; then
	cat "$T/install.log" >&2
	fail "npm install webpack"
	finish
	exit 1
fi
cat >"$A/webpack.config.js" <<'JS'
const MiniCssExtractPlugin = require('mini-css-extract-plugin');
module.exports = {
  mode: 'production',
  entry: { main: './src/index.js' },
  output: {
    filename: '[name].[contenthash].js',
    chunkFilename: '[id].[contenthash].chunk.js',
    path: __dirname + '/dist',
    clean: true,
  },
  module: {
    rules: [
      { test: /\.css$/, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
      { test: /\.(svg|woff2)$/, type: 'asset/resource' },
    ],
  },
  plugins: [new MiniCssExtractPlugin({ filename: '[name].[contenthash].css' })],
  performance: { hints: false },
};
JS
{
	echo "import './style.css';"
	echo "import logo from './logo.svg';"
	echo "import font from './font.woff2';"
	echo "document.body.dataset.logo = logo + font;"
	echo "import('./lazy.js').then(m => m.run());"
} >"$A/src/index.js"
for i in $(seq 200); do echo "export const value$i = 'lazy chunk value number $i';"; done >"$A/src/lazy.js"
echo "export function run() { document.title = value1 + value200; }" >>"$A/src/lazy.js"
for i in $(seq 200); do echo ".rule-$i { margin: ${i}px; color: #123456; }"; done >"$A/src/style.css"
{ echo '<svg xmlns="http://www.w3.org/2000/svg">'; for i in $(seq 100); do echo "<rect x=\"$i\" y=\"$i\" width=\"10\" height=\"10\"/>"; done; echo '</svg>'; } >"$A/src/logo.svg"
head -c 3000 /dev/zero | tr '\0' 'w' >"$A/src/font.woff2"

if ! (cd "$A" && timeout 300 npx --no-install webpack --json >"$T/stats.json" 2>"$T/build.log"); then
	cat "$T/build.log" >&2
	fail "webpack builds the app"
	finish
	exit 1
fi
D=$A/dist
cat >"$D/index.html" <<'HTML'
<!doctype html><html><head><title>kiln</title></head><body><script src="main.js"></script></body></html>
HTML
"$KILN" -q --brotli "$D"
check "kiln on webpack's dist/" [ $? -eq 0 ]

same_as_webpack() {
	python3 - "$T/stats.json" "$D/kiln-manifest.json" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
files = json.load(open(sys.argv[2]))["files"]
emitted = {a["name"]: bool(a.get("info", {}).get("immutable")) for a in stats["assets"]}
bad = []
if not any(emitted.values()):
    bad.append("webpack marked nothing immutable")
for name, imm in sorted(emitted.items()):
    if name not in files:
        bad.append(f"{name}: not in kiln's manifest")
    elif files[name].get("immutable", False) != imm:
        bad.append(f"{name}: webpack says immutable={imm}, kiln's manifest says otherwise")
if files.get("index.html", {}).get("immutable"):
    bad.append("index.html marked immutable")
kinds = {n.rsplit(".", 1)[-1] for n, imm in emitted.items() if imm}
for ext in ("js", "css", "svg", "woff2"):
    if ext not in kinds:
        bad.append(f"no immutable .{ext} among webpack's outputs")
print("\n".join(bad), file=sys.stderr)
print(f"{len(emitted)} webpack outputs, {sum(emitted.values())} immutable", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
check "kiln marks immutable exactly what webpack says is (content-hashed names)" same_as_webpack
finish
