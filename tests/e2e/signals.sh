#!/usr/bin/env bash
# signals.sh - interrupted runs lose nothing and leave nothing half-written.
# SIGINT/SIGTERM at random points: kiln dies of that signal, no temporary
# file survives, no sibling under its final name is partial or wrong.
# SIGKILL at random points: stray temporary files at worst, which the next
# run removes; every sibling under a final name still decodes.  And two
# kiln processes on one tree at once both finish with a correct result.
. "$(dirname "$0")/lib.sh"
ROUNDS=${SIGNAL_ROUNDS:-12}

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

all_siblings_decode() {
	local d=$1 s bad=0
	while IFS= read -r -d '' s; do
		decodes_to "$s" "${s%.*}" || { echo "bad sibling: $s" >&2; bad=1; }
	done < <(find "$d" -type f \( -name '*.gz' -o -name '*.br' \) ! -name archive.tar.gz -print0)
	return $bad
}

interrupted=0
for round in $(seq 1 "$ROUNDS"); do
	for sig in INT TERM; do
		rm -rf "$T/t" && cp -a "$T/src" "$T/t"
		"$KILN" -q --brotli "$T/t" 2>"$T/sig.log" &
		pid=$!
		sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
		kill -s "$sig" "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
		want=$((128 + $(kill -l "$sig")))
		[ $rc -eq "$want" ] && interrupted=$((interrupted + 1))
		check "SIG$sig round $round: died of the signal or finished (rc $rc)" [ "$rc" -eq "$want" -o "$rc" -eq 0 ]
		check "SIG$sig round $round: no temporary file" [ -z "$(find "$T/t" -name '.kiln-*.tmp')" ]
		check "SIG$sig round $round: every sibling decodes" all_siblings_decode "$T/t"
		check "SIG$sig round $round: sources untouched" [ "$(sources_digest "$T/t")" = "$digest" ]
		check "SIG$sig round $round: no error printed" not grep -q '^kiln: ' "$T/sig.log"
	done
done
check "most rounds were really interrupted ($interrupted of $((2 * ROUNDS)))" [ "$interrupted" -ge "$ROUNDS" ]

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
check "after SIGKILLs: stray temporary files removed" [ -z "$(find "$T/k" -name '.kiln-*.tmp')" ]
check "after SIGKILLs: kiln check passes" "$KILN" check -q "$T/k"

# What an interrupted run wrote is still known to be kiln's: its journal
# lets the next run remove siblings gone stale in between.
for round in 1 2 3; do
	rm -rf "$T/j" && cp -a "$T/src" "$T/j"
	[ "$round" -gt 1 ] && "$KILN" -q --brotli "$T/j" # round 2+: over a previous manifest
	[ "$round" -gt 1 ] && for f in "$T/j"/c*/assets/app.js; do echo "// changed" >>"$f"; done
	touch "$T/mark"
	sleep 0.02
	"$KILN" -q --brotli "$T/j" &
	pid=$!
	for _ in $(seq 600); do
		[ "$(find "$T/j" -cnewer "$T/mark" -name '*.js.gz' | head -n 2 | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	# the interrupted run wrote some siblings; now make their sources stale
	mapfile -t written < <(find "$T/j" -name '*.js.gz' -cnewer "$T/mark" | head -n 4)
	check "journal round $round: the interrupted run wrote siblings" [ "${#written[@]}" -ge 2 ]
	rm -f "${written[0]%.gz}"                          # deleted
	[ -n "${written[1]:-}" ] && echo "x" >"${written[1]%.gz}"   # now small
	"$KILN" -q --brotli "$T/j" 2>"$T/j.log"
	check "journal round $round: next run exits 0" [ $? -eq 0 ]
	check "journal round $round: no 'not written by kiln' warning" not grep -q 'not written by kiln' "$T/j.log"
	check "journal round $round: deleted source's siblings gone" [ ! -e "${written[0]}" ]
	check "journal round $round: deleted source's siblings gone" [ ! -e "${written[0]%.gz}.br" ]
	check "journal round $round: small source's siblings gone" [ ! -e "${written[1]:-/nonexistent}" ]
	check "journal round $round: every sibling decodes" all_siblings_decode "$T/j"
	check "journal round $round: kiln check passes" "$KILN" check -q "$T/j"
	check "journal round $round: no journal left" [ -z "$(find "$T/j" -name '.kiln-journal-*')" ]
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
check "two at once: every sibling decodes" all_siblings_decode "$T/two"
check "two at once: the manifest is whole and matches" "$KILN" check -q "$T/two"
check "two at once: no temporary file" [ -z "$(find "$T/two" -name '.kiln-*.tmp')" ]

finish
