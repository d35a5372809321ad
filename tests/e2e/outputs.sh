#!/usr/bin/env bash
# outputs.sh - one rule for every file kiln writes besides siblings: the
# manifest (--manifest) and each server's snippet files (--nginx-conf and
# the http {} file beside it, --caddy-conf, --apache-conf).  For each one:
# a path holding a source, a user's file inside or outside the tree, a
# directory, a link or a sibling is refused (exit 1, nothing anywhere
# changed), and so is a sibling's name nothing has written yet, any path
# inside the tree but kiln's own names at its top, and a directory that is
# not there; two outputs
# naming one file are refused, for every pair; a new path is written and a
# rerun keeps it.  A manifest is one tree's record: another tree's, given
# with --manifest, is refused by compress, check and clean, and so is a
# manifest elsewhere for a tree whose record is at its default place.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3 # with the jsonschema module

mk_tree() { # mk_tree DIR: three compressible sources, one in a subdirectory
	rm -rf "$1"
	mkdir -p "$1/sub"
	seq 1 4000 >"$1/a.js"
	seq 1 3000 | sed 's/^/line /' >"$1/b.css"
	seq 1 2000 | sed 's/^/sub /' >"$1/sub/c.html"
}

# Everything under T (the tree and outside it), with sha256, modes, links.
state() {
	(cd "$T" && find . -path ./out.txt -prune -o -path ./err.txt -prune -o -print0 | sort -z |
		xargs -0 stat -c '%n %F %a %s %Y' && find . -type f ! -name out.txt ! -name err.txt -print0 |
		sort -z | xargs -0 -r sha256sum && find . -type l -print0 | sort -z | xargs -0 -r readlink)
}

# made once, so that writing them never changes T's own mtime
: >"$T/out.txt"
: >"$T/err.txt"

# refused DESC EXPECT-IN-MESSAGE ARGS...: kiln exits 1 with a message
# naming EXPECT, and nothing under T changed.
refused() {
	local desc=$1 want=$2; shift 2
	local before after rc
	before=$(state)
	"$KILN" "$@" >"$T/out.txt" 2>"$T/err.txt"
	rc=$?
	after=$(state)
	check "$desc: exit 1 (got $rc)" test "$rc" -eq 1
	check "$desc: says why" grep -qF -- "$want" "$T/err.txt"
	check "$desc: nothing changed" test "$before" = "$after"
}

opts=(--manifest --nginx-conf --caddy-conf --apache-conf)
# the option whose path this is, and the path kiln writes for it
written_as() { # written_as OPTION PATH -> the path(s) the option writes
	case $1 in
	--nginx-conf) printf '%s\n%s\n' "$2" "${2%.conf}.http.conf" ;;
	*) printf '%s\n' "$2" ;;
	esac
}

S=$T/site
for o in "${opts[@]}"; do
	mk_tree "$S"
	echo 'user text' >"$T/user.conf"
	# a source inside the tree, by its path
	refused "$o a source" "site/a.js" "$o" "$S/a.js" "$S"
	refused "$o a source in a subdirectory" "c.html" "$o" "$S/sub/c.html" "$S"
	# a user's file outside the tree
	refused "$o a user's file outside" "user.conf" "$o" "$T/user.conf" "$S"
	# a directory and a link (to a user's file) where the output would go
	mkdir -p "$T/adir"
	refused "$o a directory" "adir" "$o" "$T/adir" "$S"
	ln -sf user.conf "$T/alink.conf"
	refused "$o a link" "alink.conf" "$o" "$T/alink.conf" "$S"
	rm -f "$T/alink.conf"
	rmdir "$T/adir"
	# a first run makes a sibling; a snippet or manifest there is refused
	"$KILN" -q "$S" || fail "$o: plain run"
	refused "$o a sibling" "a.js.gz" "$o" "$S/a.js.gz" "$S"
	# a sibling's name nothing has written yet (no .br without --brotli),
	# inside the tree and outside: a server would label it br
	refused "$o a sibling's name, not yet written" "named like a sibling" "$o" "$S/b.css.br" "$S"
	refused "$o a sibling's name outside" "named like a sibling" "$o" "$T/x.conf.gz" "$S"
	check "$o a sibling's name: not written" test ! -e "$S/b.css.br" -a ! -e "$T/x.conf.gz"
	# names kiln removes as a killed run's leftovers: its record would go
	refused "$o a journal's name" "named like a temporary file, journal" "$o" "$S/.kiln-journal-ABCDEF" "$S"
	refused "$o a temporary file's name" "named like a temporary file, journal" "$o" "$T/.kiln-ABCDEF.tmp" "$S"
	# inside the tree, under any name but kiln's own at the top: a server
	# would send it once the option changed, and the snippets would hide
	# every file of its name; a directory that is not there is not made
	refused "$o a new name at the top" "inside the tree" "$o" "$S/mine.conf" "$S"
	refused "$o a new name in a subdirectory" "inside the tree" "$o" "$S/sub/mine.json" "$S"
	refused "$o inside, through .." "inside the tree" "$o" "$T/site/sub/../x.conf" "$S"
	ln -s site "$T/sitelink"
	refused "$o inside, through a link to the tree" "inside the tree" "$o" "$T/sitelink/x.conf" "$S"
	rm "$T/sitelink"
	refused "$o in a directory not there (in the tree)" "its directory is not there" "$o" "$S/conf/x.conf" "$S"
	refused "$o in a directory not there (outside)" "its directory is not there" "$o" "$T/nodir/x.conf" "$S"
	check "$o: no directory made" test ! -e "$S/conf" -a ! -e "$T/nodir"
	"$KILN" -q clean "$S" || fail "$o: clean"
done

# kiln's own names at the top, given by path, are what a run writes anyway
mk_tree "$S"
"$KILN" -q --manifest "$S/kiln-manifest.json" --nginx-conf "$S/kiln.nginx.conf" \
	--caddy-conf "$S/./kiln.caddy.conf" --apache-conf "$S/sub/../kiln.apache.conf" "$S"
check "default names given by path: exit 0" test $? -eq 0
for f in kiln.nginx.conf kiln.nginx.http.conf kiln.caddy.conf kiln.apache.conf; do
	check "default names given by path: $f written" grep -q '^# .* snippet generated by kiln ' "$S/$f"
done
check "default names given by path: the manifest" test -s "$S/kiln-manifest.json"
"$KILN" -q clean "$S" || fail "default names: clean"

# nginx's second file: a user's NAME.http.conf beside --nginx-conf NAME.conf
mk_tree "$S"
echo 'http {}' >"$T/n.http.conf"
refused "--nginx-conf's http {} file is a user's" "n.http.conf" --nginx-conf "$T/n.conf" "$S"
check "--nginx-conf: its first file not written either" test ! -e "$T/n.conf"
rm -f "$T/n.http.conf"

# every pair of outputs naming one file, inside and outside the tree, by
# two spellings of one path and by a hard link
for ((i = 0; i < ${#opts[@]}; i++)); do
	for ((k = i + 1; k < ${#opts[@]}; k++)); do
		a=${opts[i]} b=${opts[k]}
		mk_tree "$S"
		refused "$a and $b one file outside" "two of kiln's outputs" "$a" "$T/x.conf" "$b" "$T/./x.conf" "$S"
		refused "$a and $b one file inside" "two of kiln's outputs" "$a" "$S/x.conf" "$b" "$S/sub/../x.conf" "$S"
	done
done
# an option naming a default output of another
mk_tree "$S"
refused "--manifest on the nginx snippet's default" "two of kiln's outputs" --manifest "$S/kiln.nginx.conf" "$S"
refused "--caddy-conf on the manifest's default" "two of kiln's outputs" --caddy-conf "$S/kiln-manifest.json" "$S"
refused "--apache-conf on nginx's http {} default" "two of kiln's outputs" --server nginx --apache-conf "$S/kiln.nginx.http.conf" "$S"

# new paths: written (each the snippet kiln writes, or the manifest), the
# run's tree served as before; a rerun replaces them, exit 0
mk_tree "$S"
mkdir -p "$T/conf"
"$KILN" -q --manifest "$T/conf/m.json" --nginx-conf "$T/conf/n.conf" --caddy-conf "$T/conf/c.conf" \
	--apache-conf "$T/conf/a.conf" "$S"
check "new paths: exit 0" test $? -eq 0
for f in "$T/conf/n.conf" "$T/conf/n.http.conf" "$T/conf/c.conf" "$T/conf/a.conf"; do
	check "new paths: $f is a kiln snippet" grep -q '^# .* snippet generated by kiln ' "$f"
done
check "new paths: the manifest" python3 -c 'import json,sys; json.load(open(sys.argv[1]))["files"]' "$T/conf/m.json"
check "new paths: siblings decode" decodes_to "$S/a.js.gz" "$S/a.js"
seq 1 5000 >"$S/a.js"
"$KILN" -q --manifest "$T/conf/m.json" --nginx-conf "$T/conf/n.conf" --caddy-conf "$T/conf/c.conf" \
	--apache-conf "$T/conf/a.conf" "$S"
check "rerun on its own outputs: exit 0" test $? -eq 0
check "rerun: sibling of the new bytes" decodes_to "$S/a.js.gz" "$S/a.js"
# once a user edits kiln's snippet into something else, it is theirs
echo '# my own' >"$T/conf/a.conf"
refused "--apache-conf a snippet the user rewrote" "a.conf" -q --manifest "$T/conf/m.json" \
	--nginx-conf "$T/conf/n.conf" --caddy-conf "$T/conf/c.conf" --apache-conf "$T/conf/a.conf" "$S"

# A manifest is the record of one tree: the one it names ("tree", relative
# to its directory), or the directory it is in.  Another tree's manifest,
# given with --manifest, is neither read nor replaced by compress, check or
# clean; a tree whose record is at its default place is not moved elsewhere
# behind it (its siblings would be recorded nowhere).
TA=$T/ta TB=$T/tb
mk_tree "$TA"
mk_tree "$TB"
"$KILN" -q "$TA" || fail "tree A: first run"
refused "--manifest another tree's default manifest" "the record of another tree" \
	--manifest "$TA/kiln-manifest.json" "$TB"
check "another tree's manifest: B has no sibling" test ! -e "$TB/a.js.gz"
rm -rf "$T/conf"
mkdir -p "$T/conf"
"$KILN" -q --manifest "$T/conf/b.json" "$TB" || fail "tree B: manifest elsewhere"
check "manifest elsewhere: names its tree" python3 -c \
	'import json,sys; assert json.load(open(sys.argv[1]))["tree"] == "../tb"' "$T/conf/b.json"
check "manifest elsewhere: check passes" "$KILN" check -q --manifest "$T/conf/b.json" "$TB"
check "manifest elsewhere: valid against the documented format" $PY "$(dirname "$0")/check_manifest.py" \
	"$T/conf/b.json" "$TB" "$(dirname "$0")/../data/manifest.schema.json"
"$KILN" -q clean "$TA" || fail "tree A: clean"
for cmd in compress check clean; do
	before=$(state)
	"$KILN" "$cmd" --manifest "$T/conf/b.json" "$TA" >"$T/out.txt" 2>"$T/err.txt"
	rc=$?
	check "$cmd with tree B's manifest on A: fails (got $rc)" test "$rc" -ne 0
	check "$cmd with tree B's manifest on A: says whose" grep -qF "kiln: $T/conf/b.json: the record of another tree" "$T/err.txt"
	check "$cmd with tree B's manifest on A: nothing changed" test "$before" = "$(state)"
done
check "tree B's record intact: check passes" "$KILN" check -q --manifest "$T/conf/b.json" "$TB"
# the tree moved away from its manifest: no longer the tree it names
mv "$TB" "$T/tb2"
refused "--manifest of a tree that moved" "not there now" --manifest "$T/conf/b.json" "$T/tb2"
mv "$T/tb2" "$TB"
# a tree with its record at the default place, then --manifest elsewhere
mk_tree "$TA"
"$KILN" -q "$TA" || fail "tree A: default manifest"
refused "--manifest elsewhere, the record at the default place" "holds the record of earlier kiln runs" \
	--manifest "$T/conf/a.json" "$TA"
check "record at the default place: no manifest elsewhere" test ! -e "$T/conf/a.json"
"$KILN" -q clean "$TA" || fail "tree A: clean before moving the record"
"$KILN" -q --manifest "$T/conf/a.json" "$TA"
check "after clean: --manifest elsewhere works" test $? -eq 0 -a -e "$T/conf/a.json" -a ! -e "$TA/kiln-manifest.json"
check "after clean: check passes" "$KILN" check -q --manifest "$T/conf/a.json" "$TA"

# a -v run that changes nothing says the manifest is unchanged, and keeps
# its inode and mtime
mk_tree "$S"
"$KILN" -q "$S"
ino=$(stat -c '%i %Y' "$S/kiln-manifest.json")
sleep 1.1
"$KILN" -v "$S" >"$T/out.txt" 2>&1
check "-v unchanged: says so" grep -q 'kiln-manifest.json: manifest unchanged' "$T/out.txt"
check "-v unchanged: not 'written'" not grep -q 'manifest written' "$T/out.txt"
check "-v unchanged: same inode and mtime" test "$ino" = "$(stat -c '%i %Y' "$S/kiln-manifest.json")"
seq 1 4500 >"$S/a.js"
"$KILN" -v "$S" >"$T/out.txt" 2>&1
check "-v changed: manifest written" grep -q 'kiln-manifest.json: manifest written' "$T/out.txt"

# a --cache directory inside the tree is refused, there or not yet: a
# server would send its entries, the encoded bytes of sources long gone;
# so is one reached through a link in the tree; outside, it is used
mk_tree "$S"
refused "--cache inside, not there yet" "inside the tree, where a server could send its entries" \
	-q --cache "$S/.kiln-cache" "$S"
check "--cache inside: not made" test ! -e "$S/.kiln-cache"
refused "--cache an asset directory" "inside the tree, where a server could send its entries" \
	-q --cache "$S/sub" "$S"
mkdir -p "$T/cache.out"
ln -s "$T/cache.out" "$S/clink"
refused "--cache through a link in the tree" "reached through a link inside the tree" \
	-q --cache "$S/clink/c" "$S"
rm "$S/clink"
"$KILN" -q --cache "$T/cache.out/c" "$S" || fail "--cache outside: run"
check "--cache outside: entries there" test -n "$(find "$T/cache.out/c" -type f)"

# every output option reached through a link in the tree (to a directory
# outside it) is refused before the run: kiln never writes through a link
# in the tree, so it could not be written at the end
mkdir -p "$T/conf.out"
for o in "${opts[@]}"; do
	mk_tree "$S"
	ln -s "$T/conf.out" "$S/conf"
	refused "$o through a link in the tree" "reached through a link inside the tree" "$o" "$S/conf/x.conf" "$S"
	rm "$S/conf"
done

# kiln's own snippet names at the top holding a user's file: not replaced
for f in kiln.nginx.conf:nginx:--nginx-conf kiln.caddy.conf:caddy:--caddy-conf kiln.apache.conf:apache:--apache-conf; do
	name=${f%%:*} rest=${f#*:} server=${rest%%:*} option=${rest#*:}
	mk_tree "$S"
	echo "# the user's own $server configuration" >"$S/$name"
	refused "a user's $name at the top" "not a kiln snippet, so not replaced (give $option a new path" \
		-q --server "$server" "$S"
	check "a user's $name: kept" grep -q "the user's own" "$S/$name"
done

finish
