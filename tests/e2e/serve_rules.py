"""serve_rules.py - what a server should send, computed from the tree alone.

Shared by serve_check.py and browser.py (imported, not run).  Nothing here
looks at a server's answer: the expected coding of a response comes from
the request's Accept-Encoding, the manifest and the sibling files on disk.

The rule (RFC 9110 section 12.5.3, as lib/server.h states it for kiln):
  - a coding listed with q=0 is refused; listed with any other q (or none)
    it is accepted: q-values only accept or refuse, they do not rank;
  - "*" with q other than 0 accepts every coding not listed by name;
  - "x-gzip" is gzip; tokens are case-insensitive;
  - no Accept-Encoding header at all, or an empty one: identity only;
  - among the accepted codings the asset has a sibling of, the smallest
    sibling on disk wins; with none, the source is sent (identity).
"""
import base64
import io
import json
import os
import re
import urllib.parse
import zlib

import brotli
import zstandard

CODINGS = ("gzip", "br", "zstd")
SUFFIX = {"gzip": ".gz", "br": ".br", "zstd": ".zst"}

# Accept-Encoding values every server is checked with (serve_check.py).
CHROMIUM_AE = "gzip, deflate, br, zstd"
AE_VALUES = [
    None,  # no header
    "",
    "identity",
    "gzip",
    "br",
    "zstd",
    CHROMIUM_AE,
    "gzip, br",
    "br;q=0, gzip",
    "zstd;q=0.001, gzip;q=1",
    "gzip;q=1.0, br;q=0.5",
    "*",
    "*;q=0",
    "gzip;q=0, *",
    "zstd;q=0, *",
    "x-gzip",
    "GZIP, BR",
    "br ; q=0 , gzip",
    "zstd, br;q=0, gzip;q=0",
]

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_QVALUE = re.compile(r"^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$")


def parse_accept_encoding(value):
    """VALUE (a str, or None for no header) -> {coding: q} with lower-case
    codings ("x-gzip" folded into "gzip"), or None for no header.  A member
    that is not a token, or has a malformed weight, is ignored; a coding
    listed twice keeps its first weight."""
    if value is None:
        return None
    prefs = {}
    for member in value.split(","):
        parts = [p.strip(" \t") for p in member.split(";")]
        name = parts[0].lower()
        if not name:
            continue  # empty list elements are allowed (RFC 9110 5.6.1)
        if not _TOKEN.match(name):
            continue
        q = 1.0
        ok = True
        for param in parts[1:]:
            if not param:
                continue
            k, eq, v = param.partition("=")
            k = k.strip(" \t").lower()
            v = v.strip(" \t")
            if k == "q" and eq and _QVALUE.match(v):
                q = float(v)
            elif k == "q":
                ok = False
        if not ok:
            continue
        if name == "x-gzip":
            name = "gzip"
        prefs.setdefault(name, q)
    return prefs


def accepts(prefs, coding):
    """Whether parsed Accept-Encoding PREFS accepts CODING."""
    if prefs is None:
        return False
    if coding in prefs:
        return prefs[coding] > 0
    return prefs.get("*", 0) > 0


def identity_refused(ae_value):
    """Whether Accept-Encoding AE_VALUE refuses identity: "identity;q=0",
    or "*;q=0" without identity listed (RFC 9110 section 12.5.3).  A
    server may then answer 406 when no coding it has is accepted (kiln
    serve does; the snippets' servers send the source)."""
    prefs = parse_accept_encoding(ae_value)
    if prefs is None:
        return False
    if "identity" in prefs:
        return prefs["identity"] == 0
    return "*" in prefs and prefs["*"] == 0


def expected_coding(ae_value, sizes):
    """The coding a request with Accept-Encoding AE_VALUE must get, for an
    asset whose kept siblings have SIZES ({coding: bytes on disk}); None for
    identity.  Ties (which kiln never writes) go to the later coding of
    the table, as lib/server.h says."""
    prefs = parse_accept_encoding(ae_value)
    best = None
    for coding in CODINGS:
        if coding in sizes and accepts(prefs, coding):
            if best is None or sizes[coding] <= sizes[best]:
                best = coding
    return best


def decode(coding, data):
    """DATA decoded from CODING with Python's own decoders; raises
    ValueError when it is not one whole, valid stream of that coding."""
    if coding is None:
        return data
    if coding == "gzip":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = d.decompress(data) + d.flush()
        except zlib.error as e:
            raise ValueError("gzip: %s" % e)
        if not d.eof or d.unused_data:
            raise ValueError("truncated gzip stream or trailing bytes")
        return out
    if coding == "br":
        try:
            return brotli.decompress(data)
        except brotli.error as e:
            raise ValueError("brotli: %s" % e)
    if coding == "zstd":
        try:
            with zstandard.ZstdDecompressor(max_window_size=1 << 23).stream_reader(
                    io.BytesIO(data), read_across_frames=True) as r:
                return r.read()
        except zstandard.ZstdError as e:
            raise ValueError("zstd: %s" % e)
    raise ValueError("unknown coding %r" % coding)


def display(rel):
    """REL (path bytes) as one line of text that names it alone: UTF-8 as it
    is, a backslash doubled, control bytes and bytes that are not UTF-8 as
    \\xHH."""
    out = []
    for ch in rel.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


class Asset:
    """One entry of the manifest: REL (path bytes relative to the tree),
    KEY (the manifest's key), KEPT (codings with a sibling), IMMUTABLE."""

    def __init__(self, tree, key, entry):
        self.key = key
        if "path_base64" in entry:
            self.rel = base64.b64decode(entry["path_base64"])
        else:
            self.rel = key.encode("utf-8")
        self.kept = [c for c in CODINGS if c in entry.get("encodings", {})]
        self.manifest_sizes = {c: entry["encodings"][c].get("size") for c in self.kept}
        self.immutable = entry.get("immutable") in ("name", "bundler", "previous", "tree", "glob")
        self.size = entry.get("size")
        self.path = os.path.join(os.fsencode(tree), self.rel)

    def source(self):
        with open(self.path, "rb") as f:
            return f.read()

    def sibling_path(self, coding):
        return self.path + SUFFIX[coding].encode()

    def sizes(self):
        """{coding: size} of the kept siblings, from the disk (the manifest's
        size for a sibling that is missing: the server then cannot send the
        coding the manifest promises, and the checks catch it)."""
        out = {}
        for c in self.kept:
            try:
                out[c] = os.stat(self.sibling_path(c)).st_size
            except OSError:
                out[c] = self.manifest_sizes[c]
        return out

    def display(self):
        return display(self.rel)

    def ext(self):
        return os.path.splitext(self.rel)[1].decode("ascii", "replace").lower()


def load_assets(tree, manifest=None):
    """Every asset the manifest of TREE lists, sorted by path bytes."""
    path = manifest or os.path.join(tree, "kiln-manifest.json")
    with open(path, "rb") as f:
        m = json.load(f)
    assets = [Asset(tree, k, v) for k, v in m.get("files", {}).items()]
    assets.sort(key=lambda a: a.rel)
    return assets


def url_path(prefix, rel):
    """PREFIX (a URL path ending in '/') + REL (bytes), percent-encoded per
    RFC 3986: every byte but the unreserved characters and '/'."""
    return prefix + urllib.parse.quote(rel, safe="/")


# Content types a sibling's own type could leak into a response.
COMPRESSION_TYPES = {
    "application/gzip", "application/x-gzip", "application/zstd",
    "application/x-zstd", "application/x-brotli", "application/brotli",
    "application/x-br", "application/octet-stream+gzip",
}

# Acceptable media types by extension (parameters such as charset aside).
# Not .mjs: nginx 1.22's stock mime.types lacks it (application/octet-stream,
# which browsers refuse for module scripts), a gap of the server's table.
TYPES_BY_EXT = {
    ".js": {"text/javascript", "application/javascript"},
    ".css": {"text/css"},
    ".html": {"text/html"},
    ".htm": {"text/html"},
    ".json": {"application/json"},
    ".png": {"image/png"},
    ".txt": {"text/plain"},
}


def media_type(content_type):
    """The media type of a Content-Type value, lower-case, no parameters."""
    return (content_type or "").split(";")[0].strip().lower()


def header_tokens(values):
    """The comma-separated tokens of every value in VALUES, lower-case."""
    out = []
    for v in values:
        out += [t.strip().lower() for t in v.split(",") if t.strip()]
    return out


def opaque_etag(etag):
    """ETAG without its weakness mark: what the weak comparison compares."""
    e = (etag or "").strip()
    return e[2:] if e.startswith("W/") else e
