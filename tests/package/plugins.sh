#!/usr/bin/env bash
# plugins.sh - kiln-precompress's bundler plugins in real builds: Vite 8,
# Rollup 4 and webpack 5 (webpack-cli) from plugins/package.json and
# plugins/package-lock.json, installed once into the build tree, build a
# small app with kiln installed offline from the two tarballs.  For each
# bundler: the siblings of the output decode to the files built, `kiln
# check` passes on the output, kiln's summary line is in the build's log
# (the bundler's logger) and matches the summary the plugin reports; a
# second build from an emptied output directory takes every sibling from
# the content cache (node_modules/.cache/kiln by default, a path the user
# gives relative to the root, none with cache: false) and writes the same
# files; an option value kiln refuses at run time (gzipLevel 13), or a
# dangling link in the output with followSymlinks, fails the build with
# kiln's message; with no binary for the platform (a preload fakes
# process.platform for kiln-precompress alone: the bundlers' own native
# parts still load), optional: true builds with one warning and no
# sibling, and without it the build fails.  The entry points load from ESM
# and CommonJS, an unknown option throws when the plugin is made, and the
# declarations pass `tsc --noEmit` in Vite, Rollup and webpack config files
# typed against the bundlers' own types, and fail it on a misspelled option
# or a wrong type.  The Vite and webpack configs of the package README and
# docs/install.md build.
# The README's Vite build is served by nginx to headless Chromium: the
# page renders, every response is the right sibling and decodes to its
# source, a second visit and a reload are cache hits and 304s.  A Rollup
# output.file in the project's root (its directory: the whole project)
# fails the build before kiln runs.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"
unset KILN_BINARY KILN_CACHE_DIR
here=$(cd "$(dirname "$0")" && pwd)
trap nginx_stop EXIT

# The bundlers, once per build tree (tests/bundler/install.sh, npm's cache
# shared with the other npm tests of the build).
deps=$BUILD/plugin-deps
KILN_BUNDLERS=$deps KILN_NPM_CACHE=$BUILD/npm-cache PATH="$STUBS:$PATH" bash "$here/../bundler/install.sh" "$here/plugins" >"$T/deps.log" 2>&1
must "the bundlers install (npm ci)" "$T/deps.log" [ -d "$deps/node_modules/webpack-cli" ]

A=$T/app
new_project "$A"
must "npm install of the tarballs succeeds offline" "$A.npm.log" npm_install_kiln "$A" --offline
check "no compiler or build tool ran during the installs" [ ! -s "$COMPILER_LOG" ]
# The bundlers, beside kiln in the app's node_modules (after npm install,
# which would remove them); their own dependencies resolve from $deps.
for p in vite rollup webpack webpack-cli typescript; do
	ln -s "$deps/node_modules/$p" "$A/node_modules/$p"
done

# The app: a script with a large string, a stylesheet, a page.
mkdir -p "$A/src"
awk 'BEGIN { srand(7); split("alpha beta gamma delta kiln oven brick clay glaze", w, " ");
	printf "export const text = \""; for (i = 0; i < 4000; i++) printf "%s ", w[int(rand() * 9) + 1]; print "\";" }' >"$A/src/text.js"
awk 'BEGIN { for (i = 0; i < 300; i++) printf ".c%d { color: #%06x; margin: %dpx %dpx; }\n", i, i * 7919 % 16777216, i, i % 17 }' >"$A/src/style.css"
printf 'import { text } from "./text.js";\nconsole.log(text.length, text);\n' >"$A/src/app.js"
# main.js writes "kiln-ran-OK" (in no file: browser.py reads it) into #out.
printf 'import "./app.js";\nimport "./style.css";\n' >"$A/src/main.js"
printf 'const out = document.createElement("p");\nout.id = "out";\nout.textContent = ["OK", "ran", "kiln"].reverse().join("-");\ndocument.querySelector("#app").append(out);\n' >>"$A/src/main.js"
printf 'import "./app.js";\nimport css from "./style.css";\nconsole.log(css);\n' >"$A/src/wmain.js"
cat >"$A/index.html" <<'EOF'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kiln plugins</title></head>
<body><div id="app"></div><script type="module" src="/src/main.js"></script></body></html>
EOF
# Each config takes the plugin's options from KILN_OPTIONS (JSON), writes
# the summary the plugin reports (onSummary) to KILN_SUMMARY and, with
# KILN_DANGLE, leaves a dangling link in the output before kiln runs.
cat >"$A/vite.config.mjs" <<'EOF'
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import kiln from 'kiln-precompress/vite';

const options = JSON.parse(process.env.KILN_OPTIONS || '{}');
const dangle = {
  name: 'dangle',
  writeBundle(output) {
    if (process.env.KILN_DANGLE) symlinkSync('nowhere', path.join(output.dir, 'dangling.js'));
  },
};
export default {
  plugins: [kiln({ ...options, onSummary: (s) => writeFileSync(process.env.KILN_SUMMARY, JSON.stringify(s)) }), dangle],
};
EOF
cat >"$A/rollup.config.mjs" <<'EOF'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import kilnPlugin from 'kiln-precompress/rollup';

const options = JSON.parse(process.env.KILN_OPTIONS || '{}');
const css = {
  name: 'css',
  buildStart() {
    this.emitFile({ type: 'asset', fileName: 'assets/style.css', source: readFileSync('src/style.css') });
  },
  generateBundle() {
    if (process.env.KILN_DANGLE) symlinkSync('nowhere', 'rdist/dangling.js');
  },
};
export default {
  input: 'src/app.js',
  plugins: [css, kilnPlugin({ ...options, onSummary: (s) => writeFileSync(process.env.KILN_SUMMARY, JSON.stringify(s)) })],
  output: process.env.KILN_FILE ? { file: process.env.KILN_FILE, format: 'es' }
    : { dir: 'rdist', format: 'es', entryFileNames: '[name]-[hash].js' },
};
EOF
cat >"$A/webpack.config.cjs" <<'EOF'
const fs = require('fs');
const path = require('path');
const KilnPlugin = require('kiln-precompress/webpack');

const options = JSON.parse(process.env.KILN_OPTIONS || '{}');
module.exports = {
  mode: 'production',
  context: __dirname,
  entry: './src/wmain.js',
  output: { path: path.resolve(__dirname, 'wdist'), filename: '[name].[contenthash].js', clean: true },
  module: { rules: [{ test: /\.css$/, type: 'asset/resource' }] },
  plugins: [new KilnPlugin({ ...options, onSummary: (s) => fs.writeFileSync(process.env.KILN_SUMMARY, JSON.stringify(s)) })],
};
EOF

# build NAME OPTIONS_JSON [ENV...]: build with bundler NAME (vite, rollup,
# webpack) from an emptied output directory; the log is $T/NAME.log, the
# summary $T/NAME.json (removed first), the exit status $status.
declare -A outdir=([vite]=dist [rollup]=rdist [webpack]=wdist)
declare -A command=(
	[vite]='node node_modules/vite/bin/vite.js build'
	[rollup]='node node_modules/rollup/dist/bin/rollup -c rollup.config.mjs'
	[webpack]='node node_modules/webpack-cli/bin/cli.js --config webpack.config.cjs'
)
build() {
	local name=$1 options=$2
	shift 2
	rm -rf "${A:?}/${outdir[$name]}" "$T/$name.json"
	mkdir -p "$A/${outdir[$name]}"
	(cd "$A" && env NO_COLOR=1 KILN_OPTIONS="$options" KILN_SUMMARY="$T/$name.json" "$@" timeout 300 ${command[$name]}) >"$T/$name.log" 2>&1
	status=$?
}
# js FILE EXPR: EXPR about s, FILE's JSON, is true.
js() { node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(eval(process.argv[2]) ? 0 : 1)' "$1" "$2"; }
siblings() { find "$1" \( -type f -o -type l \) \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) | sort; }
# (not kiln's index beside the manifest: it holds each file's inode and
# ctime, which a build from an emptied directory changes, and nothing served)
digest() { (cd "$1" && find . -type f ! -name '.kiln-manifest.json.index' -print0 | sort -z | xargs -0 sha256sum); }
# The scripts under DIR with the app's text in them that have a .gz.
text_scripts() { find "$1" -name '*.js' -type f -exec grep -l 'glaze' {} + | while read -r f; do [ -f "$f.gz" ] && echo "$f"; done; }
entries() { find "$1" -type f 2>/dev/null | wc -l; }

# What kiln itself says, to find in the builds' logs.
"$KILN" --gzip-level=13 -- "$A/src" 2>"$T/usage.err" >/dev/null
usage_line=$(head -n 1 "$T/usage.err")
check "kiln refuses gzip level 13 ($usage_line)" [ -n "$usage_line" ]
mkdir -p "$T/dl"
ln -s nowhere "$T/dl/dangling.js"
"$KILN" -q --follow-symlinks -- "$T/dl" 2>"$T/dl.err"
dangling_reason=$(sed -n "s|^kiln: $T/dl/dangling.js: ||p" "$T/dl.err" | head -n 1)
check "kiln refuses a dangling link with --follow-symlinks ($dangling_reason)" [ -n "$dangling_reason" ]
real_platform=$(node -p 'process.platform + "-" + process.arch')
cat >"$T/darwin.cjs" <<'EOF'
// process.platform is darwin to kiln-precompress's lib/platform.js alone.
const real = process.platform;
Object.defineProperty(process, 'platform', {
  get() { return /kiln-precompress[/\\]lib[/\\]platform\.js/.test(new Error().stack) ? 'darwin' : real; },
});
EOF

# The WebAssembly kiln's package, which the launcher runs where no native
# one is installed, set aside (a platform with no kiln at all) and back.
wasm_away() { [ ! -d "$A/node_modules/$WASM_NAME" ] || mv "$A/node_modules/$WASM_NAME" "$T/wasm-away"; }
wasm_back() { [ ! -d "$T/wasm-away" ] || mv "$T/wasm-away" "$A/node_modules/$WASM_NAME"; }

# bundler NAME BROTLI CACHE_OPTION CACHE_DIR: the whole round for one
# bundler (CACHE_OPTION: the cache option's JSON, or "" for the default).
bundler() {
	local name=$1 brotli=$2 cache=$3 cdir=$4 out=$A/${outdir[$1]} opts n gz br first second
	opts="{\"brotli\": $brotli${cache:+, \"cache\": $cache}}"
	build "$name" "$opts"
	must "$name: builds with the plugin ($opts)" "$T/$name.log" [ "$status" -eq 0 ]
	cp "$T/$name.log" "$T/$name.1.log"
	cp "$T/$name.json" "$T/$name.1.json"
	gz=$(siblings "$out" | grep -c '\.gz$')
	br=$(siblings "$out" | grep -c '\.br$')
	n=$(siblings "$out" | wc -l)
	check "$name: .gz siblings were written ($gz)" [ "$gz" -ge 2 ]
	if [ "$brotli" = true ]; then
		check "$name: .br siblings were written ($br)" [ "$br" -gt 0 ]
	else
		check "$name: no .br without brotli" [ "$br" -eq 0 ]
	fi
	check "$name: the script with the app's text has a sibling" [ -n "$(text_scripts "$out")" ]
	check "$name: the stylesheet has a sibling" [ -n "$(find "$out" -name '*.css.gz')" ]
	while read -r s; do
		check "$name: ${s#"$A"/} decodes to the file built" decodes_to "$s" "${s%.*}"
	done < <(siblings "$out")
	check "$name: kiln check passes on the output" "$A/node_modules/.bin/kiln" check -q "$out"
	check "$name: the plugin's summary: no errors, a sibling written for each on disk ($n)" \
		js "$T/$name.json" "s.command === 'compress' && s.error_count === 0 && s.written === $n"
	check "$name: kiln's summary line is in the build's log, with the summary's count" \
		grep -qE "kiln: $(node -p "require('$T/$name.json').assets") assets?: " "$T/$name.log"
	check "$name: a fresh cache: nothing came from it" js "$T/$name.json" 's.from_cache === 0'
	first=$(entries "$cdir")
	check "$name: the cache ${cdir#"$A"/} has entries ($first)" [ "$first" -gt 0 ]
	digest "$out" >"$T/$name.digest"

	# Again, from an emptied output directory: everything from the cache.
	build "$name" "$opts"
	must "$name: builds again" "$T/$name.log" [ "$status" -eq 0 ]
	check "$name: second build: every sibling from the cache" \
		js "$T/$name.json" "s.written === $n && s.from_cache === $n && s.error_count === 0"
	check "$name: ... the summary line says so" grep -qE "siblings? written \($n from the cache\)" "$T/$name.log"
	check "$name: ... the same files as the first build" cmp -s "$T/$name.digest" <(digest "$out")
	second=$(entries "$cdir")
	check "$name: ... and the cache did not grow" [ "$second" -eq "$first" ]

	# A value kiln refuses when it runs.
	build "$name" "{\"brotli\": $brotli, \"gzipLevel\": 13}"
	check "$name: gzipLevel 13 fails the build" [ "$status" -ne 0 ]
	check "$name: ... with kiln's message" grep -qF -- "$usage_line" "$T/$name.log"
	check "$name: ... and no sibling" [ -z "$(siblings "$out")" ]

	# No native binary for the platform: the WebAssembly kiln runs, when its
	# package is installed (npm-pack packed it); without it, none.
	if [ -d "$A/node_modules/$WASM_NAME" ]; then
		build "$name" '{"brotli": true, "cache": false}' NODE_OPTIONS="--require $T/darwin.cjs"
		check "$name: no native binary for the platform: the WebAssembly kiln runs, the build succeeds" [ "$status" -eq 0 ]
		check "$name: ... and writes the siblings" [ -n "$(siblings "$out")" ]
	fi
	wasm_away
	build "$name" '{"brotli": true, "optional": true}' NODE_OPTIONS="--require $T/darwin.cjs"
	check "$name: optional, no binary for the platform: the build succeeds" [ "$status" -eq 0 ]
	check "$name: ... with one warning naming the platform" \
		[ "$(grep -c 'kiln: warning: .*no native kiln for darwin-' "$T/$name.log")" -eq 1 ]
	check "$name: ... the bundler's own native parts still ran on $real_platform" [ -n "$(find "$out" -name '*.js')" ]
	check "$name: ... and no sibling" [ -z "$(siblings "$out")" ]
	check "$name: ... and no summary" [ ! -e "$T/$name.json" ]
	build "$name" '{"brotli": true}' NODE_OPTIONS="--require $T/darwin.cjs"
	check "$name: not optional: the build fails" [ "$status" -ne 0 ]
	check "$name: ... naming the platform" grep -q 'no native kiln for darwin-' "$T/$name.log"
	wasm_back
}

bundler rollup false '"build-cache/kiln"' "$A/build-cache/kiln"
check "rollup: cache given: the default one is not made" [ ! -e "$A/node_modules/.cache/kiln" ]
check "rollup: the summary line came through this.info" grep -q '^\[plugin kiln\] kiln: [0-9]* assets*: ' "$T/rollup.1.log"
bundler vite true '' "$A/node_modules/.cache/kiln"
(cd "$A" && KILN_OPTIONS='{}' KILN_SUMMARY="$T/quiet.json" node node_modules/vite/bin/vite.js build --logLevel warn) >"$T/quiet.log" 2>&1
check "vite --logLevel warn: kiln ran" js "$T/quiet.json" 's.error_count === 0 && s.assets > 0'
check "... and its summary line went through Vite's logger: not shown" not grep -q '^kiln: ' "$T/quiet.log"
bundler webpack true '' "$A/node_modules/.cache/kiln"
check "webpack: the summary line came through the infrastructure logger" grep -q '^<i> \[kiln\] kiln: ' "$T/webpack.1.log"
wasm_away
build webpack '{"brotli": true, "optional": true}' NODE_OPTIONS="--require $T/darwin.cjs"
wasm_back
check "webpack: optional: webpack counts one warning" grep -q 'compiled with 1 warning' "$T/webpack.log"

# Only a build writes what a server sends: webpack in watch mode (as under
# webpack serve, whose dev server writes to memory) does not run kiln, and
# neither does a Vite server-side bundle (vite build --ssr).
cat >"$A/watch-once.cjs" <<'EOF'
const webpack = require('webpack');
const compiler = webpack(require('./webpack.config.cjs'));
const watching = compiler.watch({}, (err, stats) => {
  watching.close(() => process.exit(err || stats.hasErrors() ? 1 : 0));
});
EOF
rm -rf "$A/wdist"
(cd "$A" && KILN_OPTIONS='{"brotli": true}' KILN_SUMMARY="$T/watch.json" timeout 120 node watch-once.cjs) >"$T/watch.log" 2>&1
check "webpack watch mode: the build succeeds" [ $? -eq 0 ]
check "webpack watch mode: the bundle is written" [ -n "$(find "$A/wdist" -name '*.js')" ]
check "webpack watch mode: kiln did not run (no sibling, no summary)" [ -z "$(siblings "$A/wdist")" -a ! -e "$T/watch.json" ]
rm -rf "$A/sdist" "$T/ssr.json"
(cd "$A" && NO_COLOR=1 KILN_OPTIONS='{}' KILN_SUMMARY="$T/ssr.json" timeout 300 node node_modules/vite/bin/vite.js build --ssr src/app.js --outDir sdist) >"$T/ssr.log" 2>&1
check "vite build --ssr: succeeds" [ $? -eq 0 ]
check "vite build --ssr: the server bundle is written" [ -n "$(find "$A/sdist" -name '*.js' -o -name '*.mjs')" ]
check "vite build --ssr: kiln did not run on it" [ -z "$(siblings "$A/sdist")" -a ! -e "$A/sdist/kiln-manifest.json" -a ! -e "$T/ssr.json" ]

# artifacts: resolved from the project's root and made on the first build
rm -rf "$A/kiln-art"
build vite '{"artifacts": "kiln-art"}'
check "vite, artifacts: builds, the directory made" [ "$status" -eq 0 -a -d "$A/kiln-art" ]
check "vite, artifacts: the manifest there, none in the output" \
	[ -s "$A/kiln-art/kiln-manifest.json" -a ! -e "$A/dist/kiln-manifest.json" -a ! -e "$A/dist/kiln.nginx.conf" ]
check "vite, artifacts: siblings written" [ -n "$(siblings "$A/dist")" ]
rm -rf "$A/kiln-art"

# cache: false: no cache, everything encoded.
before=$(entries "$A/node_modules/.cache/kiln")
build webpack '{"brotli": true, "cache": false}'
check "webpack, cache: false: builds" [ "$status" -eq 0 ]
check "... nothing from a cache" js "$T/webpack.json" 's.written > 0 && s.from_cache === 0'
check "... and the default cache untouched" [ "$(entries "$A/node_modules/.cache/kiln")" -eq "$before" ]

# Dangling links with followSymlinks: kiln's error fails the build.
for name in vite rollup; do
	build "$name" '{"followSymlinks": true}' KILN_DANGLE=1
	check "$name: a dangling link with followSymlinks fails the build" [ "$status" -ne 0 ]
	check "$name: ... with kiln's line about it" \
		grep -qF "kiln: $A/${outdir[$name]}/dangling.js: $dangling_reason" "$T/$name.log"
done

# An output in the project's root: kiln would compress all of the project.
build rollup '{}' KILN_FILE=bundle.js
check "rollup: output.file in the project's root fails the build" [ "$status" -ne 0 ]
check "... saying why" grep -q "kiln-precompress: the output directory $A holds the project" "$T/rollup.log"
check "... and kiln did not run: no sibling in the project" [ -z "$(siblings "$A/src")" ]
check "... no manifest" [ ! -e "$A/kiln-manifest.json" ]
rm -f "$A/bundle.js"
build rollup '{}' KILN_FILE=out/bundle.js
check "rollup: output.file in a directory of its own: kiln runs on that directory" decodes_to "$A/out/bundle.js.gz" "$A/out/bundle.js"

# The configs of the package README and of docs/install.md, as they are
# (tests/docs/commands.py takes them out): Vite's, then webpack's (its
# defaults: src/index.js into dist/), with .gz and .br siblings; the
# README's Vite output served by nginx with kiln's snippets to headless
# Chromium (serve_to_chromium, tests/e2e/lib.sh).  The README is the one
# the package installed.
DOC="/usr/bin/python3 $SRC/tests/docs/commands.py $SRC"
check "the installed package's README is the source's" \
	cmp -s "$A/node_modules/$MAIN_NAME/README.md" "$SRC/packaging/npm/$MAIN_NAME/README.md"
$DOC get 'packaging/npm/kiln-precompress/README.md#vite-rollup-and-webpack-plugins:1' >"$A/readme.vite.config.mjs"
$DOC get 'packaging/npm/kiln-precompress/README.md#vite-rollup-and-webpack-plugins:2' >"$A/readme.webpack.config.cjs"
# docs/install.md shows both in one block, each after a "// FILE" line.
$DOC get 'docs/install.md#with-npm:2' >"$T/install.js"
awk '/^\/\/ vite\.config\.js/ { p = 1 } /^\/\/ webpack\.config\.js/ { p = 0 } p' "$T/install.js" >"$A/install.vite.config.mjs"
awk '/^\/\/ webpack\.config\.js/ { p = 1 } p' "$T/install.js" >"$A/install.webpack.config.cjs"
for f in readme install; do
	check "$f: a Vite config with the plugin" grep -q "from 'kiln-precompress/vite'" "$A/$f.vite.config.mjs"
	check "$f: a webpack config with the plugin" grep -q "require('kiln-precompress/webpack')" "$A/$f.webpack.config.cjs"
done
cp "$A/src/main.js" "$A/src/index.js"
for cfg in readme.vite readme.webpack install.vite install.webpack; do
	rm -rf "$A/dist"
	case $cfg in
	*.vite) (cd "$A" && node node_modules/vite/bin/vite.js build --config "$cfg.config.mjs") ;;
	*.webpack) (cd "$A" && node node_modules/webpack-cli/bin/cli.js --config "$cfg.config.cjs") ;;
	esac >"$T/$cfg.log" 2>&1
	check "the $cfg config builds" [ $? -eq 0 ]
	gz=$(siblings "$A/dist" | grep -c '\.gz$')
	check "... and writes .gz siblings ($gz)" [ "$gz" -gt 0 ]
	check "... and .br siblings (brotli: true)" [ "$(siblings "$A/dist" | grep -c '\.br$')" -gt 0 ]
	check "... that kiln check accepts" "$A/node_modules/.bin/kiln" check -q "$A/dist"
	# The Vite plugin's build, served by nginx to headless Chromium.
	if [ "$cfg" = readme.vite ]; then serve_to_chromium vite-nginx "$A/dist"; fi
done

# The entry points, ESM and CommonJS; options checked when the plugin is made.
cat >"$A/entries.mjs" <<'EOF'
import vite, { kiln as namedVite } from 'kiln-precompress/vite';
import rollup from 'kiln-precompress/rollup';
import KilnPlugin, { KilnPlugin as namedWebpack } from 'kiln-precompress/webpack';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const ok = typeof vite === 'function' && vite === rollup && vite === namedVite && KilnPlugin === namedWebpack &&
  vite === require('kiln-precompress/vite') && rollup === require('kiln-precompress/rollup') &&
  KilnPlugin === require('kiln-precompress/webpack') && typeof new KilnPlugin({ brotli: true }).apply === 'function';
const p = vite({ zstd: true });
process.exit(ok && p.name === 'kiln' && p.apply === 'build' && typeof p.closeBundle === 'function' ? 0 : 1);
EOF
check "the entry points: ESM and CommonJS give the same plugins" sh -c "cd '$A' && node entries.mjs"
throws() { # throws ENTRY EXPR WANT: EXPR (of plugin) throws a TypeError saying WANT
	(cd "$A" && node -e 'const plugin = require(process.argv[1]);
try { eval(process.argv[2]); } catch (e) { process.exit(e instanceof TypeError && e.message.includes(process.argv[3]) ? 0 : 2); }
process.exit(1);' "$1" "$2" "$3")
}
check "vite: a misspelled option throws (did you mean brotli?)" throws kiln-precompress/vite 'plugin({ brotly: true })' 'did you mean brotli?'
check "webpack: a misspelled option throws" throws kiln-precompress/webpack 'new plugin({ gzipLevl: 9 })' 'did you mean gzipLevel?'
check "rollup: a wrong type throws" throws kiln-precompress/rollup 'plugin({ gzipLevel: true })' 'gzipLevel'
check "vite: cache must be a path or a boolean" throws kiln-precompress/vite 'plugin({ cache: 5 })' 'cache'
check "webpack: log is refused (the bundler's logger)" throws kiln-precompress/webpack 'new plugin({ log: () => {} })' 'log'
check "vite: onSummary must be a function" throws kiln-precompress/vite 'plugin({ onSummary: 1 })' 'onSummary'
build vite '{"brotly": true}'
check "vite: a misspelled option fails the build" [ "$status" -ne 0 ]
check "... saying which" grep -q 'did you mean brotli?' "$T/vite.log"

# TypeScript: the declarations in config files typed against the bundlers.
cat >"$A/vite.config.ts" <<'EOF'
import { defineConfig, type Plugin } from 'vite';
import kiln from 'kiln-precompress/vite';
const p: Plugin = kiln({ brotli: true, zstd: true, cache: false });
export default defineConfig({
  plugins: [p, kiln({ optional: true, cache: 'node_modules/.cache/kiln', exclude: ['*.map'],
    onSummary: (s) => console.log(s.from_cache + s.written) })],
});
EOF
cat >"$A/rollup-config.mts" <<'EOF'
import type { RollupOptions, Plugin } from 'rollup';
import kiln, { type KilnPluginOptions } from 'kiln-precompress/rollup';
const options: KilnPluginOptions = { brotliQuality: 10, previous: ['../current'], cache: true };
const p: Plugin = kiln(options);
const config: RollupOptions = { input: 'src/app.js', plugins: [p, kiln()], output: { dir: 'rdist' } };
export default config;
EOF
cat >"$A/webpack-config.mts" <<'EOF'
import type { Configuration } from 'webpack';
import KilnPlugin from 'kiln-precompress/webpack';
const config: Configuration = { plugins: [new KilnPlugin({ brotli: true, minSize: '1K' }), new KilnPlugin()] };
export default config;
EOF
cat >"$A/webpack-config.cts" <<'EOF'
import type { Configuration } from 'webpack';
import KilnPlugin = require('kiln-precompress/webpack');
const options: KilnPlugin.Options = { optional: true, cache: false };
const config: Configuration = { plugins: [new KilnPlugin(options)] };
export = config;
EOF
cat >"$A/own.cts" <<'EOF'
import kiln = require('kiln-precompress/vite');
import rollup = require('kiln-precompress/rollup');
import KilnPlugin = require('kiln-precompress/webpack');
const p: kiln.Plugin = kiln({ brotli: true });
const q: rollup.Plugin = rollup({ zstd: true });
const w = new KilnPlugin({ onSummary: (s) => console.log(s.error_count) });
console.log(p.apply === 'build', q.name, w);
EOF
printf 'import kiln from "kiln-precompress/vite";\nkiln({ brotly: true });\n' >"$A/bad-name.mts"
printf 'import KilnPlugin = require("kiln-precompress/webpack");\nnew KilnPlugin({ cache: 5 });\n' >"$A/bad-cache.cts"
printf 'import kiln from "kiln-precompress/rollup";\nkiln({ log: (line: string) => console.log(line) });\n' >"$A/bad-log.mts"
printf 'import kiln from "kiln-precompress/vite";\nkiln({ gzipLevel: [9] });\n' >"$A/bad-type.mts"
# tsc FILE [SKIPLIBCHECK]: tsc --noEmit on FILE alone.
tsc() {
	printf '{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "strict": true, "noEmit": true, "types": [], "skipLibCheck": %s }, "files": ["%s"] }\n' \
		"${2:-false}" "$1" >"$A/tsconfig.check.json"
	(cd "$A" && node node_modules/typescript/bin/tsc -p tsconfig.check.json) >"$T/tsc.out" 2>&1
}
# The bundlers' own declarations are theirs to check (skipLibCheck); ours
# are checked by own.cts and the failing files.
for f in vite.config.ts rollup-config.mts webpack-config.mts webpack-config.cts; do
	tsc "$f" true
	check "tsc --noEmit passes on $f (the bundler's types)" [ $? -eq 0 ]
	[ -s "$T/tsc.out" ] && cat "$T/tsc.out" >&2
done
tsc own.cts
check "tsc --noEmit passes on own.cts (no skipLibCheck)" [ $? -eq 0 ]
[ -s "$T/tsc.out" ] && cat "$T/tsc.out" >&2
while read -r f why; do
	tsc "$f"
	check "tsc --noEmit fails on $f" [ $? -ne 0 ]
	check "... saying $why" grep -qF "$why" "$T/tsc.out"
done <<'EOF'
bad-name.mts 'brotly' does not exist
bad-cache.cts Type 'number' is not assignable
bad-log.mts 'log' does not exist
bad-type.mts Type 'number[]' is not assignable
EOF

finish
