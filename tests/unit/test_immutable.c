/*
 * test_immutable.c - the evidence immutable.c tries after the name, on a
 * real tree in a scratch directory: a rename across an earlier release
 * (--previous) with new bytes, and not a counter, a date, a campaign (a
 * word after the name's '-' too), a place, a person, letters in sequence,
 * a rename with the same bytes, another stem, a series of many files; a
 * bundler's manifest (a complete one decides its directories: what it
 * does not list, or says it did not hash, is not immutable by its name;
 * stale, it decides nothing); --immutable globs; --mutable over every kind
 * of evidence.  Which token is a hash comes from how each name was made
 * here, not from kiln's output.
 */
#include "immutable.h"
#include "release.h"
#include "walk.h"

#include "check.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

static char dir[] = "/tmp/kiln-test-immutable.XXXXXX";

/* Write DIR/REL (making its directories) with TEXT, once or repeated. */
static void put_n(const char *rel, const char *text, int times)
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
	for (int i = 0; i < times; i++)
		fputs(text, f);
	fclose(f);
}

static void put(const char *rel, const char *text)
{
	put_n(rel, text, 50);
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

/* Decide the tree DIR/SITE (its earlier release DIR/PREV when PREV, the
 * manifest FINGERPRINTS when given) into *T, with OPT's globs. */
static bool decide(struct kiln_tree *t, struct kiln_run **run, struct kiln_options *opt,
		   const char *site, const char *prev, const char *fingerprints)
{
	static const char *previous[1], *fps[1];
	struct kiln_callbacks cb = { 0 };
	struct kiln_error err = { 0 };

	opt->jobs = 1;
	previous[0] = prev ? strdup(scratch_path(dir, prev)) : NULL;
	opt->previous = previous;
	opt->n_previous = prev != NULL;
	fps[0] = fingerprints ? strdup(scratch_path(dir, fingerprints)) : NULL;
	opt->fingerprints = fps;
	opt->n_fingerprints = fingerprints != NULL;
	*run = kiln_run_new(opt, &cb);
	CHECK(*run != NULL);
	if (!*run)
		return false;
	CHECK(kiln_tree_begin(t, *run, scratch_path(dir, site), &(*run)->cb) == KILN_OK);
	CHECK(kiln_walk(t->root, t->opt, NULL, 0, &t->walk, &err) == KILN_OK);
	if (prev)
		CHECK(kiln_release_read(previous[0], t->opt, 1 << 20, &t->releases[0], &err) == KILN_OK);
	kiln_immutable_decide(t);
	CHECK(t->fp != NULL);
	return t->fp != NULL;
}

static void done(struct kiln_tree *t, struct kiln_run *run, struct kiln_options *opt)
{
	kiln_tree_end(t);
	kiln_run_free(run);
	free((char *)opt->previous[0]);
	free((char *)opt->fingerprints[0]);
}

/* Set REL's modification time to SECONDS ago. */
static void age(const char *rel, int seconds)
{
	struct timeval tv[2];

	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= seconds;
	tv[1] = tv[0];
	CHECK(utimes(scratch_path(dir, rel), tv) == 0);
}

/* Renames: a name around a token of a bundler's hash shape, after the
 * same stem, with new bytes; not another stem, no '_' in the token, no
 * person, code or series. */
static void test_renames(void)
{
	struct kiln_options opt;
	struct kiln_run *run;
	struct kiln_tree t;
	char rel[64];

	put("p2/r1/Photo_IMG7.jpg", "photo ");
	put("p2/r2/team-JD-24.jpg", "team ");             /* another stem, same length */
	put("p2/r1/img/hero-Winter_B.jpg", "hero ");
	put("p2/r2/img/hero-Spring_A.jpg", "hero two ");   /* a '_' in the token */
	put("p2/r1/img/speaker-IanMcKay.jpg", "speaker ");
	put("p2/r2/img/speaker-XuLiPing.jpg", "speaker two "); /* people */
	put("p2/r1/img/sku-X7K2PQ9Z.jpg", "sku ");
	put("p2/r2/img/sku-B4N8WM3R.jpg", "sku two ");     /* product codes */
	put("p2/r1/img/ticket-A1B2C3.jpg", "ticket ");
	put("p2/r2/img/ticket-D4E5F6.jpg", "ticket two "); /* short */
	put("p2/r1/3f9a2c7b1d4e5f6a.svg", "svg ");
	put("p2/r2/0e1d2c3b4a5f6e7d.svg", "svg two ");     /* webpack's [hash]: a hash */
	put("p2/r1/Kq7wPz3x.js", "js ");
	put("p2/r2/Dm2xQv8n.js", "js two ");               /* a whole name of 8: no stem */
	put("p2/r1/post-9f8e7d6c.html", "page ");
	put("p2/r2/post-1a2b3c4d.html", "page two ");      /* a page */
	/* a series: more names around one place than RENAME_MAX */
	for (int i = 0; i < 20; i++) {
		snprintf(rel, sizeof(rel), "p2/r1/tiles/t-Kqzwxp%02d.png", i);
		put(rel, "tile ");
		snprintf(rel, sizeof(rel), "p2/r2/tiles/t-Dmvbnr%02d.png", i);
		put(rel, "tile two ");
	}
	put("p2/r1/one/app-Kq7wPz3x.js", "app ");
	put("p2/r2/one/app-Dm2xQv8n.js", "app two ");      /* one rename: a hash */
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "p2/r2", "p2/r1", NULL))
		return;
	CHECK(is(&t, "team-JD-24.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "img/hero-Spring_A.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "img/speaker-XuLiPing.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "img/sku-B4N8WM3R.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "img/ticket-D4E5F6.jpg", KILN_WHY_NONE, ""));
	CHECK(is(&t, "0e1d2c3b4a5f6e7d.svg", KILN_WHY_NAME, "0e1d2c3b4a5f6e7d"));
	CHECK(is(&t, "Dm2xQv8n.js", KILN_WHY_NONE, ""));
	CHECK(is(&t, "post-1a2b3c4d.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "tiles/t-Dmvbnr07.png", KILN_WHY_NONE, ""));
	CHECK(is(&t, "one/app-Dm2xQv8n.js", KILN_WHY_NAME, "Dm2xQv8n"));
	done(&t, run, &opt);
	/* ... a whole name of 16 hex digits or more is webpack's [hash] */
	put("p3/r1/3f9a2c7b1d4e5f6a.svg", "svg ");
	put("p3/r2/1234567890123456.svg", "svg two "); /* no letter: not the name's */
	put("p3/r1/one/app-KQXWPZvr.js", "app ");
	put("p3/r2/one/app-DPJWWXvr.js", "app two ");
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "p3/r2", "p3/r1", NULL))
		return;
	CHECK(is(&t, "one/app-DPJWWXvr.js", KILN_WHY_PREVIOUS, "DPJWWXvr"));
	CHECK(is(&t, "1234567890123456.svg", KILN_WHY_PREVIOUS, "1234567890123456"));
	done(&t, run, &opt);
}

/* A complete manifest decides the directories of its outputs; stale, it
 * does not. */
static void test_manifests(void)
{
	struct kiln_options opt;
	struct kiln_run *run;
	struct kiln_tree t;

	put("m/assets/index-DPJWWXvr.js", "index ");     /* proven */
	put("m/assets/vendor-Qm7pL2vX.js", "vendor ");   /* listed, its name proves it */
	put("m/assets/extra-B2x9_kQ1.js", "extra ");     /* not listed: a copy from public/ */
	put("m/other/extra-Xk9mQ2pL.js", "other ");      /* a directory it does not decide */
	put("m/index.html", "<p>");
	put_n("vite.json", "{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", "
		"\"name\": \"index\", \"src\": \"index.html\", \"isEntry\": true},"
		" \"_v.js\": {\"file\": \"assets/vendor-Qm7pL2vX.js\"}}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m", NULL, "vite.json"))
		return;
	CHECK(is(&t, "assets/index-DPJWWXvr.js", KILN_WHY_BUNDLER, "DPJWWXvr"));
	CHECK(is(&t, "assets/vendor-Qm7pL2vX.js", KILN_WHY_NAME, "Qm7pL2vX"));
	CHECK(is(&t, "assets/extra-B2x9_kQ1.js", KILN_WHY_NONE, ""));
	CHECK(is(&t, "other/extra-Xk9mQ2pL.js", KILN_WHY_NAME, "Xk9mQ2pL"));
	done(&t, run, &opt);
	/* older than its outputs by more than a build takes: an earlier
	 * build's, deciding nothing (but what it proves) */
	age("vite.json", 3600);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m", NULL, "vite.json"))
		return;
	CHECK(is(&t, "assets/index-DPJWWXvr.js", KILN_WHY_NAME, "DPJWWXvr") ||
	      is(&t, "assets/index-DPJWWXvr.js", KILN_WHY_BUNDLER, "DPJWWXvr"));
	CHECK(is(&t, "assets/extra-B2x9_kQ1.js", KILN_WHY_NAME, "B2x9_kQ1"));
	done(&t, run, &opt);
	/* listing an output that is not there: the same */
	put_n("vite2.json", "{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", "
		"\"name\": \"index\", \"src\": \"index.html\", \"isEntry\": true},"
		" \"_gone.js\": {\"file\": \"assets/gone-Kq7wPz3x.js\", \"name\": \"gone\"}}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m", NULL, "vite2.json"))
		return;
	CHECK(is(&t, "assets/extra-B2x9_kQ1.js", KILN_WHY_NAME, "B2x9_kQ1"));
	done(&t, run, &opt);
	/* webpack's stats: an output webpack says it did not hash is not
	 * immutable, whatever its name */
	put("w/static/js/main.3f9a2c7b.js", "main ");
	put("w/static/js/copied.8e1d0a4f.js", "copied ");
	put_n("stats.json", "{\"assets\": [{\"name\": \"static/js/main.3f9a2c7b.js\", \"info\": "
		"{\"immutable\": true, \"contenthash\": \"3f9a2c7b\"}}, {\"name\": "
		"\"static/js/copied.8e1d0a4f.js\", \"info\": {\"copied\": true}}]}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "w", NULL, "stats.json"))
		return;
	CHECK(is(&t, "static/js/main.3f9a2c7b.js", KILN_WHY_NAME, "3f9a2c7b"));
	CHECK(is(&t, "static/js/copied.8e1d0a4f.js", KILN_WHY_NONE, ""));
	done(&t, run, &opt);
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
	test_renames();
	test_manifests();
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_immutable");
}
