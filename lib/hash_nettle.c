/*
 * hash_nettle.c - hash.h through nettle instead of libcrypto, for a build
 * with -DKILN_CRYPTO=nettle (the WebAssembly one: OpenSSL's libcrypto takes
 * minutes to compile with Emscripten, these parts of nettle seconds).  The
 * same digests and the same base64 as hash.c, byte for byte.
 */
#include "hash.h"

#include <nettle/base64.h>
#include <nettle/sha2.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct kiln_hasher {
	struct sha256_ctx sha256;
	struct sha384_ctx sha384;
	bool both; /* SHA-384 too */
};

kiln_status kiln_hash_init(void)
{
	return KILN_OK; /* nettle has nothing to set up */
}

/* A hasher of SHA-256, and of SHA-384 too when BOTH. */
static struct kiln_hasher *hasher_new(bool both)
{
	struct kiln_hasher *h = malloc(sizeof(*h));

	if (h) {
		sha256_init(&h->sha256);
		sha384_init(&h->sha384);
		h->both = both;
	}
	return h;
}

struct kiln_hasher *kiln_hasher_new(void)
{
	return hasher_new(true);
}

struct kiln_hasher *kiln_hasher_new_sha256(void)
{
	return hasher_new(false);
}

void kiln_hasher_update(struct kiln_hasher *h, const void *data, size_t len)
{
	sha256_update(&h->sha256, len, data);
	if (h->both)
		sha384_update(&h->sha384, len, data);
}

kiln_status kiln_hasher_final(struct kiln_hasher *h, uint8_t sha256[KILN_SHA256_LEN],
			      uint8_t sha384[KILN_SHA384_LEN])
{
	if (sha256)
		sha256_digest(&h->sha256, KILN_SHA256_LEN, sha256);
	if (sha384 && h->both)
		sha384_digest(&h->sha384, KILN_SHA384_LEN, sha384);
	free(h);
	return KILN_OK;
}

kiln_status kiln_sha256(const void *data, size_t len, uint8_t out[KILN_SHA256_LEN])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, KILN_SHA256_LEN, out);
	return KILN_OK;
}

size_t kiln_base64_encode(const void *in, size_t len, char *out)
{
	size_t n = BASE64_ENCODE_RAW_LENGTH(len);

	base64_encode_raw(out, len, in);
	out[n] = '\0';
	return n;
}

bool kiln_base64_decode(const char *in, size_t n, uint8_t *out, size_t *outlen)
{
	struct base64_decode_ctx c;

	/* white space, which nettle's decoder skips, is refused (as in
	 * hash_libcrypto.c) */
	if (n % 4 != 0 || strcspn(in, " \t\r\n\f\v") < n)
		return false;
	base64_decode_init(&c);
	*outlen = n / 4 * 3;
	return base64_decode_update(&c, outlen, out, n, in) && base64_decode_final(&c);
}
