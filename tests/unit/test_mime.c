/*
 * test_mime.c - the media type nginx sends for a file name (mime.c): the
 * last extension decides, in any case; a name without one, or with one
 * nginx's stock mime.types does not list, is application/octet-stream.
 * The expected types are those of nginx 1.22's mime.types, typed here.
 */
#include "mime.h"

#include "check.h"

#include <string.h>

static void type(const char *name, const char *want)
{
	const char *got = kiln_media_type(name);

	CHECK_MSG(got && strcmp(got, want) == 0, "%s: '%s', want '%s'", name, got ? got : "(null)",
		  want);
}

int main(void)
{
	type("index.html", "text/html");
	type("page.htm", "text/html");
	type("app.js", "application/javascript");
	type("style.css", "text/css");
	type("data.json", "application/json");
	type("logo.svg", "image/svg+xml");
	type("photo.jpg", "image/jpeg");
	type("photo.jpeg", "image/jpeg");
	type("icon.png", "image/png");
	type("font.woff2", "font/woff2");
	type("font.woff", "font/woff");
	type("module.wasm", "application/wasm");
	type("notes.txt", "text/plain");
	type("feed.xml", "text/xml");
	/* the extension in any case, the last one only */
	type("INDEX.HTML", "text/html");
	type("App.Js", "application/javascript");
	type("archive.html.txt", "text/plain");
	type("dir.css/file.js", "application/javascript");
	/* none, or unknown: the default type */
	type("README", "application/octet-stream");
	type("Makefile.", "application/octet-stream");
	type("x.unknownext", "application/octet-stream");
	type("", "application/octet-stream");
	return check_exit("test_mime");
}
