/*
 * manifest.h - the JSON manifest of a tree: every asset, its digests, its
 * media type and its siblings (or why it has none), and the siblings kiln
 * could not remove.  The format is documented in docs/manifest.md ("The
 * manifest") and tests/data/manifest.schema.json; this module is its only
 * writer, state.c its only reader.
 */
#ifndef KILN_MANIFEST_H
#define KILN_MANIFEST_H

#include "kiln.h"
#include "record.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stddef.h>

/* 3: "immutable" says why (a word, no longer true), and "fingerprint" */
#define KILN_MANIFEST_VERSION 3

/*
 * The manifest key of a relative path REL: REL with '%' and every byte that
 * is not part of a well-formed UTF-8 sequence written as "%XX" (uppercase
 * hex).  The mapping is one-to-one (kiln_manifest_key_decode() inverts it),
 * and *encoded says whether the key differs from REL (the entry then also
 * carries REL's bytes in base64).  Returns a malloc'ed string, or NULL when
 * out of memory.
 */
char *kiln_manifest_key(const char *rel, bool *encoded);

/* The path whose key is KEY, malloc'ed; NULL if KEY is not a key that
 * kiln_manifest_key() makes (or when out of memory). */
char *kiln_manifest_key_decode(const char *key);

/* One asset for the manifest: its record R (borrowed) and FP, why it is
 * served immutable and its fingerprint (decided apart from the record in a
 * tree's run, immutable.h). */
struct kiln_manifest_item {
	const struct kiln_record *r;
	struct kiln_fp fp;
};

/* Have jansson allocate through kiln's counting malloc, so that a dump
 * during which an allocation failed is never taken for whole.  Once per
 * process (kiln_run_new() calls it), before any other thread uses
 * jansson. */
void kiln_manifest_alloc_init(void);

/*
 * The manifest text (JSON, keys sorted, 2-space indent, final newline) for
 * the N assets ITEMS, the NSTALE siblings STALE and the NSNIP snippet
 * files SNIP of one tree, and TREE (the tree's top relative to the
 * manifest's directory, for a manifest kept away from its tree; NULL for
 * none), as a malloc'ed string, or NULL when out of memory.  A run writes
 * it with kiln_manifest_write(), never holding it whole; this is for the
 * manifests that stay small (a merge's header, tests).
 */
char *kiln_manifest_dump(const struct kiln_options *opt, const struct kiln_manifest_item *items,
			 size_t n, const struct kiln_stale *stale, size_t nstale,
			 const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree);

/*
 * The SHA-256 of everything in OPT (and of the encoders' versions) that
 * decides a file's record from its bytes: the manifest's "generator" and
 * "settings", and the options that make a file an error or decide how it
 * is read and checked (max_file_size, follow_symlinks, verify).  Two runs
 * with one digest give the same record to the same bytes (index.h).  False
 * when out of memory.
 */
bool kiln_manifest_settings_digest(const struct kiln_options *opt, uint8_t out[32]);

/* Where kiln_manifest_write() hands the text, piece by piece, in order. */
typedef void (*kiln_manifest_put)(void *arg, const char *p, size_t n);

/*
 * The text kiln_manifest_dump() makes, handed to PUT(ARG, ...) in pieces of
 * at most 64 KiB as it is made: memory for the records' keys, not for the
 * text.  False when out of memory (or a string jansson would refuse): the
 * pieces handed on so far are then not a whole manifest.
 */
bool kiln_manifest_write(const struct kiln_options *opt, const struct kiln_manifest_item *items,
			 size_t n, const struct kiln_stale *stale, size_t nstale,
			 const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree,
			 kiln_manifest_put put, void *arg);

#endif
