#!/usr/bin/python3
"""layout.py TOP OBJECT... - the shape of lib/ that the design promises.

  1. No file of lib/ is longer than 800 lines.
  2. Only lib/tempfile.c calls rename(2): every file is put in place there
     (lib/host.c defines it, as the WebAssembly build's stand-in).
  3. Only lib/codec*.c (the codec table and its rows) names a content-coding:
     elsewhere in lib/, no string literal is a coding's token, suffix or
     option word or the name of an encoder library, no KILN_CODING_ constant
     names a coding, and no encoder library's header is included.  (Calls
     into libarchive name its own filters for output archives: those are
     archive formats, not content-codings, and are allowed.)
  4. cmd/ includes no header of lib/ but kiln.h.
  5. No link-level cycle between modules: module A depends on B when A's
     object uses a symbol B's defines (read with nm from OBJECT..., the
     objects of libkiln); a family of files sharing a prefix (codec_*,
     archive_*) counts as one module.
  6. Tests are named by what they test: no file under tests/ is named
     after the work that made it (an issue, a defect list, a session), and
     no test script's opening comment cites an issue number.
  7. Server helpers are defined once, in tests/e2e/lib.sh: no other test
     script defines a function that starts or stops nginx (the benchmarks
     of tests/bench/ set up their own, for measuring).
  8. One owner of a tree's outcome: only lib/ledger.c touches a field of
     struct kiln_ledger (the records, carried records, stale siblings and
     failure flags); every other file goes through ledger.h's functions.
  9. Sibling operations in one place: only the files named in
     FILE_CHANGERS (each for its own kind of file, with the reason) call
     unlink, unlinkat, kiln_beneath_unlink, chmod, fchmod, fchmodat,
     futimens, utimensat or utimes; a sibling is removed, and its mode and
     mtime changed, by lib/sibling.c alone.
 10. One per-file pipeline: only lib/run.c starts the thread pool
     (kiln_pool_run); dictionary deltas and every other per-file step run
     on its workers, through kiln_pipeline_file.
 11. Every module of lib/ longer than 150 lines (a family sharing a prefix,
     codec_*, archive_*, snippet_* or serve_*, counts as one module, its lines
     summed) has a
     unit test program, tests/unit/test_<module>.c, or is named in
     UNTESTED with the reason.
Prints one line per problem; exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

problems = []


def problem(msg):
    problems.append(msg)
    print("layout: " + msg, file=sys.stderr)


def strip_comments(text):
    """C source without its comments (string literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def codec_words(lib):
    """The names the codec rows give their codings and libraries."""
    words, headers = set(), set()
    for f in os.listdir(lib):
        if not (f.startswith("codec_") and f.endswith(".c")):
            continue
        text = open(os.path.join(lib, f), encoding="utf-8").read()
        for field in ("name", "suffix", "word"):
            words.update(re.findall(r"\.%s\s*=\s*\"([^\"]+)\"" % field, text))
        words.update(re.findall(r"\{\s*\"([^\"]+)\"\s*,\s*\w+_version\s*\}", text))
        headers.update(re.findall(r"#include\s*<([^>]+)>", text))
    common = {h for h in headers if "/" not in h and h.startswith(("std", "string", "pthread",
                                                                      "setjmp", "errno", "unistd",
                                                                      "limits", "stdio"))}
    return words, headers - common


def main():
    top, objects = sys.argv[1], sys.argv[2:]
    lib = os.path.join(top, "lib")
    words, headers = codec_words(lib)
    if not words:
        problem("found no codec rows in lib/codec_*.c")
    for f in sorted(os.listdir(lib)):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(lib, f)
        text = open(path, encoding="utf-8").read()
        if text.count("\n") > 800:
            problem(f"lib/{f}: {text.count(chr(10))} lines (at most 800)")
        code = strip_comments(text)
        # (host.c defines rename and renameat: the WebAssembly build's stand-ins)
        if f not in ("tempfile.c", "host.c") and re.search(r"\brename(at)?\s*\(", code):
            problem(f"lib/{f}: calls rename (only lib/tempfile.c may)")
        if f not in ("ledger.c", "ledger.h"):
            for lineno, line in enumerate(code.split("\n"), 1):
                if LEDGER_FIELD.search(line):
                    problem(f"lib/{f}:{lineno}: touches the ledger's fields "
                            "(only lib/ledger.c may; use ledger.h)")
        if f.endswith(".c") and f not in FILE_CHANGERS:
            for lineno, line in enumerate(code.split("\n"), 1):
                m = FILE_CHANGE.search(line)
                if m:
                    problem(f"lib/{f}:{lineno}: calls {m.group(1)} (siblings are removed and "
                            "changed by lib/sibling.c; see FILE_CHANGERS)")
        if f.endswith(".c") and f not in ("run.c", "pool.c") and re.search(r"\bkiln_pool_run\s*\(", code):
            problem(f"lib/{f}: starts a thread pool of its own (only lib/run.c may)")
        if f.startswith("codec"):
            continue
        for lineno, line in enumerate(code.split("\n"), 1):
            if re.search(r"\barchive_\w+\s*\(", line):
                continue
            for lit in re.findall(r"\"((?:[^\"\\]|\\.)*)\"", line):
                if lit in words:
                    problem(f"lib/{f}:{lineno}: names a coding: \"{lit}\"")
            for m in re.findall(r"\bKILN_CODING_([A-Z_]+)", line):
                if m not in ("OFF", "KEPT", "NO_GAIN", "LONG_NAME"):
                    problem(f"lib/{f}:{lineno}: KILN_CODING_{m} names a coding")
            for h in re.findall(r"#include\s*<([^>]+)>", line):
                if h in headers:
                    problem(f"lib/{f}:{lineno}: includes the encoder header <{h}>")
    for f in sorted(os.listdir(os.path.join(top, "cmd"))):
        text = open(os.path.join(top, "cmd", f), encoding="utf-8").read()
        for h in re.findall(r"#include\s*\"([^\"]+)\"", text):
            if h != "kiln.h" and os.path.exists(os.path.join(lib, h)):
                problem(f"cmd/{f}: includes lib/{h} (cmd/ sees only kiln.h)")
    check_tests(os.path.join(top, "tests"))
    check_unit_tests(lib, os.path.join(top, "tests", "unit"))
    check_cycles(objects)
    print(f"layout: {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


LEDGER_FIELDS = ("n", "records", "borrowed", "set", "strings", "carried", "ncarried", "carried_cap", "stale_lock",
                 "stale", "nstale", "stale_cap", "remove_failed", "cache_failed",
                 "foreign_stale", "record_lost")
LEDGER_FIELD = re.compile(r"\bledger\s*(?:\.|->)\s*(?:%s)\b" % "|".join(LEDGER_FIELDS))


# The files that may remove a file or change its mode or times, and why.
FILE_CHANGERS = {
    "sibling.c": "siblings and dictionary deltas (the one place)",
    "beneath.c": "the primitive sibling.c calls: beneath the top, no link followed",
    "tempfile.c": "its own temporary files, and their mode and times before the rename",
    "journal.c": "journals",
    "shard.c": "shard parts, once merged",
    "artifacts.c": "snippets kiln no longer writes",
    "cache.c": "cache entries (outside the tree)",
    "host.c": "none of its own: it defines the C library's calls, stand-ins in the WebAssembly build",
}
FILE_CHANGE = re.compile(r"\b(unlink|unlinkat|kiln_beneath_unlink|chmod|fchmod|fchmodat|futimens|"
                         r"utimensat|utimes)\s*\(")


HISTORY_NAME = re.compile(r"(issue|defect|firsthour|session|wave|regression)", re.I)
ISSUE_CITED = re.compile(r"\bissues? \d+\b", re.I)
SERVER_HELPER = re.compile(r"^\s*(?:function\s+)?([A-Za-z_]*(?:nginx)[A-Za-z_]*)\s*\(\)\s*\{",
                           re.M)
SERVER_VERB = re.compile(r"(^|_)(start|stop|run|launch|kill)(_|$)")


def check_tests(tests):
    for dirpath, dirnames, filenames in os.walk(tests):
        dirnames[:] = [d for d in dirnames if d not in ("data", "node_modules")]
        for f in filenames:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, os.path.dirname(tests))
            if HISTORY_NAME.search(f):
                problem(f"{rel}: named after the work that made it, not what it tests")
            if not f.endswith((".sh", ".py", ".c")):
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            head = text.split("\n\n", 1)[0]
            if ISSUE_CITED.search(head):
                problem(f"{rel}: its opening comment cites an issue: say what it tests")
            # (benchmarks configure their servers for measuring, not testing)
            if f.endswith(".sh") and rel != os.path.join("tests", "e2e", "lib.sh") and \
                    not rel.startswith(os.path.join("tests", "bench")):
                for name in SERVER_HELPER.findall(text):
                    if SERVER_VERB.search(name):
                        problem(f"{rel}: defines {name}(): nginx is started and stopped by "
                                "tests/e2e/lib.sh's nginx_start and nginx_stop")


# The modules of lib/ over 150 lines without a unit test program, and why.
# Each is tested end to end.
UNTESTED = {
    "archive": "deploy archives in and out through libarchive: tests/e2e/archive.sh",
    "artifacts": "writes what test_manifest and test_snippet check as text; files: e2e/artifacts.sh",
    "bundler": "reads real bundlers' manifests (tests/bundler/): e2e/immutable.sh",
    "jscan": "the member scan under the manifest's readers: unit/test_state_stream.c reads every "
             "text it takes both ways, and from a file through windows of a few bytes",
    "renames": "the evidence immutable.c decides with: unit/test_immutable.c (renames, bytes "
               "changed under a name), e2e/immutable.sh",
}
UNIT_FAMILIES = ("codec", "archive", "snippet", "serve")


def check_unit_tests(lib, unit):
    lines = {}
    for f in os.listdir(lib):
        if f.endswith(".c"):
            text = open(os.path.join(lib, f), encoding="utf-8").read()
            base = f[:-2]
            mod = base.split("_")[0] if base.startswith(UNIT_FAMILIES) else base
            lines[mod] = lines.get(mod, 0) + text.count("\n")
    for mod in sorted(lines):
        tested = os.path.exists(os.path.join(unit, f"test_{mod}.c"))
        if mod in UNTESTED:
            if tested:
                problem(f"lib/{mod}: has tests/unit/test_{mod}.c: take it out of UNTESTED")
            continue
        if lines[mod] > 150 and not tested:
            problem(f"lib/{mod}: {lines[mod]} lines and no tests/unit/test_{mod}.c "
                    "(or name it in UNTESTED with the reason)")
    for mod in UNTESTED:
        if mod not in lines:
            problem(f"UNTESTED names {mod}, not a module of lib/")


def module_of(obj):
    # archive's files are one module (archive_int.h); each codec row is a
    # module of its own: the table (codec.c) names the rows, no row calls
    # back into the table
    base = os.path.basename(obj).split(".")[0]
    return base.split("_")[0] if base.startswith("archive") else base


def check_cycles(objects):
    defined, used = {}, {}
    for obj in objects:
        mod = module_of(obj)
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                used.setdefault(mod, set()).add(name)
            elif kind in "TDRBC":
                defined[name] = mod
    edges = {m: set() for m in set(defined.values()) | set(used)}
    for mod, names in used.items():
        for n in names:
            d = defined.get(n)
            if d and d != mod:
                edges[mod].add(d)
    # strongly connected components (Tarjan)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        if len(comp) > 1:
            problem("modules call each other in a cycle: " + " <-> ".join(sorted(comp)))
    if not objects:
        problem("no objects given")


if __name__ == "__main__":
    sys.exit(main())
