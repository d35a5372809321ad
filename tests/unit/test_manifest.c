/*
 * test_manifest.c - manifest keys for any file name (and back), media
 * types, and the manifest's text: entries of every shape (kept and no-gain
 * codings, every skipped outcome, fingerprints, deltas, names with any
 * byte) written as jansson would write them (the text is parsed back and
 * printed again by jansson, and must come out the same bytes), holding
 * what an entry built here with jansson from the same record holds.
 */
#include "codec.h"
#include "manifest.h"
#include "mime.h"

#include "check.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
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

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* The entry of R (with FP) as the manifest's format describes it
 * (docs/manifest.md), built here with jansson. */
static json_t *expected_entry(const struct kiln_record *r, struct kiln_fp fp)
{
	json_t *e = json_object(), *encs = json_object(), *ng = json_object();
	char h[65], sri[80] = "sha384-", *key;
	unsigned char b64[200];
	bool encoded;

	key = kiln_manifest_key(r->rel, &encoded);
	hex(r->sha256, 32, h);
	json_object_set_new(e, "sha256", json_string(h));
	json_object_set_new(e, "size", json_integer((json_int_t)r->size));
	EVP_EncodeBlock((unsigned char *)sri + 7, r->sha384, 48);
	json_object_set_new(e, "integrity", json_string(sri));
	json_object_set_new(e, "content_type", json_string(kiln_media_type(r->rel)));
	if (encoded) {
		EVP_EncodeBlock(b64, (const unsigned char *)r->rel, (int)strlen(r->rel));
		json_object_set_new(e, "path_base64", json_string((char *)b64));
	}
	if (fp.why != KILN_WHY_NONE)
		json_object_set_new(e, "immutable", json_string(kiln_why_name(fp.why)));
	if (fp.changed)
		json_object_set_new(e, "bytes_changed", json_true());
	if (fp.len) {
		char *tok = strndup(r->rel + fp.start, fp.len);
		json_object_set_new(e, "fingerprint", json_string(tok));
		free(tok);
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *cr = &r->coding[c];
		json_t *o = json_object();
		if (cr->outcome == KILN_CODING_OFF) {
			json_decref(o);
			continue;
		}
		json_object_set_new(o, "size", json_integer((json_int_t)cr->size));
		json_object_set_new(o, "encoder", json_string(cr->recipe));
		if (cr->outcome == KILN_CODING_KEPT) {
			char path[600];
			snprintf(path, sizeof(path), "%s%s", key, kiln_codecs[c]->info.suffix);
			json_object_set_new(o, "path", json_string(path));
			hex(cr->sha256, 32, h);
			json_object_set_new(o, "sha256", json_string(h));
		}
		json_object_set_new(cr->outcome == KILN_CODING_KEPT ? encs : ng,
				    kiln_codecs[c]->info.name, o);
	}
	if (r->outcome == KILN_OUTCOME_COMPRESSED)
		json_object_set(e, "encodings", encs);
	else
		json_object_set_new(e, "skipped", json_string(kiln_outcome_name(r->outcome)));
	if (json_object_size(ng))
		json_object_set(e, "no_gain", ng);
	if (r->ndicts) {
		json_t *a = json_array();
		for (size_t i = 0; i < r->ndicts; i++) {
			json_t *o = json_object();
			char *p = kiln_dict_sibling_path("", key, r->dicts[i].dict_sha256);
			json_object_set_new(o, "path", json_string(p + 1));
			json_object_set_new(o, "size", json_integer((json_int_t)r->dicts[i].size));
			hex(r->dicts[i].sha256, 32, h);
			json_object_set_new(o, "sha256", json_string(h));
			json_object_set_new(o, "encoder", json_string(r->dicts[i].recipe));
			json_object_set_new(o, "dictionary", json_string(r->dicts[i].dict_path));
			hex(r->dicts[i].dict_sha256, 32, h);
			json_object_set_new(o, "dictionary_sha256", json_string(h));
			json_array_append_new(a, o);
			free(p);
		}
		json_object_set_new(e, "dictionaries", a);
	}
	json_decref(encs);
	json_decref(ng);
	free(key);
	return e;
}

/* Records of every shape, N of them, named by GEN's bytes. */
static void test_text(void)
{
	enum { N = 600 };
	static struct kiln_record r[N];
	static struct kiln_manifest_item it[N];
	static char names[N][48];
	struct kiln_dict_record d[2] = {
		{ { 0xd1 }, "prev/app.1a7e2c9d.js", 321, { 0x51 }, "zstd-1.5.4-19-w23" },
		{ { 0xd2 }, "prev/caf\xc3\xa9.5e6f7a8b.js", 99, { 0x52 }, "zstd-1.5.4-19-w23" },
	};
	static const kiln_outcome skipped[] = { KILN_OUTCOME_MEDIA, KILN_OUTCOME_SMALL,
						KILN_OUTCOME_EXCLUDED, KILN_OUTCOME_LONG_NAME,
						KILN_OUTCOME_NO_GAIN };
	static const char *const recipes[] = { "libdeflate-1.14-12", "", "q\"uote\\d",
					       "brotli-1.0.9-11" };
	struct kiln_options opt;
	json_t *root, *files, *want = json_object();
	unsigned seed = 12345;
	char *text, *again;

	kiln_options_init(&opt);
	for (size_t i = 0; i < N; i++) {
		size_t len = 8 + i % 20, k = 3;
		/* a number, then every byte 0x01..0xff in some name: control
		 * characters, quotes, backslashes, '%', UTF-8 and bytes that
		 * are not */
		snprintf(names[i], 4, "%03zu", i);
		for (; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			names[i][k] = (char)(i < 255 ? (k == 4 ? (int)(i + 1) : 'a' + (int)(seed >> 16) % 26)
					 : 1 + (int)((seed >> 16) % 255));
		}
		if (i % 7 == 0)
			memcpy(names[i] + k - 4, "\xc3\xa9.js", 4);
		names[i][k] = '\0';
		memset(&r[i], 0, sizeof(r[i]));
		r[i].rel = names[i];
		r[i].size = i * 977 + 13;
		for (int b = 0; b < 32; b++)
			r[i].sha256[b] = (uint8_t)(i + b);
		for (int b = 0; b < 48; b++)
			r[i].sha384[b] = (uint8_t)(i * 3 + b);
		if (i % 4 == 3) {
			r[i].outcome = skipped[i / 4 % 5];
		} else {
			r[i].outcome = KILN_OUTCOME_COMPRESSED;
			for (unsigned c = 0; c < kiln_ncodecs; c++) {
				struct kiln_coding_record *cr = &r[i].coding[c];
				unsigned how = (unsigned)(i + c) % 3; /* off, kept, no-gain */
				cr->outcome = c == 0 ? KILN_CODING_KEPT
					      : how == 0 ? KILN_CODING_OFF
					      : how == 1 ? KILN_CODING_KEPT
							 : KILN_CODING_NO_GAIN;
				cr->size = r[i].size / 2 + c;
				cr->recipe = recipes[(i + c) % 4];
				memset(cr->sha256, (int)(i + c), 32);
			}
		}
		if (r[i].outcome == KILN_OUTCOME_NO_GAIN) {
			r[i].coding[1] = (struct kiln_coding_record){ KILN_CODING_NO_GAIN, 40, { 0 }, "b" };
		}
		it[i].r = &r[i];
		if (i % 5 == 0)
			it[i].fp = (struct kiln_fp){ KILN_WHY_NAME, 0, 3, 0 };
		/* bytes changed under a name: revalidated, or a glob's still */
		if (i % 7 == 0)
			it[i].fp = (struct kiln_fp){ i % 2 ? KILN_WHY_GLOB : KILN_WHY_NONE, 0, 0, 1 };
		if (i % 11 == 0 && r[i].outcome == KILN_OUTCOME_COMPRESSED) {
			r[i].dicts = d;
			r[i].ndicts = 1 + i % 2;
		}
	}
	text = kiln_manifest_dump(&opt, it, N, NULL, 0, NULL, 0, NULL);
	CHECK(text != NULL);
	root = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
	CHECK_MSG(root != NULL, "the text is not JSON");
	/* the bytes jansson itself prints for what it read */
	again = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6)) : NULL;
	CHECK(again && text && strlen(text) == strlen(again) + 1 &&
	      strncmp(text, again, strlen(again)) == 0 && text[strlen(again)] == '\n');
	/* and what it holds */
	for (size_t i = 0; i < N; i++) {
		bool enc;
		char *key = kiln_manifest_key(names[i], &enc);
		json_object_set_new(want, key, expected_entry(&r[i], it[i].fp));
		free(key);
	}
	files = root ? json_object_get(root, "files") : NULL;
	CHECK(files && json_object_size(files) == N && json_equal(files, want));
	free(again);
	free(text);
	json_decref(root);
	json_decref(want);
}

int main(void)
{
	test_keys();
	test_text();
	test_bad_keys();
	test_media_types();
	test_path_key();
	return check_exit("test_manifest");
}
