#!/usr/bin/env bash
# stream.sh - files of --stream-size bytes or more are read in chunks and
# encoded in one streaming pass: the same outcomes, atomic writes and
# incremental re-runs as files held in memory, and memory that does not grow
# with the file.
. "$(dirname "$0")/lib.sh"

# data FILE KIB SEED: KIB KiB of JSON lines with varying values, the kind of
# large data file a site serves (deterministic for a seed).
data() {
	python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
path, kib, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
words = ["alpha", "bravo", "delta", "kiln", "oven", "glaze", "clay", "fire", "stone", "ash"]
with open(path, "w") as f:
    i, size = 0, 0
    while size < kib << 10:
        line = '{"id":%d,"name":"%s-%s","price":%.2f,"stock":%d,"tags":["%s","%s"]}\n' % (
            i, rnd.choice(words), rnd.choice(words), rnd.random() * 1000,
            rnd.randrange(10000), rnd.choice(words), rnd.choice(words))
        f.write(line)
        size += len(line)
        i += 1
EOF
}
# manifest_field DIR PATH CODING KEY: a value the manifest records.
manifest_field() {
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/kiln-manifest.json"))["files"][sys.argv[2]]; print(m["encodings"][sys.argv[3]][sys.argv[4]] if sys.argv[3] != "-" else m[sys.argv[4]])' "$@"
}
no_temps() { [ -z "$(find "$1" -name '.kiln-*.tmp')" ]; }

# 1. A tree with a large file, a large incompressible file and a small one.
D=$T/d
mkdir -p "$D"
data "$D/big.json" 1024 1
head -c $((512 << 10)) /dev/urandom >"$D/noise.bin"
cp "$FIXTURES/site/assets/app.js" "$D/app.js"
chmod 640 "$D/big.json"
touch -d '2021-02-03 04:05:06.123456789' "$D/big.json"
before=$(sources_digest "$D")
"$KILN" -q --brotli --verify --stream-size 256K "$D" 2>"$T/1.log"
rc=$? # before the $(cat) below, which sets $? itself
check "streamed run: exit 0 ($(cat "$T/1.log"))" [ $rc -eq 0 ]
check "streamed .gz decodes to the source (gzip -d)" decodes_to "$D/big.json.gz" "$D/big.json"
check "streamed .br decodes to the source (brotli -d)" decodes_to "$D/big.json.br" "$D/big.json"
check "streamed .gz is one gzip member that tests good" gzip -t "$D/big.json.gz"
for s in gz br; do
	check "streamed .$s has the source's mode" [ "$(stat -c %a "$D/big.json.$s")" = 640 ]
	check "streamed .$s has the source's mtime to the nanosecond (or KILN_MTIME_RESOLUTION_NS)" [ "$(mtime_of "$D/big.json.$s")" = "$(mtime_of "$D/big.json")" ]
done
check "incompressible large file: no sibling" [ ! -e "$D/noise.bin.gz" ]
check "incompressible large file: no sibling" [ ! -e "$D/noise.bin.br" ]
check "no temporary file left" no_temps "$D"
check "sources untouched" [ "$(sources_digest "$D")" = "$before" ]
check "a small file still gets libdeflate's bytes" cmp -s "$D/app.js.gz" <(libdeflate-gzip -12 -c "$D/app.js")
check "manifest: streamed .gz digest is the file's" [ "$(manifest_field "$D" big.json gzip sha256)" = "$(sha256sum <"$D/big.json.gz" | cut -d' ' -f1)" ]
check "manifest: streamed .br size is the file's" [ "$(manifest_field "$D" big.json br size)" = "$(stat -c %s "$D/big.json.br")" ]
check "manifest: source digest of a streamed file" [ "$(manifest_field "$D" big.json - sha256)" = "$(sha256sum <"$D/big.json" | cut -d' ' -f1)" ]
check "kiln check agrees" "$KILN" check -q "$D"

# 2. Against the same file held in memory: brotli loses nothing (the window
# is 16 MiB either way); gzip (zlib -9 instead of libdeflate -12) costs a
# little (4-12% on text), and never more than 20%.
M=$T/m
mkdir -p "$M" && cp -p "$D/big.json" "$M/"
"$KILN" -q --brotli --no-manifest --no-nginx-conf "$M"
sb=$(stat -c %s "$D/big.json.br") mb=$(stat -c %s "$M/big.json.br")
sg=$(stat -c %s "$D/big.json.gz") mg=$(stat -c %s "$M/big.json.gz")
check "streamed .br within 1% of in-memory .br ($sb vs $mb)" [ $((sb * 100)) -le $((mb * 101)) ]
check "streamed .gz within 20% of libdeflate -12 ($sg vs $mg)" [ $((sg * 100)) -le $((mg * 120)) ]
check "in-memory .gz is libdeflate's" cmp -s "$M/big.json.gz" <(libdeflate-gzip -12 -c "$M/big.json")

# 3. Re-run: nothing re-encoded or rewritten; then a change re-encodes.
ino=$(stat -c '%i %Y' "$D/big.json.gz" "$D/big.json.br")
"$KILN" -v --brotli --verify --stream-size 256K "$D" >"$T/3.out" 2>&1
check "unchanged re-run: exit 0" [ $? -eq 0 ]
check "unchanged re-run: siblings not rewritten" [ "$(stat -c '%i %Y' "$D/big.json.gz" "$D/big.json.br")" = "$ino" ]
check "unchanged re-run: reported unchanged" grep -q 'big.json: compressed.*gzip.*unchanged.*br.*unchanged' "$T/3.out"
echo '{"id":-1}' >>"$D/big.json"
"$KILN" -q --brotli --stream-size 256K "$D"
check "changed: new .gz decodes to the new content" decodes_to "$D/big.json.gz" "$D/big.json"
check "changed: new .br decodes to the new content" decodes_to "$D/big.json.br" "$D/big.json"
check "changed: kiln check agrees" "$KILN" check -q "$D"

# A different --stream-size picks the other gzip encoder: the .gz is made
# again, never kept from the run before (output depends on the options, not
# on history), and the .br, the same either way, is kept.
brino=$(stat -c %i "$D/big.json.br")
"$KILN" -q --brotli "$D"
check "stream size back to default: the .gz is libdeflate's again" cmp -s "$D/big.json.gz" <(libdeflate-gzip -12 -c "$D/big.json")
check "stream size back to default: the .br kept" [ "$(stat -c %i "$D/big.json.br")" = "$brino" ]
"$KILN" -q --brotli --stream-size 256K "$D"
check "streamed again: the .gz is zlib's again" not cmp -s "$D/big.json.gz" <(libdeflate-gzip -12 -c "$D/big.json")
check "streamed again: .gz decodes" decodes_to "$D/big.json.gz" "$D/big.json"

# 4. A dry run encodes and reports, and writes nothing.
N=$T/n
mkdir -p "$N" && data "$N/big.json" 512 2
"$KILN" -n -v --stream-size 256K "$N" >"$T/4.out" 2>&1
check "dry run: reports the streamed file compressed" grep -q 'big.json: compressed' "$T/4.out"
check "dry run: writes nothing" [ "$(find "$N" -type f | wc -l)" -eq 1 ]

# 5. Memory does not grow with the file: a 64 MiB file, gzip and a fast
# brotli quality, peak RSS under 3/4 of the file (about 43 MiB, most of it
# brotli's 16 MiB window and tables; held in memory, the file and its two
# encodings alone would take over 85 MiB).  (Not in sanitizer
# builds, whose shadow memory says nothing about kiln's.)
if [ -z "${KILN_SANITIZE:-}" ]; then
	B=$T/b
	mkdir -p "$B" && data "$B/huge.json" $((64 << 10)) 3
	rss=$(python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -1)' \
		"$KILN" -v --brotli --brotli-quality 3 --no-manifest --no-nginx-conf "$B" 2>"$T/b.log")
	check "64 MiB file: peak RSS measured ($rss KiB)" [ "$rss" -gt 0 ]
	# (not where Node.js runs kiln, KILN_NODE=1: its own, and its worker
	# threads', are most of the figure)
	[ -n "${KILN_NODE:-}" ] ||
		check "64 MiB file: peak RSS $rss KiB, under 48 MiB" [ "$rss" -lt $((48 << 10)) ]
	check "64 MiB file: .gz decodes" decodes_to "$B/huge.json.gz" "$B/huge.json"
	# brotli quality 3 may not beat zlib -9 on this data; then the keep
	# rules drop the .br (a .br is kept only when smaller than the .gz)
	br_ok() {
		local gz br
		gz=$(stat -c %s "$B/huge.json.gz")
		br=$(sed -n 's/.*huge.json: compressed, .* br \([0-9]*\) B .*/\1/p' "$T/b.log")
		if [ -e "$B/huge.json.br" ]; then
			[ "$br" = "$(stat -c %s "$B/huge.json.br")" ] && [ "$br" -lt "$gz" ] &&
				decodes_to "$B/huge.json.br" "$B/huge.json"
		else
			[ -n "$br" ] && [ "$br" -ge "$gz" ] && grep -q "br $br B ([0-9.]*%) no-gain" "$T/b.log"
		fi
	}
	check "64 MiB file: .br decodes, or is dropped as no smaller than the .gz" br_ok
	rm -rf "$B"
fi

# 6. SIGTERM while a large file is being encoded: both temporary files go.
S=$T/s
mkdir -p "$S" && data "$S/big.json" 4096 4
"$KILN" -q --brotli --stream-size 1M "$S" &
pid=$!
for _ in $(seq 200); do [ -n "$(find "$S" -name '.kiln-*.tmp')" ] && break; sleep 0.05; done
check "signal: two temporary files while streaming" [ "$(find "$S" -name '.kiln-*.tmp' | wc -l)" -eq 2 ]
kill -TERM $pid
wait $pid
rc=$?
check "signal: killed by SIGTERM (status $rc)" [ $rc -eq 143 ]
check "signal: no temporary file left" no_temps "$S"
check "signal: no sibling" [ ! -e "$S/big.json.gz" ]
check "signal: no sibling" [ ! -e "$S/big.json.br" ]

# 7. A full disk in the middle of a streamed sibling (root: a real tmpfs).
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/mnt" && mount -t tmpfs -o size=2560k tmpfs "$T/mnt" 2>/dev/null; then
	trap 'umount "$T/mnt" 2>/dev/null' EXIT
	data "$T/mnt/big.json" 2048 5
	"$KILN" -q --brotli --brotli-quality 3 --stream-size 1M "$T/mnt" 2>"$T/7.log"
	rc=$?
	check "disk full while streaming: exit 1 (got $rc)" [ $rc -eq 1 ]
	check "disk full while streaming: said so" grep -q 'big.json.*No space left on device' "$T/7.log"
	check "disk full while streaming: no temporary file" no_temps "$T/mnt"
	check "disk full while streaming: no partial sibling" [ ! -e "$T/mnt/big.json.gz" ]
	check "disk full while streaming: no partial sibling" [ ! -e "$T/mnt/big.json.br" ]
	umount "$T/mnt"
	trap - EXIT
fi

# 8. One sibling refused: the file gets none (held in memory or streamed),
# so no sibling is left that the manifest does not record.
for ss in 0 256K; do
	R=$T/r$ss
	mkdir -p "$R/c.js.br" && data "$R/c.js" 512 6
	"$KILN" -q --brotli --stream-size $ss "$R" 2>"$T/8.log"
	check "stream-size $ss, .br path a directory: exit 1" [ $? -eq 1 ]
	check "stream-size $ss: said so" grep -q 'c.js.br: is a directory, not replaced' "$T/8.log"
	check "stream-size $ss: no .gz written either" [ ! -e "$R/c.js.gz" ]
	check "stream-size $ss: no temporary file" no_temps "$R"
	# a read-only sibling beside a writable source: a dry run finds it too
	rmdir "$R/c.js.br" && echo old >"$R/c.js.gz" && chmod 444 "$R/c.js.gz"
	"$KILN" -n -q --brotli --stream-size $ss "$R" 2>"$T/8n.log"
	check "stream-size $ss, dry run: a read-only sibling is an error" grep -q 'c.js.gz: is read-only, not replaced' "$T/8n.log"
done

# 9. A link put at the sibling path while the file is being streamed is
# not replaced: the check is made again just before the rename.
L=$T/l
mkdir -p "$L" && data "$L/big.json" 4096 8 && echo keep >"$T/outside"
"$KILN" -q --brotli --stream-size 1M "$L" 2>"$T/9.log" &
pid=$!
for _ in $(seq 200); do [ "$(find "$L" -name '.kiln-*.tmp' | wc -l)" -eq 2 ] && break; sleep 0.05; done
ln -s "$T/outside" "$L/big.json.gz"
wait $pid
check "link put there meanwhile: exit 1" [ $? -eq 1 ]
check "link put there meanwhile: said so" grep -q 'big.json.gz: is a symbolic link, not replaced' "$T/9.log"
check "link put there meanwhile: still the link" [ -L "$L/big.json.gz" ]
check "link put there meanwhile: its target untouched" [ "$(cat "$T/outside")" = keep ]
check "link put there meanwhile: no .br either, no temporary file" [ ! -e "$L/big.json.br" ]
check "link put there meanwhile: no temporary file" no_temps "$L"

# 10. The option itself.
"$KILN" --stream-size lots "$D" 2>"$T/10.log"
check "--stream-size lots: usage error" [ $? -eq 2 ]
check "--stream-size lots: says why" grep -q '^kiln: --stream-size' "$T/10.log"
finish
