/*
 * journal.h - what a run has written so far, kept on disk while it runs.
 *
 * The manifest is written once, at the end of a run; a run killed before
 * that (SIGKILL, a crash, a second SIGINT) would leave siblings that no
 * manifest records, and a later run could neither tell them from siblings
 * someone else put there (so stale ones would stay for the server to send)
 * nor reuse the good ones.  So, from its first sibling on, a run appends one
 * line per sibling it writes to ROOT/.kiln-journal-XXXXXX (locked with
 * flock(2) while its writer lives; created only when there is something to
 * write, so that an unchanged re-run touches nothing in the tree).  The next
 * run merges every journal of a dead run into its state: the siblings
 * listed are kiln's, removable when stale and reusable when they still
 * hold what the journal says and their source is the one the journal names.
 * Once a run has written its manifest, which then records everything, it
 * removes its own journal and those of dead runs.
 *
 * A line (fields separated by one space):
 *   <coding> <recipe> <size> <sha256> <source size> <source sha256> <path>
 * where <path> is the source's relative path in base64, sizes are decimal,
 * digests lowercase hex.  Each line is written with one write(2) on an
 * O_APPEND descriptor, so concurrent workers never interleave.  Lines that
 * do not parse (a torn last line) are ignored.
 */
#ifndef KILN_JOURNAL_H
#define KILN_JOURNAL_H

#include "kiln.h"
#include "state.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kiln_journal {
	pthread_mutex_t lock; /* guards opening; lines are single writes */
	const char *root;     /* where to create it; not owned */
	bool disabled;        /* a dry run, or no record is kept */
	bool failed;          /* it could not be created or written */
	int errnum;           /* why, when failed */
	int fd;               /* -1 until the first line */
	char *path;
	/* A sharded run's shard (0 of 0: the whole tree), written as the
	 * journal's first line, "shard K N", which readers skip as they skip
	 * any line that does not parse. */
	unsigned shard_index, shard_count;
};

/* Prepare *J for a run on ROOT (nothing is created yet); DISABLED: never
 * create one. */
void kiln_journal_init(struct kiln_journal *j, const char *root, bool disabled);

/* Record that the sibling of REL in coding C (recipe RECIPE, SIZE bytes with
 * SHA256), made from a source of SRC_SIZE bytes with SRC_SHA256, was
 * is about to be put in place.  Creates the journal on first use.
 * Thread-safe.  Returns 0 when the line is written, else an errno value
 * (and sets j->failed; every later call fails the same way): the caller
 * must then not put the sibling in place, since a run that cannot write
 * its manifest either would leave a sibling nobody records. */
int kiln_journal_add(struct kiln_journal *j, const char *rel, kiln_coding c,
		      const char *recipe, uint64_t size, const uint8_t sha256[32],
		      uint64_t src_size, const uint8_t src_sha256[32]);

/* Close the journal; remove it too when REMOVE.  J can be used again
 * (created anew on its next line); its lock is destroyed by the owner. */
void kiln_journal_close(struct kiln_journal *j, bool remove);

/*
 * Merge every journal in ROOT whose writer is gone (nobody holds its lock)
 * into *st as siblings kiln wrote.  *st may be empty (no manifest).
 * Returns KILN_OK or KILN_ERR_NOMEM.
 */
kiln_status kiln_journal_merge(const char *root, struct kiln_state *st);

/* Does ROOT hold a journal of a dead run? */
bool kiln_journal_any(const char *root);

/* Remove the journals in ROOT whose writers are gone, except OWN (may be
 * NULL). */
void kiln_journal_remove_stale(const char *root, const char *own);

/* Remove each journal in ROOT whose writer is gone and every line of which
 * SETTLED(ARG, REL, J) says a record now accounts for (REL the source's
 * relative path, J the sibling it wrote); one with any other line stays. */
void kiln_journal_remove_settled(const char *root,
				 bool (*settled)(void *arg, const char *rel,
						 const struct kiln_journaled *j),
				 void *arg);

/* Remove the journals in ROOT whose writers are gone and that shard K of N
 * wrote: once that shard's part is written, it records all they do.  A
 * shard must leave the others' (and those of runs of the whole tree), whose
 * siblings its part does not record. */
void kiln_journal_remove_shard(const char *root, unsigned k, unsigned n);

#endif
