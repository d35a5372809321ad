/*
 * archive_write.c - the output of kiln_run_archive(), once the tree run is
 * done: the list of output entries (every original entry still in the
 * staging tree and not replaced, the siblings kept, the artifacts written),
 * sorted by path, written with archive_write into a temporary file that
 * kiln_tempfile_commit() puts in place.  Also the output formats and their
 * names.
 *
 * Determinism: entries come from the staging tree in bytewise path order,
 * with the metadata kept when reading (never the staging tree's), owners
 * only with aopt->keep_owner, the artifacts dated aopt->mtime or the
 * input's newest mtime, and no timestamp in a gzip header.
 */
#include "archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum out_kind { OUT_ORIGINAL, OUT_SIBLING, OUT_ARTIFACT };

struct out_entry {
	char *key;      /* path in the staging tree; the sort key */
	char *name;     /* entry name in the output */
	const struct item *meta; /* metadata; the source for a sibling; NULL
	                            for an artifact */
	enum out_kind kind;
};

/* ---- what goes into the output ---- */

static int cmp_out(const void *a, const void *b)
{
	return strcmp(((const struct out_entry *)a)->key, ((const struct out_entry *)b)->key);
}

struct out_list {
	struct out_entry *v;
	size_t n, cap;
};

static kiln_status out_add(struct out_list *l, char *key, char *name, const struct item *meta,
			   enum out_kind kind)
{
	if (!key || !name) {
		free(key);
		free(name);
		return KILN_ERR_NOMEM;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct out_entry *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			free(key);
			free(name);
			return KILN_ERR_NOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct out_entry){ key, name, meta, kind };
	return KILN_OK;
}

static void out_free(struct out_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].name);
	}
	free(l->v);
}

static char *tree_join(const struct ctx *c, const char *rel)
{
	return *c->tree ? kiln_arc_cat3(c->tree, "/", rel) : strdup(rel);
}

/* The name prefix of entries kiln adds at the tree's top. */
static char *top_prefix(const struct ctx *c)
{
	size_t t = kiln_arc_find_item(c, c->tree);
	const char *name = t != NONE ? c->items[t].name : c->tree;
	size_t n = strlen(name);

	if (n == 0)
		return strdup("");
	return kiln_arc_cat3(name, name[n - 1] == '/' ? "" : "/", "");
}

/* What goes into the output: every original entry still in the staging
 * tree and not replaced, the siblings kept and the artifacts written. */
static kiln_status list_output(struct ctx *c, struct out_list *l)
{
	struct table kept = { 0 };
	char **kept_keys = calloc(c->nkept + 1, sizeof(char *));
	char *artifacts[sizeof(c->artifacts) / sizeof(c->artifacts[0])] = { NULL };
	char *prefix = top_prefix(c);
	kiln_status ret = KILN_ERR_NOMEM;

	if (!kept_keys || !prefix)
		goto out;
	for (size_t k = 0; k < c->nartifacts; k++)
		if (!(artifacts[k] = tree_join(c, c->artifacts[k])))
			goto out;
	/* the siblings kept, keyed by their staging path */
	for (size_t i = 0; i < c->nkept; i++) {
		const struct kept *kp = &c->kept[i];
		const char *suffix = kp->suffix ? kp->suffix : kiln_coding_suffix((kiln_coding)kp->coding);
		char *rel = tree_join(c, kp->rel);
		const struct item *src, *meta;
		size_t s = rel ? kiln_arc_find_item(c, rel) : NONE;
		if (!rel)
			goto out;
		src = s == NONE ? NULL : &c->items[s];
		meta = src && src->type == ITEM_LINK ? kiln_arc_link_final(c, src) : src;
		if (!src || !meta) { /* cannot happen: kiln only compresses what is there */
			free(rel);
			kiln_arc_report(c, kp->rel, KILN_ERR_INVALID, 0,
					"sibling without a source");
			ret = KILN_ERR_IO;
			goto out;
		}
		kept_keys[i] = kiln_arc_cat3(rel, suffix, "");
		free(rel);
		if (!kept_keys[i] ||
		    out_add(l, strdup(kept_keys[i]), kiln_arc_cat3(src->name, suffix, ""), meta,
			    OUT_SIBLING) != KILN_OK)
			goto out;
	}
	{
		for (size_t i = 0; i < c->nkept; i++)
			if (!kiln_arc_table_add(&kept, i, kiln_arc_string_of, kept_keys))
				goto out;
		for (size_t i = 0; i < c->n; i++) {
			const struct item *it = &c->items[i];
			struct stat st;
			if (kiln_arc_table_find(&kept, it->norm, kiln_arc_string_of, kept_keys) !=
			    NONE)
				continue; /* replaced by kiln's sibling */
			bool artifact = false;
			for (size_t k = 0; k < c->nartifacts; k++)
				artifact |= strcmp(it->norm, artifacts[k]) == 0;
			if (artifact)
				continue; /* rewritten below */
			if (*it->norm && fstatat(c->root_fd, it->norm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
				if (errno == ENOENT)
					continue; /* a stale sibling the run removed */
				kiln_arc_report(c, it->name, KILN_ERR_IO, errno,
						"cannot stat in the staging directory");
				ret = KILN_ERR_IO;
				goto out;
			}
			if (out_add(l, strdup(it->norm), strdup(it->name), it, OUT_ORIGINAL) != KILN_OK)
				goto out;
		}
	}
	for (size_t k = 0; k < c->nartifacts && !c->artifacts_elsewhere; k++)
		if (out_add(l, strdup(artifacts[k]), kiln_arc_cat3(prefix, c->artifacts[k], ""),
			    NULL, OUT_ARTIFACT) != KILN_OK)
			goto out;
	qsort(l->v, l->n, sizeof(*l->v), cmp_out);
	ret = KILN_OK;
out:
	for (size_t i = 0; kept_keys && i < c->nkept; i++)
		free(kept_keys[i]);
	free(kept_keys);
	free(kept.slot);
	for (size_t k = 0; k < c->nartifacts; k++)
		free(artifacts[k]);
	free(prefix);
	return ret;
}

/* ---- formats ---- */

static const char *const format_names[] = {
	[KILN_ARCHIVE_AUTO] = "auto",       [KILN_ARCHIVE_TAR] = "tar",
	[KILN_ARCHIVE_TAR_GZ] = "tar.gz",   [KILN_ARCHIVE_TAR_ZST] = "tar.zst",
	[KILN_ARCHIVE_TAR_XZ] = "tar.xz",   [KILN_ARCHIVE_ZIP] = "zip",
};

const char *kiln_archive_format_name(kiln_archive_format f)
{
	return (unsigned)f < sizeof(format_names) / sizeof(format_names[0]) ? format_names[f] : "auto";
}

kiln_archive_format kiln_archive_format_from_name(const char *path)
{
	static const struct {
		const char *suffix;
		kiln_archive_format format;
	} suffixes[] = {
		{ ".tar", KILN_ARCHIVE_TAR },         { ".tar.gz", KILN_ARCHIVE_TAR_GZ },
		{ ".tgz", KILN_ARCHIVE_TAR_GZ },      { ".tar.zst", KILN_ARCHIVE_TAR_ZST },
		{ ".tzst", KILN_ARCHIVE_TAR_ZST },    { ".tar.xz", KILN_ARCHIVE_TAR_XZ },
		{ ".txz", KILN_ARCHIVE_TAR_XZ },      { ".zip", KILN_ARCHIVE_ZIP },
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i].suffix);
		if (n > k && strcmp(path + n - k, suffixes[i].suffix) == 0)
			return suffixes[i].format;
	}
	return KILN_ARCHIVE_AUTO;
}

/* ---- writing ---- */

/* A writer for FORMAT onto FD, set up to write the same bytes every time. */
static struct archive *new_writer(kiln_archive_format format)
{
	struct archive *a = archive_write_new();
	int r = ARCHIVE_OK;

	if (!a)
		return NULL;
	if (format == KILN_ARCHIVE_ZIP) {
		r = archive_write_set_format_zip(a);
	} else {
		/* ustar headers, pax records only for what ustar cannot hold */
		r = archive_write_set_format_pax_restricted(a);
		if (r == ARCHIVE_OK && format == KILN_ARCHIVE_TAR_GZ) {
			r = archive_write_add_filter_gzip(a);
			/* MTIME 0 in the gzip header, not the current time */
			if (r == ARCHIVE_OK)
				r = archive_write_set_filter_option(a, "gzip", "timestamp", NULL);
		} else if (r == ARCHIVE_OK && format == KILN_ARCHIVE_TAR_ZST) {
			r = archive_write_add_filter_zstd(a);
		} else if (r == ARCHIVE_OK && format == KILN_ARCHIVE_TAR_XZ) {
			r = archive_write_add_filter_xz(a);
		}
	}
	if (r < ARCHIVE_WARN) {
		archive_write_free(a);
		return NULL;
	}
	return a;
}

/* Report that writing to the writer A failed, with libarchive's errno and
 * message. */
static void write_failed(struct ctx *c, struct archive *a)
{
	int e = archive_errno(a);

	kiln_arc_report_output(c, KILN_ERR_IO, e > 0 ? e : 0, kiln_arc_msg(c, a, "cannot write"));
}

/* Write one output entry E (at index K of the sorted list L). */
static kiln_status write_entry(struct ctx *c, struct archive *a, struct archive_entry *ae,
			       const struct out_list *l, size_t k, int64_t fixed_mtime)
{
	const struct out_entry *e = &l->v[k];
	const struct item *m = e->meta;
	const char *hardlink = NULL;
	kiln_status ret = KILN_OK;
	int fd = -1;

	archive_entry_clear(ae);
	archive_entry_copy_pathname(ae, e->name);
	if (e->kind == OUT_ARTIFACT) {
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_perm(ae, 0644);
		archive_entry_set_mtime(ae, (time_t)fixed_mtime, 0);
	} else {
		archive_entry_set_filetype(ae, e->kind == OUT_SIBLING || m->type == ITEM_FILE ? AE_IFREG
					       : m->type == ITEM_DIR		     ? AE_IFDIR
										     : AE_IFLNK);
		archive_entry_set_perm(ae, e->kind == OUT_SIBLING ? m->mode & 0777 : m->mode);
		archive_entry_set_mtime(ae, (time_t)m->mtime, m->mtime_ns);
		if (c->aopt->keep_owner) {
			archive_entry_set_uid(ae, m->uid);
			archive_entry_set_gid(ae, m->gid);
			if (m->uname)
				archive_entry_copy_uname(ae, m->uname);
			if (m->gname)
				archive_entry_copy_gname(ae, m->gname);
		}
	}
	if (e->kind == OUT_ORIGINAL && m->type == ITEM_LINK)
		archive_entry_copy_symlink(ae, m->link);
	if (e->kind == OUT_ORIGINAL && m->type == ITEM_FILE && c->format != KILN_ARCHIVE_ZIP) {
		size_t g = m->hardlink ? kiln_arc_find_item(c, m->hardlink)
				       : (size_t)(m - c->items);
		if (g != NONE && c->items[g].leader != k)
			hardlink = l->v[c->items[g].leader].name;
	}
	if (hardlink) {
		archive_entry_copy_hardlink(ae, hardlink);
		archive_entry_set_size(ae, 0);
	} else if (archive_entry_filetype(ae) == AE_IFREG) {
		struct stat st;
		fd = openat(c->root_fd, e->key, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0) {
			kiln_arc_report(c, e->name, KILN_ERR_IO, errno,
					"cannot read from the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		archive_entry_set_size(ae, st.st_size);
	}
	if (archive_write_header(a, ae) < ARCHIVE_WARN) {
		write_failed(c, a);
		ret = KILN_ERR_IO;
		goto out;
	}
	for (ssize_t n; fd >= 0 && (n = read(fd, c->buf, BLOCK_SIZE)) != 0;) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			kiln_arc_report(c, e->name, KILN_ERR_IO, errno,
					"cannot read from the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		if (archive_write_data(a, c->buf, (size_t)n) != n) {
			write_failed(c, a);
			ret = KILN_ERR_IO;
			goto out;
		}
		if (atomic_load(&c->run->cancelled)) {
			ret = KILN_ERR_CANCELLED;
			goto out;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The mode OUTPUT gets: that of the file it replaces, else 0644. */
static mode_t output_mode(const struct stat *old)
{
	return old ? old->st_mode & 07777 : 0644;
}

kiln_status kiln_arc_write_output(struct ctx *c)
{
	struct out_list l = { 0 };
	struct archive *a = NULL;
	struct archive_entry *ae = NULL;
	struct kiln_tempfile tf = { .fd = -1 };
	struct kiln_file_meta meta = { .fsync = true }; /* exists whole or not at all */
	struct kiln_error err;
	struct stat old;
	int64_t fixed = 0;
	kiln_status ret;

	if ((ret = list_output(c, &l)) != KILN_OK)
		goto out;
	if (c->aopt->mtime_set) {
		fixed = c->aopt->mtime;
	} else {
		for (size_t i = 0; i < c->n; i++)
			if (c->items[i].mtime > fixed)
				fixed = c->items[i].mtime;
	}
	/* the first entry of a hard-linked group, in output order, has the data */
	for (size_t k = 0; k < l.n; k++) {
		const struct item *m = l.v[k].meta;
		size_t g;
		if (l.v[k].kind != OUT_ORIGINAL || m->type != ITEM_FILE)
			continue;
		g = m->hardlink ? kiln_arc_find_item(c, m->hardlink) : (size_t)(m - c->items);
		if (g != NONE && c->items[g].leader == NONE)
			c->items[g].leader = k;
	}
	meta.mode = output_mode(lstat(c->output, &old) == 0 && S_ISREG(old.st_mode) ? &old : NULL);
	if ((ret = kiln_tempfile_create(c->temps, &tf, c->output, &meta, &err)) != KILN_OK) {
		if (ret != KILN_ERR_CANCELLED)
			kiln_arc_report_output(c, ret, err.errnum, err.what);
		goto out;
	}
	a = new_writer(c->format);
	ae = archive_entry_new();
	if (!a || !ae) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (archive_write_open_fd(a, tf.fd) != ARCHIVE_OK) {
		kiln_arc_report_output(c, KILN_ERR_IO, 0, kiln_arc_msg(c, a, "cannot write"));
		ret = KILN_ERR_IO;
		goto out;
	}
	for (size_t k = 0; k < l.n && ret == KILN_OK; k++)
		ret = write_entry(c, a, ae, &l, k, fixed);
	if (ret != KILN_OK)
		goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		write_failed(c, a);
		ret = KILN_ERR_IO;
		goto out;
	}
	if ((ret = kiln_tempfile_commit(&tf, c->output, &meta, &err)) != KILN_OK) {
		if (ret != KILN_ERR_CANCELLED)
			kiln_arc_report_output(c, ret, err.errnum, err.what);
		goto out;
	}
	if (c->run->cb.on_artifact)
		c->run->cb.on_artifact(c->run->cb.user, "archive", c->output, NULL);
out:
	if (a)
		archive_write_free(a); /* closes nothing of ours: the fd is the tempfile's */
	archive_entry_free(ae);
	kiln_tempfile_discard(&tf);
	out_free(&l);
	return ret;
}
