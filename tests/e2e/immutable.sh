#!/usr/bin/env bash
# immutable.sh - which files are served immutable, and why, through the
# real binary: each kind of evidence (the name, the tree's shapes, a
# bundler's manifest at the top or given with --fingerprints, a rename
# across --previous releases, --immutable) and --mutable over them all;
# bytes changed under a name read as a fingerprint (against the last run's
# record, or an earlier release) revalidated, and kept so;
# the manifest's "immutable" and "fingerprint", -v, every snippet's
# Cache-Control and Use-As-Dictionary following the same decision; bad
# --fingerprints files reported with the run going on; shards and merge
# writing the same reasons as one run.  Expected values come from the
# names' construction (which token is a hash), not from kiln's output.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

text() { # text FILE BYTES SEED: compressible text
	$PY -c "import random, sys; r = random.Random(sys.argv[2]); n = int(sys.argv[1])
print(' '.join(r.choice(['alpha', 'beta', 'gamma', 'delta', str(r.randrange(99))]) for _ in range(n // 6)))" "$2" "$3" >"$1"
}
# why TREE PATH: the manifest's "immutable" for PATH ("-" when none) and its
# "fingerprint"
why() {
	$PY - "$1/kiln-manifest.json" "$2" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["files"][sys.argv[2]]
print(e.get("immutable", "-"), e.get("fingerprint", "-"))
PY
}

# ---- a tree: names that pass the rule alone, one beside them that does
# not (no digit, no case change: a real Vite hash), words of the same shape
D=$T/site
mkdir -p "$D/assets" "$D/fonts" "$D/solo"
for f in index-B2x9_kQ1.js vendor-Qm7pL2vX.js index-DPJWWXvr.js logo-maskable.js \
	hero-portrait.css; do
	text "$D/assets/$f" 3000 "$f"
done
text "$D/index.html" 2000 page
text "$D/fonts/inter.woff2" 3000 font
text "$D/solo/app-KQXWPZvr.js" 3000 solo # alone: no shape, no hash by name
"$KILN" -v --server nginx,caddy,apache --immutable 'fonts/*' "$D" 2>"$T/v.log"
check "kiln on the tree" [ $? -eq 0 ]
check "the name alone: index-B2x9_kQ1.js" [ "$(why "$D" assets/index-B2x9_kQ1.js)" = "name B2x9_kQ1" ]
check "the tree's shape: index-DPJWWXvr.js" [ "$(why "$D" assets/index-DPJWWXvr.js)" = "tree DPJWWXvr" ]
check "words of the same shape are not: logo-maskable.js" [ "$(why "$D" assets/logo-maskable.js)" = "- -" ]
check "... hero-portrait.css" [ "$(why "$D" assets/hero-portrait.css)" = "- -" ]
check "a glob: fonts/inter.woff2, no fingerprint" [ "$(why "$D" fonts/inter.woff2)" = "glob -" ]
check "index.html is not" [ "$(why "$D" index.html)" = "- -" ]
check "a lone name that fails the rule is not" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "- -" ]
check "-v says why" grep -q '/site/assets/index-DPJWWXvr.js: compressed, .*, immutable (tree)$' "$T/v.log"
check "-v says nothing for a mutable file" grep -q '/site/assets/logo-maskable.js: compressed, [^(]*([^)]*)$' "$T/v.log"
check "the manifest matches the JSON Schema" \
	$PY "$(dirname "$0")/check_manifest.py" "$D/kiln-manifest.json" "$D" "$(dirname "$0")/../data/manifest.schema.json"
# every snippet lists the tree's decision: the tree-proven file, not the words
for s in kiln.nginx.http.conf kiln.caddy.conf kiln.apache.conf; do
	check "$s: the tree-proven file is immutable" grep -q 'DPJWWXvr\\\?\.js' "$D/$s"
	check "$s: the glob's file too" grep -q 'inter\\\?\.woff2' "$D/$s"
	check "$s: the words are not" not grep -q 'logo-maskable\|hero-portrait\|KQXWPZvr' "$D/$s"
done
check "nginx: Use-As-Dictionary for the tree-proven file's family" \
	grep -q 'match=\\\?"/assets/index-\*\.js' "$D/kiln.nginx.http.conf"
check "kiln check passes" "$KILN" check -q "$D"

# ---- --mutable overrides every kind of evidence
"$KILN" -q --mutable 'assets/index-*' --immutable 'fonts/*' "$D"
check "--mutable: the name's file is not immutable" [ "$(why "$D" assets/index-B2x9_kQ1.js)" = "- -" ]
check "--mutable: the tree's file is not" [ "$(why "$D" assets/index-DPJWWXvr.js)" = "- -" ]
check "--mutable: another file still is" [ "$(why "$D" assets/vendor-Qm7pL2vX.js)" = "name Qm7pL2vX" ]
check "--mutable: the snippet lists neither" not grep -q 'index-B2x9_kQ1\|index-DPJWWXvr' "$D/kiln.nginx.http.conf"
check "--mutable: the settings record it" grep -q '"mutable": \[' "$D/kiln-manifest.json"

# ---- a bundler's manifest: at the tree's top, or given
mkdir -p "$D/.vite"
cat >"$D/.vite/manifest.json" <<'JSON'
{"src/app.ts": {"file": "solo/app-KQXWPZvr.js", "name": "app", "src": "src/app.ts", "isEntry": true}}
JSON
"$KILN" -q "$D"
check "Vite's manifest at the top proves a lone name" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "bundler KQXWPZvr" ]
mv "$D/.vite/manifest.json" "$T/vite.json"
rmdir "$D/.vite"
"$KILN" -q "$D"
check "... and without it, the name is not immutable" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "- -" ]
"$KILN" -q --fingerprints "$T/vite.json" "$D"
check "--fingerprints FILE proves it" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "bundler KQXWPZvr" ]
ln -s "$T/vite.json" "$T/vite-link.json"
"$KILN" -q --fingerprints "$T/vite-link.json" "$D"
check "--fingerprints through a link (a path given outside the tree)" \
	[ "$(why "$D" solo/app-KQXWPZvr.js)" = "bundler KQXWPZvr" ]
echo '{"name": "My docs", "pages": {"/": ["solo/app-KQXWPZvr.js"]}}' >"$D/manifest.json"
"$KILN" -v "$D" 2>"$T/top.log"
check "-v: a manifest.json at the top that is none kiln reads" \
	grep -qx "$D/manifest.json: not a bundler manifest kiln reads (Vite, webpack, esbuild, Next.js)" "$T/top.log"
check "... proves nothing (a \"pages\" key is not Next.js's manifest)" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "- -" ]
check "... and without -v nothing is said" sh -c '! "$1" "$2" 2>&1 | grep -q "manifest.json: not"' - "$KILN" "$D"
rm "$D/manifest.json"
"$KILN" -q "$D"
echo '{"name": "a web app manifest", "icons": [{"src": "a.png"}]}' >"$T/pwa.json"
echo 'not json' >"$T/bad.json"
"$KILN" -q --fingerprints "$T/pwa.json" --fingerprints "$T/bad.json" --fingerprints "$T/none.json" \
	--fingerprints "$T/vite.json" "$D" 2>"$T/fp.err"
st=$?
check "bad --fingerprints files fail the run (exit 1)" [ "$st" -eq 1 ]
check "... each named: not a manifest kiln reads" \
	sh -c "grep -q '^kiln: $T/pwa.json: not a bundler manifest kiln reads' '$T/fp.err' &&
	       grep -q '^kiln: $T/bad.json: not a bundler manifest kiln reads' '$T/fp.err'"
check "... or cannot be opened" grep -q "^kiln: $T/none.json: cannot open the bundler manifest" "$T/fp.err"
check "... and the run goes on with the good one" [ "$(why "$D" solo/app-KQXWPZvr.js)" = "bundler KQXWPZvr" ]
check "... siblings and all" test -f "$D/solo/app-KQXWPZvr.js.gz"
check "--fingerprints with an empty name is a usage error" not "$KILN" -q --fingerprints '' "$D"

# ---- a complete manifest (Vite's) says which files of a directory are
# hashed: the tree's shapes take no other (a copy from public/)
V=$T/vp
mkdir -p "$V/assets"
for f in index-B2x9_kQ1.js vendor-Qm7pL2vX.js index-DPJWWXvr.css app-KQXWPZvr.js \
	chunk-Xk9mQ2pL.js about-Zt4wRq8n.js app-KQXWPZvr.js.map badge-appstore.svg qr-QRCODEzx.svg \
	Inter-SemiBold.woff2 photo-DSC_0042.jpg team-TomHanks.jpg icon-arrow-up.svg \
	extra-Pq8wR3tZ.js; do
	text "$V/assets/$f" 3000 "$f"
done
"$KILN" -q "$V"
# the chunks prove the chunks (index-DPJWWXvr.css passes no rule alone),
# never the files copied from public/ beside them: those are no bundler
# code, and a year of no revalidation is the worse mistake
check "without a manifest the tree takes a chunk whose name alone proves nothing" \
	[ "$(why "$V" assets/index-DPJWWXvr.css)" = "tree DPJWWXvr" ]
check "... but no public/ copy, not even one whose name may be a hash" sh -c "[ '$(why "$V" assets/qr-QRCODEzx.svg)' = '- -' ] &&
	[ '$(why "$V" assets/team-TomHanks.jpg)' = '- -' ] && [ '$(why "$V" assets/icon-arrow-up.svg)' = '- -' ]"
check "... but none whose name is words" sh -c "[ '$(why "$V" assets/badge-appstore.svg)' = '- -' ] &&
	[ '$(why "$V" assets/Inter-SemiBold.woff2)' = '- -' ] && [ '$(why "$V" assets/photo-DSC_0042.jpg)' = '- -' ]"
mkdir -p "$V/.vite"
cat >"$V/.vite/manifest.json" <<'JSON'
{"index.html": {"file": "assets/index-B2x9_kQ1.js", "name": "index", "src": "index.html",
  "isEntry": true, "css": ["assets/index-DPJWWXvr.css"]},
 "_vendor-Qm7pL2vX.js": {"file": "assets/vendor-Qm7pL2vX.js", "name": "vendor"},
 "src/app.ts": {"file": "assets/app-KQXWPZvr.js", "name": "app", "src": "src/app.ts"}}
JSON
"$KILN" -v "$V" 2>"$T/vm.log"
check "-v says what the manifest proves and decides (3 chunks, a style sheet, a map)" \
	grep -qx "$V/.vite/manifest.json: Vite manifest: proves 5 files, decides 1 directory" "$T/vm.log"
check "with Vite's manifest, not" [ "$(why "$V" assets/qr-QRCODEzx.svg)" = "- -" ]
check "... nor a copy whose name alone would be taken: the manifest decides its directory" \
	[ "$(why "$V" assets/extra-Pq8wR3tZ.js)" = "- -" ]
check "... and its outputs are the bundler's" [ "$(why "$V" assets/index-DPJWWXvr.css)" = "bundler DPJWWXvr" ]
check "... their source maps too" [ "$(why "$V" assets/app-KQXWPZvr.js.map)" = "bundler KQXWPZvr" ]
check "... and the name's stay the name's" [ "$(why "$V" assets/index-B2x9_kQ1.js)" = "name B2x9_kQ1" ]
# an earlier build's manifest (older than the outputs) decides nothing
touch -d '-1 hour' "$V/.vite/manifest.json"
"$KILN" -v "$V" 2>"$T/vm.log"
check "-v says it is stale, and why" grep -q "^$V/.vite/manifest.json: Vite manifest: proves 5 files; stale: decides nothing (assets/[^ ]* is newer than it: a later build's)$" "$T/vm.log"
check "a stale manifest decides nothing: the copy is its name's again" \
	[ "$(why "$V" assets/extra-Pq8wR3tZ.js)" = "name Pq8wR3tZ" ]
check "... and it still proves what it proves" [ "$(why "$V" assets/index-DPJWWXvr.css)" = "bundler DPJWWXvr" ]

# ---- a rename across releases, with new bytes
R1=$T/r1 R2=$T/r2
mkdir -p "$R1/lone" "$R1/same" "$R1/w" "$R2/lone" "$R2/same" "$R2/w"
text "$R1/lone/app-KQXWPZvr.js" 4000 one
cp "$R1/lone/app-KQXWPZvr.js" "$R2/lone/app-DPJWWXvr.js"
echo 'console.log("release 2");' >>"$R2/lone/app-DPJWWXvr.js"
text "$R1/same/lib-HBGTRFvd.js" 4000 same
cp "$R1/same/lib-HBGTRFvd.js" "$R2/same/lib-ZMXNCBvq.js" # renamed, same bytes
text "$R1/w/hero-portrait.js" 4000 word
cp "$R1/w/hero-portrait.js" "$R2/w/hero-original.js"
echo 'x();' >>"$R2/w/hero-original.js"
# dated, campaign and numbered renames, with new bytes: not hashes
mkdir -p "$R1/d" "$R2/d"
for pair in sale-SALE2024:sale-SALE2025 chapter-00000041:chapter-00000042 \
	page-KQXWPZvr:page-KQXWPZvq; do
	text "$R1/d/${pair%%:*}.html" 4000 "$pair"
	cp "$R1/d/${pair%%:*}.html" "$R2/d/${pair##*:}.html"
	echo '<p>new</p>' >>"$R2/d/${pair##*:}.html"
done
"$KILN" -q "$R1"
"$KILN" -q --previous "$R1" "$R2"
check "kiln --previous on release 2" [ $? -eq 0 ]
check "renamed with new bytes: immutable by previous" [ "$(why "$R2" lone/app-DPJWWXvr.js)" = "previous DPJWWXvr" ]
check "... and it gets its delta" \
	test -f "$R2/lone/app-DPJWWXvr.js.$(sha256sum "$R1/lone/app-KQXWPZvr.js" | cut -c1-16).dcz"
check "renamed with the same bytes: no hash shown" [ "$(why "$R2" same/lib-ZMXNCBvq.js)" = "- -" ]
check "a word renamed to a word: not" [ "$(why "$R2" w/hero-original.js)" = "- -" ]
check "a year renamed: not" [ "$(why "$R2" d/sale-SALE2025.html)" = "- -" ]
check "a counter renamed: not" [ "$(why "$R2" d/chapter-00000042.html)" = "- -" ]
check "one character of a token changed: not" [ "$(why "$R2" d/page-KQXWPZvq.html)" = "- -" ]
check "release 1 alone: the lone name is not" [ "$(why "$R1" lone/app-KQXWPZvr.js)" = "- -" ]

# A family with two members in one earlier release (Vite's lazy chunks,
# all index-HASH.js) is a pattern files share: no deltas for it, however
# many; a family of one member per release gets its delta.
F1=$T/fam1; F2=$T/fam2
rm -rf "$F1" "$F2"; mkdir -p "$F1/assets" "$F2/assets"
for h in B2x9_kQ1 Xy7Pq2Lm Hw3Rt5Nz; do text "$F1/assets/index-$h.js" 6000 "$h"; done
text "$F1/assets/app-Qm7pL2vX.js" 6000 app
for h in Zk4Wm9Qa Jd8Fs3Vb Tc6Ye2Ku; do text "$F2/assets/index-$h.js" 6000 "$h"; echo '/* 2 */' >>"$F2/assets/index-$h.js"; done
cp "$F1/assets/app-Qm7pL2vX.js" "$F2/assets/app-Kd3Rt8Yw.js"; echo '/* 2 */' >>"$F2/assets/app-Kd3Rt8Yw.js"
"$KILN" -q "$F1"
"$KILN" -q --previous "$F1" "$F2"
check "a shared family (index-*.js, three in release 1): no delta" \
	[ -z "$(find "$F2" -name 'index-*.dcz')" ]
check "a family of one per release (app-*.js): its delta" \
	[ -n "$(find "$F2" -name 'app-Kd3Rt8Yw.js.*.dcz')" ]

# A hashed-looking name whose bytes changed between releases 1 and 2 is no
# content hash; release 3, a fresh build of release 2's bytes given
# --previous release 2, keeps the mark release 2's manifest holds.
M1=$T/mark1; M2=$T/mark2; M3=$T/mark3
rm -rf "$M1" "$M2" "$M3"; mkdir -p "$M1/assets"
text "$M1/assets/index-B2x9_kQ1.js" 6000 mark
cp -a "$M1" "$M2"; echo '/* hotfix */' >>"$M2/assets/index-B2x9_kQ1.js"; cp -a "$M2" "$M3"
"$KILN" -q "$M1"
"$KILN" -q --previous "$M1" "$M2" 2>/dev/null
check "bytes changed between releases: not immutable" [ "$(why "$M2" assets/index-B2x9_kQ1.js)" = "- -" ]
"$KILN" -q --previous "$M2" "$M3" 2>/dev/null
check "... nor in the next release built fresh, given --previous the last" \
	[ "$(why "$M3" assets/index-B2x9_kQ1.js)" = "- -" ]
check "... whose manifest keeps the mark" \
	grep -q '"bytes_changed": true' "$M3/kiln-manifest.json"

# ---- bytes changed under a name read as a fingerprint: revalidated, told
# once, and kept so while the name stays (re-runs, the index's shortcut,
# --reread, shards and merge)
changed() { # changed TREE PATH: the manifest's "bytes_changed" ("-" when none)
	$PY - "$1/kiln-manifest.json" "$2" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["files"][sys.argv[2]].get("bytes_changed", "-"))
PY
}
B=$T/bytes
mkdir -p "$B/assets"
text "$B/assets/app-Kq7wPz3x.js" 3000 one
text "$B/assets/vendor-Qm7pL2vX.js" 3000 vendor
"$KILN" -q "$B"
check "before: immutable by its name" [ "$(why "$B" assets/app-Kq7wPz3x.js)" = "name Kq7wPz3x" ]
echo "// edited in place" >>"$B/assets/app-Kq7wPz3x.js"
"$KILN" "$B" 2>"$T/b.log"
check "bytes changed: the run succeeds" [ $? -eq 0 ]
check "... and says so" grep -qx "kiln: $B/assets/app-Kq7wPz3x.js: warning: bytes changed under a name read as a fingerprint; revalidated" "$T/b.log"
check "... once" [ "$(grep -c 'bytes changed' "$T/b.log")" = 1 ]
check "... no longer immutable" [ "$(why "$B" assets/app-Kq7wPz3x.js)" = "- -" ]
check "... marked in the manifest" [ "$(changed "$B" assets/app-Kq7wPz3x.js)" = True ]
check "... the unchanged one stays" [ "$(why "$B" assets/vendor-Qm7pL2vX.js)" = "name Qm7pL2vX" ]
check "... no snippet serves it immutable" not grep -q 'Kq7wPz3x' "$B/kiln.nginx.http.conf"
check "... the manifest matches the JSON Schema" \
	$PY "$(dirname "$0")/check_manifest.py" "$B/kiln-manifest.json" "$B" "$(dirname "$0")/../data/manifest.schema.json"
for how in "" --reread; do
	"$KILN" $how "$B" 2>"$T/b.log"
	check "a re-run ($how) keeps it revalidated" [ "$(why "$B" assets/app-Kq7wPz3x.js)/$(changed "$B" assets/app-Kq7wPz3x.js)" = "- -/True" ]
	check "... and says nothing more" not grep -q 'bytes changed' "$T/b.log"
done
for k in 1 2; do "$KILN" -q --shard "$k/2" "$B" || fail "shard $k"; done
"$KILN" merge -q "$B"
check "shards and merge keep it" [ "$(why "$B" assets/app-Kq7wPz3x.js)/$(changed "$B" assets/app-Kq7wPz3x.js)" = "- -/True" ]
# across releases: the same path with other bytes in the earlier one
P1=$T/bp1 P2=$T/bp2
mkdir -p "$P1/assets" "$P2/assets"
text "$P1/assets/app.9b8e7d6c.js" 3000 dirty-one
text "$P2/assets/app.9b8e7d6c.js" 3000 dirty-two
text "$P1/assets/lib-Qm7pL2vX.js" 3000 lib
cp "$P1/assets/lib-Qm7pL2vX.js" "$P2/assets/"
"$KILN" --previous "$P1" "$P2" 2>"$T/b.log"
check "--previous: the run succeeds" [ $? -eq 0 ]
check "... a name with other bytes in the earlier release is revalidated" \
	[ "$(why "$P2" assets/app.9b8e7d6c.js)/$(changed "$P2" assets/app.9b8e7d6c.js)" = "- -/True" ]
check "... and told" grep -q "$P2/assets/app.9b8e7d6c.js: warning: bytes changed" "$T/b.log"
check "... the same bytes stay immutable" [ "$(why "$P2" assets/lib-Qm7pL2vX.js)" = "name Qm7pL2vX" ]
check "... and a later run without --previous keeps it so" \
	sh -c '"$1" -q "$2" && [ "$(grep -c bytes_changed "$2/kiln-manifest.json")" = 1 ]' - "$KILN" "$P2"

# ---- shards and merge write the reasons one run writes
cp -a "$D" "$T/one"
cp -a "$D" "$T/sharded"
"$KILN" -q --immutable 'fonts/*' "$T/one"
for k in 1 2 3; do "$KILN" -q --immutable 'fonts/*' --shard "$k/3" "$T/sharded" || fail "shard $k"; done
"$KILN" merge -q "$T/sharded"
check "kiln merge" [ $? -eq 0 ]
same_reasons() {
	$PY - "$T/one/kiln-manifest.json" "$T/sharded/kiln-manifest.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["files"] for p in sys.argv[1:3])
r = lambda f: {k: (e.get("immutable"), e.get("fingerprint")) for k, e in f.items()}
sys.exit(0 if r(a) == r(b) and any(v[0] == "tree" for v in r(a).values()) else 1)
PY
}
check "the merged manifest says why as one run does" same_reasons
check "... and the snippets are the same" cmp -s "$T/one/kiln.nginx.http.conf" "$T/sharded/kiln.nginx.http.conf"
finish
