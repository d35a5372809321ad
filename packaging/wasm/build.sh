#!/usr/bin/env bash
# build.sh - kiln for WebAssembly, run by Node.js: the kiln of the npm
# package kiln-precompress-wasm32, which the launcher runs where no native
# package is installed (macOS, Windows).  Everything comes from Debian 12:
# the compiler is its emscripten package (Emscripten 3.1.6, with its clang,
# lld and binaryen), the libraries are compiled from Debian's source
# packages by libs.sh.
#
# Emscripten's C library and runtime are the ones Debian's package ships
# compiled in its read-only cache (/usr/share/emscripten/cache: libc-mt.a
# and the other libraries a program with threads links), so that nothing of
# Emscripten's is compiled here; this build has a configuration of its own
# in BUILD/emscripten (Debian's, with Node.js finding Debian's acorn) and
# an emcc that runs with it.
#
# Writes BUILD/kiln.js, BUILD/kiln.wasm and BUILD/kiln.worker.js, run as
# `node BUILD/kiln.js ARGS` (BUILD/kiln-wasm runs that), the unit tests of
# the platform layer and the digests (BUILD/test_host.js, test_hash.js),
# BUILD/deps (libs.sh's output: the libraries, their licences) and
# BUILD/static-libs.txt (every archive linked, as the static build's).
#
# Needs: emscripten, dpkg-dev, cmake, make, pkg-config.
#
# usage: build.sh SRC BUILD [JOBS]
set -euo pipefail
usage="usage: build.sh SRC BUILD [JOBS]"
src=$(cd "${1:?$usage}" && pwd)
build=${2:?$usage}
jobs=${3:-$(nproc)}
die() { echo "wasm/build.sh: $*" >&2; exit 1; }
command -v emcc >/dev/null || die "emcc is missing (apt-get install emscripten)"
mkdir -p "$build/emscripten"
build=$(cd "$build" && pwd)

# The private configuration: Debian's (its cache read-only), with Node.js
# finding Debian's acorn (node-acorn, which Emscripten's JavaScript
# optimizer loads) whichever Node runs it.
tools=$build/emscripten
cat >"$tools/config.new" <<EOF
exec(open('/usr/share/emscripten/.emscripten').read())
NODE_JS = ['env', 'NODE_PATH=/usr/share/nodejs', '/usr/bin/node']
EOF
mv "$tools/config.new" "$tools/config"
printf '#!/bin/sh\n# emcc with the configuration of packaging/wasm/build.sh\nEM_CONFIG=%s exec emcc "$@"\n' \
	"$tools/config" >"$tools/emcc"
chmod 755 "$tools/emcc"
export EM_CONFIG=$tools/config

# emcc works, and links a program with threads from Debian's cache (-v:
# the archives it links, for the licences below)
rm -rf "$tools/cache" "$tools/packages.txt" "$tools/usr" # (a cache of its own, before: not used)
printf '#include <pthread.h>\nint main(void) { return pthread_self() == 0; }\n' >"$tools/probe.c"
emcc -v -O2 -pthread -sPROXY_TO_PTHREAD -sEXIT_RUNTIME -sNODERAWFS -sENVIRONMENT=node \
	-sDEFAULT_TO_CXX=0 "$tools/probe.c" -o "$tools/probe.js" 2>"$tools/probe.log" ||
	{ cat "$tools/probe.log" >&2; die "emcc cannot link a program with threads (its configuration: $tools/config)"; }

bash "$src/packaging/wasm/libs.sh" "$build/deps" "$jobs"
zopfli=$(sed -n 's/^zopfli=\([^-]*\)-.*/\1/p' <(tr ' ' '\n' <"$build/deps/versions"))
cmake -S "$src" -B "$build" \
	-DCMAKE_TOOLCHAIN_FILE="$src/packaging/wasm/toolchain.cmake" \
	-DKILN_WASM_TOOLS="$tools" -DKILN_WASM_DEPS="$build/deps" \
	-DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON -DKILN_BUILD_TESTS=OFF \
	-DKILN_SERVE=OFF -DKILN_CRYPTO=nettle \
	-DZOPFLI_INCLUDE_DIR="$build/deps/usr/include" \
	-DZOPFLI_LIBRARY="$build/deps/usr/lib/libzopfli.a" \
	-DKILN_ZOPFLI_VERSION="$zopfli" >"$build/configure.log" ||
	{ cat "$build/configure.log" >&2; die "cmake configure failed"; }
cmake --build "$build" --target kiln test_host test_hash -j "$jobs"

# What kiln.wasm is made of, for its licences (packaging/licence_files.sh,
# npm-pack): the libraries of BUILD/deps (each named in its packages.txt
# with its Debian source package) and the archives of Debian's emscripten
# package the probe's link named with -l (its emcc writes no link map;
# kiln links the same, with the same settings).
cache_libs=$(grep 'wasm-ld' "$tools/probe.log" | tr ' ' '\n' | sed -n 's|^-L\(.*/wasm32-emscripten\)$|\1|p' | head -n 1)
[ -d "$cache_libs" ] || die "no library directory of Emscripten's in its link (emcc -v: $tools/probe.log)"
{
	ls "$build"/deps/usr/lib/*.a
	grep 'wasm-ld' "$tools/probe.log" | tr ' ' '\n' | sed -n "s|^-l\(.*\)|$cache_libs/lib\1.a|p"
} | sort -u >"$build/static-libs.txt.new"
while read -r a; do
	[ -f "$a" ] || die "$a: named by Emscripten's link, not found"
done <"$build/static-libs.txt.new"
grep -q 'libc-mt\.a$' "$build/static-libs.txt.new" || die "no libc-mt.a in Emscripten's link (emcc -v: $tools/probe.log)"
mv "$build/static-libs.txt.new" "$build/static-libs.txt"
printf '#!/bin/sh\n# the WebAssembly kiln, under Node.js\nexec node %s "$@"\n' "$build/kiln.js" >"$build/kiln-wasm"
chmod 755 "$build/kiln-wasm"
