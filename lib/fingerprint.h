/*
 * fingerprint.h - content hashes in file names: what a token is, the rule
 * on a name alone, and a file's family.  Which files of a tree are served
 * immutable, from all the evidence a build leaves, is immutable.h's.
 */
#ifndef KILN_FINGERPRINT_H
#define KILN_FINGERPRINT_H

#include "kiln.h"
#include "spell.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The alphabets bundlers write hashes in, as a bit set: lowercase
 * hexadecimal (webpack, Parcel, Next.js), upper-case base32 [A-Z2-7]
 * (esbuild), base64url [A-Za-z0-9_-] (Rollup, Vite).  A token is in every
 * alphabet that holds all its characters. */
enum {
	KILN_ALPHA_HEX = 1,
	KILN_ALPHA_B32 = 2,
	KILN_ALPHA_B64 = 4,
};

/* Tokens shorter than this are never taken for a hash. */
#define KILN_TOKEN_MIN 8

/* Why a file is served immutable (docs/cache-control.md,
 * "Cache-Control"), in the
 * order the evidence is tried; KILN_WHY_NONE: it is not. */
enum kiln_why {
	KILN_WHY_NONE = 0,
	KILN_WHY_NAME,     /* its name alone: kiln_fingerprint_span() */
	KILN_WHY_BUNDLER,  /* the bundler's manifest says its name holds a hash */
	KILN_WHY_PREVIOUS, /* renamed from an earlier release, with new bytes */
	KILN_WHY_TREE,     /* its directory's names of the same shape are hashes */
	KILN_WHY_GLOB,     /* --immutable */
	KILN_NWHY
};

/* The decision for one file: WHY, and the fingerprint's bytes in its path
 * (START, LEN; LEN 0 when there is none: a glob, or a bundler that says
 * the file is immutable without saying where its hash is). */
struct kiln_fp {
	uint8_t why;
	uint32_t start, len;
};

/* "name", "bundler", "previous", "tree", "glob" (the manifest's words), or
 * NULL for KILN_WHY_NONE and out of range; kiln_why_parse() the reverse
 * (KILN_NWHY when S is none of them). */
const char *kiln_why_name(unsigned why);
unsigned kiln_why_parse(const char *s);

/* The alphabets (bit set, 0 when none) that hold the LEN bytes at T. */
unsigned kiln_token_alphabets(const char *t, size_t len);

/* Is the token T (LEN bytes) shaped like a hash rather than a word: not
 * an 8-digit date (YYYYMMDD), and, when it has a lowercase letter, not made
 * of words that could be spelt and numbers ("maskable", "Variable",
 * "python23", "sub-menu", "mobile-2"; "Bmd-znsx" is a hash)?
 * Hexadecimal tokens are only checked for dates: few words are spelt in
 * a-f, and a hex hash is often letters then digits. */
bool kiln_token_hashlike(const char *t, size_t len);

/* Is the token T (LEN bytes) spelt like words rather than drawn at random,
 * in a form that a random base64url token takes well under one time in a
 * thousand: CamelCase of spelt words ("SemiBold", "iPhone12"), an
 * upper-case spelt word ("FACEBOOK"), a code of 2 to 4 letters and 4
 * digits or more ("DSC01234", "DSC_0042"),
 * a counter after a '-' or '_' ("iD4-0003"), two words written together
 * ("appstore", "APPSTORE"), an upper-case word with 1 or 2 digits
 * ("TWITTER1"), letters typed in sequence ("QWERTYui", "ABCdefGH"), or
 * an identifier of a lowercase word, capitalised words and acronyms
 * ("loadJSON", "setState", "playMP3s", "arrowUpR")?  The tree takes no
 * such token for a base64url hash (shape.h); hexadecimal and base32
 * tokens are not checked by it (base32: kiln_token_words32()). */
bool kiln_token_words(const char *t, size_t len);

/* Is the upper-case token T (LEN bytes) one word or two that spell as
 * English does (kiln_spelt_well()), then at most 2 digits, or letters in
 * sequence ("LINKEDIN", "APPSTORE", "TWITTER1", "ABCDEFGH")?  The tree
 * takes no such token for a base32 hash (shape.h). */
bool kiln_token_words32(const char *t, size_t len);


/* Is the change of a name's token from OLD to NEW (LEN bytes each) what a
 * new content hash makes, rather than a counter, a date or a campaign
 * ("chapter-00000041" -> "chapter-00000042", "sale-SALE2024" ->
 * "sale-SALE2025")?  Both hash-like (kiln_token_hashlike()); more than
 * half of the positions differ (a new hash differs almost everywhere:
 * webpack's 8 hex digits keep 4 of 8 one time in a thousand); and when
 * either holds a letter, not only digits changed. */
bool kiln_token_changed(const char *old, const char *new, size_t len);

/* Is the base name of NAME at [START, START + LEN) a candidate token: at
 * least KILN_TOKEN_MIN base64url bytes, right before a '.', right after a
 * '.' or '-' (or at the start of the base name)? */
bool kiln_token_at(const char *name, size_t start, size_t len);

/* The next candidate token of NAME's base name at or after offset *AT (0:
 * from the start), left to right: true with [*AT, *AT + *LEN) the token
 * (go on from *AT + 1), false past the last. */
bool kiln_token_next(const char *name, size_t *at, size_t *len);

/* The rule on a name alone (docs/cache-control.md, "Cache-Control"): the
 * fingerprint
 * kiln_fingerprinted() finds in NAME's base name, the first left to right:
 * true with *START its offset in NAME and *LEN its length. */
bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len);

/* NAME with [START, START + LEN) replaced by '*' ("assets/app.3f9a2c7b.js"
 * -> "assets/app.*.js"): the family the versions of one file in two
 * releases share.  Malloc'ed; NULL when out of memory. */
char *kiln_family_at(const char *name, size_t start, size_t len);

/* The first offset in NAME's base name at which TOKEN (LEN bytes) stands as
 * a candidate token (kiln_token_at()), or SIZE_MAX: how a manifest's
 * "fingerprint" is found again in its path. */
size_t kiln_token_find(const char *name, const char *token, size_t len);

#endif
