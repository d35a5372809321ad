/*
 * test_words.c - whether a token reads as a name someone chose (words.c):
 * names people give files (people's names, brands, identifiers, codes,
 * from the reviews of the fingerprint rules and tests/data/
 * hand-named-tokens.txt) against hashes bundlers drew (tokens.h's seeded
 * generator, each alphabet as its bundler writes it), and how often a
 * random hash reads as one: the misses the rules accept to keep hand-named
 * files out.
 */
#include "words.h"

#include "check.h"
#include "tokens.h"

#include <stdio.h>
#include <string.h>

static bool all(bool (*f)(const char *, size_t), const char *const *v, size_t n, bool want)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++)
		if (f(v[i], strlen(v[i])) != want) {
			fprintf(stderr, "test_words: %s: expected %d\n", v[i], want);
			ok = false;
		}
	return ok;
}

#define ALL(f, v, want) all(f, v, sizeof(v) / sizeof(v[0]), want)

/* Names read as words (never taken for a hash, in any file). */
static void test_words(void)
{
	static const char *const people[] = {
		"TomHanks", "BobSmith", "XuLiPing", "HuJinTao", "AmyGarza", "IanMcKay",
		"ChevronR", "DeShawnW", "KimJongU", "WangWei1",
	};
	static const char *const brands[] = {
		"ReactDOM", "jQueryUI", "GitHubCI", "GoogleAI", "ChatGPT4", "StringIO", "SafeYAML",
		"OpenSCAD", "TargetID", "InitLLVM", "SRB2Kart", "ASN1Data", "ZoomIn2x", "CssLexer",
		"TkWindow",
	};
	/* the forms read whole */
	static const char *const forms[] = {
		"SemiBold", "DarkMode", "iPhone12", "FACEBOOK", "DSC01234", "DSC_0042", "EPSG4326",
		"SALE2024", "iD4-0003", "x-000123", "appstore", "APPSTORE", "TWITTER1", "loadJSON",
		"toUTCStr", "playMP3s", "setState", "arrowUpR", "woodGrnA", "robotoMd", "QWERTYui",
		"AbCdEfGh", "XYZabcDE",
	};

	CHECK(ALL(kiln_token_words, people, true));
	CHECK(ALL(kiln_token_words, brands, true));
	CHECK(ALL(kiln_token_words, forms, true));
	CHECK(ALL(kiln_token_chosen, people, true)); /* words are chosen */
	CHECK(kiln_token_code("DSC01234", 8) && kiln_token_code("iD4-0003", 8) &&
	      !kiln_token_code("KZ3T4RBF", 8));
}

/* Names that could be chosen, read more loosely (never taken by the name
 * alone, nor by the tree for a file that is no bundler's code). */
static void test_chosen(void)
{
	static const char *const chosen[] = {
		"iPad10th", "USBtypeC", "en_GB_v2", "_is_IP19", "OConnorP", "DRbArray", "Win32API",
		"LeBronJ2", "Q3FY24aa", "PKCS1v15", "toA98Rgb", "v2Config", "Model3LR", "Web3Auth",
		"BTreeMap", "NewYork", "xmasDeal", "vsprintf", "xcb_cw_t", "X7K2PQ9Z", "ENGLISH2",
	};
	/* what a new review may find is not in these lists: the forms are
	 * tried on the names of tests/data/hand-named-tokens.txt by
	 * test_shape.c */
	static const char *const hashes[] = {
		"B2x9_kQ1", "DPJWWXvr", "Qm7pL2vX", "KQXWPZvr", "Dhmtqwxz", "Bm-d_zx2", "aB-cD_eF",
		"Zq7-Xw_K", "Xk9mQ2pL",
	};

	CHECK(ALL(kiln_token_chosen, chosen, true));
	CHECK(ALL(kiln_token_chosen, hashes, false));
	CHECK(ALL(kiln_token_words, hashes, false));
}

/* Upper case: esbuild's base32 hashes against words and codes. */
static void test_upper(void)
{
	static const char *const words[] = { "LINKEDIN", "APPSTORE", "ABCDEFGH", "HGFEDCBA", "OVERVIEW" };
	static const char *const codes[] = { "MP3AUDIO", "SOC2TYPE", "WIFI6GHZ", "B5E456AE",
					     "BIT2BOOL", "EPSG4326", "TWITTER1" };
	static const char *const models[] = { "H264HEVC", "X509V3AB", "A380JETS" };
	static const char *const not_models[] = { "KZ3T4RBF", "H264", "264HEVCX", "HEVCX264" };
	static const char *const hashes[] = { "KZ3T4RBF", "K2ZT4RBQ", "7QPLMZ2A", "VIRMOKMZ",
					      "QWXJKPLZ" };

	CHECK(ALL(kiln_token_words32, words, true));
	CHECK(ALL(kiln_token_chosen32, words, true));
	CHECK(ALL(kiln_token_chosen32, codes, true));
	CHECK(ALL(kiln_token_words32, hashes, false));
	CHECK(ALL(kiln_token_chosen32, hashes, false));
	CHECK(ALL(kiln_token_model32, models, true));
	CHECK(ALL(kiln_token_model32, not_models, false));
}

/* A token longer than KILN_WORDS_MAX is not read (nor is an empty one). */
static void test_long(void)
{
	static const char names[] = "TomHanksAmyGarzaBobSmithIanMcKayJoeBiden";

	CHECK(KILN_WORDS_MAX + 1 < sizeof(names));
	CHECK(!kiln_token_words("", 0) && !kiln_token_chosen("", 0));
	CHECK(kiln_token_words(names, 16));
	CHECK(!kiln_token_words(names, KILN_WORDS_MAX + 1));
}

/* How often random hashes read as words or as chosen names: the rules
 * take no such token, so these are what they cost (docs/cache-control.md,
 * "What it costs"). */
static void test_random(void)
{
	size_t n = 200000, words = 0, chosen = 0, words32 = 0, chosen32 = 0;
	char tok[16];

	for (size_t i = 0; i < n; i++) {
		random_token(tok, b64, 8);
		words += kiln_token_words(tok, 8);
		chosen += kiln_token_chosen(tok, 8);
		random_token(tok, b32, 8);
		words32 += kiln_token_words32(tok, 8);
		chosen32 += kiln_token_chosen32(tok, 8);
	}
	fprintf(stderr, "test_words: random base64url of 8: %.3f%% words, %.3f%% chosen; "
		"base32 of 8: %.3f%% words, %.3f%% chosen\n", 100.0 * (double)words / (double)n,
		100.0 * (double)chosen / (double)n, 100.0 * (double)words32 / (double)n,
		100.0 * (double)chosen32 / (double)n);
	CHECK(words * 100 < n);     /* under 1%: a bundler's code missed without its manifest */
	CHECK(chosen * 100 < 8 * n); /* under 8%: its images */
	CHECK(words32 * 200 < n);
	CHECK(chosen32 * 100 < 20 * n);
}

int main(void)
{
	test_words();
	test_chosen();
	test_upper();
	test_long();
	test_random();
	return check_exit("test_words");
}
