/*
 * test_dict.c - dictionary deltas (dict.c), on a scratch tree and an
 * earlier release beside it, each run a tree run taken step by step
 * (stage.h): a fingerprinted asset whose family has a member of other
 * bytes in the release gets a delta NAME.<16 hex of the member's
 * SHA-256>.dcz that names the member and decodes with libzstd, the member
 * as its dictionary, to the source, with the source's mode and mtime, on
 * record; none beside siblings it is not smaller than, none from a member
 * of the same bytes, of a fingerprint of another length or in another
 * directory.  An unchanged re-run leaves the delta as it is; a file named
 * like a delta that nothing vouches for is removed (one that is not a
 * regular file is left, and fails the run); a member gone from the release
 * takes its delta with it.  A release not there yet, one that shares no
 * family with the tree (one level too deep, or unrelated) and one that
 * cannot be read are told apart.
 */
#include "dict.h"

#include "codec.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"
#include "stage.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-dict-XXXXXX";
static char prev[128];

#define OLD_LEN 30000
#define NEW_LEN (OLD_LEN + 200)
#define FLAT_LEN 60000

static const char app_rel[] = "assets/app.5a2d7c1b.js";
static const char app_old[] = "assets/app.1a7e2c9d.js";

struct texts {
	uint8_t *old, *new, *vendor, *flat;
	uint8_t old_sha[32];
	char delta[200]; /* app_rel's delta against app_old, by the naming rule */
};

static void make_trees(struct texts *x)
{
	uint8_t *insert = make_text(200, 99);

	x->old = make_text(OLD_LEN, 11);
	x->vendor = make_text(20000, 12);
	x->new = malloc(NEW_LEN);
	x->flat = malloc(FLAT_LEN);
	/* release 2's app: release 1's with a little inserted */
	memcpy(x->new, x->old, OLD_LEN / 2);
	memcpy(x->new + OLD_LEN / 2, insert, 200);
	memcpy(x->new + OLD_LEN / 2 + 200, x->old + OLD_LEN / 2, OLD_LEN - OLD_LEN / 2);
	for (size_t i = 0; i < FLAT_LEN; i++)
		x->flat[i] = (uint8_t)"abcdefgh\n"[i % 9];
	hm_digest("sha256", x->old, OLD_LEN, x->old_sha);
	snprintf(x->delta, sizeof(x->delta), "%s.%s.dcz", app_rel, hm_hex(x->old_sha, 8));

	CHECK(mkdir(prev, 0755) == 0 && mkdir(scratch_path(prev, "assets"), 0755) == 0);
	hm_put_at(prev, app_old, x->old, OLD_LEN);
	hm_put_at(prev, "assets/vendor.5e6f7a8b.js", x->vendor, 20000);
	hm_put_at(prev, "assets/other.9c8d7e6f12.js", x->old, 20000); /* 10 digits */
	hm_put_at(prev, "assets/flat.7a8b9c0d.js", x->old, 20000);

	CHECK(mkdir(hm_path("assets"), 0755) == 0 && mkdir(hm_path("lib"), 0755) == 0);
	hm_put(app_rel, x->new, NEW_LEN);
	CHECK(chmod(hm_path(app_rel), 0604) == 0);
	hm_put("assets/vendor.1f2e3d4c.js", x->vendor, 20000);          /* the same bytes */
	hm_put("assets/other.2b8f3c6e.js", x->new, 20000);              /* 8 digits */
	hm_put("lib/app.6c1f8e3a.js", x->new, NEW_LEN);                 /* another directory */
	hm_put("assets/flat.4d5e6f7a.js", x->flat, FLAT_LEN);
	free(insert);
}

static void options(struct stage *s, const char *previous)
{
	static const char *list[1];

	stage_init(s);
	s->opt.codings = 1u | 1u << kiln_coding_find("br");
	s->opt.servers = 0;
	list[0] = previous;
	s->opt.previous = list;
	s->opt.n_previous = 1;
}

/* The deltas of REL on record after S's run: *N of them. */
static const struct kiln_dict_record *deltas(const struct stage *s, const char *rel, size_t *n)
{
	size_t k = stage_index(s, rel);
	const struct kiln_record *rec = kiln_ledger_record(&s->t.ledger, k);
	const struct kiln_dict_record *v = kiln_dict_of(&s->t, k, n);

	CHECK(rec && rec->ndicts == *n);
	return v;
}

/* The smallest sibling REL has on disk. */
static size_t smallest_sibling(const char *rel)
{
	size_t best = SIZE_MAX;
	struct stat st;
	char path[600];

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		snprintf(path, sizeof(path), "%s%s", hm_path(rel), kiln_codecs[c]->info.suffix);
		if (stat(path, &st) == 0 && (size_t)st.st_size < best)
			best = (size_t)st.st_size;
	}
	return best;
}

static void test_deltas(struct texts *x)
{
	const struct kiln_dict_record *v;
	struct stat src, st;
	struct stage s;
	uint8_t *enc, sha[32], fsha[32];
	size_t n, len, flat_delta;
	ino_t ino;

	CHECK(kiln_fingerprinted(app_rel) && kiln_fingerprinted(app_old) &&
	      kiln_fingerprinted("assets/flat.4d5e6f7a.js"));
	options(&s, prev);
	CHECK(stage_run(&s));
	enc = read_whole_file(hm_path(x->delta), &len);
	CHECK_MSG(enc && dcz_decodes_to(enc, len, x->old, OLD_LEN, x->old_sha, x->new, NEW_LEN),
		  "%s: no delta that decodes", x->delta);
	CHECK(len < smallest_sibling(app_rel));
	CHECK(stat(hm_path(app_rel), &src) == 0 && stat(hm_path(x->delta), &st) == 0 &&
	      (st.st_mode & 07777) == 0604 && st.st_mtim.tv_sec == src.st_mtim.tv_sec &&
	      st.st_mtim.tv_nsec == src.st_mtim.tv_nsec);
	CHECK(hm_seen(&s.ev, KILN_EVENT_DICT_DELTA, x->delta, NULL) == 1);
	v = deltas(&s, app_rel, &n);
	if (enc)
		hm_digest("sha256", enc, len, sha);
	CHECK(n == 1 && v && strcmp(v[0].dict_path, app_old) == 0 && v[0].size == len &&
	      memcmp(v[0].sha256, sha, 32) == 0 && memcmp(v[0].dict_sha256, x->old_sha, 32) == 0);
	free(enc);
	/* none from a member of the same bytes, of another fingerprint
	 * length, or of another directory's family (each would make a small
	 * delta: the bytes are release 1's app, or nearly) */
	CHECK(scratch_count(hm_path("assets"), "*.dcz") == 1);
	CHECK(scratch_count(hm_path("lib"), "*.dcz") == 0);
	deltas(&s, "assets/vendor.1f2e3d4c.js", &n);
	CHECK(n == 0);
	/* none beside a sibling it is not smaller than: flat's br, made of
	 * 60000 bytes of a 9-byte cycle, is smaller than any dcz could be */
	CHECK(kiln_codec_dcz.encode(x->old, 20000, (hm_digest("sha256", x->old, 20000, fsha), fsha),
				    x->flat, FLAT_LEN, &enc, &flat_delta) == KILN_OK);
	free(enc);
	CHECK(flat_delta >= smallest_sibling("assets/flat.4d5e6f7a.js"));
	deltas(&s, "assets/flat.4d5e6f7a.js", &n);
	CHECK(n == 0);
	ino = stat(hm_path(x->delta), &st) == 0 ? st.st_ino : 0;
	stage_end(&s);

	/* unchanged: the same delta, left as it was */
	options(&s, prev);
	CHECK(stage_run(&s));
	CHECK(stat(hm_path(x->delta), &st) == 0 && st.st_ino == ino);
	CHECK(hm_seen(&s.ev, KILN_EVENT_DICT_DELTA, x->delta, NULL) == 1);
	CHECK(hm_seen(&s.ev, KILN_EVENT_REMOVED, x->delta, NULL) == 0);
	stage_end(&s);

	/* named like a delta, vouched for by nothing: removed whoever wrote
	 * it; a link so named is no file kiln may remove, and fails the run */
	hm_put("assets/vendor.1f2e3d4c.js.0123456789abcdef.dcz", "made by hand", 12);
	CHECK(symlink("vendor.1f2e3d4c.js", hm_path("assets/app.5a2d7c1b.js.fedcba9876543210.dcz")) ==
	      0);
	options(&s, prev);
	CHECK(stage_run(&s));
	CHECK(!hm_exists("assets/vendor.1f2e3d4c.js.0123456789abcdef.dcz") &&
	      hm_seen(&s.ev, KILN_EVENT_REMOVED, "assets/vendor.1f2e3d4c.js.0123456789abcdef.dcz",
		      NULL) == 1);
	CHECK(hm_exists("assets/app.5a2d7c1b.js.fedcba9876543210.dcz") &&
	      hm_seen(&s.ev, KILN_EVENT_FOREIGN_STALE, "assets/app.5a2d7c1b.js.fedcba9876543210.dcz",
		      NULL) == 1 &&
	      kiln_ledger_had_foreign_stale(&s.t.ledger));
	CHECK(hm_exists(x->delta));
	stage_end(&s);
	CHECK(unlink(hm_path("assets/app.5a2d7c1b.js.fedcba9876543210.dcz")) == 0);

	/* the member gone from the release: its delta goes */
	CHECK(unlink(scratch_path(prev, app_old)) == 0);
	options(&s, prev);
	CHECK(stage_run(&s));
	CHECK(!hm_exists(x->delta) && hm_seen(&s.ev, KILN_EVENT_REMOVED, x->delta, NULL) == 1);
	deltas(&s, app_rel, &n);
	CHECK(n == 0 && !kiln_ledger_had_remove_failed(&s.t.ledger));
	stage_end(&s);
	hm_put_at(prev, app_old, x->old, OLD_LEN);
}

/* A run with PREVIOUS up to the plan: the event about it, if any. */
static void plan_with(const char *previous, const char *what, bool absent, bool failed)
{
	struct stage s;

	options(&s, previous);
	CHECK(stage_load(&s) && stage_plan(&s));
	CHECK_MSG(hm_seen(&s.ev, KILN_EVENT_PREVIOUS_UNUSED, previous, what) == (what ? 1u : 0u),
		  "%s: no event saying '%s' (%u events)", previous, what ? what : "", s.ev.n);
	CHECK(s.t.release_absent[0] == absent && s.t.dict_failed == failed);
	stage_end(&s);
}

static void test_releases(void)
{
	char unrelated[160], deep[160], none[160], junk[160];

	snprintf(unrelated, sizeof(unrelated), "%s/unrelated", dir);
	snprintf(deep, sizeof(deep), "%s/assets", prev);
	snprintf(none, sizeof(none), "%s/nothere", dir);
	snprintf(junk, sizeof(junk), "%s/junk.tar", dir);

	plan_with(none, "no previous release there", true, false);
	plan_with(deep, "one level too deep", false, false);
	CHECK(mkdir(unrelated, 0755) == 0);
	hm_put_at(unrelated, "style-Zx81Kq0p.css", "body{}\n", 7);
	plan_with(unrelated, "no file named like one of its fingerprinted assets", false, false);
	hm_put_at(dir, "junk.tar", "not an archive at all", 21);
	plan_with(junk, NULL, false, true);
	plan_with(prev, NULL, false, false);
}

int main(void)
{
	struct texts x;

	if (!hm_begin(dir))
		return 1;
	snprintf(prev, sizeof(prev), "%s/prev", dir);
	make_trees(&x);
	test_deltas(&x);
	test_releases();
	free(x.old);
	free(x.new);
	free(x.vendor);
	free(x.flat);
	return scratch_end(dir, "test_dict");
}
