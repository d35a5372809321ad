#!/usr/bin/env bash
# first_deploy.sh - --previous on the very first deploy and given wrong:
# a release that is not there yet is one warning and a run that succeeds
# (exit 0, text and --json); one that exists but shares no file family with
# the tree warns and names the likely mistake (one directory too deep, one
# too high); the second deploy, given the first, makes dictionary deltas
# that decode (audit.py) to their sources.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd) # the script changes directory below
PY=/usr/bin/python3

release() { # release DIR SEED: a Vite-like tree, assets/app-<hash>.js
	mkdir -p "$1/assets"
	$PY - "$1" "$2" <<'PY'
import hashlib, os, random, sys
d, seed = sys.argv[1], sys.argv[2]
r = random.Random(1)  # the same words in each release: deltas pay
body = "".join("function f%d(a){return a*%d+%r;}\n" % (i, r.randrange(999), r.choice("abcdef"))
               for i in range(400)) + "/* release %s */\n" % seed
h = hashlib.sha256(body.encode()).hexdigest()[:8]
open(os.path.join(d, "assets", "app-%s.js" % h), "w").write(body)
open(os.path.join(d, "index.html"), "w").write("<script src=/assets/app-%s.js></script>\n" % h * 40)
PY
}
mkdir -p "$T/deploy"
release "$T/deploy/rel1" one
release "$T/deploy/rel2" two

# ---- the first deploy: nothing at ../current yet
cd "$T/deploy/rel1" || exit 1
"$KILN" --brotli --previous ../current . 2>"$T/first.err"
check "first deploy, --previous not there: exit 0 (got $?)" [ $? -eq 0 ]
check "first deploy: the warning" grep -qx "kiln: ../current: warning: no previous release there, no dictionary deltas" "$T/first.err"
check "first deploy: one warning only" [ "$(grep -c warning "$T/first.err")" -eq 1 ]
check "first deploy: siblings written" test -f "$(ls assets/app-*.js | head -1).br"
"$KILN" --json --brotli --previous ../current . >"$T/first.json" 2>/dev/null
check "first deploy --json: exit 0 (got $?)" [ $? -eq 0 ]
check "first deploy --json: the warning, no error" $PY -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j['error_count'] == 0, j
assert j['warnings'] == [{'path': '../current', 'warning': 'no previous release there, no dictionary deltas'}], j
" "$T/first.json"
check "first deploy: kiln check passes" "$KILN" check -q .
cd "$T" || exit 1

# ---- a previous release one directory too deep, one too high
cp -a "$T/deploy/rel2" "$T/r2"
"$KILN" --previous "$T/deploy/rel1/assets" "$T/r2" 2>"$T/deep.err"
check "too deep: exit 0 (got $?)" [ $? -eq 0 ]
check "too deep: named" grep -q "^kiln: $T/deploy/rel1/assets: warning: shares no file family with the tree.*one level too deep" "$T/deep.err"
check "too deep: no delta" [ -z "$(find "$T/r2" -name '*.dcz')" ]
"$KILN" -q clean "$T/r2"
"$KILN" --previous "$T/deploy" "$T/r2" 2>"$T/high.err"
check "too high: exit 0 (got $?)" [ $? -eq 0 ]
check "too high: named, with the directory to give" grep -q "^kiln: $T/deploy: warning: shares no file family with the tree.*one level too high? its rel[12]/ holds the tree's files (give $T/deploy/rel[12])" "$T/high.err"
"$KILN" -q clean "$T/r2"
mkdir "$T/other" && echo 'body{}' >"$T/other/style-Zx81Kq0p.css"
"$KILN" --previous "$T/other" "$T/r2" 2>"$T/other.err"
check "unrelated release: exit 0 (got $?)" [ $? -eq 0 ]
check "unrelated release: warned, no guess" grep -q "^kiln: $T/other: warning: shares no file family with the tree (no file named like" "$T/other.err"
check "unrelated release: no guess made" not grep -q "level too" "$T/other.err"

# ---- the second deploy, given the first: deltas, no warning
cd "$T/deploy/rel2" || exit 1
"$KILN" --brotli --previous ../rel1 . 2>"$T/second.err"
check "second deploy: exit 0 (got $?)" [ $? -eq 0 ]
check "second deploy: no warning" not grep -q warning "$T/second.err"
check "second deploy: a dictionary delta" [ -n "$(find . -name 'app-*.js.*.dcz')" ]
check "second deploy: deltas decode (audit)" $PY "$E2E/audit.py" --previous ../rel1 .
cd "$T" || exit 1
finish
