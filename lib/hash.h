/*
 * hash.h - the digests the manifest records: SHA-256 (hex, for identity and
 * incremental runs) and SHA-384 (the Subresource Integrity value browsers
 * check, W3C SRI section 3.5), and the base64 the manifest and the journal
 * write names and digests in.  hash_libcrypto.c implements them with
 * OpenSSL's libcrypto (EVP), hash_nettle.c with nettle
 * (-DKILN_CRYPTO=nettle, the WebAssembly build's), hash.c what both share:
 * no other file calls either library.
 */
#ifndef KILN_HASH_H
#define KILN_HASH_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KILN_SHA256_LEN 32
#define KILN_SHA384_LEN 48

/*
 * Initialise the library and fetch the two digests, once per process.  Every
 * other function here fails cleanly (KILN_ERR_NOMEM / NULL) if this did not
 * succeed.  Called by kiln_run_new(), so that a run never starts with
 * libcrypto half-initialised (OpenSSL 3 does not survive a failed lazy
 * initialisation under memory pressure).  Thread-safe.
 */
kiln_status kiln_hash_init(void);

/* An incremental digest of both kinds at once (one pass over the data). */
struct kiln_hasher;

/* NULL when out of memory. */
struct kiln_hasher *kiln_hasher_new(void);
/* One of SHA-256 alone (kiln_hasher_final() gives no SHA-384). */
struct kiln_hasher *kiln_hasher_new_sha256(void);
void kiln_hasher_update(struct kiln_hasher *h, const void *data, size_t len);
/* Finish into SHA256 and SHA384 (either may be NULL) and free H. */
kiln_status kiln_hasher_final(struct kiln_hasher *h, uint8_t sha256[KILN_SHA256_LEN],
			      uint8_t sha384[KILN_SHA384_LEN]);

/* SHA-256 of one buffer.  KILN_OK or KILN_ERR_NOMEM. */
kiln_status kiln_sha256(const void *data, size_t len, uint8_t out[KILN_SHA256_LEN]);

/* Lowercase hex of LEN bytes into OUT (2 * LEN + 1 bytes, NUL-terminated). */
void kiln_hex(const uint8_t *bytes, size_t len, char *out);

/* SRI value "sha384-" + base64 of DIGEST into OUT (at least 71 bytes). */
void kiln_sri_sha384(const uint8_t digest[KILN_SHA384_LEN], char *out);

/* Base64 (RFC 4648 section 4, padded with '=') of the LEN bytes at IN (at
 * most 1 GiB) into OUT, which holds KILN_BASE64_LEN(LEN) + 1 bytes; NUL-terminated.  Returns
 * the number of characters written, the NUL left out.  Thread-safe. */
#define KILN_BASE64_LEN(len) (4 * (((size_t)(len) + 2) / 3))
size_t kiln_base64_encode(const void *in, size_t len, char *out);

/* The bytes the base64 text IN (N characters, a multiple of 4, padded with
 * '=') stands for, into OUT (at least N / 4 * 3 bytes); *OUTLEN gets their
 * number.  false, with OUT unspecified, when IN is not such a text.
 * Thread-safe. */
bool kiln_base64_decode(const char *in, size_t n, uint8_t *out, size_t *outlen);

#endif
