#!/usr/bin/env bash
# cli.sh - the command line: usage errors, help and version, include and
# exclude, bad files and directories, special files, symbolic links, names
# that need escaping, and exit statuses.
. "$(dirname "$0")/lib.sh"

# Usage errors exit 2 and say why.
usage_case() { # usage_case ARGS...
	"$KILN" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	check "usage error exits 2: $*" [ $rc -eq 2 ]
	check "usage error explains itself: $*" grep -q '^kiln: ' "$T/err"
}
mkdir -p "$T/empty"
usage_case
usage_case --gzip-level 13 "$T/empty"
usage_case --gzip-level 0 "$T/empty"
usage_case --gzip-level x "$T/empty"
usage_case --brotli-quality 12 "$T/empty"
usage_case --brotli-quality -1 "$T/empty"
usage_case --max-ratio 0 "$T/empty"
usage_case --max-ratio 1.5 "$T/empty"
usage_case --max-ratio abc "$T/empty"
usage_case --min-size -5 "$T/empty"
usage_case -j 0 "$T/empty"
usage_case --no-gzip "$T/empty"
"$KILN" --no-such-option "$T/empty" >/dev/null 2>&1
check "unknown option exits 2" [ $? -eq 2 ]

"$KILN" --help >"$T/help" 2>&1
check "--help exits 0" [ $? -eq 0 ]
check "--help shows the usage" grep -q '^usage: kiln' "$T/help"
"$KILN" --version >"$T/version" 2>&1
check "--version exits 0" [ $? -eq 0 ]
check "--version names libdeflate's version" grep -qE '^libdeflate [0-9]+\.[0-9]+' "$T/version"
check "--version names brotli's version" grep -qE '^brotli [0-9]+\.[0-9]+\.[0-9]+' "$T/version"
check "kiln compress DIR is kiln DIR" "$KILN" compress -q "$T/empty"

# An empty directory is fine; a missing one or a file is an error (exit 1),
# and the other DIRs are still processed.
"$KILN" -q "$T/empty"
check "empty DIR exits 0" [ $? -eq 0 ]
fresh_site "$T/s"
echo text >"$T/file"
"$KILN" -q "$T/missing" "$T/file" "$T/s" 2>"$T/err"
check "missing DIR exits 1" [ $? -eq 1 ]
check "missing DIR is named" grep -qF "kiln: $T/missing: " "$T/err"
check "a file as DIR is named" grep -qF "kiln: $T/file: " "$T/err"
check "the good DIR is still processed" decodes_to "$T/s/index.html.gz" "$T/s/index.html"
check "DIR/ with a trailing slash works" "$KILN" -q "$T/s/"

# Options before the command word, as git takes them: "kiln -q clean DIR"
# is "kiln clean -q DIR", never a compress run of a directory named clean
# (one waits in the working directory for each command word, to catch it);
# after "--" the word is a DIR again.
mkdir -p "$T/words"
for w in compress check clean merge; do
	mkdir -p "$T/words/$w" && cp "$FIXTURES/site/index.html" "$T/words/$w/page.html"
done
words_untouched() { [ -z "$(find "$T/words" -name '*.gz' -o -name 'kiln*')" ]; }
pre() { # pre NAME ARGS...: run kiln in the words directory, keep rc and stderr
	local name=$1
	shift
	(cd "$T/words" && "$KILN" "$@") >"$T/pre.out" 2>"$T/pre.err"
	pre_rc=$?
	check "options first, $name: no directory named like the command touched" words_untouched
}
fresh_site "$T/pre"
pre "compress" -q --min-size 1 compress "$T/pre"
check "-q --min-size 1 compress DIR: exit 0 ($pre_rc)" [ $pre_rc -eq 0 ]
check "-q --min-size 1 compress DIR: compressed" decodes_to "$T/pre/index.html.gz" "$T/pre/index.html"
pre "check" -q check "$T/pre"
check "-q check DIR: exit 0 ($pre_rc)" [ $pre_rc -eq 0 ]
check "-q check DIR: quiet" [ ! -s "$T/pre.err" ]
echo tampered >>"$T/pre/index.html"
pre "check, tampered" -j 2 --json check "$T/pre"
check "-j 2 --json check DIR on a changed tree: exit 3 ($pre_rc)" [ $pre_rc -eq 3 ]
check "-j 2 --json check DIR: the JSON on stdout" grep -q '"problems"' "$T/pre.out"
pre "clean" -q clean "$T/pre"
check "-q clean DIR: exit 0 ($pre_rc)" [ $pre_rc -eq 0 ]
check "-q clean DIR: siblings removed" [ -z "$(find "$T/pre" -name '*.gz' ! -path '*/downloads/*')" ]
check "-q clean DIR: manifest removed" [ ! -e "$T/pre/kiln-manifest.json" ]
"$KILN" -q --shard 1/2 "$T/pre" && "$KILN" -q --shard 2/2 "$T/pre"
pre "merge" -q merge "$T/pre"
check "-q merge DIR: exit 0 ($pre_rc)" [ $pre_rc -eq 0 ]
check "-q merge DIR: the parts merged" [ -z "$(find "$T/pre" -name 'kiln-manifest.shard-*')" ]
check "-q merge DIR: the manifest written" [ -s "$T/pre/kiln-manifest.json" ]
pre "merge, a usage error" -o "$T/x.tar" merge "$T/pre"
check "-o OUT merge DIR: a usage error, as merge -o OUT DIR ($pre_rc)" [ $pre_rc -eq 2 ]
(cd "$T/words" && "$KILN" -q -- clean) 2>"$T/pre.err"
check "-q -- clean: compresses the directory clean ($?)" decodes_to "$T/words/clean/page.html.gz" "$T/words/clean/page.html"
rm -rf "$T/words/clean/"*.gz "$T/words/clean/"kiln*
(cd "$T/words" && "$KILN" -q "$T/pre" clean) 2>"$T/pre.err"
check "-q DIR clean: only the first operand names a command" decodes_to "$T/words/clean/page.html.gz" "$T/words/clean/page.html"

# --include and --exclude (globs relative to DIR).
fresh_site "$T/x"
"$KILN" -q --exclude '*.json' --exclude 'docs/*' "$T/x"
check "--exclude '*.json' (any depth)" [ ! -e "$T/x/data/products.json.gz" ]
check "--exclude 'docs/*'" [ -z "$(find "$T/x/docs" -name '*.gz')" ]
check "--exclude leaves the rest" [ -f "$T/x/index.html.gz" ]
fresh_site "$T/i"
"$KILN" -v --include '*.css' --include 'assets/*.js' "$T/i" 2>"$T/i.log"
check "--include '*.css'" [ -f "$T/i/assets/app.css.gz" ]
check "--include 'assets/*.js'" [ -f "$T/i/assets/app.js.gz" ]
check "not included: excluded" [ ! -e "$T/i/index.html.gz" ]
check "not included: reported excluded" grep -qF '/index.html: excluded' "$T/i.log"

# A file it cannot read: exit 1, a clear message, the others still done.
# As root everything is readable, so drop to nobody for this part.
fresh_site "$T/u"
chmod 000 "$T/u/assets/app.css"
if [ "$(id -u)" -eq 0 ]; then
	cp "$KILN" "$T/kiln-bin" && chmod 755 "$T/kiln-bin"
	chown -R nobody "$T/u"
	run_as() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
else
	cp "$KILN" "$T/kiln-bin"
	run_as() { "$@"; }
fi
run_as "$T/kiln-bin" -q "$T/u" 2>"$T/u.err"
check "unreadable file exits 1" [ $? -eq 1 ]
check "unreadable file is named with the reason" \
	grep -qF "kiln: $T/u/assets/app.css: cannot open: Permission denied" "$T/u.err"
check "others still compressed" decodes_to "$T/u/assets/app.js.gz" "$T/u/assets/app.js"
check "no sibling for the unreadable file" [ ! -e "$T/u/assets/app.css.gz" ]
check "only the one error" [ "$(grep -c '^kiln: ' "$T/u.err")" -eq 1 ]
chmod 755 "$T/u/docs"
chmod 000 "$T/u/docs"
rm -f "$T/u"/*.gz
run_as "$T/kiln-bin" -q "$T/u" 2>"$T/u.err"
check "unreadable directory exits 1" [ $? -eq 1 ]
check "unreadable directory is named" grep -qF "kiln: $T/u/docs: cannot open directory" "$T/u.err"
check "others still compressed next to it" [ -f "$T/u/index.html.gz" ]
chmod -R u+rwX "$T/u"

# A FIFO, never opened (it would block), and a warning; symlinks not
# followed by default; followed inside DIR with --follow-symlinks, refused
# when they point outside.
mkdir -p "$T/sp/d" "$T/outside"
head -c 4000 "$FIXTURES/site/assets/app.js" >"$T/sp/d/real.js"
cp "$T/sp/d/real.js" "$T/outside/secret.js"
mkfifo "$T/sp/pipe.js"
ln -s d/real.js "$T/sp/link.js"
ln -s ../outside/secret.js "$T/sp/escape.js"
ln -s nowhere.js "$T/sp/dangling.js"
timeout 20 "$KILN" "$T/sp" 2>"$T/sp.err"
rc=$?
check "a FIFO does not hang the run" [ $rc -ne 124 ]
check "FIFO and links: exit 0 without --follow-symlinks" [ $rc -eq 0 ]
check "FIFO warned about" grep -qF "kiln: $T/sp/pipe.js: warning: not a regular file" "$T/sp.err"
check "links not followed by default" [ ! -e "$T/sp/link.js.gz" ]
timeout 20 "$KILN" -q --follow-symlinks "$T/sp" 2>"$T/sp.err"
check "--follow-symlinks: errors exit 1" [ $? -eq 1 ]
check "--follow-symlinks: link inside DIR compressed" decodes_to "$T/sp/link.js.gz" "$T/sp/d/real.js"
check "--follow-symlinks: link outside refused" grep -qF "kiln: $T/sp/escape.js: symbolic link points outside the tree" "$T/sp.err"
check "--follow-symlinks: nothing written for the outside link" [ ! -e "$T/sp/escape.js.gz" ]
check "--follow-symlinks: nothing written outside" [ ! -e "$T/outside/secret.js.gz" ]
check "--follow-symlinks: dangling link reported" grep -qF "kiln: $T/sp/dangling.js: dangling symbolic link" "$T/sp.err"

# A FIFO, socket or device as DIR (compress, check) or --previous: not the
# hint for an archive given as DIR (add -o OUT), but what it is; the other
# DIRs are still processed.
mkdir -p "$T/kinds"
mkfifo "$T/kinds/fifo"
/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/kinds/sock"
for k in "fifo:a FIFO" "sock:a socket" "/dev/null:a character device"; do
	p=${k%%:*} what=${k#*:}
	[ "${p#/}" = "$p" ] && p=$T/kinds/$p
	for how in --previous compress check; do
		fresh_site "$T/kd"
		[ $how = check ] && "$KILN" -q "$T/kd"
		case $how in
		--previous) timeout 20 "$KILN" -q --previous "$p" "$T/kd" 2>"$T/kd.err" ;;
		*) timeout 20 "$KILN" $how -q "$p" "$T/kd" 2>"$T/kd.err" ;;
		esac
		rc=$?
		check "$what, $how: exit 1 ($rc)" [ $rc -eq 1 ]
		check "$what, $how: says what it is" grep -qxF "kiln: $p: not a directory or archive ($what)" "$T/kd.err"
		check "$what, $how: no hint for an archive" not grep -q -- '-o OUT' "$T/kd.err"
		check "$what, $how: one error" [ "$(grep -c '^kiln: ' "$T/kd.err")" -eq 1 ]
		check "$what, $how: the other DIR still done" decodes_to "$T/kd/index.html.gz" "$T/kd/index.html"
	done
done
"$KILN" -q "$T/file" 2>"$T/kd.err"
check "a regular file as DIR: still the hint for an archive" grep -qF "kiln: $T/file: not a directory (to read an archive and write a new one with its siblings, add -o OUT)" "$T/kd.err"

# A sibling path that is a symlink or a directory is an error, never
# followed or replaced.
mkdir -p "$T/w"
cp "$FIXTURES/site/index.html" "$T/w/a.html"
cp "$FIXTURES/site/index.html" "$T/w/b.html"
cp "$FIXTURES/site/index.html" "$T/w/c.html"
echo precious >"$T/precious"
ln -s "$T/precious" "$T/w/a.html.gz"
mkdir "$T/w/b.html.gz"
"$KILN" -q "$T/w" 2>"$T/w.err"
check "sibling path not a file: exit 1" [ $? -eq 1 ]
check "symlink at the sibling path not followed" [ "$(cat "$T/precious")" = precious ]
check "symlink at the sibling path kept" [ -L "$T/w/a.html.gz" ]
check "symlink at the sibling path reported" grep -qF "kiln: $T/w/a.html.gz: is a symbolic link, not replaced" "$T/w.err"
check "directory at the sibling path reported" grep -qF "kiln: $T/w/b.html.gz: is a directory, not replaced" "$T/w.err"
check "the third file still compressed" decodes_to "$T/w/c.html.gz" "$T/w/c.html"

# Names that need escaping in messages; they still get their siblings.
mkdir -p "$T/names"
odd=($'new\nline.js' $'tab\tname.js' 'back\slash.js' '-leading.js' 'quote"s.js' 'a..b.js' 'file.' '.hidden.js')
non_utf8_names && odd+=($'\xff\xfe-latin1.js')
for n in "${odd[@]}"; do
	cp "$FIXTURES/site/assets/app.js" "$T/names/$n"
done
"$KILN" -v "$T/names" 2>"$T/names.err"
check "odd names: exit 0" [ $? -eq 0 ]
for n in "${odd[@]}"; do
	check "sibling for $(printf %q "$n")" decodes_to "$T/names/$n.gz" "$T/names/$n"
done
check "newline escaped in messages" grep -qF 'new\nline.js: compressed' "$T/names.err"
check "tab escaped in messages" grep -qF 'tab\tname.js: compressed' "$T/names.err"
if non_utf8_names; then
	check "invalid UTF-8 escaped in messages" grep -qF '\xff\xfe-latin1.js: compressed' "$T/names.err"
else
	# refused, named escaped, the rest of the run going on
	cp "$FIXTURES/site/assets/app.js" "$T/names/"$'\xff\xfe-latin1.js'
	"$KILN" -v "$T/names" 2>"$T/names.err"
	check "a name that is not UTF-8: exit 1" [ $? -eq 1 ]
	check "... refused, named escaped, with the reason" \
		grep -qF "\\xff\\xfe-latin1.js: cannot stat: $NOT_UTF8" "$T/names.err"
	check "... no sibling for it" [ ! -e "$T/names/"$'\xff\xfe-latin1.js.gz' ]
	check "... the others still kept" decodes_to "$T/names/a..b.js.gz" "$T/names/a..b.js"
fi
check "no raw control character printed" not grep -q $'\t' "$T/names.err"

# --previous before --url-prefix (the lists are filled in after parsing);
# --previous with --shard is refused, nothing written.
"$KILN" --previous "$T/nowhere" --url-prefix /a/ --help >/dev/null 2>&1
check "--previous before --url-prefix: no crash (exit $?)" [ $? -eq 0 ]
fresh_site "$T/ps"
"$KILN" -q --previous "$T/nowhere" --shard 1/2 "$T/ps" 2>"$T/ps.err"
check "--previous with --shard: usage error" [ $? -eq 2 ]
check "... and nothing written" [ ! -e "$T/ps/kiln-manifest.json" ]

# --manifest: a name outside the tree is not hidden in the tree (an asset
# may share it); inside, any name but kiln's own is refused (it would be
# served once the option changed); named like a shard part, refused.
fresh_site "$T/mo"
mkdir -p "$T/mo-out"
"$KILN" -q --server nginx,caddy,apache --manifest "$T/mo-out/products.json" "$T/mo"
check "--manifest outside the tree: its name is hidden by no snippet" \
	not grep -q products "$T/mo/kiln.nginx.conf" "$T/mo/kiln.caddy.conf" "$T/mo/kiln.apache.conf"
"$KILN" -q --manifest "$T/mo/site-record.json" "$T/mo" 2>"$T/mo.err"
check "--manifest inside the tree: exit 1 ($?)" \
	grep -qF "kiln: $T/mo/site-record.json: inside the tree, where a server could send it" "$T/mo.err"
check "--manifest inside the tree: not written" [ ! -e "$T/mo/site-record.json" ]
check "--manifest inside the tree: no snippet hides its name" \
	not grep -q 'site-record' "$T/mo/kiln.nginx.conf"
cp "$T/mo/data/products.json" "$T/products.orig"
"$KILN" -q --manifest "$T/mo/data/products.json" "$T/mo" 2>"$T/mo.err"
check "--manifest naming a user's file in the tree: exit 1 ($?)" \
	grep -qF "kiln: $T/mo/data/products.json: inside the tree" "$T/mo.err"
check "... and that file untouched" cmp -s "$T/mo/data/products.json" "$T/products.orig"
cp "$T/products.orig" "$T/mo-out/theirs.json"
"$KILN" -q --manifest "$T/mo-out/theirs.json" "$T/mo" 2>"$T/mo.err"
check "--manifest naming a file that is not kiln's: exit 1 ($?)" \
	grep -qF "kiln: $T/mo-out/theirs.json: not a kiln manifest, so not replaced" "$T/mo.err"
check "... and that file untouched" cmp -s "$T/mo-out/theirs.json" "$T/products.orig"
"$KILN" -q --manifest "$T/mo-out/kiln-manifest.shard-1-of-2.json" "$T/mo" 2>"$T/mo.err"
check "--manifest named like a part: usage error ($?)" grep -q "cannot be named like a shard part" "$T/mo.err"
finish
