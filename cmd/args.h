/*
 * args.h - the kiln command line parsed: what main() runs with.
 */
#ifndef KILN_ARGS_H
#define KILN_ARGS_H

#include "kiln.h"

#include "command.h"
#include "ui.h"

#include <getopt.h>
#include <stdbool.h>

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_PROBLEMS = 3 };

/* Options per coding: --WORD, --no-WORD, --WORD-LEVEL_WORD N, and for a
 * coding with an extra setting --EXTRA, --no-EXTRA, --EXTRA-PARAM N. */
enum { PER_CODING = 6 };

struct cli {
	struct option *long_options;
	char *option_names[PER_CODING * KILN_MAX_CODINGS];
	struct kiln_options opt;
	struct kiln_archive_options aopt;
	const char *output;  /* -o */
	bool archive_option; /* an option that needs -o was given */
	const char **include, **exclude, **immutable, **previous, **mutable_globs, **fingerprints;
	enum ui_verbosity verbosity;
	int progress; /* -1 auto, 0 off, 1 on */
	bool json;
};

/* Parse ARGC/ARGV (getopt_long, permuting ARGV; optind is then the first
 * operand) into *CLI, which the caller zeroed and frees with cli_free()
 * whatever this returns.  Returns -1 to go on, or an exit status: EXIT_OK
 * after --help or --version, EXIT_USAGE (message printed) or EXIT_FAILED
 * (out of memory). */
int parse_args(int argc, char **argv, struct cli *cli);

/* The checks that need the command and the number of operands, with -o.
 * Returns -1 to go on, or an exit status (message printed). */
int check_archive_args(struct cli *cli, enum command cmd, int noperands);

/* Does OPT put a snippet elsewhere (--nginx-conf and the like)? */
bool names_outputs(const struct kiln_options *opt);

/* Print "kiln: MESSAGE" and the --help hint on stderr; returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2)))
int usage_error(const char *fmt, ...);

/* Free what parse_args() allocated in *CLI. */
void cli_free(struct cli *cli);

#endif
