/*
 * cache.c - see cache.h.  Entry layout (format 2, in DIR/v2):
 *   "KILNC2\n\0"             8 bytes of magic
 *   payload length           8 bytes, little-endian
 *   SHA-256 of the payload   32 bytes
 *   key length               4 bytes, little-endian
 *   key                      the entry's own file name: source SHA-256,
 *                            coding and recipe (kiln_cache_path())
 *   payload
 * The key makes an entry that sits under another entry's name (copied or
 * renamed by hand, a tool syncing the store wrongly) a miss like a torn
 * one: nothing but the length, the digest and the name together vouch
 * for the bytes.
 */
#include "cache.h"

#include "classify.h"
#include "error.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "KILNC2\n"
#define HEADER (8 + 8 + 32 + 4)
#define KEY_MAX 4096

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
	sprintf(c->dir, "%s/v2", dir);
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

/* The entry's key: its file name. */
static const char *key_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Read exactly N bytes at OFF of FD into BUF. */
static bool read_at(int fd, uint8_t *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, off + (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		done += (size_t)r;
	}
	return true;
}

/*
 * A bad entry is removed so that the next put rewrites it, but only while
 * PATH still names the file that was read (FD): on a shared store another
 * runner may have renamed a good entry over it meanwhile.  (Losing that
 * race removes a good entry: a miss for someone, never a wrong hit.)
 */
static void remove_bad(int fd, const char *path)
{
	struct stat a, b;

	if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		unlink(path);
}

bool kiln_cache_get(struct kiln_cache *cache, const char *path, uint8_t **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uint8_t header[HEADER], sum[32], *buf = NULL, *key = NULL;
	const char *want = key_of(path);
	struct stat st;
	uint64_t n, klen;

	(void)cache;
	*data = NULL;
	*len = 0;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER ||
	    pread(fd, header, HEADER, 0) != HEADER || memcmp(header, MAGIC, 8) != 0)
		goto bad;
	n = get_le64(header + 8);
	klen = (uint64_t)header[48] | (uint64_t)header[49] << 8 | (uint64_t)header[50] << 16 |
	       (uint64_t)header[51] << 24;
	if (klen != strlen(want) || klen > KEY_MAX ||
	    n != (uint64_t)st.st_size - HEADER - klen || (uint64_t)st.st_size < HEADER + klen ||
	    !(key = malloc(klen + 1)) || !read_at(fd, key, klen, HEADER) ||
	    memcmp(key, want, klen) != 0 || !(buf = malloc(n ? n : 1)) ||
	    !read_at(fd, buf, n, (off_t)(HEADER + klen)))
		goto bad;
	if (kiln_sha256(buf, n, sum) != KILN_OK || memcmp(sum, header + 16, 32) != 0)
		goto bad;
	futimens(fd, NULL); /* recently used */
	close(fd);
	free(key);
	*data = buf;
	*len = n;
	return true;
bad:
	/* corrupt, truncated or another entry's: a miss */
	free(buf);
	free(key);
	remove_bad(fd, path);
	close(fd);
	return false;
}

kiln_status kiln_cache_put(struct kiln_cache *cache, const char *path, const uint8_t *data,
			   size_t len, bool fsync, struct kiln_temps *reg,
			   struct kiln_error *err)
{
	struct kiln_file_meta meta = { .mode = 0644, .fsync = fsync };
	const char *key = key_of(path);
	size_t klen = strlen(key);
	uint8_t *buf = klen <= KEY_MAX ? malloc(HEADER + klen + len) : NULL;
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
	for (int i = 0; i < 4; i++)
		buf[48 + i] = (uint8_t)((uint64_t)klen >> (8 * i));
	memcpy(buf + HEADER, key, klen);
	memcpy(buf + HEADER + klen, data, len);
	st = kiln_write_atomic(reg, path, buf, HEADER + klen + len, &meta, err);
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
			if (f->d_name[0] == '.' && !kiln_is_temp_name(f->d_name))
				continue;
			if (snprintf(full, sizeof(full), "%s/%s", sub, f->d_name) >= (int)sizeof(full))
				continue;
			if (f->d_name[0] == '.') {
				/* a writer's temporary file: one a day old is a dead
				 * writer's, on whatever machine (no lock reaches it) */
				if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) &&
				    time(NULL) - st.st_mtime > 86400)
					unlink(full);
				continue;
			}
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
