/*
 * codec_zstd.c - the zstd content-coding (RFC 8878), with libzstd.
 *
 * HTTP limits the window: RFC 9659 (section 3) has a recipient of
 * "Content-Encoding: zstd" refuse frames whose window is over 8 MiB, and
 * browsers do.  So every frame kiln writes has the smallest window that
 * holds the whole file, but at most 8 MiB (window log 10..23), whatever the
 * level (levels 20-22 would ask for up to 27) and whatever the file's size,
 * streamed files included.  The verifier decodes with the same limit, so a
 * frame that broke it would fail --verify too.
 *
 * The bytes depend only on the source and the level: one frame, the content
 * size in its header (the size is pledged), a checksum, no dictionary ID,
 * single-threaded.  A whole buffer is fed to the streaming compressor in
 * KILN_CODEC_PIECE pieces, exactly as a streamed source is, so both paths
 * give the same bytes, and a cancel is seen between pieces.
 */
#include "codec.h"
#include "source.h"

#include <zstd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_HTTP_WINDOW_LOG 23 /* 8 MiB, RFC 9659 */

static const char *zstd_version(void)
{
	return ZSTD_versionString();
}

static void zstd_recipe(int level, int extra, bool streamed, char out[KILN_RECIPE_MAX])
{
	(void)extra;
	(void)streamed; /* one encoder, one cut of the input, either way */
	snprintf(out, KILN_RECIPE_MAX, "zstd-%s-%d-w%d", zstd_version(), level,
		 ZSTD_HTTP_WINDOW_LOG);
}

/* The window log for a source of SIZE bytes: the smallest window that
 * holds it, within 10 (zstd's least) and ZSTD_HTTP_WINDOW_LOG. */
static int window_log(uint64_t size)
{
	int w = 10;

	while (w < ZSTD_HTTP_WINDOW_LOG && ((uint64_t)1 << w) < size)
		w++;
	return w;
}

/* A compression context for a source of SIZE bytes at LEVEL, or NULL. */
static ZSTD_CCtx *cctx_for(ZSTD_CCtx *cctx, int level, uint64_t size)
{
	int wlog = window_log(size);

	if (!cctx && !(cctx = ZSTD_createCCtx()))
		return NULL;
	ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, size))) {
		ZSTD_freeCCtx(cctx);
		return NULL;
	}
	return cctx;
}

struct zstd_state {
	int level;
	ZSTD_CCtx *cctx; /* made on first use, reset per file */
};

static void *zstd_state_new(int level, int extra)
{
	struct zstd_state *s = calloc(1, sizeof(*s));

	(void)extra;
	if (s)
		s->level = level;
	return s;
}

static void zstd_state_free(void *state)
{
	struct zstd_state *s = state;

	if (s)
		ZSTD_freeCCtx(s->cctx);
	free(s);
}

static size_t zstd_bound(size_t in_len)
{
	return ZSTD_compressBound(in_len);
}

/* Feed IN[0..len) to CCTX as the whole source, LAST saying it ends there,
 * writing into OUT[*pos..cap).  KILN_OK, or KILN_ERR_ENCODER; sets *full
 * when the output did not fit. */
static kiln_status feed(ZSTD_CCtx *cctx, const uint8_t *in, size_t len, bool last, uint8_t *out,
			size_t cap, size_t *pos, bool *full)
{
	ZSTD_inBuffer ib = { in, len, 0 };
	ZSTD_outBuffer ob = { out, cap, *pos };
	size_t left;

	do {
		if (ob.pos == ob.size) {
			*full = true;
			break;
		}
		left = ZSTD_compressStream2(cctx, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return KILN_ERR_ENCODER;
	} while (last ? left != 0 : ib.pos < ib.size);
	*pos = ob.pos;
	return KILN_OK;
}

static kiln_status zstd_encode(void *state, const uint8_t *in, size_t in_len, uint8_t *out,
			       size_t cap, size_t *out_len, const struct kiln_encode_ctl *ctl)
{
	struct zstd_state *s = state;
	size_t fed = 0, pos = 0;
	bool full = false;

	*out_len = 0;
	if (!(s->cctx = cctx_for(s->cctx, s->level, in_len)))
		return KILN_ERR_NOMEM;
	do {
		size_t piece = in_len - fed < KILN_CODEC_PIECE ? in_len - fed : KILN_CODEC_PIECE;
		if (!kiln_encode_step(ctl, 0))
			return KILN_ERR_CANCELLED;
		if (feed(s->cctx, in + fed, piece, fed + piece == in_len, out, cap, &pos, &full) !=
		    KILN_OK)
			return KILN_ERR_ENCODER;
		if (full)
			return KILN_OK; /* did not fit */
		fed += piece;
		kiln_encode_step(ctl, piece); /* progress */
	} while (fed < in_len);
	*out_len = pos;
	return KILN_OK;
}

/* Decode with the HTTP window limit, handing each piece of output to CMP
 * (which returns false on a mismatch). */
struct zstd_dec {
	ZSTD_DCtx *dctx;
	bool done; /* a frame ended */
};

static bool dec_init(struct zstd_dec *d)
{
	d->done = false;
	d->dctx = ZSTD_createDCtx();
	return d->dctx && !ZSTD_isError(ZSTD_DCtx_setParameter(d->dctx, ZSTD_d_windowLogMax,
								ZSTD_HTTP_WINDOW_LOG));
}

/* Decode IN[0..len); each output piece goes to CMP(ARG, p, n).  Returns
 * KILN_OK while all is well, KILN_ERR_VERIFY on a bad stream, a mismatch or
 * anything after the end of the frame. */
static kiln_status dec_feed(struct zstd_dec *d, const uint8_t *in, size_t len,
			    bool (*cmp)(void *, const uint8_t *, size_t), void *arg)
{
	ZSTD_inBuffer ib = { in, len, 0 };
	uint8_t buf[65536];
	bool pending = false; /* the decoder may hold more output */

	while (ib.pos < ib.size || pending) {
		ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };
		size_t r;
		if (d->done)
			return KILN_ERR_VERIFY; /* a second frame, or trailing bytes */
		r = ZSTD_decompressStream(d->dctx, &ob, &ib);
		if (ZSTD_isError(r) || !cmp(arg, buf, ob.pos))
			return KILN_ERR_VERIFY;
		d->done = r == 0;
		pending = !d->done && ob.pos == ob.size;
	}
	return KILN_OK;
}

struct mem_cmp {
	const uint8_t *src;
	size_t len, done;
};

static bool mem_next(void *arg, const uint8_t *p, size_t n)
{
	struct mem_cmp *m = arg;

	if (n > m->len - m->done || memcmp(p, m->src + m->done, n) != 0)
		return false;
	m->done += n;
	return true;
}

static kiln_status zstd_verify(const uint8_t *enc, size_t enc_len, const uint8_t *src,
			       size_t src_len)
{
	struct mem_cmp m = { src, src_len, 0 };
	struct zstd_dec d;
	kiln_status st = KILN_ERR_NOMEM;

	if (dec_init(&d)) {
		st = dec_feed(&d, enc, enc_len, mem_next, &m);
		if (st == KILN_OK && !(d.done && m.done == src_len))
			st = KILN_ERR_VERIFY;
	}
	ZSTD_freeDCtx(d.dctx);
	return st;
}

static bool fd_next(void *arg, const uint8_t *p, size_t n)
{
	return kiln_src_cmp_next(arg, p, n);
}

static kiln_status zstd_verify_fd(int enc_fd, uint64_t enc_len, int src_fd, uint64_t src_len)
{
	struct kiln_src_cmp cmp = { .fd = src_fd, .len = src_len };
	uint8_t in[65536];
	uint64_t off = 0;
	struct zstd_dec d;
	kiln_status st = KILN_ERR_NOMEM;

	if (!dec_init(&d))
		goto out;
	st = KILN_OK;
	while (st == KILN_OK && off < enc_len) {
		size_t k = enc_len - off < sizeof(in) ? (size_t)(enc_len - off) : sizeof(in);
		if (kiln_pread_full(enc_fd, in, k, off) != (ssize_t)k) {
			st = KILN_ERR_IO;
			break;
		}
		off += k;
		st = dec_feed(&d, in, k, fd_next, &cmp);
		if (st == KILN_ERR_VERIFY && cmp.io_error)
			st = KILN_ERR_IO;
	}
	if (st == KILN_OK && !(d.done && cmp.off == src_len))
		st = KILN_ERR_VERIFY;
out:
	ZSTD_freeDCtx(d.dctx);
	return st;
}

struct zstd_stream {
	ZSTD_CCtx *cctx;
	uint8_t out[65536];
};

static void *zstd_stream_new(int level, int extra, uint64_t size)
{
	struct zstd_stream *s = calloc(1, sizeof(*s));

	(void)extra;
	if (s && !(s->cctx = cctx_for(NULL, level, size))) {
		free(s);
		s = NULL;
	}
	return s;
}

static void zstd_stream_free(void *stream)
{
	struct zstd_stream *s = stream;

	if (s)
		ZSTD_freeCCtx(s->cctx);
	free(s);
}

static kiln_status zstd_stream_write(void *stream, const uint8_t *in, size_t len, bool last,
				     kiln_sink sink, void *sink_arg)
{
	struct zstd_stream *s = stream;
	ZSTD_inBuffer ib = { in, len, 0 };
	size_t left;

	do {
		ZSTD_outBuffer ob = { s->out, sizeof(s->out), 0 };
		kiln_status st;
		left = ZSTD_compressStream2(s->cctx, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return KILN_ERR_ENCODER;
		st = ob.pos ? sink(sink_arg, s->out, ob.pos) : KILN_OK;
		if (st != KILN_OK)
			return st;
	} while (last ? left != 0 : ib.pos < ib.size);
	return KILN_OK;
}

static const struct kiln_codec_library zstd_libraries[] = {
	{ "zstd", zstd_version },
	{ NULL, NULL },
};

const struct kiln_codec kiln_codec_zstd = {
	.info = {
		.name = "zstd",
		.suffix = ".zst",
		.word = "zstd",
		.level_word = "level",
		.level_min = 1,
		.level_max = 22,
		.level_default = 19,
		.level_best = 19,
		.default_on = false,
		.summary = "zstd (RFC 8878): libzstd, window at most 8 MiB (RFC 9659)",
	},
	.libraries = zstd_libraries,
	.http_alias = NULL,
	.nginx_static = NULL,
	.nginx_static_own = false,
	.recipe = zstd_recipe,
	.state_new = zstd_state_new,
	.state_free = zstd_state_free,
	.bound = zstd_bound,
	.encode = zstd_encode,
	.verify = zstd_verify,
	.stream_new = zstd_stream_new,
	.stream_write = zstd_stream_write,
	.stream_free = zstd_stream_free,
	.verify_fd = zstd_verify_fd,
};
