/*
 * test_serve.c - kiln serve's decisions without a socket (serve_negotiate.c)
 * and its table (serve_table.c): URL paths to manifest keys (refusing
 * traversal, encoded NUL and slash, empty components), Accept-Encoding as
 * the snippets read it (RFC 9110 section 12.5.3: q=0 refuses, "*",
 * x-gzip, malformed members ignored, the first weight of a coding listed
 * twice), the smallest accepted sibling, If-None-Match lists, Range, and
 * HTTP-dates against values worked out by hand; then a table loaded from a
 * manifest written here, a sibling missing on disk left out, and another
 * tree's manifest refused.
 */
#include "serve.h"

#include "codec.h"

#include "check.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int key(const char *raw, const char *want)
{
	char out[64];
	size_t len;
	int kind = kiln_srv_url_key(raw, out, sizeof(out), &len);

	if (kind && want && (strlen(want) != len || memcmp(out, want, len) != 0)) {
		fprintf(stderr, "url %s: key '%s', want '%s'\n", raw, out, want);
		return -1;
	}
	return kind;
}

static void test_url_key(void)
{
	CHECK(key("/", "") == 2);
	CHECK(key("/index.html", "index.html") == 1);
	CHECK(key("/a/b/", "a/b/") == 2);
	CHECK(key("/read%20me.html", "read me.html") == 1);
	CHECK(key("/caf%C3%A9.css", "caf\xc3\xa9.css") == 1);
	CHECK(key("/a%25b", "a%b") == 1);
	CHECK(key("/.well-known/x", ".well-known/x") == 1);
	CHECK(key("/.well-known/security.txt", ".well-known/security.txt") == 1);
	CHECK(key("/a/.well-known/", "a/.well-known/") == 2);
	CHECK(key("/x%5cy", "x\\y") == 1);  /* a backslash is a name byte on POSIX */
	CHECK(key("/x%01y", "x\001y") == 1); /* so is a control byte */
	CHECK(key("/a.b/c..d", "a.b/c..d") == 1);
	/* dotfiles and dot-directories, even when the manifest lists them */
	CHECK(key("/.a.js", NULL) == 0);
	CHECK(key("/.env", NULL) == 0);
	CHECK(key("/.git/config", NULL) == 0);
	CHECK(key("/a/.htpasswd", NULL) == 0);
	CHECK(key("/%2egit/config", NULL) == 0);
	CHECK(key("/.well-knownx/a", NULL) == 0);
	CHECK(key("/.well-know/a", NULL) == 0);
	CHECK(key("/a/.git/", NULL) == 0);
	/* refused */
	CHECK(key("", NULL) == 0);
	CHECK(key("index.html", NULL) == 0);
	CHECK(key("*", NULL) == 0);
	CHECK(key("/..", NULL) == 0);
	CHECK(key("/../x", NULL) == 0);
	CHECK(key("/a/../x", NULL) == 0);
	CHECK(key("/a/..", NULL) == 0);
	CHECK(key("/%2e%2e/x", NULL) == 0);
	CHECK(key("/.%2E/x", NULL) == 0);
	CHECK(key("/./x", NULL) == 0);
	CHECK(key("/a/.", NULL) == 0);
	CHECK(key("//x", NULL) == 0);
	CHECK(key("/a//x", NULL) == 0);
	CHECK(key("/a%2fb", NULL) == 0);
	CHECK(key("/a%2Fb", NULL) == 0);
	CHECK(key("/a%00b", NULL) == 0);
	CHECK(key("/a%", NULL) == 0);
	CHECK(key("/a%4", NULL) == 0);
	CHECK(key("/a%zz", NULL) == 0);
	/* too long for the buffer: refused, never cut */
	CHECK(key("/0123456789012345678901234567890123456789012345678901234567890123456789", NULL) == 0);
}

static unsigned bit(const char *name)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (strcmp(kiln_codec((kiln_coding)c)->info.name, name) == 0)
			return 1u << c;
	return 0;
}

static void test_accepted(void)
{
	unsigned gz = bit("gzip"), br = bit("br"), zs = bit("zstd"), all = gz | br | zs;

	CHECK(gz && br && zs);
	/* identity refused (RFC 9110 12.5.3): by name, or by "*;q=0"
	 * without it; the first weight counts */
	CHECK(!kiln_srv_identity_refused(NULL));
	CHECK(!kiln_srv_identity_refused(""));
	CHECK(!kiln_srv_identity_refused("gzip;q=0, br;q=0"));
	CHECK(kiln_srv_identity_refused("identity;q=0"));
	CHECK(kiln_srv_identity_refused("gzip, IDENTITY; q=0.000"));
	CHECK(kiln_srv_identity_refused("*;q=0"));
	CHECK(!kiln_srv_identity_refused("*;q=0, identity"));
	CHECK(!kiln_srv_identity_refused("identity;q=0.5, *;q=0"));
	CHECK(!kiln_srv_identity_refused("*"));
	CHECK(!kiln_srv_identity_refused("identity, identity;q=0"));
	CHECK(!kiln_srv_identity_refused("identity;q=zero")); /* malformed: ignored */
	/* absolute-form targets (RFC 9112 3.2.2): their path */
	CHECK(strcmp(kiln_srv_origin_form("/a.js"), "/a.js") == 0);
	CHECK(strcmp(kiln_srv_origin_form("http://h/a.js?x"), "/a.js?x") == 0);
	CHECK(strcmp(kiln_srv_origin_form("HTTPS://h:8080/d/"), "/d/") == 0);
	CHECK(strcmp(kiln_srv_origin_form("http://h"), "/") == 0);
	CHECK(strcmp(kiln_srv_origin_form("httpx://h/a"), "httpx://h/a") == 0);
	/* the access log's line: the Common Log Format, then kiln's fields */
	{
		struct sockaddr_in sin = { .sin_family = AF_INET };
		struct kiln_srv_logged r = { "GET", "/a b\".js", "HTTP/1.1", "br", "gzip, br", NULL,
					     200, 1234 };
		char line[KILN_SRV_LOG_MAX];
		size_t n;

		sin.sin_addr.s_addr = htonl(0x7f000001);
		n = kiln_srv_log_line(line, sizeof(line), (struct sockaddr *)&sin, 1796637600, &r);
		CHECK_MSG(strcmp(line, "127.0.0.1 - - [07/Dec/2026:10:00:00 +0000] "
				       "\"GET /a\\x20b\\x22.js HTTP/1.1\" 200 1234 ce=\"br\" "
				       "ae=\"gzip, br\" ad=\"-\"\n") == 0 && n == strlen(line),
			  "%s", line);
		r = (struct kiln_srv_logged){ "HEAD", "/", "HTTP/1.0", NULL, NULL, NULL, 404, 0 };
		kiln_srv_log_line(line, sizeof(line), NULL, 0, &r);
		CHECK_MSG(strcmp(line, "- - - [01/Jan/1970:00:00:00 +0000] \"HEAD / HTTP/1.0\" 404 - "
				       "ce=\"-\" ae=\"-\" ad=\"-\"\n") == 0, "%s", line);
		n = kiln_srv_log_line(line, 40, NULL, 0, &r);
		CHECK(n == 39 && line[38] == '\n' && !memchr(line, '\n', 38));
	}
	CHECK(kiln_srv_accepted(NULL) == 0);
	CHECK(kiln_srv_accepted("") == 0);
	CHECK(kiln_srv_accepted("identity") == 0);
	CHECK(kiln_srv_accepted("gzip") == gz);
	CHECK(kiln_srv_accepted("gzip, deflate, br, zstd") == all);
	CHECK(kiln_srv_accepted("br;q=0, gzip") == gz);
	CHECK(kiln_srv_accepted("br ; q=0 , gzip") == gz);
	CHECK(kiln_srv_accepted("zstd;q=0.001, gzip;q=1") == (zs | gz));
	CHECK(kiln_srv_accepted("gzip;q=0.000") == 0);
	CHECK(kiln_srv_accepted("gzip;Q=0") == 0);
	CHECK(kiln_srv_accepted("*") == all);
	CHECK(kiln_srv_accepted("*;q=0") == 0);
	CHECK(kiln_srv_accepted("gzip;q=0, *") == (br | zs));
	CHECK(kiln_srv_accepted("*, gzip;q=0") == (br | zs));
	CHECK(kiln_srv_accepted("x-gzip") == gz);
	CHECK(kiln_srv_accepted("GZIP, BR") == (gz | br));
	CHECK(kiln_srv_accepted("zstd, br;q=0, gzip;q=0") == zs);
	CHECK(kiln_srv_accepted("gzip, gzip;q=0") == gz);  /* the first weight counts */
	CHECK(kiln_srv_accepted("gzip;q=0, gzip") == 0);
	/* malformed members are ignored, not the whole header */
	CHECK(kiln_srv_accepted("gzip;q=2, br") == br);
	CHECK(kiln_srv_accepted("gzip;q=0.5x, br") == br);
	CHECK(kiln_srv_accepted("gzip;q=1.0001, br") == br);
	CHECK(kiln_srv_accepted("gzip junk, br") == br);
	CHECK(kiln_srv_accepted("gzip;q, br") == br);
	CHECK(kiln_srv_accepted(",,, ,gzip,,") == gz);
	CHECK(kiln_srv_accepted("gzip;level=9;q=0.5") == gz);
	CHECK(kiln_srv_accepted("gzip;;q=0") == 0);
}

static void test_dictionary_fields(void)
{
	uint8_t d[32], want[32];

	CHECK(kiln_srv_lists("gzip, dcz", "dcz"));
	CHECK(kiln_srv_lists("DCZ;q=0.5", "dcz"));
	CHECK(!kiln_srv_lists("*", "dcz"));
	CHECK(!kiln_srv_lists("dcz;q=0", "dcz"));
	CHECK(!kiln_srv_lists("*, dcz; q=0.000", "dcz"));
	CHECK(!kiln_srv_lists("dczx, xdcz", "dcz"));
	CHECK(!kiln_srv_lists(NULL, "dcz"));
	/* 32 bytes 0x00..0x1f, base64 by hand: AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= */
	for (int i = 0; i < 32; i++)
		want[i] = (uint8_t)i;
	CHECK(kiln_srv_available_dictionary(":AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:", d) &&
	      memcmp(d, want, 32) == 0);
	CHECK(kiln_srv_available_dictionary("  :AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=: ", d));
	CHECK(!kiln_srv_available_dictionary("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", d));
	CHECK(!kiln_srv_available_dictionary(":AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8:", d));
	CHECK(!kiln_srv_available_dictionary(":AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=:", d)); /* stray bits */
	CHECK(!kiln_srv_available_dictionary(":AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:x", d));
	CHECK(!kiln_srv_available_dictionary(":AAEC:", d));
	CHECK(!kiln_srv_available_dictionary("", d));
}

static void test_choose(void)
{
	struct kiln_srv_asset a = { 0 };
	unsigned gz = bit("gzip"), br = bit("br"), zs = bit("zstd");

	a.nreps = 4;
	a.rep[0] = (struct kiln_srv_rep){ .coding = -1, .size = 1000 };
	a.rep[1] = (struct kiln_srv_rep){ .coding = 0, .size = 300 };
	a.rep[2] = (struct kiln_srv_rep){ .coding = 1, .size = 250 };
	a.rep[3] = (struct kiln_srv_rep){ .coding = 2, .size = 250 };
	CHECK(kiln_srv_choose(&a, 0) == &a.rep[0]);
	CHECK(kiln_srv_choose(&a, 1u << 0) == &a.rep[1]);
	CHECK(kiln_srv_choose(&a, (1u << 0) | (1u << 1)) == &a.rep[2]);
	/* a tie goes to the later coding of the table */
	CHECK(kiln_srv_choose(&a, 7) == &a.rep[3]);
	a.nreps = 2; /* only the first sibling exists */
	CHECK(kiln_srv_choose(&a, 1u << 1) == &a.rep[0]);
	(void)gz;
	(void)br;
	(void)zs;
}

static void test_etag(void)
{
	CHECK(kiln_srv_etag_listed("\"abc\"", "\"abc\""));
	CHECK(kiln_srv_etag_listed("W/\"abc\"", "\"abc\""));
	CHECK(kiln_srv_etag_listed("\"x\", \"abc\"", "\"abc\""));
	CHECK(kiln_srv_etag_listed("*", "\"abc\""));
	CHECK(!kiln_srv_etag_listed("\"abcd\"", "\"abc\""));
	CHECK(!kiln_srv_etag_listed("\"ab\"", "\"abc\""));
	CHECK(!kiln_srv_etag_listed("abc", "\"abc\""));
	CHECK(!kiln_srv_etag_listed("\"abc", "\"abc\""));
	CHECK(!kiln_srv_etag_listed("", "\"abc\""));
}

static void test_range(void)
{
	uint64_t f = 99, l = 99;

	CHECK(kiln_srv_range(NULL, 100, &f, &l) == 0);
	CHECK(kiln_srv_range("bytes=0-9", 100, &f, &l) == 1 && f == 0 && l == 9);
	CHECK(kiln_srv_range("BYTES=10-", 100, &f, &l) == 1 && f == 10 && l == 99);
	CHECK(kiln_srv_range("bytes=-5", 100, &f, &l) == 1 && f == 95 && l == 99);
	CHECK(kiln_srv_range("bytes=-500", 100, &f, &l) == 1 && f == 0 && l == 99);
	CHECK(kiln_srv_range("bytes=90-500", 100, &f, &l) == 1 && f == 90 && l == 99);
	CHECK(kiln_srv_range("bytes=100-", 100, &f, &l) == -1);
	CHECK(kiln_srv_range("bytes=-0", 100, &f, &l) == -1);
	CHECK(kiln_srv_range("bytes=0-0", 0, &f, &l) == -1);
	CHECK(kiln_srv_range("bytes=5-1", 100, &f, &l) == 0);
	CHECK(kiln_srv_range("bytes=0-1,3-4", 100, &f, &l) == 0);
	CHECK(kiln_srv_range("bytes=-", 100, &f, &l) == 0);
	CHECK(kiln_srv_range("bytes=a-b", 100, &f, &l) == 0);
	CHECK(kiln_srv_range("pages=0-1", 100, &f, &l) == 0);
	CHECK(kiln_srv_range("bytes=99999999999999999999999-", 100, &f, &l) == 0);
}

static void test_dates(void)
{
	char out[30];

	/* RFC 9110's example: 784111777 */
	CHECK(kiln_srv_parse_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777);
	kiln_srv_format_date(784111777, out);
	CHECK(strcmp(out, "Sun, 06 Nov 1994 08:49:37 GMT") == 0);
	kiln_srv_format_date(0, out);
	CHECK(strcmp(out, "Thu, 01 Jan 1970 00:00:00 GMT") == 0);
	/* 2000-03-01: after a leap day of a century divisible by 400 */
	CHECK(kiln_srv_parse_date("Wed, 01 Mar 2000 00:00:00 GMT") == 951868800);
	kiln_srv_format_date(951868800, out);
	CHECK(strcmp(out, "Wed, 01 Mar 2000 00:00:00 GMT") == 0);
	CHECK(kiln_srv_parse_date("Sunday, 06-Nov-94 08:49:37 GMT") == -1);
	CHECK(kiln_srv_parse_date("Sun, 06 Nov 1994 08:49:37 UTC") == -1);
	CHECK(kiln_srv_parse_date("Sun, 06 Xyz 1994 08:49:37 GMT") == -1);
	CHECK(kiln_srv_parse_date("") == -1);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Give DIR/REL the mtime of DIR/SRC. */
static void same_mtime(const char *dir, const char *rel, const char *src)
{
	char p[512], q[512];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	snprintf(q, sizeof(q), "%s/%s", dir, src);
	CHECK(stat(q, &sb) == 0 &&
	      utimensat(AT_FDCWD, p, (struct timespec[2]){ sb.st_atim, sb.st_mtim }, 0) == 0);
}

#define H "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* the SHA-256 of "0123456789" and "abcdef": with no index beside the
 * manifest, a load reads a source that has siblings and compares */
#define A_JS "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"
#define B_CSS "bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721"
#define B48 "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFh"

static void test_table(void)
{
	char dir[] = "/tmp/kiln-test-serve.XXXXXX";
	char m[4096];
	struct kiln_srv_table *t = NULL;
	struct kiln_error err = { 0 };
	const struct kiln_srv_asset *a;
	const char *gz = kiln_codec(0)->info.name, *gzs = kiln_codec(0)->info.suffix;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	put(dir, "a.js", "0123456789");
	put(dir, "b.css", "abcdef");
	/* a.js has a sibling of 4 bytes on disk; b.css's is recorded, absent */
	{
		char sib[64];
		snprintf(sib, sizeof(sib), "a.js%s", gzs);
		put(dir, sib, "GZGZ");
		same_mtime(dir, sib, "a.js"); /* as kiln leaves it */
	}
	snprintf(m, sizeof(m),
		 "{\"kiln_manifest\": 3, \"generator\": {\"name\": \"kiln\"}, \"settings\": {},"
		 " \"files\": {"
		 "  \"a.js\": {\"size\": 10, \"sha256\": \"%s\", \"integrity\": \"sha384-%s\","
		 "   \"immutable\": \"glob\", \"encodings\": {\"%s\": {\"path\": \"a.js%s\", \"size\": 4,"
		 "   \"sha256\": \"%s\", \"encoder\": \"x\"}}},"
		 "  \"b.css\": {\"size\": 6, \"sha256\": \"%s\", \"integrity\": \"sha384-%s\","
		 "   \"encodings\": {\"%s\": {\"path\": \"b.css%s\", \"size\": 3, \"sha256\": \"%s\","
		 "   \"encoder\": \"x\"}}}}}",
		 A_JS, B48, gz, gzs, H, B_CSS, B48, gz, gzs, H);
	put(dir, "kiln-manifest.json", m);
	/* a.js edited since kiln ran, its size kept: its sibling no longer
	 * carries its mtime, and the load offers only the source as it is */
	{
		char p1[512];
		struct timespec later[2] = { { 0, UTIME_OMIT }, { 2000000000, 0 } };
		snprintf(p1, sizeof(p1), "%s/a.js", dir);
		CHECK(utimensat(AT_FDCWD, p1, later, 0) == 0);
		CHECK(kiln_srv_table_load(dir, NULL, "/", false, &t, &err) == KILN_OK);
		a = t ? kiln_srv_find(t, "a.js", 4) : NULL;
		CHECK(t && t->nsiblings == 0 && t->nchanged == 1 && a && a->changed && a->nreps == 1);
		kiln_srv_table_unref(t);
		t = NULL;
		snprintf(m + 2048, 64, "a.js%s", gzs);
		same_mtime(dir, m + 2048, "a.js");
	}
	CHECK(kiln_srv_table_load(dir, NULL, "/", false, &t, &err) == KILN_OK);
	if (t) {
		CHECK(t->n == 2);
		CHECK(t->nsiblings == 1 && t->missing == 1);
		a = kiln_srv_find(t, "a.js", 4);
		CHECK(a && a->nreps == 2 && a->immutable && a->rep[1].size == 4);
		CHECK(a && strcmp(a->rep[0].etag, "\"84d89877f0d4041efb6b\"") == 0);
		CHECK(a && strcmp(a->type, "application/javascript") == 0);
		a = kiln_srv_find(t, "b.css", 5);
		CHECK(a && a->nreps == 1 && !a->immutable);
		CHECK(kiln_srv_find(t, "a.j", 3) == NULL);
		CHECK(kiln_srv_find(t, "a.jsx", 5) == NULL);
		CHECK(!kiln_srv_table_stale(t, dir, NULL, true));
		/* the sibling left out is looked for again: there, the table
		 * is stale (of another size, not yet) */
		CHECK(t->nabsent == 1 && strcmp(t->absent[0].rel + 5, gzs) == 0);
		{
			char sib[64];
			snprintf(sib, sizeof(sib), "b.css%s", gzs);
			put(dir, sib, "GZGZ");
			CHECK(!kiln_srv_table_stale(t, dir, NULL, true));
			put(dir, sib, "GZG");
			CHECK(kiln_srv_table_stale(t, dir, NULL, true));
		}
		/* the source now: as loaded, changed (a new file of the same
		 * size renamed in), gone */
		a = kiln_srv_find(t, "a.js", 4);
		{
			struct stat sb;
			char p1[512], p2[512];
			snprintf(p1, sizeof(p1), "%s/a.js", dir);
			snprintf(p2, sizeof(p2), "%s/a.js.new", dir);
			struct kiln_srv_asset *w = (struct kiln_srv_asset *)a; /* its memo */
			int fd;
			CHECK(a && kiln_srv_source_now(t, w, &sb) == KILN_SRV_SOURCE_AS_LOADED);
			/* other bytes written in place, the size and mtime put
			 * back: only the ctime (then the digest) tells */
			CHECK((fd = open(p1, O_WRONLY)) >= 0 && pwrite(fd, "X", 1, 3) == 1 &&
			      close(fd) == 0);
			same_mtime(dir, "a.js", m + 2048);
			CHECK(a && kiln_srv_source_now(t, w, &sb) == KILN_SRV_SOURCE_CHANGED &&
			      sb.st_size == 10);
			put(dir, "a.js.new", "9876543210");
			CHECK(rename(p2, p1) == 0);
			CHECK(a && kiln_srv_source_now(t, w, &sb) == KILN_SRV_SOURCE_CHANGED &&
			      sb.st_size == 10);
			CHECK(unlink(p1) == 0);
			CHECK(a && kiln_srv_source_now(t, w, &sb) == KILN_SRV_SOURCE_GONE);
		}
		kiln_srv_table_unref(t);
	}
	/* loaded without its source: the asset is left out and looked for;
	 * with a source of another size: kept, without its siblings */
	put(dir, "b.css", "abcdefgh");
	t = NULL;
	CHECK(kiln_srv_table_load(dir, NULL, "/", false, &t, &err) == KILN_OK);
	if (t) {
		CHECK(t->n == 1 && !kiln_srv_find(t, "a.js", 4) && t->nabsent == 1 &&
		      strcmp(t->absent[0].rel, "a.js") == 0);
		a = kiln_srv_find(t, "b.css", 5);
		CHECK(a && a->changed && a->nreps == 1 && t->nchanged == 1);
		CHECK(!kiln_srv_table_stale(t, dir, NULL, true));
		put(dir, "a.js", "0123456789");
		CHECK(kiln_srv_table_stale(t, dir, NULL, true));
		kiln_srv_table_unref(t);
	}
	put(dir, "b.css", "abcdef");
	/* another tree's record */
	{
		char *p = strstr(m, "\"settings\"");
		char m2[4200];
		snprintf(m2, sizeof(m2), "%.*s\"tree\": \"../elsewhere\", %s", (int)(p - m), m, p);
		put(dir, "kiln-manifest.json", m2);
		t = NULL;
		CHECK(kiln_srv_table_load(dir, NULL, "/", false, &t, &err) == KILN_ERR_INVALID && !t);
	}
	/* a manifest kept elsewhere (--manifest, --artifacts) is this tree's
	 * when its "tree", relative to its own directory, names the tree; one
	 * that names none is its directory's, so another tree's */
	{
		char away[sizeof(dir) + 8], path[sizeof(away) + 32], m2[4300];
		char *p = strstr(m, "\"settings\"");
		snprintf(away, sizeof(away), "%s.away", dir);
		snprintf(path, sizeof(path), "%s/kiln-manifest.json", away);
		CHECK(mkdir(away, 0755) == 0);
		snprintf(m2, sizeof(m2), "%.*s\"tree\": \"../%s\", %s", (int)(p - m), m,
			 strrchr(dir, '/') + 1, p);
		put(away, "kiln-manifest.json", m2);
		t = NULL;
		CHECK(kiln_srv_table_load(dir, path, "/", false, &t, &err) == KILN_OK && t && t->n == 2);
		if (t) {
			CHECK(!kiln_srv_table_stale(t, dir, path, true));
			/* the tree's own manifest (the other tree's record above) is
			 * another file */
			CHECK(kiln_srv_table_stale(t, dir, NULL, true));
			kiln_srv_table_unref(t);
		}
		put(away, "kiln-manifest.json", m);
		t = NULL;
		CHECK(kiln_srv_table_load(dir, path, "/", false, &t, &err) == KILN_ERR_INVALID && !t);
		unlink(path);
		CHECK(kiln_srv_table_load(dir, path, "/", false, &t, &err) == KILN_ERR_IO &&
		      err.errnum == ENOENT);
		rmdir(away);
	}
	put(dir, "kiln-manifest.json", "{ not json");
	CHECK(kiln_srv_table_load(dir, NULL, "/", false, &t, &err) == KILN_ERR_INVALID);
	if (!check_failures)
		scratch_remove(dir);
}

int main(void)
{
	test_url_key();
	test_accepted();
	test_choose();
	test_dictionary_fields();
	test_etag();
	test_range();
	test_dates();
	test_table();
	return check_exit("test_serve");
}
