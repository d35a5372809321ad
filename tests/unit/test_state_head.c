/*
 * test_state_head.c - a manifest's head read back (state_head.c): the
 * options manifest.c writes as "settings" come back as the same options
 * (written again, the same settings), a changed option or encoder version
 * is named by its key, a shard's part says which it is, and settings kiln
 * does not write are refused.
 */
#include "codec.h"
#include "manifest.h"
#include "state.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OPT written by the manifest writer and read back into *st. */
static bool dump_parse(const struct kiln_options *opt, struct kiln_state *st)
{
	char *text = kiln_manifest_dump(opt, NULL, 0, NULL, 0, NULL, 0, NULL);
	bool ok = text && kiln_state_parse(text, strlen(text), st) == KILN_OK && st->loaded;

	free(text);
	return ok;
}

/* TEXT with the first FROM replaced by TO, parsed into *st. */
static bool edit_parse(const struct kiln_options *opt, const char *from, const char *to,
		       struct kiln_state *st)
{
	char *text = kiln_manifest_dump(opt, NULL, 0, NULL, 0, NULL, 0, NULL);
	char *at = text ? strstr(text, from) : NULL, *out;
	bool ok = false;

	if (at && (out = malloc(strlen(text) + strlen(to) + 1))) {
		size_t k = (size_t)(at - text);
		memcpy(out, text, k);
		strcpy(out + k, to);
		strcat(out, at + strlen(from));
		ok = kiln_state_parse(out, strlen(out), st) == KILN_OK && st->loaded;
		free(out);
	}
	free(text);
	return ok;
}

static void free_globs(char **g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i]);
	free(g);
}

static void test_round_trip(void)
{
	static const char *const inc[] = { "**/*.js", "caf\xc3\xa9/*" }, *const exc[] = { "*.map" },
				 *const imm[] = { "fonts/*" }, *const mut[] = { "sw.js", "a b/*" };
	struct kiln_options opt, back;
	struct kiln_state a = { 0 }, b = { 0 };
	char **globs;
	size_t n;
	kiln_coding br = kiln_coding_find("br"), zst = kiln_coding_find("zstd");

	kiln_options_init(&opt);
	CHECK(br >= 0 && zst >= 0);
	opt.codings |= 1u << br | 1u << zst;
	opt.level[br] = 9;
	opt.level[zst] = 12;
	opt.min_size = 1000;
	opt.max_ratio = 0.8;
	opt.include = inc, opt.n_include = 2;
	opt.exclude = exc, opt.n_exclude = 1;
	opt.immutable = imm, opt.n_immutable = 1;
	opt.mutable_globs = mut, opt.n_mutable = 2;
	CHECK(dump_parse(&opt, &a));
	kiln_options_init(&back);
	CHECK(kiln_state_options(&a, &back, &globs, &n));
	CHECK(n == 6);
	CHECK(back.codings == opt.codings);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		CHECK_MSG(back.level[c] == opt.level[c], "coding %u", c);
		CHECK_MSG(back.extra[c] == opt.extra[c], "coding %u", c);
	}
	CHECK(back.min_size == 1000 && back.stream_size == opt.stream_size);
	CHECK(back.max_ratio == 0.8);
	CHECK(back.n_include == 2 && strcmp(back.include[1], inc[1]) == 0);
	CHECK(back.n_exclude == 1 && strcmp(back.exclude[0], "*.map") == 0);
	CHECK(back.n_immutable == 1 && strcmp(back.immutable[0], "fonts/*") == 0);
	CHECK(back.n_mutable == 2 && strcmp(back.mutable_globs[1], "a b/*") == 0);
	/* written again: the same head */
	CHECK(dump_parse(&back, &b));
	CHECK(kiln_state_settings_difference(&a, &b) == NULL);
	CHECK(kiln_state_generator_difference(&a, &b) == NULL);
	free_globs(globs, n);
	kiln_state_free(&b);

	/* one option changed: named by its key */
	back = opt;
	back.min_size = 999;
	CHECK(dump_parse(&back, &b));
	const char *key = kiln_state_settings_difference(&a, &b);
	CHECK(key && strcmp(key, "min_size") == 0);
	CHECK(kiln_state_generator_difference(&a, &b) == NULL);
	kiln_state_free(&b);
	back = opt;
	back.n_mutable = 1;
	CHECK(dump_parse(&back, &b));
	key = kiln_state_settings_difference(&a, &b);
	CHECK(key && strcmp(key, "mutable") == 0);
	kiln_state_free(&b);
	/* no shard */
	unsigned k, cnt;
	CHECK(!kiln_state_shard(&a, &k, &cnt));
	kiln_state_free(&a);
}

static void test_generator_and_shard(void)
{
	struct kiln_options opt;
	struct kiln_state a = { 0 }, b = { 0 };
	unsigned k = 0, n = 0;

	kiln_options_init(&opt);
	opt.shard_index = 3;
	opt.shard_count = 4;
	CHECK(dump_parse(&opt, &a));
	CHECK(kiln_state_shard(&a, &k, &n) && k == 3 && n == 4);
	/* another kiln's version: the generator differs, at "version" */
	CHECK(edit_parse(&opt, "\"version\": \"", "\"version\": \"0.0.0-other", &b));
	const char *key = kiln_state_generator_difference(&a, &b);
	CHECK_MSG(key && strcmp(key, "version") == 0, "%s", key ? key : "(none)");
	CHECK(kiln_state_settings_difference(&a, &b) == NULL);
	kiln_state_free(&b);
	/* a shard number out of its count: not a part */
	CHECK(edit_parse(&opt, "\"index\": 3", "\"index\": 5", &b));
	CHECK(!kiln_state_shard(&b, &k, &n));
	kiln_state_free(&b);
	kiln_state_free(&a);
}

static void test_refused(void)
{
	struct kiln_options opt, back;
	struct kiln_state st = { 0 };
	char **globs;
	size_t n;

	kiln_options_init(&opt);
	/* an encoding this kiln does not know */
	CHECK(edit_parse(&opt, "\"gzip\"", "\"lzma\"", &st));
	back = opt;
	CHECK(!kiln_state_options(&st, &back, &globs, &n));
	free_globs(globs, n);
	kiln_state_free(&st);
	/* a negative size */
	CHECK(edit_parse(&opt, "\"min_size\":", "\"min_size\": -1, \"x\":", &st));
	back = opt;
	CHECK(!kiln_state_options(&st, &back, &globs, &n));
	free_globs(globs, n);
	kiln_state_free(&st);
	/* no settings at all */
	const char *bare = "{\"kiln_manifest\": 2, \"files\": {}}";
	CHECK(kiln_state_parse(bare, strlen(bare), &st) == KILN_OK && st.loaded);
	back = opt;
	CHECK(!kiln_state_options(&st, &back, &globs, &n));
	free_globs(globs, n);
	struct kiln_state full = { 0 };
	CHECK(dump_parse(&opt, &full));
	CHECK(kiln_state_settings_difference(&st, &full) != NULL);
	CHECK(kiln_state_settings_difference(&st, &st) == NULL);
	kiln_state_free(&full);
	kiln_state_free(&st);
}

int main(void)
{
	test_round_trip();
	test_generator_and_shard();
	test_refused();
	return check_exit("test_state_head");
}
