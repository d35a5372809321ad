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
			t->fp[i] = (struct kiln_fp){ KILN_WHY_NAME, (uint32_t)start, (uint32_t)len, 0 };
	CHECK(kiln_shape_prove((const char *const *)t->rels, t->n, t->fp));
}

/* Random hashes drawn in bundlers' directories, per alphabet and kind
 * (a bundler's code, or its other outputs): how many, how many written
 * as words or could be chosen (never taken, by design), and how many of
 * the others missed, among fewer than 16 of their kind in a directory
 * and among more. */
struct tally {
	size_t total[3][2], wordlike[3][2], small[3][2], missed[3][2], big[3][2];
	/* among 16 or more of their kind: all of them, and the words */
	size_t in_big[3][2], big_words[3][2];
};

static int alpha_index(const char *alphabet)
{
	return alphabet == hex ? 0 : alphabet == b32 ? 1 : 2;
}

/* A bundler's directory: N outputs DIR/NAME<SEP><hash>.EXT, the hash of
 * LEN characters of ALPHABET, beside files copied unhashed.  No unhashed
 * file may be taken, nor a hash written as words (in a file that is no
 * bundler's code, one someone could have chosen); the other hashes are
 * counted, found or missed. */
static void bundler_dir(const char *dir, char sep, const char *alphabet, size_t len, size_t n,
			struct tally *tl)
{
	static const char *const names[] = { "index", "vendor", "chunk", "about", "logo", "app" };
	static const char *const exts[] = { "js", "css", "svg", "woff2", "js.map" };
	static const char *const copied[] = { "logo-maskable.png", "hero-portrait.jpg", "robots.txt",
					      "team-TomHanks.jpg", "icon-FACEBOOK.svg",
					      "brand-ReactDOM.svg", "cam-ILCE7M4K.jpg" };
	struct tree t = { 0 };
	char tok[64], rel[256];
	size_t of_kind[2] = { 0, 0 };
	int a = alpha_index(alphabet);

	for (size_t i = 0; i < n; i++) {
		random_token(tok, alphabet, len);
		snprintf(rel, sizeof(rel), "%s/%s%c%s.%s", dir, names[i % 6], sep, tok, exts[i % 5]);
		add(&t, rel);
		of_kind[i % 5 != 2 && i % 5 != 3]++;
	}
	/* files a bundler copies unhashed beside its outputs (a public/ folder) */
	add(&t, "index.html");
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", dir, copied[i]);
		add(&t, rel);
	}
	decide(&t);
	for (size_t i = 0; i < n; i++) {
		const char *tk = t.rels[i] + strlen(dir) + 1 + strlen(names[i % 6]) + 1;
		bool code = i % 5 != 2 && i % 5 != 3, letter = false, digit = false, may;
		for (size_t c = 0; c < len; c++) {
			letter |= (tk[c] >= 'a' && tk[c] <= 'z') || (tk[c] >= 'A' && tk[c] <= 'Z');
			digit |= tk[c] >= '0' && tk[c] <= '9';
		}
		/* what the tree may take: as kiln_token_hashlike() says, a digit
		 * in hex, a letter otherwise, no placeholder in hex
		 * (kiln_token_other()) nor, but in code, digits alone, and no
		 * words (words.h) */
		may = kiln_token_hashlike(tk, len) && (alphabet == hex ? digit : letter) &&
		      !kiln_token_other(t.rels[i], (size_t)(tk - t.rels[i]), len) &&
		      !(alphabet == hex && !code && !letter) &&
		      !(alphabet == b64 && (code ? kiln_token_words(tk, len) : kiln_token_chosen(tk, len))) &&
		      !(alphabet == b32 && (code ? kiln_token_words32(tk, len) :
						   kiln_token_chosen32(tk, len) || kiln_token_model32(tk, len)));
		tl->total[a][code]++;
		tl->wordlike[a][code] += !may;
		if (!may)
			CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s: taken, but written as words", t.rels[i]);
		else if (t.fp[i].why == KILN_WHY_NONE)
			tl->missed[a][code]++, tl->small[a][code] += of_kind[code] < 16;
		tl->big[a][code] += may && of_kind[code] >= 16;
		tl->in_big[a][code] += of_kind[code] >= 16;
		tl->big_words[a][code] += !may && of_kind[code] >= 16;
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
	static const char *const alphabet_names[] = { "hex", "base32", "base64url" };
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
	for (int a = 0; a < 3; a++)
		for (int code = 1; code >= 0; code--) {
			size_t total = tl.total[a][code], big = tl.missed[a][code] - tl.small[a][code];
			fprintf(stderr, "test_shape: %s, %s: %zu random hashes: %.3f%% words (never "
				"taken), %.3f%% missed besides (%.3f%% in directories of 16 of their kind or "
				"more); in all, the tree misses %.3f%% (%.3f%% in directories of 16 or more)\n",
				alphabet_names[a], code ? "code" : "other", total,
				100.0 * (double)tl.wordlike[a][code] / (double)total,
				100.0 * (double)tl.missed[a][code] / (double)total,
				100.0 * (double)big / (double)(tl.big[a][code] + 1),
				100.0 * (double)(tl.wordlike[a][code] + tl.missed[a][code]) / (double)total,
				100.0 * (double)(tl.big_words[a][code] + big) / (double)(tl.in_big[a][code] + 1));
			/* the words are rare draws (a hand-chosen name in upper
			 * case less so: esbuild's); the misses of a directory of 16
			 * or more of a kind rarer still: a shape of esbuild's
			 * images, of which the name alone takes a third, goes
			 * unproven one time in a hundred */
			CHECK(tl.wordlike[a][code] * (code ? 100 : 5) < total);
			CHECK(big * (code ? 200 : 50) < tl.big[a][code] + 1);
		}
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
	/* two of seven scripts: not a third */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/z-Qm7pL2vX.css");
	add(&t, "a/y-DPJWWXvr.js");
	add(&t, "a/w-KXMWoqpr.js");
	add(&t, "a/v-QTRZuxvw.js");
	add(&t, "a/u-PLMQoxwt.js");
	add(&t, "a/t-ZRXWovkq.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE);
	tree_free(&t);
	/* two of six: a third */
	add(&t, "a/x-B2x9_kQ1.js");
	add(&t, "a/z-Qm7pL2vX.css");
	add(&t, "a/y-DPJWWXvr.js");
	add(&t, "a/w-KXMWoqpr.js");
	add(&t, "a/v-QTRZuxvw.js");
	add(&t, "a/u-PLMQoxwt.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[5].why == KILN_WHY_TREE);
	tree_free(&t);
	/* images: the name alone takes only tokens of more pieces (two
	 * numbers, two runs of each case), an eighth of the shape proves it,
	 * and only images prove images; a page is in no shape */
	add(&t, "img/a-B2x9_kQ1.jpg");   /* a sample */
	add(&t, "img/b-Qm7pL2vX.jpg");   /* a sample */
	add(&t, "img/c-XKm9QZPL.jpg");   /* a digit, but one run of lowercase */
	add(&t, "img/d-DPJWWXvr.jpg");   /* no digit */
	add(&t, "img/e-KZ3T4RBF.jpg");   /* base32 with two numbers: a sample */
	add(&t, "img/f-B2x9_kQ1.html"); /* a page */
	add(&t, "img/g-Pq8wR3tZ.js");    /* code: not of the images' shape */
	decide(&t);
	CHECK(t.fp[0].why == KILN_WHY_NAME && t.fp[1].why == KILN_WHY_NAME &&
	      t.fp[4].why == KILN_WHY_NAME);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[3].why == KILN_WHY_TREE);
	CHECK(t.fp[5].why == KILN_WHY_NONE && t.fp[6].why == KILN_WHY_NAME);
	tree_free(&t);
	/* one image sample beside sixteen hashed images: not several; two
	 * beside seventeen: not an eighth */
	for (int round = 0; round < 2; round++) {
		char rel[64];
		for (int i = 0; i < 17; i++) {
			static const char *const draws[] = { "DPJWWXvr", "KQXWPZvr", "Dhmtqwxz", "Bjxkwqpz",
							     "CvnzrtkW", "QzxkwtpV", "Hjkdwrmq", "Lzxqwrtv",
							     "Mwqzxkrp", "Nxkqwzrt", "Pqwzxkrv", "Rzxkwqpt",
							     "Szqwxkrv", "Tqwzkxrp", "Vxkzqwrt", "Wzkxqrpv",
							     "Xqzkwrtv" };
			snprintf(rel, sizeof(rel), "img/p%d-%s.jpg", i, draws[i]);
			add(&t, rel);
		}
		add(&t, "img/a-B2x9_kQ1.jpg");
		if (round)
			add(&t, "img/b-Qm7pL2vX.jpg");
		decide(&t);
		for (int i = 0; i < 17; i++)
			CHECK_MSG(t.fp[i].why == KILN_WHY_NONE, "%s: not proven", t.rels[i]);
		tree_free(&t);
	}
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
	/* a hex shape takes an all-digit token, not a date or digits typed
	 * in sequence; base64url takes none.  In code, one led by a 0 (as
	 * webpack's "346.02449111.chunk.js"); beside images none (an id or a
	 * counter: "id.10012345.png", "id.00012345.png") */
	add(&t, "js/a.3f9a2c7b.js");
	add(&t, "js/b.1d4e5f6a.js");
	add(&t, "js/c.52847136.js");
	add(&t, "js/d.20241201.js");
	add(&t, "v/a-B2x9_kQ1.js");
	add(&t, "v/b-Qm7pL2vX.js");
	add(&t, "v/c-52847136.js");
	add(&t, "js/e.02449111.js");
	add(&t, "js/f.12345678.js");
	add(&t, "js/g.a1b2c3d4.js");
	add(&t, "media/a.3f9a2c7b.png");
	add(&t, "media/b.1d4e5f6a.png");
	add(&t, "media/c.9e8d7c6b.png");
	add(&t, "media/d.00012345.png");
	add(&t, "media/e.52847136.png");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_TREE && t.fp[3].why == KILN_WHY_NONE &&
	      t.fp[6].why == KILN_WHY_NONE);
	CHECK(t.fp[7].why == KILN_WHY_TREE && t.fp[8].why == KILN_WHY_NONE &&
	      t.fp[9].why == KILN_WHY_NONE);
	CHECK(t.fp[13].why == KILN_WHY_NONE && t.fp[14].why == KILN_WHY_NONE);
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
	add(&t, "static/media/logo.a7b2c9d4.svg");
	add(&t, "static/js/main.52847136.js");
	add(&t, "static/js/main.52847136.js.map");
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
	add(&t, "static/media/logo.a7b2c9d4.svg");
	add(&t, "x/a.52847136.js");
	add(&t, "x/b.63958247.js");
	add(&t, "x/c.74169358.js");
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
	/* esbuild's single entry: its script's sample proves its style sheet
	 * beside it, of the same logical name, with nothing else in the tree;
	 * not a third name of it, nor another name */
	add(&t, "main-K2ZT4RBQ.js");
	add(&t, "main-VIRMOKMZ.css");
	add(&t, "other-QWXJKPLZ.css");
	decide(&t);
	CHECK(t.fp[0].why == KILN_WHY_NAME && t.fp[1].why == KILN_WHY_TREE && t.fp[2].why == KILN_WHY_NONE);
	tree_free(&t);
	add(&t, "main-K2ZT4RBQ.js");
	add(&t, "main-VIRMOKMZ.css");
	add(&t, "main-QWXJKPLZ.css");
	add(&t, "main-ZXKPWQJT.css");
	decide(&t);
	CHECK(t.fp[1].why == KILN_WHY_NONE && t.fp[2].why == KILN_WHY_NONE && t.fp[3].why == KILN_WHY_NONE);
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
	tree_free(&t);
}

/* The names of tests/data/hand-named-tokens.txt, each beside four outputs
 * of a bundler in a directory of its own: under "## any" (words) never
 * taken, in a script beside scripts or an image beside images; under
 * "## other" never taken by the name alone as an image, and beside images
 * rarely by the tree (identifiers of code: "gzipSync", "Elf_Phdr", which
 * no image is named; counted). */
static void test_hand_named(const char *path)
{
	static const char *const images[] = { "bg-C5QSmaCO.jpg", "photo1-kGoY29M9.jpg",
					      "photo2-jIRvRqRH.jpg", "photo3-CqX91gpy.jpg" };
	static const char *const scripts[] = { "index-B2x9_kQ1.js", "vendor-Qm7pL2vX.js",
					       "about-Xk9mQ2pL.js", "chunk-Dq4x8Z8k.js" };
	FILE *f = fopen(path, "r");
	struct tree t = { 0 };
	char line[256], rel[512];
	size_t tokens = 0, any = 0, d = 0, other = 0, taken = 0;
	bool in_any = false;

	CHECK_MSG(f != NULL, "%s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "## any") == 0 || strcmp(line, "## other") == 0)
			in_any = line[3] == 'a';
		if (!*line || *line == '#')
			continue;
		tokens++;
		any += in_any;
		for (int kind = 0; kind < 1 + in_any; kind++, d++) {
			for (size_t i = 0; i < 4; i++) {
				snprintf(rel, sizeof(rel), "d%zu/%s", d, kind ? scripts[i] : images[i]);
				add(&t, rel);
			}
			snprintf(rel, sizeof(rel), "d%zu/%s-%s.%s", d, in_any ? "w" : "x", line,
				 kind ? "js" : "jpg");
			add(&t, rel);
			CHECK_MSG(!kiln_fingerprinted(rel), "%s: taken by its name", rel);
		}
	}
	fclose(f);
	decide(&t);
	for (size_t i = 0; i < t.n; i++) {
		bool hand = strstr(t.rels[i], "/w-") || strstr(t.rels[i], "/x-");
		if (strstr(t.rels[i], "/x-")) {
			other++;
			taken += t.fp[i].why != KILN_WHY_NONE;
		} else {
			CHECK_MSG((t.fp[i].why == KILN_WHY_NONE) == hand, "%s: %s", t.rels[i],
				  t.fp[i].why ? kiln_why_name(t.fp[i].why) : "not taken");
		}
	}
	fprintf(stderr, "test_shape: %zu hand-named tokens beside bundlers' outputs: %zu words, "
		"none taken; %zu others, none taken by the name, %zu (%.2f%%) by the tree beside "
		"images\n", tokens, any, other, taken, 100.0 * (double)taken / (double)(other + 1));
	CHECK(tokens >= 7000 && taken * 50 < other);
	tree_free(&t);
}

/* The work per name is bounded: of a name of many '-' only the tokens
 * nearest its end are members, and one of 65 characters or more none. */
static void test_caps(void)
{
	struct tree t = { 0 };
	char rel[600];
	size_t n = 0;

	for (int i = 0; i < 250; i++)
		n += (size_t)snprintf(rel + n, sizeof(rel) - n, "a-");
	snprintf(rel + n, sizeof(rel) - n, "B2x9_kQ1.js");
	add(&t, "a/x-Qm7pL2vX.js");
	add(&t, "a/y-Xk9mQ2pL.js");
	add(&t, rel); /* "a-a-...-a-B2x9_kQ1.js": its token is a sample */
	add(&t, "a/z-DPJWWXvr.js");
	decide(&t);
	CHECK(t.fp[2].why == KILN_WHY_NAME && t.fp[3].why == KILN_WHY_TREE);
	tree_free(&t);
	/* 64 hex digits (SHA-256) are a token, 65 are none */
	add(&t, "h/a.0a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd.js");
	add(&t, "h/b.1a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd.js");
	add(&t, "h/c.2a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd.js");
	add(&t, "h/d.3a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd5.js");
	decide(&t);
	CHECK(t.fp[0].why == KILN_WHY_NAME && t.fp[3].why == KILN_WHY_NAME);
	tree_free(&t);
}

/* ARGV[1], when given: another corpus (to measure one). */
int main(int argc, char **argv)
{
	test_shapes();
	test_thresholds();
	test_hand_named(KILN_TEST_DATA "/hand-named-tokens.txt");
	test_caps();
	if (argc > 1) {
		test_corpus(argv[1]);
	} else {
		int before = check_count;
		test_corpus(KILN_TEST_DATA "/unhashed-names.txt");
		CHECK(check_count - before >= 50000); /* the corpus is there, whole */
	}
	return check_exit("test_shape");
}
