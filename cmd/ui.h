/*
 * ui.h - everything the kiln program shows a person: per-file lines, error
 * messages, the self-updating progress line and the closing summary, and
 * the --json summary for scripts.
 *
 * The library reports outcomes through callbacks; ui turns them into text on
 * stderr.  Messages follow one shape: "kiln: PATH: reason", lowercase, no full
 * stop, with control characters and invalid UTF-8 in PATH escaped so a file
 * name cannot rewrite the terminal or forge a line.  In JSON, paths take
 * the manifest's form instead (kiln_path_key()), with "path_base64" when
 * that is not the path itself.
 */
#ifndef KILN_UI_H
#define KILN_UI_H

#include "kiln.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum ui_verbosity { UI_QUIET = 0, UI_NORMAL = 1, UI_VERBOSE = 2 };

enum ui_command { UI_COMPRESS, UI_CHECK, UI_CLEAN, UI_MERGE };

struct ui;

/* A ui writing to ERR (stderr) about COMMAND.  PROGRESS: show the progress
 * line.  DRY_RUN: nothing is written, so say what would be. */
struct ui *ui_new(FILE *err, enum ui_command command, enum ui_verbosity verbosity,
		  bool progress, bool dry_run);
void ui_free(struct ui *ui);

/* Callbacks to hand to kiln_run_new(); USER is the ui. */
void ui_on_plan(void *user, const char *root, uint64_t files, uint64_t bytes);
void ui_on_progress(void *user, uint64_t files, uint64_t bytes);
void ui_on_file(void *user, const struct kiln_report *report);
void ui_on_event(void *user, kiln_event event, const char *path, int coding,
		 const struct kiln_error *err);
void ui_on_artifact(void *user, const char *what, const char *path, const struct kiln_error *err);

/* The run was interrupted: say so (clearing the progress line first), and
 * from now on show the progress line as stopping, without an ETA.  Any
 * thread. */
void ui_interrupted(struct ui *ui);

/* A run-level error not tied to one file's report: "kiln: PATH: what". */
void ui_error(struct ui *ui, const char *path, const char *what, int errnum);

/* Clear the progress line and print the summary (unless quiet).  N: for
 * check, the problems found; for clean, the files removed (or, dry run,
 * that would be); unused for compress and merge. */
void ui_finish(struct ui *ui, uint64_t n);

/* Number of errors printed so far (files that failed, and the rest). */
uint64_t ui_errors(const struct ui *ui);

/* Print the summary as one JSON object on F (docs/usage.md, "The summary").
 * Returns 0, or -1 if it could not be built or written. */
int ui_print_json(struct ui *ui, FILE *f);

/* Write S to F with control characters and invalid UTF-8 escaped. */
void ui_put_escaped(FILE *f, const char *s);

#endif
