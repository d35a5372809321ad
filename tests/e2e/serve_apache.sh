#!/usr/bin/env bash
# serve_apache.sh - proof against a real Apache httpd 2.4 (Debian's apache2):
# kiln.apache.conf passes `apache2 -t` (weird names included) and, with
# Apache started here on 127.0.0.1 under a configuration of our own, serves
# the serving tree by kiln's rules (serve_check.py: every asset with every
# Accept-Encoding of the list, bodies decoded, headers, HEAD, Range, 304s,
# kiln's own files refused) and Chromium gets the smallest coding
# (browser.py, from Apache's access log).  The snippet is included inside a
# <Directory>, inside a <VirtualHost>, under an Alias with --url-prefix, and
# made with --no-cache-control.  Debian's mod_deflate is loaded with its
# configuration (it must compress nothing of the tree), and one server has
# Debian's commented-out "AddEncoding x-gzip .gz" turned on (one
# Content-Encoding must still go out).
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
APACHE=${APACHE:-/usr/sbin/apache2}
MODS=${APACHE_MODULES:-/usr/lib/apache2/modules}
MIME_CONF=/etc/apache2/mods-available/mime.conf
DEFLATE_CONF=/etc/apache2/mods-available/deflate.conf
for need in "$APACHE" "$MODS/mod_rewrite.so" "$MODS/mod_headers.so" "$MIME_CONF" "$DEFLATE_CONF" /etc/mime.types; do
	[ -e "$need" ] || { echo "serve_apache.sh: $need is missing (install apache2)" >&2; exit 1; }
done
command -v curl >/dev/null || { echo "serve_apache.sh: curl is missing" >&2; exit 1; }
BUDGET=${KILN_APACHE_BUDGET:-100} # seconds for the whole test
start=$SECONDS

# Apache's parent pids, read as each starts (finish removes $T, pid files
# and all, before the EXIT trap runs).
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
}
trap cleanup EXIT
left() { echo $((BUDGET - (SECONDS - start))); }

# Apache drops root's privileges to User/Group: the owner of the trees.
user_lines=
if [ "$(id -u)" = 0 ]; then
	chown -R nobody:nogroup "$T"
	user_lines=$'User nobody\nGroup nogroup'
fi

# write_conf DIR ROOT PORT MODE: an httpd.conf of our own in DIR serving
# ROOT, its snippet included per MODE: dir (in <Directory>, with a
# rewrite rule of the user's beside it), vhost (in <VirtualHost>, with
# "AddEncoding x-gzip .gz"), alias (Alias /static/ ROOT/, in <Directory>
# with "Options None": mod_rewrite refuses per-directory rules without
# FollowSymLinks or SymLinksIfOwnerMatch, so the snippet must see to it).
write_conf() {
	local dir=$1 root=$2 port=$3 mode=$4
	mkdir -p "$dir/empty"
	cat >"$dir/httpd.conf" <<CONF
ServerRoot "$dir"
DefaultRuntimeDir "$dir"
PidFile "$dir/httpd.pid"
ErrorLog "$dir/error.log"
LogLevel warn
Listen 127.0.0.1:$port
ServerName 127.0.0.1
$user_lines
LoadModule mpm_event_module $MODS/mod_mpm_event.so
ServerLimit 1
StartServers 1
ThreadsPerChild 16
MaxRequestWorkers 16
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule mime_module $MODS/mod_mime.so
LoadModule rewrite_module $MODS/mod_rewrite.so
LoadModule headers_module $MODS/mod_headers.so
LoadModule setenvif_module $MODS/mod_setenvif.so
LoadModule dir_module $MODS/mod_dir.so
LoadModule alias_module $MODS/mod_alias.so
LoadModule filter_module $MODS/mod_filter.so
LoadModule deflate_module $MODS/mod_deflate.so
Include $MIME_CONF
Include $DEFLATE_CONF
DirectoryIndex index.html
LogFormat "KILN method=\"%m\" uri=\"%U\" status=%>s ce=\"%{Content-Encoding}o\" ae=\"%{Accept-Encoding}i\"" kiln
CustomLog "$dir/access.log" kiln
CONF
	case $mode in
	dir)
		cat >>"$dir/httpd.conf" <<CONF
DocumentRoot "$root"
<Directory "$root">
    Require all granted
    RewriteEngine On
    RewriteRule ^moved\.js$ /settings.js [R=301,L]
    Include "$root/kiln.apache.conf"
</Directory>
CONF
		;;
	vhost)
		cat >>"$dir/httpd.conf" <<CONF
AddEncoding x-gzip .gz .tgz
<VirtualHost 127.0.0.1:$port>
    DocumentRoot "$root"
    <Directory "$root">
        Require all granted
    </Directory>
    Include "$root/kiln.apache.conf"
</VirtualHost>
CONF
		;;
	alias)
		cat >>"$dir/httpd.conf" <<CONF
DocumentRoot "$dir/empty"
Alias /static/ "$root/"
<Directory "$root">
    Options None
    Require all granted
    Include "$root/kiln.apache.conf"
</Directory>
CONF
		;;
	esac
}

# decodes_to_gz BODY SOURCE: BODY is a gzip stream of exactly SOURCE.
decodes_to_gz() { gzip -dc <"$1" 2>/dev/null | cmp -s - "$2"; }

apache_test() { "$APACHE" -f "$1/httpd.conf" -t >"$1/t.log" 2>&1; }

# start_apache DIR ROOT MODE: on a free port; sets PORT.
start_apache() {
	local dir=$1 root=$2 mode=$3 try
	for try in 1 2 3 4 5 6 7 8; do
		PORT=$((20000 + RANDOM % 20000))
		write_conf "$dir" "$root" "$PORT" "$mode"
		rm -f "$dir/httpd.pid"
		"$APACHE" -f "$dir/httpd.conf" -k start 2>>"$dir/start.log" || continue
		for _ in $(seq 50); do [ -s "$dir/httpd.pid" ] && break; sleep 0.1; done
		[ -s "$dir/httpd.pid" ] || continue
		pids+=("$(cat "$dir/httpd.pid")")
		for _ in $(seq 50); do
			curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
			sleep 0.1
		done
		kill "${pids[-1]}" 2>/dev/null
	done
	echo "serve_apache.sh: could not start apache ($mode)" >&2
	cat "$dir/error.log" "$dir/start.log" >&2 2>/dev/null
	return 1
}

# serve_check NAME BASE TREE [OPTIONS...]
serve_check() {
	local name=$1 base=$2 tree=$3; shift 3
	timeout "$(left)" $PY "$E2E/serve_check.py" --base "$base" --tree "$tree" --jobs 4 "$@" \
		>"$T/$name.check" 2>&1 || { sed -n '1,40p' "$T/$name.check" >&2; return 1; }
}

# The serving tree, four times: served from a <Directory>, from a
# <VirtualHost>, under /static/, and without Cache-Control.
for t in dir vhost alias nocc; do
	bash "$E2E/serve_tree.sh" "$T/$t" || fail "serve_tree.sh $t"
done
"$KILN" -q --brotli --zstd --server apache "$T/dir" || fail "kiln on the tree"
"$KILN" -q --brotli --zstd --server apache "$T/vhost" || fail "kiln on the tree (vhost)"
"$KILN" -q --brotli --zstd --server apache --url-prefix /static/ "$T/alias" || fail "kiln --url-prefix"
"$KILN" -q --brotli --zstd --server apache --no-cache-control "$T/nocc" || fail "kiln --no-cache-control"
cp "$T/dir/kiln.apache.conf" "$T/first.conf"
"$KILN" -q --brotli --zstd --server apache "$T/dir" || fail "kiln again on the tree"
check "a second run writes the same snippet" cmp -s "$T/first.conf" "$T/dir/kiln.apache.conf"
check "--no-cache-control: no Cache-Control in the snippet" not grep -q 'Cache-Control "' "$T/nocc/kiln.apache.conf"
check "the snippet has Cache-Control lines" grep -q '^Header set Cache-Control "public, max-age=31536000, immutable"' "$T/dir/kiln.apache.conf"

# Names that are hard to quote: apache2 -t accepts the snippet, and the
# tree is served right (every asset, the usual Accept-Encoding list).
mkdir -p "$T/weird/sub dir"
$PY - "$T/weird" <<'EOF'
import os, sys
top = os.fsencode(sys.argv[1])
names = [b'q"uote.js', b"apo'strophe.js", b"back\\slash.js", b"dollar$ {brace}.js",
         b"hash#pct%25?.js", b"tab\tname.js", b"lt<gt>.js", b"sub dir/\xff\xfe latin1.js",
         b"sub dir/caf\xc3\xa9 (1) [x] a|b+c^.css", b"star*.js", b"semi;colon.js",
         b"app.0badc0de.js"]
for i, n in enumerate(names):
    with open(os.path.join(top, n), "wb") as f:
        f.write(b"".join(b"/* line %d of file %d: the same words again */\n" % (j, i) for j in range(300)))
EOF
chmod -R a+rX "$T/weird"
"$KILN" -q --brotli --zstd --server apache "$T/weird" || fail "kiln on the weird tree"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$T"

write_conf "$T/a-weird" "$T/weird" 8 dir
check "apache2 -t accepts the snippet of the weird names" apache_test "$T/a-weird"
write_conf "$T/a-nohdr" "$T/dir" 8 dir
sed -i '/headers_module/d' "$T/a-nohdr/httpd.conf"
check "without mod_headers, apache2 -t fails" not apache_test "$T/a-nohdr"
check "... and names the module" grep -q 'needs mod_headers' "$T/a-nohdr/t.log"

# In a <Directory>: the rules, the browser, the log, the user's own rule.
if start_apache "$T/a-dir" "$T/dir" dir; then
	base="http://127.0.0.1:$PORT/"
	check "<Directory>: serve_check" serve_check dir "$base" "$T/dir"
	: >"$T/a-dir/access.log"
	check "<Directory>: browser" timeout "$(left)" $PY "$E2E/browser.py" --url "$base" --tree "$T/dir" \
		--log "$T/a-dir/access.log" --log-format apache --out "$T/browser.json" --timeout 50
	code=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "${base}moved.js")
	check "a RewriteRule of the user's beside the snippet still works ($code)" [ "$code" = "301 ${base}settings.js" ]
	: >"$T/a-dir/access.log"
	curl -s -o /dev/null -H 'Accept-Encoding: zstd' "${base}assets/app.3f9a2c7b.js"
	sleep 0.2
	check "the access log shows the path asked for, sent as zstd" \
		grep -q 'uri="/assets/app.3f9a2c7b.js" status=200 ce="zstd"' "$T/a-dir/access.log"
	# A snippet older than the tree: a sibling gone, a file added, Apache
	# not reloaded.  Siblings are looked for on disk per request.
	rm "$T/dir/settings.js.br"
	curl -s -o "$T/body" -H 'Accept-Encoding: br, gzip' "${base}settings.js"
	check "a sibling gone since the snippet: the next smallest is sent" decodes_to_gz "$T/body" "$T/dir/settings.js"
	printf 'added after the snippet was made %s\n' $(seq 100) >"$T/dir/added.3f9a2c7b1d4e.txt"
	gzip -9 -n -k "$T/dir/added.3f9a2c7b1d4e.txt"
	chmod a+r "$T/dir/added.3f9a2c7b1d4e.txt"*
	curl -s -D "$T/h" -o "$T/body" -H 'Accept-Encoding: gzip' "${base}added.3f9a2c7b1d4e.txt"
	check "a file added since: its sibling is found on disk" decodes_to_gz "$T/body" "$T/dir/added.3f9a2c7b1d4e.txt"
	check "... with Vary" grep -qi '^vary: accept-encoding' "$T/h"
	check "... and it is revalidated (no-cache) until the snippet is regenerated" grep -qi '^cache-control: no-cache' "$T/h"
else
	fail "apache (<Directory>) did not start"
fi

# In a <VirtualHost>, with "AddEncoding x-gzip .gz": one Content-Encoding.
if start_apache "$T/a-vhost" "$T/vhost" vhost; then
	base="http://127.0.0.1:$PORT/"
	check "<VirtualHost>: serve_check" serve_check vhost "$base" "$T/vhost"
	n=$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "${base}settings.js" | grep -ci '^content-encoding:')
	check "AddEncoding x-gzip .gz: one Content-Encoding header ($n)" [ "$n" = 1 ]
	ce=$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "${base}settings.js" | grep -i '^content-encoding:' | tr -d '\r')
	check "... and it is gzip ($ce)" [ "${ce#*: }" = gzip ]
else
	fail "apache (<VirtualHost>) did not start"
fi

# Under an Alias, with --url-prefix /static/.
if start_apache "$T/a-alias" "$T/alias" alias; then
	check "/static/: serve_check" serve_check alias "http://127.0.0.1:$PORT/static/" "$T/alias"
else
	fail "apache (Alias) did not start"
fi

# --no-cache-control.
if start_apache "$T/a-nocc" "$T/nocc" dir; then
	check "--no-cache-control: serve_check" serve_check nocc "http://127.0.0.1:$PORT/" "$T/nocc" --no-cache-control
else
	fail "apache (--no-cache-control) did not start"
fi

# The weird names, served.
if start_apache "$T/a-weird" "$T/weird" dir; then
	check "weird names: serve_check" serve_check weird "http://127.0.0.1:$PORT/" "$T/weird"
else
	fail "apache (weird names) did not start"
fi

# A list long enough for the Cache-Control runs to be grouped under <If>s:
# 4000 assets with long names, most of them fingerprinted; a sample of them
# (each group's edges included) and a file added since asked for with HEAD.
mkdir -p "$T/big"
$PY - "$T/big" <<'EOF'
import os, sys
top = sys.argv[1]
pad = "long-name-" * 8
for i in range(2000):
    for rel in ("assets/%s%04d.%08x.js" % (pad, i, 0x1000000 + i * 7919),
                "pages/p%02d/%s%04d.html" % (i % 40, pad, i)):
        p = os.path.join(top, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("%d\n" % i)
EOF
"$KILN" -q --server apache "$T/big" || fail "kiln on the big tree"
echo 'added after kiln ran' >"$T/big/unlisted.txt"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$T/big"
check "the big tree's runs are grouped" grep -q '^<If "%{REQUEST_URI} =~' "$T/big/kiln.apache.conf"
if start_apache "$T/a-big" "$T/big" vhost; then
	check "big list: the Cache-Control of a sample" timeout "$(left)" $PY - "http://127.0.0.1:$PORT/" "$T/big" <<'EOF'
import json, os, sys, urllib.parse, urllib.request
base, tree = sys.argv[1], sys.argv[2]
files = json.load(open(os.path.join(tree, "kiln-manifest.json")))["files"]
names = sorted(files)
sample = set(names[::23] + names[:3] + names[-3:]) | {"unlisted.txt"}
bad = 0
for n in sorted(sample):
    want = ("public, max-age=31536000, immutable" if n in files and files[n].get("immutable")
            else "no-cache")
    req = urllib.request.Request(base + urllib.parse.quote(n), method="HEAD")
    with urllib.request.urlopen(req) as r:
        got = r.headers.get_all("Cache-Control")
    if (got or [None]) != [want]:
        print("FAIL: %s: Cache-Control %r, want %r" % (n, got, want), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
EOF
else
	fail "apache (big list) did not start"
fi

check "within the time budget ($((SECONDS - start)) s of $BUDGET)" [ $((SECONDS - start)) -le "$BUDGET" ]
finish
