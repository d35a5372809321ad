#!/usr/bin/env python3
"""check.py - kiln's immutable files against the bundler's own account.

usage: check.py LABEL DIST HASHED [REASON...]

HASHED lists, one a line, the paths under DIST of the outputs the bundler
named with a content hash (from its own manifest, metafile, stats or
bundle graph).  Every other file of DIST's manifest is one it did not hash
(index.html, files copied from public/).  kiln's manifest (DIST/
kiln-manifest.json) must mark every hashed output immutable, with a
"fingerprint" that is part of its name, and no other file; with REASONs,
every immutable file's "immutable" must be one of them.  Prints the counts;
exits 1 on any miss or false positive.
"""
import json
import os
import sys


def main():
    label, dist, hashed_path = sys.argv[1:4]
    reasons = set(sys.argv[4:])
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
    print(f"{label}: {len(files)} files, {len(hashed)} hashed by the bundler: {len(missed)} missed, "
          f"{len(false_pos)} false positives; immutable by {json.dumps(why, sort_keys=True)}",
          file=sys.stderr)
    sys.exit(1 if missed or false_pos or bad else 0)


if __name__ == "__main__":
    main()
