#!/usr/bin/env bash
# readme_ci.sh - .ci/run runs the README's test command line exactly: the
# last line of .ci/run must be the second command of the Quick start.
set -u
top=${1:?usage: readme_ci.sh TOP}
ci_line=$(tail -n 1 "$top/.ci/run")
readme_line=$(/usr/bin/python3 "$top/tests/docs/commands.py" "$top" get 'README.md#quick-start:2')
if [ -z "$readme_line" ]; then
	echo "FAIL: no second command in the README's Quick start" >&2
	exit 1
fi
if [ "$ci_line" != "$readme_line" ]; then
	printf 'FAIL: .ci/run and the README differ:\n  .ci/run: %s\n  README:  %s\n' "$ci_line" "$readme_line" >&2
	exit 1
fi
echo "readme_ci: .ci/run runs the README's test line" >&2
