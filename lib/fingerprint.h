/*
 * fingerprint.h - which files never change under their name.
 */
#ifndef KILN_FINGERPRINT_H
#define KILN_FINGERPRINT_H

#include "kiln.h"

#include <stdbool.h>

/* True if the file at REL (relative path) is served as immutable: its name
 * is fingerprinted (kiln_fingerprinted()) or it matches one of
 * OPT->immutable's globs (the rules of kiln_options.include). */
bool kiln_immutable(const struct kiln_options *opt, const char *rel);

#endif
