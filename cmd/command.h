/*
 * command.h - which command a kiln command line names: compress (the
 * default), check, clean, merge or serve.
 */
#ifndef KILN_COMMAND_H
#define KILN_COMMAND_H

enum command { CMD_COMPRESS, CMD_CHECK, CMD_CLEAN, CMD_MERGE, CMD_SERVE };

/* The command the word S names, or -1 if it names none. */
int command_word(const char *s);

/*
 * Options may come before the command word, as git takes them ("kiln -q
 * clean DIR"): after getopt_long() has parsed ARGV (ARGC entries), the
 * first operand ARGV[FIRST] names the command unless it came after a "--".
 * getopt has permuted ARGV, so the original order is read from ORIG, a
 * copy of ARGV taken before parsing.  Returns the command, or -1 if the
 * first operand (if any) is a DIR.
 */
int command_after_options(char *const *orig, int argc, char *const *argv, int first);

/* Run `kiln serve` (serve.c) with ARGV (ARGV[0] the word serve, then its
 * options and DIR); returns the exit status: 0 after SIGTERM or SIGINT, 1
 * when the tree cannot be served, 2 for a usage error. */
int serve_main(int argc, char **argv);

#endif
