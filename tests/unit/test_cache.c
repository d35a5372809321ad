/*
 * test_cache.c - the content cache (cache.c): opening (and creating) its
 * directory, the entry names, put/get round trips, any flipped bit or
 * truncation of an entry being a miss that removes it, recency refreshed by
 * a hit, trimming least recently used first down to the limit (recency set
 * with utimensat, sizes read back with stat), and concurrent writers and
 * readers of one key; for a store shared between machines: a good entry
 * under another key's name is a miss, and trimming removes a writer's
 * temporary file once it is a day old, not before.
 */
#include "cache.h"

#include "tempfile.h"

#include "check.h"
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char base[64];
static struct kiln_temps reg;

/* BASE/REL */
static char *at(const char *rel)
{
	return scratch_path(base, rel);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Deterministic bytes that do not compress into patterns. */
static uint8_t *bytes(size_t n, uint32_t seed)
{
	uint8_t *p = malloc(n ? n : 1);

	for (size_t i = 0; p && i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
	return p;
}

static void key(uint8_t sha[32], int k)
{
	for (int i = 0; i < 32; i++)
		sha[i] = (uint8_t)(k * 37 + i * 11);
}

static struct kiln_cache *open_at(const char *rel, uint64_t max)
{
	struct kiln_error err = { 0 };
	struct kiln_cache *c = kiln_cache_open(at(rel), max, &err);

	CHECK_MSG(c != NULL, "cannot open the cache %s: %s", rel, err.what ? err.what : "?");
	return c;
}

static bool put(struct kiln_cache *c, const char *path, const uint8_t *data, size_t len)
{
	struct kiln_error err = { 0 };

	return kiln_cache_put(c, path, data, len, false, &reg, &err) == KILN_OK;
}

/* A hit holding exactly DATA[0..len). */
static bool hit(struct kiln_cache *c, const char *path, const uint8_t *data, size_t len)
{
	uint8_t *got = NULL;
	size_t n = 99;
	bool ok = kiln_cache_get(c, path, &got, &n) && n == len &&
		  (len == 0 || memcmp(got, data, len) == 0);

	free(got);
	return ok;
}

static bool miss(struct kiln_cache *c, const char *path)
{
	uint8_t *got = (uint8_t *)"x";
	size_t n = 99;
	bool r = kiln_cache_get(c, path, &got, &n);

	if (r)
		free(got);
	return !r && got == NULL && n == 0;
}

static int count_dot_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, ".kiln-", 6) == 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

static void test_open_and_names(void)
{
	struct kiln_error err = { 0 };
	struct kiln_cache *c;
	uint8_t sha[32], other[32];
	char hex[65], want[128], *p, *q, *slash;
	struct stat st;
	FILE *f;

	c = open_at("new/nested/cache", 1000);
	CHECK(stat(at("new/nested/cache"), &st) == 0 && S_ISDIR(st.st_mode));
	f = fopen(at("a-file"), "w");
	CHECK(f != NULL && fclose(f) == 0);
	CHECK(kiln_cache_open(at("a-file"), 1000, &err) == NULL);
	CHECK(err.status == KILN_ERR_IO && err.what != NULL);

	key(sha, 1);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", sha[i]);
	p = c ? kiln_cache_path(c, sha, "gzip", "libdeflate-1.19-l12") : NULL;
	CHECK(p && strncmp(p, at("new/nested/cache/"), strlen(at("new/nested/cache/"))) == 0);
	snprintf(want, sizeof(want), "%s.gzip.libdeflate-1.19-l12", hex);
	slash = p ? strrchr(p, '/') : NULL;
	CHECK_MSG(slash && strcmp(slash + 1, want) == 0, "%s", p ? p : "(null)");
	/* under a two-character fan-out directory */
	CHECK(slash && slash - p > 3 && slash[-3] == '/');
	q = c ? kiln_cache_path(c, sha, "gzip", "libdeflate-1.19-l12") : NULL;
	CHECK(p && q && strcmp(p, q) == 0); /* a function of the key */
	free(q);
	q = c ? kiln_cache_path(c, sha, "br", "libdeflate-1.19-l12") : NULL;
	CHECK(p && q && strcmp(p, q) != 0);
	free(q);
	q = c ? kiln_cache_path(c, sha, "gzip", "libdeflate-1.19-l11") : NULL;
	CHECK(p && q && strcmp(p, q) != 0);
	free(q);
	memcpy(other, sha, 32);
	other[31] ^= 1;
	q = c ? kiln_cache_path(c, other, "gzip", "libdeflate-1.19-l12") : NULL;
	CHECK(p && q && strcmp(p, q) != 0);
	free(q);
	free(p);
	kiln_cache_close(c);
}

static void test_round_trip(void)
{
	struct kiln_cache *c = open_at("rt", 1 << 30);
	uint8_t sha[32], *big = bytes(100000, 7), *big2 = bytes(5000, 8);
	char *p, *p0, fan[PATH_MAX];
	struct stat st;
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	if (!c)
		return;
	key(sha, 2);
	p = kiln_cache_path(c, sha, "gzip", "r1");
	CHECK(miss(c, p));
	CHECK(put(c, p, big, 100000));
	CHECK(exists(p));
	CHECK(hit(c, p, big, 100000));
	CHECK(hit(c, p, big, 100000)); /* a hit is not consumed */
	snprintf(fan, sizeof(fan), "%s", p);
	*strrchr(fan, '/') = '\0';
	CHECK(count_dot_files(fan) == 0); /* no temporary file left */
	/* replaced whole by a new put */
	CHECK(put(c, p, big2, 5000));
	CHECK(hit(c, p, big2, 5000));
	/* an empty payload is a hit with zero bytes */
	key(sha, 3);
	p0 = kiln_cache_path(c, sha, "br", "r1");
	CHECK(put(c, p0, (const uint8_t *)"", 0));
	CHECK(hit(c, p0, NULL, 0));
	/* the same key under another coding is another entry */
	free(p0);
	p0 = kiln_cache_path(c, sha, "gzip", "r1");
	CHECK(miss(c, p0));

	/* a hit refreshes the entry's mtime */
	CHECK(utimensat(AT_FDCWD, p, old, 0) == 0);
	CHECK(hit(c, p, big2, 5000));
	CHECK(stat(p, &st) == 0 && st.st_mtim.tv_sec > time(NULL) - 600);
	free(p0);
	free(p);
	free(big);
	free(big2);
	kiln_cache_close(c);
}

static void flip(const char *path, off_t off, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	uint8_t b = 0;

	CHECK(fd >= 0 && pread(fd, &b, 1, off) == 1);
	b ^= mask;
	CHECK(fd >= 0 && pwrite(fd, &b, 1, off) == 1);
	if (fd >= 0)
		close(fd);
}

/* Every byte of an entry is checked: any flipped bit or any truncation is a
 * miss, and the entry is removed. */
static void test_corrupt(void)
{
	static const uint8_t data[] = "hello, cache: twenty-nine b";
	const size_t len = sizeof(data) - 1;
	struct kiln_cache *c = open_at("bad", 1 << 30);
	uint8_t sha[32];
	char *p;
	off_t size;
	int fd;

	if (!c)
		return;
	key(sha, 4);
	p = kiln_cache_path(c, sha, "gzip", "r");
	CHECK(put(c, p, data, len));
	size = size_of(p);
	CHECK(size >= (off_t)len);
	for (off_t i = 0; i < size; i++) {
		CHECK(put(c, p, data, len) && hit(c, p, data, len));
		flip(p, i, (uint8_t)(1u << (i % 8)));
		CHECK_MSG(miss(c, p), "bit flipped at byte %lld: still a hit", (long long)i);
		CHECK_MSG(!exists(p), "bit flipped at byte %lld: entry kept", (long long)i);
	}
	for (off_t n = 0; n < size; n++) {
		CHECK(put(c, p, data, len));
		CHECK(truncate(p, n) == 0);
		CHECK_MSG(miss(c, p), "cut to %lld bytes: still a hit", (long long)n);
		CHECK_MSG(!exists(p), "cut to %lld bytes: entry kept", (long long)n);
	}
	/* a byte too many */
	CHECK(put(c, p, data, len));
	fd = open(p, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	if (fd >= 0)
		close(fd);
	CHECK(miss(c, p) && !exists(p));
	/* something else under the entry's name */
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "not a cache entry at all, but long enough to hold a header",
			       58) == 58);
	if (fd >= 0)
		close(fd);
	CHECK(miss(c, p) && !exists(p));
	/* and a good entry afterwards is a hit again */
	CHECK(put(c, p, data, len) && hit(c, p, data, len));
	free(p);
	kiln_cache_close(c);
}

static void set_mtime(const char *path, time_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };

	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* Entries 0..N-1 of SIZES bytes in the cache at REL, with mtimes 1000 * (k+1)
 * seconds; their paths into P and their sizes on disk into ONDISK. */
static void fill(const char *rel, const size_t *sizes, int n, char **p, off_t *ondisk)
{
	struct kiln_cache *c = open_at(rel, UINT64_MAX);
	uint8_t sha[32];

	for (int k = 0; k < n; k++) {
		uint8_t *d = bytes(sizes[k], (uint32_t)k);
		key(sha, 10 + k);
		p[k] = c ? kiln_cache_path(c, sha, "gzip", "r") : NULL;
		CHECK(p[k] && put(c, p[k], d, sizes[k]));
		ondisk[k] = p[k] ? size_of(p[k]) : -1;
		CHECK(ondisk[k] >= (off_t)sizes[k]);
		if (p[k])
			set_mtime(p[k], 1000 * (k + 1));
		free(d);
	}
	kiln_cache_close(c);
}

static void test_trim(void)
{
	static const size_t sizes[4] = { 4000, 1000, 2000, 3000 }; /* the oldest is the largest */
	char *p[4];
	off_t s[4];
	struct kiln_cache *c;
	uint8_t *d;

	/* oldest first, down to the limit, and not one more */
	fill("trim1", sizes, 4, p, s);
	c = open_at("trim1", (uint64_t)(s[2] + s[3]));
	CHECK(c && kiln_cache_trim(c) == 2);
	CHECK(!exists(p[0]) && !exists(p[1]) && exists(p[2]) && exists(p[3]));
	CHECK(c && kiln_cache_trim(c) == 0);
	kiln_cache_close(c);
	/* one byte under the total of the rest: the oldest of them goes */
	c = open_at("trim1", (uint64_t)(s[2] + s[3] - 1));
	CHECK(c && kiln_cache_trim(c) == 1);
	CHECK(!exists(p[2]) && exists(p[3]));
	kiln_cache_close(c);
	c = open_at("trim1", 0);
	CHECK(c && kiln_cache_trim(c) == 1 && !exists(p[3]));
	kiln_cache_close(c);
	for (int k = 0; k < 4; k++)
		free(p[k]);

	/* a hit makes the oldest entry the most recent */
	fill("trim2", sizes, 3, p, s);
	c = open_at("trim2", (uint64_t)(s[0] + s[2]));
	d = bytes(sizes[0], 0);
	CHECK(c && hit(c, p[0], d, sizes[0]));
	CHECK(c && kiln_cache_trim(c) == 1);
	CHECK(exists(p[0]) && !exists(p[1]) && exists(p[2]));
	free(d);
	kiln_cache_close(c);
	/* exactly at the limit: nothing to do */
	c = open_at("trim2", (uint64_t)(s[0] + s[2]));
	CHECK(c && kiln_cache_trim(c) == 0 && exists(p[0]) && exists(p[2]));
	kiln_cache_close(c);
	for (int k = 0; k < 3; k++)
		free(p[k]);
}

struct worker {
	struct kiln_cache *c;
	const char *path;
	const uint8_t *data;
	size_t len;
	bool writer;
	int hits, bad;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct kiln_error err;

	for (int i = 0; i < 200; i++) {
		if (w->writer) {
			if (kiln_cache_put(w->c, w->path, w->data, w->len, false, &reg, &err) != KILN_OK)
				w->bad++;
			continue;
		}
		uint8_t *got = NULL;
		size_t n = 0;
		if (kiln_cache_get(w->c, w->path, &got, &n)) {
			w->hits++;
			if (n != w->len || memcmp(got, w->data, n) != 0)
				w->bad++;
			free(got);
		}
	}
	return NULL;
}

/* Two writers of one key and two readers: a reader sees a whole entry or
 * none. */
static void test_concurrent(void)
{
	struct kiln_cache *c = open_at("conc", 1 << 30);
	uint8_t sha[32], *data = bytes(20000, 99);
	struct worker w[4];
	pthread_t t[4];
	char *p;
	int bad = 0;

	if (!c)
		return;
	key(sha, 50);
	p = kiln_cache_path(c, sha, "br", "q11");
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ c, p, data, 20000, i < 2, 0, 0 };
		CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += w[i].bad;
	}
	CHECK_MSG(bad == 0, "%d bad puts or gets", bad);
	CHECK(hit(c, p, data, 20000));
	free(p);
	free(data);
	kiln_cache_close(c);
}

/* An intact entry copied under another key's name (a store synced or
 * edited by hand) is a miss there, and stays a hit under its own. */
static void test_foreign(void)
{
	static const uint8_t data[] = "the payload of key seventy";
	struct kiln_cache *c = open_at("foreign", 1 << 30);
	uint8_t sha[32];
	char *p, *q, cmd[3 * PATH_MAX];

	if (!c)
		return;
	key(sha, 70);
	p = kiln_cache_path(c, sha, "gzip", "r");
	q = kiln_cache_path(c, sha, "br", "r"); /* same source, another coding */
	CHECK(put(c, p, data, sizeof(data) - 1));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", p, q);
	CHECK(system(cmd) == 0 && exists(q));
	CHECK(miss(c, q));
	CHECK(hit(c, p, data, sizeof(data) - 1));
	free(q);
	key(sha, 71); /* another source, same coding */
	q = kiln_cache_path(c, sha, "gzip", "r");
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", q, p, q);
	CHECK(system(cmd) == 0 && exists(q));
	CHECK(miss(c, q));
	free(q);
	free(p);
	kiln_cache_close(c);
}

/* A temporary file of a writer that died on another machine (no lock to
 * tell) goes once it is a day old; a younger one may be a live writer's. */
static void test_dead_writer(void)
{
	struct kiln_cache *c = open_at("dead", 1 << 30);
	uint8_t sha[32];
	char *p, young[PATH_MAX], old[PATH_MAX], *slash;
	FILE *f;

	if (!c)
		return;
	key(sha, 80);
	p = kiln_cache_path(c, sha, "gzip", "r");
	CHECK(put(c, p, (const uint8_t *)"abc", 3));
	slash = strrchr(p, '/');
	snprintf(young, sizeof(young), "%.*s/.kiln-AAAAAA.tmp", (int)(slash - p), p);
	snprintf(old, sizeof(old), "%.*s/.kiln-BBBBBB.tmp", (int)(slash - p), p);
	CHECK((f = fopen(young, "w")) != NULL && fclose(f) == 0);
	CHECK((f = fopen(old, "w")) != NULL && fclose(f) == 0);
	set_mtime(old, time(NULL) - 2 * 86400);
	kiln_cache_trim(c);
	CHECK(exists(young) && !exists(old) && exists(p));
	unlink(young);
	free(p);
	kiln_cache_close(c);
}

/* A put that cannot write reports it. */
static void test_put_error(void)
{
	struct kiln_cache *c = open_at("err", 1 << 30);
	struct kiln_error err = { 0 };
	uint8_t sha[32];
	char *p, fan[PATH_MAX];
	FILE *f;

	if (!c)
		return;
	key(sha, 60);
	p = kiln_cache_path(c, sha, "gzip", "r");
	snprintf(fan, sizeof(fan), "%s", p);
	*strrchr(fan, '/') = '\0';
	f = fopen(fan, "w"); /* a file where the fan-out directory goes */
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(kiln_cache_put(c, p, (const uint8_t *)"abc", 3, false, &reg, &err) != KILN_OK);
	CHECK(err.status != KILN_OK && err.what != NULL);
	CHECK(miss(c, p));
	free(p);
	kiln_cache_close(c);
}

int main(void)
{
	strcpy(base, "/tmp/kiln-test-cache-XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	kiln_temps_init(&reg);
	test_open_and_names();
	test_round_trip();
	test_corrupt();
	test_trim();
	test_concurrent();
	test_put_error();
	test_foreign();
	test_dead_writer();
	kiln_temps_destroy(&reg);
	if (check_failures == 0)
		scratch_remove(base);
	else
		fprintf(stderr, "test_cache: files left in %s\n", base);
	return check_exit("test_cache");
}
