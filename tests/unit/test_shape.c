/*
 * test_shape.c - the tree's evidence that a name holds a hash (shape.c):
 * a directory's names of one shape prove the others when enough of them
 * pass the rule on the name alone, threshold by threshold; random hashes
 * in bundlers' directories of every size are found (their spans the hash)
 * and the files copied unhashed beside them are not; and not one name of
 * tests/data/unhashed-names.txt (tens of thousands of paths of trees no
 * bundler wrote) is taken for a hash, by name or by shape.  Expected
 * values come from how bundlers name their output, never from the code
 * under test.
 */
#include "fingerprint.h"
#include "shape.h"

#include "check.h"
#include "tokens.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tree {
	char **rels;
	size_t n;
	struct kiln_fp *fp;
};

static void add(struct tree *t, const char *rel)
{
	t->rels = realloc(t->rels, (t->n + 1) * sizeof(*t->rels));
	t->fp = realloc(t->fp, (t->n + 1) * sizeof(*t->fp));
	t->rels[t->n] = strdup(rel);
	t->fp[t->n] = (struct kiln_fp){ 0 };
	t->n++;
}

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rels[i]);
	free(t->rels);
	free(t->fp);
	memset(t, 0, sizeof(*t));
}

/* The rule on the name alone, then the shapes: as immutable.c orders
 * them (without the other evidence). */
static void decide(struct tree *t)
{
	size_t start, len;

	for (size_t i = 0; i < t->n; i++)
		if (kiln_fingerprint_span(t->rels[i], &start, &len))
			t->fp[i] = (struct kiln_fp){ KILN_WHY_NAME, (uint32_t)start, (uint32_t)len };
	CHECK(kiln_shape_prove((const char *const *)t->rels, t->n, t->fp));
}

struct tally {
	size_t total;    /* hashes drawn */
	size_t wordlike; /* of which not hash-like: kept out on purpose */
	size_t small;    /* hash-like hashes missed among under 16 of their kind */
};

/* A bundler's directory: N outputs DIR/NAME<SEP><hash>.EXT, the hash of
 * LEN characters of ALPHABET, beside files copied unhashed.  No unhashed
 * file may be taken, and from 16 outputs of a kind on every hash-like hash
 * of that kind must be found (below, a directory whose few names mostly
 * fail the rule alone stays unproven: counted). */
static void bundler_dir(const char *dir, char sep, const char *alphabet, size_t len, size_t n,
			struct tally *tl)
{
	static const char *const names[] = { "index", "vendor", "chunk", "about", "logo", "app" };
	static const char *const exts[] = { "js", "css", "svg", "woff2", "js.map" };
	struct tree t = { 0 };
	char tok[64], rel[256];

	for (size_t i = 0; i < n; i++) {
		random_token(tok, alphabet, len);
		snprintf(rel, sizeof(rel), "%s/%s%c%s.%s", dir, names[i % 6], sep, tok, exts[i % 5]);
		add(&t, rel);
	}
	/* files a bundler copies unhashed beside its outputs (a public/ folder) */
	add(&t, "index.html");
	snprintf(rel, sizeof(rel), "%s/logo-maskable.png", dir);
	add(&t, rel);
	snprintf(rel, sizeof(rel), "%s/hero-portrait.jpg", dir);
	add(&t, rel);
	snprintf(rel, sizeof(rel), "%s/robots.txt", dir);
	add(&t, rel);
	decide(&t);
	/* a bundler's code (.js, .css, .js.map) and its other outputs (.svg,
	 * .woff2) are evidence only of their own kind (files copied from a
	 * public/ folder sit beside its chunks): each kind is a directory of
	 * its own size */
	size_t of_kind[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++)
		of_kind[i % 5 == 2 || i % 5 == 3]++;
	for (size_t i = 0; i < n; i++) {
		const char *tk = t.rels[i] + strlen(dir) + 1 + strlen(names[i % 6]) + 1;
		size_t kind_n = of_kind[i % 5 == 2 || i % 5 == 3];
		bool letter = false, hashlike;
		for (size_t c = 0; c < len; c++)
			letter |= (tk[c] >= 'a' && tk[c] <= 'z') || (tk[c] >= 'A' && tk[c] <= 'Z');
		/* words are never taken: as kiln_token_hashlike() says, in
		 * base64url as kiln_token_words() says, in base32 as
		 * kiln_token_words32() */
		hashlike = kiln_token_hashlike(tk, len) && (alphabet == hex || letter) &&
			   !(alphabet == b64 && kiln_token_words(tk, len)) &&
			   !(alphabet == b32 && kiln_token_words32(tk, len));
		tl->total++;
		tl->wordlike += !hashlike;
		if (kind_n < 16 && hashlike && t.fp[i].why == KILN_WHY_NONE)
			tl->small++;
		else
			CHECK_MSG((t.fp[i].why != KILN_WHY_NONE) == hashlike,
				  "%s: found %d, hash-like %d", t.rels[i], t.fp[i].why, hashlike);
		CHECK_MSG(t.fp[i].why == KILN_WHY_NONE ||
				  (t.fp[i].len == len && memcmp(t.rels[i] + t.fp[i].start, tk, len) == 0),
			  "%s: the span is the hash", t.rels[i]);
	}
	for (size_t i = n; i < t.n; i++)
		CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s is not immutable", t.rels[i]);
	tree_free(&t);
}

static void test_shapes(void)
{
	struct tally tl = { 0 };

	/* many directories of many sizes, 2 (a small Vite app's index.js and
	 * index.css) to 64, each size many times */
	for (int round = 0; round < 20; round++)
		for (size_t n = 2; n <= 64; n++) {
			bundler_dir("assets", '-', b64, 8, n, &tl);    /* Vite, Rollup */
			bundler_dir("out", '-', b32, 8, n, &tl);       /* esbuild */
			bundler_dir("static/js", '.', hex, 8, n, &tl); /* [contenthash:8] */
			bundler_dir("js", '.', hex, 20, n, &tl);       /* [contenthash] */
		}
	fprintf(stderr, "test_shape: %zu random hashes: %zu not hash-like (%.3f%%), %zu missed "
		"among under 16 of their kind (%.3f%%)\n", tl.total, tl.wordlike,
		100.0 * (double)tl.wordlike / (double)tl.total, tl.small,
		100.0 * (double)tl.small / (double)tl.total);
	/* both are rare draws: under 1% of these hashes each */
	CHECK(tl.wordlike * 100 < tl.total && tl.small * 100 < tl.total);
}

/* The thresholds, one by one. */
static void test_thresholds(void)
{
	struct tree t = { 0 };

	/* one name passes the rule alone: not several */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/y-DPJWWXvr.js");
	decide(&t);
	CHECK(t.fp[0].why == KILN_WHY_NAME && t.fp[1].why == KILN_WHY_NONE);
	tree_free(&t);
	/* two of three pass: proven */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/z-Qm7pL2vX.css");
	add(&t, "a/y-DPJWWXvr.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[2].start == 4 && t.fp[2].len == 8);
	tree_free(&t);
	/* two of five: not half */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/z-Qm7pL2vX.css");
	add(&t, "a/y-DPJWWXvr.js");
	add(&t, "a/w-KXMWoqpr.js");
	add(&t, "a/v-QTRZuxvw.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE);
	tree_free(&t);
	/* another directory, separator or length is another shape */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/z-Qm7pL2vX.css");
	add(&t, "b/y-DPJWWXvr.js");
	add(&t, "a/y.DPJWWXvr.js");
	add(&t, "a/y-DPJWWXvrs.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE &&
	      t.fp[4].why == KILN_WHY_NONE);
	tree_free(&t);
	/* a hex shape takes an all-digit token, not a date; base64url takes
	 * neither */
	add(&t, "js/a.3f9a2c7b.js");
	add(&t, "js/b.1d4e5f6a.js");
	add(&t, "js/c.12345678.js");
	add(&t, "js/d.20241201.js");
	add(&t, "v/a-B2x9_kQ1.js");
	add(&t, "v/b-Qm7pL2vX.js");
	add(&t, "v/c-12345678.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[3].why == KILN_WHY_NONE &&
	      t.fp[6].why == KILN_WHY_NONE);
	tree_free(&t);
	/* one sample in a directory, the shape proven over the whole tree: an
	 * entry beside its style sheet (esbuild's top directory) */
	add(&t, "out/chunks/a-KZ3T4RBF.js");
	add(&t, "out/chunks/b-7QPLMZ2A.js");
	add(&t, "out/app-K2ZT4RBQ.js");
	add(&t, "out/app-VIRMOKMZ.css");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NAME && t.fp[3].why == KILN_WHY_TREE);
	tree_free(&t);
	/* ... but not a directory of several names beside its one sample, nor
	 * a lone name that does not look like a hash of the alphabet */
	add(&t, "assets/index-B2x9_kQ1.js");
	add(&t, "assets/vendor-Qm7pL2vX.js");
	add(&t, "img/photo-Xk9mQ2pL.jpg");
	add(&t, "img/photo-DSC_0042.jpg");
	add(&t, "img/photo-DSC_0043.jpg");
	add(&t, "img/photo-IMG_1234.jpg");
	add(&t, "pics/photo-Xk9mQ2pL.jpg");
	add(&t, "pics/photo-DSC_0042.jpg");
	add(&t, "b32/x-KZ3T4RBF.js");
	add(&t, "b32/x-OVERVIEW.js");
	add(&t, "top/x-B2x9_kQ1.js");
	add(&t, "top/x-DPJWWXvr.js");
	add(&t, "b32x/y-7QPLMZ2A.js"); /* base32 proven over the tree */
	add(&t, "b32x/z-K2ZT4RBQ.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NAME);
	CHECK(t.fp[3].why == KILN_WHY_NONE && t.fp[4].why == KILN_WHY_NONE &&
	      t.fp[5].why == KILN_WHY_NONE && t.fp[7].why == KILN_WHY_NONE &&
	      t.fp[9].why == KILN_WHY_NONE);
	CHECK(t.fp[11].why == KILN_WHY_TREE); /* both cases: it may be */
	tree_free(&t);
	/* Vite's outputs beside files copied from public/ into the same
	 * directory: words, CamelCase, an upper-case brand, camera names are
	 * not taken, the hash without a digit is */
	add(&t, "assets/index-B2x9_kQ1.js");
	add(&t, "assets/vendor-Qm7pL2vX.js");
	add(&t, "assets/index-Xk9mQ2pL.css");
	add(&t, "assets/about-DPJWWXvr.js");
	add(&t, "assets/Inter-SemiBold.woff2");
	add(&t, "assets/icon-FACEBOOK.svg");
	add(&t, "assets/photo-DSC01234.jpg");
	add(&t, "assets/photo-DSC_0042.jpg");
	add(&t, "assets/badge-appstore.svg");
	decide(&t);
	CHECK(t.fp[3].why == KILN_WHY_TREE);
	for (size_t i = 4; i < t.n; i++)
		CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s is not immutable", t.rels[i]);
	tree_free(&t);
	/* a directory whose one or two outputs are no sample, the tree's shape
	 * proven elsewhere: webpack's all-digit [contenthash:8] in its code
	 * (not a number in a document, not a date), esbuild's entry and style
	 * sheet without a digit (not a spelt word); never base64url */
	add(&t, "static/css/main.3f9a2c7b.css");
	add(&t, "static/media/logo.a1b2c3d4.svg");
	add(&t, "static/js/main.12345678.js");
	add(&t, "static/js/main.12345678.js.map");
	add(&t, "static/docs/invoice.10023456.pdf");
	add(&t, "static/news/post.20240113.js");
	add(&t, "out/chunks/a-KZ3T4RBF.js");
	add(&t, "out/chunks/b-7QPLMZ2A.js");
	add(&t, "out/main-VIRMOKMZ.js");
	add(&t, "out/main-QWXJKPLZ.css");
	add(&t, "out/img/icon-OVERVIEW.svg");
	add(&t, "assets/index-B2x9_kQ1.js");
	add(&t, "assets/index-Xk9mQ2pL.css");
	add(&t, "entry-DPJWWXvr.js");
	add(&t, "static/media/a.5e6f7a8b.svg"); /* more of the tree's shapes */
	add(&t, "static/media/b.9c0d1e2f.svg");
	add(&t, "out/chunks/c-M3NQ4RST.js");
	add(&t, "out/chunks/d-W5XY6ZAB.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[3].why == KILN_WHY_TREE);
	CHECK(t.fp[4].why == KILN_WHY_NONE && t.fp[5].why == KILN_WHY_NONE);
	CHECK(t.fp[8].why == KILN_WHY_TREE && t.fp[9].why == KILN_WHY_TREE);
	CHECK(t.fp[10].why == KILN_WHY_NONE && t.fp[13].why == KILN_WHY_NONE);
	tree_free(&t);
	/* a build of two outputs: the script's hash proves its style sheet's
	 * of the same logical name, all digits; not another name's, not a
	 * document's */
	add(&t, "static/js/main.3f9a2c7b.js");
	add(&t, "static/css/main.86028049.css");
	add(&t, "static/css/other.86028049.css");
	add(&t, "static/docs/main.86028049.pdf");
	add(&t, "out/main-K2ZT4RBQ.js");
	add(&t, "out/css/main-VIRMOKMZ.css");
	add(&t, "out/css/main-OVERVIEW.css");
	decide(&t);
	CHECK(t.fp[1].why == KILN_WHY_TREE && t.fp[1].start == 16 && t.fp[1].len == 8);
	CHECK(t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE);
	CHECK(t.fp[5].why == KILN_WHY_TREE && t.fp[6].why == KILN_WHY_NONE);
	tree_free(&t);
	/* ... and not a directory of three such names */
	add(&t, "static/css/main.3f9a2c7b.css");
	add(&t, "static/media/logo.a1b2c3d4.svg");
	add(&t, "x/a.12345678.js");
	add(&t, "x/b.23456789.js");
	add(&t, "x/c.34567890.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE &&
	      t.fp[4].why == KILN_WHY_NONE);
	tree_free(&t);
	/* API reference pages of one directory: the acronym names are words,
	 * so the camelCase ones beside them are not proven; upper-case
	 * words beside esbuild's outputs are not its hashes */
	add(&t, "ref/ref-loadJSON.html");
	add(&t, "ref/ref-parseURL.html");
	add(&t, "ref/ref-setState.html");
	add(&t, "ref/ref-useState.html");
	add(&t, "out/app-KZ3T4RBF.js");
	add(&t, "out/chunk-7QPLMZ2A.js");
	add(&t, "out/vendor-K2ZT4RBQ.js");
	add(&t, "out/badge-APPSTORE.svg");
	add(&t, "out/icon-TWITTER1.svg");
	add(&t, "out/icon-LINKEDIN.svg");
	add(&t, "out/main-QWXJKPLZ.css");
	add(&t, "out/cert-X509V3AB.pem"); /* no base32: not esbuild's */
	add(&t, "out/x-Dhmtqwxz.js");     /* a lowercase letter: may be Vite's */
	decide(&t);
	for (size_t i = 0; i < 4; i++)
		CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s is not immutable", t.rels[i]);
	CHECK(t.fp[7].why == KILN_WHY_NONE && t.fp[8].why == KILN_WHY_NONE &&
	      t.fp[9].why == KILN_WHY_NONE && t.fp[11].why == KILN_WHY_NONE);
	CHECK(t.fp[10].why == KILN_WHY_TREE); /* a hash without a digit still is */
	CHECK(t.fp[12].why == KILN_WHY_TREE);
	tree_free(&t);
	/* esbuild's all-letter hashes */
	add(&t, "out/a-KZ3T4RBF.js");
	add(&t, "out/b-7QPLMZ2A.js");
	add(&t, "out/c-VIRMOKMZ.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE);
	tree_free(&t);
}

/* Not one name of the corpus of unhashed trees is taken for a hash, by
 * the name alone or by its directory's shapes. */
static void test_corpus(const char *path)
{
	FILE *f = fopen(path, "r");
	struct tree t = { 0 };
	char line[4096];
	size_t named = 0, shaped = 0;

	CHECK_MSG(f != NULL, "%s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line && *line != '#')
			add(&t, line);
	}
	fclose(f);
	decide(&t);
	for (size_t i = 0; i < t.n; i++) {
		named += t.fp[i].why == KILN_WHY_NAME;
		shaped += t.fp[i].why == KILN_WHY_TREE;
		CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s taken for a hash (%s)", t.rels[i],
			  kiln_why_name(t.fp[i].why));
	}
	fprintf(stderr, "test_shape: corpus of %zu unhashed names: %zu by name, %zu by shape\n",
		t.n, named, shaped);
	CHECK(t.n >= 10000);
	tree_free(&t);
}

/* ARGV[1], when given: another corpus (to measure one). */
int main(int argc, char **argv)
{
	test_shapes();
	test_thresholds();
	test_corpus(argc > 1 ? argv[1] : KILN_TEST_DATA "/unhashed-names.txt");
	return check_exit("test_shape");
}
