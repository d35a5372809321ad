/*
 * release.h - an earlier release of a tree given as a deploy archive
 * (kiln_options.previous), read for the dictionaries of dict.c.
 */
#ifndef KILN_RELEASE_H
#define KILN_RELEASE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file of the release, its bytes in memory. */
struct kiln_release_file {
	char *rel;       /* its path in the release, '/'-separated */
	uint8_t *data;   /* LEN bytes */
	size_t len;
};

struct kiln_release {
	struct kiln_release_file *v;
	size_t n;
	bool all_below_top; /* (while reading) every entry is below one directory */
};

/*
 * Read the archive PATH (tar, zip, 7z or cpio, compressed with gzip, bzip2,
 * xz, zstd or lz4) into *OUT: every regular file of at most MAX_SIZE bytes
 * whose path WANT(path) accepts (WANT must depend on the base name alone),
 * paths relative to the archive's single top-level directory when every
 * entry lies below one, as kiln_run_archive() reads them.  Returns KILN_OK;
 * KILN_ERR_IO (not an archive, unreadable, corrupt) or KILN_ERR_NOMEM with
 * *ERR set and *OUT empty.  Free with kiln_release_free().
 */
kiln_status kiln_release_read_archive(const char *path, bool (*want)(const char *rel),
				      uint64_t max_size, struct kiln_release *out,
				      struct kiln_error *err);

void kiln_release_free(struct kiln_release *r);

#endif
