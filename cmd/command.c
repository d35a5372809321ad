/*
 * command.c - the command word: first on the line, or first after the
 * options as git takes it.
 */
#include "command.h"

#include <string.h>

int command_word(const char *s)
{
	return strcmp(s, "compress") == 0 ? CMD_COMPRESS
	       : strcmp(s, "check") == 0  ? CMD_CHECK
	       : strcmp(s, "clean") == 0  ? CMD_CLEAN
	       : strcmp(s, "merge") == 0  ? CMD_MERGE
	       : strcmp(s, "serve") == 0  ? CMD_SERVE
					  : -1;
}

int command_after_options(char *const *orig, int argc, char *const *argv, int first)
{
	int cmd = first < argc ? command_word(argv[first]) : -1;

	if (cmd < 0 || strcmp(argv[first - 1], "--") != 0)
		return cmd;
	for (int i = 1; i < argc; i++) {
		if (orig[i] == argv[first])
			return cmd; /* it came before the "--" */
		if (orig[i] == argv[first - 1])
			return -1;
	}
	return -1;
}
