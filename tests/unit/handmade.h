/*
 * handmade.h - a kiln tree made by hand for a unit test: files put by
 * path, siblings encoded here with zlib, manifest entries written here
 * with digests computed here with OpenSSL (never by the code under test),
 * and the events a run reports, kept to be asked about.
 */
#ifndef KILN_HANDMADE_H
#define KILN_HANDMADE_H

#include "kiln.h"

#include "scratch.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* The tree's top: set by the test before anything below is used. */
static char hm_root[256];

/* The scratch directory DIR (a mkdtemp(3) template, filled in) and the
 * tree's top in it, DIR/tree, as hm_root: false, said on stderr, if they
 * cannot be made. */
static inline bool hm_begin(char *dir)
{
	if (!scratch_make(dir))
		return false;
	snprintf(hm_root, sizeof(hm_root), "%s/tree", dir);
	if (mkdir(hm_root, 0755) == 0)
		return true;
	perror(hm_root);
	return false;
}

/* hm_root/REL */
static inline char *hm_path(const char *rel)
{
	static char buf[4][512];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", hm_root, rel);
	return p;
}

/* Put DATA[0..len) at TOP/REL. */
static inline void hm_put_at(const char *top, const char *rel, const void *data, size_t len)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	if ((f = fopen(path, "w"))) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static inline void hm_put(const char *rel, const void *data, size_t len)
{
	hm_put_at(hm_root, rel, data, len);
}

static inline int hm_exists(const char *rel)
{
	struct stat st;

	return lstat(hm_path(rel), &st) == 0;
}

/* Give REL the mtime (and atime) of FROM_REL. */
static inline int hm_same_times(const char *rel, const char *from_rel)
{
	struct stat st;

	if (stat(hm_path(from_rel), &st) != 0)
		return -1;
	return utimensat(AT_FDCWD, hm_path(rel), (struct timespec[2]){ st.st_atim, st.st_mtim }, 0);
}

/* DATA[0..len) gzip-encoded with zlib into OUT (at most CAP bytes): its
 * length, 0 on failure. */
static inline size_t hm_gzip(const void *data, size_t len, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t n;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)data;
	z.avail_in = (unsigned)len;
	z.next_out = out;
	z.avail_out = (unsigned)cap;
	n = deflate(&z, Z_FINISH) == Z_STREAM_END ? cap - z.avail_out : 0;
	deflateEnd(&z);
	return n;
}

static inline void hm_digest(const char *md, const void *data, size_t len, unsigned char *out)
{
	unsigned int n;

	EVP_Digest(data, len, out, &n, EVP_get_digestbyname(md), NULL);
}

static inline char *hm_hex(const unsigned char *d, size_t n)
{
	static char buf[4][130];
	static int k;
	char *p = buf[k++ % 4];

	for (size_t i = 0; i < n; i++)
		sprintf(p + 2 * i, "%02x", d[i]);
	return p;
}

/* A manifest entry (malloc'ed) for the source REL holding SRC; with a gzip
 * sibling recorded as GZ[0..gzlen) (GZ NULL: none, "small"), encoder "r1"; MORE is
 * added inside the entry (", ..." or ""). */
static inline char *hm_entry(const char *rel, const char *src, const unsigned char *gz,
			     size_t gzlen, const char *more)
{
	unsigned char sha[32], sha384[48], gsha[32], b64[80];
	char *s = NULL, sib[400] = ", \"skipped\": \"small\""; /* an entry says why it has none */

	hm_digest("sha256", src, strlen(src), sha);
	hm_digest("sha384", src, strlen(src), sha384);
	EVP_EncodeBlock(b64, sha384, 48);
	if (gz) {
		hm_digest("sha256", gz, gzlen, gsha);
		snprintf(sib, sizeof(sib),
			 ", \"encodings\": {\"gzip\": {\"path\": \"%s.gz\", \"size\": %zu, "
			 "\"sha256\": \"%s\", \"encoder\": \"r1\"}}",
			 rel, gzlen, hm_hex(gsha, 32));
	}
	if (asprintf(&s, "\"%s\": {\"size\": %zu, \"sha256\": \"%s\", \"integrity\": \"sha384-%s\", "
			 "\"content_type\": \"application/javascript\"%s%s}",
		     rel, strlen(src), hm_hex(sha, 32), b64, sib, more) < 0)
		return NULL;
	return s;
}

/* A "stale_siblings" entry (malloc'ed): REL of CODING holding DATA. */
static inline char *hm_stale(const char *rel, const char *coding, const void *data, size_t len)
{
	unsigned char sha[32];
	char *s = NULL;

	hm_digest("sha256", data, len, sha);
	if (asprintf(&s, "\"%s\": {\"coding\": \"%s\", \"size\": %zu, \"sha256\": \"%s\"}", rel,
		     coding, len, hm_hex(sha, 32)) < 0)
		return NULL;
	return s;
}

/* Write the manifest REL (at the top) with the entries FILES (a
 * comma-separated list, each from hm_entry()) and STALE (the same from
 * hm_stale(), or ""), and MORE top-level members (", ..." or ""). */
static inline void hm_manifest(const char *rel, const char *files, const char *stale,
			       const char *more)
{
	char *doc = NULL;

	if (asprintf(&doc, "{\"kiln_manifest\": 2, \"generator\": {\"name\": \"kiln\", "
			   "\"version\": \"0.0.0\"}, \"files\": {%s}, \"stale_siblings\": {%s}%s}\n",
		     files, stale, more) > 0)
		hm_put(rel, doc, strlen(doc));
	free(doc);
}

/* A comma-separated list of N strings (freed here), malloc'ed. */
static inline char *hm_join(size_t n, char **v)
{
	size_t len = 1;
	char *out;

	for (size_t i = 0; i < n; i++)
		len += (v[i] ? strlen(v[i]) : 0) + 2;
	if ((out = malloc(len)))
		*out = '\0';
	for (size_t i = 0; i < n; i++) {
		if (out && v[i]) {
			if (*out)
				strcat(out, ", ");
			strcat(out, v[i]);
		}
		free(v[i]);
	}
	return out;
}

/* The events a run reported, PATH relative to hm_root. */
#define HM_MAXEV 64
struct hm_events {
	unsigned n;
	kiln_event ev[HM_MAXEV];
	char path[HM_MAXEV][300];
	char what[HM_MAXEV][200];
};

static inline void hm_on_event(void *user, kiln_event event, const char *path, int coding,
			       const struct kiln_error *err)
{
	struct hm_events *e = user;
	size_t n = strlen(hm_root);

	(void)coding;
	if (e->n >= HM_MAXEV)
		return;
	e->ev[e->n] = event;
	snprintf(e->path[e->n], sizeof(e->path[0]), "%s",
		 strncmp(path, hm_root, n) == 0 && path[n] == '/' ? path + n + 1 : path);
	snprintf(e->what[e->n++], sizeof(e->what[0]), "%s", err && err->what ? err->what : "");
}

/* How many times EV was reported for REL (with a detail containing WHAT,
 * unless it is NULL). */
static inline unsigned hm_seen(const struct hm_events *e, kiln_event ev, const char *rel,
			       const char *what)
{
	unsigned n = 0;

	for (unsigned i = 0; i < e->n; i++)
		n += e->ev[i] == ev && strcmp(e->path[i], rel) == 0 &&
		     (!what || strstr(e->what[i], what));
	return n;
}

#endif
