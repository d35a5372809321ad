#!/usr/bin/env bash
# vite_dcz.sh - dictionary deltas for every changed hashed asset of two
# real Vite releases of one app, proven in Chromium through nginx.
# app.py's app, 150 pages, built by Vite 8 twice: seed 1 is release 1,
# seed 2 release 2 (every third page, its style sheet and every twelfth
# page's image change a little, and so does the entry that imports them).
# Vite's manifests (moved out of dist/ before deploying, as Vite's guide
# says) pair each changed output with its release-1 version.  kiln runs on
# each release with its manifest (--fingerprints, as the Vite plugin gives
# it: the bundler's account of its hashed outputs), on release 2 with
# --previous release 1; then every changed asset of 256
# bytes or more must have a delta named after its release-1 version,
# decoding (the zstd tool) with it to release 2's bytes; nginx serves
# release 1 to headless Chromium, which loads every page and image, then
# release 2: every changed asset must come as dcz against release 1's.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")/../e2e" && pwd)
PY=${KILN_PYTHON:-/usr/bin/python3} # with the brotli module (audit.py, browser.py)
for need in "$NGINX" /etc/nginx/mime.types /usr/bin/chromium /usr/bin/zstd; do
	[ -e "$need" ] || { echo "vite_dcz.sh: $need is missing (install nginx-light, chromium, zstd)" >&2; exit 1; }
done

for n in 1 2; do
	app vite "$n" 150 "$T/app$n"
	cat >"$T/app$n/vite.config.mjs" <<'JS'
export default { logLevel: 'warn', build: { manifest: true, assetsInlineLimit: 0 } };
JS
	must "vite builds release $n" "$T/build$n.log" \
		eval '(cd "$T/app$n" && timeout 300 node node_modules/vite/bin/vite.js build) >"$T/build$n.log" 2>&1'
	mv "$T/app$n/dist/.vite/manifest.json" "$T/manifest$n.json"
	rmdir "$T/app$n/dist/.vite"
	mv "$T/app$n/dist" "$T/r$n"
done
touch -d '+1 minute' "$T/r2/index.html" # a later deploy
check "kiln on release 1" "$KILN" -q --brotli --zstd --fingerprints "$T/manifest1.json" "$T/r1"
check "kiln on release 2 --previous release 1" "$KILN" -q --brotli --zstd --verify --previous "$T/r1" \
	--fingerprints "$T/manifest2.json" "$T/r2"

# The changed outputs: one logical output (a manifest entry's file, css or
# assets) with another name in release 2.  PATH1 PATH2 SHA256-OF-PATH1.
python3 - "$T/manifest1.json" "$T/manifest2.json" "$T/r1" "$T/r2" >"$T/changed" <<'PY'
import hashlib, json, os, sys
def outputs(path):
    out = {}
    for key, e in json.load(open(path)).items():
        out[(key, "file")] = e["file"]
        for kind in ("css", "assets"):
            for i, f in enumerate(e.get(kind, [])):
                out[(key, kind, i)] = f
    return out
m1, m2 = outputs(sys.argv[1]), outputs(sys.argv[2])
pairs = sorted({(m1[k], m2[k]) for k in m1.keys() & m2.keys() if m1[k] != m2[k]})
for a, b in pairs:
    if os.path.getsize(os.path.join(sys.argv[4], b)) >= 256:
        sha = hashlib.sha256(open(os.path.join(sys.argv[3], a), "rb").read()).hexdigest()
        print(a, b, sha)
PY
nchanged=$(wc -l <"$T/changed")
check "releases 1 and 2 differ in many hashed assets ($nchanged)" [ "$nchanged" -ge 80 ]
check "... scripts, style sheets and images" \
	sh -c "grep -q '\.js ' '$T/changed' && grep -q '\.css ' '$T/changed' && grep -q '\.svg ' '$T/changed'"
deltas_ok() {
	python3 - "$T/r2/kiln-manifest.json" "$T/changed" "$T/r1" "$T/r2" <<'PY'
import json, os, subprocess, sys
files = json.load(open(sys.argv[1]))["files"]
bad, why = [], {}
for line in open(sys.argv[2]):
    a, b, sha = line.split()
    e = files.get(b, {})
    why[e.get("immutable")] = why.get(e.get("immutable"), 0) + 1
    d = [x for x in e.get("dictionaries", []) if x["dictionary"] == a and x["dictionary_sha256"] == sha]
    if len(d) != 1:
        bad.append(f"{b}: no delta against {a}")
        continue
    delta = os.path.join(sys.argv[4], d[0]["path"])
    if not d[0]["path"].endswith("." + sha[:16] + ".dcz"):
        bad.append(f"{delta}: not named after its dictionary")
    body = open(delta, "rb").read()[40:]
    out = subprocess.run(["zstd", "-q", "-d", "-D", os.path.join(sys.argv[3], a)], input=body,
                         capture_output=True).stdout
    if out != open(os.path.join(sys.argv[4], b), "rb").read():
        bad.append(f"{delta}: does not decode to {b}")
print("\n".join(bad), file=sys.stderr)
print(f"vite_dcz: {sum(why.values())} changed assets, immutable by {why}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
check "every changed asset has its delta, which decodes with release 1's version" deltas_ok
check "every delta decodes with its dictionary to its source, and is recorded (audit.py)" \
	$PY "$E2E/audit.py" --previous "$T/r1" "$T/r2"

# nginx: release 1, then release 2, to Chromium.
chmod -R a+rX "$T"
# dcz_nginx FUNCTION DIR RELEASE [PORT]: nginx_conf or nginx_start for a
# release, Available-Dictionary in the log
dcz_nginx() { NGINX_LOG="$NGINX_KILN_LOG"' ad="$http_available_dictionary"' "$@"; }
trap nginx_stop EXIT
dcz_nginx nginx_start "$T/n" "$T/r1" || { fail "nginx starts"; finish; exit; }
U=http://127.0.0.1:$PORT
nginx_conf_aside "$T/n" nginx.r2.conf dcz_nginx nginx_conf "$T/n" "$T/r2" "$PORT"
main2=$(grep -o 'assets/index-[A-Za-z0-9_-]*\.js' "$T/r2/index.html" | head -n 1)
nginx_switch_script "$T/switch.sh" "$T/n" "$T/n/nginx.r2.conf" "$U/index.html" "$main2"
sed 's|\([^ ]*\) \([^ ]*\) |/\1 /\2 |' "$T/changed" >"$T/pairs"
check "Chromium: every changed asset of release 2 sent as dcz against release 1's, and run" \
	timeout 200 $PY "$E2E/browser_dcz.py" --url "$U/index.html" --log "$T/n/access.log" \
	--switch "sh $T/switch.sh" --pairs "$T/pairs" --timeout 150
NGINX_PID=$(cat "$T/n/nginx.pid" 2>/dev/null)
took
finish
