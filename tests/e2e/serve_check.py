#!/usr/bin/python3
"""serve_check.py - check a running web server against kiln's serving rules.

usage: serve_check.py --base URL --tree DIR [--manifest PATH]
                      [--no-cache-control] [--expect-own NAME ...]
                      [--sample K] [--ae VALUE ...] [--jobs N] [--timeout S]

The caller starts the server (nginx, Caddy, Apache...) on 127.0.0.1 so that
it serves DIR at URL (an http:// URL ending in '/'); the URL of an asset is
URL + its path relative to DIR, percent-encoded (RFC 3986).  Every expected
value comes from DIR alone: the manifest (which siblings kiln kept, which
assets are immutable), the sibling files' sizes on disk (the smallest
accepted one wins, serve_rules.py) and the source bytes.  For every asset
of the manifest and every Accept-Encoding value of the list (serve_rules.
AE_VALUES, or the --ae values; "(none)" stands for no header):

  - GET: status 200; Content-Encoding is the expected coding (absent for
    identity); the body, decoded with Python's decoders, is the source;
    Content-Type is the identity response's, not a compression type, and
    the one for the extension (.js text/javascript or application/
    javascript, .css text/css, .html text/html, .json application/json);
    no Content-Language; Vary names Accept-Encoding on every response of an
    asset with a sibling; Cache-Control is exactly
    "public, max-age=31536000, immutable" for an immutable asset, "no-cache"
    for the others (none at all with --no-cache-control);
  - HEAD: the same status, Content-Encoding, Content-Type, ETag, Vary and
    Cache-Control, Content-Length the GET body's length, and no body;
  - each sibling asked for by its own URL (the source's URL and its
    suffix) is not sent: 403 or 404;
then once per asset a Range request "bytes=0-9" without Accept-Encoding
(206 and the first 10 source bytes), and per representation received
(coding): If-None-Match with its ETag and the same Accept-Encoding answers
304 (with the 200's ETag, Vary and Cache-Control, and no Content-Length or
the 200's: RFC 9110 section 8.6); the same ETag sent with an Accept-Encoding that selects another
representation answers 200 with that one; representations have different
ETags (compared weakly) and each keeps one ETag.

kiln's own files are never served: the manifest, its index and snippets found in DIR
(at any depth), the --expect-own paths (relative to DIR), and temporary
file and journal look-alikes planted here at the top and in a subdirectory
(removed afterwards) must answer 403 or 404, with and without
Accept-Encoding: gzip.

--sample K (for big trees): every asset is checked with no Accept-Encoding
and with Chromium's value, those with a sibling also with "gzip", "br" and
"zstd"; the whole list only for K assets, chosen deterministically to
cover every kind (siblings kept, immutable, extension).

Requests are made here over a fresh socket each (HTTP/1.1, Connection:
close) and parsed here: nothing is ever decompressed on the way, and a body
sent after a HEAD or a 304 is seen.  --jobs assets are checked at once.

Prints "FAIL: PATH [Accept-Encoding: X]: what" per failure and
"serve_check: N requests, M failures"; exits 1 on any failure, else 0
(2 for a usage error).
"""
import argparse
import concurrent.futures
import hashlib
import os
import signal
import socket
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_rules as R  # noqa: E402

IMMUTABLE_CC = "public, max-age=31536000, immutable"
REVALIDATE_CC = "no-cache"
OWN_NAMES = ("kiln-manifest.json", ".kiln-manifest.json.index", "kiln.nginx.conf",
             "kiln.nginx.http.conf", "kiln.caddy.conf", "kiln.apache.conf")
PLANTED = (".kiln-AbC123.tmp", ".kiln-journal-XyZ789")


class Response:
    def __init__(self):
        self.status = None
        self.headers = []  # (lower-case name, value)
        self.body = b""
        self.error = None  # a transport or framing problem

    def all(self, name):
        return [v for k, v in self.headers if k == name]

    def get(self, name):
        """The field's value; several fields are joined with ", "; None if
        absent."""
        vs = self.all(name)
        return ", ".join(vs) if vs else None


class Client:
    def __init__(self, base, timeout):
        u = urllib.parse.urlsplit(base)
        if u.scheme != "http" or not u.hostname or not u.path.endswith("/"):
            raise ValueError("--base must be an http:// URL ending in '/'")
        self.host = u.hostname
        self.port = u.port or 80
        self.prefix = u.path
        self.timeout = timeout
        self.count = 0
        self.lock = threading.Lock()

    def request(self, method, target, headers=()):
        """One request on a fresh connection (Connection: close), the
        response read to the end and parsed here: nothing is decoded."""
        with self.lock:
            self.count += 1
        r = Response()
        lines = ["%s %s HTTP/1.1" % (method, target),
                 "Host: %s:%d" % (self.host, self.port),
                 "User-Agent: kiln-serve-check", "Connection: close"]
        lines += ["%s: %s" % (k, v) for k, v in headers]
        raw = b""
        try:
            with socket.create_connection((self.host, self.port), timeout=self.timeout) as s:
                s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
                chunks = []
                while True:
                    c = s.recv(1 << 16)
                    if not c:
                        break
                    chunks.append(c)
                raw = b"".join(chunks)
        except OSError as e:
            r.error = "connection: %s" % e
            return r
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            r.error = "no complete response head (%d bytes)" % len(raw)
            return r
        hl = head.decode("latin-1").split("\r\n")
        parts = hl[0].split(" ", 2)
        try:
            r.status = int(parts[1])
        except (IndexError, ValueError):
            r.error = "bad status line %r" % hl[0]
            return r
        for line in hl[1:]:
            k, _, v = line.partition(":")
            r.headers.append((k.strip().lower(), v.strip()))
        if method == "HEAD" or r.status in (204, 304) or 100 <= r.status < 200:
            if rest:
                r.error = "%d bytes of body after a %s response" % (
                    len(rest), "HEAD" if method == "HEAD" else str(r.status))
            return r
        te = (r.get("transfer-encoding") or "").lower()
        cl = r.get("content-length")
        if "chunked" in te:
            r.body, err = dechunk(rest)
            r.error = err
        elif cl is not None:
            try:
                n = int(cl)
            except ValueError:
                r.error = "bad Content-Length %r" % cl
                return r
            r.body = rest[:n]
            if len(rest) != n:
                r.error = "body of %d bytes, Content-Length %d" % (len(rest), n)
        else:
            r.body = rest
        return r


def dechunk(data):
    out = []
    i = 0
    while True:
        j = data.find(b"\r\n", i)
        if j < 0:
            return b"".join(out), "truncated chunked body"
        try:
            n = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            return b"".join(out), "bad chunk size"
        if n == 0:
            return b"".join(out), None
        out.append(data[j + 2:j + 2 + n])
        i = j + 2 + n + 2


def ae_label(ae):
    return "(none)" if ae is None else ('""' if ae == "" else ae)


def ae_headers(ae):
    return [] if ae is None else [("Accept-Encoding", ae)]


def dotted(rel):
    """Does REL (bytes) have a component starting with '.' other than
    .well-known (a dotfile or dot-directory)?"""
    return any(c.startswith(b".") and c != b".well-known" for c in rel.split(b"/"))


class AssetCheck:
    """All the checks of one asset; failures collected in order."""

    def __init__(self, client, opts, asset, values):
        self.c = client
        self.o = opts
        self.a = asset
        self.values = values
        self.fails = []

    def fail(self, ae, what):
        self.fails.append("FAIL: %s [Accept-Encoding: %s]: %s" % (
            self.a.display(), ae_label(ae), what))

    def target(self):
        return R.url_path(self.c.prefix, self.a.rel)

    def run(self):
        try:
            return self.run_checks()
        except Exception as e:  # a bug here must not hide the other assets
            self.fail(None, "checker error: %s: %s" % (type(e).__name__, e))
            return self.fails

    def run_checks(self):
        a = self.a
        try:
            self.src = a.source()
        except OSError as e:
            self.fail(None, "cannot read the source: %s" % e)
            return self.fails
        for cd in a.kept:
            if not os.path.isfile(a.sibling_path(cd)):
                self.fail(None, "the manifest lists a %s sibling, not on disk" % cd)
        if self.o.no_dotfiles and dotted(a.rel):
            return self.check_refused()
        self.sizes = a.sizes()
        self.reps = {}  # coding (None: identity) -> (etag, ae)
        self.rep_resp = {}  # coding -> the first 200 response of it
        self.etags = {}  # coding -> set of ETags seen
        ident = self.c.request("GET", self.target())
        self.ident_type = ident.get("content-type")
        for ae in self.values:
            r = ident if ae is None else self.c.request("GET", self.target(), ae_headers(ae))
            self.check_get(ae, r)
        self.check_range()
        self.check_conditional()
        self.check_direct()
        return self.fails

    def check_refused(self):
        """A dotfile (--no-dotfiles): 404 whatever is accepted, and so
        are its siblings by their own URLs."""
        targets = [(self.target(), ae) for ae in self.values]
        targets += [(R.url_path(self.c.prefix, os.path.relpath(self.a.sibling_path(cd),
                                                               os.fsencode(self.o.tree))), None)
                    for cd in self.a.kept]
        for target, ae in targets:
            r = self.c.request("GET", target, ae_headers(ae))
            if r.status != 404:
                self.fail(ae, "a dotfile's %s: status %s, want 404" % (
                    target, r.status if r.status is not None else r.error))
        return self.fails

    def check_direct(self):
        """A sibling asked for by its own URL while its source is there is
        not sent (403 or 404): rules written for the source's URL (auth,
        deny) must not be walked around by adding a suffix."""
        for coding in self.a.kept:
            url = R.url_path(self.c.prefix, self.a.rel + R.SUFFIX[coding].encode())
            r = self.c.request("GET", url, [("Accept-Encoding", "gzip, br, zstd")])
            if r.status not in (403, 404):
                self.fail(None, "its %s sibling by its own URL: status %s, want 403 or 404"
                          % (coding, r.status))

    def check_get(self, ae, r):
        if r.status is None:
            self.fail(ae, "GET: %s" % r.error)
            return
        if r.error:
            self.fail(ae, "GET: %s" % r.error)
        want = R.expected_coding(ae, self.sizes)
        if self.o.not_acceptable and want is None and R.identity_refused(ae):
            if r.status != 406:
                self.fail(ae, "GET: status %d, want 406 (identity refused, no coding accepted)"
                          % r.status)
            elif "accept-encoding" not in R.header_tokens(r.all("vary")):
                self.fail(ae, "406 without Vary: Accept-Encoding")
            return
        if r.status != 200:
            self.fail(ae, "GET: status %d, want 200" % r.status)
            return
        ce = r.get("content-encoding")
        got = None
        if ce is None:
            got = None
        elif ce.lower() in R.CODINGS:
            got = ce.lower()
        if want is None and ce is not None:
            self.fail(ae, "Content-Encoding %r, want none (identity; kept: %s)" % (
                ce, self.kept_desc()))
        elif want is not None and ce != want:
            self.fail(ae, "Content-Encoding %s, want %r (kept: %s)" % (
                "absent" if ce is None else repr(ce), want, self.kept_desc()))
        if ce is not None and got is None:
            self.fail(ae, "unknown Content-Encoding %r: body not checked" % ce)
        else:
            try:
                body = R.decode(got, r.body)
                if body != self.src:
                    self.fail(ae, "body (%s, %d bytes) decodes to %d bytes that are not the source's %d" % (
                        got or "identity", len(r.body), len(body), len(self.src)))
            except ValueError as e:
                self.fail(ae, "body does not decode as %s: %s" % (got, e))
            self.reps.setdefault(got, (r.get("etag"), ae))
            self.rep_resp.setdefault(got, r)
            self.etags.setdefault(got, set()).add(r.get("etag"))
        self.check_headers(ae, r, "GET")
        h = self.c.request("HEAD", self.target(), ae_headers(ae))
        self.check_head(ae, r, h)

    def kept_desc(self):
        return ", ".join("%s %d" % (c, self.sizes[c]) for c in self.a.kept) or "none"

    def check_headers(self, ae, r, what):
        ct = r.all("content-type")
        # one Content-Type, or none where the server types the source with
        # none (an extension its media types do not know: Caddy and Apache
        # send none, nginx its default_type); either way the identity
        # response's (below)
        if len(ct) > 1 or (not ct and self.ident_type is not None):
            self.fail(ae, "%s: %d Content-Type fields %r" % (what, len(ct), ct))
        ctv = r.get("content-type")
        mt = R.media_type(ctv)
        if ctv != self.ident_type:
            self.fail(ae, "%s: Content-Type %r, the identity response has %r" % (
                what, ctv, self.ident_type))
        if mt in R.COMPRESSION_TYPES:
            self.fail(ae, "%s: Content-Type %r is a compression type" % (what, ctv))
        want_types = R.TYPES_BY_EXT.get(self.a.ext())
        if want_types and mt not in want_types:
            self.fail(ae, "%s: Content-Type %r, want one of %s" % (
                what, ctv, "/".join(sorted(want_types))))
        if r.all("content-language"):
            self.fail(ae, "%s: Content-Language %r" % (what, r.get("content-language")))
        if self.a.kept and "accept-encoding" not in R.header_tokens(r.all("vary")):
            self.fail(ae, "%s: Vary %r lacks Accept-Encoding (the asset has siblings)" % (
                what, r.get("vary")))
        cc = r.all("cache-control")
        if self.o.no_cache_control:
            if cc:
                self.fail(ae, "%s: Cache-Control %r, want none (--no-cache-control)" % (what, cc))
        else:
            want = IMMUTABLE_CC if self.a.immutable else REVALIDATE_CC
            if cc != [want]:
                self.fail(ae, "%s: Cache-Control %s, want %r (%s)" % (
                    what, cc and repr(", ".join(cc)) or "absent", want,
                    "immutable" if self.a.immutable else "not immutable"))

    def check_head(self, ae, g, h):
        if h.status is None or h.error:
            self.fail(ae, "HEAD: %s" % h.error)
            if h.status is None:
                return
        if h.status != g.status:
            self.fail(ae, "HEAD: status %d, GET %d" % (h.status, g.status))
        for name in ("content-encoding", "content-type", "etag", "vary", "cache-control"):
            if h.get(name) != g.get(name):
                self.fail(ae, "HEAD: %s %r, GET %r" % (name, h.get(name), g.get(name)))
        cl = h.get("content-length")
        if cl != str(len(g.body)):
            self.fail(ae, "HEAD: Content-Length %r, the GET body has %d bytes" % (cl, len(g.body)))

    def check_range(self):
        if not self.src:
            return  # an empty file has no byte 0 (416)
        r = self.c.request("GET", self.target(), [("Range", "bytes=0-9")])
        what = "Range bytes=0-9"
        if r.status is None or r.error:
            self.fail(None, "%s: %s" % (what, r.error))
            if r.status is None:
                return
        want = self.src[:10]
        if r.status == 206:
            if r.get("content-encoding") is not None:
                self.fail(None, "%s: Content-Encoding %r on the identity range" % (
                    what, r.get("content-encoding")))
            if r.body != want:
                self.fail(None, "%s: 206 body %r, want the first 10 source bytes %r" % (
                    what, r.body[:20], want))
            cr = r.get("content-range")
            if cr != "bytes 0-%d/%d" % (len(want) - 1, len(self.src)):
                self.fail(None, "%s: Content-Range %r, want 'bytes 0-%d/%d'" % (
                    what, cr, len(want) - 1, len(self.src)))
        elif r.status == 200:
            self.fail(None, "%s: status 200 (Range ignored), want 206%s" % (
                what, "" if r.body == self.src else "; and the body is not the source"))
        else:
            self.fail(None, "%s: status %d, want 206" % (what, r.status))

    def check_conditional(self):
        for coding, tags in self.etags.items():
            if len(tags) > 1:
                self.fail(self.reps[coding][1], "%s representation has several ETags %s" % (
                    coding or "identity", sorted(map(str, tags))))
        seen = {}
        for coding, (etag, ae) in self.reps.items():
            if not etag:
                self.fail(ae, "no ETag on the %s response" % (coding or "identity"))
                continue
            o = R.opaque_etag(etag)
            if o in seen:
                self.fail(ae, "%s and %s representations have the same ETag %s" % (
                    seen[o] or "identity", coding or "identity", etag))
            seen.setdefault(o, coding)
        for coding, (etag, ae) in self.reps.items():
            if not etag:
                continue
            name = coding or "identity"
            r = self.c.request("GET", self.target(), ae_headers(ae) + [("If-None-Match", etag)])
            if r.status != 304:
                self.fail(ae, "If-None-Match %s (the %s ETag): status %s, want 304" % (
                    etag, name, r.status if r.status is not None else r.error))
            elif r.error:
                self.fail(ae, "If-None-Match %s: %s" % (etag, r.error))
            else:
                # RFC 9110 15.4.5: a 304 carries the ETag, Vary and
                # Cache-Control the 200 would have (browsers update their
                # stored copy from it)
                full = self.rep_resp[coding]
                for h in ("etag", "vary", "cache-control"):
                    if r.get(h) != full.get(h):
                        self.fail(ae, "If-None-Match %s: the 304 has %s %r, the 200 %r" % (
                            etag, h, r.get(h), full.get(h)))
                # RFC 9110 8.6: a 304 has no Content-Length, or the 200's
                cl = r.all("content-length")
                if cl and cl != [full.get("content-length")]:
                    self.fail(ae, "If-None-Match %s: the 304 has Content-Length %r, the 200 %r" % (
                        etag, ", ".join(cl), full.get("content-length")))
            for other, (_, oae) in self.reps.items():
                if other == coding:
                    continue
                r = self.c.request("GET", self.target(), ae_headers(oae) + [("If-None-Match", etag)])
                oname = other or "identity"
                if r.status != 200:
                    self.fail(oae, "If-None-Match %s (the %s ETag) for the %s representation: status %s, want 200" % (
                        etag, name, oname, r.status if r.status is not None else r.error))
                    continue
                ce = r.get("content-encoding")
                if (ce or None) != other:
                    self.fail(oae, "If-None-Match %s (the %s ETag): Content-Encoding %r, want %r" % (
                        etag, name, ce, other))
                    continue
                try:
                    ok = R.decode(other, r.body) == self.src
                except ValueError:
                    ok = False
                if not ok:
                    self.fail(oae, "If-None-Match %s (the %s ETag): the %s body is not the source" % (
                        etag, name, oname))


def choose_full(assets, k):
    """K assets, deterministic, spread over kinds: round robin over the
    groups (kept codings, immutable, extension), each ordered by a hash of
    the path."""
    groups = {}
    for a in assets:
        groups.setdefault((tuple(a.kept), a.immutable, a.ext()), []).append(a)
    for g in groups.values():
        g.sort(key=lambda a: hashlib.sha256(a.rel).hexdigest())
    order = sorted(groups, key=lambda g: (-len(g[0]), not g[1], g[2]))
    chosen = set()
    i = 0
    while len(chosen) < min(k, len(assets)):
        for g in order:
            if i < len(groups[g]) and len(chosen) < k:
                chosen.add(groups[g][i].rel)
        i += 1
    return chosen


def own_targets(tree, extra):
    """Relative paths (bytes) of kiln's own files in TREE, plus EXTRA."""
    out = []
    btree = os.fsencode(tree)
    for dirpath, dirnames, filenames in os.walk(btree):
        dirnames.sort()
        for f in sorted(filenames):
            if f.decode("utf-8", "replace") in OWN_NAMES:
                out.append(os.path.relpath(os.path.join(dirpath, f), btree))
    for e in extra:
        b = os.fsencode(e).lstrip(b"/")
        if b not in out:
            out.append(b)
    return out


def check_own(client, tree, assets, extra):
    fails = []
    btree = os.fsencode(tree)
    subdirs = sorted({os.path.dirname(a.rel) for a in assets} - {b""})
    places = [b""] + subdirs[:1]
    planted = []
    try:
        for d in places:
            for name in PLANTED:
                rel = os.path.join(d, name.encode())
                p = os.path.join(btree, rel)
                if os.path.lexists(p):
                    continue  # not ours: leave it, but still check it
                try:
                    with open(p, "xb") as f:
                        f.write(b"kiln temporary look-alike, planted by serve_check.py\n" * 20)
                    os.chmod(p, 0o644)
                    planted.append(p)
                except OSError as e:
                    fails.append("FAIL: %s [Accept-Encoding: (none)]: cannot plant it: %s" % (
                        rel.decode(), e))
        targets = own_targets(tree, extra) + [os.path.join(d, n.encode()) for d in places for n in PLANTED]
        for rel in targets:
            for ae in (None, "gzip"):
                r = client.request("GET", R.url_path(client.prefix, rel), ae_headers(ae))
                if r.status not in (403, 404):
                    fails.append("FAIL: %s [Accept-Encoding: %s]: kiln's own file answered %s, want 403 or 404" % (
                        rel.decode("utf-8", "backslashreplace"), ae_label(ae),
                        r.status if r.status is not None else r.error))
    finally:
        for p in planted:
            try:
                os.unlink(p)
            except OSError:
                pass
    return fails


def main(argv):
    ap = argparse.ArgumentParser(description="Check a running server against kiln's serving rules.")
    ap.add_argument("--base", required=True, help="http://127.0.0.1:PORT/PREFIX/ serving DIR")
    ap.add_argument("--tree", required=True, help="the tree the server serves")
    ap.add_argument("--manifest", help="the manifest (default DIR/kiln-manifest.json)")
    ap.add_argument("--no-cache-control", action="store_true",
                    help="responses must have no Cache-Control")
    ap.add_argument("--expect-own", nargs="+", action="extend", default=[], metavar="NAME",
                    help="more paths (relative to DIR) that must not be served")
    ap.add_argument("--sample", type=int, metavar="K",
                    help="the whole Accept-Encoding list for K assets only")
    ap.add_argument("--ae", action="append", metavar="VALUE",
                    help="Accept-Encoding values to use instead of the list ((none): no header)")
    ap.add_argument("--no-dotfiles", action="store_true",
                    help="a dotfile or dot-directory but .well-known must be 404 (kiln serve)")
    ap.add_argument("--not-acceptable", action="store_true",
                    help="a request that refuses identity and accepts no sibling of the asset "
                         "gets 406 (kiln serve); without it, the source")
    ap.add_argument("--jobs", type=int, default=4, help="assets checked at once (default 4)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    o = ap.parse_args(argv)
    try:
        client = Client(o.base, o.timeout)
    except ValueError as e:
        ap.error(str(e))
    try:
        assets = R.load_assets(o.tree, o.manifest)
    except (OSError, ValueError) as e:
        print("serve_check: cannot read the manifest: %s" % e, file=sys.stderr)
        return 2
    if o.ae:
        full = [None if v == "(none)" else v for v in o.ae]
    else:
        full = list(R.AE_VALUES)
    chosen = None if o.sample is None else choose_full(assets, o.sample)

    def values_for(a):
        if chosen is None or a.rel in chosen:
            return full
        v = [None, R.CHROMIUM_AE]
        if a.kept:
            v += ["gzip", "br", "zstd"]
        return v

    # planted files must go even when killed
    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    fails = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, o.jobs)) as ex:
        jobs = [ex.submit(AssetCheck(client, o, a, values_for(a)).run) for a in assets]
        for j in jobs:
            for line in j.result():
                print(line, flush=True)
                fails.append(line)
    for line in check_own(client, o.tree, assets, o.expect_own):
        print(line, flush=True)
        fails.append(line)
    if not assets:
        print("FAIL: %s: the manifest lists no asset" % o.tree)
        fails.append("no assets")
    print("serve_check: %d requests, %d failures" % (client.count, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
