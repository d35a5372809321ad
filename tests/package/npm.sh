# npm.sh - shared by the tests of the npm packages (sourced after
# ../e2e/lib.sh): where the tarballs are, a scratch npm project, an install
# of the tarballs with compilers replaced by recording stubs.
#
# Sets VERSION, MAIN_NAME, PLATFORM_NAME, MAIN_TGZ, PLATFORM_TGZ, ARM64_NAME,
# ARM64_TGZ (which may be missing: tests/package/arm64.sh), WASM_NAME,
# WASM_TGZ (which may be missing: tests/package/wasm.sh), STUBS (a
# directory of stubs to put first in PATH) and COMPILER_LOG (what the stubs
# were asked to run; empty if nothing).
BUILD=${KILN_BUILD:?KILN_BUILD must name the build tree}
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
for need in node npm npx; do
	command -v $need >/dev/null || { echo "${0##*/}: $need is missing (Node.js 20.19 or later with npm)" >&2; exit 1; }
done
VERSION=$(sed -n 's/^#define KILN_VERSION_STRING "\(.*\)"/\1/p' "$SRC/lib/kiln.h")
MAIN_NAME=kiln-precompress
PLATFORM_NAME=kiln-precompress-linux-x64
ARM64_NAME=kiln-precompress-linux-arm64
ARM64_TGZ=$BUILD/npm/$ARM64_NAME-$VERSION.tgz # when the arm64 build has a binary
WASM_NAME=kiln-precompress-wasm32
WASM_TGZ=$BUILD/npm/$WASM_NAME-$VERSION.tgz # when the WebAssembly build has a kiln
MAIN_TGZ=$BUILD/npm/$MAIN_NAME-$VERSION.tgz
PLATFORM_TGZ=$BUILD/npm/$PLATFORM_NAME-$VERSION.tgz
for f in "$MAIN_TGZ" "$PLATFORM_TGZ"; do
	[ -f "$f" ] || { echo "${0##*/}: $f is missing (cmake --build BUILD --target npm-pack)" >&2; exit 1; }
done
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_loglevel=warn

STUBS=$T/stubs
COMPILER_LOG=$T/compilers.log
mkdir -p "$STUBS"
: >"$COMPILER_LOG"
for c in cc gcc g++ c++ clang clang++ make node-gyp; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$c" "$COMPILER_LOG" >"$STUBS/$c"
	chmod 755 "$STUBS/$c"
done

# new_project DIR: an empty npm project.
new_project() {
	mkdir -p "$1"
	printf '{ "name": "kiln-test-project", "version": "1.0.0", "private": true }\n' >"$1/package.json"
}

# npm_install_kiln DIR [NPM_ARGS...]: install the main and the x86-64
# tarball as devDependencies.  When npm-pack wrote the arm64 package too,
# the main package names it as an optional dependency, which an offline
# install cannot resolve from the registry: an override points it at the
# tarball, so that the lock file records it (for another cpu, not
# installed) as a registry's would, and `npm ci` finds the lock in sync.
# So for the WebAssembly package, which is then installed too (it has no
# os or cpu), and left unused beside the native binary.
npm_install_kiln() {
	local dir=$1
	shift
	if [ -f "$ARM64_TGZ" ]; then
		(cd "$dir" && npm pkg set "overrides.$ARM64_NAME=file:$ARM64_TGZ") || return 1
	fi
	if [ -f "$WASM_TGZ" ]; then
		(cd "$dir" && npm pkg set "overrides.$WASM_NAME=file:$WASM_TGZ") || return 1
	fi
	(cd "$dir" && PATH="$STUBS:$PATH" npm install --save-dev "$@" "$PLATFORM_TGZ" "$MAIN_TGZ" >"$dir.npm.log" 2>&1) ||
		{ cat "$dir.npm.log" >&2; return 1; }
}
