/*
 * ui_state.h - what ui.c and ui_summary.c share: the ui's state and a few
 * helpers.  Private to the kiln program; ui.h is the interface.
 */
#ifndef KILN_UI_STATE_H
#define KILN_UI_STATE_H

#include "ui.h"

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

/* Every field is changed under LOCK, by the library's callbacks (which it
 * serialises) or by the ticker thread; the rest only read it. */
struct ui {
	FILE *err;
	enum ui_command command;
	enum ui_verbosity verbosity;
	bool progress, dry_run;
	bool interrupted; /* stopping: no ETA */
	pthread_mutex_t lock;
	pthread_t ticker;
	bool ticker_running, stop;
	pthread_cond_t wake;

	double start, last_draw;
	bool line_shown;
	uint64_t total_files, total_bytes, done_files, done_bytes;
	uint64_t count[KILN_NOUTCOMES];
	uint64_t bytes_in[KILN_MAX_CODINGS], bytes_out[KILN_MAX_CODINGS];
	/* of compressed assets: the codings encoded but not kept, and of those
	 * the ones no smaller than a sibling kept beside them (the keep rule's
	 * order, docs/usage.md), so the summary can say why a coding asked for
	 * has no sibling at all */
	uint64_t not_kept[KILN_MAX_CODINGS], not_smaller[KILN_MAX_CODINGS];
	uint64_t errors, removed, unchanged, written;
	uint64_t from_cache; /* of WRITTEN, copied from the content cache */
	uint64_t snippets_removed; /* of removed: snippets this run no longer writes */
	uint64_t deltas; /* dictionary deltas kept */
	uint64_t undone; /* files a cancelled run did not finish */
	char *archive; /* the archive written (-o), for the summary */
	json_t *error_list;   /* [{"path", "reason"}] */
	json_t *warning_list; /* [{"path", "warning"}] */
	json_t *problems;     /* check's: [{"path", "kind", "coding", "detail"}] */
};

/* The outcomes of assets, in the order the summary gives them. */
extern const kiln_outcome ui_asset_outcomes[];
extern const size_t ui_nasset_outcomes;

/* Seconds on a monotonic clock. */
double ui_now(void);
/* ONE or MANY, as N asks. */
const char *ui_plural(uint64_t n, const char *one, const char *many);
/* BYTES in B, KiB, MiB or GiB, into BUF (N bytes). */
void ui_human(char *buf, size_t n, uint64_t bytes);
/* Take the progress line off the terminal, if it is shown.  Under LOCK. */
void ui_clear_line(struct ui *ui);
/* Stop the ticker thread and wait for it.  Not under LOCK. */
void ui_stop_ticker(struct ui *ui);

#endif
