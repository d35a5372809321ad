/*
 * shape.h - the tree evidence of immutable.h: bundlers name every output of
 * one kind the same way, so a directory whose names of one shape mostly
 * pass the rule on the name alone proves the others of that shape too.
 */
#ifndef KILN_SHAPE_H
#define KILN_SHAPE_H

#include "fingerprint.h"

#include <stdbool.h>
#include <stddef.h>

/* How many of a shape's tokens must pass the rule on the name alone. */
#define KILN_SHAPE_SEVERAL 2

/*
 * For the N relative paths RELS (the files of one tree): for each I whose
 * OUT[I].why is KILN_WHY_NONE, set OUT[I] to KILN_WHY_TREE and its token's
 * span when its directory proves the token's shape.  A shape is a
 * directory, the byte before the token ('.', '-', or none at the start of
 * the name), the token's length and an alphabet (fingerprint.h); it is
 * proven when at least KILN_SHAPE_SEVERAL of its tokens pass the rule on
 * the name alone (kiln_fingerprint_span()) and those are at least half of
 * its tokens that may be hashes: hash-like ones (kiln_token_hashlike())
 * that, outside hexadecimal, hold a letter; or when one of its tokens
 * passes, is half of them, and the same shape over the whole tree (any
 * directory) is proven so (then only tokens that look like hashes of the
 * alphabet are taken: both cases in base64url, a digit and a letter in
 * hex, a digit or letters that cannot be spelt in base32).  A shape of a
 * directory with no sample and at most 2 members, in hexadecimal or
 * base32, takes its tokens that are all digits in a bundler's code
 * (".js", ".css") or, in base32, letters that cannot be spelt, when the
 * same shape over the whole tree is proven or a sample elsewhere has the
 * same base name before its token and the same length (a script's
 * style sheet: "static/css/main.86028049.css" beside
 * "static/js/main.3f9a2c7b.js").  Those are then hashes too; words are
 * never taken: hexadecimal dates, kiln_token_hashlike()'s words, in
 * base64url kiln_token_words()'s ("SemiBold", "FACEBOOK", "DSC_0042"), in
 * base32 kiln_token_words32()'s ("LINKEDIN", "APPSTORE").
 * False
 * when out of memory (OUT unchanged).  Pure; thread-safe.
 */
bool kiln_shape_prove(const char *const *rels, size_t n, struct kiln_fp *out);

#endif
