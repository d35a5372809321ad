/*
 * snippet.h - the nginx configuration snippet that serves a tree's siblings.
 */
#ifndef KILN_SNIPPET_H
#define KILN_SNIPPET_H

#include "kiln.h"

#include <stdbool.h>

/*
 * The snippet text for a tree built with OPT, as a malloc'ed string (NULL
 * when out of memory).  KEPT: the bit set of codings with at least one
 * sibling in the tree; only their serving directives are turned on.
 * VARY_HEADER: some asset has a sibling but none of a coding whose module
 * marks identity responses (codec.h, vary_identity), so every response
 * gets "Vary: Accept-Encoding" from add_header instead.  User strings in
 * the header comment (globs) have control characters escaped, so they
 * cannot end the comment line.
 */
char *kiln_snippet_text(const struct kiln_options *opt, unsigned kept, bool vary_header);

#endif
