/* test_classify.c - own outputs, media by extension and magic, globs.
 * (Sibling names are the codec table's: test_codec.c.) */
#include "classify.h"

#include "check.h"

#include <string.h>

static void test_own_outputs(void)
{
	CHECK(kiln_is_own_output("kiln-manifest.json"));
	CHECK(kiln_is_own_output("kiln.nginx.conf"));
	CHECK(kiln_is_temp_name(".kiln-a1B2c3.tmp"));
	CHECK(kiln_is_own_output(".kiln-a1B2c3.tmp"));
	CHECK(!kiln_is_temp_name(".kiln-a1B2c.tmp"));   /* 5 random characters */
	CHECK(!kiln_is_temp_name("kiln-a1B2c3.tmp"));   /* no leading dot */
	CHECK(!kiln_is_temp_name(".kiln-a1B2c3.tmpx"));
	CHECK(!kiln_is_own_output("manifest.json"));
	CHECK(!kiln_is_own_output("kiln.conf"));
}

static void test_media_extension(void)
{
	static const char *const media[] = {
		"a.jpg", "a.JPEG", "b/c.png", "x.apng", "x.gif", "x.webp", "x.avif", "x.heic",
		"x.heif", "x.jxl", "x.mp3", "x.mp4", "x.m4a", "x.m4v", "x.mov", "x.webm", "x.mkv",
		"x.ogg", "x.oga", "x.ogv", "x.opus", "x.flac", "x.aac", "x.3gp", "x.avi", "x.wmv",
		"x.flv", "x.swf", "x.mpg", "x.mpeg", "x.zip", "x.tar.gz", "x.tgz", "x.bz2",
		"x.tbz", "x.xz", "x.zst", "x.br", "x.7z", "x.rar", "x.lz4", "x.lzma", "f.woff",
		"f.WOFF2", "x.jar", "x.apk", "x.epub", "x.docx", "x.xlsx", "x.pptx", "x.odt",
		"x.ods", "x.odp",
	};
	static const char *const text[] = {
		"index.html", "a.css", "a.js", "a.mjs", "a.json", "a.svg", "a.xml", "a.txt",
		"a.js.map", "a.wasm", "a.ttf", "a.otf", "a.eot", "favicon.ico", "README.md",
		"a.csv", "Makefile", ".png", "png", "file.", "dir.png/file.txt", "a.pngx",
	};
	for (size_t i = 0; i < sizeof(media) / sizeof(media[0]); i++)
		CHECK_MSG(kiln_media_extension(media[i]), "%s", media[i]);
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		CHECK_MSG(!kiln_media_extension(text[i]), "%s", text[i]);
}

#define MAGIC(s) ((const unsigned char *)(s)), (sizeof(s) - 1)

static void test_media_magic(void)
{
	/* signatures, each padded like the start of a real file */
	CHECK(kiln_media_magic(MAGIC("\x89PNG\r\n\x1a\n\0\0\0\rIHDR")));
	CHECK(kiln_media_magic(MAGIC("\xff\xd8\xff\xe0\0\x10JFIF")));
	CHECK(kiln_media_magic(MAGIC("GIF89a\x01\0\x01\0")));
	CHECK(kiln_media_magic(MAGIC("RIFF\x24\0\0\0WEBPVP8 ")));
	CHECK(kiln_media_magic(MAGIC("\0\0\0\x20" "ftypisom\0\0\x02\0")));
	CHECK(kiln_media_magic(MAGIC("\0\0\0\x1c" "ftypavif")));
	CHECK(kiln_media_magic(MAGIC("\x1a\x45\xdf\xa3\x9f\x42\x86\x81")));
	CHECK(kiln_media_magic(MAGIC("OggS\0\x02")));
	CHECK(kiln_media_magic(MAGIC("fLaC\0\0\0\x22")));
	CHECK(kiln_media_magic(MAGIC("ID3\x04\0\0")));
	CHECK(kiln_media_magic(MAGIC("PK\x03\x04\x14\0\0\0")));
	CHECK(kiln_media_magic(MAGIC("\x1f\x8b\x08\0\0\0\0\0")));
	CHECK(kiln_media_magic(MAGIC("BZh91AY&SY\x8a\x1c\x02\x00")));
	CHECK(kiln_media_magic(MAGIC("\xfd" "7zXZ\0\0\x04")));
	CHECK(kiln_media_magic(MAGIC("\x28\xb5\x2f\xfd\x24\x05")));
	CHECK(kiln_media_magic(MAGIC("7z\xbc\xaf\x27\x1c\0\x04")));
	CHECK(kiln_media_magic(MAGIC("Rar!\x1a\x07\x01\0")));
	CHECK(kiln_media_magic(MAGIC("wOFF\0\x01\0\0")));
	CHECK(kiln_media_magic(MAGIC("wOF2\0\x01\0\0")));
	/* text that merely resembles a signature */
	CHECK(!kiln_media_magic(MAGIC("<!doctype html>\n<html>")));
	CHECK(!kiln_media_magic(MAGIC("\xef\xbb\xbf{\"a\": 1}")));   /* UTF-8 BOM */
	CHECK(!kiln_media_magic(MAGIC("\xff\xfe<\0h\0t\0m\0")));     /* UTF-16LE BOM */
	CHECK(!kiln_media_magic(MAGIC("\xfe\xff\0<\0h\0t\0m")));     /* UTF-16BE BOM */
	CHECK(!kiln_media_magic(MAGIC("BZh is not bzip2")));        /* no level digit */
	CHECK(!kiln_media_magic(MAGIC("RIFFLE WEBPAGES")));          /* RIFF + no tag */
	CHECK(!kiln_media_magic(MAGIC("XXXX1234WEBP")));             /* tag without RIFF */
	CHECK(!kiln_media_magic(MAGIC("PK")));                       /* too short */
	/* printable signatures at the top of text files are text */
	CHECK(!kiln_media_magic(MAGIC("ID3 tag reference\n")));
	CHECK(!kiln_media_magic(MAGIC("GIF89a explained in ")));
	CHECK(!kiln_media_magic(MAGIC("OggS is a container")));
	CHECK(!kiln_media_magic(MAGIC("fLaC\tnotes\r\n")));
	CHECK(!kiln_media_magic(MAGIC("var ftyp = 1;\n")));
	CHECK(!kiln_media_magic(MAGIC("wOF2 fonts are \xc3\xa9")));   /* UTF-8 text */
	CHECK(!kiln_media_magic(MAGIC("RIFF 12 WEBP bits")));
	CHECK(!kiln_media_magic(MAGIC("BZh91AY&SY demo\n")));
	/* a UTF-8 sequence cut by the 16-byte window is still text */
	CHECK(!kiln_media_magic(MAGIC("GIF8 caf\xc3\xa9 caf\xc3\xa9 \xc3")));
	/* one binary byte makes the same signature count */
	CHECK(kiln_media_magic(MAGIC("GIF89a\x10\x00\x10\x00")));
	CHECK(!kiln_media_magic(MAGIC("")));
}

static void test_globs(void)
{
	/* no '/': the file name alone, wherever it is */
	CHECK(kiln_glob_match("*.map", "assets/app.js.map"));
	CHECK(kiln_glob_match("*.map", "app.js.map"));
	CHECK(!kiln_glob_match("*.map", "maps/app.js"));
	CHECK(kiln_glob_match("robots.txt", "robots.txt"));
	CHECK(kiln_glob_match("robots.txt", "deep/robots.txt"));
	/* with '/': the whole relative path, '*' crossing directories */
	CHECK(kiln_glob_match("vendor/*", "vendor/a/b/c.js"));
	CHECK(!kiln_glob_match("vendor/*", "src/vendor/c.js"));
	CHECK(kiln_glob_match("*/min/*.js", "lib/min/x.js"));
	CHECK(kiln_glob_match("./docs/*.html", "docs/a.html"));
	CHECK(!kiln_glob_match("docs/*.html", "other/docs/a.html"));
	CHECK(kiln_glob_match("[ab].css", "b.css"));
}

int main(void)
{
	test_own_outputs();
	test_media_extension();
	test_media_magic();
	test_globs();
	return check_exit("test_classify");
}
