/*
 * test_release.c - an earlier release read for --previous (release.c).  A
 * directory: its regular files whose names may hold a hash, by path,
 * sorted, with their sizes; not its siblings, kiln's own files (manifest,
 * journal, temporary file), links, files too large or names without a
 * token, whatever the run's globs and link options say.  An archive
 * (written here with libarchive): the same, with each file's bytes, paths
 * relative to its one top-level directory when every entry lies below one
 * and as they are otherwise, entries climbing out of it skipped, the
 * caller's filter applied.  A release that is missing, not an archive or a
 * damaged one is an error, with nothing read.
 */
#include "release.h"

#include "check.h"
#include "decode.h"
#include "handmade.h"
#include "scratch.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-release-XXXXXX";

#define MAX_SIZE 5000

static const char app[] = "var app = 'release one';\n";

/* The release's files, sorted, and their sizes: "rel:size,rel:size". */
static char *listing(const struct kiln_release *r)
{
	static char buf[2048];
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n && at < sizeof(buf); i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s:%zu", i ? "," : "",
				       r->v[i].rel, r->v[i].len);
	return buf;
}

static void test_directory(void)
{
	char top[128];
	uint8_t *big = make_text(MAX_SIZE + 1, 3);
	static const char *const globs[] = { "*.css" };
	static const char want[] = "assets/app.1a7e2c9d.js:25,assets/lone.2b8f3c6e.js.gz:4,"
				   "deep/er/x.2f3e4d5c.css:7";
	struct kiln_options opt;
	struct kiln_release r;
	struct kiln_error err;

	snprintf(top, sizeof(top), "%s/rel1", dir);
	CHECK(mkdir(top, 0755) == 0 && mkdir(scratch_path(top, "assets"), 0755) == 0 &&
	      mkdir(scratch_path(top, "deep"), 0755) == 0 &&
	      mkdir(scratch_path(top, "deep/er"), 0755) == 0);
	hm_put_at(top, "assets/app.1a7e2c9d.js", app, strlen(app));
	hm_put_at(top, "assets/app.1a7e2c9d.js.gz", "gz..", 4);            /* its sibling */
	hm_put_at(top, "assets/app.1a7e2c9d.js.0123456789abcdef.dcz", "d", 1); /* its delta */
	hm_put_at(top, "assets/lone.2b8f3c6e.js.gz", "gz..", 4);           /* no source: an asset */
	hm_put_at(top, "assets/big.5e6f7a8b.js", big, MAX_SIZE + 1);       /* too large */
	hm_put_at(top, "deep/er/x.2f3e4d5c.css", "body{}\n", 7);
	hm_put_at(top, "index.html", "<html>", 6);                          /* no token */
	hm_put_at(top, "kiln-manifest.json", "{}", 2);
	hm_put_at(top, ".kiln-journal-Ab12Cd", "", 0);
	hm_put_at(top, ".kiln-Zq81Kx.tmp", "half", 4);
	CHECK(symlink("app.1a7e2c9d.js", scratch_path(top, "assets/link.9a8b7c6d.js")) == 0);
	/* the run's globs and link option do not choose a release's files */
	kiln_options_init(&opt);
	opt.include = globs;
	opt.n_include = 1;
	opt.follow_symlinks = true;
	CHECK(kiln_release_read(top, &opt, MAX_SIZE, &r, &err) == KILN_OK);
	CHECK_MSG(strcmp(listing(&r), want) == 0, "read %s", listing(&r));
	for (size_t i = 0; i < r.n; i++)
		CHECK(r.v[i].data == NULL);
	CHECK(kiln_release_find(&r, "deep/er/x.2f3e4d5c.css") == &r.v[2]);
	CHECK(kiln_release_find(&r, "assets/app.1a7e2c9d.js") == &r.v[0]);
	CHECK(kiln_release_find(&r, "index.html") == NULL);
	CHECK(kiln_release_find(&r, "assets/app.1a7e2c9d") == NULL);
	kiln_release_free(&r);
	CHECK(r.n == 0 && r.v == NULL);
	/* not there: an error, nothing read */
	CHECK(kiln_release_read(scratch_path(dir, "nothere"), &opt, MAX_SIZE, &r, &err) == KILN_ERR_IO &&
	      r.n == 0 && r.v == NULL && err.what);
	free(big);
}

/* Write the archive PATH (tar.gz) of N entries: path, then its bytes (NULL:
 * a directory). */
static void write_archive(const char *path, size_t n, const char *const entries[][2])
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	CHECK(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
	      archive_write_add_filter_gzip(a) == ARCHIVE_OK &&
	      archive_write_open_filename(a, path) == ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		const char *data = entries[i][1];
		archive_entry_clear(e);
		archive_entry_set_pathname(e, entries[i][0]);
		archive_entry_set_filetype(e, data ? AE_IFREG : AE_IFDIR);
		archive_entry_set_perm(e, data ? 0644 : 0755);
		archive_entry_set_size(e, data ? (la_int64_t)strlen(data) : 0);
		CHECK(archive_write_header(a, e) == ARCHIVE_OK);
		if (data)
			CHECK(archive_write_data(a, data, strlen(data)) == (la_ssize_t)strlen(data));
	}
	CHECK(archive_write_close(a) == ARCHIVE_OK);
	archive_entry_free(e);
	archive_write_free(a);
}

static bool css_only(const char *rel)
{
	size_t n = strlen(rel);

	return n > 4 && strcmp(rel + n - 4, ".css") == 0;
}

static void test_archive(void)
{
	static const char *const one_top[][2] = {
		{ "dist/", NULL },
		{ "dist/assets/app.1a7e2c9d.js", app },
		{ "./dist/assets/style.2f3e4d5c.css", "body{}\n" },
		{ "dist/index.html", "<html>" },
		{ "dist/../escape.3c9a4d7f.js", "outside" },
		{ "/abs.4d5e6f7a.js", "absolute" },
	};
	static const char *const two_tops[][2] = {
		{ "a/x.1a7e2c9d.js", "x" },
		{ "b/y.2b8f3c6e.js", "yy" },
	};
	char path[128], two[128];
	const struct kiln_release_file *f;
	struct kiln_options opt;
	struct kiln_release r;
	struct kiln_error err;
	uint8_t *bytes;
	size_t len;

	snprintf(path, sizeof(path), "%s/rel.tar.gz", dir);
	snprintf(two, sizeof(two), "%s/two.tar.gz", dir);
	kiln_options_init(&opt);
	write_archive(path, 6, one_top);
	CHECK(kiln_release_read(path, &opt, MAX_SIZE, &r, &err) == KILN_OK);
	CHECK_MSG(strcmp(listing(&r), "assets/app.1a7e2c9d.js:25,assets/style.2f3e4d5c.css:7") == 0,
		  "read %s", listing(&r));
	f = kiln_release_find(&r, "assets/app.1a7e2c9d.js");
	CHECK(f && f->len == strlen(app) && f->data && memcmp(f->data, app, f->len) == 0);
	kiln_release_free(&r);
	/* the caller's filter */
	CHECK(kiln_release_read_archive(path, css_only, MAX_SIZE, &r, &err) == KILN_OK);
	CHECK(r.n == 1 && strcmp(r.v[0].rel, "assets/style.2f3e4d5c.css") == 0 &&
	      memcmp(r.v[0].data, "body{}\n", 7) == 0);
	kiln_release_free(&r);
	/* no single top directory: paths as they are */
	write_archive(two, 2, two_tops);
	CHECK(kiln_release_read(two, &opt, MAX_SIZE, &r, &err) == KILN_OK);
	CHECK_MSG(strcmp(listing(&r), "a/x.1a7e2c9d.js:1,b/y.2b8f3c6e.js:2") == 0, "read %s",
		  listing(&r));
	kiln_release_free(&r);
	/* too large for MAX_SIZE: left out */
	CHECK(kiln_release_read(path, &opt, strlen(app) - 1, &r, &err) == KILN_OK &&
	      strcmp(listing(&r), "assets/style.2f3e4d5c.css:7") == 0);
	kiln_release_free(&r);
	/* damaged (cut short), or no archive at all: an error, nothing read */
	bytes = read_whole_file(path, &len);
	CHECK(bytes && len > 40);
	hm_put_at(dir, "cut.tar.gz", bytes, len - 30);
	CHECK(kiln_release_read(scratch_path(dir, "cut.tar.gz"), &opt, MAX_SIZE, &r, &err) ==
		      KILN_ERR_IO &&
	      r.n == 0 && r.v == NULL);
	free(bytes);
	hm_put_at(dir, "notes.txt", "not an archive\n", 15);
	CHECK(kiln_release_read(scratch_path(dir, "notes.txt"), &opt, MAX_SIZE, &r, &err) ==
		      KILN_ERR_IO &&
	      r.n == 0 && err.what && strstr(err.what, "archive"));
}

int main(void)
{
	if (!scratch_make(dir))
		return 1;
	test_directory();
	test_archive();
	return scratch_end(dir, "test_release");
}
