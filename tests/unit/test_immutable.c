/*
 * test_immutable.c - the evidence immutable.c tries after the name, on a
 * real tree in a scratch directory: a rename across an earlier release
 * (--previous) with new bytes, and not a counter, a date, a campaign (a
 * word after the name's '-' too), a place, a person, letters in sequence
 * or a rename with the same bytes; --immutable globs; --mutable over every
 * kind of evidence.  Which token is a hash comes from how each name was
 * made here, not from kiln's output.
 */
#include "immutable.h"
#include "release.h"
#include "walk.h"

#include "check.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[] = "/tmp/kiln-test-immutable.XXXXXX";

/* Write DIR/REL (making its directories) with TEXT repeated. */
static void put(const char *rel, const char *text)
{
	char *path = scratch_path(dir, rel);
	FILE *f;

	for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	CHECK_MSG(f != NULL, "%s", path);
	if (!f)
		return;
	for (int i = 0; i < 50; i++)
		fputs(text, f);
	fclose(f);
}

/* The decision for the tree's file REL. */
static struct kiln_fp of(const struct kiln_tree *t, const char *rel)
{
	for (size_t k = 0; k < t->walk.n; k++)
		if (strcmp(t->walk.v[k].rel, rel) == 0)
			return kiln_immutable_of(t, k);
	CHECK_MSG(0, "%s is in the tree", rel);
	return (struct kiln_fp){ 0 };
}

/* Is REL's decision WHY, with the fingerprint TOKEN ("" for none)? */
static bool is(const struct kiln_tree *t, const char *rel, unsigned why, const char *token)
{
	struct kiln_fp fp = of(t, rel);
	const char *at = strstr(rel, token);

	if (fp.why != why)
		return false;
	if (!*token)
		return fp.len == 0;
	return at && fp.start == (size_t)(at - rel) && fp.len == strlen(token);
}

int main(void)
{
	static const char *const immutable[] = { "fonts/*" };
	static const char *const mutable_globs[] = { "fonts/bold*", "named/index-*" };
	const char *previous[1];
	struct kiln_options opt;
	struct kiln_callbacks cb = { 0 };
	struct kiln_error err = { 0 };
	struct kiln_run *run;
	struct kiln_tree t;

	CHECK(mkdtemp(dir) != NULL);
	/* release 1 */
	put("prev/lone/app-KQXWPZvr.js", "release one ");
	put("prev/same/lib-HBGTRFvd.js", "the same bytes ");
	put("prev/d/sale-SALE2024.html", "sale ");
	put("prev/d/chapter-00000041.html", "chapter ");
	put("prev/d/page-KQXWPZvr.html", "page ");
	put("prev/kept/x-Zyxwvuts.js", "kept ");
	put("prev/kept/x-Qwertzui.js", "kept ");
	put("prev/c/banner-SUMMER24.png", "summer ");
	put("prev/c/promo-BlackFri.html", "black friday ");
	put("prev/asn/asn1Coding.html", "asn.1 coding ");
	put("prev/v/notes-v2Config.html", "version 2 ");
	/* campaigns, places and people renamed; letters in sequence */
	put("prev/lp/lp-easterEg.css", "before ");
	put("prev/bg/bg-blueSky.jpg", "before ");
	put("prev/city/city-NewYork.jpg", "before ");
	put("prev/team/team-JohnDoe.jpg", "before ");
	put("prev/promo/promo-xmasDeal.png", "before ");
	put("prev/ad/ad-xmasSale.png", "before ");
	put("prev/photo/photo-ABCDEFGH.jpg", "before ");
	/* release 2 */
	put("site/lone/app-DPJWWXvr.js", "release two ");       /* a new hash, new bytes */
	put("site/same/lib-ZMXNCBvq.js", "the same bytes ");    /* a new hash, same bytes */
	put("site/d/sale-SALE2025.html", "sale 2025 ");         /* a campaign */
	put("site/d/chapter-00000042.html", "chapter 42 ");     /* a counter */
	put("site/d/page-KQXWPZvq.html", "page two ");          /* one character */
	put("site/kept/x-Zyxwvuts.js", "kept, changed ");       /* there in both */
	put("site/c/banner-WINTER25.png", "winter ");            /* campaigns */
	put("site/c/promo-CyberMon.html", "cyber monday ");
	put("site/asn/asn2Parser.html", "asn.2 parser ");       /* another page */
	put("site/v/notes-v3Loader.html", "version 3 ");        /* another version */
	put("site/lp/lp-xmasDeal.css", "after ");
	put("site/bg/bg-redDusk.jpg", "after ");
	put("site/city/city-SanJose.jpg", "after ");
	put("site/team/team-JaneRoe.jpg", "after ");
	put("site/promo/promo-easterEg.png", "after ");
	put("site/ad/ad-summerSl.png", "after ");
	put("site/photo/photo-HGFEDCBA.jpg", "after ");
	put("site/fonts/inter.woff2", "font ");                 /* --immutable */
	put("site/fonts/bold.woff2", "bold ");                  /* ... and --mutable */
	put("site/named/index-B2x9_kQ1.js", "index ");          /* name, and --mutable */
	put("site/named/vendor-Qm7pL2vX.js", "vendor ");        /* name */

	kiln_options_init(&opt);
	opt.jobs = 1;
	opt.immutable = immutable;
	opt.n_immutable = 1;
	opt.mutable_globs = mutable_globs;
	opt.n_mutable = 2;
	previous[0] = strdup(scratch_path(dir, "prev"));
	opt.previous = previous;
	opt.n_previous = 1;
	run = kiln_run_new(&opt, &cb);
	CHECK(run != NULL);
	if (!run)
		return check_exit("test_immutable");
	CHECK(kiln_tree_begin(&t, run, scratch_path(dir, "site"), &run->cb) == KILN_OK);
	CHECK(kiln_walk(t.root, t.opt, NULL, 0, &t.walk, &err) == KILN_OK);
	CHECK(kiln_release_read(previous[0], t.opt, 1 << 20, &t.releases[0], &err) == KILN_OK);
	kiln_immutable_decide(&t);
	CHECK(t.fp != NULL);

	/* previous */
	CHECK(is(&t, "lone/app-DPJWWXvr.js", KILN_WHY_PREVIOUS, "DPJWWXvr"));
	CHECK(is(&t, "same/lib-ZMXNCBvq.js", KILN_WHY_NONE, ""));
	CHECK(is(&t, "d/sale-SALE2025.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "d/chapter-00000042.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "d/page-KQXWPZvq.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "c/banner-WINTER25.png", KILN_WHY_NONE, ""));
	CHECK(is(&t, "c/promo-CyberMon.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "asn/asn2Parser.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "v/notes-v3Loader.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "lp/lp-xmasDeal.css", KILN_WHY_NONE, ""));
	CHECK(is(&t, "bg/bg-redDusk.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "city/city-SanJose.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "team/team-JaneRoe.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "promo/promo-easterEg.png", KILN_WHY_NONE, ""));
	CHECK(is(&t, "ad/ad-summerSl.png", KILN_WHY_NONE, ""));
	CHECK(is(&t, "photo/photo-HGFEDCBA.jpg", KILN_WHY_NONE, ""));
	/* a name of both releases is no rename, though its bytes changed */
	CHECK(is(&t, "kept/x-Zyxwvuts.js", KILN_WHY_NONE, ""));
	/* glob, and --mutable over a glob and over the name */
	CHECK(is(&t, "fonts/inter.woff2", KILN_WHY_GLOB, ""));
	CHECK(is(&t, "fonts/bold.woff2", KILN_WHY_NONE, ""));
	CHECK(is(&t, "named/index-B2x9_kQ1.js", KILN_WHY_NONE, ""));
	CHECK(is(&t, "named/vendor-Qm7pL2vX.js", KILN_WHY_NAME, "Qm7pL2vX"));

	kiln_tree_end(&t);
	kiln_run_free(run);
	free((char *)previous[0]);
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_immutable");
}
