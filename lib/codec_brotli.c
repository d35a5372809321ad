/*
 * codec_brotli.c - the br content-coding (RFC 7932).
 *
 * libbrotlienc's streaming encoder, driven over the whole buffer with a size
 * hint and a window just large enough for the file (a smaller window costs
 * nothing in ratio for a file that fits and lets decoders allocate less).
 * Encoder state cannot be reset in brotli 1.0, so a fresh instance is made
 * per file; the per-thread state only carries the settings.  Verification
 * uses libbrotlidec's streaming decoder, compared chunk by chunk.
 *
 * A source too large to hold is fed through the same streaming encoder in
 * chunks, with the largest standard window (16 MiB, RFC 7932) and the same
 * quality; brotli's window stops at 16 MiB either way, so this costs
 * nothing in ratio against encoding the whole buffer.
 *
 * libbrotlienc 1.0 calls exit() when an allocation fails, which would kill
 * kiln mid-run with temporary files on disk.  The encoder therefore gets an
 * allocator that, on failure, jumps back to br_encode() instead: that file
 * fails with KILN_ERR_NOMEM, the encoder's partial state is abandoned (a
 * leak, on a path that only runs out of memory), and the run goes on.
 */
#include "codec.h"
#include "source.h"

#include <brotli/decode.h>
#include <brotli/encode.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct br_state {
	int quality;
};

static const char *brotli_version(void);

static void br_recipe(int level, int extra, bool streamed, char out[KILN_RECIPE_MAX])
{
	/* the window follows from the source's size, the same either way */
	(void)extra;
	(void)streamed;
	snprintf(out, KILN_RECIPE_MAX, "brotli-%s-%d", brotli_version(), level);
}

static int window_bits(size_t len)
{
	int w = BROTLI_MIN_WINDOW_BITS;

	while (w < BROTLI_MAX_WINDOW_BITS && ((size_t)1 << w) - 16 < len)
		w++;
	return w;
}

static void *br_state_new(int level, int extra)
{
	struct br_state *s = malloc(sizeof(*s));

	(void)extra;
	if (s)
		s->quality = level;
	return s;
}

static void br_state_free(void *state)
{
	free(state);
}

static size_t br_bound(size_t in_len)
{
	return BrotliEncoderMaxCompressedSize(in_len) + 16; /* 0 means overflow */
}

struct br_oom {
	jmp_buf back;
};

static void *br_alloc(void *opaque, size_t n)
{
	void *p = malloc(n);

	if (!p)
		longjmp(((struct br_oom *)opaque)->back, 1);
	return p;
}

static void br_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

/* Quality, window and size hint for a source of SIZE bytes: the same for a
 * whole buffer and a stream, so both give the same bytes. */
static void br_set_parameters(BrotliEncoderState *enc, int quality, uint64_t size)
{
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_QUALITY, (uint32_t)quality);
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_LGWIN,
				  (uint32_t)window_bits(size > SIZE_MAX ? SIZE_MAX
										: (size_t)size));
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_SIZE_HINT,
				  size > (1u << 30) ? (1u << 30) : (uint32_t)size);
}

static kiln_status br_encode_with(struct br_oom *oom, const struct br_state *s,
				  const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
				  size_t *out_len, const struct kiln_encode_ctl *ctl)
{
	BrotliEncoderState *enc;
	size_t avail_out = cap, total = 0, fed = 0;
	uint8_t *next_out = out;
	kiln_status st = KILN_OK;

	enc = BrotliEncoderCreateInstance(br_alloc, br_free, oom);
	if (!enc)
		return KILN_ERR_NOMEM;
	br_set_parameters(enc, s->quality, in_len);
	/* fed a piece at a time, as a streamed source is (at qualities 0 and 1
	 * brotli compresses each piece as it comes, so the cut shows in the
	 * output), and so that a cancel is seen within about a second */
	while (!BrotliEncoderIsFinished(enc)) {
		size_t piece = in_len - fed < KILN_CODEC_PIECE ? in_len - fed : KILN_CODEC_PIECE;
		size_t avail_in = piece;
		const uint8_t *next_in = in + fed;
		bool last = fed + piece == in_len;
		if (!kiln_encode_step(ctl, 0)) {
			st = KILN_ERR_CANCELLED;
			goto out;
		}
		if (avail_out == 0)
			goto out; /* does not fit */
		if (!BrotliEncoderCompressStream(enc, last ? BROTLI_OPERATION_FINISH
							   : BROTLI_OPERATION_PROCESS,
						 &avail_in, &next_in, &avail_out, &next_out, &total)) {
			st = KILN_ERR_ENCODER;
			goto out;
		}
		fed += piece - avail_in;
		kiln_encode_step(ctl, piece - avail_in); /* progress */
	}
	*out_len = total;
out:
	BrotliEncoderDestroyInstance(enc);
	return st;
}

static kiln_status br_encode(void *state, const uint8_t *in, size_t in_len, uint8_t *out,
			     size_t cap, size_t *out_len, const struct kiln_encode_ctl *ctl)
{
	struct br_oom oom;

	*out_len = 0;
	if (setjmp(oom.back) != 0)
		return KILN_ERR_NOMEM; /* out of memory inside the encoder */
	return br_encode_with(&oom, state, in, in_len, out, cap, out_len, ctl);
}

static kiln_status br_verify(const uint8_t *enc, size_t enc_len,
			     const uint8_t *src, size_t src_len)
{
	BrotliDecoderState *dec = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	uint8_t buf[65536];
	size_t avail_in = enc_len, done = 0;
	const uint8_t *next_in = enc;
	kiln_status st = KILN_ERR_VERIFY;
	BrotliDecoderResult r;

	if (!dec)
		return KILN_ERR_NOMEM;
	do {
		uint8_t *next_out = buf;
		size_t avail_out = sizeof(buf);
		r = BrotliDecoderDecompressStream(dec, &avail_in, &next_in, &avail_out,
						  &next_out, NULL);
		size_t got = sizeof(buf) - avail_out;
		if (got > src_len - done || memcmp(buf, src + done, got) != 0)
			goto out;
		done += got;
	} while (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT);
	if (r == BROTLI_DECODER_RESULT_SUCCESS && avail_in == 0 && done == src_len)
		st = KILN_OK;
out:
	BrotliDecoderDestroyInstance(dec);
	return st;
}

struct br_stream {
	struct br_oom oom;
	BrotliEncoderState *enc;
	bool broken; /* the encoder ran out of memory: abandoned */
};

/* Create S's encoder; false when out of memory (creating an instance
 * allocates through br_alloc, which may jump back here). */
static bool br_stream_start(struct br_stream *s, int quality, uint64_t size)
{
	if (setjmp(s->oom.back) != 0)
		return false;
	s->enc = BrotliEncoderCreateInstance(br_alloc, br_free, &s->oom);
	if (!s->enc)
		return false;
	br_set_parameters(s->enc, quality, size);
	return true;
}

static void *br_stream_new(int level, int extra, uint64_t size)
{
	struct br_stream *s = calloc(1, sizeof(*s));

	(void)extra;
	if (s && !br_stream_start(s, level, size)) {
		free(s);
		s = NULL;
	}
	return s;
}

static void br_stream_free(void *stream)
{
	struct br_stream *s = stream;

	if (s && !s->broken)
		BrotliEncoderDestroyInstance(s->enc);
	free(s);
}

static kiln_status br_stream_feed(struct br_stream *s, const uint8_t *in, size_t len, bool last,
				  kiln_sink sink, void *sink_arg)
{
	size_t avail_in = len;
	const uint8_t *next_in = in;

	for (;;) {
		size_t avail_out = 0;
		if (!BrotliEncoderCompressStream(s->enc,
						 last ? BROTLI_OPERATION_FINISH
						      : BROTLI_OPERATION_PROCESS,
						 &avail_in, &next_in, &avail_out, NULL, NULL))
			return KILN_ERR_ENCODER;
		while (BrotliEncoderHasMoreOutput(s->enc)) {
			size_t n = 0;
			const uint8_t *out = BrotliEncoderTakeOutput(s->enc, &n);
			kiln_status st = n ? sink(sink_arg, out, n) : KILN_OK;
			if (st != KILN_OK)
				return st;
		}
		if (last ? BrotliEncoderIsFinished(s->enc) : avail_in == 0)
			return KILN_OK;
	}
}

static kiln_status br_stream_write(void *stream, const uint8_t *in, size_t len, bool last,
				   kiln_sink sink, void *sink_arg)
{
	struct br_stream *s = stream;

	if (s->broken)
		return KILN_ERR_NOMEM;
	if (setjmp(s->oom.back) != 0) {
		s->broken = true; /* out of memory inside the encoder */
		return KILN_ERR_NOMEM;
	}
	return br_stream_feed(s, in, len, last, sink, sink_arg);
}

static kiln_status br_verify_fd(int enc_fd, uint64_t enc_len, int src_fd, uint64_t src_len)
{
	struct kiln_src_cmp cmp = { .fd = src_fd, .len = src_len };
	BrotliDecoderState *dec = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	uint8_t in[65536], out[65536];
	const uint8_t *next_in = in;
	size_t avail_in = 0;
	uint64_t off = 0;
	kiln_status st = KILN_ERR_VERIFY;
	BrotliDecoderResult r;

	if (!dec)
		return KILN_ERR_NOMEM;
	do {
		uint8_t *next_out = out;
		size_t avail_out = sizeof(out);
		if (avail_in == 0 && off < enc_len) {
			size_t k = enc_len - off < sizeof(in) ? (size_t)(enc_len - off) : sizeof(in);
			if (kiln_pread_full(enc_fd, in, k, off) != (ssize_t)k) {
				st = KILN_ERR_IO;
				goto out;
			}
			next_in = in;
			avail_in = k;
			off += k;
		}
		r = BrotliDecoderDecompressStream(dec, &avail_in, &next_in, &avail_out,
						  &next_out, NULL);
		if (!kiln_src_cmp_next(&cmp, out, sizeof(out) - avail_out)) {
			st = cmp.io_error ? KILN_ERR_IO : KILN_ERR_VERIFY;
			goto out;
		}
	} while (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT ||
		 (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && off < enc_len));
	if (r == BROTLI_DECODER_RESULT_SUCCESS && avail_in == 0 && off == enc_len &&
	    cmp.off == src_len)
		st = KILN_OK;
out:
	BrotliDecoderDestroyInstance(dec);
	return st;
}

static char br_version[32];
static pthread_once_t br_version_once = PTHREAD_ONCE_INIT;

static void br_version_format(void)
{
	/* BrotliEncoderVersion() packs the version as 0xMMMmmmPPP */
	uint32_t v = BrotliEncoderVersion();

	snprintf(br_version, sizeof(br_version), "%u.%u.%u", v >> 24,
		 (v >> 12) & 0xfff, v & 0xfff);
}

static const char *brotli_version(void)
{
	pthread_once(&br_version_once, br_version_format);
	return br_version;
}

static const struct kiln_codec_library br_libraries[] = {
	{ "brotli", brotli_version },
	{ NULL, NULL },
};

const struct kiln_codec kiln_codec_brotli = {
	.info = {
		.name = "br",
		.suffix = ".br",
		.word = "brotli",
		.level_word = "quality",
		.level_min = 0,
		.level_max = 11,
		.level_default = 11,
		.level_best = 11,
		.default_on = false,
		.summary = "brotli (RFC 7932): libbrotlienc, window sized to the file",
	},
	.libraries = br_libraries,
	.http_alias = NULL,
	.nginx_static = "brotli_static",
	.nginx_static_own = false,
	.recipe = br_recipe,
	.state_new = br_state_new,
	.state_free = br_state_free,
	.bound = br_bound,
	.encode = br_encode,
	.verify = br_verify,
	.stream_new = br_stream_new,
	.stream_write = br_stream_write,
	.stream_free = br_stream_free,
	.verify_fd = br_verify_fd,
};
