/*
 * walk.h - listing a tree.
 *
 * The walk is the only part of kiln that reads directories.  It produces
 * every entry below the root in a deterministic order (byte order of names,
 * depth first), with its lstat (or, for a followed link, stat) and the
 * decisions that need only the name: sibling, kiln's own output, excluded,
 * symlink, special file.  Entries left undecided are candidates, which the
 * workers open and classify by content.
 */
#ifndef KILN_WALK_H
#define KILN_WALK_H

#include "codec.h"
#include "kiln.h"
#include "source.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* kiln_entry.sib[c] of a name that is no entry (a directory) */
#define KILN_SIB_NOT_ENTRY UINT32_MAX

/* outcome value of an entry still to be opened and classified by content */
#define KILN_OUTCOME_CANDIDATE KILN_NOUTCOMES

/* One entry: about 100 bytes and its path, for every file of a tree
 * (siblings included), kept for the whole operation. */
struct kiln_entry {
	char *rel;              /* path relative to the root, '/'-separated
	                           (owned by the walk) */
	struct kiln_stat st;    /* lstat, or stat of a followed link's target */
	uint8_t outcome;        /* kiln_outcome decided, or KILN_OUTCOME_CANDIDATE */
	uint8_t was;            /* before previous.c made it a sibling (0: not) */
	bool via_link;          /* reached through a followed symbolic link */
	bool queued;            /* handed to a worker, or settled unread from
	                           its stamp (set by run.c) */
	/* sib[c]: 1 + the index of the entry named like this one's sibling
	 * of coding c (REL + its suffix, in the same directory), 0 when the
	 * directory has no such name, KILN_SIB_NOT_ENTRY when it is not an
	 * entry (a directory) */
	uint32_t sib[KILN_NCODECS];
	struct kiln_error err;  /* when outcome == KILN_OUTCOME_ERROR */
};

struct kiln_walk {
	struct kiln_entry *v;
	size_t n, cap;
	struct kiln_walk_chunk *names; /* where the entries' paths live */
	/* Per glob, the options' include globs then exclude globs: did it
	 * match any file? */
	bool *glob_used;
};

/*
 * List ROOT (a directory path without trailing '/') into *out, which must be
 * zeroed.  OWN[0..nown) are kiln's own artifacts written under other names
 * (a --manifest path inside the tree): a file with one's device and inode is
 * a kiln output, never an input.  Per-entry problems (an unreadable subdirectory, a dangling or
 * escaping link, a loop) become entries with KILN_OUTCOME_ERROR and the walk
 * goes on.  Returns KILN_OK; KILN_ERR_IO with *root_err set if ROOT itself
 * cannot be opened as a directory; KILN_ERR_NOMEM.  Free with
 * kiln_walk_free() in every case.
 */
kiln_status kiln_walk(const char *root, const struct kiln_options *opt,
		      const struct stat *own, size_t nown, struct kiln_walk *out,
		      struct kiln_error *root_err);

void kiln_walk_free(struct kiln_walk *w);

#endif
