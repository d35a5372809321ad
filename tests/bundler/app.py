#!/usr/bin/env python3
"""app.py - write the source of a web app for a bundler test, from a seed.

usage: app.py KIND SEED PAGES OUT

KIND is vite, rollup, webpack, esbuild or parcel (what the app imports
depends on what the bundler handles without plugins).  The app is an entry
(src/main.js) that imports shared modules, a style sheet and an image, and
loads PAGES pages lazily (import()); each page has its own content, drawn
from the page number, imports two of the shared modules (so the bundler
makes shared chunks), and every few pages a style sheet and an image of
their own.  So every build has hundreds of outputs whose hashes are random
draws.  SEED changes every third page (and its style sheet and image) a
little, and what the app writes into the page once it has loaded every
page and shown every image ("release-SEED-ok"): two seeds are two releases
of one app.

Beside it, public/ holds files a bundler copies as they are: their names are
what real sites ship (a maskable icon, fonts, a robots.txt), several with an
8-character word where a hash would be, and names of every kind a review
found taken for hashes (people, brands, codes: NAMED), in the directory the
hashed outputs go to.  None may be taken for a hash.
"""
import os
import random
import sys

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu amber basalt cobalt dune ember fjord granite harbor iris jade kelp lagoon "
         "meadow nectar onyx prairie quartz river saffron tundra umber violet willow").split()

# Files copied as they are, by path under the output directory.  Some
# share a directory with hashed outputs and hold an 8-character word (or a
# word and a number) where a hash would be.
PUBLIC = {
    "favicon.ico": b"\x00\x00\x01\x00" + bytes(range(256)) * 4,
    "robots.txt": b"User-agent: *\nAllow: /\n" * 20,
    "manifest.webmanifest": b'{"name": "kiln test", "icons": [{"src": "icons/icon-192x192.png"}]}\n' * 8,
    "icons/icon-192x192.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
    "assets/logo-maskable.png": b"\x89PNG\r\n\x1a\n" + bytes(range(255, -1, -1)) * 8,
    "assets/hero-portrait.jpg": b"\xff\xd8\xff\xe0" + bytes(range(256)) * 16,
    "assets/Inter-Variable.woff2": b"wOF2" + bytes(range(128)) * 32,
    "assets/chart-sub-menu.css": b".sub-menu { display: block; }\n" * 30,
    "assets/plpython-python23.html": b"<!doctype html><title>python 2 and 3</title>\n" * 20,
    "assets/guide-chapter1.html": b"<!doctype html><title>chapter 1</title>\n" * 20,
}
# Names of every kind a review found taken for hashes, each a file of the
# kind it was found as, in the directory of the hashed outputs: people
# (with parts of 2 letters, an initial, a particle), brands and
# identifiers (CamelCase with an acronym or a number), product codes,
# upper-case codes with digits, hexadecimal that is no hash (a colour, a
# word, a UUID's last group), a page with a hexadecimal id, scripts named
# by hand.
NAMED = ("team-TomHanks.jpg team-BobSmith.jpg team-XuLiPing.jpg team-IanMcKay.jpg "
         "team-AmyGarza.jpg speaker-OConnorP.jpg speaker-DeShawnW.jpg ceo-LeBronJ2.jpg "
         "team-WangWei1.jpg brand-ReactDOM.svg icon-jQueryUI.svg logo-GitHubCI.svg "
         "logo-GoogleAI.svg logo-ChatGPT4.svg icon-ChevronR.svg icon-ZoomIn2x.svg "
         "item-iPad10th.jpg cam-ILCE7M4K.jpg icon-USBtypeC.svg flag-en_GB_v2.svg "
         "doc-StringIO.svg doc-TargetID.svg doc-InitLLVM.svg doc-Win32API.svg "
         "badge-MP3AUDIO.svg badge-SOC2TYPE.svg icon-WIFI6GHZ.svg codec-H264HEVC.svg "
         "promo-Q3FY24aa.jpg sku-X7K2PQ9Z.jpg swatch-deadbeef.png hero-Winter_B.jpg "
         "550e8400-e29b-41d4-a716-4466554400ab.jpg post-3f9a2c7b1d4e.html "
         "palette-ff00aa11.css vendor-ReactDOM.js widget-TomHanks.js").split()
for _name in NAMED:
    _line = {"js": "// hand-named {}\n", "css": "/* hand-named {} */\n"}.get(_name.rsplit(".", 1)[1],
                                                                          "hand-named {}\n")
    PUBLIC["assets/" + _name] = _line.format(_name).encode() * 40


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def svg(rng):
    rects = "".join(f'<rect x="{rng.randrange(500)}" y="{rng.randrange(500)}" width="{rng.randrange(1, 60)}" '
                    f'height="{rng.randrange(1, 60)}" fill="#{rng.randrange(1 << 24):06x}"/>'
                    for _ in range(120))
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 600 600">{rects}</svg>\n'


def css(rng, cls):
    return "".join(f".{cls}-{i} {{ margin: {rng.randrange(40)}px; color: #{rng.randrange(1 << 24):06x}; }}\n"
                   for i in range(40))


def write(out, rel, text):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())


def main():
    kind, seed, pages, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    styles = kind in ("vite", "webpack", "esbuild", "parcel")
    images = kind in ("vite", "webpack", "esbuild", "parcel")
    shared = max(4, pages // 10)
    for s in range(shared):
        rng = random.Random(f"kiln-shared-{s}")
        write(out, f"src/shared/s{s}.js",
              f"export function helper{s}(x) {{\n  return x + {rng.randrange(1 << 30)} + "
              f"{words(rng, 12)!r}.length;\n}}\n"
              f"export const table{s} = {[words(rng, 6) for _ in range(10)]!r};\n")
    for p in range(pages):
        # every third page (its style sheet, and every twelfth its image)
        # says which release it is: two seeds, two releases of one app
        # that differ a little
        rng = random.Random(f"kiln-page-{p}")
        release = seed if p % 3 == 0 else 0
        a, b = rng.randrange(shared), rng.randrange(shared)
        lines = [f"import {{ helper{a} }} from '../shared/s{a}.js';",
                 f"import {{ table{b} }} from '../shared/s{b}.js';"]
        if styles and p % 3 == 0:
            lines.append(f"import './p{p}.css';")
            write(out, f"src/pages/p{p}.css", css(rng, f"page{p}") + f".release {{ order: {release}; }}\n")
        if images and p % 4 == 0:
            lines.append(f"import image from '../img/i{p}.svg';" if kind != "parcel" else
                         f"const image = new URL('../img/i{p}.svg', import.meta.url).href;")
            picture = svg(rng)
            if p % 3 == 0:
                picture = picture.replace("</svg>", f'<desc>release {release}</desc></svg>')
            write(out, f"src/img/i{p}.svg", picture)
        else:
            lines.append("const image = '';")
        lines.append(f"const text = {[words(rng, 8) for _ in range(12)]!r};")
        lines.append(f"export {{ image }};\nexport const release = {release};")
        lines.append(f"export function render() {{\n  return helper{a}(text.join(' ')) + "
                     f"table{b}.length + image + {rng.randrange(1 << 30)};\n}}")
        write(out, f"src/pages/p{p}.js", "\n".join(lines) + "\n")
    main_lines = ["import { helper0 } from './shared/s0.js';"]
    if styles:
        main_lines.append("import './style.css';")
        write(out, "src/style.css", css(random.Random("kiln-app-style"), "app") +
              f".release {{ order: {seed}; }}\n")
    if images:
        main_lines.append("import logo from './img/logo.svg';" if kind != "parcel" else
                          "const logo = new URL('./img/logo.svg', import.meta.url).href;")
        write(out, "src/img/logo.svg", svg(random.Random("kiln-logo")))
    else:
        main_lines.append("const logo = '';")
    main_lines.append("const pages = [" + ", ".join(f"() => import('./pages/p{p}.js')"
                                                    for p in range(pages)) + "];")
    # in a browser: every page loaded, every image shown, then the release
    # written into #out
    main_lines.append(f"""export async function show() {{
  const all = await Promise.all(pages.map(p => p()));
  let sum = String(helper0(logo)).length;
  for (const page of all) {{
    sum += page.render().length;
    if (page.image) {{
      const img = document.createElement('img');
      img.src = page.image;
      document.body.append(img);
    }}
  }}
  document.getElementById('out').textContent = sum > 0 ? 'release-{seed}-ok' : 'bad';
}}
if (typeof document !== 'undefined') show();""")
    write(out, "src/main.js", "\n".join(main_lines) + "\n")
    write(out, "index.html", '<!doctype html>\n<html><head><meta charset="utf-8"><title>kiln test app</title>'
          '</head><body><p id="out">script did not run</p>'
          '<script type="module" src="./src/main.js"></script></body></html>\n')
    for rel, data in PUBLIC.items():
        write(out, os.path.join("public", rel), data)


if __name__ == "__main__":
    main()
