#!/usr/bin/env bash
# commands.sh - the documentation's shell commands, run as they stand
# (commands.py takes them out of the pages by ID; commands.py check, a test
# of its own, fails for a block that no test runs).  Each runs with bash
# -e in a scratch directory with `kiln` on PATH (KILN), on the bundled
# example site, and what it wrote is checked: siblings that decode, a
# manifest kiln check accepts.  The Quick start's first line, the static
# build's and the cmake --install line build kiln for real in a copy of
# the source (the copy's build directories, not the caller's, without the
# test programs); apt-get is a stand-in there (the test neither is root
# nor may change the machine; apt-get with a private configuration, which
# changes nothing, is passed through) that fails unless every package it is asked
# for is installed, and the packages asked for must hold every library the
# build then linked (but the C library and libgcc, which build-essential
# brings).  docs/dictionary-deltas.md's line must make a delta that
# decodes.  Absolute
# example paths (/srv/site, /shared, /site, /opt/kiln) are put under the
# scratch directory; `npx kiln` runs the same kiln (the npm launcher has
# tests of its own: tests/package/); the CI recipes of docs/shards.md run
# their jobs here, one directory per runner or pod, artifacts copied as
# the recipe's paths say, and their merge must be what one run writes.
. "$(dirname "$0")/../e2e/lib.sh"
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
CMD="/usr/bin/python3 $SRC/tests/docs/commands.py $SRC"
PY=/usr/bin/python3

B=$T/bin
mkdir -p "$B"
ln -s "$KILN" "$B/kiln"
cat >"$B/apt-get" <<EOF
#!/bin/sh
# apt-get update: nothing to do; apt-get install -y PKG...: each installed.
# With a private apt configuration (packaging/libmicrohttpd/build.sh's
# -o Dir::... options: its own lists, cache and deb-src entries) apt
# changes nothing on the machine: the real apt-get does it.
case "\$*" in *Dir::State::Lists=*) exec /usr/bin/apt-get "\$@" ;; esac
[ "\$1" = update ] && exit 0
[ "\$1" = install ] || { echo "apt-get stand-in: \$*" >&2; exit 1; }
shift
for p in "\$@"; do
	case \$p in -*) continue ;; esac
	echo "\$p" >>"$T/apt.asked"
	dpkg-query -W -f '\${Status}\n' "\$p" 2>/dev/null | grep -q 'install ok installed' ||
		{ echo "apt-get stand-in: \$p is not installed" >&2; exit 1; }
done
EOF
# npx kiln: the same kiln.  npm ci / npm run build: the project's build,
# a copy of the example site into dist/.
printf '#!/bin/sh\n[ "$1" = kiln ] || exit 1\nshift\nexec kiln "$@"\n' >"$B/npx"
printf '#!/bin/sh\ncase "$*" in\n"ci") exit 0 ;;\n"run build") rm -rf dist && cp -R %s dist ;;\n*) exit 1 ;;\nesac\n' "$FIXTURES/site" >"$B/npm"
chmod 755 "$B"/*

# run ID DIR [ENV=VALUE...]: each command of block ID, in DIR.
run() {
	local id=$1 dir=$2 c
	shift 2
	mkdir -p "$dir"
	# an ID the pages no longer have, or a block with nothing to run, fails
	$CMD commands "$id" >"$T/block" && [ -s "$T/block" ] || return 1
	while IFS= read -r -d '' c; do
		c=$(sed -E "s#(^|[ =:\"'])/(srv/site|shared|site|opt/kiln)([/ \"']|\$)#\\1$T/\\2\\3#g" <<<"$c")
		echo "+ $c" >>"$T/commands.log"
		(cd "$dir" && env PATH="$B:$PATH" "$@" bash -e -o pipefail -c "$c") >>"$T/commands.log" 2>&1 ||
			{ echo "commands.sh: $id: failed: $c" >&2; tail -n 20 "$T/commands.log" >&2; return 1; }
	done <"$T/block"
}
recipe() { # recipe ID WORK: shard_recipes.py runs CI recipe ID in WORK
	$PY "$SRC/tests/docs/shard_recipes.py" "$SRC" "$1" "$2" "$B" >>"$T/commands.log" 2>&1 ||
		{ tail -n 20 "$T/commands.log" >&2; return 1; }
}
site() { rm -rf "$1" && mkdir -p "$(dirname "$1")" && cp -R "$FIXTURES/site" "$1"; }
ok_tree() { # ok_tree DIR: siblings written, all decode, kiln check passes
	[ -n "$(find "$1" -name '*.gz' ! -name archive.tar.gz | head -n 1)" ] && all_siblings_decode "$1" && "$KILN" check -q "$1"
}
sibling_sums() { (cd "$1" && find . -type f \( -name '*.gz' -o -name '*.br' -o -name '*.zst' \) ! -name archive.tar.gz -print0 | sort -z | xargs -0 sha256sum); }

# ---- README: a first run; docs/reruns.md's CI gate
P=$T/project
site "$P/dist"
check "README a first run: kiln --brotli dist" run 'README.md#a-first-run' "$P"
check "... siblings that decode, kiln check passes" ok_tree "$P/dist"
check "... .br siblings" [ -f "$P/dist/index.html.br" ]
# The line the README shows for it (the block after the command's) is the
# one kiln printed for the example site, but the time.
shown=$(awk '/^## A first run/ { p = 1 } p && /^```/ { if (++n == 3) { getline; print; exit } }' "$SRC/README.md")
printed=$(grep '^kiln: ' "$T/commands.log" | tail -n 1)
same_summary() { [ -n "$shown" ] && [ "${shown%; * s}" = "${printed%; * s}" ]; }
check "... and prints the summary the README shows ($shown)" same_summary
check "docs/reruns.md: the CI gate's kiln check" run 'docs/reruns.md#kiln-check-as-a-ci-gate' "$P"

# ---- docs/archives.md, docs/dictionary-deltas.md, docs/serving.md
A=$T/archive
mkdir -p "$A"
tar -C "$FIXTURES/site" -czf "$A/dist.tar.gz" .
check "docs/archives.md: kiln --brotli dist.tar.gz -o deploy.tar.gz" run 'docs/archives.md#deploy-archives' "$A"
mkdir -p "$A/x" && tar -C "$A/x" -xzf "$A/deploy.tar.gz" 2>/dev/null
check "... the archive holds the site with siblings that decode" decodes_to "$A/x/index.html.br" "$FIXTURES/site/index.html"

# Two releases as a bundler writes them: assets/app-HASH.js, the same
# words in both, a new hash for the next one.
release() { # release DIR N
	mkdir -p "$1/assets"
	$PY - "$1" "$2" <<'PY'
import hashlib, os, random, sys
r = random.Random(7)
body = "".join("export function f%d(a) { return a * %d + %r; }\n" % (i, r.randrange(999), r.choice("xyz"))
               for i in range(300)) + "// release %s\n" % sys.argv[2]
h = hashlib.sha256(body.encode()).hexdigest()[:8]
open(os.path.join(sys.argv[1], "assets", "app-%s.js" % h), "w").write(body)
open(os.path.join(sys.argv[1], "index.html"), "w").write('<script type="module" src="/assets/app-%s.js"></script>\n' % h)
PY
}
release "$T/srv/site/current" 1
"$KILN" -q --brotli "$T/srv/site/current"
release "$T/deltas/dist" 2
check "docs/dictionary-deltas.md: kiln --brotli --previous /srv/site/current dist" \
	run 'docs/dictionary-deltas.md#dictionary-deltas' "$T/deltas"
check "... a dictionary delta of the script" [ -n "$(find "$T/deltas/dist/assets" -name 'app-*.js.*.dcz')" ]
check "... which decodes, with the previous release's script, to the new one (audit.py)" \
	$PY "$SRC/tests/e2e/audit.py" --previous "$T/srv/site/current" "$T/deltas/dist"
check "... siblings that decode, kiln check passes" ok_tree "$T/deltas/dist"

site "$T/art/dist"
check "docs/serving.md: --artifacts build/kiln, compress and check" run 'docs/serving.md#nginx' "$T/art"
check "... the manifest and both snippets in build/kiln" \
	test -f "$T/art/build/kiln/kiln-manifest.json" -a -f "$T/art/build/kiln/kiln.nginx.conf" -a -f "$T/art/build/kiln/kiln.caddy.conf"
check "... none in dist/" [ -z "$(find "$T/art/dist" -name 'kiln*' | head -n 1)" ]
check "... siblings that decode" all_siblings_decode "$T/art/dist"

# ---- docs/shards.md: GNU parallel, the CI matrices, the Indexed Job; each
# merge must write what one run of kiln --best writes.
site "$T/one/dist"
"$KILN" -q --best "$T/one/dist"
sibling_sums "$T/one/dist" >"$T/one.sums"
site "$T/shared/dist"
check "docs/shards.md: parallel -j4 shards, then kiln merge" run 'docs/shards.md#shards-with-gnu-parallel' "$T/shared"
check "... siblings that decode, kiln check passes" ok_tree "$T/shared/dist"
check "... the siblings one run writes" cmp -s "$T/one.sums" <(sibling_sums "$T/shared/dist")
check "docs/shards.md: the GitHub Actions matrix, four runners and a merge" \
	recipe 'docs/shards.md#shards-on-a-github-actions-matrix' "$T/gh"
check "... siblings that decode, kiln check passes" ok_tree "$T/gh/merge/dist"
check "... the siblings one run writes" cmp -s "$T/one.sums" <(sibling_sums "$T/gh/merge/dist")
check "docs/shards.md: GitLab parallel: 4, then merge" \
	recipe 'docs/shards.md#shards-with-gitlab-parallel' "$T/gl"
check "... siblings that decode, kiln check passes" ok_tree "$T/gl/merge/dist"
check "... the siblings one run writes" cmp -s "$T/one.sums" <(sibling_sums "$T/gl/merge/dist")
site "$T/site/dist"
mkdir -p "$T/opt/kiln" && ln -s "$KILN" "$T/opt/kiln/kiln"
for i in 0 1 2 3 4 5 6 7; do
	check "docs/shards.md: the Indexed Job's pod $i" run 'docs/shards.md#shards-in-a-kubernetes-indexed-job' "$T/site" JOB_COMPLETION_INDEX=$i
done
check "... then kiln merge /site/dist, as the page says" "$KILN" -q merge "$T/site/dist"
check "... siblings that decode, kiln check passes" ok_tree "$T/site/dist"
check "... the siblings one run writes" cmp -s "$T/one.sums" <(sibling_sums "$T/site/dist")

# ---- Building from source, in a copy of the source tree.
S=$T/src
mkdir -p "$S"
if [ -d "$SRC/.git" ] || [ -f "$SRC/.git" ]; then
	git -C "$SRC" ls-files -z | (cd "$SRC" && tar --null -T - -cf -) | tar -C "$S" -xf -
else
	(cd "$SRC" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -C "$S" -xf -
fi
# The builds leave out the test programs (CI's own builds compile them,
# with warnings as errors): the build directories the commands name start
# with that one setting in their CMake cache, which `cmake -S . -B DIR`
# keeps.  Each build then takes seconds.
for d in build build-static; do
	mkdir -p "$S/$d" && echo 'KILN_BUILD_TESTS:BOOL=OFF' >"$S/$d/CMakeCache.txt"
done
# apt_covers BUILD_DIR STATIC: every library the build linked comes from a
# package the command's apt-get asked for (or from build-essential).
essential=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
	--no-enhances build-essential 2>/dev/null | grep -v '^ ' | sort -u)
apt_covers() {
	local dir=$1 static=$2 pkg bad=0
	{
		if [ "$static" = 1 ]; then
			while read -r lib; do dpkg-query -S "$lib" 2>/dev/null | head -n 1; done <"$dir/static-libs.txt"
		else
			readelf -d "$dir/kiln" | sed -n 's/.*Shared library: \[\(lib[^.]*\)\.so.*/\1/p' |
				while read -r lib; do dpkg-query -S "*/$lib.so" 2>/dev/null | grep -v aarch64 | head -n 1; done
		fi
	} | cut -d: -f1 | sort -u >"$T/linked.pkgs"
	[ -s "$T/linked.pkgs" ] || return 1
	while read -r pkg; do
		grep -qxF "$pkg" "$T/apt.asked" || grep -qxF "$pkg" <<<"$essential" ||
			{ echo "commands.sh: $dir links from $pkg, which the command does not install" >&2; bad=1; }
	done <"$T/linked.pkgs"
	return $bad
}
: >"$T/apt.asked"
check "README Quick start: install, build, kiln on build/example" run 'README.md#quick-start:1' "$S"
check "... build/example has siblings that decode, kiln check passes" ok_tree "$S/build/example"
check "... its apt-get installs every library the build linked" apt_covers "$S/build" 0
check "docs/install.md: cmake --install into a DESTDIR" run 'docs/install.md#with-cmake---install' "$S"
check "... the binary, the man page and the completions in pkgroot/usr" \
	test -x "$S/pkgroot/usr/bin/kiln" -a -n "$(find "$S/pkgroot/usr/share/man" -name 'kiln.1*' 2>/dev/null)"
check "... the installed kiln runs" sh -c "'$S/pkgroot/usr/bin/kiln' --version >/dev/null"
: >"$T/apt.asked"
check "README Install: the static binary" run 'README.md#install' "$S"
check "... ./kiln is static and runs" sh -c "file -b '$S/kiln' | grep -q 'statically linked' && '$S/kiln' --version >/dev/null"
check "... its apt-get installs every library the static build linked" apt_covers "$S/build-static" 1

finish
