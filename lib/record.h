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
#include "fingerprint.h"
#include "kiln.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One coding of an asset. */
struct kiln_coding_record {
	/* KILN_CODING_KEPT: kiln wrote the sibling NAME.SUFFIX, SIZE bytes
	 * with SHA256; KILN_CODING_NO_GAIN: encoded to SIZE bytes and not
	 * kept; KILN_CODING_OFF: nothing known. */
	kiln_coding_outcome outcome;
	uint64_t size;
	uint8_t sha256[32];
	/* How it was made ("" when unknown), never NULL unless OFF: shared,
	 * owned by the pool of the state or ledger that made the record
	 * (intern.h), which outlives it. */
	const char *recipe;
};

/* A dictionary delta of an asset (RFC 9842): the sibling
 * NAME.<id>.dcz (codec.h), SIZE bytes with SHA256, made by RECIPE against
 * the dictionary whose SHA-256 is DICT_SHA256: the file DICT_PATH
 * (relative to its release's top) of a previous release. */
struct kiln_dict_record {
	uint8_t dict_sha256[32];
	char *dict_path;       /* owned */
	uint64_t size;
	uint8_t sha256[32];
	char recipe[KILN_RECIPE_MAX];
};

/* A list of them. */
struct kiln_dict_list {
	struct kiln_dict_record *v;
	size_t n;
};

/*
 * What an asset and its kept siblings looked like on disk when a run last
 * read the one and wrote or checked the others (index.h): the proof that
 * lets a later run, check or clean know them unchanged from their status
 * alone.  Each sibling has its source's mode and mtime and its coding's
 * recorded size, so only its inode and ctime are kept.
 */
struct kiln_stamp {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	int64_t mtime_ns, ctime_ns;
	struct {
		ino_t ino;
		int64_t ctime_ns;
	} sib[KILN_NCODECS];       /* for the codings KEPT */
};

/* How far a record's stamp may be trusted. */
enum {
	KILN_STAMP_NONE = 0,       /* no stamp: the file must be read */
	KILN_STAMP_SEEN,           /* taken in this run: index.c decides */
	KILN_STAMP_TRUSTED,        /* from a valid index, or confirmed */
};

struct kiln_record {
	char *rel;             /* exact relative path bytes, owned */
	uint64_t size;         /* of the source */
	uint8_t sha256[32];
	uint8_t sha384[48];
	kiln_outcome outcome;  /* COMPRESSED, or why not: MEDIA, SMALL,
	                          NO_GAIN, EXCLUDED */
	struct kiln_coding_record coding[KILN_NCODECS];
	/* Its dictionary deltas, sorted by dict_sha256; owned. */
	struct kiln_dict_record *dicts;
	size_t ndicts;
	/* Why it is served immutable, and its fingerprint's span in REL
	 * (immutable.h): the manifest's "immutable" and "fingerprint". */
	struct kiln_fp fp;
	/* Not in the manifest: the index's proof (KILN_STAMP_*). */
	uint8_t stamped;
	struct kiln_stamp stamp;
};

/* A sibling kiln wrote that should be gone but could not be removed: kept
 * in the manifest so that the next run removes it, and check reports it. */
struct kiln_stale {
	char *rel;             /* the sibling's own relative path, owned */
	kiln_coding coding;
	uint64_t size;
	uint8_t sha256[32];
};

/* A snippet file kiln wrote at the top of the tree (manifest "snippets"):
 * a run that no longer writes it removes it while it still holds exactly
 * these bytes, and never a file that does not (run.c). */
struct kiln_snippet_rec {
	char *name;            /* its name in the tree's top directory, owned */
	uint8_t sha256[32];
};

/* Deep copy of *SRC into *DST (false when out of memory: *DST then owns
 * nothing). */
bool kiln_record_copy(struct kiln_record *dst, const struct kiln_record *src);
void kiln_record_free(struct kiln_record *r);

/* Free R's dictionary deltas (R has none afterwards). */
void kiln_record_free_dicts(struct kiln_record *r);

#endif
