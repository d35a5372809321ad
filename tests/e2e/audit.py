#!/usr/bin/python3
"""audit.py TREE [options] - the first invariant, checked independently of kiln.

Every byte a server can send from TREE is the current source's:
  - every sibling (NAME.gz, NAME.br, NAME.zst next to an existing NAME)
    decodes, with Python's own decoders (a zstd frame's window at most
    8 MiB, RFC 9659), to exactly NAME's bytes; has NAME's permission
    bits and mtime (to the nanosecond, or KILN_MTIME_RESOLUTION_NS); and no two of {NAME, its siblings}
    have the same size (a server's ETag is mtime and size);
  - no orphan: a NAME.gz or NAME.br whose NAME does not exist is a file the
    manifest lists as an asset of its own (a user's download), never one it
    records as a sibling;
  - every dictionary delta (NAME.<16 hex>.dcz, RFC 9842) is recorded in
    NAME's entry ("dictionaries") with its size and digest, starts with the
    dcz header naming the recorded dictionary, has NAME's permission bits
    and mtime and a size no other of NAME's representations has, and, when
    the dictionary is found in a --previous DIR (by its recorded path and
    SHA-256), decodes with it to exactly NAME's bytes; no delta without its
    NAME (kiln removes every file so named that it does not vouch for);
  - no stray file: no temporary file or staging directory of kiln's, and no
    journal unless --allow-journal;
  - the manifest matches the disk: every entry's size and digests are the
    file's, every sibling it records exists with its size and digest, every
    sibling on disk is recorded, no sibling on disk is recorded as stale,
    and (unless --partial, for a run that was interrupted) every asset on
    disk has an entry.  With --no-manifest, there must be no manifest, and
    siblings are checked without one.

Options:
  --manifest PATH     the manifest (default TREE/kiln-manifest.json)
  --partial           assets may be missing from the manifest, and siblings may
                      keep a mode and mtime their source no longer has (a run
                      that was interrupted, or failed on some files)
  --allow-journal     journals (.kiln-journal-XXXXXX) may remain
  --allow-temps       temporary files (.kiln-XXXXXX.tmp) of a killed run may
                      remain (a later run removes them once over 2 s old)
  --manifest-may-lag  the manifest may be older than the tree (its run could
                      not write it, or was stopped at once): entries are not
                      compared with the disk, and a sibling on disk counts as
                      recorded when the manifest or a journal holds its
                      exact bytes (implies --allow-journal)
  --allow-stale       siblings the manifest lists in "stale_siblings" (kiln
                      could not remove them, a failed run) may remain, while
                      they hold the bytes listed there; they are exempt from
                      the sibling checks
  --allow-missing     siblings the manifest records may be missing (a failed
                      run kept the record of a file it could not finish)
  --read-only DIR     DIR (relative to TREE, "." for TREE itself) is a
                      directory kiln cannot write in: with --allow-stale and
                      --manifest-may-lag, a sibling there that the manifest
                      records with its exact bytes may be stale (kiln could
                      neither remove it nor write a manifest that says so),
                      and a sibling there may keep the mode and mtime its
                      source had (kiln could not replace it) (repeatable)
  --allow-unrecorded  siblings on disk need not be recorded (an earlier
                      --no-manifest run wrote them); they are still checked
  --unreadable REL    REL (a file or a directory, relative to TREE) cannot
                      be read by the user kiln runs as: the siblings of the
                      sources at or below it keep whatever mode they had and
                      need not be recorded, and those sources may be missing
                      from the manifest (repeatable)
  --sources FILE      FILE lists every user file of the tree, relative paths
                      separated by NUL bytes: then every other file must be a
                      sibling of one of them or one of kiln's artifacts at
                      the top (else it is a stray file), every listed file
                      must exist, and a listed NAME.gz with no NAME is a
                      user's file, not an orphan
  --previous DIR      an earlier release the deltas were made against: their
                      dictionaries are looked up there (repeatable)
  --quiet             print nothing, only set the exit status
Prints one line per problem and exits 1 if there is any.

The environment variable KILN_MTIME_RESOLUTION_NS (default 1) is the
resolution of the times the kiln under test can set: the WebAssembly kiln's
Node.js sets them to the microsecond (1000), and a sibling's mtime is then
its source's cut to that.

Used as a module: Audit(tree, opts).run() returns 0 or 1 and leaves the
problems in .problems; opts keys are the option names with '_' for '-'
("unreadable", "read_only": lists of bytes, "sources": a set of bytes).
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

MTIME_NS = int(os.environ.get("KILN_MTIME_RESOLUTION_NS") or 1)


def same_mtime(a, b):
    """Whether stat results A and B have one mtime, to MTIME_NS."""
    return a.st_mtime_ns // MTIME_NS == b.st_mtime_ns // MTIME_NS

SUFFIXES = {b".gz": "gzip", b".br": "br", b".zst": "zstd"}
BY_CODING = {v: k for k, v in SUFFIXES.items()}
HTTP_ZSTD_WINDOW = 8 << 20  # RFC 9659
TEMP = re.compile(rb"^\.kiln-[A-Za-z0-9]{6}\.tmp$")
STAGE = re.compile(rb"^\.kiln-stage-[A-Za-z0-9]{6}$")
JOURNAL = re.compile(rb"^\.kiln-journal-[A-Za-z0-9]{6}$")
DELTA = re.compile(rb"^(.+)\.([0-9a-f]{16})\.dcz$")
PART = re.compile(rb"^kiln-manifest\.shard-[1-9][0-9]*-of-[1-9][0-9]*(\..+)?\.json$")
DCZ_MAGIC = bytes.fromhex("5e2a4d1820000000")
# kiln's files at the top; the index beside the manifest (lib/index.h) is
# never served, and holds no bytes a server could send
OWN = {b"kiln-manifest.json", b".kiln-manifest.json.index", b"kiln.nginx.conf",
       b"kiln.nginx.http.conf", b"kiln.caddy.conf", b"kiln.apache.conf"}


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


def decode_dcz(data, dictionary):
    """A dcz body with its dictionary (raw content), the window held to
    max(8 MiB, 1.25 x the dictionary) as RFC 9842 lets a client."""
    if data[:8] != DCZ_MAGIC or data[8:40] != hashlib.sha256(dictionary).digest():
        raise ValueError("no dcz header naming this dictionary")
    frame = data[40:]
    limit = max(HTTP_ZSTD_WINDOW, len(dictionary) * 5 // 4)
    if zstandard.get_frame_parameters(frame).window_size > limit:
        raise ValueError("window over the limit")
    zd = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    d = zstandard.ZstdDecompressor(dict_data=zd, max_window_size=1 << 27).decompressobj()
    out = d.decompress(frame)
    if not d.eof or d.unused_data:
        raise ValueError("not one complete zstd frame")
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def below(rel, prefixes):
    """Is REL one of PREFIXES or below one of them?"""
    return any(rel == p or rel.startswith(p + b"/") for p in prefixes)


def read_journal(path):
    """The siblings a journal records: {sibling rel: set of (size, sha256)}.
    A line is "CODING RECIPE SIZE SHA256 SRC_SIZE SRC_SHA256 BASE64(REL)"
    (kiln 0.1: "CODING SIZE SHA256 BASE64(REL)"); malformed lines are
    ignored, as kiln ignores them."""
    out = {}
    for line in read(path).split(b"\n"):
        f = line.split()
        if len(f) not in (7, 4) or f[0].decode(errors="replace") not in BY_CODING:
            continue
        size, sha = (f[2], f[3]) if len(f) == 7 else (f[1], f[2])
        try:
            rel = base64.b64decode(f[-1], validate=True)
            size = int(size)
        except ValueError:
            continue
        out.setdefault(rel + BY_CODING[f[0].decode()], set()).add((size, sha.decode()))
    return out


class Audit:
    def __init__(self, tree, opts):
        self.tree = os.fsencode(tree)
        self.opts = dict(opts)
        if self.opts.get("manifest_may_lag"):
            self.opts["allow_journal"] = True
        self.unreadable = [os.fsencode(p) for p in self.opts.get("unreadable") or []]
        self.read_only = {b"" if p in (".", b".") else os.fsencode(p)
                          for p in self.opts.get("read_only") or []}
        src = self.opts.get("sources")
        self.sources = None if src is None else {os.fsencode(s) for s in src}
        self.problems = []

    def problem(self, msg):
        self.problems.append(msg)
        if not self.opts.get("quiet"):
            print("audit: " + msg, file=sys.stderr)

    def walk(self):
        files = {}
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
        """The manifest's entries {rel: entry} and stale siblings {rel: (coding,
        size, sha256)}; (None, {}) without a manifest."""
        path = self.opts.get("manifest") or os.path.join(self.tree, b"kiln-manifest.json")
        path = os.fsencode(path)
        if self.opts.get("no_manifest"):
            if os.path.exists(path):
                self.problem("a manifest exists after a --no-manifest run")
            return None, {}
        if not os.path.exists(path):
            if not self.opts.get("manifest_may_lag"):  # a first run that could not write it
                self.problem("no manifest")
            return None, {}
        doc = json.loads(read(path).decode("utf-8"))
        entries = {}
        for key, e in doc.get("files", {}).items():
            rel = base64.b64decode(e["path_base64"]) if "path_base64" in e else key.encode()
            entries[rel] = e
        stale = {}
        for key, s in doc.get("stale_siblings", {}).items():
            rel = base64.b64decode(s["path_base64"]) if "path_base64" in s else key.encode()
            stale[rel] = (s["coding"], s["size"], s["sha256"])
        return entries, stale

    def load_journals(self, files):
        journaled = {}
        if not self.opts.get("allow_journal"):
            return journaled
        for rel in files:
            if b"/" not in rel and JOURNAL.match(rel):
                for sib, v in read_journal(os.path.join(self.tree, rel)).items():
                    journaled.setdefault(sib, set()).update(v)
        return journaled

    def run(self):
        files = self.walk()
        entries, stale = self.load_manifest()
        journaled = self.load_journals(files)
        self.stale_ok = set()
        for rel, (coding, size, sha) in stale.items():
            if rel not in files:
                continue  # gone: nothing a server can send; the next run drops it
            ok = (self.opts.get("allow_stale") and files[rel].st_size == size
                  and sha256(read(os.path.join(self.tree, rel))) == sha)
            if ok:
                self.stale_ok.add(rel)
            else:
                self.problem(f"{rel!r}: recorded as a stale sibling")
        recorded = {}  # sibling rel -> (coding, entry)
        if entries is not None:
            for rel, e in entries.items():
                for coding, enc in e.get("encodings", {}).items():
                    recorded[rel + BY_CODING[coding]] = (coding, e)
        if self.opts.get("allow_stale") and self.opts.get("manifest_may_lag"):
            for rel, (coding, e) in recorded.items():
                if rel in files and os.path.dirname(rel) in self.read_only:
                    enc = e["encodings"][coding]
                    data = read(os.path.join(self.tree, rel))
                    if (len(data), sha256(data)) == (enc["size"], enc["sha256"]):
                        self.stale_ok.add(rel)
        siblings = {}
        deltas = []
        for rel, st in files.items():
            base = os.path.basename(rel)
            if TEMP.match(base):
                if not self.opts.get("allow_temps"):
                    self.problem(f"stray temporary file {rel!r}")
                continue
            if JOURNAL.match(base):
                if not self.opts.get("allow_journal") or b"/" in rel:
                    self.problem(f"stray journal {rel!r}")
                continue
            if rel in OWN:
                continue
            if DELTA.match(base):
                deltas.append(rel)
                continue
            suffix = next((s for s in SUFFIXES if rel.endswith(s) and len(rel) > len(s)), None)
            src = rel[: -len(suffix)] if suffix else None
            if suffix is not None and src in files:
                siblings.setdefault(src, []).append((rel, SUFFIXES[suffix]))
                continue
            if self.sources is not None:
                if rel not in self.sources:
                    if rel in self.stale_ok:
                        continue
                    if suffix is not None:
                        self.problem(f"{rel!r}: orphan sibling (its source is gone)")
                    else:
                        self.problem(f"stray file {rel!r}")
                continue
            if suffix is None:
                continue
            if rel in self.stale_ok:
                continue
            if rel in recorded:
                self.problem(f"{rel!r}: orphan (its source is gone) recorded as a sibling")
            elif entries is None or rel not in entries:
                self.problem(f"{rel!r}: named like a sibling, no source, not an asset of the manifest")
        if self.sources is not None:
            for rel in sorted(self.sources - set(files)):
                self.problem(f"{rel!r}: a source is missing")
        for src, sibs in sorted(siblings.items()):
            self.check_siblings(src, files[src], sibs, files, recorded, journaled)
        self.check_deltas(deltas, files, entries, siblings)
        if entries is not None:
            self.check_entries(entries, files, siblings)
        return 1 if self.problems else 0

    def check_deltas(self, deltas, files, entries, siblings):
        """Dictionary deltas: see the top."""
        recorded = {}
        for rel, e in (entries or {}).items():
            for d in e.get("dictionaries", []):
                recorded[d["path"].encode()] = (rel, d)
                if d["path"].encode() not in files and not self.opts.get("allow_missing"):
                    self.problem(f"{d['path']!r}: recorded delta, missing")
        for rel in sorted(deltas):
            src = DELTA.match(rel).group(1)
            if src not in files:
                # one kiln could not remove (a failed run) from a directory
                # it cannot write in, as for the stale siblings there
                if not (self.opts.get("allow_stale") and os.path.dirname(rel) in self.read_only):
                    self.problem(f"{rel!r}: a delta without its source")
                continue
            data = read(os.path.join(self.tree, rel))
            st, src_st = files[rel], files[src]
            sizes = [src_st.st_size] + [files[r].st_size for r, _ in siblings.get(src, [])]
            if st.st_size in sizes:
                self.problem(f"{rel!r}: the size of another representation of {src!r}")
            if not self.opts.get("partial") and (
                    stat.S_IMODE(st.st_mode) != stat.S_IMODE(src_st.st_mode) or not same_mtime(st, src_st)):
                self.problem(f"{rel!r}: mode or mtime is not its source's")
            if rel not in recorded:
                if not (self.opts.get("allow_unrecorded") or self.opts.get("manifest_may_lag")
                        or self.opts.get("no_manifest")):
                    self.problem(f"{rel!r}: a delta the manifest does not record")
                continue
            _, d = recorded[rel]
            if (len(data), sha256(data)) != (d["size"], d["sha256"]):
                self.problem(f"{rel!r}: recorded size or sha256 is not the file's")
            elif (self.opts.get("allow_stale") and self.opts.get("manifest_may_lag")
                  and os.path.dirname(rel) in self.read_only):
                # one a failed run could neither remove (a directory it
                # cannot write in) nor drop from a manifest it could not
                # write: the bytes the manifest records, as for siblings
                continue
            if data[:40] != DCZ_MAGIC + bytes.fromhex(d["dictionary_sha256"]):
                self.problem(f"{rel!r}: its header does not name the recorded dictionary")
            found = None
            for p in self.opts.get("previous") or []:
                try:
                    cand = read(os.path.join(os.fsencode(p), d["dictionary"].encode()))
                except OSError:
                    continue
                if sha256(cand) == d["dictionary_sha256"]:
                    found = cand
                    break
            if found is None:
                if self.opts.get("previous"):
                    self.problem(f"{rel!r}: its dictionary {d['dictionary']!r} is in no --previous")
                continue
            try:
                if decode_dcz(data, found) != read(os.path.join(self.tree, src)):
                    self.problem(f"{rel!r}: does not decode to its source")
            except (ValueError, zstandard.ZstdError) as e:
                self.problem(f"{rel!r}: does not decode: {e}")

    def is_recorded(self, rel, recorded, journaled, st):
        if rel not in recorded and rel not in journaled:
            return False
        if not self.opts.get("manifest_may_lag"):
            return rel in recorded
        # the manifest may be old: the bytes on disk must be what it or a
        # journal records
        have = (st.st_size, sha256(read(os.path.join(self.tree, rel))))
        if rel in recorded:
            coding, e = recorded[rel]
            enc = e["encodings"][coding]
            if (enc["size"], enc["sha256"]) == have:
                return True
        return have in journaled.get(rel, ())

    def check_siblings(self, src, src_st, sibs, files, recorded, journaled):
        data = read(os.path.join(self.tree, src))
        sizes = {src_st.st_size: src}
        unreadable = below(src, self.unreadable)
        # in a directory kiln cannot write, a failed run could not replace a
        # sibling whose source only changed its mode or mtime
        stuck = os.path.dirname(src) in self.read_only
        # a run that stopped early may not have reached a source whose
        # mode or mtime changed: its siblings keep the old ones
        stuck = stuck or bool(self.opts.get("partial"))
        for rel, coding in sibs:
            if rel in self.stale_ok:
                continue
            st = files[rel]
            if st.st_size in sizes:
                self.problem(f"{rel!r}: same size as {sizes[st.st_size]!r} ({st.st_size})")
            sizes[st.st_size] = rel
            try:
                ok = decode(coding, read(os.path.join(self.tree, rel))) == data
            except Exception:  # a damaged stream is a problem, not a crash
                ok = False
            if not ok:
                self.problem(f"{rel!r}: does not decode to its source")
            if (st.st_mode & 0o777) != (src_st.st_mode & 0o777) and not unreadable and not stuck:
                self.problem(f"{rel!r}: mode {st.st_mode & 0o777:o}, source {src_st.st_mode & 0o777:o}")
            if not same_mtime(st, src_st) and not stuck:
                self.problem(f"{rel!r}: mtime differs from its source's")
            if (not self.opts.get("no_manifest") and not self.opts.get("allow_unrecorded")
                    and not unreadable and not self.is_recorded(rel, recorded, journaled, st)):
                self.problem(f"{rel!r}: sibling on disk, not recorded in the manifest")

    def check_entries(self, entries, files, siblings):
        sibling_files = {rel for v in siblings.values() for rel, _ in v}
        assets = {r for r in files if r not in OWN and r not in sibling_files
                  and r not in self.stale_ok and not DELTA.match(os.path.basename(r))
                  and not TEMP.match(os.path.basename(r)) and not JOURNAL.match(os.path.basename(r))}
        if self.sources is not None:
            assets &= self.sources
        if self.opts.get("manifest_may_lag"):
            return
        for rel, e in entries.items():
            if rel not in files:
                self.problem(f"{rel!r}: in the manifest, not in the tree")
                continue
            data = read(os.path.join(self.tree, rel))
            if len(data) != e["size"] or sha256(data) != e["sha256"]:
                self.problem(f"{rel!r}: manifest size or sha256 is not the file's")
            sri = "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
            if sri != e["integrity"]:
                self.problem(f"{rel!r}: integrity is not the file's")
            for coding, enc in e.get("encodings", {}).items():
                sib = rel + BY_CODING[coding]
                if sib not in files:
                    if not self.opts.get("allow_missing"):
                        self.problem(f"{sib!r}: recorded, missing")
                    continue
                sdata = read(os.path.join(self.tree, sib))
                if sib in self.stale_ok:
                    continue  # the bytes on disk are listed as stale (a carried record)
                if len(sdata) != enc["size"] or sha256(sdata) != enc["sha256"]:
                    self.problem(f"{sib!r}: recorded size or sha256 is not the file's")
        if not self.opts.get("partial"):
            for rel in sorted(assets - set(entries)):
                if not below(rel, self.unreadable):
                    self.problem(f"{rel!r}: asset not in the manifest")


FLAGS = ("--partial", "--allow-journal", "--allow-temps", "--no-manifest", "--quiet", "--manifest-may-lag",
         "--allow-stale", "--allow-unrecorded", "--allow-missing")


def main(argv):
    opts, tree = {"unreadable": []}, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--manifest", "--unreadable", "--read-only", "--sources", "--previous") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--previous":
                opts.setdefault("previous", []).append(v)
            elif a in ("--unreadable", "--read-only"):
                opts.setdefault(a[2:].replace("-", "_"), []).append(os.fsencode(v))
            elif a == "--sources":
                opts["sources"] = {s for s in read(v).split(b"\0") if s}
            else:
                opts["manifest"] = v
            i += 1
        elif a in FLAGS:
            opts[a[2:].replace("-", "_")] = True
        elif a.startswith("-") or tree:
            print(__doc__, file=sys.stderr)
            return 2
        else:
            tree = a
        i += 1
    if not tree:
        print(__doc__, file=sys.stderr)
        return 2
    return Audit(tree, opts).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
