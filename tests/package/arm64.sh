#!/usr/bin/env bash
# arm64.sh - the static kiln for Linux on arm64 (packaging/arm64/build.sh),
# run on the x86-64 build host through qemu-user: `file` says it is an ARM
# aarch64 executable, statically linked; it has no program interpreter, no
# name-service lookups or libxml2 linked in, and is under 8 MB stripped; it
# prints the same library versions as the x86-64 static kiln (KILN); in a
# root directory holding nothing but itself, the emulator (a static
# program too) and a site, it compresses the site, checks it and rewrites
# an archive, and kiln serve serves it; its siblings decode with the host's
# gzip and brotli and are byte for byte those the x86-64 kiln writes for
# the same tree; every
# library it links is in the README's licence table.  The end-to-end
# suites run against it too, as tests of their own (tests/CMakeLists.txt):
# the README's Quick start names exactly those of KILN_ARM64_SUITES.
#
# Skipped (exit 77) when the cross compiler is not installed.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/static_checks.sh"
BUILD=${KILN_ARM64_BUILD:?KILN_ARM64_BUILD must name the arm64 build tree}
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
A=$BUILD/kiln
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "arm64.sh: skipped: no arm64 cross compiler (apt-get install gcc-aarch64-linux-gnu qemu-user-static and the :arm64 packages of the README's Quick start)" >&2
	rm -rf "$T"
	exit 77
fi
QEMU=$(command -v qemu-aarch64-static) || { echo "arm64.sh: qemu-aarch64-static is missing (apt-get install qemu-user-static)" >&2; exit 1; }
[ -f "$A" ] || { echo "arm64.sh: $A is missing (packaging/arm64/build.sh SRC $BUILD)" >&2; exit 1; }
arm() { "$QEMU" "$A" "$@"; }

# The binary.
static_binary_checks "$A" aarch64-linux-gnu-
check "file says ARM aarch64" grep -q 'ARM aarch64' "$T/file"
check "ELF machine AArch64" sh -c "readelf -h '$A' | grep -q 'Machine: *AArch64'"
check "zopfli is linked in" grep -qE ' [Tt] ZopfliDeflate$' "$T/nm"
check "kiln serve is in, without GnuTLS" sh -c "grep -q ' [Tt] MHD_start_daemon\$' '$T/nm' && ! grep -q ' [TtWw] gnutls_' '$T/nm'"

# Through qemu-user: the same kiln, the same libraries as the x86-64 one.
arm --version >"$T/version.arm64" 2>&1
check "kiln --version runs under qemu" [ $? -eq 0 ]
"$KILN" --version >"$T/version.x64" 2>&1
check "... and names kiln and every library at the x86-64 kiln's versions" cmp -s "$T/version.arm64" "$T/version.x64"
check "... zopfli among them" grep -q '^zopfli [0-9]' "$T/version.arm64"

# A root holding only the binary, the emulator, a site and an archive.
R=$T/root
mkdir -p "$R/tmp"
cp "$T/kiln" "$R/kiln"
cp "$QEMU" "$R/qemu"
check "the emulator is a static program too" sh -c "file -b '$R/qemu' | grep -qE 'static(-pie)? linked'"
fresh_site "$R/site"
tar -C "$FIXTURES" -czf "$R/in.tar.gz" site
if [ "$(id -u)" -eq 0 ]; then
	inroot() { chroot "$R" /qemu "$@"; }
else
	inroot() { unshare -r chroot "$R" /qemu "$@"; }
fi
inroot /kiln -q --best /site 2>"$T/run.err"
check "kiln --best runs in the empty root" [ $? -eq 0 ]
check "... with nothing on stderr" [ ! -s "$T/run.err" ]
n=0
while IFS= read -r -d '' s; do
	n=$((n + 1))
	check "$s decodes to its source" decodes_to "$s" "${s%.*}"
done < <(find "$R/site" \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz -print0)
check "siblings were written ($n)" [ "$n" -gt 10 ]
inroot /kiln check /site 2>"$T/check.err"
check "kiln check passes in the empty root" [ $? -eq 0 ]
fresh_site "$T/x64"
"$KILN" -q --best "$T/x64" 2>/dev/null
check "the x86-64 kiln --best on the same site" [ $? -eq 0 ]
siblings() { (cd "$1" && find . -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz -print0 | sort -z | xargs -0 sha256sum); }
siblings "$R/site" >"$T/siblings.arm64"
siblings "$T/x64" >"$T/siblings.x64"
check "the same siblings as the x86-64 kiln, byte for byte (zopfli, brotli)" cmp -s "$T/siblings.arm64" "$T/siblings.x64"
check "... .gz and .br ones" sh -c "grep -q '\.gz$' '$T/siblings.x64' && grep -q '\.br$' '$T/siblings.x64'"
# zstd, without brotli (kiln then writes .zst siblings)
fresh_site "$T/zst.arm64"
fresh_site "$T/zst.x64"
arm -q --zstd "$T/zst.arm64" 2>/dev/null
check "kiln --zstd under qemu" [ $? -eq 0 ]
"$KILN" -q --zstd "$T/zst.x64" 2>/dev/null
siblings "$T/zst.arm64" >"$T/zst.arm64.sums"
siblings "$T/zst.x64" >"$T/zst.x64.sums"
check "the same .zst siblings as the x86-64 kiln" cmp -s "$T/zst.arm64.sums" "$T/zst.x64.sums"
check "... there are some" grep -q '\.zst$' "$T/zst.x64.sums"
check "they decode with the host's zstd" sh -c "zstd -qdc '$T/zst.arm64/assets/app.js.zst' | cmp -s - '$T/zst.arm64/assets/app.js'"
# kiln serve in the empty root: the site's br sibling, never its manifest
port=$((20000 + RANDOM % 20000))
# started as a simple command, not through inroot (a function, whose
# subshell would be the process signalled): chroot and unshare exec, so
# $! ends up the emulator running kiln
if [ "$(id -u)" -eq 0 ]; then
	chroot "$R" /qemu /kiln serve --listen "127.0.0.1:$port" /site 2>"$T/serve.err" &
else
	unshare -r chroot "$R" /qemu /kiln serve --listen "127.0.0.1:$port" /site 2>"$T/serve.err" &
fi
spid=$!
for _ in $(seq 100); do
	grep -q '^kiln: serving' "$T/serve.err" && break
	sleep 0.1
done
check "kiln serve starts in the empty root" grep -q '^kiln: serving /site at ' "$T/serve.err"
curl -s -o "$T/index.br" -D "$T/index.h" -H 'Accept-Encoding: br' "http://127.0.0.1:$port/"
check "... serves index.html's br sibling" sh -c "grep -qi '^Content-Encoding: br' '$T/index.h' && brotli -dc '$T/index.br' | cmp -s - '$R/site/index.html'"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/kiln-manifest.json")
check "... and not its manifest ($code)" [ "$code" = 404 ]
kill -TERM "$spid" 2>/dev/null
wait "$spid"
check "... and SIGTERM stops it, exit status 0 ($?)" [ $? -eq 0 ]
echo changed >>"$R/site/index.html"
inroot /kiln check /site 2>/dev/null
check "kiln check finds a changed file in the empty root (exit 3)" [ $? -eq 3 ]
inroot /kiln -q --brotli /in.tar.gz -o /out.tar.zst 2>"$T/archive.err"
check "kiln ARCHIVE -o OUT.tar.zst runs in the empty root" [ $? -eq 0 ]
mkdir -p "$T/x"
tar --zstd --warning=no-unknown-keyword -C "$T/x" -xf "$R/out.tar.zst"
check "the output archive holds the site" cmp -s "$T/x/site/index.html" "$FIXTURES/site/index.html"
check "... with its .br sibling" decodes_to "$T/x/site/index.html.br" "$T/x/site/index.html"

# Every linked library's Debian package is in the README's licence table.
libs=$BUILD/static-libs.txt
check "the build lists the libraries it linked" [ -s "$libs" ]
check "... the arm64 libarchive among them" grep -q '/aarch64-linux-gnu/libarchive\.a$' "$libs"
check "... the arm64 zopfli" grep -q '/usr/lib/libzopfli\.a$' "$libs"
check "... and the arm64 C library" grep -q '/aarch64-linux-gnu/lib/libc\.a$' "$libs"
check "... the arm64 libmicrohttpd built without HTTPS" grep -q '/libmicrohttpd/usr/lib/libmicrohttpd\.a$' "$libs"
check "... and no x86-64 archive" not grep -q 'x86_64' "$libs"
licence_table_checks "$libs" "$SRC/README.md"

# The README names the suites run against it.
suites=${KILN_ARM64_SUITES:?KILN_ARM64_SUITES must list the end-to-end suites run against the arm64 kiln}
awk '/^## Quick start/{p=1; next} p && /^## /{exit} p' "$SRC/README.md" | tr '\n' ' ' |
	sed -n 's/.*the end-to-end suites \(.*\) against it.*/\1/p' | grep -o '`[a-z_]*`' | tr -d '`' | sort >"$T/readme.suites"
printf '%s\n' $suites | sort >"$T/suites"
check "the README's Quick start names the suites run against the arm64 kiln" cmp -s "$T/readme.suites" "$T/suites"
check "... which are some" [ "$(wc -l <"$T/suites")" -gt 5 ]
for t in $suites; do
	check "suite $t exists" [ -f "$SRC/tests/e2e/$t.sh" ]
done

finish
