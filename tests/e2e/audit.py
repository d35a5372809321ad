#!/usr/bin/python3
"""audit.py TREE [options] - the first invariant, checked independently of kiln.

Every byte a server can send from TREE is the current source's:
  - every sibling (NAME.gz, NAME.br, NAME.zst next to an existing NAME)
    decodes, with Python's own decoders (a zstd frame's window at most
    8 MiB, RFC 9659), to exactly NAME's bytes; has NAME's permission
    bits and mtime (to the nanosecond); and no two of {NAME, its siblings}
    have the same size (a server's ETag is mtime and size);
  - no orphan: a NAME.gz or NAME.br whose NAME does not exist is a file the
    manifest lists as an asset of its own (a user's download), never one it
    records as a sibling;
  - no stray file: no temporary file or staging directory of kiln's, and no
    journal unless --allow-journal;
  - the manifest matches the disk: every entry's size and digests are the
    file's, every sibling it records exists with its size and digest, every
    sibling on disk is recorded, no sibling is left recorded as stale, and
    (unless --partial, for a run that was interrupted) every asset on disk
    has an entry.  With --no-manifest, there must be no manifest, and
    siblings are checked without one.

Options: --manifest PATH (default TREE/kiln-manifest.json), --partial,
--allow-journal, --no-manifest, --quiet.  Prints one line per problem and
exits 1 if there is any.
"""
import base64
import hashlib
import json
import os
import re
import stat
import sys
import zlib

import brotli
import zstandard

SUFFIXES = {b".gz": "gzip", b".br": "br", b".zst": "zstd"}
HTTP_ZSTD_WINDOW = 8 << 20  # RFC 9659
TEMP = re.compile(rb"^\.kiln-[A-Za-z0-9]{6}\.tmp$")
STAGE = re.compile(rb"^\.kiln-stage-[A-Za-z0-9]{6}$")
JOURNAL = re.compile(rb"^\.kiln-journal-[A-Za-z0-9]{6}$")
OWN = {b"kiln-manifest.json", b"kiln.nginx.conf"}


def decode(coding, data):
    if coding == "gzip":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = d.decompress(data) + d.flush()
        if not d.eof or d.unused_data:
            raise ValueError("not one complete gzip member")
        return out
    if coding == "zstd":
        params = zstandard.get_frame_parameters(data)
        if params.window_size > HTTP_ZSTD_WINDOW:
            raise ValueError("zstd window over 8 MiB")
        d = zstandard.ZstdDecompressor(max_window_size=HTTP_ZSTD_WINDOW).decompressobj()
        out = d.decompress(data)
        if not d.eof or d.unused_data:
            raise ValueError("not one complete zstd frame")
        return out
    return brotli.decompress(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Audit:
    def __init__(self, tree, opts):
        self.tree = os.fsencode(tree)
        self.opts = opts
        self.problems = []

    def problem(self, msg):
        self.problems.append(msg)
        if not self.opts.get("quiet"):
            print("audit: " + msg, file=sys.stderr)

    def walk(self):
        files, dirs = {}, []
        for d, subdirs, names in os.walk(self.tree):
            for s in subdirs:
                if STAGE.match(s):
                    self.problem(f"stray staging directory {os.path.join(d, s)!r}")
            for n in names:
                full = os.path.join(d, n)
                st = os.lstat(full)
                if stat.S_ISREG(st.st_mode):
                    files[os.path.relpath(full, self.tree)] = st
        return files

    def load_manifest(self):
        path = self.opts.get("manifest") or os.path.join(self.tree, b"kiln-manifest.json")
        path = os.fsencode(path)
        if self.opts.get("no_manifest"):
            if os.path.exists(path):
                self.problem("a manifest exists after a --no-manifest run")
            return None
        if not os.path.exists(path):
            self.problem("no manifest")
            return None
        doc = json.loads(read(path).decode("utf-8"))
        entries = {}
        for key, e in doc.get("files", {}).items():
            rel = base64.b64decode(e["path_base64"]) if "path_base64" in e else key.encode()
            entries[rel] = e
        for key, s in doc.get("stale_siblings", {}).items():
            self.problem(f"{key}: recorded as a stale sibling")
        return entries

    def run(self):
        files = self.walk()
        entries = self.load_manifest()
        recorded = {}  # sibling rel -> (coding, entry)
        if entries is not None:
            for rel, e in entries.items():
                for coding, enc in e.get("encodings", {}).items():
                    suffix = {v: k for k, v in SUFFIXES.items()}[coding]
                    recorded[rel + suffix] = (coding, e)
        siblings = {}
        for rel, st in files.items():
            base = os.path.basename(rel)
            if TEMP.match(base):
                self.problem(f"stray temporary file {rel!r}")
                continue
            if JOURNAL.match(base):
                if not self.opts.get("allow_journal"):
                    self.problem(f"stray journal {rel!r}")
                continue
            suffix = next((s for s in SUFFIXES if rel.endswith(s) and len(rel) > len(s)), None)
            if suffix is None:
                continue
            src = rel[: -len(suffix)]
            if src in files:
                siblings.setdefault(src, []).append((rel, SUFFIXES[suffix]))
            elif rel in recorded:
                self.problem(f"{rel!r}: orphan (its source is gone) recorded as a sibling")
            elif entries is None or rel not in entries:
                self.problem(f"{rel!r}: named like a sibling, no source, not an asset of the manifest")
        for src, sibs in siblings.items():
            self.check_siblings(src, files[src], sibs, files, recorded)
        if entries is not None:
            self.check_entries(entries, files, siblings)
        return 1 if self.problems else 0

    def check_siblings(self, src, src_st, sibs, files, recorded):
        data = read(os.path.join(self.tree, src))
        sizes = {src_st.st_size: src}
        for rel, coding in sibs:
            st = files[rel]
            if st.st_size in sizes:
                self.problem(f"{rel!r}: same size as {sizes[st.st_size]!r} ({st.st_size})")
            sizes[st.st_size] = rel
            try:
                ok = decode(coding, read(os.path.join(self.tree, rel))) == data
            except Exception as e:  # a damaged stream is a problem, not a crash
                ok = False
            if not ok:
                self.problem(f"{rel!r}: does not decode to its source")
            if (st.st_mode & 0o777) != (src_st.st_mode & 0o777):
                self.problem(f"{rel!r}: mode {st.st_mode & 0o777:o}, source {src_st.st_mode & 0o777:o}")
            if st.st_mtime_ns != src_st.st_mtime_ns:
                self.problem(f"{rel!r}: mtime differs from its source's")
            if not self.opts.get("no_manifest") and rel not in recorded:
                self.problem(f"{rel!r}: sibling on disk, not recorded in the manifest")

    def check_entries(self, entries, files, siblings):
        sibling_files = {rel for v in siblings.values() for rel, _ in v}
        assets = {r for r in files if r not in OWN and r not in sibling_files
                  and not TEMP.match(os.path.basename(r)) and not JOURNAL.match(os.path.basename(r))}
        for rel, e in entries.items():
            if rel not in files:
                self.problem(f"{rel!r}: in the manifest, not in the tree")
                continue
            data = read(os.path.join(self.tree, rel))
            if len(data) != e["size"] or hashlib.sha256(data).hexdigest() != e["sha256"]:
                self.problem(f"{rel!r}: manifest size or sha256 is not the file's")
            sri = "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
            if sri != e["integrity"]:
                self.problem(f"{rel!r}: integrity is not the file's")
            for coding, enc in e.get("encodings", {}).items():
                suffix = {v: k for k, v in SUFFIXES.items()}[coding]
                sib = rel + suffix
                if sib not in files:
                    self.problem(f"{sib!r}: recorded, missing")
                    continue
                sdata = read(os.path.join(self.tree, sib))
                if len(sdata) != enc["size"] or hashlib.sha256(sdata).hexdigest() != enc["sha256"]:
                    self.problem(f"{sib!r}: recorded size or sha256 is not the file's")
        if not self.opts.get("partial"):
            for rel in sorted(assets - set(entries)):
                self.problem(f"{rel!r}: asset not in the manifest")


def main(argv):
    opts, tree = {}, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--manifest":
            opts["manifest"] = argv[i + 1]
            i += 1
        elif a in ("--partial", "--allow-journal", "--no-manifest", "--quiet"):
            opts[a[2:].replace("-", "_")] = True
        else:
            tree = a
        i += 1
    if not tree:
        print(__doc__, file=sys.stderr)
        return 2
    return Audit(tree, opts).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
