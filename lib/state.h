/*
 * state.h - what a previous run left: its manifest, read back.
 *
 * Incremental runs, stale-sibling removal, `kiln check` and `kiln clean` all
 * start from the manifest of the last run, which is the only record of which
 * siblings kiln wrote.  The manifest is outside input (anyone can edit it),
 * so the reader trusts nothing: a document that is not a version-1 manifest
 * is rejected whole, an entry with a missing or malformed field is dropped,
 * and every path is checked to stay inside the tree.
 */
#ifndef KILN_STATE_H
#define KILN_STATE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kiln_prev_coding {
	bool kept;          /* kiln wrote this sibling (path = rel + suffix) */
	bool tried;         /* encoded but not kept; size is the encoded size */
	uint64_t size;
	uint8_t sha256[32]; /* of the sibling, when kept */
	/* a later version an interrupted run wrote (from its journal) */
	bool alt;
	uint64_t alt_size;
	uint8_t alt_sha256[32];
};

struct kiln_prev_entry {
	char *rel;          /* exact relative path bytes */
	uint64_t size;
	uint8_t sha256[32];
	kiln_outcome outcome; /* COMPRESSED, or the skipped reason */
	struct kiln_prev_coding coding[KILN_NCODINGS];
	bool seen;          /* found by the current walk (set by the caller) */
};

struct kiln_state {
	bool loaded;
	/* the settings and encoder versions of the previous run */
	unsigned codings;
	int gzip_level, brotli_quality;
	uint64_t min_size;
	uint64_t stream_size; /* UINT64_MAX: not recorded */
	double max_ratio;
	char libdeflate[32], brotli[32], zlib[32];
	struct kiln_prev_entry *v; /* sorted by rel, bytewise */
	size_t n;
};

/*
 * Parse manifest TEXT[0..len) into *st (zeroed by the caller).  Returns
 * KILN_OK with st->loaded set; KILN_ERR_INVALID if it is not a readable
 * version-1 manifest (st stays empty); KILN_ERR_NOMEM.  Never crashes on
 * any input.  Free with kiln_state_free() in every case.
 */
kiln_status kiln_state_parse(const char *text, size_t len, struct kiln_state *st);

/*
 * Read the manifest at PATH into *st (zeroed by the caller).  A missing file
 * is not an error: KILN_OK with st->loaded false.  Otherwise as
 * kiln_state_parse(), plus KILN_ERR_IO with *err set.
 */
kiln_status kiln_state_load(const char *path, struct kiln_state *st, struct kiln_error *err);

/* The previous entry for REL, or NULL.  Thread-safe for readers. */
struct kiln_prev_entry *kiln_state_find(const struct kiln_state *st, const char *rel);

/* True if the previous run encoded coding C exactly as OPT would now: same
 * level or quality, same encoder version. */
bool kiln_state_coding_reusable(const struct kiln_state *st, const struct kiln_options *opt,
				kiln_coding c);

/* True if REL is "X.gz" (or another sibling suffix) and the state records X
 * with that sibling kept: a file kiln wrote, whatever the tree holds now. */
bool kiln_state_records_sibling(const struct kiln_state *st, const char *rel);

/* A relative path kiln may act on: LEN bytes, not empty, not absolute, no
 * NUL, no empty, "." or ".." component. */
bool kiln_state_safe_rel(const char *rel, size_t len);

void kiln_state_free(struct kiln_state *st);

#endif
