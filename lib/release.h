/*
 * release.h - an earlier release of a tree (kiln_options.previous), a
 * directory or a deploy archive, read for the dictionaries of dict.c and
 * the names immutable.c compares with the tree's.
 */
#ifndef KILN_RELEASE_H
#define KILN_RELEASE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file of the release. */
struct kiln_release_file {
	char *rel;       /* its path in the release, '/'-separated */
	uint8_t *data;   /* an archive's: its LEN bytes; a directory's: NULL */
	size_t len;      /* its size */
	/* a directory's whose own manifest says its bytes once changed under
	 * its name ("bytes_changed"): no content hash, in the next release
	 * too */
	bool changed;
};

struct kiln_release {
	struct kiln_release_file *v; /* sorted by rel (strcmp) */
	size_t n;
	bool all_below_top; /* (while reading) every entry is below one directory */
};

/*
 * Read the release PATH into *OUT: a directory is walked as a tree is
 * (kiln_walk() with OPT's settings but no globs and no followed links: its
 * siblings and kiln's own files are no files of it); an archive as
 * kiln_release_read_archive() reads it.  Only regular files of at most
 * MAX_SIZE bytes whose name holds a candidate token (kiln_token_at()) are
 * kept.  Returns as kiln_release_read_archive(), with KILN_ERR_IO and *ERR
 * when a directory cannot be walked.  Free with kiln_release_free().
 */
kiln_status kiln_release_read(const char *path, const struct kiln_options *opt,
			      uint64_t max_size, struct kiln_release *out, struct kiln_error *err);

/* The file REL of R, or NULL. */
const struct kiln_release_file *kiln_release_find(const struct kiln_release *r, const char *rel);

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
