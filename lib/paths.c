/*
 * paths.c - see paths.h.
 */
#include "paths.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *kiln_path_join(const char *root, const char *rel, const char *suffix)
{
	size_t a = strlen(root), b = strlen(rel), c = strlen(suffix);
	char *p = malloc(a + b + c + 2);

	if (p) {
		memcpy(p, root, a);
		p[a] = '/';
		memcpy(p + a + 1, rel, b);
		memcpy(p + a + 1 + b, suffix, c + 1);
	}
	return p;
}

bool kiln_glob_match(const char *glob, const char *relpath)
{
	const char *base;

	if (strncmp(glob, "./", 2) == 0)
		glob += 2;
	if (strchr(glob, '/'))
		return fnmatch(glob, relpath, 0) == 0;
	base = strrchr(relpath, '/');
	return fnmatch(glob, base ? base + 1 : relpath, 0) == 0;
}

ssize_t kiln_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

char *kiln_path_real_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	char *real = dir ? realpath(dir, NULL) : NULL;

	free(dir);
	return real;
}
