/*
 * codec_dcz.c - the dcz content-coding (RFC 9842, Compression Dictionary
 * Transport): zstd with a dictionary, here the previous release's version
 * of the same file, with libzstd.
 *
 * A dcz body is an 8-byte header (a zstd skippable frame's magic number
 * 0x184D2A5E and length 32, little-endian: 5E 2A 4D 18 20 00 00 00), the
 * 32-byte SHA-256 of the dictionary, then one zstd frame whose encoder was
 * given the whole dictionary as a raw-content prefix.  A client decodes it
 * only with the dictionary whose digest the header names, so a body is
 * never decoded against the wrong one.
 *
 * The window.  RFC 9842 (section 4) lets a client refuse a window over
 * max(8 MiB, 1.25 x the dictionary's size), and over 128 MiB in any case;
 * Chromium does (a 16 MiB window with a 280 KB dictionary fails there), so
 * the window is the smallest that holds the dictionary and the file, cut
 * down to the largest power of two within that limit.  The verifier
 * decodes under the same limit.
 *
 * The bytes depend only on the dictionary, the source and the level: the
 * content size in the frame header, a checksum, no dictionary ID,
 * single-threaded.
 *
 * It is not a row of kiln_codecs[]: every row encodes a source alone,
 * while this needs a second input, chosen by dict.c; a sibling of it is
 * NAME.<16 hex digits of the dictionary's SHA-256>.dcz (codec.h).
 */
#include "codec.h"

#include <zstd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DCZ_LEVEL 19
#define DCZ_HEADER_LEN 40
#define DCZ_WINDOW_LOG_MIN 10
#define DCZ_WINDOW_LOG_MAX 27 /* 128 MiB */

static const uint8_t dcz_magic[8] = { 0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00 };

/* The largest window log a client must accept with a dictionary of
 * DICT_LEN bytes: 2^w <= max(8 MiB, 1.25 x DICT_LEN), w <= 27. */
static int window_log_limit(size_t dict_len)
{
	uint64_t limit = (uint64_t)dict_len + (uint64_t)dict_len / 4;
	int w = 23;

	if (limit < ((uint64_t)8 << 20))
		limit = (uint64_t)8 << 20;
	while (w < DCZ_WINDOW_LOG_MAX && ((uint64_t)1 << (w + 1)) <= limit)
		w++;
	return w;
}

/* The window log for a dictionary and a source: the smallest window that
 * holds both, within the limit. */
static int window_log(size_t dict_len, size_t src_len)
{
	uint64_t need = (uint64_t)dict_len + (uint64_t)src_len;
	int w = DCZ_WINDOW_LOG_MIN, max = window_log_limit(dict_len);

	while (w < max && ((uint64_t)1 << w) < need)
		w++;
	return w;
}

static void dcz_recipe(char out[KILN_RECIPE_MAX])
{
	snprintf(out, KILN_RECIPE_MAX, "dcz-zstd-%s-%d", ZSTD_versionString(), DCZ_LEVEL);
}

static kiln_status dcz_encode(const uint8_t *dict, size_t dict_len, const uint8_t dict_sha[32],
			      const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
	size_t cap = DCZ_HEADER_LEN + ZSTD_compressBound(in_len), left;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t *buf = malloc(cap);
	ZSTD_inBuffer ib = { in, in_len, 0 };
	ZSTD_outBuffer ob = { buf, cap, DCZ_HEADER_LEN };
	kiln_status st = KILN_ERR_NOMEM;

	*out = NULL;
	*out_len = 0;
	if (!cctx || !buf)
		goto out;
	st = KILN_ERR_ENCODER;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, DCZ_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog,
						window_log(dict_len, in_len))) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, in_len)) ||
	    ZSTD_isError(ZSTD_CCtx_refPrefix(cctx, dict, dict_len)))
		goto out;
	do {
		left = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
		if (ZSTD_isError(left) || (left != 0 && ob.pos == ob.size))
			goto out;
	} while (left != 0);
	memcpy(buf, dcz_magic, sizeof(dcz_magic));
	memcpy(buf + sizeof(dcz_magic), dict_sha, 32);
	*out = buf;
	*out_len = ob.pos;
	buf = NULL;
	st = KILN_OK;
out:
	free(buf);
	ZSTD_freeCCtx(cctx);
	return st;
}

static bool dcz_names_dictionary(const uint8_t *enc, size_t enc_len, const uint8_t dict_sha[32])
{
	return enc_len >= DCZ_HEADER_LEN && memcmp(enc, dcz_magic, sizeof(dcz_magic)) == 0 &&
	       memcmp(enc + sizeof(dcz_magic), dict_sha, 32) == 0;
}

/* libzstd's decoder, with the dictionary as prefix and the window limit:
 * exactly one frame, decoding to exactly SRC. */
static kiln_status dcz_verify(const uint8_t *enc, size_t enc_len, const uint8_t *dict,
			      size_t dict_len, const uint8_t dict_sha[32], const uint8_t *src,
			      size_t src_len)
{
	ZSTD_DCtx *dctx;
	ZSTD_inBuffer ib;
	uint8_t chunk[65536];
	size_t done = 0, r = 1;
	kiln_status st = KILN_ERR_VERIFY;

	if (!dcz_names_dictionary(enc, enc_len, dict_sha))
		return KILN_ERR_VERIFY;
	if (!(dctx = ZSTD_createDCtx()))
		return KILN_ERR_NOMEM;
	ib = (ZSTD_inBuffer){ enc + DCZ_HEADER_LEN, enc_len - DCZ_HEADER_LEN, 0 };
	if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax,
						window_log_limit(dict_len))) ||
	    ZSTD_isError(ZSTD_DCtx_refPrefix(dctx, dict, dict_len)))
		goto out;
	while (r != 0) {
		ZSTD_outBuffer ob = { chunk, sizeof(chunk), 0 };
		r = ZSTD_decompressStream(dctx, &ob, &ib);
		if (ZSTD_isError(r) || ob.pos > src_len - done ||
		    memcmp(chunk, src + done, ob.pos) != 0)
			goto out;
		done += ob.pos;
		if (r != 0 && ib.pos == ib.size && ob.pos < ob.size)
			goto out; /* truncated */
	}
	if (ib.pos == ib.size && done == src_len)
		st = KILN_OK; /* one frame, nothing after it, all of the source */
out:
	ZSTD_freeDCtx(dctx);
	return st;
}

const struct kiln_dict_codec kiln_codec_dcz = {
	.name = "dcz",
	.suffix = ".dcz",
	.header_len = DCZ_HEADER_LEN,
	.recipe = dcz_recipe,
	.encode = dcz_encode,
	.verify = dcz_verify,
	.names_dictionary = dcz_names_dictionary,
};
