#!/usr/bin/env bash
# small.sh - kiln's immutable files on small real builds, where a directory
# holds a handful of outputs and the tree's shapes have little to go on.
# Vite 8: six apps of app.py (1 or 2 lazily loaded pages: 2 to 4 chunks, a
# style sheet or two, an image or two), each with a public/assets/ folder
# of names a site ships (font weights, brands in capitals, camera files,
# badges, people, product codes), copied by Vite into dist/assets beside
# its outputs; kiln must
# mark exactly what Vite's manifest lists, from the tree alone and with the
# manifest.  webpack 5: eight builds of one or two outputs
# ([contenthash:8]: a script, or a script and its style sheet), with
# public/ copied beside them; kiln must mark exactly what webpack's stats
# call immutable, from the tree alone.  esbuild: four builds of an entry
# and one or two pages, each an entry point at the top of the output with
# its hash ("[name]-[hash]"), the public/ files beside them; kiln must mark
# exactly esbuild's metafile's outputs.  One Node process builds each
# bundler's apps, so the whole test takes seconds.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

# Files a site copies from public/assets, named the way real ones are.
public_assets() { # public_assets DIR
	local f
	mkdir -p "$1/public/assets"
	for f in Inter-SemiBold.woff2 Inter-Variable.woff2 Roboto-BoldItalic.woff2 icon-FACEBOOK.svg \
		icon-LINKEDIN.svg photo-DSC01234.jpg photo-DSC_0042.jpg photo-IMG_2041.jpg \
		badge-appstore.svg badge-playstore.svg logo-maskable.png hero-portrait.jpg \
		brand-DarkMode.svg team-TomHanks.jpg team-XuLiPing.jpg speaker-OConnorP.jpg \
		brand-ReactDOM.svg logo-GitHubCI.svg item-iPad10th.jpg cam-ILCE7M4K.jpg \
		badge-MP3AUDIO.svg promo-Q3FY24aa.jpg flag-en_GB_v2.svg; do
		python3 -c "import sys; sys.stdout.write(('%s ' % sys.argv[1]) * 200)" "$f" \
			>"$1/public/assets/$f"
	done
}

# ---- Vite
roots=()
n=0
for pages in 1 2; do
	for seed in 1 2 3; do
		n=$((n + 1))
		A=$T/vite$n
		app vite $((seed + 10 * pages)) "$pages" "$A"
		public_assets "$A"
		roots+=("$A")
	done
done
cat >"$T/vite-build.mjs" <<'JS'
import { build } from 'vite';
for (const root of process.argv.slice(2))
  await build({ root, configFile: false, logLevel: 'warn',
                build: { manifest: true, assetsInlineLimit: 0 } });
JS
ln -sfn "$BUNDLERS" "$T/node_modules"
must "vite builds six small apps" "$T/vite.log" \
	eval '(cd "$T" && timeout 120 node vite-build.mjs "${roots[@]}") >"$T/vite.log" 2>&1'
for i in $(seq 1 $n); do
	D=$T/vite$i/dist
	python3 - "$D/.vite/manifest.json" >"$T/vhashed$i" <<'PY'
import json, sys
out = set()
for e in json.load(open(sys.argv[1])).values():
    out.add(e["file"])
    out.update(e.get("css", []))
    out.update(e.get("assets", []))
print("\n".join(sorted(out)))
PY
	chunks=$(grep -c '\.js$' "$T/vhashed$i")
	check "vite app $i: 2 to 4 chunks" [ "$chunks" -ge 2 -a "$chunks" -le 4 ]
	mv "$D/.vite" "$T/vmeta$i"
	check "kiln on small vite app $i (no manifest)" "$KILN" -q "$D"
	tree_check "small vite app $i, the tree alone" "$D" "$T/vhashed$i" name tree
	mv "$T/vmeta$i" "$D/.vite"
	check "kiln on small vite app $i (Vite's manifest in it)" "$KILN" -q "$D"
	hashed_check "small vite app $i, with .vite/manifest.json" "$D" "$T/vhashed$i" name bundler
done

# ---- webpack: one output, or a script and its style sheet
W=$T/webpack
mkdir -p "$W"
ln -sfn "$BUNDLERS" "$W/node_modules"
python3 - "$W" <<'PY'
import os, random, sys
w = sys.argv[1]
configs = []
for i in range(8):
    rng = random.Random(f"kiln-small-webpack-{i}")
    src = os.path.join(w, f"src{i}")
    os.makedirs(src, exist_ok=True)
    css = i % 2 == 1
    with open(os.path.join(src, "main.js"), "w") as f:
        if css:
            f.write("import './main.css';\n")
        f.write(f"export const n = {rng.randrange(1 << 30)};\n"
                f"document.title = 'app {i} ' + n + {[rng.randrange(1 << 20) for _ in range(40)]!r}.length;\n")
    if css:
        with open(os.path.join(src, "main.css"), "w") as f:
            f.write("".join(f".c{j} {{ margin: {rng.randrange(40)}px; }}\n" for j in range(30)))
    configs.append(f"""{{
    mode: 'production', context: __dirname, entry: {{ main: './src{i}/main.js' }},
    output: {{ filename: 'static/js/[name].[contenthash:8].js', path: __dirname + '/dist{i}', clean: true }},
    module: {{ rules: [{{ test: /\\.css$/, use: [MiniCssExtractPlugin.loader, 'css-loader'] }}] }},
    plugins: [new MiniCssExtractPlugin({{ filename: 'static/css/[name].[contenthash:8].css' }})],
    performance: {{ hints: false }},
  }}""")
with open(os.path.join(w, "webpack.config.js"), "w") as f:
    f.write("const MiniCssExtractPlugin = require('mini-css-extract-plugin');\n"
            "module.exports = [\n  " + ",\n  ".join(configs) + "\n];\n")
PY
must "webpack builds eight small apps" "$T/webpack.log" \
	eval '(cd "$W" && timeout 120 node node_modules/webpack-cli/bin/cli.js --json="$T/wstats.json") >"$T/webpack.log" 2>&1'
for i in $(seq 0 7); do
	D=$W/dist$i
	python3 - "$T/wstats.json" "$i" >"$T/whashed$i" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
child = stats["children"][int(sys.argv[2])]
print("\n".join(sorted(a["name"] for a in child["assets"] if a.get("info", {}).get("immutable"))))
PY
	outputs=$(wc -l <"$T/whashed$i")
	check "webpack app $i: one or two outputs" [ "$outputs" -ge 1 -a "$outputs" -le 2 ]
	mkdir -p "$D/assets"
	cp "$T/vite1/public/assets/"* "$D/assets/"
	cp "$T/vite1/public/robots.txt" "$T/vite1/public/favicon.ico" "$D/"
	printf '<!doctype html><title>app %s</title>\n' "$i" >"$D/index.html"
	check "kiln on small webpack app $i" "$KILN" -q "$D"
	tree_check "small webpack app $i, the tree alone" "$D" "$T/whashed$i" name tree
	python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["children"][int(sys.argv[2])], open(sys.argv[3], "w"))' \
		"$T/wstats.json" "$i" "$T/wstats$i.json"
	check "kiln --fingerprints on small webpack app $i" "$KILN" -q --fingerprints "$T/wstats$i.json" "$D"
	hashed_check "small webpack app $i, --fingerprints stats" "$D" "$T/whashed$i" name bundler
done

# ---- esbuild: an entry, its style sheet and image, and one or two pages
# as entry points of their own, at the top of the output ([name]-[hash])
roots=()
for i in 1 2 3 4; do
	A=$T/esbuild$i
	app esbuild $((20 + i)) $((i % 2 + 1)) "$A"
	roots+=("$A")
done
cat >"$T/esbuild-build.js" <<'JS'
const esbuild = require('esbuild');
const fs = require('fs');
(async () => {
  for (const root of process.argv.slice(2)) {
    const pages = fs.readdirSync(root + '/src/pages').filter(f => f.endsWith('.js'))
      .map(f => root + '/src/pages/' + f);
    const r = await esbuild.build({
      entryPoints: [root + '/src/main.js', ...pages], outdir: root + '/dist', outbase: root + '/src',
      bundle: true, splitting: true, format: 'esm', entryNames: '[name]-[hash]',
      chunkNames: 'chunks/[name]-[hash]', assetNames: 'assets/[name]-[hash]',
      loader: { '.svg': 'file' }, metafile: true, logLevel: 'warning',
    });
    fs.writeFileSync(root + '/meta.json', JSON.stringify(r.metafile));
  }
})().catch(e => { console.error(e); process.exit(1); });
JS
must "esbuild builds four small apps" "$T/esbuild.log" \
	eval '(cd "$T" && timeout 120 node esbuild-build.js "${roots[@]}") >"$T/esbuild.log" 2>&1'
for i in 1 2 3 4; do
	A=$T/esbuild$i
	D=$A/dist
	cp -r "$A/public/." "$D/"
	cp "$T/vite1/public/assets/"* "$D/"
	python3 - "$A/meta.json" "esbuild$i/dist/" >"$T/ehashed$i" <<'PY'
import json, sys
outputs = json.load(open(sys.argv[1]))["outputs"]  # relative to where esbuild ran
assert all(k.startswith(sys.argv[2]) for k in outputs), list(outputs)[:3]
print("\n".join(sorted(k[len(sys.argv[2]):] for k in outputs)))
PY
	check "kiln on small esbuild app $i" "$KILN" -q "$D"
	tree_check "small esbuild app $i, the tree alone" "$D" "$T/ehashed$i" name tree
	check "kiln --fingerprints on small esbuild app $i" "$KILN" -q --fingerprints "$A/meta.json" "$D"
	hashed_check "small esbuild app $i, --fingerprints meta.json" "$D" "$T/ehashed$i" name bundler
done
tally_check small 50
took
finish
