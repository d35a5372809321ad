#!/usr/bin/env bash
# snippet_files.sh - the snippet files kiln writes, run after run: one a run
# no longer writes (--server changed) is removed and counted while it holds
# the bytes kiln recorded for it in the manifest; a file of the user's at
# that name, an edited snippet, and a link there are never touched.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

# recorded DIR: the names the manifest's "snippets" records, each whose
# SHA-256 is the file's on disk, sorted, one a line.
recorded() {
	"$PY" - "$1" <<'EOF'
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "kiln-manifest.json")))
for name, e in sorted(m.get("snippets", {}).items()):
    try:
        ok = hashlib.sha256(open(os.path.join(d, name), "rb").read()).hexdigest() == e["sha256"]
    except OSError:
        ok = False
    print(name if ok else name + " (not as recorded)")
EOF
}

fresh_site "$T/s"
"$KILN" -q --server nginx,caddy,apache "$T/s"
check "every server's snippet is written" \
	test -f "$T/s/kiln.nginx.conf" -a -f "$T/s/kiln.nginx.http.conf" -a -f "$T/s/kiln.caddy.conf" -a -f "$T/s/kiln.apache.conf"
check "the manifest records each with its bytes" \
	test "$(recorded "$T/s" | tr '\n' ' ')" = "kiln.apache.conf kiln.caddy.conf kiln.nginx.conf kiln.nginx.http.conf "

# A run without --server caddy,apache: their snippets describe an older
# tree, and go.
"$KILN" --json "$T/s" >"$T/out.json" 2>"$T/err"
check "a run with nginx only removes the caddy and apache snippets" \
	test ! -e "$T/s/kiln.caddy.conf" -a ! -e "$T/s/kiln.apache.conf"
check "... and keeps nginx's" test -f "$T/s/kiln.nginx.conf" -a -f "$T/s/kiln.nginx.http.conf"
check "... counted (snippets_removed 2, no sibling removed)" "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['snippets_removed'] == 2 and d['removed'] == 0 else 1)" "$T/out.json"
check "... and the manifest records nginx's alone" \
	test "$(recorded "$T/s" | tr '\n' ' ')" = "kiln.nginx.conf kiln.nginx.http.conf "
"$KILN" -q --server nginx,caddy "$T/s"
out=$("$KILN" "$T/s" 2>&1)
check "the summary says so ($out)" grep -q '1 stale snippet removed' <<<"$out"
check "kiln check finds nothing after it" "$KILN" check "$T/s"

# Files that are not the recorded bytes stay: an edited snippet, a user's
# own file under a snippet's name, a link where a snippet was.
"$KILN" -q --server nginx,caddy,apache "$T/s"
echo "# my own line" >>"$T/s/kiln.caddy.conf"
cp "$T/s/kiln.apache.conf" "$T/apache.outside"
rm "$T/s/kiln.apache.conf"
ln -s "$T/apache.outside" "$T/s/kiln.apache.conf"
before=$(cat "$T/apache.outside" | sha256sum)
"$KILN" "$T/s" 2>"$T/err"
check "an edited snippet is not removed" grep -q '^# my own line' "$T/s/kiln.caddy.conf"
check "a link at a snippet's name is not removed" test -L "$T/s/kiln.apache.conf"
check "... nor the file it points at changed" test "$(cat "$T/apache.outside" | sha256sum)" = "$before"
check "... and neither is recorded any more" test "$(recorded "$T/s" | tr '\n' ' ')" = "kiln.nginx.conf kiln.nginx.http.conf "
# ... and each is reported once, as a warning that names it (exit 0)
check "the edited snippet is reported" grep -q "kiln.caddy.conf: warning: a snippet this run does not write, changed since kiln wrote it: left in place, no longer kiln's" "$T/err"
check "the link at a snippet's name is reported" grep -q "kiln.apache.conf: warning: a snippet this run does not write, changed" "$T/err"
"$KILN" "$T/s" 2>"$T/err2"
check "... once: the next run says nothing of them" sh -c "! grep -q 'snippet this run does not write' '$T/err2'"
rm "$T/s/kiln.apache.conf" "$T/s/kiln.caddy.conf"
echo "# a user's own Caddyfile fragment" >"$T/s/kiln.caddy.conf"
"$KILN" -q "$T/s"
check "a user's file under a snippet's name, never recorded, stays" test -f "$T/s/kiln.caddy.conf"

# An unchanged re-run writes nothing, the manifest included.
"$KILN" -q --server nginx,caddy "$T/s"
sum1=$(tree_digest "$T/s"; stat -c %Y "$T/s/kiln-manifest.json")
sleep 1.1
"$KILN" -q --server nginx,caddy "$T/s"
check "an unchanged run rewrites neither the manifest nor a snippet" \
	test "$(tree_digest "$T/s"; stat -c %Y "$T/s/kiln-manifest.json")" = "$sum1"
finish
