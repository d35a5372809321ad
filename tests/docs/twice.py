#!/usr/bin/env python3
"""twice.py TOP [WORDS] - no passage is said twice in README.md, docs/ and
the man page.

The README is the front door, docs/ explains by topic and man/kiln.1 is the
reference for options: each thing is said in one of them and the others
link to it.  So no run of WORDS (default 20) words of prose, read with case,
punctuation and markup dropped, stands in two of these files, or twice in
one.  Fenced code blocks (commands, configuration, output) are left out:
showing the same command twice is not saying a thing twice.  The man page
is read as mandoc renders it.  Exit 1 with one line per repeated passage."""
import os
import re
import subprocess
import sys

top = os.path.abspath(sys.argv[1])
size = int(sys.argv[2]) if len(sys.argv) > 2 else 20


def markdown(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^```.*?^```", " ", text, flags=re.S | re.M)
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)


def man(path):
    out = subprocess.run(["mandoc", "-Tascii", path], capture_output=True, text=True,
                         check=True).stdout
    return re.sub(r".\x08", "", out)


texts = {"README.md": markdown(os.path.join(top, "README.md"))}
for f in sorted(os.listdir(os.path.join(top, "docs"))):
    if f.endswith(".md"):
        texts["docs/" + f] = markdown(os.path.join(top, "docs", f))
texts["man/kiln.1"] = man(os.path.join(top, "man", "kiln.1"))

where = {}
for name, text in texts.items():
    words = re.findall(r"[a-z0-9]+", text.lower())
    for i in range(len(words) - size + 1):
        where.setdefault(" ".join(words[i:i + size]), []).append(name)

# one line per pair of files (or file twice), with the first passage found
repeated = {}
for passage, names in where.items():
    if len(names) > 1:
        repeated.setdefault(tuple(sorted(names)), passage)
for names, passage in sorted(repeated.items()):
    print(f"twice: {' and '.join(names)} both say: \"{passage} ...\"", file=sys.stderr)
print(f"twice: {len(texts)} files, {len(repeated)} passages of {size} words said twice",
      file=sys.stderr)
sys.exit(1 if repeated else 0)
