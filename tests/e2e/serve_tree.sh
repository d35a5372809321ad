#!/usr/bin/env bash
# serve_tree.sh DIR - build the small web tree the serving tests use, in DIR
# (created; must not hold a tree already).  Deterministic: the same bytes on
# every run and machine (a fixed-seed generator, fixed mtimes), so kiln makes
# the same siblings.  Run kiln on it afterwards (kiln --brotli --zstd DIR).
#
#   index.html                  the page: loads the four assets below (and
#                               docs/café-ü.css, img/logo.png); its script
#                               writes "kiln-ran-OK" into #out when every
#                               script ran and both stylesheets applied
#   assets/app.3f9a2c7b.js      fingerprinted (webpack-style hex), ~36 KB of
#                               near-identical lines: zstd 19 beats brotli 11
#                               beats gzip, so kiln keeps all three siblings
#   assets/index-B2x9_kQ1.css   fingerprinted (Vite-style), compressible
#   assets/vendor-Dq4x_Z8k.js   fingerprinted (Vite-style), compressible
#   assets/chunks/lazy.9c1d4e2f.js  fingerprinted, two levels down (not loaded)
#   settings.js                 plain name (not fingerprinted), loaded
#   data.json                   JSON
#   img/logo.png                a real 64x64 PNG (media: no sibling)
#   small.txt                   under 256 bytes (small: no sibling)
#   noise.js                    20 KB of random bytes (no-gain: no sibling)
#   docs/read me.html           a space in the name, compressible
#   docs/café-ü.css             non-ASCII (UTF-8, NFC), compressible, loaded
set -eu
[ $# -eq 1 ] && [ "${1#-}" = "$1" ] || { echo "usage: serve_tree.sh DIR" >&2; exit 2; }
DIR=$1
mkdir -p "$DIR"
[ -z "$(ls -A "$DIR")" ] || { echo "serve_tree.sh: $DIR is not empty" >&2; exit 1; }

/usr/bin/python3 - "$DIR" <<'PY'
import os, random, struct, sys, zlib, json

top = sys.argv[1]
rng = random.Random(20261201)


def put(rel, data):
    p = os.path.join(top.encode(), rel.encode("utf-8"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def words(n, vocab):
    return " ".join(rng.choice(vocab) for _ in range(n))


letters = "abcdefghijklmnopqrstuvwxyz"
vocab = ["".join(rng.choice(letters) for _ in range(rng.randrange(3, 9))) for _ in range(256)]

put("index.html", """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kiln serving test</title>
<link rel="stylesheet" href="assets/index-B2x9_kQ1.css">
<link rel="stylesheet" href="docs/caf%C3%A9-%C3%BC.css">
</head>
<body>
<h1>kiln serving test</h1>
<p>This page loads fingerprinted and plain scripts and stylesheets; its
script writes a marker below once everything ran.</p>
<img src="img/logo.png" alt="logo" width="64" height="64">
<div id="out">script did not run</div>
<script src="settings.js"></script>
<script src="assets/vendor-Dq4x_Z8k.js"></script>
<script src="assets/app.3f9a2c7b.js"></script>
</body>
</html>
""")

# The app: ~35 KB of calls that differ only in a random two-digit number:
# text where zstd 19 beats brotli 11 (by ~25%: its sequences cost less)
# and brotli beats gzip, so kiln keeps all three siblings.
lines = ["/* app.3f9a2c7b.js - kiln serving test */",
         "var kilnApp = { n: 0, put: function (v) { this.n += v; } };"]
for i in range(2000):
    lines.append("kilnApp.put(%02d);" % rng.randrange(100))
lines.append("""(function () {
  var out = document.getElementById('out');
  var missing = [];
  if (!window.kilnSettings || window.kilnSettings.name !== 'kiln') missing.push('settings.js');
  if (typeof window.kilnVendor !== 'function' || window.kilnVendor(2) !== 4) missing.push('vendor');
  if (!(kilnApp.n > 0)) missing.push('app');
  var style = getComputedStyle(out);
  if (style.getPropertyValue('--kiln-css').trim() !== 'ok') missing.push('index css');
  if (style.getPropertyValue('--kiln-cafe').trim() !== 'ok') missing.push('cafe css');
  out.textContent = missing.length ? 'kiln-ran-missing: ' + missing.join(', ') : 'kiln-ran-OK';
})();
""")
put("assets/app.3f9a2c7b.js", "\n".join(lines))

css = ["/* index-B2x9_kQ1.css */", "#out { --kiln-css: ok; font-family: monospace; }"]
for i in range(300):
    css.append(".c%d { margin: %dpx %dpx; padding: %dpx; color: #%06x; }" % (
        i, rng.randrange(20), rng.randrange(20), rng.randrange(10), rng.getrandbits(24)))
put("assets/index-B2x9_kQ1.css", "\n".join(css) + "\n")

js = ["/* vendor-Dq4x_Z8k.js */", "window.kilnVendor = function (x) { return x * x; };",
      "var kilnTable = {"]
for i in range(600):
    js.append("  k%d: function (a, b) { return a * %d + b - %d; }," % (i, rng.randrange(1000), rng.randrange(1000)))
js.append("};")
put("assets/vendor-Dq4x_Z8k.js", "\n".join(js) + "\n")

lazy = ["/* lazy.9c1d4e2f.js */"] + ["export const v%d = %d; // %s" % (i, i * 7, words(6, vocab)) for i in range(150)]
put("assets/chunks/lazy.9c1d4e2f.js", "\n".join(lazy) + "\n")

settings = ["/* settings.js - not fingerprinted */", "window.kilnSettings = {", "  name: 'kiln',"]
for i in range(60):
    settings.append("  option%d: %s," % (i, "true" if i % 3 else "false"))
settings.append("};")
put("settings.js", "\n".join(settings) + "\n")

data = {"items": [{"id": i, "name": words(3, vocab), "value": rng.randrange(10000)} for i in range(120)]}
put("data.json", json.dumps(data, indent=2, sort_keys=True) + "\n")


def png(w, h):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 4 % 256, y * 4 % 256, (x ^ y) * 4 % 256)) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


put("img/logo.png", png(64, 64))
put("small.txt", "kiln: a file under min-size gets no sibling.\n")
put("noise.js", rng.randbytes(20480))

page = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>read me</title></head><body>']
for i in range(80):
    page.append("<p>Paragraph %d: %s.</p>" % (i, words(12, vocab[:64])))
page.append("</body></html>")
put("docs/read me.html", "\n".join(page) + "\n")

cafe = ["/* café-ü.css */", "#out { --kiln-cafe: ok; }"]
for i in range(200):
    cafe.append(".café-%d::after { content: 'ü %d'; border: %dpx solid #%06x; }" % (
        i, i, rng.randrange(5), rng.getrandbits(24)))
put("docs/café-ü.css", "\n".join(cafe) + "\n")
PY

# Fixed modes and mtimes: the same validators (Last-Modified, nginx's ETag)
# on every run.
find "$DIR" -type d -exec chmod 755 {} +
find "$DIR" -type f -exec chmod 644 {} +
find "$DIR" -exec touch -h -d '2026-01-02 03:04:05 UTC' {} +
