#!/usr/bin/env bash
# codings.sh - zstd siblings and zopfli-made gzip, end to end: every .zst
# decodes with the zstd tool, is one frame with its content size and a
# checksum, no dictionary ID and a window of at most 8 MiB (RFC 9659) at
# every level and on both paths; a .zst beside a .br is smaller than it;
# --zopfli never makes a .gz larger than libdeflate-gzip -12's and is
# deterministic; --best turns everything on; re-runs, --cache, check, clean,
# archives and --json cover zstd like the other codings.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

decodes() { # decodes SIBLING SOURCE, with the coding's own command-line tool
	case $1 in
	*.zst) zstd -q -dc -- "$1" | cmp -s - "$2" ;;
	*) decodes_to "$1" "$2" ;;
	esac
}

# frame SIBLING FIELD: a field of a zstd frame's header, as Python's
# zstandard module reads it (window_size, content_size, dict_id,
# has_checksum), or "frames": 1 when the file is exactly one frame.
frame() {
	$PY - "$1" "$2" <<'EOF'
import sys, zstandard
data = open(sys.argv[1], "rb").read()
if sys.argv[2] == "frames":
    d = zstandard.ZstdDecompressor().decompressobj()
    d.decompress(data)
    print(1 if d.eof and not d.unused_data else 2)
else:
    print(int(getattr(zstandard.get_frame_parameters(data), sys.argv[2])))
EOF
}

# periodic PATH BYTES: a file every encoder gets through fast even at its
# slowest level (a 4 KiB block pattern), so that large files stay quick.
periodic() {
	$PY - "$1" "$2" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
block = bytes((b"abcdefghij0123456789"[i % 20] ^ ((i >> 12) & 1)) for i in range(40960))
with open(path, "wb") as f:
    while n > 0:
        f.write(block[:min(n, len(block))])
        n -= len(block)
EOF
}

# 1. --zstd alone on the example site.
fresh_site "$T/z"
"$KILN" -q --zstd --verify "$T/z"
check "zstd: exit 0" [ $? -eq 0 ]
nz=0
while IFS= read -r -d '' s; do
	nz=$((nz + 1))
	check "$s decodes with zstd -d" decodes "$s" "${s%.zst}"
	check "$s: one frame" [ "$(frame "$s" frames)" = 1 ]
	check "$s: content size in the header" [ "$(frame "$s" content_size)" = "$(stat -c %s "${s%.zst}")" ]
	check "$s: a checksum" [ "$(frame "$s" has_checksum)" = 1 ]
	check "$s: no dictionary ID" [ "$(frame "$s" dict_id)" = 0 ]
	check "$s: window at most 8 MiB" [ "$(frame "$s" window_size)" -le $((8 << 20)) ]
	check "$s: source's mode" [ "$(stat -c %a "$s")" = "$(stat -c %a "${s%.zst}")" ]
	check "$s: source's mtime" [ "$(mtime_of "$s")" = "$(mtime_of "${s%.zst}")" ]
	# kept beside a .gz only when smaller: a server tries zstd first
	check "$s: smaller than the .gz" [ "$(stat -c %s "$s")" -lt "$(stat -c %s "${s%.zst}.gz")" ]
done < <(find "$T/z" -name '*.zst' -print0)
# on these small files zstd -19 and libdeflate -12 are within a few bytes
# of each other; the larger ones get a .zst (zstd wins there)
check "zstd: some files got a .zst ($nz)" [ "$nz" -ge 2 ]
check "zstd: app.js got one" [ -f "$T/z/assets/app.js.zst" ]
check "zstd: the .gz stays beside it" [ -f "$T/z/assets/app.js.gz" ]
check "zstd: recorded with its token and encoder" [ "$($PY -c 'import json,sys; e=json.load(open(sys.argv[1]))["files"]["assets/app.js"]["encodings"]["zstd"]; print(e["path"], e["encoder"].split("-")[0])' "$T/z/kiln-manifest.json")" = "assets/app.js.zst zstd" ]
check "zstd: the manifest records libzstd's version" [ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["generator"]["zstd"])' "$T/z/kiln-manifest.json")" = "$(pkg-config --modversion libzstd)" ]
check "zstd: audit" $PY "$(dirname "$0")/audit.py" "$T/z"
"$KILN" check -q "$T/z"
check "zstd: check exit 0" [ $? -eq 0 ]
# a re-run keeps every .zst (same inode), --no-zstd takes them away
ino=$(stat -c %i "$T/z/assets/app.js.zst")
"$KILN" -q --zstd "$T/z"
check "zstd: unchanged re-run keeps the .zst" [ "$(stat -c %i "$T/z/assets/app.js.zst")" = "$ino" ]
"$KILN" -q "$T/z"
check "zstd turned off: no .zst left" [ -z "$(find "$T/z" -name '*.zst')" ]
check "zstd turned off: audit" $PY "$(dirname "$0")/audit.py" "$T/z"

# 2. Large files, every path: the window never exceeds 8 MiB, even at the
# ultra levels (whose own choice would be 2^27), in memory and streamed.
mkdir -p "$T/big"
periodic "$T/big/data.bin.txt" $((9 << 20))
for ss in 0 4M; do
	for level in 19 22; do
		rm -f "$T/big/"*.zst
		"$KILN" -q --no-manifest --no-nginx-conf --zstd --zstd-level "$level" --stream-size "$ss" "$T/big"
		check "9 MiB, level $level, stream-size $ss: exit 0" [ $? -eq 0 ]
		check "9 MiB, level $level, stream-size $ss: window 8 MiB at most ($(frame "$T/big/data.bin.txt.zst" window_size))" \
			[ "$(frame "$T/big/data.bin.txt.zst" window_size)" -le $((8 << 20)) ]
		check "9 MiB, level $level, stream-size $ss: decodes" decodes "$T/big/data.bin.txt.zst" "$T/big/data.bin.txt"
		check "9 MiB, level $level, stream-size $ss: zstd's own limit accepts it" \
			sh -c "zstd -q -d --memory=8MB -c '$T/big/data.bin.txt.zst' | cmp -s - '$T/big/data.bin.txt'"
	done
done
# both paths give the same bytes: the recipe does not depend on streaming
"$KILN" -q --no-manifest --no-nginx-conf --zstd --stream-size 0 "$T/big"
cp "$T/big/data.bin.txt.zst" "$T/inmem.zst"
rm -f "$T/big/"*.zst "$T/big/"*.gz
"$KILN" -q --no-manifest --no-nginx-conf --zstd --stream-size 1M "$T/big"
check "streamed .zst is the in-memory one" cmp -s "$T/big/data.bin.txt.zst" "$T/inmem.zst"

# 3. Beside a .br, a .zst is kept only when smaller: a server trying zstd
# first then gives every client its smallest sibling.
fresh_site "$T/bz"
"$KILN" --json --brotli --zstd --verify "$T/bz" >"$T/bz.json" 2>"$T/bz.err"
check "br+zstd: exit 0" [ $? -eq 0 ]
# the summary says what became of the codings asked for: the compressed
# assets (those with a .gz) that got no .zst are counted, and when none got
# one the line says so, with the keep rule's reason
nozst=0 nzst=0
while IFS= read -r -d '' g; do
	src=${g%.gz}
	[ -f "$src" ] || continue
	if [ -f "$src.zst" ]; then nzst=$((nzst + 1)); else nozst=$((nozst + 1)); fi
done < <(find "$T/bz" -name '*.gz' -print0)
check "br+zstd: --json counts the assets without a .zst ($nozst)" \
	[ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"]["zstd"]["not_kept"])' "$T/bz.json")" = "$nozst" ]
if [ "$nzst" -eq 0 ]; then
	check "br+zstd: the summary says no .zst was kept, and why" \
		grep -q '; zstd: none kept (none smaller than the siblings kept beside it);' "$T/bz.err"
else
	check "br+zstd: the summary has zstd's bytes" grep -q '; zstd .* -> ' "$T/bz.err"
fi
# one file whose .zst (the zstd tool's, at kiln's level) is larger than its .br
mkdir -p "$T/bz1"
cp "$FIXTURES/site/index.html" "$T/bz1/"
check "precondition: zstd -19 loses to brotli -q 11 on index.html" \
	[ "$(zstd -19 -q -c "$T/bz1/index.html" | wc -c)" -gt "$(brotli -q 11 -c "$T/bz1/index.html" | wc -c)" ]
"$KILN" --no-manifest --no-nginx-conf --brotli --zstd "$T/bz1" 2>"$T/bz1.err"
check "one file, br+zstd: no .zst" [ ! -e "$T/bz1/index.html.zst" ]
check "one file, br+zstd: the summary says why" \
	grep -q '; zstd: none kept (none smaller than the siblings kept beside it);' "$T/bz1.err"
# and where zstd is kept (a 1 MiB file repeating every 40 KiB, farther back
# than gzip's 32 KiB window reaches): no such line
periodic "$T/bz1/periodic.txt" $((1 << 20))
rm -f "$T/bz1/index.html"
"$KILN" --no-manifest --no-nginx-conf --zstd "$T/bz1" 2>"$T/bz1b.err"
check "zstd kept: a .zst" [ -f "$T/bz1/periodic.txt.zst" ]
check "zstd kept: no 'none kept' line" sh -c "! grep -q 'none kept' '$T/bz1b.err'"
check "zstd kept: its bytes in the summary" grep -q '; zstd .* -> ' "$T/bz1b.err"
while IFS= read -r -d '' s; do
	src=${s%.zst}
	check "$s: smaller than the .br" [ "$(stat -c %s "$s")" -lt "$(stat -c %s "$src.br")" ]
done < <(find "$T/bz" -name '*.zst' -print0)
while IFS= read -r -d '' b; do
	src=${b%.br}
	check "$b: smaller than the .gz" [ "$(stat -c %s "$b")" -lt "$(stat -c %s "$src.gz")" ]
done < <(find "$T/bz" -name '*.br' -print0)
check "br+zstd: audit" $PY "$(dirname "$0")/audit.py" "$T/bz"

# 4. --zopfli: per file never larger than libdeflate-gzip -12, smaller in
# total, deterministic, and reused from the cache.
fresh_site "$T/zo"
"$KILN" -q --zopfli --zopfli-iterations 5 --verify --cache "$T/cache" "$T/zo"
check "zopfli: exit 0" [ $? -eq 0 ]
total_k=0 total_l=0 smaller=0
while IFS= read -r -d '' g; do
	src=${g%.gz}
	k=$(stat -c %s "$g")
	l=$(libdeflate-gzip -12 -c "$src" | wc -c)
	total_k=$((total_k + k))
	total_l=$((total_l + l))
	[ "$k" -lt "$l" ] && smaller=$((smaller + 1))
	check "$g: no larger than libdeflate-gzip -12 ($k vs $l)" [ "$k" -le "$l" ]
	check "$g: decodes" decodes "$g" "$src"
done < <(find "$T/zo" -name '*.gz' ! -name archive.tar.gz -print0)
check "zopfli: smaller in total ($total_k vs $total_l)" [ "$total_k" -lt "$total_l" ]
check "zopfli: some files strictly smaller ($smaller)" [ "$smaller" -ge 3 ]
fresh_site "$T/zo2"
"$KILN" -q --zopfli --zopfli-iterations 5 -v --cache "$T/cache" "$T/zo2" 2>"$T/zo2.log"
check "zopfli, warm cache: every .gz from the cache" [ "$(grep -c 'gzip [0-9]* B ([0-9.]*%) from cache' "$T/zo2.log")" -eq 12 ]
check "zopfli: the same bytes on another copy" [ "$(cd "$T/zo" && find . -name '*.gz' -print0 | sort -z | xargs -0 sha256sum)" = "$(cd "$T/zo2" && find . -name '*.gz' -print0 | sort -z | xargs -0 sha256sum)" ]
"$KILN" -q --zopfli --zopfli-iterations 6 -v "$T/zo2" 2>"$T/zo3.log"
check "zopfli: other iterations re-encode" [ "$(grep -c 'unchanged' "$T/zo3.log")" -eq 0 ]
# a streamed file keeps zlib's encoder: --zopfli changes nothing there
mkdir -p "$T/zs1" "$T/zs2"
periodic "$T/zs1/s.txt" 300000
cp "$T/zs1/s.txt" "$T/zs2/s.txt"
"$KILN" -q --stream-size 100K "$T/zs1"
"$KILN" -q --stream-size 100K --zopfli "$T/zs2"
check "zopfli, streamed file: zlib's .gz either way" cmp -s "$T/zs1/s.txt.gz" "$T/zs2/s.txt.gz"

# 5. --best: every coding at its best settings.
fresh_site "$T/best"
"$KILN" -q --best --verify "$T/best"
check "--best: exit 0" [ $? -eq 0 ]
check "--best: settings" [ "$($PY -c 'import json,sys; s=json.load(open(sys.argv[1]))["settings"]; print(s["encodings"], s["gzip_level"], s["zopfli_iterations"], s["brotli_quality"], s["zstd_level"])' "$T/best/kiln-manifest.json")" = "['gzip', 'br', 'zstd'] 12 15 11 19" ]
check "--best: audit" $PY "$(dirname "$0")/audit.py" "$T/best"

# 6. check, clean, --json and archives know .zst.
fresh_site "$T/c"
"$KILN" -q --zstd "$T/c"
echo "// edit" >>"$T/c/assets/app.js"
"$KILN" check "$T/c" 2>"$T/c.log"
check "check: a stale .zst is a problem (exit 3)" [ $? -eq 3 ]
check "check: names it" grep -q 'app.js: stale zstd sibling' "$T/c.log"
"$KILN" -q --zstd --json "$T/c" >"$T/c.json"
check "--json: zstd bytes" [ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"]["zstd"]["out"] > 0)' "$T/c.json")" = True ]
"$KILN" clean -q "$T/c"
check "clean: no .zst left" [ -z "$(find "$T/c" -name '*.zst')" ]
fresh_site "$T/a"
tar -C "$T" -czf "$T/a.tar.gz" a
"$KILN" -q --zstd "$T/a.tar.gz" -o "$T/out.tar"
check "archive: exit 0" [ $? -eq 0 ]
check "archive: holds the .zst" sh -c "tar -tf '$T/out.tar' | grep -qx 'a/assets/app.js.zst'"

finish
