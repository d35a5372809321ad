/*
 * scratch.h - a unit test's scratch directory: made with mkdtemp(3), named
 * into by path, removed (everything under it, links not followed) once the
 * test has passed.
 */
#ifndef KILN_SCRATCH_H
#define KILN_SCRATCH_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>

/* DIR/REL in one of a few rotating buffers: up to four can be in use at
 * once (enough for any one call). */
static inline char *scratch_path(const char *dir, const char *rel)
{
	static char buf[4][PATH_MAX + 64];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, rel);
	return p;
}

static inline int scratch_rm_one(const char *path, const struct stat *st, int flag,
				 struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove DIR and everything under it. */
static inline void scratch_remove(const char *dir)
{
	nftw(dir, scratch_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
