#!/usr/bin/env bash
# site.sh - kiln over the example site: the outcome of every file, siblings
# that decode to their sources, gzip bytes equal to libdeflate-gzip's,
# mode and mtime copied, sources untouched, same bytes on every run and for
# any number of jobs.
. "$(dirname "$0")/lib.sh"

# What each fixture file must become, worked out from what the file is
# (see fixtures/README.md), not from kiln's output.
compressed=(
	"index.html" "about/index.html" "assets/app.css" "assets/app.js"
	"assets/vendor.min.js" "assets/logo.svg" "assets/app.js.map"
	"data/products.json" "data/feed.xml" "docs/getting started.html"
	"docs/café.html" "manifest.webmanifest"
)
media=("img/photo.png" "img/logo.txt" "fonts/site.woff2" "downloads/archive.tar.gz")
small=("robots.txt" "assets/tiny.js")
nogain=("data/random.bin")

fresh_site "$T/a"
before=$(sources_digest "$T/a")
"$KILN" --brotli --verify -v --no-progress "$T/a" 2>"$T/a.log"
check "exit status 0 on the example site" [ $? -eq 0 ]

for f in "${compressed[@]}"; do
	check "$f: gzip sibling" [ -f "$T/a/$f.gz" ]
	check "$f: brotli sibling" [ -f "$T/a/$f.br" ]
	check "$f.gz decodes to its source" decodes_to "$T/a/$f.gz" "$T/a/$f"
	check "$f.br decodes to its source" decodes_to "$T/a/$f.br" "$T/a/$f"
	check "$f.gz is libdeflate-gzip -12's bytes" \
		cmp -s "$T/a/$f.gz" <(libdeflate-gzip -12 -c <"$T/a/$f")
	check "$f: reported compressed" grep -qF -- "/$f: compressed" "$T/a.log"
	src_stat="$(stat -c %a -- "$T/a/$f") $(mtime_of "$T/a/$f")"
	for s in gz br; do
		check "$f.$s: mode and mtime of the source" \
			[ "$(stat -c %a -- "$T/a/$f.$s") $(mtime_of "$T/a/$f.$s")" = "$src_stat" ]
	done
done
for f in "${media[@]}"; do
	check "$f: no gzip sibling (media)" [ ! -e "$T/a/$f.gz" ]
	check "$f: no brotli sibling (media)" [ ! -e "$T/a/$f.br" ]
	check "$f: reported media" grep -qF -- "/$f: media" "$T/a.log"
done
for f in "${small[@]}"; do
	check "$f: no sibling (small)" [ ! -e "$T/a/$f.gz" ]
	check "$f: no sibling (small)" [ ! -e "$T/a/$f.br" ]
	check "$f: reported small" grep -qF -- "/$f: small" "$T/a.log"
done
for f in "${nogain[@]}"; do
	check "$f: no sibling (no-gain)" [ ! -e "$T/a/$f.gz" ]
	check "$f: no sibling (no-gain)" [ ! -e "$T/a/$f.br" ]
	check "$f: reported no-gain" grep -qF -- "/$f: no-gain" "$T/a.log"
done
check "no temporary file left" [ -z "$(find "$T/a" -name '.kiln-*' ! -name .kiln-manifest.json.index)" ]
check "sources byte-identical after the run" [ "$(sources_digest "$T/a")" = "$before" ]
nfiles=$(find "$FIXTURES/site" -type f | wc -l)
nsib=$(find "$T/a" -name '*.gz' ! -name archive.tar.gz -o -name '*.br' | wc -l)
check "summary counts every asset, and the siblings written apart" grep -qE "^kiln: $nfiles assets: ${#compressed[@]} compressed, ${#media[@]} media, ${#small[@]} small, ${#nogain[@]} no-gain; $nsib siblings written; gzip " "$T/a.log"

# The second run sees its own siblings as siblings, never as inputs, and
# rewrites identical bytes.
first=$(tree_digest "$T/a")
"$KILN" --brotli -q "$T/a"
check "second run exits 0" [ $? -eq 0 ]
check "second run: identical tree" [ "$(tree_digest "$T/a")" = "$first" ]
check "no .gz.gz" [ -z "$(find "$T/a" -name '*.gz.gz' -o -name '*.br.gz' -o -name '*.gz.br')" ]

# Output does not depend on the number of jobs, nor on the run.
for j in 1 4; do
	fresh_site "$T/j$j"
	"$KILN" --brotli -q -j "$j" "$T/j$j"
	check "-j$j exits 0" [ $? -eq 0 ]
done
check "-j1 and -j4 give identical trees" [ "$(tree_digest "$T/j1")" = "$(tree_digest "$T/j4")" ]
check "-j1 and the default give identical trees" [ "$(tree_digest "$T/j1")" = "$first" ]

# Quiet in CI: nothing on stderr with -q, no progress line when not a tty.
fresh_site "$T/q"
"$KILN" -q "$T/q" 2>"$T/q.log"
check "-q prints nothing on success" [ ! -s "$T/q.log" ]
fresh_site "$T/n"
"$KILN" "$T/n" 2>"$T/n.log"
check "no progress line when stderr is not a terminal" not grep -q $'\r' "$T/n.log"
check "one summary line by default" [ "$(wc -l <"$T/n.log")" -eq 1 ]
"$KILN" --progress "$T/n" 2>"$T/p.log"
check "--progress forces the progress line" grep -q $'\r' "$T/p.log"

# --dry-run writes nothing but reports the same decisions.
fresh_site "$T/d"
before=$(tree_digest "$T/d")
"$KILN" --brotli -n -v "$T/d" 2>"$T/d.log"
check "--dry-run exits 0" [ $? -eq 0 ]
check "--dry-run writes nothing" [ "$(tree_digest "$T/d")" = "$before" ]
for f in "${compressed[@]}"; do
	check "--dry-run reports $f compressed" grep -qF -- "/$f: compressed" "$T/d.log"
done

# gzip only by default, --no-gzip --brotli for brotli only.
fresh_site "$T/g"
"$KILN" -q "$T/g"
check "default writes no .br" [ -z "$(find "$T/g" -name '*.br')" ]
check "default writes .gz" [ -f "$T/g/index.html.gz" ]
fresh_site "$T/b"
"$KILN" -q --no-gzip --brotli "$T/b"
check "--no-gzip writes no .gz" [ -z "$(find "$T/b" -name '*.gz' ! -name archive.tar.gz)" ]
check "--no-gzip --brotli writes .br" decodes_to "$T/b/index.html.br" "$T/b/index.html"

# --gzip-level and --brotli-quality change the bytes, still decode.
fresh_site "$T/l"
"$KILN" -q --gzip-level 1 "$T/l"
check "level 1 differs from level 12" not cmp -s "$T/l/assets/app.js.gz" "$T/a/assets/app.js.gz"
check "level 1 is libdeflate-gzip -1's bytes" cmp -s "$T/l/assets/app.js.gz" <(libdeflate-gzip -1 -c <"$T/l/assets/app.js")
# (quality 1 is larger than gzip here, so beside a .gz the .br would be dropped)
fresh_site "$T/q"
"$KILN" -q --no-gzip --brotli --brotli-quality 1 "$T/q"
check "quality 1 differs from quality 11" not cmp -s "$T/q/assets/app.js.br" "$T/a/assets/app.js.br"
check "quality 1 decodes" decodes_to "$T/q/assets/app.js.br" "$T/q/assets/app.js"

# --min-size and --max-ratio move files between outcomes.
fresh_site "$T/m"
"$KILN" -v -n --min-size 0 "$T/m" 2>"$T/m.log"
check "--min-size 0: nothing is small" not grep -q ': small' "$T/m.log"
"$KILN" -v -n --min-size 100000 "$T/m" 2>"$T/m.log"
check "--min-size 100000: index.html is small" grep -qF '/index.html: small' "$T/m.log"
fresh_site "$T/r"
"$KILN" -q --max-ratio 0.01 "$T/r"
check "--max-ratio 0.01 keeps nothing" [ -z "$(find "$T/r" -name '*.gz' ! -name archive.tar.gz)" ]

finish
