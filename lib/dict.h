/*
 * dict.h - dictionary deltas (RFC 9842): each fingerprinted asset encoded
 * against its own earlier versions, which returning visitors hold.
 *
 * Run after the pool has settled every file's siblings and records, before
 * the manifest and snippets are written.  The rules (docs/dictionary-deltas.md,
 * "Dictionary deltas"):
 *  - a file's family is its name with the fingerprint (immutable.h)
 *    replaced by '*'; its members in an earlier release
 *    (kiln_options.previous) are the files named so with a token of the
 *    fingerprint's length there; a fingerprinted asset with a member of
 *    other bytes gets one dcz sibling per such member, made against it,
 *    and keeps it only if it is smaller than the file's every other
 *    sibling (and than max_ratio x the file);
 *  - the names NAME.<16 hex>.dcz are kiln's: every such file the run does
 *    not vouch for now (made, or left from an earlier run for this very
 *    content and dictionary) is removed, whoever wrote it, so a server can
 *    never send one made from other bytes; one that cannot be removed fails
 *    the run;
 *  - each record that is set gets exactly the deltas on disk.
 */
#ifndef KILN_DICT_H
#define KILN_DICT_H

#include "run.h"

/*
 * Read the earlier releases into t->releases (release.c); one that cannot
 * be read is reported through on_file (its path as root) and sets
 * t->dict_failed.  Main thread, before kiln_immutable_decide().
 */
void kiln_dict_begin(struct kiln_tree *t);

/*
 * Make, keep and remove T's dictionary deltas as above, on the run's
 * workers, and set the records' lists.  Failures are reported through T's
 * callbacks (an unreadable earlier release: on_file with its path as root;
 * a removal: on_event) and flagged in T.  Main thread, after the pool.
 */
void kiln_dict_run(struct kiln_tree *t);

/* The deltas of walk entry K after kiln_dict_run() (for the snippets,
 * with or without a record); *N their count.  NULL when none. */
const struct kiln_dict_record *kiln_dict_of(const struct kiln_tree *t, size_t k, size_t *n);

/* Free what kiln_dict_run() kept in T.  Main thread. */
void kiln_dict_end(struct kiln_tree *t);

#endif
