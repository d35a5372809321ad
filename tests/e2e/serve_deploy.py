#!/usr/bin/python3
"""serve_deploy.py - deploys under load: `kiln serve LINK` answers requests
from many threads while a new release is put in place, F times a second.

usage: serve_deploy.py --port PORT --link LINK --a DIR --b DIR --pid PID
                       [--mode flip|swap|hardlink|inplace] [--kiln KILN]
                       [--seconds S] [--threads N] [--flips-per-second F]

The caller starts `kiln serve LINK` on 127.0.0.1:PORT (process PID); both
releases are kiln-compressed trees with the same asset paths and other
bytes.  Each deploy puts the other release in place, by --mode:
  flip      LINK is a symbolic link to DIR a: a new link renamed over it,
            then SIGHUP (the default);
  swap      LINK is a directory, a copy of a: the other release copied
            beside it (mtimes kept), LINK renamed away, the copy renamed to
            LINK, the old one removed at once (rm -rf); no signal;
  hardlink  LINK is a symbolic link to a release directory: the next
            release is a hard-linked copy of the current one (cp -al, as
            rsync --link-dest makes), every other deploy with the files
            that differ renamed in from the other release, every other one
            unchanged (its manifest the same file); LINK flipped to it and
            the old release removed at once; no signal;
  inplace   LINK is a directory, a copy of a: each source that differs
            replaced (renamed over) by the other release's, then KILN run
            on LINK (--brotli --zstd), as a build in place does; no signal.
For S seconds (default 3) N threads (default 8) ask random assets with
random Accept-Encoding values, one request in eight a Range, over
keep-alive connections.  Every response must be 200 (206 for a Range),
its body the representation its ETag names (the first 20 hex digits of
the representation's SHA-256; or, for a source sent as it is, "MTIME-SIZE"
in hex, identity, of that size), and the body decoded per its
Content-Encoding must be that asset's source in release a or b (a Range:
its first bytes): zero failed requests, zero responses whose body does
not match its headers, old or new.  Prints counts and exits 1 on any
failure.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_rules as R  # noqa: E402

AES = [None, "gzip", "br", "zstd", R.CHROMIUM_AE, "gzip, br", "br;q=0, *"]


def sources(tree):
    with open(os.path.join(tree, "kiln-manifest.json")) as f:
        keys = sorted(json.load(f)["files"])
    out = {}
    for k in keys:
        with open(os.path.join(tree, k), "rb") as f:
            out[k] = f.read()
    return out


def relink(link, target):
    tmp = link + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.abspath(target), tmp)
    os.replace(tmp, link)


def rename_in(src, dst):
    """DST replaced by a copy of SRC (mtime kept), renamed over it."""
    shutil.copy2(src, dst + ".deploy")
    os.replace(dst + ".deploy", dst)


def deploy(o, rel, cur, nxt, n, differ):
    if o.mode == "flip":
        relink(o.link, rel[nxt])
        os.kill(o.pid, signal.SIGHUP)
    elif o.mode == "swap":
        shutil.rmtree(o.link + ".new", ignore_errors=True)
        shutil.copytree(rel[nxt], o.link + ".new", symlinks=True)
        os.rename(o.link, o.link + ".old")
        os.rename(o.link + ".new", o.link)
        shutil.rmtree(o.link + ".old")
    elif o.mode == "hardlink":
        old = os.path.realpath(o.link)
        new = "%s.rel%d" % (o.link, n + 1)
        subprocess.run(["cp", "-al", old, new], check=True)
        if nxt != cur:  # what differs, renamed in (the sources, siblings, manifest)
            for dirpath, _, files in os.walk(rel[nxt]):
                for f in files:
                    s = os.path.join(dirpath, f)
                    d = os.path.join(new, os.path.relpath(s, rel[nxt]))
                    with open(s, "rb") as x, open(d, "rb") as y:
                        same = x.read() == y.read()
                    if not same:
                        rename_in(s, d)
        relink(o.link, new)
        shutil.rmtree(old)
    elif o.mode == "inplace":
        for k in differ:
            rename_in(os.path.join(rel[nxt], k), os.path.join(o.link, k))
        subprocess.run([o.kiln, "-q", "--brotli", "--zstd", o.link], check=True)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--link", required=True)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--flips-per-second", type=float, default=5.0)
    ap.add_argument("--mode", choices=("flip", "swap", "hardlink", "inplace"), default="flip")
    ap.add_argument("--kiln", help="kiln, for --mode inplace")
    o = ap.parse_args(argv)
    src = {"a": sources(o.a), "b": sources(o.b)}
    keys = sorted(set(src["a"]) & set(src["b"]))
    differ = [k for k in keys if src["a"][k] != src["b"][k]]
    if not differ:
        print("FAIL: the two releases have the same bytes", file=sys.stderr)
        return 1
    stop = threading.Event()
    lock = threading.Lock()
    stats = {"requests": 0, "a": 0, "b": 0, "failures": []}

    def fail(msg):
        with lock:
            if len(stats["failures"]) < 30:
                print("FAIL: " + msg, file=sys.stderr)
            stats["failures"].append(msg)

    def worker(seed):
        rnd = random.Random(seed)
        conn = None
        while not stop.is_set():
            k, ae = rnd.choice(keys), rnd.choice(AES)
            ranged = rnd.randrange(8) == 0
            headers = {"Range": "bytes=0-99"} if ranged else {}
            if ae is not None and not ranged:
                headers["Accept-Encoding"] = ae
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", o.port, timeout=10)
            try:
                conn.request("GET", R.url_path("/", k.encode()), headers=headers)
                r = conn.getresponse()
                body = r.read()
            except (OSError, http.client.HTTPException) as e:
                fail("%s [%s]: %s" % (k, ae, e))
                conn.close()
                conn = None
                continue
            with lock:
                stats["requests"] += 1
            if ranged:
                if r.status != 206 or r.getheader("Content-Encoding") or \
                        not any(src[n][k][:100] == body for n in ("a", "b")):
                    fail("%s [Range]: status %d, %s" % (k, r.status, "not a release's first bytes"))
                continue
            if r.status != 200:
                fail("%s [%s]: status %d" % (k, ae, r.status))
                continue
            etag = (r.getheader("ETag") or "").strip('"')
            m = re.fullmatch(r"[0-9a-f]+-([0-9a-f]+)", etag)
            if m:  # a source sent as it is: identity, of the size it names
                if r.getheader("Content-Encoding") or int(m.group(1), 16) != len(body):
                    fail("%s [%s]: ETag %r on a body of %d bytes, Content-Encoding %r" % (
                        k, ae, etag, len(body), r.getheader("Content-Encoding")))
                    continue
            elif not etag or not hashlib.sha256(body).hexdigest().startswith(etag):
                fail("%s [%s]: the body is not the representation its ETag %r names" % (k, ae, etag))
                continue
            try:
                plain = R.decode(r.getheader("Content-Encoding"), body)
            except ValueError as e:
                fail("%s [%s]: does not decode: %s" % (k, ae, e))
                continue
            which = [n for n in ("a", "b") if src[n][k] == plain]
            if not which:
                fail("%s [%s]: decodes to neither release's source" % (k, ae))
            elif k in differ:
                with lock:
                    stats[which[0]] += 1
        if conn:
            conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(o.threads)]
    for t in threads:
        t.start()
    end = time.time() + o.seconds
    flips, cur = 0, "a"
    rel = {"a": o.a, "b": o.b}
    while time.time() < end:
        time.sleep(1.0 / o.flips_per_second)
        nxt = "b" if cur == "a" else "a"
        if o.mode == "hardlink" and flips % 2:
            nxt = cur  # a release with nothing changed: the same manifest
        deploy(o, rel, cur, nxt, flips, differ)
        cur = nxt
        flips += 1
    stop.set()
    for t in threads:
        t.join()
    print("serve_deploy: %d requests over %d flips (%d of release a's changed files, %d of b's), "
          "%d failures" % (stats["requests"], flips, stats["a"], stats["b"], len(stats["failures"])),
          file=sys.stderr)
    if stats["a"] == 0 or stats["b"] == 0:
        print("FAIL: one release was never served: the flips did not take", file=sys.stderr)
        return 1
    return 1 if stats["failures"] or stats["requests"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
