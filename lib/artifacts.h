/*
 * artifacts.h - what a tree's run writes last: the manifest and the
 * snippets.  Not part of the public interface.
 */
#ifndef KILN_ARTIFACTS_H
#define KILN_ARTIFACTS_H

#include "tree.h"

/*
 * Write T's artifacts from its records (entries' and carried ones) and
 * stale siblings: the manifest to t->manifest_path, and the snippet, as
 * T's options say; each reported through on_artifact.  Sets
 * t->artifact_failed and t->manifest_failed.  Main, after the pool.
 * kiln_merge_tree() calls it with every record carried, so that a merge
 * writes exactly what one run would.
 */
void kiln_tree_write_artifacts(struct kiln_tree *t);

#endif
