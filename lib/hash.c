/*
 * hash.c - what hash.h's two implementations share (hash_libcrypto.c,
 * hash_nettle.c): digests as text.
 */
#include "hash.h"

#include <string.h>

void kiln_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

void kiln_sri_sha384(const uint8_t digest[KILN_SHA384_LEN], char *out)
{
	memcpy(out, "sha384-", 7);
	kiln_base64_encode(digest, KILN_SHA384_LEN, out + 7); /* 64 chars + NUL */
}
