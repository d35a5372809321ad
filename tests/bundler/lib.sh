# lib.sh - what the bundler tests share (sourced after tests/e2e/lib.sh).
#
# BUNDLERS: the node_modules of install.sh.  app KIND SEED PAGES DIR writes
# an app (app.py) into DIR with node_modules linked; hashed_check LABEL
# DIST HASHED [REASON...] runs check.py as a check (every hashed output
# immutable, nothing else); tree_check LABEL DIST HASHED [REASON...] the
# same for a run without the bundler's account, misses counted (at most
# MISSES percent of one run: 100 by default) and added to $T/tally, which
# tally_check PERCENT sums and bounds.  Each test prints how long its
# builds and kiln runs took.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUNDLERS=${KILN_BUNDLERS:?KILN_BUNDLERS must name the bundlers install.sh installed}/node_modules
[ -d "$BUNDLERS" ] || { echo "${0##*/}: no bundlers in $BUNDLERS (run install.sh)" >&2; exit 1; }
command -v node >/dev/null || { echo "${0##*/}: node is missing" >&2; exit 1; }
STARTED=$SECONDS

app() { # app KIND SEED PAGES DIR
	python3 "$HERE/app.py" "$1" "$2" "$3" "$4" && ln -sfn "$BUNDLERS" "$4/node_modules"
}

hashed_check() { # hashed_check LABEL DIST HASHED [REASON...]
	check "$1: every hashed output immutable, nothing else" python3 "$HERE/check.py" "$@"
}

tree_check() { # tree_check LABEL DIST HASHED [REASON...]
	check "$1: nothing unhashed immutable, misses counted" \
		python3 "$HERE/check.py" --misses "${MISSES:-100}" --tally "$T/tally" "$@"
}

tally_check() { # tally_check LABEL PERCENT
	check "$1: at most $2% missed without the bundler's account" python3 "$HERE/tally.py" "$1" "$T/tally" "$2"
}

took() { echo "${0##*/}: $((SECONDS - STARTED)) s" >&2; }
