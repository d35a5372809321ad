/*
 * record.h - what kiln knows of one asset and its siblings: an entry of the
 * manifest, in memory.
 *
 * The manifest is written from records (manifest.c) and read back into
 * them (state.c); a tree run makes one per asset from what it did, or
 * carries the previous one over for a file it could not read.  Keeping one
 * type for both directions is what lets a record pass through a run
 * unchanged.
 */
#ifndef KILN_RECORD_H
#define KILN_RECORD_H

#include "codec.h"
#include "kiln.h"

#include <stdbool.h>
#include <stdint.h>

/* One coding of an asset. */
struct kiln_coding_record {
	/* KILN_CODING_KEPT: kiln wrote the sibling NAME.SUFFIX, SIZE bytes
	 * with SHA256; KILN_CODING_NO_GAIN: encoded to SIZE bytes and not
	 * kept; KILN_CODING_OFF: nothing known. */
	kiln_coding_outcome outcome;
	uint64_t size;
	uint8_t sha256[32];
	char recipe[KILN_RECIPE_MAX]; /* how it was made; "" when unknown */
};

struct kiln_record {
	char *rel;             /* exact relative path bytes, owned */
	uint64_t size;         /* of the source */
	uint8_t sha256[32];
	uint8_t sha384[48];
	kiln_outcome outcome;  /* COMPRESSED, or why not: MEDIA, SMALL,
	                          NO_GAIN, EXCLUDED */
	struct kiln_coding_record coding[KILN_MAX_CODINGS];
};

/* A sibling kiln wrote that should be gone but could not be removed: kept
 * in the manifest so that the next run removes it, and check reports it. */
struct kiln_stale {
	char *rel;             /* the sibling's own relative path, owned */
	kiln_coding coding;
	uint64_t size;
	uint8_t sha256[32];
};

/* Deep copy of *SRC into *DST (false when out of memory). */
bool kiln_record_copy(struct kiln_record *dst, const struct kiln_record *src);
void kiln_record_free(struct kiln_record *r);

#endif
