#!/usr/bin/python3
"""browser.py - a real browser against a real server: headless Chromium loads
the serve_tree.sh page, and the server's own access log shows what it sent.

usage: browser.py --url URL --tree DIR --log FILE --log-format nginx|apache|caddy|kiln
                  --out JSON [--manifest PATH] [--chromium PATH] [--timeout S]

The caller serves DIR (after kiln --brotli --zstd DIR) on 127.0.0.1 at URL
(the page: a URL ending in '/' that serves index.html, or index.html's own
URL) and writes an access log to FILE:
  nginx   log_format kiln 'KILN method="$request_method" uri="$request_uri"
              status=$status ce="$sent_http_content_encoding"
              ae="$http_accept_encoding"';
  apache  LogFormat "KILN method=\\"%m\\" uri=\\"%U\\" status=%>s
              ce=\\"%{Content-Encoding}o\\" ae=\\"%{Accept-Encoding}i\\"" kiln
  kiln    kiln serve --access-log FILE (its own format, the same fields)
  caddy   log { output file FILE
                format json }  (Caddy 2.6's access log: request.method,
              request.uri, status, resp_headers, request.headers)

Visit 1, a fresh profile: the page's script must write "kiln-ran-OK" into
#out (it checks that every script ran and both stylesheets applied), and the
log must show every script and stylesheet sent with status 200 in the
smallest coding that the Accept-Encoding Chromium sent (as logged) accepts
among the file's siblings on disk (serve_rules.py; nothing taken from the
server's answer), the Content-Encoding Chromium saw being the logged one.

Visits 2 and 3, the same profile: a normal second visit (about:blank, then
URL) and a reload (Page.reload).  In both, the log must have no request for
any asset the manifest marks immutable (Chromium answers them from its
cache), a 304 for the page, and a 304 for each other (no-cache) script or
stylesheet of the page, which Chromium must revalidate.  Chromium's reload
revalidates only the page itself; subresources are loaded as on a normal
visit ("Cache-Control: immutable" or not, a fresh resource is not
revalidated; a no-cache one is, in both kinds of visit).

Measured with Chromium 156 (Debian 156.0.8078.114) on http://127.0.0.1:
it sends "Accept-Encoding: gzip, deflate, br, zstd" for the page and for
every script and stylesheet, plain HTTP included (so the page's app script
must come as zstd, its smallest sibling); a second visit and a reload send
no request for an immutable asset, revalidate index.html (304, with
If-None-Match) and the no-cache resources (304).  The checks use whatever
Accept-Encoding the log shows, so they hold if Chromium sends less.

The whole run is bounded (--timeout, default 50 s, plus at most 8 s to stop
Chromium; every wait has its own bound), and Chromium and its children are killed at the end, whatever
happens.  Writes what it observed to --out (JSON) and prints one
"FAIL: what" line per failure; exits 1 on any failure, 0 otherwise.
"""
import argparse
import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_rules as R  # noqa: E402

MARKER = "kiln-ran-OK"


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, cap):
        return max(0.0, min(cap, self.end - time.monotonic()))


class CDPError(Exception):
    pass


class Chromium:
    """Chromium with the DevTools protocol on a pipe: it reads commands on
    its fd 3 and writes answers and events on its fd 4, each a JSON text
    ended by a NUL byte."""

    def __init__(self, binary, deadline):
        self.deadline = deadline
        self.profile = tempfile.mkdtemp(prefix="kiln-chromium.")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # move the child's ends above 10 so that dup2 onto 3 and 4 cannot
        # clobber one with the other
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def child_fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        args = [binary, "--headless=new", "--no-sandbox", "--user-data-dir=" + self.profile,
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--disable-gpu", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update",
                "--disable-default-apps", "--mute-audio", "--no-proxy-server",
                "about:blank"]
        self.stderr = open(os.path.join(self.profile, "chromium.stderr"), "wb")
        # close_fds=False: the dup2'ed 3 and 4 must survive; every other fd
        # of ours is close-on-exec (Python's default)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.stderr,
                                     stderr=self.stderr, close_fds=False,
                                     preexec_fn=child_fds, start_new_session=True)
        os.close(hi_r)
        os.close(hi_w)
        self.next_id = 0
        self.replies = {}
        self.events = queue.Queue()
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        buf = b""
        while True:
            try:
                data = os.read(self.from_child, 1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buf += data
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                try:
                    m = json.loads(msg)
                except ValueError:
                    continue
                if "id" in m:
                    with self.cond:
                        self.replies[m["id"]] = m
                        self.cond.notify_all()
                else:
                    self.events.put(m)
        with self.cond:
            self.replies[None] = {"error": {"message": "Chromium closed the pipe"}}
            self.cond.notify_all()

    def send(self, method, params=None, session=None, timeout=10):
        self.next_id += 1
        i = self.next_id
        m = {"id": i, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        try:
            os.write(self.to_child, json.dumps(m).encode() + b"\0")
        except OSError as e:
            raise CDPError("%s: cannot write to Chromium: %s" % (method, e))
        end = time.monotonic() + self.deadline.left(timeout)
        with self.cond:
            while i not in self.replies and None not in self.replies:
                left = end - time.monotonic()
                if left <= 0:
                    raise CDPError("%s: no answer from Chromium in time" % method)
                self.cond.wait(left)
            r = self.replies.pop(i, None) or self.replies[None]
        if "error" in r:
            raise CDPError("%s: %s" % (method, r["error"].get("message")))
        return r.get("result", {})

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    os.write(self.to_child, json.dumps({"id": 999999, "method": "Browser.close"}).encode() + b"\0")
                except OSError:
                    pass
                try:
                    self.proc.wait(3)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            # Chromium's children (zygote, renderers) are in its session
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
            for fd in (self.to_child, self.from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)


class Visit:
    """The network requests of one visit, from the DevTools events."""

    def __init__(self, name):
        self.name = name
        self.requests = {}  # requestId -> dict
        self.loaded = False
        self.marker = None

    def on_event(self, m):
        method = m.get("method")
        p = m.get("params", {})
        rid = p.get("requestId")
        if method == "Page.loadEventFired":
            self.loaded = True
            return
        if not rid:
            return
        r = self.requests.setdefault(rid, {"url": None, "type": None, "status": None,
                                           "content_encoding": None, "from_cache": False,
                                           "accept_encoding": None, "sent_headers": None})
        if method == "Network.requestWillBeSent":
            r["url"] = p["request"]["url"]
            r["type"] = p.get("type")
        elif method == "Network.requestWillBeSentExtraInfo":
            h = {k.lower(): v for k, v in p.get("headers", {}).items()}
            r["sent_headers"] = h
            r["accept_encoding"] = h.get("accept-encoding")
        elif method == "Network.responseReceived":
            resp = p["response"]
            r["status"] = resp.get("status")
            h = {k.lower(): v for k, v in resp.get("headers", {}).items()}
            r["content_encoding"] = h.get("content-encoding")
            r["cache_control"] = h.get("cache-control")
            if resp.get("fromDiskCache") or resp.get("fromPrefetchCache"):
                r["from_cache"] = True
            if r["url"] is None:
                r["url"] = resp.get("url")
        elif method == "Network.requestServedFromCache":
            r["from_cache"] = True
        elif method == "Network.loadingFinished":
            r["finished"] = True
        elif method == "Network.loadingFailed":
            r["failed"] = p.get("errorText")


# --- the server's log -------------------------------------------------------

KILN_LINE = re.compile(r'(?:KILN |\] )method="((?:[^"\\]|\\.)*)" uri="((?:[^"\\]|\\.)*)" status=(\d+) '
                       r'ce="((?:[^"\\]|\\.)*)" ae="((?:[^"\\]|\\.)*)"')
# kiln serve's: the Common Log Format, then ce="" ae="" ad=""
CLF_LINE = re.compile(r'\] "(\S+) (\S+) [^"]*" (\d+) \S+ '
                      r'ce="((?:[^"\\]|\\.)*)" ae="((?:[^"\\]|\\.)*)"')


def log_match(line):
    """A log LINE's match, its groups the method, URI, status,
    Content-Encoding and Accept-Encoding: the "kiln" format of the tests'
    nginx and Apache, or kiln serve's; None for another line."""
    return KILN_LINE.search(line) or CLF_LINE.search(line)


def unescape_log(s):
    """nginx and Apache write \\xHH for bytes they escape, and \\" \\\\."""
    out = bytearray()
    b = s.encode("latin-1", "replace") if isinstance(s, str) else s
    i = 0
    while i < len(b):
        if b[i:i + 2] == b"\\x" and re.match(rb"[0-9A-Fa-f]{2}", b[i + 2:i + 4]):
            out.append(int(b[i + 2:i + 4], 16))
            i += 4
        elif b[i:i + 1] == b"\\" and i + 1 < len(b):
            out.append(b[i + 1])
            i += 2
        else:
            out.append(b[i])
            i += 1
    return bytes(out)


def dash_none(v):
    return None if v in ("", "-") else v


def parse_log(data, fmt):
    """Lines of the access log (bytes) -> [{method, path (bytes, decoded),
    status, ce, ae}]."""
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        if fmt == "caddy":
            try:
                j = json.loads(line)
            except ValueError:
                continue
            req = j.get("request") or {}
            if "status" not in j or "uri" not in req:
                continue
            rh = j.get("resp_headers") or {}
            qh = req.get("headers") or {}
            ce = rh.get("Content-Encoding") or [None]
            ae = qh.get("Accept-Encoding")
            uri = req["uri"].encode("utf-8", "surrogateescape")
            out.append({"method": req.get("method"), "uri": uri, "status": int(j["status"]),
                        "ce": ce[0], "ae": ", ".join(ae) if ae else None})
            continue
        m = log_match(line.decode("latin-1"))
        if not m:
            continue
        out.append({"method": unescape_log(m.group(1)).decode("latin-1"),
                    "uri": unescape_log(m.group(2)), "status": int(m.group(3)),
                    "ce": dash_none(unescape_log(m.group(4)).decode("latin-1")),
                    "ae": dash_none(unescape_log(m.group(5)).decode("latin-1"))})
    for e in out:
        path = e["uri"].split(b"?", 1)[0]
        e["path"] = urllib.parse.unquote_to_bytes(path)
        e["uri"] = e["uri"].decode("utf-8", "backslashreplace")
    return out


def read_from(path, offset):
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read()
    except OSError:
        return b""


def log_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# --- the run ----------------------------------------------------------------

class Run:
    def __init__(self, o):
        self.o = o
        self.failures = []
        self.deadline = Deadline(o.timeout)
        u = urllib.parse.urlsplit(o.url)
        self.page_path = urllib.parse.unquote_to_bytes(u.path or "/")
        if self.page_path.endswith(b"/"):
            self.prefix = self.page_path
            self.page_paths = {self.page_path, self.page_path + b"index.html"}
        else:
            self.prefix = self.page_path.rsplit(b"/", 1)[0] + b"/"
            self.page_paths = {self.page_path}
        self.origin = "%s://%s" % (u.scheme, u.netloc)
        self.assets = {a.rel: a for a in R.load_assets(o.tree, o.manifest)}
        self.visits = []

    def fail(self, what):
        self.failures.append("FAIL: " + what)
        print("FAIL: " + what, flush=True)

    def rel_of(self, path):
        """The tree-relative path of a URL path (bytes), or None."""
        if path.startswith(self.prefix):
            rel = path[len(self.prefix):]
            if path in self.page_paths:
                return b"index.html"
            return rel
        return None

    def disk_sizes(self, rel):
        base = os.path.join(os.fsencode(self.o.tree), rel)
        sizes = {}
        for c in R.CODINGS:
            try:
                sizes[c] = os.stat(base + R.SUFFIX[c].encode()).st_size
            except OSError:
                pass
        return sizes

    def pump(self, c, visit, until, cap):
        """Feed DevTools events to VISIT until UNTIL() holds or CAP seconds
        (bounded by the whole run's deadline) pass; returns UNTIL()."""
        end = time.monotonic() + self.deadline.left(cap)
        while not until():
            left = end - time.monotonic()
            if left <= 0:
                return until()
            try:
                m = c.events.get(timeout=min(left, 0.2))
            except queue.Empty:
                if c.proc.poll() is not None:
                    raise CDPError("Chromium exited (status %s)" % c.proc.returncode)
                continue
            visit.on_event(m)
        return True

    def visit(self, c, session, name, how):
        v = Visit(name)
        self.visits.append(v)
        # the log and the events of the earlier visit are settled by now
        start = log_size(self.o.log)
        while not c.events.empty():
            c.events.get_nowait()
        if how == "navigate":
            c.send("Page.navigate", {"url": self.o.url}, session)
        else:
            c.send("Page.reload", {"ignoreCache": False}, session)
        if not self.pump(c, v, lambda: v.loaded, 20):
            self.fail("%s: the page did not finish loading in time" % name)
        # let the last events and log lines arrive: every request that went
        # to the network has a log line once it has finished
        self.pump(c, v, lambda: all(r.get("finished") or r.get("failed") for r in v.requests.values()), 5)
        res = c.send("Runtime.evaluate", {"expression": "(document.getElementById('out') || {}).textContent",
                                          "returnByValue": True}, session)
        v.marker = res.get("result", {}).get("value")
        if v.marker != MARKER:
            self.fail("%s: the page's script wrote %r into #out, want %r" % (name, v.marker, MARKER))
        want_lines = sum(1 for r in v.requests.values()
                         if not r["from_cache"] and (r["url"] or "").startswith(self.origin))
        end = time.monotonic() + self.deadline.left(5)
        while True:
            v.log = parse_log(read_from(self.o.log, start), self.o.log_format)
            if len(v.log) >= want_lines or time.monotonic() >= end:
                break
            time.sleep(0.1)
        time.sleep(self.deadline.left(0.3))
        v.log = parse_log(read_from(self.o.log, start), self.o.log_format)
        return v

    def page_resources(self, v):
        """Scripts and stylesheets of the tree the page asked for: {rel: request}."""
        out = {}
        for r in v.requests.values():
            if r["type"] not in ("Script", "Stylesheet") or not (r["url"] or "").startswith(self.origin):
                continue
            path = urllib.parse.unquote_to_bytes(urllib.parse.urlsplit(r["url"]).path)
            rel = self.rel_of(path)
            if rel is not None:
                out[rel] = r
        return out

    def check_first(self, v):
        res = self.page_resources(v)
        if not res:
            self.fail("visit 1: Chromium asked for no script or stylesheet of the tree")
        if not any(e["path"] in self.page_paths for e in v.log):
            self.fail("visit 1: the log (%s) has no request for the page %s" % (
                self.o.log, self.o.url))
        for rel in sorted(res):
            name = rel.decode("utf-8", "backslashreplace")
            lines = [e for e in v.log if self.rel_of(e["path"]) == rel]
            if not lines:
                self.fail("visit 1: %s: no request in the server's log" % name)
                continue
            for e in lines:
                want = R.expected_coding(e["ae"], self.disk_sizes(rel))
                if e["status"] != 200:
                    self.fail("visit 1: %s: status %d, want 200" % (name, e["status"]))
                if e["ce"] != want:
                    self.fail("visit 1: %s [Accept-Encoding: %s]: sent as %s, want %s (siblings: %s)" % (
                        name, e["ae"], e["ce"] or "identity", want or "identity",
                        ", ".join("%s %d" % kv for kv in sorted(self.disk_sizes(rel).items())) or "none"))
            seen = res[rel]["content_encoding"]
            if seen != lines[-1]["ce"]:
                self.fail("visit 1: %s: Chromium saw Content-Encoding %r, the log says %r" % (
                    name, seen, lines[-1]["ce"]))
            if res[rel]["from_cache"]:
                self.fail("visit 1: %s came from the cache of a fresh profile" % name)

    def check_again(self, v):
        n = v.name
        page = [e for e in v.log if e["path"] in self.page_paths and e["method"] == "GET"]
        if not page:
            self.fail("%s: no request for the page in the server's log (want a 304)" % n)
        elif not any(e["status"] == 304 for e in page):
            self.fail("%s: the page was answered %s, want 304 (revalidated)" % (
                n, "/".join(str(e["status"]) for e in page)))
        for e in v.log:
            rel = self.rel_of(e["path"])
            a = self.assets.get(rel)
            if a is not None and a.immutable and rel != b"index.html":
                self.fail("%s: %s (immutable) reached the server (%s, status %d), want the browser cache" % (
                    n, rel.decode("utf-8", "backslashreplace"), e["method"], e["status"]))
        res = self.page_resources(v)
        for rel, r in sorted(res.items()):
            a = self.assets.get(rel)
            name = rel.decode("utf-8", "backslashreplace")
            if a is None:
                continue
            if a.immutable and not r["from_cache"]:
                self.fail("%s: %s (immutable) did not come from the browser cache (status %s)" % (
                    n, name, r["status"]))
            if not a.immutable:
                lines = [e for e in v.log if self.rel_of(e["path"]) == rel]
                if not any(e["status"] == 304 for e in lines):
                    self.fail("%s: %s (no-cache) was not revalidated with a 304 (log: %s)" % (
                        n, name, "/".join(str(e["status"]) for e in lines) or "no request"))
        if not res:
            self.fail("%s: the page asked for no script or stylesheet" % n)

    def main(self):
        try:
            c = Chromium(self.o.chromium, self.deadline)
        except OSError as e:
            self.fail("cannot start %s: %s" % (self.o.chromium, e))
            self.write_out()
            return 1
        try:
            version = c.send("Browser.getVersion", timeout=20)
            self.version = version.get("product")
            target = c.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = c.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            c.send("Network.enable", {}, session)
            c.send("Page.enable", {}, session)
            v1 = self.visit(c, session, "visit 1", "navigate")
            self.check_first(v1)
            blank = Visit("about:blank")
            c.send("Page.navigate", {"url": "about:blank"}, session)
            self.pump(c, blank, lambda: blank.loaded, 5)
            v2 = self.visit(c, session, "visit 2 (a second visit)", "navigate")
            self.check_again(v2)
            v3 = self.visit(c, session, "visit 3 (reload)", "reload")
            self.check_again(v3)
        except CDPError as e:
            self.fail("DevTools: %s" % e)
        finally:
            c.close()
        self.write_out()
        sent = sorted({r["accept_encoding"] for v in self.visits for r in v.requests.values()
                       if r["accept_encoding"]})
        print("browser: %s; Accept-Encoding sent: %s; %d failures" % (
            getattr(self, "version", "Chromium ?"), " | ".join(sent) or "none seen", len(self.failures)))
        return 1 if self.failures else 0

    def write_out(self):
        def rq(r):
            return {k: r.get(k) for k in ("url", "type", "status", "content_encoding",
                                           "accept_encoding", "from_cache", "cache_control",
                                           "sent_headers")}
        out = {"chromium": getattr(self, "version", None), "url": self.o.url,
               "visits": [{"name": v.name, "marker": v.marker,
                           "requests": [rq(r) for r in v.requests.values() if r.get("url")],
                           "log": [{k: e[k] for k in ("method", "uri", "status", "ce", "ae")}
                                   for e in getattr(v, "log", [])]}
                          for v in self.visits],
               "failures": self.failures}
        with open(self.o.out, "w") as f:
            json.dump(out, f, indent=2, sort_keys=True)
            f.write("\n")


def main(argv):
    ap = argparse.ArgumentParser(description="Headless Chromium against a server serving a serve_tree.sh tree.")
    ap.add_argument("--url", required=True, help="the page (http://127.0.0.1:PORT/...)")
    ap.add_argument("--tree", required=True)
    ap.add_argument("--manifest", help="default TREE/kiln-manifest.json")
    ap.add_argument("--log", required=True, help="the server's access log")
    ap.add_argument("--log-format", required=True, choices=("nginx", "apache", "caddy", "kiln"))
    ap.add_argument("--out", required=True, help="JSON file for what was observed")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--timeout", type=float, default=50.0,
                    help="bound on the visits (default 50 s; stopping Chromium adds at most 8 s)")
    o = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(1))  # runs the finally: Chromium dies
    return Run(o).main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
