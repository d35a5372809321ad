/*
 * test_index.c - the index beside the manifest (index.c), on a scratch
 * tree: records written with their stamps read back field for field (the
 * recipes, deltas, stale siblings, snippets and tree too), and the stamps
 * only of what is proved settled; an index is refused once its manifest or
 * tree is another, or any byte of it changed, or it ends early; a stamp
 * matches a file's status only field for field; the clock waits out its
 * tick; the index's name beside its manifest.
 */
#include "index.h"

#include "codec.h"
#include "hash.h"

#include "check.h"
#include "scratch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-index-XXXXXX";
static char top[sizeof(dir) + 8];

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(scratch_path(top, rel), "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Give REL FROM's mtime, as kiln gives a sibling its source's. */
static void same_mtime(const char *rel, const char *from)
{
	struct stat st;

	CHECK(stat(scratch_path(top, from), &st) == 0 &&
	      utimensat(AT_FDCWD, scratch_path(top, rel),
			(struct timespec[2]){ st.st_atim, st.st_mtim }, 0) == 0);
}

/* R, stamped from the files REL and REL.gz as they are now. */
static void stamp_from_disk(struct kiln_record *r, kiln_coding gz, uint8_t how)
{
	struct stat st, sib[KILN_NCODECS];

	memset(sib, 0, sizeof(sib));
	CHECK(stat(scratch_path(top, r->rel), &st) == 0);
	if (r->coding[gz].outcome == KILN_CODING_KEPT) {
		char name[256];
		snprintf(name, sizeof(name), "%s.gz", r->rel);
		CHECK(lstat(scratch_path(top, name), &sib[gz]) == 0);
	}
	kiln_index_stamp(r, &st, sib);
	if (r->stamped)
		r->stamped = how;
}

static bool same_record(const struct kiln_record *a, const struct kiln_record *b)
{
	if (strcmp(a->rel, b->rel) != 0 || a->size != b->size || a->outcome != b->outcome ||
	    memcmp(a->sha256, b->sha256, 32) != 0 || memcmp(a->sha384, b->sha384, 48) != 0 ||
	    a->ndicts != b->ndicts)
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *x = &a->coding[c], *y = &b->coding[c];
		if (x->outcome != y->outcome ||
		    (x->outcome != KILN_CODING_OFF &&
		     (x->size != y->size || strcmp(x->recipe, y->recipe) != 0)) ||
		    (x->outcome == KILN_CODING_KEPT && memcmp(x->sha256, y->sha256, 32) != 0))
			return false;
	}
	for (size_t i = 0; i < a->ndicts; i++)
		if (memcmp(a->dicts[i].dict_sha256, b->dicts[i].dict_sha256, 32) != 0 ||
		    strcmp(a->dicts[i].dict_path, b->dicts[i].dict_path) != 0 ||
		    a->dicts[i].size != b->dicts[i].size ||
		    memcmp(a->dicts[i].sha256, b->dicts[i].sha256, 32) != 0 ||
		    strcmp(a->dicts[i].recipe, b->dicts[i].recipe) != 0)
			return false;
	return true;
}

static kiln_status write_index(const char *path, struct kiln_manifest_item *items, size_t n,
			       int64_t since, const uint8_t digest[32])
{
	struct stat tst;
	struct kiln_temps reg;
	struct kiln_stale stale = { "gone.js.gz", kiln_coding_find("gzip"), 7, { 9 } };
	struct kiln_snippet_rec snip = { "kiln.nginx.conf", { 4 } };
	struct kiln_error err;
	struct kiln_index_input in = {
		.root = top, .top = &tst, .manifest_path = scratch_path(top, KILN_MANIFEST_NAME),
		.digest = digest, .since_ns = since, .local = true, .items = items, .n = n,
		.stale = &stale, .nstale = 1, .snip = &snip, .nsnip = 1, .tree = "dist",
	};
	kiln_status st;

	CHECK(stat(top, &tst) == 0);
	kiln_temps_init(&reg);
	st = kiln_index_write(&reg, path, false, &in, &err);
	kiln_temps_destroy(&reg);
	return st;
}

static bool load(const char *path, struct kiln_state *st, uint8_t digest[32])
{
	struct stat tst;

	memset(st, 0, sizeof(*st));
	return stat(top, &tst) == 0 &&
	       kiln_index_load(path, scratch_path(top, KILN_MANIFEST_NAME), &tst, st, digest);
}

static void test_round_trip(void)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	struct kiln_record r[3];
	struct kiln_dict_record d = { { 1, 2, 3 }, "prev/app.1834adcb.js", 77, { 5 }, "zstd-x" };
	struct kiln_manifest_item items[3];
	char *path = kiln_index_path(scratch_path(top, KILN_MANIFEST_NAME));
	struct kiln_state st;
	uint8_t digest[32] = { 42 }, got[32];
	struct timespec pause = { 0, 20000000 };
	int64_t since;

	put("app.js", "console.log('a');\n");
	put("app.js.gz", "not really gzip: 26 bytes.");
	same_mtime("app.js.gz", "app.js");
	put("b.css", "b{}");
	put("c.txt", "c");
	put(KILN_MANIFEST_NAME, "{}\n");
	nanosleep(&pause, NULL);
	since = kiln_index_after(kiln_index_now());
	memset(r, 0, sizeof(r));
	r[0] = (struct kiln_record){ .rel = "app.js", .size = 18, .outcome = KILN_OUTCOME_COMPRESSED,
				     .sha256 = { 1 }, .sha384 = { 2 } };
	r[0].coding[gz] = (struct kiln_coding_record){ KILN_CODING_KEPT, 26, { 3 }, "g1" };
	r[0].coding[br] = (struct kiln_coding_record){ KILN_CODING_NO_GAIN, 30, { 0 }, "b1" };
	r[0].dicts = &d;
	r[0].ndicts = 1;
	r[1] = (struct kiln_record){ .rel = "b.css", .size = 3, .outcome = KILN_OUTCOME_SMALL };
	r[2] = (struct kiln_record){ .rel = "c.txt", .size = 1, .outcome = KILN_OUTCOME_SMALL };
	stamp_from_disk(&r[0], gz, KILN_STAMP_SEEN);
	stamp_from_disk(&r[1], gz, KILN_STAMP_TRUSTED);
	CHECK(r[0].stamped == KILN_STAMP_SEEN && r[1].stamped == KILN_STAMP_TRUSTED);
	/* written in the order they come, read back in the order of paths */
	items[0] = (struct kiln_manifest_item){ &r[2], { 0, 0, 0, 0 } };
	items[1] = (struct kiln_manifest_item){ &r[0], { KILN_WHY_NAME, 0, 3, 0 } };
	items[2] = (struct kiln_manifest_item){ &r[1], { 0, 0, 0, 1 } };
	CHECK(path && write_index(path, items, 3, since, digest) == KILN_OK);
	CHECK(load(path, &st, got));
	CHECK(st.loaded && st.n == 3 && memcmp(got, digest, 32) == 0);
	if (st.n == 3) {
		CHECK(same_record(&st.v[0].rec, &r[0]) && same_record(&st.v[1].rec, &r[1]) &&
		      same_record(&st.v[2].rec, &r[2]));
		CHECK(st.v[0].in_manifest && st.v[1].in_manifest && st.v[2].in_manifest);
		/* the item's fingerprint, not the record's, as the manifest has it */
		CHECK(st.v[0].rec.fp.why == KILN_WHY_NAME && st.v[0].rec.fp.len == 3);
		/* bytes changed under its name: the mark a later run carries */
		CHECK(!st.v[0].rec.fp.changed && st.v[1].rec.fp.changed &&
		      st.v[1].rec.fp.why == KILN_WHY_NONE && !st.v[2].rec.fp.changed);
		/* the stamp taken in the run, confirmed; a trusted one as it was;
		 * none where none was */
		CHECK(st.v[0].rec.stamped == KILN_STAMP_TRUSTED &&
		      memcmp(&st.v[0].rec.stamp, &r[0].stamp, sizeof(r[0].stamp)) == 0);
		CHECK(st.v[1].rec.stamped == KILN_STAMP_TRUSTED &&
		      memcmp(&st.v[1].rec.stamp, &r[1].stamp, sizeof(r[1].stamp)) == 0);
		CHECK(st.v[2].rec.stamped == KILN_STAMP_NONE);
	}
	CHECK(st.nstale == 1 && strcmp(st.stale[0].rel, "gone.js.gz") == 0 &&
	      st.stale[0].size == 7 && st.stale[0].sha256[0] == 9);
	CHECK(st.nsnippets == 1 && strcmp(st.snippets[0].name, "kiln.nginx.conf") == 0 &&
	      st.snippets[0].sha256[0] == 4);
	CHECK(st.tree && strcmp(st.tree, "dist") == 0);
	kiln_state_free(&st);

	/* a stamp taken of a file changed after the run began is not kept:
	 * its ctime may be that of a later change too (racy) */
	CHECK(write_index(path, items, 3, ns_of(r[0].stamp.ctime_ns > 0
						       ? (struct timespec){ r[0].stamp.ctime_ns / 1000000000,
									    r[0].stamp.ctime_ns % 1000000000 }
						       : (struct timespec){ 0, 0 }),
			  digest) == KILN_OK);
	CHECK(load(path, &st, got) && st.n == 3 && st.v[0].rec.stamped == KILN_STAMP_NONE &&
	      st.v[1].rec.stamped == KILN_STAMP_TRUSTED);
	kiln_state_free(&st);
	/* nor one whose sibling changed since it was seen */
	nanosleep(&pause, NULL);
	put("app.js.gz", "other bytes, also 26 long!");
	same_mtime("app.js.gz", "app.js");
	CHECK(write_index(path, items, 3, since, digest) == KILN_OK);
	CHECK(load(path, &st, got) && st.n == 3 && st.v[0].rec.stamped == KILN_STAMP_NONE);
	kiln_state_free(&st);

	/* an index of the manifest as it is: refused once the manifest was
	 * written to, or is another file */
	CHECK(write_index(path, items, 3, since, digest) == KILN_OK);
	CHECK(load(path, &st, got));
	kiln_state_free(&st);
	nanosleep(&pause, NULL);
	put(KILN_MANIFEST_NAME, "{}\n");
	CHECK(!load(path, &st, got) && st.n == 0 && !st.loaded);
	CHECK(write_index(path, items, 3, since, digest) == KILN_OK);
	CHECK(rename(scratch_path(top, KILN_MANIFEST_NAME), scratch_path(top, "m.old")) == 0);
	put(KILN_MANIFEST_NAME, "{}\n");
	CHECK(!load(path, &st, got));
	free(path);
}

/* Every byte of a valid index matters: any one changed, or the file cut
 * short or made longer, and it is refused. */
static void test_damage(void)
{
	char *path = kiln_index_path(scratch_path(top, KILN_MANIFEST_NAME));
	struct kiln_record r = { .rel = "c.txt", .size = 1, .outcome = KILN_OUTCOME_SMALL };
	struct kiln_manifest_item item = { &r, { 0, 0, 0, 0 } };
	uint8_t digest[32] = { 1 }, got[32], *bytes = NULL;
	struct kiln_state st;
	struct stat sb;
	size_t n = 0;
	int fd;

	CHECK(path && write_index(path, &item, 1, kiln_index_now(), digest) == KILN_OK);
	CHECK(load(path, &st, got) && st.n == 1);
	kiln_state_free(&st);
	if ((fd = open(path, O_RDWR)) >= 0 && fstat(fd, &sb) == 0 &&
	    (bytes = malloc((size_t)sb.st_size)) &&
	    pread(fd, bytes, (size_t)sb.st_size, 0) == sb.st_size)
		n = (size_t)sb.st_size;
	CHECK(n > 200);
	for (size_t at = 0; at < n; at++) {
		uint8_t b = bytes[at] ^ 0x10;
		bool loaded;
		CHECK(pwrite(fd, &b, 1, (off_t)at) == 1);
		loaded = load(path, &st, got);
		CHECK_MSG(!loaded, "byte %zu of %zu changed, and the index read", at, n);
		kiln_state_free(&st);
		CHECK(pwrite(fd, &bytes[at], 1, (off_t)at) == 1);
	}
	CHECK(ftruncate(fd, (off_t)n - 1) == 0 && !load(path, &st, got));
	kiln_state_free(&st);
	CHECK(pwrite(fd, &bytes[n - 1], 1, (off_t)n - 1) == 1 && load(path, &st, got));
	kiln_state_free(&st);
	CHECK(pwrite(fd, "x", 1, (off_t)n) == 1 && !load(path, &st, got));
	kiln_state_free(&st);
	if (fd >= 0)
		close(fd);
	free(bytes);
	free(path);
}

/* A stamp matches a status field for field, and only a trusted one. */
static void test_matches(void)
{
	kiln_coding gz = kiln_coding_find("gzip");
	struct kiln_record r = { .rel = "x", .size = 10 };
	struct kiln_stat s = { .st_mode = S_IFREG | 0644, .st_dev = 3, .st_ino = 4, .st_size = 10,
			       .st_mtim = { 100, 5 }, .st_ctim = { 200, 6 } };
	struct kiln_stat sib = { .st_mode = S_IFREG | 0644, .st_dev = 3, .st_ino = 9, .st_size = 6,
				 .st_mtim = { 100, 5 }, .st_ctim = { 300, 7 } };
	struct kiln_stat t;

	r.coding[gz] = (struct kiln_coding_record){ KILN_CODING_KEPT, 6, { 0 }, "g" };
	r.stamp = (struct kiln_stamp){ .dev = 3, .ino = 4, .mode = S_IFREG | 0644,
				       .mtime_ns = 100000000005, .ctime_ns = 200000000006 };
	r.stamp.sib[gz].ino = 9;
	r.stamp.sib[gz].ctime_ns = 300000000007;
	CHECK(!kiln_index_matches(&r, &s, -1)); /* not trusted yet */
	r.stamped = KILN_STAMP_TRUSTED;
	CHECK(kiln_index_matches(&r, &s, -1) && kiln_index_matches(&r, &sib, gz));
	t = s, t.st_ino++;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_dev++;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_size++;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_mode = S_IFREG | 0600;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_mtim.tv_nsec++;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_ctim.tv_nsec++;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = s, t.st_mode = S_IFLNK | 0644;
	CHECK(!kiln_index_matches(&r, &t, -1));
	t = sib, t.st_ctim.tv_sec++;
	CHECK(!kiln_index_matches(&r, &t, gz));
	t = sib, t.st_mtim.tv_sec++; /* a sibling has its source's mtime */
	CHECK(!kiln_index_matches(&r, &t, gz));
	t = sib, t.st_size++;
	CHECK(!kiln_index_matches(&r, &t, gz));
	t = sib, t.st_mode = S_IFREG | 0600; /* ... and its mode */
	CHECK(!kiln_index_matches(&r, &t, gz));
	r.coding[gz].outcome = KILN_CODING_NO_GAIN; /* no sibling kept: none matches */
	CHECK(!kiln_index_matches(&r, &sib, gz));
}

int main(void)
{
	int64_t a, b;
	char *p;

	if (!mkdtemp(dir))
		return 1;
	snprintf(top, sizeof(top), "%s/t", dir);
	if (mkdir(top, 0755) != 0 || kiln_hash_init() != KILN_OK)
		return 1;
	p = kiln_index_path("dist/kiln-manifest.json");
	CHECK(p && strcmp(p, "dist/.kiln-manifest.json.index") == 0);
	free(p);
	p = kiln_index_path("m.json");
	CHECK(p && strcmp(p, ".m.json.index") == 0);
	free(p);
	a = kiln_index_now();
	b = kiln_index_after(a);
	CHECK(a > 0 && b > a && kiln_index_now() >= b);
	test_round_trip();
	test_damage();
	test_matches();
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_index");
}
