/*
 * test_manifest.c - manifest keys for any file name (and back), and
 * media types.
 */
#include "codec.h"
#include "manifest.h"
#include "mime.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

static void check_key(const char *rel, const char *want, bool want_encoded)
{
	bool encoded = !want_encoded;
	char *key = kiln_manifest_key(rel, &encoded), *back = kiln_manifest_key_decode(want);

	CHECK_MSG(key && strcmp(key, want) == 0, "key of %s is %s, want %s", rel,
		  key ? key : "(null)", want);
	CHECK_MSG(encoded == want_encoded, "encoded flag for %s", want);
	CHECK_MSG(back && strcmp(back, rel) == 0, "%s decodes to %s", want, back ? back : "(null)");
	free(key);
	free(back);
}

static void test_keys(void)
{
	check_key("index.html", "index.html", false);
	check_key("docs/caf\xc3\xa9.html", "docs/caf\xc3\xa9.html", false);
	check_key("100%.html", "100%25.html", true);         /* '%' always escaped */
	check_key("a\xff.js", "a%FF.js", true);
	check_key("100%\xfe.js", "100%25%FE.js", true);
	/* two names that once shared the key "bad%FFx.js" */
	check_key("bad\xffx.js", "bad%FFx.js", true);
	check_key("bad%FFx.js", "bad%25FFx.js", true);
	check_key("\xc3(x", "%C3(x", true);                   /* truncated sequence */
	check_key("\xed\xa0\x80.js", "%ED%A0%80.js", true);   /* UTF-16 surrogate */
	check_key("\xc0\xaf", "%C0%AF", true);                /* overlong '/' */
	check_key("\xf4\x90\x80\x80", "%F4%90%80%80", true);  /* above U+10FFFF */
	check_key("emoji-\xf0\x9f\x94\xa5.svg", "emoji-\xf0\x9f\x94\xa5.svg", false);
}

/* Strings that are not keys kiln_manifest_key() makes decode to nothing. */
static void test_bad_keys(void)
{
	static const char *const bad[] = {
		"a%", "a%F", "a%fF", "a%00", "%41", "a%2F%2", "%C3%A9", "\xff",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *back = kiln_manifest_key_decode(bad[i]);
		CHECK_MSG(back == NULL, "%s decoded to %s", bad[i], back);
		free(back);
	}
}

static void test_media_types(void)
{
	/* from nginx 1.22's mime.types; unknown extensions: default_type */
	CHECK(strcmp(kiln_media_type("index.html"), "text/html") == 0);
	CHECK(strcmp(kiln_media_type("a/INDEX.HTM"), "text/html") == 0); /* lowercased */
	CHECK(strcmp(kiln_media_type("app.js"), "application/javascript") == 0);
	CHECK(strcmp(kiln_media_type("app.css"), "text/css") == 0);
	CHECK(strcmp(kiln_media_type("logo.svg"), "image/svg+xml") == 0);
	CHECK(strcmp(kiln_media_type("data.json"), "application/json") == 0);
	CHECK(strcmp(kiln_media_type("feed.xml"), "text/xml") == 0);
	CHECK(strcmp(kiln_media_type("f.woff2"), "font/woff2") == 0);
	CHECK(strcmp(kiln_media_type("m.wasm"), "application/wasm") == 0);
	CHECK(strcmp(kiln_media_type("a.mjs"), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("app.js.map"), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("a.tar.gz"), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("Makefile"), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("file."), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("dir.css/readme"), "application/octet-stream") == 0);
	CHECK(strcmp(kiln_media_type("x.verylongextensionname"), "application/octet-stream") == 0);
}


/* Paths for --json: the manifest's keys, with the bytes in base64 only
 * when the key is not the path itself. */
static void test_path_key(void)
{
	char *b64 = (char *)"unset", *key = kiln_path_key("dist/app.js", &b64);

	CHECK(key && strcmp(key, "dist/app.js") == 0 && b64 == NULL);
	free(key);
	key = kiln_path_key("dist/a\xff%.js", &b64);
	/* "dist/a\xff%.js" in base64, worked out by hand from its 11 bytes */
	CHECK(key && strcmp(key, "dist/a%FF%25.js") == 0);
	CHECK(b64 && strcmp(b64, "ZGlzdC9h/yUuanM=") == 0);
	free(key);
	free(b64);
	key = kiln_path_key("x\ny", NULL); /* JSON escapes control characters itself */
	CHECK(key && strcmp(key, "x\ny") == 0);
	free(key);
}

int main(void)
{
	test_keys();
	test_bad_keys();
	test_media_types();
	test_path_key();
	return check_exit("test_manifest");
}
