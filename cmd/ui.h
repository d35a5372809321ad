/*
 * ui.h - everything the kiln program shows a person: per-file lines, error
 * messages, the self-updating progress line and the closing summary.
 *
 * The library reports outcomes through callbacks; ui turns them into text on
 * stderr.  Messages follow one shape: "kiln: PATH: reason", lowercase, no full
 * stop, with control characters and invalid UTF-8 in PATH escaped so a file
 * name cannot rewrite the terminal or forge a line.
 */
#ifndef KILN_UI_H
#define KILN_UI_H

#include "kiln.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum ui_verbosity { UI_QUIET = 0, UI_NORMAL = 1, UI_VERBOSE = 2 };

struct ui;

/* A ui writing to ERR (stderr).  PROGRESS: show the progress line. */
struct ui *ui_new(FILE *err, enum ui_verbosity verbosity, bool progress);
void ui_free(struct ui *ui);

/* Callbacks to hand to kiln_run_new(); USER is the ui. */
void ui_on_plan(void *user, const char *root, uint64_t files, uint64_t bytes);
void ui_on_file(void *user, const struct kiln_report *report);

/* Callback for kiln_callbacks.on_event. */
void ui_on_event(void *user, kiln_event event, const char *path, int coding,
		 const struct kiln_error *err);

/* End of `kiln check` (N problems) or `kiln clean` (N files removed). */
void ui_finish_command(struct ui *ui, const char *command, uint64_t n);

/* Callback for kiln_callbacks.on_artifact. */
void ui_on_artifact(void *user, const char *what, const char *path, const struct kiln_error *err);

/* Print the summary as one JSON object on F.  For COMMAND "check": the
 * problems found (path, kind, coding, detail), their count and the errors;
 * otherwise counts by outcome, bytes in and out per encoding, removals and
 * the errors (path, reason).  Elapsed seconds in both.  COMMAND NULL means
 * compress.  Returns 0, or -1 if it could not be built or written. */
int ui_print_json(struct ui *ui, FILE *f, const char *command);

/* A run-level error not tied to one file's report: "kiln: PATH: what". */
void ui_error(struct ui *ui, const char *path, const char *what, int errnum);

/* Clear the progress line and print the summary (unless quiet). */
void ui_finish(struct ui *ui);

/* Number of files that failed so far. */
uint64_t ui_errors(const struct ui *ui);

/* Write S to F with control characters and invalid UTF-8 escaped. */
void ui_put_escaped(FILE *f, const char *s);

#endif
