#!/usr/bin/env bash
# consistency.sh - the record and the disk agree, each case as its whole
# class: after every run, every sibling on disk decodes to its current
# source and the manifest records exactly the siblings on disk
# (tests/e2e/audit.py, which decodes with Python's own decoders), whatever
# changed between runs:
#  - codings: one dropped or added back, on the in-memory and the streamed
#    path;
#  - read errors: a directory or file kiln cannot read keeps its record; a
#    file that vanishes between the walk and its open loses its siblings;
#  - names: manifest keys are one-to-one (invalid UTF-8 and '%' in names);
#  - check --json: `kiln check --json` prints the problems it found;
#  - a kill: a run killed right after putting a sibling in place (signals
#    are in signals.sh);
#  - places kiln cannot write or read: a top directory kiln cannot write
#    (no journal, so no sibling), a manifest it cannot read (the tree is
#    left alone), clean on a directory it cannot search, and running out of
#    memory while the record is read;
#  - sources that stop being files: a source replaced by a link or a FIFO,
#    and clean on a damaged sibling.
# (Sizes and the two paths side by side are in paths.sh.)
. "$(dirname "$0")/lib.sh"
AUDIT=$(dirname "$0")/audit.py
audit() { /usr/bin/python3 "$AUDIT" "$@"; }
app=$FIXTURES/site/assets/app.js
# inode of every sibling under DIR (ADDED DIR), sorted: what a re-run that
# reuses siblings must leave alone
sib_inodes() { (cd "$1" && find . -type f \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz -print0 | sort -z | xargs -0 -r stat -c '%i %n'); }
# the manifest's entries whose path starts with PREFIX, as canonical JSON
entries() { # entries DIR PREFIX
	/usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1] + "/kiln-manifest.json"))["files"]
print(json.dumps({k: v for k, v in d.items() if k.startswith(sys.argv[2])}, sort_keys=True))' "$1" "$2"
}
# the manifest has an entry for REL (as an asset of its own)
has_entry() { # has_entry DIR REL
	/usr/bin/python3 -c 'import base64,json,sys
d = json.load(open(sys.argv[1] + "/kiln-manifest.json"))["files"]
paths = {base64.b64decode(e["path_base64"]) if "path_base64" in e else k.encode() for k, e in d.items()}
sys.exit(0 if sys.argv[2].encode("utf-8", "surrogateescape") in paths else 1)' "$1" "$2"
}
only_lines() { # only_lines FILE EXPECTED: FILE's "kiln: " lines are exactly EXPECTED
	[ "$(grep '^kiln: ' "$1")" = "$2" ]
}

# ---------------------------------------------------------------------------
# Codings dropped and added.  One file above --stream-size (streamed)
# and one below (in memory), through every transition: a coding dropped or
# added with the source unchanged, and with the source changed in the same
# run.  Each step says which codings the files must have afterwards.
D=$T/codings
mkdir -p "$D"
for k in $(seq 1 250); do sed "s/function/fn$k/g" "$app"; done >"$D/big.js"        # ~2.7 MB
for k in $(seq 1 12); do sed "s/function/sm$k/g" "$app"; done >"$D/small.js"       # ~130 KB
check "test setup: big.js is streamed at --stream-size 1M" [ "$(stat -c %s "$D/big.js")" -gt 2000000 ]
check "test setup: small.js is held in memory" [ "$(stat -c %s "$D/small.js")" -lt 1000000 ]
n=0
step() { # step "CODINGS WANTED" [edit] KILN-OPTIONS...
	local want=$1 f s rc; shift
	n=$((n + 1))
	if [ "${1:-}" = edit ]; then
		shift
		for f in big small; do echo "// step $n" >>"$D/$f.js"; done
	fi
	"$KILN" -q --stream-size 1M "$@" "$D" 2>"$T/c$n.log"
	rc=$?
	check "codings step $n ($*): exit 0 ($(cat "$T/c$n.log"))" [ $rc -eq 0 ]
	for f in big small; do
		for s in gz br; do
			case " $want " in
			*" $s "*) check "codings step $n ($*): $f.js.$s decodes to the source" decodes_to "$D/$f.js.$s" "$D/$f.js" ;;
			*) check "codings step $n ($*): no $f.js.$s" [ ! -e "$D/$f.js.$s" ] ;;
			esac
		done
	done
	check "codings step $n ($*): audit" audit "$D"
}
step "gz br" --brotli
step "gz" # br dropped, sources unchanged
step "gz" edit # the issue's case: the old .br must not survive the edit
step "gz br" edit --brotli # br added back, sources changed
step "br" --no-gzip --brotli # gzip dropped, sources unchanged
step "br" edit --no-gzip --brotli
step "gz br" --brotli # gzip added back, sources unchanged
step "br" edit --no-gzip --brotli # gzip dropped, sources changed in the same run
step "gz" edit # br dropped and gzip added, sources changed
"$KILN" check -q "$D"
check "codings: kiln check exits 0" [ $? -eq 0 ]
want=$(cd "$D" && sha256sum ./big.js ./small.js)
"$KILN" clean -q "$D"
check "codings: kiln clean exits 0" [ $? -eq 0 ]
check "codings: kiln clean leaves only the sources" [ "$(tree_digest "$D")" = "$want" ]

# ---------------------------------------------------------------------------
# Read errors: one never makes kiln forget siblings.  As root everything is
# readable: the runs that must fail to read run as nobody, on a tree nobody
# owns.
U=$T/unread
fresh_site "$U"
as=()
bin=$KILN
if [ "$(id -u)" -eq 0 ]; then
	cp "$KILN" "$T/kiln-bin" && chmod 755 "$T/kiln-bin"
	as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	bin=$T/kiln-bin
fi
"$KILN" -q --brotli "$U" || fail "unreadable: first run"
[ "$(id -u)" -eq 0 ] && chown -R nobody "$U"
check "unreadable: first run audits clean" audit "$U"

# (a) a directory kiln cannot open
rec=$(entries "$U" assets/)
ino=$(sib_inodes "$U/assets")
check "test setup: assets/ has recorded siblings" [ -n "$ino" ]
chmod 000 "$U/assets"
"${as[@]}" "$bin" -q --brotli "$U" 2>"$T/u1.log"
check "unreadable dir: exit 1" [ $? -eq 1 ]
check "unreadable dir: exactly its error" only_lines "$T/u1.log" "kiln: $U/assets: cannot open directory: Permission denied"
check "unreadable dir: its entries and siblings still recorded" [ "$(entries "$U" assets/)" = "$rec" ]
check "unreadable dir: its siblings untouched (same inodes)" [ "$(sib_inodes "$U/assets")" = "$ino" ]
chmod 755 "$U/assets"
rm "$U/assets/app.js"
ino_rest=$(sib_inodes "$U/assets")
"${as[@]}" "$bin" -q --brotli "$U" 2>"$T/u2.log"
rc=$?
check "unreadable dir, readable again: exit 0 ($(cat "$T/u2.log"))" [ $rc -eq 0 ]
for s in gz br; do
	check "unreadable dir: deleted source's .$s removed" [ ! -e "$U/assets/app.js.$s" ]
	check "unreadable dir: deleted source's .$s not an asset" not has_entry "$U" "assets/app.js.$s"
done
check "unreadable dir: the rest reused (same inodes)" [ "$(sib_inodes "$U/assets")" = "$(grep -v ' ./app\.js\.\(gz\|br\)$' <<<"$ino_rest")" ]
check "unreadable dir: audit" audit "$U"
"$KILN" check -q "$U"
check "unreadable dir: kiln check exits 0" [ $? -eq 0 ]

# (b) a file kiln cannot open
rec=$(entries "$U" assets/app.css)
ino=$(sib_inodes "$U/assets")
chmod 000 "$U/assets/app.css"
"${as[@]}" "$bin" -q --brotli "$U" 2>"$T/u3.log"
check "unreadable file: exit 1" [ $? -eq 1 ]
check "unreadable file: exactly its error" only_lines "$T/u3.log" "kiln: $U/assets/app.css: cannot open: Permission denied"
check "unreadable file: its entry and siblings still recorded" [ "$(entries "$U" assets/app.css)" = "$rec" ]
check "unreadable file: its siblings untouched (same inodes)" [ "$(sib_inodes "$U/assets")" = "$ino" ]
chmod 644 "$U/assets/app.css"
"${as[@]}" "$bin" -q --brotli "$U" 2>"$T/u4.log"
rc=$?
check "unreadable file, readable again: exit 0 ($(cat "$T/u4.log"))" [ $rc -eq 0 ]
check "unreadable file, readable again: nothing re-encoded (same inodes)" [ "$(sib_inodes "$U/assets")" = "$ino" ]
rm "$U/assets/app.css"
"${as[@]}" "$bin" -q --brotli "$U" 2>"$T/u5.log"
rc=$?
check "unreadable file, then deleted: exit 0 ($(cat "$T/u5.log"))" [ $rc -eq 0 ]
for s in gz br; do
	check "unreadable file, then deleted: .$s removed" [ ! -e "$U/assets/app.css.$s" ]
	check "unreadable file, then deleted: .$s not an asset" not has_entry "$U" "assets/app.css.$s"
done
check "unreadable file, then deleted: audit" audit "$U"
"$KILN" check -q "$U"
check "unreadable file, then deleted: kiln check exits 0" [ $? -eq 0 ]

# (c) a file that vanishes between the walk and its open (the fault shim
# unlinks it as kiln opens it): unchanged since the last run, changed, and
# on the streamed path (--reread: a file unchanged since the last run is
# otherwise settled from the index, never opened)
if [ -n "${FAULT_SHIM:-}" ]; then
	V=$T/vanish
	fresh_site "$V"
	"$KILN" -q --brotli "$V" || fail "vanish: first run"
	echo "// changed" >>"$V/data/feed.xml"
	for fs in data/products.json:64M data/feed.xml:64M assets/app.js:1; do
		f=${fs%:*}
		KILN_FAULT_VANISH="$V/$f" LD_PRELOAD="$FAULT_SHIM" "$KILN" -q --brotli --reread --stream-size "${fs##*:}" "$V" 2>"$T/v.log"
		check "vanished $f: exit 1" [ $? -eq 1 ]
		check "vanished $f: test setup: it is gone" [ ! -e "$V/$f" ]
		check "vanished $f: exactly its error" only_lines "$T/v.log" "kiln: $V/$f: cannot open: No such file or directory"
		for s in gz br; do
			check "vanished $f: its .$s removed" [ ! -e "$V/$f.$s" ]
			check "vanished $f: its .$s not an asset" not has_entry "$V" "$f.$s"
		done
		check "vanished $f: no entry" not has_entry "$V" "$f"
		check "vanished $f: audit" audit "$V"
		"$KILN" check -q "$V"
		check "vanished $f: kiln check exits 0" [ $? -eq 0 ]
	done
else
	echo "consistency.sh: FAULT_SHIM not set (sanitizer build): vanishing files not tested" >&2
fi

# ---------------------------------------------------------------------------
# Names: manifest keys are one-to-one: names that a percent-encoding of invalid
# UTF-8 would confuse each get an entry of their own.
N=$T/names
mkdir -p "$N"
names=('bad%FFx.js' 'bad%ffx.js' 'bad%25FFx.js' 'caf%E9.js' $'caf\xc3\xa9.js')
# (the names the others would be taken for: a kiln of UTF-8 names only
# refuses these, cli.sh checks how)
non_utf8_names && names+=($'bad\xffx.js' $'caf\xe9.js')
for n in "${names[@]}"; do
	{ cat "$app"; printf '// %q\n' "$n"; } >"$N/$n"
done
before=$(tree_digest "$N")
"$KILN" --json --brotli "$N" >"$T/n1.json" 2>"$T/n1.log"
check "names: exit 0" [ $? -eq 0 ]
check "names: every file compressed" [ "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"]["compressed"])' "$T/n1.json")" = "${#names[@]}" ]
check "names: one entry per file" [ "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]+"/kiln-manifest.json"))["files"]))' "$N")" = "${#names[@]}" ]
for n in "${names[@]}"; do
	check "names: an entry for $(printf %q "$n")" has_entry "$N" "$n"
done
check "names: audit" audit "$N"
"$KILN" check -q "$N"
check "names: kiln check exits 0" [ $? -eq 0 ]
ino=$(sib_inodes "$N")
"$KILN" --json --brotli "$N" >"$T/n2.json" 2>"$T/n2.log"
check "names: second run exits 0" [ $? -eq 0 ]
check "names: second run re-encodes nothing" [ "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unchanged"])' "$T/n2.json")" = "${#names[@]}" ]
check "names: second run rewrites nothing (same inodes)" [ "$(sib_inodes "$N")" = "$ino" ]
"$KILN" clean -q "$N"
check "names: kiln clean exits 0" [ $? -eq 0 ]
check "names: kiln clean leaves only the sources" [ "$(tree_digest "$N")" = "$before" ]

# ---------------------------------------------------------------------------
# check --json: `kiln check --json` reports problems: one JSON object on stdout with
# "problems" (each with "path", "kind" and, when there is one, "detail")
# and "problem_count".  A problem about a sibling names it by its own path,
# or by its source's path and its "coding".
C=$T/check
fresh_site "$C"
"$KILN" -q --brotli "$C" || fail "check: first run"
"$KILN" check --json "$C" >"$T/k0.json" 2>/dev/null
check "check --json, clean tree: exit 0" [ $? -eq 0 ]
fresh_site "$T/never"
"$KILN" check --json "$T/never" >"$T/k2.json" 2>/dev/null
check "check --json, never run: exit 3" [ $? -eq 3 ]
# check_json FILE EXPECTED: FILE holds one JSON object, whose
# problems are exactly EXPECTED, a JSON list of [kind, path, coding or null]
check_json() {
	/usr/bin/python3 - "$@" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
want = json.loads(sys.argv[2])
bad = []
try:
    doc = json.loads(text)
except ValueError as e:
    sys.exit(f"stdout is not one JSON object: {e}: {text[:200]!r}")
probs = doc.get("problems")
if not isinstance(probs, list):
    sys.exit(f"no list of problems: {text[:300]!r}")
for p in probs:
    if not isinstance(p, dict) or not isinstance(p.get("path"), str) or not isinstance(p.get("kind"), str) \
            or not isinstance(p.get("detail", ""), str):
        bad.append(f"malformed problem {p!r}")
if doc.get("problem_count") != len(probs):
    bad.append(f"problem_count {doc.get('problem_count')!r}, {len(probs)} problems listed")
def about(p, path, coding):
    if coding is None:
        return p.get("path") == path
    suffix = {"gzip": ".gz", "br": ".br"}[coding]
    return p.get("path") == path + suffix or (p.get("path") == path and p.get("coding") == coding)
for kind, path, coding in want:
    if not any(p.get("kind") == kind and about(p, path, coding) for p in probs if isinstance(p, dict)):
        bad.append(f"not listed: {kind} {path} {coding}")
if len(probs) != len(want):
    bad.append(f"{len(probs)} problems listed, {len(want)} expected: {probs!r}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
check "check --json, clean tree: no problems" check_json "$T/k0.json" '[]'
check "check --json, never run: the manifest is missing" check_json "$T/k2.json" "[[\"no manifest\", \"$T/never/kiln-manifest.json\", null]]"
echo "// changed" >>"$C/assets/app.js"     # stale siblings, asset out of date
rm "$C/data/feed.xml.br"                   # missing sibling
rm "$C/index.html"                         # orphaned siblings
gzip -9 -k -n "$C/robots.txt"              # a sibling kiln did not write
"$KILN" check --json "$C" >"$T/k1.json" 2>/dev/null
check "check --json, problems: exit 3" [ $? -eq 3 ]
# each problem is one of: an asset changed or gone, a sibling stale, missing,
# orphaned or unknown (README, "kiln check as a CI gate")
check "check --json, problems: each one listed" check_json "$T/k1.json" "$(cat <<EOF
[["stale sibling", "$C/assets/app.js", "gzip"], ["stale sibling", "$C/assets/app.js", "br"],
 ["manifest out of date", "$C/assets/app.js", null],
 ["missing sibling", "$C/data/feed.xml", "br"], ["manifest out of date", "$C/index.html", null],
 ["orphaned sibling", "$C/index.html", "gzip"], ["orphaned sibling", "$C/index.html", "br"],
 ["sibling not in the manifest", "$C/robots.txt.gz", null]]
EOF
)"

# ---------------------------------------------------------------------------
# A kill (signals are in signals.sh): SIGKILL at the worst moment: right after
# the Nth sibling is renamed into place (the fault shim kills the process
# there).  The next run must still know that sibling as kiln's: reuse it
# while its source is unchanged, replace it once changed, remove it once its
# source is gone, and warn about nothing.
if [ -n "${FAULT_SHIM:-}" ]; then
	W=$T/worst
	fresh_site "$W"
	"$KILN" -q --brotli "$W" || fail "worst moment: first run"
	# every compressed source changes, so the killed run encodes afresh
	find "$W" -type f \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz -print0 |
		sed -z 's/\.[a-z]*$//' | sort -zu | xargs -0 -I{} sh -c 'echo "/* changed */" >>"$1"' _ {}
	declare -A last made
	for k in 1 3; do
		rm -rf "$T/wk" && cp -a "$W" "$T/wk"
		touch "$T/mark"
		sleep 0.02
		KILN_FAULT_KILL_AFTER_RENAME=$k LD_PRELOAD="$FAULT_SHIM" "$KILN" -q --brotli -j1 "$T/wk" 2>/dev/null
		check "killed after rename $k: died of SIGKILL" [ $? -eq 137 ]
		mapfile -t new < <(cd "$T/wk" && find . -cnewer "$T/mark" -type f \( -name '*.gz' -o -name '*.br' \) -printf '%C@ %p\n' | sort -n | cut -d' ' -f2-)
		check "killed after rename $k: $k siblings in place" [ "${#new[@]}" -eq "$k" ]
		last[$k]=${new[${#new[@]} - 1]:-./none.gz}   # the one put in place just before the kill
		made[$k]=$(printf '%s\n' "${new[@]}")
		for how in same edit gone; do
			rm -rf "$T/w-$k-$how" && cp -a "$T/wk" "$T/w-$k-$how"
			case $how in
			edit) echo "/* again */" >>"$T/w-$k-$how/${last[$k]%.*}" ;;
			gone) rm "$T/w-$k-$how/${last[$k]%.*}" ;;
			esac
		done
	done
	sleep 2.5 # the killed runs' temporary files are clearly dead
	for k in 1 3; do
		for how in same edit gone; do
			d=$T/w-$k-$how s=${last[$k]}
			ino=$(cd "$d" && xargs -d '\n' -r stat -c '%i %n' <<<"${made[$k]}")
			"$KILN" --brotli "$d" 2>"$T/w.log"
			rc=$?
			check "killed after rename $k, source $how: next run exits 0 ($(cat "$T/w.log"))" [ $rc -eq 0 ]
			check "killed after rename $k, source $how: no 'not written by kiln' warning" not grep -q 'not written by kiln' "$T/w.log"
			case $how in
			same) check "killed after rename $k, source unchanged: the $k siblings reused" [ "$(cd "$d" && xargs -d '\n' -r stat -c '%i %n' <<<"${made[$k]}")" = "$ino" ] ;;
			edit) check "killed after rename $k, source changed: $s replaced" decodes_to "$d/$s" "$d/${s%.*}" ;;
			gone) check "killed after rename $k, source deleted: $s removed" [ ! -e "$d/$s" ] ;;
			esac
			check "killed after rename $k, source $how: audit" audit "$d"
			"$KILN" check -q "$d"
			check "killed after rename $k, source $how: kiln check exits 0" [ $? -eq 0 ]
		done
	done
fi

# A recorded sibling replaced by a file of the user's, then its source
# deleted: the file is theirs, an asset of its own; kiln says so, and kiln
# and `kiln check` agree about the tree.
fresh_site "$T/fo"
"$KILN" -q "$T/fo"
echo hi | gzip -n >"$T/fo/assets/app.js.gz"
cp "$T/fo/assets/app.js.gz" "$T/fo-user.gz"
rm "$T/fo/assets/app.js"
"$KILN" "$T/fo" 2>"$T/fo.log"
check "foreign orphan: exit 0" [ $? -eq 0 ]
check "foreign orphan: said so" grep -q "app.js.gz: warning: .*its source is gone: kept as an asset of its own" "$T/fo.log"
check "foreign orphan: the user's file left as it was" cmp -s "$T/fo/assets/app.js.gz" "$T/fo-user.gz"
"$KILN" check -q "$T/fo"
check "foreign orphan: check agrees (exit 0)" [ $? -eq 0 ]
check "foreign orphan: audit" /usr/bin/python3 "$(dirname "$0")/audit.py" "$T/fo"

# ---------------------------------------------------------------------------
# Places kiln cannot write or read, each as a class.
if [ "$(id -u)" -eq 0 ]; then
	# (a) A top directory kiln cannot write: no journal, so no sibling may be
	# put in place (none could be recorded); the stale ones still go.
	R=$T/rotop
	fresh_site "$R"
	"$KILN" -q --brotli "$R" && chown -R nobody "$R"
	echo '// more' >>"$R/assets/app.js"
	chmod 555 "$R"
	"${as[@]}" "$bin" -q --brotli "$R" 2>"$T/ro.log"
	check "read-only top: exit 1" [ $? -eq 1 ]
	check "read-only top: says the sibling cannot be recorded" \
		grep -qF "kiln: $R/assets/app.js.gz: cannot record the sibling (no journal at the top): Permission denied" "$T/ro.log"
	check "read-only top: no unrecorded sibling of the changed file" \
		[ ! -e "$R/assets/app.js.gz" ] && [ ! -e "$R/assets/app.js.br" ]
	check "read-only top: audit (the manifest could not be written)" audit --manifest-may-lag "$R"
	chmod 755 "$R"
	"${as[@]}" "$bin" -q --brotli "$R"
	check "read-only top, writable again: exit 0" [ $? -eq 0 ]
	check "read-only top, writable again: audit" audit "$R"

	# (b) A manifest kiln cannot read is not "no manifest": without its
	# record kiln could neither remove nor recognise its own siblings, so
	# the tree is left alone, with an error.
	M=$T/unreadable-manifest
	fresh_site "$M"
	"$KILN" -q --brotli "$M" && chown -R nobody "$M"
	rm "$M/assets/app.js"
	chmod 000 "$M/kiln-manifest.json"
	before=$(tree_digest "$M")
	"${as[@]}" "$bin" -q --brotli "$M" 2>"$T/um.log"
	check "unreadable manifest: exit 1" [ $? -eq 1 ]
	check "unreadable manifest: exactly its error" only_lines "$T/um.log" \
		"kiln: $M/kiln-manifest.json: cannot read the previous manifest: Permission denied"
	check "unreadable manifest: the tree untouched" [ "$(tree_digest "$M")" = "$before" ]
	chmod 644 "$M/kiln-manifest.json"
	"${as[@]}" "$bin" -q --brotli "$M"
	check "unreadable manifest, readable again: the deleted source's siblings go" \
		[ ! -e "$M/assets/app.js.gz" ] && [ ! -e "$M/assets/app.js.br" ]
	check "unreadable manifest, readable again: audit" audit "$M"

	# (b2) So is a shard part kiln cannot read: the siblings it records
	# are kiln's, and neither a run nor clean may take them for someone
	# else's.
	P=$T/unreadable-part
	fresh_site "$P"
	"$KILN" -q --brotli --shard 2/2 "$P" && chown -R nobody "$P"
	check "unreadable part: its shard holds assets/app.js" [ -e "$P/assets/app.js.br" ]
	rm "$P/assets/app.js"
	chmod 000 "$P/kiln-manifest.shard-2-of-2.json"
	before=$(tree_digest "$P")
	"${as[@]}" "$bin" -q --brotli "$P" 2>"$T/up.log"
	check "unreadable part: exit 1" [ $? -eq 1 ]
	check "unreadable part: exactly its error" only_lines "$T/up.log" \
		"kiln: $P/kiln-manifest.shard-2-of-2.json: cannot read the shard part: Permission denied"
	check "unreadable part: the tree untouched" [ "$(tree_digest "$P")" = "$before" ]
	"${as[@]}" "$bin" clean -q "$P" 2>"$T/upc.log"
	check "unreadable part, clean: exit 1" [ $? -eq 1 ]
	check "unreadable part, clean: the tree untouched" [ "$(tree_digest "$P")" = "$before" ]
	chmod 644 "$P/kiln-manifest.shard-2-of-2.json"
	"${as[@]}" "$bin" -q --brotli "$P"
	check "unreadable part, readable again: exit 0" [ $? -eq 0 ]
	check "unreadable part, readable again: the deleted source's siblings go" \
		[ ! -e "$P/assets/app.js.gz" ] && [ ! -e "$P/assets/app.js.br" ]
	check "unreadable part, readable again: audit" audit "$P"

	# (b3) A directory kiln cannot read may hold any shard's files: every
	# shard says so and exits 1, not only the shard its name falls in.
	S=$T/unreadable-dir-shards
	fresh_site "$S"
	mkdir -p "$S/deep/a" "$S/deep/b"
	cp "$S/assets/app.js" "$S/deep/a/" && cp "$S/assets/app.css" "$S/deep/b/"
	chown -R nobody "$S" && chmod 000 "$S/deep"
	for k in 1 2 3; do
		"${as[@]}" "$bin" -q --shard "$k/3" "$S" 2>"$T/uds.log"
		check "unreadable directory, shard $k/3: exit 1" [ $? -eq 1 ]
		check "unreadable directory, shard $k/3: said so" \
			grep -qF "kiln: $S/deep: cannot open directory: Permission denied" "$T/uds.log"
	done
	chmod 755 "$S/deep"

	# (c) clean on a tree with a directory it cannot search: the siblings in
	# there stay, so clean fails and keeps the manifest that records them.
	C=$T/clean-unsearchable
	fresh_site "$C"
	"$KILN" -q --brotli "$C" && chown -R nobody "$C"
	chmod 000 "$C/assets"
	"${as[@]}" "$bin" clean -q "$C" 2>"$T/cu.log"
	check "clean, unsearchable dir: exit 1" [ $? -eq 1 ]
	check "clean, unsearchable dir: names a sibling it could not remove" \
		grep -q "^kiln: $C/assets/app\.js\.gz: cannot remove.*: Permission denied$" "$T/cu.log"
	check "clean, unsearchable dir: the manifest kept" [ -e "$C/kiln-manifest.json" ]
	chmod 755 "$C/assets"
	"${as[@]}" "$bin" clean -q "$C"
	check "clean, searchable again: exit 0" [ $? -eq 0 ]
	check "clean, searchable again: no sibling left" [ -z "$(find "$C" -name '*.gz' ! -name archive.tar.gz -o -name '*.br')" ]
fi

# (d) Out of memory while reading the manifest is no reason to forget it:
# with the shim failing one allocation after another while the manifest is
# parsed, no run may leave a sibling the manifest does not record.
if [ -n "${FAULT_SHIM:-}" ]; then
	O=$T/oom-manifest
	fresh_site "$O"
	"$KILN" -q --brotli "$O"
	cp -a "$O" "$T/oom-base"
	bad=0
	for n in 1 2 3 5 8 13 21 34 55 89 144 233; do
		rm -rf "$O" && cp -a "$T/oom-base" "$O"
		echo '// more' >>"$O/assets/app.js"
		rm "$O/assets/app.css"
		before=$(tree_digest "$O")
		LD_PRELOAD=$FAULT_SHIM KILN_FAULT=malloc:$n "$KILN" -q --brotli "$O" 2>"$T/oom.log"
		rc=$?
		ok=1
		[ $rc -le 1 ] || { echo "malloc:$n: exit $rc" >&2; ok=0; }
		if grep -q "cannot read the previous manifest\|^kiln: $O: " "$T/oom.log"; then
			# refused, or failed as a whole: the tree as the user left it
			[ "$(tree_digest "$O")" = "$before" ] || { echo "malloc:$n: refused, yet the tree changed" >&2; ok=0; }
		elif grep -q "cannot write the manifest" "$T/oom.log"; then
			audit --manifest-may-lag --allow-missing --allow-stale --partial "$O" >&2 || ok=0
		else
			audit --allow-missing --allow-stale --partial "$O" >&2 || ok=0
		fi
		[ $ok -eq 1 ] || { echo "malloc:$n: kiln said:" && cat "$T/oom.log"; } >&2
		# and the next run puts everything right
		"$KILN" -q --brotli "$O" && audit "$O" >&2 || { echo "malloc:$n: the next run" >&2; ok=0; }
		[ $ok -eq 1 ] || bad=1
	done
	check "out of memory early in a run: no sibling left unrecorded or stale" [ $bad -eq 0 ]
fi

# ---------------------------------------------------------------------------
# Sources that stop being files, and siblings damaged before a clean.
# (a) A source replaced by a symbolic link (not followed) or a FIFO is no
# source any more: its siblings go, as for a deleted file.
L=$T/link-source
mkdir -p "$L"
seq 1 3000 | sed 's/^/a line /' >"$L/a.js"
seq 1 3000 | sed 's/^/b line /' >"$L/b.js"
"$KILN" -q "$L"
rm "$L/a.js" && ln -s b.js "$L/a.js"
"$KILN" -q "$L"
check "source now a symlink: exit 0" [ $? -eq 0 ]
check "source now a symlink: its .gz removed" [ ! -e "$L/a.js.gz" ]
rm "$L/b.js" && mkfifo "$L/b.js"
"$KILN" -q "$L" 2>/dev/null
check "source now a FIFO: its .gz removed" [ ! -e "$L/b.js.gz" ]
"$KILN" check -q "$L"
check "source now a symlink or FIFO: check exits 0" [ $? -eq 0 ]
# (b) kiln clean on a sibling of kiln's that was damaged since: it does not
# decode to its source, so clean says so and fails (a server would send it).
D=$T/damaged
fresh_site "$D"
"$KILN" -q "$D"
printf X | dd of="$D/index.html.gz" bs=1 seek=20 conv=notrunc 2>/dev/null
"$KILN" clean "$D" 2>"$T/dm.log"
check "clean, damaged sibling: exit 1" [ $? -eq 1 ]
check "clean, damaged sibling: named as stale" grep -q "index.html.gz: stale" "$T/dm.log"

finish
