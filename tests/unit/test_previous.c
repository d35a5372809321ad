/*
 * test_previous.c - what earlier runs left in a tree (previous.c), on a
 * scratch tree with a manifest written here by hand (digests computed here
 * with OpenSSL, siblings encoded here with zlib): a recorded sibling of a
 * gone source that still holds the recorded bytes is removed, one that
 * holds other bytes is left and reported as an asset of its own; a stale
 * sibling on record is removed while it holds its bytes, left otherwise; a
 * record's sibling is reused while its size and mtime match, proved by its
 * digest when the mtime moved, decoded with --verify, and gets its source's
 * mode and mtime back; a sibling kiln never wrote is pointed out, as
 * stale when it does not decode to its source; the size a coding was tried
 * at is known only for the same content and recipe.
 */
#include "previous.h"

#include "codec.h"
#include "walk.h"

#include "check.h"
#include "scratch.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/kiln-previous-XXXXXX";
static char root[256];

#define MAXEV 32
struct events {
	unsigned n;
	kiln_event ev[MAXEV];
	char path[MAXEV][300];
};

static void on_event(void *user, kiln_event event, const char *path, int coding,
		     const struct kiln_error *err)
{
	struct events *e = user;

	(void)coding;
	(void)err;
	if (e->n < MAXEV) {
		e->ev[e->n] = event;
		snprintf(e->path[e->n++], sizeof(e->path[0]), "%s", path + strlen(root) + 1);
	}
}

/* How many times EV was reported for REL. */
static unsigned seen(const struct events *e, kiln_event ev, const char *rel)
{
	unsigned n = 0;

	for (unsigned i = 0; i < e->n; i++)
		n += e->ev[i] == ev && strcmp(e->path[i], rel) == 0;
	return n;
}

static void put(const char *rel, const void *data, size_t len)
{
	FILE *f = fopen(scratch_path(root, rel), "w");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static int exists(const char *rel)
{
	struct stat st;

	return lstat(scratch_path(root, rel), &st) == 0;
}

/* DATA[0..len) gzip-encoded with zlib into OUT (at most CAP bytes): its
 * length. */
static size_t gzip(const char *data, size_t len, unsigned char *out, size_t cap)
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

static void digest(const char *md, const void *data, size_t len, unsigned char *out)
{
	unsigned int n;

	EVP_Digest(data, len, out, &n, EVP_get_digestbyname(md), NULL);
}

static char *hex(const unsigned char *d, size_t n)
{
	static char buf[4][130];
	static int k;
	char *p = buf[k++ % 4];

	for (size_t i = 0; i < n; i++)
		sprintf(p + 2 * i, "%02x", d[i]);
	return p;
}

/* A manifest entry for source REL holding SRC; with a gzip sibling of
 * GZ[0..gzlen) recorded (GZ NULL: none), recipe RECIPE. */
static char *entry(const char *rel, const char *src, const unsigned char *gz, size_t gzlen,
		   const char *more)
{
	unsigned char sha[32], sha384[48], gsha[32], b64[80];
	char *s = NULL, sib[400] = "";

	digest("sha256", src, strlen(src), sha);
	digest("sha384", src, strlen(src), sha384);
	EVP_EncodeBlock(b64, sha384, 48);
	if (gz) {
		digest("sha256", gz, gzlen, gsha);
		snprintf(sib, sizeof(sib),
			 ", \"encodings\": {\"gzip\": {\"path\": \"%s.gz\", \"size\": %zu, "
			 "\"sha256\": \"%s\", \"encoder\": \"r1\"}}",
			 rel, gzlen, hex(gsha, 32));
	}
	if (asprintf(&s, "\"%s\": {\"size\": %zu, \"sha256\": \"%s\", \"integrity\": \"sha384-%s\", "
			 "\"content_type\": \"application/javascript\"%s%s}",
		     rel, strlen(src), hex(sha, 32), b64, sib, more) < 0)
		return NULL;
	return s;
}

static char *stale(const char *rel, const char *coding, const void *data, size_t len)
{
	unsigned char sha[32];
	char *s = NULL;

	digest("sha256", data, len, sha);
	if (asprintf(&s, "\"%s\": {\"coding\": \"%s\", \"size\": %zu, \"sha256\": \"%s\"}", rel,
		     coding, len, hex(sha, 32)) < 0)
		return NULL;
	return s;
}

static const char app[] = "function app() { return 'the application, long enough to be worth "
			  "compressing, and again: the application'; }\n";
static const char gone[] = "var gone = 'a source that was deleted since the last run';\n";
static const char moved[] = "var moved = 'a source whose sibling was replaced by hand';\n";
static const char other[] = "var other = 'a source kiln never recorded';\n";

struct fixture {
	unsigned char app_gz[512], gone_gz[512], moved_gz[512], other_gz[512];
	size_t app_n, gone_n, moved_n, other_n;
};

static void make_tree(struct fixture *fx)
{
	char *e1, *e2, *e3, *s1, *s2, *s3, *doc = NULL;
	struct timespec times[2];
	struct stat st;

	fx->app_n = gzip(app, strlen(app), fx->app_gz, sizeof(fx->app_gz));
	fx->gone_n = gzip(gone, strlen(gone), fx->gone_gz, sizeof(fx->gone_gz));
	fx->moved_n = gzip(moved, strlen(moved), fx->moved_gz, sizeof(fx->moved_gz));
	fx->other_n = gzip(other, strlen(other), fx->other_gz, sizeof(fx->other_gz));
	CHECK(fx->app_n && fx->gone_n && fx->moved_n && fx->other_n);
	put("app.js", app, strlen(app));
	put("app.js.gz", fx->app_gz, fx->app_n);
	put("gone.js.gz", fx->gone_gz, fx->gone_n);
	put("moved.js.gz", "someone's own archive", 21); /* replaced by hand */
	put("old.css.gz", "old bytes", 9);               /* stale, still its bytes */
	put("keep.css.br", "other bytes now", 15);       /* stale, replaced since */
	put("other.js", other, strlen(other));
	/* the sibling has its source's mtime, as kiln leaves it */
	CHECK(stat(scratch_path(root, "app.js"), &st) == 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	CHECK(utimensat(AT_FDCWD, scratch_path(root, "app.js.gz"), times, 0) == 0);
	e1 = entry("app.js", app, fx->app_gz, fx->app_n,
		   ", \"no_gain\": {\"br\": {\"size\": 4900, \"encoder\": \"b1\"}}");
	e2 = entry("gone.js", gone, fx->gone_gz, fx->gone_n, "");
	e3 = entry("moved.js", moved, fx->moved_gz, fx->moved_n, "");
	s1 = stale("old.css.gz", "gzip", "old bytes", 9);
	s2 = stale("keep.css.br", "br", "the bytes kiln wrote", 20);
	s3 = stale("missing.css.gz", "gzip", "x", 1);
	CHECK(asprintf(&doc, "{\"kiln_manifest\": 2, \"generator\": {\"name\": \"kiln\", "
			     "\"version\": \"0.0.0\"}, \"files\": {%s, %s, %s}, "
			     "\"stale_siblings\": {%s, %s, %s}}\n",
		       e1, e2, e3, s1, s2, s3) > 0);
	if (doc)
		put(KILN_MANIFEST_NAME, doc, strlen(doc));
	free(e1);
	free(e2);
	free(e3);
	free(s1);
	free(s2);
	free(s3);
	free(doc);
}

struct setup {
	struct kiln_options opt;
	struct kiln_callbacks cb;
	struct kiln_run *run;
	struct kiln_tree t;
	struct events ev;
};

/* A tree run on ROOT up to the pool: walked, its record loaded. */
static bool begin(struct setup *s, bool verify)
{
	struct kiln_error err;
	char *where = NULL;

	memset(s, 0, sizeof(*s));
	kiln_options_init(&s->opt);
	s->opt.jobs = 1;
	s->opt.verify = verify;
	s->cb.on_event = on_event;
	s->cb.user = &s->ev;
	if (!(s->run = kiln_run_new(&s->opt, &s->cb)))
		return false;
	if (kiln_tree_begin(&s->t, s->run, root, &s->run->cb) != KILN_OK ||
	    kiln_walk(s->t.root, &s->run->opt, NULL, 0, &s->t.walk, &err) != KILN_OK) {
		kiln_tree_end(&s->t);
		kiln_run_free(s->run);
		return false;
	}
	if (kiln_prev_load(&s->t, &err, &where) != KILN_OK) {
		CHECK_MSG(0, "kiln_prev_load: %s", err.what);
		return false;
	}
	return true;
}

static void end(struct setup *s)
{
	kiln_tree_end(&s->t);
	kiln_run_free(s->run);
}

static void test_load_and_finish(const struct fixture *fx)
{
	struct setup s;
	size_t nstale;

	CHECK(begin(&s, false));
	if (!s.run)
		return;
	/* at load: the stale sibling that still holds its bytes goes; the one
	 * replaced since is no longer kiln's and stays; the missing one is off
	 * the record */
	CHECK(!exists("old.css.gz") && seen(&s.ev, KILN_EVENT_REMOVED, "old.css.gz") == 1);
	CHECK(exists("keep.css.br") && seen(&s.ev, KILN_EVENT_REMOVED, "keep.css.br") == 0);
	kiln_ledger_stale(&s.t.ledger, &nstale);
	CHECK_MSG(nstale == 0, "%zu stale siblings kept on record", nstale);
	/* moved.js.gz: its source is gone and its bytes are not kiln's: an asset */
	CHECK(seen(&s.ev, KILN_EVENT_FOREIGN, "moved.js.gz") == 1);
	CHECK(kiln_state_find(&s.t.state, "app.js")->seen);
	CHECK(!kiln_state_find(&s.t.state, "gone.js")->seen);
	/* after the pool: the sibling of the gone source goes, nothing else */
	kiln_prev_finish(&s.t);
	CHECK(!exists("gone.js.gz") && seen(&s.ev, KILN_EVENT_REMOVED, "gone.js.gz") == 1);
	CHECK(exists("moved.js.gz") && exists("app.js.gz") && exists("keep.css.br"));
	CHECK(seen(&s.ev, KILN_EVENT_REMOVED, "moved.js.gz") == 0);
	CHECK(!kiln_ledger_had_remove_failed(&s.t.ledger) && !kiln_ledger_is_lost(&s.t.ledger));
	(void)fx;
	end(&s);
}

static void test_reusable(const struct fixture *fx)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	unsigned char sha[32], got[32], want[32];
	struct kiln_prev_entry *pe;
	struct stat src, st;
	struct setup s;
	uint64_t size = 0;
	int fd;

	digest("sha256", app, strlen(app), sha);
	digest("sha256", fx->app_gz, fx->app_n, want);
	CHECK(begin(&s, false));
	if (!s.run)
		return;
	pe = kiln_state_find(&s.t.state, "app.js");
	CHECK(pe != NULL && stat(scratch_path(root, "app.js"), &src) == 0);
	if (!pe)
		goto out;
	CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got) &&
	      size == fx->app_n && memcmp(got, want, 32) == 0);
	/* another recipe, or other content: not this record's */
	CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r2", &src, sha, NULL, -1, &size, got));
	sha[0] ^= 1;
	CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got));
	sha[0] ^= 1;
	/* the size a coding was tried at */
	CHECK(kiln_prev_tried(pe, br, "b1", strlen(app), sha) == 4900);
	CHECK(kiln_prev_tried(pe, br, "b2", strlen(app), sha) == 0);
	CHECK(kiln_prev_tried(pe, br, "b1", strlen(app) + 1, sha) == 0);
	CHECK(kiln_prev_tried(pe, gz, "r1", strlen(app), sha) == 0); /* kept, not tried */

	/* mode and mtime moved, bytes the same: proved by its digest, and
	 * given the source's mode and mtime back */
	CHECK(chmod(scratch_path(root, "app.js.gz"), 0600) == 0);
	CHECK(utimensat(AT_FDCWD, scratch_path(root, "app.js.gz"),
			(struct timespec[2]){ { 1000, 0 }, { 1000, 0 } }, 0) == 0);
	CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got));
	CHECK(stat(scratch_path(root, "app.js.gz"), &st) == 0 &&
	      (st.st_mode & 07777) == (src.st_mode & 07777) &&
	      st.st_mtim.tv_sec == src.st_mtim.tv_sec && st.st_mtim.tv_nsec == src.st_mtim.tv_nsec);
	/* other bytes of the same size, mtime moved: the digest refuses them */
	{
		unsigned char junk[512];
		memcpy(junk, fx->app_gz, fx->app_n);
		junk[fx->app_n / 2] ^= 0x55;
		put("app.js.gz", junk, fx->app_n);
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					  got));
		/* ... and with the source's mtime the size is the check (no
		 * sibling read on an unchanged re-run), unless --verify */
		CHECK(utimensat(AT_FDCWD, scratch_path(root, "app.js.gz"),
				(struct timespec[2]){ src.st_atim, src.st_mtim }, 0) == 0);
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					 got));
	}
	end(&s);
	CHECK(begin(&s, true));
	if (!s.run)
		return;
	pe = kiln_state_find(&s.t.state, "app.js");
	fd = open(scratch_path(root, "app.js"), O_RDONLY);
	CHECK(pe && fd >= 0);
	if (pe && fd >= 0) {
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, fd, &size,
					  got));
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha,
					  (const uint8_t *)app, -1, &size, got));
		put("app.js.gz", fx->app_gz, fx->app_n);
		CHECK(utimensat(AT_FDCWD, scratch_path(root, "app.js.gz"),
				(struct timespec[2]){ src.st_atim, src.st_mtim }, 0) == 0);
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, fd, &size,
					 got));
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha,
					 (const uint8_t *)app, -1, &size, got));
	}
	if (fd >= 0)
		close(fd);
out:
	end(&s);
}

static void test_no_sibling(const struct fixture *fx)
{
	kiln_coding gz = kiln_coding_find("gzip");
	struct kiln_prev_entry *pe;
	struct setup s;
	bool decodes = true;
	int fd;

	CHECK(begin(&s, false));
	if (!s.run)
		return;
	/* a sibling kiln never wrote, decoding to its source: pointed out */
	put("other.js.gz", fx->other_gz, fx->other_n);
	fd = open(scratch_path(root, "other.js"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(kiln_prev_foreign_at(&s.t, NULL, "other.js", gz, fd, strlen(other), &decodes) &&
	      decodes);
	kiln_prev_no_sibling(&s.t, NULL, "other.js", gz, fd, strlen(other));
	CHECK(exists("other.js.gz") && seen(&s.ev, KILN_EVENT_FOREIGN, "other.js.gz") == 1);
	CHECK(!kiln_ledger_had_foreign_stale(&s.t.ledger));
	/* ... and one that does not decode to it: stale, a failure of the tree */
	put("other.js.gz", fx->gone_gz, fx->gone_n);
	CHECK(kiln_prev_foreign_at(&s.t, NULL, "other.js", gz, fd, strlen(other), &decodes) &&
	      !decodes);
	kiln_prev_no_sibling(&s.t, NULL, "other.js", gz, fd, strlen(other));
	CHECK(exists("other.js.gz") && seen(&s.ev, KILN_EVENT_FOREIGN_STALE, "other.js.gz") == 1);
	CHECK(kiln_ledger_had_foreign_stale(&s.t.ledger));
	if (fd >= 0)
		close(fd);
	/* the record's own sibling is no news, and goes when the coding does */
	pe = kiln_state_find(&s.t.state, "app.js");
	put("app.js.gz", fx->app_gz, fx->app_n);
	fd = open(scratch_path(root, "app.js"), O_RDONLY);
	CHECK(pe && fd >= 0);
	if (pe && fd >= 0) {
		CHECK(!kiln_prev_foreign_at(&s.t, pe, "app.js", gz, fd, strlen(app), &decodes));
		kiln_prev_no_sibling(&s.t, pe, "app.js", gz, fd, strlen(app));
		CHECK(!exists("app.js.gz") && seen(&s.ev, KILN_EVENT_REMOVED, "app.js.gz") == 1);
	}
	if (fd >= 0)
		close(fd);
	end(&s);
}

int main(void)
{
	struct fixture fx;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/tree", dir);
	CHECK(mkdir(root, 0755) == 0);
	make_tree(&fx);
	test_load_and_finish(&fx);
	test_reusable(&fx);
	test_no_sibling(&fx);
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_previous");
}
