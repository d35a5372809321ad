/*
 * codec_gzip.c - the gzip content-coding (RFC 1952).
 *
 * Encoding is libdeflate's whole-buffer gzip encoder, whose header is fixed:
 * MTIME 0, no file name, XFL from the level, OS 255 ("unknown").  That makes
 * the output a function of the bytes and the level alone, byte-identical to
 * `libdeflate-gzip -LEVEL` of the same libdeflate.  Verification uses zlib's
 * inflate, which checks the CRC-32 and ISIZE trailer.
 *
 * libdeflate has no streaming interface, so a source too large to hold is
 * encoded with zlib's deflate instead, at level min(level, 9) with the
 * largest window (32 KiB, the format's limit) and memLevel 9, and the same
 * header fields (MTIME 0, OS 255).  zlib -9 output is typically 4-12% larger
 * than libdeflate -12's (12% on the JSON lines of tests/e2e/stream.sh;
 * GNU gzip -9, a similar encoder, is 4.5% larger on the benchmark corpus).
 *
 * With zopfli (the coding's extra setting: its iterations), a file held in
 * memory is also encoded by zopfli, whose deflate stream is about 3-5%
 * smaller than libdeflate level 12's and takes about ten times as long;
 * kiln keeps whichever of the two gzip members is smaller, libdeflate's on a
 * tie, so zopfli never makes a .gz larger.  zopfli's deflate stream is
 * wrapped here in the same header as libdeflate's (MTIME 0, OS 255), with
 * zlib's CRC-32.  zopfli is fed its master blocks one at a time, as its own
 * ZopfliDeflate() does, so the bytes are the same and a cancel is seen
 * between blocks.  (zopfli, like brotli 1.0, exits when an allocation
 * fails; unlike brotli's, its allocator cannot be replaced.)  Streamed
 * files keep zlib.
 */
#include "codec.h"
#include "source.h"

#include <libdeflate.h>
#include <zlib.h>
#include <zopfli/deflate.h>
#include <zopfli/util.h>
#include <zopfli/zopfli.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *libdeflate_version(void)
{
	return LIBDEFLATE_VERSION_STRING; /* the headers kiln was built with */
}

static const char *zlib_runtime_version(void)
{
	return zlibVersion();
}

#ifndef KILN_ZOPFLI_VERSION
#define KILN_ZOPFLI_VERSION "unknown"
#endif

/* zopfli has no version call: the build reads it off the library. */
static const char *zopfli_version(void)
{
	return KILN_ZOPFLI_VERSION;
}

static void gzip_recipe(int level, int extra, bool streamed, char out[KILN_RECIPE_MAX])
{
	if (streamed)
		snprintf(out, KILN_RECIPE_MAX, "zlib-%s-%d", zlib_runtime_version(), level > 9 ? 9 : level);
	else if (extra)
		snprintf(out, KILN_RECIPE_MAX, "libdeflate-%s-%d+zopfli-%s-i%d-s0", libdeflate_version(),
			 level, zopfli_version(), extra);
	else
		snprintf(out, KILN_RECIPE_MAX, "libdeflate-%s-%d", libdeflate_version(), level);
}

struct gz_state {
	struct libdeflate_compressor *ld;
	int iterations; /* zopfli's; 0: no zopfli */
};

static void *gzip_state_new(int level, int extra)
{
	struct gz_state *s = malloc(sizeof(*s));

	if (s && !(s->ld = libdeflate_alloc_compressor(level))) {
		free(s);
		return NULL;
	}
	if (s)
		s->iterations = extra;
	return s;
}

static void gzip_state_free(void *state)
{
	struct gz_state *s = state;

	if (s)
		libdeflate_free_compressor(s->ld);
	free(s);
}

static size_t gzip_bound(size_t in_len)
{
	/* libdeflate needs room beyond the final size while it writes, so give
	 * it its own bound rather than the size we would keep */
	return libdeflate_gzip_compress_bound(NULL, in_len);
}

/* zopfli's deflate stream of IN[0..len) into *Z (malloc'ed, *ZLEN bytes),
 * master block by master block, as ZopfliDeflate() cuts them. */
static kiln_status zopfli_deflate(int iterations, const uint8_t *in, size_t len, uint8_t **z,
				  size_t *zlen, const struct kiln_encode_ctl *ctl)
{
	ZopfliOptions zo;
	unsigned char bp = 0;
	size_t i = 0;

	ZopfliInitOptions(&zo);
	zo.numiterations = iterations;
	/* zopfli's default stops at 15 blocks per master block; without the
	 * limit large files split where their content changes: on npm
	 * packages (docs/codings.md, "Codings") 0.9913 of libdeflate -12's bytes
	 * instead of 0.9966, a larger gain than 60 iterations instead of 15
	 * bring, at the cost of the split search alone */
	zo.blocksplittingmax = 0;
	*z = NULL;
	*zlen = 0;
	do {
		bool last = i + ZOPFLI_MASTER_BLOCK_SIZE >= len;
		size_t size = last ? len - i : ZOPFLI_MASTER_BLOCK_SIZE;
		if (!kiln_encode_step(ctl, 0)) {
			free(*z);
			*z = NULL;
			return KILN_ERR_CANCELLED;
		}
		ZopfliDeflatePart(&zo, 2, last, in, i, i + size, &bp, z, zlen);
		i += size;
		kiln_encode_step(ctl, size); /* progress; a cancel is seen above */
	} while (i < len);
	return KILN_OK;
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	uLong crc = crc32(0, Z_NULL, 0);

	while (n > 0) { /* zlib counts in uInt */
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = crc32(crc, p, k);
		p += k;
		n -= k;
	}
	return (uint32_t)crc;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Replace OUT's gzip member (*out_len bytes) with zopfli's if that is
 * strictly smaller. */
static kiln_status try_zopfli(int iterations, const uint8_t *in, size_t in_len, uint8_t *out,
			      size_t *out_len, const struct kiln_encode_ctl *ctl)
{
	/* RFC 1952: ID1 ID2 CM=8 FLG=0 MTIME=0 XFL=2 (slowest) OS=255 */
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255 };
	uint8_t *z;
	size_t zlen;
	kiln_status s = zopfli_deflate(iterations, in, in_len, &z, &zlen, ctl);

	if (s != KILN_OK)
		return s;
	if (sizeof(header) + zlen + 8 < *out_len) {
		memcpy(out, header, sizeof(header));
		memcpy(out + sizeof(header), z, zlen);
		put_le32(out + sizeof(header) + zlen, crc32_of(in, in_len));
		put_le32(out + sizeof(header) + zlen + 4, (uint32_t)in_len);
		*out_len = sizeof(header) + zlen + 8;
	}
	free(z);
	return KILN_OK;
}

static kiln_status gzip_encode(void *state, const uint8_t *in, size_t in_len, uint8_t *out,
			       size_t cap, size_t *out_len, const struct kiln_encode_ctl *ctl)
{
	struct gz_state *s = state;

	/* libdeflate encodes in one call: a cancel waits for it */
	if (!kiln_encode_step(ctl, 0))
		return KILN_ERR_CANCELLED;
	*out_len = cap ? libdeflate_gzip_compress(s->ld, in, in_len, out, cap) : 0;
	if (*out_len && s->iterations) /* zopfli's blocks report the progress */
		return try_zopfli(s->iterations, in, in_len, out, out_len, ctl);
	kiln_encode_step(ctl, in_len);
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

struct gz_stream {
	z_stream zs;
	gz_header hdr; /* read by deflate() until the header is out */
	uint8_t out[65536];
};

static void *gzip_stream_new(int level, int extra, uint64_t size)
{
	struct gz_stream *s = calloc(1, sizeof(*s));

	(void)extra; /* streamed files keep zlib */
	(void)size;
	if (!s)
		return NULL;
	if (deflateInit2(&s->zs, level > 9 ? 9 : level, Z_DEFLATED,
			 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s);
		return NULL;
	}
	s->hdr.os = 255; /* unknown, as libdeflate writes; MTIME stays 0 */
	deflateSetHeader(&s->zs, &s->hdr);
	return s;
}

static void gzip_stream_free(void *stream)
{
	struct gz_stream *s = stream;

	if (s)
		deflateEnd(&s->zs);
	free(s);
}

static kiln_status gzip_stream_write(void *stream, const uint8_t *in, size_t len, bool last,
				     kiln_sink sink, void *sink_arg)
{
	struct gz_stream *s = stream;

	while (len > 0 || last) {
		/* zlib counts in uInt: feed at most 1 GiB at a time */
		size_t piece = len > (1u << 30) ? (1u << 30) : len;
		bool end = last && piece == len;
		int ret;

		s->zs.next_in = (Bytef *)in;
		s->zs.avail_in = (uInt)piece;
		do {
			s->zs.next_out = s->out;
			s->zs.avail_out = sizeof(s->out);
			ret = deflate(&s->zs, end ? Z_FINISH : Z_NO_FLUSH);
			if (ret == Z_STREAM_ERROR)
				return KILN_ERR_ENCODER;
			size_t got = sizeof(s->out) - s->zs.avail_out;
			kiln_status st = got ? sink(sink_arg, s->out, got) : KILN_OK;
			if (st != KILN_OK)
				return st;
		} while (end ? ret != Z_STREAM_END : s->zs.avail_out == 0);
		in += piece;
		len -= piece;
		if (end)
			break;
	}
	return KILN_OK;
}

static kiln_status gzip_verify_fd(int enc_fd, uint64_t enc_len, int src_fd, uint64_t src_len)
{
	struct kiln_src_cmp cmp = { .fd = src_fd, .len = src_len };
	uint8_t in[65536], out[65536];
	uint64_t off = 0;
	kiln_status st = KILN_ERR_VERIFY;
	z_stream zs;
	int ret = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return KILN_ERR_NOMEM;
	while (ret != Z_STREAM_END) {
		if (zs.avail_in == 0 && off < enc_len) {
			size_t k = enc_len - off < sizeof(in) ? (size_t)(enc_len - off) : sizeof(in);
			if (kiln_pread_full(enc_fd, in, k, off) != (ssize_t)k) {
				st = KILN_ERR_IO;
				goto out;
			}
			zs.next_in = in;
			zs.avail_in = (uInt)k;
			off += k;
		}
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		ret = inflate(&zs, Z_NO_FLUSH);
		size_t got = sizeof(out) - zs.avail_out;
		if (!kiln_src_cmp_next(&cmp, out, got)) {
			st = cmp.io_error ? KILN_ERR_IO : KILN_ERR_VERIFY;
			goto out;
		}
		if (ret != Z_OK && ret != Z_STREAM_END && !(ret == Z_BUF_ERROR && got))
			goto out;
	}
	/* one member, nothing after it, and all of the source */
	if (zs.avail_in == 0 && off == enc_len && cmp.off == src_len)
		st = KILN_OK;
out:
	inflateEnd(&zs);
	return st;
}

static const struct kiln_codec_library gzip_libraries[] = {
	{ "libdeflate", libdeflate_version },
	{ "zlib", zlib_runtime_version },
	{ "zopfli", zopfli_version },
	{ NULL, NULL },
};

const struct kiln_codec kiln_codec_gzip = {
	.info = {
		.name = "gzip",
		.suffix = ".gz",
		.word = "gzip",
		.level_word = "level",
		.level_min = 1,
		.level_max = 12,
		.level_default = 12,
		.level_best = 12,
		.default_on = true,
		.summary = "gzip (RFC 1952): libdeflate, or zlib for streamed files",
		.extra_word = "zopfli",
		.extra_param = "iterations",
		.extra_summary = "also try zopfli, keep the smaller .gz (about 10x slower)",
		.extra_min = 1,
		.extra_max = 1000,
		.extra_default = 15,
		.extra_best = 15,
	},
	.libraries = gzip_libraries,
	.http_alias = "x-gzip",
	.nginx_static = "gzip_static",
	.nginx_static_own = true,
	.recipe = gzip_recipe,
	.state_new = gzip_state_new,
	.state_free = gzip_state_free,
	.bound = gzip_bound,
	.encode = gzip_encode,
	.verify = gzip_verify,
	.stream_new = gzip_stream_new,
	.stream_write = gzip_stream_write,
	.stream_free = gzip_stream_free,
	.verify_fd = gzip_verify_fd,
};
