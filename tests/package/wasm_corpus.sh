#!/usr/bin/env bash
# wasm_corpus.sh - the WebAssembly kiln (KILN_WASM_BUILD, under Node.js)
# against the native kiln KILN on a real tree: the small corpus
# (tests/corpus.sh DEST small: the dist folders of Bootstrap, KaTeX,
# Leaflet and jQuery from their pinned npm tarballs, 143 files of scripts,
# style sheets, fonts, images and maps).  Both kilns, each on its own copy
# with every coding (--brotli --zstd) and their own default of threads,
# write the same siblings, manifest and snippet, byte for byte; the
# WebAssembly kiln's tree passes audit.py (the first invariant, mtimes to
# the microsecond) and its own `kiln check`; an unchanged re-run of each
# writes nothing; after the same source changes in both copies, both
# re-runs write the same bytes again.  wasm.sh does the same with --best
# on the example site and a generated tree.
# Skipped (exit 77) when Emscripten is not installed.
. "$(dirname "$0")/../e2e/lib.sh"
W=${KILN_WASM_BUILD:?KILN_WASM_BUILD must name the WebAssembly build}
if ! command -v emcc >/dev/null; then
	echo "wasm_corpus.sh: skipped: no Emscripten (apt-get install emscripten)" >&2
	rm -rf "$T"
	exit 77
fi
[ -f "$W/kiln.js" ] || { echo "wasm_corpus.sh: no $W/kiln.js (packaging/wasm/build.sh SRC $W)" >&2; exit 1; }
WK() { node "$W/kiln.js" "$@"; }
jfield() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
export KILN_MTIME_RESOLUTION_NS=1000
unset KILN_CACHE_DIR CI_NODE_INDEX CI_NODE_TOTAL
OPTS=(--brotli --zstd --no-progress)

bash "$(dirname "$0")/../corpus.sh" "$T/src" small 2>"$T/corpus.log"
must "the small corpus is built (npm)" "$T/corpus.log" [ -d "$T/src" ]
nfiles=$(find "$T/src" -type f | wc -l)
check "the corpus is the small one (over 100 files)" [ "$nfiles" -gt 100 ]
cp -a "$T/src" "$T/n"
cp -a "$T/src" "$T/w"

# same: both trees hold the same bytes in every file, siblings were written
same() {
	[ "$(tree_digest "$T/n")" = "$(tree_digest "$T/w")" ] ||
		{ diff <(tree_digest "$T/n") <(tree_digest "$T/w") >&2; return 1; }
}

"$KILN" -q "${OPTS[@]}" "$T/n" 2>"$T/n.err"
must "the native kiln compresses the corpus" "$T/n.err" [ $? -eq 0 ]
WK -q "${OPTS[@]}" "$T/w" 2>"$T/w.err"
must "the WebAssembly kiln compresses the corpus" "$T/w.err" [ $? -eq 0 ]
check "... siblings of every coding were written" \
	[ "$(find "$T/w" -name '*.br' | wc -l)" -gt 50 ] && [ "$(find "$T/w" -name '*.zst' | wc -l)" -gt 50 ] &&
	[ "$(find "$T/w" -name '*.gz' | wc -l)" -gt 50 ]
check "... the same bytes as the native kiln: siblings, manifest, snippet" same
check "... which decode to their sources (the first invariant: audit.py)" \
	/usr/bin/python3 "$(dirname "$0")/../e2e/audit.py" "$T/w" --quiet
WK check -q "$T/w"
check "... its own kiln check passes" [ $? -eq 0 ]

for k in n w; do
	if [ $k = n ]; then "$KILN" --json "${OPTS[@]}" "$T/n"; else WK --json "${OPTS[@]}" "$T/w"; fi >"$T/rerun-$k.json" 2>/dev/null
	check "$k: an unchanged re-run writes nothing" [ "$(jfield "$T/rerun-$k.json" 'd["written"]')" = 0 ]
done
check "... the same bytes still" same

for k in n w; do
	printf '\n/* changed */\n' >>"$T/$k/bootstrap/css/bootstrap.css"
done
"$KILN" --json "${OPTS[@]}" "$T/n" >"$T/changed-n.json" 2>/dev/null
WK --json "${OPTS[@]}" "$T/w" >"$T/changed-w.json" 2>/dev/null
written=$(jfield "$T/changed-n.json" 'd["written"]')
check "a source changed: the native kiln rewrites its siblings" [ "$written" -gt 0 ]
check "... the WebAssembly kiln as many" [ "$(jfield "$T/changed-w.json" 'd["written"]')" = "$written" ]
check "... the same bytes as the native kiln again" same
check "... audited again" /usr/bin/python3 "$(dirname "$0")/../e2e/audit.py" "$T/w" --quiet

finish
