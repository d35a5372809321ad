#!/usr/bin/env bash
# wasm.sh - the WebAssembly kiln (packaging/wasm/build.sh into
# KILN_WASM_BUILD), under Node.js, against the native kiln KILN:
#   - `kiln --version` names the same libraries at the same versions, and
#     then the build that runs (emscripten, WebAssembly, Node.js);
#   - its platform layer's and its digests' unit tests (test_host,
#     test_hash, built for WebAssembly by build.sh) pass under Node, and
#     test_host too with Node made to look like macOS and like Windows
#     (platform_preload.js) over a case-insensitive file system
#     (casefold_preload.js);
#   - the same bytes: on the example site and on a generated tree (an app
#     drawn from a seed by tests/bundler/app.py, with large files that
#     stream, and binary files like fonts' tables: on two of them, one of
#     3 KB, brotli's literal costs came out otherwise under Emscripten's
#     clang until packaging/wasm/libs.sh compiled that file unoptimised),
#     both kilns with --best write the same siblings, manifest and
#     snippets, byte for byte; so after a re-run (nothing rewritten), after
#     a source changes, and with another option (--no-gzip --zstd); the
#     WebAssembly kiln's tree passes audit.py (the first invariant, mtimes
#     to the microsecond: KILN_MTIME_RESOLUTION_NS) and its own `kiln
#     check`, and its `kiln clean` leaves the sources alone;
#   - every library linked into kiln.wasm is in the README's licence table.
# Skipped (exit 77) when Emscripten is not installed.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/static_checks.sh"
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
W=${KILN_WASM_BUILD:?KILN_WASM_BUILD must name the WebAssembly build}
if ! command -v emcc >/dev/null; then
	echo "wasm.sh: skipped: no Emscripten (apt-get install emscripten)" >&2
	rm -rf "$T"
	exit 77
fi
[ -f "$W/kiln.js" ] || { echo "wasm.sh: no $W/kiln.js (packaging/wasm/build.sh SRC $W)" >&2; exit 1; }
WK() { node "$W/kiln.js" "$@"; }
jfield() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
export KILN_MTIME_RESOLUTION_NS=1000

# Which kiln runs.
"$KILN" --version >"$T/native.version"
WK --version >"$T/wasm.version"
check "kiln --version: exit 0" [ $? -eq 0 ]
check "... the same kiln and libraries, at the same versions, as the native kiln" \
	[ "$(head -n -1 "$T/wasm.version")" = "$(cat "$T/native.version")" ]
check "... then the build that runs: Emscripten 3.1.6, WebAssembly, this Node.js" \
	[ "$(tail -n 1 "$T/wasm.version")" = "emscripten 3.1.6, WebAssembly, Node.js $(node --version)" ]

# The platform layer and the digests, under Node.
for t in host hash; do
	node "$W/test_$t.js" 2>"$T/unit_$t.log"
	check "test_$t under Node.js" [ $? -eq 0 ] || cat "$T/unit_$t.log" >&2
done
# ... and the platform layer with Node made to look like macOS and Windows,
# over a file system made case-insensitive as theirs are (the preloads)
here=$(cd "$(dirname "$0")" && pwd)
for platform in darwin-arm64 win32-x64; do
	mkdir -p "$T/fold-$platform"
	KILN_TEST_PLATFORM=$platform KILN_TEST_CASEFOLD_ROOT="$T/fold-$platform" TMPDIR="$T/fold-$platform" \
		NODE_OPTIONS="--require $here/platform_preload.js --require $here/casefold_preload.js" \
		node "$W/test_host.js" 2>"$T/unit_host_$platform.log"
	check "test_host under Node.js made to look like $platform, names folding case" [ $? -eq 0 ] ||
		cat "$T/unit_host_$platform.log" >&2
done

# same DIR OPTIONS...: both kilns on copies of DIR: the same bytes in every
# file (sources, siblings, manifest, snippets), the WebAssembly kiln's tree
# audited.  Leaves the copies in $T/n and $T/w.
same() {
	local dir=$1
	shift
	"$KILN" -q "$@" "$T/n" 2>"$T/n.err" || { cat "$T/n.err" >&2; return 1; }
	WK -q "$@" "$T/w" 2>"$T/w.err" || { cat "$T/w.err" >&2; return 1; }
	[ "$(tree_digest "$T/n")" = "$(tree_digest "$T/w")" ] || { diff <(tree_digest "$T/n") <(tree_digest "$T/w") >&2; return 1; }
	[ "$(tree_digest "$T/n" | wc -l)" -gt "$(find "$dir" -type f | wc -l)" ] # siblings were written
}
audited() { /usr/bin/python3 "$(dirname "$0")/../e2e/audit.py" "$T/w" --quiet; }

# tree NAME: a fresh pair of copies of the tree NAME ($T/NAME).
pair() { rm -rf "$T/n" "$T/w"; cp -a "$T/$1" "$T/n"; cp -a "$T/$1" "$T/w"; }

# The example site, and a generated tree: an app from a seed, a large JSON
# and a large script (streamed: over --stream-size), an SVG.
cp -a "$FIXTURES/site" "$T/site"
/usr/bin/python3 "$(dirname "$0")/../bundler/app.py" vite 7 40 "$T/gen" >/dev/null
/usr/bin/python3 - "$T/gen" <<'EOF'
import json, random, sys
top = sys.argv[1]
rng = random.Random(28)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10))) for _ in range(3000)]
rows = [{"id": i, "name": " ".join(rng.choice(words) for _ in range(4)), "score": rng.random(),
         "tags": [rng.choice(words) for _ in range(rng.randint(0, 5))]} for i in range(9000)]
with open(top + "/data.json", "w") as f:
    json.dump(rows, f)
with open(top + "/bundle.js", "w") as f:
    for i in range(6000):
        f.write("export function %s_%d(a, b) { return a.%s(b, %d) || \"%s\"; }\n"
                % (rng.choice(words), i, rng.choice(words), rng.randint(0, 999), rng.choice(words)))
# font-like tables: zeros and small numbers, names, runs of high bytes
for seed in (1002, 1026):
    r = random.Random(seed)
    out = bytearray()
    n = r.choice([3000, 8000, 20000, 60000])
    hi = r.random() * 0.3
    while len(out) < n:
        k = r.random()
        if k < hi:
            out += bytes(r.randint(128, 255) for _ in range(r.randint(1, 8)))
        elif k < 0.5:
            out += bytes(r.choice([0, 0, 1, 2, 3, 4]) for _ in range(r.randint(2, 40)))
        else:
            out += "".join(r.choice("abcdefghijklmnopqrstuvwxyz ._-") for _ in range(r.randint(3, 30))).encode()
    with open(top + "/font-%d.ttf" % seed, "wb") as f:
        f.write(out[:n])
with open(top + "/chart.svg", "w") as f:
    f.write('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 1000">\n')
    for i in range(2500):
        f.write('<circle cx="%d" cy="%d" r="%d" fill="#%06x"/>\n' % (rng.randint(0, 999), rng.randint(0, 999),
                                                                rng.randint(1, 40), rng.randint(0, 0xffffff)))
    f.write("</svg>\n")
EOF
for tree in site gen; do
	pair "$tree"
	check "$tree, --best: the same bytes as the native kiln" same "$T/$tree" --best --stream-size 256K
	check "... the first invariant holds on the WebAssembly kiln's tree" audited
	WK check -q "$T/w"
	check "... its own kiln check passes" [ $? -eq 0 ]
	WK --best --json --stream-size 256K "$T/w" >"$T/rerun.json" 2>/dev/null
	check "... a re-run: exit 0, nothing written" [ "$(jfield "$T/rerun.json" 'd["written"]')" = 0 ]
	check "... still the same bytes" [ "$(tree_digest "$T/n")" = "$(tree_digest "$T/w")" ]
	for d in n w; do
		f=$(cd "$T/$d" && find . -name '*.js' ! -name '*.map' | sort | head -n 1)
		printf '\n// changed %s\n' "$f" >>"$T/$d/$f"
	done
	check "... a source changed: the same bytes again" same "$T/$tree" --best --stream-size 256K
	check "... other codings (--no-gzip --zstd): the same bytes" same "$T/$tree" --no-gzip --zstd
	check "... audited again" audited
	before=$(cd "$T/w" && (cd "$T/$tree" && find . -type f | sort) | xargs -d '\n' sha256sum)
	WK clean -q "$T/w"
	check "... kiln clean: exit 0" [ $? -eq 0 ]
	check "... and only the sources are left, untouched" \
		[ "$(cd "$T/w" && find . -type f | sort | xargs -d '\n' sha256sum)" = "$before" ]
done

# Licences: every library linked is in the README's table.
check "static-libs.txt lists the libraries linked" [ "$(grep -c . "$W/static-libs.txt")" -gt 10 ]
licence_table_checks "$W/static-libs.txt" "$SRC/README.md"

finish
