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

/* The candidate tokens of one name that are members of shapes (those
 * nearest the end of the name), and the longest token that is one: the
 * work per name is bounded whatever the name ("a-a-a-a-...", 64 hex
 * digits of SHA-256 at most). */
#define KILN_SHAPE_TOKENS 4
#define KILN_SHAPE_TOKEN_MAX 64

/*
 * For the N relative paths RELS (the files of one tree): for each I whose
 * OUT[I].why is KILN_WHY_NONE, set OUT[I] to KILN_WHY_TREE and its token's
 * span when its directory proves the token's shape (docs/cache-control.md,
 * "The tree").  A shape is a directory, the byte before the token ('.',
 * '-', or none at the start of the name), the token's length, an alphabet
 * (fingerprint.h) and whether the files are a bundler's code (.js, .css,
 * .map, ...) or not: each kind is evidence only of its own.  A page
 * (.html) is in no shape.  Samples are the tokens the rule on the name
 * alone takes (kiln_fingerprint_span()).  A shape is proven when at least
 * KILN_SHAPE_SEVERAL of its tokens are samples and those are at least a
 * third of its tokens that may be hashes (code) or an eighth (other
 * files, of which the name alone takes fewer); or when one of its tokens
 * is a sample, is half of them, and the same shape over the whole tree
 * (any directory) is proven so (then only tokens that look like hashes of
 * the alphabet are taken: both cases in base64url, a digit in hex, a
 * digit or letters that cannot be spelt in base32).  A shape of a directory with no sample and
 * at most 2 members, in hexadecimal or base32, takes its tokens that are
 * all digits in a bundler's code or, in base32, letters that cannot be
 * spelt, when the same shape over the whole tree is proven or a sample
 * elsewhere has the same base name before its token and the same length
 * (a script's style sheet: "static/css/main.86028049.css" beside
 * "static/js/main.3f9a2c7b.js"); and a sample's kin beside it (its style
 * sheet: "main-VIRMOKMZ.css" beside "main-K2ZT4RBQ.js").  Never taken, in
 * any shape: dates, kiln_token_hashlike()'s words, kiln_token_words() and
 * kiln_token_words32(); in a file that is no bundler's code,
 * kiln_token_chosen() and kiln_token_chosen32() too; in hexadecimal, a
 * token without a digit, a colour or a UUID's group.  False when out of
 * memory (OUT unchanged).  Pure; thread-safe.
 */
bool kiln_shape_prove(const char *const *rels, size_t n, struct kiln_fp *out);

#endif
