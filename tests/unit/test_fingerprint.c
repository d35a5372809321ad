/*
 * test_fingerprint.c - the evidence that a name holds a content hash: the
 * rule on the name alone (fingerprint.c) and the bundlers' manifests
 * (bundler.c); the tree's shapes (shape.c) are test_shape.c's, the words
 * test_words.c's.  Expected values come from how bundlers name their
 * output (their documented default patterns) and from names no bundler
 * wrote.  The random hashes are drawn from tokens.h's seeded generator,
 * each alphabet as its bundler writes it.
 */
#include "bundler.h"
#include "fingerprint.h"
#include "words.h"

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
	"assets/index-B2x9_kQ1.js", "assets/index-Dq4x-Z8k.css", "assets/vendor-a7b2c9d4.js",
	"assets/chunk-bXcDqFwH.js",
	/* esbuild: NAME-HASH8 upper base32, or with a dot */
	"styles.KZ3T4RBF.css", "chunk-KZ3T4RBF.js",
	/* a source map of a fingerprinted asset */
	"app.3f9a2c7b.js.map",
	/* webpack's default asset and chunk names: [hash][ext], [id].[contenthash].js */
	"static/3f9a2c7b1d4e5f6a7b8c.svg", "0e1d2c3b4a5f6e7d8c9b.js", "723.0e1d2c3b4a5f6e7d8c9b.js",
	/* Hugo: NAME.min.SHA256.css */
	"css/style.min.5b2d7c2f0e1a4b3c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c.css",
	/* an image or a font: a token of more pieces (two numbers, two runs
	 * of each case), or hexadecimal */
	"assets/hero-kGoY29M9.jpg", "media/Inter-SemiBold-X2R4CV7Q.woff2",
	"static/media/logo.5d5d9eef.svg",
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
	/* names reviews found taken: people, brands, identifiers, product
	 * and upper-case codes (tests/data/hand-named-tokens.txt has
	 * thousands more) */
	"team-TomHanks.jpg", "team-XuLiPing.jpg", "brand-ReactDOM.svg", "icon-jQueryUI.svg",
	"logo-GitHubCI.svg", "logo-GoogleAI.svg", "logo-ChatGPT4.svg", "icon-ChevronR.svg",
	"icon-ZoomIn2x.svg", "item-iPad10th.jpg", "cam-ILCE7M4K.jpg", "icon-USBtypeC.svg",
	"flag-en_GB_v2.svg", "speaker-OConnorP.jpg", "speaker-DeShawnW.jpg", "cdesc-StringIO.ri",
	"cdesc-DRbArray.ri", "cdesc-SafeYAML.ri", "cdesc-Win32API.ri", "cdesc-WIN32OLE.ri",
	"org.librepcb.LibrePCB.svg", "org.srb2.SRB2Kart.svg", "org.openscad.OpenSCAD.appdata.xml",
	"Linux-TinyCC-C.cmake", "badge-MP3AUDIO.svg", "badge-SOC2TYPE.svg", "icon-WIFI6GHZ.svg",
	"codec-H264HEVC.svg", "promo-Q3FY24aa.jpg", "sku-X7K2PQ9Z.jpg", "x-PRUint16.svg",
	/* hexadecimal that is no hash: a colour, a UUID's last group; a page */
	"palette-ff00aa11.css", "uploads/550e8400-e29b-41d4-a716-4466554400ab.jpg",
	/* ... an id after a timestamp (Unsplash's photos) */
	"img/photo-1506744038136-46273834b3fb.jpg", "1699999999-3f9a2c7b1d4e.png",
	"posts/My-First-Post-3f9a2c7b1d4e.html", "api/struct.B2x9_kQ1.html",
	/* ... placeholders typed in sequence, either way, or repeated */
	"sdk.a1b2c3d4.js", "logo.abc12345.png", "app.abcdef12.js", "vendor-1234abcd.css",
	"f.dcba4321.js", "f.4321dcba.js", "f.a0000001.js", "f.0000000a.js", "f.ab12ab12.js",
	"f.1a1a1a1a.js", "f.1234567890abcdef.js", "f.fedcba9876543210.js", "swatch-f5f5f5ff.svg",
	"bg-ffffff80.png", "f.abc00000.js",
	/* an image whose token is of too few pieces: one number, one run of
	 * lowercase letters ("Xk9mqzpL" would be a script's hash) */
	"img/a-XKm9QZPL.jpg", "img/b-KZ3TQRBF.png",
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

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CHECK_MSG(!kiln_token_hashlike(words[i], strlen(words[i])), "%s is a word", words[i]);
	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		CHECK_MSG(kiln_token_hashlike(hashes[i], strlen(hashes[i])), "%s may be a hash",
			  hashes[i]);
	CHECK(kiln_token_alphabets("KZ3T4RBF", 8) == (KILN_ALPHA_B32 | KILN_ALPHA_B64));
	CHECK(kiln_token_alphabets("3f9a2c7b", 8) == (KILN_ALPHA_HEX | KILN_ALPHA_B64));
	CHECK(kiln_token_alphabets("B2x9_kQ1", 8) == KILN_ALPHA_B64);
	CHECK(kiln_token_alphabets("B2x9.kQ1", 8) == 0);
	/* the kinds of files */
	CHECK(kiln_name_kind("a/b.js") == KILN_KIND_CODE && kiln_name_kind("x.css.map") == KILN_KIND_CODE &&
	      kiln_name_kind("w.wasm") == KILN_KIND_CODE && kiln_name_kind("i.HTML") == KILN_KIND_OTHER &&
	      kiln_name_kind("d/index.html") == KILN_KIND_PAGE && kiln_name_kind("a.svg") == KILN_KIND_OTHER &&
	      kiln_name_kind("Makefile") == KILN_KIND_OTHER && kiln_name_kind(".js") == KILN_KIND_OTHER);
	/* no hash: a colour, a UUID's last group */
	CHECK(kiln_token_other("p/palette-ff00aa11.css", 10, 8));
	CHECK(kiln_token_other("550e8400-e29b-41d4-a716-4466554400ab.jpg", 24, 12));
	CHECK(!kiln_token_other("p/palette-3f9a2c7b.css", 10, 8));
	/* a placeholder typed in sequence; hashes close to one are left */
	CHECK(kiln_token_other("scan.12345678.png", 5, 8) && kiln_token_other("sdk.a1b2c3d4.js", 4, 8));
	CHECK(kiln_token_other("x.abc12345.js", 2, 8) && kiln_token_other("y.abcdef12.css", 2, 8));
	CHECK(!kiln_token_other("x.12345679.png", 2, 8) && !kiln_token_other("x.a1b2c3d5.js", 2, 8));
	CHECK(!kiln_token_other("x.abd12345.js", 2, 8) && !kiln_token_other("x.3f9a2c7b.js", 2, 8));
	/* an id after a number of 10 digits or more: a timestamp's, not a
	 * hash's; 9 digits or a word before it leave a hash */
	CHECK(kiln_token_other("photo-1506744038136-46273834b3fb.jpg", 20, 12));
	CHECK(kiln_token_other("1506744038-3f9a2c7b.js", 11, 8));
	CHECK(!kiln_token_other("a-150674403-3f9a2c7b.js", 12, 8));
	CHECK(!kiln_token_other("a1506744038136-3f9a2c7b.js", 15, 8));
	CHECK(kiln_fingerprinted("js/chunk-150674403-3f9a2c7b.js"));
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
		/* people (parts of 2 letters, initials), codes of products and
		 * quarters, a token with a '_': no hash's shape */
		{ "IanMcKay", "XuLiPing" }, { "LeBronJ2", "OConnorP" }, { "JoeBiden", "KimJongU" },
		{ "X7K2PQ9Z", "B4N8WM3R" }, { "Q3FY24aa", "Q1FY25bb" }, { "Winter_B", "Spring_A" },
		{ "Bm-d_zx2", "Kq-w_pz7" }, { "a1b2c3", "d4e5f6" }, /* short */
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

/* How much of each bundler's random hashes the rule on the name alone
 * takes, in a bundler's code and in an image: the rest is the tree's, a
 * rename's or the manifest's to prove (docs/cache-control.md, "What it
 * costs").  Before the rules read hand-chosen names by their pieces, the
 * name alone took 91.19% of these Vite hashes, 80.38% of esbuild's, 97.62%
 * of webpack's [contenthash:8], whatever the file. */
static void test_random_names(void)
{
	static const struct {
		const char *label, *alphabet;
		char sep;
		size_t code_min, other_min; /* per thousand */
	} bundlers[] = {
		{ "Vite, Rollup (base64url)", b64, '-', 850, 350 },
		{ "esbuild (base32)", b32, '-', 600, 250 },
		{ "webpack [contenthash:8] (hex)", hex, '.', 970, 970 },
	};
	size_t n = 100000;
	char tok[16], rel[40];

	for (size_t b = 0; b < sizeof(bundlers) / sizeof(bundlers[0]); b++) {
		size_t code = 0, other = 0;
		for (size_t i = 0; i < n; i++) {
			random_token(tok, bundlers[b].alphabet, 8);
			snprintf(rel, sizeof(rel), "a%c%s.js", bundlers[b].sep, tok);
			code += kiln_fingerprinted(rel);
			snprintf(rel, sizeof(rel), "a%c%s.png", bundlers[b].sep, tok);
			other += kiln_fingerprinted(rel);
		}
		fprintf(stderr, "test_fingerprint: %s: the name alone takes %.2f%% of random hashes "
			"in code, %.2f%% in images\n", bundlers[b].label, 100.0 * (double)code / (double)n,
			100.0 * (double)other / (double)n);
		CHECK(code * 1000 >= n * bundlers[b].code_min);
		CHECK(other * 1000 >= n * bundlers[b].other_min);
	}
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
		if (strcmp(p->v[i].path, path) == 0 && p->v[i].proven)
			return p->v[i].len == strlen(token) &&
			       memcmp(p->v[i].path + p->v[i].start, token, p->v[i].len) == 0;
	return false;
}

/* Is PATH listed, proven or not? */
static bool listed(const struct kiln_proofs *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return true;
	return false;
}

static size_t count_proven(const struct kiln_proofs *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->v[i].proven;
	return n;
}

static void test_vite(void)
{
	struct kiln_proofs p;
	const char *format = NULL;

	/* Vite's .vite/manifest.json (build.manifest): chunks by name, their
	 * style sheets by the chunk's name, assets by their own entries'
	 * sources; a file its config left unhashed is listed, not proven */
	CHECK(read_text("{\"index.html\": {\"file\": \"assets/index-DPJWWXvr.js\", \"name\": \"index\","
			" \"src\": \"index.html\", \"isEntry\": true, \"css\": [\"assets/index-abcdefgh.css\"],"
			" \"assets\": [\"assets/logo-KZQTRBFA.svg\"]},"
			" \"src/logo.svg\": {\"file\": \"assets/logo-KZQTRBFA.svg\", \"src\": \"src/logo.svg\"},"
			" \"_shared-ABCDwxyz.js\": {\"file\": \"assets/shared-ABCDwxyz.js\", \"name\": \"shared\"},"
			" \"src/plain.ts\": {\"file\": \"assets/plain-maskable.js\", \"name\": \"plain-maskable\"},"
			" \"src/Button.vue\": {\"file\": \"assets/Button-Zyxwvuts.js\", \"src\": \"src/Button.vue\"}}",
			&p, &format));
	CHECK(format && strcmp(format, "Vite manifest") == 0);
	CHECK(proven(&p, "assets/index-DPJWWXvr.js", "DPJWWXvr"));
	CHECK(proven(&p, "assets/index-abcdefgh.css", "abcdefgh"));
	CHECK(proven(&p, "assets/logo-KZQTRBFA.svg", "KZQTRBFA"));
	CHECK(proven(&p, "assets/shared-ABCDwxyz.js", "ABCDwxyz"));
	CHECK(proven(&p, "assets/Button-Zyxwvuts.js", "Zyxwvuts"));
	CHECK(listed(&p, "assets/plain-maskable.js") && !proven(&p, "assets/plain-maskable.js", ""));
	CHECK(proven(&p, "assets/index-DPJWWXvr.js.map", "DPJWWXvr")); /* its source map */
	/* Vite's manifest accounts for every output Vite hashed */
	for (size_t i = 0; i < p.n; i++)
		CHECK_MSG(p.v[i].complete, "%s: from a complete manifest", p.v[i].path);
	kiln_proofs_free(&p);

	/* names Vite left unhashed ([name][extname]): an asset is no chunk's
	 * name and a word, whatever chunk lists it */
	CHECK(read_text("{\"index.html\": {\"file\": \"index.js\", \"name\": \"index\", \"src\": \"index.html\","
			" \"assets\": [\"index-background.png\", \"main-illustration.png\"]},"
			" \"src/assets/index-background.png\": {\"file\": \"index-background.png\","
			" \"src\": \"src/assets/index-background.png\"},"
			" \"src/widget.js\": {\"file\": \"widget.js\", \"name\": \"widget\", \"src\": \"src/widget.js\","
			" \"assets\": [\"widget-standalone.png\"]},"
			" \"src/assets/widget-standalone.png\": {\"file\": \"widget-standalone.png\","
			" \"src\": \"src/assets/widget-standalone.png\"}}", &p, &format));
	CHECK(count_proven(&p) == 0 && listed(&p, "index-background.png") &&
	      listed(&p, "widget-standalone.png") && listed(&p, "index.js"));
	kiln_proofs_free(&p);

	/* hashes of other lengths and alphabets, as Vite's config and manifest
	 * say ([hash:6], [hash:12], hashCharacters: 'base36'); not 5; base36
	 * (lower case: it could be a chosen name) only as the pattern of three
	 * outputs */
	CHECK(read_text("{\"a.js\": {\"file\": \"assets/a-aB3dE9.js\", \"name\": \"a\"},"
			" \"b.js\": {\"file\": \"assets/b-aB3dE9xQ7mKp.js\", \"name\": \"b\"},"
			" \"c.js\": {\"file\": \"assets/c-k3x9q2mz.js\", \"name\": \"c\"},"
			" \"d.js\": {\"file\": \"assets/d-aB3dE.js\", \"name\": \"d\"},"
			" \"f.js\": {\"file\": \"assets/f-q8m2x7kd.js\", \"name\": \"f\"},"
			" \"e.js\": {\"file\": \"assets/e-edidli90.js\", \"name\": \"e\"}}", &p, &format));
	CHECK(proven(&p, "assets/a-aB3dE9.js", "aB3dE9") && proven(&p, "assets/b-aB3dE9xQ7mKp.js", "aB3dE9xQ7mKp") &&
	      proven(&p, "assets/c-k3x9q2mz.js", "k3x9q2mz") && !proven(&p, "assets/d-aB3dE.js", "") &&
	      proven(&p, "assets/f-q8m2x7kd.js", "q8m2x7kd") &&
	      proven(&p, "assets/e-edidli90.js", "edidli90")); /* base36 reading as a word and a number */
	kiln_proofs_free(&p);
	/* two base36 outputs, or one, prove no pattern */
	CHECK(read_text("{\"c.js\": {\"file\": \"assets/c-k3x9q2mz.js\", \"name\": \"c\"},"
			" \"e.js\": {\"file\": \"assets/e-edidli90.js\", \"name\": \"e\"}}", &p, &format));
	CHECK(count_proven(&p) == 0 && listed(&p, "assets/c-k3x9q2mz.js"));
	kiln_proofs_free(&p);

	/* a version a name pattern wrote, in a build of one output (Vite's
	 * manifest, the plugins' account of Vite's and Rollup's bundle):
	 * "[name].es2017.js" is no hash; beside hashes of another length
	 * neither (of their length it would be taken as their pattern's) */
	CHECK(read_text("{\"index.html\": {\"file\": \"assets/index.es2017.js\", \"name\": \"index\","
			" \"src\": \"index.html\", \"isEntry\": true}}", &p, &format));
	CHECK(count_proven(&p) == 0 && listed(&p, "assets/index.es2017.js"));
	kiln_proofs_free(&p);
	CHECK(read_text("{\"index.html\": {\"file\": \"assets/index.v20240301.js\", \"name\": \"index\"},"
			" \"_v.js\": {\"file\": \"assets/vendor-B2x9_kQ1.js\", \"name\": \"vendor\"},"
			" \"w.js\": {\"file\": \"assets/w.build7.js\", \"name\": \"w\"}}", &p, &format));
	CHECK(count_proven(&p) == 2 && proven(&p, "assets/vendor-B2x9_kQ1.js", "B2x9_kQ1") &&
	      proven(&p, "assets/vendor-B2x9_kQ1.js.map", "B2x9_kQ1") &&
	      !proven(&p, "assets/index.v20240301.js", ""));
	kiln_proofs_free(&p);

	/* a pattern's literal is the same in every output: no hash (of 8
	 * upper-case characters, it could be esbuild's) */
	CHECK(read_text("{\"a.js\": {\"file\": \"a.K7Q2ZPLM.js\", \"name\": \"a\"},"
			" \"b.js\": {\"file\": \"b.K7Q2ZPLM.js\", \"name\": \"b\"}}", &p, &format));
	CHECK(count_proven(&p) == 0 && listed(&p, "a.K7Q2ZPLM.js") && listed(&p, "b.K7Q2ZPLM.js"));
	kiln_proofs_free(&p);
}

static void test_webpack(void)
{
	struct kiln_proofs p;
	const char *format = NULL;

	/* webpack-manifest-plugin: the key is the name without the hash */
	CHECK(read_text("{\"main.js\": \"/static/main.12345678.js\", \"main.js.map\": "
			"\"/static/main.12345678.js.map\", \"index.html\": \"/index.html\", "
			"\"logo-maskable.png\": \"https://cdn.example/logo-maskable.png?v=1\", "
			"\"787.cda612ba.chunk.js\": \"/static/787.cda612ba.chunk.js\", "
			"\"app.js\": \"/static/app.3f9a2c7b.js\"}", &p, &format));
	CHECK(strcmp(format, "webpack manifest") == 0);
	CHECK(proven(&p, "static/app.3f9a2c7b.js", "3f9a2c7b"));
	/* digits alone could be a version: proven only beside hashes of their
	 * length */
	CHECK(proven(&p, "static/main.12345678.js", "12345678"));
	CHECK(proven(&p, "static/main.12345678.js.map", "12345678"));
	CHECK(!listed(&p, "index.html") && !listed(&p, "logo-maskable.png") &&
	      !listed(&p, "static/787.cda612ba.chunk.js"));
	/* webpack-manifest-plugin's does not account for all (unnamed chunks
	 * are not proven) */
	CHECK(p.n && !p.v[0].complete);
	kiln_proofs_free(&p);

	/* words inserted by a name pattern are no hash ("[name].standalone.js") */
	CHECK(read_text("{\"main.js\": \"/main.standalone.js\", \"main.css\": \"/main.stylesheet.css\", "
			"\"img/logo.svg\": \"/img/logo.original.svg\", \"a.js\": \"/a.PRODUCTION.js\"}",
			&p, &format));
	CHECK(count_proven(&p) == 0);
	kiln_proofs_free(&p);

	/* Create React App's asset-manifest.json */
	CHECK(read_text("{\"files\": {\"main.css\": \"/static/css/main.00000000.css\", "
			"\"index.html\": \"/index.html\"}, \"entrypoints\": [\"static/css/main.00000000.css\"]}",
			&p, &format));
	CHECK(strcmp(format, "asset manifest") == 0 && p.n == 1 &&
	      !proven(&p, "static/css/main.00000000.css", ""));
	kiln_proofs_free(&p);
	CHECK(read_text("{\"files\": {\"main.css\": \"/static/css/main.00000000.css\", "
			"\"main.js\": \"/static/js/main.5e1b9c0d.js\"}}", &p, &format));
	CHECK(p.n == 2 && proven(&p, "static/css/main.00000000.css", "00000000"));
	kiln_proofs_free(&p);

	/* a flat manifest of versions someone wrote ("app.js" ->
	 * "app.v20240301.js"): no hash */
	CHECK(read_text("{\"app.js\": \"/js/app.v20240301.js\", \"sw.js\": \"/js/sw.build42a.js\"}",
			&p, &format));
	CHECK(p.n == 0 || count_proven(&p) == 0);
	kiln_proofs_free(&p);

	/* webpack's stats: info.immutable, and the hash where info says; an
	 * output webpack did not call immutable is listed and denied */
	CHECK(read_text("{\"assets\": [{\"name\": \"main.aaaaaaaa.js\", \"info\": {\"immutable\": true, "
			"\"contenthash\": \"aaaaaaaa\"}}, {\"name\": \"index.html\", \"info\": {}}, "
			"{\"name\": \"x.js\", \"info\": {\"immutable\": true}}], \"children\": [{\"assets\": "
			"[{\"name\": \"w.bbbbbbbbbbbbbbbbbbbb.js\", \"info\": {\"immutable\": true, "
			"\"contenthash\": [\"bbbbbbbbbbbbbbbbbbbb\"]}}]}]}", &p, &format));
	CHECK(strcmp(format, "webpack stats") == 0 && p.n == 4 && count_proven(&p) == 3);
	CHECK(proven(&p, "main.aaaaaaaa.js", "aaaaaaaa") && proven(&p, "x.js", "") &&
	      proven(&p, "w.bbbbbbbbbbbbbbbbbbbb.js", "bbbbbbbbbbbbbbbbbbbb"));
	for (size_t i = 0; i < p.n; i++)
		CHECK(p.v[i].complete && p.v[i].denied == (strcmp(p.v[i].path, "index.html") == 0));
	kiln_proofs_free(&p);
}

static void test_others(void)
{
	struct kiln_proofs p;
	const char *format = NULL;

	/* esbuild's metafile: entry points, single inputs, shared chunks, an
	 * entry's style sheet (cssBundle) */
	CHECK(read_text("{\"inputs\": {}, \"outputs\": {\"out/app-VIRMOKMZ.js\": {\"entryPoint\": "
			"\"src/app.ts\", \"inputs\": {}, \"cssBundle\": \"out/app-KANTEEPR.css\"}, "
			"\"out/app-KANTEEPR.css\": {\"inputs\": {\"a.css\": {}, \"b.css\": {}}}, "
			"\"out/chunk-K2ZT4RBQ.js\": {\"inputs\": {\"a\": {}, \"b\": {}}}, "
			"\"out/logo-QZWTKRBX.png\": {\"inputs\": {\"src/logo.png\": {}}}, "
			"\"out/about.js\": {\"entryPoint\": \"src/about.ts\", \"inputs\": {}}}}", &p, &format));
	CHECK(strcmp(format, "esbuild metafile") == 0 && p.v[0].complete);
	CHECK(proven(&p, "out/app-VIRMOKMZ.js.map", "VIRMOKMZ")); /* its source map */
	CHECK(proven(&p, "out/app-VIRMOKMZ.js", "VIRMOKMZ") && proven(&p, "out/app-KANTEEPR.css", "KANTEEPR") &&
	      proven(&p, "out/chunk-K2ZT4RBQ.js", "K2ZT4RBQ") &&
	      proven(&p, "out/logo-QZWTKRBX.png", "QZWTKRBX"));
	CHECK(listed(&p, "out/about.js") && !proven(&p, "out/about.js", ""));
	kiln_proofs_free(&p);
	/* esbuild's single entry named by a pattern's version: no hash */
	CHECK(read_text("{\"inputs\": {}, \"outputs\": {\"out/main-es2017.js\": {\"entryPoint\": "
			"\"src/main.ts\", \"inputs\": {}}}}", &p, &format));
	CHECK(count_proven(&p) == 0 && listed(&p, "out/main-es2017.js"));
	kiln_proofs_free(&p);

	/* Next.js: everything under static/ */
	CHECK(read_text("{\"pages\": {\"/\": [\"static/chunks/main-c67a75d1b6f99dc8.js\", "
			"\"static/chunks/pages/index-abcdefabcdefabcd.js\"]}, \"polyfillFiles\": "
			"[\"static/chunks/polyfills-c67a75d1b6f99dc8.js\"], \"lowPriorityFiles\": "
			"[\"static/Xq1-build_id/_buildManifest.js\"], \"rootMainFiles\": []}", &p, &format));
	CHECK(strcmp(format, "Next.js build manifest") == 0 && p.n == 4);
	CHECK(proven(&p, "static/chunks/main-c67a75d1b6f99dc8.js", "c67a75d1b6f99dc8") &&
	      proven(&p, "static/Xq1-build_id/_buildManifest.js", ""));
	kiln_proofs_free(&p);

	/* a "pages" key alone is no Next.js manifest: a site's own
	 * manifest.json of pages proves nothing */
	CHECK(!read_text("{\"name\": \"My docs\", \"pages\": {\"/\": [\"static/css/site.css\", "
			 "\"static/img/hero.jpg\"], \"/about\": [\"static/css/site.css\"]}}", &p, &format) ||
	      count_proven(&p) == 0);
	kiln_proofs_free(&p);
	CHECK(!read_text("{\"pages\": {\"/\": [\"static/css/site.css\"]}, \"lowPriorityFiles\": []}",
			 &p, &format) || count_proven(&p) == 0);
	kiln_proofs_free(&p);

	/* Angular's ngsw.json lists every file with a hash of its bytes, which
	 * says nothing of the names: no manifest kiln reads */
	CHECK(!read_text("{\"configVersion\": 1, \"hashTable\": {\"/main-KZ3T4RBF.js\": \"x\", "
			 "\"/assets/icons/icon-FACEBOOK.svg\": \"x\"}}", &p, &format));
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
	test_vite();
	test_webpack();
	test_others();
	return check_exit("test_fingerprint");
}
