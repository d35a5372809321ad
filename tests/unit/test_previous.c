/*
 * test_previous.c - what earlier runs left in a tree (previous.c), on a
 * scratch tree with a manifest written here by hand (digests computed here
 * with OpenSSL, siblings encoded here with zlib): a recorded sibling of a
 * gone source that still holds the recorded bytes is removed, one that
 * holds other bytes is left and reported as an asset of its own; a stale
 * sibling on record is removed while it holds its bytes, left otherwise; a
 * record's sibling is reused when its digest proves it (other bytes of the
 * same size and mtime are refused) or its stamp still holds (until it is
 * written to), decoded with --verify, and gets its source's mode and
 * mtime back; a sibling kiln never wrote is pointed out, as
 * stale when it does not decode to its source; the size a coding was tried
 * at is known only for the same content and recipe.
 */
#include "previous.h"

#include "codec.h"
#include "index.h"

#include "check.h"
#include "handmade.h"
#include "scratch.h"
#include "stage.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-previous-XXXXXX";

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
	char *files, *stale;

	fx->app_n = hm_gzip(app, strlen(app), fx->app_gz, sizeof(fx->app_gz));
	fx->gone_n = hm_gzip(gone, strlen(gone), fx->gone_gz, sizeof(fx->gone_gz));
	fx->moved_n = hm_gzip(moved, strlen(moved), fx->moved_gz, sizeof(fx->moved_gz));
	fx->other_n = hm_gzip(other, strlen(other), fx->other_gz, sizeof(fx->other_gz));
	CHECK(fx->app_n && fx->gone_n && fx->moved_n && fx->other_n);
	hm_put("app.js", app, strlen(app));
	hm_put("app.js.gz", fx->app_gz, fx->app_n);
	hm_put("gone.js.gz", fx->gone_gz, fx->gone_n);
	hm_put("moved.js.gz", "someone's own archive", 21); /* replaced by hand */
	hm_put("old.css.gz", "old bytes", 9);               /* stale, still its bytes */
	hm_put("keep.css.br", "other bytes now", 15);       /* stale, replaced since */
	hm_put("other.js", other, strlen(other));
	/* the sibling has its source's mtime, as kiln leaves it */
	CHECK(hm_same_times("app.js.gz", "app.js") == 0);
	files = hm_join(3, (char *[]){
		hm_entry("app.js", app, fx->app_gz, fx->app_n,
			 ", \"no_gain\": {\"br\": {\"size\": 4900, \"encoder\": \"b1\"}}"),
		hm_entry("gone.js", gone, fx->gone_gz, fx->gone_n, ""),
		hm_entry("moved.js", moved, fx->moved_gz, fx->moved_n, "") });
	stale = hm_join(3, (char *[]){ hm_stale("old.css.gz", "gzip", "old bytes", 9),
				       hm_stale("keep.css.br", "br", "the bytes kiln wrote", 20),
				       hm_stale("missing.css.gz", "gzip", "x", 1) });
	CHECK(files && stale);
	if (files && stale)
		hm_manifest(KILN_MANIFEST_NAME, files, stale, "");
	free(files);
	free(stale);
}

/* A tree run on hm_root up to the pool: walked, its record loaded. */
static bool begin(struct stage *s, bool verify)
{
	stage_init(s);
	s->opt.verify = verify;
	return stage_load(s);
}

static void test_load_and_finish(const struct fixture *fx)
{
	struct stage s;
	size_t nstale;

	CHECK(begin(&s, false));
	if (!s.run)
		return;
	/* at load: the stale sibling that still holds its bytes goes; the one
	 * replaced since is no longer kiln's and stays; the missing one is off
	 * the record */
	CHECK(!hm_exists("old.css.gz") && hm_seen(&s.ev, KILN_EVENT_REMOVED, "old.css.gz", NULL) == 1);
	CHECK(hm_exists("keep.css.br") && hm_seen(&s.ev, KILN_EVENT_REMOVED, "keep.css.br", NULL) == 0);
	kiln_ledger_stale(&s.t.ledger, &nstale);
	CHECK_MSG(nstale == 0, "%zu stale siblings kept on record", nstale);
	/* moved.js.gz: its source is gone and its bytes are not kiln's: an asset */
	CHECK(hm_seen(&s.ev, KILN_EVENT_FOREIGN, "moved.js.gz", NULL) == 1);
	CHECK(kiln_state_find(&s.t.state, "app.js")->seen);
	CHECK(!kiln_state_find(&s.t.state, "gone.js")->seen);
	/* after the pool: the sibling of the gone source goes, nothing else */
	kiln_prev_finish(&s.t);
	CHECK(!hm_exists("gone.js.gz") && hm_seen(&s.ev, KILN_EVENT_REMOVED, "gone.js.gz", NULL) == 1);
	CHECK(hm_exists("moved.js.gz") && hm_exists("app.js.gz") && hm_exists("keep.css.br"));
	CHECK(hm_seen(&s.ev, KILN_EVENT_REMOVED, "moved.js.gz", NULL) == 0);
	CHECK(!kiln_ledger_had_remove_failed(&s.t.ledger) && !kiln_ledger_is_lost(&s.t.ledger));
	(void)fx;
	stage_end(&s);
}

static void test_reusable(const struct fixture *fx)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	unsigned char sha[32], got[32], want[32];
	struct stat seen;
	struct kiln_prev_entry *pe;
	struct stat src, st;
	struct stage s;
	uint64_t size = 0;
	int fd;

	hm_digest("sha256", app, strlen(app), sha);
	hm_digest("sha256", fx->app_gz, fx->app_n, want);
	CHECK(begin(&s, false));
	if (!s.run)
		return;
	pe = kiln_state_find(&s.t.state, "app.js");
	CHECK(pe != NULL && stat(hm_path("app.js"), &src) == 0);
	if (!pe)
		goto out;
	CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got, &seen) &&
	      size == fx->app_n && memcmp(got, want, 32) == 0);
	/* another recipe, or other content: not this record's */
	CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r2", &src, sha, NULL, -1, &size, got, &seen));
	sha[0] ^= 1;
	CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got, &seen));
	sha[0] ^= 1;
	/* the size a coding was tried at */
	CHECK(kiln_prev_tried(pe, br, "b1", strlen(app), sha) == 4900);
	CHECK(kiln_prev_tried(pe, br, "b2", strlen(app), sha) == 0);
	CHECK(kiln_prev_tried(pe, br, "b1", strlen(app) + 1, sha) == 0);
	CHECK(kiln_prev_tried(pe, gz, "r1", strlen(app), sha) == 0); /* kept, not tried */

	/* mode and mtime moved, bytes the same: proved by its digest, and
	 * given the source's mode and mtime back */
	CHECK(chmod(hm_path("app.js.gz"), 0600) == 0);
	CHECK(utimensat(AT_FDCWD, hm_path("app.js.gz"),
			(struct timespec[2]){ { 1000, 0 }, { 1000, 0 } }, 0) == 0);
	CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size, got, &seen));
	CHECK(stat(hm_path("app.js.gz"), &st) == 0 &&
	      (st.st_mode & 07777) == (src.st_mode & 07777) &&
	      st.st_mtim.tv_sec == src.st_mtim.tv_sec && st.st_mtim.tv_nsec == src.st_mtim.tv_nsec);
	/* other bytes of the same size, mtime moved: the digest refuses them */
	{
		unsigned char junk[512];
		memcpy(junk, fx->app_gz, fx->app_n);
		junk[fx->app_n / 2] ^= 0x55;
		hm_put("app.js.gz", junk, fx->app_n);
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					  got, &seen));
		/* ... and with the source's mtime too: whatever wrote them may
		 * keep a size and an mtime, so the digest still decides */
		CHECK(utimensat(AT_FDCWD, hm_path("app.js.gz"),
				(struct timespec[2]){ src.st_atim, src.st_mtim }, 0) == 0);
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					  got, &seen));
		/* a stamp that holds (index.h) is what is checked, not the
		 * bytes: made for these very bytes, it vouches for them */
		CHECK(stat(hm_path("app.js.gz"), &st) == 0);
		pe->rec.stamped = KILN_STAMP_TRUSTED;
		pe->rec.stamp.dev = src.st_dev;
		pe->rec.stamp.ino = src.st_ino;
		pe->rec.stamp.mode = src.st_mode;
		pe->rec.stamp.mtime_ns = src.st_mtim.tv_sec * 1000000000LL + src.st_mtim.tv_nsec;
		pe->rec.stamp.ctime_ns = src.st_ctim.tv_sec * 1000000000LL + src.st_ctim.tv_nsec;
		pe->rec.stamp.sib[gz].ino = st.st_ino;
		pe->rec.stamp.sib[gz].ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					 got, &seen));
		/* ... until the file is written to, in place, its size and
		 * mtime kept: its ctime moves, and the digest decides again */
		{
			struct timespec pause = { 0, 20000000 };
			int wfd;
			nanosleep(&pause, NULL); /* past the clock's tick */
			wfd = open(hm_path("app.js.gz"), O_WRONLY);
			CHECK(wfd >= 0 && pwrite(wfd, junk, fx->app_n, 0) == (ssize_t)fx->app_n);
			if (wfd >= 0)
				close(wfd);
			CHECK(utimensat(AT_FDCWD, hm_path("app.js.gz"),
					(struct timespec[2]){ src.st_atim, src.st_mtim }, 0) == 0);
			CHECK(stat(hm_path("app.js.gz"), &st) == 0 && st.st_ino == pe->rec.stamp.sib[gz].ino);
		}
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, -1, &size,
					  got, &seen));
		pe->rec.stamped = KILN_STAMP_NONE;
	}
	stage_end(&s);
	CHECK(begin(&s, true));
	if (!s.run)
		return;
	pe = kiln_state_find(&s.t.state, "app.js");
	fd = open(hm_path("app.js"), O_RDONLY);
	CHECK(pe && fd >= 0);
	if (pe && fd >= 0) {
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, fd, &size,
					  got, &seen));
		CHECK(!kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha,
					  (const uint8_t *)app, -1, &size, got, &seen));
		hm_put("app.js.gz", fx->app_gz, fx->app_n);
		CHECK(utimensat(AT_FDCWD, hm_path("app.js.gz"),
				(struct timespec[2]){ src.st_atim, src.st_mtim }, 0) == 0);
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha, NULL, fd, &size,
					 got, &seen));
		CHECK(kiln_prev_reusable(&s.t, "app.js", pe, gz, "r1", &src, sha,
					 (const uint8_t *)app, -1, &size, got, &seen));
	}
	if (fd >= 0)
		close(fd);
out:
	stage_end(&s);
}

static void test_no_sibling(const struct fixture *fx)
{
	kiln_coding gz = kiln_coding_find("gzip");
	struct kiln_prev_entry *pe;
	struct stage s;
	bool decodes = true;
	int fd;

	CHECK(begin(&s, false));
	if (!s.run)
		return;
	/* a sibling kiln never wrote, decoding to its source: pointed out */
	hm_put("other.js.gz", fx->other_gz, fx->other_n);
	fd = open(hm_path("other.js"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(kiln_prev_foreign_at(&s.t, NULL, "other.js", gz, fd, strlen(other), &decodes) &&
	      decodes);
	kiln_prev_no_sibling(&s.t, NULL, "other.js", gz, fd, strlen(other));
	CHECK(hm_exists("other.js.gz") && hm_seen(&s.ev, KILN_EVENT_FOREIGN, "other.js.gz", NULL) == 1);
	CHECK(!kiln_ledger_had_foreign_stale(&s.t.ledger));
	/* ... and one that does not decode to it: stale, a failure of the tree */
	hm_put("other.js.gz", fx->gone_gz, fx->gone_n);
	CHECK(kiln_prev_foreign_at(&s.t, NULL, "other.js", gz, fd, strlen(other), &decodes) &&
	      !decodes);
	kiln_prev_no_sibling(&s.t, NULL, "other.js", gz, fd, strlen(other));
	CHECK(hm_exists("other.js.gz") && hm_seen(&s.ev, KILN_EVENT_FOREIGN_STALE, "other.js.gz", NULL) == 1);
	CHECK(kiln_ledger_had_foreign_stale(&s.t.ledger));
	if (fd >= 0)
		close(fd);
	/* the record's own sibling is no news, and goes when the coding does */
	pe = kiln_state_find(&s.t.state, "app.js");
	hm_put("app.js.gz", fx->app_gz, fx->app_n);
	fd = open(hm_path("app.js"), O_RDONLY);
	CHECK(pe && fd >= 0);
	if (pe && fd >= 0) {
		CHECK(!kiln_prev_foreign_at(&s.t, pe, "app.js", gz, fd, strlen(app), &decodes));
		kiln_prev_no_sibling(&s.t, pe, "app.js", gz, fd, strlen(app));
		CHECK(!hm_exists("app.js.gz") && hm_seen(&s.ev, KILN_EVENT_REMOVED, "app.js.gz", NULL) == 1);
	}
	if (fd >= 0)
		close(fd);
	stage_end(&s);
}

int main(void)
{
	struct fixture fx;

	if (!hm_begin(dir))
		return 1;
	make_tree(&fx);
	test_load_and_finish(&fx);
	test_reusable(&fx);
	test_no_sibling(&fx);
	return scratch_end(dir, "test_previous");
}
