/*
 * kiln.c - the kiln program: commands, signals, exit status.
 *
 * usage: kiln [compress] [OPTIONS] DIR...
 *        kiln [compress] [OPTIONS] ARCHIVE|DIR -o OUT
 *        kiln check [OPTIONS] DIR...
 *        kiln clean [OPTIONS] DIR...
 *        kiln merge [OPTIONS] DIR...
 *        kiln serve [OPTIONS] DIR         (serve.c)
 *
 * Everything that decides or writes is in libkiln; args.c turns the
 * command line into kiln_options; this file runs each DIR (or, with -o, the
 * one input into an output archive) and maps the outcome to an exit status: 0 all
 * done, 1 some file or DIR failed (the rest were still processed), 2 usage
 * error, 3 (check) the tree does not match its manifest; killed by a
 * signal, it removes its temporary files and dies of that same signal.
 */
#include "kiln.h"

#include "args.h"
#include "command.h"
#include "signals.h"
#include "ui.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Print "kiln: B: WHY A: give each DIR once" (paths escaped) as a usage
 * error. */
static int overlap_error(const char *a, const char *b, const char *why)
{
	fputs("kiln: ", stderr);
	ui_put_escaped(stderr, b);
	fprintf(stderr, ": %s ", why);
	ui_put_escaped(stderr, a);
	fputs(", also given: give each DIR once\nTry 'kiln --help' for more information.\n",
	      stderr);
	return EXIT_USAGE;
}

/*
 * No file is processed twice: two DIRs that are the same directory, or one
 * inside another (by their real paths: "dist", "dist/", "./dist" and a link
 * to it are one), are a usage error.  A DIR that cannot be resolved (it
 * does not exist) is left for the run to report.  Returns -1 to go on, or
 * an exit status.
 */
static int check_overlap(char **dirs, int n)
{
	char **real = calloc((size_t)n + 1, sizeof(*real));
	int status = -1;

	if (!real) {
		fputs("kiln: out of memory\n", stderr);
		return EXIT_FAILED;
	}
	for (int i = 0; i < n; i++)
		real[i] = realpath(dirs[i], NULL);
	for (int j = 0; j < n && status < 0; j++)
		for (int i = 0; i < n && status < 0; i++) {
			size_t k;
			if (i == j || !real[i] || !real[j])
				continue;
			k = strlen(real[i]);
			if (i < j && strcmp(real[i], real[j]) == 0)
				status = overlap_error(dirs[i], dirs[j], "the same directory as");
			else if (strncmp(real[i], real[j], k) == 0 &&
				 (real[j][k] == '/' || (k == 1 && real[j][1])))
				status = overlap_error(dirs[i], dirs[j], "inside");
		}
	for (int i = 0; i < n; i++)
		free(real[i]);
	free(real);
	return status;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct kiln_callbacks cb = { 0 };
	struct kiln_run *run = NULL;
	struct ui *ui = NULL;
	bool failed = false, progress;
	enum command cmd = CMD_COMPRESS;
	uint64_t problems = 0, removed = 0;
	char **orig = NULL;
	int first, late, status;

	/* a leading command word, or one after the options; none means compress */
	if (argc > 1 && command_word(argv[1]) == CMD_SERVE)
		return serve_main(argc - 1, argv + 1); /* options of its own */
	if (argc > 1 && command_word(argv[1]) >= 0) {
		cmd = (enum command)command_word(argv[1]);
		argv[1] = argv[0];
		argv++;
		argc--;
	} else if (!(orig = malloc(((size_t)argc + 1) * sizeof(*orig)))) {
		fputs("kiln: out of memory\n", stderr);
		return EXIT_FAILED;
	} else {
		memcpy(orig, argv, ((size_t)argc + 1) * sizeof(*orig));
	}
	argv[0] = (char *)"kiln"; /* getopt's own messages start "kiln: " */
	status = parse_args(argc, argv, &cli);
	if (status >= 0)
		goto out;
	first = optind;
	if (orig && (late = command_after_options(orig, argc, argv, first)) >= 0) {
		if (late == CMD_SERVE) {
			status = usage_error("kiln serve takes its options after the word serve");
			goto out;
		}
		cmd = (enum command)late;
		first++;
	}
	if (first >= argc) {
		status = usage_error("no DIR given");
		goto out;
	}
	if ((status = check_archive_args(&cli, cmd, argc - first)) >= 0)
		goto out;
	if (cli.opt.shard_count && (cmd != CMD_COMPRESS || !cli.opt.write_manifest)) {
		status = usage_error("--shard works with compress only, and writes a part of the manifest (no --no-manifest)");
		goto out;
	}
	if (argc - first > 1 && (cli.opt.manifest_path || names_outputs(&cli.opt) || cli.opt.artifacts_dir)) {
		status = usage_error("--manifest, --nginx-conf, --caddy-conf, --apache-conf and --artifacts name one tree's files: give one DIR");
		goto out;
	}
	if ((status = check_overlap(argv + first, argc - first)) >= 0)
		goto out;
	progress = cli.progress < 0 ? (cli.verbosity > UI_QUIET && isatty(STDERR_FILENO))
				    : cli.progress == 1;
	install_signals(); /* before any thread is made */
	ui = ui_new(stderr, cmd == CMD_CHECK ? UI_CHECK : cmd == CMD_CLEAN ? UI_CLEAN
			    : cmd == CMD_MERGE ? UI_MERGE : UI_COMPRESS,
		    cli.verbosity, progress && cmd == CMD_COMPRESS, cli.opt.dry_run);
	cb.on_plan = ui_on_plan;
	cb.on_progress = ui_on_progress;
	cb.on_file = ui_on_file;
	cb.on_artifact = ui_on_artifact;
	cb.on_event = ui_on_event;
	cb.user = ui;
	run = ui ? kiln_run_new(&cli.opt, &cb) : NULL;
	if (!run) {
		fputs("kiln: out of memory\n", stderr);
		status = EXIT_FAILED;
		goto out;
	}
	set_signal_run(run, ui);
	for (int i = first; i < argc; i++) {
		uint64_t n = 0;
		kiln_status st = cmd == CMD_CHECK   ? kiln_check_tree(run, argv[i], &n)
				 : cmd == CMD_CLEAN ? kiln_clean_tree(run, argv[i], &n)
				 : cmd == CMD_MERGE ? kiln_merge_tree(run, argv[i])
				 : cli.output	    ? kiln_run_archive(run, argv[i], cli.output, &cli.aopt)
						    : kiln_run_tree(run, argv[i]);
		if (cmd == CMD_CHECK)
			problems += n;
		else
			removed += n;
		if (st == KILN_ERR_NOMEM) {
			ui_error(ui, argv[i], "out of memory", 0);
			failed = true;
		} else if (st != KILN_OK) {
			failed = true; /* already reported through a callback */
		}
	}
	ui_finish(ui, cmd == CMD_CHECK ? problems : removed);
	status = failed || ui_errors(ui) ? EXIT_FAILED
		 : problems			 ? EXIT_PROBLEMS
						 : EXIT_OK;
	if (cli.json && ui_print_json(ui, stdout) != 0) {
		fputs("kiln: cannot write the JSON summary\n", stderr);
		status = EXIT_FAILED;
	}
out:
	free(orig);
	set_signal_run(NULL, NULL);
	kiln_run_free(run);
	ui_free(ui);
	cli_free(&cli);
	if (status != EXIT_USAGE)
		die_if_signalled();
	return status;
}
