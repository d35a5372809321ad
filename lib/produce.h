/*
 * produce.h - getting a source's bytes through the encoders.
 *
 * This is the one place where the two ways of handling a source differ.  A
 * source below kiln_options.stream_size is held in memory: each encoding is
 * looked up in the content cache or made by the coding's whole-buffer
 * encoder, into memory.  A larger one is read once, in 1 MiB chunks, into
 * every coding's streaming encoder at the same time, each encoder writing
 * straight into its sibling's temporary file (hashed on the way), so memory
 * stays the encoders' own whatever the file's size.  Everything after --
 * deciding, verifying, writing, recording -- is the pipeline's (pipeline.c),
 * the same for both, through the few operations below that know where a
 * product's bytes are.
 */
#ifndef KILN_PRODUCE_H
#define KILN_PRODUCE_H

#include "codec.h"
#include "run.h"
#include "tempfile.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* A source as the encoders see it. */
struct kiln_source {
	const char *rel;
	int fd;
	const struct stat *st;
	const uint8_t *buf;   /* the whole file, or NULL: streamed from FD */
	bool hashed;          /* SHA256/SHA384 hold its digests */
	uint8_t sha256[32];
	uint8_t sha384[48];
	/* Progress (kiln_tree_progress()): CREDITED of the PLANNED bytes (its
	 * size when the tree was walked) reported as done so far. */
	uint64_t planned, credited;
};

/* One coding's encoding of a source. */
struct kiln_product {
	bool made;
	kiln_origin origin;
	uint64_t len;
	uint8_t *buf;             /* in memory, or NULL when in TF */
	struct kiln_tempfile tf;  /* streamed: the sibling's temporary file */
	bool in_file;
	bool hashed;
	uint8_t sha256[32];
	bool own_there;           /* the file at the sibling's path is kiln's
	                             own (by its digest): replaced even when
	                             read-only */
};

/*
 * Make the encodings of SRC for the codings in TODO (a bit set) into
 * PROD[c], with RECIPE[c]; for a streamed source also hash the source on
 * the way if it is not hashed yet (SRC->hashed is then set).  For a streamed
 * source a temporary file is created beside each sibling (not in a dry
 * run).  Returns KILN_OK, or a failure with *r filled (what failed, about
 * which sibling); products made before a failure stay in PROD for the
 * caller to discard.  Worker W's encoder states are used.
 */
kiln_status kiln_produce(struct kiln_tree *t, struct worker *w, struct kiln_source *src,
			 unsigned todo, const char recipe[][KILN_RECIPE_MAX],
			 struct kiln_product prod[], struct kiln_report *r);

/* Decode P with coding C's independent decoder and compare with SRC. */
kiln_status kiln_product_verify(const struct kiln_product *p, kiln_coding c,
				const struct kiln_source *src);

/* P's SHA-256 into p->sha256 (computed on the way for a streamed one). */
kiln_status kiln_product_hash(struct kiln_product *p);

/* Put P in place as the sibling PATH of SRC (source metadata, atomic; a
 * read-only file there is refused unless p->own_there). */
kiln_status kiln_product_commit(struct kiln_tree *t, struct kiln_product *p, const char *path,
				const struct kiln_source *src, struct kiln_error *err);

/* Free P's bytes or remove its temporary file.  Safe to call twice. */
void kiln_product_discard(struct kiln_product *p);

#endif
