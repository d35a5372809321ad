#!/usr/bin/env bash
# recipes.sh - the README's Make, GitHub Actions and GitLab CI recipes, run
# as they stand in the README (tests/docs/commands.py reads them out of it)
# in a small npm project with kiln installed from the npm tarballs: each
# precompresses dist/, fills the cache directory it keeps, and passes
# `kiln check`; the GitHub Actions cache key follows kiln's and its
# libraries' versions.  docs/install.md's npm install of the two tarballs
# runs as it stands, in a project holding them.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"
RECIPE="python3 $(dirname "$0")/ci_recipe.py $SRC"
DOC="/usr/bin/python3 $SRC/tests/docs/commands.py $SRC"
command -v make >/dev/null || { echo "recipes.sh: make is missing" >&2; exit 1; }

# all_siblings DIR: index.html and app.js have a .gz and a .br that decode.
all_siblings() {
	local f ok=0
	for f in index.html assets/app.js; do
		decodes_to "$1/$f.gz" "$1/$f" || ok=1
		decodes_to "$1/$f.br" "$1/$f" || ok=1
	done
	return $ok
}
nonempty_dir() { [ -d "$1" ] && [ -n "$(find "$1" -type f | head -n 1)" ]; }

# Make: the README's rule, after a `site` rule that writes dist/.
mkdir -p "$T/make/bin"
ln -s "$KILN" "$T/make/bin/kiln"
$DOC get 'README.md#make' >"$T/make/Makefile"
check "the README has a Make recipe" grep -q 'kiln' "$T/make/Makefile"
printf 'site:\n\trm -rf dist && cp -R %s dist\n' "$FIXTURES/site" >>"$T/make/Makefile"
(cd "$T/make" && PATH="$T/make/bin:$PATH" make precompress) >"$T/make.log" 2>&1
check "make precompress succeeds" [ $? -eq 0 ]
check "make: the siblings decode" all_siblings "$T/make/dist"
check "make: the cache directory is filled" nonempty_dir "$T/make/.kiln-cache"

# A project whose build copies the example site to dist/, with the README's
# postbuild, and kiln installed (so that package-lock.json exists for npm ci).
new_project "$T/app"
cp -R "$FIXTURES/site" "$T/app/site"
postbuild=$($DOC get 'README.md#npm-postbuild' |
	node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.parse(s).scripts.postbuild))')
check "the README's postbuild runs kiln" [ "${postbuild%% *}" = kiln ]
(cd "$T/app" && npm pkg set scripts.build='rm -rf dist && cp -R site dist' scripts.postbuild="$postbuild")
npm_install_kiln "$T/app" --offline
check "kiln installs from the tarballs" [ $? -eq 0 ]
cp -a "$T/app" "$T/gitlab"

# docs/install.md's command that installs the two tarballs, as it stands,
# in a project that has them: it names the version the build wrote.
new_project "$T/doc"
cp "$PLATFORM_TGZ" "$MAIN_TGZ" "$T/doc/"
# the arm64 and WebAssembly packages too, which CI always builds (the doc
# installs them all)
[ -n "${ARM64_TGZ:-}" ] && [ -f "$ARM64_TGZ" ] && cp "$ARM64_TGZ" "$T/doc/"
[ -n "${WASM_TGZ:-}" ] && [ -f "$WASM_TGZ" ] && cp "$WASM_TGZ" "$T/doc/"
$DOC commands 'docs/install.md#with-npm:3' >"$T/doc.commands"
check "docs/install.md has the command" [ -s "$T/doc.commands" ]
while IFS= read -r -d '' c; do
	(cd "$T/doc" && PATH="$STUBS:$PATH" npm_config_offline=true bash -e -c "$c") >"$T/doc.log" 2>&1
	check "docs/install.md: $c" [ $? -eq 0 ]
done <"$T/doc.commands"
check "... installs a kiln that runs" cmp -s <("$T/doc/node_modules/.bin/kiln" --version 2>&1) <("$KILN" --version 2>&1)

# GitHub Actions.
export GITHUB_OUTPUT=$T/github_output
: >"$GITHUB_OUTPUT"
PATH="$STUBS:$PATH" $RECIPE github "$T/app" >"$T/github.log" 2>&1
rc=$?
check "the GitHub Actions steps succeed" [ $rc -eq 0 ]
[ $rc -eq 0 ] || cat "$T/github.log" >&2
check "github: the siblings decode" all_siblings "$T/app/dist"
check "github: the cache directory is filled" nonempty_dir "$T/app/.kiln-cache"
check "github: kiln check is among the steps and passed" grep -q 'kiln check dist' "$T/github.log"
check "github: no compiler ran" [ ! -s "$COMPILER_LOG" ]
key=$(sed -n 's/^key=//p' "$GITHUB_OUTPUT")
check "github: the kiln step set a key ($key)" grep -qE '^kiln-[0-9a-f]{16}$' <<<"$key"
# The key again, from the same kiln, and from a kiln whose --version
# differs in one library's version, or in kiln's.
kiln_step=$($RECIPE github --step kiln)
key_with() { # key_with KILN_BINARY
	: >"$T/out2"
	(cd "$T/app" && KILN_BINARY=$1 GITHUB_OUTPUT=$T/out2 bash -e -c "$kiln_step") && sed -n 's/^key=//p' "$T/out2"
}
printf '#!/bin/sh\n"%s" "$@" | sed "s/^zlib .*/zlib 9.9.9/"\n' "$KILN" >"$T/newzlib"
printf '#!/bin/sh\n"%s" "$@" | sed "1s/.*/kiln 99.0.0/"\n' "$KILN" >"$T/newkiln"
chmod 755 "$T/newzlib" "$T/newkiln"
k_same=$(key_with "$T/app/node_modules/$PLATFORM_NAME/bin/kiln")
k_zlib=$(key_with "$T/newzlib")
k_kiln=$(key_with "$T/newkiln")
check "github: the same kiln gives the same key" [ "$k_same" = "$key" ]
check "github: a new zlib gives a key" grep -qE '^kiln-[0-9a-f]{16}$' <<<"$k_zlib"
check "github: ... another one" [ "$k_zlib" != "$key" ]
check "github: a new kiln gives a key" grep -qE '^kiln-[0-9a-f]{16}$' <<<"$k_kiln"
check "github: ... another one" [ "$k_kiln" != "$key" ]
check "github: ... not the new zlib's either" [ "$k_kiln" != "$k_zlib" ]

# GitLab CI, on a fresh copy of the project.
PATH="$STUBS:$PATH" $RECIPE gitlab "$T/gitlab" >"$T/gitlab.log" 2>&1
rc=$?
check "the GitLab CI script succeeds" [ $rc -eq 0 ]
[ $rc -eq 0 ] || cat "$T/gitlab.log" >&2
check "gitlab: the siblings decode" all_siblings "$T/gitlab/dist"
check "gitlab: the cache directory is filled" nonempty_dir "$T/gitlab/.kiln-cache"
check "gitlab: kiln check is in the script and passed" grep -q 'kiln check dist' "$T/gitlab.log"
check "gitlab: no compiler ran" [ ! -s "$COMPILER_LOG" ]

finish
