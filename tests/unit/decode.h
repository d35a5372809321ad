/*
 * decode.h - what the unit tests know of the codings without kiln's code:
 * text worth compressing, made here; each coding decoded by its own
 * library (zlib for gzip, brotli's decoder for br, libzstd for zstd and,
 * with the dictionary as a raw-content prefix, for dcz as RFC 9842 frames
 * it: an 8-byte skippable-frame header, the dictionary's SHA-256, one zstd
 * frame); and a file read whole.
 */
#ifndef KILN_DECODE_H
#define KILN_DECODE_H

#include <brotli/decode.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* Text-like input of LEN bytes: repetitive enough to compress, not trivial. */
static inline uint8_t *make_text(size_t len, unsigned seed)
{
	static const char *const words[] = { "function ", "return ", "const ", "value",
					     "=> ", "{", "}\n", "(a, b)", ";\n", "class " };
	uint8_t *p = malloc(len ? len : 1);
	size_t i = 0;

	while (p && i < len) {
		seed = seed * 1103515245u + 12345u;
		const char *w = words[(seed >> 16) % 10];
		for (size_t k = 0; w[k] && i < len; k++)
			p[i++] = (uint8_t)w[k];
	}
	return p;
}

/* LEN bytes no encoder can shrink (a linear congruential generator's high
 * bytes), beginning with the letters of TAG so that no magic number of a
 * media type is taken for their start. */
static inline uint8_t *make_noise(size_t len, unsigned seed, const char *tag)
{
	uint8_t *p = malloc(len ? len : 1);
	size_t n = strlen(tag);

	for (size_t i = 0; p && i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = i < n ? (uint8_t)tag[i] : (uint8_t)(seed >> 23);
	}
	return p;
}

/* Decode gzip with zlib into OUT (CAP bytes): 0 and *GOT, or -1. */
static inline int zlib_gunzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *got)
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
	return ret == Z_STREAM_END && zs.avail_in == 0 ? 0 : -1;
}

/* Does ENC[0..n), of the coding whose HTTP token is CODING ("gzip", "br",
 * "zstd"), decode with that coding's own library to exactly SRC[0..len)? */
static inline bool decodes_to(const char *coding, const uint8_t *enc, size_t n,
			      const uint8_t *src, size_t len)
{
	uint8_t *out = malloc(len + 1);
	size_t got = 0;
	bool ok = false;

	if (!out)
		return false;
	if (strcmp(coding, "gzip") == 0) {
		ok = zlib_gunzip(enc, n, out, len + 1, &got) == 0;
	} else if (strcmp(coding, "br") == 0) {
		got = len + 1;
		ok = BrotliDecoderDecompress(n, enc, &got, out) == BROTLI_DECODER_RESULT_SUCCESS;
	} else if (strcmp(coding, "zstd") == 0) {
		got = ZSTD_decompress(out, len + 1, enc, n);
		ok = !ZSTD_isError(got);
	}
	ok = ok && got == len && memcmp(out, src, len) == 0;
	free(out);
	return ok;
}

/* Does the dcz body ENC[0..n) name DICT_SHA in its header and decode, with
 * libzstd given DICT[0..dlen) as its prefix, to exactly SRC[0..len)? */
static inline bool dcz_decodes_to(const uint8_t *enc, size_t n, const uint8_t *dict, size_t dlen,
				  const uint8_t dict_sha[32], const uint8_t *src, size_t len)
{
	static const uint8_t magic[8] = { 0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0 };
	ZSTD_DCtx *d;
	uint8_t *out;
	size_t got;
	bool ok;

	if (n < 40 || memcmp(enc, magic, 8) != 0 || memcmp(enc + 8, dict_sha, 32) != 0)
		return false;
	d = ZSTD_createDCtx();
	out = malloc(len + 1);
	ok = d && out && !ZSTD_isError(ZSTD_DCtx_refPrefix(d, dict, dlen));
	got = ok ? ZSTD_decompressDCtx(d, out, len + 1, enc + 40, n - 40) : 0;
	ok = ok && !ZSTD_isError(got) && got == len && memcmp(out, src, len) == 0;
	free(out);
	ZSTD_freeDCtx(d);
	return ok;
}

/* The file PATH whole, malloc'ed (*LEN its size), or NULL. */
static inline uint8_t *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* Does the file PATH decode, as coding CODING, to SRC[0..len)? */
static inline bool file_decodes_to(const char *path, const char *coding, const uint8_t *src,
				   size_t len)
{
	size_t n;
	uint8_t *enc = read_whole_file(path, &n);
	bool ok = enc && decodes_to(coding, enc, n, src, len);

	free(enc);
	return ok;
}

#endif
