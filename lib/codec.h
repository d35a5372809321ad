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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where a streaming encoder puts its output: called with each piece, in
 * order.  Anything but KILN_OK stops the encoder, which returns it. */
typedef kiln_status (*kiln_sink)(void *arg, const uint8_t *p, size_t n);

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

	/*
	 * The streaming encoder, for a source too large to hold in memory
	 * (kiln_options.stream_size).  stream_new() makes one for a source of
	 * SIZE bytes (NULL: out of memory); stream_write() feeds IN[0..len),
	 * LAST saying the source ends there, and hands all output produced so
	 * far to SINK; it returns KILN_OK, SINK's failure, KILN_ERR_NOMEM or
	 * KILN_ERR_ENCODER, after which the stream can only be freed.
	 * stream_free() may be called at any point.  Memory is the encoder's
	 * window and tables, independent of SIZE.  The output is a function of
	 * the bytes and the options alone, not of how they were split.  It may
	 * differ from encode()'s (see each codec for what it costs).
	 */
	void *(*stream_new)(const struct kiln_options *opt, uint64_t size);
	kiln_status (*stream_write)(void *stream, const uint8_t *in, size_t len, bool last,
				    kiln_sink sink, void *sink_arg);
	void (*stream_free)(void *stream);

	/*
	 * verify() for files: decode the ENC_LEN bytes of ENC_FD and compare them
	 * with the SRC_LEN bytes of SRC_FD, both read with pread(2) from offset
	 * 0 in small chunks (memory is independent of the sizes).  Returns as
	 * verify() does, or KILN_ERR_IO if a file cannot be read.  Thread-safe.
	 */
	kiln_status (*verify_fd)(int enc_fd, uint64_t enc_len, int src_fd, uint64_t src_len);
};

/* Reading a source back in order, to compare it with decoded bytes. */
struct kiln_src_cmp {
	int fd;
	uint64_t off, len;
	bool io_error; /* a read failed (rather than a mismatch) */
};

/* True if the next N bytes of the source (read from C->fd at C->off, which
 * then moves on) are P[0..n), and they lie within C->len. */
bool kiln_src_cmp_next(struct kiln_src_cmp *c, const uint8_t *p, size_t n);

/* Read up to N bytes of FD at OFF into BUF, retrying short reads; returns
 * the count (< N only at end of file) or -1. */
ssize_t kiln_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off);

extern const struct kiln_codec kiln_codec_gzip;
extern const struct kiln_codec kiln_codec_brotli;

/* Indexed by kiln_coding. */
extern const struct kiln_codec *const kiln_codecs[KILN_NCODINGS];

/* The brotli window (lgwin, 10..24) used for a source of LEN bytes: the
 * smallest whose window, (1 << lgwin) - 16 bytes (RFC 7932 section 9.1),
 * holds the whole source. */
int kiln_brotli_window_bits(size_t len);

#endif
