#!/usr/bin/env bash
# build.sh - kiln for WebAssembly, run by Node.js: the kiln of the npm
# package kiln-precompress-wasm32, which the launcher runs where no native
# package is installed (macOS, Windows).  Everything comes from Debian 12:
# the compiler is its emscripten package (Emscripten 3.1.6, with its clang,
# lld and binaryen), the libraries are compiled from Debian's source
# packages by libs.sh.
#
# Emscripten's Debian configuration keeps its cache read-only; this build
# has a configuration of its own in BUILD/emscripten (the same, but with
# its cache in BUILD/emscripten/cache, where Emscripten compiles its C
# library for threads on the first link, once per build directory) and an
# emcc that runs with it.  All of it: about 340 s of CPU.
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

# The private configuration: Debian's, with a cache that can be written,
# and Node.js finding Debian's acorn (node-acorn, which Emscripten's
# JavaScript optimizer loads) whichever Node runs it.
tools=$build/emscripten
cat >"$tools/config.new" <<EOF
exec(open('/usr/share/emscripten/.emscripten').read())
FROZEN_CACHE = False
CACHE = '$tools/cache'
NODE_JS = ['env', 'NODE_PATH=/usr/share/nodejs', '/usr/bin/node']
EOF
mv "$tools/config.new" "$tools/config"
printf '#!/bin/sh\n# emcc with the configuration of packaging/wasm/build.sh\nEM_CONFIG=%s exec emcc "$@"\n' \
	"$tools/config" >"$tools/emcc"
chmod 755 "$tools/emcc"
export EM_CONFIG=$tools/config

# Emscripten installs its C library's headers into its cache on first use:
# once, before anything compiles in parallel
echo 'int kiln_wasm_probe;' >"$tools/probe.c"
emcc -c "$tools/probe.c" -o "$tools/probe.o" ||
	die "emcc cannot compile (its configuration: $tools/config)"

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
# npm-pack): the libraries of BUILD/deps and the C library and runtime
# Emscripten compiled into its cache for the link (its emcc writes no link
# map), each named in a packages.txt above it with its Debian package.
cache_libs=$tools/cache/sysroot/lib/wasm32-emscripten
(cd "$tools" && find cache/sysroot/lib -name '*.a' | sort | sed 's/^/emscripten /') >"$tools/packages.txt"
mkdir -p "$tools/usr/share/doc/emscripten"
cp /usr/share/doc/emscripten/copyright "$tools/usr/share/doc/emscripten/copyright"
ls "$build"/deps/usr/lib/*.a "$cache_libs"/*.a | sort >"$build/static-libs.txt"
printf '#!/bin/sh\n# the WebAssembly kiln, under Node.js\nexec node %s "$@"\n' "$build/kiln.js" >"$build/kiln-wasm"
chmod 755 "$build/kiln-wasm"
