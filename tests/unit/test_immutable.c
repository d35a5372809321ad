/*
 * test_immutable.c - the evidence immutable.c tries after the name, on a
 * real tree in a scratch directory: a rename across an earlier release
 * (--previous) with new bytes, and not a counter, a date, a campaign (a
 * word after the name's '-' too), a place, a person, letters in sequence,
 * a rename with the same bytes, another stem, a series of many files; a
 * bundler's manifest (a complete one decides its directories: what it
 * does not list, or says it did not hash, is not immutable by its name;
 * stale, it decides nothing); --immutable globs; --mutable over every kind
 * of evidence; bytes changed under a name (against the last run's record,
 * its mark carried, or an earlier release's file of the same path).
 * Which token is a hash comes from how each name was made here, not from
 * kiln's output.
 */
#include "hash.h"
#include "immutable.h"
#include "manifest.h"
#include "release.h"
#include "state.h"
#include "walk.h"

#include "check.h"
#include "scratch.h"

#include <stdio.h>
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

static unsigned changes_told;
static char manifest_told[1024]; /* what the last manifest read was said to prove */

static void on_event(void *user, kiln_event ev, const char *path, int coding,
		     const struct kiln_error *err)
{
	(void)user, (void)path, (void)coding;
	changes_told += ev == KILN_EVENT_BYTES_CHANGED;
	if (ev == KILN_EVENT_FINGERPRINTS)
		snprintf(manifest_told, sizeof(manifest_told), "%s", err && err->what ? err->what : "");
}

/* Decide the tree DIR/SITE (its earlier release DIR/PREV when PREV, the
 * manifest FINGERPRINTS when given) into *T, with OPT's globs. */
static bool decide(struct kiln_tree *t, struct kiln_run **run, struct kiln_options *opt,
		   const char *site, const char *prev, const char *fingerprints)
{
	static const char *previous[1], *fps[1];
	struct kiln_callbacks cb = { .on_event = on_event };
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
	put("p2/r2/post-1a7e2c9d.html", "page two ");      /* a page */
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
	CHECK(is(&t, "post-1a7e2c9d.html", KILN_WHY_NONE, ""));
	CHECK(is(&t, "tiles/t-Dmvbnr07.png", KILN_WHY_NONE, ""));
	CHECK(is(&t, "one/app-Dm2xQv8n.js", KILN_WHY_NAME, "Dm2xQv8n"));
	done(&t, run, &opt);
	/* ... a whole name of 16 hex digits or more is webpack's [hash] */
	put("p3/r1/3f9a2c7b1d4e5f6a.svg", "svg ");
	put("p3/r2/1234567890123456.svg", "svg two "); /* no letter: not the name's */
	put("p3/r2/5e8d1c0b9a7f6e2d.svg", "svg three "); /* ... but a sample beside it */
	put("p3/r1/one/app-KQXWPZvr.js", "app ");
	put("p3/r2/one/app-DPJWWXvr.js", "app two ");
	/* digits alone are counters as often: an invoice's, a build's number */
	put("p3/r1/docs/invoice-48213907.pdf", "invoice ");
	put("p3/r2/docs/invoice-93017264.pdf", "invoice two ");
	put("p3/r1/dl/build-10234567.zip", "build ");
	put("p3/r2/dl/build-10298812.zip", "build two ");
	/* ... and webpack's hash of digits alone where the tree shows its
	 * shape (another of its hashes beside it) */
	put("p3/r1/js/main-87654321.js", "main ");
	put("p3/r2/js/main-12345678.js", "main two ");
	put("p3/r2/js/app-3f9a2c7b.js", "app ");
	put("p3/r1/js2/main-87654321.js", "main ");
	put("p3/r2/js2/main-12345678.js", "main two ");
	put("p3/r2/js2/app.3f9a2c7b.js", "app "); /* another shape: '.' */
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "p3/r2", "p3/r1", NULL))
		return;
	CHECK(is(&t, "one/app-DPJWWXvr.js", KILN_WHY_PREVIOUS, "DPJWWXvr"));
	CHECK(is(&t, "1234567890123456.svg", KILN_WHY_PREVIOUS, "1234567890123456"));
	CHECK(is(&t, "docs/invoice-93017264.pdf", KILN_WHY_NONE, ""));
	CHECK(is(&t, "dl/build-10298812.zip", KILN_WHY_NONE, ""));
	CHECK(is(&t, "js/main-12345678.js", KILN_WHY_PREVIOUS, "12345678"));
	CHECK(!is(&t, "js2/main-12345678.js", KILN_WHY_PREVIOUS, "12345678"));
	done(&t, run, &opt);
	/* without the sample, a whole name of digits alone pairs with none */
	put("p4/r1/3f9a2c7b1d4e5f6a.svg", "svg ");
	put("p4/r2/1234567890123456.svg", "svg two ");
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "p4/r2", "p4/r1", NULL))
		return;
	CHECK(is(&t, "1234567890123456.svg", KILN_WHY_NONE, ""));
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
	put("m/other/extra-Xk9mQ2pL.js", "other ");      /* a copy in another directory */
	put("m/images/cover-Vol2Ch13.jpg", "cover ");    /* ... hand-named */
	put("m/index.html", "<p>");
	put_n("vite.json", "{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", "
		"\"name\": \"index\", \"src\": \"index.html\", \"isEntry\": true},"
		" \"_v.js\": {\"file\": \"assets/vendor-Qm7pL2vX.js\"}}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m", NULL, "vite.json"))
		return;
	CHECK(is(&t, "assets/index-DPJWWXvr.js", KILN_WHY_BUNDLER, "DPJWWXvr"));
	CHECK(is(&t, "assets/vendor-Qm7pL2vX.js", KILN_WHY_NAME, "Qm7pL2vX"));
	/* told: what it proves (the index chunk: vendor's is only listed) and
	 * the one directory it decides */
	CHECK_MSG(strcmp(manifest_told, "Vite manifest: proves 1 file, decides 1 directory") == 0, "%s",
		  manifest_told);
	CHECK(is(&t, "assets/extra-B2x9_kQ1.js", KILN_WHY_NONE, ""));
	/* its outputs' root is the tree's top: every file under it that it
	 * does not list is a copy, whatever its name says */
	CHECK(is(&t, "other/extra-Xk9mQ2pL.js", KILN_WHY_NONE, ""));
	CHECK(is(&t, "images/cover-Vol2Ch13.jpg", KILN_WHY_NONE, ""));
	done(&t, run, &opt);
	/* the same manifest for a tree that holds its outputs one level down
	 * (given with --fingerprints): its root is that directory, and a file
	 * beside it keeps its name's evidence */
	put("m2/app/assets/index-DPJWWXvr.js", "index ");
	put("m2/app/assets/vendor-Qm7pL2vX.js", "vendor ");
	put("m2/app/images/cover-Vol2Ch13.jpg", "cover ");
	put("m2/other/extra-Xk9mQ2pL.js", "other ");
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m2", NULL, "vite.json"))
		return;
	CHECK(is(&t, "app/assets/index-DPJWWXvr.js", KILN_WHY_BUNDLER, "DPJWWXvr"));
	CHECK(is(&t, "app/images/cover-Vol2Ch13.jpg", KILN_WHY_NONE, ""));
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
	CHECK_MSG(strncmp(manifest_told, "Vite manifest: proves 1 file; stale: decides nothing (", 54) == 0 &&
		  strstr(manifest_told, "is newer than it"), "%s", manifest_told);
	done(&t, run, &opt);
	/* listing an output that is not there: the same */
	put_n("vite2.json", "{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", "
		"\"name\": \"index\", \"src\": \"index.html\", \"isEntry\": true},"
		" \"_gone.js\": {\"file\": \"assets/gone-Kq7wPz3x.js\", \"name\": \"gone\"}}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "m", NULL, "vite2.json"))
		return;
	CHECK(is(&t, "assets/extra-B2x9_kQ1.js", KILN_WHY_NAME, "B2x9_kQ1"));
	CHECK_MSG(strstr(manifest_told, "stale: decides nothing (it lists assets/gone-Kq7wPz3x.js, which "
				       "the tree does not hold)"), "%s", manifest_told);
	done(&t, run, &opt);
	/* esbuild's metafile: an entry's style sheet, an output of its own
	 * and the entry's cssBundle, is one file proven */
	put("es/out/main-K2ZT4RBQ.js", "main ");
	put("es/out/main-VIRMOKMZ.css", "css ");
	put_n("meta.json", "{\"inputs\": {}, \"outputs\": {"
		"\"out/main-K2ZT4RBQ.js\": {\"entryPoint\": \"src/main.js\", \"inputs\": {}, "
		"\"cssBundle\": \"out/main-VIRMOKMZ.css\"}, "
		"\"out/main-VIRMOKMZ.css\": {\"inputs\": {\"src/main.css\": {}}}}}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "es", NULL, "meta.json"))
		return;
	CHECK(is(&t, "out/main-VIRMOKMZ.css", KILN_WHY_BUNDLER, "VIRMOKMZ"));
	CHECK_MSG(strcmp(manifest_told, "esbuild metafile: proves 2 files, decides 1 directory") == 0,
		  "%s", manifest_told);
	done(&t, run, &opt);
	/* Next.js's manifest is read at the top only as build-manifest.json;
	 * a site's manifest.json with a "pages" key proves nothing */
	put("nx/static/css/site.css", "site ");
	put("nx/static/img/hero.jpg", "hero ");
	put("nx/static/chunks/main-c67a75d1b6f99dc8.js", "main ");
	put_n("nx/manifest.json", "{\"name\": \"My docs\", \"pages\": {\"/\": [\"static/css/site.css\", "
		"\"static/img/hero.jpg\"]}}", 1);
	put_n("nx/asset-manifest.json", "{\"pages\": {\"/\": [\"static/css/site.css\"]}, "
		"\"polyfillFiles\": [], \"lowPriorityFiles\": [], \"rootMainFiles\": []}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "nx", NULL, NULL))
		return;
	CHECK(is(&t, "static/css/site.css", KILN_WHY_NONE, ""));
	CHECK(is(&t, "static/img/hero.jpg", KILN_WHY_NONE, ""));
	done(&t, run, &opt);
	put_n("nx/build-manifest.json", "{\"pages\": {\"/\": [\"static/chunks/main-c67a75d1b6f99dc8.js\", "
		"\"static/css/site.css\"]}, \"polyfillFiles\": [], \"lowPriorityFiles\": [], "
		"\"rootMainFiles\": []}", 1);
	kiln_options_init(&opt);
	if (!decide(&t, &run, &opt, "nx", NULL, NULL))
		return;
	CHECK(is(&t, "static/css/site.css", KILN_WHY_BUNDLER, ""));
	CHECK(is(&t, "static/chunks/main-c67a75d1b6f99dc8.js", KILN_WHY_NAME, "c67a75d1b6f99dc8"));
	CHECK(is(&t, "static/img/hero.jpg", KILN_WHY_NONE, ""));
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

/* The record of REL as a run that read TIMES copies of TEXT would have
 * left it, its mark CHANGED. */
static struct kiln_record record_of(const char *rel, const char *text, int times, bool changed)
{
	struct kiln_record r = { .rel = (char *)rel, .outcome = KILN_OUTCOME_SMALL };
	size_t n = strlen(text) * (size_t)times;
	char *bytes = malloc(n + 1);

	for (int i = 0; bytes && i < times; i++)
		memcpy(bytes + strlen(text) * (size_t)i, text, strlen(text));
	r.size = n;
	CHECK(bytes && kiln_sha256(bytes, n, r.sha256) == KILN_OK);
	free(bytes);
	r.fp.changed = changed;
	return r;
}

/* Bytes changed under a name read as a fingerprint: against the last
 * run's record (its size, its sha256, its mark carried) and against an
 * earlier release's file of the same path; a bundler's account and a
 * glob stand. */
static void test_bytes_changed(void)
{
	static const char *const immutable[] = { "g/*" };
	struct kiln_callbacks cb = { .on_event = on_event };
	struct kiln_error err = { 0 };
	struct kiln_record rec[6];
	struct kiln_manifest_item items[6];
	struct kiln_options opt;
	struct kiln_run *run;
	struct kiln_tree t;
	const char *previous[1];
	char *text;

	put("bc/site/a/size-Kq7wPz3x.js", "new, longer ");  /* another size */
	put("bc/site/a/same-Dm2xQv8n.js", "unchanged ");     /* the same bytes */
	put("bc/site/a/hash-Qm7pL2vX.js", "bytes one ");     /* the same size, other bytes */
	put("bc/site/a/mark-Xk9mQ2pL.js", "marked ");        /* its record's mark */
	put("bc/site/g/glob-B2x9_kQ1.js", "glob two ");      /* --immutable */
	put("bc/site/a/rel-Hb3wQx9m.js", "release two ");    /* other bytes in the release */
	put("bc/site/a/kept-Tq5wRx2m.js", "kept ");          /* the same in the release */
	put("bc/prev/a/rel-Hb3wQx9m.js", "release one ");
	put("bc/prev/a/kept-Tq5wRx2m.js", "kept ");
	rec[0] = record_of("a/size-Kq7wPz3x.js", "old ", 50, false);
	rec[1] = record_of("a/same-Dm2xQv8n.js", "unchanged ", 50, false);
	rec[2] = record_of("a/hash-Qm7pL2vX.js", "bytes two ", 50, false);
	rec[3] = record_of("a/mark-Xk9mQ2pL.js", "marked ", 50, true);
	rec[4] = record_of("g/glob-B2x9_kQ1.js", "glob one ", 50, false);
	rec[5] = record_of("a/kept-Tq5wRx2m.js", "kept ", 50, false);
	for (size_t i = 0; i < 6; i++)
		items[i] = (struct kiln_manifest_item){ &rec[i], rec[i].fp };

	kiln_options_init(&opt);
	opt.jobs = 1;
	opt.immutable = immutable;
	opt.n_immutable = 1;
	previous[0] = strdup(scratch_path(dir, "bc/prev"));
	opt.previous = previous;
	opt.n_previous = 1;
	run = kiln_run_new(&opt, &cb);
	CHECK(run != NULL);
	if (!run)
		return;
	text = kiln_manifest_dump(&opt, items, 6, NULL, 0, NULL, 0, NULL);
	CHECK(kiln_tree_begin(&t, run, scratch_path(dir, "bc/site"), &run->cb) == KILN_OK);
	CHECK(text && kiln_state_parse(text, strlen(text), &t.state) == KILN_OK && t.state.n == 6);
	for (size_t i = 0; i < t.state.n; i++)
		t.state.v[i].seen = true;
	CHECK(kiln_walk(t.root, t.opt, NULL, 0, &t.walk, &err) == KILN_OK);
	CHECK(kiln_release_read(previous[0], t.opt, 1 << 20, &t.releases[0], &err) == KILN_OK);
	changes_told = 0;
	kiln_immutable_decide(&t);
	CHECK(t.fp != NULL);
	if (t.fp) {
		CHECK(is(&t, "a/size-Kq7wPz3x.js", KILN_WHY_NONE, "") && of(&t, "a/size-Kq7wPz3x.js").changed);
		CHECK(is(&t, "a/same-Dm2xQv8n.js", KILN_WHY_NAME, "Dm2xQv8n") &&
		      !of(&t, "a/same-Dm2xQv8n.js").changed);
		CHECK(is(&t, "a/hash-Qm7pL2vX.js", KILN_WHY_NONE, "") && of(&t, "a/hash-Qm7pL2vX.js").changed);
		/* carried: no news, but not immutable again */
		CHECK(is(&t, "a/mark-Xk9mQ2pL.js", KILN_WHY_NONE, "") && of(&t, "a/mark-Xk9mQ2pL.js").changed);
		/* its name no hash, but the user's glob stands */
		CHECK(is(&t, "g/glob-B2x9_kQ1.js", KILN_WHY_GLOB, "") && of(&t, "g/glob-B2x9_kQ1.js").changed);
		/* against the earlier release */
		CHECK(is(&t, "a/rel-Hb3wQx9m.js", KILN_WHY_NONE, "") && of(&t, "a/rel-Hb3wQx9m.js").changed);
		CHECK(is(&t, "a/kept-Tq5wRx2m.js", KILN_WHY_NAME, "Tq5wRx2m") &&
		      !of(&t, "a/kept-Tq5wRx2m.js").changed);
		/* told once each, when seen: size, hash, glob, release */
		CHECK_MSG(changes_told == 4, "%u told", changes_told);
	}
	free(text);
	kiln_tree_end(&t);
	kiln_run_free(run);
	free((char *)previous[0]);
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
	test_bytes_changed();
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_immutable");
}
