/*
 * test_shard.c - shards (shard.c): the documented rule against FNV-1a's
 * published test vectors, which files a run of one shard calls its own,
 * part names (classify.c) and paths, and parts read back as kiln's record:
 * a part written by the manifest writer, merged into a state, makes its
 * siblings (and its stale ones) kiln's own, and the part is removed only
 * while it is the file that was read.
 */
#include "classify.h"
#include "codec.h"
#include "manifest.h"
#include "shard.h"

#include "check.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

/* FNV-1a 64 of "", "a" and "foobar" are 0xcbf29ce484222325,
 * 0xaf63dc4c8601ec8c and 0x85944171f73967e8 (the FNV authors' test
 * vectors): modulo 65536 their low 16 bits show through. */
static void test_rule(void)
{
	CHECK(kiln_shard_of("", 65536) == 0x2325 + 1);
	CHECK(kiln_shard_of("a", 65536) == 0xec8c + 1);
	CHECK(kiln_shard_of("foobar", 65536) == 0x67e8 + 1);
	/* modulo 4: the low two bits */
	CHECK(kiln_shard_of("a", 4) == (0x8c & 3) + 1);
	CHECK(kiln_shard_of("foobar", 4) == (0xe8 & 3) + 1);
	CHECK(kiln_shard_of("anything", 1) == 1);
	CHECK(kiln_shard_of("anything", 0) == 0);
	/* every shard gets files, and about as many */
	unsigned count[5] = { 0 };
	for (int i = 0; i < 4000; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "assets/chunk-%d.js", i);
		unsigned k = kiln_shard_of(rel, 4);
		CHECK(k >= 1 && k <= 4);
		if (k >= 1 && k <= 4)
			count[k]++;
	}
	for (int k = 1; k <= 4; k++)
		CHECK_MSG(count[k] > 900 && count[k] < 1100, "shard %d has %u of 4000", k, count[k]);
}

static void test_mine(void)
{
	struct kiln_options opt;

	kiln_options_init(&opt);
	CHECK(kiln_shard_mine(&opt, "a") && kiln_shard_mine(&opt, "foobar"));
	opt.shard_count = 4;
	opt.shard_index = (0x8c & 3) + 1;
	CHECK(kiln_shard_mine(&opt, "a"));
	opt.shard_index = opt.shard_index % 4 + 1;
	CHECK(!kiln_shard_mine(&opt, "a"));
	/* options: a shard needs a manifest, and 1 <= K <= N <= max */
	CHECK(kiln_options_check(&opt, NULL, NULL) == KILN_OK);
	const char *field = NULL;
	opt.write_manifest = false;
	CHECK(kiln_options_check(&opt, &field, NULL) == KILN_ERR_INVALID && field &&
	      strcmp(field, "shard") == 0);
	opt.write_manifest = true;
	opt.shard_index = 0;
	CHECK(kiln_options_check(&opt, NULL, NULL) == KILN_ERR_INVALID);
	opt.shard_index = 5;
	CHECK(kiln_options_check(&opt, NULL, NULL) == KILN_ERR_INVALID);
	opt.shard_index = 1;
	opt.shard_count = KILN_MAX_SHARDS + 1;
	CHECK(kiln_options_check(&opt, NULL, NULL) == KILN_ERR_INVALID);
}

static void test_names(void)
{
	unsigned k = 0, n = 0;
	char *p;

	CHECK(kiln_is_part_name("kiln-manifest.shard-3-of-4.json", &k, &n, NULL) && k == 3 && n == 4);
	CHECK(kiln_is_part_name("kiln-manifest.shard-65536-of-65536.json", &k, &n, NULL) &&
	      k == 65536 && n == 65536);
	CHECK(!kiln_is_part_name("kiln-manifest.shard-5-of-4.json", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.shard-0-of-4.json", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.shard-03-of-4.json", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.shard-1-of-65537.json", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.shard-1-of-4.json.tmp", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.shard-1-of-.json", NULL, NULL, NULL));
	CHECK(!kiln_is_part_name("kiln-manifest.json", NULL, NULL, NULL));
	/* parts are kiln's own outputs: never taken for assets */
	CHECK(kiln_is_own_output("kiln-manifest.shard-1-of-2.json"));
	CHECK(!kiln_is_own_output("kiln-manifest.shard-1-of-2.json.gz"));
	CHECK((p = kiln_part_path("dist/kiln-manifest.json", 2, 8)) &&
	      strcmp(p, "dist/kiln-manifest.shard-2-of-8.json") == 0);
	free(p);
	CHECK((p = kiln_part_path("/kiln-manifest.json", 1, 1)) &&
	      strcmp(p, "/kiln-manifest.shard-1-of-1.json") == 0);
	free(p);
	/* a manifest named otherwise: its name in its parts' */
	CHECK((p = kiln_part_path("/m.json", 1, 1)) &&
	      strcmp(p, "/kiln-manifest.shard-1-of-1.m.json.json") == 0);
	free(p);
	CHECK((p = kiln_part_path("m.json", 1, 3)) &&
	      strcmp(p, "./kiln-manifest.shard-1-of-3.m.json.json") == 0);
	free(p);
	CHECK((p = kiln_part_path("out/site", 2, 3)) &&
	      strcmp(p, "out/kiln-manifest.shard-2-of-3.site.json") == 0);
	free(p);
	{
		const char *stem = "x";
		CHECK(kiln_is_part_name("kiln-manifest.shard-2-of-3.site.json", &k, &n, &stem) &&
		      k == 2 && n == 3 && stem && strcmp(stem, "site.json") == 0);
		CHECK(kiln_is_part_name("kiln-manifest.shard-2-of-3.json", NULL, NULL, &stem) && !stem);
		CHECK(!kiln_is_part_name("kiln-manifest.shard-2-of-3..json", NULL, NULL, NULL));
		CHECK(!kiln_is_part_name("kiln-manifest.shard-2-of-3xsite.json", NULL, NULL, NULL));
		CHECK(kiln_is_own_output("kiln-manifest.shard-1-of-2.site.json"));
	}
	/* each manifest's own parts, and only those */
	CHECK(kiln_part_of("d/kiln-manifest.json", "kiln-manifest.shard-1-of-2.json", &k, &n) &&
	      k == 1 && n == 2);
	CHECK(!kiln_part_of("d/kiln-manifest.json", "kiln-manifest.shard-1-of-2.a.json", NULL, NULL));
	CHECK(kiln_part_of("d/a.json", "kiln-manifest.shard-1-of-2.a.json.json", NULL, NULL));
	CHECK(kiln_part_of("d/a", "kiln-manifest.shard-1-of-2.a.json", NULL, NULL));
	/* "a" and "a.json" never share a part's name */
	CHECK(!kiln_part_of("d/a.json", "kiln-manifest.shard-1-of-2.a.json", NULL, NULL));
	CHECK(!kiln_part_of("d/a", "kiln-manifest.shard-1-of-2.a.json.json", NULL, NULL));
	CHECK(!kiln_part_of("d/a.json", "kiln-manifest.shard-1-of-2.json", NULL, NULL));
	CHECK(!kiln_part_of("d/a.json", "kiln-manifest.shard-1-of-2.ab.json.json", NULL, NULL));
	CHECK(!kiln_part_of("d/ab.json", "kiln-manifest.shard-1-of-2.a.json.json", NULL, NULL));
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	return f ? fclose(f) == 0 && ok : false;
}

/* A part as a shard writes it, merged into a state. */
static void test_parts(void)
{
	struct kiln_options opt;
	struct kiln_record r = { 0 };
	struct kiln_stale stale = { 0 };
	struct kiln_state st = { 0 };
	struct kiln_parts_seen seen = { 0 };
	struct kiln_error err = { 0 };
	char *bad = NULL;
	kiln_coding gz = kiln_coding_find("gzip");
	char *text, *manifest = strdup(scratch_path(base, "kiln-manifest.json"));
	struct kiln_prev_entry *pe;
	uint8_t other[32];

	kiln_options_init(&opt);
	opt.shard_index = 2;
	opt.shard_count = 3;
	r.rel = (char *)"app.js";
	r.size = 1000;
	memset(r.sha256, 0x11, 32);
	r.outcome = KILN_OUTCOME_COMPRESSED;
	r.coding[gz].outcome = KILN_CODING_KEPT;
	r.coding[gz].size = 300;
	memset(r.coding[gz].sha256, 0x22, 32);
	r.coding[gz].recipe = "libdeflate-1.14-12";
	stale.rel = (char *)"old.css.gz";
	stale.coding = gz;
	stale.size = 77;
	memset(stale.sha256, 0x33, 32);
	text = kiln_manifest_dump(&opt, &(struct kiln_manifest_item){ &r, r.fp }, 1, &stale, 1, NULL, 0,
				  NULL);
	CHECK(text && strstr(text, "\"shard\": {") && strstr(text, "\"count\": 3") &&
	      strstr(text, "\"index\": 2"));
	CHECK(text && write_file(scratch_path(base, "kiln-manifest.shard-2-of-3.json"), text));
	free(text);
	/* a part kiln cannot parse: skipped, and named to the caller */
	CHECK(write_file(scratch_path(base, "kiln-manifest.shard-1-of-3.json"), "not json"));
	CHECK(kiln_parts_merge(manifest, &st, &seen, &bad, &err) == KILN_OK);
	CHECK(seen.n == 1 && strstr(seen.v[0].path, "shard-2-of-3"));
	CHECK(bad && strcmp(bad, scratch_path(base, "kiln-manifest.shard-1-of-3.json")) == 0);
	CHECK(bad && err.status == KILN_ERR_INVALID && strstr(err.what, "shard part"));
	free(bad);
	bad = NULL;
	pe = kiln_state_find(&st, "app.js");
	CHECK(pe && !pe->in_manifest && pe->njv == 1);
	CHECK(pe && kiln_state_owns(pe, gz, 300, r.coding[gz].sha256));
	memset(other, 0x44, 32);
	CHECK(pe && !kiln_state_owns(pe, gz, 300, other));
	CHECK(pe && pe->njv == 1 && pe->jv[0].src_known && pe->jv[0].src_size == 1000 &&
	      strcmp(pe->jv[0].recipe, r.coding[gz].recipe) == 0);
	CHECK(kiln_state_records_sibling(&st, "app.js.gz"));
	CHECK(kiln_state_records_sibling(&st, "old.css.gz"));
	CHECK(!kiln_state_records_sibling(&st, "app.js.br"));
	/* removed only while it is the file read */
	CHECK(rename(scratch_path(base, "kiln-manifest.shard-2-of-3.json"),
		     scratch_path(base, "x")) == 0);
	CHECK(write_file(scratch_path(base, "kiln-manifest.shard-2-of-3.json"), "newer"));
	CHECK(kiln_parts_remove(&seen));
	CHECK(access(scratch_path(base, "kiln-manifest.shard-2-of-3.json"), F_OK) == 0);
	kiln_parts_seen_free(&seen);
	kiln_state_free(&st);
	memset(&st, 0, sizeof(st));
	CHECK(rename(scratch_path(base, "x"), scratch_path(base, "kiln-manifest.shard-2-of-3.json")) == 0);
	CHECK(unlink(scratch_path(base, "kiln-manifest.shard-1-of-3.json")) == 0);
	CHECK(kiln_parts_merge(manifest, &st, &seen, &bad, &err) == KILN_OK && seen.n == 1);
	CHECK(bad == NULL); /* every part read */
	CHECK(kiln_parts_remove(&seen));
	CHECK(access(scratch_path(base, "kiln-manifest.shard-2-of-3.json"), F_OK) != 0);
	kiln_parts_seen_free(&seen);
	kiln_state_free(&st);
	free(manifest);
}

int main(void)
{
	strcpy(base, "/tmp/kiln-test-shard-XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	test_rule();
	test_mine();
	test_names();
	test_parts();
	if (check_failures == 0)
		scratch_remove(base);
	else
		fprintf(stderr, "test_shard: files left in %s\n", base);
	return check_exit("test_shard");
}
