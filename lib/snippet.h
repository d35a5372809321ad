/*
 * snippet.h - the nginx configuration snippet that serves a tree's siblings.
 */
#ifndef KILN_SNIPPET_H
#define KILN_SNIPPET_H

#include "kiln.h"
#include "sibling.h"

#include <stdbool.h>

/*
 * The snippet text for a tree built with OPT, as a malloc'ed string (NULL
 * when out of memory).  HAVE_BR: at least one .br sibling was written, which
 * alone turns brotli_static on.  User strings in the header comment (globs)
 * have control characters escaped, so they cannot end the comment line.
 */
char *kiln_snippet_text(const struct kiln_options *opt, bool have_br);

/* Write the snippet to PATH atomically (mode 0644). */
kiln_status kiln_snippet_write(const char *path, const struct kiln_options *opt, bool have_br,
			       struct kiln_tempslot *slot, struct kiln_error *err);

#endif
