#!/usr/bin/env bash
# all.sh - every test, in every build CI runs: the normal build (warnings
# as errors, every suite), the fully static build (the end-to-end suite
# again, against the static binary, but for the server-configuration,
# benchmark, randomized and sharding suites, then its npm packages in a
# Vite project served to Chromium, cmake --install and the README's
# recipes), the static arm64 binary (cross-built, its tests and part of the
# end-to-end suite under qemu-user, and its npm package), the WebAssembly
# kiln (built with Debian's Emscripten from Debian's source packages; the
# same bytes as the native kiln, part of the end-to-end suite under
# Node.js, and its npm package through the launcher on platforms made to
# look like macOS and Windows),
# AddressSanitizer + UndefinedBehaviorSanitizer (every suite that runs
# kiln's code, end-to-end ones included, since they run the instrumented
# binary), ThreadSanitizer (the unit tests and the suites where threads
# meet), and the libFuzzer targets for a bounded time.
# A sanitizer report makes the instrumented program exit non-zero, which
# fails the test that ran it.
#
# Time: CI must stay well inside 40 minutes on 2 cores (the arm64 step
# adds about 6, the WebAssembly build and step about 4 to 6), so each
# build's tests run in parallel (ctest -j, one per
# CPU), and the suites with a budget get a smaller one after the normal
# build: the randomized sequence test runs 60 s in the normal build and
# 30 s in the others, signals.sh 6 rounds in the normal build and 2 in the
# others, the fuzz targets 60 s each.  Larger budgets on demand:
# KILN_SEQUENCE_SECONDS, SIGNAL_ROUNDS, KILN_FUZZ_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${KILN_FUZZ_SECONDS:-60}
seq_seconds=${KILN_SEQUENCE_SECONDS:-30}   # the builds after the normal one
rounds=${SIGNAL_ROUNDS:-2}                 # likewise
jobs=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

step() { printf '\n==== %s\n' "$*"; }

step "Node.js for the npm packages and the bundlers"
. tests/node.sh

step "normal build"
cmake -S . -B build -DKILN_WERROR=ON -DKILN_SEQUENCE_SECONDS=60
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure

step "static binary: end-to-end suite, npm packages, Vite and Chromium, install, recipes"
# Its own time budget: 25 minutes at most, 10 for any one test (about 5 on
# 2 cores, most of it the end-to-end suite).
cmake -S . -B build-static -DKILN_WERROR=ON -DKILN_STATIC=ON -DKILN_SEQUENCE_SECONDS="$seq_seconds"
timeout 600 cmake --build build-static -j "$jobs"
# The arm64 binary too (measured: 20 s on 2 cores; npm-pack packs it),
# where the cross compiler is installed: its tests are the next step.
arm64=$(command -v aarch64-linux-gnu-gcc || true)
if [ -n "$arm64" ]; then
	timeout 300 bash packaging/arm64/build.sh . build-static/arm64 "$jobs"
fi
# The WebAssembly kiln too, where Emscripten is installed (npm-pack packs
# it; its tests are a step of their own below, which build nothing
# again).  Its budget: 8 minutes (measured with GNU time: 157 s of CPU,
# 204 s on 2 cores shared with other work at a load average of 8; the
# libraries from Debian's source packages, then kiln; Emscripten's C
# library is the one its Debian package ships compiled).
emcc=$(command -v emcc || true)
if [ -n "$emcc" ]; then
	timeout 480 bash packaging/wasm/build.sh . build-static/wasm "$jobs"
fi
# Not again here: the suites that test server configuration and the
# benchmark harness, and the randomized and sharding suites: the code they
# test is the same in both binaries, and the normal build ran them.  kiln
# serve's own suites do run (serve_kiln, serve_hostile, serve_dcz's kiln
# part, and serve_names through kiln alone: e2e_serve_names_kiln): the
# static kiln links a libmicrohttpd built from source without HTTPS
# (packaging/libmicrohttpd/build.sh), not Debian's.
SIGNAL_ROUNDS=$rounds timeout 1500 ctest --test-dir build-static -j "$jobs" --output-on-failure --timeout 600 \
	-E '^(arm64_binary|arm64_e2e_.*|npm_arm64|wasm_binary|wasm_corpus|wasm_e2e_.*|npm_wasm|e2e_serve_nginx|e2e_serve_caddy|e2e_serve_apache|e2e_serve_names|e2e_serve_nginx_static|e2e_serve_selftest|bench_selftest|e2e_sequence|e2e_shard)$'

step "arm64 static binary under qemu-user: the binary, end-to-end suites, its npm package"
# Its own budget: 10 minutes at most, 5 for any one test (measured: 5.5
# minutes on 2 cores shared with other work, load average 6.5).  Skipped,
# saying so, where the cross compiler is not installed.
if [ -n "$arm64" ]; then
	timeout 600 ctest --test-dir build-static -j "$jobs" --output-on-failure --timeout 300 \
		-R '^(arm64_build|arm64_binary|arm64_e2e_.*|npm_pack|npm_arm64)$'
else
	echo "all.sh: no aarch64-linux-gnu-gcc: the arm64 build and its tests are skipped"
fi

step "WebAssembly kiln under Node.js: the same bytes, end-to-end suites, its npm package"
# Its own budget: 8 minutes at most, 5 for any one test (measured with GNU
# time: 2.3 minutes on 2 cores shared with other work at a load average of
# 8, 4 to 5.5 at 12 to 20; 2.6 minutes of CPU; wasm_corpus, a real tree
# with every coding, and wasm_binary, --best, the longest).  The npm
# tarballs are the static step's, which packed the WebAssembly kiln already
# (-FS: npm-pack and the arm64 build not run again; wasm_build finds
# nothing to do).  Skipped, saying so, where
# Emscripten is not installed.
if [ -n "$emcc" ]; then
	timeout 480 ctest --test-dir build-static -j "$jobs" --output-on-failure --timeout 300 \
		-R '^(wasm_build|wasm_binary|wasm_corpus|wasm_e2e_.*|npm_wasm)$' -FS '^(npm_tarballs|arm64)$'
else
	echo "all.sh: no emcc: the WebAssembly build and its tests are skipped"
fi

step "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DKILN_WERROR=ON -DKILN_SANITIZE=address -DKILN_SEQUENCE_SECONDS="$seq_seconds"
cmake --build build-asan -j "$jobs"
# (not the tests that run no instrumented code: documentation, layout)
no_code='layout|man_lint|readme_ci|docs_links|docs_twice|docs_coverage|install'
SIGNAL_ROUNDS=$rounds ctest --test-dir build-asan -j "$jobs" --output-on-failure -E "^($no_code)\$"

step "ThreadSanitizer"
cmake -S . -B build-tsan -DKILN_WERROR=ON -DKILN_SANITIZE=thread -DKILN_SEQUENCE_SECONDS="$seq_seconds"
cmake --build build-tsan -j "$jobs"
# The suites where threads meet: the unit tests (the pool, the ledger, the
# cache), the end-to-end suites that encode many files at once, change
# them under a run, stop it, or shard it, and kiln serve's threads under
# hostile clients; not the ones that check messages,
# options and names, whose threads do what the others' do.
SIGNAL_ROUNDS=$rounds ctest --test-dir build-tsan -j "$jobs" --output-on-failure \
	-R '^(unit_.*|e2e_(site|incremental|signals|stream|archive|codings|consistency|everyday|shard|sequence|serve_hostile))$'

step "libFuzzer, ${fuzz_seconds} s per target"
CC=clang cmake -S . -B build-fuzz -DKILN_SANITIZE=fuzz -DKILN_FUZZ_SECONDS="$fuzz_seconds"
cmake --build build-fuzz -j "$jobs"
ctest --test-dir build-fuzz -R '^fuzz_' -j "$jobs" --output-on-failure

step "all passed"
