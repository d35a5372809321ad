#!/usr/bin/python3
"""browser_dcz.py - compression dictionary transport (RFC 9842) in a real
browser: headless Chromium visits a page served by release 1, the server
switches to release 2, and Chromium visits again.

usage: browser_dcz.py --url URL --log FILE --switch CMD
                      (--script1 PATH --script2 PATH --dict-sha256 HEX |
                       --pairs FILE) [--chromium PATH] [--timeout S]

The caller serves release 1 at URL (its index.html) with kiln's nginx
snippet, and logs each request to FILE in browser.py's nginx format with
' ad="$http_available_dictionary"' appended.  SCRIPT1 and SCRIPT2 are the
URL paths of the fingerprinted script of releases 1 and 2 (one family);
DICT_SHA256 is the SHA-256 (hex) of release 1's script, worked out by the
caller from the file.  Each release's page script writes "release-N-ok"
into #out.

Visit 1, a fresh profile: #out reads "release-1-ok", and release 1's
script came with Use-As-Dictionary (Chromium saw the header; the match
pattern is checked by the caller with curl).
Then CMD runs (it makes the server serve release 2) and visit 2 loads URL
in the same profile: #out must read "release-2-ok", Chromium must have sent
release 2's script request with Available-Dictionary naming release 1's
script (":" base64 of DICT_SHA256 ":") and "dcz" in Accept-Encoding, the
server's log must show it answered 200 with Content-Encoding dcz, and
Chromium must have seen that Content-Encoding.  With --pairs, FILE holds
one such triple a line ("PATH1 PATH2 HEX": any fingerprinted asset the
pages load, scripts, style sheets, images), and every one is checked.

Measured with Chromium 156 on http://127.0.0.1: a dictionary is kept only
from a response with an explicit freshness lifetime (kiln's
"public, max-age=31536000, immutable" for fingerprinted files), and the
request then carries "Accept-Encoding: gzip, deflate, br, zstd, dcb, dcz".
Exits 1 on any failure (one "FAIL: what" line each), 0 otherwise.
"""
import argparse
import base64
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser as B  # noqa: E402

AD = re.compile(r' ad="((?:[^"\\]|\\.)*)"')


class Run:
    def __init__(self, o):
        self.o = o
        self.failures = []
        self.deadline = B.Deadline(o.timeout)
        self.pairs = [tuple(l.split()) for l in open(o.pairs) if l.strip()] if o.pairs else \
            [(o.script1, o.script2, o.dict_sha256)]

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, flush=True)

    def visit(self, c, session, name, want, paths):
        v = B.Visit(name)
        start = B.log_size(self.o.log)
        while not c.events.empty():
            c.events.get_nowait()
        c.send("Page.navigate", {"url": self.o.url}, session)
        pump = B.Run.pump
        if not pump(self, c, v, lambda: v.loaded, 20):
            self.fail("%s: the page did not finish loading in time" % name)
        pump(self, c, v, lambda: all(r.get("finished") or r.get("failed")
                                     for r in v.requests.values()), 5)
        # a page that loads more after its load event writes #out last
        for _ in range(40):
            res = c.send("Runtime.evaluate", {"expression": "(document.getElementById('out') || {}).textContent",
                                              "returnByValue": True}, session)
            v.marker = res.get("result", {}).get("value")
            if v.marker == want:
                break
            pump(self, c, v, lambda: False, 0.25)
        # and what it loads after that (the images it shows)
        pump(self, c, v, lambda: all(any(r.get("finished") for r in v.requests.values()
                                         if (r["url"] or "").split("?")[0].endswith(p))
                                     for p in paths), 10)
        pump(self, c, v, lambda: all(r.get("finished") or r.get("failed")
                                     for r in v.requests.values()), 5)
        time.sleep(self.deadline.left(0.5))
        data = B.read_from(self.o.log, start)
        v.log = B.parse_log(data, "nginx")
        v.ads = {}
        for line in data.decode("latin-1").split("\n"):
            m = B.log_match(line)
            a = AD.search(line)
            if m and a:
                v.ads[m.group(2).split("?")[0]] = a.group(1)
        return v

    def request_for(self, v, path):
        """VISIT's request for PATH: one answered 200 if there is one (an
        image may be asked for twice, the first cancelled), else any."""
        found = [r for r in v.requests.values() if (r["url"] or "").split("?")[0].endswith(path)]
        return next((r for r in found if r.get("status") == 200), found[0] if found else None)

    def check_delta(self, v2, script2, sha):
        want_ad = ":" + base64.b64encode(bytes.fromhex(sha)).decode() + ":"
        r2 = self.request_for(v2, script2)
        if not r2:
            self.fail("visit 2: Chromium did not ask for %s" % script2)
        else:
            h = r2["sent_headers"] or {}
            if h.get("available-dictionary") != want_ad:
                self.fail("visit 2: %s: Available-Dictionary %r, want %r (release 1's)" % (
                    script2, h.get("available-dictionary"), want_ad))
            ae = [t.split(";")[0].strip() for t in (h.get("accept-encoding") or "").split(",")]
            if "dcz" not in ae:
                self.fail("visit 2: %s: Accept-Encoding %r lacks dcz" % (script2, h.get("accept-encoding")))
            if r2["content_encoding"] != "dcz":
                self.fail("visit 2: %s: Chromium saw Content-Encoding %r, want dcz" % (
                    script2, r2["content_encoding"]))
        lines = [e for e in v2.log if e["uri"].split("?")[0] == script2]
        if not lines:
            self.fail("visit 2: no request for %s in the log" % script2)
        for e in lines:
            if e["status"] != 200 or e["ce"] != "dcz":
                self.fail("visit 2: the log says %s was answered %d with %s, want 200 dcz" % (
                    script2, e["status"], e["ce"] or "identity"))
        if lines and v2.ads.get(script2) != want_ad:
            self.fail("visit 2: %s: the log's Available-Dictionary is %r" % (script2, v2.ads.get(script2)))

    def main(self):
        c = B.Chromium(self.o.chromium, self.deadline)
        try:
            self.version = c.send("Browser.getVersion", timeout=20).get("product")
            target = c.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = c.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            c.send("Network.enable", {}, session)
            c.send("Page.enable", {}, session)
            v1 = self.visit(c, session, "visit 1", "release-1-ok", [p[0] for p in self.pairs])
            if v1.marker != "release-1-ok":
                self.fail("visit 1: #out is %r, want 'release-1-ok'" % v1.marker)
            for script1, _, _ in self.pairs:
                r1 = self.request_for(v1, script1)
                if not r1 or r1["status"] != 200:
                    self.fail("visit 1: no 200 for %s" % script1)
            # Chromium stores a dictionary after the response's body is
            # read, asynchronously; on a loaded machine the images loaded
            # last in visit 1 were not stored yet when visit 2 began
            B.Run.pump(self, c, B.Visit("settle"), lambda: False, self.deadline.left(2.0))
            blank = B.Visit("about:blank")
            c.send("Page.navigate", {"url": "about:blank"}, session)
            B.Run.pump(self, c, blank, lambda: blank.loaded, 5)
            sw = subprocess.run(self.o.switch, shell=True, timeout=self.deadline.left(20))
            if sw.returncode != 0:
                self.fail("the switch to release 2 failed (%d)" % sw.returncode)
            v2 = self.visit(c, session, "visit 2", "release-2-ok", [p[1] for p in self.pairs])
            if v2.marker != "release-2-ok":
                self.fail("visit 2: #out is %r, want 'release-2-ok' (release 2's script did not run)" % v2.marker)
            for _, script2, sha in self.pairs:
                self.check_delta(v2, script2, sha)
        except B.CDPError as e:
            self.fail("DevTools: %s" % e)
        finally:
            c.close()
        print("browser_dcz: %s; %d failures" % (getattr(self, "version", "Chromium ?"), len(self.failures)))
        return 1 if self.failures else 0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--switch", required=True)
    ap.add_argument("--script1")
    ap.add_argument("--script2")
    ap.add_argument("--dict-sha256")
    ap.add_argument("--pairs")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--timeout", type=float, default=60.0)
    o = ap.parse_args(argv)
    if not o.pairs and not (o.script1 and o.script2 and o.dict_sha256):
        ap.error("--pairs, or --script1, --script2 and --dict-sha256")
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(1))
    return Run(o).main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
