/*
 * release.c - an earlier release, a directory or a deploy archive: the
 * regular files whose names may hold a hash, an archive's held in memory.
 *
 * The archive is read with libarchive, the formats and filters
 * kiln_run_archive() reads, and never unpacked: its paths are only
 * compared with the tree's.  Paths are taken as kiln_run_archive() takes
 * them: without a leading "./", relative to the archive's single top-level
 * directory when every entry lies below one.  An entry whose path is
 * absolute or has a ".." component is skipped: it is no file of the
 * release.
 */
#include "release.h"

#include "error.h"
#include "fingerprint.h"
#include "state.h"
#include "walk.h"

#include <archive.h>
#include <archive_entry.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* PATH without "./" components and repeated slashes, malloc'ed; NULL if it
 * is not a safe relative path (absolute, or with a ".." component) or out
 * of memory. */
static char *clean_path(const char *path)
{
	char *out, *o;

	if (*path == '/' || !(out = o = malloc(strlen(path) + 1)))
		return NULL;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n && !(n == 1 && p[0] == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p += n + (p[n] == '/');
	}
	*o = '\0';
	if (!kiln_state_safe_rel(out, strlen(out))) {
		free(out);
		return NULL;
	}
	return out;
}

void kiln_release_free(struct kiln_release *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].rel);
		free(r->v[i].data);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* Strip the top-level directory all of R's files share, if there is one
 * (and none of them is the directory itself). */
static void strip_top(struct kiln_release *r)
{
	size_t top;

	if (!r->n || !(top = strcspn(r->v[0].rel, "/")) || !r->v[0].rel[top])
		return;
	for (size_t i = 0; i < r->n; i++)
		if (strncmp(r->v[i].rel, r->v[0].rel, top + 1) != 0)
			return;
	if (!r->all_below_top)
		return;
	for (size_t i = 0; i < r->n; i++)
		memmove(r->v[i].rel, r->v[i].rel + top + 1, strlen(r->v[i].rel + top + 1) + 1);
}

/* Read the data of the current entry, SIZE bytes, into a new buffer. */
static uint8_t *entry_data(struct archive *a, int64_t size)
{
	uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
	size_t done = 0;

	while (buf && done < (size_t)size) {
		la_ssize_t got = archive_read_data(a, buf + done, (size_t)size - done);
		if (got <= 0) {
			free(buf);
			return NULL;
		}
		done += (size_t)got;
	}
	return buf;
}

kiln_status kiln_release_read_archive(const char *path, bool (*want)(const char *rel),
				      uint64_t max_size, struct kiln_release *out,
				      struct kiln_error *err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	char *first_top = NULL;
	kiln_status ret = KILN_OK;
	int r;

	memset(out, 0, sizeof(*out));
	out->all_below_top = true;
	if (!a) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
		return KILN_ERR_NOMEM;
	}
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_cpio(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		kiln_fail(err, KILN_ERR_IO, 0, "not a directory or an archive kiln reads");
		archive_read_free(a);
		return KILN_ERR_IO;
	}
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ae);
		char *rel = name ? clean_path(name) : NULL;
		size_t top = rel ? strcspn(rel, "/") : 0;
		struct kiln_release_file *v;
		if (!rel)
			continue;
		/* every entry, directories too, decides the top-level directory */
		if (!first_top && !(first_top = strndup(rel, top))) {
			free(rel);
			ret = KILN_ERR_NOMEM;
			break;
		}
		if (strlen(first_top) != top || strncmp(first_top, rel, top) != 0 ||
		    (!rel[top] && archive_entry_filetype(ae) != AE_IFDIR))
			out->all_below_top = false;
		if (archive_entry_filetype(ae) != AE_IFREG || archive_entry_size(ae) < 0 ||
		    (uint64_t)archive_entry_size(ae) > max_size ||
		    !want(rel)) {
			free(rel);
			continue;
		}
		v = realloc(out->v, (out->n + 1) * sizeof(*v));
		if (!v) {
			free(rel);
			ret = KILN_ERR_NOMEM;
			break;
		}
		out->v = v;
		v[out->n].rel = rel;
		v[out->n].len = (size_t)archive_entry_size(ae);
		if (!(v[out->n].data = entry_data(a, archive_entry_size(ae)))) {
			free(rel);
			kiln_fail(err, KILN_ERR_IO, 0, "cannot read the earlier release");
			ret = KILN_ERR_IO;
			break;
		}
		out->n++;
	}
	if (ret == KILN_OK && r != ARCHIVE_EOF) {
		kiln_fail(err, KILN_ERR_IO, 0, "cannot read the earlier release: a damaged archive");
		ret = KILN_ERR_IO;
	}
	if (ret == KILN_ERR_NOMEM)
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
	free(first_top);
	archive_read_free(a);
	if (ret != KILN_OK) {
		kiln_release_free(out);
		return ret;
	}
	strip_top(out);
	return KILN_OK;
}

/* Does REL's base name hold a candidate token? */
static bool has_token(const char *rel)
{
	size_t at = 0, len;

	return kiln_token_next(rel, &at, &len);
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kiln_release_file *)a)->rel,
		      ((const struct kiln_release_file *)b)->rel);
}

/* The directory PATH's files into *OUT. */
static kiln_status read_dir(const char *path, const struct kiln_options *topt, uint64_t max_size,
			    struct kiln_release *out, struct kiln_error *err)
{
	struct kiln_options opt = *topt;
	struct kiln_walk w = { 0 };
	kiln_status st;

	opt.n_include = opt.n_exclude = 0;
	opt.follow_symlinks = false;
	st = kiln_walk(path, &opt, NULL, 0, &w, err);
	if (st == KILN_OK && !(out->v = calloc(w.n + 1, sizeof(*out->v))))
		st = KILN_ERR_NOMEM;
	for (size_t e = 0; st == KILN_OK && e < w.n; e++) {
		if (w.v[e].outcome != KILN_OUTCOME_CANDIDATE || !S_ISREG(w.v[e].st.st_mode) ||
		    (uint64_t)w.v[e].st.st_size > max_size || !has_token(w.v[e].rel))
			continue;
		out->v[out->n] = (struct kiln_release_file){ strdup(w.v[e].rel), NULL,
							     (size_t)w.v[e].st.st_size, false };
		if (!out->v[out->n++].rel)
			st = KILN_ERR_NOMEM;
	}
	if (st == KILN_ERR_NOMEM)
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
	kiln_walk_free(&w);
	return st;
}

/* Mark the files of the directory release OUT (sorted) that its own
 * manifest, when it has one kiln reads, says held other bytes under their
 * name once. */
static void note_changed(const char *path, struct kiln_release *out)
{
	struct kiln_state st = { 0 };
	struct kiln_error err = { 0 };
	char *m = kiln_path_join(path, "kiln-manifest.json", "");

	if (m && kiln_state_load(m, &st, &err) == KILN_OK)
		for (size_t i = 0; i < st.n; i++) {
			struct kiln_release_file *f;
			if (!st.v[i].in_manifest || !st.v[i].rec.fp.changed)
				continue;
			if ((f = (struct kiln_release_file *)kiln_release_find(out, st.v[i].rec.rel)))
				f->changed = true;
		}
	kiln_state_free(&st);
	free(m);
}

kiln_status kiln_release_read(const char *path, const struct kiln_options *opt,
			      uint64_t max_size, struct kiln_release *out, struct kiln_error *err)
{
	struct stat sb;
	kiln_status st;

	memset(out, 0, sizeof(*out));
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		st = kiln_release_read_archive(path, has_token, max_size, out, err);
	else
		st = read_dir(path, opt, max_size, out, err);
	if (st != KILN_OK) {
		kiln_release_free(out);
		return st;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), file_cmp);
	if (!S_ISREG(sb.st_mode))
		note_changed(path, out);
	return KILN_OK;
}

const struct kiln_release_file *kiln_release_find(const struct kiln_release *r, const char *rel)
{
	struct kiln_release_file key = { (char *)rel, NULL, 0, false };

	return r->n ? bsearch(&key, r->v, r->n, sizeof(key), file_cmp) : NULL;
}
