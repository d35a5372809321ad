/*
 * test_fingerprint.c - the evidence that a name holds a content hash: the
 * rule on the name alone (fingerprint.c) and the bundlers' manifests
 * (bundler.c); the tree's shapes (shape.c) are test_shape.c's.  Expected
 * values come from how bundlers name their output (their documented
 * default patterns) and from names no bundler wrote.  The random hashes
 * are drawn from tokens.h's seeded generator, each alphabet as its bundler
 * writes it.
 */
#include "bundler.h"
#include "fingerprint.h"

#include "check.h"
#include "tokens.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const yes[] = {
	/* webpack [name].[contenthash].js (20 hex), CRA [name].[contenthash:8].chunk.js */
	"app.3f9a2c7b.js", "main.3f9a2c7b1d4e.chunk.js", "static/js/main.3f9a2c7b.chunk.js",
	"runtime.0e1d2c3b4a5f6e7d8c9b.js",
	/* Next.js chunks: NAME-HEX16 */
	"_next/static/chunks/framework-2c79e2a64abdb08b.js",
	/* Vite / Rollup: NAME-HASH8, base64url */
	"assets/index-B2x9_kQ1.js", "assets/index-Dq4x-Z8k.css", "assets/vendor-a1b2c3d4.js",
	"assets/logo-bXcDqFwH.svg",
	/* esbuild: NAME-HASH8 upper base32, or with a dot */
	"styles.KZ3T4RBF.css", "chunk-KZ3T4RBF.js",
	/* a source map of a fingerprinted asset */
	"app.3f9a2c7b.js.map",
	/* webpack's default asset and chunk names: [hash][ext], [id].[contenthash].js */
	"static/3f9a2c7b1d4e5f6a7b8c.svg", "0e1d2c3b4a5f6e7d8c9b.js", "723.0e1d2c3b4a5f6e7d8c9b.js",
	/* Hugo: NAME.min.SHA256.css */
	"css/style.min.5b2d7c2f0e1a4b3c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c.css",
};

static const char *const no[] = {
	"jquery-3.7.1.min.js", "favicon-32x32.png", "settings.js", "index.html",
	"Inter-Variable.woff2", "vue.esm-browser.prod.js", "react-dom.production.min.js",
	"fa-solid-900.woff2", "roboto-v30-latin-700italic.woff2", "SourceCodePro-Semibold.woff",
	"moment-with-locales.js", "polyfill.es2015.js", "lodash.fp.min.js",
	/* 8 digits, no letter: a date, not a hash */
	"report.20241201.js",
	/* 8 hex letters, no digit: a word */
	"deadbeef.deadbeef.js", "x.facadeed.js",
	/* 8 base64url characters with neither a digit nor a case change */
	"my-settings.js", "app-Settings.js", "a.Variable.css",
	/* words with a number, and CamelCase words (PostgreSQL's documentation,
	 * font files): a name alone cannot tell them from a hash */
	"plpython-python23.html", "doc-chapter1.html", "Poppins-SemiBold.ttf",
	"theme-DarkMode.css", "hero-mobile-2.jpg", "charset-iso88591.txt", "btn-v2-large.css",
	/* CamelCase with a number inside or an acronym's capital (rustdoc's
	 * struct pages), and an upper-case word with a number */
	"logo-Web3Auth.svg", "page-Top10Tip.html", "struct.Ipv4Addr.html", "struct.BTreeMap.html",
	"struct.AtomicU8.html", "manual-ENGLISH2.html", "app-Win10Pro.png",
	/* words with a number, by kind: a version before a word, a model with
	 * a letter code, a date with a letter, a part of a count, a device
	 * code with a counter, an upper-case campaign */
	"app.v2Config.js", "spec-Model3LR.png", "report-Jan2024a.pdf", "video-Part1of3.mp4",
	"Audient-iD4-0003.conf", "banner-SUMMER24.png", "x.asn1Coding.html",
	/* codes and counters with a letter ("DSC01234" has no lowercase: no
	 * rule alone takes it, nor must the tree) */
	"photo-DSC01234.jpg", "photo-DSC_0042.jpg", "img-IMG_1234.jpg",
	/* a token must be followed by '.' and preceded by a separator that is
	 * not the name's first byte */
	".3f9a2c7b.js", "app.3f9a2c7b", "app_3f9a2c7b.js", "app-B2x9_kQ1js",
	/* the directory does not count, the name does */
	"3f9a2c7b.d/app.js", "a-B2x9_kQ1.dir/settings.js",
	/* a hash alone as the name: 16 hex digits or more */
	"3f9a2c7b1d4e5f6.svg", "1234567890123456.js", "abcdefabcdefabcd.js",
	/* 7 characters */
	"index-B2x9_kQ.js", "app.3f9a2c7.js",
	/* Doxygen names directory pages by the MD5 of their path, not of
	 * their content: '_' is no separator */
	"dir_68267d1309a1af8e8297ef4c3efbcdba.html",
	/* a lowercase word and an acronym, or a plural, a number, a word
	 * after it: API reference pages */
	"ref-loadJSON.html", "ref-parseURL.html", "api.fetchAPI.html", "x-writeCSV.js",
	"ref-showPDFs.html", "Date-toUTCStr.md", "ref-saveToDB.html", "ref-getUsrID.html",
	"ref-callRPC2.html", "ref-playMP3s.html",
	/* a word and one capital, a word and an abbreviation */
	"icon-arrowUpR.svg", "tex-woodGrnA.jpg", "lp-easterEg.css", "ad-summerSl.png",
	"icon-chevronL.svg", "bg-heroImgL.jpg", "font-robotoMd.woff2", "ref-jsonToJS.html",
	/* letters typed in sequence */
	"icon-ABCdefGH.svg", "img-QWERTYui.png", "test-AbCdEfGh.png", "img-XYZabcDE.png",
};

static void test_rule(void)
{
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK_MSG(kiln_fingerprinted(yes[i]), "%s is fingerprinted", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK_MSG(!kiln_fingerprinted(no[i]), "%s is not fingerprinted", no[i]);
}

static void test_hashlike(void)
{
	static const char *const words[] = {
		"maskable", "Variable", "python23", "sub-menu", "mobile-2", "Chapter1", "v2-large",
		"20241201", "19991231", "portrait", "dark_mode",
	};
	static const char *const hashes[] = {
		"B2x9_kQ1", "DPJWWXvr", "KZ3T4RBF", "OVERVIEW", "3f9a2c7b", "deadbeef", "12345678",
		"20241399", "aB-cD_eF", "Qzxkw7tp",
	};

	static const char *const spelt_words[] = {
		"SemiBold", "DarkMode", "iPhone12", "FACEBOOK", "OVERVIEW", "DSC01234",
		"DSC_0042", "EPSG4326", "SALE2024", "iD4-0003", "x-000123", "appstore",
	};
	static const char *const not_spelt[] = {
		"B2x9_kQ1", "DPJWWXvr", "KZ3T4RBF", "Xk9mQ2pL", "ABCDE123", "B1060985", "DJUAHNH9", "Semi-Bold",
		"iD4-003", "SemiBo12",
	};
	/* identifiers of words and acronyms, campaigns, letters in sequence:
	 * words for the tree too, not only for the name alone */
	static const char *const cased[] = {
		"loadJSON", "initHTTP", "setupVPN", "drawSVGs", "toUTCStr", "getUsrID",
		"toString", "getMonth", "onChange", "onSubmit", "parseInt", "isFinite", "scrollTo",
		"readFile", "addClass", "useRedux", "setState", "useState", "arrowUpR", "woodGrnA",
		"easterEg", "summerSl", "chevronR", "heroImgS", "robotoMd", "jsonToJS", "QWERTYui", "AbCdEfGh", "XYZabcDE", "APPSTORE", "TWITTER1",
	};
	static const char *const words32[] = { "LINKEDIN", "APPSTORE", "ABCDEFGH", "HGFEDCBA" };
	static const char *const not_words32[] = { "KZ3T4RBF", "VIRMOKMZ", "QWXJKPLZ", "7QPLMZ2A" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CHECK_MSG(!kiln_token_hashlike(words[i], strlen(words[i])), "%s is a word", words[i]);
	for (size_t i = 0; i < sizeof(spelt_words) / sizeof(spelt_words[0]); i++)
		CHECK_MSG(kiln_token_words(spelt_words[i], strlen(spelt_words[i])), "%s is spelt",
			  spelt_words[i]);
	for (size_t i = 0; i < sizeof(not_spelt) / sizeof(not_spelt[0]); i++)
		CHECK_MSG(!kiln_token_words(not_spelt[i], strlen(not_spelt[i])), "%s is not spelt",
			  not_spelt[i]);
	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		CHECK_MSG(kiln_token_hashlike(hashes[i], strlen(hashes[i])), "%s may be a hash",
			  hashes[i]);
	for (size_t i = 0; i < sizeof(cased) / sizeof(cased[0]); i++)
		CHECK_MSG(kiln_token_words(cased[i], strlen(cased[i])), "%s is words", cased[i]);
	for (size_t i = 0; i < sizeof(words32) / sizeof(words32[0]); i++)
		CHECK_MSG(kiln_token_words32(words32[i], 8), "%s is words", words32[i]);
	for (size_t i = 0; i < sizeof(not_words32) / sizeof(not_words32[0]); i++)
		CHECK_MSG(!kiln_token_words32(not_words32[i], 8), "%s is no word", not_words32[i]);
	CHECK(kiln_token_alphabets("KZ3T4RBF", 8) == (KILN_ALPHA_B32 | KILN_ALPHA_B64));
	CHECK(kiln_token_alphabets("3f9a2c7b", 8) == (KILN_ALPHA_HEX | KILN_ALPHA_B64));
	CHECK(kiln_token_alphabets("B2x9_kQ1", 8) == KILN_ALPHA_B64);
	CHECK(kiln_token_alphabets("B2x9.kQ1", 8) == 0);
}

/* The previous rule's test of a token's change: a new hash, not a counter,
 * a date or a campaign. */
static void test_changed(void)
{
	static const char *const hashes[][2] = {
		{ "KQXWPZvr", "DPJWWXvr" }, { "3f9a2c7b", "8e1d0a4f" }, { "12345678", "90817263" },
		{ "KZ3T4RBF", "VIRMOKMZ" }, { "3f9a2c7b1d4e5f6a7b8c", "0e1d2c3b4a5f6e7d8c9b" },
		/* a capital and lowercase letters, as Vite's hashes without a
		 * digit often are: not CamelCase words */
		{ "Kqxwpzvr", "Dhmtqwxz" }, { "Bjxkwqpz", "CvnzrtkW" },
	};
	static const char *const not_hashes[][2] = {
		{ "SALE2024", "SALE2025" }, { "00000041", "00000042" }, { "00000041", "00000100" },
		{ "Qx7bAm2k", "Qx7bAm3k" }, /* one character */
		{ "B2x9_kQ1", "B2x9_kQ1" }, /* the same */
		{ "v1234567", "v7654321" }, /* only the digits, beside the same letter */
		{ "20241201", "20250101" }, /* dates */
		{ "maskable", "Variable" }, /* words */
		{ "SUMMER24", "WINTER25" }, { "BlackFri", "CyberMon" }, /* campaigns */
		{ "asn1Coding", "asn2Parser" }, /* two words with numbers, not a rename */
		{ "v2Config", "v3Loader" }, { "Jan2024a", "Feb2025b" },
		/* campaigns and people renamed, the word after a '-' of the
		 * name's only token; letters in sequence */
		{ "easterEg", "xmasDeal" }, { "xmasDeal", "easterEg" }, { "xmasSale", "summerSl" },
		{ "bg-blueSky", "bg-redDusk" }, { "city-NewYork", "city-SanJose" },
		{ "team-JohnDoe", "team-JaneRoe" }, { "ABCDEFGH", "HGFEDCBA" },
		{ "xmasDeal", "xmasSale" }, /* words not spelt as English does */
	};

	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		CHECK_MSG(kiln_token_changed(hashes[i][0], hashes[i][1], strlen(hashes[i][0])),
			  "%s -> %s is a new hash", hashes[i][0], hashes[i][1]);
	for (size_t i = 0; i < sizeof(not_hashes) / sizeof(not_hashes[0]); i++)
		CHECK_MSG(!kiln_token_changed(not_hashes[i][0], not_hashes[i][1],
					      strlen(not_hashes[i][0])),
			  "%s -> %s is no new hash", not_hashes[i][0], not_hashes[i][1]);
}

/* Families: the fingerprint becomes '*', the rest stays; and the token is
 * found again where the manifest's "fingerprint" says. */
static void test_family(void)
{
	static const char *const cases[][2] = {
		{ "assets/app.3f9a2c7b.js", "assets/app.*.js" },
		{ "main.3f9a2c7b1d4e.chunk.js", "main.*.chunk.js" },
		{ "x/index-B2x9_kQ1.js", "x/index-*.js" },
		{ "3f9a2c7b1d4e5f6a7b8c.svg", "*.svg" },
		{ "a.3f9a2c7b/app.8e1d0a4f.js", "a.3f9a2c7b/app.*.js" }, /* the name, not the directory */
	};
	size_t start, len;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *f = NULL;
		CHECK(kiln_fingerprint_span(cases[i][0], &start, &len) &&
		      (f = kiln_family_at(cases[i][0], start, len)) && strcmp(f, cases[i][1]) == 0);
		CHECK(kiln_token_find(cases[i][0], cases[i][0] + start, len) == start);
		free(f);
	}
	CHECK(kiln_token_find("assets/index-DPJWWXvr.js", "DPJWWXvr", 8) == 13);
	CHECK(kiln_token_find("assets/index-DPJWWXvr.js", "DPJWWXv", 7) == SIZE_MAX);
	CHECK(kiln_token_find("DPJWWXvr/index.js", "DPJWWXvr", 8) == SIZE_MAX);
	CHECK(kiln_token_at("a/index-DPJWWXvr.js", 8, 8));
	CHECK(!kiln_token_at("a/index_DPJWWXvr.js", 8, 8));
	CHECK(kiln_token_at("a/DPJWWXvr.js", 2, 8));
	CHECK(kiln_why_parse("tree") == KILN_WHY_TREE && !kiln_why_name(KILN_WHY_NONE) &&
	      strcmp(kiln_why_name(KILN_WHY_BUNDLER), "bundler") == 0 &&
	      kiln_why_parse("yes") == KILN_NWHY);
}

/* ---- random hashes, as bundlers draw them ---- */

/* How often random hashes look like words: the rule on the name alone
 * must still take nine Vite hashes in ten (the tree the rest), and what
 * nothing but a manifest brings back must stay rare. */
static void test_random_names(void)
{
	size_t n = 200000, named = 0, words = 0, letters = 0, spelt_well = 0, words32 = 0;
	char tok[16], rel[32];

	for (size_t i = 0; i < n; i++) {
		random_token(tok, b64, 8);
		snprintf(rel, sizeof(rel), "a-%s.js", tok);
		named += kiln_fingerprinted(rel);
		words += kiln_token_words(tok, 8);
		random_token(tok, b32, 8);
		words32 += kiln_token_words32(tok, 8);
		if (strcspn(tok, "234567") == 8) {
			letters++;
			spelt_well += kiln_spelt_well(tok, 8);
		}
	}
	fprintf(stderr, "test_fingerprint: random base64url: %.2f%% by name, %.3f%% spelt words; "
		"base32 without a digit: %.2f%% spelt well; base32: %.3f%% words\n",
		100.0 * (double)named / (double)n, 100.0 * (double)words / (double)n,
		100.0 * (double)spelt_well / (double)letters, 100.0 * (double)words32 / (double)n);
	CHECK(named * 100 >= n * 90);
	CHECK(words * 1000 < n);
	CHECK(spelt_well * 50 < letters);
	CHECK(words32 * 250 < n);
}

/* ---- bundlers' manifests ---- */

/* Read TEXT; true if it is a manifest, with *OUT its proofs. */
static bool read_text(const char *text, struct kiln_proofs *out, const char **format)
{
	memset(out, 0, sizeof(*out));
	return kiln_bundler_read(text, strlen(text), out, format) == KILN_OK;
}

/* Is PATH proven, with the token TOKEN ("" for none)? */
static bool proven(const struct kiln_proofs *p, const char *path, const char *token)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return p->v[i].len == strlen(token) &&
			       memcmp(p->v[i].path + p->v[i].start, token, p->v[i].len) == 0;
	return false;
}

static bool listed(const struct kiln_proofs *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return true;
	return false;
}

static void test_bundlers(void)
{
	struct kiln_proofs p;
	const char *format = NULL;

	/* Vite's .vite/manifest.json (build.manifest): chunks by name, sources
	 * by their stem; a file its config left unhashed is listed, not proven */
	CHECK(read_text("{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", \"name\": \"index\","
			" \"src\": \"index.html\", \"isEntry\": true, \"css\": [\"assets/index-abcdefgh.css\"],"
			" \"assets\": [\"assets/logo-QRSTUVWX.svg\"]},"
			" \"src/logo.svg\": {\"file\": \"assets/logo-QRSTUVWX.svg\", \"src\": \"src/logo.svg\"},"
			" \"_shared-ABCDwxyz.js\": {\"file\": \"assets/shared-ABCDwxyz.js\", \"name\": \"shared\"},"
			" \"src/plain.ts\": {\"file\": \"assets/plain-maskable.js\", \"name\": \"plain-maskable\"},"
			" \"src/Button.vue\": {\"file\": \"assets/Button-Zyxwvuts.js\", \"src\": \"src/Button.vue\"}}",
			&p, &format));
	CHECK(format && strcmp(format, "Vite manifest") == 0);
	CHECK(proven(&p, "assets/index-DPJWWXvr.js", "DPJWWXvr"));
	CHECK(proven(&p, "assets/index-abcdefgh.css", "abcdefgh"));
	CHECK(proven(&p, "assets/logo-QRSTUVWX.svg", "QRSTUVWX"));
	CHECK(proven(&p, "assets/shared-ABCDwxyz.js", "ABCDwxyz"));
	CHECK(proven(&p, "assets/Button-Zyxwvuts.js", "Zyxwvuts"));
	CHECK(!listed(&p, "assets/plain-maskable.js"));
	CHECK(proven(&p, "assets/index-DPJWWXvr.js.map", "DPJWWXvr")); /* its source map */
	/* Vite's manifest accounts for every output Vite hashed */
	for (size_t i = 0; i < p.n; i++)
		CHECK_MSG(p.v[i].complete, "%s: from a complete manifest", p.v[i].path);
	kiln_proofs_free(&p);

	/* webpack-manifest-plugin: the key is the name without the hash */
	CHECK(read_text("{\"main.js\": \"/static/main.12345678.js\", \"main.js.map\": "
			"\"/static/main.12345678.js.map\", \"index.html\": \"/index.html\", "
			"\"logo-maskable.png\": \"https://cdn.example/logo-maskable.png?v=1\", "
			"\"787.cda612ba.chunk.js\": \"/static/787.cda612ba.chunk.js\"}", &p, &format));
	CHECK(strcmp(format, "webpack manifest") == 0);
	CHECK(proven(&p, "static/main.12345678.js", "12345678"));
	CHECK(proven(&p, "static/main.12345678.js.map", "12345678"));
	CHECK(!listed(&p, "index.html") && !listed(&p, "logo-maskable.png") &&
	      !listed(&p, "static/787.cda612ba.chunk.js"));
	/* webpack-manifest-plugin's does not (unnamed chunks are not proven) */
	CHECK(p.n && !p.v[0].complete);
	kiln_proofs_free(&p);

	/* Create React App's asset-manifest.json */
	CHECK(read_text("{\"files\": {\"main.css\": \"/static/css/main.00000000.css\", "
			"\"index.html\": \"/index.html\"}, \"entrypoints\": [\"static/css/main.00000000.css\"]}",
			&p, &format));
	CHECK(strcmp(format, "asset manifest") == 0 && p.n == 1 &&
	      proven(&p, "static/css/main.00000000.css", "00000000"));
	kiln_proofs_free(&p);

	/* webpack's stats: info.immutable, and the hash where info says */
	CHECK(read_text("{\"assets\": [{\"name\": \"main.aaaaaaaa.js\", \"info\": {\"immutable\": true, "
			"\"contenthash\": \"aaaaaaaa\"}}, {\"name\": \"index.html\", \"info\": {}}, "
			"{\"name\": \"x.js\", \"info\": {\"immutable\": true}}], \"children\": [{\"assets\": "
			"[{\"name\": \"w.bbbbbbbbbbbbbbbbbbbb.js\", \"info\": {\"immutable\": true, "
			"\"contenthash\": [\"bbbbbbbbbbbbbbbbbbbb\"]}}]}]}", &p, &format));
	CHECK(strcmp(format, "webpack stats") == 0 && p.n == 3);
	CHECK(proven(&p, "main.aaaaaaaa.js", "aaaaaaaa") && proven(&p, "x.js", "") &&
	      proven(&p, "w.bbbbbbbbbbbbbbbbbbbb.js", "bbbbbbbbbbbbbbbbbbbb"));
	kiln_proofs_free(&p);

	/* esbuild's metafile: entry points, single inputs, shared chunks */
	CHECK(read_text("{\"inputs\": {}, \"outputs\": {\"out/app-VIRMOKMZ.js\": {\"entryPoint\": "
			"\"src/app.ts\", \"inputs\": {}}, \"out/chunk-ABCDEFGH.js\": {\"inputs\": {\"a\": {}, "
			"\"b\": {}}}, \"out/logo-QWERTYUI.png\": {\"inputs\": {\"src/logo.png\": {}}}, "
			"\"out/about.js\": {\"entryPoint\": \"src/about.ts\", \"inputs\": {}}}}", &p, &format));
	CHECK(strcmp(format, "esbuild metafile") == 0 && p.n == 6 && p.v[0].complete);
	CHECK(proven(&p, "out/app-VIRMOKMZ.js.map", "VIRMOKMZ")); /* its source map */
	CHECK(proven(&p, "out/app-VIRMOKMZ.js", "VIRMOKMZ") &&
	      proven(&p, "out/chunk-ABCDEFGH.js", "ABCDEFGH") &&
	      proven(&p, "out/logo-QWERTYUI.png", "QWERTYUI"));
	kiln_proofs_free(&p);

	/* Next.js: everything under static/ */
	CHECK(read_text("{\"pages\": {\"/\": [\"static/chunks/main-1234567890123456.js\", "
			"\"static/chunks/pages/index-abcdefabcdefabcd.js\"]}, \"polyfillFiles\": "
			"[\"static/chunks/polyfills-c67a75d1b6f99dc8.js\"], \"lowPriorityFiles\": "
			"[\"static/Xq1-build_id/_buildManifest.js\"], \"rootMainFiles\": []}", &p, &format));
	CHECK(strcmp(format, "Next.js build manifest") == 0 && p.n == 4);
	CHECK(proven(&p, "static/chunks/main-1234567890123456.js", "1234567890123456") &&
	      proven(&p, "static/Xq1-build_id/_buildManifest.js", ""));
	kiln_proofs_free(&p);

	/* Angular's ngsw.json: Angular's hash shapes only */
	CHECK(read_text("{\"configVersion\": 1, \"hashTable\": {\"/main-KZ3T4RBF.js\": \"x\", "
			"\"/index.html\": \"x\", \"/assets/logo-maskable.png\": \"x\", "
			"\"/styles.0123456789abcdef.css\": \"x\"}}", &p, &format));
	CHECK(strcmp(format, "Angular ngsw.json") == 0 && p.n == 2);
	CHECK(proven(&p, "main-KZ3T4RBF.js", "KZ3T4RBF") &&
	      proven(&p, "styles.0123456789abcdef.css", "0123456789abcdef"));
	kiln_proofs_free(&p);

	/* not manifests */
	CHECK(!read_text("{\"name\": \"App\", \"icons\": [{\"src\": \"icon-192.png\"}]}", &p, &format));
	CHECK(!read_text("[1, 2]", &p, &format) && !read_text("not json", &p, &format));
	CHECK(!read_text("{}", &p, &format));
	/* a web app manifest of strings reads as webpack's, and proves nothing */
	CHECK(read_text("{\"name\": \"App\", \"start_url\": \"/\"}", &p, &format) && p.n == 0);
	kiln_proofs_free(&p);
}

int main(void)
{
	test_rule();
	test_hashlike();
	test_changed();
	test_family();
	test_random_names();
	test_bundlers();
	return check_exit("test_fingerprint");
}
