# kiln.bash - bash completion for kiln.
#
# The options, which of them take a value, and the subcommands are read from
# `kiln --help` of the kiln being completed, so this file lists none of them
# and never falls behind the program.  It knows only what --help leaves to
# prose: the values of options that take a word from a fixed set, and which
# metavariables name files or directories.  A value list for an option this
# kiln does not have is never used: the option is only offered once --help
# lists it.
#
# Installed as share/bash-completion/completions/kiln, where bash-completion
# loads it on first use; it also works sourced on its own.

# _kiln_help_options KILN: one line per option of KILN --help,
# "-s --long ARG" with "-" for a missing short name or argument.
_kiln_help_options()
{
	"$1" --help 2>/dev/null | sed -n -E \
		's/^ {2,6}(-([A-Za-z0-9]), )?(--[a-z][a-z0-9-]*)( ([A-Z]+))?( .*)?$/-\2 \3 -\5/p' |
		sed -E 's/ -([A-Z]+)$/ \1/'
}

# _kiln_help_commands KILN: the subcommands named in the usage lines.
_kiln_help_commands()
{
	"$1" --help 2>/dev/null | sed -n -E 's/^(usage:)? +kiln \[?([a-z]+)\]? .*/\2/p' | sort -u
}

# _kiln_values OPTION: the words OPTION takes, if they are a fixed set.
_kiln_values()
{
	case $1 in
	--format) echo 'tar tar.gz tar.zst tar.xz zip' ;;
	--server) echo 'nginx caddy apache' ;;
	*) return 1 ;;
	esac
}

_kiln()
{
	local cur prev kiln=${COMP_WORDS[0]} line short long arg i words=() takes=()
	kiln=${kiln/#\~/$HOME}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# --opt=value: complete the value
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	fi

	while read -r short long arg; do
		words+=("$long")
		[[ $short != - ]] && words+=("$short")
		if [[ $arg != - ]]; then
			takes+=("$long:$arg")
			[[ $short != - ]] && takes+=("$short:$arg")
		fi
	done < <(_kiln_help_options "$kiln")

	for i in "${takes[@]}"; do
		[[ ${i%%:*} == "$prev" ]] || continue
		if line=$(_kiln_values "$prev"); then
			mapfile -t COMPREPLY < <(compgen -W "$line" -- "$cur")
		else
			case ${i#*:} in
			DIR) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
			PATH | OUT) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
			esac # numbers, globs, ratios: nothing to offer
		fi
		return 0
	done

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		return 0
	fi

	# A subcommand comes first; every other operand is a directory or an
	# archive.
	((COMP_CWORD == 1)) && mapfile -t COMPREPLY < <(compgen -W "$(_kiln_help_commands "$kiln")" -- "$cur")
	mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
	compopt -o filenames 2>/dev/null
	return 0
}

complete -F _kiln kiln
