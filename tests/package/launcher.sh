#!/usr/bin/env bash
# launcher.sh - the npm packages npm-pack wrote: their package.json files
# (bin, no install script, the platform packages npm-pack wrote as exact
# optional dependencies: linux/x64, and linux/arm64 when it was packed), an offline install of the two tarballs that
# runs no compiler, and the `kiln` launcher: it runs the platform package's
# binary or KILN_BINARY with the same arguments and stdin, exits with its
# status, dies of the signal that killed it, passes SIGINT, SIGTERM and
# SIGHUP on, and says why (exit 127 or 126) when there is nothing to run.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"

# The packages.
mkdir -p "$T/pkg/main" "$T/pkg/platform"
tar -xzf "$MAIN_TGZ" -C "$T/pkg/main"
tar -xzf "$PLATFORM_TGZ" -C "$T/pkg/platform"
field() { node -e 'const p = require(process.argv[1]); const v = eval("p" + process.argv[2]); console.log(typeof v === "string" ? v : JSON.stringify(v))' "$1" "$2"; }
M=$T/pkg/main/package/package.json
P=$T/pkg/platform/package/package.json
check "main package: name" [ "$(field "$M" .name)" = "$MAIN_NAME" ]
check "main package: kiln's version" [ "$(field "$M" .version)" = "$VERSION" ]
check "main package: bin kiln is the launcher" [ "$(field "$M" .bin)" = '{"kiln":"bin/kiln.js"}' ]
check "main package: no scripts at all" [ "$(field "$M" .scripts)" = undefined ]
want="\"$PLATFORM_NAME\":\"$VERSION\""
[ -f "$ARM64_TGZ" ] && want="$want,\"$ARM64_NAME\":\"$VERSION\""
[ -f "$WASM_TGZ" ] && want="$want,\"$WASM_NAME\":\"$VERSION\""
check "main package: the platform packages packed (x64$([ -f "$ARM64_TGZ" ] && echo ", arm64")$([ -f "$WASM_TGZ" ] && echo ", wasm32")), exactly this version, optional" \
	[ "$(field "$M" .optionalDependencies)" = "{$want}" ]
check "main package: no other dependency" [ "$(field "$M" .dependencies)" = undefined ]
check "platform package: name" [ "$(field "$P" .name)" = "$PLATFORM_NAME" ]
check "platform package: kiln's version" [ "$(field "$P" .version)" = "$VERSION" ]
check "platform package: os linux" [ "$(field "$P" .os)" = '["linux"]' ]
check "platform package: cpu x64" [ "$(field "$P" .cpu)" = '["x64"]' ]
check "platform package: no scripts at all" [ "$(field "$P" .scripts)" = undefined ]
check "platform package: no bin of its own" [ "$(field "$P" .bin)" = undefined ]
check "platform package: the binary is executable in the tarball" \
	sh -c "tar -tvzf '$PLATFORM_TGZ' package/bin/kiln | grep -q '^-rwxr-xr-x'"
check "platform package: the binary is static" sh -c "file -b '$T/pkg/platform/package/bin/kiln' | grep -q 'statically linked'"
check "platform package: stripped" sh -c "file -b '$T/pkg/platform/package/bin/kiln' | grep -q ', stripped'"
check "platform package: LICENSES is the README's section" grep -q '^## Licences' "$T/pkg/platform/package/LICENSES"
# kiln's own licence, the repository's MIT text, in both packages
for p in main platform; do
	check "$p package: kiln's LICENSE (MIT) in the tarball" cmp -s "$T/pkg/$p/package/LICENSE" "$(dirname "$0")/../../LICENSE"
done
check "kiln's LICENSE is the MIT licence" grep -q '^MIT License\|Permission is hereby granted, free of charge' "$(dirname "$0")/../../LICENSE"
check "platform package: a copyright file per Debian package" [ -s "$T/pkg/platform/package/licenses/libarchive-dev" ]

# Installed offline from the two tarballs, with every compiler replaced by
# a stub that records being run.
new_project "$T/app"
npm_install_kiln "$T/app" --offline
check "npm install of the tarballs succeeds offline" [ $? -eq 0 ]
check "npm install ran no compiler or build tool" [ ! -s "$COMPILER_LOG" ]
B=$T/app/node_modules/$PLATFORM_NAME/bin/kiln
check "the platform package is installed" cmp -s "$B" "$T/pkg/platform/package/bin/kiln"
check "the binary is executable after install" [ -x "$B" ]
check "node_modules/.bin/kiln is there" [ -x "$T/app/node_modules/.bin/kiln" ]

# npx kiln RUNS_IN_APP...
nk() { (cd "$T/app" && npx --no-install kiln "$@"); }
check "npx kiln --version is this kiln" [ "$(nk --version | head -n 1)" = "kiln $VERSION" ]
fresh_site "$T/app/site"
nk -q --brotli site
check "npx kiln --brotli site: exit 0" [ $? -eq 0 ]
check "npx kiln wrote decodable siblings" decodes_to "$T/app/site/index.html.br" "$T/app/site/index.html"
nk check site
check "npx kiln check: exit 0" [ $? -eq 0 ]
echo '<!-- changed -->' >>"$T/app/site/index.html"
nk check site 2>/dev/null
check "npx kiln check on a changed tree: exit 3" [ $? -eq 3 ]
nk --gzip-level 13 site 2>/dev/null
check "a usage error: exit 2" [ $? -eq 2 ]

# The launcher with stand-in binaries, through KILN_BINARY.
L=$T/app/node_modules/$MAIN_NAME/bin/kiln.js
fake() { # fake NAME BODY: an executable shell script
	printf '#!/bin/sh\n%s\n' "$2" >"$T/$1"
	chmod 755 "$T/$1"
}
# status CMD...: CMD's exit status, or -N if it died of signal N.
status() { python3 -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)' "$@"; }
fake args 'for a in "$@"; do printf "<%s>\n" "$a"; done'
check "arguments pass unchanged" [ "$(KILN_BINARY=$T/args node "$L" 'a b' '' '-x' '*' '$HOME' | tr '\n' ' ')" = '<a b> <> <-x> <*> <$HOME> ' ]
fake cat 'cat'
check "stdin passes through" [ "$(echo through | KILN_BINARY=$T/cat node "$L")" = through ]
for rc in 0 1 3 7 255; do
	fake exit$rc "exit $rc"
	check "exit status $rc passes through" [ "$(KILN_BINARY=$T/exit$rc status node "$L")" = "$rc" ]
done
for sig in INT TERM HUP KILL SEGV; do
	fake die$sig "kill -$sig \$\$"
	n=$(kill -l "$sig")
	check "kiln dying of SIG$sig: the launcher dies of it" [ "$(KILN_BINARY=$T/die$sig status node "$L")" = "-$n" ]
done
# A signal sent to the launcher alone reaches kiln.
fake catch 'trap "echo \$1 >\"$0.got\"; trap - \$1; kill -\$1 \$\$" "$1"; echo ready >"$0.ready"; while :; do sleep 0.1; done'
for sig in INT TERM HUP; do
	rm -f "$T/catch.got" "$T/catch.ready"
	python3 - "$L" "$T/catch" "$sig" >"$T/fwd" <<'EOF'
import os, signal, subprocess, sys, time
launcher, fake, sig = sys.argv[1:]
p = subprocess.Popen(["node", launcher, sig], env=dict(os.environ, KILN_BINARY=fake))
for _ in range(200):
    if os.path.exists(fake + ".ready"):
        break
    time.sleep(0.05)
p.send_signal(getattr(signal, "SIG" + sig))
try:
    print(p.wait(timeout=20))
except subprocess.TimeoutExpired:
    p.kill()
    print("hung")
EOF
	check "SIG$sig sent to the launcher reaches kiln" [ "$(cat "$T/catch.got" 2>/dev/null)" = "$sig" ]
	check "... and the launcher dies of it" [ "$(cat "$T/fwd")" = "-$(kill -l "$sig")" ]
done
# The real kiln, interrupted through the launcher: it cleans up and dies.
mkdir -p "$T/big"
for k in $(seq 1 400); do sed "s/function/fn$k/g" "$FIXTURES/site/assets/app.js"; done >"$T/big/big.js"
python3 - "$L" "$T/big" >"$T/real" <<'EOF'
import subprocess, sys, time
launcher, tree = sys.argv[1:]
p = subprocess.Popen(["node", launcher, "-q", "-j1", "--brotli", tree])
time.sleep(1.5)
p.terminate()
print(p.wait(timeout=60))
EOF
check "kiln under the launcher, SIGTERM: the launcher dies of it" [ "$(cat "$T/real")" = -15 ]
check "... and kiln left no temporary file" [ -z "$(find "$T/big" -name '.kiln-*.tmp')" ]
check "... nor a sibling" [ -z "$(find "$T/big" -name 'big.js.*')" ]

# Nothing to run.
KILN_BINARY=$T/missing node "$L" --version 2>"$T/err"
check "KILN_BINARY missing: exit 127" [ $? -eq 127 ]
check "... naming it" grep -qF "kiln: $T/missing" "$T/err"
: >"$T/noexec"
KILN_BINARY=$T/noexec node "$L" --version 2>"$T/err"
check "KILN_BINARY not executable: exit 126" [ $? -eq 126 ]
new_project "$T/bare"
(cd "$T/bare" && PATH="$STUBS:$PATH" npm install --offline --no-audit --no-fund --omit=optional "$MAIN_TGZ" >"$T/bare.log" 2>&1)
check "the main package alone installs" [ -f "$T/bare/node_modules/$MAIN_NAME/bin/kiln.js" ]
check "... without the platform package" [ ! -e "$T/bare/node_modules/$PLATFORM_NAME" ]
(cd "$T/bare" && npx --no-install kiln --version) 2>"$T/err"
check "no platform package: exit 127" [ $? -eq 127 ]
check "... naming the package to install" grep -qF "$PLATFORM_NAME is not installed" "$T/err"

finish
