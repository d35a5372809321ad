#!/usr/bin/python3
"""serve_names.py - every byte a POSIX file name can hold, through kiln's
snippets in the three real servers (nginx, Caddy, Apache), through the
nginx snippet's static form (with --servers nginx-static: a copy of each
tree run with --brotli --nginx-brotli-static, served by an nginx with the
brotli_static module), and through `kiln serve` (with --servers kiln),
started here on 127.0.0.1.

usage: serve_names.py --kiln KILN [--work DIR] [--servers nginx,nginx-static,caddy,apache,kiln]
                      [--trees bytes,issue,random] [--random N] [--seed S]

(--work: where the trees and the servers' files go; by default a new
temporary directory, removed when every check passed.)

Two trees, each run once through kiln with every coding and every server's
snippet:

  bytes   for every byte value 0x01-0xff but '/': a file whose name starts
          with it (f/Ba.js, not fingerprinted), one that holds it in the
          middle (m/aBb.1a7e2c9d.js, fingerprinted: immutable), a directory
          whose name holds it (d/dB/x.1a7e2c9d.css) and one whose name
          starts with it, served by its directory URL (s/Bd/index.html);
  issue   the two Caddy cases that once broke it, alone, each its own tree: "{$" in
          one name and "}" in a later one (Caddy served "/" immutable),
          and "x{$" (caddy adapt failed);
  random  N names (default 300) of one to three components drawn from a
          seeded generator that favours the bytes the servers' syntaxes
          give a meaning to ({ } $ % ; " ' ` \\ # ~ * ? [ ] ( ) ^ | + . and
          the control bytes), with the pieces each syntax substitutes
          before it reads tokens ({$X}, ${X}, {env.X}, {path}, $uri,
          %{X}), half of them fingerprinted.

For each tree and each server: kiln warns for exactly the files the
rule of docs/serving.md ("File names") says that server's snippet leaves
out (Caddy's alone: nginx and Apache serve every name of these trees); the snippet loads (nginx -t, caddy adapt
and validate, apache2 -t), then the server is started once and
serve_check.py asks every asset with no Accept-Encoding, gzip, br and zstd
(GET and HEAD, the body decoded and compared with the source, Content-
Encoding, Content-Type, Vary, Cache-Control, 304s per coding, Range) and
each sibling by its own URL (404).  A file kiln left out of a server's
special handling (a "kiln: PATH: warning:" naming the server) is checked as
the warning says: served no-cache, not immutable.  The one failure
tolerated is Caddy 2.6's: no Content-Length on a sibling's HEAD.

Budget (2 cores): under 60 s per server.  The bytes tree is 1,025 assets,
about 25,000 requests per server (measured: 3-10 s per server and tree,
32 s for everything on a quiet machine, 70 s at a load average of 12).  Prints "serve_names: N passed, M failed"; exits 1 on a failure.
"""
import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

E2E = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, E2E)
import serve_rules as R  # noqa: E402

NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
BROTLI_MODULE = os.environ.get("BROTLI_MODULE",
                               "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so")
CADDY = os.environ.get("CADDY", "/usr/bin/caddy")
APACHE = os.environ.get("APACHE", "/usr/sbin/apache2")
APACHE_MODS = os.environ.get("APACHE_MODULES", "/usr/lib/apache2/modules")
HASH = b"1a7e2c9d"

passed = 0
failed = 0


def ok(what, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, (": " + detail) if detail else ""), flush=True)
    return cond


def body_for(rel):
    """Compressible text that differs per file (so no two share bytes) and
    is long enough that gzip, brotli and zstd each keep a sibling."""
    seed = sum(rel) * 131 + len(rel)
    rng = random.Random(seed)
    lines = [b"/* %s */" % rel.hex().encode()]
    for i in range(400):
        lines.append(b"k.put(%02d);" % rng.randrange(100))
    return b"\n".join(lines) + b"\n"


def put(top, rel, data=None):
    p = os.path.join(top, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(body_for(rel) if data is None else data)


def bytes_tree(top):
    for b in range(1, 256):
        if b == 0x2F:
            continue
        c = bytes([b])
        put(top, b"f/" + c + b"a.js")
        put(top, b"m/a" + c + b"b." + HASH + b".js")
        put(top, b"d/d" + c + b"/x." + HASH + b".css")
        put(top, b"s/" + c + b"d/index.html")
    # the names that once broke a snippet, and a page at the top, whose URL "/" must stay
    # no-cache whatever the names beside it
    for rel in ISSUE_NAMES:
        put(top, rel)
    put(top, b"index.html")


# "{$" and a later "}" made Caddy serve "/" immutable; "x{$" alone stopped
# "caddy adapt"; a backslash hid a sibling's source from Caddy's file
# matcher; more backslashes than the Caddy snippet doubles (left out, with
# a warning, served as itself).
ISSUE_NAMES = [b"{$.1a7e2c9d.js", b"~.1a7e2c9d.}.js", b"x{$.1a7e2c9d.js", b"a\\b.1a7e2c9d.js",
               b"b\\{.1a7e2c9d.js", b"%0A.js", b"a%0Ab.js", b"${HOME}.1a7e2c9d.js",
               b"deep" + b"\\" * 17 + b".1a7e2c9d.js"]


def expected_left_out(server, rel, immutable):
    """Whether SERVER's snippet must leave REL out (README, "What kiln
    guarantees"): for Caddy, an immutable path a Caddyfile token cannot
    carry, and any path with more than 16 backslashes; nothing else."""
    if server != "caddy":
        return False
    if rel.count(b"\\") > 16:
        return True
    if not immutable:
        return False
    keys = [b"/" + rel]
    if rel == b"index.html" or rel.endswith(b"/index.html"):
        keys.append(b"/" + rel[:-len(b"index.html")])
    for k in keys:
        try:
            k.decode("utf-8")
        except UnicodeDecodeError:
            return True
        if b"{$" in k or re.search(rb"\{.*\}", k, re.S):
            return True
        if b"{" in k and (k.count(b"{") > 100 or re.search(rb"\\[{}]", k)):
            return True
        if b"`" in k and re.search(rb'\\("|\Z)', k):
            return True
    return False


# Bytes and pieces each server's syntax gives a meaning to.
SPECIAL = b'{}$%;"\'`\\#~*?[]()^|+.,=@&!<> \t\n\r\x01\x1b\x7f'
PIECES = [b"{$HOME}", b"{$", b"${HOME}", b"${", b"{env.HOME}", b"{path}", b"{http.request.uri}",
          b"$uri", b"$1", b"%{REQUEST_URI}", b"%41", b"%", b"\\x41", b"\\", b"}", b"{", b"~",
          b"{args[0]}", b"{args.0}", b"*.", b"\xc3\xa9", b"\xff", b"\xe9", b"..", b".gz",
          b".br", b".zst", b"index.html", b";", b"#", b"\"", b"`", b"'"]


def random_name(rng, fingerprinted):
    n = rng.randrange(1, 9)
    out = b""
    for _ in range(n):
        r = rng.random()
        if r < 0.35:
            out += rng.choice(PIECES)
        elif r < 0.75:
            out += bytes([rng.choice(SPECIAL)])
        elif r < 0.9:
            out += bytes([rng.randrange(1, 256)])
        else:
            out += bytes([rng.choice(b"abcdefxyz")])
    out = out.replace(b"/", b"_").replace(b"\0", b"_")
    if out in (b".", b".."):
        out += b"_"
    return out + (b"." + HASH if fingerprinted else b"") + rng.choice([b".js", b".css", b".html"])


def random_tree(top, n, seed):
    rng = random.Random(seed)
    seen = set()
    while len(seen) < n:
        parts = [random_name(rng, False)[:-3].rstrip(b".") or b"_"
                 for _ in range(rng.randrange(0, 3))]
        rel = b"/".join(parts + [random_name(rng, rng.random() < 0.5)])
        if rel in seen or any(len(p) > 200 or p in (b".", b"..") for p in rel.split(b"/")):
            continue
        # a file and a directory cannot share a name
        pre = [b"/".join(rel.split(b"/")[:i]) for i in range(1, rel.count(b"/") + 1)]
        if any(p in seen for p in pre) or any(s.startswith(rel + b"/") for s in seen):
            continue
        seen.add(rel)
        put(top, rel)


def age(top, seconds=60):
    """Every file under TOP modified SECONDS ago: Apache gives a file
    modified within the second before a request a weak ETag (its strong one
    could change within that second), so a fresh tree's 200 and 304 could
    carry different ETags.  kiln gives the siblings their source's mtime."""
    then = time.time() - seconds
    for d, _, files in os.walk(os.fsencode(top)):
        for f in files:
            os.utime(os.path.join(d, f), (then, then), follow_symlinks=False)


def run_kiln(kiln, top, args=("--brotli", "--zstd", "--server", "nginx,caddy,apache")):
    """kiln ARGS on TOP; returns its warnings as {server: set of rel paths}
    and the exit status."""
    age(top)
    p = subprocess.run([kiln] + list(args) + ["--json", top], capture_output=True)
    left = {}
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
        ok("kiln --json prints JSON", False, p.stdout[-500:].decode("latin-1"))
    btop = os.fsencode(top)
    for w in doc.get("warnings", []):
        m = re.match(r"(nginx|caddy|apache) snippet: ", w.get("warning", ""))
        if not m:
            continue
        path = base64.b64decode(w["path_base64"]) if "path_base64" in w else \
            w["path"].encode("utf-8")
        rel = os.path.relpath(path, btop)
        left.setdefault(m.group(1), set()).add(rel)
    return p, left


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port, proc, seconds=15):
    end = time.time() + seconds
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class Server:
    """One server for one tree, in directory WORK: conf() writes its
    configuration, check() loads it, start() runs it."""

    def __init__(self, name, tree, work, kiln=None):
        self.name, self.tree, self.work, self.kiln = name, tree, work, kiln
        self.proc = None
        self.pid = None
        os.makedirs(work, exist_ok=True)

    def conf(self, port):
        t, w = self.tree, self.work
        if self.name in ("nginx", "nginx-static"):
            text = ("load_module %s;\n" % BROTLI_MODULE if self.name == "nginx-static" else "") + \
                """worker_processes 1;
pid %(w)s/nginx.pid;
error_log %(w)s/error.log;
events { worker_connections 512; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path %(w)s/body;
    include %(t)s/kiln.nginx.http.conf;
    server {
        listen 127.0.0.1:%(p)d;
        root %(t)s;
        location / {
            include %(t)s/kiln.nginx.conf;
        }
    }
}
"""
            path = os.path.join(w, "nginx.conf")
        elif self.name == "caddy":
            text = """{
	admin off
	auto_https off
	storage file_system %(w)s/storage
}
http://127.0.0.1:%(p)d {
	root * %(t)s
	import %(t)s/kiln.caddy.conf
}
"""
            path = os.path.join(w, "Caddyfile")
        else:
            user = "User nobody\nGroup nogroup\n" if os.getuid() == 0 else ""
            mods = "".join("LoadModule %s_module %s/mod_%s.so\n" % (m, APACHE_MODS, m) for m in (
                "mpm_event", "authz_core", "mime", "rewrite", "headers", "setenvif", "dir",
                "filter", "deflate"))
            text = ("""ServerRoot "%(w)s"
DefaultRuntimeDir "%(w)s"
PidFile "%(w)s/httpd.pid"
ErrorLog "%(w)s/error.log"
LogLevel warn
Listen 127.0.0.1:%(p)d
ServerName 127.0.0.1
""" + user + mods + """ServerLimit 1
StartServers 1
ThreadsPerChild 32
MaxRequestWorkers 32
Include /etc/apache2/mods-available/mime.conf
Include /etc/apache2/mods-available/deflate.conf
DirectoryIndex index.html
DocumentRoot "%(t)s"
<Directory "%(t)s">
    Require all granted
    Include "%(t)s/kiln.apache.conf"
</Directory>
""")
            path = os.path.join(w, "httpd.conf")
        with open(path, "w") as f:
            f.write(text % {"w": w, "t": t, "p": port})
        return path

    def env(self):
        e = dict(os.environ)
        if self.name == "caddy":
            h = os.path.join(self.work, "home")
            e.update(HOME=h, XDG_DATA_HOME=h + "/data", XDG_CONFIG_HOME=h + "/config")
        return e

    def load(self):
        """The server reads the snippet: (ok, its messages)."""
        if self.name == "kiln":
            return True, ""  # kiln serve reads the manifest, no snippet
        path = self.conf(8)
        if self.name in ("nginx", "nginx-static"):
            cmds = [[NGINX, "-t", "-q", "-p", self.work, "-e", self.work + "/error.log", "-c", path]]
        elif self.name == "caddy":
            cmds = [[CADDY, "adapt", "--config", path, "--adapter", "caddyfile"],
                    [CADDY, "validate", "--config", path, "--adapter", "caddyfile"]]
        else:
            cmds = [[APACHE, "-t", "-f", path]]
        for c in cmds:
            p = subprocess.run(c, capture_output=True, env=self.env(), timeout=60)
            if p.returncode != 0:
                return False, (p.stdout + p.stderr).decode("utf-8", "replace")[-1500:]
        return True, ""

    def start(self):
        for _ in range(5):
            port = free_port()
            path = self.conf(port) if self.name != "kiln" else None
            if self.name == "kiln":
                c = [self.kiln, "serve", "-q", "--listen", "127.0.0.1:%d" % port, self.tree]
            elif self.name in ("nginx", "nginx-static"):
                c = [NGINX, "-p", self.work, "-e", self.work + "/error.log", "-c", path,
                     "-g", "daemon off;"]
            elif self.name == "caddy":
                c = [CADDY, "run", "--config", path, "--adapter", "caddyfile"]
            else:
                c = [APACHE, "-f", path, "-DFOREGROUND"]
            log = open(os.path.join(self.work, "server.log"), "wb")
            self.proc = subprocess.Popen(c, stdout=log, stderr=log, env=self.env())
            if wait_up(port, self.proc):
                return port
            self.stop()
        return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM if self.name != "apache" else signal.SIGWINCH)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def check_served(server, port, left):
    """serve_check.py on the tree; its failures, less Caddy's one limit and
    what the warnings explain."""
    out = os.path.join(server.work, "serve_check.out")
    cmd = [sys.executable, os.path.join(E2E, "serve_check.py"),
           "--base", "http://127.0.0.1:%d/" % port, "--tree", server.tree,
           "--ae", "(none)", "--ae", "gzip", "--ae", "br", "--ae", "zstd", "--jobs", "8"]
    if server.name == "kiln":
        cmd.append("--no-dotfiles")  # kiln serve never sends one
    with open(out, "wb") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=600).returncode
    text = open(out, encoding="utf-8", errors="replace").read()
    assets = {a.display(): a for a in R.load_assets(server.tree)}
    left_disp = {R.display(r) for r in left}
    bad = []
    for line in text.splitlines():
        m = re.match(r"FAIL: (.*) \[Accept-Encoding: (.*?)\]: (.*)$", line)
        if m and m.group(1) in assets:
            a, ae, what = assets[m.group(1)], m.group(2), m.group(3)
            ae = {"(none)": None, '""': ""}.get(ae, ae)
            if server.name == "caddy" and re.fullmatch(
                    r"HEAD: Content-Length None, the GET body has \d+ bytes", what) \
                    and R.expected_coding(ae, a.sizes()) is not None:
                continue  # Caddy 2.6: no Content-Length beside Content-Encoding
            if m.group(1) in left_disp and re.fullmatch(
                    r"(GET|HEAD): Cache-Control 'no-cache', want 'public, max-age=31536000, "
                    r"immutable' \(immutable\)", what):
                continue  # left out of the immutable list, with a warning
            if m.group(1) in left_disp and a.rel.count(b"\\") > 16 and (
                    re.fullmatch(r"Content-Encoding absent, want '\w+' \(kept: .*\)", what) or
                    re.fullmatch(r"(GET|HEAD): Vary None lacks Accept-Encoding .*", what) or
                    re.fullmatch(r"its \w+ sibling by its own URL: status 200, want 403 or 404",
                                 what)):
                continue  # left out: served as itself, its siblings too
        if line.startswith("FAIL") or "Traceback" in line:
            bad.append(line)
    if not re.search(r"^serve_check: \d+ requests", text, re.M):
        bad.append("no summary line from serve_check (status %d): %s" % (rc, text[-800:]))
    summary = re.findall(r"^serve_check: .*$", text, re.M)
    return bad, (summary[-1] if summary else "")


def check_top(port):
    """The tree's own URL "/" (its index.html) and a URL of no file: never
    immutable."""
    bad = []
    for target, want in (("/", 200), ("/no-such-file.js", 404)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                      % target.encode())
            raw = b""
            while True:
                d = c.recv(65536)
                if not d:
                    break
                raw += d
        head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        status = int(head.split(" ", 2)[1])
        if status != want:
            bad.append("FAIL: %s: status %d, want %d" % (target, status, want))
        if "immutable" in head:
            bad.append("FAIL: %s: an immutable Cache-Control: %r" % (target, head))
    return bad


def static_copy(kiln, top, label):
    """A copy of TOP run with the codings nginx's static modules cover, so
    that its nginx snippet is the static form: its path and warnings."""
    copy = top + "-static"
    subprocess.run(["cp", "-a", top, copy], check=True)
    p, left = run_kiln(kiln, copy, ("--brotli", "--no-zstd", "--nginx-brotli-static",
                                    "--server", "nginx"))
    ok("%s: kiln --nginx-brotli-static exits 0" % label, p.returncode == 0,
       p.stderr.decode("utf-8", "replace")[-2000:])
    with open(os.path.join(copy, "kiln.nginx.conf"), "rb") as f:
        ok("%s: ... and writes the static form" % label, b"\nbrotli_static on;\n" in f.read())
    return copy, {"nginx-static": left.get("nginx", set())}


def one_tree(kiln, top, servers, label):
    t0 = time.time()
    p, left = run_kiln(kiln, top)
    ok("%s: kiln exits 0" % label, p.returncode == 0,
       p.stderr.decode("utf-8", "replace")[-2000:])
    print("%s: kiln %.1fs; left out: %s" % (label, time.time() - t0,
          {k: len(v) for k, v in left.items()}), flush=True)
    assets = R.load_assets(top)
    ok("%s: the manifest lists the tree" % label, len(assets) > 0)
    trees = {name: top for name in servers}
    if "nginx-static" in servers:
        trees["nginx-static"], more = static_copy(kiln, top, label)
        left.update(more)
    if os.getuid() == 0:  # Apache drops root's privileges to nobody
        subprocess.run(["chown", "-R", "nobody:nogroup", os.path.dirname(top)])
    for name in servers:
        if name == "kiln":
            continue  # kiln serve has no snippet to leave anything out of
        rule = "nginx" if name == "nginx-static" else name
        want = {a.rel for a in assets if expected_left_out(rule, a.rel, a.immutable)}
        got = left.get(name, set())
        ok("%s: kiln warns for exactly the files the %s snippet must leave out" % (label, name),
           got == want, "missing %r, extra %r" % (sorted(want - got)[:5], sorted(got - want)[:5]))
    for name in servers:
        t1 = time.time()
        s = Server(name, trees[name], os.path.join(os.path.dirname(top), "%s-%s" % (label, name)),
                   kiln)
        loaded, msg = s.load()
        if not ok("%s: %s loads the snippet" % (label, name), loaded, msg):
            continue
        port = s.start()
        if not ok("%s: %s starts with the snippet" % (label, name), port is not None,
                  open(os.path.join(s.work, "server.log"), errors="replace").read()[-1500:]):
            continue
        try:
            bad, summary = check_served(s, port, left.get(name, set()))
            if label != "random":
                bad += check_top(port)
        finally:
            s.stop()
        for line in bad[:40]:
            print("  " + line, flush=True)
        if len(bad) > 40:
            print("  ... %d more" % (len(bad) - 40), flush=True)
        ok("%s: %s serves every name by the rules (%s)" % (label, name, summary), not bad,
           "%d failures" % len(bad))
        print("%s: %s %.1fs" % (label, name, time.time() - t1), flush=True)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work")
    ap.add_argument("--servers", default="nginx,caddy,apache")
    ap.add_argument("--trees", default="bytes,issue,random")
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("KILN_NAMES_SEED", "20261202")))
    o = ap.parse_args(argv)
    t_start = time.time()
    servers = o.servers.split(",")
    scratch = o.work is None
    if scratch:
        o.work = tempfile.mkdtemp(prefix="kiln-names.")
    os.makedirs(o.work, exist_ok=True)
    os.chmod(o.work, 0o755)
    trees = o.trees.split(",")
    if "bytes" in trees:
        top = os.path.join(o.work, "bytes")
        bytes_tree(os.fsencode(top))
        subprocess.run(["chmod", "-R", "a+rX", top])
        one_tree(o.kiln, top, servers, "bytes")
    if "issue" in trees:
        # the two trees that once broke Caddy, alone: "{$" then "}" in a later name (Caddy
        # served "/" immutable), and "x{$" alone (caddy adapt failed)
        for i, names in enumerate(([b"{$.1a7e2c9d.js", b"~.1a7e2c9d.}"], [b"x{$.1a7e2c9d.js"])):
            top = os.path.join(o.work, "issue%d" % i)
            for rel in names + [b"index.html"]:
                put(os.fsencode(top), rel)
            subprocess.run(["chmod", "-R", "a+rX", top])
            one_tree(o.kiln, top, servers, "issue%d" % i)
    if "random" in trees:
        print("random names: seed %d (KILN_NAMES_SEED)" % o.seed, flush=True)
        top = os.path.join(o.work, "random")
        random_tree(os.fsencode(top), o.random, o.seed)
        subprocess.run(["chmod", "-R", "a+rX", top])
        one_tree(o.kiln, top, servers, "random")
    if scratch and not failed:
        shutil.rmtree(o.work, ignore_errors=True)
    elif failed:
        print("kept %s" % o.work)
    print("serve_names: %.0f s" % (time.time() - t_start), flush=True)
    print("serve_names: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
