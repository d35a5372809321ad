/*
 * immutable.h - which files of a tree never change under their name, and
 * why: the evidence a build leaves, tried in order (docs/cache-control.md,
 * "Cache-Control").
 *
 *  1. name      the rule on the name alone (fingerprint.c);
 *  2. bundler   the bundler's own manifest at the tree's top (Vite's
 *               .vite/manifest.json, webpack-manifest-plugin's
 *               manifest.json, Create React App's asset-manifest.json,
 *               Next.js's build-manifest.json) or given with
 *               --fingerprints (those, webpack's stats JSON, esbuild's
 *               metafile): bundler.c; a complete one (Vite's, esbuild's,
 *               webpack's stats) decides the directories of its outputs;
 *  3. previous  a name of an earlier release (--previous) of the same stem
 *               around a token of a bundler's hash shape, the token changed
 *               as a new hash changes it (not a counter, a date or a name
 *               someone chose; digits alone only beside a sample of
 *               their shape), where neither name is in the other release
 *               and the bytes differ;
 *  4. tree      its directory's names of the same shape and kind are
 *               enough samples of the rule on the name alone (shape.c);
 *  5. glob      --immutable.
 * A file whose bytes changed under its name (the last run's record, its
 * mark carried, or an earlier release's file of the same path) is not
 * immutable by 1, 3 or 4: a content hash never keeps its name over other
 * bytes (KILN_EVENT_BYTES_CHANGED, struct kiln_fp's CHANGED).
 * --mutable overrides every one of them.  Evidence only ever adds a file
 * whose token a build's naming proves: never a name someone could have
 * chosen (words.h).
 */
#ifndef KILN_IMMUTABLE_H
#define KILN_IMMUTABLE_H

#include "fingerprint.h"
#include "run.h"

/*
 * Decide for every entry of T's walk: t->fp, walk.n decisions (all
 * KILN_WHY_NONE but for regular files).  Reads the tree's bundler manifests,
 * the files of opt.fingerprints (one that cannot be read or is no manifest
 * kiln knows is reported through on_file with its path as root, and sets
 * t->fingerprints_failed), and the earlier releases dict.c listed.  Out of
 * memory: t->fp NULL (nothing immutable) and the ledger lost (ledger.h).
 * Main thread, after kiln_dict_begin(), before the pool.
 */
void kiln_immutable_decide(struct kiln_tree *t);

/* Entry K's decision (all zero when none was made).  Any thread. */
struct kiln_fp kiln_immutable_of(const struct kiln_tree *t, size_t k);

#endif
