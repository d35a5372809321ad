#!/usr/bin/env bash
# concurrent.sh - one kiln at a time changes a tree.  For every ordered
# pair of the commands that change one (compress with one set of codings,
# compress with another, clean, merge), the first is made slow (the fault
# shim's KILN_FAULT_SLOW_MS: every rename and unlinkat waits) and the
# second started while it holds the tree's lock: the second says it waits
# for the first's pid, runs after it, and the tree then matches its
# manifest (kiln check passes, every sibling decodes with the gzip, brotli
# and zstd tools) or, after a clean, holds nothing of kiln's; no source
# changes, nothing is left half done.  check during a run reports the run,
# not problems; --no-wait exits 1 at once, nothing done.  A run on a tree
# inside a kiln tree waits for a run on the outer one.  A run whose top is
# a link flipped to another tree during it goes on in the one it began in.
# A sibling someone overwrites in place (its size and mtime kept) while a
# run that checked it goes on is not vouched for by that run's index: the
# next run reads it again and replaces it.
. "$(dirname "$0")/lib.sh"
SHIM=${FAULT_SHIM:?FAULT_SHIM must name the fault shim}

mk_tree() { # mk_tree DIR: 24 compressible files in two directories
	rm -rf "$1"
	mkdir -p "$1/js" "$1/css"
	for i in $(seq 1 12); do
		seq "$i" $((i + 3000)) | sed "s/^/var v$i = /" >"$1/js/m$i.js"
		seq 1 $((1500 + i)) | sed "s/^/.c$i { width: /" >"$1/css/s$i.css"
	done
}

# env execs kiln: $! of "${SLOW[@]}" ... & is kiln's own pid
SLOW=(env LD_PRELOAD="$SHIM" KILN_FAULT_SLOW_MS=25 "$KILN")
# a merge renames and removes a few files only: slower each
SLOW_MERGE=(env LD_PRELOAD="$SHIM" KILN_FAULT_SLOW_MS=200 "$KILN")

# until PID holds the flock on DIR (the kernel's list, proc(5))
wait_lock() { # wait_lock DIR PID
	local n ino
	ino=$(stat -c %i "$1")
	for n in $(seq 1 500); do
		grep -qE "FLOCK +ADVISORY +WRITE +$2 [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# every sibling under DIR decodes, with the format's own tool, to its source
siblings_decode() {
	local f bad=0
	while IFS= read -r -d '' f; do
		case $f in
		*.gz) gzip -dc -- "$f" | cmp -s - "${f%.gz}" ;;
		*.br) brotli -dc -- "$f" | cmp -s - "${f%.br}" ;;
		*.zst) zstd -qdc -- "$f" | cmp -s - "${f%.zst}" ;;
		esac || { echo "bad sibling: $f" >&2; bad=1; }
	done < <(find "$1" -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) -print0)
	return $bad
}

kiln_leftovers() { # files of kiln's that no finished run leaves
	find "$1" \( -name '.kiln-journal-*' -o -name '.kiln-*.tmp' \
		-o -name 'kiln-manifest.shard-*.json' \) -print
}
srcs() { (cd "$1" && find . -type f \( -name '*.js' -o -name '*.css' \) -print0 | sort -z | xargs -0 sha256sum); }

# the command NAME as arguments (all but merge run on a tree whose last
# step was two shard runs, so merge has parts to merge)
cmd_of() {
	case $1 in
	br) echo "-f --brotli" ;;
	zst) echo "-f --zstd" ;;
	clean) echo "clean" ;;
	merge) echo "merge" ;;
	esac
}

D=$T/tree
for x in br zst clean merge; do
	for y in br zst clean merge; do
		p="$x then $y"
		mk_tree "$D"
		"$KILN" -q "$D" || fail "$p: first run"
		for k in 1 2; do "$KILN" -q --brotli --shard "$k/2" "$D" || fail "$p: shard $k"; done
		before=$(srcs "$D")
		if [ "$x" = merge ]; then
			"${SLOW_MERGE[@]}" -q merge "$D" 2>"$T/x.err" &
		else
			# shellcheck disable=SC2046
			"${SLOW[@]}" -q $(cmd_of "$x") "$D" 2>"$T/x.err" &
		fi
		xpid=$!
		if ! wait_lock "$D" "$xpid"; then
			fail "$p: the slow $x never held the lock"
			wait "$xpid"
			continue
		fi
		# shellcheck disable=SC2046
		"$KILN" $(cmd_of "$y") "$D" >"$T/y.out" 2>&1 &
		ypid=$!
		# check while the first runs: the run, not problems
		"$KILN" check "$D" >"$T/check.out" 2>&1
		crc=$?
		check "$p: check during $x exits 1 (got $crc)" test "$crc" -eq 1
		check "$p: check names the run" grep -qE "another kiln \(pid ($xpid|$ypid)\) is changing this tree" "$T/check.out"
		check "$p: check tells no problem" grep -q 'check: 0 problems' "$T/check.out"
		wait "$xpid"
		xrc=$?
		wait "$ypid"
		check "$p: the first ($x) succeeded (got $xrc)" test "$xrc" -eq 0
		check "$p: the second waited for the first's pid" grep -qF "waiting for another kiln (pid $xpid)" "$T/y.out"
		check "$p: sources untouched" test "$before" = "$(srcs "$D")"
		check "$p: nothing half done" test -z "$(kiln_leftovers "$D")"
		check "$p: every sibling decodes" siblings_decode "$D"
		if [ -e "$D/kiln-manifest.json" ]; then
			"$KILN" check -q "$D" >"$T/final.out" 2>&1
			check "$p: the tree matches its manifest" test $? -eq 0
		else
			check "$p: no manifest, so nothing of kiln's" \
				test -z "$(find "$D" -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' -o -name 'kiln.*.conf' \))"
		fi
		# what the second did is there: it ran after the first, on its result
		case $y in
		zst) check "$p: the second's .zst siblings" test -e "$D/css/s1.css.zst" -a -e "$D/css/s12.css.zst" ;;
		br) check "$p: the second's .br siblings" test -e "$D/js/m1.js.br" -a -e "$D/css/s12.css.br" ;;
		clean) check "$p: cleaned" test ! -e "$D/kiln-manifest.json" -a ! -e "$D/js/m1.js.gz" ;;
		esac
	done
done

# --no-wait: exits 1 at once, saying who holds the tree; nothing it would
# have done is done
for y in br clean merge; do
	mk_tree "$D"
	"$KILN" -q "$D"
	for k in 1 2; do "$KILN" -q --zstd --shard "$k/2" "$D"; done
	"${SLOW[@]}" -q -f "$D" &
	xpid=$!
	wait_lock "$D" "$xpid" || fail "--no-wait $y: the slow run never held the lock"
	# shellcheck disable=SC2046
	"$KILN" --no-wait $(cmd_of "$y") "$D" >"$T/nw.out" 2>&1
	rc=$?
	check "--no-wait $y: did not wait for the run to end" kill -0 "$xpid"
	wait "$xpid"
	check "--no-wait $y: exit 1 (got $rc)" test "$rc" -eq 1
	check "--no-wait $y: says who" grep -qF "another kiln (pid $xpid) is changing this tree; not waiting (--no-wait)" "$T/nw.out"
	check "--no-wait $y: nothing of its own done" test ! -e "$D/js/m1.js.br"
	check "--no-wait $y: the run's tree is whole" "$KILN" check -q "$D"
done

# a snapshot taken under the tree's lock (flock(1) on the top directory,
# the lock kiln takes) waits for a run, so it shares no file the run is
# still writing (its journal, its temporary files)
mk_tree "$D"
"$KILN" -q "$D"
"${SLOW[@]}" -q -f --brotli "$D" &
xpid=$!
wait_lock "$D" "$xpid" || fail "snapshot: the slow run never held the lock"
rm -rf "$T/snap"
flock "$D" cp -al "$D" "$T/snap"
# (the run releases the lock as it ends, before its process is gone: the
# snapshot shows that it waited by holding all the run wrote, and none of
# the run's own files)
wait "$xpid"
check "snapshot under the lock: no journal or temporary file of the run" \
	test -z "$(find "$T/snap" -name '.kiln-*' ! -name .kiln-manifest.json.index)"
check "snapshot under the lock: the run's .br siblings in it" test -e "$T/snap/js/m1.js.br"
rm -rf "$T/snap"

# two trees given one --artifacts directory (or --manifest) at once: the
# record's directory is locked too, so the second waits, then is refused
# (the record of another tree), and the first's record is whole
for opt in --artifacts --manifest; do
	mk_tree "$T/ta"
	mk_tree "$T/tb"
	rm -rf "$T/art"
	mkdir "$T/art"
	if [ "$opt" = --artifacts ]; then where=$T/art; else where=$T/art/m.json; fi
	"${SLOW[@]}" -q "$opt" "$where" "$T/ta" &
	xpid=$!
	wait_lock "$T/ta" "$xpid" || fail "$opt shared: the slow run never held the lock"
	"$KILN" "$opt" "$where" "$T/tb" >"$T/tb.out" 2>&1
	rc=$?
	wait "$xpid"
	xrc=$?
	check "$opt shared at once: the first succeeded (got $xrc)" test "$xrc" -eq 0
	check "$opt shared at once: the second waited for it" grep -qF "waiting for another kiln (pid $xpid)" "$T/tb.out"
	check "$opt shared at once: the second refused (got $rc)" test "$rc" -eq 1
	check "$opt shared at once: ... as another tree's record" grep -qF "the record of another tree" "$T/tb.out"
	check "$opt shared at once: the first tree matches its record" "$KILN" check -q "$opt" "$where" "$T/ta"
	check "$opt shared at once: the second wrote nothing" test -z "$(find "$T/tb" -name '*.gz')"
done

# a run that begins and ends while a (slow) check reads: the check saw
# the tree half changed, so it reports that, not the problems it found
mk_tree "$D"
"$KILN" -q "$D"
# (--reread: it opens every file, as a check of a tree changed since does)
env LD_PRELOAD="$SHIM" KILN_FAULT_SLOW_OPEN_MS=250 "$KILN" check --reread "$D" >"$T/slowcheck.out" 2>&1 &
cpid=$!
sleep 0.3
"$KILN" -q --no-gzip --zstd "$D" || fail "run during a slow check"
check "run inside a check: the check still runs" kill -0 "$cpid"
wait "$cpid"
crc=$?
check "run inside a check: exit 1, not 3 (got $crc)" test "$crc" -eq 1
check "run inside a check: says the tree changed" grep -qF "the tree changed while it was checked" "$T/slowcheck.out"
check "run inside a check: no problem told" not grep -q 'missing gzip sibling' "$T/slowcheck.out"
check "run inside a check: a check after it passes" "$KILN" check -q "$D"

# a dry run takes no lock, and says another kiln is changing the tree
for y in compress clean; do
	mk_tree "$D"
	"$KILN" -q "$D"
	"${SLOW[@]}" -q -f "$D" &
	xpid=$!
	wait_lock "$D" "$xpid" || fail "dry run $y: the slow run never held the lock"
	if [ "$y" = clean ]; then "$KILN" clean -n "$D" >"$T/dry.out" 2>&1; else "$KILN" -n "$D" >"$T/dry.out" 2>&1; fi
	rc=$?
	check "dry run $y during a run: did not wait for it" kill -0 "$xpid"
	wait "$xpid"
	check "dry run $y during a run: exit 0 (got $rc)" test "$rc" -eq 0
	check "dry run $y during a run: says so" \
		grep -qF "warning: another kiln (pid $xpid) is changing this tree: what this dry run says may be out of date" "$T/dry.out"
	"$KILN" -n "$D" >"$T/dry.out" 2>&1
	check "dry run $y alone: says nothing of another kiln" not grep -q 'another kiln' "$T/dry.out"
	check "dry run $y: the run's tree is whole" "$KILN" check -q "$D"
done

# nested trees: a run on a tree inside a kiln tree (its directory above
# holds a manifest) takes that tree's lock too, so it never changes files
# while a run on the outer tree does; with --no-wait it exits 1 at once
mk_tree "$D"
"$KILN" -q "$D" || fail "nested: outer first run"
"$KILN" -q "$D/js" || fail "nested: inner first run"
for cmd in br clean; do
	"${SLOW[@]}" -q -f --zstd "$D" &
	xpid=$!
	wait_lock "$D" "$xpid" || fail "nested $cmd: the slow outer run never held the lock"
	# shellcheck disable=SC2046
	"$KILN" --no-wait $(cmd_of "$cmd") "$D/js" >"$T/nw.out" 2>&1
	rc=$?
	check "nested --no-wait $cmd: did not wait" kill -0 "$xpid"
	check "nested --no-wait $cmd: exit 1 (got $rc)" test "$rc" -eq 1
	check "nested --no-wait $cmd: says the tree around it is busy" \
		grep -qF "another kiln (pid $xpid) is changing the tree around it; not waiting (--no-wait)" "$T/nw.out"
	"$KILN" -n "$D/js" >"$T/dry.out" 2>&1
	check "nested dry run during the outer run: says so" \
		grep -qF "warning: another kiln (pid $xpid) is changing the tree around it: what this dry run says" "$T/dry.out"
	# shellcheck disable=SC2046
	"$KILN" $(cmd_of "$cmd") "$D/js" >"$T/y.out" 2>&1 &
	ypid=$!
	wait "$xpid"
	xrc=$?
	wait "$ypid"
	yrc=$?
	check "nested $cmd: both succeed ($xrc, $yrc)" test "$xrc" -eq 0 -a "$yrc" -eq 0
	check "nested $cmd: the inner waited for the outer's pid" \
		grep -qF "waiting for another kiln (pid $xpid) changing the tree around it" "$T/y.out"
	check "nested $cmd: nothing half done" test -z "$(kiln_leftovers "$D")"
	check "nested $cmd: every sibling decodes" siblings_decode "$D"
done

# a top that is a link flipped during the run (current -> releases/N, a
# deploy's layout): the run goes on in the directory it began in; the one
# the link names now is not touched
outside_state() { (cd "$1" && find . -printf '%p %y %m %s %T@ %i\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
for cmd in clean br; do
	R=$T/rel
	rm -rf "$R"
	mkdir -p "$R"
	mk_tree "$R/one"
	"$KILN" -q "$R/one" || fail "flip $cmd: first run"
	cp -a "$R/one" "$R/two"
	ln -s one "$R/cur"
	two_before=$(outside_state "$R/two")
	# shellcheck disable=SC2046
	"${SLOW[@]}" -q $(cmd_of "$cmd") "$R/cur" 2>"$T/flip.err" &
	xpid=$!
	wait_lock "$R/one" "$xpid" || fail "flip $cmd: the slow run never held the lock"
	ln -s two "$R/cur.new" && mv -T "$R/cur.new" "$R/cur"
	wait "$xpid"
	xrc=$?
	check "flip $cmd: the run succeeded (got $xrc)" test "$xrc" -eq 0
	check "flip $cmd: the tree the link names now is untouched" test "$two_before" = "$(outside_state "$R/two")"
	check "flip $cmd: nothing half done in the tree it began in" test -z "$(kiln_leftovers "$R/one")"
	case $cmd in
	clean) check "flip clean: the tree it began in is cleaned" \
		test ! -e "$R/one/kiln-manifest.json" -a -z "$(find "$R/one" -name '*.gz')" ;;
	br) check "flip br: the tree it began in matches its manifest" "$KILN" check -q "$R/one"
	    check "flip br: its .br siblings there" test -e "$R/one/js/m1.js.br" ;;
	esac
done

# two runs started together on a larger tree, with no shim: one waits, both
# succeed, the tree matches its manifest (the issue's own example)
mk_tree "$D"
for i in $(seq 1 150); do seq 1 $((800 + i)) >"$D/js/x$i.js"; done
"$KILN" -q --brotli "$D" 2>"$T/a.err" &
a=$!
"$KILN" -q --zstd "$D" 2>"$T/b.err" &
b=$!
wait "$a"
ra=$?
wait "$b"
rb=$?
check "two at once: both succeed ($ra, $rb)" test "$ra" -eq 0 -a "$rb" -eq 0
check "two at once: the tree matches its manifest" "$KILN" check -q "$D"
check "two at once: every sibling decodes" siblings_decode "$D"
check "two at once: nothing left" test -z "$(kiln_leftovers "$D")"

# A sibling overwritten in place during a run that already checked it (it
# reuses the .gz, writes a .br, each rename slowed down): its size and
# mtime kept, the bytes garbage.  The run's index must not vouch for it.
D=$T/edited
rm -rf "$D"; mkdir -p "$D"
seq 1 4000 | sed 's/^/var e = /' >"$D/e.js"
"$KILN" -q "$D"
sleep 1.1 # past the racy window: the .gz's stamp is trusted from here on
env LD_PRELOAD="$SHIM" KILN_FAULT_SLOW_MS=2500 "$KILN" -q --brotli "$D" &
pid=$!
for n in $(seq 1 500); do
	[ -n "$(find "$D" -name '.kiln-*.tmp' -print -quit)" ] && break
	sleep 0.02
done
python3 - "$D/e.js.gz" <<'PY'
import os, sys
p = sys.argv[1]
st = os.stat(p)
with open(p, "r+b") as f:
    f.write(b"\x00" * st.st_size)
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
wait "$pid"
check "edited during a run: the run succeeds" test $? -eq 0
sleep 1.1
"$KILN" -q --brotli "$D"
check "edited during a run: the next run replaces it" siblings_decode "$D"
check "edited during a run: the tree matches its manifest" "$KILN" check -q "$D"

finish
