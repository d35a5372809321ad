#!/usr/bin/env bash
# shard.sh - kiln --shard K/N and kiln merge: four runners on
# four copies, gathered as artifact downloads gather them, merged, equal to
# one run byte for byte (siblings, modes, mtimes, manifest, snippet); four
# shards at once on one tree with one cache (GNU parallel); a changed tree
# re-encodes only its changed files, each in its own shard; every broken
# merge input refused with a message naming it, and nothing written; no
# shard removes another's siblings or journals, and no sibling a part
# records becomes an orphan; --shard auto.  Runs in every build (TSan too):
# the tree is small.  The full corpus is shard_corpus.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/shard_lib.sh"

OPTS=(--brotli --brotli-quality 6 --zstd --zstd-level 3 --no-progress)
# a CI engine's own variables must not steer these runs
for v in CI_NODE_INDEX CI_NODE_TOTAL CIRCLE_NODE_INDEX CIRCLE_NODE_TOTAL BUILDKITE_PARALLEL_JOB \
	BUILDKITE_PARALLEL_JOB_COUNT SYSTEM_JOBPOSITIONINPHASE SYSTEM_TOTALJOBSINPHASE \
	JOB_COMPLETION_INDEX KILN_CACHE_DIR; do
	unset "$v"
done
command -v parallel >/dev/null || { echo "shard.sh: GNU parallel is needed (Debian: parallel)" >&2; exit 1; }

make_tree "$T/src"
cp -a "$T/src" "$T/single"
"$KILN" "${OPTS[@]}" -q "$T/single" || fail "single run"
nfiles=$(find "$T/src" -type f | wc -l)

# ---- four runners, gathered, merged ----
cp -a "$T/src" "$T/gathered"
for k in 1 2 3 4; do
	cp -a "$T/src" "$T/run$k"
	"$KILN" "${OPTS[@]}" -q --shard "$k/4" "$T/run$k" || fail "runner $k"
	check "runner $k: its part, no manifest, no snippet" \
		test -f "$T/run$k/kiln-manifest.shard-$k-of-4.json" -a ! -e "$T/run$k/kiln-manifest.json" -a ! -e "$T/run$k/kiln.nginx.conf"
	gather "$T/src" "$T/run$k" "$T/gathered"
done
# each runner encoded exactly the files of its shard, by the documented rule
for k in 1 2 3 4; do
	others=$(cd "$T/run$k" && find . -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz -printf '%P\n' |
		sed 's/\.[a-z]*$//' | shards_of 4 | grep -v "^$k ")
	check "runner $k wrote siblings of its own shard's files only${others:+: $others}" [ -z "$others" ]
	check "runner $k wrote siblings" [ -n "$(find "$T/run$k" -name '*.br')" ]
done
"$KILN" merge -q "$T/gathered" 2>"$T/merge.log"
check "merge of gathered runners exits 0" [ $? -eq 0 ]
check "merge removes the parts" [ -z "$(find "$T/gathered" -name 'kiln-manifest.shard-*')" ]
check "gathered + merged = one run: every file, byte for byte, with mode and mtime" \
	[ "$(meta_digest "$T/gathered")" = "$(meta_digest "$T/single")" ]
check "merged manifest = one run's" cmp "$T/gathered/kiln-manifest.json" "$T/single/kiln-manifest.json"
check "merged snippet = one run's" cmp "$T/gathered/kiln.nginx.conf" "$T/single/kiln.nginx.conf"
check "the manifest lists every file of the tree" [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$T/gathered/kiln-manifest.json")" = "$nfiles" ]
check "every merged sibling decodes to its source" all_siblings_decode "$T/gathered"
check "kiln check passes on the merged tree" "$KILN" check -q "$T/gathered"

# ---- four shards at once on one tree, one cache (GNU parallel) ----
cp -a "$T/src" "$T/conc"
parallel --halt now,fail=1 -j4 "$KILN" "${OPTS[@]}" -q -j2 --cache "$T/cache" --shard {}/4 "$T/conc" ::: 1 2 3 4
check "four concurrent shards exit 0" [ $? -eq 0 ]
"$KILN" merge -q "$T/conc" || fail "merge after concurrent shards"
check "concurrent shards + merge = one run" [ "$(meta_digest "$T/conc")" = "$(meta_digest "$T/single")" ]
check "concurrent: no journal or temporary file left" [ -z "$(find "$T/conc" -name '.kiln-*')" ]
# again on a fresh copy: every encoding comes from the shared cache
cp -a "$T/src" "$T/conc2"
parallel -j4 "$KILN" "${OPTS[@]}" -v -j2 --cache "$T/cache" --shard {}/4 "$T/conc2" ::: 1 2 3 4 2>"$T/conc2.log"
check "warm cache: four concurrent shards exit 0" [ $? -eq 0 ]
# each coding's "N B (R%)" on a compressed line: "from cache" after it, or
# "no-gain" (not kept), or nothing: encoded in this run
origins=$(grep ': compressed, ' "$T/conc2.log" | grep -oE '\([0-9.]+%\)( from cache| no-gain)?')
check "warm cache: no sibling encoded again" [ -z "$(echo "$origins" | grep -vE 'from cache|no-gain')" ]
check "warm cache: siblings from the cache" [ "$(echo "$origins" | grep -c 'from cache')" -ge 60 ]
"$KILN" merge -q "$T/conc2" || fail "merge after warm concurrent shards"
check "warm cache: = one run" [ "$(meta_digest "$T/conc2")" = "$(meta_digest "$T/single")" ]

# ---- a changed tree: only what changed is encoded, in its own shard ----
c=$T/conc
printf '\n// changed\n' >>"$c/gen/part1/mod07.js"
printf '\n// changed\n' >>"$c/assets/app.js"
cp "$c/gen/part2/mod08.js" "$c/gen/part2/new.js"
printf 'new file\n' >>"$c/gen/part2/new.js"
rm "$c/gen/part3/mod09.js"
changed="assets/app.js gen/part1/mod07.js gen/part2/new.js"
keep=$(ls "$c"/gen/part4/*.js.gz | head -1)
ino_before=$(stat -c %i "$keep")
for k in 1 2 3 4; do
	"$KILN" "${OPTS[@]}" -v --shard "$k/4" "$c" 2>"$T/change$k.log" || fail "changed tree: shard $k"
done
for k in 1 2 3 4; do
	want=$(for f in $changed; do [ "$(shard_of "$f" 4)" = "$k" ] && echo "$c/$f"; done | sort)
	# a file with a kept coding that is neither unchanged nor from the cache
	got=$(grep -E ': compressed, ' "$T/change$k.log" | grep -E '%\)(,|$)' | sed 's/: compressed, .*//' | sort)
	check "changed tree: shard $k encoded exactly its changed files ($(echo $want))" [ "$got" = "$want" ]
done
check "changed tree: deleted file's siblings removed" [ ! -e "$c/gen/part3/mod09.js.gz" -a ! -e "$c/gen/part3/mod09.js.br" -a ! -e "$c/gen/part3/mod09.js.zst" ]
check "changed tree: an unchanged sibling is left as it was" [ "$(stat -c %i "$keep")" = "$ino_before" ]
"$KILN" merge -q "$c" || fail "merge of the changed tree"
cp -a "$c" "$T/single2"
find "$T/single2" -type f \( -name '*.gz' ! -name archive.tar.gz -o -name '*.br' -o -name '*.zst' -o -name 'kiln*' \) -delete
"$KILN" "${OPTS[@]}" -q "$T/single2" || fail "single run of the changed tree"
check "changed tree: shards + merge = one run from scratch" [ "$(meta_digest "$c")" = "$(meta_digest "$T/single2")" ]

# ---- broken merge inputs: refused, named, nothing written ----
# refused MESSAGE DIR: the merge fails with "kiln: PATH: reason" matching
# MESSAGE, and the tree is what it was (contents, modes, mtimes)
refused() {
	local want=$1 dir=$2 before
	before=$(meta_digest "$dir")
	"$KILN" merge "$dir" 2>"$T/refused.log"
	local rc=$?
	check "refused ($want): exit 1" [ "$rc" = 1 ]
	check "refused ($want): message" grep -qE "^kiln: $want" "$T/refused.log"
	check "refused ($want): nothing written" [ "$(meta_digest "$dir")" = "$before" ]
	check "refused ($want): no manifest, no snippet" [ ! -e "$dir/kiln-manifest.json" -a ! -e "$dir/kiln.nginx.conf" ]
}
fresh_shards() { # fresh_shards DIR [per-shard options of shard 4...]
	rm -rf "$1"
	cp -a "$T/src" "$1"
	for k in 1 2 3; do "$KILN" "${OPTS[@]}" -q --shard "$k/4" "$1" || fail "shard $k of $1"; done
}
e=$T/err
fresh_shards "$e"
refused "$e/kiln-manifest.shard-4-of-4.json: missing" "$e"
"$KILN" "${OPTS[@]}" -q --brotli-quality 9 --shard 4/4 "$e"
refused "$e/kiln-manifest.shard-4-of-4.json: made with other settings than shard 1's \(brotli_quality\)" "$e"
"$KILN" "${OPTS[@]}" -q --no-zstd --shard 4/4 "$e"
refused "$e/kiln-manifest.shard-4-of-4.json: made with other settings than shard 1's \(encodings\)" "$e"
"$KILN" "${OPTS[@]}" -q --shard 4/4 "$e"
"$KILN" "${OPTS[@]}" -q --shard 2/3 "$e"
refused "$e/kiln-manifest.shard-2-of-3.json: a part of 3 shards beside parts of 4" "$e"
rm "$e/kiln-manifest.shard-2-of-3.json"
# two shards claiming one file: shard 1's record of a file copied into shard 2's part
f1=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
k = sorted(d["files"])[0]
e["files"][k] = d["files"][k]
json.dump(e, open(sys.argv[2], "w"))
print(k)' "$e/kiln-manifest.shard-1-of-4.json" "$e/kiln-manifest.shard-2-of-4.json")
refused "$e/$f1: recorded by the parts of shards 1 and 2" "$e"
"$KILN" "${OPTS[@]}" -q --shard 2/4 "$e"
# a file changed between shards: shard 1's file edited after shard 1 ran
victim=$(cd "$e" && for f in gen/part*/mod*.js; do [ "$(shard_of "$f" 4)" = 1 ] && { echo "$f"; break; }; done)
printf '// edited after shard 1 ran\n' >>"$e/$victim"
refused "$e/$victim: not the file shard 1 encoded" "$e"
"$KILN" "${OPTS[@]}" -q --shard 1/4 "$e"
# a sibling lost on the way
sib=$(cd "$e" && find . -name '*.br' -printf '%P\n' | sort | head -1)
mv "$e/$sib" "$T/lost.br"
refused "$e/$sib: missing, or not the sibling shard $(shard_of "${sib%.br}" 4) wrote" "$e"
mv "$T/lost.br" "$e/$sib"
# a file no part records (added after the shards ran)
echo "a file nobody encoded, long enough to be compressed by every coding there is......................................................................................................................................................................................................................................................" >"$e/late.txt"
refused "$e/late.txt: in the tree but in no part" "$e"
rm "$e/late.txt"
"$KILN" merge -q "$e"
check "after the repairs the merge passes" [ $? -eq 0 ]
check "after the repairs = one run (but the edited file)" \
	[ "$(cd "$e" && find . -type f ! -path "./$victim*" -print0 | sort -z | xargs -0 sha256sum | grep -v kiln-manifest)" = \
	  "$(cd "$T/single" && find . -type f ! -path "./$victim*" -print0 | sort -z | xargs -0 sha256sum | grep -v kiln-manifest)" ]
"$KILN" merge "$T/single" 2>"$T/noparts.log"
check "merge of a tree without parts is refused" [ $? = 1 ]
check "merge of a tree without parts: message" grep -q "^kiln: $T/single/kiln-manifest.json: no shard parts to merge beside it" "$T/noparts.log"

# ---- no shard touches another's; parts are kiln's record until merged ----
p=$T/own
fresh_shards "$p"
"$KILN" "${OPTS[@]}" -q --shard 4/4 "$p"
# inode of every sibling of another shard than 2
others() { (cd "$p" && find . -name '*.gz' ! -name archive.tar.gz -printf '%P\n' | sed 's/\.gz$//' | shards_of 4 | grep -v '^2 ' |
	while read -r _ f; do stat -c "%n %i" "$f.gz"; done); }
stamp_other=$(others)
# a dead journal of shard 3 and one of shard 2 (headers only)
printf 'shard 3 4\n' >"$p/.kiln-journal-AAAAAA"
printf 'shard 2 4\n' >"$p/.kiln-journal-BBBBBB"
"$KILN" "${OPTS[@]}" -q --force --shard 2/4 "$p" || fail "shard 2 again, forced"
check "a forced shard leaves other shards' siblings untouched" \
	[ "$(others)" = "$stamp_other" -a -n "$stamp_other" ]
check "a shard removes its own shard's dead journal" [ ! -e "$p/.kiln-journal-BBBBBB" ]
check "a shard leaves another shard's dead journal" [ -e "$p/.kiln-journal-AAAAAA" ]
# a deleted file whose siblings only a part records: a run of the whole
# tree knows them as kiln's and removes them
gone=$(cd "$p" && ls gen/part5/*.js | head -1)
rm "$p/$gone"
"$KILN" "${OPTS[@]}" -q "$p" || fail "whole-tree run after unmerged shards"
check "whole-tree run: siblings only a part recorded are removed with their source" \
	[ ! -e "$p/$gone.gz" -a ! -e "$p/$gone.br" -a ! -e "$p/$gone.zst" ]
check "whole-tree run: the parts it read are gone, and the dead journals" \
	[ -z "$(find "$p" -name 'kiln-manifest.shard-*' -o -name '.kiln-journal-*')" ]
check "whole-tree run: kiln check passes" "$KILN" check -q "$p"
# after a merge, a shard removes the siblings of its deleted files, and
# leaves the manifest's records of the others to the next merge
fresh_shards "$p"
"$KILN" "${OPTS[@]}" -q --shard 4/4 "$p"
"$KILN" merge -q "$p" || fail "merge (own)"
gone=$(cd "$p" && for f in gen/part*/mod*.js; do [ "$(shard_of "$f" 4)" = 3 ] && { echo "$f"; break; }; done)
rm "$p/$gone"
for k in 1 2 4; do "$KILN" "${OPTS[@]}" -q --shard "$k/4" "$p"; done
check "another shard leaves a deleted file's siblings to its shard" [ -e "$p/$gone.gz" ]
"$KILN" "${OPTS[@]}" -q --shard 3/4 "$p"
check "its own shard removes them" [ ! -e "$p/$gone.br" -a ! -e "$p/$gone.gz" ]
"$KILN" merge -q "$p" || fail "merge after a deletion"
check "after a deletion: kiln check passes on the merged tree" "$KILN" check -q "$p"
check "kiln clean after unmerged shards removes every sibling and part" \
	sh -c '"$1" '"${OPTS[*]}"' -q --shard 1/4 "$2" && "$1" clean -q "$2" && [ -z "$(find "$2" -name "*.br" -o -name "*.zst" -o -name "kiln-manifest*")" ]' sh "$KILN" "$p"

# ---- manifests named otherwise, two trees' in one directory: each has
# its own parts, and each merge takes its own ----
mkdir -p "$T/out"
cp -a "$T/src" "$T/ta"
cp -a "$T/src" "$T/tb"
echo "one more file for tree b, long enough to be compressed at all, yes" >"$T/tb/only-b.txt"
cp -a "$T/src" "$T/sa" && cp -a "$T/tb" "$T/sb"
for k in 1 2; do
	"$KILN" "${OPTS[@]}" -q --manifest "$T/out/a.json" --shard "$k/2" "$T/ta" || fail "named a: shard $k"
	"$KILN" "${OPTS[@]}" -q --manifest "$T/out/b.json" --shard "$k/2" "$T/tb" || fail "named b: shard $k"
done
check "named manifests: four parts, each named after its manifest" \
	[ "$(cd "$T/out" && ls | tr '\n' ' ')" = "kiln-manifest.shard-1-of-2.a.json.json kiln-manifest.shard-1-of-2.b.json.json kiln-manifest.shard-2-of-2.a.json.json kiln-manifest.shard-2-of-2.b.json.json " ]
"$KILN" merge -q --manifest "$T/out/a.json" "$T/ta" || fail "named a: merge"
"$KILN" merge -q --manifest "$T/out/b.json" "$T/tb" || fail "named b: merge"
check "named manifests: each merge took its own parts" \
	[ "$(cd "$T/out" && ls | tr '\n' ' ')" = "a.json b.json " ]
mkdir -p "$T/out1"
"$KILN" "${OPTS[@]}" -q --manifest "$T/out1/a.json" "$T/sa" || fail "named a: single run"
"$KILN" "${OPTS[@]}" -q --manifest "$T/out1/b.json" "$T/sb" || fail "named b: single run"
check "named manifest a: merged = one run" [ "$(meta_digest "$T/ta")" = "$(meta_digest "$T/sa")" ]
check "named manifest b: merged = one run" [ "$(meta_digest "$T/tb")" = "$(meta_digest "$T/sb")" ]
# the same but for the tree each names ("../ta" and "../sa": other trees)
same_but_tree() { # same_but_tree MANIFEST TREE MANIFEST TREE
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
a, ta, b, tb = sys.argv[1:5]
da, db = json.load(open(a)), json.load(open(b))
assert da.pop("tree") == ta and db.pop("tree") == tb, (a, b)
assert da == db
PY
}
check "named manifest a: merged manifest = one run's" same_but_tree "$T/out/a.json" ../ta "$T/out1/a.json" ../sa
check "named manifest b: merged manifest = one run's" same_but_tree "$T/out/b.json" ../tb "$T/out1/b.json" ../sb
check "named manifest b: the manifest lists its own file" grep -q '"only-b.txt"' "$T/out/b.json"
"$KILN" merge -q --manifest "$T/out/a.json" "$T/ta" 2>"$T/named.log"
check "named manifest: nothing left to merge is said of that manifest" \
	grep -qF "kiln: $T/out/a.json: no shard parts to merge beside it" "$T/named.log"

# ---- a part's bytes at a sibling the manifest also records: the source
# back to the manifest's content, the sibling's size the same (a one-byte
# edit), a run must not take the part's sibling for the manifest's ----
r=$T/revert
mkdir -p "$r"
yes 'body { color: #fff; margin: 0 auto; padding: 1px; } .x{}' | head -20 >"$r/app.css"
"$KILN" -q "$r"
sed -i 's/#fff/#000/' "$r/app.css"
for k in 1 2; do "$KILN" -q --shard "$k/2" "$r"; done
sed -i 's/#000/#fff/' "$r/app.css"
"$KILN" -q "$r"
check "revert after shards: the .gz decodes to the source as it is now" \
	sh -c 'gzip -dc "$1.gz" | cmp -s - "$1"' sh "$r/app.css"
check "revert after shards: kiln check passes" "$KILN" check -q "$r"
# the same with the part gone before the revert (its record lost): the
# sibling's mtime is not its source's, so its digest decides
sed -i 's/#fff/#000/' "$r/app.css"
for k in 1 2; do "$KILN" -q --shard "$k/2" "$r"; done
rm "$r"/kiln-manifest.shard-*
sed -i 's/#000/#fff/' "$r/app.css"
"$KILN" -q "$r" 2>/dev/null
check "revert after shards whose parts are gone: the .gz decodes to the source as it is now" \
	sh -c 'gzip -dc "$1.gz" | cmp -s - "$1"' sh "$r/app.css"

# ---- a run of the whole tree killed (its journal left), then shards and
# the merge: the merge accounts for the journal's siblings and removes it,
# as a whole run would, so kiln check passes ----
J=$T/killed
mkdir -p "$J"
for i in $(seq 1 24); do
	head -c 200000 "$FIXTURES/../README.md" >"$J/f$i.txt"
	yes "line $i of a file to compress, with some words" | head -20000 >>"$J/f$i.txt"
done
"$KILN" -q --brotli -j1 "$J" &
pid=$!
for n in $(seq 1 1000); do
	[ -n "$(find "$J" -maxdepth 1 -name '.kiln-journal-*' -size +0 2>/dev/null)" ] && break
	sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -n "$(find "$J" -maxdepth 1 -name '.kiln-journal-*')" ]; then
	for k in 1 2; do "$KILN" -q --brotli --shard "$k/2" "$J" || fail "killed: shard $k"; done
	"$KILN" merge -q "$J" || fail "killed: merge"
	check "killed run, shards, merge: the dead journal is gone" \
		[ -z "$(find "$J" -maxdepth 1 -name '.kiln-journal-*')" ]
	check "killed run, shards, merge: kiln check passes" "$KILN" check -q "$J"
else
	echo "shard.sh: the run ended before it could be killed; the journal case is not tried" >&2
fi

# ---- a part kiln cannot parse: clean, a run and check each stop and say
# so, changing nothing; removed and its shard run again, all is well ----
d=$T/damaged
cp -a "$T/src" "$d"
for k in 1 2; do "$KILN" "${OPTS[@]}" -q --shard "$k/2" "$d" || fail "damaged: shard $k"; done
before=$(cd "$d" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
printf '{"kiln": ' >"$d/kiln-manifest.shard-1-of-2.json"
"$KILN" clean "$d" 2>"$T/damaged.log"
rc=$?
check "clean with a damaged part: exit 1" [ "$rc" = 1 ]
check "clean with a damaged part: the part named, and why" \
	grep -qF "kiln: $d/kiln-manifest.shard-1-of-2.json: not a shard part kiln can read (remove it, then run that shard again)" "$T/damaged.log"
after=$(cd "$d" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
check "clean with a damaged part: nothing removed but what was damaged" \
	[ "$(echo "$before" | grep -v shard-1-of-2)" = "$(echo "$after" | grep -v shard-1-of-2)" ]
"$KILN" "${OPTS[@]}" "$d" 2>"$T/damaged-run.log"
check "a run with a damaged part: exit 1" [ $? -eq 1 ]
check "a run with a damaged part: the part named, and what to do" \
	grep -qF "kiln: $d/kiln-manifest.shard-1-of-2.json: not a shard part kiln can read (remove it, then run that shard again)" "$T/damaged-run.log"
after2=$(cd "$d" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
check "a run with a damaged part: nothing changed" [ "$after" = "$after2" ]
"$KILN" check "$d" 2>"$T/damaged-check.log"
check "kiln check with a damaged part: exit 1" [ $? -eq 1 ]
rm "$d/kiln-manifest.shard-1-of-2.json"
"$KILN" "${OPTS[@]}" -q --shard 1/2 "$d" || fail "damaged: that shard again"
check "the damaged part removed and its shard run again: kiln check sees the part" \
	sh -c '"$1" check "$2" 2>&1 | grep -q "a shard part not merged yet (run kiln merge)"' sh "$KILN" "$d"
"$KILN" merge -q "$d" || fail "damaged: merge once repaired"
check "repaired and merged: kiln check passes" "$KILN" check -q "$d"
check "then clean removes every sibling" \
	sh -c '"$1" clean -q "$2" && [ -z "$(find "$2" -name "*.br" -o -name "*.zst" -o -name "kiln-*")" ]' sh "$KILN" "$d"

# ---- --shard auto and bad --shard ----
a=$T/auto
cp -a "$T/src" "$a"
CI_NODE_INDEX=2 CI_NODE_TOTAL=4 "$KILN" -q --shard auto "$a"
check "--shard auto: GitLab's CI_NODE_INDEX is 1-based" test -f "$a/kiln-manifest.shard-2-of-4.json"
CIRCLE_NODE_INDEX=0 CIRCLE_NODE_TOTAL=3 "$KILN" -q --shard auto "$a"
check "--shard auto: CircleCI's index is 0-based" test -f "$a/kiln-manifest.shard-1-of-3.json"
BUILDKITE_PARALLEL_JOB=4 BUILDKITE_PARALLEL_JOB_COUNT=5 "$KILN" -q --shard auto "$a"
check "--shard auto: Buildkite" test -f "$a/kiln-manifest.shard-5-of-5.json"
SYSTEM_JOBPOSITIONINPHASE=3 SYSTEM_TOTALJOBSINPHASE=3 "$KILN" -q --shard auto "$a"
check "--shard auto: Azure Pipelines" test -f "$a/kiln-manifest.shard-3-of-3.json"
usage() { # usage MESSAGE ARGS...: exit 2 with MESSAGE on stderr
	local want=$1; shift
	"$@" 2>"$T/usage.log" >/dev/null
	local rc=$?
	check "usage error ($want): exit 2" [ "$rc" = 2 ]
	check "usage error ($want): message" grep -q -- "$want" "$T/usage.log"
}
usage "give --shard K/N" "$KILN" -q --shard auto "$a"
usage "JOB_COMPLETION_INDEX" env JOB_COMPLETION_INDEX=3 "$KILN" -q --shard auto "$a"
usage "disagree" env CI_NODE_INDEX=1 CI_NODE_TOTAL=2 CIRCLE_NODE_INDEX=1 CIRCLE_NODE_TOTAL=2 "$KILN" -q --shard auto "$a"
usage "not a shard of" env CI_NODE_INDEX=5 CI_NODE_TOTAL=4 "$KILN" -q --shard auto "$a"
for bad in 0/4 5/4 1/0 4 a/b 1/4x 1/65537 auto/2; do
	usage "--shard takes K/N" "$KILN" -q --shard "$bad" "$a"
done
usage "--shard works with compress only" "$KILN" merge --shard 1/2 "$a"
usage "--shard works with compress only" "$KILN" --no-manifest --shard 1/2 "$a"

finish
