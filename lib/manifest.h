/*
 * manifest.h - the JSON manifest of a tree: every asset, its digests, its
 * media type and its siblings, or why it has none.  The format is documented
 * in docs/manifest.md; this module is its only writer.
 */
#ifndef KILN_MANIFEST_H
#define KILN_MANIFEST_H

#include "kiln.h"
#include "sibling.h"

#include <stdbool.h>
#include <stddef.h>

#define KILN_MANIFEST_VERSION 1

/*
 * The manifest key of a relative path: the path itself when it is valid
 * UTF-8; otherwise the path with '%' and every byte that is not part of a
 * well-formed UTF-8 sequence written as "%XX" (uppercase hex), *encoded set.
 * Returns a malloc'ed string, or NULL when out of memory.
 */
char *kiln_manifest_key(const char *rel, bool *encoded);

/*
 * The manifest text (JSON, keys sorted, 2-space indent, final newline) for
 * the N reports of one tree, as a malloc'ed string, or NULL when out of
 * memory.  Reports that are not entries (siblings, errors, links, special
 * files, files not hashed) are left out.
 */
char *kiln_manifest_dump(const struct kiln_options *opt, const struct kiln_report *reports,
			 size_t n);

/* Write the manifest text to PATH atomically (mode 0644). */
kiln_status kiln_manifest_write(const char *path, const struct kiln_options *opt,
				const struct kiln_report *reports, size_t n,
				struct kiln_tempslot *slot, struct kiln_error *err);

#endif
