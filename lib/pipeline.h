/*
 * pipeline.h - the work done for one file of a tree: the steps, their
 * order and what a failure at each leaves behind are described at the top
 * of pipeline.c.
 */
#ifndef KILN_PIPELINE_H
#define KILN_PIPELINE_H

#include "run.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Process walk entry K of T (a candidate, or an excluded file to hash) on
 * worker W: settle it (kiln_tree_settled(): its outcome noted, its report
 * told) and, when a record is kept for it, entry
 * K's record in the ledger (ledger.h).  Called from pool threads, each K
 * by exactly one; everything it shares with other workers is thread-safe
 * (see tree.h).
 */
void kiln_pipeline_file(struct kiln_tree *t, struct worker *w, size_t k);

/*
 * Settle walk entry K of T without reading it, when the index proves its
 * bytes and its siblings unchanged since its record (index.h): the same
 * stamp, the same options (t->quick), its siblings as stamped and no other
 * file at their names, no journal or delta of it.  Then its record stands
 * (borrowed into the ledger), its report is told, and true; else false and
 * nothing done.  Main, before the pool.
 */
bool kiln_pipeline_unchanged(struct kiln_tree *t, size_t k);

/* Fill *R for walk entry K of T as the walk left it: root, path, outcome,
 * size (a regular file's), the walk's error and why it is immutable.  Any
 * thread. */
void kiln_pipeline_report_of(struct kiln_tree *t, size_t k, struct kiln_report *r);

#endif
