#!/usr/bin/env bash
# static.sh - the KILN_STATIC=ON binary: statically linked with no dynamic
# dependency at all, under 8 MB stripped, no name-service lookups or xar
# (libxml2) linked in, and it works in a root directory holding nothing but
# itself and its input (no loader, no libraries, no /etc): it compresses a
# tree, checks it and rewrites an archive, and what it wrote decodes with
# the host's gzip and brotli, and its kiln serve serves a tree from the
# FROM scratch container recipe of docs/serving.md.  It links no GnuTLS,
# and every library it links is in the README's licence table.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/static_checks.sh"
BUILD=${KILN_BUILD:?KILN_BUILD must name the build tree}
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}

# The binary.
static_binary_checks "$KILN" ""
ldd "$KILN" >"$T/ldd" 2>&1
check "ldd finds no dynamic dependency" grep -q 'not a dynamic executable' "$T/ldd"
check "no GnuTLS linked (libmicrohttpd built without HTTPS)" not grep -q ' [TtWw] gnutls_' "$T/nm"
check "... and kiln serve is in" grep -q ' [Tt] MHD_start_daemon$' "$T/nm"

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

# The container recipe of docs/serving.md, without a container runtime:
# its root built from the Dockerfile block (FROM scratch, each COPY from a
# context holding the stripped binary and a tree kiln ran on), its
# ENTRYPOINT run there as PID 1 of a new PID namespace, on 127.0.0.1.
python3 - "$SRC/docs/serving.md" >"$T/recipe" <<'PY' || fail "docs/serving.md has the FROM scratch recipe"
import json, re, sys
m = re.search(r"```dockerfile\n(.*?)```", open(sys.argv[1]).read(), re.S)
lines = m.group(1).strip().split("\n")
assert lines[0] == "FROM scratch", lines[0]
for l in lines[1:]:
    w = l.split(None, 1)
    if w[0] == "COPY":
        print("COPY", *w[1].split())
    elif w[0] == "ENTRYPOINT":
        print("ENTRYPOINT", *json.loads(w[1]))
    elif w[0] != "EXPOSE":
        sys.exit("unexpected instruction " + l)
PY
C=$T/context
mkdir -p "$C"
cp "$T/kiln" "$C/kiln"
fresh_site "$C/dist"
"$KILN" -q --brotli "$C/dist"
I=$T/image
mkdir -p "$I"
entry=()
while read -r what a b rest; do
	case $what in
	COPY) mkdir -p "$(dirname "$I/$b")" && cp -a "$C/$a" "$I/$b" ;;
	ENTRYPOINT) read -r -a entry <<<"$a $b $rest" ;;
	esac
done <"$T/recipe"
check "the recipe's image holds the binary and the tree only" [ "$(ls "$I" | tr '\n' ' ')" = "kiln srv " ]
check "the recipe's entry point listens on 0.0.0.0:8080" grep -q '^ENTRYPOINT /kiln serve --listen 0.0.0.0:8080 ' "$T/recipe"
port=$((20000 + RANDOM % 20000))
for i in "${!entry[@]}"; do
	[ "${entry[$i]}" = 0.0.0.0:8080 ] && entry[$i]=127.0.0.1:$port
done
if [ "$(id -u)" -eq 0 ]; then
	unshare --pid --fork chroot "$I" "${entry[@]}" 2>"$T/serve.err" &
else
	unshare -r --pid --fork chroot "$I" "${entry[@]}" 2>"$T/serve.err" &
fi
upid=$!
for _ in $(seq 50); do
	grep -q '^kiln: serving' "$T/serve.err" && break
	sleep 0.1
done
check "kiln serve starts in the recipe's image" grep -q '^kiln: serving /srv at http://127.0.0.1:' "$T/serve.err"
curl -s -o "$T/index.br" -D "$T/index.h" -H 'Accept-Encoding: gzip, br' "http://127.0.0.1:$port/"
check "... serves / as index.html's br sibling" grep -qi '^Content-Encoding: br' "$T/index.h"
check "... whose bytes decode to index.html" sh -c "brotli -dc '$T/index.br' | cmp -s - '$C/dist/index.html'"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/kiln-manifest.json")
check "... and not its manifest ($code)" [ "$code" = 404 ]
kpid=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | tr -d ' ')
check "kiln serve runs as PID 1 of its namespace" sh -c "grep -q '^NSpid:.*[[:space:]]1\$' /proc/$kpid/status"
kill -TERM "$kpid" 2>/dev/null
wait "$upid"
check "... and SIGTERM stops it, exit status 0 ($?)" [ $? -eq 0 ]

# Every linked library's Debian package is in the README's licence table.
libs=$BUILD/static-libs.txt
check "the build lists the libraries it linked" [ -s "$libs" ]
check "... libarchive among them" grep -q '/libarchive\.a$' "$libs"
check "... and the C library" grep -q '/libc\.a$' "$libs"
check "... and the libmicrohttpd built without HTTPS" grep -q '/libmicrohttpd/usr/lib/libmicrohttpd\.a$' "$libs"
licence_table_checks "$libs" "$SRC/README.md"

finish
