#!/usr/bin/env bash
# serve_hostile.sh - kiln serve against hostile and malformed requests
# (serve_hostile.py: traversal in every spelling, %00, overlong lines,
# header floods, pipelining, absurd Range sets, slow senders, junk, and a
# seeded mutation fuzzer), with a secret planted outside the tree and
# reachable through links that replace assets after kiln ran: nothing
# outside the tree is ever sent, and the server goes on serving the rest
# right (serve_check.py on a sample, after).  Then its limits
# (serve_limits.py): slow senders from one address past --max-connections,
# and a tree larger than its descriptor limit.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
trap kiln_serve_stop EXIT
SECRET=kiln-secret-$RANDOM$RANDOM

bash "$E2E/serve_tree.sh" "$T/site" || fail "serve_tree.sh"
"$KILN" -q --brotli --zstd "$T/site"
check "kiln --brotli --zstd on the serving tree" [ $? -eq 0 ]
# the secret beside the tree, and links to it where assets were
echo "$SECRET" >"$T/secret.txt"
mkdir -p "$T/evil-docs" && for f in "$T/site/docs/"*; do echo "$SECRET" >"$T/evil-docs/${f##*/}"; done
mv "$T/site/docs" "$T/docs-real" && ln -s "$T/evil-docs" "$T/site/docs"
mv "$T/site/noise.js" "$T/noise-real.js" && ln -s ../secret.txt "$T/site/noise.js"
ln -s ../secret.txt "$T/site/link-out.txt"
ln -s "$T" "$T/site/link-dir"
if kiln_serve_start "$T/site" --timeout 3; then
	check "serve_hostile.py: nothing outside the tree, still serving" \
		$PY "$E2E/serve_hostile.py" --port "$PORT" --tree "$T/site" --secret "$SECRET" --fuzz 1000
	check "the server is still running" kill -0 "$SERVE_PID"
	check "the access log has the requests, and no 200 for the links' names" \
		eval "grep -q '\"GET /noise.js HTTP/1.1\" 404 ' '$LOG' && ! grep -q '\"[A-Z]* /\(noise\.js\|link-out\.txt\|docs/[^ ]*\) HTTP/1.[01]\" 200 ' '$LOG'"
	rm "$T/site/docs" "$T/site/noise.js" && mv "$T/docs-real" "$T/site/docs" && mv "$T/noise-real.js" "$T/site/noise.js"
	# siblings not on disk at load are left out until the next load
	kill -HUP "$SERVE_PID"
	for _ in $(seq 40); do grep -q '^kiln: reloaded' "$SERVE_ERR" && break; sleep 0.1; done
	check "SIGHUP: reloaded with the links undone" grep -q '^kiln: reloaded' "$SERVE_ERR"
	check "serve_check on a sample after it (the links undone)" \
		$PY "$E2E/serve_check.py" --not-acceptable --base "http://127.0.0.1:$PORT/" --tree "$T/site" --sample 4
	kiln_serve_stop
	check "SIGTERM after it all: exit 0 ($SERVE_STATUS)" [ "$SERVE_STATUS" = 0 ]
else
	fail "kiln serve starts"
fi

# ---- Limits.  More slow senders from one address than --max-connections:
# the limit per address (128 by default) leaves room for another one.
if kiln_serve_start "$T/site" --max-connections 150 --timeout 10; then
	check "170 slow senders from 127.0.0.1, --max-connections 150: 127.0.0.2 is answered" \
		$PY "$E2E/serve_limits.py" --port "$PORT" --tree "$T/site" --slow 170
	kiln_serve_stop
fi
# A tree of 600 files under a descriptor limit of 256: a quarter of it
# kept open, the rest opened for each request, the connections lowered to
# what is left; every file served, the limit never reached.
mkdir -p "$T/many"
for i in $(seq 600); do printf 'line %s of file %s\n' $(seq 40) "$i" >"$T/many/f$i.txt"; done
cp "$T/site/index.html" "$T/many/"
"$KILN" -q "$T/many"
printf '#!/bin/sh\nulimit -n 256\nexec "%s" "$@"\n' "$KILN" >"$T/kiln-256" && chmod +x "$T/kiln-256"
if KILN=$T/kiln-256 kiln_serve_start "$T/many"; then
	check "ulimit -n 256: the startup line says the connections it lowered to" \
		grep -q '; [0-9]* connections at most, for the descriptor limit' "$SERVE_ERR"
	check "ulimit -n 256: 601 files with gzip, each its bytes, under 256 descriptors" \
		$PY "$E2E/serve_limits.py" --port "$PORT" --tree "$T/many" --sweep --pid "$SERVE_PID" --fd-limit 256
	check "... and it still serves the page" eval "curl -s 'http://127.0.0.1:$PORT/' | cmp -s - '$T/many/index.html'"
	# every place to keep a file open taken (by a scan of every file): the
	# poll loads the table anew, so the old one's files close
	fds=$(ls "/proc/$SERVE_PID/fd" | wc -l)
	for _ in $(seq 50); do [ "$(ls "/proc/$SERVE_PID/fd" | wc -l)" -lt 50 ] && break; sleep 0.1; done
	check "... the files kept open closed by the next poll ($fds descriptors, then $(ls "/proc/$SERVE_PID/fd" | wc -l))" \
		[ "$(ls "/proc/$SERVE_PID/fd" | wc -l)" -lt 50 ]
	check "... without a 'reloaded' line" not grep -q '^kiln: reloaded' "$SERVE_ERR"
	check "... and the page again" eval "curl -s 'http://127.0.0.1:$PORT/' | cmp -s - '$T/many/index.html'"
	kiln_serve_stop
fi
finish
