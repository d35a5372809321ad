/*
 * codec.h - the interface every content-coding implements.
 *
 * A codec turns a whole source buffer into its encoded form, and checks an
 * encoded buffer against its source with a decoder that shares no code with
 * the encoder.  Adding a content-coding means one new codec_*.c file and one
 * entry in kiln_codecs[] (codec.c); nothing else knows a codec by name.
 */
#ifndef KILN_CODEC_H
#define KILN_CODEC_H

#include "kiln.h"

#include <stddef.h>
#include <stdint.h>

struct kiln_codec {
	kiln_coding coding;
	const char *name;   /* HTTP content-coding token */
	const char *suffix; /* sibling suffix, with the dot */

	/*
	 * Per-thread encoder state for the given options, reused for every file
	 * a worker encodes (a level-12 libdeflate compressor is expensive to
	 * allocate).  Returns NULL when out of memory.  One state is used by one
	 * thread at a time.
	 */
	void *(*state_new)(const struct kiln_options *opt);
	void (*state_free)(void *state);

	/* Bytes of output room that encode() needs for IN_LEN bytes of input:
	 * the format's worst case plus whatever slack the encoder wants. */
	size_t (*bound)(size_t in_len);

	/*
	 * Encode IN[0..in_len) into OUT, which has room for CAP bytes (CAP at
	 * least bound(in_len)).  Returns KILN_OK with *out_len set; KILN_OK with
	 * *out_len == 0 if it did not fit after all; or KILN_ERR_NOMEM /
	 * KILN_ERR_ENCODER.  The output depends only on the input and the
	 * options the state was made with, never on CAP.
	 */
	kiln_status (*encode)(void *state, const uint8_t *in, size_t in_len,
			      uint8_t *out, size_t cap, size_t *out_len);

	/*
	 * Decode ENC[0..enc_len) with an independent decoder and compare it with
	 * SRC[0..src_len).  KILN_OK if it is one complete, valid stream that
	 * decodes to exactly SRC; KILN_ERR_VERIFY otherwise; KILN_ERR_NOMEM.
	 * Thread-safe (no shared state).
	 */
	kiln_status (*verify)(const uint8_t *enc, size_t enc_len,
			      const uint8_t *src, size_t src_len);
};

extern const struct kiln_codec kiln_codec_gzip;
extern const struct kiln_codec kiln_codec_brotli;

/* Indexed by kiln_coding. */
extern const struct kiln_codec *const kiln_codecs[KILN_NCODINGS];

/* The brotli window (lgwin, 10..24) used for a source of LEN bytes: the
 * smallest whose window, (1 << lgwin) - 16 bytes (RFC 7932 section 9.1),
 * holds the whole source. */
int kiln_brotli_window_bits(size_t len);

#endif
