#!/usr/bin/env python3
"""tally.py - the misses of a bundler test's runs without the bundler's account.

usage: tally.py LABEL FILE PERCENT

FILE holds a line "HASHED MISSED CODE-MISSED" per run of check.py
--tally.  Prints the sums (and how many of the missed were a bundler's
code); exits 1 when more than PERCENT of all the hashed outputs were
missed, or when FILE holds no run.
"""
import sys


def main():
    label, path, allowed = sys.argv[1], sys.argv[2], float(sys.argv[3])
    runs = [tuple(int(x) for x in l.split()) for l in open(path) if l.strip()]
    hashed = sum(r[0] for r in runs)
    missed = sum(r[1] for r in runs)
    code = sum(r[2] for r in runs)
    share = 100.0 * missed / max(hashed, 1)
    print(f"{label}: without the bundler's account, {missed} of {hashed} hashed outputs missed "
          f"in {len(runs)} runs ({share:.2f}%: {code} of code, {missed - code} other)",
          file=sys.stderr)
    sys.exit(0 if runs and share <= allowed else 1)


if __name__ == "__main__":
    main()
