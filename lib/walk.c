/*
 * walk.c - depth-first listing of a tree with openat(2)/fdopendir(3).
 *
 * Each directory is read whole, its names sorted bytewise, so the listing
 * does not depend on the filesystem's readdir order.  Knowing every name of a
 * directory also answers "is app.js.gz the sibling of an app.js?" with a
 * binary search instead of another stat.
 *
 * Symbolic links are not followed unless asked.  When they are, a link must
 * resolve inside the root (checked on its realpath); a link to a file gets
 * its sibling next to the link, and a link to a directory is not descended
 * (its target, inside the tree, is walked at its own path).  A directory
 * met again on the current path (a bind mount loop) is an error.
 */
#include "walk.h"

#include "beneath.h"

#include "classify.h"
#include "codec.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ancestor {
	dev_t dev;
	ino_t ino;
	const struct ancestor *up;
};

struct walker {
	const char *root;
	const char *root_real; /* realpath of root, for the inside-the-tree check */
	const struct kiln_options *opt;
	const struct stat *own;
	size_t nown;
	struct kiln_walk *out;
	/* opt->cache_dir, when it is there: inside the tree it is kiln's
	 * (cache.h), never walked */
	struct stat cache;
	bool has_cache;
};

/* The entries' paths are copied into chunks of this size (a longer one
 * gets a chunk of its own): a few allocations for a tree, not one a file. */
#define NAMES_CHUNK 65536

struct kiln_walk_chunk {
	struct kiln_walk_chunk *next;
	size_t used, size;
	char data[];
};

/* A copy of REL in W's chunks, or NULL when out of memory. */
static char *keep_name(struct kiln_walk *w, const char *rel)
{
	size_t len = strlen(rel) + 1;
	struct kiln_walk_chunk *c = w->names;
	char *copy;

	if (!c || c->size - c->used < len) {
		size_t size = len > NAMES_CHUNK ? len : NAMES_CHUNK;
		if (!(c = malloc(sizeof(*c) + size)))
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = w->names;
		w->names = c;
	}
	copy = c->data + c->used;
	memcpy(copy, rel, len);
	c->used += len;
	return copy;
}

static struct kiln_entry *push(struct kiln_walk *w, const char *rel, const struct stat *st)
{
	struct kiln_entry *e;

	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct kiln_entry *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		w->v = v;
		w->cap = cap;
	}
	e = &w->v[w->n];
	memset(e, 0, sizeof(*e));
	e->rel = keep_name(w, rel);
	if (!e->rel)
		return NULL;
	if (st)
		e->st = kiln_stat_of(st);
	e->outcome = KILN_OUTCOME_CANDIDATE;
	w->n++;
	return e;
}

static void set_error(struct kiln_entry *e, kiln_status st, int errnum, const char *what)
{
	e->outcome = KILN_OUTCOME_ERROR;
	kiln_fail(&e->err, st, errnum, what);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_name(char **names, size_t n, const char *name)
{
	return bsearch(&name, names, n, sizeof(*names), cmp_names) != NULL;
}

/* Is REL excluded by the globs?  Every glob is tried, so that the walk can
 * tell which matched no file at all (a mistyped glob). */
static bool excluded(const struct kiln_options *opt, const char *rel, bool *used)
{
	bool included = opt->n_include == 0, out = false;

	for (size_t i = 0; i < opt->n_include; i++)
		if (kiln_glob_match(opt->include[i], rel))
			included = used[i] = true;
	for (size_t i = 0; i < opt->n_exclude; i++)
		if (kiln_glob_match(opt->exclude[i], rel))
			out = used[opt->n_include + i] = true;
	return out || !included;
}

/* Is the file at PATH, once all links are resolved, inside the root?
 * *OWN_NAME: its final name is one of kiln's own outputs. */
static bool inside_root(const struct walker *wk, const char *path, bool *own_name)
{
	char *real = realpath(path, NULL), *base;
	size_t n = strlen(wk->root_real);
	bool ok;

	*own_name = false;
	if (!real)
		return false;
	ok = strncmp(real, wk->root_real, n) == 0 &&
	     (real[n] == '/' || real[n] == '\0' || (n == 1 && wk->root_real[0] == '/'));
	base = strrchr(real, '/');
	*own_name = kiln_is_own_output(base ? base + 1 : real);
	free(real);
	return ok;
}

/* Is ST one of kiln's artifacts written under another name? */
static bool is_own(const struct walker *wk, const struct stat *st)
{
	for (size_t i = 0; i < wk->nown; i++)
		if (wk->own[i].st_dev == st->st_dev && wk->own[i].st_ino == st->st_ino)
			return true;
	return false;
}

static bool on_path(const struct ancestor *a, const struct stat *st)
{
	for (; a; a = a->up)
		if (a->dev == st->st_dev && a->ino == st->st_ino)
			return true;
	return false;
}

static kiln_status walk_dir(struct walker *wk, int dfd, const char *rel,
			    const struct ancestor *up, bool follow);

/* Link each entry of a directory to the entries named like its siblings:
 * NAMES sorted, AT[i] the entry of NAMES[i] (SIZE_MAX: none, a
 * directory).  A name's siblings follow it among the names that start
 * with it. */
static void link_siblings(struct kiln_walk *w, char **names, const size_t *at, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		if (at[i] == SIZE_MAX)
			continue;
		for (size_t j = i + 1; j < n && strncmp(names[j], names[i], len) == 0; j++)
			for (unsigned c = 0; c < kiln_ncodecs; c++)
				if (strcmp(names[j] + len, kiln_codecs[c]->info.suffix) == 0)
					w->v[at[i]].sib[c] = at[j] < UINT32_MAX - 1
								     ? (uint32_t)at[j] + 1
								     : KILN_SIB_NOT_ENTRY;
	}
}

/* Decide one name of a directory; *PUSHED gets the index of its entry
 * (SIZE_MAX for a directory).  Returns KILN_ERR_NOMEM or KILN_OK. */
static kiln_status visit(struct walker *wk, int dfd, const char *rel_dir, char **names,
			 size_t n, const char *name, const struct ancestor *up, size_t *pushed)
{
	struct kiln_entry *e;
	struct stat st;
	size_t rlen = strlen(rel_dir), blen;
	char *rel = malloc(rlen + strlen(name) + 2);
	kiln_status ret = KILN_OK;

	if (!rel)
		return KILN_ERR_NOMEM;
	if (rlen)
		memcpy(rel, rel_dir, rlen), rel[rlen++] = '/';
	strcpy(rel + rlen, name);

	*pushed = SIZE_MAX;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		int err = errno;
		*pushed = wk->out->n;
		if (!(e = push(wk->out, rel, NULL)))
			goto nomem;
		set_error(e, KILN_ERR_IO, err, "cannot stat");
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!(wk->has_cache && st.st_dev == wk->cache.st_dev && st.st_ino == wk->cache.st_ino))
			ret = walk_dir(wk, dfd, rel, up, false);
		goto out;
	}
	*pushed = wk->out->n;
	if (!(e = push(wk->out, rel, &st)))
		goto nomem;

	blen = kiln_sibling_base_len(name);
	/* at any depth: a run over a subdirectory leaves its own there */
	if (kiln_is_own_output(name) && !S_ISLNK(st.st_mode)) {
		e->outcome = KILN_OUTCOME_SIBLING;
		goto out;
	}
	if (is_own(wk, &st)) {
		e->outcome = KILN_OUTCOME_SIBLING;
		goto out;
	}
	/* NAME.<id>.dcz is kiln's whether or not NAME is there (dict.h) */
	if (kiln_dict_sibling_base_len(name)) {
		e->outcome = KILN_OUTCOME_SIBLING;
		goto out;
	}
	if (blen) {
		char *base = strndup(name, blen);
		bool sib;
		if (!base)
			goto nomem;
		sib = has_name(names, n, base);
		free(base);
		if (sib) {
			e->outcome = KILN_OUTCOME_SIBLING;
			goto out;
		}
	}
	if (excluded(wk->opt, rel, wk->out->glob_used)) {
		e->outcome = KILN_OUTCOME_EXCLUDED;
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		struct stat tst;
		char *full;
		if (!wk->opt->follow_symlinks) {
			e->outcome = KILN_OUTCOME_SYMLINK;
			goto out;
		}
		if (fstatat(dfd, name, &tst, 0) != 0) {
			set_error(e, KILN_ERR_IO, errno,
				  errno == ELOOP ? "symbolic link loop" : "dangling symbolic link");
			goto out;
		}
		full = malloc(strlen(wk->root) + strlen(rel) + 2);
		if (!full)
			goto nomem;
		strcpy(full, wk->root);
		strcat(full, "/");
		strcat(full, rel);
		bool own_name, inside = inside_root(wk, full, &own_name);
		free(full);
		if (!inside) {
			set_error(e, KILN_ERR_UNSAFE, 0, "symbolic link points outside the tree");
			goto out;
		}
		/* a link to kiln's own output is not an input either */
		if (own_name || is_own(wk, &tst)) {
			e->outcome = KILN_OUTCOME_SIBLING;
			goto out;
		}
		if (S_ISDIR(tst.st_mode)) {
			/* its target is inside the tree and walked at its own path;
			 * nginx finds X.gz through the link, so descending would only
			 * compress the same files twice and race on the same siblings */
			e->outcome = KILN_OUTCOME_SYMLINK;
			goto out;
		}
		e->st = kiln_stat_of(&tst);
		e->via_link = true;
		st = tst;
	}
	if (!S_ISREG(st.st_mode))
		e->outcome = KILN_OUTCOME_SPECIAL;
out:
	free(rel);
	return ret;
nomem:
	free(rel);
	return KILN_ERR_NOMEM;
}

/* Walk the directory named by REL ("" for the root) relative to PARENT_FD;
 * FOLLOW when it is reached through a symbolic link (or is the root). */
static kiln_status walk_dir(struct walker *wk, int parent_fd, const char *rel,
			    const struct ancestor *up, bool follow)
{
	const char *name = *rel ? strrchr(rel, '/') : NULL;
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK;
	struct ancestor self;
	struct stat st;
	char **names = NULL;
	size_t n = 0, cap = 0, *at = NULL;
	kiln_status ret = KILN_OK;
	struct dirent *d;
	DIR *dir;
	int fd;

	name = *rel ? (name ? name + 1 : rel) : wk->root;
	if (!follow) /* it was a directory when listed: never a link now */
		flags |= O_NOFOLLOW;
	/* the top: the directory it named when the tree began (beneath.h) */
	fd = *rel ? openat(parent_fd, name, flags) : kiln_beneath_top(wk->root);
	if (fd < 0 || fstat(fd, &st) != 0) {
		int err = errno;
		struct kiln_entry *e;
		if (fd >= 0)
			close(fd);
		if (!(e = push(wk->out, rel, NULL)))
			return KILN_ERR_NOMEM;
		e->st.st_mode = S_IFDIR; /* a directory (whose files are unknown) */
		set_error(e, KILN_ERR_IO, err, "cannot open directory");
		return KILN_OK;
	}
	if (on_path(up, &st)) {
		struct kiln_entry *e = push(wk->out, rel, &st);
		close(fd);
		if (!e)
			return KILN_ERR_NOMEM;
		set_error(e, KILN_ERR_UNSAFE, ELOOP, "directory loop");
		return KILN_OK;
	}
	self.dev = st.st_dev;
	self.ino = st.st_ino;
	self.up = up;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return KILN_ERR_NOMEM;
	}
	errno = 0;
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!v)
				goto nomem;
			names = v;
		}
		if (!(names[n] = strdup(d->d_name)))
			goto nomem;
		n++;
	}
	if (errno != 0) {
		struct kiln_entry *e = push(wk->out, rel, &st);
		if (!e)
			goto nomem;
		set_error(e, KILN_ERR_IO, errno, "cannot read directory");
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	if (n && !(at = malloc(n * sizeof(*at))))
		goto nomem;
	for (size_t i = 0; i < n && ret == KILN_OK; i++)
		ret = visit(wk, dirfd(dir), rel, names, n, names[i], &self, &at[i]);
	if (ret == KILN_OK)
		link_siblings(wk->out, names, at, n);
	goto out;
nomem:
	ret = KILN_ERR_NOMEM;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(at);
	closedir(dir);
	return ret;
}

kiln_status kiln_walk(const char *root, const struct kiln_options *opt,
		      const struct stat *own, size_t nown, struct kiln_walk *out,
		      struct kiln_error *root_err)
{
	struct walker wk = { .root = root, .opt = opt, .own = own, .nown = nown, .out = out };
	struct stat st;
	char *real;
	kiln_status ret;

	root_err->suffix = "";
	wk.has_cache = opt->cache_dir && stat(opt->cache_dir, &wk.cache) == 0 &&
		       S_ISDIR(wk.cache.st_mode);
	if (!(out->glob_used = calloc(opt->n_include + opt->n_exclude + 1, sizeof(bool))))
		return KILN_ERR_NOMEM;
	if (stat(root, &st) != 0) {
		kiln_fail(root_err, KILN_ERR_IO, errno, "cannot open directory");
		return KILN_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* only a regular file can be an archive: the caller's hint for
		 * ENOTDIR would be wrong for anything else */
		kiln_fail(root_err, KILN_ERR_IO, S_ISREG(st.st_mode) ? ENOTDIR : 0,
			  S_ISREG(st.st_mode)    ? "not a directory"
			  : S_ISFIFO(st.st_mode) ? "not a directory or archive (a FIFO)"
			  : S_ISSOCK(st.st_mode) ? "not a directory or archive (a socket)"
			  : S_ISCHR(st.st_mode)  ? "not a directory or archive (a character device)"
			  : S_ISBLK(st.st_mode)  ? "not a directory or archive (a block device)"
						 : "not a directory or archive");
		return KILN_ERR_IO;
	}
	real = realpath(root, NULL);
	if (!real) {
		kiln_fail(root_err, KILN_ERR_IO, errno, "cannot resolve");
		return KILN_ERR_IO;
	}
	wk.root_real = real;
	ret = walk_dir(&wk, AT_FDCWD, "", NULL, true);
	free(real);
	/* the entries stay for the whole operation: no room to spare */
	if (ret == KILN_OK && out->n && out->n < out->cap) {
		struct kiln_entry *v = realloc(out->v, out->n * sizeof(*v));
		if (v) {
			out->v = v;
			out->cap = out->n;
		}
	}
	return ret;
}

void kiln_walk_free(struct kiln_walk *w)
{
	for (struct kiln_walk_chunk *c = w->names, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(w->v);
	free(w->glob_used);
	memset(w, 0, sizeof(*w));
}
