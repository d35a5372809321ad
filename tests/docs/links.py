#!/usr/bin/env python3
"""links.py - every link in README.md and docs/*.md resolves.

A relative link must name a file of the repository; a link with a
fragment must name a heading of that file (GitHub's anchor for it: lower
case, punctuation other than '-' and '_' dropped, spaces as '-', a
repeated heading numbered -1, -2, ...).  Every docs/ page must be linked
from the README, and every section cited in a comment of lib/ or
cmd/ ("README.md, \"Section\"" or "docs/PAGE.md, \"Section\"")
must exist.  Exit 1 with one line per broken link."""
import os, re, sys

top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
top = os.path.abspath(top)
bad = []


def anchors(path):
    seen, out = {}, set()
    fence = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
            continue
        m = None if fence else re.match(r'^(#{1,6}) (.*?)\s*$', line)
        if not m:
            continue
        text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', m.group(2))
        a = re.sub(r'[^\w\- ]', '', text.strip().lower()).replace(' ', '-')
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f'{a}-{n}')
    return out


def headings(path):
    return {re.sub(r'^#+ ', '', l.strip()) for l in open(path, encoding='utf-8') if l.startswith('#')}


pages = ['README.md'] + sorted('docs/' + f for f in os.listdir(os.path.join(top, 'docs')) if f.endswith('.md'))
for page in pages:
    path = os.path.join(top, page)
    text = open(path, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)   # code blocks hold no links
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'^[a-z]+:', target):
            continue                                   # http:, mailto:: not checked offline
        file, _, frag = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append(f'{page}: link to {target}: no such file')
        elif frag and dest.endswith('.md') and frag not in anchors(dest):
            bad.append(f'{page}: link to {target}: no such heading')

readme = open(os.path.join(top, 'README.md'), encoding='utf-8').read()
for page in pages[1:]:
    if f']({page}' not in readme:
        bad.append(f'README.md: does not link {page}')

# Comments that cite a section: README.md, "Section" / docs/page.md, "Section".
cite = re.compile(r'((?:README|docs/[a-z-]+)\.md)(?:,\s*(?:\*\s*)?|\s*\()"([^"\n]+(?:\n\s*\*?\s*[^"\n]+)?)"')
for d in ('lib', 'cmd'):
    for root, _, names in os.walk(os.path.join(top, d)):
        for n in names:
            if not n.endswith(('.c', '.h', '.sh', '.py')):
                continue
            p = os.path.join(root, n)
            src = open(p, encoding='utf-8', errors='replace').read()
            for file, sect in cite.findall(src):
                sect = re.sub(r'\s*\n\s*(\*\s*)?', ' ', sect).strip()
                f = os.path.join(top, file)
                if not os.path.exists(f):
                    bad.append(f'{os.path.relpath(p, top)}: cites {file}, which does not exist')
                elif sect not in headings(f):
                    bad.append(f'{os.path.relpath(p, top)}: cites {file}, "{sect}", no such section')

for b in bad:
    print('FAIL:', b)
print(f'links: {len(pages)} pages checked, {len(bad)} broken', file=sys.stderr)
sys.exit(1 if bad else 0)
