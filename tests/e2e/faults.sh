#!/usr/bin/env bash
# faults.sh - disk full, write/rename/fsync/close/malloc failures, files
# that vanish or change under kiln: each is an error with exit 1 (never a
# crash), no temporary file survives, sources are untouched, every sibling
# left under a final name decodes to its source, and a previous good
# sibling is left as it was.
. "$(dirname "$0")/lib.sh"
SHIM=${FAULT_SHIM:?FAULT_SHIM must name the fault-injection shim}

# invariants DIR [SOURCES-DIGEST]: what must hold after any failure
invariants() {
	local d=$1 want=${2:-} bad=0 s
	if [ -n "$(find "$d" -name '.kiln-*.tmp')" ]; then
		echo "temporary files left: $(find "$d" -name '.kiln-*.tmp')" >&2; bad=1
	fi
	all_siblings_decode "$d" --skip-orphans || bad=1
	if [ -n "$want" ] && [ "$(sources_digest "$d")" != "$want" ]; then
		echo "sources changed in $d" >&2; bad=1
	fi
	return $bad
}

orig=$(fresh_site "$T/o" && sources_digest "$T/o")
(cd "$T/o" && find . -type f -printf '%P\0') >"$T/sources.lst" # the user's files

# 1. A file size limit (ulimit -f): writes fail with EFBIG, as on a full disk.
fresh_site "$T/u"
(ulimit -f 4; "$KILN" --brotli -q "$T/u") 2>"$T/u.log"
rc=$?
check "ulimit -f: exit 1 (got $rc)" [ $rc -eq 1 ]
check "ulimit -f: the failure is named" grep -q 'cannot write: File too large' "$T/u.log"
check "ulimit -f: invariants" invariants "$T/u" "$orig"
# (which ones depends on when the journal itself reaches the limit: the
# files run largest first, on every core)
check "ulimit -f: siblings that fit still written" [ -n "$(find "$T/u" -name '*.gz' ! -name archive.tar.gz)" ]
check "ulimit -f: no error names a stale errno" not grep -q 'No such file or directory' "$T/u.log"

# 2. A real full disk: a small tmpfs (root only).
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/mnt" && mount -t tmpfs -o size=400k tmpfs "$T/mnt" 2>/dev/null; then
	trap 'umount "$T/mnt" 2>/dev/null' EXIT
	fresh_site "$T/mnt/s"
	"$KILN" --brotli -q "$T/mnt/s" || fail "tmpfs: first run with room"
	cp "$T/mnt/s/index.html.gz" "$T/index.html.gz.good"
	echo "// a change" >>"$T/mnt/s/assets/app.js"
	before=$(sources_digest "$T/mnt/s")
	dd if=/dev/zero of="$T/mnt/filler" bs=1k count=1000 status=none 2>/dev/null # fill it up
	"$KILN" --brotli -q "$T/mnt/s" 2>"$T/full.log"
	rc=$?
	check "disk full: exit 1 (got $rc)" [ $rc -eq 1 ]
	check "disk full: said so" grep -q 'No space left on device' "$T/full.log"
	check "disk full: no temporary file, sources untouched, nothing stale" invariants "$T/mnt/s" "$before"
	check "disk full: the stale sibling of the changed file is gone" [ ! -e "$T/mnt/s/assets/app.js.gz" ]
	check "disk full: a good sibling of an unchanged file left as it was" cmp -s "$T/mnt/s/index.html.gz" "$T/index.html.gz.good"
	"$KILN" --brotli -q -f "$T/mnt/s" 2>"$T/full2.log"
	check "disk full, forced rewrite: exit 1" [ $? -eq 1 ]
	check "disk full, forced rewrite: previous good sibling left as it was" cmp -s "$T/mnt/s/index.html.gz" "$T/index.html.gz.good"
	check "disk full, forced rewrite: invariants" invariants "$T/mnt/s" "$before"
	# a cache on the full disk: an error, the siblings themselves still fine
	fresh_site "$T/cs"
	"$KILN" -q --brotli --cache "$T/mnt/cache" "$T/cs" 2>"$T/cs.log"
	check "full cache disk: exit 1" [ $? -eq 1 ]
	check "full cache disk: said so" grep -q 'cache.*No space left on device' "$T/cs.log"
	check "full cache disk: no temporary file in the cache" [ -z "$(find "$T/mnt/cache" -name '.kiln-*.tmp' 2>/dev/null)" ]
	check "full cache disk: siblings still right" invariants "$T/cs" "$orig"
	rm -f "$T/mnt/filler"
	"$KILN" --brotli -q "$T/mnt/s"
	check "disk full: the next run with room repairs everything" "$KILN" check -q "$T/mnt/s"
	umount "$T/mnt"
	trap - EXIT
else
	echo "faults.sh: not root: the tmpfs part is skipped" >&2
fi

# 3. One failing call at a time, at every point of a run.
sweep() { # sweep CALL MAX [kiln options]
	local call=$1 max=$2 n rc; shift 2
	for n in $(seq 1 "$max"); do
		rm -rf "$T/f" && fresh_site "$T/f"
		KILN_FAULT="$call:$n" LD_PRELOAD="$SHIM" "$KILN" -q --brotli "$@" "$T/f" 2>"$T/f.log"
		rc=$?
		check "$call:$n: exit 0 or 1, never a crash (got $rc)" [ $rc -le 1 ]
		check "$call:$n: invariants" invariants "$T/f" "$orig"
		# and the record matches the disk: what failed is left out or kept
		# as it was, never a sibling the manifest (or a journal) does not know
		lag=
		grep -q "cannot write the manifest" "$T/f.log" && lag=--manifest-may-lag
		check "$call:$n: audit" /usr/bin/python3 "$(dirname "$0")/audit.py" "$T/f" \
			--partial --allow-missing --allow-stale --allow-temps --sources "$T/sources.lst" $lag
		if [ $rc -eq 1 ]; then
			check "$call:$n: the error is reported" grep -qE '^kiln: .*(No space left on device|Cannot allocate memory|out of memory)' "$T/f.log"
		fi
	done
}
sweep write 45
sweep rename 30
sweep fsync 30 --fsync
sweep futimens 30
sweep fchmod 30
sweep close 30
sweep create 30
# A re-run after every source was touched and its mode changed: the
# siblings are right but for their mode and mtime, which kiln changes in
# place.  When that change fails, the sibling is written anew (or the run
# says it failed): never left with another mode or Last-Modified than its
# source's.
resweep() { # resweep CALL MAX
	local call=$1 max=$2 n rc
	for n in $(seq 1 "$max"); do
		rm -rf "$T/t" && fresh_site "$T/t"
		"$KILN" -q --brotli "$T/t" || fail "$call:$n re-run: the first run"
		find "$T/t" -type f ! -name '*.gz' ! -name '*.br' ! -name '.kiln*' ! -name 'kiln-manifest.json' \
			-exec touch -d '2001-02-03 04:05:06' {} + -exec chmod 640 {} +
		KILN_FAULT="$call:$n" LD_PRELOAD="$SHIM" "$KILN" -q --brotli "$T/t" 2>"$T/t.log"
		rc=$?
		check "$call:$n after a touch: exit 0 or 1 (got $rc)" [ $rc -le 1 ]
		if [ $rc -eq 0 ]; then
			check "$call:$n after a touch: every sibling has its source's mode and mtime" \
				/usr/bin/python3 "$(dirname "$0")/audit.py" "$T/t" --sources "$T/sources.lst"
		else
			check "$call:$n after a touch: the failure is named" grep -q '^kiln: ' "$T/t.log"
		fi
	done
}
resweep futimens 12
resweep fchmod 12
rm -rf "$T/f" && fresh_site "$T/f"
KILN_FAULT="write:+1" LD_PRELOAD="$SHIM" "$KILN" -q --brotli "$T/f" 2>/dev/null
check "every write failing: exit 1" [ $? -eq 1 ]

# malloc: a sample of points through the whole run.
for n in $(seq 1 40) $(seq 41 37 3000); do
	rm -rf "$T/m" && fresh_site "$T/m"
	KILN_FAULT="malloc:$n" LD_PRELOAD="$SHIM" "$KILN" -q --brotli "$T/m" 2>"$T/m.log"
	rc=$?
	check "malloc:$n: exit 0 or 1, never a crash (got $rc)" [ $rc -le 1 ]
	check "malloc:$n: invariants" invariants "$T/m" "$orig"
done

# 4. A file that vanishes between the walk and the read.
fresh_site "$T/v"
KILN_FAULT_VANISH=app.css LD_PRELOAD="$SHIM" "$KILN" -q --brotli "$T/v" 2>"$T/v.log"
check "vanished file: exit 1" [ $? -eq 1 ]
check "vanished file: named" grep -qF "kiln: $T/v/assets/app.css: cannot open: No such file or directory" "$T/v.log"
check "vanished file: the rest done" decodes_to "$T/v/index.html.gz" "$T/v/index.html"

# 5. A file that keeps changing while it is compressed.
fresh_site "$T/c"
for i in $(seq 1 4000); do cat "$FIXTURES/site/assets/app.js"; done >"$T/c/big.js"
( while [ -e "$T/c/big.js" ] && [ ! -e "$T/c.done" ]; do echo "// more" >>"$T/c/big.js"; sleep 0.01; done ) &
writer=$!
"$KILN" -q --brotli --verify "$T/c" 2>"$T/c.log"
rc=$?
touch "$T/c.done"
wait $writer
check "changing file: exit 1" [ $rc -eq 1 ]
check "changing file: detected" grep -qE "kiln: $T/c/big.js: file (changed while being compressed|grew while being read)" "$T/c.log"
check "changing file: no sibling of inconsistent content" [ ! -e "$T/c/big.js.gz" ]
check "changing file: no sibling of inconsistent content" [ ! -e "$T/c/big.js.br" ]
check "changing file: the rest done" decodes_to "$T/c/index.html.gz" "$T/c/index.html"
# the same after a run that gave it siblings: those are of an old content
# now, and must go (the file is not what they decode to)
rm -f "$T/c.done"
"$KILN" -q --brotli "$T/c" 2>/dev/null
for i in $(seq 1 4000); do cat "$FIXTURES/site/assets/app.js"; done >"$T/c/big.js"
"$KILN" -q --brotli "$T/c" || fail "changing file: a full run first"
( sleep 0.3; while [ ! -e "$T/c.done" ]; do echo "// more" >>"$T/c/big.js"; sleep 0.01; done ) &
writer=$!
"$KILN" -q -f --brotli "$T/c" 2>"$T/c2.log"
rc=$?
touch "$T/c.done"
wait $writer
if grep -qE "big.js: file (changed while being compressed|grew while being read)" "$T/c2.log"; then
	check "changing file with siblings: exit 1" [ $rc -eq 1 ]
	for s in gz br; do
		check "changing file with siblings: the earlier .$s is gone or decodes to the file" \
			eval '[ ! -e "$T/c/big.js.$s" ] || decodes_to "$T/c/big.js.$s" "$T/c/big.js"'
	done
else
	echo "faults.sh: the writer did not catch the run this time (exit $rc)" >&2
fi

finish
