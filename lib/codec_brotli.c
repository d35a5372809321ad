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
 * libbrotlienc 1.0 calls exit() when an allocation fails, which would kill
 * kiln mid-run with temporary files on disk.  The encoder therefore gets an
 * allocator that, on failure, jumps back to br_encode() instead: that file
 * fails with KILN_ERR_NOMEM, the encoder's partial state is abandoned (a
 * leak, on a path that only runs out of memory), and the run goes on.
 */
#include "codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct br_state {
	int quality;
};

int kiln_brotli_window_bits(size_t len)
{
	int w = BROTLI_MIN_WINDOW_BITS;

	while (w < BROTLI_MAX_WINDOW_BITS && ((size_t)1 << w) - 16 < len)
		w++;
	return w;
}

static void *br_state_new(const struct kiln_options *opt)
{
	struct br_state *s = malloc(sizeof(*s));

	if (s)
		s->quality = opt->brotli_quality;
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

static kiln_status br_encode_with(struct br_oom *oom, const struct br_state *s,
				  const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
				  size_t *out_len)
{
	BrotliEncoderState *enc;
	size_t avail_in = in_len, avail_out = cap, total = 0;
	const uint8_t *next_in = in;
	uint8_t *next_out = out;
	kiln_status st = KILN_OK;

	enc = BrotliEncoderCreateInstance(br_alloc, br_free, oom);
	if (!enc)
		return KILN_ERR_NOMEM;
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_QUALITY, (uint32_t)s->quality);
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_LGWIN,
				  (uint32_t)kiln_brotli_window_bits(in_len));
	BrotliEncoderSetParameter(enc, BROTLI_PARAM_SIZE_HINT,
				  in_len > (1u << 30) ? (1u << 30) : (uint32_t)in_len);
	while (!BrotliEncoderIsFinished(enc)) {
		if (avail_out == 0)
			goto out; /* does not fit */
		if (!BrotliEncoderCompressStream(enc, BROTLI_OPERATION_FINISH, &avail_in,
						 &next_in, &avail_out, &next_out, &total)) {
			st = KILN_ERR_ENCODER;
			goto out;
		}
	}
	*out_len = total;
out:
	BrotliEncoderDestroyInstance(enc);
	return st;
}

static kiln_status br_encode(void *state, const uint8_t *in, size_t in_len,
			     uint8_t *out, size_t cap, size_t *out_len)
{
	struct br_oom oom;

	*out_len = 0;
	if (setjmp(oom.back) != 0)
		return KILN_ERR_NOMEM; /* out of memory inside the encoder */
	return br_encode_with(&oom, state, in, in_len, out, cap, out_len);
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

const struct kiln_codec kiln_codec_brotli = {
	.coding = KILN_CODING_BR,
	.name = "br",
	.suffix = ".br",
	.state_new = br_state_new,
	.state_free = br_state_free,
	.bound = br_bound,
	.encode = br_encode,
	.verify = br_verify,
};

static char br_version[32];
static pthread_once_t br_version_once = PTHREAD_ONCE_INIT;

static void br_version_format(void)
{
	/* BrotliEncoderVersion() packs the version as 0xMMMmmmPPP */
	uint32_t v = BrotliEncoderVersion();

	snprintf(br_version, sizeof(br_version), "%u.%u.%u", v >> 24,
		 (v >> 12) & 0xfff, v & 0xfff);
}

const char *kiln_brotli_version(void)
{
	pthread_once(&br_version_once, br_version_format);
	return br_version;
}
