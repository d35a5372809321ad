#!/usr/bin/env bash
# hostile.sh - one tree holding every kind of bad input kiln must survive,
# built here, run through `kiln --brotli --verify --follow-symlinks`: exactly
# the expected errors, nothing hangs, every sibling decodes to its source,
# every source is byte-identical afterwards, nothing outside the tree is
# touched.  Then the DIR arguments themselves: empty, a file, missing, the
# same twice, overlapping.
. "$(dirname "$0")/lib.sh"

H=$T/h
O=$T/outside
mkdir -p "$H" "$O"
js=$FIXTURES/site/assets/app.js
echo "outside, must never change" >"$O/secret.js"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do cat "$js"; done >>"$O/secret.js"
echo "victim, must never change" >"$O/victim"

cp "$js" "$H/ok.js"
# symbolic links
ln -s ok.js "$H/link-in.js"
ln -s ../outside/secret.js "$H/link-out.js"
ln -s nowhere.js "$H/dangling.js"
ln -s loopfile.js "$H/loopfile.js"
mkdir "$H/loop" && cp "$js" "$H/loop/inner.js" && ln -s .. "$H/loop/up"
# sibling paths that are not regular files
cp "$js" "$H/sib-link.js" && ln -s ../outside/victim "$H/sib-link.js.gz"
cp "$js" "$H/sib-dir.js" && mkdir "$H/sib-dir.js.gz"
cp "$js" "$H/sib-fifo.js" && mkfifo "$H/sib-fifo.js.gz"
# special files: skipped with a warning, never opened (a FIFO would block)
mkfifo "$H/fifo.js"
/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$H/socket.js"
[ "$(id -u)" -eq 0 ] && mknod "$H/device.js" c 1 3
# permissions
cp "$js" "$H/unreadable.js" && chmod 000 "$H/unreadable.js"
mkdir "$H/unreadable-dir" && cp "$js" "$H/unreadable-dir/a.js" && chmod 000 "$H/unreadable-dir"
mkdir "$H/unsearchable-dir" && cp "$js" "$H/unsearchable-dir/b.js" && chmod 644 "$H/unsearchable-dir"
# names
mkdir "$H/names"
names=('with space.js' $'new\nline.js' $'tab\tname.js' 'quote"s.js' "single'quote.js" 'back\slash.js'
	'-leading-dash.js' 'a..b.js' 'file.' '.hidden.js' 'caf\xc3\xa9.js')
non_utf8_names && names+=($'latin1-\xe9.js')
for n in "${names[@]}"; do cp "$js" "$H/names/$n"; done
# (for a kiln of UTF-8 names only: refused, below)
non_utf8_names || cp "$js" "$H/names/"$'latin1-\xe9.js'
long=$(printf 'L%.0s' $(seq 1 252)).js          # 255 bytes: the limit; .gz would exceed it
fits=$(printf 'F%.0s' $(seq 1 249)).js          # 252 bytes: .gz and .br just fit
cp "$js" "$H/names/$long"
cp "$js" "$H/names/$fits"
: >"$H/empty.js"
truncate -s 3G "$H/big.txt"                     # sparse: no disk, but over --max-file-size

before=$(cd "$H" && find . -type f ! -perm -u=r -prune -o -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum 2>/dev/null)
outside_before=$(sha256sum "$O"/*)

# as root everything is readable: drop to nobody for the permission cases
as=()
bin=$KILN
if [ "$(id -u)" -eq 0 ]; then
	chown -R nobody "$H"
	cp "$KILN" "$T/kiln-bin" && chmod 755 "$T/kiln-bin"
	as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	bin=$T/kiln-bin
fi

timeout 300 "${as[@]}" "$bin" --brotli --verify --follow-symlinks --no-progress --max-file-size 1G "$H" 2>"$T/h.log"
rc=$?
check "nothing hangs (rc $rc)" [ $rc -ne 124 ]
check "exit 1: some files failed" [ $rc -eq 1 ]

# The exact set of error lines (warnings are not errors).
expected=$(sort <<EOF2
kiln: $H/big.txt: larger than --max-file-size, not compressed: File too large
kiln: $H/dangling.js: dangling symbolic link: No such file or directory
kiln: $H/link-out.js: symbolic link points outside the tree
kiln: $H/loopfile.js: symbolic link loop: Too many levels of symbolic links
kiln: $H/sib-dir.js.gz: is a directory, not replaced
kiln: $H/sib-fifo.js.gz: is not a regular file, not replaced
kiln: $H/sib-link.js.gz: is a symbolic link, not replaced
kiln: $H/unreadable-dir: cannot open directory: Permission denied
kiln: $H/unreadable.js: cannot open: Permission denied
kiln: $H/unsearchable-dir/b.js: cannot stat: Permission denied
EOF2
)
[ "$(id -u)" -eq 0 ] || expected=$(grep -v 'Permission denied' <<<"$expected")
non_utf8_names || expected=$(sort <<<"$expected
kiln: $H/names/latin1-\xe9.js: cannot stat: $NOT_UTF8")
actual=$(grep '^kiln: ' "$T/h.log" | grep -v ': warning: ' | grep -v '^kiln: [0-9]* assets\?:' | sort)
check "exactly the expected errors" [ "$actual" = "$expected" ]
[ "$actual" = "$expected" ] || diff <(echo "$expected") <(echo "$actual") >&2
warnings=$(grep -c ': warning: not a regular file, skipped' "$T/h.log")
check "special files warned about (FIFO, socket, device)" [ "$warnings" -ge 2 ]
check "special files warned about: the FIFO" grep -qF "kiln: $H/fifo.js: warning: not a regular file" "$T/h.log"

# Every sibling decodes to its source; the odd names got theirs.
bad=0
while IFS= read -r -d '' s; do
	decodes_to "$s" "${s%.*}" || { echo "bad sibling: $s" >&2; bad=1; }
done < <(find "$H" -type f \( -name '*.gz' -o -name '*.br' \) -print0 2>/dev/null)
check "every sibling decodes to its source" [ $bad -eq 0 ]
for n in "${names[@]}" "$fits"; do
	check "sibling for $(printf %q "$n")" decodes_to "$H/names/$n.gz" "$H/names/$n"
done
check "link inside followed" decodes_to "$H/link-in.js.gz" "$H/ok.js"
check "loop/inner.js compressed" decodes_to "$H/loop/inner.js.gz" "$H/loop/inner.js"
check "a link to a directory is not descended" not grep -q '"loop/up/' "$H/kiln-manifest.json"
check "... reported as a symlink, not an error" not grep -qF "$H/loop/up:" <(grep -v ': symlink$' "$T/h.log")
check "no sibling for the long name" [ -z "$(find "$H/names" -name 'LLL*.gz' -o -name 'LLL*.br')" ]
check "the long name: a warning, not an error" grep -qF "kiln: $H/names/$long: warning: name too long for its .gz/.br siblings (over 255 bytes), none written" "$T/h.log"
check "no sibling for the outside link" [ ! -e "$H/link-out.js.gz" ]
check "symlinked sibling path left alone" [ -L "$H/sib-link.js.gz" ]
check "directory at the sibling path left alone" [ -d "$H/sib-dir.js.gz" ]
check "FIFO at the sibling path left alone" [ -p "$H/sib-fifo.js.gz" ]
check "nothing outside the tree changed" [ "$(sha256sum "$O"/*)" = "$outside_before" ]
check "nothing written outside the tree" [ "$(ls "$O" | wc -l)" -eq 2 ]
check "empty file: no sibling" [ ! -e "$H/empty.js.gz" ]
check "no temporary file left" [ -z "$(find "$H" -name '.kiln-*' ! -name .kiln-manifest.json.index 2>/dev/null)" ]
after=$(cd "$H" && find . -type f ! -perm -u=r -prune -o -type f ! -name '*.gz' ! -name '*.br' ! -name 'kiln*' ! -name .kiln-manifest.json.index -print0 2>/dev/null | sort -z | xargs -0 sha256sum 2>/dev/null)
before_src=$(grep -a -v -E '\.(gz|br)$' <<<"$before")
check "every source byte-identical" [ "$after" = "$before_src" ]
check "the manifest is valid JSON" /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$H/kiln-manifest.json"
chmod -R u+rwX "$H" 2>/dev/null

# A read-only directory; a read-only file kiln did not write at a sibling's
# name (made read-only on purpose), and a sibling kiln wrote made read-only
# since (kiln's: it must hold the current source).
fresh_site "$T/ro"
"$KILN" -q "$T/ro"
echo "// changed" >>"$T/ro/assets/app.js"
echo "// changed" >>"$T/ro/assets/app.css"
gzip -9nc "$T/ro/assets/app.css" | head -c 100 >"$T/ro/assets/app.css.gz.new"
mv "$T/ro/assets/app.css.gz.new" "$T/ro/assets/app.css.gz"
chmod 444 "$T/ro/assets/app.css.gz" "$T/ro/assets/app.js.gz"
cp -a "$T/ro/assets/app.css.gz" "$T/ro-css.gz"
"$KILN" -q "$T/ro" 2>"$T/ro.log"
check "read-only file kiln did not write: exit 1" [ $? -eq 1 ]
check "read-only file kiln did not write: said so" grep -qF "kiln: $T/ro/assets/app.css.gz: is read-only, not replaced" "$T/ro.log"
check "read-only file kiln did not write: left as it was" cmp -s "$T/ro/assets/app.css.gz" "$T/ro-css.gz"
check "kiln's sibling made read-only: replaced with the current source" decodes_to "$T/ro/assets/app.js.gz" "$T/ro/assets/app.js"
check "kiln's sibling made read-only: the source's mode again" [ "$(stat -c %a "$T/ro/assets/app.js.gz")" = "$(stat -c %a "$T/ro/assets/app.js")" ]
# A read-only source gives read-only siblings (a sibling gets its source's
# mode), kiln's by their digests: once the source is writable again and
# changed, they are replaced like any other.
fresh_site "$T/rosrc"
chmod 444 "$T/rosrc/assets/app.js"
"$KILN" -q --brotli "$T/rosrc"
check "read-only source: read-only siblings" [ "$(stat -c %a "$T/rosrc/assets/app.js.gz")" = 444 ]
chmod 644 "$T/rosrc/assets/app.js" && echo "// changed" >>"$T/rosrc/assets/app.js"
"$KILN" -q --brotli "$T/rosrc" 2>"$T/rosrc.log"
check "read-only source, writable again and changed: exit 0" [ $? -eq 0 ]
check "... nothing said" [ ! -s "$T/rosrc.log" ]
check "... .gz replaced" decodes_to "$T/rosrc/assets/app.js.gz" "$T/rosrc/assets/app.js"
check "... .br replaced" decodes_to "$T/rosrc/assets/app.js.br" "$T/rosrc/assets/app.js"
check "... with the source's mode" [ "$(stat -c %a "$T/rosrc/assets/app.js.gz" "$T/rosrc/assets/app.js.br" | sort -u)" = 644 ]
check "... kiln check passes" "$KILN" check -q "$T/rosrc"
if [ "$(id -u)" -eq 0 ]; then
	fresh_site "$T/rodir"
	chmod -R a+rX "$T/rodir"
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$T/kiln-bin" -q --no-manifest --no-nginx-conf "$T/rodir" 2>"$T/rodir.log"
	check "read-only directory: exit 1" [ $? -eq 1 ]
	check "read-only directory: said so" grep -qF "kiln: $T/rodir/index.html.gz: cannot create temporary file: Permission denied" "$T/rodir.log"
	check "read-only directory: nothing written" [ -z "$(find "$T/rodir" -name '*.gz' ! -name archive.tar.gz)" ]
fi

# DIR arguments: empty, a file, missing, the same twice, overlapping.
mkdir -p "$T/empty"
"$KILN" -q "$T/empty"
check "empty DIR: exit 0" [ $? -eq 0 ]
"$KILN" -q "$H/ok.js" 2>"$T/d.log"
check "a file as DIR: exit 1" [ $? -eq 1 ]
check "a file as DIR: said so, and points to -o" grep -qF "kiln: $H/ok.js: not a directory (to read an archive and write a new one with its siblings, add -o OUT)" "$T/d.log"
"$KILN" -q "$T/missing" 2>"$T/d.log"
check "missing DIR: exit 1" [ $? -eq 1 ]
check "missing DIR: said so" grep -qF "kiln: $T/missing: cannot open directory: No such file or directory" "$T/d.log"
# clean and its dry run too: a typo in CI is no empty record
for c in "clean" "clean -n"; do
	# shellcheck disable=SC2086
	"$KILN" $c "$T/missing" 2>"$T/d.log"
	rc=$?
	check "$c of a missing DIR: exit 1 (got $rc)" test "$rc" -eq 1
	check "$c of a missing DIR: said so" grep -qF "kiln: $T/missing: cannot open directory: No such file or directory" "$T/d.log"
	check "$c of a missing DIR: no manifest warning" not grep -q "no manifest" "$T/d.log"
done
# the same DIR twice, or one inside another, in one command: refused
# (tests/e2e/everyday.sh has the details); in separate runs, a tree and a
# subtree of it each keep their own manifest
fresh_site "$T/over"
"$KILN" -q --brotli "$T/over" "$T/over/assets" 2>/dev/null
check "overlapping DIRs in one command: usage error" [ $? -eq 2 ]
"$KILN" -q --brotli "$T/over/assets"
check "a subtree alone: exit 0" [ $? -eq 0 ]
"$KILN" -q --brotli "$T/over"
check "then its tree: exit 0" [ $? -eq 0 ]
check "overlapping runs: outer check passes" "$KILN" check -q "$T/over"
check "overlapping runs: inner check passes" "$KILN" check -q "$T/over/assets"
check "overlapping runs: the inner manifest is not an asset" [ ! -e "$T/over/assets/kiln-manifest.json.gz" ]

finish
