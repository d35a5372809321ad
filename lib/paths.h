/*
 * paths.h - the generic helpers for paths and file contents that every
 * floor of libkiln uses: joining a tree's paths, matching globs against
 * them, reading a file whole.  They know nothing of codings, siblings or
 * manifests.  Thread-safe: no state.
 */
#ifndef KILN_PATHS_H
#define KILN_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "ROOT/REL" + SUFFIX, malloc'ed; NULL when out of memory. */
char *kiln_path_join(const char *root, const char *rel, const char *suffix);

/*
 * Match RELPATH (relative to the tree root, '/'-separated) against a glob:
 * a glob with a '/' is matched with fnmatch(3) against the whole RELPATH,
 * '*' matching '/' too (a leading "./" in the glob is ignored); a glob
 * without '/' is matched against the last component only.
 */
bool kiln_glob_match(const char *glob, const char *relpath);

/* The directory holding PATH's last component ("." for a bare name),
 * resolved by realpath(3): malloc'ed, or NULL (not there, or out of
 * memory). */
char *kiln_path_real_dir(const char *path);

/* Read up to N bytes of FD at OFF into BUF, retrying short reads; returns
 * the count (< N only at end of file) or -1. */
ssize_t kiln_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off);

#endif
