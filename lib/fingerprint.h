/*
 * fingerprint.h - which files never change under their name.
 */
#ifndef KILN_FINGERPRINT_H
#define KILN_FINGERPRINT_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>

/* True if the file at REL (relative path) is served as immutable: its name
 * is fingerprinted (kiln_fingerprinted()) or it matches one of
 * OPT->immutable's globs (the rules of kiln_options.include). */
bool kiln_immutable(const struct kiln_options *opt, const char *rel);

/* The fingerprint kiln_fingerprinted() finds in NAME (the first, left to
 * right): true with *START its offset in NAME and *LEN its length; false
 * when NAME is not fingerprinted. */
bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len);

/* NAME's family: NAME with its fingerprint replaced by '*'
 * ("assets/app.3f9a2c7b.js" -> "assets/app.*.js"), so that the versions of
 * one file in two releases share it.  Malloc'ed; NULL when NAME is not
 * fingerprinted (or out of memory). */
char *kiln_fingerprint_family(const char *name);

#endif
