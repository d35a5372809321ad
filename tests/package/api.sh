#!/usr/bin/env bash
# api.sh - kiln-precompress's JavaScript API, installed offline from the two
# tarballs npm-pack wrote: precompress() from ESM and from CommonJS writes
# siblings that gzip and brotli decode and resolves to the summary `kiln
# --json` prints for the same tree; options map to kiln's long options; an
# unknown option or a wrong type throws a TypeError before kiln runs; a
# failing run rejects with kiln's lines, its exit status and the summary's
# errors; with no binary for the platform (a faked process.platform),
# optional: true resolves to null after one warning.  The TypeScript
# declarations cover every long option of `kiln --help` and pass `tsc
# --noEmit` (TypeScript from api/package.json and api/package-lock.json,
# installed once into the build tree) on code that uses them, and fail it on
# a misspelled option or a wrong type (an array for a non-repeatable one).
# The package README's example runs as it stands.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/npm.sh"
unset KILN_BINARY
here=$(cd "$(dirname "$0")" && pwd)

A=$T/app
new_project "$A"
must "npm install of the tarballs succeeds offline" "$A.npm.log" npm_install_kiln "$A" --offline

# run.mjs / run.cjs DIR OPTIONS_JSON OUT: call precompress(DIR, OPTIONS)
# (with a log collecting kiln's stderr lines) and write what happened to
# OUT as JSON: { threw, resolved, summary, name, message, status, errors,
# lines }.  DIR may be json:JSON (an array, a number).
driver='
const [dir, opts, out] = process.argv.slice(2);
const lines = [];
const save = (r) => fs.writeFileSync(out, JSON.stringify({ ...r, lines }));
const failed = (e) => ({ name: e.name, message: e.message, status: e.status, errors: e.errors, isError: e instanceof Error });
const d = dir.startsWith("json:") ? JSON.parse(dir.slice(5)) : dir;
let p;
try {
  p = precompress(d, { log: (l) => lines.push(l), ...JSON.parse(opts) });
} catch (e) {
  save({ threw: true, ...failed(e) });
}
if (p) p.then((summary) => save({ resolved: true, summary }), (e) => save({ rejected: true, ...failed(e) }));
'
printf 'import { precompress } from "kiln-precompress";\nimport fs from "node:fs";\n%s' "$driver" >"$A/run.mjs"
printf 'const { precompress } = require("kiln-precompress");\nconst fs = require("fs");\n%s' "$driver" >"$A/run.cjs"
# js FILE EXPR [ARG]: EXPR about r, FILE's JSON (and a, ARG), is true.
js() { node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const a = process.argv[3]; process.exit(eval(process.argv[2]) ? 0 : 1)' "$1" "$2" "${3-}"; }
siblings() { find "$1" -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz | sort; }

# ESM, --brotli: the summary is the CLI's for the same tree (but the time)
# and describes the files on disk.
fresh_site "$T/esm"
fresh_site "$T/cli"
(cd "$A" && node run.mjs "$T/esm" '{"brotli": true}' "$T/esm.json")
check "ESM: precompress resolves" js "$T/esm.json" 'r.resolved'
"$KILN" --json --brotli -- "$T/cli" >"$T/cli.json" 2>/dev/null
same_summary() { # same_summary API.json CLI.json: equal but elapsed_seconds
	node -e 'const fs = require("fs");
const a = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).summary;
const b = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
delete a.elapsed_seconds; delete b.elapsed_seconds;
process.exit(JSON.stringify(a) === JSON.stringify(b) ? 0 : 1)' "$1" "$2"
}
check "ESM: the summary is kiln --json's" same_summary "$T/esm.json" "$T/cli.json"
n=$(siblings "$T/esm" | wc -l)
gz=$(siblings "$T/esm" | grep -c '\.gz$')
br=$(siblings "$T/esm" | grep -c '\.br$')
check "ESM: .gz siblings were written ($gz)" [ "$gz" -gt 0 ]
check "ESM: .br siblings were written ($br)" [ "$br" -gt 0 ]
check "ESM: summary.written is the number of siblings on disk ($n)" js "$T/esm.json" "r.summary.written === $n"
bytes() { siblings "$1" | grep "\\.$2\$" | tr '\n' '\0' | xargs -0 stat -c %s | awk '{ n += $1 } END { print n }'; }
check "ESM: summary.bytes.gzip.out is the size of the .gz files" js "$T/esm.json" "r.summary.bytes.gzip.out === $(bytes "$T/esm" gz)"
check "ESM: summary.bytes.br.out is the size of the .br files" js "$T/esm.json" "r.summary.bytes.br.out === $(bytes "$T/esm" br)"
check "ESM: no errors" js "$T/esm.json" 'r.summary.command === "compress" && r.summary.errors.length === 0'
check "ESM: kiln's summary line reached log()" js "$T/esm.json" 'r.lines.some((l) => /^kiln: [0-9]+ assets/.test(l))'
while read -r s; do
	check "ESM: ${s#"$T"/} decodes to its source" decodes_to "$s" "${s%.*}"
done < <(siblings "$T/esm")

# CommonJS, other options: gzip: false is --no-gzip, exclude an array,
# minSize a number.
fresh_site "$T/cjs"
(cd "$A" && node run.cjs "$T/cjs" '{"brotli": true, "gzip": false, "exclude": ["*.css", "*.svg"], "minSize": 1024}' "$T/cjs.json")
check "CJS: precompress resolves" js "$T/cjs.json" 'r.resolved && r.summary.errors.length === 0'
n=$(siblings "$T/cjs" | wc -l)
check "CJS: .br siblings were written ($n)" [ "$n" -gt 0 ]
check "CJS: summary.written is the number of siblings on disk" js "$T/cjs.json" "r.summary.written === $n"
check "CJS: gzip: false wrote no .gz" [ -z "$(siblings "$T/cjs" | grep '\.gz$')" ]
check "CJS: exclude kept *.css and *.svg uncompressed" [ -z "$(siblings "$T/cjs" | grep -E '\.(css|svg)\.br$')" ]
small=0
while read -r s; do
	check "CJS: ${s#"$T"/} decodes to its source" decodes_to "$s" "${s%.*}"
	[ "$(stat -c %s "${s%.*}")" -lt 1024 ] && small=$((small + 1))
done < <(siblings "$T/cjs")
check "CJS: minSize 1024: no sibling of a smaller file" [ "$small" -eq 0 ]
check "CJS: ... though the tree has such files with siblings at the default" \
	[ -n "$(siblings "$T/esm" | while read -r s; do [ "$(stat -c %s "${s%.*}")" -lt 1024 ] && echo "$s"; done)" ]

# How options become kiln's arguments, with a stand-in kiln that records
# them and prints a summary.
printf '#!/bin/sh\nfor a in "$@"; do printf "<%%s>" "$a"; done >"$0.args"\necho "{\\"errors\\": [], \\"written\\": 7}"\n' >"$T/record"
chmod 755 "$T/record"
(cd "$A" && KILN_BINARY=$T/record node run.cjs 'json:["d1", "-d2"]' \
	'{"brotli": true, "gzip": false, "noManifest": false, "previous": ["../a b", "../c"], "gzipLevel": 9, "cache": "-x", "exclude": "*.map", "zstd": true, "brotliQuality": "10", "dryRun": true}' "$T/rec.json")
check "options: the stand-in's summary is what precompress resolves to" js "$T/rec.json" 'r.resolved && r.summary.written === 7'
check "options: --json first, long options with their values attached, -- before the DIRs" \
	[ "$(cat "$T/record.args")" = '<--json><--brotli><--no-gzip><--previous=../a b><--previous=../c><--gzip-level=9><--cache=-x><--exclude=*.map><--zstd><--brotli-quality=10><--dry-run><--><d1><-d2>' ]

# Unknown options and wrong types: a TypeError, thrown at once, and neither
# kiln nor the stand-in ran.
for bad in '{"brotly": true}' '{"json": true}' '{"brotli": "yes"}' '{"gzipLevel": [9]}' '{"gzipLevel": true}' \
	'{"exclude": [1]}' '{"cache": 5}' '{"optional": 1}' '{"log": "x"}'; do
	fresh_site "$T/bad"
	rm -f "$T/record.args"
	(cd "$A" && node run.mjs "$T/bad" "$bad" "$T/bad.json")
	check "$bad: throws a TypeError synchronously" js "$T/bad.json" 'r.threw && r.isError && r.name === "TypeError"'
	check "$bad: ... naming the option" js "$T/bad.json" "r.message.includes('$(echo "$bad" | sed 's/^{"\([a-zA-Z]*\)".*/\1/')')"
	check "$bad: no sibling written" [ -z "$(siblings "$T/bad")" ]
	(cd "$A" && KILN_BINARY=$T/record node run.mjs "$T/bad" "$bad" "$T/bad.json")
	check "$bad: kiln was not run" [ ! -e "$T/record.args" ]
done
(cd "$A" && node run.cjs "$T/bad" '{"brotly": true}' "$T/bad.json")
check "a misspelled option (brotly): did you mean brotli?" js "$T/bad.json" 'r.threw && r.message.includes("did you mean brotli?")'
(cd "$A" && node run.cjs json:42 '{}' "$T/bad.json")
check "a DIR that is not a string: TypeError" js "$T/bad.json" 'r.threw && r.name === "TypeError"'

# Failing runs.
(cd "$A" && node run.mjs "$T/missing" '{"brotli": true}' "$T/fail.json")
"$KILN" --json -- "$T/missing" >/dev/null 2>"$T/missing.err"
line=$(grep "^kiln: $T/missing: " "$T/missing.err")
check "the CLI names the missing DIR ($line)" [ -n "$line" ]
check "a missing DIR: rejects with an Error" js "$T/fail.json" 'r.rejected && r.isError'
check "... status 1" js "$T/fail.json" 'r.status === 1'
check "... the summary's errors: the DIR" js "$T/fail.json" 'r.errors.length === 1 && r.errors[0].path === a && /cannot open directory/.test(r.errors[0].reason)' "$T/missing"
check "... the message has kiln's line" js "$T/fail.json" 'r.message.split("\n").includes(a)' "$line"
fresh_site "$T/dangling"
ln -s nowhere "$T/dangling/dangling.js"
(cd "$A" && node run.cjs "$T/dangling" '{"followSymlinks": true, "quiet": true}' "$T/fail.json")
check "a dangling link with followSymlinks: rejects with status 1" js "$T/fail.json" 'r.rejected && r.status === 1'
check "... errors names the link" js "$T/fail.json" "r.errors.length === 1 && r.errors[0].path === '$T/dangling/dangling.js'"
check "... and the message kiln's line about it" js "$T/fail.json" "r.message.includes('kiln: $T/dangling/dangling.js: dangling symbolic link')"
check "... the other files were compressed" decodes_to "$T/dangling/index.html.gz" "$T/dangling/index.html"
(cd "$A" && node run.cjs "$T/dangling" '{"gzipLevel": 13}' "$T/fail.json")
check "a usage error (gzipLevel 13): rejects with status 2" js "$T/fail.json" 'r.rejected && r.status === 2 && r.errors.length === 0'
line=$("$KILN" --gzip-level=13 -- "$T/dangling" 2>&1 >/dev/null | head -n 1)
check "... with kiln's message ($line)" js "$T/fail.json" 'r.message.split("\n").includes(a)' "$line"

# No native binary for the platform: a preload fakes process.platform.
# With the WebAssembly package installed, that kiln runs (npm_wasm.sh
# tests it further); without it, there is nothing to run.
printf 'Object.defineProperty(process, "platform", { value: "darwin" });\n' >"$T/darwin.cjs"
fresh_site "$T/mac"
if [ -d "$A/node_modules/$WASM_NAME" ]; then
	(cd "$A" && node -r "$T/darwin.cjs" run.mjs "$T/mac" '{"brotli": true, "optional": true}' "$T/mac.json")
	check "darwin, the WebAssembly package installed: resolves with kiln's summary" \
		js "$T/mac.json" 'r.resolved && r.summary && r.summary.errors.length === 0 && r.summary.written > 0'
	rm -rf "$A/node_modules/$WASM_NAME" "$T/mac"
	fresh_site "$T/mac"
fi
(cd "$A" && node -r "$T/darwin.cjs" run.mjs "$T/mac" '{"brotli": true, "optional": true}' "$T/mac.json")
check "optional: true on darwin: resolves to null" js "$T/mac.json" 'r.resolved && r.summary === null'
check "... after one warning" js "$T/mac.json" 'r.lines.length === 1 && /^kiln: warning: .*no native kiln for darwin-/.test(r.lines[0])'
check "... and wrote nothing" [ -z "$(siblings "$T/mac")" ]
(cd "$A" && node -r "$T/darwin.cjs" -e 'require("kiln-precompress").precompress(process.argv[1], { optional: true })' "$T/mac") 2>"$T/mac.err"
check "... the default log: one line on stderr" [ "$(grep -c . "$T/mac.err")" = 1 ]
check "... the warning" grep -q '^kiln: warning: ' "$T/mac.err"
(cd "$A" && node -r "$T/darwin.cjs" run.cjs "$T/mac" '{"brotli": true}' "$T/mac.json")
check "without optional: rejects with status 127 naming the platform" \
	js "$T/mac.json" 'r.rejected && r.status === 127 && /no native kiln for darwin-/.test(r.message)'
(cd "$A" && node -r "$T/darwin.cjs" node_modules/.bin/kiln --version) 2>"$T/mac.err"
check "the launcher, same platform: exit 127" [ $? -eq 127 ]
check "... the same message (lib/platform.js)" grep -q 'no native kiln for darwin-' "$T/mac.err"
new_project "$T/bare"
(cd "$T/bare" && PATH="$STUBS:$PATH" npm install --offline --omit=optional "$MAIN_TGZ" >"$T/bare.log" 2>&1)
cp "$A/run.cjs" "$T/bare/"
(cd "$T/bare" && node run.cjs "$T/mac" '{"optional": true}' "$T/bare.json")
check "optional: true, platform package not installed: rejects (a broken install, not a platform)" \
	js "$T/bare.json" 'r.rejected && r.status === 127 && r.message.includes("is not installed")'

# The package README's example, as it stands, on a copy of the example
# site in dist/ (no ../current yet: the first deploy's one warning).
DOC="/usr/bin/python3 $SRC/tests/docs/commands.py $SRC"
$DOC get 'packaging/npm/kiln-precompress/README.md#javascript-api' >"$A/readme-api.mjs"
fresh_site "$A/dist"
(cd "$A" && node readme-api.mjs) >"$T/readme-api.out" 2>"$T/readme-api.err"
check "the README's precompress() example runs" [ $? -eq 0 ]
check "... and prints the siblings written and no error" grep -qxE '[1-9][0-9]* \[\]' "$T/readme-api.out"
check "... which decode" all_siblings_decode "$A/dist"
check "... .br ones among them (brotli: true)" [ -f "$A/dist/index.html.br" ]
check "... the missing previous release one warning" \
	[ "$(grep -c 'warning: no previous release there' "$T/readme-api.err")" -eq 1 ]
rm -rf "$A/dist"

# TypeScript: the declarations against kiln --help.
deps=$BUILD/api-deps
KILN_BUNDLERS=$deps KILN_NPM_CACHE=$BUILD/npm-cache bash "$here/../bundler/install.sh" "$here/api" >"$T/tsc-install.log" 2>&1
must "TypeScript installs (npm ci)" "$T/tsc-install.log" [ -x "$deps/node_modules/.bin/tsc" ]
tsc() { (cd "$A" && "$deps/node_modules/.bin/tsc" -p "$1") >"$T/tsc.out" 2>&1; }
D=$A/node_modules/$MAIN_NAME/index.d.ts
# Every long option kiln --help lists (but --help, --version, --json):
# flag or ARG, in camelCase.
"$KILN" --help | grep -E '^(  -[a-zA-Z0-9], |      )--[a-z]' | sed -E 's/^ +(-., )?--([a-z0-9-]+)( ([A-Z][A-Z0-9/]*))?.*/\2 \4/' |
	grep -vE '^(help|version|json) ' >"$T/help.options"
check "kiln --help lists options ($(wc -l <"$T/help.options"))" [ "$(wc -l <"$T/help.options")" -ge 40 ]
check "... the per-coding ones too" grep -qE '^(brotli-quality|zstd-level) ' "$T/help.options"
{
	echo 'import { precompress } from "kiln-precompress";'
	echo 'await precompress("d", {'
	while read -r flag arg; do
		name=$(echo "$flag" | sed -E 's/-([a-z0-9])/\U\1/g')
		grep -q "^  $name?: " "$D" || echo "missing $name" >>"$T/missing-decls"
		case $arg in
		'') echo "  $name: true," ;;
		N | R) echo "  $name: 1," ;;
		*) echo "  $name: \"x\"," ;;
		esac
	done <"$T/help.options"
	echo '});'
} >"$A/every.mts"
check "index.d.ts declares every option of kiln --help" [ ! -s "$T/missing-decls" ]
cat >"$A/good.mts" <<'EOF'
import { precompress, type KilnSummary, type KilnError } from 'kiln-precompress';
const s: KilnSummary = await precompress('dist', { brotli: true, zstd: true, zstdLevel: 19, brotliQuality: '11', gzipLevel: 9,
  previous: ['../current'], exclude: '*.map', immutable: ['assets/**'], cache: 'node_modules/.cache/kiln', noManifest: false });
const written: number = s.written;
const maybe: KilnSummary | null = await precompress(['a', 'b'], { optional: true, log: (line: string) => console.log(line) });
if (maybe !== null) console.log(maybe.errors.map((e) => e.path), written);
precompress('dist').catch((e: KilnError) => console.log(e.status, e.errors.length));
EOF
cat >"$A/good.cts" <<'EOF'
import kiln = require('kiln-precompress');
kiln.precompress('dist', { brotli: true, minSize: '1K', fingerprints: ['dist/.vite/manifest.json'] }).then((s) => s.error_count);
EOF
printf 'import { precompress } from "kiln-precompress";\nawait precompress("dist", { brotly: true });\n' >"$A/misspelled.mts"
printf 'import kiln = require("kiln-precompress");\nkiln.precompress("dist", { noManifets: true });\n' >"$A/misspelled.cts"
printf 'import { precompress } from "kiln-precompress";\nawait precompress("dist", { gzipLevel: true });\n' >"$A/wrongtype.mts"
printf 'import { precompress } from "kiln-precompress";\nawait precompress("dist", { brotli: true, previous: [1] });\n' >"$A/wrongtype2.mts"
printf 'import { precompress } from "kiln-precompress";\nawait precompress("dist", { gzipLevel: [9] });\n' >"$A/wrongtype3.mts"
for f in good.mts good.cts every.mts misspelled.mts misspelled.cts wrongtype.mts wrongtype2.mts wrongtype3.mts; do
	printf '{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "strict": true, "noEmit": true, "types": [] }, "files": ["%s"] }\n' \
		"$f" >"$A/tsconfig.${f%.*}-${f##*.}.json"
done
for f in good-mts good-cts every-mts; do
	tsc "tsconfig.$f.json"
	check "tsc --noEmit passes on ${f/-/.}" [ $? -eq 0 ]
	[ -s "$T/tsc.out" ] && cat "$T/tsc.out" >&2
done
while read -r f why; do
	tsc "tsconfig.$f.json"
	check "tsc --noEmit fails on ${f/-/.}" [ $? -ne 0 ]
	check "... a type error" grep -q "error TS[0-9]*:" "$T/tsc.out"
	check "... saying $why" grep -qF "$why" "$T/tsc.out"
done <<'EOF'
misspelled-mts 'brotly' does not exist
misspelled-cts 'noManifets' does not exist
wrongtype-mts Type 'true' is not assignable
wrongtype2-mts Type 'number' is not assignable
wrongtype3-mts Type 'number[]' is not assignable
EOF
# every.mts at run time: each option becomes its kiln argument.
node -e '
const fs = require("fs");
const src = fs.readFileSync(process.argv[1], "utf8").replace(/^import .*$/m, "const { precompress } = require(\"kiln-precompress\");")
  .replace("await precompress", "precompress");
fs.writeFileSync(process.argv[2], src);' "$A/every.mts" "$A/every.cjs"
(cd "$A" && KILN_BINARY=$T/record node every.cjs) 2>"$T/every.err"
check "every option of kiln --help passes the run-time check" [ $? -eq 0 ]
check "... and kiln ran" [ -s "$T/record.args" ]
while read -r flag arg; do
	if [ -z "$arg" ]; then want="<--$flag>"; elif [ "$arg" = N ] || [ "$arg" = R ]; then want="<--$flag=1>"; else want="<--$flag=x>"; fi
	grep -qF -- "$want" "$T/record.args" || echo "$want" >>"$T/every.missing"
done <"$T/help.options"
check "... and reaches kiln as itself" [ ! -s "$T/every.missing" ]

finish
