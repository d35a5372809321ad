/*
 * test_state.c - reading a manifest back (state.c): versions 1 and 2, keys
 * taken literally (1) or percent-decoded (2), path_base64 and its key,
 * recipes, no_gain in both forms, stale siblings; a malformed document
 * rejected whole, a malformed entry dropped, unsafe paths refused, forged
 * duplicates rejecting the whole manifest; and the journaled siblings added
 * to a state, with the questions asked of it (owns, has_sibling,
 * records_sibling).  Manifests are written here by hand; expected digests
 * are the hex of the documents read byte by byte.
 */
#include "state.h"

#include "codec.h"

#include "check.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define H1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define H3 "00000000000000000000000000000000000000000000000000000000000000ff"
#define B16 "////////////////"
#define A16 "AAAAAAAAAAAAAAAA"
#define SRI_FF "sha384-" B16 B16 B16 B16 /* 48 bytes of 0xff */
#define SRI_00 "sha384-" A16 A16 A16 A16 /* 48 bytes of 0x00 */

static const uint8_t h1_pat[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
static const uint8_t h2_pat[8] = { 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };

static void pattern(uint8_t out[32], const uint8_t pat[8])
{
	for (int i = 0; i < 32; i++)
		out[i] = pat[i % 8];
}

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* A "small" entry keyed KEY, with MORE (", ..." or "") added to it. */
static char *small(const char *key, const char *more)
{
	return fmt("\"%s\": {\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF
		   "\", \"content_type\": \"text/plain\", \"skipped\": \"small\"%s}",
		   key, more);
}

static kiln_status parse(const char *text, struct kiln_state *st)
{
	memset(st, 0, sizeof(*st));
	return kiln_state_parse(text, strlen(text), st);
}

static const struct kiln_stale *find_stale(const struct kiln_state *st, const char *rel)
{
	for (size_t i = 0; i < st->nstale; i++)
		if (strcmp(st->stale[i].rel, rel) == 0)
			return &st->stale[i];
	return NULL;
}

static const char v2_doc[] =
	"{\"kiln_manifest\": 2,\n"
	" \"generator\": {\"name\": \"kiln\", \"version\": \"0.2.0\"},\n"
	" \"settings\": {\"encodings\": [\"gzip\", \"br\"]},\n"
	" \"files\": {\n"
	"  \"x.css\": {\"size\": 300, \"sha256\": \"" H2 "\", \"integrity\": \"" SRI_00 "\","
	"   \"content_type\": \"text/css\", \"skipped\": \"excluded\"},\n"
	"  \"assets/app.js\": {\"size\": 5000, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\","
	"   \"content_type\": \"application/javascript\","
	"   \"encodings\": {\"gzip\": {\"path\": \"assets/app.js.gz\", \"size\": 1200,"
	"     \"sha256\": \"" H2 "\", \"encoder\": \"libdeflate-1.14-l12\"}},"
	"   \"no_gain\": {\"br\": {\"size\": 4900, \"encoder\": \"brotli-1.0.9-q11\"}}},\n"
	"  \"img/logo.png\": {\"size\": 700, \"sha256\": \"" H2 "\", \"integrity\": \"" SRI_00 "\","
	"   \"content_type\": \"image/png\", \"skipped\": \"media\"},\n"
	"  \"100%25.html\": {\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\","
	"   \"content_type\": \"text/html\", \"skipped\": \"small\", \"path_base64\": \"MTAwJS5odG1s\"},\n"
	"  \"caf%E9.js\": {\"size\": 320, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\","
	"   \"content_type\": \"application/javascript\", \"skipped\": \"no-gain\","
	"   \"path_base64\": \"Y2Fm6S5qcw==\","
	"   \"no_gain\": {\"gzip\": {\"size\": 310, \"encoder\": \"g\"},"
	"                \"br\": {\"size\": 305, \"encoder\": \"b\"}}},\n"
	"  \"a%25b.js\": {\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\","
	"   \"content_type\": \"application/javascript\", \"skipped\": \"small\"}\n"
	" },\n"
	" \"stale_siblings\": {\n"
	"  \"old%25.js.gz\": {\"coding\": \"gzip\", \"size\": 77, \"sha256\": \"" H3 "\","
	"   \"path_base64\": \"b2xkJS5qcy5neg==\"},\n"
	"  \"gone.css.br\": {\"coding\": \"br\", \"size\": 66, \"sha256\": \"" H1 "\"}\n"
	" }\n"
	"}\n";

static void test_v2(void)
{
	static const char *const order[] = {
		"100%.html", "a%b.js", "assets/app.js", "caf\xe9.js", "img/logo.png", "x.css",
	};
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	uint8_t h1[32], h2[32], h3[32] = { [31] = 0xff }, zero[32] = { 0 }, ff48[48], z48[48] = { 0 };
	struct kiln_state st;
	struct kiln_prev_entry *pe;
	const struct kiln_stale *s;
	struct kiln_journaled j = { 0 };

	pattern(h1, h1_pat);
	pattern(h2, h2_pat);
	memset(ff48, 0xff, sizeof(ff48));
	CHECK(gz >= 0 && br >= 0);
	CHECK(parse(v2_doc, &st) == KILN_OK);
	CHECK(st.loaded);
	CHECK_MSG(st.n == 6, "%zu entries", st.n);
	for (size_t i = 0; i < st.n && i < 6; i++) {
		CHECK_MSG(strcmp(st.v[i].rec.rel, order[i]) == 0, "entry %zu is %s", i, st.v[i].rec.rel);
		CHECK(st.v[i].in_manifest && st.v[i].njv == 0);
	}

	pe = kiln_state_find(&st, "assets/app.js");
	CHECK(pe && pe->rec.size == 5000 && memcmp(pe->rec.sha256, h1, 32) == 0 &&
	      memcmp(pe->rec.sha384, ff48, 48) == 0 && pe->rec.outcome == KILN_OUTCOME_COMPRESSED);
	CHECK(pe && pe->rec.coding[gz].outcome == KILN_CODING_KEPT && pe->rec.coding[gz].size == 1200 &&
	      memcmp(pe->rec.coding[gz].sha256, h2, 32) == 0 &&
	      strcmp(pe->rec.coding[gz].recipe, "libdeflate-1.14-l12") == 0);
	CHECK(pe && pe->rec.coding[br].outcome == KILN_CODING_NO_GAIN &&
	      pe->rec.coding[br].size == 4900 &&
	      strcmp(pe->rec.coding[br].recipe, "brotli-1.0.9-q11") == 0);
	/* kiln_state_owns: the kept sibling's size and digest, nothing else */
	CHECK(pe && kiln_state_owns(pe, gz, 1200, h2));
	CHECK(pe && !kiln_state_owns(pe, gz, 1201, h2));
	CHECK(pe && !kiln_state_owns(pe, gz, 1200, h1));
	CHECK(pe && !kiln_state_owns(pe, br, 4900, zero)); /* tried, never written */
	CHECK(pe && !kiln_state_owns(pe, br, 1200, h2));
	CHECK(pe && kiln_state_has_sibling(pe, gz) && !kiln_state_has_sibling(pe, br));

	pe = kiln_state_find(&st, "img/logo.png");
	CHECK(pe && pe->rec.outcome == KILN_OUTCOME_MEDIA && pe->rec.size == 700 &&
	      memcmp(pe->rec.sha256, h2, 32) == 0 && memcmp(pe->rec.sha384, z48, 48) == 0);
	CHECK(pe && pe->rec.coding[gz].outcome == KILN_CODING_OFF &&
	      pe->rec.coding[br].outcome == KILN_CODING_OFF);
	CHECK(pe && !kiln_state_has_sibling(pe, gz));
	pe = kiln_state_find(&st, "x.css");
	CHECK(pe && pe->rec.outcome == KILN_OUTCOME_EXCLUDED);
	pe = kiln_state_find(&st, "100%.html"); /* from path_base64 */
	CHECK(pe && pe->rec.outcome == KILN_OUTCOME_SMALL && pe->rec.size == 10);
	pe = kiln_state_find(&st, "caf\xe9.js");
	CHECK(pe && pe->rec.outcome == KILN_OUTCOME_NO_GAIN);
	CHECK(pe && pe->rec.coding[gz].outcome == KILN_CODING_NO_GAIN &&
	      pe->rec.coding[gz].size == 310 && strcmp(pe->rec.coding[gz].recipe, "g") == 0);
	CHECK(pe && pe->rec.coding[br].outcome == KILN_CODING_NO_GAIN &&
	      pe->rec.coding[br].size == 305 && strcmp(pe->rec.coding[br].recipe, "b") == 0);
	CHECK(kiln_state_find(&st, "a%b.js") != NULL);   /* key percent-decoded */
	CHECK(kiln_state_find(&st, "a%25b.js") == NULL);
	CHECK(kiln_state_find(&st, "caf%E9.js") == NULL);
	CHECK(kiln_state_find(&st, "nothere.js") == NULL);

	CHECK(st.nstale == 2);
	s = find_stale(&st, "old%.js.gz");
	CHECK(s && s->coding == gz && s->size == 77 && memcmp(s->sha256, h3, 32) == 0);
	s = find_stale(&st, "gone.css.br");
	CHECK(s && s->coding == br && s->size == 66 && memcmp(s->sha256, h1, 32) == 0);

	CHECK(kiln_state_records_sibling(&st, "assets/app.js.gz"));
	CHECK(!kiln_state_records_sibling(&st, "assets/app.js.br")); /* no gain: none written */
	CHECK(!kiln_state_records_sibling(&st, "assets/app.js"));
	CHECK(!kiln_state_records_sibling(&st, "assets/app.js.zst"));
	CHECK(!kiln_state_records_sibling(&st, "img/logo.png.gz"));
	CHECK(kiln_state_records_sibling(&st, "old%.js.gz"));      /* stale */
	CHECK(kiln_state_records_sibling(&st, "gone.css.br"));
	CHECK(!kiln_state_records_sibling(&st, "gone.css.gz"));
	CHECK(!kiln_state_records_sibling(&st, "nothere.js.gz"));
	CHECK(!kiln_state_records_sibling(&st, ".gz"));

	/* a journal adds a br sibling to a manifest entry */
	j.coding = br;
	j.size = 1100;
	memcpy(j.sha256, h3, 32);
	CHECK(kiln_state_add_journaled(&st, "assets/app.js", &j) == KILN_OK);
	CHECK(st.n == 6);
	pe = kiln_state_find(&st, "assets/app.js");
	CHECK(pe && pe->in_manifest && pe->njv == 1 && pe->jv[0].size == 1100);
	CHECK(pe && pe->rec.coding[gz].outcome == KILN_CODING_KEPT);
	CHECK(pe && kiln_state_has_sibling(pe, br) && kiln_state_owns(pe, br, 1100, h3));
	CHECK(pe && !kiln_state_owns(pe, br, 1100, h2) && !kiln_state_owns(pe, gz, 1100, h3));
	CHECK(kiln_state_records_sibling(&st, "assets/app.js.br"));
	kiln_state_free(&st);
	CHECK(st.n == 0 && st.v == NULL && st.nstale == 0 && !st.loaded);
}

static void test_v1(void)
{
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	char *a = small("a%25b.js", ""), *c = small("caf%E9.js", ", \"path_base64\": \"Y2Fm6S5qcw==\"");
	char *text = fmt("{\"kiln_manifest\": 1, \"files\": {%s, %s, \"app.js\": {\"size\": 5000,"
			 " \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\", \"encodings\":"
			 " {\"gzip\": {\"path\": \"app.js.gz\", \"size\": 1200, \"sha256\": \"" H2 "\"}},"
			 " \"no_gain\": {\"br\": 4990}}}}", a, c);
	struct kiln_state st;
	struct kiln_prev_entry *pe;
	uint8_t h2[32];

	pattern(h2, h2_pat);
	CHECK(parse(text, &st) == KILN_OK && st.loaded && st.n == 3);
	CHECK(kiln_state_find(&st, "a%25b.js") != NULL); /* version 1: literal keys */
	CHECK(kiln_state_find(&st, "a%b.js") == NULL);
	CHECK(kiln_state_find(&st, "caf\xe9.js") != NULL);
	pe = kiln_state_find(&st, "app.js");
	CHECK(pe && pe->rec.coding[gz].outcome == KILN_CODING_KEPT &&
	      pe->rec.coding[gz].size == 1200 && memcmp(pe->rec.coding[gz].sha256, h2, 32) == 0 &&
	      pe->rec.coding[gz].recipe[0] == '\0');
	CHECK(pe && pe->rec.coding[br].outcome == KILN_CODING_NO_GAIN &&
	      pe->rec.coding[br].size == 4990 && pe->rec.coding[br].recipe[0] == '\0');
	kiln_state_free(&st);
	free(text);
	free(a);
	free(c);
}

/* Not a manifest this kiln reads: rejected whole, nothing kept. */
static void test_bad_documents(void)
{
	static const char *const docs[] = {
		"", "not json", "[]", "{}", "null", "{\"kiln_manifest\": 2}",
		"{\"kiln_manifest\": 2, \"files\": []}",
		"{\"kiln_manifest\": 2, \"files\": null}",
		"{\"files\": {}}",
		"{\"kiln_manifest\": 0, \"files\": {}}",
		"{\"kiln_manifest\": 4, \"files\": {}}",
		"{\"kiln_manifest\": -1, \"files\": {}}",
		"{\"kiln_manifest\": \"2\", \"files\": {}}",
		"{\"kiln_manifest\": 2.0, \"files\": {}}",
		"{\"kiln_manifest\": true, \"files\": {}}",
		"{\"kiln_manifest\": 2, \"files\": {}} trailing",
		"{\"kiln_manifest\": 2, \"files\": {}",
		"{\"kiln_manifest\": 2, \"kiln_manifest\": 2, \"files\": {}}",
	};
	struct kiln_state st;
	char half[sizeof(v2_doc)];

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		CHECK_MSG(parse(docs[i], &st) == KILN_ERR_INVALID, "accepted: %s", docs[i]);
		CHECK(!st.loaded && st.n == 0 && st.nstale == 0);
		kiln_state_free(&st);
	}
	/* every prefix of a good manifest, cut inside its text */
	for (size_t n = 0; n + 2 < sizeof(v2_doc); n += 7) {
		memcpy(half, v2_doc, n);
		half[n] = '\0';
		CHECK_MSG(parse(half, &st) == KILN_ERR_INVALID, "prefix of %zu bytes accepted", n);
		CHECK(!st.loaded && st.n == 0);
		kiln_state_free(&st);
	}
}

/* One document: the entry "good.txt" beside BAD (text of one more member of
 * "files"); only good.txt may be read. */
static void expect_dropped(int version, const char *bad)
{
	char *good = small("good.txt", "");
	char *text = fmt("{\"kiln_manifest\": %d, \"files\": {%s, %s}}", version, good, bad);
	struct kiln_state st;

	CHECK_MSG(parse(text, &st) == KILN_OK && st.n == 1 &&
		  strcmp(st.v[0].rec.rel, "good.txt") == 0,
		  "v%d: %zu entries kept from %s", version, st.n, bad);
	kiln_state_free(&st);
	free(text);
	free(good);
}

#define ENT(more) "\"bad.js\": {" more "}"
#define OKF "\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\""
#define KEPT(gz) OKF ", \"encodings\": {\"gzip\": {" gz "}}"

static void test_bad_entries(void)
{
	static const char *const bad[] = {
		ENT("\"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": -1, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": \"10\", \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10.5, \"sha256\": \"" H1 "\", \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\","
		    " \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\","
		    " \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
		    " \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"integrity\": \"" SRI_FF "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"sha256-" B16 B16 B16 B16 "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"" H1 "\", \"integrity\": \"sha384-" B16 B16 B16 "\", \"skipped\": \"small\""),
		ENT("\"size\": 10, \"sha256\": \"" H1 "\", \"skipped\": \"small\""),
		ENT(OKF ", \"skipped\": \"compressed\""),
		ENT(OKF ", \"skipped\": \"symlink\""),
		ENT(OKF ", \"skipped\": \"bogus\""),
		ENT(OKF),
		ENT(OKF ", \"skipped\": \"small\", \"encodings\": {}"),
		ENT(OKF ", \"encodings\": []"),
		ENT(KEPT("\"path\": \"other.js.gz\", \"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"bat.js.gz\", \"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"x/bad.js.gz\", \"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"bad.js.br\", \"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"bad.js\", \"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"size\": 5, \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"bad.js.gz\", \"sha256\": \"" H2 "\"")),
		ENT(KEPT("\"path\": \"bad.js.gz\", \"size\": 5, \"sha256\": \"" H2 "x\"")),
		ENT(KEPT("\"path\": \"bad.js.gz\", \"size\": 5, \"sha256\": \"" H2 "\", \"encoder\": 7")),
		/* 64 characters: no room for the NUL in KILN_RECIPE_MAX */
		ENT(KEPT("\"path\": \"bad.js.gz\", \"size\": 5, \"sha256\": \"" H2 "\", \"encoder\": \""
			 "0123456789012345678901234567890123456789012345678901234567890123\"")),
		"\"bad.js\": 5", "\"bad.js\": [1, 2]", "\"bad.js\": \"x\"",
	};
	char *text;
	struct kiln_state st;
	kiln_coding gz = kiln_coding_find("gzip");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_dropped(2, bad[i]);
		expect_dropped(1, bad[i]);
	}
	/* 63 characters fit, and are read back whole */
	text = fmt("{\"kiln_manifest\": 2, \"files\": {" ENT(KEPT("\"path\": \"bad.js.gz\", \"size\": 5,"
		   " \"sha256\": \"" H2 "\", \"encoder\": \"%s\"")) "}}",
		   "012345678901234567890123456789012345678901234567890123456789012");
	CHECK(parse(text, &st) == KILN_OK && st.n == 1);
	CHECK(st.n == 1 && strcmp(st.v[0].rec.coding[gz].recipe,
				  "012345678901234567890123456789012345678901234567890123456789012") == 0);
	kiln_state_free(&st);
	free(text);
}

/* Paths that leave the tree, or are not paths, never reach the state. */
static void test_unsafe(void)
{
	static const char *const keys[] = {
		"../x.js", "a/../x.js", "a/..", "/etc/passwd", "a//b.js", "./a.js", "a/./b.js",
		".", "..", "", "a/",
	};
	/* path_base64 values: "../x.js", "/etc/passwd", "a//b.js", "a\0b.js",
	 * "a/", and strings that are not base64 */
	static const char *const b64[] = {
		"Li4veC5qcw==", "L2V0Yy9wYXNzd2Q=", "YS8vYi5qcw==", "YQBiLmpz", "YS8=", "!!!!", "YQ=",
		"", "YQ==YQ==x",
	};
	static const char *const v2_bad_keys[] = {
		"a%zz.js", "%41.js", "a%.js", "a%2", "a%00b.js", "a%e9.js",
	};
	char more[128];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *e = small(keys[i], "");
		expect_dropped(1, e);
		expect_dropped(2, e);
		free(e);
	}
	for (size_t i = 0; i < sizeof(b64) / sizeof(b64[0]); i++) {
		char *e;
		snprintf(more, sizeof(more), ", \"path_base64\": \"%s\"", b64[i]);
		e = small("k.js", more);
		expect_dropped(1, e);
		expect_dropped(2, e);
		free(e);
	}
	/* version 2: the key must be the one kiln makes, and decode safely */
	for (size_t i = 0; i < sizeof(v2_bad_keys) / sizeof(v2_bad_keys[0]); i++) {
		char *e = small(v2_bad_keys[i], "");
		expect_dropped(2, e);
		free(e);
	}
	{
		/* a NUL smuggled in with a key that names it */
		char *e = small("a%00b.js", ", \"path_base64\": \"YQBiLmpz\"");
		expect_dropped(2, e);
		free(e);
		/* version 2: path_base64 ("y.js") must be what its key names */
		e = small("x.js", ", \"path_base64\": \"eS5qcw==\"");
		expect_dropped(2, e);
		free(e);
	}

	CHECK(kiln_state_safe_rel("a", 1) && kiln_state_safe_rel("a/b/c.js", 8));
	CHECK(kiln_state_safe_rel(".hidden", 7) && kiln_state_safe_rel("..a/b..", 7));
	CHECK(kiln_state_safe_rel("...", 3) && kiln_state_safe_rel("a.", 2));
	CHECK(!kiln_state_safe_rel("", 0) && !kiln_state_safe_rel("/a", 2));
	CHECK(!kiln_state_safe_rel("a//b", 4) && !kiln_state_safe_rel("./a", 3));
	CHECK(!kiln_state_safe_rel("a/.", 3) && !kiln_state_safe_rel("..", 2));
	CHECK(!kiln_state_safe_rel("a/../b", 6) && !kiln_state_safe_rel("a\0b", 3));
	CHECK_MSG(!kiln_state_safe_rel("a/", 2), "\"a/\" has an empty last component");
}

static void test_base64(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "YQ==", "a" }, { "YWI=", "ab" }, { "YWJj", "abc" }, { "YS9i", "a/b" },
		{ "Y2Fm6S5qcw==", "caf\xe9.js" }, { "", NULL }, { "YQ=", NULL }, { "Y!==", NULL },
		{ "YQBiLmpz", NULL }, { "Li4veC5qcw==", NULL }, { "Lw==", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = kiln_state_rel_base64(cases[i].in);
		CHECK_MSG(cases[i].out ? got && strcmp(got, cases[i].out) == 0 : got == NULL,
			  "%s decoded to %s", cases[i].in, got ? got : "(null)");
		free(got);
	}
}

/* Two keys that name the same bytes: the whole manifest is refused. */
static void test_duplicates(void)
{
	char *a = small("a.js", ""), *b = small("other.js", ", \"path_base64\": \"YS5qcw==\"");
	char *text = fmt("{\"kiln_manifest\": 1, \"files\": {%s, %s}}", a, b);
	struct kiln_state st;

	CHECK(parse(text, &st) == KILN_ERR_INVALID && !st.loaded && st.n == 0);
	kiln_state_free(&st);
	free(text);
	/* and the same key twice in the JSON text */
	text = fmt("{\"kiln_manifest\": 2, \"files\": {%s, %s}}", a, a);
	CHECK(parse(text, &st) == KILN_ERR_INVALID && !st.loaded && st.n == 0);
	kiln_state_free(&st);
	free(text);
	free(a);
	free(b);
}

static void test_stale(void)
{
	static const char *const bad[] = {
		"\"../x.js.gz\": {\"coding\": \"gzip\", \"size\": 1, \"sha256\": \"" H1 "\"}",
		"\"b.js.br\": {\"coding\": \"brotli\", \"size\": 1, \"sha256\": \"" H1 "\"}",
		"\"c.js.xz\": {\"coding\": \"xz\", \"size\": 1, \"sha256\": \"" H1 "\"}",
		"\"d.js.gz\": {\"coding\": \"gzip\", \"size\": 1}",
		"\"e.js.gz\": {\"coding\": \"gzip\", \"sha256\": \"" H1 "\"}",
		"\"f.js.gz\": {\"size\": 1, \"sha256\": \"" H1 "\"}",
		"\"g%zz.gz\": {\"coding\": \"gzip\", \"size\": 1, \"sha256\": \"" H1 "\"}",
		"\"h.gz\": 3",
	};
	struct kiln_state st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = fmt("{\"kiln_manifest\": 2, \"files\": {}, \"stale_siblings\": {"
				 "\"ok.js.gz\": {\"coding\": \"gzip\", \"size\": 9, \"sha256\": \"" H1
				 "\"}, %s}}", bad[i]);
		CHECK_MSG(parse(text, &st) == KILN_OK && st.nstale == 1 &&
			  strcmp(st.stale[0].rel, "ok.js.gz") == 0 && st.stale[0].size == 9,
			  "kept %zu stale siblings from %s", st.nstale, bad[i]);
		kiln_state_free(&st);
		free(text);
	}
}

/* "snippets": a name at the top of the tree with a SHA-256, nothing else
 * (a path, "." or "..", no digest: such a record is dropped, so a later
 * run removes nothing for it). */
static void test_snippets(void)
{
	static const char *const bad[] = {
		"\"../kiln.caddy.conf\": {\"sha256\": \"" H1 "\"}",
		"\"sub/kiln.caddy.conf\": {\"sha256\": \"" H1 "\"}",
		"\"..\": {\"sha256\": \"" H1 "\"}",
		"\"\": {\"sha256\": \"" H1 "\"}",
		"\"kiln.apache.conf\": {\"sha256\": \"12\"}",
		"\"kiln.apache.conf\": {}",
		"\"kiln.apache.conf\": 3",
	};
	struct kiln_state st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = fmt("{\"kiln_manifest\": 3, \"files\": {}, \"snippets\": {"
				 "\"kiln.caddy.conf\": {\"sha256\": \"" H1 "\"}, %s}}", bad[i]);
		CHECK_MSG(parse(text, &st) == KILN_OK && st.nsnippets == 1 &&
			  strcmp(st.snippets[0].name, "kiln.caddy.conf") == 0 &&
			  st.snippets[0].sha256[0] == 0x01 && st.snippets[0].sha256[31] == 0xef,
			  "kept %zu snippets from %s", st.nsnippets, bad[i]);
		kiln_state_free(&st);
		free(text);
	}
}

static void test_journaled(void)
{
	static const char *const rels[] = { "m.js", "a.js", "z/y.css", "b.js", "\xff.js" };
	static const char *const sorted[] = { "a.js", "b.js", "m.js", "z/y.css", "\xff.js" };
	kiln_coding gz = kiln_coding_find("gzip"), br = kiln_coding_find("br");
	struct kiln_state st = { 0 };
	struct kiln_journaled j = { 0 };
	struct kiln_prev_entry *pe;
	char buf[32];

	CHECK(kiln_state_find(&st, "a.js") == NULL);
	CHECK(!kiln_state_records_sibling(&st, "a.js.gz"));
	for (size_t i = 0; i < 5; i++) {
		j.coding = gz;
		j.size = 100 + i;
		memset(j.sha256, (int)i + 1, 32);
		j.src_known = true;
		j.src_size = 1000 + i;
		snprintf(j.recipe, sizeof(j.recipe), "r%zu", i);
		snprintf(buf, sizeof(buf), "%s", rels[i]);
		CHECK(kiln_state_add_journaled(&st, buf, &j) == KILN_OK);
		memset(buf, 'x', sizeof(buf) - 1); /* the state keeps its own copy */
	}
	CHECK(st.loaded && st.n == 5);
	for (size_t i = 0; i < st.n && i < 5; i++) {
		CHECK_MSG(strcmp(st.v[i].rec.rel, sorted[i]) == 0, "entry %zu: %s", i, st.v[i].rec.rel);
		CHECK(!st.v[i].in_manifest && st.v[i].njv == 1);
	}
	pe = kiln_state_find(&st, "z/y.css");
	CHECK(pe && pe->jv[0].size == 102 && pe->jv[0].src_size == 1002 &&
	      strcmp(pe->jv[0].recipe, "r2") == 0 && pe->jv[0].sha256[0] == 3);
	/* a second version of m.js: kept after the first */
	j.coding = br;
	j.size = 555;
	memset(j.sha256, 0x55, 32);
	CHECK(kiln_state_add_journaled(&st, "m.js", &j) == KILN_OK && st.n == 5);
	pe = kiln_state_find(&st, "m.js");
	CHECK(pe && pe->njv == 2 && pe->jv[0].size == 100 && pe->jv[1].size == 555);
	memset(buf, 0x55, 32);
	CHECK(pe && kiln_state_owns(pe, br, 555, (uint8_t *)buf));
	CHECK(pe && !kiln_state_owns(pe, gz, 555, (uint8_t *)buf));
	memset(buf, 1, 32);
	CHECK(pe && kiln_state_owns(pe, gz, 100, (uint8_t *)buf));
	CHECK(pe && !kiln_state_owns(pe, gz, 101, (uint8_t *)buf));
	CHECK(pe && kiln_state_has_sibling(pe, gz) && kiln_state_has_sibling(pe, br));
	pe = kiln_state_find(&st, "a.js");
	CHECK(pe && kiln_state_has_sibling(pe, gz) && !kiln_state_has_sibling(pe, br));
	CHECK(kiln_state_records_sibling(&st, "z/y.css.gz"));
	CHECK(!kiln_state_records_sibling(&st, "z/y.css.br"));
	CHECK(kiln_state_records_sibling(&st, "m.js.br"));
	CHECK(kiln_state_records_sibling(&st, "\xff.js.gz"));
	CHECK(!kiln_state_records_sibling(&st, "y.css.gz")); /* the path, not the name */
	kiln_state_free(&st);
}

static void test_load(void)
{
	char dir[] = "/tmp/kiln-test-state-XXXXXX", path[128];
	struct kiln_error err = { 0 };
	struct kiln_state st = { 0 };
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	CHECK(kiln_state_load(path, &st, &err) == KILN_OK && !st.loaded && st.n == 0);
	kiln_state_free(&st);
	CHECK(kiln_state_load(dir, &st, &err) == KILN_ERR_IO && err.status == KILN_ERR_IO &&
	      err.what && !st.loaded);
	kiln_state_free(&st);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0644) == 0);
	CHECK(kiln_state_load(path, &st, &err) != KILN_OK && !st.loaded); /* and no hang */
	kiln_state_free(&st);
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	f = fopen(path, "w");
	CHECK(f && fputs("{\"kiln_manifest\": 9, \"files\": {}}", f) >= 0);
	if (f)
		fclose(f);
	memset(&err, 0, sizeof(err));
	CHECK(kiln_state_load(path, &st, &err) == KILN_ERR_INVALID && err.status == KILN_ERR_INVALID &&
	      err.what && !st.loaded);
	kiln_state_free(&st);
	snprintf(path, sizeof(path), "%s/kiln-manifest.json", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(v2_doc, f) >= 0);
	if (f)
		fclose(f);
	CHECK(kiln_state_load(path, &st, &err) == KILN_OK && st.loaded && st.n == 6 &&
	      st.nstale == 2);
	kiln_state_free(&st);
	if (check_failures == 0)
		scratch_remove(dir);
}

int main(void)
{
	test_v2();
	test_v1();
	test_bad_documents();
	test_bad_entries();
	test_unsafe();
	test_base64();
	test_duplicates();
	test_stale();
	test_snippets();
	test_journaled();
	test_load();
	return check_exit("test_state");
}
