/*
 * test_codec.c - each codec round-trips through an independent decoder,
 * encodes deterministically, writes the fixed gzip header RFC 1952 allows,
 * sizes the brotli window to the input, and its verifier rejects damaged,
 * truncated and padded streams.
 */
#include "codec.h"

#include "check.h"

#include <brotli/decode.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Text-like input of LEN bytes: repetitive enough to compress, not trivial. */
static uint8_t *make_text(size_t len, unsigned seed)
{
	static const char *const words[] = { "function ", "return ", "const ", "value",
					     "=> ", "{", "}\n", "(a, b)", ";\n", "class " };
	uint8_t *p = malloc(len ? len : 1);
	size_t i = 0;

	while (i < len) {
		seed = seed * 1103515245u + 12345u;
		const char *w = words[(seed >> 16) % 10];
		for (size_t k = 0; w[k] && i < len; k++)
			p[i++] = (uint8_t)w[k];
	}
	return p;
}

static uint8_t *encode(const struct kiln_codec *codec, const struct kiln_options *opt,
		       const uint8_t *in, size_t len, size_t cap, size_t *out_len)
{
	void *state = codec->state_new(opt);
	uint8_t *out = malloc(cap ? cap : 1);

	CHECK(state != NULL);
	CHECK(codec->encode(state, in, len, out, cap, out_len) == KILN_OK);
	codec->state_free(state);
	return out;
}

/* Decode gzip with zlib directly (not through the codec's own verifier). */
static int zlib_gunzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *got)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	ret = inflate(&zs, Z_FINISH);
	*got = cap - zs.avail_out;
	inflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -1;
}

static void test_gzip(void)
{
	struct kiln_options opt;
	size_t len = 200000, n, got;
	uint8_t *src = make_text(len, 7), *dec = malloc(len + 1);
	uint8_t *a, *b;

	kiln_options_init(&opt);
	a = encode(&kiln_codec_gzip, &opt, src, len, kiln_codec_gzip.bound(len), &n);
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
	b = encode(&kiln_codec_gzip, &opt, src, len, kiln_codec_gzip.bound(len), &got);
	CHECK(got == n && memcmp(a, b, n) == 0);
	free(b);
	/* verifier: accepts the stream, rejects every kind of damage */
	CHECK(kiln_codec_gzip.verify(a, n, src, len) == KILN_OK);
	CHECK(kiln_codec_gzip.verify(a, n - 1, src, len) == KILN_ERR_VERIFY);
	CHECK(kiln_codec_gzip.verify(a, n / 2, src, len) == KILN_ERR_VERIFY);
	src[len - 1] ^= 1; /* source differs in the last byte */
	CHECK(kiln_codec_gzip.verify(a, n, src, len) == KILN_ERR_VERIFY);
	src[len - 1] ^= 1;
	CHECK(kiln_codec_gzip.verify(a, n, src, len - 1) == KILN_ERR_VERIFY);
	a[n / 2] ^= 0x40; /* damaged body */
	CHECK(kiln_codec_gzip.verify(a, n, src, len) == KILN_ERR_VERIFY);
	a[n / 2] ^= 0x40;
	a[n - 6] ^= 1; /* damaged CRC */
	CHECK(kiln_codec_gzip.verify(a, n, src, len) == KILN_ERR_VERIFY);
	a[n - 6] ^= 1;
	b = malloc(n + 1);
	memcpy(b, a, n);
	b[n] = 0; /* trailing garbage */
	CHECK(kiln_codec_gzip.verify(b, n + 1, src, len) == KILN_ERR_VERIFY);
	free(b);
	free(a);
	/* random bytes grow, yet fit in bound() */
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(rand() >> 7);
	a = encode(&kiln_codec_gzip, &opt, src, len, kiln_codec_gzip.bound(len), &n);
	CHECK(n > len && n <= kiln_codec_gzip.bound(len));
	CHECK(kiln_codec_gzip.verify(a, n, src, len) == KILN_OK);
	free(a);
	/* a short file whose gzip is only a little smaller is still encoded */
	memcpy(src, "0123456789abcdef0123456789abcdef", 32);
	a = encode(&kiln_codec_gzip, &opt, src, 32, kiln_codec_gzip.bound(32), &n);
	CHECK(n > 0 && kiln_codec_gzip.verify(a, n, src, 32) == KILN_OK);
	free(a);
	free(src);
	free(dec);
}

static void test_brotli(void)
{
	struct kiln_options opt;
	size_t len = 150000, n, got = 0, m;
	uint8_t *src = make_text(len, 11), *dec = malloc(len);
	uint8_t *a, *b;

	kiln_options_init(&opt);
	a = encode(&kiln_codec_brotli, &opt, src, len, kiln_codec_brotli.bound(len), &n);
	CHECK(n > 0 && n < len / 2);
	got = len;
	CHECK(BrotliDecoderDecompress(n, a, &got, dec) == BROTLI_DECODER_RESULT_SUCCESS);
	CHECK(got == len && memcmp(dec, src, len) == 0);
	b = encode(&kiln_codec_brotli, &opt, src, len, kiln_codec_brotli.bound(len), &m);
	CHECK(m == n && memcmp(a, b, n) == 0);
	free(b);
	CHECK(kiln_codec_brotli.verify(a, n, src, len) == KILN_OK);
	CHECK(kiln_codec_brotli.verify(a, n - 1, src, len) == KILN_ERR_VERIFY);
	CHECK(kiln_codec_brotli.verify(a, n, src, len - 1) == KILN_ERR_VERIFY);
	src[0] ^= 1;
	CHECK(kiln_codec_brotli.verify(a, n, src, len) == KILN_ERR_VERIFY);
	src[0] ^= 1;
	b = malloc(n + 4);
	memcpy(b, a, n);
	memset(b + n, 0, 4);
	CHECK(kiln_codec_brotli.verify(b, n + 4, src, len) == KILN_ERR_VERIFY);
	free(b);
	free(a);
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(rand() >> 7);
	a = encode(&kiln_codec_brotli, &opt, src, len, kiln_codec_brotli.bound(len), &n);
	CHECK(n > len && n <= kiln_codec_brotli.bound(len));
	CHECK(kiln_codec_brotli.verify(a, n, src, len) == KILN_OK);
	free(a);
	/* an empty input is a valid, tiny stream */
	a = encode(&kiln_codec_brotli, &opt, src, 0, kiln_codec_brotli.bound(0), &n);
	CHECK(n > 0 && kiln_codec_brotli.verify(a, n, src, 0) == KILN_OK);
	free(a);
	free(src);
	free(dec);
}

static void test_window_bits(void)
{
	/* RFC 7932 9.1: window size = (1 << WBITS) - 16 */
	CHECK(kiln_brotli_window_bits(0) == 10);
	CHECK(kiln_brotli_window_bits(1008) == 10);
	CHECK(kiln_brotli_window_bits(1009) == 11);
	CHECK(kiln_brotli_window_bits(65520) == 16);
	CHECK(kiln_brotli_window_bits(65521) == 17);
	CHECK(kiln_brotli_window_bits(16777200) == 24);
	CHECK(kiln_brotli_window_bits((size_t)1 << 30) == 24);
}

static void test_table(void)
{
	CHECK(kiln_codecs[KILN_CODING_GZIP] == &kiln_codec_gzip);
	CHECK(kiln_codecs[KILN_CODING_BR] == &kiln_codec_brotli);
	CHECK(strcmp(kiln_coding_name(KILN_CODING_GZIP), "gzip") == 0);
	CHECK(strcmp(kiln_coding_name(KILN_CODING_BR), "br") == 0);
	CHECK(strcmp(kiln_coding_suffix(KILN_CODING_GZIP), ".gz") == 0);
	CHECK(strcmp(kiln_coding_suffix(KILN_CODING_BR), ".br") == 0);
}

int main(void)
{
	test_gzip();
	test_brotli();
	test_window_bits();
	test_table();
	return check_exit("test_codec");
}
