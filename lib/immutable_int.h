/*
 * immutable_int.h - what immutable.c's decision holds while it is made,
 * shared with renames.c (the evidence of what a path held before).  Not
 * part of the public interface.
 */
#ifndef KILN_IMMUTABLE_INT_H
#define KILN_IMMUTABLE_INT_H

#include "fingerprint.h"
#include "tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What the bundlers' manifests say of a file of the tree (bits); COUNTED:
 * proven by the manifest being read, counted once (a file may stand for
 * several of its proofs: an esbuild entry's style sheet is an output and
 * the entry's cssBundle). */
enum { LISTED = 1, PROVEN = 2, DENIED = 4, COUNTED = 8 };

/* A file of the tree: its walk index, path and the path's length. */
struct name {
	size_t k;
	const char *rel;
	size_t len;
};

/* A directory: the path of a file in it, and the directory's length. */
struct dir {
	const char *rel;
	size_t len;
};

struct kiln_decide {
	struct kiln_tree *t;
	struct kiln_fp *fp;
	struct name *by_rel;  /* the tree's files, sorted by path */
	struct name *by_rev;  /* the same, sorted by path read backwards; NULL
			       * until a manifest's path is looked up (each_named()) */
	size_t nfiles;
	/* the directories a complete manifest accounts for (struct
	 * kiln_proof): each a path and the length of its directory part;
	 * SORTED: sorted by directory, each once (in_bundled() sorts them) */
	struct dir *bundled;
	size_t nbundled, capbundled;
	bool sorted;
	/* the roots of the outputs of a complete manifest (a directory of the
	 * tree, "" for its top, as REL's first LEN bytes): every file under
	 * one is the bundler's output or a copy (decided()) */
	struct dir roots[8];
	size_t nroots;
	unsigned char *listed; /* per walk entry: LISTED, PROVEN, DENIED, COUNTED */
	size_t nproved;        /* the files the manifest being read proves */
	/* sampled()'s last answer: a directory (REL's first N bytes), the
	 * byte before a token and its length */
	struct { const char *rel; size_t n, len; char sep; bool yes; } sample;
	bool nomem;
};

static inline size_t dir_len(const char *rel)
{
	const char *b = strrchr(rel, '/');

	return b ? (size_t)(b - rel) + 1 : 0;
}

static inline const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static inline int kiln_decide_by_rel(const void *a, const void *b)
{
	return strcmp(((const struct name *)a)->rel, ((const struct name *)b)->rel);
}

/* Is REL a file of the tree? */
static inline bool kiln_decide_in_tree(const struct kiln_decide *d, const char *rel)
{
	struct name key = { 0, rel, 0 };

	return d->nfiles && bsearch(&key, d->by_rel, d->nfiles, sizeof(key), kiln_decide_by_rel);
}

/*
 * Renames from each earlier release (--previous) into D->fp, for the files
 * no evidence before took (immutable.h, 3).  Sets D->nomem when out of
 * memory.  Main thread.
 */
void kiln_renames_find(struct kiln_decide *d);

/*
 * Bytes changed under a name read as a fingerprint (immutable.h): each
 * such file's D->fp loses its reason but for a bundler's or a glob's and
 * gets CHANGED, told through the tree's on_event once, when it is seen.
 * Main thread, once the other evidence is in.
 */
void kiln_renames_changed(struct kiln_decide *d);

#endif
