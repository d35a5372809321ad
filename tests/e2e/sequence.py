#!/usr/bin/python3
"""sequence.py - a seeded, randomized sequence test of kiln's first invariant.

Every byte a server can send is the current source's: no stale sibling, no
orphan of a deleted file, no sibling sharing its source's size, nothing half
written, no stray file - after any sequence of runs, option changes,
failures and signals.  This test drives one small tree (20-40 files, a few
large enough to stream) through hundreds of random steps.  Each step makes
a few random changes to the tree (edits, additions, deletions, renames of
files and directories, touches, permission changes; edits that keep a
file's size and mtime, in place or by another file renamed over it, and
changes to a directory's entries, a sibling's deletion among them, that
keep the directory's mtime: what a run that trusted sizes and times would
miss) and to kiln's options,
then runs kiln once (compress, with --no-manifest, check or clean; under an
injected fault; interrupted by SIGINT, SIGTERM, a double SIGINT or SIGKILL;
as 2 or 3 shards one after another and a merge; or as two runs started
at once, one of which must wait for the other),
then audits the tree with audit.py (independent of kiln), compares
`kiln check` with the audit, and checks that an unchanged re-run writes
nothing.  kiln runs as user nobody on a tree owned by nobody when the test
runs as root (as tests/e2e/hostile.sh does), so that files and directories
made unreadable (000) or read-only (555) really are.

The seed is printed first; the sequence of decisions is a function of the
seed alone (where a signal lands also depends on timing).  Run it:

    KILN=build/kiln FIXTURES=fixtures FAULT_SHIM=build/tests/fault.so \\
        /usr/bin/python3 tests/e2e/sequence.py [--seed N] [--seconds S]

The budget is --seconds, else KILN_SEQUENCE_SECONDS, else 60 (what ctest
runs, in every build).  For a longer hunt, on demand:

    KILN_SEQUENCE_SECONDS=600 ctest --test-dir build -R e2e_sequence
    KILN=... FIXTURES=... FAULT_SHIM=... /usr/bin/python3 tests/e2e/sequence.py \\
        --seconds 600 --seed 12345

A failure prints the step, what was wrong, the last steps taken and the
seed; the scratch tree is kept.  --steps N stops after N steps (a failure at
step K reproduces with the same seed and --steps K, timing aside);
--keep-going records a failure, resets the tree to its sources and goes on
(exit status 1 at the end), to find several problems in one long run; -v
prints every step.  FAULT_SHIM (tests/fault/fault.c, an LD_PRELOAD shim)
is only given in builds without sanitizers; without it no faults are
injected.  KILN_SANITIZE names the sanitizer build: a sanitizer report fails
the step that produced it.
"""
import argparse
import gzip
import hashlib
import math
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import audit  # noqa: E402


def outside_state(where, sources):
    """({relative path: (type, mode, mtime ns, size, sha256 or link target)},
    SOURCES) for everything under WHERE but the relative paths in SOURCES."""
    out = {}
    for d, subdirs, names in os.walk(where):
        for n in subdirs + names:
            full = os.path.join(d, n)
            rel = os.path.relpath(full, where)
            if sources is not None and rel in sources:
                continue
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    what = hashlib.sha256(f.read()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                what = os.readlink(full)
            else:
                what = b""
            out[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                        st.st_mtime_ns if not stat.S_ISDIR(st.st_mode) else 0, st.st_size
                        if not stat.S_ISDIR(st.st_mode) else 0, what)
    return out, sources

SUFFIXES = audit.SUFFIXES
# One kind of step is off until kiln handles what it found (KILN_SEQUENCE_ALL=1
# turns it on): renaming a directory that holds siblings: a moved sibling no
# run replaces is a file kiln did not write at its new path, and the model
# does not yet follow such files once their source goes too.
MOVE_SIBLINGS = os.environ.get("KILN_SEQUENCE_ALL") == "1"
# A source made read-only (444) gives read-only siblings (the source's mode),
# kiln's by their digests, so they are replaced once the source is writable
# again.
READ_ONLY_SOURCES = True
MANIFEST = b"kiln-manifest.json"
INDEX = b".kiln-manifest.json.index"
SNIPPETS = (b"kiln.nginx.conf", b"kiln.nginx.http.conf", b"kiln.caddy.conf", b"kiln.apache.conf")

WORDS = (b"function return const let var if else for while class export import default "
         b"async await null true false this new static <div> </div> <span class=\"x\"> { } ( ) ; "
         b"color: #fff; margin: 0 1 42 \"key\": \"value\", => .map( .then( document window "
         b"querySelector addEventListener").split() + [b"\n", b"\t", b"  "]
STEMS = [b"index", b"app", b"main", b"style", b"data", b"with space", b"caf\xc3\xa9",
         b"bad\xffx", b"bad%FFx", b"50%", b"%41", b"na\xefve", b"-dash", b"x", b"READ ME",
         b"q'uote", b"semi;colon", b"tab\there", b"new\nline", b"vendor.min", b"a..b"]
EXTS = [b".js", b".js", b".css", b".html", b".json", b".svg", b".txt", b".map", b".md",
        b".xml", b".mjs", b".png", b".jpg", b"", b".JS", b".wasm"]
DIRNAMES = [b"assets", b"css", b"js", b"deep", b"sub dir", b"d\xfeir", b"v%41", b"legacy",
            b"vendor", b"caf\xc3\xa9", b"a", b"b", b"%"]
EXCLUDES = ["*.map", "*.txt", "vendor/*", "*/deep/*", "deep/*", "with space*", "*.json",
            "bad*", "*%*", "*.tar.gz", "legacy/*.js", "*.png"]
INCLUDES = ["*.js", "*.css", "*.html", "*", "assets/*", "*.txt", "*.json", "*.tar.gz",
            "*/deep/*"]
FAULT_CALLS = ["write", "write", "rename", "fsync", "futimens", "fchmod", "close",
               "create", "malloc"]
PNG = b"\x89PNG\r\n\x1a\n"
SANITIZER_MARKS = (b"Sanitizer", b"runtime error:")


class Failure(Exception):
    pass


def sha(data):
    return hashlib.sha256(data).hexdigest()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def parent(rel):
    return rel.rpartition(b"/")[0]


def join(d, n):
    return n if not d else d + b"/" + n


def ancestors(rel):
    """Every directory above REL, the tree's root excluded."""
    parts = rel.split(b"/")
    return [b"/".join(parts[:i]) for i in range(1, len(parts))]


def under(rel, d):
    return rel == d or rel.startswith(d + b"/")


def show(rel):
    return repr(rel)[2:-1] if isinstance(rel, bytes) else rel


class Sequence:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.rng = random.Random(args.seed)
        self.kiln_src = os.environ.get("KILN")
        fixtures = os.environ.get("FIXTURES")
        if not self.kiln_src or not fixtures:
            sys.exit("sequence: KILN and FIXTURES must be set (see the top of this file)")
        self.shim_src = os.environ.get("FAULT_SHIM") or None
        self.sanitize = os.environ.get("KILN_SANITIZE", "")
        self.root_user = os.geteuid() == 0
        self.tmp = os.fsencode(tempfile.mkdtemp(prefix="kiln-sequence."))
        os.chmod(self.tmp, 0o755)
        self.root = os.path.join(self.tmp, b"t")
        self.cache = os.path.join(self.tmp, b"cache")
        self.out = os.path.join(self.tmp, b"out")
        self.err = os.path.join(self.tmp, b"err")
        os.mkdir(self.root, 0o755)
        os.mkdir(self.cache, 0o755)
        # outside the tree: directories swapped out of it for links, and
        # hard-linked snapshots of it; kiln must never change them
        self.outside = os.path.join(self.tmp, b"outside")
        os.mkdir(self.outside, 0o755)
        self.links = set()      # top-level names in the tree that are links out
        self.watched = {}       # outside directory -> its state when made
        self.snapshots = []     # the hard-linked snapshots, oldest first
        self.nout = 0
        bindir = os.path.join(self.tmp, b"bin")
        os.mkdir(bindir, 0o755)
        # copies kiln's user can execute, wherever the build is
        self.kiln = os.path.join(bindir, b"kiln")
        shutil.copy(self.kiln_src, self.kiln)
        os.chmod(self.kiln, 0o755)
        self.shim = None
        if self.shim_src:
            self.shim = os.path.join(bindir, b"fault.so")
            shutil.copy(self.shim_src, self.shim)
            os.chmod(self.shim, 0o755)
        if self.root_user:
            import grp
            import pwd
            self.uid = pwd.getpwnam("nobody").pw_uid
            self.gid = grp.getgrnam("nogroup").gr_gid
            os.chown(self.cache, self.uid, self.gid)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("LD_PRELOAD", "KILN_FAULT", "KILN_FAULT_VANISH", "KILN_CACHE_DIR")}
        if self.sanitize:
            for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
                self.env[var] = (self.env.get(var, "") + ":exitcode=86").lstrip(":")
        self.fixtures = []
        for d, _, names in os.walk(os.path.join(os.fsencode(fixtures), b"site")):
            for n in sorted(names):
                data = read(os.path.join(d, n))
                if len(data) <= 300000:
                    self.fixtures.append((n, data))
        self.fixtures.sort()
        # an earlier release for --previous, outside the tree: fingerprinted
        # files whose families the tree's additions may join, so that runs
        # make, keep and remove dictionary deltas
        self.prev = os.path.join(self.tmp, b"prev")
        os.mkdir(self.prev, 0o755)
        self.prev_files = {}
        for name in (b"app.3f9a2c7b.js", b"style.1a7e2c9d.css"):
            data = self.text(20000 + self.rng.randrange(20000))
            with open(os.path.join(self.prev, name), "wb") as f:
                f.write(data)
            os.chmod(os.path.join(self.prev, name), 0o644)
            self.prev_files[name] = data
        self.dictionaries = {hashlib.sha256(d).digest(): d for d in self.prev_files.values()}
        # the model: what the tree's sources are, as this test made them
        self.files = {}     # rel -> bytes
        self.fmode = {}     # rel -> permission bits on disk (0: unreadable)
        self.dirs = {}      # rel -> permission bits (0: unreadable, 0o555: read-only)
        self.root_mode = 0o755
        self.history = {}   # rel -> set of sha256 of every content it ever had
        self.downloads = set()
        self.opts = {"codings": "gzip", "gzip_level": 6, "brotli_quality": 5,
                     "zstd": False, "zstd_level": 19, "zopfli": 0,
                     "stream_size": "64K", "include": [], "exclude": [], "max_ratio": None,
                     "min_size": None, "jobs": None, "verify": False, "cache": False,
                     "previous": False}
        self.unrecorded = False  # siblings an earlier --no-manifest run wrote may be on disk
        self.foreign_possible = False  # siblings moved with a directory may stay unrecorded
        # paths changed since kiln last recorded the whole tree: such a file
        # (or a directory above one) is never made unreadable, since kiln
        # keeps the record of what it cannot read and would keep it stale
        self.dirty = set()
        self.last_stderr = b""
        self.killed = False      # a SIGKILL may have left temporary files
        self.step = 0
        self.memo = None
        self.log = []
        self.failures = []
        self.avg_run = 0.1
        self.counts = {}

    # ---- running kiln ----------------------------------------------------

    def kiln_argv(self, words):
        return [self.kiln] + [os.fsencode(w) for w in words]

    def start(self, words, fault=None, err_path=None):
        env = dict(self.env)
        if fault:
            env["LD_PRELOAD"] = os.fsdecode(self.shim)
            env["KILN_FAULT"] = fault
        out = open(self.out, "wb")
        err = open(err_path or self.err, "wb")
        who = dict(user=self.uid, group=self.gid, extra_groups=[]) if self.root_user else {}
        try:
            p = subprocess.Popen(self.kiln_argv(words), stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, env=env, cwd=self.tmp, **who)
        finally:
            out.close()
            err.close()
        return p

    def finish(self, p, timeout=600, err_path=None):
        fired = []

        def kill():  # a watchdog, not wait(timeout=), which polls
            fired.append(True)
            p.kill()
        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            rc = p.wait()
        finally:
            timer.cancel()
        if fired:
            raise Failure(f"kiln did not finish within {timeout} s (hangs?)")
        stderr = read(err_path or self.err)
        if rc == 86 or any(m in stderr for m in SANITIZER_MARKS):
            raise Failure("sanitizer report:\n" + stderr.decode(errors="replace")[-4000:])
        return rc, stderr

    def run_kiln(self, words, fault=None, keep=True):
        t = time.monotonic()
        rc, stderr = self.finish(self.start(words, fault))
        if keep:
            self.last_stderr = stderr
        return rc, stderr, time.monotonic() - t

    def opt_words(self, o=None):
        o = o or self.opts
        w = []
        if o["codings"] == "both":
            w.append("--brotli")
        elif o["codings"] == "br":
            w += ["--no-gzip", "--brotli"]
        w += ["--gzip-level", str(o["gzip_level"]), "--brotli-quality", str(o["brotli_quality"])]
        if o["zstd"]:
            w += ["--zstd", "--zstd-level", str(o["zstd_level"])]
        if o["zopfli"]:
            w += ["--zopfli", "--zopfli-iterations", str(o["zopfli"])]
        if o["stream_size"] is not None:
            w += ["--stream-size", o["stream_size"]]
        for g in o["include"]:
            w += ["--include", g]
        for g in o["exclude"]:
            w += ["--exclude", g]
        if o["max_ratio"] is not None:
            w += ["--max-ratio", str(o["max_ratio"])]
        if o["min_size"] is not None:
            w += ["--min-size", str(o["min_size"])]
        if o["jobs"]:
            w += ["-j", str(o["jobs"])]
        if o["verify"]:
            w.append("--verify")
        if o["cache"]:
            w += ["--cache", os.fsdecode(self.cache)]
        if o["previous"]:
            w += ["--previous", os.fsdecode(self.prev)]
        return w

    # ---- the model -------------------------------------------------------

    def path(self, rel):
        return os.path.join(self.root, rel) if rel else self.root

    def write(self, rel, data):
        with open(self.path(rel), "wb") as f:
            f.write(data)
        self.files[rel] = data
        self.history.setdefault(rel, set()).add(sha(data))
        self.dirty.add(rel)

    def unreadable(self):
        """Files and directories kiln's user cannot read."""
        return sorted([r for r, m in self.fmode.items() if m == 0] +
                      [d for d, m in self.dirs.items() if m == 0])

    def restricted(self):
        return bool(self.unreadable()) or self.root_mode != 0o755 or any(
            m == 0o555 for m in self.dirs.values())

    def frozen(self, rel):
        """Must REL be left alone: is it, or a directory above it, unreadable?"""
        if self.fmode.get(rel) == 0 or self.dirs.get(rel) == 0:
            return True
        return any(self.dirs.get(a) == 0 for a in ancestors(rel))

    def subtree_free(self, d):
        return not self.frozen(d) and not any(
            under(r, d) and self.frozen(r) for r in list(self.files) + list(self.dirs))

    def free_files(self):
        return sorted(r for r in self.files if not self.frozen(r))

    def free_dirs(self):
        return [b""] + sorted(d for d in self.dirs if not self.frozen(d))

    def used_names(self, d):
        # from the model alone, so that the sequence depends on the seed
        # only: the names kiln writes (NAME.gz, NAME.br, its artifacts and
        # temporary files) are never chosen for a source (see new_name)
        names = set(self.links) if d == b"" else set()
        for r in list(self.files) + list(self.dirs):
            if parent(r) == d:
                names.add(r.rpartition(b"/")[2])
        return names

    def fix_owner(self):
        """Everything the test made belongs to kiln's user, as in a real
        checkout of that user's."""
        if not self.root_user:
            return
        for d, subdirs, names in os.walk(self.root):
            for n in subdirs + names:
                full = os.path.join(d, n)
                if os.lstat(full).st_uid != self.uid:
                    os.lchown(full, self.uid, self.gid)
        if os.lstat(self.root).st_uid != self.uid:
            os.lchown(self.root, self.uid, self.gid)

    # ---- contents and names ----------------------------------------------

    def text(self, n):
        out = bytearray()
        while len(out) < n:
            out += b" ".join(self.rng.choices(WORDS, k=256)) + b"\n"
        return bytes(out[:n])

    def logsize(self, lo, hi):
        return int(math.exp(self.rng.uniform(math.log(lo), math.log(hi))))

    def nlarge(self):
        return sum(1 for d in self.files.values() if len(d) >= 60000)

    def content(self, kind=None):
        r = self.rng
        if kind is None:
            kind = r.choices(["text", "small", "media", "random", "mixed", "large", "fixture",
                              "edge"], [30, 8, 6, 6, 8, 5, 10, 4])[0]
        if kind == "large" and self.nlarge() >= 4:
            kind = "text"
        if kind == "text":
            return kind, self.text(self.logsize(256, 40000))
        if kind == "small":
            return kind, self.text(r.randrange(0, 256))
        if kind == "media":
            return kind, PNG + self.text(self.logsize(300, 20000))
        if kind == "random":
            return kind, r.randbytes(self.logsize(256, 20000))
        if kind == "mixed":  # near the --max-ratio line
            n = self.logsize(300, 20000)
            k = int(n * r.uniform(0.75, 1.0))
            return kind, self.text(n - k) + r.randbytes(k)
        if kind == "large":
            if r.random() < 0.2:
                return kind, r.randbytes(r.randrange(65536, 120000))
            return kind, self.text(r.randrange(65536, 250000))
        if kind == "fixture":
            return kind, r.choice(self.fixtures)[1]
        # sizes on the edges of --min-size and --stream-size
        return kind, self.text(r.choice([255, 256, 257, 65535, 65536, 65537]))

    def new_name(self, d, download=False):
        r = self.rng
        used = self.used_names(d)
        for _ in range(100):
            stem = r.choice(STEMS)
            if r.random() < 0.6:
                stem += b"-%d" % r.randrange(100)
            name = stem + (b".tar.gz" if download else r.choice(EXTS))
            if name in used or name == MANIFEST or name in SNIPPETS or name.startswith(b".kiln-"):
                continue
            if not download and name.endswith((b".gz", b".br", b".zst", b".tar")):
                continue
            if len(name) > 200:
                continue
            return name
        return None

    def fingerprinted_name(self, family):
        """FAMILY (a name of the earlier release) with another fingerprint,
        free at the top of the tree; or None."""
        stem, _, ext = family.split(b".")
        for _ in range(20):
            fp = b"%08x" % self.rng.getrandbits(32)
            name = stem + b"." + fp + b"." + ext
            digits, letters = bytes(c for c in fp if c < 0x3a), bytes(c for c in fp if c > 0x3a)
            typed = all(b - a == 1 for s in (digits, letters) for a, b in zip(s, s[1:]))
            if (digits and letters and not typed  # (kiln takes no placeholder: "a1b2c3d4")
                    and name not in self.used_names(b"")):
                return name
        return None

    def new_dir_name(self, d):
        used = self.used_names(d)
        for _ in range(50):
            name = self.rng.choice(DIRNAMES)
            if self.rng.random() < 0.4:
                name += b"%d" % self.rng.randrange(10)
            if name not in used and not name.endswith((b".gz", b".br", b".zst")):
                return name
        return None

    # ---- changes to the tree ---------------------------------------------

    def m_add(self, download=False):
        dirs = self.free_dirs()
        d = self.rng.choice(dirs)
        if self.rng.random() < 0.15:  # a new directory chain, sometimes deep
            for _ in range(self.rng.randrange(1, 6)):
                n = self.new_dir_name(d)
                if n is None:
                    break
                d = join(d, n)
                os.mkdir(self.path(d), 0o755)
                os.chmod(self.path(d), 0o755)
                self.dirs[d] = 0o755
        family = None
        if not download and self.rng.random() < 0.2:
            # a new version of a file of the earlier release (--previous)
            d, family = b"", self.rng.choice(sorted(self.prev_files))
            name = self.fingerprinted_name(family)
        else:
            name = self.new_name(d, download)
        if name is None:
            return None
        rel = join(d, name)
        if family is not None:
            data = bytearray(self.prev_files[family])
            for _ in range(self.rng.randrange(1, 6)):
                at = self.rng.randrange(len(data))
                data[at:at + self.rng.randrange(40)] = self.text(self.rng.randrange(1, 60))
            data, kind = bytes(data), "next version of " + show(family)
        elif download:
            data = gzip.compress(self.text(self.logsize(300, 20000)), mtime=0)
            kind = "download"
            self.downloads.add(rel)
        else:
            kind, data = self.content()
        self.write(rel, data)
        os.chmod(self.path(rel), 0o644)
        self.fmode[rel] = 0o644
        return f"add {show(rel)} ({kind}, {len(data)} B)"

    def m_edit(self):
        files = [f for f in self.free_files() if f not in self.downloads]
        if not files:
            return None
        rel = self.rng.choice(files)
        how = self.rng.choices(["rewrite", "append", "same-size"], [6, 3, 1])[0]
        if how == "rewrite":
            kind, data = self.content()
        elif how == "append":
            kind, data = "text", self.files[rel] + self.text(self.rng.randrange(1, 3000))
        else:
            # other bytes, same size and mtime: content decides, not stat
            old = self.files[rel]
            if not old:
                return None
            st = os.stat(self.path(rel))
            i = self.rng.randrange(len(old))
            data = old[:i] + bytes([old[i] ^ 0x20 or 1]) + old[i + 1:]
            self.write(rel, data)
            os.utime(self.path(rel), ns=(st.st_atime_ns, st.st_mtime_ns))
            return f"edit {show(rel)} (same size and mtime)"
        self.write(rel, data)
        return f"edit {show(rel)} ({how}, {kind}, {len(data)} B)"

    def m_same_stat_edit(self):
        """Other bytes under the same name, size and mtime, and the
        directory's mtime put back: written in place (the same inode), or
        another file renamed over it.  Only the ctime (or the inode) tells,
        and a run must read it (lib/index.h)."""
        files = [f for f in self.free_files() if f not in self.downloads and self.files[f]]
        if not files:
            return None
        rel = self.rng.choice(files)
        old, full, dpath = self.files[rel], self.path(rel), self.path(parent(rel))
        st, dst = os.stat(full), os.stat(dpath)
        i = self.rng.randrange(len(old))
        data = old[:i] + bytes([old[i] ^ 0x20 or 1]) + old[i + 1:]
        how = self.rng.choice(["in place", "replaced"])
        if how == "in place":
            with open(full, "r+b") as f:
                f.seek(i)
                f.write(data[i:i + 1])
        else:
            tmp = os.path.join(dpath, b".sequence-new")
            with open(tmp, "wb") as f:
                f.write(data)
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            os.rename(tmp, full)
        os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.utime(dpath, ns=(dst.st_atime_ns, dst.st_mtime_ns))
        self.files[rel] = data
        self.history.setdefault(rel, set()).add(sha(data))
        self.dirty.add(rel)
        return f"edit {show(rel)} ({how}: size, mtime and directory's mtime kept)"

    def m_dir_keep_mtime(self):
        """A directory's entries changed, its mtime put back: a file added,
        deleted or renamed in it, or a sibling deleted.  The walk reads
        every directory, whatever its mtime says."""
        d = self.rng.choice(self.free_dirs())
        dpath = self.path(d)
        dst = os.stat(dpath)
        here = [f for f in self.free_files() if parent(f) == d]
        files, _ = self.on_disk()
        sibs = [r for r in files if parent(r) == d and not self.frozen(r)
                and any(r.endswith(x) and r[:-len(x)] in self.files for x in SUFFIXES)]
        how = self.rng.choice(["add", "delete", "rename", "delete a sibling"])
        if how == "add":
            name = self.new_name(d)
            if name is None:
                return None
            rel = join(d, name)
            kind, data = self.content()
            self.write(rel, data)
            os.chmod(self.path(rel), 0o644)
            self.fmode[rel] = 0o644
            what = f"add {show(rel)} ({kind}, {len(data)} B)"
        elif how == "delete" and here:
            rel = self.rng.choice(here)
            os.unlink(self.path(rel))
            self.dirty.add(rel)
            del self.files[rel], self.fmode[rel]
            self.downloads.discard(rel)
            what = f"delete {show(rel)}"
        elif how == "rename" and here:
            rel = self.rng.choice(here)
            name = self.new_name(d, rel in self.downloads)
            if name is None:
                return None
            new = join(d, name)
            os.rename(self.path(rel), self.path(new))
            self.dirty.update((rel, new))
            self.files[new] = self.files.pop(rel)
            self.fmode[new] = self.fmode.pop(rel)
            self.history.setdefault(new, set()).add(sha(self.files[new]))
            if rel in self.downloads:
                self.downloads.discard(rel)
                self.downloads.add(new)
            what = f"rename {show(rel)} -> {show(new)}"
        elif how == "delete a sibling" and sibs:
            rel = self.rng.choice(sorted(sibs))
            os.unlink(self.path(rel))
            what = f"delete the sibling {show(rel)}"
        else:
            return None
        os.utime(dpath, ns=(dst.st_atime_ns, dst.st_mtime_ns))
        return what + f" ({show(d) or 'TREE'}/'s mtime kept)"

    def m_delete(self):
        files = self.free_files()
        if not files:
            return None
        rel = self.rng.choice(files)
        os.unlink(self.path(rel))
        self.dirty.add(rel)
        del self.files[rel], self.fmode[rel]
        self.downloads.discard(rel)
        return f"delete {show(rel)}"

    def m_delete_dir(self):
        dirs = [d for d in self.dirs if self.subtree_free(d)]
        if not dirs:
            return None
        d = self.rng.choice(sorted(dirs))
        shutil.rmtree(self.path(d))
        self.forget_below(d)
        return f"delete directory {show(d)}"

    def m_link_dir(self):
        """A top-level directory moved out of the tree, siblings and all, and
        a symbolic link to it left in its place: its files are no longer
        the tree's, and nothing under the link may change."""
        dirs = [d for d in self.dirs if parent(d) == b"" and self.subtree_free(d)
                and self.dirs[d] == 0o755]
        if not dirs:
            return None
        d = self.rng.choice(sorted(dirs))
        self.nout += 1
        where = os.path.join(self.outside, b"link-%d" % self.nout)
        os.rename(self.path(d), where)
        os.symlink(where, self.path(d))
        self.forget_below(d)
        self.links.add(d)
        self.watched[where] = outside_state(where, None)
        return f"directory {show(d)} moved outside, a link to it in its place"

    def m_snapshot(self):
        """A hard-linked snapshot of the tree outside it (cp -al): whatever
        kiln does next, the snapshot's siblings, manifest and snippets keep
        their bytes, mode and mtime (its sources share the model's inodes,
        which the test itself edits, so they are not watched)."""
        if not self.root_user:
            return None  # cp -al needs to read every restricted directory
        self.nout += 1
        where = os.path.join(self.outside, b"snap-%d" % self.nout)
        subprocess.run(["cp", "-al", "--", os.fsdecode(self.root), os.fsdecode(where)], check=True)
        if len(self.snapshots) == 2:
            old = self.snapshots.pop(0)
            del self.watched[old]
            subprocess.run(["rm", "-rf", "--", os.fsdecode(old)], check=True)
        self.snapshots.append(where)
        self.watched[where] = outside_state(where, set(self.files))
        return "hard-linked snapshot of the tree outside it (cp -al)"

    def check_outside(self):
        """Nothing outside the tree changed."""
        for where, was in self.watched.items():
            now = outside_state(where, was[1])
            if now[0] != was[0]:
                diff = sorted(set(now[0].items()) ^ set(was[0].items()))[:6]
                raise Failure(f"outside the tree, {show(where)} changed: {diff}")

    def forget_below(self, d):
        self.dirty.update(r for r in self.files if under(r, d))
        for r in [r for r in self.files if under(r, d)]:
            del self.files[r], self.fmode[r]
            self.downloads.discard(r)
        for r in [r for r in self.dirs if under(r, d)]:
            del self.dirs[r]

    def m_rename(self):
        files = self.free_files()
        if not files:
            return None
        rel = self.rng.choice(files)
        d = self.rng.choice(self.free_dirs()) if self.rng.random() < 0.5 else parent(rel)
        if self.frozen(d) and d:
            return None
        name = self.new_name(d, rel in self.downloads)
        if name is None:
            return None
        new = join(d, name)
        os.rename(self.path(rel), self.path(new))
        self.dirty.update((rel, new))
        self.files[new] = self.files.pop(rel)
        self.fmode[new] = self.fmode.pop(rel)
        self.history.setdefault(new, set()).add(sha(self.files[new]))
        if rel in self.downloads:
            self.downloads.discard(rel)
            self.downloads.add(new)
        return f"rename {show(rel)} -> {show(new)}"

    def m_rename_dir(self):
        dirs = [d for d in self.dirs if self.subtree_free(d)]
        if not dirs:
            return None
        d = self.rng.choice(sorted(dirs))
        targets = [t for t in self.free_dirs() if not under(t, d)]
        to = self.rng.choice(targets)
        name = self.new_dir_name(to)
        if name is None:
            return None
        new = join(to, name)
        files, _ = self.on_disk()
        if any(under(r, d) and r not in self.files and r.endswith(tuple(SUFFIXES)) for r in files) \
                and not MOVE_SIBLINGS:
            return None
        if any(under(r, d) and r not in self.files and r.endswith(tuple(SUFFIXES)) for r in files):
            # the siblings that move along are no longer where the record
            # says, until a run that records the tree ends well; and one
            # that no run replaces (a coding not kept there now) is a file
            # kiln did not write: left in place while it decodes to its
            # source (README, "What happens to each file"), so from now on
            # a sibling need not be recorded, only right
            self.unrecorded = True
            self.foreign_possible = True
        os.rename(self.path(d), self.path(new))
        moved = lambda r: new + r[len(d):]  # noqa: E731
        # siblings move with their directory: so does what they may hold
        for r in [r for r in self.history if under(r, d)]:
            self.history.setdefault(moved(r), set()).update(self.history[r])
        for r in [r for r in self.files if under(r, d)]:
            self.dirty.update((r, moved(r)))
            self.files[moved(r)] = self.files.pop(r)
            self.fmode[moved(r)] = self.fmode.pop(r)
            if r in self.downloads:
                self.downloads.discard(r)
                self.downloads.add(moved(r))
        for r in [r for r in self.dirs if under(r, d)]:
            self.dirs[moved(r)] = self.dirs.pop(r)
        return f"rename directory {show(d)} -> {show(new)}"

    def m_touch(self):
        files = self.free_files()
        if not files:
            return None
        rel = self.rng.choice(files)
        self.dirty.add(rel)
        if self.rng.random() < 0.5:
            os.utime(self.path(rel))
            return f"touch {show(rel)}"
        t = self.rng.randrange(10**9, 17 * 10**8) * 10**9 + self.rng.randrange(10**9)
        os.utime(self.path(rel), ns=(t, t))
        return f"touch {show(rel)} (to {t} ns)"

    def m_chmod(self):
        files = [f for f in self.free_files() if self.fmode[f] != 0]
        if not files:
            return None
        rel = self.rng.choice(files)
        changed = [f for f in files if self.fmode[f] != 0o644]
        if changed and self.rng.random() < 0.5:
            rel = self.rng.choice(changed)  # and back, or on: a mode kiln copied moves
        mode = self.rng.choice([0o644, 0o600, 0o640, 0o664] + ([0o444] if READ_ONLY_SOURCES else []))
        was = self.fmode[rel]
        os.chmod(self.path(rel), mode)
        self.fmode[rel] = mode
        self.dirty.add(rel)
        if was == 0o444 and mode != 0o444 and rel not in self.downloads and self.rng.random() < 0.5:
            # made writable to be edited, as people do
            self.write(rel, self.files[rel] + self.text(self.rng.randrange(1, 3000)))
            return f"chmod {mode:o} {show(rel)} and append to it"
        return f"chmod {mode:o} {show(rel)}"

    def m_restrict(self):
        if not self.root_user:
            return None
        r = self.rng.random()
        if r < 0.4:
            files = [f for f in self.free_files() if f not in self.dirty]
            if not files:
                return None
            rel = self.rng.choice(files)
            os.chmod(self.path(rel), 0)
            self.fmode[rel] = 0
            return f"chmod 000 {show(rel)}"
        if r < 0.6:
            dirs = [d for d in self.dirs if self.subtree_free(d)
                    and not any(under(x, d) for x in self.dirty)]
            if not dirs:
                return None
            d = self.rng.choice(sorted(dirs))
            os.chmod(self.path(d), 0)
            self.dirs[d] = 0
            return f"chmod 000 {show(d)}/"
        if r < 0.9:
            dirs = [d for d in self.dirs if self.dirs[d] == 0o755 and not self.frozen(d)]
            if not dirs:
                return None
            d = self.rng.choice(sorted(dirs))
            os.chmod(self.path(d), 0o555)
            self.dirs[d] = 0o555
            return f"chmod 555 {show(d)}/"
        if self.root_mode == 0o555:
            return None
        os.chmod(self.root, 0o555)
        self.root_mode = 0o555
        return "chmod 555 TREE/ (the top)"

    def m_restore(self):
        items = ([("f", r) for r, m in self.fmode.items() if m == 0] +
                 [("d", d) for d, m in self.dirs.items() if m != 0o755] +
                 ([("r", b"")] if self.root_mode != 0o755 else []))
        if not items:
            return None
        what, rel = self.rng.choice(sorted(items))
        if what == "f":
            os.chmod(self.path(rel), 0o644)
            self.fmode[rel] = 0o644
            return f"chmod 644 {show(rel)}"
        os.chmod(self.path(rel), 0o755)
        if what == "d":
            self.dirs[rel] = 0o755
        else:
            self.root_mode = 0o755
        return f"chmod 755 {show(rel) or 'TREE'}/"

    def mutate(self):
        done = []
        n = 0 if self.rng.random() < 0.2 else self.rng.randrange(1, 4)
        for _ in range(n):
            nfiles = len(self.files)
            if self.unrecorded:
                # what kiln wrote without a record is only its own while the
                # sources it was made from stay as they are (see the report)
                ops = [(self.m_add, 4), (self.m_touch, 2), (self.m_restore, 2)]
            else:
                ops = [(self.m_edit, 30), (self.m_add, 14 if nfiles < 40 else 2),
                       (lambda: self.m_add(download=True), 1),
                       (self.m_delete, 6 if nfiles > 20 else 1), (self.m_delete_dir, 1),
                       (self.m_rename, 6), (self.m_rename_dir, 3), (self.m_touch, 6),
                       (self.m_chmod, 3), (self.m_restrict, 4), (self.m_restore, 5),
                       (self.m_link_dir, 1), (self.m_snapshot, 1),
                       (self.m_same_stat_edit, 6), (self.m_dir_keep_mtime, 5)]
            fn = self.rng.choices([f for f, _ in ops], [w for _, w in ops])[0]
            what = fn()
            if what:
                done.append(what)
        if self.rng.random() < 0.3:
            done += self.change_options()
        return done

    def change_options(self):
        r, o, done = self.rng, self.opts, []
        fields = ["jobs", "verify", "cache"]
        if not self.unrecorded:
            # options that decide which siblings exist: not while siblings
            # are unrecorded (a run that takes them over must find each
            # still wanted)
            fields += ["codings"] * 3 + ["gzip_level", "brotli_quality", "stream_size"] * 2 + \
                ["zstd", "zstd", "zstd_level", "zopfli"] + \
                ["include", "exclude", "exclude", "max_ratio", "max_ratio", "min_size"] + \
                ["previous"] * 2
        for field in r.sample(fields, r.randrange(1, 3)):
            if field == "codings":
                o[field] = r.choices(["gzip", "both", "br"], [3, 4, 2])[0]
            elif field == "gzip_level":
                o[field] = r.choice([6, 6, 6, 1, 9, 12])
            elif field == "brotli_quality":
                o[field] = r.choice([5, 5, 5, 1, 3, 9])
            elif field in ("zstd", "previous"):
                o[field] = not o[field]
            elif field == "zstd_level":
                o[field] = r.choice([19, 19, 1, 3, 22])
            elif field == "zopfli":
                o[field] = r.choice([0, 0, 1, 3])
            elif field == "stream_size":
                o[field] = r.choice([None, "0", "64K", "64K", "65537"])
            elif field == "include":
                o[field] = [] if r.random() < 0.6 else r.sample(INCLUDES, r.randrange(1, 3))
            elif field == "exclude":
                o[field] = [] if r.random() < 0.5 else r.sample(EXCLUDES, r.randrange(1, 3))
            elif field == "max_ratio":
                o[field] = r.choice([None, None, 1, 0.5, round(r.uniform(0.5, 1), 2)])
            elif field == "min_size":
                o[field] = r.choice([None, None, 0, 100, 1000])
            elif field == "jobs":
                o[field] = r.choice([None, 1, 2])
            elif field == "verify":
                o[field] = r.random() < 0.3
            elif field == "cache":
                o[field] = r.random() < 0.4
            done.append(f"{field}={o[field]}")
        return ["options " + " ".join(done)]

    # ---- looking at the tree ---------------------------------------------

    def snapshot(self):
        snap = {}
        for d, subdirs, names in os.walk(self.root):
            for n in subdirs + names:
                full = os.path.join(d, n)
                st = os.lstat(full)
                snap[os.path.relpath(full, self.root)] = (
                    st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
        st = os.lstat(self.root)
        snap[b"."] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
        return snap

    def source_stats(self):
        out = {}
        for rel in self.files:
            st = os.lstat(self.path(rel))
            out[rel] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode,
                        st.st_uid)
        return out

    def on_disk(self):
        """Every regular file and directory under the tree."""
        files, dirs = {}, set()
        for d, subdirs, names in os.walk(self.root):
            for n in subdirs:
                if not os.path.islink(os.path.join(d, n)):  # a link out is not the tree's
                    dirs.add(os.path.relpath(os.path.join(d, n), self.root))
            for n in names:
                full = os.path.join(d, n)
                files[os.path.relpath(full, self.root)] = os.lstat(full)
        return files, dirs

    def check_sources(self, before):
        """The sources are the model's, and kiln changed nothing of them."""
        after = self.source_stats()
        for rel, data in self.files.items():
            if read(self.path(rel)) != data:
                raise Failure(f"source {show(rel)} changed")
            if before is not None and after[rel] != before[rel]:
                raise Failure(f"source {show(rel)}: status changed by kiln "
                              f"(ino, size, mtime, ctime, mode, uid: {before[rel]} -> {after[rel]})")
            if stat.S_IMODE(after[rel][4]) != self.fmode[rel]:
                raise Failure(f"source {show(rel)}: mode {stat.S_IMODE(after[rel][4]):o}")
        for d, m in self.dirs.items():
            if stat.S_IMODE(os.lstat(self.path(d)).st_mode) != m:
                raise Failure(f"directory {show(d)}: mode changed")

    def check_whole(self, temps_ok):
        """Nothing half written, nothing stray, whatever happened: every file
        is a source, a sibling of a path that decodes to a content that path
        once had, one of kiln's artifacts or journals at the top, or (after
        SIGKILL) a temporary file."""
        files, dirs = self.on_disk()
        for d in dirs - set(self.dirs):
            raise Failure(f"stray directory {show(d)}")
        for rel, st in files.items():
            if rel in self.files:
                continue
            base = rel.rpartition(b"/")[2]
            if rel in (MANIFEST, INDEX) or rel in SNIPPETS or (b"/" not in rel and audit.JOURNAL.match(rel)):
                continue
            if audit.TEMP.match(base):
                if temps_ok:
                    continue
                raise Failure(f"stray temporary file {show(rel)}")
            delta = audit.DELTA.match(base)
            if delta:  # a dictionary delta: decoded with its dictionary
                src = rel[:len(rel) - len(base)] + delta.group(1)
                data = read(self.path(rel))
                dictionary = self.dictionaries.get(data[8:40])
                if src not in self.history or dictionary is None:
                    raise Failure(f"stray file {show(rel)}")
                try:
                    got = sha(audit.decode_dcz(data, dictionary))
                except Exception:
                    raise Failure(f"{show(rel)}: does not decode (half written?)")
                if got not in self.history[src]:
                    raise Failure(f"{show(rel)}: decodes to bytes its source never had")
                continue
            suffix = next((x for x in SUFFIXES if rel.endswith(x)), None)
            src = rel[:-len(suffix)] if suffix else None
            if src not in self.history:
                raise Failure(f"stray file {show(rel)}")
            try:
                got = sha(audit.decode(SUFFIXES[suffix], read(self.path(rel))))
            except Exception:
                raise Failure(f"{show(rel)}: does not decode (half written?)")
            if got not in self.history[src]:
                raise Failure(f"{show(rel)}: decodes to bytes its source never had")

    def audit(self, strict=False, **opts):
        opts = {k: v for k, v in opts.items() if v}
        full = not opts  # the full audit, asked for twice in most steps
        if self.foreign_possible and not strict:
            opts["allow_unrecorded"] = True
            full = False
        if full:
            key = frozenset(self.snapshot().items())
            if self.memo and self.memo[0] == key:
                return self.memo[1]
        opts["quiet"] = True
        opts["sources"] = set(self.files)
        opts["previous"] = [self.prev]
        a = audit.Audit(self.root, opts)
        a.run()
        if full:
            self.memo = (key, a.problems)
        return a.problems

    def require_audit(self, what, **opts):
        opts["allow_temps"] = self.killed
        problems = self.audit(**opts)
        if problems:
            how = ", ".join(sorted(k for k, v in opts.items() if v))
            raise Failure(f"audit after {what} ({how or 'full'}):\n  " + "\n  ".join(problems[:20]))

    def check_agrees(self):
        """kiln check exits 0 exactly when a full audit passes and every file
        is readable; 3 when readable and the tree differs from its manifest."""
        before = self.snapshot()
        rc, stderr, _ = self.run_kiln(["check", "-q", os.fsdecode(self.root)], keep=False)
        if self.snapshot() != before:
            raise Failure("kiln check changed the tree")
        # check reports a sibling it has no record of even when it decodes
        problems = self.audit(strict=True)
        readable = not self.unreadable()
        want0 = not problems and readable
        said = stderr.decode(errors="replace").strip()
        if rc == 0 and not want0:
            raise Failure("kiln check exits 0, but " + (
                "the audit finds:\n  " + "\n  ".join(problems[:20]) if problems
                else f"unreadable: {[show(u) for u in self.unreadable()]}"))
        if rc != 0 and want0:
            raise Failure(f"kiln check exits {rc} where the audit passes:\n{said[:3000]}")
        if rc not in (0, 1, 3) or (readable and rc == 1):
            raise Failure(f"kiln check exits {rc}:\n{said[:3000]}")

    def unchanged_rerun(self, words, index_lags=True):
        """A run of the tree as the last one left it writes nothing.  The
        first such run may write the index, and only that (after a merge,
        which keeps no index: lib/index.h; or when the last run read a file
        changed in the clock tick it began in, which the index records only
        once the clock has moved past its change: docs/reruns.md); the
        next one nothing."""
        before = self.snapshot()
        rc, stderr, _ = self.run_kiln(words, keep=False)
        if rc != 0:
            raise Failure(f"the unchanged re-run exits {rc}:\n{stderr.decode(errors='replace')[:3000]}")
        after = self.snapshot()
        if after != before:
            diff = sorted(set(before.items()) ^ set(after.items()))
            names = sorted({show(k) for k, _ in diff})
            if index_lags and set(names) <= {".", show(INDEX)}:
                return self.unchanged_rerun(words, index_lags=False)
            raise Failure(f"an unchanged re-run wrote in the tree: {names[:20]}")

    def wait_for_dead_temps(self):
        """kiln removes a killed run's temporary files and journals once they
        are over 2 s old (by their ctime): wait for that before a run."""
        files, _ = self.on_disk()
        newest = max((int(st.st_ctime) for rel, st in files.items()
                      if audit.TEMP.match(rel.rpartition(b"/")[2])
                      or audit.JOURNAL.match(rel.rpartition(b"/")[2])), default=None)
        if newest is not None:
            delay = newest + 3.05 - time.time()
            if delay > 0:
                time.sleep(delay)

    def has_record(self):
        if os.path.exists(self.path(MANIFEST)):
            return True
        return any(audit.JOURNAL.match(n) for n in os.listdir(self.root))

    # ---- kiln actions ----------------------------------------------------

    def act(self):
        r = self.rng
        acts = [("run", 50), ("check", 6), ("clean", 4), ("no-manifest", 3),
                ("signal", 10), ("kill", 2), ("shards", 6), ("concurrent", 6)]
        if self.shim:
            acts.append(("fault", 10))
        if not os.path.exists(self.path(MANIFEST)) and not self.has_record():
            acts.append(("no-manifest", 20))  # after a clean: the mode it makes possible
        action = r.choices([a for a, _ in acts], [w for _, w in acts])[0]
        if action == "clean" and self.unrecorded and os.path.exists(self.path(MANIFEST)):
            action = "run"  # clean cannot take back what it has no record of
        if action == "shards" and (self.restricted() or self.unrecorded or self.opts["previous"]):
            action = "run"  # shards need the whole tree, a record, and no --previous
        self.counts[action] = self.counts.get(action, 0) + 1
        return getattr(self, "a_" + action.replace("-", "_"))()

    def run_words(self, extra=()):
        return self.opt_words() + ["--no-progress", "-q"] + list(extra) + [os.fsdecode(self.root)]

    def read_only(self):
        return [d for d, m in self.dirs.items() if m == 0o555] + (
            [b"."] if self.root_mode == 0o555 else [])

    def failed_opts(self):
        """What a run that failed may leave: assets it could not finish
        missing from the manifest (or recorded with siblings gone), siblings
        it could not remove recorded as stale, the siblings of what it could
        not read as they were."""
        return dict(partial=True, allow_stale=True, allow_missing=True,
                    unreadable=self.unreadable(), read_only=self.read_only(),
                    allow_unrecorded=self.unrecorded)

    def tree_failed(self, stderr):
        """Did kiln fail on the tree as a whole ("kiln: TREE: reason"), or
        run so short of memory that it could not even name what it failed
        on ("kiln: ?: out of memory", with or without its errno)?  Then
        any file may be one it could not open, its siblings left as they
        were, as for a file it cannot read: only the whole is checked."""
        lines = stderr.split(b"\n")
        return any(line.startswith(b"kiln: " + self.root + b": ") or
                   line.startswith(b"kiln: ?: out of memory") for line in lines)

    @staticmethod
    def refused(stderr):
        """Did kiln refuse the run because its globs would drop every
        sibling (README, "Globs")?  It then touched nothing."""
        return b"the globs exclude every file that has siblings" in stderr

    def manifest_failed(self, stderr):
        return b"cannot write the manifest" in stderr

    def after_run(self, what, rc, stderr, words, no_manifest=False, fault=False):
        """Audit after a compress run that ran to its end."""
        err = stderr.decode(errors="replace")
        if rc not in (0, 1):
            raise Failure(f"{what}: exit status {rc}:\n{err[:3000]}")
        if rc == 1 and self.refused(stderr):
            # refused (README, "Globs"): the tree is as the changes left it
            self.check_whole(temps_ok=self.killed)
            return
        if rc == 1 and not fault and not self.restricted():
            raise Failure(f"{what}: exit 1 with no fault and nothing unreadable:\n{err[:3000]}")
        if rc == 0 and self.unreadable() and not no_manifest:
            raise Failure(f"{what}: exit 0 though {[show(u) for u in self.unreadable()]} cannot be read")
        if rc == 0:
            self.killed = False  # it removed what a killed run left
            self.require_audit(what, no_manifest=no_manifest)
            if no_manifest:
                self.unrecorded = True
            else:
                self.unrecorded = False
                self.dirty.clear()
                self.unchanged_rerun([w for w in words if w != "-f"])
            return
        if no_manifest:
            self.unrecorded = True
        if self.tree_failed(stderr):
            # kiln could not even start on the tree (out of memory at its
            # top): it did nothing, and the tree is as the changes left it
            self.check_whole(temps_ok=self.killed)
            return
        lag = self.manifest_failed(stderr)
        self.require_audit(what + " (exit 1)", manifest_may_lag=lag, no_manifest=no_manifest,
                           **self.failed_opts())

    def a_run(self):
        self.wait_for_dead_temps()
        extra = ["-f"] if self.rng.random() < 0.1 else []
        words = self.run_words(extra)
        rc, stderr, dt = self.run_kiln(words)
        if rc == 0:
            self.avg_run = 0.8 * self.avg_run + 0.2 * dt
        self.after_run("run", rc, stderr, words)
        return f"run {' '.join(words[:-1])} -> {rc}"

    def a_concurrent(self):
        """Two runs of the tree started at once (a CI step run twice by
        accident), one of them perhaps forced: one waits for the other
        (docs/guarantees.md, "One run at a time"), each ends as a run alone
        would, and the tree then passes the full audit."""
        self.wait_for_dead_temps()
        r = self.rng
        first = self.run_words()
        second = self.run_words(["-f"] if r.random() < 0.5 else [])
        errs = [os.path.join(self.tmp, b"err.a"), os.path.join(self.tmp, b"err.b")]
        procs = [self.start(first, err_path=errs[0])]
        if r.random() < 0.5:
            time.sleep(r.random() * max(self.avg_run, 0.05))
        procs.append(self.start(second, err_path=errs[1]))
        ends = [self.finish(p, err_path=e) for p, e in zip(procs, errs)]
        for (rc, err), words in zip(ends, (first, second)):
            if rc not in (0, 1):
                raise Failure(f"concurrent run {' '.join(words[:-1])}: exit {rc}:\n"
                              f"{err.decode(errors='replace')[:3000]}")
            if b"another kiln" in err:  # -q: nothing to say about waiting
                raise Failure(f"concurrent run: {err.decode(errors='replace')[:2000]}")
        rcs = [rc for rc, _ in ends]
        self.last_stderr = ends[1][1]
        # the later of the two ran on what the earlier left: audit as after it
        self.after_run("two runs at once", max(rcs), ends[0][1] + ends[1][1], second)
        return f"two runs at once ({' '.join(second[:-1])}) -> {rcs}"

    def a_fault(self):
        self.wait_for_dead_temps()
        r = self.rng
        call = r.choice(FAULT_CALLS)
        n = self.logsize(1, 3000) if call == "malloc" else r.randrange(1, 60)
        spec = f"{call}:{'+' if r.random() < 0.15 else ''}{n}"
        if r.random() < 0.2 and call != "malloc":
            spec += ":5"  # EIO
        extra = ["--fsync"] if call == "fsync" or r.random() < 0.1 else []
        words = self.run_words(extra)
        rc, stderr, _ = self.run_kiln(words, fault=spec)
        if call == "malloc" and self.opts["zopfli"] and rc == -signal.SIGSEGV:
            # zopfli does not check its allocations: out of memory inside
            # it ends kiln as the OOM killer would, so this is a kill
            self.killed = True
            return f"run {' '.join(words[:-1])} with KILN_FAULT={spec} -> {rc} (in zopfli: as killed)"
        self.after_run(f"run under fault {spec}", rc, stderr, words, fault=True)
        return f"run {' '.join(words[:-1])} with KILN_FAULT={spec} -> {rc}"

    def a_no_manifest(self):
        self.wait_for_dead_temps()
        words = self.run_words(["--no-manifest"])
        held = self.has_record()
        before = self.snapshot()
        rc, stderr, _ = self.run_kiln(words)
        if held:
            if rc != 1:
                raise Failure(f"--no-manifest on a tree holding kiln's record: exit {rc}, not 1")
            if self.snapshot() != before:
                raise Failure("--no-manifest was refused, but the tree changed")
            return f"run {' '.join(words[:-1])} -> {rc} (refused: the tree holds a record)"
        self.after_run("run --no-manifest", rc, stderr, words, no_manifest=True)
        return f"run {' '.join(words[:-1])} -> {rc}"

    def a_shards(self):
        """The tree in N shards, run one after another on the tree itself,
        then merged: the result must pass the full audit, and a run of the
        whole tree after it must find nothing to do (but write the index a
        merge does not keep)."""
        self.wait_for_dead_temps()
        n = self.rng.choice([2, 3])
        base = self.opt_words() + ["--no-progress", "-q"]
        for k in range(1, n + 1):
            words = base + ["--shard", f"{k}/{n}", os.fsdecode(self.root)]
            rc, stderr, _ = self.run_kiln(words)
            if rc == 1 and self.refused(stderr):
                # the globs drop every sibling of that shard: a run of the
                # whole tree, forced, puts the tree right (and takes the
                # parts written so far in)
                words = self.run_words(["-f"])
                rc, stderr, _ = self.run_kiln(words)
                self.after_run("a forced run after a refused shard", rc, stderr, words)
                return f"shards of {n}: {k}/{n} refused (globs); run -f -> {rc}"
            if rc != 0:
                raise Failure(f"shard {k}/{n}: exit {rc}:\n{stderr.decode(errors='replace')[:3000]}")
        rc, stderr, _ = self.run_kiln(["merge", "-q", os.fsdecode(self.root)])
        if rc != 0:
            raise Failure(f"merge of {n} shards: exit {rc}:\n{stderr.decode(errors='replace')[:3000]}")
        if any(audit.PART.match(r.rpartition(b"/")[2]) for r in self.on_disk()[0]):
            raise Failure("a part is left after the merge")
        self.require_audit(f"{n} shards and a merge")
        self.dirty.clear()
        self.unchanged_rerun(self.run_words(), index_lags=True)
        return f"shards of {n} ({' '.join(base[:-2])}), merge -> 0"

    def a_check(self):
        # check_agrees() runs after every step
        return "check"

    def a_clean(self):
        self.wait_for_dead_temps()
        had_manifest = os.path.exists(self.path(MANIFEST))
        held = self.has_record()
        before = self.snapshot()
        rc, stderr, _ = self.run_kiln(["clean", "-q", os.fsdecode(self.root)])
        err = stderr.decode(errors="replace")
        files, _ = self.on_disk()
        leftover = sorted(show(r) for r in files if r not in self.files)
        if not had_manifest and not held:
            # no record at all: nothing kiln can know it wrote (siblings of
            # a --no-manifest run are not known as kiln's)
            if rc not in (0, 1) or self.snapshot() != before:
                raise Failure(f"kiln clean without a record: exit {rc}, or the tree changed")
            return f"clean -> {rc} (no record)"
        if rc == 0:
            if self.foreign_possible:  # what clean leaves in place must be right
                problems = self.audit(no_manifest=True)
                if problems:
                    raise Failure("after kiln clean:\n  " + "\n  ".join(problems[:20]))
                leftover = [r for r in leftover if not r.endswith(tuple(s.decode() for s in SUFFIXES))]
            if leftover:
                raise Failure(f"kiln clean exits 0 but leaves {leftover[:20]}")
            self.unrecorded = False
            self.killed = False
            return f"clean -> {rc}"
        if rc != 1:
            raise Failure(f"kiln clean: exit {rc}:\n{err[:3000]}")
        if not had_manifest and held:
            raise Failure("kiln clean refuses a tree whose record is a journal, leaving "
                          f"{leftover[:20]}:\n{err[:2000]}")
        if not self.restricted():
            raise Failure(f"kiln clean exits 1 on a readable, writable tree:\n{err[:3000]}")
        self.require_audit("a failed clean", manifest_may_lag=True, **self.failed_opts())
        return f"clean -> {rc}"

    def a_signal(self):
        self.wait_for_dead_temps()
        r = self.rng
        sig = r.choice([signal.SIGINT, signal.SIGTERM])
        double = sig == signal.SIGINT and r.random() < 0.3
        no_manifest = not self.has_record() and r.random() < 0.3
        words = self.run_words(["--no-manifest"] if no_manifest else [])
        delay = r.uniform(0, 1.3) * self.avg_run
        gap = r.uniform(0.005, 0.05)
        p = self.start(words)
        time.sleep(delay)
        p.send_signal(sig)
        if double:
            time.sleep(gap)
            p.send_signal(sig)
        rc, stderr = self.finish(p)
        self.last_stderr = stderr
        desc = (f"run {' '.join(words[:-1])}, {'two ' if double else ''}"
                f"{signal.Signals(sig).name} after {delay:.3f} s -> {rc}")
        if no_manifest:
            self.unrecorded = True
        if rc in (0, 1):
            self.after_run("a run signalled too late", rc, stderr, words, no_manifest=no_manifest)
            return desc
        if rc != -sig:
            raise Failure(f"signalled run: exit status {rc}:\n{stderr.decode(errors='replace')[:3000]}")
        if self.refused(stderr):
            # refused before it began (a signal may still end it): the tree
            # is as the changes left it
            self.check_whole(temps_ok=self.killed)
            return desc + " (refused: globs)"
        if double:
            # stopped at once: whole, but not up to date (a killed run's
            # temporary files may not have been reached yet)
            self.check_whole(temps_ok=self.killed)
            return desc
        if b"interrupted: saving what is done" not in stderr:
            # the signal came before kiln could catch it: it died at once,
            # having done nothing (or, after the run, everything)
            self.check_whole(temps_ok=self.killed)
            return desc + " (before kiln caught it)"
        lag = self.manifest_failed(stderr)
        if lag and not self.restricted():
            raise Failure("an interrupted run could not write its manifest")
        if self.restricted():
            self.require_audit(signal.Signals(sig).name, no_manifest=no_manifest,
                               manifest_may_lag=lag, **self.failed_opts())
        else:
            self.require_audit(signal.Signals(sig).name, partial=True, no_manifest=no_manifest,
                               allow_unrecorded=self.unrecorded)
        return desc

    def a_kill(self):
        self.wait_for_dead_temps()
        no_manifest = not self.has_record() and self.rng.random() < 0.3
        words = self.run_words(["--no-manifest"] if no_manifest else [])
        delay = self.rng.uniform(0, 1.3) * self.avg_run
        p = self.start(words)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        rc, _ = self.finish(p)
        self.killed = True
        if no_manifest:
            self.unrecorded = True
        # nothing to audit but wholeness; the next run that exits 0 must
        # put everything right
        return f"run {' '.join(words[:-1])}, SIGKILL after {delay:.3f} s -> {rc}"

    # ---- the sequence ----------------------------------------------------

    def one_step(self):
        self.step += 1
        self.last_stderr = b""
        done = self.mutate()
        self.fix_owner()
        before = self.source_stats()
        entry = f"step {self.step}: " + ("; ".join(done) + " | " if done else "")
        if self.restricted():
            entry += "[" + ", ".join(
                [f"000 {show(u)}" for u in self.unreadable()] +
                [f"555 {show(d)}/" for d, m in sorted(self.dirs.items()) if m == 0o555] +
                (["555 TREE/"] if self.root_mode == 0o555 else [])) + "] "
        self.log.append(entry + "...")
        what = self.act()
        self.log[-1] = entry + what
        if self.args.verbose:
            print(self.log[-1], flush=True)
        self.check_sources(before)
        self.check_whole(temps_ok=self.killed)
        self.check_agrees()
        self.check_outside()

    def setup(self):
        for _ in range(self.rng.randrange(20, 30)):
            self.m_add()
        self.m_add(download=True)
        self.fix_owner()
        self.log.append(f"step 0: a tree of {len(self.files)} files")

    def final(self):
        """Readable again, one plain run: the whole invariant, then clean."""
        self.step += 1
        for rel, m in list(self.fmode.items()):
            if m == 0:
                os.chmod(self.path(rel), 0o644)
                self.fmode[rel] = 0o644
        for d, m in list(self.dirs.items()):
            if m != 0o755:
                os.chmod(self.path(d), 0o755)
                self.dirs[d] = 0o755
        os.chmod(self.root, 0o755)
        self.root_mode = 0o755
        self.log.append(f"step {self.step} (final): everything readable, run, clean")
        self.wait_for_dead_temps()
        before = self.source_stats()
        words = self.run_words()
        rc, stderr, _ = self.run_kiln(words)
        if rc == 1 and self.refused(stderr):
            # the globs drop every sibling: do as the message says
            self.log[-1] += " (refused: globs; again with --force)"
            words = ["-f"] + words
            rc, stderr, _ = self.run_kiln(words)
        if rc != 0:
            raise Failure(f"final run: exit {rc}:\n{stderr.decode(errors='replace')[:3000]}")
        self.after_run("the final run", rc, stderr, words)
        self.check_sources(before)
        self.check_agrees()
        self.a_clean()
        self.check_sources(before)
        self.check_outside()

    def reset(self):
        """After a failure, with --keep-going: back to the sources alone."""
        files, dirs = self.on_disk()
        for rel in files:
            if rel not in self.files:
                os.unlink(self.path(rel))
        for d in sorted(dirs - set(self.dirs), key=len, reverse=True):
            shutil.rmtree(self.path(d), ignore_errors=True)
        self.unrecorded = False
        self.foreign_possible = False
        self.killed = False

    def fail(self, e):
        self.failures.append((self.step, str(e)))
        print(f"sequence: FAIL at step {self.step} (seed {self.seed}): {e}", flush=True)
        print("sequence: the last steps:", flush=True)
        for line in self.log[-25:]:
            print("  " + line, flush=True)
        if self.last_stderr:
            print("sequence: kiln's last messages:\n  " + "\n  ".join(
                self.last_stderr.decode(errors="replace").splitlines()[-15:]), flush=True)
        print(f"sequence: rerun with --seed {self.seed} --steps {self.step}", flush=True)

    def go(self):
        start = time.monotonic()
        budget = self.args.seconds
        self.setup()
        while True:
            if self.args.steps is not None and self.step >= self.args.steps:
                break
            if self.args.steps is None and time.monotonic() - start > budget * 0.9:
                break
            try:
                self.one_step()
            except Failure as e:
                self.fail(e)
                if not self.args.keep_going:
                    return 1
                self.reset()
        try:
            if not self.args.keep:  # the tree as the last step left it
                self.final()
        except Failure as e:
            self.fail(e)
        elapsed = time.monotonic() - start
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        print(f"sequence: {self.step} steps in {elapsed:.0f} s "
              f"({60 * self.step / max(elapsed, 1e-9):.0f} per minute; {counts}); "
              f"{len(self.failures)} failed", flush=True)
        return 1 if self.failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("KILN_SEQUENCE_SECONDS") or 60))
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the scratch tree as the last step left it (no final clean)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big")
    print(f"sequence: seed {args.seed}; rerun with --seed {args.seed}", flush=True)
    seq = Sequence(args)
    status = seq.go()
    if status == 0 and not args.keep:
        shutil.rmtree(seq.tmp, ignore_errors=True)
    else:
        print(f"sequence: kept {os.fsdecode(seq.tmp)}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
