#!/usr/bin/env bash
# paths.sh - a file's bytes reach the encoders held in memory or streamed
# (--stream-size); the path must never change what kiln decides.  Two
# cases, each as its class:
#  4. no sibling has its source's size (nginx's ETag is mtime and size):
#     files whose encoding is exactly their own size, for gzip in memory,
#     gzip streamed and brotli both ways, at --max-ratio 1;
#  7. one tree through a sequence of runs (codings dropped and added back,
#     edits, a deletion, an addition), once never streamed and once always
#     streamed: the same outcomes, siblings, manifests and summaries.
. "$(dirname "$0")/lib.sh"
AUDIT=$(dirname "$0")/audit.py
audit() { /usr/bin/python3 "$AUDIT" "$@"; }
size() { stat -c %s "$1"; }

# ---------------------------------------------------------------------------
# 4. Sizes.  equal_size MODE EQ NEAR writes EQ, a text head and a random tail
# whose encoding by MODE's reference encoder is exactly EQ's size (searched
# over the head's length), and NEAR, the same with a longer head, which
# encodes smaller than itself.  The reference encoders are the tools kiln's
# output is specified to match (README): libdeflate-gzip -12 (gzip in
# memory), zlib level 9 (gzip streamed), brotli -q 11.
equal_size() {
	/usr/bin/python3 - "$@" <<'EOF'
import random, subprocess, sys, zlib
mode, eq_path, near_path = sys.argv[1:4]
def tool(argv):
    return lambda d: len(subprocess.run(argv, input=d, capture_output=True, check=True).stdout)
def zl(d):
    c = zlib.compressobj(9, zlib.DEFLATED, 31, 9)
    return len(c.compress(d) + c.flush())
enc = {"gz": tool(["libdeflate-gzip", "-12", "-c"]), "zlib": zl, "br": tool(["brotli", "-q", "11", "-c"])}[mode]
text = b"function compute(a, b) { return a + b; } // kiln\n" * 20
for seed in range(20):
    tail = random.Random(seed).randbytes(500 + seed)
    for n in range(16, len(text) - 80):
        d = text[:n] + tail
        e = enc(d)
        if e < len(d):
            break
        if e == len(d):
            near = text[:n + 80] + tail
            assert enc(near) < len(near)
            open(eq_path, "wb").write(d)
            open(near_path, "wb").write(near)
            print(f"{mode}: {len(d)} bytes encode to {e} (seed {seed}, head {n})", file=sys.stderr)
            sys.exit(0)
sys.exit("no file found whose encoding has its size")
EOF
}
# no sibling of FILE has FILE's size
no_equal_sibling() {
	local s
	for s in "$1".gz "$1".br; do
		[ ! -e "$s" ] || [ "$(size "$s")" != "$(size "$1")" ] || { echo "$s: $(size "$s") bytes, as its source" >&2; return 1; }
	done
}
# zlib's gzip of FILE (level 9, memLevel 9) without its 10-byte header
zlib_body() {
	/usr/bin/python3 -c 'import sys, zlib
c = zlib.compressobj(9, zlib.DEFLATED, 31, 9)
d = open(sys.argv[1], "rb").read()
sys.stdout.buffer.write((c.compress(d) + c.flush())[10:])' "$1"
}

G=$T/gz-memory Z=$T/gz-stream B0=$T/br-memory B1=$T/br-stream
mkdir -p "$G" "$Z" "$B0" "$B1"
check "sizes: a file whose gzip (libdeflate -12) has its size" equal_size gz "$G/eq.js" "$G/near.js"
check "sizes: a file whose gzip (zlib 9) has its size" equal_size zlib "$Z/eq.js" "$Z/near.js"
check "sizes: a file whose brotli has its size" equal_size br "$B0/eq.js" "$B0/near.js"
cp -p "$B0"/*.js "$B1/"

"$KILN" -q --max-ratio 1 --stream-size 0 "$G"
check "sizes, gzip in memory: exit 0" [ $? -eq 0 ]
check "sizes, gzip in memory: test setup: kiln's .gz is libdeflate's" cmp -s "$G/near.js.gz" <(libdeflate-gzip -12 -c "$G/near.js")
check "sizes, gzip in memory: no sibling of its source's size" no_equal_sibling "$G/eq.js"
check "sizes, gzip in memory: audit" audit "$G"

"$KILN" -q --max-ratio 1 --stream-size 256 "$Z"
check "sizes, gzip streamed: exit 0" [ $? -eq 0 ]
check "sizes, gzip streamed: test setup: kiln's streamed .gz is zlib 9's" cmp -s <(tail -c +11 "$Z/near.js.gz") <(zlib_body "$Z/near.js")
check "sizes, gzip streamed: no sibling of its source's size" no_equal_sibling "$Z/eq.js"
check "sizes, gzip streamed: audit" audit "$Z"

for b in "$B0:0" "$B1:1"; do
	d=${b%:*} ss=${b##*:}
	"$KILN" -q --no-gzip --brotli --max-ratio 1 --stream-size "$ss" "$d"
	check "sizes, brotli --stream-size $ss: exit 0" [ $? -eq 0 ]
	check "sizes, brotli --stream-size $ss: test setup: kiln's .br is brotli -q 11's" cmp -s "$d/near.js.br" <(brotli -q 11 -c "$d/near.js")
	check "sizes, brotli --stream-size $ss: no sibling of its source's size" no_equal_sibling "$d/eq.js"
	check "sizes, brotli --stream-size $ss: audit" audit "$d"
done

# the same trees with both codings (gzip added, or brotli added)
for b in "$G:0" "$Z:256" "$B0:0" "$B1:1"; do
	d=${b%:*} ss=${b##*:}
	"$KILN" -q --brotli --max-ratio 1 --stream-size "$ss" "$d"
	check "sizes, both codings, ${d##*/}: exit 0" [ $? -eq 0 ]
	check "sizes, both codings, ${d##*/}: no sibling of its source's size" no_equal_sibling "$d/eq.js"
	check "sizes, both codings, ${d##*/}: audit" audit "$d"
done

# ---------------------------------------------------------------------------
# 7. One tree, never streamed (M) and always streamed (S).  The same
# outcome per file, the same files, every .br byte-identical (gzip streamed
# is zlib, not libdeflate: its bytes may differ, and each .gz is checked by
# decoding, by audit.py), the same manifest once gzip's bytes and the
# stream size are left out, and the same run summary once gzip's byte
# counts and the time are left out.
M=$T/memory S=$T/stream
fresh_site "$M"
for i in 1 2 3; do
	for k in $(seq 1 25); do sed "s/function/g${k}x$i/g" "$FIXTURES/site/assets/app.js"; done >"$M/gen$i.js"
done
cp -a "$M" "$S"
same() { # same: M and S agree; prints what differs
	/usr/bin/python3 - "$M" "$S" "$T/m.json" "$T/s.json" <<'EOF'
import json, os, sys
m, s, mj, sj = sys.argv[1:5]
bad = []
def manifest(t):
    d = json.load(open(os.path.join(t, "kiln-manifest.json")))
    del d["settings"]["stream_size"]
    for e in d["files"].values():
        for part in ("encodings", "no_gain"):
            g = e.get(part, {}).get("gzip")
            if isinstance(g, dict):
                e[part]["gzip"] = {k: v for k, v in g.items() if k not in ("size", "sha256", "encoder")}
            elif g is not None:  # a bare size
                e[part]["gzip"] = None
    return d
def summary(f):
    d = json.load(open(f))
    del d["elapsed_seconds"]
    del d["bytes"]["gzip"]
    return d
def files(t):
    out = set()
    for dp, _, names in os.walk(t):
        out |= {os.path.relpath(os.path.join(dp, n), t) for n in names}
    return out
mm, sm = manifest(m), manifest(s)
for k in sorted(set(mm["files"]) | set(sm["files"])):
    a, b = mm["files"].get(k, {}), sm["files"].get(k, {})
    if a.get("skipped") != b.get("skipped") or set(a.get("encodings", {})) != set(b.get("encodings", {})):
        bad.append(f"{k}: outcome {a.get('skipped')} {sorted(a.get('encodings', {}))} in memory, "
                   f"{b.get('skipped')} {sorted(b.get('encodings', {}))} streamed")
    elif a != b:
        bad.append(f"{k}: manifest entries differ: {a} / {b}")
for k in mm:
    if k != "files" and mm[k] != sm[k]:
        bad.append(f"manifest {k} differs: {mm[k]} / {sm[k]}")
fm, fs = files(m), files(s)
if fm != fs:
    bad.append(f"files only in memory's tree: {sorted(fm - fs)}, only in stream's: {sorted(fs - fm)}")
for f in sorted(fm & fs):
    if f.endswith(".br") and open(os.path.join(m, f), "rb").read() != open(os.path.join(s, f), "rb").read():
        bad.append(f"{f} differs")
if summary(mj) != summary(sj):
    bad.append(f"summaries differ: {summary(mj)} / {summary(sj)}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
n=0
both() { # both [edit ACTION] KILN-OPTIONS...: one run on each tree, then compare
	local rm rs
	n=$((n + 1))
	"$KILN" -q --json --stream-size 0 "$@" "$M" >"$T/m.json"
	rm=$?
	"$KILN" -q --json --stream-size 1 "$@" "$S" >"$T/s.json"
	rs=$?
	check "paths step $n ($*): exit 0 in memory" [ $rm -eq 0 ]
	check "paths step $n ($*): exit 0 streamed" [ $rs -eq 0 ]
	check "paths step $n ($*): audit in memory" audit "$M"
	check "paths step $n ($*): audit streamed" audit "$S"
	check "paths step $n ($*): the same outcome" same
}
edit() { local t; for t in "$M" "$S"; do (cd "$t" && eval "$1"); done; }
both --brotli
both --brotli # unchanged: both reuse everything
edit 'echo "// e1" >>gen1.js'
both # brotli dropped, one source changed
both --no-gzip --brotli # gzip dropped, brotli added back
edit 'echo "// e2" >>gen2.js; rm index.html; cp assets/app.css new.css; echo "/* new */" >>new.css'
both --brotli # gzip added back; a source changed, one deleted, one new
both --brotli --max-ratio 0.2 # gen*.js keep theirs, the site's go
"$KILN" check -q "$M"
check "paths: kiln check exits 0 in memory" [ $? -eq 0 ]
"$KILN" check -q "$S"
check "paths: kiln check exits 0 streamed" [ $? -eq 0 ]

finish
