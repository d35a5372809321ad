/*
 * scratch.h - a unit test's scratch directory: made with mkdtemp(3), named
 * into by path, looked at (how many names of one directory match a glob;
 * a listing of every file under it with its metadata and a digest of its
 * bytes, to tell that nothing was written), removed (everything under it,
 * links not followed) once the test has passed.
 */
#ifndef KILN_SCRATCH_H
#define KILN_SCRATCH_H

#include "check.h"

#include <dirent.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Make the scratch directory DIR, a mkdtemp(3) template (filled in):
 * false, said on stderr, if it cannot be made. */
static inline bool scratch_make(char *dir)
{
	if (mkdtemp(dir))
		return true;
	perror("mkdtemp");
	return false;
}

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

/* The end of test program NAME: its scratch directory DIR removed if every
 * check passed (kept to look at otherwise), and its exit status. */
static inline int scratch_end(const char *dir, const char *name)
{
	if (!check_failures)
		scratch_remove(dir);
	return check_exit(name);
}

/* How many names in the directory DIR (not below it) match GLOB. */
static inline unsigned scratch_count(const char *dir, const char *glob)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		     fnmatch(glob, e->d_name, FNM_PERIOD) == 0;
	if (d)
		closedir(d);
	return n;
}

/* The lines scratch_snapshot() is gathering (nftw(3) passes no argument). */
static struct {
	char **v;
	size_t n, skip;
	bool one_dir;
} scratch_lines;

static inline int scratch_list_one(const char *path, const struct stat *st, int flag,
				   struct FTW *ftw)
{
	uint64_t h = 14695981039346656037u; /* FNV-1a 64 of the bytes */
	struct stat dir_st;
	char **v, *line = NULL;
	FILE *f;
	int c;

	(void)flag;
	(void)ftw;
	if (S_ISREG(st->st_mode) && (f = fopen(path, "rb"))) {
		while ((c = getc(f)) != EOF)
			h = (h ^ (uint8_t)c) * 1099511628211u;
		fclose(f);
	}
	/* (two trees' directories differ in mtime and inode alone) */
	if (!scratch_lines.one_dir && S_ISDIR(st->st_mode)) {
		memset(&dir_st, 0, sizeof(dir_st));
		dir_st.st_mode = st->st_mode;
		st = &dir_st;
	}
	if (asprintf(&line, "%s %o %lld %lld.%09ld %llu %016llx", path + scratch_lines.skip,
		     (unsigned)st->st_mode, (long long)st->st_size, (long long)st->st_mtim.tv_sec,
		     st->st_mtim.tv_nsec,
		     scratch_lines.one_dir ? (unsigned long long)st->st_ino : 0ull,
		     (unsigned long long)h) < 0)
		return -1;
	if (!(v = realloc(scratch_lines.v, (scratch_lines.n + 1) * sizeof(*v)))) {
		free(line);
		return -1;
	}
	scratch_lines.v = v;
	v[scratch_lines.n++] = line;
	return 0;
}

static inline int scratch_line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry under DIR (links not followed), one line each, sorted: its
 * path below DIR, mode, size, mtime, inode and a digest of its bytes
 * (with ONE_DIR; without, no inode, and of a directory its mode alone);
 * malloc'ed, or NULL.  Two equal snapshots of one directory with ONE_DIR:
 * nothing under it was written, replaced, chmod-ed or touched in between;
 * of two directories without: they hold the same files with the same
 * bytes, modes and mtimes. */
static inline char *scratch_snapshot(const char *dir, bool one_dir)
{
	size_t len = 1;
	char *out = NULL;
	bool ok;

	scratch_lines.v = NULL;
	scratch_lines.n = 0;
	scratch_lines.skip = strlen(dir);
	scratch_lines.one_dir = one_dir;
	ok = nftw(dir, scratch_list_one, 16, FTW_PHYS) == 0;
	if (scratch_lines.n > 1)
		qsort(scratch_lines.v, scratch_lines.n, sizeof(char *), scratch_line_cmp);
	for (size_t i = 0; i < scratch_lines.n; i++)
		len += strlen(scratch_lines.v[i]) + 1;
	if (ok && (out = malloc(len))) {
		*out = '\0';
		for (size_t i = 0; i < scratch_lines.n; i++)
			strcat(strcat(out, scratch_lines.v[i]), "\n");
	}
	for (size_t i = 0; i < scratch_lines.n; i++)
		free(scratch_lines.v[i]);
	free(scratch_lines.v);
	scratch_lines.v = NULL;
	return out;
}

#endif
