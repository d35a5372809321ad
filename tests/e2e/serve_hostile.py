#!/usr/bin/python3
"""serve_hostile.py - hostile and malformed requests against a running
`kiln serve`, over raw sockets.

usage: serve_hostile.py --port PORT --tree DIR --secret TEXT [--fuzz N] [--seed S]

The caller serves DIR (a kiln-compressed tree) on 127.0.0.1:PORT and has
planted TEXT in files outside DIR (beside it, and reachable by links from
inside it).  Every response to every request here must not hold TEXT
(nothing outside DIR is ever sent), and a request that names no asset of
the manifest must not be answered 200.  The list:

  - path traversal in every spelling: "..", "%2e%2e", "%2E%2E", ".%2e",
    "%2e.", double-encoded "%252e", encoded slashes and backslashes, the
    overlong UTF-8 "%c0%ae", absolute-form targets, "*", a target with no
    leading '/', and the links planted inside DIR;
  - %00 and raw NUL, control bytes in the request line;
  - overlong request lines and header fields, a flood of header fields;
  - pipelined requests: 40 GETs in one write, answered in order, each body
    the asset's own bytes;
  - absurd Range sets (thousands of ranges, huge and negative numbers,
    backwards ranges) and absurd Accept-Encoding values;
  - slow senders: connections that send half a request and stall, while
    other requests are answered;
  - methods other than GET and HEAD, bodies on GET, garbage and binary
    junk, HTTP/0.9 and unknown versions;
  - --fuzz N: N requests made by mutating valid ones (bytes flipped,
    inserted, deleted, pieces repeated), seeded.

Afterwards the server must still answer a plain GET with the right bytes.
Prints "FAIL: what" per failure and "serve_hostile: N requests, M
failures"; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import json
import os
import random
import socket
import sys
import time
import urllib.parse

failures = []
count = 0


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def exchange(port, data, timeout=5.0, pause=None):
    """Send DATA (bytes, or a list of pieces sent PAUSE seconds apart) on a
    new connection; return every byte received until the server closes or
    TIMEOUT passes without a byte."""
    global count
    count += 1
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        for piece in (data if isinstance(data, list) else [data]):
            try:
                s.sendall(piece)
            except OSError:
                break
            if pause:
                time.sleep(pause)
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        while True:
            try:
                b = s.recv(65536)
            except (socket.timeout, OSError):
                break
            if not b:
                break
            out += b
    finally:
        s.close()
    return out


def responses(data):
    """Split DATA into (status, headers dict, body) responses, by
    Content-Length; a response without one ends the data."""
    out = []
    while data.startswith(b"HTTP/"):
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.split(b"\r\n")
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            break
        h = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            h[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
        n = int(h.get("content-length", "0")) if status not in (204, 304) else 0
        out.append((status, h, rest[:n]))
        data = rest[n:]
    return out


def req(target, headers=(), method=b"GET", version=b"HTTP/1.1"):
    lines = [method + b" " + target + b" " + version, b"Host: 127.0.0.1"]
    lines += list(headers) + [b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def no_secret(what, data, secret):
    if secret in data:
        fail("%s: the response holds the secret from outside the tree" % what)


def refused(what, port, data, secret, allowed=(400, 403, 404, 405, 414, 431, 501, 505)):
    """DATA must get no 200 (or no answer at all), and never the secret."""
    got = exchange(port, data)
    no_secret(what, got, secret)
    for st, _, _ in responses(got):
        if st not in allowed:
            fail("%s: status %d, want one of %s or no answer" % (what, st, allowed))


TRAVERSALS = [
    b"/../secret.txt", b"/../../secret.txt", b"/%2e%2e/secret.txt", b"/%2E%2E/secret.txt",
    b"/.%2e/secret.txt", b"/%2e./secret.txt", b"/%2e%2e%2fsecret.txt", b"/..%2fsecret.txt",
    b"/..%2Fsecret.txt", b"/..%5csecret.txt", b"/..\\secret.txt", b"/%252e%252e/secret.txt",
    b"/%c0%ae%c0%ae/secret.txt", b"/%c0%af../secret.txt", b"/assets/../../secret.txt",
    b"/assets/%2e%2e/%2e%2e/secret.txt", b"//secret.txt", b"/./secret.txt",
    b"/assets/./../secret.txt", b"/%2fetc%2fpasswd", b"//etc/passwd", b"/etc/passwd",
    b"/..", b"/.", b"/%2e", b"/%2e%2e", b"/assets/..", b"/index.html/..",
    b"/index.html%00", b"/index.html%00.txt", b"/%00", b"/index.html\x00.txt",
    b"/index.html%", b"/index.html%4", b"/index.html%zz", b"/link-out.txt",
    b"/link-dir/secret.txt", b"/docs/read%20me.html", b"/docs/caf%C3%A9-%C3%BC.css", b"/noise.js", b"/kiln-manifest.json",
    b"/kiln.nginx.conf", b"/index.html.gz", b"/index.html.br", b"/settings.js.gz",
    b"http://127.0.0.1/../secret.txt", b"../secret.txt", b"secret.txt", b"*",
    b"/\x01\x02", b"/index.html\r", b"/%0d%0aSet-Cookie:x=1",
]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--fuzz", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args(argv)
    secret = o.secret.encode()
    port = o.port
    with open(os.path.join(o.tree, "index.html"), "rb") as f:
        index = f.read()
    with open(os.path.join(o.tree, "kiln-manifest.json")) as f:
        assets = sorted(json.load(f)["files"])

    # traversal, NUL, control bytes, kiln's own files, siblings by name
    for t in TRAVERSALS:
        for h in ((), (b"Accept-Encoding: gzip, br, zstd",)):
            if b"\x00" in t:
                # libmicrohttpd ends the target at a raw NUL: what is
                # answered is the part before it, never more
                got = exchange(port, req(t, h))
                no_secret("GET %r" % t, got, secret)
                for st, _, body in responses(got):
                    if st == 200 and body != index and not h:
                        fail("GET %r: 200 with other bytes than index.html" % t)
                continue
            refused("GET %r %s" % (t, h), port, req(t, h), secret)

    # overlong request line and header fields, header floods
    refused("a 100 KB URL", port, req(b"/" + b"a" * 100000), secret)
    refused("a 100 KB header field", port, req(b"/", [b"X-Long: " + b"b" * 100000]), secret)
    refused("5000 header fields", port, req(b"/", [b"X-%d: y" % i for i in range(5000)]), secret)
    refused("a 64 KB Accept-Encoding", port,
            req(b"/", [b"Accept-Encoding: " + b"gzip;q=0.5, " * 5000]), secret)

    # absurd Range sets and values: never anything but the asset's bytes
    ranges = [b"bytes=" + b",".join(b"%d-%d" % (i, i) for i in range(3000)),
              b"bytes=0-,0-,0-,0-,0-,0-,0-,0-,0-,0-", b"bytes=99999999999999999999999-",
              b"bytes=-99999999999999999999999", b"bytes=-0", b"bytes=5-1", b"bytes=-",
              b"bytes=--1", b"bytes=0-0-0", b"bytes= 1 - 2 ", b"pages=1-2", b"bytes=1-2;x",
              b"bytes=18446744073709551615-18446744073709551616"]
    for r in ranges:
        got = exchange(port, req(b"/index.html", [b"Range: " + r]))
        no_secret("Range %r" % r[:40], got, secret)
        for st, h, body in responses(got):
            if st == 200 and body != index:
                fail("Range %r: 200 with other bytes than index.html" % r[:40])
            elif st == 206 and body not in index:
                fail("Range %r: 206 with bytes index.html does not hold" % r[:40])
            elif st not in (200, 206, 416, 400, 431):
                fail("Range %r: status %d" % (r[:40], st))

    # pipelining: 40 requests in one write, answered in order
    top = os.path.realpath(o.tree)
    targets = [a for a in assets if not a.endswith(".png") and
               os.path.realpath(os.path.join(o.tree, a)) == os.path.join(top, a)][:8]
    pipe = b"".join(req(urllib.parse.quote("/" + t).encode(), [], b"GET", b"HTTP/1.1")
                    .replace(b"Connection: close\r\n", b"") for t in targets * 5)
    got = responses(exchange(port, pipe + req(b"/index.html")))
    want = [t for t in targets * 5] + ["index.html"]
    if len(got) != len(want):
        fail("pipelined: %d responses to %d requests" % (len(got), len(want)))
    for (st, _, body), t in zip(got, want):
        with open(os.path.join(o.tree, t), "rb") as f:
            src = f.read()
        if st != 200 or body != src:
            fail("pipelined %s: status %d, %s" % (t, st, "its bytes" if body == src else "other bytes"))

    # slow senders stall while others are served
    slow = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        slow.append(s)
    got = responses(exchange(port, req(b"/index.html")))
    if not got or got[0][0] != 200 or got[0][2] != index:
        fail("with 20 slow senders stalled, a request is not answered with index.html")
    for s in slow:
        s.close()
    got = exchange(port, [b"GET /index.html HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n",
                          b"Connection: close\r\n", b"\r\n"], pause=0.3)
    r = responses(got)
    if not r or r[0][0] != 200 or r[0][2] != index:
        fail("a request sent in pieces 0.3 s apart is not answered with index.html")

    # methods, bodies, versions, junk
    for m in (b"POST", b"PUT", b"DELETE", b"OPTIONS", b"TRACE", b"CONNECT", b"PATCH", b"BREW"):
        refused("method %s" % m.decode(), port, req(b"/index.html", [b"Content-Length: 0"], m),
                secret)
    refused("GET with a body and a huge Content-Length", port,
            req(b"/index.html", [b"Content-Length: 99999999999999"]) + b"x" * 1000, secret,
            allowed=(200, 400, 413))
    refused("chunked GET with junk chunks", port,
            req(b"/index.html", [b"Transfer-Encoding: chunked"]) + b"zz\r\nxx\r\n", secret,
            allowed=(200, 400, 501))
    for junk in (b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET /\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                 b"GET / HTTP/1.1\n\n", b"GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
                 b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", b"\x00\x01\x02\xff" * 100,
                 b"\r\n" * 1000, b"GET  /  HTTP/1.1\r\n\r\n", b"GET /../ HTTP/1.1\r\n\r\n",
                 bytes(random.Random(7).randrange(256) for _ in range(4000))):
        refused("junk %r" % junk[:24], port, junk, secret, allowed=(200, 400, 404, 405, 414, 431, 501, 505))

    # seeded mutations of valid requests
    rnd = random.Random(o.seed)
    seeds = [req(b"/index.html", [b"Accept-Encoding: gzip, br", b"Range: bytes=0-9"]),
             req(b"/assets/%2e%2e/index.html", [b"If-None-Match: \"x\", W/\"y\""]),
             req(b"/docs/read%20me.html", [b"Accept-Encoding: zstd;q=0.5, *;q=0"])]
    cases = []
    for i in range(o.fuzz):
        b = bytearray(rnd.choice(seeds))
        for _ in range(rnd.randrange(1, 8)):
            op, at = rnd.randrange(4), rnd.randrange(len(b))
            if op == 0:
                b[at] = rnd.randrange(256)
            elif op == 1:
                b.insert(at, rnd.choice(b"%./\\\x00\r\n:;,=\"* "))
            elif op == 2 and len(b) > 1:
                del b[at]
            else:
                j = min(len(b), at + rnd.randrange(1, 40))
                b[at:at] = b[at:j] * rnd.randrange(1, 50)
        cases.append(bytes(b))
    # a mutated request may be incomplete: the server waits for the rest,
    # so each gets a short wait, and 16 go at once
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        for i, got in enumerate(ex.map(lambda c: exchange(port, c, timeout=0.5), cases)):
            no_secret("fuzz #%d" % i, got, secret)

    # still serving
    got = responses(exchange(port, req(b"/index.html")))
    if not got or got[0][0] != 200 or got[0][2] != index:
        fail("after all of it, GET /index.html is not answered with its bytes")
    print("serve_hostile: %d requests, %d failures" % (count, len(failures)), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
