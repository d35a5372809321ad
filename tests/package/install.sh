#!/usr/bin/env bash
# install.sh - `cmake --install`: the binary, the man page and the shell
# completions land where CMAKE_INSTALL_PREFIX, --prefix and DESTDIR say, the
# installed kiln runs, `man -l` renders the installed page, bash-completion
# finds the bash completion in the installed share/, zsh's compinit
# registers _kiln, and both complete what `kiln --help` lists.
. "$(dirname "$0")/../e2e/lib.sh"
BUILD=${KILN_BUILD:?KILN_BUILD must name the build tree}
SRC=${KILN_SOURCE:?KILN_SOURCE must name the source tree}
for need in man zsh; do
	command -v $need >/dev/null || { echo "install.sh: $need is missing (install man-db and zsh)" >&2; exit 1; }
done
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
[ -f "$BASH_COMPLETION" ] || { echo "install.sh: $BASH_COMPLETION is missing (install bash-completion)" >&2; exit 1; }

# The five installed files, relative to a prefix (sorted).
installed="bin/kiln share/bash-completion/completions/kiln share/doc/kiln/LICENSE share/man/man1/kiln.1 share/zsh/site-functions/_kiln"
# listing DIR: every file under DIR, relative, sorted, one line.
listing() { (cd "$1" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//'); }

# --prefix at install time.
cmake --install "$BUILD" --prefix "$T/p" >"$T/install.log" 2>&1
check "cmake --install --prefix succeeds" [ $? -eq 0 ]
check "--prefix: exactly the five files, under the prefix" [ "$(listing "$T/p")" = "$installed" ]
# CMAKE_INSTALL_PREFIX, as the install script reads it.
cmake -DCMAKE_INSTALL_PREFIX="$T/q" -P "$BUILD/cmake_install.cmake" >"$T/install2.log" 2>&1
check "CMAKE_INSTALL_PREFIX: exactly the five files, under it" [ "$(listing "$T/q")" = "$installed" ]
# DESTDIR in front of the prefix, nothing outside it.
DESTDIR="$T/dest" cmake --install "$BUILD" --prefix /opt/kiln-install-test >"$T/install3.log" 2>&1
check "DESTDIR: exactly the five files, under DESTDIR/prefix" [ "$(listing "$T/dest")" = "$(echo "$installed" | sed 's|\([^ ]*\)|opt/kiln-install-test/\1|g')" ]
check "DESTDIR: nothing installed into the real prefix" [ ! -e /opt/kiln-install-test ]

P=$T/p
check "the installed kiln is executable" [ -x "$P/bin/kiln" ]
version=$(sed -n 's/^#define KILN_VERSION_STRING "\(.*\)"/\1/p' "$SRC/lib/kiln.h")
check "the installed kiln reports the source's version ($version)" [ "$("$P/bin/kiln" --version | head -n 1)" = "kiln $version" ]
fresh_site "$T/site"
"$P/bin/kiln" -q --brotli "$T/site"
check "the installed kiln compresses the example site" [ $? -eq 0 ]
check "its .gz decodes to the source" decodes_to "$T/site/index.html.gz" "$T/site/index.html"
check "its .br decodes to the source" decodes_to "$T/site/index.html.br" "$T/site/index.html"
check "the installed man page is the source's" cmp -s "$P/share/man/man1/kiln.1" "$SRC/man/kiln.1"
check "the installed LICENSE is the source's" cmp -s "$P/share/doc/kiln/LICENSE" "$SRC/LICENSE"
MANWIDTH=80 man -l "$P/share/man/man1/kiln.1" >"$T/man.txt" 2>"$T/man.err"
check "man -l renders the installed page" [ $? -eq 0 ]
nd=$(sed -n 's/^\.Nd //p' "$SRC/man/kiln.1")
check "the rendered page has the NAME line ($nd)" grep -qF -- "$nd" "$T/man.txt"
check "the rendered page has the OPTIONS section" grep -q '^OPTIONS' "$T/man.txt"
check "man -l warns about nothing" [ ! -s "$T/man.err" ]

# What --help lists, read here independently of the completions: every
# long option it names, the short ones, and the value list of an option
# whose description starts with one ("tar, tar.gz, ... or zip").
"$KILN" --help >"$T/help"
grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u >"$T/long"
grep -oE -- '^ +-[A-Za-z0-9],' "$T/help" | tr -d ' ,' | sort -u >"$T/short"
help_values() { # help_values OPTION: its value list, sorted, one per line
	grep -E -- "^ +(-[A-Za-z0-9], )?$1 [A-Z]+ +" "$T/help" | sed -E 's/^ +(-[A-Za-z0-9], )?--[a-z-]+ [A-Z]+ +//' |
		grep -oE '^[a-z0-9.]+(, [a-z0-9.]+)* or [a-z0-9.]+' | sed 's/, / /g; s/ or / /' | tr ' ' '\n' | sort
}
check "--help lists long options" [ "$(wc -l <"$T/long")" -gt 20 ]
check "--help lists short options" grep -qx -- -j "$T/short"
help_values --format >"$T/formats"
check "--help lists the --format values" [ "$(tr '\n' ' ' <"$T/formats")" = "tar tar.gz tar.xz tar.zst zip " ]

# bash: bash-completion loads the installed file by itself from
# PREFIX/share/bash-completion/completions when PREFIX/share is one of the
# XDG_DATA_DIRS (by default /usr/local/share and /usr/share).
env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" XDG_DATA_DIRS="$P/share:/usr/share" bash --norc --noprofile -c \
	". $BASH_COMPLETION; __load_completion kiln; complete -p kiln" >"$T/complete" 2>&1
check "bash-completion loads the installed completion (complete -p kiln)" grep -qx 'complete -F _kiln kiln' "$T/complete"
env -i HOME="$T" PATH=/usr/bin:/bin bash --norc --noprofile -c \
	". '$P/share/bash-completion/completions/kiln'; complete -p kiln" >"$T/complete2" 2>&1
check "sourced alone, it registers too" grep -qx 'complete -F _kiln kiln' "$T/complete2"

# bcomp WORD...: what bash completes for the last WORD, sorted, one a line
# (run in $T/cwd, which holds a directory "site" and a file "cfile").
mkdir -p "$T/cwd/site" && : >"$T/cwd/cfile"
bcomp() {
	(cd "$T/cwd" && env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_kiln kiln "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' bcomp "$P/share/bash-completion/completions/kiln" "$@") | sed '/^$/d' | sort
}
check "bash: kiln --<TAB> is every long option of --help" [ "$(bcomp kiln --)" = "$(cat "$T/long")" ]
bcomp kiln - >"$T/dash"
check "bash: kiln -<TAB> has every short option" [ -z "$(comm -23 "$T/short" "$T/dash")" ]
# the subcommands this kiln has (serve only where built with it), by hand
# from its usage lines
subs="check clean compress merge"
"$P/bin/kiln" --help | grep -qE '^ +kiln serve ' && subs="$subs serve"
check "bash: kiln <TAB> is the subcommands and the files here" [ "$(bcomp kiln '' | tr '\n' ' ')" = "$(printf '%s\n' $subs cfile site | sort | tr '\n' ' ')" ]
check "bash: no subcommand after the first word" [ "$(bcomp kiln check c | tr '\n' ' ')" = "cfile " ]
check "bash: kiln check --no-m<TAB> completes options" [ "$(bcomp kiln check --no-m)" = "--no-manifest" ]
check "bash: --format <TAB> is --help's format list" [ "$(bcomp kiln --format '')" = "$(cat "$T/formats")" ]
check "bash: --format=tar.<TAB>" [ "$(bcomp kiln --format=tar. | tr '\n' ' ')" = "tar.gz tar.xz tar.zst " ]
check "bash: --jobs <TAB> offers nothing" [ -z "$(bcomp kiln --jobs '')" ]
check "bash: -j <TAB> offers nothing" [ -z "$(bcomp kiln -j '')" ]
check "bash: --cache <TAB> offers directories" [ "$(bcomp kiln --cache '')" = "site" ]
check "bash: -o <TAB> offers files" [ "$(bcomp kiln -o '' | tr '\n' ' ')" = "cfile site " ]
# Every value list --help gives is the completion's, and kiln takes each
# value.  --server (nginx, caddy or apache) is checked once kiln has it.
for opt in $(cat "$T/long"); do
	help_values "$opt" >"$T/values"
	[ -s "$T/values" ] || continue
	check "bash: $opt <TAB> is the list --help gives" [ "$(bcomp kiln "$opt" '')" = "$(cat "$T/values")" ]
done
if grep -qx -- --server "$T/long"; then
	check "bash: --server <TAB> is nginx, caddy and apache" [ "$(bcomp kiln --server '' | tr '\n' ' ')" = "apache caddy nginx " ]
fi
for f in $(cat "$T/formats"); do
	"$KILN" -q --format "$f" -o "$T/out.$f" "$T/site" 2>"$T/format.err"
	check "kiln takes the completed --format $f" [ $? -eq 0 ]
done

# zsh: compinit registers _kiln for kiln from the installed directory.
zsh -f -c "fpath=('$P/share/zsh/site-functions' \$fpath); autoload -Uz compinit; compinit -u -d '$T/zcompdump'; print -r -- \${_comps[kiln]}" >"$T/zcomps" 2>&1
check "zsh: compinit registers _kiln" grep -qx _kiln "$T/zcomps"
# The specs _kiln hands to _arguments (the completion system's functions
# replaced by ones that print what they are given).
zsh -f -c "
	_call_program() { shift; eval \"\$@\" }
	_arguments() { print -rl -- \"\$@\" }
	_alternative() { print -rl -- \"\$@\" }
	words=('$KILN' --) CURRENT=2 PREFIX=--
	source '$P/share/zsh/site-functions/_kiln'
	words=('$KILN' '') CURRENT=2 PREFIX=
	source '$P/share/zsh/site-functions/_kiln'" >"$T/zspecs" 2>&1
check "zsh: _kiln runs" [ $? -eq 0 ]
grep -oE -- '^(\*|\([^)]*\))?--[a-z][a-z0-9-]*' "$T/zspecs" | sed -E 's/^(\*|\([^)]*\))//' | sort -u >"$T/zlong"
check "zsh: a spec for every long option of --help" [ "$(cat "$T/zlong")" = "$(cat "$T/long")" ]
grep -oE -- '^(\*|\([^)]*\))?-[A-Za-z0-9]\[' "$T/zspecs" | sed -E 's/^(\*|\([^)]*\))//; s/\[$//' | sort -u >"$T/zshort"
check "zsh: a spec for every short option of --help" [ "$(cat "$T/zshort")" = "$(cat "$T/short")" ]
sed -n -E 's/^--format\[.*\]:F:\((.*)\)$/\1/p' "$T/zspecs" | tr ' ' '\n' | sort >"$T/zformats"
check "zsh: --format completes --help's formats" [ "$(cat "$T/zformats")" = "$(cat "$T/formats")" ]
check "zsh: --include is repeatable" grep -qE -- '^\*--include\[' "$T/zspecs"
check "zsh: --cache takes a directory" grep -qE -- '^--cache\[.*\]:DIR:_directories$' "$T/zspecs"
check "zsh: the first word may be a subcommand" grep -qx "commands:command:(compress check clean merge${subs#check clean compress merge})" "$T/zspecs"

finish
