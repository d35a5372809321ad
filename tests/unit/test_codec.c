/*
 * test_codec.c - each codec round-trips through an independent decoder,
 * encodes deterministically, writes the fixed gzip header RFC 1952 allows,
 * sizes the brotli window to the input, gives the same bytes streamed (in
 * any pieces) and whole where its recipe says so, and its verifier rejects
 * damaged, truncated and padded streams; the table is consistent.
 */
#include "codec.h"
#include "hash.h"

#include "check.h"
#include "decode.h"

#include <brotli/decode.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static const atomic_int not_cancelled;
static const struct kiln_encode_ctl go_on = { &not_cancelled, NULL, NULL };

static const struct kiln_codec *codec_named(const char *name)
{
	kiln_coding c = kiln_coding_find(name);

	CHECK(c >= 0);
	return c >= 0 ? kiln_codec(c) : NULL;
}

/* LEN bytes that every encoder gets through quickly, even at its slowest
 * level: a 20-byte cycle, flipped every 4 KiB. */
static uint8_t *make_periodic(size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)("abcdefghij0123456789"[i % 20] ^ ((i >> 12) & 1));
	return p;
}

static uint8_t *encode(const struct kiln_codec *codec, const struct kiln_options *opt,
		       const uint8_t *in, size_t len, size_t cap, size_t *out_len)
{
	kiln_coding c = kiln_coding_find(codec->info.name);
	void *state = codec->state_new(opt->level[c], opt->extra[c]);
	uint8_t *out = malloc(cap ? cap : 1);

	CHECK(state != NULL);
	CHECK(codec->encode(state, in, len, out, cap, out_len, &go_on) == KILN_OK);
	codec->state_free(state);
	return out;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static kiln_status to_buf(void *arg, const uint8_t *p, size_t n)
{
	struct buf *b = arg;

	if (b->n + n > b->cap) {
		b->cap = 2 * (b->n + n);
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return KILN_OK;
}

/* Stream IN through CODEC at LEVEL in pieces of PIECE bytes. */
static struct buf stream(const struct kiln_codec *codec, int level, const uint8_t *in,
			 size_t len, size_t piece)
{
	struct buf b = { 0 };
	void *s = codec->stream_new(level, 0, len);
	size_t off = 0;

	CHECK(s != NULL);
	do {
		size_t k = len - off < piece ? len - off : piece;
		CHECK(codec->stream_write(s, in + off, k, off + k == len, to_buf, &b) == KILN_OK);
		off += k;
	} while (off < len);
	codec->stream_free(s);
	return b;
}

static void test_gzip(void)
{
	const struct kiln_codec *gz = codec_named("gzip");
	struct kiln_options opt;
	size_t len = 200000, n, got;
	uint8_t *src = make_text(len, 7), *dec = malloc(len + 1);
	uint8_t *a, *b;

	kiln_options_init(&opt);
	a = encode(gz, &opt, src, len, gz->bound(len), &n);
	CHECK(n > 18 && n < len / 2);
	CHECK(zlib_gunzip(a, n, dec, len + 1, &got) == 0);
	CHECK(got == len && memcmp(dec, src, len) == 0);
	/* RFC 1952 header: magic, CM=8, FLG=0 (no name), MTIME=0, XFL=2 (max
	 * compression, for levels >= 8 as libdeflate sets it), OS=255 */
	CHECK(a[0] == 0x1f && a[1] == 0x8b && a[2] == 8 && a[3] == 0);
	CHECK(a[4] == 0 && a[5] == 0 && a[6] == 0 && a[7] == 0);
	CHECK(a[8] == 2 && a[9] == 255);
	/* trailer: ISIZE is the input length mod 2^32 */
	CHECK(a[n - 4] == (len & 0xff) && a[n - 3] == ((len >> 8) & 0xff) &&
	      a[n - 2] == ((len >> 16) & 0xff) && a[n - 1] == 0);
	/* deterministic */
	b = encode(gz, &opt, src, len, gz->bound(len), &got);
	CHECK(got == n && memcmp(a, b, n) == 0);
	free(b);
	/* verifier: accepts the stream, rejects every kind of damage */
	CHECK(gz->verify(a, n, src, len) == KILN_OK);
	CHECK(gz->verify(a, n - 1, src, len) == KILN_ERR_VERIFY);
	CHECK(gz->verify(a, n / 2, src, len) == KILN_ERR_VERIFY);
	src[len - 1] ^= 1; /* source differs in the last byte */
	CHECK(gz->verify(a, n, src, len) == KILN_ERR_VERIFY);
	src[len - 1] ^= 1;
	CHECK(gz->verify(a, n, src, len - 1) == KILN_ERR_VERIFY);
	a[n / 2] ^= 0x40; /* damaged body */
	CHECK(gz->verify(a, n, src, len) == KILN_ERR_VERIFY);
	a[n / 2] ^= 0x40;
	a[n - 6] ^= 1; /* damaged CRC */
	CHECK(gz->verify(a, n, src, len) == KILN_ERR_VERIFY);
	a[n - 6] ^= 1;
	b = malloc(n + 1);
	memcpy(b, a, n);
	b[n] = 0; /* trailing garbage */
	CHECK(gz->verify(b, n + 1, src, len) == KILN_ERR_VERIFY);
	free(b);
	free(a);
	/* random bytes grow, yet fit in bound() */
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(rand() >> 7);
	a = encode(gz, &opt, src, len, gz->bound(len), &n);
	CHECK(n > len && n <= gz->bound(len));
	CHECK(gz->verify(a, n, src, len) == KILN_OK);
	free(a);
	/* a short file whose gzip is only a little smaller is still encoded */
	memcpy(src, "0123456789abcdef0123456789abcdef", 32);
	a = encode(gz, &opt, src, 32, gz->bound(32), &n);
	CHECK(n > 0 && gz->verify(a, n, src, 32) == KILN_OK);
	free(a);
	free(src);
	free(dec);
}

static void test_brotli(void)
{
	const struct kiln_codec *br = codec_named("br");
	struct kiln_options opt;
	size_t len = 150000, n, got = 0, m;
	uint8_t *src = make_text(len, 11), *dec = malloc(len);
	uint8_t *a, *b;

	kiln_options_init(&opt);
	a = encode(br, &opt, src, len, br->bound(len), &n);
	CHECK(n > 0 && n < len / 2);
	got = len;
	CHECK(BrotliDecoderDecompress(n, a, &got, dec) == BROTLI_DECODER_RESULT_SUCCESS);
	CHECK(got == len && memcmp(dec, src, len) == 0);
	b = encode(br, &opt, src, len, br->bound(len), &m);
	CHECK(m == n && memcmp(a, b, n) == 0);
	free(b);
	CHECK(br->verify(a, n, src, len) == KILN_OK);
	CHECK(br->verify(a, n - 1, src, len) == KILN_ERR_VERIFY);
	CHECK(br->verify(a, n, src, len - 1) == KILN_ERR_VERIFY);
	src[0] ^= 1;
	CHECK(br->verify(a, n, src, len) == KILN_ERR_VERIFY);
	src[0] ^= 1;
	b = malloc(n + 4);
	memcpy(b, a, n);
	memset(b + n, 0, 4);
	CHECK(br->verify(b, n + 4, src, len) == KILN_ERR_VERIFY);
	free(b);
	free(a);
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(rand() >> 7);
	a = encode(br, &opt, src, len, br->bound(len), &n);
	CHECK(n > len && n <= br->bound(len));
	CHECK(br->verify(a, n, src, len) == KILN_OK);
	free(a);
	/* an empty input is a valid, tiny stream */
	a = encode(br, &opt, src, 0, br->bound(0), &n);
	CHECK(n > 0 && br->verify(a, n, src, 0) == KILN_OK);
	free(a);
	free(src);
	free(dec);
}

/* WBITS from a brotli stream's first bits (RFC 7932 section 9.1): 0 means
 * 16; 1 and three bits n != 0 mean 17 + n; 1000 and three bits m mean 17
 * for m == 0, 8 + m for m >= 2 (m == 1 is the large-window escape). */
static int stream_wbits(const uint8_t *p)
{
	unsigned bits = p[0] | (unsigned)p[1] << 8, n, m;

	if (!(bits & 1))
		return 16;
	n = (bits >> 1) & 7;
	if (n)
		return 17 + (int)n;
	m = (bits >> 4) & 7;
	return m == 0 ? 17 : m == 1 ? -1 : 8 + (int)m;
}

static void test_window_bits(void)
{
	const struct kiln_codec *br = codec_named("br");
	/* the smallest window that holds the file: (1 << WBITS) - 16 bytes */
	static const struct { size_t len; int wbits; } cases[] = {
		{ 0, 10 }, { 1008, 10 }, { 1009, 11 }, { 65520, 16 }, { 65521, 17 },
		{ 1048560, 20 }, { 1048561, 21 },
	};
	struct kiln_options opt;

	kiln_options_init(&opt);
	/* quality 5: fast, and above the two fastest, which use 18 at least */
	opt.level[kiln_coding_find("br")] = 5;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *src = make_text(cases[i].len, 3), *a;
		size_t n;
		a = encode(br, &opt, src, cases[i].len, br->bound(cases[i].len), &n);
		CHECK_MSG(n >= 2 && stream_wbits(a) == cases[i].wbits, "len %zu: wbits %d, want %d",
			  cases[i].len, stream_wbits(a), cases[i].wbits);
		free(a);
		free(src);
	}
}

/* Streamed in KILN_CODEC_PIECE pieces, as kiln streams: where a recipe does
 * not depend on streaming, the bytes are the whole-buffer encoder's; and
 * streamed bytes are the same on every run. */
static void test_stream_equals_whole(void)
{
	size_t len = 3 * 1048576 + 12345;
	uint8_t *src = make_text(len, 5);
	struct kiln_options opt;

	kiln_options_init(&opt);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_codec *codec = kiln_codec((kiln_coding)c);
		int level = codec->info.level_min + 1;
		char whole_recipe[KILN_RECIPE_MAX], stream_recipe[KILN_RECIPE_MAX];
		struct buf one, many;
		size_t n;
		uint8_t *a;

		opt.level[c] = level;
		codec->recipe(level, 0, false, whole_recipe);
		codec->recipe(level, 0, true, stream_recipe);
		a = encode(codec, &opt, src, len, codec->bound(len), &n);
		one = stream(codec, level, src, len, KILN_CODEC_PIECE);
		many = stream(codec, level, src, len, KILN_CODEC_PIECE);
		CHECK_MSG(one.n == many.n && memcmp(one.p, many.p, one.n) == 0,
			  "%s: streamed bytes differ between runs", codec->info.name);
		CHECK(codec->verify(one.p, one.n, src, len) == KILN_OK);
		if (strcmp(whole_recipe, stream_recipe) == 0)
			CHECK_MSG(n == one.n && memcmp(a, one.p, n) == 0,
				  "%s: same recipe, different bytes", codec->info.name);
		free(a);
		free(one.p);
		free(many.p);
	}
	free(src);
}

struct seen {
	uint64_t bytes;
	unsigned calls;
};

static void add_bytes(void *arg, size_t n)
{
	struct seen *s = arg;

	s->bytes += n;
	s->calls++;
}

/* Every whole-buffer encoder reports the input it consumes, in pieces, and
 * all of it: a 1.5 MiB source is reported as 1.5 MiB, in more than one
 * call for the encoders that work a piece at a time. */
static void test_progress(void)
{
	static const struct { const char *name; int level, extra; unsigned calls; } cases[] = {
		{ "gzip", 6, 0, 1 }, { "gzip", 1, 1, 2 }, { "br", 1, 0, 2 }, { "zstd", 1, 0, 2 },
	};
	size_t len = (size_t)3 << 19, n; /* 1.5 MiB: two pieces, two zopfli blocks */
	uint8_t *src = make_text(len, 5);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kiln_codec *codec = codec_named(cases[i].name);
		void *state = codec->state_new(cases[i].level, cases[i].extra);
		uint8_t *out = malloc(codec->bound(len));
		struct seen seen = { 0, 0 };
		struct kiln_encode_ctl ctl = { &not_cancelled, add_bytes, &seen };

		CHECK(state && out);
		CHECK(codec->encode(state, src, len, out, codec->bound(len), &n, &ctl) == KILN_OK);
		CHECK(n > 0);
		if (seen.bytes != len || seen.calls != cases[i].calls)
			fprintf(stderr, "%s/%d: %llu of %zu bytes reported in %u calls\n",
				cases[i].name, cases[i].extra, (unsigned long long)seen.bytes, len,
				seen.calls);
		CHECK(seen.bytes == len);
		CHECK(seen.calls == cases[i].calls);
		codec->state_free(state);
		free(out);
	}
	free(src);
}

/* A cancel stops a long encode. */
static void test_cancel(void)
{
	const struct kiln_codec *br = codec_named("br");
	size_t len = 4 << 20, n = 1;
	uint8_t *src = make_text(len, 9), *out = malloc(br->bound(len));
	atomic_int cancelled = 1;
	struct kiln_encode_ctl stop = { &cancelled, NULL, NULL };
	void *state = br->state_new(11, 0);

	CHECK(br->encode(state, src, len, out, br->bound(len), &n, &stop) ==
	      KILN_ERR_CANCELLED);
	br->state_free(state);
	free(out);
	free(src);
}

/* The frame header of a zstd frame (RFC 8878 section 3.1.1.1): its window
 * size, content size (or -1), checksum and dictionary ID flags. */
struct zstd_header {
	uint64_t window, content;
	bool checksum, has_content, dict_id;
};

static bool zstd_header(const uint8_t *p, size_t n, struct zstd_header *h)
{
	static const int fcs_bytes[4] = { 0, 2, 4, 8 };
	unsigned fhd, fcs_flag, single, pos = 5, k;

	if (n < 6 || p[0] != 0x28 || p[1] != 0xb5 || p[2] != 0x2f || p[3] != 0xfd)
		return false;
	fhd = p[4];
	fcs_flag = fhd >> 6;
	single = (fhd >> 5) & 1;
	h->checksum = (fhd >> 2) & 1;
	h->dict_id = (fhd & 3) != 0;
	if (!single) {
		unsigned wd = p[pos++], e = wd >> 3, m = wd & 7;
		uint64_t base = (uint64_t)1 << (10 + e);
		h->window = base + (base >> 3) * m;
	}
	pos += (fhd & 3) == 3 ? 4 : (fhd & 3);
	k = fcs_flag == 0 ? single : (unsigned)fcs_bytes[fcs_flag];
	h->has_content = k > 0;
	h->content = 0;
	for (unsigned i = 0; i < k; i++)
		h->content |= (uint64_t)p[pos + i] << (8 * i);
	if (k == 2)
		h->content += 256;
	if (single)
		h->window = h->content;
	return pos + k <= n;
}

static void test_zstd(void)
{
	const struct kiln_codec *zs = codec_named("zstd");
	kiln_coding zc = kiln_coding_find("zstd");
	/* sizes around the window limit; levels where the default window
	 * would exceed it (ultra levels ask for 2^27) */
	static const struct { size_t len; int level; } cases[] = {
		{ 0, 19 }, { 1000, 19 }, { 300000, 22 }, { 9 * 1048576 + 7, 22 },
	};
	struct kiln_options opt;

	kiln_options_init(&opt);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len, n, got;
		uint8_t *src = len > 1048576 ? make_periodic(len) : make_text(len, (unsigned)i + 21);
		uint8_t *a, *b;
		struct zstd_header h;
		opt.level[zc] = cases[i].level;
		a = encode(zs, &opt, src, len, zs->bound(len), &n);
		CHECK_MSG(zstd_header(a, n, &h), "len %zu: no frame header", len);
		CHECK_MSG(h.window <= 8 * 1048576, "len %zu level %d: window %llu over 8 MiB", len,
			  cases[i].level, (unsigned long long)h.window);
		CHECK(h.has_content && h.content == len);
		CHECK(h.checksum && !h.dict_id);
		/* one frame that decodes to the source */
		CHECK(ZSTD_getFrameContentSize(a, n) == len);
		CHECK(ZSTD_findFrameCompressedSize(a, n) == n);
		b = malloc(len ? len : 1);
		got = ZSTD_decompress(b, len, a, n);
		CHECK(!ZSTD_isError(got) && got == len && memcmp(b, src, len) == 0);
		CHECK(zs->verify(a, n, src, len) == KILN_OK);
		if (n > 8) {
			CHECK(zs->verify(a, n - 1, src, len) == KILN_ERR_VERIFY);
			a[n / 2] ^= 0x10;
			CHECK(zs->verify(a, n, src, len) == KILN_ERR_VERIFY);
			a[n / 2] ^= 0x10;
		}
		free(b);
		/* deterministic */
		b = encode(zs, &opt, src, len, zs->bound(len), &got);
		CHECK(got == n && memcmp(a, b, n) == 0);
		free(b);
		/* a second frame after the first is not one frame */
		b = malloc(2 * n);
		memcpy(b, a, n);
		memcpy(b + n, a, n);
		CHECK(zs->verify(b, 2 * n, src, len) == KILN_ERR_VERIFY);
		free(b);
		free(a);
		free(src);
	}
}

/* A frame whose window is over 8 MiB is refused by the verifier, as a
 * browser would refuse it (made with libzstd directly). */
static void test_zstd_window_refused(void)
{
	const struct kiln_codec *zs = codec_named("zstd");
	size_t len = 9 << 20, n;
	uint8_t *src = make_periodic(len), *a = malloc(ZSTD_compressBound(len));
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct zstd_header h;

	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24);
	n = ZSTD_compress2(cctx, a, ZSTD_compressBound(len), src, len);
	CHECK(!ZSTD_isError(n) && zstd_header(a, n, &h) && h.window > 8 * 1048576);
	CHECK(zs->verify(a, n, src, len) == KILN_ERR_VERIFY);
	ZSTD_freeCCtx(cctx);
	free(a);
	free(src);
}

/* zopfli: never a larger .gz than libdeflate's, smaller on text, the same
 * header, deterministic. */
static void test_zopfli(void)
{
	const struct kiln_codec *gz = codec_named("gzip");
	kiln_coding gc = kiln_coding_find("gzip");
	struct kiln_options opt;
	size_t lens[] = { 0, 300, 20000, 200000 };
	unsigned smaller = 0;

	kiln_options_init(&opt);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i], n0, n1, n2, got;
		uint8_t *src = make_text(len, (unsigned)i + 31), *a, *b, *c, *dec = malloc(len + 1);
		char r0[KILN_RECIPE_MAX], r1[KILN_RECIPE_MAX];
		opt.extra[gc] = 0;
		a = encode(gz, &opt, src, len, gz->bound(len), &n0);
		opt.extra[gc] = 5;
		b = encode(gz, &opt, src, len, gz->bound(len), &n1);
		c = encode(gz, &opt, src, len, gz->bound(len), &n2);
		CHECK_MSG(n1 <= n0, "len %zu: zopfli %zu > libdeflate %zu", len, n1, n0);
		smaller += n1 < n0;
		CHECK(n1 == n2 && memcmp(b, c, n1) == 0);
		CHECK(zlib_gunzip(b, n1, dec, len + 1, &got) == 0 && got == len &&
		      memcmp(dec, src, len) == 0);
		CHECK(gz->verify(b, n1, src, len) == KILN_OK);
		/* the same fixed header either way: MTIME 0, OS 255 */
		CHECK(b[0] == 0x1f && b[1] == 0x8b && b[3] == 0 && b[4] == 0 && b[7] == 0 && b[9] == 255);
		if (n1 == n0)
			CHECK(memcmp(a, b, n0) == 0); /* a tie goes to libdeflate */
		gz->recipe(12, 0, false, r0);
		gz->recipe(12, 5, false, r1);
		CHECK(strcmp(r0, r1) != 0);
		free(a);
		free(b);
		free(c);
		free(src);
		free(dec);
	}
	CHECK_MSG(smaller >= 2, "zopfli was smaller on %u of 4 inputs", smaller);
}

static void test_table(void)
{
	unsigned seen_default = 0;

	CHECK(kiln_coding_count() == kiln_ncodecs && kiln_ncodecs >= 1 &&
	      kiln_ncodecs <= KILN_MAX_CODINGS);
	CHECK(strcmp(kiln_coding_name(kiln_coding_find("gzip")), "gzip") == 0);
	CHECK(strcmp(kiln_coding_suffix(kiln_coding_find("gzip")), ".gz") == 0);
	CHECK(strcmp(kiln_coding_name(kiln_coding_find("brotli")), "br") == 0);
	CHECK(strcmp(kiln_coding_suffix(kiln_coding_find("br")), ".br") == 0);
	CHECK(kiln_coding_find("gz") == -1 && kiln_coding_info(-1) == NULL &&
	      kiln_coding_info((kiln_coding)kiln_ncodecs) == NULL);
	/* the first coding is the one every client accepts */
	CHECK(strcmp(kiln_coding_name(0), "gzip") == 0);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_codec *k = kiln_codec((kiln_coding)c);
		char r[KILN_RECIPE_MAX];
		CHECK(k->info.suffix[0] == '.' && k->info.level_min <= k->info.level_default &&
		      k->info.level_default <= k->info.level_max);
		CHECK(k->libraries && k->libraries[0].name && *k->libraries[0].version());
		k->recipe(k->info.level_default, 0, false, r);
		CHECK(*r && !strchr(r, ' ') && strlen(r) < KILN_RECIPE_MAX);
		CHECK(kiln_sibling_coding(k->info.suffix + 0) == -1); /* nothing before it */
		seen_default += k->info.default_on;
		for (unsigned d = 0; d < c; d++)
			CHECK(strcmp(k->info.suffix, kiln_codec((kiln_coding)d)->info.suffix) != 0 &&
			      strcmp(k->info.name, kiln_codec((kiln_coding)d)->info.name) != 0);
	}
	CHECK(seen_default >= 1);
	/* sibling names: the table's suffixes and the reserved ones */
	CHECK(kiln_sibling_base_len("app.js.gz") == strlen("app.js"));
	CHECK(kiln_sibling_base_len("app.js.br") == strlen("app.js"));
	CHECK(kiln_sibling_base_len("app.js.zst") == strlen("app.js"));
	CHECK(kiln_sibling_coding("a.zst") == kiln_coding_find("zstd"));
	CHECK(kiln_sibling_base_len("a.gz") == 1);
	CHECK(kiln_sibling_base_len(".gz") == 0);   /* nothing before the suffix */
	CHECK(kiln_sibling_base_len("app.js") == 0);
	CHECK(kiln_sibling_base_len("app.GZ") == 0); /* suffixes are exact */
	CHECK(kiln_sibling_base_len("app.gzip") == 0);
	CHECK(kiln_sibling_base_len("") == 0);
	CHECK(kiln_sibling_coding("x.gz") == kiln_coding_find("gzip"));
	CHECK(kiln_is_sibling_extension("GZ") && kiln_is_sibling_extension("zst") &&
	      !kiln_is_sibling_extension("js"));
}

/* dcz: the header, a round trip through libzstd's decoder with the
 * dictionary (and not without it), the window, and the names. */
static void test_dcz(void)
{
	size_t dlen = 300000, slen = 300500, n = 0;
	uint8_t *dict = malloc(dlen), *src = malloc(slen), *enc = NULL, dsha[32], other[32];
	uint32_t x = 12345;
	char *path;

	CHECK(dict && src);
	if (!dict || !src)
		return;
	for (size_t i = 0; i < dlen; i++) { /* incompressible alone */
		x = x * 1103515245u + 12345u;
		dict[i] = (uint8_t)(x >> 16);
	}
	memcpy(src, dict, 150000); /* release 2: the same bytes, a little inserted */
	memset(src + 150000, 'k', 500);
	memcpy(src + 150500, dict + 150000, dlen - 150000);
	CHECK(kiln_sha256(dict, dlen, dsha) == KILN_OK);
	CHECK(kiln_codec_dcz.encode(dict, dlen, dsha, src, slen, &enc, &n) == KILN_OK);
	CHECK(enc && n > 40 && n < 2000); /* the dictionary does the work */
	if (!enc)
		return;
	{
		static const uint8_t magic[8] = { 0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0 };
		CHECK(memcmp(enc, magic, 8) == 0 && memcmp(enc + 8, dsha, 32) == 0);
	}
	{
		ZSTD_DCtx *d = ZSTD_createDCtx();
		uint8_t *out = malloc(slen + 1);
		size_t got;
		CHECK(ZSTD_getFrameContentSize(enc + 40, n - 40) == slen);
		/* within an 8 MiB window, which a client holds it to here */
		CHECK(!ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 23)));
		CHECK(!ZSTD_isError(ZSTD_DCtx_refPrefix(d, dict, dlen)));
		got = ZSTD_decompressDCtx(d, out, slen + 1, enc + 40, n - 40);
		CHECK(!ZSTD_isError(got) && got == slen && memcmp(out, src, slen) == 0);
		got = ZSTD_decompressDCtx(d, out, slen + 1, enc + 40, n - 40);
		CHECK(ZSTD_isError(got) || got != slen || memcmp(out, src, slen) != 0);
		free(out);
		ZSTD_freeDCtx(d);
	}
	CHECK(kiln_codec_dcz.verify(enc, n, dict, dlen, dsha, src, slen) == KILN_OK);
	memcpy(other, dsha, 32);
	other[31] ^= 1;
	CHECK(kiln_codec_dcz.verify(enc, n, dict, dlen, other, src, slen) == KILN_ERR_VERIFY);
	CHECK(kiln_codec_dcz.verify(enc, n - 1, dict, dlen, dsha, src, slen) == KILN_ERR_VERIFY);
	CHECK(kiln_codec_dcz.verify(enc, n, dict, dlen, dsha, src, slen - 1) == KILN_ERR_VERIFY);
	dict[100] ^= 1; /* another dictionary than the one it was made with */
	CHECK(kiln_codec_dcz.verify(enc, n, dict, dlen, dsha, src, slen) == KILN_ERR_VERIFY);
	free(enc);
	/* names: NAME.<16 hex>.dcz */
	path = kiln_dict_sibling_path("r", "a/app.js", dsha);
	CHECK(path && strlen(path) == strlen("r/a/app.js.") + 16 + 4);
	CHECK(path && kiln_dict_sibling_base_len(strrchr(path, '/') + 1) == strlen("app.js"));
	CHECK(path && kiln_sibling_base_len(strrchr(path, '/') + 1) == strlen("app.js"));
	free(path);
	CHECK(kiln_dict_sibling_base_len("app.js.0123456789abcdef.dcz") == 6);
	CHECK(kiln_dict_sibling_base_len("app.js.0123456789ABCDEF.dcz") == 0);
	CHECK(kiln_dict_sibling_base_len("app.js.0123456789abcde.dcz") == 0);
	CHECK(kiln_dict_sibling_base_len(".0123456789abcdef.dcz") == 0);
	CHECK(kiln_is_sibling_extension("dcz") && kiln_is_sibling_extension("dcb"));
	free(dict);
	free(src);
}

int main(void)
{
	test_gzip();
	test_dcz();
	test_brotli();
	test_window_bits();
	test_stream_equals_whole();
	test_cancel();
	test_progress();
	test_zstd();
	test_zstd_window_refused();
	test_zopfli();
	test_table();
	return check_exit("test_codec");
}
