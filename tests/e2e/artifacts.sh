#!/usr/bin/env bash
# artifacts.sh - --artifacts DIR keeps every file of kiln's out of the tree
# (a static host publishes all of it): the manifest and the snippets of
# every server go to DIR, for compress, a re-run, check, clean, shards and
# merge, and the archive mode (-o: into DIR, not into OUT).  The tree then
# holds its sources and their siblings alone; the manifest in DIR names
# its tree and is refused for another; nginx configured with DIR's
# snippets serves the tree's siblings.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

# kiln's own files anywhere under DIR (the tree must have none)
kiln_files() { find "$1" \( -name 'kiln-manifest*' -o -name 'kiln.*.conf' -o -name '.kiln-*' \) -print; }
# the siblings under DIR (the fixture's downloads/archive.tar.gz is a source)
siblings() { find "$1" \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz -print; }
srcs() {
	(cd "$1" && find . -type f ! -name '*.gz' ! -name '*.br' ! -name '*.zst' -print0 | sort -z |
		xargs -0 sha256sum && sha256sum downloads/archive.tar.gz)
}

S=$T/site A=$T/art
fresh_site "$S"
mkdir -p "$A"
ALL=(--server nginx,caddy,apache)
"$KILN" -q --brotli "${ALL[@]}" --artifacts "$A" "$S"
check "compress: exit 0" test $? -eq 0
check "compress: nothing of kiln's in the tree" test -z "$(kiln_files "$S")"
for f in kiln-manifest.json kiln.nginx.conf kiln.nginx.http.conf kiln.caddy.conf kiln.apache.conf; do
	check "compress: $f in the artifacts directory" test -s "$A/$f"
done
check "compress: siblings in the tree, decoding to their sources" all_siblings_decode "$S"
check "compress: a sibling of app.js" test -e "$S/assets/app.js.gz" -a -e "$S/assets/app.js.br"
check "compress: the manifest names its tree" $PY -c \
	'import json,sys; assert json.load(open(sys.argv[1]))["tree"] == "../site"' "$A/kiln-manifest.json"
check "compress: the manifest lists the tree's files" $PY -c \
	'import json,sys; assert "assets/app.js" in json.load(open(sys.argv[1]))["files"]' "$A/kiln-manifest.json"
check "check: passes" "$KILN" check -q --artifacts "$A" "$S"

# a re-run after a change: the record is read from DIR, the stale sibling
# replaced, still nothing of kiln's in the tree
printf '\n/* changed */\n' >>"$S/assets/app.js"
"$KILN" -q --brotli "${ALL[@]}" --artifacts "$A" "$S" --json >"$T/rerun.json"
check "re-run: exit 0" test $? -eq 0
check "re-run: only app.js's siblings written" $PY -c \
	'import json,sys; d = json.load(open(sys.argv[1])); assert d["written"] == 2, d["written"]' "$T/rerun.json"
check "re-run: app.js.gz is the new bytes" decodes_to "$S/assets/app.js.gz" "$S/assets/app.js"
check "re-run: nothing of kiln's in the tree" test -z "$(kiln_files "$S")"
check "re-run: check passes" "$KILN" check -q --artifacts "$A" "$S"
rm "$S/assets/app.js.br"
"$KILN" check -q --artifacts "$A" "$S" >/dev/null 2>&1
check "check: a missing sibling is a problem (exit 3)" test $? -eq 3
"$KILN" -q --brotli "${ALL[@]}" --artifacts "$A" "$S"

# nginx with the snippets from DIR serves the tree's siblings
chmod -R a+rX "$T"
if NGINX_HTTP="include $A/kiln.nginx.http.conf;" NGINX_SERVER="location / { include $A/kiln.nginx.conf; }" \
	nginx_start "$T/nginx" "$S"; then
	curl -s -D "$T/h" -o "$T/body" -H 'Accept-Encoding: br' "http://127.0.0.1:$PORT/assets/app.js"
	check "nginx: app.js as br" grep -qi '^content-encoding: br' "$T/h"
	check "nginx: the .br's bytes" cmp -s "$T/body" "$S/assets/app.js.br"
	curl -s -o "$T/body" "http://127.0.0.1:$PORT/index.html"
	check "nginx: index.html as itself to a client without codings" cmp -s "$T/body" "$S/index.html"
	check "nginx: no manifest to publish" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/kiln-manifest.json")" = 404
	nginx_stop
else
	fail "nginx starts with the snippets from the artifacts directory"
fi

# the manifest in DIR is this tree's: another tree is refused
fresh_site "$T/other"
"$KILN" -q --artifacts "$A" "$T/other" 2>"$T/other.err"
check "another tree with this DIR: refused (exit 1)" test $? -eq 1
check "another tree with this DIR: says whose record it is" grep -q 'the record of another tree' "$T/other.err"
check "another tree with this DIR: untouched" test -z "$(siblings "$T/other")"

# shards and merge: the parts in DIR, merged there
for k in 1 2; do "$KILN" -q --zstd --artifacts "$A" --shard "$k/2" "$S" || fail "shard $k"; done
check "shards: their parts in DIR" test -e "$A/kiln-manifest.shard-1-of-2.json" -a -e "$A/kiln-manifest.shard-2-of-2.json"
check "shards: nothing of kiln's in the tree" test -z "$(kiln_files "$S")"
"$KILN" -q merge "${ALL[@]}" --artifacts "$A" "$S"
check "merge: exit 0" test $? -eq 0
check "merge: the parts merged away" test ! -e "$A/kiln-manifest.shard-1-of-2.json"
check "merge: nothing of kiln's in the tree" test -z "$(kiln_files "$S")"
check "merge: check passes" "$KILN" check -q --artifacts "$A" "$S"
check "merge: the zstd siblings recorded" $PY -c \
	'import json,sys; assert "zstd" in json.load(open(sys.argv[1]))["files"]["assets/app.js"]["encodings"]' "$A/kiln-manifest.json"

# clean: the siblings and DIR's files go, the sources stay; every
# server's snippets, whichever --server clean is given (as without
# --artifacts)
before=$(srcs "$S")
check "clean: DIR holds the Caddy and Apache snippets first" test -s "$A/kiln.caddy.conf" -a -s "$A/kiln.apache.conf"
"$KILN" -q clean --artifacts "$A" "$S"
check "clean: exit 0" test $? -eq 0
check "clean: no sibling left" test -z "$(siblings "$S")"
check "clean: DIR emptied" test -z "$(ls -A "$A")"
check "clean: sources untouched" test "$before" = "$(srcs "$S")"

# the archive mode: the artifacts into DIR, not into OUT
mkdir -p "$T/in"
fresh_site "$T/in/site"
tar -C "$T/in" -czf "$T/in.tar.gz" site
mkdir -p "$T/art2"
"$KILN" -q --brotli --artifacts "$T/art2" "$T/in.tar.gz" -o "$T/out.tar.gz"
check "archive: exit 0" test $? -eq 0
check "archive: no artifact in OUT" not sh -c "tar -tzf '$T/out.tar.gz' | grep -qE '(^|/)(kiln-manifest\.json|kiln\.[a-z.]+\.conf)\$'"
check "archive: the siblings in OUT" sh -c "tar -tzf '$T/out.tar.gz' | grep -q 'site/assets/app.js.br'"
check "archive: the manifest in DIR" $PY -c \
	'import json,sys; assert "assets/app.js" in json.load(open(sys.argv[1]))["files"]' "$T/art2/kiln-manifest.json"
check "archive: the nginx snippet in DIR" test -s "$T/art2/kiln.nginx.conf"

# usage: one DIR only; the directory must exist
"$KILN" -q --artifacts "$A" "$S" "$T/other" 2>"$T/two.err"
check "two DIRs with --artifacts: usage error (exit 2)" test $? -eq 2
"$KILN" -q --artifacts "$T/nowhere" "$S" 2>"$T/nowhere.err"
check "a missing DIR for --artifacts: exit 1" test $? -eq 1
check "a missing DIR for --artifacts: says so" grep -q 'nowhere: .*not a directory\|nowhere: .*No such file' "$T/nowhere.err"
check "a missing DIR for --artifacts: nothing written" test -z "$(kiln_files "$S")$(siblings "$S")"

finish
