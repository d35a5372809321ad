/*
 * fingerprint.h - content hashes in file names: what a token is, the rule
 * on a name alone, and a file's family.  Which files of a tree are served
 * immutable, from all the evidence a build leaves, is immutable.h's.
 */
#ifndef KILN_FINGERPRINT_H
#define KILN_FINGERPRINT_H

#include "kiln.h"
#include "words.h"

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

/* Tokens shorter than this are never taken for a hash, but that a
 * bundler's manifest proves one of KILN_TOKEN_MIN_BUNDLER or more. */
#define KILN_TOKEN_MIN 8
#define KILN_TOKEN_MIN_BUNDLER 6

/* What a file is, by its last extension (kiln_name_kind()): a bundler's
 * code (".js", ".mjs", ".cjs", ".css", ".map", ".wasm"), a page (".html",
 * ".htm", ".xhtml": the names people visit, never hashed by a bundler), or
 * anything else (images, fonts, documents, data). */
enum {
	KILN_KIND_OTHER = 0,
	KILN_KIND_CODE,
	KILN_KIND_PAGE,
};

unsigned kiln_name_kind(const char *name);

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
 * the file is immutable without saying where its hash is).  CHANGED: its
 * bytes once changed under its name, which a content hash never does, so
 * that neither its name, the tree nor a rename makes it immutable again
 * while the name stays (immutable.h; the manifest's "bytes_changed"). */
struct kiln_fp {
	uint8_t why;
	uint32_t start, len;
	uint8_t changed;
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

/* Is the change of a name's token from OLD to NEW (LEN bytes each) what a
 * new content hash makes, rather than a counter, a date, a campaign or
 * another name ("chapter-00000041" -> "chapter-00000042", "sale-SALE2024"
 * -> "sale-SALE2025", "speaker-IanMcKay" -> "speaker-XuLiPing")?  Both of
 * a bundler's hash shape (8 base64url characters without '-' or '_', or 8
 * hexadecimal digits or more), hash-like (kiln_token_hashlike()), neither
 * a name someone could have chosen (kiln_token_chosen()); more than half
 * of the positions differ (a new hash differs almost everywhere:
 * webpack's 8 hex digits keep 4 of 8 one time in a thousand); and when
 * either holds a letter, not only digits changed. */
bool kiln_token_changed(const char *old, const char *new, size_t len);

/* Is the base name of NAME at [START, START + LEN) a candidate token: at
 * least KILN_TOKEN_MIN base64url bytes, right before a '.', right after a
 * '.' or '-' (or at the start of the base name)? */
bool kiln_token_at(const char *name, size_t start, size_t len);

/* kiln_token_at() with MIN bytes at least instead of KILN_TOKEN_MIN: a
 * bundler's manifest proves a token of KILN_TOKEN_MIN_BUNDLER or more
 * (Vite's "[hash:6]"). */
bool kiln_token_at_min(const char *name, size_t start, size_t len, size_t min);

/* The next candidate token of NAME's base name at or after offset *AT (0:
 * from the start), left to right: true with [*AT, *AT + *LEN) the token
 * (go on from *AT + 1), false past the last. */
bool kiln_token_next(const char *name, size_t *at, size_t *len);

/* The rule on a name alone (docs/cache-control.md, "The name"): the
 * fingerprint kiln_fingerprinted() finds in NAME's base name, the first
 * left to right: true with *START its offset in NAME and *LEN its length.
 * What the name alone takes depends on the file's kind
 * (kiln_name_kind()): a page never, a file that is no bundler code only
 * tokens of more pieces (two numbers; in base64url two runs of each case
 * too). */
bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len);

/* Is NAME's hexadecimal token at [START, START + LEN) something other
 * than a hash: a colour of four doubled digits ("palette-ff00aa11"), a
 * placeholder typed in sequence ("sdk.a1b2c3d4"), the last group of a
 * UUID, an id after a timestamp? */
bool kiln_token_other(const char *name, size_t start, size_t len);

/* NAME with [START, START + LEN) replaced by '*' ("assets/app.3f9a2c7b.js"
 * -> "assets/app.*.js"): the family the versions of one file in two
 * releases share.  Malloc'ed; NULL when out of memory. */
char *kiln_family_at(const char *name, size_t start, size_t len);

/* The first offset in NAME's base name at which TOKEN (LEN bytes) stands as
 * a candidate token (kiln_token_at()), or SIZE_MAX: how a manifest's
 * "fingerprint" is found again in its path. */
size_t kiln_token_find(const char *name, const char *token, size_t len);

#endif
