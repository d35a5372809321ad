#!/usr/bin/env bash
# signals.sh - interrupted runs lose nothing and leave nothing half-written.
# SIGINT/SIGTERM at random points: kiln prints its one "interrupted" line,
# saves what is done and dies of that signal; no temporary file and no
# journal survive; the manifest records exactly the siblings on disk; the
# next run re-encodes only what was not finished.  A second signal stops at
# once: no temporary file survives, the journal may.  SIGKILL at random
# points: stray temporary files and a journal at worst; every sibling under
# a final name still decodes, and the next run reuses the siblings the
# killed run completed, removes the stale ones and its journal.  And two
# kiln processes on one tree at once both finish with a correct result.
. "$(dirname "$0")/lib.sh"
ROUNDS=${SIGNAL_ROUNDS:-6}
AUDIT=$(dirname "$0")/audit.py
audit() { /usr/bin/python3 "$AUDIT" "$@"; }
LINE="kiln: interrupted: saving what is done (again to stop at once)"

# A tree big enough that a --brotli run takes a few seconds: the example
# site many times over, with every copy a little different.
mkdir -p "$T/src"
for i in $(seq 1 12); do
	mkdir -p "$T/src/c$i"
	cp -r "$FIXTURES/site/." "$T/src/c$i/"
	find "$T/src/c$i" -type f \( -name '*.js' -o -name '*.css' -o -name '*.html' -o -name '*.json' \) \
		-exec sh -c 'echo "/* copy $1 */" >>"$2"' _ "$i" {} \;
done
for i in 1 2 3; do
	for k in $(seq 1 60); do sed "s/function/fn$k$i/g" "$FIXTURES/site/assets/app.js"; done >"$T/src/big$i.js"
done
digest=$(sources_digest "$T/src")
# The same tree after a complete run, then edited: a run over it reuses
# most siblings and replaces some.
cp -a "$T/src" "$T/done"
"$KILN" -q --brotli "$T/done" || fail "the complete run"
for f in "$T/done"/c*/assets/app.js "$T/done/big1.js"; do echo "// changed" >>"$f"; done
digest_done=$(sources_digest "$T/done")

no_temps() { [ -z "$(find "$1" -name '.kiln-*.tmp')" ]; }
no_journal() { [ -z "$(find "$1" -name '.kiln-journal-*')" ]; }
no_siblings() { [ -z "$(find "$1" -type f \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz)" ]; }
# the manifest's entries that record siblings (0 without a manifest)
recorded_files() {
	/usr/bin/python3 -c 'import json,os,sys
p = sys.argv[1] + "/kiln-manifest.json"
print(sum(1 for e in json.load(open(p))["files"].values() if e.get("encodings")) if os.path.exists(p) else 0)' "$1"
}
json_field() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# wait_siblings DIR MARK K PID: until K siblings newer than MARK exist under
# DIR, or PID is gone
wait_siblings() {
	local i
	for i in $(seq 1200); do
		[ "$(find "$1" -cnewer "$2" -type f \( -name '*.gz' -o -name '*.br' \) | head -n "$3" | wc -l)" -ge "$3" ] && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.05
	done
}
# what kiln printed after a signal: with -q nothing but its one line (none
# if the signal came before or after the run), else that line and the
# summary; never an error
quiet_log() { [ ! -s "$1" ] || [ "$(cat "$1")" = "$LINE" ]; }
normal_log() {
	[ "$(grep -c -v -x -F -e "$LINE" "$1")" -le 1 ] &&
		[ -z "$(grep -v -x -F -e "$LINE" "$1" | grep -v -E '^kiln: [0-9]+ assets?: ')" ]
}

interrupted=0
for round in $(seq 1 "$ROUNDS"); do
	# odd rounds start from nothing, even ones from an earlier manifest
	# (made with the default --stream-size); half of each (round mod 4 is
	# 0 or 1) run with -q.  The signal comes
	# after a random delay or (always from an earlier manifest) once a
	# random number of siblings is written.
	if [ $((round % 2)) -eq 1 ]; then from=src want_digest=$digest; else from=done want_digest=$digest_done; fi
	if [ $((round % 4)) -le 1 ]; then q=-q; else q=; fi
	# from nothing, round 3 (mod 4) streams its large files
	if [ $((round % 4)) -eq 3 ]; then ss=512K; else ss=64M; fi
	for sig in INT TERM; do
		name="SIG$sig round $round (from $from${q:+, -q}, --stream-size $ss)"
		rm -rf "$T/t" && cp -a "$T/$from" "$T/t"
		touch "$T/mark"
		sleep 0.02
		"$KILN" $q --brotli --stream-size $ss "$T/t" 2>"$T/sig.log" &
		pid=$!
		if [ $from = src ] && [ $((RANDOM % 2)) -eq 0 ]; then
			sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
		else
			wait_siblings "$T/t" "$T/mark" $((RANDOM % 16 + 1)) "$pid"
			sleep "0.0$((RANDOM % 10))"
		fi
		kill -s "$sig" "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
		want=$((128 + $(kill -l "$sig")))
		[ $rc -eq "$want" ] && interrupted=$((interrupted + 1))
		check "$name: died of the signal or finished (rc $rc)" [ "$rc" -eq "$want" -o "$rc" -eq 0 ]
		if [ -n "$q" ]; then
			check "$name: printed nothing but its one line" quiet_log "$T/sig.log"
		else
			check "$name: printed its one line and the summary, no error" normal_log "$T/sig.log"
		fi
		[ $rc -eq 0 ] && check "$name: finished: printed no interrupted line" not grep -qxF "$LINE" "$T/sig.log"
		check "$name: no temporary file" no_temps "$T/t"
		check "$name: no journal" no_journal "$T/t"
		check "$name: sources untouched" [ "$(sources_digest "$T/t")" = "$want_digest" ]
		if [ -e "$T/t/kiln-manifest.json" ]; then
			# and every sibling decodes to its source (audit.py decodes each)
			check "$name: the manifest records exactly the siblings on disk" audit --partial "$T/t"
		else
			check "$name: no manifest (signalled before the run began): no sibling" no_siblings "$T/t"
		fi
		done_files=$(recorded_files "$T/t")
		"$KILN" -q --json --brotli --stream-size $ss "$T/t" >"$T/next.json"
		check "$name: next run exits 0" [ $? -eq 0 ]
		check "$name: next run re-encodes only what was not finished" [ "$(json_field "$T/next.json" unchanged)" = "$done_files" ]
		check "$name: next run: audit" audit "$T/t"
	done
done
check "most rounds were really interrupted ($interrupted of $((2 * ROUNDS)))" [ "$interrupted" -ge "$ROUNDS" ]

# A second signal right after the first: kiln stops at once.
for sig in INT TERM; do
	rm -rf "$T/t2" && cp -a "$T/src" "$T/t2"
	touch "$T/mark"
	sleep 0.02
	"$KILN" -q --brotli "$T/t2" 2>"$T/sig2.log" &
	pid=$!
	wait_siblings "$T/t2" "$T/mark" 4 "$pid"
	kill -s "$sig" "$pid" 2>/dev/null
	for _ in $(seq 400); do grep -qxF "$LINE" "$T/sig2.log" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	check "two SIG$sig: died of the signal (rc $rc)" [ "$rc" -eq "$want" ]
	check "two SIG$sig: printed nothing but the one line" [ "$(cat "$T/sig2.log")" = "$LINE" ]
	check "two SIG$sig: no temporary file" no_temps "$T/t2"
	check "two SIG$sig: every sibling decodes" all_siblings_decode "$T/t2"
	check "two SIG$sig: sources untouched" [ "$(sources_digest "$T/t2")" = "$digest" ]
	"$KILN" -q --brotli "$T/t2"
	check "two SIG$sig: next run exits 0" [ $? -eq 0 ]
	check "two SIG$sig: next run: audit" audit "$T/t2"
	check "two SIG$sig: next run: no journal left" no_journal "$T/t2"
	check "two SIG$sig: next run: kiln check passes" "$KILN" check -q "$T/t2"
done

# SIGKILL: nothing can be cleaned up then, but nothing under a final name
# is partial, and the next run puts everything right.
rm -rf "$T/k" && cp -a "$T/src" "$T/k"
for round in $(seq 1 "$ROUNDS"); do
	"$KILN" -q --brotli -f "$T/k" &
	pid=$!
	sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	check "SIGKILL round $round: every sibling under a final name decodes" all_siblings_decode "$T/k"
	check "SIGKILL round $round: sources untouched" [ "$(sources_digest "$T/k")" = "$digest" ]
done
sleep 2.5 # past KILN_TEMP_STALE_SECONDS: the temporary files are clearly dead
"$KILN" -q --brotli "$T/k"
check "after SIGKILLs: the next run exits 0" [ $? -eq 0 ]
check "after SIGKILLs: stray temporary files removed" no_temps "$T/k"
check "after SIGKILLs: journals removed" no_journal "$T/k"
check "after SIGKILLs: audit" audit "$T/k"
check "after SIGKILLs: kiln check passes" "$KILN" check -q "$T/k"

# After SIGKILL the next run reuses what the killed run completed (its
# journal proves those siblings current), and removes what went stale.
rm -rf "$T/r" && cp -a "$T/src" "$T/r"
touch "$T/mark"
sleep 0.02
"$KILN" -q --brotli "$T/r" &
pid=$!
wait_siblings "$T/r" "$T/mark" 24 "$pid"
kill -KILL "$pid" 2>/dev/null
wait "$pid"
mapfile -t made < <(cd "$T/r" && find . -type f \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz | sort)
check "SIGKILL reuse: the killed run completed siblings (${#made[@]})" [ "${#made[@]}" -ge 6 ]
check "SIGKILL reuse: the killed run left its journal" not no_journal "$T/r"
changed=${made[0]%.*} deleted=${made[${#made[@]} - 1]%.*}
echo "// changed" >>"$T/r/$changed"
rm "$T/r/$deleted"
keep=()
for s in "${made[@]}"; do
	case ${s%.*} in "$changed" | "$deleted") ;; *) keep+=("$(stat -c '%i' "$T/r/$s") $s") ;; esac
done
sleep 2.5
"$KILN" --brotli "$T/r" 2>"$T/r.log" # not -q: warnings too
check "SIGKILL reuse: next run exits 0" [ $? -eq 0 ]
check "SIGKILL reuse: no 'not written by kiln' warning" not grep -q 'not written by kiln' "$T/r.log"
reused=0
for k in "${keep[@]}"; do
	[ "$(stat -c %i "$T/r/${k#* }" 2>/dev/null)" = "${k%% *}" ] && reused=$((reused + 1))
done
check "SIGKILL reuse: every completed sibling of an unchanged source reused ($reused of ${#keep[@]})" [ "$reused" -eq "${#keep[@]}" ]
check "SIGKILL reuse: the changed source's siblings are current" decodes_to "$T/r/${made[0]}" "$T/r/$changed"
check "SIGKILL reuse: the deleted source's .gz gone" [ ! -e "$T/r/$deleted.gz" ]
check "SIGKILL reuse: the deleted source's .br gone" [ ! -e "$T/r/$deleted.br" ]
check "SIGKILL reuse: journal gone" no_journal "$T/r"
check "SIGKILL reuse: audit" audit "$T/r"
check "SIGKILL reuse: kiln check passes" "$KILN" check -q "$T/r"

# What a killed run wrote is still known to be kiln's: its journal lets the
# next run remove siblings gone stale in between.
for round in 1 2 3; do
	rm -rf "$T/j"
	if [ "$round" -gt 1 ]; then cp -a "$T/done" "$T/j"; else cp -a "$T/src" "$T/j"; fi # round 2+: over a previous manifest
	touch "$T/mark"
	sleep 0.02
	"$KILN" -q --brotli "$T/j" &
	pid=$!
	for _ in $(seq 600); do
		[ "$(find "$T/j" -cnewer "$T/mark" -name '*.js.gz' | head -n 2 | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	# the killed run wrote some siblings; now make their sources stale
	mapfile -t written < <(find "$T/j" -name '*.js.gz' -cnewer "$T/mark" | head -n 4)
	check "journal round $round: the killed run wrote siblings" [ "${#written[@]}" -ge 2 ]
	rm -f "${written[0]%.gz}"                          # deleted
	[ -n "${written[1]:-}" ] && echo "x" >"${written[1]%.gz}"   # now small
	sleep 2.5 # its temporary files are clearly dead
	"$KILN" --brotli "$T/j" 2>"$T/j.log" # not -q: warnings too
	check "journal round $round: next run exits 0" [ $? -eq 0 ]
	check "journal round $round: no 'not written by kiln' warning" not grep -q 'not written by kiln' "$T/j.log"
	check "journal round $round: deleted source's siblings gone" [ ! -e "${written[0]}" ]
	check "journal round $round: deleted source's siblings gone" [ ! -e "${written[0]%.gz}.br" ]
	check "journal round $round: small source's siblings gone" [ ! -e "${written[1]:-/nonexistent}" ]
	check "journal round $round: audit" audit "$T/j"
	check "journal round $round: kiln check passes" "$KILN" check -q "$T/j"
	check "journal round $round: no journal left" no_journal "$T/j"
done

# Two processes on one tree at once.
rm -rf "$T/two" && cp -a "$T/src" "$T/two"
"$KILN" -q --brotli "$T/two" 2>"$T/two1.log" &
p1=$!
"$KILN" -q --brotli "$T/two" 2>"$T/two2.log" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "two at once: both exit 0 ($r1, $r2)" [ $r1 -eq 0 ]
check "two at once: both exit 0 ($r1, $r2)" [ $r2 -eq 0 ]
check "two at once: no error printed" [ ! -s "$T/two1.log" ]
check "two at once: no error printed" [ ! -s "$T/two2.log" ]
check "two at once: the manifest is whole and matches" "$KILN" check -q "$T/two"
check "two at once: audit" audit "$T/two"
check "two at once: no temporary file" no_temps "$T/two"

finish
