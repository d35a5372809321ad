/*
 * test_fingerprint.c - the fingerprint rule on names bundlers write and on
 * names they do not, and --immutable globs.  Each expected value comes from
 * how the bundler names its output (its documentation's default patterns),
 * not from kiln.
 */
#include "fingerprint.h"

#include "check.h"

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
	"assets/logo-aBcDeFgH.svg",
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
	/* a token must be followed by '.' and preceded by a separator that is
	 * not the name's first byte */
	".3f9a2c7b.js", "app.3f9a2c7b", "app_3f9a2c7b.js", "app-B2x9_kQ1js",
	/* the directory does not count, the name does */
	"3f9a2c7b.d/app.js", "a-B2x9_kQ1.dir/settings.js",
	/* a hash alone as the name: 16 hex digits or more */
	"3f9a2c7b1d4e5f6.svg", "1234567890123456.js", "abcdefabcdefabcd.js",
	/* 7 characters */
	"index-B2x9_kQ.js", "app.3f9a2c7.js",
};

static void test_rule(void)
{
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK_MSG(kiln_fingerprinted(yes[i]), "%s is fingerprinted", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK_MSG(!kiln_fingerprinted(no[i]), "%s is not fingerprinted", no[i]);
}

static void test_globs(void)
{
	struct kiln_options opt;
	const char *globs[] = { "fonts/*", "*.woff2" };

	kiln_options_init(&opt);
	CHECK(!kiln_immutable(&opt, "fonts/a.ttf"));
	CHECK(kiln_immutable(&opt, "assets/index-B2x9_kQ1.js"));
	opt.immutable = globs;
	opt.n_immutable = 2;
	CHECK(kiln_immutable(&opt, "fonts/a.ttf"));
	CHECK(kiln_immutable(&opt, "deep/x/b.woff2"));
	CHECK(!kiln_immutable(&opt, "other/a.ttf"));
	CHECK(!kiln_immutable(&opt, "settings.js"));
}

/* Families: the fingerprint becomes '*', the rest stays. */
static void test_family(void)
{
	static const char *const cases[][2] = {
		{ "assets/app.3f9a2c7b.js", "assets/app.*.js" },
		{ "main.3f9a2c7b1d4e.chunk.js", "main.*.chunk.js" },
		{ "x/index-B2x9_kQ1.js", "x/index-*.js" },
		{ "3f9a2c7b1d4e5f6a7b8c.svg", "*.svg" },
		{ "a.3f9a2c7b/app.8e1d0a4f.js", "a.3f9a2c7b/app.*.js" }, /* the name, not the directory */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *f = kiln_fingerprint_family(cases[i][0]);
		CHECK(f && strcmp(f, cases[i][1]) == 0);
		free(f);
	}
	CHECK(kiln_fingerprint_family("settings.js") == NULL);
	CHECK(kiln_fingerprint_family("jquery-3.7.1.min.js") == NULL);
}

int main(void)
{
	test_rule();
	test_globs();
	test_family();
	return check_exit("test_fingerprint");
}
