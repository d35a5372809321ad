/*
 * state.h - what earlier runs left: their manifest and journals, read back.
 *
 * Incremental runs, stale-sibling removal, `kiln check` and `kiln clean`
 * all start from kiln's record of the siblings it wrote: the manifest of the
 * last run that finished, plus the journals of runs that died before writing
 * theirs (journal.h).  The manifest is outside input (anyone can edit it),
 * so the reader trusts nothing: a document that is not a version 1 or 2
 * manifest is rejected whole, an entry with a missing or malformed field is
 * dropped, and every path is checked to stay inside the tree.
 */
#ifndef KILN_STATE_H
#define KILN_STATE_H

#include "intern.h"
#include "kiln.h"
#include "record.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sibling a run wrote, as its journal tells it. */
struct kiln_journaled {
	kiln_coding coding;
	uint64_t size;
	uint8_t sha256[32];        /* of the sibling */
	bool src_known;            /* the source it was made from is known: */
	uint64_t src_size;
	uint8_t src_sha256[32];
	char recipe[KILN_RECIPE_MAX];
};

struct kiln_prev_entry {
	/* The manifest's entry when IN_MANIFEST; otherwise only REC.rel is
	 * set and journals alone know the path. */
	struct kiln_record rec;
	bool in_manifest;
	struct kiln_journaled *jv; /* versions journals recorded, oldest first */
	size_t njv;
	/* Set by the tree run: the walk found the path (as an asset, or
	 * failing); such an entry is not a deleted file's. */
	bool seen;
};

struct kiln_state {
	bool loaded;               /* a manifest or a journal was read */
	struct kiln_prev_entry *v; /* sorted by rec.rel, bytewise */
	size_t n;
	struct kiln_stale *stale;  /* the manifest's stale siblings */
	size_t nstale;
	struct kiln_snippet_rec *snippets; /* the snippets it records */
	size_t nsnippets;
	/* "tree": the tree's top relative to the manifest's directory (a
	 * manifest kept away from its tree, outputs.h); NULL when absent */
	char *tree;
	/* the records' recipes (intern.h); NULL until a record needs one */
	struct kiln_intern *strings;
	/* "generator", "settings" and "shard" (state_head.c); NULL until read */
	struct kiln_state_head *head;
};

/*
 * Parse manifest TEXT[0..len) into *st (zeroed by the caller).  Returns
 * KILN_OK with st->loaded set; KILN_ERR_INVALID if it is not a readable
 * manifest of a version this kiln reads (st stays empty); KILN_ERR_NOMEM.
 * Never crashes on any input.  Free with kiln_state_free() in every case.
 */
kiln_status kiln_state_parse(const char *text, size_t len, struct kiln_state *st);

/*
 * As kiln_state_parse(), from one jansson tree of the whole TEXT: the
 * reference reader.  kiln_state_parse() reads a manifest entry by entry
 * (memory for the records, not for a JSON tree of every file) and hands
 * any text it does not take as it is to this one; the two give the same
 * result for every text (tests/unit/test_state_stream.c compares them).
 */
kiln_status kiln_state_parse_whole(const char *text, size_t len, struct kiln_state *st);

/*
 * Read the manifest at PATH into *st (zeroed by the caller).  A missing file
 * is not an error: KILN_OK with st->loaded false.  Otherwise as
 * kiln_state_parse(), plus KILN_ERR_IO with *err set.
 */
kiln_status kiln_state_load(const char *path, struct kiln_state *st, struct kiln_error *err);

/* The same, a manifest read from its file through a window of WINDOW
 * bytes whatever its size (0: as kiln_state_load(), which reads one of 1
 * MiB or more so, never holding its text whole).  For tests. */
kiln_status kiln_state_load_window(const char *path, size_t window, struct kiln_state *st,
				   struct kiln_error *err);

/* The previous entry for REL, or NULL.  Thread-safe for readers. */
struct kiln_prev_entry *kiln_state_find(const struct kiln_state *st, const char *rel);

/* Add the journaled sibling *J of REL (a copy of REL is made), creating
 * REL's entry if there is none.  KILN_OK or KILN_ERR_NOMEM.  Not
 * thread-safe. */
kiln_status kiln_state_add_journaled(struct kiln_state *st, const char *rel,
				     const struct kiln_journaled *j);

/* Does the state know a sibling of coding C of PE with SIZE bytes and
 * SHA256: is that file kiln's own? */
bool kiln_state_owns(const struct kiln_prev_entry *pe, kiln_coding c, uint64_t size,
		     const uint8_t sha256[32]);

/* Does PE have any sibling of coding C recorded (manifest or journal)? */
bool kiln_state_has_sibling(const struct kiln_prev_entry *pe, kiln_coding c);

/* True if REL is "X" + a sibling suffix and the state records that sibling
 * of X (kept, journaled or stale): a file kiln wrote, whatever the tree
 * holds now, and never an asset. */
bool kiln_state_records_sibling(const struct kiln_state *st, const char *rel);

/* A relative path kiln may act on: LEN bytes, not empty, not absolute, no
 * NUL, no empty, "." or ".." component. */
bool kiln_state_safe_rel(const char *rel, size_t len);

/* Decode base64 B64 into a malloc'ed NUL-terminated string that must be a
 * safe relative path (above); NULL otherwise. */
char *kiln_state_rel_base64(const char *b64);

void kiln_state_free(struct kiln_state *st);

/*
 * The manifest's head (state_head.c).  A shard's part says which it is:
 * true with *index (1-based) and *count set when ST's manifest has a
 * "shard" of 1 <= index <= count, false otherwise.
 */
bool kiln_state_shard(const struct kiln_state *st, unsigned *index, unsigned *count);

/* The first key of "settings" (or of "generator") whose value differs
 * between the manifests A and B, or NULL when the two objects are equal
 * (both absent included).  The key is A's or B's: valid while both are. */
const char *kiln_state_settings_difference(const struct kiln_state *a,
					   const struct kiln_state *b);
const char *kiln_state_generator_difference(const struct kiln_state *a,
					    const struct kiln_state *b);

/*
 * The options that decide a file's record, read back from ST's "settings"
 * into *opt (the caller fills the rest: artifacts, servers, paths): the
 * codings with their levels and window or iteration parameters, min_size,
 * stream_size, max_ratio and the include, exclude, immutable and mutable
 * globs.  The globs' strings are malloc'ed into *globs (*nglobs of them),
 * which the caller frees, each and the array, in every case.  False if the
 * settings are absent or not ones this kiln writes, or the options they
 * give fail kiln_options_check().
 */
bool kiln_state_options(const struct kiln_state *st, struct kiln_options *opt, char ***globs,
			size_t *nglobs);

#endif
