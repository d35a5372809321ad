#!/usr/bin/env bash
# all.sh - every test, in every build CI runs: the normal build (warnings
# as errors), AddressSanitizer + UndefinedBehaviorSanitizer, ThreadSanitizer
# (the whole suite under each, end-to-end tests included, since they run the
# instrumented binary), the fully static build (the end-to-end suite again,
# against the static binary, then its npm packages in a Vite project served
# to Chromium, cmake --install and the README's recipes), and the libFuzzer
# targets for a bounded time.
# A sanitizer report makes the instrumented program exit non-zero, which
# fails the test that ran it.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${KILN_FUZZ_SECONDS:-120}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

step() { printf '\n==== %s\n' "$*"; }

step "normal build"
cmake -S . -B build -DKILN_WERROR=ON
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure

step "static binary: end-to-end suite, npm packages, Vite and Chromium, install, recipes"
# Its own time budget: 25 minutes at most, 10 for any one test (about 5 on
# 2 cores, most of it the end-to-end suite).
cmake -S . -B build-static -DKILN_WERROR=ON -DKILN_STATIC=ON
timeout 600 cmake --build build-static -j "$(nproc)"
timeout 1500 ctest --test-dir build-static --output-on-failure --timeout 600

step "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DKILN_WERROR=ON -DKILN_SANITIZE=address
cmake --build build-asan -j "$(nproc)"
ctest --test-dir build-asan --output-on-failure

step "ThreadSanitizer"
cmake -S . -B build-tsan -DKILN_WERROR=ON -DKILN_SANITIZE=thread
cmake --build build-tsan -j "$(nproc)"
ctest --test-dir build-tsan --output-on-failure

step "libFuzzer, ${fuzz_seconds} s per target"
CC=clang cmake -S . -B build-fuzz -DKILN_SANITIZE=fuzz -DKILN_FUZZ_SECONDS="$fuzz_seconds"
cmake --build build-fuzz -j "$(nproc)"
ctest --test-dir build-fuzz -R '^fuzz_' --output-on-failure

step "all passed"
