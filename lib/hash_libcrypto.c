/* hash_libcrypto.c - hash.h's digests and base64 through libcrypto's EVP
 * interface (the default, -DKILN_CRYPTO=libcrypto). */
#include "hash.h"

#include <openssl/evp.h>

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

struct kiln_hasher {
	EVP_MD_CTX *sha256, *sha384;
};

/* Written once under pthread_once, read-only afterwards. */
static EVP_MD *md_sha256, *md_sha384;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	if (!OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL))
		return;
	md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	md_sha384 = EVP_MD_fetch(NULL, "SHA384", NULL);
}

kiln_status kiln_hash_init(void)
{
	pthread_once(&init_once, init);
	return md_sha256 && md_sha384 ? KILN_OK : KILN_ERR_NOMEM;
}

/* A hasher of SHA-256, and of SHA-384 too when BOTH. */
static struct kiln_hasher *hasher_new(bool both)
{
	struct kiln_hasher *h;

	if (kiln_hash_init() != KILN_OK || !(h = calloc(1, sizeof(*h))))
		return NULL;
	h->sha256 = EVP_MD_CTX_new();
	h->sha384 = both ? EVP_MD_CTX_new() : NULL;
	if (!h->sha256 || (both && !h->sha384) || !EVP_DigestInit_ex(h->sha256, md_sha256, NULL) ||
	    (both && !EVP_DigestInit_ex(h->sha384, md_sha384, NULL))) {
		EVP_MD_CTX_free(h->sha256);
		EVP_MD_CTX_free(h->sha384);
		free(h);
		return NULL;
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
	EVP_DigestUpdate(h->sha256, data, len);
	if (h->sha384)
		EVP_DigestUpdate(h->sha384, data, len);
}

kiln_status kiln_hasher_final(struct kiln_hasher *h, uint8_t sha256[KILN_SHA256_LEN],
			      uint8_t sha384[KILN_SHA384_LEN])
{
	uint8_t a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
	int ok = EVP_DigestFinal_ex(h->sha256, a, NULL) &&
		 (!h->sha384 || EVP_DigestFinal_ex(h->sha384, b, NULL));

	if (ok && sha256)
		memcpy(sha256, a, KILN_SHA256_LEN);
	if (ok && sha384 && h->sha384)
		memcpy(sha384, b, KILN_SHA384_LEN);
	EVP_MD_CTX_free(h->sha256);
	EVP_MD_CTX_free(h->sha384);
	free(h);
	return ok ? KILN_OK : KILN_ERR_NOMEM;
}

kiln_status kiln_sha256(const void *data, size_t len, uint8_t out[KILN_SHA256_LEN])
{
	if (kiln_hash_init() != KILN_OK)
		return KILN_ERR_NOMEM;
	return EVP_Digest(data, len, out, NULL, md_sha256, NULL) ? KILN_OK : KILN_ERR_NOMEM;
}

size_t kiln_base64_encode(const void *in, size_t len, char *out)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

bool kiln_base64_decode(const char *in, size_t n, uint8_t *out, size_t *outlen)
{
	int got;

	/* EVP_DecodeBlock skips white space at either end, which
	 * hash_nettle.c's decoder refuses: refused here too */
	if (n % 4 != 0 || n > INT_MAX || strcspn(in, " \t\r\n\f\v") < n)
		return false;
	if ((got = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n)) < 0)
		return false;
	*outlen = (size_t)got; /* EVP_DecodeBlock counts '=' padding as zero bytes */
	if (n >= 1 && in[n - 1] == '=')
		(*outlen)--;
	if (n >= 2 && in[n - 2] == '=')
		(*outlen)--;
	return true;
}
