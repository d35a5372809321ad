#!/usr/bin/python3
"""serve_deploy.py - deploys under load: `kiln serve LINK` answers requests
from many threads while LINK is flipped between two releases and the server
told (SIGHUP) each time.

usage: serve_deploy.py --port PORT --link LINK --a DIR --b DIR --pid PID
                       [--seconds S] [--threads N] [--flips-per-second F]

The caller starts `kiln serve LINK` on 127.0.0.1:PORT (process PID), LINK
a symbolic link to DIR a; both releases are kiln-compressed trees with the
same asset paths and other bytes.  For S seconds (default 3) N threads
(default 8) ask random assets with random Accept-Encoding values over
keep-alive connections while the main thread flips LINK (a new link
renamed over it) and sends SIGHUP, F times a second.  Every response must
be 200, its body must be the representation its ETag names (the ETag is
the first 20 hex digits of the representation's SHA-256: the digest of the
body must start with them), and the body decoded per its Content-Encoding
must be that asset's source in release a or in release b: zero failed
requests, zero responses whose body does not match its headers, old or new.
Prints counts and exits 1 on any failure.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import signal
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
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", o.port, timeout=10)
            try:
                conn.request("GET", R.url_path("/", k.encode()),
                             headers={"Accept-Encoding": ae} if ae is not None else {})
                r = conn.getresponse()
                body = r.read()
            except (OSError, http.client.HTTPException) as e:
                fail("%s [%s]: %s" % (k, ae, e))
                conn.close()
                conn = None
                continue
            with lock:
                stats["requests"] += 1
            if r.status != 200:
                fail("%s [%s]: status %d" % (k, ae, r.status))
                continue
            etag = (r.getheader("ETag") or "").strip('"')
            if not etag or not hashlib.sha256(body).hexdigest().startswith(etag):
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
    while time.time() < end:
        time.sleep(1.0 / o.flips_per_second)
        cur = "b" if cur == "a" else "a"
        tmp = o.link + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(os.path.abspath(o.a if cur == "a" else o.b), tmp)
        os.replace(tmp, o.link)
        os.kill(o.pid, signal.SIGHUP)
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
