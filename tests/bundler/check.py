#!/usr/bin/env python3
"""check.py - kiln's immutable files against the bundler's own account.

usage: check.py [--misses PERCENT] [--tally FILE] LABEL DIST HASHED [REASON...]

HASHED lists, one a line, the paths under DIST of the outputs the bundler
named with a content hash (from its own manifest, metafile, stats or
bundle graph).  Every other file of DIST's manifest is one it did not hash
(index.html, files copied from public/).  kiln's manifest (DIST/
kiln-manifest.json) must mark every hashed output immutable, with a
"fingerprint" that is part of its name, and no other file; with REASONs,
every immutable file's "immutable" must be one of them.  Prints the counts;
exits 1 on any miss or false positive.

With --misses PERCENT (a run without the bundler's account, where kiln
has only the names and the tree), misses are counted and each printed,
and the run fails only when they are more than PERCENT of the hashed
outputs: a random hash reads as a name someone could have chosen a few
times in a hundred (docs/cache-control.md, "What it costs"), and kiln
leaves such a name revalidated rather than risk a hand-named file; a false
positive still fails the run.  The last line says how many were missed,
of which kinds (a bundler's code, .js/.css/.map, or its other outputs);
with --tally, the counts are also added to FILE (tally.py sums them).
"""
import json
import os
import re
import sys

CODE = re.compile(r"\.(js|mjs|cjs|css|map|wasm)$")


def main():
    args = sys.argv[1:]
    allowed = tally = None
    while args[:1] in (["--misses"], ["--tally"]):
        if args[0] == "--misses":
            allowed = float(args[1])
        else:
            tally = args[1]
        args = args[2:]
    label, dist, hashed_path = args[:3]
    reasons = set(args[3:])
    hashed = {l.strip() for l in open(hashed_path) if l.strip()}
    files = json.load(open(os.path.join(dist, "kiln-manifest.json")))["files"]
    bad, missed, false_pos, why = [], [], [], {}
    for h in sorted(hashed):
        if h not in files:
            bad.append(f"{h}: a hashed output not in kiln's manifest")
    for name, e in sorted(files.items()):
        imm = e.get("immutable")
        if imm:
            why[imm] = why.get(imm, 0) + 1
        if name in hashed and not imm:
            missed.append(name)
        elif name not in hashed and imm:
            false_pos.append(f"{name} ({imm})")
        if imm and reasons and imm not in reasons:
            bad.append(f"{name}: immutable by {imm}, not {' or '.join(sorted(reasons))}")
        fp = e.get("fingerprint")
        if name in hashed and imm and fp is not None and fp not in os.path.basename(name):
            bad.append(f"{name}: fingerprint {fp} is not in its name")
    if not hashed:
        bad.append("the bundler hashed nothing")
    if len(files) == len(hashed):
        bad.append("no unhashed file to tell apart")
    for m in missed:
        print(f"{label}: missed: {m}", file=sys.stderr)
    for f in false_pos:
        print(f"{label}: false positive: {f}", file=sys.stderr)
    for b in bad:
        print(f"{label}: {b}", file=sys.stderr)
    code = sum(1 for m in missed if CODE.search(m))
    share = 100.0 * len(missed) / max(len(hashed), 1)
    print(f"{label}: {len(files)} files, {len(hashed)} hashed by the bundler: {len(missed)} missed "
          f"({share:.1f}%: {code} of code, {len(missed) - code} other), "
          f"{len(false_pos)} false positives; immutable by {json.dumps(why, sort_keys=True)}",
          file=sys.stderr)
    if tally:
        with open(tally, "a") as f:
            f.write(f"{len(hashed)} {len(missed)} {code}\n")
    too_many = missed and (allowed is None or share > allowed)
    if too_many and allowed is not None:
        print(f"{label}: more than {allowed}% missed", file=sys.stderr)
    sys.exit(1 if too_many or false_pos or bad else 0)


if __name__ == "__main__":
    main()
