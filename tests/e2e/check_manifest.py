#!/usr/bin/python3
"""check_manifest.py MANIFEST TREE SCHEMA [MIME_TYPES]

Checks a kiln manifest against the tree it describes, independently of kiln:
it validates against the JSON Schema of the documented format, recomputes
every size and digest from the files on disk (hashlib), checks each entry's
content_type against nginx's own mime.types file, and checks that the entries
are exactly the tree's assets (not the siblings, not kiln's own outputs).
Prints one line per problem; exits 1 if there is any.
"""
import base64
import hashlib
import json
import os
import re
import sys

import jsonschema

problems = []


def problem(msg):
    problems.append(msg)
    print("manifest: " + msg, file=sys.stderr)


def digest(path, algo):
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h


def percent_key(rel):
    """The manifest key of REL (bytes), as README.md defines it: '%' and
    every byte not part of well-formed UTF-8 written %XX."""
    out, i = [], 0
    while i < len(rel):
        for n in (1, 2, 3, 4):
            try:
                ch = rel[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and ch != "%" and not (0xD800 <= ord(ch) <= 0xDFFF):
                out.append(ch)
                i += n
                break
        else:
            out.append("%%%02X" % rel[i])
            i += 1
    return "".join(out)


def nginx_types(path):
    """extension -> type, parsed from an nginx mime.types file."""
    types = {}
    if not path or not os.path.exists(path):
        return None
    text = open(path, encoding="ascii").read()
    body = text[text.index("{") + 1:text.rindex("}")]
    for stmt in body.split(";"):
        words = stmt.split()
        if len(words) >= 2:
            for ext in words[1:]:
                types[ext.lower()] = words[0]
    return types


def main():
    manifest_path, tree, schema_path = sys.argv[1:4]
    mime = nginx_types(sys.argv[4] if len(sys.argv) > 4 else None)
    raw = open(manifest_path, "rb").read()
    doc = json.loads(raw.decode("utf-8"))  # must be UTF-8 JSON
    jsonschema.validate(doc, json.load(open(schema_path)))
    if not raw.endswith(b"\n"):
        problem("no final newline")
    # keys sorted at every level, as written
    if json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n" != raw:
        problem("not in canonical form (sorted keys, 2-space indent)")

    treeb = os.fsencode(tree)
    files = set()
    for d, _, names in os.walk(treeb):
        for n in names:
            full = os.path.join(d, n)
            if os.path.isfile(full) and not os.path.islink(full):
                files.add(os.path.relpath(full, treeb))
    # what kiln must not list: its own outputs and siblings of existing files
    own = {b"kiln-manifest.json", b".kiln-manifest.json.index", b"kiln.nginx.conf", b"kiln.nginx.http.conf",
           b"kiln.caddy.conf", b"kiln.apache.conf"}
    siblings = {f for f in files for s in (b".gz", b".br", b".zst")
                if f.endswith(s) and len(f) > len(s) and f[:-len(s)] in files}
    # dictionary deltas: NAME.<16 hex>.dcz beside NAME
    deltas = {f for f in files if re.search(rb"\.[0-9a-f]{16}\.dcz$", f) and f[:-21] in files}
    siblings |= deltas
    assets = files - own - siblings

    seen = set()
    for key, e in doc["files"].items():
        rel = base64.b64decode(e["path_base64"]) if "path_base64" in e else key.encode("utf-8")
        if "path_base64" not in e and "%" in key:
            problem(f"{key}: percent-encoded key without path_base64")
        if "path_base64" in e and key != percent_key(rel):
            problem(f"{key}: key is not the percent-encoded path {percent_key(rel)}")
        seen.add(rel)
        full = os.path.join(treeb, rel)
        if not os.path.isfile(full):
            problem(f"{key}: listed but not in the tree")
            continue
        if os.path.getsize(full) != e["size"]:
            problem(f"{key}: size {e['size']} but {os.path.getsize(full)} on disk")
        if digest(full, "sha256").hexdigest() != e["sha256"]:
            problem(f"{key}: sha256 differs from the file")
        sri = "sha384-" + base64.b64encode(digest(full, "sha384").digest()).decode()
        if sri != e["integrity"]:
            problem(f"{key}: integrity differs from the file")
        if mime is not None:
            base = rel.rsplit(b"/", 1)[-1]
            ext = base.rsplit(b".", 1)[1].decode("latin-1").lower() if b"." in base else ""
            want = mime.get(ext, "application/octet-stream")
            if e["content_type"] != want:
                problem(f"{key}: content_type {e['content_type']}, nginx says {want}")
        for coding, suffix in (("gzip", b".gz"), ("br", b".br"), ("zstd", b".zst")):
            sib = full + suffix
            enc = e.get("encodings", {}).get(coding)
            if enc is None:
                if os.path.exists(sib):
                    problem(f"{key}: {coding} sibling on disk but not in the manifest")
                continue
            if enc["path"] != key + suffix.decode():
                problem(f"{key}: {coding} path is {enc['path']}")
            if not os.path.isfile(sib):
                problem(f"{key}: {coding} sibling missing")
                continue
            if os.path.getsize(sib) != enc["size"]:
                problem(f"{key}: {coding} size differs from the sibling")
            if digest(sib, "sha256").hexdigest() != enc["sha256"]:
                problem(f"{key}: {coding} sha256 differs from the sibling")
        listed = set()
        for d in e.get("dictionaries", []):
            want = key + "." + d["dictionary_sha256"][:16] + ".dcz"
            sib = full + want[len(key):].encode()
            listed.add(sib)
            if d["path"] != want:
                problem(f"{key}: dictionary delta path is {d['path']}, want {want}")
            elif not os.path.isfile(sib):
                problem(f"{key}: dictionary delta {d['path']} missing")
            elif (os.path.getsize(sib) != d["size"] or
                  digest(sib, "sha256").hexdigest() != d["sha256"]):
                problem(f"{key}: dictionary delta {d['path']} differs from the manifest")
            elif open(sib, "rb").read(40) != bytes.fromhex("5e2a4d1820000000" + d["dictionary_sha256"]):
                problem(f"{key}: dictionary delta {d['path']}: header does not name its dictionary")
        for f in deltas:
            if f[:-21] == rel and os.path.join(treeb, f) not in listed:
                problem(f"{key}: dictionary delta {f!r} on disk but not in the manifest")
    for f in sorted(assets - seen):
        problem(f"{f!r}: in the tree but not in the manifest")
    for f in sorted(seen & (own | siblings)):
        problem(f"{f!r}: a sibling or kiln output listed as an asset")
    print(f"check_manifest: {len(doc['files'])} entries, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
