#!/usr/bin/env bash
# archive.sh - kiln ARCHIVE|DIR -o OUT: the output extracts (with GNU tar and
# bsdtar) to exactly what `kiln DIR` makes of the same tree; a directory
# input is left as it was; two runs give the same bytes; zip in, .tar.zst
# out; owners; every kind of hostile archive is refused with nothing
# written; the cache and a previous output are reused; usage errors; a
# signal leaves nothing behind.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

# ---- the input tree: the example site, a symbolic link, an executable,
# mtimes of our own (whole seconds: GNU tar's format keeps no more)
SRC=$T/src/dist
mkdir -p "$T/src"
fresh_site "$SRC"
ln -s assets/app.js "$SRC/latest.js"
cp "$FIXTURES/site/assets/app.js" "$SRC/tool.js" && chmod 755 "$SRC/tool.js"
chmod 600 "$SRC/data/feed.xml"
i=0
while IFS= read -r -d '' f; do
	i=$((i + 1))
	touch -h -d "@$((1600000000 + i * 3600))" "$f"
done < <(find "$SRC" -depth -print0)

# The reference: kiln run on a copy of the directory.
cp -a "$SRC" "$T/ref"
"$KILN" -q --brotli "$T/ref" || fail "reference run"
# the index a run keeps beside the manifest (lib/index.h) is no part of an
# archive: no run sees its staging tree again
check "the reference run keeps an index" [ -f "$T/ref/.kiln-manifest.json.index" ]
rm "$T/ref/.kiln-manifest.json.index"

# tree_eq A B: same names, types, bytes, link targets and permission bits
tree_eq() {
	local a=$1 b=$2 bad=0
	[ "$(cd "$a" && find . | LC_ALL=C sort)" = "$(cd "$b" && find . | LC_ALL=C sort)" ] || {
		echo "file lists differ: $a $b" >&2
		diff <(cd "$a" && find . | LC_ALL=C sort) <(cd "$b" && find . | LC_ALL=C sort) >&2
		return 1
	}
	while IFS= read -r -d '' f; do
		if [ -L "$a/$f" ]; then
			[ "$(readlink "$a/$f")" = "$(readlink "$b/$f")" ] || { echo "link differs: $f" >&2; bad=1; }
		elif [ -f "$a/$f" ]; then
			cmp -s "$a/$f" "$b/$f" || { echo "bytes differ: $f" >&2; bad=1; }
		fi
		[ -L "$a/$f" ] || [ "$(stat -c %a "$a/$f")" = "$(stat -c %a "$b/$f")" ] ||
			{ echo "mode differs: $f" >&2; bad=1; }
	done < <(cd "$a" && find . -mindepth 1 -print0)
	return $bad
}

# siblings_ok DIR: every .gz/.br decodes to its source and has its mtime
siblings_ok() {
	local bad=0 n=0
	while IFS= read -r -d '' s; do
		[ "${s##*/}" = archive.tar.gz ] && continue
		n=$((n + 1))
		decodes_to "$s" "${s%.*}" || { echo "bad sibling: $s" >&2; bad=1; }
		[ "$(stat -c %Y "$s")" = "$(stat -c %Y "${s%.*}")" ] || { echo "sibling mtime: $s" >&2; bad=1; }
	done < <(find "$1" -type f \( -name '*.gz' -o -name '*.br' \) -print0)
	[ $n -gt 10 ] && [ $bad -eq 0 ]
}

# mtimes_eq A B: every non-sibling entry has the same mtime (seconds)
mtimes_eq() {
	diff <(cd "$1" && find . ! -name '*.gz' ! -name '*.br' ! -name 'kiln*' -printf '%P %Ts\n' | LC_ALL=C sort) \
		<(cd "$2" && find . ! -name '*.gz' ! -name '*.br' ! -name 'kiln*' -printf '%P %Ts\n' | LC_ALL=C sort) >&2
}

no_leftovers() { # no staging directory or temporary file in DIR
	[ -z "$(find "$1" -maxdepth 1 -name '.kiln-*')" ]
}

# ---- round trip: dist.tar.gz (made by GNU tar, entries dist/...) in, .tar out
tar -C "$T/src" -czf "$T/dist.tar.gz" dist
mkdir -p "$T/o"
"$KILN" -q --brotli "$T/dist.tar.gz" -o "$T/o/deploy.tar" 2>"$T/rt.err"
check "round trip: exit 0" [ $? -eq 0 ]
check "round trip: quiet" [ ! -s "$T/rt.err" ]
check "round trip: no leftovers" no_leftovers "$T/o"
mkdir -p "$T/x-gnu" "$T/x-bsd"
tar -C "$T/x-gnu" -xf "$T/o/deploy.tar" 2>"$T/gnutar.err"
check "GNU tar extracts it without a word" [ ! -s "$T/gnutar.err" ]
bsdtar -C "$T/x-bsd" -xf "$T/o/deploy.tar"
check "round trip: one top directory, dist/" [ "$(ls "$T/x-gnu")" = dist ]
check "round trip (GNU tar) = kiln on the directory" tree_eq "$T/x-gnu/dist" "$T/ref"
check "round trip (bsdtar) = kiln on the directory" tree_eq "$T/x-bsd/dist" "$T/ref"
check "round trip: siblings decode, with their source's mtime" siblings_ok "$T/x-gnu/dist"
check "round trip: mtimes kept" mtimes_eq "$T/x-gnu/dist" "$SRC"
check "round trip: symlink kept" [ "$(readlink "$T/x-gnu/dist/latest.js")" = assets/app.js ]
check "round trip: sibling mode follows its source (0755)" [ "$(stat -c %a "$T/x-gnu/dist/tool.js.gz")" = 755 ]
check "round trip: sibling mode follows its source (0600)" [ "$(stat -c %a "$T/x-gnu/dist/data/feed.xml.gz")" = 600 ]
check "round trip: entries sorted" [ "$(tar -tf "$T/o/deploy.tar")" = "$(tar -tf "$T/o/deploy.tar" | LC_ALL=C sort)" ]
check "round trip: owners 0:0" [ -z "$(tar --numeric-owner -tvf "$T/o/deploy.tar" | awk '$2 != "0/0"')" ]
check "round trip: kiln check passes on the extracted tree" "$KILN" check -q "$T/x-gnu/dist"

# ---- a directory in: the directory is left exactly as it was
state() { (cd "$1" && find . -printf '%P %y %m %T@ %s %l\n' | LC_ALL=C sort && tree_digest .); }
before=$(state "$SRC")
"$KILN" -q --brotli "$SRC" -o "$T/o/fromdir.tar.gz"
check "directory in: exit 0" [ $? -eq 0 ]
check "directory in: the directory is untouched (names, modes, mtimes, bytes)" [ "$(state "$SRC")" = "$before" ]
mkdir -p "$T/x-dir"
tar -C "$T/x-dir" -xzf "$T/o/fromdir.tar.gz"
check "directory in: entries named dist/..." [ "$(ls "$T/x-dir")" = dist ]
check "directory in: = kiln on the directory" tree_eq "$T/x-dir/dist" "$T/ref"
check "directory in: mtimes kept" mtimes_eq "$T/x-dir/dist" "$SRC"
check "directory in: siblings decode" siblings_ok "$T/x-dir/dist"
"$KILN" -q "$SRC" -o "$SRC/inside.tar" 2>"$T/inside.err"
check "output inside the input directory: exit 1" [ $? -eq 1 ]
check "output inside the input directory: said so" grep -qF "kiln: $SRC: the output is inside the input directory (give -o a path outside it)" "$T/inside.err"
check "output inside the input directory: nothing written" [ "$(state "$SRC")" = "$before" ]

# ---- determinism: two runs at different seconds, every output format
for f in tar tar.gz tar.zst tar.xz zip; do
	"$KILN" -q --brotli "$T/dist.tar.gz" -o "$T/o/one.$f" || fail "determinism run 1 ($f)"
done
sleep 1.1
for f in tar tar.gz tar.zst tar.xz zip; do
	"$KILN" -q --brotli "$T/dist.tar.gz" -o "$T/o/two.$f" || fail "determinism run 2 ($f)"
	check "deterministic: .$f" cmp -s "$T/o/one.$f" "$T/o/two.$f"
done
check "the .tar.gz header has MTIME 0" [ "$(od -An -tx1 -j4 -N4 "$T/o/one.tar.gz" | tr -d ' ')" = 00000000 ]
"$KILN" -q --brotli "$SRC" -o "$T/o/dir1.tar" && sleep 1.1 && "$KILN" -q --brotli "$SRC" -o "$T/o/dir2.tar"
check "deterministic from a directory" cmp -s "$T/o/dir1.tar" "$T/o/dir2.tar"
SOURCE_DATE_EPOCH=1234567890 "$KILN" -q "$T/dist.tar.gz" -o "$T/o/sde.tar"
check "SOURCE_DATE_EPOCH dates the manifest" \
	[ "$(tar --full-time -tvf "$T/o/sde.tar" dist/kiln-manifest.json | awk '{print $4" "$5}')" = "$(TZ=UTC0 date -d @1234567890 '+%Y-%m-%d %H:%M:%S')" ]

# ---- .tar.zst out: a real zstd stream holding the same tree
check ".tar.zst: a zstd stream" zstd -q -t "$T/o/one.tar.zst"
mkdir -p "$T/x-zst"
zstd -q -dc "$T/o/one.tar.zst" | tar -C "$T/x-zst" -xf -
check ".tar.zst = kiln on the directory" tree_eq "$T/x-zst/dist" "$T/ref"
mkdir -p "$T/x-zip"
bsdtar -C "$T/x-zip" -xf "$T/o/one.zip"
check "zip out = kiln on the directory" tree_eq "$T/x-zip/dist" "$T/ref"

# ---- a zip in (made by Python's zipfile, names relative to the site)
$PY - "$FIXTURES/site" "$T/site.zip" <<'EOF'
import os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            z.write(p, os.path.relpath(p, root))
EOF
"$KILN" -q --brotli "$T/site.zip" -o "$T/o/fromzip.tar" 2>"$T/zip.err"
check "zip in: exit 0" [ $? -eq 0 ]
mkdir -p "$T/x-fromzip" "$T/ref-site"
tar -C "$T/x-fromzip" -xf "$T/o/fromzip.tar"
fresh_site "$T/ref-site/s"
"$KILN" -q --brotli "$T/ref-site/s"
check "zip in: same files and bytes as kiln on the directory" \
	[ "$(tree_digest "$T/x-fromzip")" = "$(tree_digest "$T/ref-site/s")" ]
check "zip in: siblings decode" siblings_ok "$T/x-fromzip"

# ---- owners
$PY - "$T/owned.tar" "$FIXTURES/site/index.html" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    ti = t.gettarinfo(sys.argv[2], "index.html")
    ti.uid, ti.gid, ti.uname, ti.gname, ti.mtime = 1234, 5678, "alice", "staff", 1500000000
    with open(sys.argv[2], "rb") as f:
        t.addfile(ti, f)
EOF
owners() { $PY -c 'import sys, tarfile
for m in tarfile.open(sys.argv[1]): print(m.name, m.uid, m.gid, m.uname, m.gname)' "$1"; }
"$KILN" -q "$T/owned.tar" -o "$T/o/owned0.tar"
check "owners: uid/gid 0, no names by default" [ -z "$(owners "$T/o/owned0.tar" | awk '$2 != 0 || $3 != 0 || NF != 3')" ]
"$KILN" -q --keep-owner "$T/owned.tar" -o "$T/o/owned1.tar"
check "--keep-owner: the source's owner" [ "$(owners "$T/o/owned1.tar" | grep '^index.html ')" = "index.html 1234 5678 alice staff" ]
check "--keep-owner: the sibling's owner is its source's" [ "$(owners "$T/o/owned1.tar" | grep '^index.html.gz ')" = "index.html.gz 1234 5678 alice staff" ]

# ---- hostile archives: refused, no output, nothing left, nothing outside
mkdir -p "$T/victim" "$T/h"
echo precious >"$T/victim/file"
victim_before=$(tree_digest "$T/victim")
# build NAME PYTHON-BODY: a tar written by Python's tarfile; helpers:
# f(name, data) a file, l(name, target) a link, h(name, target) a hard link
build() {
	$PY - "$T/h/$1" "$2" <<'EOF'
import io, sys, tarfile
out, body = sys.argv[1], sys.argv[2]
mode = "w:gz" if out.endswith(".gz") else "w"
t = tarfile.open(out, mode, format=tarfile.GNU_FORMAT)
def add(ti, data=b""):
    ti.mtime = 1500000000
    t.addfile(ti, io.BytesIO(data) if data else None)
def f(name, data=b"x" * 600):
    ti = tarfile.TarInfo(name); ti.size = len(data); add(ti, data)
def l(name, target):
    ti = tarfile.TarInfo(name); ti.type = tarfile.SYMTYPE; ti.linkname = target; add(ti)
def h(name, target):
    ti = tarfile.TarInfo(name); ti.type = tarfile.LNKTYPE; ti.linkname = target; add(ti)
def hm(name, target, mode, mtime, owner):  # a hard link whose header disagrees
    ti = tarfile.TarInfo(name); ti.type = tarfile.LNKTYPE; ti.linkname = target
    ti.mode = mode; ti.mtime = mtime; ti.uid = ti.gid = owner; ti.uname = ti.gname = "u%d" % owner
    t.addfile(ti)
def d(name):
    ti = tarfile.TarInfo(name); ti.type = tarfile.DIRTYPE; ti.mode = 0o755; add(ti)
def special(name, kind):
    ti = tarfile.TarInfo(name); ti.type = kind; ti.devmajor = 1; ti.devminor = 3; add(ti)
exec(body)
t.close()
EOF
}
# refused NAME ENTRY REASON [OPTIONS...]: kiln refuses the archive NAME,
# naming ENTRY and REASON; no output (an existing one is left alone), no
# staging directory, nothing outside
refused() {
	local name=$1 entry=$2 reason=$3
	shift 3
	rm -rf "$T/h/out" && mkdir -p "$T/h/out"
	echo "previous deploy" >"$T/h/out/prev.tar"
	"$KILN" -q "$@" "$T/h/$name" -o "$T/h/out/new.tar" 2>"$T/h/err"
	local rc=$?
	check "$name: exit 1 (got $rc)" [ $rc -eq 1 ]
	check "$name: says '$entry: $reason'" grep -qF "kiln: $T/h/$name: $entry: $reason" "$T/h/err"
	[ $rc -eq 1 ] && grep -qF "kiln: $T/h/$name: $entry: $reason" "$T/h/err" || cat "$T/h/err" >&2
	check "$name: no output" [ ! -e "$T/h/out/new.tar" ]
	check "$name: no staging directory or temporary file left" no_leftovers "$T/h/out"
	"$KILN" -q "$@" "$T/h/$name" -o "$T/h/out/prev.tar" 2>/dev/null
	check "$name: an existing output is left as it was" [ "$(cat "$T/h/out/prev.tar")" = "previous deploy" ]
	check "$name: nothing outside changed" [ "$(tree_digest "$T/victim")" = "$victim_before" ]
}
build abs.tar "f('ok.js'); f('$T/victim/abs.js')"
refused abs.tar "$T/victim/abs.js" "absolute path, refused"
build dotdot.tar "f('ok.js'); f('a/../../victim/dotdot.js')"
refused dotdot.tar "a/../../victim/dotdot.js" "'..' in the path, refused"
build link-out.tar "f('ok.js'); l('evil', '../victim')"
refused link-out.tar evil "symbolic link points outside the tree, refused"
build link-abs.tar "f('ok.js'); l('evil', '$T/victim/file')"
refused link-abs.tar evil "symbolic link points outside the tree, refused"
# each link alone stays inside; chained, "sub/up/.." is the parent of the root
build link-chain.tar "d('sub'); l('sub/up', '..'); l('esc', 'sub/up/..'); f('ok.js')"
refused link-chain.tar esc "symbolic link points outside the tree, refused"
# the classic: a link to a directory outside, then a file through it
build through-link.tar "l('evil', '../../victim'); f('evil/pwned.js')"
refused through-link.tar evil/pwned.js "below a link or a file, refused"
build hard-out.tar "f('ok.js'); h('hard', '../victim/file')"
refused hard-out.tar hard "hard link target outside the tree, refused"
check "hard-out.tar: one error line, no bogus second one" [ "$(grep -c '^kiln: ' "$T/h/err")" -eq 1 ]
build hard-missing.tar "f('ok.js'); h('hard', 'not-there.js')"
refused hard-missing.tar hard "hard link to an entry not in the input, refused"
build dup.tar "f('a.js'); f('b.js'); f('./a.js', b'y' * 700)"
refused dup.tar ./a.js "duplicate entry, refused"
build dup-slash.tar "f('d/a.js'); f('d//a.js')"
refused dup-slash.tar d//a.js "duplicate entry, refused"
build chardev.tar "f('ok.js'); special('null', tarfile.CHRTYPE)"
refused chardev.tar null "device node, refused"
build blockdev.tar "special('disk', tarfile.BLKTYPE)"
refused blockdev.tar disk "device node, refused"
build fifo.tar "special('pipe', tarfile.FIFOTYPE)"
refused fifo.tar pipe "FIFO, refused"
build big.tar "f('ok.js'); f('big.js', b'a' * 5000)"
refused big.tar big.js "larger than --max-file-size, refused" --max-file-size 4K
build total.tar.gz "f('a.js', b'a' * 600000); f('b.js', b'b' * 600000)"
refused total.tar.gz b.js "archive expands beyond --max-expanded-size, refused" --max-expanded-size 1M
# a compression bomb: 80 MiB of zeros in ~80 KB
build bomb.tar.gz "f('zeros.bin', bytes(80 << 20))"
refused bomb.tar.gz zeros.bin "archive expands more than --max-expansion-ratio, refused"
"$KILN" -q --max-expansion-ratio 0 --max-file-size 0 "$T/h/bomb.tar.gz" -o "$T/h/out/bomb-ok.tar"
check "--max-expansion-ratio 0 lifts the limit" [ -s "$T/h/out/bomb-ok.tar" ]
# a sparse entry: its holes expand like data (an 8 GiB file in a few KB)
mkdir -p "$T/sp/d" && echo hi >"$T/sp/d/a.txt" && truncate -s 8G "$T/sp/d/holes.bin"
tar --sparse -cf "$T/h/sparse.tar" -C "$T/sp" d
check "sparse.tar is small ($(stat -c %s "$T/h/sparse.tar") bytes)" [ "$(stat -c %s "$T/h/sparse.tar")" -lt 100000 ]
refused sparse.tar d/holes.bin "archive expands beyond --max-expanded-size, refused"
refused sparse.tar d/holes.bin "archive expands beyond --max-expanded-size, refused" --max-expanded-size 1M
build small-ratio.tar.gz "f('zeros.js', bytes(1 << 20))"
"$KILN" -q "$T/h/small-ratio.tar.gz" -o "$T/h/out/small.tar"
check "a small very compressible archive is not a bomb" [ -s "$T/h/out/small.tar" ]
# a link that stays inside is fine, and so is a hard link to an earlier entry
build fine.tar "d('sub'); f('sub/a.js', b'z' * 900); l('sub/same', '../sub/./a.js'); h('hard.js', 'sub/a.js'); l('dangling', 'nowhere')"
"$KILN" -q "$T/h/fine.tar" -o "$T/h/out/fine.tar"
check "inside links and hard links: accepted" [ $? -eq 0 ]
mkdir -p "$T/x-fine" && tar -C "$T/x-fine" -xf "$T/h/out/fine.tar"
check "hard link kept as a hard link" [ "$(stat -c %i "$T/x-fine/hard.js")" = "$(stat -c %i "$T/x-fine/sub/a.js")" ]
check "hard-linked file: each name has its sibling" decodes_to "$T/x-fine/hard.js.gz" "$T/x-fine/sub/a.js"
check "inside link kept" [ "$(readlink "$T/x-fine/sub/same")" = ../sub/./a.js ]
check "dangling link inside kept" [ "$(readlink "$T/x-fine/dangling")" = nowhere ]
# a hard-link entry names its target's inode: tar gives it the target's
# mode, mtime and owner whatever its own header says, and so must kiln, to
# the link, the target and every sibling (before and after in name order)
build hardmode.tar "f('dist/ok.js', b'o' * 900); hm('dist/h.js', 'dist/ok.js', 0o777, 1700000000, 7); hm('dist/z.js', 'dist/h.js', 0o600, 1600000000, 9)"
"$KILN" -q --brotli --keep-owner "$T/h/hardmode.tar" -o "$T/h/out/hardmode.tar"
check "hard links with their own modes: accepted" [ $? -eq 0 ]
rm -rf "$T/hm-tar" "$T/hm-kiln" && mkdir -p "$T/hm-tar" "$T/hm-kiln"
tar -C "$T/hm-tar" -xf "$T/h/hardmode.tar" && tar -C "$T/hm-kiln" -xf "$T/h/out/hardmode.tar"
for f in ok.js h.js z.js; do
	want=$(stat -c '%a %Y %u:%g' "$T/hm-tar/dist/$f")
	check "hard link $f: as GNU tar extracts it ($want)" [ "$(stat -c '%a %Y %u:%g' "$T/hm-kiln/dist/$f")" = "$want" ]
	for s in gz br; do
		check "hard link $f.$s: decodes to its source" decodes_to "$T/hm-kiln/dist/$f.$s" "$T/hm-tar/dist/$f"
		check "hard link $f.$s: mode and mtime of its source" \
			[ "$(stat -c '%a %Y' "$T/hm-kiln/dist/$f.$s")" = "$(stat -c '%a %Y' "$T/hm-tar/dist/$f")" ]
	done
done
# a killed run's temporary file in the input is litter: never shipped
build litter.tar "f('ok.js', b'k' * 900); f('sub/.kiln-Ab12Cd.tmp', b't' * 900)"
"$KILN" -q "$T/h/litter.tar" -o "$T/h/out/litter-out.tar"
check "kiln temporary files in the input: dropped" [ "$(tar -tf "$T/h/out/litter-out.tar" | grep -c kiln-Ab12Cd)" -eq 0 ]
check "... the rest kept" bash -c "tar -tf '$T/h/out/litter-out.tar' ok.js.gz >/dev/null"
printf 'not an archive at all\n' >"$T/h/junk.tar"
"$KILN" -q "$T/h/junk.tar" -o "$T/h/out/junk-out.tar" 2>"$T/h/err"
check "not an archive: exit 1" [ $? -eq 1 ]
check "not an archive: said so" grep -qF "kiln: $T/h/junk.tar: cannot read archive" "$T/h/err"
check "not an archive: no output" [ ! -e "$T/h/out/junk-out.tar" ]
"$KILN" -q "$T/h/missing.tar" -o "$T/h/out/missing-out.tar" 2>"$T/h/err"
check "missing input: exit 1" [ $? -eq 1 ]
ln -s "$T/victim/file" "$T/h/out/link.tar"
"$KILN" -q "$T/h/fine.tar" -o "$T/h/out/link.tar" 2>"$T/h/err"
check "output is a symbolic link: exit 1" [ $? -eq 1 ]
check "output is a symbolic link: said so" grep -qF "kiln: $T/h/out/link.tar: cannot write the archive: is a symbolic link, not replaced" "$T/h/err"
check "output is a symbolic link: not followed" [ "$(tree_digest "$T/victim")" = "$victim_before" ]
# said before any work: nothing read, nothing encoded (no summary of assets)
check "output is a symbolic link: refused before the run" not grep -q 'compressed' "$T/h/err"
check "output is a symbolic link: says what to give" grep -qF "(give -o the path it leads to, or a new one)" "$T/h/err"
mkdir -p "$T/h/out/adir.tar"
"$KILN" -v "$T/h/fine.tar" -o "$T/h/out/adir.tar" 2>"$T/h/err"
check "output is a directory: exit 1" [ $? -eq 1 ]
check "output is a directory: said before the run" grep -qF "kiln: $T/h/out/adir.tar: cannot write the archive: is a directory, not replaced (give -o a file's path)" "$T/h/err"
check "output is a directory: nothing encoded" not grep -q 'compressed' "$T/h/err"
rmdir "$T/h/out/adir.tar"
check "no leftovers after all that" no_leftovers "$T/h/out"

# ---- the cache, and a previous output as input
"$KILN" -v --brotli --cache "$T/cache" "$T/dist.tar.gz" -o "$T/o/c1.tar" 2>"$T/c1.log"
# (tool.js has app.js's bytes: that one is a hit already)
check "cache: first run encodes" [ "$(grep -c 'from cache' "$T/c1.log")" -le 1 ]
# the same content with other mtimes: a different archive, same bytes inside
cp -a "$SRC" "$T/src2" && find "$T/src2" -exec touch -h -d '@1700000000' {} +
tar -C "$T/src2" -czf "$T/dist2.tar.gz" .
"$KILN" -v --brotli --cache "$T/cache" "$T/dist2.tar.gz" -o "$T/o/c2.tar" 2>"$T/c2.log"
check "cache: second run takes every encoding from the cache" \
	[ "$(grep -c 'gzip [0-9]* B ([0-9.]*%) from cache, br [0-9]* B ([0-9.]*%) from cache' "$T/c2.log")" -eq "$(grep -c ': compressed' "$T/c1.log")" ]
mkdir -p "$T/x-c2" && tar -C "$T/x-c2" -xf "$T/o/c2.tar"
check "cache: './' names, the tree is the root" [ -f "$T/x-c2/kiln-manifest.json" ]
check "cache: output still decodes" siblings_ok "$T/x-c2"
"$KILN" -v --brotli "$T/o/c1.tar" -o "$T/o/c1-again.tar" 2>"$T/again.log"
check "previous output in: every file unchanged" \
	[ "$(grep -c ': compressed.*unchanged, br .* unchanged' "$T/again.log")" -eq "$(grep -c ': compressed' "$T/c1.log")" ]
check "previous output in: the same archive out" cmp -s "$T/o/c1.tar" "$T/o/c1-again.tar"
# a source changed inside a previous output: its siblings are redone
$PY - "$T/o/c1.tar" "$T/o/changed.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1]) as i, tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as o:
    for m in i:
        data = i.extractfile(m).read() if m.isfile() else None
        if m.name == "dist/assets/app.css":
            data = data.replace(b"{", b"{ ")
            m.size = len(data)
        o.addfile(m, io.BytesIO(data) if data is not None else None)
EOF
"$KILN" -q --brotli "$T/o/changed.tar" -o "$T/o/changed-out.tar"
mkdir -p "$T/x-ch" && tar -C "$T/x-ch" -xf "$T/o/changed-out.tar"
check "changed source in a previous output: new .gz" decodes_to "$T/x-ch/dist/assets/app.css.gz" "$T/x-ch/dist/assets/app.css"
check "changed source in a previous output: new .br" decodes_to "$T/x-ch/dist/assets/app.css.br" "$T/x-ch/dist/assets/app.css"
check "changed source in a previous output: kiln check passes" "$KILN" check -q "$T/x-ch/dist"
# an earlier release (--previous) that cannot be read: it is named, the
# run fails, and the output is written all the same (no deltas from it)
echo 'not an archive' >"$T/o/bad-prev.tar.gz"
"$KILN" -q --brotli --previous "$T/o/bad-prev.tar.gz" "$T/o/changed.tar" -o "$T/o/bp-out.tar" 2>"$T/o/bp.err"
rc=$?
check "unreadable --previous: exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "unreadable --previous: names it, not the input" grep -qF "kiln: $T/o/bad-prev.tar.gz: not a directory or an archive kiln reads" "$T/o/bp.err"
check "unreadable --previous: the input is not blamed" not grep -qF "kiln: $T/o/changed.tar" "$T/o/bp.err"
mkdir -p "$T/x-bp" && tar -C "$T/x-bp" -xf "$T/o/bp-out.tar"
check "unreadable --previous: the output written, its siblings decode" decodes_to "$T/x-bp/dist/assets/app.css.gz" "$T/x-bp/dist/assets/app.css"
check "unreadable --previous: ... and kiln check passes on it" "$KILN" check -q "$T/x-bp/dist"
"$KILN" -q "$T/o/c1.tar" -o "$T/o/c1.tar"
check "in place (input = output): exit 0" [ $? -eq 0 ]
check "in place: still a valid archive" bash -c "tar -tf '$T/o/c1.tar' dist/index.html.gz >/dev/null"

# ---- dry run: reads and reports, writes nothing
"$KILN" -n -v "$T/dist.tar.gz" -o "$T/o/dry.tar" 2>"$T/dry.log"
check "dry run: exit 0" [ $? -eq 0 ]
check "dry run: no output" [ ! -e "$T/o/dry.tar" ]
check "dry run: reports entries as ARCHIVE: ENTRY" grep -qF "$T/dist.tar.gz: dist/index.html: compressed" "$T/dry.log"
check "dry run: no leftovers" no_leftovers "$T/o"

# ---- usage errors: exit 2 and a reason
usage_case() {
	"$KILN" "$@" >"$T/u.out" 2>"$T/u.err"
	local rc=$?
	check "usage error exits 2: $*" [ $rc -eq 2 ]
	check "usage error explains itself: $*" grep -q '^kiln: ' "$T/u.err"
}
usage_case "$T/dist.tar.gz" "$SRC" -o "$T/o/two.tar"
usage_case "$T/dist.tar.gz" -o "$T/o/out.rar"
usage_case "$T/dist.tar.gz" -o "$T/o/out.tar" --format rar
usage_case --keep-owner "$SRC"
usage_case --format tar "$SRC"
usage_case check "$SRC" -o "$T/o/x.tar"
usage_case --manifest "$T/m.json" "$T/dist.tar.gz" -o "$T/o/x.tar"
usage_case --max-expansion-ratio x "$T/dist.tar.gz" -o "$T/o/x.tar"
usage_case "$T/dist.tar.gz" -o ''
SOURCE_DATE_EPOCH=yesterday "$KILN" "$T/dist.tar.gz" -o "$T/o/x.tar" 2>/dev/null
check "bad SOURCE_DATE_EPOCH: exit 2" [ $? -eq 2 ]
"$KILN" -q --format tar "$T/dist.tar.gz" -o "$T/o/named.zip"
check "--format wins over the suffix" bash -c "tar -tf '$T/o/named.zip' >/dev/null"

# ---- killed mid-run: no output, no staging directory, no temporary file
mkdir -p "$T/big/site"
for i in $(seq 1 40); do cat "$FIXTURES"/site/assets/*.js "$FIXTURES"/site/data/*.json >"$T/big/site/f$i.js"; done
tar -C "$T/big" -czf "$T/big.tar.gz" site
for delay in 0.05 0.3 0.8; do
	rm -rf "$T/k" && mkdir -p "$T/k"
	"$KILN" -q --brotli -j 2 "$T/big.tar.gz" -o "$T/k/out.tar" 2>/dev/null &
	pid=$!
	sleep "$delay"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ]; then
		check "SIGTERM after ${delay}s: finished first, output whole" bash -c "tar -tf '$T/k/out.tar' site/f1.js.br >/dev/null"
	else
		check "SIGTERM after ${delay}s: died of it (rc $rc)" [ $rc -eq 143 ]
		# the signal may land after the rename: then OUT is the whole one,
		# never a part of it
		if [ -e "$T/k/out.tar" ]; then
			check "SIGTERM after ${delay}s, after the rename: output whole" bash -c "tar -tf '$T/k/out.tar' site/f1.js.br site/kiln-manifest.json >/dev/null"
		fi
	fi
	check "SIGTERM after ${delay}s: no staging directory or temporary file" no_leftovers "$T/k"
done

finish
