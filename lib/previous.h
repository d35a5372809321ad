/*
 * previous.h - what earlier runs left in a tree, and what becomes of it.
 *
 * Earlier runs leave siblings (recorded in the manifest, in journals of runs
 * that died, or as stale ones that could not be removed) and, if killed,
 * temporary files.  This module decides, against the tree as it is now,
 * which of them is still good (reused as it is), which must go (removed,
 * but only while it still holds the bytes kiln wrote), and which record is
 * carried over unchanged because its file could not be read.  It decides
 * what of the earlier runs goes; the removal itself, here as everywhere,
 * is sibling.c's.
 */
#ifndef KILN_PREVIOUS_H
#define KILN_PREVIOUS_H

#include "run.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Load T's record: the manifest at t->manifest_path, the journals of dead
 * runs in the root and the shard parts beside the manifest.  A file at the
 * default manifest path that is not a kiln manifest is a
 * KILN_EVENT_STATE_IGNORED event (the run goes on without it, and replaces
 * it); at a path given as opt->manifest_path, or a part kiln cannot parse,
 * it is an error like one kiln cannot read.  Then mark the record's entries the
 * walk found (SEEN), carry over the records below entries the walk could
 * not read, and make a file named like a recorded sibling a sibling.
 * Returns KILN_OK; or KILN_ERR_IO (the manifest or a part cannot be read,
 * or a part parsed)
 * or KILN_ERR_NOMEM with *ERR set and *WHERE the path it is about (the
 * manifest's or the part's, owned by T or the caller's to free when
 * different from t->manifest_path): then the tree must not be processed,
 * since without its record kiln could neither remove nor recognise its own
 * siblings.  Main thread, before the pool.
 */
kiln_status kiln_prev_load(struct kiln_tree *t, struct kiln_error *err, char **where);

/*
 * Coding C of REL (PE may be NULL) gets no sibling this run: remove the one
 * kiln wrote, or point out one it never wrote, which the server would send:
 * KILN_EVENT_FOREIGN if it decodes to the source (SRC_SIZE bytes read from
 * SRC_FD; -1 when there is none to read), for a requested coding; and
 * whatever the coding, KILN_EVENT_FOREIGN_STALE if it does not (which sets
 * the ledger's foreign_stale flag).  Any thread.
 */
void kiln_prev_no_sibling(struct kiln_tree *t, const struct kiln_prev_entry *pe,
			  const char *rel, kiln_coding c, int src_fd, uint64_t src_size);

/*
 * Is there a regular file at REL's sibling of coding C that kiln did not
 * write (PE, which may be NULL, does not own it)?  Then *DECODES says
 * whether it decodes to the source (SRC_SIZE bytes of SRC_FD).  For a file
 * about to be replaced by kiln's own sibling.  Any thread.
 */
bool kiln_prev_foreign_at(struct kiln_tree *t, const struct kiln_prev_entry *pe, const char *rel,
			  kiln_coding c, int src_fd, uint64_t src_size, bool *decodes);

/* Remove every sibling PE records (of REL), as kiln_prev_no_sibling() would
 * for each coding, foreign ones excepted.  Any thread. */
void kiln_prev_remove_all(struct kiln_tree *t, const struct kiln_prev_entry *pe);

/*
 * Is the earlier sibling of coding C of REL still good for a source with
 * status SRC_ST and SHA-256 SRC_SHA, encoded with RECIPE: recorded for this
 * very content and recipe (manifest), or journaled for them and proved by
 * its own SHA-256 (journal), present as a regular file of the recorded size
 * and, with --verify, decoding to the source (SRC[0..size) in memory, or
 * read from SRC_FD when SRC is NULL)?  Then *size and sha256 get its size
 * and digest, and its mode and mtime are brought back to the source's if
 * they moved; *seen gets its status as it was checked (on the descriptor
 * read, once its mode and mtime are settled), which a stamp (index.h)
 * must still find.  With --reread its record's stamp is not trusted: its
 * digest proves it.  Any thread.
 */
bool kiln_prev_reusable(struct kiln_tree *t, const char *rel, const struct kiln_prev_entry *pe,
			kiln_coding c, const char *recipe, const struct stat *src_st,
			const uint8_t src_sha[32], const uint8_t *src, int src_fd,
			uint64_t *size, uint8_t sha256[32], struct stat *seen);

/* The size a coding was encoded to and not kept, for this content and
 * recipe, per the manifest; 0 when unknown. */
uint64_t kiln_prev_tried(const struct kiln_prev_entry *pe, kiln_coding c, const char *recipe,
			 uint64_t src_size, const uint8_t src_sha[32]);

/*
 * After the pool: remove the siblings of recorded files that are gone, the
 * stale siblings the record lists, and temporary files of dead runs.  Main.
 */
void kiln_prev_finish(struct kiln_tree *t);

/*
 * Remove the sibling of coding C that PE records, if it still holds what
 * kiln wrote; otherwise report KILN_EVENT_FOREIGN.  On a failure to remove
 * it, report KILN_EVENT_REMOVE_FAILED and keep it as stale in T's record.
 * Nothing is removed in a dry run.  Returns true if it was removed (or, dry
 * run, would be).  Any thread.
 */
bool kiln_prev_remove_recorded(struct kiln_tree *t, const struct kiln_prev_entry *pe,
			       kiln_coding c);

/* Leave the sibling of coding C that PE records where it is, but keep it in
 * T's record as stale (when it still holds what kiln wrote): for a sibling
 * kiln was refused to replace (a read-only one), which check then reports
 * and the next run tries again.  Any thread. */
void kiln_prev_keep_stale(struct kiln_tree *t, const struct kiln_prev_entry *pe, kiln_coding c);

/* The same for a sibling the record lists as stale. */
bool kiln_prev_remove_stale(struct kiln_tree *t, const struct kiln_stale *s);

#endif
