/*
 * shard.h - one tree split into N shards run anywhere, and their parts.
 *
 * A file belongs to shard kiln_shard_of(REL, N): a hash of its relative
 * path, so it stays in its shard as the tree grows and every runner agrees
 * without talking to the others.  A sharded run writes its record to a
 * part beside the manifest (kiln_part_path()), and marks its
 * journal with its shard, so that it removes no journal another shard
 * still needs.  Parts are kiln's record too until `kiln merge` (merge.c)
 * turns them into the manifest: every run reads the siblings they record as
 * kiln's own (like a journal's), so none can become an orphan nobody
 * recognises, whatever runs come next.
 */
#ifndef KILN_SHARD_H
#define KILN_SHARD_H

#include "kiln.h"
#include "state.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Is REL one of the files the run with OPT works on: no sharding, or REL
 * is in OPT's shard?  For a sibling's own path, ask about its source's. */
bool kiln_shard_mine(const struct kiln_options *opt, const char *rel);

/* The directory the parts of the manifest at MANIFEST_PATH live in (its
 * own directory), malloc'ed; NULL when out of memory. */
char *kiln_part_dir(const char *manifest_path);

/* The path of part K of N beside MANIFEST_PATH, malloc'ed (NULL when out
 * of memory): kiln-manifest.shard-K-of-N.json for a manifest named
 * kiln-manifest.json, else kiln-manifest.shard-K-of-N.NAME.json, NAME the
 * manifest's whole file name, so that the parts of manifests that share a
 * directory never meet. */
char *kiln_part_path(const char *manifest_path, unsigned k, unsigned n);

/* Is NAME (a file name in kiln_part_dir()) a part of the manifest at
 * MANIFEST_PATH, as kiln_part_path() names them?  Then *K and *N (either
 * may be NULL) get its shard. */
bool kiln_part_of(const char *manifest_path, const char *name, unsigned *k, unsigned *n);

/* Parts found and read: their identity, so that only those are removed. */
struct kiln_part_seen {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct kiln_parts_seen {
	struct kiln_part_seen *v;
	size_t n;
};

/*
 * Add what every part beside MANIFEST_PATH records to *ST as journaled
 * siblings (kiln's own, proved by their digests), and note each part read
 * in *SEEN.  A part that cannot be read or parsed is skipped, and the first
 * such part's path (malloc'd, the caller frees it) is left in *BAD with the
 * reason in *BAD_ERR, so that the caller can say so: the siblings it
 * records are then not known to be kiln's.  *BAD is NULL if every part was
 * read.  KILN_OK or KILN_ERR_NOMEM.  Not thread-safe for one ST.
 */
kiln_status kiln_parts_merge(const char *manifest_path, struct kiln_state *st,
			     struct kiln_parts_seen *seen, char **bad,
			     struct kiln_error *bad_err);

/* Remove the parts in SEEN that are still the files that were read (same
 * device and inode): a newer part written since is left.  Returns false if
 * one could not be removed. */
bool kiln_parts_remove(const struct kiln_parts_seen *seen);

void kiln_parts_seen_free(struct kiln_parts_seen *seen);

#endif
