/*
 * tokens.h - random hashes for the unit tests of the fingerprint rules, as
 * bundlers draw them: a seeded generator (the same draws every run) and the
 * alphabets bundlers write hashes in.
 */
#ifndef KILN_TOKENS_H
#define KILN_TOKENS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint64_t __attribute__((unused)) rng = 0x9e3779b97f4a7c15u;

static inline unsigned draw(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static const char __attribute__((unused)) b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char __attribute__((unused)) b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char __attribute__((unused)) hex[] = "0123456789abcdef";

static inline void random_token(char *out, const char *alphabet, size_t len)
{
	size_t n = strlen(alphabet);

	for (size_t i = 0; i < len; i++)
		out[i] = alphabet[draw((unsigned)n)];
	out[len] = '\0';
}

#endif
