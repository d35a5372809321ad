/*
 * cache.c - see cache.h.  Entry layout:
 *   "KILNC1\n\0"             8 bytes of magic
 *   payload length           8 bytes, little-endian
 *   SHA-256 of the payload   32 bytes
 *   payload
 */
#include "cache.h"

#include "error.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "KILNC1\n"
#define HEADER (8 + 8 + 32)

struct kiln_cache {
	char *dir; /* DIR/v1 */
	uint64_t max;
};

static int mkdir_p(const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

struct kiln_cache *kiln_cache_open(const char *dir, uint64_t max_bytes, struct kiln_error *err)
{
	struct kiln_cache *c = calloc(1, sizeof(*c));
	struct stat st;

	err->suffix = "";
	if (!c || !(c->dir = malloc(strlen(dir) + 4))) {
		free(c);
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot open the cache");
		return NULL;
	}
	sprintf(c->dir, "%s/v1", dir);
	c->max = max_bytes;
	if (mkdir_p(c->dir) != 0 || stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		kiln_fail(err, KILN_ERR_IO, errno ? errno : ENOTDIR, "cannot create the cache directory");
		kiln_cache_close(c);
		return NULL;
	}
	return c;
}

void kiln_cache_close(struct kiln_cache *cache)
{
	if (!cache)
		return;
	free(cache->dir);
	free(cache);
}

char *kiln_cache_path(const struct kiln_cache *cache, const uint8_t src_sha256[32],
		      const char *coding, const char *recipe)
{
	char hex[65], *p;
	size_t n = strlen(cache->dir) + strlen(coding) + strlen(recipe) + 100;

	kiln_hex(src_sha256, 32, hex);
	if (!(p = malloc(n)))
		return NULL;
	snprintf(p, n, "%s/%.2s/%s.%s.%s", cache->dir, hex, hex, coding, recipe);
	return p;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

bool kiln_cache_get(struct kiln_cache *cache, const char *path, uint8_t **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uint8_t header[HEADER], sum[32], *buf = NULL;
	struct stat st;
	uint64_t n;
	size_t done = 0;

	(void)cache;
	*data = NULL;
	*len = 0;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER ||
	    pread(fd, header, HEADER, 0) != HEADER || memcmp(header, MAGIC, 8) != 0)
		goto bad;
	n = get_le64(header + 8);
	if (n != (uint64_t)st.st_size - HEADER || !(buf = malloc(n ? n : 1)))
		goto bad;
	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, (off_t)(HEADER + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto bad;
		done += (size_t)r;
	}
	if (kiln_sha256(buf, n, sum) != KILN_OK || memcmp(sum, header + 16, 32) != 0)
		goto bad;
	futimens(fd, NULL); /* recently used */
	close(fd);
	*data = buf;
	*len = n;
	return true;
bad:
	/* corrupt or truncated: a miss, and gone so it is rewritten */
	free(buf);
	close(fd);
	unlink(path);
	return false;
}

kiln_status kiln_cache_put(struct kiln_cache *cache, const char *path, const uint8_t *data,
			   size_t len, bool fsync, struct kiln_temps *reg,
			   struct kiln_error *err)
{
	struct kiln_file_meta meta = { .mode = 0644, .fsync = fsync };
	uint8_t *buf = malloc(HEADER + len);
	char *dir = strdup(path), *slash;
	kiln_status st;

	(void)cache;
	if (!buf || !dir) {
		free(buf);
		free(dir);
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot write cache entry");
		return KILN_ERR_NOMEM;
	}
	slash = strrchr(dir, '/');
	*slash = '\0';
	mkdir(dir, 0755); /* the fan-out directory; EEXIST is fine */
	free(dir);
	memcpy(buf, MAGIC, 8);
	for (int i = 0; i < 8; i++)
		buf[8 + i] = (uint8_t)((uint64_t)len >> (8 * i));
	kiln_sha256(data, len, buf + 16);
	memcpy(buf + HEADER, data, len);
	st = kiln_write_atomic(reg, path, buf, HEADER + len, &meta, err);
	free(buf);
	return st;
}

struct cache_file {
	char *path;
	struct timespec mtime;
	uint64_t size;
};

static int by_mtime(const void *a, const void *b)
{
	const struct cache_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

size_t kiln_cache_trim(struct kiln_cache *cache)
{
	struct cache_file *files = NULL;
	size_t n = 0, cap = 0, removed = 0;
	uint64_t total = 0;
	DIR *top = opendir(cache->dir);
	struct dirent *d;

	if (!top)
		return 0;
	while ((d = readdir(top)) != NULL) {
		char sub[PATH_MAX];
		DIR *fan;
		struct dirent *f;
		if (d->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", cache->dir, d->d_name) >= (int)sizeof(sub))
			continue;
		if (!(fan = opendir(sub)))
			continue;
		while ((f = readdir(fan)) != NULL) {
			char full[PATH_MAX];
			struct stat st;
			if (f->d_name[0] == '.')
				continue; /* temporary files of live writers, among others */
			if (snprintf(full, sizeof(full), "%s/%s", sub, f->d_name) >= (int)sizeof(full))
				continue;
			if (lstat(full, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				struct cache_file *v = realloc(files, (cap = cap ? 2 * cap : 256) * sizeof(*v));
				if (!v)
					break;
				files = v;
			}
			if (!(files[n].path = strdup(full)))
				break;
			files[n].mtime = st.st_mtim;
			files[n].size = (uint64_t)st.st_size;
			total += files[n].size;
			n++;
		}
		closedir(fan);
	}
	closedir(top);
	if (n > 1)
		qsort(files, n, sizeof(*files), by_mtime);
	for (size_t i = 0; i < n && total > cache->max; i++) {
		if (unlink(files[i].path) == 0) {
			total -= files[i].size;
			removed++;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
	return removed;
}
