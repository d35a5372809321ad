#!/usr/bin/env bash
# build.sh - the fully static kiln for Linux on arm64: a KILN_STATIC=ON
# cross build (toolchain.cmake) in BUILD, its zopfli from zopfli.sh in
# BUILD/zopfli.  Writes BUILD/kiln and BUILD/static-libs.txt (the archives
# linked in, for the licence files).  Only kiln is built: its tests run on
# the build host, against BUILD/kiln through qemu-user (tests/package/arm64.sh).
#
# Needs: gcc-aarch64-linux-gnu, the arm64 architecture (dpkg
# --add-architecture arm64) and the :arm64 -dev packages the README's
# Quick start installs.
#
# usage: build.sh SRC BUILD [JOBS]
set -euo pipefail
src=$(cd "${1:?usage: build.sh SRC BUILD [JOBS]}" && pwd)
build=${2:?usage: build.sh SRC BUILD [JOBS]}
jobs=${3:-$(nproc)}
die() { echo "build.sh: $*" >&2; exit 1; }
command -v aarch64-linux-gnu-gcc >/dev/null ||
	die "aarch64-linux-gnu-gcc is missing (apt-get install gcc-aarch64-linux-gnu)"
mkdir -p "$build"
build=$(cd "$build" && pwd)
bash "$src/packaging/arm64/zopfli.sh" "$build/zopfli"
cmake -S "$src" -B "$build" \
	-DCMAKE_TOOLCHAIN_FILE="$src/packaging/arm64/toolchain.cmake" \
	-DKILN_STATIC=ON -DKILN_WERROR=ON -DKILN_BUILD_TESTS=OFF \
	-DZOPFLI_INCLUDE_DIR="$build/zopfli/usr/include" \
	-DZOPFLI_LIBRARY="$build/zopfli/usr/lib/libzopfli.a" >"$build/configure.log" ||
	{ cat "$build/configure.log" >&2; die "cmake configure failed"; }
cmake --build "$build" --target kiln -j "$jobs"
