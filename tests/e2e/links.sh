#!/usr/bin/env bash
# links.sh - nothing outside the tree is created, changed or removed through
# a link (issue: a directory swapped for a symbolic link to an outside copy
# between runs, siblings and all, had its siblings deleted by the next run
# and by clean).  Every command that changes the tree is run after such a
# swap, and a directory outside the tree is audited after each: every file
# and link in it keeps its existence, bytes, mode and mtime.
. "$(dirname "$0")/lib.sh"

# A listing of everything under DIR: type, mode, mtime (ns), size, digest.
outside_state() {
	(cd "$1" && find . -printf '%y %m %T@ %s %p -> %l\n' | sort
	 find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# setup NAME: a site with sub/b.js compressed by OPTS, then sub/ moved out
# (to $T/NAME.out/sub) and replaced by a link to it.
setup() { # setup NAME KILN-OPTIONS...
	local n=$1; shift
	mkdir -p "$T/$n/sub" "$T/$n.out"
	head -c 6000 /dev/urandom | base64 >"$T/$n/a.js"
	head -c 6000 /dev/urandom | base64 >"$T/$n/sub/b.js"
	head -c 6000 /dev/urandom | base64 >"$T/$n/sub/c.css"
	"$KILN" -q "$@" "$T/$n" || fail "$n: first run"
	[ -f "$T/$n/sub/b.js.gz" ] || fail "$n: first run wrote no sub/b.js.gz"
	mv "$T/$n/sub" "$T/$n.out/sub"
	ln -s "$T/$n.out/sub" "$T/$n/sub"
	outside_state "$T/$n.out" >"$T/$n.before"
}
untouched() { # untouched NAME WHAT
	outside_state "$T/$1.out" >"$T/$1.after"
	check "$1: $2 left the outside directory as it was" cmp -s "$T/$1.before" "$T/$1.after"
	cp "$T/$1.after" "$T/$1.before" # each step judged on its own
}

for opts in "" "--brotli" "--brotli --zstd"; do
	name=run${opts//[- ]/}
	# shellcheck disable=SC2086
	setup "$name" $opts
	# shellcheck disable=SC2086
	"$KILN" -q $opts "$T/$name"
	untouched "$name" "a run ($opts)"
	# shellcheck disable=SC2086
	"$KILN" -q -f $opts "$T/$name"
	untouched "$name" "a forced run ($opts)"
	"$KILN" -q --zstd "$T/$name"
	untouched "$name" "a run with other codings ($opts)"
	"$KILN" check -q "$T/$name" >/dev/null 2>&1
	untouched "$name" "check ($opts)"
	"$KILN" clean -q "$T/$name"
	untouched "$name" "clean ($opts)"
done

# check straight after the swap: the files behind the link are not the
# tree's, so none is called an orphaned sibling (a user would delete it,
# outside the tree); their sources are said to be gone from the tree
setup ck --brotli
"$KILN" check "$T/ck" >"$T/ck.log" 2>&1
check "ck: check fails (exit 3)" test $? -eq 3
check "ck: no file behind the link called an orphaned sibling" not grep -q 'orphaned' "$T/ck.log"
check "ck: the sources behind the link are not in the tree" grep -q 'sub/b.js: .*in the manifest, not in the tree' "$T/ck.log"
untouched ck "check after the swap"

# clean straight after the swap
setup cl --brotli
"$KILN" clean "$T/cl" 2>"$T/cl.log"
check "clean after the swap: exit 0" test $? -eq 0
untouched cl "clean after the swap"
# what it leaves behind the link it says, naming the link
for c in gz br; do
	check "clean after the swap: says sub/b.js.$c is behind a link" \
		grep -qF "kiln: $T/cl/sub/b.js.$c: warning: behind a link now, outside the tree: left alone ($T/cl/sub is a link)" "$T/cl.log"
done

# the same with a directory name that is not UTF-8: a warning, escaped in
# the message and in --json, never an error (the run exits 0)
if non_utf8_names; then
	bad=$(printf 'd\376ir')
	mkdir -p "$T/nu/$bad" "$T/nu.out"
	head -c 6000 /dev/urandom | base64 >"$T/nu/$bad/b.js"
	"$KILN" -q "$T/nu" || fail "nu: first run"
	mv "$T/nu/$bad" "$T/nu.out/$bad"
	ln -s "$T/nu.out/$bad" "$T/nu/$bad"
	"$KILN" --json "$T/nu" >"$T/nu.json" 2>"$T/nu.log"
	rc=$?
	check "a non-UTF-8 directory swapped for a link: exit 0 (got $rc)" test "$rc" -eq 0
	check "... the warning names the link, escaped" grep -qF 'nu/d\xfeir is a link)' "$T/nu.log"
	check "... no error in the JSON" /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["error_count"] == 0, d' "$T/nu.json"
fi

# the link deeper in the tree: site/x/sub -> outside
mkdir -p "$T/deep/x/sub" "$T/deep.out"
head -c 6000 /dev/urandom | base64 >"$T/deep/x/sub/d.js"
"$KILN" -q --brotli "$T/deep"
mv "$T/deep/x" "$T/deep.out/x"
ln -s "$T/deep.out/x" "$T/deep/x"
outside_state "$T/deep.out" >"$T/deep.before"
"$KILN" -q --brotli "$T/deep"
untouched deep "a run with a link two levels up"
"$KILN" clean -q "$T/deep"
untouched deep "clean with a link two levels up"

# a hand-edited manifest recording a sibling whose digest matches an
# outside .gz, reached through a link
mkdir -p "$T/forge/sub" "$T/forge.out"
head -c 6000 /dev/urandom | base64 >"$T/forge.out/victim.js"
gzip -9nc "$T/forge.out/victim.js" >"$T/forge.out/victim.js.gz"
cp "$T/forge.out/victim.js" "$T/forge/sub/victim.js"
"$KILN" -q "$T/forge"
rm -rf "$T/forge/sub"
ln -s "$T/forge.out" "$T/forge/sub"
python3 - "$T/forge/kiln-manifest.json" "$T/forge.out/victim.js.gz" <<'PY'
import hashlib, json, sys
forged = False
m = json.load(open(sys.argv[1]))
data = open(sys.argv[2], 'rb').read()
files = m.get("files", {})
for k, v in files.items():
    for c in v["encodings"].values():
        c["sha256"] = hashlib.sha256(data).hexdigest()
        c["size"] = len(data)
        forged = True
assert files and forged, "nothing to forge"
json.dump(m, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
outside_state "$T/forge.out" >"$T/forge.before"
"$KILN" -q "$T/forge" 2>/dev/null
untouched forge "a run with a forged manifest"
"$KILN" clean -q "$T/forge" 2>/dev/null
untouched forge "clean with a forged manifest"

# the tree's own siblings are still made where it is not a link
"$KILN" -q "$T/cl"
check "cl: a.js.gz is its source's after the swaps" decodes_to "$T/cl/a.js.gz" "$T/cl/a.js"
check "cl: the link is still a link" test -L "$T/cl/sub"

# hard links: a `cp -al` snapshot shares every sibling's inode; a source
# rebuilt with the same bytes (new inode, mode 664, new mtime) must not
# change the snapshot's siblings' mode or mtime
for opts in "" "--brotli --zstd"; do
	n=hl${opts//[- ]/}
	mkdir -p "$T/$n/site/assets"
	head -c 9000 /dev/urandom | base64 >"$T/$n/site/app.js"
	head -c 9000 /dev/urandom | base64 >"$T/$n/site/assets/index-DPJWWXvr.js"
	chmod 644 "$T/$n/site/app.js" "$T/$n/site/assets/index-DPJWWXvr.js"
	# shellcheck disable=SC2086
	"$KILN" -q $opts "$T/$n/site"
	cp -al "$T/$n/site" "$T/$n.out"
	outside_state "$T/$n.out" >"$T/$n.before"
	for f in app.js assets/index-DPJWWXvr.js; do
		cp "$T/$n/site/$f" "$T/$n/site/$f.new"
		rm "$T/$n/site/$f"
		mv "$T/$n/site/$f.new" "$T/$n/site/$f"
		chmod 664 "$T/$n/site/$f"
		touch -d '2030-01-02 03:04:05' "$T/$n/site/$f"
	done
	# shellcheck disable=SC2086
	"$KILN" -q $opts "$T/$n/site"
	untouched "$n" "a run after a rebuild, with a hard-linked snapshot ($opts)"
	for f in app.js assets/index-DPJWWXvr.js; do
		for sib in "$T/$n/site/$f".*; do
			case $sib in *.gz|*.br|*.zst) ;; *) continue ;; esac
			check "$n: $sib has its source's mode" test "$(stat -c %a "$sib")" = 664
			check "$n: $sib has its source's mtime" test "$(stat -c %Y "$sib")" = "$(stat -c %Y "$T/$n/site/$f")"
		done
	done
	check "$n: kiln check passes" "$KILN" check -q "$T/$n/site"
	# and with the snapshot as the previous release (dictionary deltas)
	head -c 3000 /dev/urandom | base64 >>"$T/$n/site/assets/index-DPJWWXvr.js"
	mv "$T/$n/site/assets/index-DPJWWXvr.js" "$T/$n/site/assets/index-Bq3xY7Zk.js"
	# shellcheck disable=SC2086
	"$KILN" -q $opts --previous "$T/$n.out" "$T/$n/site" 2>/dev/null
	untouched "$n" "a run with the snapshot as --previous ($opts)"
	"$KILN" clean -q "$T/$n/site"
	untouched "$n" "clean with a hard-linked snapshot ($opts)"
done

finish
