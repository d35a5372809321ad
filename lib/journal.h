/*
 * journal.h - what a run has written so far, kept on disk while it runs.
 *
 * The manifest is written once, at the end of a run; a run interrupted
 * before that (SIGINT, SIGTERM, SIGKILL, a crash) would leave siblings that
 * no manifest records, and a later run could not tell them from siblings
 * someone else put there, so it would leave stale ones for nginx to serve.
 * So while it runs, a run appends one line per sibling it writes to
 * ROOT/.kiln-journal-XXXXXX (locked with flock(2) while its writer lives).
 * The next run merges every journal into the previous state: the siblings
 * listed are kiln's, removable when stale.  After a run has written its
 * manifest, which now records everything, it removes its own journal and
 * those of dead runs.
 *
 * A line: "<coding> <size> <sha256 hex> <relative path, base64>\n", written
 * with one write(2) on an O_APPEND descriptor, so concurrent workers never
 * interleave.  Lines that do not parse (a torn last line) are ignored.
 */
#ifndef KILN_JOURNAL_H
#define KILN_JOURNAL_H

#include "kiln.h"
#include "state.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kiln_journal {
	int fd;      /* -1 when there is none */
	char *path;
};

/* Create and lock this run's journal in ROOT.  On failure *j stays closed
 * and *err says why (the run goes on, without one). */
kiln_status kiln_journal_open(const char *root, struct kiln_journal *j, struct kiln_error *err);

/* Record that the sibling REL + suffix of coding C, SIZE bytes with SHA256,
 * was written.  Thread-safe; a no-op on a closed journal. */
void kiln_journal_add(struct kiln_journal *j, const char *rel, kiln_coding c, uint64_t size,
		      const uint8_t sha256[32]);

/* Close the journal; remove it too when REMOVE. */
void kiln_journal_close(struct kiln_journal *j, bool remove);

/*
 * Merge every journal in ROOT (except OWN, may be NULL) into *st as
 * siblings kiln wrote.  *st may be empty (no manifest); it is loaded after.
 * Returns KILN_OK or KILN_ERR_NOMEM.
 */
kiln_status kiln_journal_merge(const char *root, const char *own, struct kiln_state *st);

/* Remove the journals in ROOT whose writers are gone (nobody holds their
 * lock), except OWN. */
void kiln_journal_remove_stale(const char *root, const char *own);

#endif
