#!/usr/bin/env python3
"""commands.py - the commands a user copies out of the documentation, and
which test runs each.

usage: commands.py TOP list            every command block: ID, kind, commands
       commands.py TOP get ID          the block's text, as it stands
       commands.py TOP commands ID     its commands, one a line (NUL-ended),
                                       the ones NOT_RUN lists left out
       commands.py TOP check           every block is run by a test

The pages are README.md, docs/*.md and every README.md of packaging/npm/.
A command block is a fenced block a user would paste to run something:
  sh       ```sh (or bash, shell): each logical line (a trailing backslash
           joins the next) is a command;
  console  an unlabelled block whose lines start with "$ ": each such line
           (the rest is the output shown);
  make     ```make: the block is a Makefile;
  yaml     ```yaml: a CI or cluster recipe, its `run:`, `script:` and
           `command:` entries the commands;
  scripts  ```json with "scripts": a package.json's npm scripts;
  js       ```js: a bundler config or a program, the block one command.
Server configurations, outputs and synopses are not commands (the serve_*
tests load kiln's snippets in configurations of their own).

A block's ID is PAGE#ANCHOR (the heading it is under, as GitHub anchors
it), with :N when the section has more than one command block.  A test
runs a block by taking it from here (`get` or `commands`) with its ID
written out in quotes, so `check` can find, for every block, a test under
tests/ that names its ID as a string, unless every command of the block is in NOT_RUN with
the reason it cannot run in CI.  `check` also fails on a NOT_RUN entry
that matches no command (the page changed).  `get` and `commands` exit 1
for an ID that is not there, so the test that runs it fails when the
page moves the block.
"""
import os
import re
import sys

# (page, command) -> why no test runs it.  Keep it short.
NOT_RUN = {
    ("docs/install.md", "npm install --save-dev kiln-precompress"):
        "the packages are not published on the registry yet; npm_recipes and npm_vite install them from the tarballs",
    ("packaging/npm/kiln-precompress/README.md", "npm install --save-dev kiln-precompress"):
        "the same, in the package's own README",
    ("docs/shards.md", "parallel -S host1,host2,host3,host4 --workdir /shared "
                       "kiln --best --cache /shared/kiln-cache --shard {}/4 dist ::: 1 2 3 4"):
        "needs four ssh hosts that mount /shared; the line before runs the same shards with parallel -j4",
    ("docs/performance.md", None):
        "a benchmark of many minutes (tests/bench/selftest.sh runs its scripts on small inputs)",
    ("docs/reruns.md", "tests/bench/incremental.sh build/kiln /path/to/corpus-full 3"):
        "a benchmark: cold runs of minutes each on a corpus of 6,000 files the reader provides",
    ("docs/serving.md", 'SERVE_ROWS="2 3 4 5 6 7 8" tests/bench/serve.sh build/kiln 8 7'):
        "a benchmark of minutes (tests/bench/selftest.sh runs it briefly)",
    ("docs/install.md", None, "packaging/arm64/build.sh"):
        "cross-builds the arm64 binary: tests/all.sh runs the same packaging/arm64/build.sh into the same "
        "build-static/arm64 before the arm64 tests",
    ("docs/install.md", None, "packaging/wasm/build.sh"):
        "builds the WebAssembly kiln: tests/all.sh runs the same packaging/wasm/build.sh into the same "
        "build-static/wasm, and wasm.sh runs its kiln.js",
}


def pages(top):
    out = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(top, "docs")) if f.endswith(".md"))
    for d, _, files in sorted(os.walk(os.path.join(top, "packaging", "npm"))):
        if "README.md" in files:
            out.append(os.path.relpath(os.path.join(d, "README.md"), top))
    return out


def anchor(text, seen):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    a = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    n = seen.get(a, 0)
    seen[a] = n + 1
    return a if n == 0 else "%s-%d" % (a, n)


def logical_lines(text):
    out, cur = [], ""
    for line in text.split("\n"):
        s = line.strip()
        if cur:
            cur += " " + s
        else:
            cur = s
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        if cur and not cur.startswith("#"):
            out.append(cur)
        cur = ""
    return out


def yaml_commands(text):
    """The run:, script: and command: entries of a YAML recipe, in order."""
    import yaml
    out = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "run" and isinstance(x, str):
                    out.append(x.strip())
                elif k == "script" and isinstance(x, list):
                    out.extend(str(c).strip() for c in x)
                elif k == "command" and isinstance(x, list):
                    out.append(x[-1].strip() if x[:2] == ["sh", "-c"] else " ".join(map(str, x)))
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(yaml.safe_load(text))
    return out


class Block:
    def __init__(self, page, section, lang, text, line):
        self.page, self.section, self.lang, self.text, self.line = page, section, lang, text, line
        self.id = None
        if lang in ("sh", "bash", "shell"):
            self.kind, self.commands = "sh", logical_lines(text)
        elif lang == "" and any(l.startswith("$ ") for l in text.split("\n")):
            self.kind = "console"
            self.commands = [l[2:].strip() for l in text.split("\n") if l.startswith("$ ")]
        elif lang == "make":
            self.kind = "make"
            self.commands = [l.strip() for l in text.split("\n") if l.startswith("\t")]
        elif lang == "yaml":
            self.kind, self.commands = "yaml", yaml_commands(text)
        elif lang in ("js", "javascript", "mjs"):
            self.kind, self.commands = "js", [text.strip()]
        elif lang == "json" and '"scripts"' in text:
            import json
            self.kind, self.commands = "scripts", list(json.loads(text)["scripts"].values())
        else:
            self.kind, self.commands = None, []

    def not_run(self, command):
        """Why COMMAND of this block is not run, or None."""
        for key, why in NOT_RUN.items():
            if key[0] != self.page:
                continue
            if key[1] == command or (key[1] is None and (len(key) == 2 or key[2] in command)):
                return why
        return None


def blocks(top):
    out = []
    for page in pages(top):
        lines = open(os.path.join(top, page), encoding="utf-8").read().split("\n")
        seen, section, i = {}, "", 0
        while i < len(lines):
            m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
            h = re.match(r"^#{1,6} (.*?)\s*$", lines[i])
            if h:
                section = anchor(h.group(1), seen)
            elif m:
                indent = len(m.group(1))
                j = i + 1
                while not re.match(r"^\s*```\s*$", lines[j]):
                    j += 1
                text = "\n".join(l[indent:] if l[:indent].strip() == "" else l for l in lines[i + 1:j])
                b = Block(page, section, m.group(2), text, i + 1)
                if b.kind:
                    out.append(b)
                i = j
            i += 1
    per = {}
    for b in out:
        per.setdefault((b.page, b.section), []).append(b)
    for (page, section), bs in per.items():
        for n, b in enumerate(bs, 1):
            b.id = "%s#%s" % (page, section) + (":%d" % n if len(bs) > 1 else "")
    return out


def find(top, ident):
    for b in blocks(top):
        if b.id == ident:
            return b
    sys.exit("commands.py: no command block %s (see: commands.py TOP list)" % ident)


def tests_text(top):
    here = os.path.abspath(__file__)
    out = []
    for d, _, files in os.walk(os.path.join(top, "tests")):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith((".sh", ".py", ".txt")) and os.path.abspath(p) != here:
                out.append(open(p, encoding="utf-8", errors="replace").read())
    return "\n".join(out)


def check(top):
    bad = []
    text = tests_text(top)
    used = set()
    for b in blocks(top):
        run = [c for c in b.commands if b.not_run(c) is None]
        for c in b.commands:
            if b.not_run(c) is not None:
                used.update(k for k in NOT_RUN if k[0] == b.page and
                            (k[1] == c or (k[1] is None and (len(k) == 2 or k[2] in c))))
        if not b.commands:
            bad.append("%s (line %d): a %s block with no command" % (b.id, b.line, b.kind))
        elif run and not re.search(r"""(['"])%s\1""" % re.escape(b.id), text):
            bad.append("%s (line %d): no test runs it (%s)" % (b.id, b.line, run[0][:70]))
    for k in NOT_RUN:
        if k not in used:
            bad.append("NOT_RUN %r: no such command in %s" % (k[1], k[0]))
    for line in bad:
        print("FAIL: " + line)
    n = len(blocks(top))
    print("commands.py: %d command blocks, %d not-run entries, %d failures" % (n, len(NOT_RUN), len(bad)))
    return 1 if bad else 0


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    top, what = argv[1], argv[2]
    if what == "list":
        for b in blocks(top):
            print("%s\t%s\t%d command(s)" % (b.id, b.kind, len(b.commands)))
            for c in b.commands:
                why = b.not_run(c)
                print("    %s%s" % (c, "   [not run: %s]" % why if why else ""))
        return 0
    if what == "get" and len(argv) == 4:
        sys.stdout.write(find(top, argv[3]).text + "\n")
        return 0
    if what == "commands" and len(argv) == 4:
        b = find(top, argv[3])
        for c in b.commands:
            if b.not_run(c) is None:
                sys.stdout.write(c + "\0")
        return 0
    if what == "check":
        return check(top)
    sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
