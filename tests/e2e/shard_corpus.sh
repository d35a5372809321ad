#!/usr/bin/env bash
# shard_corpus.sh - the shard proof on the full corpus (tests/corpus.sh:
# seven npm packages, about 6,500 files): four runners on four copies,
# their outputs gathered as artifact downloads gather them (mode and mtime
# lost), kiln merge, and the result equal to one run byte for byte: every
# sibling, mode and mtime, the manifest and the snippet.  Every coding at a
# low level, so that it takes seconds on 2 cores; the levels change nothing
# the comparison is about.  Run in the normal build only (shard.sh covers
# the sanitizers on a small tree).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/shard_lib.sh"

OPTS=(--gzip-level 6 --brotli --brotli-quality 4 --zstd --zstd-level 3 --no-progress -q)
unset CI_NODE_INDEX CI_NODE_TOTAL KILN_CACHE_DIR

bash "$(dirname "$0")/../corpus.sh" "$T/src" || { fail "cannot build the corpus (npm)"; finish; exit 1; }
nfiles=$(find "$T/src" -type f | wc -l)
check "the corpus is the full one (over 6,000 files)" [ "$nfiles" -gt 6000 ]

cp -a "$T/src" "$T/single"
"$KILN" "${OPTS[@]}" "$T/single" || fail "single run"
cp -a "$T/src" "$T/gathered"
for k in 1 2 3 4; do
	cp -a "$T/src" "$T/run$k"
	"$KILN" "${OPTS[@]}" --shard "$k/4" "$T/run$k" || fail "runner $k"
	gather "$T/src" "$T/run$k" "$T/gathered"
	rm -rf "$T/run$k"
done
"$KILN" merge -q "$T/gathered"
check "merge exits 0" [ $? -eq 0 ]
check "full corpus: gathered + merged = one run (every file, mode, mtime)" \
	[ "$(meta_digest "$T/gathered")" = "$(meta_digest "$T/single")" ]
check "full corpus: manifest byte for byte" cmp "$T/gathered/kiln-manifest.json" "$T/single/kiln-manifest.json"
check "full corpus: snippet byte for byte" cmp "$T/gathered/kiln.nginx.conf" "$T/single/kiln.nginx.conf"
check "full corpus: the manifest lists every file" \
	[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$T/gathered/kiln-manifest.json")" = "$nfiles" ]
nsib=$(find "$T/gathered" -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) | wc -l)
check "full corpus: thousands of siblings ($nsib)" [ "$nsib" -gt 5000 ]
# decoded in one process by audit.py's decoders (zlib, brotli, zstandard:
# Python's bindings, not kiln's code), with a source beside each
bad=$(PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "$0")" /usr/bin/python3 - "$T/gathered" <<'PY'
import os, sys
import audit
codings = {".gz": "gzip", ".br": "br", ".zst": "zstd"}
for top, _, names in os.walk(sys.argv[1]):
    for n in names:
        p = os.path.join(top, n)
        ext = os.path.splitext(n)[1]
        if ext not in codings or not os.path.isfile(p[: -len(ext)]):
            continue
        try:
            ok = audit.decode(codings[ext], audit.read(p)) == audit.read(p[: -len(ext)])
        except Exception:
            ok = False
        if not ok:
            print(p)
PY
)
check "full corpus: every sibling decodes to its source${bad:+: $bad}" [ -z "$bad" ]
check "full corpus: kiln check passes on the merged tree" "$KILN" check -q "$T/gathered"

finish
