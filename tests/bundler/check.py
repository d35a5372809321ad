#!/usr/bin/env python3
"""check.py - kiln's immutable files against the bundler's own account.

usage: check.py [--unprovable-media] LABEL DIST HASHED [REASON...]

HASHED lists, one a line, the paths under DIST of the outputs the bundler
named with a content hash (from its own manifest, metafile, stats or
bundle graph).  Every other file of DIST's manifest is one it did not hash
(index.html, files copied from public/).  kiln's manifest (DIST/
kiln-manifest.json) must mark every hashed output immutable, with a
"fingerprint" that is part of its name, and no other file; with REASONs,
every immutable file's "immutable" must be one of them.  Prints the counts;
exits 1 on any miss or false positive.

With --unprovable-media, one kind of miss is allowed (and counted): an
output that is no script or style sheet (an image, a font) in a directory
that also holds a file the bundler did not hash, of no script or style
sheet either, named in the same shape (NAME-TOKEN.EXT with a token of the
same length: "assets/i0-DhfSzacz.svg" beside "assets/brand-DarkMode.svg"
from public/).  The tree alone cannot tell those two apart, and kiln would
rather miss one than call a hand-named file immutable; the bundler's
manifest proves it.
"""
import json
import os
import re
import sys

CODE = re.compile(r"\.(js|mjs|cjs|css)(\.map)?$")
SHAPE = re.compile(r"^(.+)([-.])([A-Za-z0-9_-]+)(\.[^.]+)$")


def shape(name):
    """(directory, separator, token length) of NAME, or None."""
    m = SHAPE.match(os.path.basename(name))
    return m and (os.path.dirname(name), m.group(2), len(m.group(3)))


def unprovable(name, hashed, files):
    """Is NAME a non-code output beside an unhashed non-code file of its shape?"""
    if CODE.search(name) or not shape(name):
        return False
    return any(o not in hashed and not CODE.search(o) and shape(o) == shape(name)
               for o in files)


def main():
    args = sys.argv[1:]
    media = args[:1] == ["--unprovable-media"]
    if media:
        args = args[1:]
    label, dist, hashed_path = args[:3]
    reasons = set(args[3:])
    hashed = {l.strip() for l in open(hashed_path) if l.strip()}
    files = json.load(open(os.path.join(dist, "kiln-manifest.json")))["files"]
    bad, missed, false_pos, why, allowed = [], [], [], {}, []
    for h in sorted(hashed):
        if h not in files:
            bad.append(f"{h}: a hashed output not in kiln's manifest")
    for name, e in sorted(files.items()):
        imm = e.get("immutable")
        if imm:
            why[imm] = why.get(imm, 0) + 1
        if name in hashed and not imm and media and unprovable(name, hashed, files):
            allowed.append(name)
        elif name in hashed and not imm:
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
    for a in allowed:
        print(f"{label}: not provable from the tree alone (a hand-named file of its shape "
              f"beside it): {a}", file=sys.stderr)
    for f in false_pos:
        print(f"{label}: false positive: {f}", file=sys.stderr)
    for b in bad:
        print(f"{label}: {b}", file=sys.stderr)
    print(f"{label}: {len(files)} files, {len(hashed)} hashed by the bundler: {len(missed)} missed"
          f"{f' ({len(allowed)} more not provable)' if allowed else ''}, "
          f"{len(false_pos)} false positives; immutable by {json.dumps(why, sort_keys=True)}",
          file=sys.stderr)
    sys.exit(1 if missed or false_pos or bad else 0)


if __name__ == "__main__":
    main()
