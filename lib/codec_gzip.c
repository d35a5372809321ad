/*
 * codec_gzip.c - the gzip content-coding (RFC 1952).
 *
 * Encoding is libdeflate's whole-buffer gzip encoder, whose header is fixed:
 * MTIME 0, no file name, XFL from the level, OS 255 ("unknown").  That makes
 * the output a function of the bytes and the level alone, byte-identical to
 * `libdeflate-gzip -LEVEL` of the same libdeflate.  Verification uses zlib's
 * inflate, which checks the CRC-32 and ISIZE trailer.
 */
#include "codec.h"

#include <libdeflate.h>
#include <zlib.h>

#include <string.h>

static void *gzip_state_new(const struct kiln_options *opt)
{
	return libdeflate_alloc_compressor(opt->gzip_level);
}

static void gzip_state_free(void *state)
{
	libdeflate_free_compressor(state);
}

static size_t gzip_bound(size_t in_len)
{
	/* libdeflate needs room beyond the final size while it writes, so give
	 * it its own bound rather than the size we would keep */
	return libdeflate_gzip_compress_bound(NULL, in_len);
}

static kiln_status gzip_encode(void *state, const uint8_t *in, size_t in_len,
			       uint8_t *out, size_t cap, size_t *out_len)
{
	*out_len = cap ? libdeflate_gzip_compress(state, in, in_len, out, cap) : 0;
	return KILN_OK;
}

static kiln_status gzip_verify(const uint8_t *enc, size_t enc_len,
			       const uint8_t *src, size_t src_len)
{
	z_stream zs;
	uint8_t buf[65536];
	size_t done = 0;
	kiln_status st = KILN_ERR_VERIFY;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) /* gzip wrapper only */
		return KILN_ERR_NOMEM;
	zs.next_in = (Bytef *)enc;
	for (;;) {
		/* zlib counts in uInt: feed at most 1 GiB at a time */
		size_t left = enc_len - (size_t)((const uint8_t *)zs.next_in - enc);
		zs.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		ret = inflate(&zs, Z_NO_FLUSH);
		size_t got = sizeof(buf) - zs.avail_out;
		if (got > src_len - done || memcmp(buf, src + done, got) != 0)
			goto out;
		done += got;
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK && !(ret == Z_BUF_ERROR && got))
			goto out;
	}
	/* one member, nothing after it, and all of the source */
	if (zs.avail_in == 0 && (const uint8_t *)zs.next_in == enc + enc_len &&
	    done == src_len)
		st = KILN_OK;
out:
	inflateEnd(&zs);
	return st;
}

const struct kiln_codec kiln_codec_gzip = {
	.coding = KILN_CODING_GZIP,
	.name = "gzip",
	.suffix = ".gz",
	.state_new = gzip_state_new,
	.state_free = gzip_state_free,
	.bound = gzip_bound,
	.encode = gzip_encode,
	.verify = gzip_verify,
};

const char *kiln_libdeflate_version(void)
{
	return LIBDEFLATE_VERSION_STRING;
}

const char *kiln_zlib_version(void)
{
	return zlibVersion();
}
