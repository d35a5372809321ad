#!/usr/bin/env bash
# corpus.sh - the "full" corpus of real web assets, from pinned npm packages.
#
# usage: tests/corpus.sh DEST [full|small]
#
# DEST (which must not exist) gets seven front-end packages as a site
# deploys them: the dist folders of Bootstrap, KaTeX, Leaflet and jQuery,
# the whole Font Awesome and pdf.js packages and three.js's build (about
# 6,500 files, 85 MB: scripts, style sheets, fonts, images, maps, source
# text).  "small": the four dist folders alone (143 files, 16 MB), for the
# suites that run a slower kiln (tests/package/wasm_corpus.sh).  Each
# package is fetched once with `npm pack` (no install, no script run) into
# KILN_CORPUS_CACHE (default: ~/.cache/kiln-npm-corpus),
# and its tarball must have the SHA-512 pinned below, so that every machine
# builds the same bytes.  npm is the only tool needed beyond tar.
set -euo pipefail

dest=${1:?usage: corpus.sh DEST [full|small]}
size=${2:-full}
cache=${KILN_CORPUS_CACHE:-$HOME/.cache/kiln-npm-corpus}

# package  version  integrity (npm's dist.integrity)  folder taken  name in DEST
pins=(
	"bootstrap 5.3.9 sha512-20cU0rcfw8WdxtVbmfU+xT2EjvVTw9Ror/h1Qvd7DXCujRg8OO9mdBCsmTHdJFf3BuadmBNJtgIuUXsBqSkk/w== dist bootstrap"
	"katex 0.16.22 sha512-XCHRdUw4lf3SKBaJe4EvgqIuWwkPSo9XoeO8GjQW94Bp7TWv9hNhzZjZ+OH9yf1UmLygb7DIT5GSFQiyt16zYg== dist katex"
	"leaflet 1.9.4 sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA== dist leaflet"
	"jquery 3.7.1 sha512-m4avr8yL8kmFN8psrbFFFmB/If14iN5o9nw/NgnnM+kybDJpRsAynV2BsfpTYrTRysYUdADVD7CkUUizgkpLfg== dist jquery"
	"@fortawesome/fontawesome-free 7.3.1 sha512-wmglKKPDIkgV3aWlZzWECCPoGIkYCulzBwxG9+w7rc5BGapZ6cPMpoPOT8k36J0Ni7PPX6c/rsoMWfS4d1MUMg== . fontawesome"
	"three 0.187.0 sha512-Qiu7R+Cmh8CstZsY1uJOSWnVlfo7ZtNLV7mF8Jltk3LB3AtDu9cRZlcnRKkAk8Y4z6KKw35z7Y7Urd7jWY8etA== build three"
	"pdfjs-dist 5.6.205 sha512-tlUj+2IDa7G1SbvBNN74UHRLJybZDWYom+k6p5KIZl7huBvsA4APi6mKL+zCxd3tLjN5hOOEE9Tv7VdzO88pfg== . pdfjs"
)

die() { echo "corpus.sh: $*" >&2; exit 2; }
case $size in
full) ;;
small) pins=("${pins[@]:0:4}") ;;
*) die "unknown size '$size' (full or small)" ;;
esac
[ ! -e "$dest" ] || die "$dest exists"
command -v npm >/dev/null || die "npm is needed (Node.js 20 with npm)"
mkdir -p "$cache"

# The SRI string of FILE's SHA-512, as npm writes integrity.
sri512() { printf 'sha512-%s' "$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }

mkdir -p "$dest.part"
trap 'rm -rf "$dest.part"' EXIT
for pin in "${pins[@]}"; do
	read -r pkg version integrity folder name <<<"$pin"
	tarball=$cache/${pkg//\//-}-$version.tgz
	if [ ! -f "$tarball" ] || [ "$(sri512 "$tarball")" != "$integrity" ]; then
		tmp=$(mktemp -d "$cache/pack.XXXXXX")
		(cd "$tmp" && npm pack --silent --ignore-scripts "$pkg@$version" >/dev/null)
		mv "$tmp"/*.tgz "$tarball"
		rmdir "$tmp"
	fi
	[ "$(sri512 "$tarball")" = "$integrity" ] || die "$pkg@$version: not the pinned tarball"
	mkdir -p "$dest.part/$name.x"
	tar -xzf "$tarball" -C "$dest.part/$name.x" --no-same-owner
	if [ "$folder" = . ]; then
		mv "$dest.part/$name.x/package" "$dest.part/$name"
	else
		mv "$dest.part/$name.x/package/$folder" "$dest.part/$name"
	fi
	rm -rf "$dest.part/$name.x"
done
mv "$dest.part" "$dest"
trap - EXIT
echo "corpus.sh: $(find "$dest" -type f | wc -l) files, $(du -sm "$dest" | cut -f1) MB in $dest" >&2
