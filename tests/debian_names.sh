#!/usr/bin/env bash
# debian_names.sh - names of files that no bundler named with a hash, from
# Debian packages, for tests/data/unhashed-names.txt: the section "Debian
# 12 packages, by their tokens" was made with
#
#   tests/debian_names.sh tests/data/unhashed-names.txt >>tests/data/unhashed-names.txt
#
# on Debian 12 (bookworm).  Not run in CI: it downloads the packages (about
# 1.5 GB; apt-get download, into a scratch directory, nothing installed)
# and lists their files with dpkg-deb.  Printed: each package's paths
# (PACKAGE/PATH) whose base name holds a candidate token (a run of 6 or more
# [A-Za-z0-9_] after a '-' or '.') that no path of CORPUS (the file it is
# added to) or printed before holds, so that the file stays small: one
# name per new token.  Left out: Sphinx's inheritance diagrams, named by
# the SHA-1 of their source (real hashes).
#
# usage: tests/debian_names.sh CORPUS [PACKAGE...]   (default: the 43 below)
set -euo pipefail
corpus=${1:?usage: debian_names.sh CORPUS [PACKAGE...]}
shift
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(
	apache2-doc breeze-icon-theme cmake-doc elementary-icon-theme fonts-dejavu-core
	fonts-font-awesome fonts-inter fonts-noto-core fonts-noto-extra fonts-roboto-unhinted
	gdal-data gimp-help-en git-doc gnome-backgrounds golang-1.19-doc haskell98-report hugo
	libboost1.74-doc libjs-bootstrap5 libjs-jquery-ui libjs-leaflet libjs-mathjax
	libreoffice-help-en-us libstdc++-12-doc linux-doc mkdocs moka-icon-theme node-typescript
	nodejs-doc numix-icon-theme-circle openjdk-17-doc openscad oxygen-icon-theme
	papirus-icon-theme plasma-workspace-wallpapers postgresql-doc-15 proj-data
	python-django-doc python3.11-doc qt6-documentation-tools ruby3.1-doc rust-doc sphinx-doc
	tango-icon-theme
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "${packages[@]}") >&2
for deb in "$work"/*.deb; do
	pkg=$(dpkg-deb -f "$deb" Package)
	dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sed "s|^\./|$pkg/|"
done | sort | python3 -c '
import re, sys
token = re.compile(r"(?<=[-.])[A-Za-z0-9_]{6,}")
seen = set()
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        seen.update(token.findall(line.rstrip("\n").rsplit("/", 1)[-1]))
print("# Debian 12 packages, by their tokens (tests/debian_names.sh)")
for line in sys.stdin:
    path = line.rstrip("\n")
    base = path.rsplit("/", 1)[-1]
    tokens = token.findall(base)
    if not tokens or re.search(r"inheritance-[0-9a-f]{40}", base) or all(t in seen for t in tokens):
        continue
    seen.update(tokens)
    print(path)
' "$corpus"
