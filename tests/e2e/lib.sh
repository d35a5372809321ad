# lib.sh - shared helpers for kiln's end-to-end tests (sourced, bash).
#
# Every test gets KILN (the binary), FIXTURES (the fixtures directory) and a
# scratch directory $T removed on success.  Checks count failures and go on,
# so one run shows every broken behaviour; finish() sets the exit status.
set -u
KILN=${KILN:?KILN must name the kiln binary}
FIXTURES=${FIXTURES:?FIXTURES must name the fixtures directory}
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-e2e.XXXXXX")
chmod 755 "$T"
failures=0
checks=0

fail() { failures=$((failures + 1)); printf 'FAIL: %s\n' "$*" >&2; }
not() { ! "$@"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1; shift
	checks=$((checks + 1))
	"$@" || fail "$what"
}
finish() {
	printf '%s: %d checks, %d failed\n' "${0##*/}" "$checks" "$failures" >&2
	if [ "$failures" -eq 0 ]; then rm -rf "$T"; else echo "kept $T" >&2; fi
	[ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
}

# A fresh copy of the example site.
fresh_site() { # fresh_site DEST
	cp -a "$FIXTURES/site" "$1"
}

# decodes_to SIBLING SOURCE: the sibling decodes (GNU gzip or the brotli
# tool, not kiln's own decoders) to exactly the source's bytes.
decodes_to() {
	case $1 in
	*.gz) gzip -dc -- "$1" | cmp -s - "$2" ;;
	*.br) brotli -dc -- "$1" | cmp -s - "$2" ;;
	*) return 1 ;;
	esac
}

# Every source file (not a .gz/.br) with its sha256, sorted: a fingerprint of
# the sources to compare before and after a run.
sources_digest() { # sources_digest DIR
	(cd "$1" && find . -type f ! -name '*.gz' ! -name '*.br' ! -name kiln-manifest.json ! -name 'kiln.*.conf' ! -name '.kiln-journal-*' ! -name '.kiln-*.tmp' -print0 | sort -z |
		xargs -0 sha256sum)
	# downloads/archive.tar.gz is a source too
	(cd "$1" && find . -type f -name 'archive.tar.gz' -print0 | sort -z | xargs -0 -r sha256sum)
}

# Every file under DIR with its sha256, sorted.
tree_digest() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# all_siblings_decode DIR [--skip-orphans]: every .gz/.br under DIR (but a
# download named archive.tar.gz) decodes, with audit.py's decoders (Python's
# zlib and brotli, in one process: some suites check hundreds of runs), to
# exactly its source's bytes.  A sibling without a source fails, unless
# --skip-orphans.
all_siblings_decode() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "${BASH_SOURCE[0]}")" /usr/bin/python3 - "$@" <<'EOF'
import os, sys
import audit
skip_orphans = "--skip-orphans" in sys.argv[2:]
bad = 0
for top, _, names in os.walk(sys.argv[1]):
    for n in names:
        p = os.path.join(top, n)
        if not n.endswith((".gz", ".br")) or n == "archive.tar.gz":
            continue
        if skip_orphans and not os.path.exists(p[:-3]):
            continue
        try:
            ok = audit.decode("gzip" if n.endswith(".gz") else "br", audit.read(p)) == audit.read(p[:-3])
        except Exception:
            ok = False
        if not ok:
            print(f"bad sibling: {p}", file=sys.stderr)
            bad = 1
sys.exit(bad)
EOF
}
