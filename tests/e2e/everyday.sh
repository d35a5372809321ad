#!/usr/bin/env bash
# everyday.sh - what a user meets in everyday use, messages and refusals:
# globs that would remove every sibling, siblings kiln did not write (stale
# or not, replaced or left), check and a sibling's mtime and mode, an
# unchanged re-run that must touch nothing (rsync), the same DIR twice,
# names too long for a sibling, the summary's counts and wording, clean -n,
# the progress line in a 40- and a 120-column terminal (tmux), size
# suffixes, an archive given without -o, a foreign manifest, --json paths
# and counts, DIR spelling, and Vary with --no-gzip in a real nginx.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
SCHEMA=$(dirname "$0")/../data/manifest.schema.json
for need in rsync tmux curl "$NGINX"; do
	command -v "$need" >/dev/null || [ -e "$need" ] ||
		{ echo "everyday.sh: $need is missing (see the README's test dependencies)" >&2; exit 1; }
done

# stamp DIR: every file and directory with its inode, mtime and size.
stamp() { (cd "$1" && find . -printf '%p %i %T@ %s\n' | sort); }
# count_siblings DIR: the .gz/.br/.zst files kiln would write (not the
# fixture's download).
count_siblings() { find "$1" \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz | wc -l; }
# jfield FILE EXPR: a value of the JSON document in FILE (d), as Python prints it.
jfield() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
# the outcomes of the example site (README, "What happens to each file")
ASSETS=19 COMPRESSED=12

# ---- 1. A glob that matches nothing; a run whose globs would remove every sibling.
fresh_site "$T/g"
"$KILN" -q "$T/g"
before=$(tree_digest "$T/g"; stamp "$T/g")
"$KILN" --include '*.nomatch' "$T/g" 2>"$T/g.log"
check "mistyped --include: refused, exit 1" [ $? -eq 1 ]
check "mistyped --include: the glob matches no file, said once" \
	[ "$(grep -cF "kiln: $T/g: warning: --include '*.nomatch' matches no file" "$T/g.log")" -eq 1 ]
check "mistyped --include: says why it stops, and the way out" \
	grep -qF "kiln: $T/g: the globs exclude every file that has siblings, so this run would remove all of them (check --include and --exclude, or add --force)" "$T/g.log"
check "mistyped --include: nothing written or removed" [ "$(tree_digest "$T/g"; stamp "$T/g")" = "$before" ]
check "mistyped --include: check still passes" "$KILN" check -q "$T/g"
"$KILN" -n --include '*.nomatch' "$T/g" 2>/dev/null
check "mistyped --include, dry run: refused too" [ $? -eq 1 ]
"$KILN" -q --exclude '*.js' --exclude '*.css' --exclude '*.html' --exclude '*.json' --exclude '*.svg' \
	--exclude '*.xml' --exclude '*.map' --exclude '*.webmanifest' "$T/g" 2>/dev/null
check "excluding every compressed file: refused as well" [ $? -eq 1 ]
"$KILN" -q --force --include '*.nomatch' "$T/g" 2>"$T/g2.log"
check "--force: the run goes ahead (exit 0)" [ $? -eq 0 ]
check "--force: every sibling removed" [ "$(count_siblings "$T/g")" -eq 0 ]
check "--force: every asset recorded as excluded" \
	[ "$(jfield "$T/g/kiln-manifest.json" 'sorted({e.get("skipped") for e in d["files"].values()})')" = "['excluded']" ]
fresh_site "$T/g3"
"$KILN" -q "$T/g3"
"$KILN" --exclude '*.map' --exclude '*.nomatch' "$T/g3" 2>"$T/g3.log"
check "narrowing the globs on purpose: exit 0" [ $? -eq 0 ]
check "narrowing: the excluded file's sibling removed" [ ! -e "$T/g3/assets/app.js.map.gz" ]
check "narrowing: only that one" [ "$(count_siblings "$T/g3")" -eq $((COMPRESSED - 1)) ]
check "an unmatched --exclude: a warning" grep -qF "kiln: $T/g3: warning: --exclude '*.nomatch' matches no file" "$T/g3.log"
check "a glob that matches: no warning" not grep -qF "'*.map' matches no file" "$T/g3.log"

# ---- 2. A sibling kiln did not write, beside a file kiln compresses: replaced, and said.
fresh_site "$T/f"
echo "not a gzip of index.html" >"$T/f/index.html.gz"
gzip -9 -c "$T/f/about/index.html" >"$T/f/about/index.html.gz"
"$KILN" "$T/f" 2>"$T/f.log"
check "foreign sibling replaced: exit 0" [ $? -eq 0 ]
check "foreign sibling replaced: kiln's own is there now" cmp -s "$T/f/index.html.gz" <(libdeflate-gzip -12 -c "$T/f/index.html")
check "foreign sibling replaced: warned, saying what it was" \
	grep -qxF "kiln: $T/f/index.html.gz: warning: replaced a sibling not written by kiln: it did not decode to its source" "$T/f.log"
check "foreign sibling that decoded to its source: replaced without a warning" \
	not grep -q "about/index.html.gz" "$T/f.log"
check "... and it is kiln's own now" cmp -s "$T/f/about/index.html.gz" <(libdeflate-gzip -12 -c "$T/f/about/index.html")
fresh_site "$T/fv"
gzip -9 -c "$T/fv/about/index.html" >"$T/fv/about/index.html.gz"
"$KILN" -v "$T/fv" 2>"$T/fv.log"
check "-v tells of the replaced one that decoded" \
	grep -qxF "$T/fv/about/index.html.gz: replaced a sibling not written by kiln (it decoded to its source)" "$T/fv.log"
fresh_site "$T/fn"
echo "junk" >"$T/fn/index.html.gz"
"$KILN" -n "$T/fn" 2>"$T/fn.log"
check "dry run: says it would replace" grep -qF "kiln: $T/fn/index.html.gz: warning: would replace a sibling not written by kiln" "$T/fn.log"
check "dry run: replaced nothing" [ "$(cat "$T/fn/index.html.gz")" = junk ]

# ---- 3. check and a sibling whose mtime or mode is not its source's.
fresh_site "$T/m"
"$KILN" -q --brotli "$T/m"
touch "$T/m/index.html"
chmod 600 "$T/m/about/index.html"
"$KILN" check "$T/m" 2>"$T/m.log"
check "touched source: check exits 3" [ $? -eq 3 ]
check "touched source: each sibling's mtime reported" \
	[ "$(grep -cxE "kiln: $T/m/index.html: (gzip|brotli) sibling: mtime differs from its source's" "$T/m.log")" -eq 2 ]
check "chmod'ed source: the mode reported" \
	grep -qxF "kiln: $T/m/about/index.html: gzip sibling: mode differs from its source's" "$T/m.log"
check "check: one line per problem, and the count" grep -qxF "kiln: check: 4 problems, 0 errors" "$T/m.log"
"$KILN" check --json "$T/m" >"$T/m.json" 2>/dev/null
check "check --json: the kind and detail" [ "$(jfield "$T/m.json" '{p["kind"] for p in d["problems"]} == {"sibling metadata differs from its source\x27s"} and sorted({p["detail"] for p in d["problems"]}) == ["mode differs from its source\x27s", "mtime differs from its source\x27s"]')" = True ]
"$KILN" -q --brotli "$T/m"
check "a normal run fixes it: check passes" "$KILN" check -q "$T/m"
check "a normal run fixes it: same mtime" [ "$(mtime_of "$T/m/index.html.gz")" = "$(mtime_of "$T/m/index.html")" ]
check "a normal run fixes it: same mode" [ "$(stat -c %a "$T/m/about/index.html.gz")" = 600 ]

# ---- 4. An unchanged re-run touches nothing: not a file, not a directory.
# (The first run begins a clock tick after the copy: a file changed in the
# tick a run begins in is read again by the next run, which then writes
# the index once more, docs/reruns.md; CI's loaded machine met that.)
fresh_site "$T/u"
sleep 0.05
"$KILN" -q --brotli "$T/u"
cp -a "$T/u" "$T/u.copy"
before=$(stamp "$T/u")
sleep 1.1 # a directory entry made now would show a later mtime
"$KILN" -q --brotli "$T/u"
check "unchanged re-run: every inode, mtime and size as before (directories too)" [ "$(stamp "$T/u")" = "$before" ]
check "unchanged re-run: rsync -ani sees no change" [ -z "$(rsync -ani --delete "$T/u/" "$T/u.copy/")" ]
"$KILN" -q --brotli "$T/u/"
check "... nor with DIR/" [ "$(stamp "$T/u")" = "$before" ]

# ---- 5. The same DIR twice, or one inside another: refused before anything is written.
fresh_site "$T/d"
ln -s d "$T/dlink"
before=$(tree_digest "$T/d")
for args in "$T/d $T/d" "$T/d $T/d/" "$T/d $T/./d" "$T/d $T/dlink" "$T/d $T/d/assets" "$T/d/assets $T/d"; do
	# shellcheck disable=SC2086
	"$KILN" -q $args 2>"$T/d.log"
	check "overlapping DIRs ($args): usage error" [ $? -eq 2 ]
	check "overlapping DIRs ($args): nothing written" [ "$(tree_digest "$T/d")" = "$before" ]
done
check "overlapping DIRs: said which is inside which" grep -qxF "kiln: $T/d/assets: inside $T/d, also given: give each DIR once" "$T/d.log"
"$KILN" -q "$T/d" "$T/d" 2>"$T/d2.log"
check "the same DIR twice: said so" grep -qxF "kiln: $T/d: the same directory as $T/d, also given: give each DIR once" "$T/d2.log"
"$KILN" check "$T/d" "$T/d/assets" 2>/dev/null
check "check refuses overlapping DIRs too" [ $? -eq 2 ]
fresh_site "$T/d1" && fresh_site "$T/d2"
"$KILN" "$T/d1" "$T/d2" 2>"$T/d12.log"
check "two separate DIRs: each counted once" grep -qE "^kiln: $((2 * ASSETS)) assets: $((2 * COMPRESSED)) compressed," "$T/d12.log"

# ---- 6. A sibling that does not decode to its source is stale whoever wrote it.
fresh_site "$T/n"
"$KILN" -q --no-manifest "$T/n"
"$KILN" --exclude '*.map' "$T/n" 2>"$T/n.log"
check "after --no-manifest: an excluded file's sibling that decodes is a warning (exit 0)" [ $? -eq 0 ]
check "... left in place, said so" grep -qxF "kiln: $T/n/assets/app.js.map.gz: warning: sibling not written by kiln, left in place" "$T/n.log"
check "... and it decodes to its source" decodes_to "$T/n/assets/app.js.map.gz" "$T/n/assets/app.js.map"
"$KILN" check "$T/n" 2>"$T/n.check"
check "check: a sibling kiln did not write is a problem (exit 3)" [ $? -eq 3 ]
check "check: ... named" grep -qxF "kiln: $T/n/assets/app.js.map.gz: sibling not in the manifest" "$T/n.check"
echo '// changed' >>"$T/n/assets/app.js.map"
"$KILN" --exclude '*.map' "$T/n" 2>"$T/n2.log"
check "once its source changed: an error (exit 1)" [ $? -eq 1 ]
check "... that says it is stale and what to do" \
	grep -qxF "kiln: $T/n/assets/app.js.map.gz: stale sibling kiln did not write: it does not decode to its source and a server would send it; delete it" "$T/n2.log"
check "... and still never deletes it" [ -f "$T/n/assets/app.js.map.gz" ]
check "... while every other file was still processed" \
	grep -qE "^kiln: $ASSETS assets: $((COMPRESSED - 1)) compressed .*; 1 error;" "$T/n2.log"
"$KILN" check "$T/n" 2>"$T/n2.check"
check "check: a stale sibling kiln did not write: exit 3" [ $? -eq 3 ]
check "check: ... reported as stale, with what to do" \
	grep -qxF "kiln: $T/n/assets/app.js.map.gz: stale gzip sibling: not written by kiln, and a server would send it: delete it" "$T/n2.check"
"$KILN" check --json "$T/n" >"$T/n.json" 2>/dev/null
check "check --json: kind 'stale sibling'" [ "$(jfield "$T/n.json" '[(p["kind"], p["coding"]) for p in d["problems"]]')" = "[('stale sibling', 'gzip')]" ]
cp -a "$T/n" "$T/nc"
"$KILN" clean "$T/nc" 2>"$T/nc.log"
check "clean: a stale sibling kiln did not write is a failure (exit 1)" [ $? -eq 1 ]
check "clean: ... said, with what to do" \
	grep -qxF "kiln: $T/nc/assets/app.js.map.gz: stale sibling kiln did not write: it does not decode to its source and a server would send it; delete it" "$T/nc.log"
check "clean: ... and left in place" [ -f "$T/nc/assets/app.js.map.gz" ]
check "clean: kiln's own siblings removed" [ "$(count_siblings "$T/nc")" -eq 1 ]
fresh_site "$T/nd"
"$KILN" -q --no-manifest "$T/nd"
"$KILN" -q --exclude '*.map' "$T/nd" 2>/dev/null
"$KILN" clean "$T/nd" 2>"$T/nd.log"
check "clean: a sibling kiln did not write that decodes: exit 0" [ $? -eq 0 ]
check "clean: ... a warning that it is left" \
	grep -qxF "kiln: $T/nd/assets/app.js.map.gz: warning: sibling not written by kiln, left in place" "$T/nd.log"
fresh_site "$T/n3"
"$KILN" -q --no-manifest "$T/n3"
echo "/* new */" >>"$T/n3/assets/app.css"
"$KILN" "$T/n3" 2>"$T/n3.log"
check "a stale sibling beside a file kiln compresses is replaced (exit 0)" [ $? -eq 0 ]
check "... with a warning" grep -qxF "kiln: $T/n3/assets/app.css.gz: warning: replaced a sibling not written by kiln: it did not decode to its source" "$T/n3.log"
check "... by one that decodes" decodes_to "$T/n3/assets/app.css.gz" "$T/n3/assets/app.css"
rm "$T/n/assets/app.js.map.gz"
check "deleted by hand, as told: the run passes" "$KILN" -q --exclude '*.map' "$T/n"
check "... and check too" "$KILN" check -q "$T/n"

# ---- 7. A name whose sibling name would exceed NAME_MAX: a skip with a warning.
mkdir -p "$T/l"
long=$(printf 'l%.0s' $(seq 1 250)).js # 253 bytes: NAME.gz would be 256
edge=$(printf 'e%.0s' $(seq 1 249)).js # 252 bytes: .gz and .br fit, .zst does not
cp "$FIXTURES/site/assets/app.js" "$T/l/$long"
cp "$FIXTURES/site/assets/app.js" "$T/l/$edge"
"$KILN" --brotli --zstd "$T/l" 2>"$T/l.log"
check "long names: exit 0" [ $? -eq 0 ]
check "long names: a warning for the name with no room" \
	grep -qxF "kiln: $T/l/$long: warning: name too long for its .gz/.br/.zst siblings (over 255 bytes), none written" "$T/l.log"
check "long names: a warning for the coding with no room" \
	grep -qxF "kiln: $T/l/$edge: warning: name too long for its .zst sibling (over 255 bytes), none written" "$T/l.log"
check "long names: the .gz that fits written" decodes_to "$T/l/$edge.gz" "$T/l/$edge"
check "long names: the .br that fits written" decodes_to "$T/l/$edge.br" "$T/l/$edge"
check "long names: the summary says long-name" grep -qE "^kiln: 2 assets: 1 compressed, 1 long-name;" "$T/l.log"
check "long names: manifest entry skipped 'long-name', no siblings" \
	[ "$(jfield "$T/l/kiln-manifest.json" '(d["files"][sys.argv[3]].get("skipped"), "encodings" in d["files"][sys.argv[3]], sorted(d["files"][sys.argv[4]]["encodings"]))' "$long" "$edge")" = \
	"('long-name', False, ['br', 'gzip'])" ]
check "long names: the manifest is valid" $PY "$(dirname "$0")/check_manifest.py" "$T/l/kiln-manifest.json" "$T/l" "$SCHEMA"
check "long names: check passes" "$KILN" check -q "$T/l"
"$KILN" -q --brotli --zstd "$T/l"
check "long names: a re-run passes" [ $? -eq 0 ]

# ---- 8. The summary: assets, not files; siblings and outputs apart; singulars.
fresh_site "$T/s"
"$KILN" "$T/s" 2>"$T/s1.log"
check "summary: first run counts assets and siblings written" \
	grep -qxE "kiln: $ASSETS assets: $COMPRESSED compressed, 4 media, 2 small, 1 no-gain; $COMPRESSED siblings written; gzip [0-9.]+ KiB -> [0-9.]+ KiB \([0-9.]+%\); [0-9.]+ s" "$T/s1.log"
"$KILN" "$T/s" 2>"$T/s2.log"
check "summary: a re-run counts the same assets, none of kiln's own files" \
	grep -qE "^kiln: $ASSETS assets: $COMPRESSED compressed \($COMPRESSED unchanged\), 4 media, 2 small, 1 no-gain; gzip " "$T/s2.log"
check "summary: never 'files', never 'sibling' as an outcome" not grep -qE "files|[0-9] sibling[,;]" "$T/s2.log"
mkdir -p "$T/one" && echo tiny >"$T/one/a.txt"
"$KILN" "$T/one" "$T/missing" 2>"$T/one.log"
check "summary: singular asset and error; a missing DIR is an error, not an asset" \
	grep -qxE "kiln: 1 asset: 1 small; 1 error; [0-9.]+ s" "$T/one.log"

# ---- 9. clean -n says what it would remove, and removes nothing: the
# siblings, the manifest, its index and nginx's two snippet files.
before=$(tree_digest "$T/s")
"$KILN" clean -n "$T/s" 2>"$T/c.log"
check "clean -n: exit 0" [ $? -eq 0 ]
check "clean -n: 'would remove'" grep -qxF "kiln: clean: would remove $((COMPRESSED + 4)) files, 0 errors" "$T/c.log"
check "clean -n: nothing removed" [ "$(tree_digest "$T/s")" = "$before" ]
"$KILN" clean -nv "$T/s" 2>"$T/cv.log"
check "clean -nv: each file 'would be removed'" [ "$(grep -c ': would be removed$' "$T/cv.log")" -eq $((COMPRESSED + 4)) ]
"$KILN" clean "$T/s" 2>"$T/c2.log"
check "clean: 'removed'" grep -qxF "kiln: clean: $((COMPRESSED + 4)) files removed, 0 errors" "$T/c2.log"

# ---- 10. The progress line: cut to the terminal's width, one line, bytes as encoded.
# Files of 2, 1 and 1 MiB, zstd 19 alone on one thread: about a second per
# 1 MiB piece, so the line is seen with bytes done before the first file is,
# and with all its parts (wider than 40 columns) once it is.
mkdir -p "$T/p"
$PY - "$T/p" <<'EOF'
import random, sys
rnd = random.Random(7)
w = ["alpha", "bravo", "delta", "kiln", "oven", "glaze", "clay", "fire", "stone", "ash"]
for name, mib in (("big.json", 2), ("c.json", 1), ("d.json", 1)):
    with open(sys.argv[1] + "/" + name, "w") as f:
        n = i = 0
        while n < mib << 20:
            line = '{"id":%d,"name":"%s-%s","price":%.2f}\n' % (i, rnd.choice(w), rnd.choice(w), rnd.random() * 1000)
            f.write(line[: (mib << 20) - n])
            n += len(line[: (mib << 20) - n])
            i += 1
EOF
sock=kiln-everyday-$$
progress_in() { # progress_in COLUMNS: run kiln in a tmux pane that wide; captures in $T/cap.COLUMNS.*
	local cols=$1 i
	rm -f "$T"/p/*.zst
	tmux -L "$sock" new-session -d -s "p$cols" -x "$cols" -y 12 \
		"'$KILN' --progress --no-gzip --zstd --zstd-level 19 -j1 --no-manifest --no-nginx-conf '$T/p'; echo EXIT=\$?; sleep 30"
	for i in $(seq 1 120); do
		tmux -L "$sock" capture-pane -p -J -t "p$cols" >"$T/cap.$cols.$i"
		grep -q '^EXIT=' "$T/cap.$cols.$i" && break
		sleep 0.25
	done
	tmux -L "$sock" kill-session -t "p$cols"
}
for cols in 40 120; do
	progress_in $cols
	caps=("$T"/cap.$cols.*)
	last=$(ls -v "$T"/cap.$cols.* | tail -n 1)
	check "$cols columns: kiln finished (exit 0)" grep -qx 'EXIT=0' "$last"
	long_lines=$(cat "${caps[@]}" | grep -E '^kiln: [0-9]+/[0-9]+ files' | awk -v w=$cols 'length($0) > w - 1' | wc -l)
	check "$cols columns: the progress line never wider than the terminal" [ "$long_lines" -eq 0 ]
	check "$cols columns: one progress line at a time (drawn in place)" \
		[ "$(for c in "${caps[@]}"; do grep -cE '^kiln: [0-9]+/[0-9]+ files' "$c"; done | sort -n | tail -n 1)" -le 1 ]
	check "$cols columns: bytes counted while the file is encoded" \
		grep -qE '^kiln: 0/3 files, [0-9.]+ (KiB|MiB)/4\.0 MiB' "${caps[@]}"
	check "$cols columns: the line is gone at the end, the summary stays" \
		grep -qE '^kiln: 3 assets: 3 compressed' "$last"
done
check "40 columns: the line keeps what fits" not grep -qE '^kiln: [0-9]+/[0-9]+ files.*ETA' "$T"/cap.40.*
check "120 columns: the whole line, ETA too" grep -qE '^kiln: [0-9]/3 files, [0-9.]+ [KM]iB/4\.0 MiB, [0-9.]+ s, ETA [0-9]+ s$' "$T"/cap.120.*
tmux -L "$sock" kill-server 2>/dev/null
"$KILN" --help >"$T/help"
check "--help fits an 80-column terminal" [ "$(awk 'length($0) > 79' "$T/help" | wc -l)" -eq 0 ]

# ---- 11. Size suffixes for --min-size, as for the other sizes.
mkdir -p "$T/z"
head -c 6000 "$FIXTURES/site/assets/app.js" >"$T/z/a.js"
cat "$FIXTURES/site/assets/app.css" "$FIXTURES/site/assets/app.css" | head -c 12000 >"$T/z/b.css"
"$KILN" -q --min-size 10K "$T/z"
check "--min-size 10K: accepted" [ $? -eq 0 ]
check "--min-size 10K: a 6000-byte file is small" [ "$(jfield "$T/z/kiln-manifest.json" 'd["files"]["a.js"]["skipped"]')" = small ]
check "--min-size 10K: a 12000-byte file is compressed" decodes_to "$T/z/b.css.gz" "$T/z/b.css"
check "--min-size 10K is 10240 bytes" [ "$(jfield "$T/z/kiln-manifest.json" 'd["settings"]["min_size"]')" = 10240 ]
"$KILN" -q --min-size 10X "$T/z" 2>/dev/null
check "--min-size 10X: usage error" [ $? -eq 2 ]

# ---- 12. An archive given as DIR points to -o.
tar -C "$FIXTURES" -czf "$T/dist.tar.gz" site
"$KILN" "$T/dist.tar.gz" 2>"$T/a.log"
check "archive without -o: exit 1" [ $? -eq 1 ]
check "archive without -o: points to -o" \
	grep -qxF "kiln: $T/dist.tar.gz: not a directory (to read an archive and write a new one with its siblings, add -o OUT)" "$T/a.log"

# ---- 13. A previous manifest that is not kiln's: said once.
fresh_site "$T/pm"
echo '{"name": "my-app", "version": "1.0.0"}' >"$T/pm/kiln-manifest.json"
"$KILN" "$T/pm" 2>"$T/pm.log"
check "foreign manifest: exit 0" [ $? -eq 0 ]
check "foreign manifest: one line about it" [ "$(grep -c 'manifest' "$T/pm.log")" -eq 1 ]
check "foreign manifest: the reason once" grep -qxF "kiln: $T/pm/kiln-manifest.json: warning: previous manifest ignored: not a kiln manifest" "$T/pm.log"

# ---- 14. --json: paths as the manifest writes them; counts that match the lists.
fresh_site "$T/j"
ln -s nowhere "$T/j/assets/"$'dang\xffling%.js'
"$KILN" --json --follow-symlinks "$T/j" "$T/j-missing" >"$T/j.json" 2>/dev/null
check "--json: exit 1 with errors" [ $? -eq 1 ]
# (a kiln of UTF-8 names only refuses that name: an error all the same)
check "--json: a path that is not UTF-8: percent-encoded, and its bytes in path_base64" \
	env NOT_UTF8="$(non_utf8_names || echo "$NOT_UTF8")" $PY - "$T/j.json" "$T/j" <<'EOF'
import base64, json, os, sys
d = json.load(open(sys.argv[1]))
tree = sys.argv[2]
refused = os.environ["NOT_UTF8"]
raw = tree.encode() + b"/assets/dang\xffling%.js"
errs = {e["path"]: e for e in d["errors"]}
key = tree + "/assets/dang%FFling%25.js"
assert key in errs, errs
assert base64.b64decode(errs[key]["path_base64"]) == raw, errs[key]
assert errs[key]["reason"].startswith("dangling symbolic link") or (
    refused and errs[key]["reason"] == "cannot stat: " + refused), errs[key]
assert "path_base64" not in errs[tree + "-missing"], errs
EOF
check "--json: error_count is the length of errors" [ "$(jfield "$T/j.json" '(d["error_count"], len(d["errors"]))')" = "(2, 2)" ]
check "--json: assets add up, none of them siblings or errors" \
	[ "$(jfield "$T/j.json" '(d["assets"], sum(d["files"].values()), d["files"]["compressed"], d["written"])')" = "($ASSETS, $ASSETS, $COMPRESSED, $COMPRESSED)" ]
rm "$T/j/assets/"$'dang\xffling%.js'
"$KILN" --json "$T/j" >"$T/j2.json" 2>/dev/null
check "--json: kiln's siblings and outputs counted apart, not as assets" \
	[ "$(jfield "$T/j2.json" '(d["assets"], d["not_assets"]["sibling"], d["files"]["compressed"], d["unchanged"], d["written"])')" = "($ASSETS, $((COMPRESSED + 4)), $COMPRESSED, $COMPRESSED, 0)" ]
fresh_site "$T/jc"
"$KILN" -q "$T/jc"
echo x | gzip >"$T/jc/robots.txt.gz"
mv "$T/jc/index.html.gz" "$T/jc/"$'in\xffdex.html.gz'
"$KILN" check --json "$T/jc" >"$T/jc.json" 2>/dev/null
# (a kiln of UTF-8 names only: that name is an error, not a problem)
check "check --json: problem paths percent-encoded, problem_count matches" \
	env NOT_UTF8="$(non_utf8_names || echo "$NOT_UTF8")" $PY - "$T/jc.json" "$T/jc" <<'EOF'
import base64, json, os, sys
d = json.load(open(sys.argv[1]))
tree = sys.argv[2]
refused = os.environ["NOT_UTF8"]
key = tree + "/in%FFdex.html.gz"
paths = {p["path"]: p for p in d["problems"] + d["errors"]}
assert d["problem_count"] == len(d["problems"]) == (2 if refused else 3), d
assert base64.b64decode(paths[key]["path_base64"]) == tree.encode() + b"/in\xffdex.html.gz", paths
assert paths[tree + "/index.html"]["kind"] == "missing sibling", paths
assert paths[tree + "/robots.txt.gz"]["kind"] == "stale sibling", paths
assert d["error_count"] == len(d["errors"]) == (1 if refused else 0), d
assert not refused or paths[key]["reason"] == "cannot stat: " + refused, paths
EOF

# ---- 15. DIR as typed, with doubled slashes and a trailing one: messages use one slash.
mkdir -p "$T/w/s/assets"
cp "$FIXTURES/site/assets/app.js" "$T/w/s/assets/"
(cd "$T/w" && "$KILN" -v ./s//assets/ 2>"$T/w.log")
check "DIR ./s//assets/: messages say ./s/assets/app.js" grep -qE '^\./s/assets/app\.js: compressed' "$T/w.log"
check "DIR ./s//assets/: no doubled slash anywhere" not grep -q '//' "$T/w.log"

# ---- 16. --no-gzip --brotli: every response carries Vary, once (a real nginx).
chmod 755 "$T"
fresh_site "$T/v"
"$KILN" -q --no-gzip --brotli "$T/v"
chmod -R a+rX "$T/v"
cleanup() { nginx_stop; tmux -L "$sock" kill-server 2>/dev/null; }
trap cleanup EXIT
vary() { # vary PATH ACCEPT-ENCODING: the Vary lines and Content-Encoding of the response
	curl -s -D - -o "$T/body" -H "Accept-Encoding: $2" "http://127.0.0.1:$PORT/$1" |
		tr -d '\r' | grep -iE '^(vary|content-encoding):' | sort | tr '\n' ' '
}
if nginx_start "$T/ngx" "$T/v"; then
	for f in index.html assets/app.js; do
		check "$f, identity: Vary once" [ "$(vary "$f" identity)" = "Vary: Accept-Encoding " ]
		check "$f, identity: the source's bytes" cmp -s "$T/body" "$T/v/$f"
		check "$f, gzip only: Vary once, not compressed" [ "$(vary "$f" gzip)" = "Vary: Accept-Encoding " ]
		check "$f, br: the .br, Vary once" [ "$(vary "$f" br)" = "Content-Encoding: br Vary: Accept-Encoding " ]
		check "$f, br: the sibling's bytes" cmp -s "$T/body" "$T/v/$f.br"
	done
	nginx_stop
else
	fail "nginx starts with the --no-gzip snippet"
fi

finish
