/*
 * archive_stage.c - the staging tree of kiln_run_archive(): each entry of
 * the input validated and created in a private directory, then the tree
 * chosen and the input's links resolved against its own entries.
 *
 * Safety.  Names are normalised and refused when absolute or holding "..".
 * Every parent directory is opened from the staging root with O_NOFOLLOW,
 * so an entry below a link entry fails instead of landing elsewhere; files
 * are created with O_EXCL; links are created, never followed, and their
 * targets are resolved against the input's own entries before the tree
 * run.  Staged files are 0600 and directories 0700 whatever the input says:
 * the input's modes only ever reach the output archive.  An archive's data
 * counts against the expansion limits as it is read, holes included.
 */
#include "archive_int.h"

#include "classify.h"

#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINK_HOPS 40 /* as the kernel's MAXSYMLINKS */

/* ---- the staging directory, under the temps lock ---- */

/* Everything created inside the staging directory is created holding the
 * registry's lock (so that a shutdown from the signal thread removes all
 * of it) and only before a cancel. */
static bool begin_create(struct ctx *c)
{
	if (atomic_load(&c->run->cancelled) || !kiln_temps_hold(c->temps)) {
		errno = ECANCELED;
		return false;
	}
	return true;
}

static void end_create(struct ctx *c)
{
	kiln_temps_release(c->temps);
}

/* The directory part of PATH, malloc'ed ("" for none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup("");
}

/* Make the staging directory in OUTPUT's directory. */
kiln_status kiln_arc_make_stage(struct ctx *c)
{
	struct kiln_error err;
	char *dir = dir_of(c->output);
	kiln_status st;

	if (!dir)
		return KILN_ERR_NOMEM;
	st = kiln_tempdir_create(c->temps, &c->stage, dir, ".kiln-stage-", &err);
	free(dir);
	if (st != KILN_OK) {
		if (st != KILN_ERR_CANCELLED)
			kiln_arc_report_output(c, st, err.errnum,
					       "cannot create staging directory");
		return st;
	}
	c->root_fd = open(c->stage.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->root_fd < 0) {
		kiln_arc_report_output(c, KILN_ERR_IO, errno, "cannot open staging directory");
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

void kiln_arc_drop_stage(struct ctx *c)
{
	if (c->root_fd >= 0)
		close(c->root_fd);
	c->root_fd = -1;
	kiln_tempdir_remove(&c->stage);
}

/*
 * Open the staging directory that holds NORM, creating missing directories
 * when CREATE, never through a link.  *BASE is set to NORM's last
 * component.  Returns a descriptor, or -1 with errno set.
 */
static int open_parent(struct ctx *c, const char *norm, const char **base, bool create)
{
	const char *s = norm, *slash;
	char comp[NAME_MAX + 1];
	int fd = dup(c->root_fd), nfd;

	while (fd >= 0 && (slash = strchr(s, '/')) != NULL) {
		size_t k = (size_t)(slash - s);
		if (k > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, s, k);
		comp[k] = '\0';
		if (create) {
			int r, e;
			if (!begin_create(c)) {
				close(fd);
				return -1;
			}
			r = mkdirat(fd, comp, 0700);
			e = errno;
			end_create(c);
			if (r != 0 && e != EEXIST) {
				close(fd);
				errno = e;
				return -1;
			}
		}
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
		s = slash + 1;
	}
	*base = s;
	return fd;
}

/* ---- one entry ---- */

/*
 * Normalise NAME: drop empty and "." components.  Returns NULL with *OUT
 * malloc'ed ("" for the root), or a static reason to refuse NAME (*OUT
 * NULL; "out of memory" when that is the reason).
 */
const char *kiln_arc_normalise(const char *name, char **out)
{
	size_t len = 0, n = strlen(name);
	const char *s = name;
	char *o;

	*out = NULL;
	if (n == 0)
		return "empty name, refused";
	if (name[0] == '/')
		return "absolute path, refused";
	if (!(o = malloc(n + 1)))
		return "out of memory";
	while (*s) {
		const char *e = strchr(s, '/');
		size_t k = e ? (size_t)(e - s) : strlen(s);
		if (k == 2 && s[0] == '.' && s[1] == '.') {
			free(o);
			return "'..' in the path, refused";
		}
		if (k && !(k == 1 && s[0] == '.')) {
			if (len)
				o[len++] = '/';
			memcpy(o + len, s, k);
			len += k;
		}
		s += k;
		if (*s)
			s++;
	}
	o[len] = '\0';
	*out = o;
	return NULL;
}

/* Count N more expanded bytes against the limits.  Returns NULL or why the
 * input is refused. */
static const char *count_expanded(struct ctx *c, const struct data_source *src, uint64_t n)
{
	const struct kiln_archive_options *ao = c->aopt;

	c->expanded += n;
	if (!src->a)
		return NULL;
	if (ao->max_expanded_size && c->expanded > ao->max_expanded_size)
		return "archive expands beyond --max-expanded-size, refused";
	if (ao->max_expansion_ratio > 0 && c->expanded > KILN_ARCHIVE_RATIO_FLOOR) {
		int64_t packed = archive_filter_bytes(src->a, -1);
		if ((double)c->expanded > ao->max_expansion_ratio * (double)(packed > 0 ? packed : 1))
			return "archive expands more than --max-expansion-ratio, refused";
	}
	return NULL;
}

static int write_all(int fd, const void *p, size_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p = (const char *)p + n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Stream the data of SRC into FD (-1: read and discard it).  NAME is for
 * messages.  SIZE is the size the entry announces (-1 if unknown). */
static kiln_status stage_data(struct ctx *c, const char *name, int fd,
			      const struct data_source *src, int64_t size)
{
	uint64_t max = c->run->opt.max_file_size;
	int64_t end = 0;
	const char *why;

	for (;;) {
		const void *buf;
		size_t len;
		int64_t off;
		if (atomic_load(&c->run->cancelled))
			return KILN_ERR_CANCELLED;
		if (src->a) {
			int r = archive_read_data_block(src->a, &buf, &len, &off);
			if (r == ARCHIVE_EOF)
				break;
			if (r < ARCHIVE_WARN) {
				kiln_arc_report(c, name, KILN_ERR_IO, 0,
						kiln_arc_msg(c, src->a, "cannot read entry"));
				return KILN_ERR_IO;
			}
		} else {
			ssize_t n = read(src->fd, c->buf, BLOCK_SIZE);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				kiln_arc_report(c, name, KILN_ERR_IO, errno, "cannot read");
				return KILN_ERR_IO;
			}
			if (n == 0)
				break;
			buf = c->buf;
			len = (size_t)n;
			off = end;
		}
		if (off < 0 || len > INT64_MAX - (uint64_t)off) {
			kiln_arc_report(c, name, KILN_ERR_INVALID, 0, "bad data offset, refused");
			return KILN_ERR_UNSAFE;
		}
		if (max && (uint64_t)off + len > max) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, EFBIG,
					"larger than --max-file-size, refused");
			return KILN_ERR_UNSAFE;
		}
		/* a hole before this block expands as much as data does: a sparse
		 * entry must not slip past the limits */
		if ((why = count_expanded(c, src, len + (off > end ? (uint64_t)(off - end) : 0))) != NULL) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, why);
			return KILN_ERR_UNSAFE;
		}
		if (fd >= 0 && write_all(fd, buf, len, off) != 0) {
			kiln_arc_report(c, name, KILN_ERR_IO, errno,
					"cannot write to the staging directory");
			return KILN_ERR_IO;
		}
		if (off + (int64_t)len > end)
			end = off + (int64_t)len;
	}
	/* a sparse entry may end in a hole, which counts too */
	if (size > end && (why = count_expanded(c, src, (uint64_t)(size - end))) != NULL) {
		kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, why);
		return KILN_ERR_UNSAFE;
	}
	if (fd >= 0 && size > end && ftruncate(fd, (off_t)size) != 0) {
		kiln_arc_report(c, name, KILN_ERR_IO, errno,
				"cannot write to the staging directory");
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

/* A hard link names the inode of its target: like tar, which only links
 * it, give *IT the target T's mode, mtime and owner whatever its own
 * header says. */
static kiln_status take_inode_meta(struct item *it, const struct item *t)
{
	char *uname = t->uname ? strdup(t->uname) : NULL;
	char *gname = t->gname ? strdup(t->gname) : NULL;

	if ((t->uname && !uname) || (t->gname && !gname)) {
		free(uname);
		free(gname);
		return KILN_ERR_NOMEM;
	}
	free(it->uname);
	free(it->gname);
	it->uname = uname;
	it->gname = gname;
	it->mode = t->mode;
	it->mtime = t->mtime;
	it->mtime_ns = t->mtime_ns;
	it->uid = t->uid;
	it->gid = t->gid;
	return KILN_OK;
}

/*
 * Validate the entry *IT (name, norm and metadata filled in) and create it
 * in the staging tree: a directory, a link to IT->link, a hard link to the
 * entry named HARDLINK (as the input names it), or a file with the data of
 * SRC (SIZE bytes, -1 if unknown).  NAME names the entry in messages.
 * Takes the strings of *IT in every case.
 */
kiln_status kiln_arc_stage_entry(struct ctx *c, const char *name, struct item *it,
				 const char *hardlink, const struct data_source *src, int64_t size)
{
	uint64_t max = c->run->opt.max_file_size;
	kiln_status ret = KILN_ERR_UNSAFE;
	const char *base, *why;
	int pfd = -1, fd = -1, r, e;

	if (c->n >= c->aopt->max_entries && c->aopt->max_entries) {
		kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
				"more entries than the limit, refused");
		goto out;
	}
	if (kiln_arc_find_item(c, it->norm) != NONE) {
		kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, "duplicate entry, refused");
		goto out;
	}
	{
		/* a killed run's temporary file: litter, never shipped (the tree
		 * run would drop it only once 2 s old: not deterministic) */
		const char *slash = strrchr(it->norm, '/');
		if (it->type == ITEM_FILE && !hardlink && kiln_is_temp_name(slash ? slash + 1 : it->norm)) {
			/* its data still counts against the limits */
			ret = src && src->a ? stage_data(c, name, -1, src, size) : KILN_OK;
			goto out;
		}
	}
	if (!*it->norm) { /* the root itself: only its metadata */
		if (it->type != ITEM_DIR || hardlink) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
					"the root is not a directory, refused");
			goto out;
		}
		ret = kiln_arc_push_item(c, it);
		goto out;
	}
	if (max && size > 0 && (uint64_t)size > max && !hardlink) {
		kiln_arc_report(c, name, KILN_ERR_UNSAFE, EFBIG,
				"larger than --max-file-size, refused");
		goto out;
	}
	if (hardlink) {
		char *target;
		size_t t;
		if ((why = kiln_arc_normalise(hardlink, &target)) != NULL) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
					strcmp(why, "out of memory") == 0
						? why
						: "hard link target outside the tree, refused");
			ret = strcmp(why, "out of memory") == 0 ? KILN_ERR_NOMEM : KILN_ERR_UNSAFE;
			goto out;
		}
		t = kiln_arc_find_item(c, target);
		free(target);
		if (t == NONE || c->items[t].type != ITEM_FILE) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
					t == NONE ? "hard link to an entry not in the input, refused"
						  : "hard link to a directory or link, refused");
			goto out;
		}
		it->hardlink = strdup(c->items[t].hardlink ? c->items[t].hardlink : c->items[t].norm);
		if (!it->hardlink || take_inode_meta(it, &c->items[t]) != KILN_OK) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		it->type = ITEM_FILE;
	}

	pfd = open_parent(c, it->norm, &base, true);
	if (pfd < 0) {
		e = errno;
		if (e == ECANCELED) {
			ret = KILN_ERR_CANCELLED;
		} else if (e == ELOOP || e == ENOTDIR) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, "below a link or a file, refused");
		} else {
			kiln_arc_report(c, name, KILN_ERR_IO, e, "cannot create in the staging directory");
			ret = KILN_ERR_IO;
		}
		goto out;
	}
	if (!begin_create(c)) {
		ret = KILN_ERR_CANCELLED;
		goto out;
	}
	switch (it->type) {
	case ITEM_DIR:
		r = mkdirat(pfd, base, 0700);
		if (r != 0 && errno == EEXIST) {
			/* made earlier as the parent of another entry */
			struct stat st;
			r = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
			errno = EEXIST;
		}
		break;
	case ITEM_LINK:
		r = symlinkat(it->link, pfd, base);
		break;
	default:
		if (it->hardlink) {
			const char *tbase;
			int tfd = open_parent(c, it->hardlink, &tbase, false);
			r = tfd < 0 ? -1 : linkat(tfd, tbase, pfd, base, 0);
			e = errno;
			if (tfd >= 0)
				close(tfd);
			errno = e;
			if (r == 0 && size > 0) /* cpio: the last link carries the data */
				r = fd = openat(pfd, base, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
		} else {
			r = fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		}
		break;
	}
	e = errno;
	end_create(c);
	if (r < 0) {
		if (e == EEXIST) {
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0, "duplicate entry, refused");
		} else {
			kiln_arc_report(c, name, KILN_ERR_IO, e, "cannot create in the staging directory");
			ret = KILN_ERR_IO;
		}
		goto out;
	}
	if (fd >= 0) {
		ret = stage_data(c, name, fd, src, size);
		if (ret != KILN_OK)
			goto out;
		if (close(fd) != 0) {
			fd = -1;
			kiln_arc_report(c, name, KILN_ERR_IO, errno,
					"cannot write to the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		fd = -1;
	}
	ret = kiln_arc_push_item(c, it);
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	kiln_arc_item_free(it);
	return ret;
}

/* ---- hard links of a directory input ---- */

/* Directory input: the hard link key of a file with several links. */
kiln_status kiln_arc_note_inode(struct ctx *c, const struct stat *st, char **hardlink_of)
{
	char key[64];
	size_t i;

	*hardlink_of = NULL;
	if (st->st_nlink < 2)
		return KILN_OK;
	snprintf(key, sizeof(key), "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	i = kiln_arc_table_find(&c->byino, key, kiln_arc_string_of, c->inokeys);
	if (i != NONE) {
		/* a name, as the input names it, that resolves to the first one */
		const struct item *first = &c->items[c->inoitem[i]];
		*hardlink_of = strdup(first->norm);
		return *hardlink_of ? KILN_OK : KILN_ERR_NOMEM;
	}
	if (c->ninokeys == c->capinokeys) {
		size_t cap = c->capinokeys ? c->capinokeys * 2 : 64;
		char **k = realloc(c->inokeys, cap * sizeof(*k));
		size_t *v;
		if (!k)
			return KILN_ERR_NOMEM;
		c->inokeys = k;
		if (!(v = realloc(c->inoitem, cap * sizeof(*v))))
			return KILN_ERR_NOMEM;
		c->inoitem = v;
		c->capinokeys = cap;
	}
	if (!(c->inokeys[c->ninokeys] = strdup(key)))
		return KILN_ERR_NOMEM;
	c->inoitem[c->ninokeys] = c->n; /* the item about to be pushed */
	if (!kiln_arc_table_add(&c->byino, c->ninokeys, kiln_arc_string_of, c->inokeys)) {
		free(c->inokeys[c->ninokeys]);
		return KILN_ERR_NOMEM;
	}
	c->ninokeys++;
	return KILN_OK;
}

/* ---- the tree and its links, once every entry is staged ---- */

/* Is NORM the tree TREE or below it? */
static bool within(const char *norm, const char *tree)
{
	size_t n = strlen(tree);

	return n == 0 || (strncmp(norm, tree, n) == 0 && (norm[n] == '\0' || norm[n] == '/'));
}

/*
 * Resolve the link IT through the input's own links, as the kernel would
 * once extracted.  *INSIDE: it stays inside the tree at every step (an
 * absolute target or a loop does not).  *FINAL (if FINAL is non-NULL and
 * *INSIDE): the path it ends at, malloc'ed.
 */
static kiln_status resolve_link(const struct ctx *c, const struct item *it, bool *inside,
				char **final)
{
	const char *slash = strrchr(it->norm, '/');
	size_t cap = strlen(it->norm) + strlen(it->link) + 2, len, hops = 0;
	char *cur = malloc(cap), *rest = strdup(it->link), *r;

	*inside = false;
	if (!cur || !rest) {
		free(cur);
		free(rest);
		return KILN_ERR_NOMEM;
	}
	len = slash ? (size_t)(slash - it->norm) : 0;
	memcpy(cur, it->norm, len);
	cur[len] = '\0';
	if (rest[0] == '/')
		goto out;
	r = rest;
	while (*r) {
		char *e = strchr(r, '/');
		size_t k = e ? (size_t)(e - r) : strlen(r), i;
		char *next = e ? e + 1 : r + k;
		if (k == 0 || (k == 1 && r[0] == '.')) {
			r = next;
			continue;
		}
		if (k == 2 && r[0] == '.' && r[1] == '.') {
			char *up;
			if (len == 0)
				goto out; /* above the input's root */
			up = strrchr(cur, '/');
			len = up ? (size_t)(up - cur) : 0;
			cur[len] = '\0';
			if (!within(cur, c->tree))
				goto out;
			r = next;
			continue;
		}
		if (len + k + 2 > cap) {
			char *v = realloc(cur, cap = 2 * (len + k + 2));
			if (!v)
				goto nomem;
			cur = v;
		}
		size_t old = len;
		if (len)
			cur[len++] = '/';
		memcpy(cur + len, r, k);
		len += k;
		cur[len] = '\0';
		i = kiln_arc_find_item(c, cur);
		if (i != NONE && c->items[i].type == ITEM_LINK) {
			const char *t = c->items[i].link;
			char *v;
			if (++hops > MAX_LINK_HOPS || t[0] == '/')
				goto out;
			len = old;
			cur[len] = '\0';
			v = kiln_arc_cat3(t, "/", next);
			if (!v)
				goto nomem;
			free(rest);
			rest = r = v;
			if (cap < len + strlen(rest) + 2) {
				char *w = realloc(cur, cap = len + strlen(rest) + 2);
				if (!w)
					goto nomem;
				cur = w;
			}
			continue;
		}
		r = next;
	}
	*inside = within(cur, c->tree);
	if (*inside && final) {
		*final = cur;
		cur = NULL;
	}
out:
	free(cur);
	free(rest);
	return KILN_OK;
nomem:
	free(cur);
	free(rest);
	return KILN_ERR_NOMEM;
}

/* The tree: the input's root, or its one top-level directory when every
 * entry lies below it. */
kiln_status kiln_arc_choose_tree(struct ctx *c)
{
	const char *first = c->n ? c->items[0].norm : "";
	size_t k = strcspn(first, "/"), d;
	bool single = c->n > 0 && *first;

	for (size_t i = 0; i < c->n && single; i++) {
		const char *p = c->items[i].norm;
		single = strncmp(p, first, k) == 0 && (p[k] == '\0' || p[k] == '/');
	}
	if (single) {
		char *top = strndup(first, k);
		if (!top)
			return KILN_ERR_NOMEM;
		d = kiln_arc_find_item(c, top);
		if (d == NONE || c->items[d].type == ITEM_DIR) {
			c->tree = top;
			return KILN_OK;
		}
		free(top);
	}
	c->tree = strdup("");
	return c->tree ? KILN_OK : KILN_ERR_NOMEM;
}

kiln_status kiln_arc_check_links(struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		bool inside;
		if (c->items[i].type != ITEM_LINK)
			continue;
		if (resolve_link(c, &c->items[i], &inside, NULL) != KILN_OK)
			return KILN_ERR_NOMEM;
		if (!inside) {
			const char *name = c->is_dir ? c->items[i].norm + strlen(c->tree) +
							       (*c->tree ? 1 : 0)
						     : c->items[i].name;
			kiln_arc_report(c, name, KILN_ERR_UNSAFE, 0,
					"symbolic link points outside the tree, refused");
			return KILN_ERR_UNSAFE;
		}
	}
	return KILN_OK;
}

/* The item a link (checked by kiln_arc_check_links()) resolves to, or NULL. */
const struct item *kiln_arc_link_final(const struct ctx *c, const struct item *it)
{
	char *final = NULL;
	bool inside;
	size_t i;

	if (resolve_link(c, it, &inside, &final) != KILN_OK || !inside)
		return NULL;
	i = kiln_arc_find_item(c, final);
	free(final);
	return i == NONE || c->items[i].type != ITEM_FILE ? NULL : &c->items[i];
}
