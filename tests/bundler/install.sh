#!/usr/bin/env bash
# install.sh [DIR] - the bundlers for tests/bundler/*.sh, once per build:
# the exact versions of package.json and package-lock.json (Vite 8, Rollup
# 4, webpack 5, esbuild, Parcel 2: each runs on Node.js 20), installed with
# `npm ci` into KILN_BUNDLERS, npm's cache in KILN_NPM_CACHE (both in the
# build directory, so CI fetches them from the registry once and every
# later run reads the cache).  No install script runs: every native part
# the bundlers need comes as a prebuilt npm package.  DIR names another
# package.json and package-lock.json to install the same way
# (tests/package/plugins.sh: the bundlers the plugins are built with).
set -eu
here=$(cd "${1:-$(dirname "$0")}" && pwd)
dest=${KILN_BUNDLERS:?KILN_BUNDLERS must name where the bundlers go}
cache=${KILN_NPM_CACHE:?KILN_NPM_CACHE must name the npm cache directory}
command -v npm >/dev/null || { echo "install.sh: npm is missing (Node.js 20 with npm)" >&2; exit 1; }
mkdir -p "$dest" "$cache"
if [ -d "$dest/node_modules" ] && cmp -s "$here/package-lock.json" "$dest/package-lock.json"; then
	echo "install.sh: the bundlers are installed" >&2
	exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dest/"
start=$SECONDS
(cd "$dest" && timeout 600 npm ci --cache "$cache" --prefer-offline --ignore-scripts --no-audit --no-fund \
	--loglevel=error) >&2
echo "install.sh: npm ci took $((SECONDS - start)) s" >&2
