/*
 * test_merge.c - `kiln merge` (merge.c, through kiln_merge_tree()) on
 * scratch trees whose parts are written by the library's own sharded runs
 * (kiln_run_tree() with shard K of 3, as `kiln --shard K/3` runs it):
 * merged, the tree holds what one unsharded run of a copy writes -- the
 * same manifest and snippet, byte for byte, the same siblings with the
 * same modes and mtimes; not the index of what that run read -- and the
 * parts are gone; a dry run checks and
 * writes nothing.  Each broken input is refused, named in a report
 * (a part missing, a part of another shard count, a record in another
 * shard's part, a file changed since its shard ran, a sibling with other
 * bytes), and nothing in the tree is written.
 */
#include "index.h"
#include "kiln.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-merge-XXXXXX";

#define NSHARDS 3

/* The reports of one operation: root, path and what of each failure. */
struct reports {
	unsigned n;
	char line[32][700];
};

static void on_file(void *user, const struct kiln_report *r)
{
	struct reports *rs = user;

	if (r->outcome == KILN_OUTCOME_ERROR && rs->n < 32)
		snprintf(rs->line[rs->n++], sizeof(rs->line[0]), "%s|%s|%s", r->root, r->path,
			 r->error.what ? r->error.what : "");
}

/* Was a failure reported whose root ends in ROOT_END, with PATH, saying
 * WHAT? */
static bool told(const struct reports *rs, const char *root_end, const char *path,
		 const char *what)
{
	for (unsigned i = 0; i < rs->n; i++) {
		char want[600];
		const char *bar = strchr(rs->line[i], '|');
		size_t n = strlen(root_end);
		snprintf(want, sizeof(want), "|%s|", path);
		if (bar && (size_t)(bar - rs->line[i]) >= n && strncmp(bar - n, root_end, n) == 0 &&
		    strncmp(bar, want, strlen(want)) == 0 && strstr(bar + strlen(want), what))
			return true;
	}
	return false;
}

static void options(struct kiln_options *opt, unsigned shard)
{
	kiln_options_init(opt);
	opt->jobs = 2;
	opt->codings = (1u << kiln_coding_count()) - 1;
	opt->level[kiln_coding_find("gzip")] = 6;
	opt->level[kiln_coding_find("br")] = 5;
	opt->level[kiln_coding_find("zstd")] = 3;
	opt->shard_index = shard;
	opt->shard_count = shard ? NSHARDS : 0;
}

/* kiln_run_tree() (SHARD K of NSHARDS, or 0: the whole tree) or, with
 * MERGE, kiln_merge_tree() on TOP; DRY_RUN.  Its status, reports in *RS. */
static kiln_status run(const char *top, unsigned shard, unsigned count, bool merge,
		       bool dry_run, struct reports *rs)
{
	struct kiln_callbacks cb = { .on_file = on_file, .user = rs };
	struct kiln_options opt;
	struct kiln_run *r;
	kiln_status st = KILN_ERR_NOMEM;

	memset(rs, 0, sizeof(*rs));
	options(&opt, shard);
	if (shard)
		opt.shard_count = count;
	opt.dry_run = dry_run;
	if ((r = kiln_run_new(&opt, &cb))) {
		st = merge ? kiln_merge_tree(r, top) : kiln_run_tree(r, top);
		kiln_run_free(r);
	}
	return st;
}

/* A small site at TOP, the same bytes, modes and mtimes each time. */
static void make_tree(const char *top)
{
	static const char *const names[] = { "index.html", "assets/app.js", "assets/lib.js",
					     "assets/style.css", "gen/m01.js", "gen/m02.js",
					     "gen/m03.js", "gen/m04.js", "gen/m05.js", "gen/m06.js",
					     "gen/m07.js", "gen/m08.js", "tiny.txt" };
	char sub[200];

	CHECK(mkdir(top, 0755) == 0);
	snprintf(sub, sizeof(sub), "%s/assets", top);
	CHECK(mkdir(sub, 0755) == 0);
	snprintf(sub, sizeof(sub), "%s/gen", top);
	CHECK(mkdir(sub, 0755) == 0);
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len = strcmp(names[i], "tiny.txt") == 0 ? 100 : 3000 + 1500 * i;
		uint8_t *text = make_text(len, i + 1);
		char path[300];
		hm_put_at(top, names[i], text, len);
		snprintf(path, sizeof(path), "%s/%s", top, names[i]);
		CHECK(chmod(path, i % 2 ? 0644 : 0640) == 0);
		CHECK(utimensat(AT_FDCWD, path,
				(struct timespec[2]){ { 1600000000 + i, i }, { 1600000000 + i, i } },
				0) == 0);
		free(text);
	}
}

/* TOP made and run as NSHARDS shards. */
static void sharded(const char *top)
{
	struct reports rs;

	make_tree(top);
	for (unsigned k = 1; k <= NSHARDS; k++)
		CHECK(run(top, k, NSHARDS, false, false, &rs) == KILN_OK && rs.n == 0);
}

static char *at(const char *top, const char *rel)
{
	return scratch_path(top, rel);
}

static void test_merged(void)
{
	char single[100], shards[100];
	char *a, *b;
	struct reports rs;

	snprintf(single, sizeof(single), "%s/single", dir);
	snprintf(shards, sizeof(shards), "%s/shards", dir);
	make_tree(single);
	CHECK(run(single, 0, 0, false, false, &rs) == KILN_OK && rs.n == 0);
	sharded(shards);
	for (unsigned k = 1; k <= NSHARDS; k++) {
		char part[64];
		snprintf(part, sizeof(part), "kiln-manifest.shard-%u-of-%u.json", k, NSHARDS);
		CHECK(access(at(shards, part), F_OK) == 0);
	}
	CHECK(access(at(shards, KILN_MANIFEST_NAME), F_OK) != 0 &&
	      access(at(shards, KILN_NGINX_CONF_NAME), F_OK) != 0);
	/* a dry run: the checks pass, nothing is written */
	a = scratch_snapshot(shards, true);
	CHECK(run(shards, 0, 0, true, true, &rs) == KILN_OK && rs.n == 0);
	b = scratch_snapshot(shards, true);
	CHECK(a && b && strcmp(a, b) == 0);
	free(a);
	free(b);
	/* merged: one run's tree, manifest and snippet byte for byte (the
	 * artifacts' mtimes are when each was written: made equal first) */
	CHECK(run(shards, 0, 0, true, false, &rs) == KILN_OK && rs.n == 0);
	CHECK(scratch_count(shards, "kiln-manifest.shard-*") == 0);
	for (unsigned i = 0; i < 3; i++) {
		static const char *const art[] = { KILN_MANIFEST_NAME, KILN_NGINX_CONF_NAME,
						   KILN_NGINX_HTTP_CONF_NAME };
		struct timespec t[2] = { { 1700000000, 0 }, { 1700000000, 0 } };
		CHECK(utimensat(AT_FDCWD, at(single, art[i]), t, 0) == 0 &&
		      utimensat(AT_FDCWD, at(shards, art[i]), t, 0) == 0);
	}
	for (unsigned i = 0; i < 2; i++) {
		const char *name = i ? KILN_NGINX_CONF_NAME : KILN_MANIFEST_NAME;
		size_t na, nb;
		uint8_t *x = read_whole_file(at(single, name), &na), *y = read_whole_file(at(shards, name), &nb);
		CHECK_MSG(x && y && na == nb && memcmp(x, y, na) == 0, "%s: not one run's", name);
		free(x);
		free(y);
	}
	/* one run keeps, beside the manifest, the index of what it read
	 * (index.h); a merge, which reads no file, keeps none */
	CHECK(unlink(at(single, KILN_INDEX_NAME)) == 0 && access(at(shards, KILN_INDEX_NAME), F_OK) != 0);
	a = scratch_snapshot(single, false);
	b = scratch_snapshot(shards, false);
	CHECK_MSG(a && b && strcmp(a, b) == 0, "merged:\n%s\none run:\n%s", b ? b : "", a ? a : "");
	free(a);
	free(b);
}

/* The first source in the tree's manifest-to-be that shard K records:
 * NAMES is the list make_tree() uses, REL out. */
static const char *in_shard(unsigned k)
{
	static const char *const names[] = { "index.html", "assets/app.js", "assets/lib.js",
					     "assets/style.css", "gen/m01.js", "gen/m02.js",
					     "gen/m03.js", "gen/m04.js" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (kiln_shard_of(names[i], NSHARDS) == k)
			return names[i];
	return NULL;
}

/* Merge TOP, expecting a refusal told as (ROOT_END, PATH, WHAT), and
 * nothing written. */
static void refused(const char *top, const char *root_end, const char *path, const char *what)
{
	char *before = scratch_snapshot(top, true), *after;
	struct reports rs;
	kiln_status st = run(top, 0, 0, true, false, &rs);

	after = scratch_snapshot(top, true);
	CHECK_MSG(st == KILN_ERR_INVALID, "%s: merge returned %d", what, st);
	CHECK_MSG(told(&rs, root_end, path, what), "not told: %s: %s (%u reports, first %s)", path,
		  what, rs.n, rs.n ? rs.line[0] : "");
	CHECK_MSG(before && after && strcmp(before, after) == 0, "%s: the tree was written", what);
	CHECK(access(at(top, KILN_MANIFEST_NAME), F_OK) != 0);
	free(before);
	free(after);
}

/* Move the record of REL from part FROM to part TO. */
static void move_record(const char *top, const char *rel, unsigned from, unsigned to)
{
	char pf[300], pt[300];
	json_t *a, *b, *rec;

	snprintf(pf, sizeof(pf), "%s/kiln-manifest.shard-%u-of-%u.json", top, from, NSHARDS);
	snprintf(pt, sizeof(pt), "%s/kiln-manifest.shard-%u-of-%u.json", top, to, NSHARDS);
	a = json_load_file(pf, 0, NULL);
	b = json_load_file(pt, 0, NULL);
	rec = json_object_get(json_object_get(a, "files"), rel);
	CHECK(a && b && rec);
	if (!a || !b || !rec)
		return;
	CHECK(json_object_set(json_object_get(b, "files"), rel, rec) == 0 &&
	      json_object_del(json_object_get(a, "files"), rel) == 0);
	CHECK(json_dump_file(a, pf, 0) == 0 && json_dump_file(b, pt, 0) == 0);
	json_decref(a);
	json_decref(b);
}

static void test_refused(void)
{
	const char *one = in_shard(1), *two = in_shard(2);
	char top[100], part[64], rel[200], msg[100];
	struct reports rs;

	CHECK(one && two);
	if (!one || !two)
		return;
	snprintf(top, sizeof(top), "%s/missing", dir);
	sharded(top);
	snprintf(part, sizeof(part), "kiln-manifest.shard-2-of-%u.json", NSHARDS);
	CHECK(unlink(at(top, part)) == 0);
	refused(top, part, "", "missing: shard 2 of 3");

	snprintf(top, sizeof(top), "%s/othern", dir);
	sharded(top);
	CHECK(run(top, 1, 2, false, false, &rs) == KILN_OK);
	refused(top, top, "kiln-manifest.shard-1-of-2.json", "a part of 2 shards beside parts of 3");

	snprintf(top, sizeof(top), "%s/moved", dir);
	sharded(top);
	move_record(top, one, 1, 2);
	refused(top, top, one, "recorded by shard 2's part, but it belongs to shard 1");

	snprintf(top, sizeof(top), "%s/changed", dir);
	sharded(top);
	hm_put_at(top, two, "var edited = 'after its shard ran';\n", 36);
	refused(top, top, two, "not the file shard 2 encoded");

	snprintf(top, sizeof(top), "%s/sibling", dir);
	sharded(top);
	snprintf(rel, sizeof(rel), "%s.gz", one);
	CHECK(access(at(top, rel), F_OK) == 0);
	hm_put_at(top, rel, "other bytes", 11);
	snprintf(msg, sizeof(msg), "not the sibling shard 1 wrote");
	refused(top, top, rel, msg);
}

int main(void)
{
	if (!scratch_make(dir))
		return 1;
	test_merged();
	test_refused();
	return scratch_end(dir, "test_merge");
}
