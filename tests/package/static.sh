#!/usr/bin/env bash
# static.sh - the KILN_STATIC=ON binary: statically linked with no dynamic
# dependency at all, under 8 MB stripped, no name-service lookups or xar
# (libxml2) linked in, and it works in a root directory holding nothing but
# itself and its input (no loader, no libraries, no /etc): it compresses a
# tree, checks it and rewrites an archive, and what it wrote decodes with
# the host's gzip and brotli.  Every library it links is in the README's
# licence table.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/static_checks.sh"
BUILD=${KILN_BUILD:?KILN_BUILD must name the build tree}
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}

# The binary.
static_binary_checks "$KILN" ""
ldd "$KILN" >"$T/ldd" 2>&1
check "ldd finds no dynamic dependency" grep -q 'not a dynamic executable' "$T/ldd"

# A root holding only the binary, a site and an archive.
R=$T/root
mkdir -p "$R/tmp"
cp "$T/kiln" "$R/kiln"
fresh_site "$R/site"
tar -C "$FIXTURES" -czf "$R/in.tar.gz" site
check "the root holds nothing else" [ "$(ls "$R" | tr '\n' ' ')" = "in.tar.gz kiln site tmp " ]
if [ "$(id -u)" -eq 0 ]; then
	inroot() { chroot "$R" "$@"; }
else
	inroot() { unshare -r chroot "$R" "$@"; }
fi
inroot /kiln --version >"$T/version" 2>&1
check "kiln --version runs in the empty root" [ $? -eq 0 ]
check "... and names the libraries" grep -q '^libdeflate ' "$T/version"
inroot /kiln -q --brotli /site 2>"$T/run.err"
check "kiln --brotli runs in the empty root" [ $? -eq 0 ]
check "... with nothing on stderr" [ ! -s "$T/run.err" ]
n=0
while IFS= read -r -d '' s; do
	n=$((n + 1))
	check "$s decodes to its source" decodes_to "$s" "${s%.*}"
done < <(find "$R/site" \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz -print0)
check "siblings were written ($n)" [ "$n" -gt 10 ]
check "index.html has a .gz" [ -f "$R/site/index.html.gz" ]
check "index.html has a .br" [ -f "$R/site/index.html.br" ]
check "the manifest names every sibling" python3 -c '
import json, os, sys
m = json.load(open(sys.argv[1] + "/kiln-manifest.json"))
paths = {e["path"] for f in m["files"].values() for e in f.get("encodings", {}).values()}
sys.exit(0 if paths and all(os.path.isfile(os.path.join(sys.argv[1], p)) for p in paths) else 1)' "$R/site"
inroot /kiln check /site 2>"$T/check.err"
check "kiln check passes in the empty root" [ $? -eq 0 ]
echo changed >>"$R/site/index.html"
inroot /kiln check /site 2>/dev/null
check "kiln check finds a changed file in the empty root (exit 3)" [ $? -eq 3 ]
inroot /kiln -q --brotli /in.tar.gz -o /out.tar.zst 2>"$T/archive.err"
check "kiln ARCHIVE -o OUT.tar.zst runs in the empty root" [ $? -eq 0 ]
mkdir -p "$T/x"
tar --zstd --warning=no-unknown-keyword -C "$T/x" -xf "$R/out.tar.zst"
check "the output archive holds the site" cmp -s "$T/x/site/index.html" "$FIXTURES/site/index.html"
check "... with its .br sibling" decodes_to "$T/x/site/index.html.br" "$T/x/site/index.html"
check "... and its .gz sibling" decodes_to "$T/x/site/index.html.gz" "$T/x/site/index.html"

# Every linked library's Debian package is in the README's licence table.
libs=$BUILD/static-libs.txt
check "the build lists the libraries it linked" [ -s "$libs" ]
check "... libarchive among them" grep -q '/libarchive\.a$' "$libs"
check "... and the C library" grep -q '/libc\.a$' "$libs"
licence_table_checks "$libs" "$SRC/README.md"

finish
