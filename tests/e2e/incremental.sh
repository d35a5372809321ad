#!/usr/bin/env bash
# incremental.sh - re-runs cost nothing and change nothing when nothing
# changed; content (not mtimes) decides; no stale sibling survives; foreign
# siblings are never deleted; the content cache; kiln check and kiln clean;
# what the index beside the manifest cannot see, --reread reads, and it
# replaces and removes no file of someone else's.
. "$(dirname "$0")/lib.sh"

# inode, size and mtime (ns) of every sibling and artifact: what rsync sees
stamp() { (cd "$1" && find . -type f \( -name '*.gz' -o -name '*.br' -o -name 'kiln*' \) ! -name archive.tar.gz -print0 | sort -z | xargs -0 -r stat -c '%i %s %.9Y %n'); }
gone() { [ ! -e "$1" ]; }
sib_inode() { stat -c %i "$1"; }

fresh_site "$T/s"
"$KILN" --brotli -q "$T/s" || fail "first run"
before=$(stamp "$T/s")
"$KILN" --brotli -v "$T/s" 2>"$T/rerun.log"
check "unchanged re-run exits 0" [ $? -eq 0 ]
check "unchanged re-run writes nothing (inodes, sizes, mtimes)" [ "$(stamp "$T/s")" = "$before" ]
check "unchanged re-run reports 12 unchanged" grep -q ' 12 compressed (12 unchanged)' "$T/rerun.log"

# A fresh checkout: new mtimes, same bytes: nothing recompressed, siblings
# take the sources' new mtimes (same Last-Modified for every encoding).
find "$T/s" -type f ! -name '*.gz' ! -name '*.br' -exec touch -d '2030-01-02 03:04:05.123456789' {} +
ino=$(sib_inode "$T/s/assets/app.js.gz")
"$KILN" --brotli -v "$T/s" 2>"$T/touch.log"
check "touch-only: 12 unchanged" grep -q ' 12 compressed (12 unchanged)' "$T/touch.log"
check "touch-only: same inode" [ "$(sib_inode "$T/s/assets/app.js.gz")" = "$ino" ]
check "touch-only: .gz mtime follows the source" [ "$(mtime_of "$T/s/assets/app.js.gz")" = "$(mtime_of "$T/s/assets/app.js")" ]
check "touch-only: .br mtime follows the source" [ "$(mtime_of "$T/s/assets/app.js.br")" = "$(mtime_of "$T/s/assets/app.js")" ]

# Same size, same mtime, different bytes: content decides.
f=$T/s/assets/app.css
cp -p "$f" "$T/ref"
printf 'X' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
touch -r "$T/ref" "$f"
check "test setup: same size and mtime" [ "$(stat -c '%s %.9Y' "$f")" = "$(stat -c '%s %.9Y' "$T/ref")" ]
"$KILN" --brotli -q "$T/s"
check "same-size same-mtime change recompressed (.gz)" decodes_to "$f.gz" "$f"
check "same-size same-mtime change recompressed (.br)" decodes_to "$f.br" "$f"

# Stale siblings go: shrunk below --min-size, now random, renamed, deleted.
head -c 100 "$T/s/index.html" >"$T/s/about/index.html"          # small now
head -c 3000 /dev/urandom >"$T/s/data/products.json"               # no-gain now
mv "$T/s/assets/vendor.min.js" "$T/s/assets/vendor.2.min.js"       # renamed
rm "$T/s/data/feed.xml"                                            # deleted
"$KILN" --brotli -v "$T/s" 2>"$T/stale.log"
check "stale run exits 0" [ $? -eq 0 ]
for s in gz br; do
	check "small now: .$s removed" gone "$T/s/about/index.html.$s"
	check "no-gain now: .$s removed" gone "$T/s/data/products.json.$s"
	check "renamed: old .$s removed" gone "$T/s/assets/vendor.min.js.$s"
	check "renamed: new .$s written" decodes_to "$T/s/assets/vendor.2.min.js.$s" "$T/s/assets/vendor.2.min.js"
	check "deleted: .$s removed" gone "$T/s/data/feed.xml.$s"
done
check "summary counts 8 removed" grep -q ', 8 removed' "$T/stale.log"
check "orphaned siblings are not taken for media assets" grep -q ' 4 media,' "$T/stale.log"
check "the manifest matches right after removals (kiln check)" "$KILN" check -q "$T/s"

# An encoding turned off loses its siblings; a setting change recompresses.
"$KILN" -q "$T/s"
check "brotli off: .br removed" [ -z "$(find "$T/s" -name '*.br')" ]
check "brotli off: .gz kept" [ -f "$T/s/index.html.gz" ]
"$KILN" -q --gzip-level 1 "$T/s"
check "--gzip-level 1 recompressed" cmp -s "$T/s/assets/app.js.gz" <(libdeflate-gzip -1 -c <"$T/s/assets/app.js")
ino=$(sib_inode "$T/s/index.html.gz")
"$KILN" -q --gzip-level 1 -f "$T/s"
check "-f rewrites unchanged files" [ "$(sib_inode "$T/s/index.html.gz")" != "$ino" ]

# A .gz kiln did not write is never deleted, and is reported: as a warning
# when it decodes to its source, as an error (a server would send stale
# bytes) when it does not.
fresh_site "$T/f"
gzip -c "$T/f/robots.txt" >"$T/f/robots.txt.gz"       # robots.txt is small
echo "their own" | gzip >"$T/f/img/logo.txt.gz"         # logo.txt is media
"$KILN" "$T/f" 2>"$T/f.log"
check "foreign stale sibling: exit 1" [ $? -eq 1 ]
check "foreign stale sibling survives" [ "$(gzip -dc "$T/f/img/logo.txt.gz")" = "their own" ]
check "foreign sibling survives" cmp -s <(gzip -dc "$T/f/robots.txt.gz") "$T/f/robots.txt"
check "foreign sibling reported" grep -qF "kiln: $T/f/robots.txt.gz: warning: sibling not written by kiln" "$T/f.log"
check "foreign stale sibling is an error" grep -qF "kiln: $T/f/img/logo.txt.gz: stale sibling kiln did not write: it does not decode to its source" "$T/f.log"
rm "$T/f/img/logo.txt.gz"
rm "$T/f/data/feed.xml"
echo "theirs too" | gzip >"$T/f/data/feed.xml.gz.tmp" && mv "$T/f/data/feed.xml.gz.tmp" "$T/f/data/feed.xml.gz"
"$KILN" -q "$T/f" 2>"$T/f2.log"
check "a replaced sibling of a deleted source survives" [ "$(gzip -dc "$T/f/data/feed.xml.gz")" = "theirs too" ]

# A manifest that is not one: ignored with a warning, the run still works.
fresh_site "$T/g"
echo '{"kiln_manifest": 1, "files": [' >"$T/g/kiln-manifest.json"
"$KILN" "$T/g" 2>"$T/g.log"
check "garbage manifest: exit 0" [ $? -eq 0 ]
check "garbage manifest: warned" grep -q 'warning: previous manifest ignored' "$T/g.log"
check "garbage manifest: replaced by a good one" /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/g/kiln-manifest.json"

# kiln check: 0 when all is well, 3 for each kind of problem, 1 on I/O errors.
fresh_site "$T/c"
"$KILN" --brotli -q "$T/c"
check "check: clean tree exits 0" "$KILN" check -q "$T/c"
check_case() { # check_case NAME EXPECTED-LINE SETUP...
	local name=$1 want=$2; shift 2
	rm -rf "$T/cc" && cp -a "$T/c" "$T/cc"
	"$@"
	local before after
	before=$(tree_digest "$T/cc"; stamp "$T/cc")
	"$KILN" check "$T/cc" >/dev/null 2>"$T/cc.log"
	local rc=$?
	after=$(tree_digest "$T/cc"; stamp "$T/cc")
	check "check: $name exits 3 (got $rc)" [ $rc -eq 3 ]
	check "check: $name says '$want'" grep -qF -- "$want" "$T/cc.log"
	check "check: $name writes nothing" [ "$before" = "$after" ]
}
check_case "changed source" "kiln: $T/cc/assets/app.js: stale gzip sibling" \
	sed -i 's/function/funktion/' "$T/cc/assets/app.js"
check_case "changed source (manifest)" "kiln: $T/cc/assets/app.js: manifest out of date: changed since the manifest" \
	sed -i 's/function/funktion/' "$T/cc/assets/app.js"
check_case "missing sibling" "kiln: $T/cc/index.html: missing brotli sibling" rm "$T/cc/index.html.br"
check_case "orphaned sibling" "kiln: $T/cc/data/feed.xml.gz: orphaned sibling" rm "$T/cc/data/feed.xml"
check_case "new file" "kiln: $T/cc/new.html: manifest out of date: not in the manifest" cp "$T/cc/index.html" "$T/cc/new.html"
check_case "unrecorded sibling" "kiln: $T/cc/robots.txt.gz: sibling not in the manifest" bash -c "gzip -c '$T/cc/robots.txt' >'$T/cc/robots.txt.gz'"
check_case "unrecorded stale sibling" "kiln: $T/cc/robots.txt.gz: stale gzip sibling: not written by kiln" bash -c "echo x | gzip >'$T/cc/robots.txt.gz'"
check_case "corrupt sibling" "kiln: $T/cc/assets/app.css: stale gzip sibling" \
	bash -c "printf 'garbage' | dd of='$T/cc/assets/app.css.gz' bs=1 seek=20 conv=notrunc status=none"
check_case "no manifest" "no manifest" rm "$T/cc/kiln-manifest.json"
if [ "$(id -u)" -eq 0 ]; then
	rm -rf "$T/cu" && cp -a "$T/c" "$T/cu" && chmod 000 "$T/cu/assets/app.js" && chown -R nobody "$T/cu"
	cp "$KILN" "$T/kiln-bin" && chmod 755 "$T/kiln-bin"
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$T/kiln-bin" check "$T/cu" 2>"$T/cu.log"
	check "check: unreadable file exits 1" [ $? -eq 1 ]
	check "check: unreadable file named" grep -qF "kiln: $T/cu/assets/app.js: cannot open" "$T/cu.log"
fi

# kiln clean: exactly the sources are left; foreign files survive (one
# that does not decode to its source fails clean: everyday.sh).
fresh_site "$T/k"
orig=$(tree_digest "$T/k")
gzip -c "$T/k/robots.txt" >"$T/k/robots.txt.gz"
"$KILN" --brotli -q "$T/k"
"$KILN" clean "$T/k" 2>"$T/k.log"
check "clean exits 0" [ $? -eq 0 ]
check "clean says the foreign file is left" \
	grep -qxF "kiln: $T/k/robots.txt.gz: warning: sibling not written by kiln, left in place" "$T/k.log"
rm "$T/k/robots.txt.gz"
check "clean leaves exactly the sources" [ "$(tree_digest "$T/k")" = "$orig" ]
check "clean says how many" grep -q '^kiln: clean: 28 files removed' "$T/k.log"
check "clean removes the index beside the manifest" [ ! -e "$T/k/.kiln-manifest.json.index" ]

# The content cache: a fresh copy of the tree with a warm cache encodes
# nothing and gives identical bytes; corrupt entries are never used.
fresh_site "$T/a1"
"$KILN" --brotli --cache "$T/cache" "$T/a1" 2>"$T/a1.log"
check "cold cache: the summary names no sibling from the cache" not grep -q 'from the cache' "$T/a1.log"
fresh_site "$T/a2"
KILN_CACHE_DIR="$T/cache" "$KILN" --brotli -v "$T/a2" 2>"$T/a2.log"
check "warm cache: every sibling from the cache" [ "$(grep -c 'from cache' "$T/a2.log")" -eq 12 ]
check "warm cache: the summary says how many came from it" grep -q '; 24 siblings written (24 from the cache);' "$T/a2.log"
# (12 compressed files, gzip and br each.)  --json: of the siblings
# written, those from the cache; a changed file is
# encoded (not from the cache), the others come from it
fresh_site "$T/a4"
printf '\n/* changed */\n' >>"$T/a4/assets/app.js"
"$KILN" --brotli -q --json --cache "$T/cache" "$T/a4" >"$T/a4.json"
check "--json: written and from_cache" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["written"] == 24 and d["from_cache"] == 22, (d["written"], d["from_cache"])' "$T/a4.json"
check "warm cache: no encoder ran" not grep -E ': compressed.*B \([0-9.]+%\)(,|$)' "$T/a2.log"
check "warm cache: identical bytes" [ "$(tree_digest "$T/a1")" = "$(tree_digest "$T/a2")" ]
entry=$(find "$T/cache" -type f -name "$(sha256sum <"$T/a1/assets/app.js" | cut -c1-64).gzip.*")
check "cache entry exists for app.js" [ -f "$entry" ]
printf 'XXXX' | dd of="$entry" bs=1 seek=200 conv=notrunc status=none
other=$(find "$T/cache" -type f -name "$(sha256sum <"$T/a1/index.html" | cut -c1-64).br.*")
truncate -s 100 "$other"
fresh_site "$T/a3"
"$KILN" --brotli -v --cache "$T/cache" "$T/a3" 2>"$T/a3.log"
check "corrupt entry: not used" grep -qE '/assets/app.js: compressed.*gzip [0-9]+ B \([0-9.]+%\), br' "$T/a3.log"
check "truncated entry: not used" grep -qE '/index.html: compressed.*br [0-9]+ B \([0-9.]+%\)$' "$T/a3.log"
check "after corrupt entries: correct .gz" decodes_to "$T/a3/assets/app.js.gz" "$T/a3/assets/app.js"
check "after corrupt entries: same bytes as a fresh run" [ "$(tree_digest "$T/a1")" = "$(tree_digest "$T/a3")" ]
"$KILN" -q --brotli --cache "$T/cache" --cache-max-size 10K "$T/a3"
check "--cache-max-size trims the cache" [ "$(find "$T/cache" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')" -le 10240 ]

# What the index cannot see, --reread does: a sibling written through a
# shared memory map on tmpfs keeps its ctime after the first write, so a
# plain run trusts the index (the limit docs/reruns.md states), and
# --reread reads the siblings it keeps as well as the sources.
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	M=$(mktemp -d /dev/shm/kiln-e2e-map.XXXXXX)
	seq 1 3000 | sed 's/^/var m = /' >"$M/m.js"
	"$KILN" -q "$M"
	python3 - "$KILN" "$M" <<'PY' 2>"$T/mmap.log"
import mmap, os, subprocess, sys, time
kiln, d = sys.argv[1], sys.argv[2]
gz = os.path.join(d, "m.js.gz")
fd = os.open(gz, os.O_RDWR)
m = mmap.mmap(fd, 0)
m[0:1] = m[0:1]            # the first write through the map: a new ctime
time.sleep(1.1)
subprocess.run([kiln, "-q", d], check=True)   # reads it: same bytes, stamped
time.sleep(1.1)
subprocess.run([kiln, "-q", d], check=True)   # the stamp is trusted now
m[0:4] = b"EVIL"           # no new ctime on tmpfs
m.flush()
print(os.stat(gz).st_ctime_ns, file=sys.stderr)
PY
	"$KILN" -q "$M"
	if sh -c 'gzip -dc "$1/m.js.gz" 2>/dev/null | cmp -s - "$1/m.js"' sh "$M"; then
		echo "incremental.sh: this kernel gave the mapped write a ctime: nothing for --reread to find"
	else
		"$KILN" -q --reread "$M"
		check "--reread reads a kept sibling the index vouched for, and replaces it" \
			sh -c 'gzip -dc "$1/m.js.gz" | cmp -s - "$1/m.js"' sh "$M"
		check "--reread: then the tree matches its manifest" "$KILN" check -q --reread "$M"
	fi
	rm -rf "$M"
fi

# A file of someone else's at the index's name, beside a manifest kept
# outside the tree: never replaced, never removed.
fresh_site "$T/x"
mkdir -p "$T/xout"
echo "user's own" >"$T/xout/.m.json.index"
"$KILN" -q --manifest "$T/xout/m.json" "$T/x" 2>"$T/xidx.log"
check "an index name holding another file: the run says so and fails" [ $? -ne 0 ]
check "... naming it" grep -qF "kiln: $T/xout/.m.json.index: cannot write the index: not a kiln index" "$T/xidx.log"
check "... and leaves it as it was" grep -qxF "user's own" "$T/xout/.m.json.index"
"$KILN" clean -q --manifest "$T/xout/m.json" "$T/x" 2>/dev/null
check "clean leaves it too" grep -qxF "user's own" "$T/xout/.m.json.index"

finish
