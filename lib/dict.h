/*
 * dict.h - dictionary deltas (RFC 9842): each fingerprinted asset encoded
 * against its own earlier versions, which returning visitors hold.
 *
 * Made in the one pipeline: each file's deltas by the worker that settled
 * its siblings and record, as its last step (kiln_dict_file()), from a
 * plan main makes before the pool; what no file kept is removed after it.
 * The rules (docs/dictionary-deltas.md, "Dictionary deltas"):
 *  - a file's family is its name with the fingerprint (immutable.h)
 *    replaced by '*'; its members in an earlier release
 *    (kiln_options.previous) are the files named so with a token of the
 *    fingerprint's length there; a fingerprinted asset with a member of
 *    other bytes gets one dcz sibling per such member, made against it
 *    (none when one release holds two members: a pattern files share),
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
 * Plan T's deltas: the families of the tree's fingerprinted assets, and
 * their members in every earlier release (t->dict_plan, read-only while
 * the pool runs); a release that shares no family with the tree is
 * warned about.  Out of memory: no delta, and the ledger lost.  Main
 * thread, after kiln_immutable_decide(), before the pool (on every run:
 * without --previous every delta goes).
 */
void kiln_dict_plan(struct kiln_tree *t);

/*
 * Make or keep walk entry K's deltas, as above, once its siblings and
 * record are settled (its report R's outcome and sizes): the last step of
 * kiln_pipeline_file().  Writes t->dicts[k] only; failures are reported
 * through T's callbacks.  Worker K.
 */
void kiln_dict_file(struct kiln_tree *t, size_t k, const struct kiln_report *r);

/*
 * After the pool: remove every file named like a delta that no asset kept
 * now (failures through on_event, flagged in the ledger), report each kept
 * delta, and give each record exactly its deltas.  Frees the plan.  Main
 * thread.
 */
void kiln_dict_finish(struct kiln_tree *t);

/* The deltas of walk entry K after kiln_dict_finish() (for the snippets,
 * with or without a record); *N their count.  NULL when none. */
const struct kiln_dict_record *kiln_dict_of(const struct kiln_tree *t, size_t k, size_t *n);

/* Free what the deltas' steps kept in T.  Main thread. */
void kiln_dict_end(struct kiln_tree *t);

#endif
