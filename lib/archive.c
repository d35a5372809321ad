/*
 * archive.c - deploy archives in and out, with libarchive.
 *
 * kiln_run_archive() never works on an archive in place.  It
 *  1. streams every entry of the input (an archive through archive_read, or
 *     a directory through its own walk) into a private staging directory
 *     next to the output, validating each entry first and keeping its
 *     metadata (name, type, mode, mtime, link target, owner);
 *  2. runs the staged tree through kiln_run_tree(), the very code a
 *     directory goes through, with the callbacks wrapped so that reports
 *     name the input's entries instead of staging paths;
 *  3. writes the output from the metadata kept in step 1 and the bytes of
 *     the staging tree, sorted by path, into a temporary file that is
 *     fsync'ed and renamed into place.
 * Why a staging tree rather than memory: the tree run works on files (the
 * previous manifest, the cache, the atomic writer), and with files memory
 * stays at one 64 KiB block per entry however large the input.
 *
 * Safety of step 1.  Names are normalised and refused when absolute or
 * holding "..".  Every parent directory is opened from the staging root
 * with O_NOFOLLOW, so an entry below a link entry fails instead of landing
 * elsewhere; files are created with O_EXCL; links are created, never
 * followed, and their targets are resolved against the input's own entries
 * before the tree run.  Staged files are 0600 and directories 0700 whatever
 * the input says: the input's modes only ever reach the output archive.
 * Reading stops at the first refused entry, and then nothing is written.
 */
#include "archive_version.h"
#include "classify.h"
#include "error.h"
#include "run.h"
#include "tempfile.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_SIZE 65536
#define MAX_LINK_HOPS 40 /* as the kernel's MAXSYMLINKS */
#define NONE ((size_t)-1)

enum item_type { ITEM_FILE, ITEM_DIR, ITEM_LINK };

/* One entry of the input, as it goes into the output. */
struct item {
	char *name;     /* as in the input: the output entry's name */
	char *norm;     /* normalised path from the input's root; "" is the root */
	char *link;     /* ITEM_LINK: the target, as stored */
	char *hardlink; /* a hard link: norm of the entry holding the data */
	char *uname, *gname;
	enum item_type type;
	unsigned mode;  /* permission bits, & 07777 */
	int64_t mtime;
	long mtime_ns;
	int64_t uid, gid;
	size_t leader;  /* hard-linked group: the output entry with the data */
};

/* Open addressing over indexes into a key array; slot value 0 is empty. */
struct table {
	size_t *slot;
	size_t cap, n;
};

struct kept {
	char *rel;      /* path relative to the tree */
	int coding;
};

enum out_kind { OUT_ORIGINAL, OUT_SIBLING, OUT_ARTIFACT };

struct out_entry {
	char *key;      /* path in the staging tree; the sort key */
	char *name;     /* entry name in the output */
	const struct item *meta; /* metadata; the source for a sibling; NULL
	                            for an artifact */
	enum out_kind kind;
};

struct ctx {
	struct kiln_run *run;
	const struct kiln_archive_options *aopt;
	const char *input, *output;
	kiln_archive_format format;
	bool is_dir;
	struct kiln_temps *temps;    /* the run's */
	struct kiln_tempfile stage;  /* the staging directory */
	int root_fd;                 /* ... open */
	uint8_t *buf;           /* BLOCK_SIZE bytes */

	struct item *items;
	size_t n, cap;
	struct table byname;    /* items by norm */
	char **inokeys;         /* directory input: "dev:ino" of linked files */
	size_t *inoitem, ninokeys, capinokeys;
	struct table byino;
	uint64_t expanded;      /* bytes of entry data so far */

	char *tree;             /* norm of the tree: "" or the top directory */
	char *tree_path;        /* its path in the staging directory */
	size_t stage_len;

	/* the tree run, through the wrapped callbacks */
	struct kiln_callbacks user;
	bool failed;
	struct kept *kept;
	size_t nkept, capkept;
	bool manifest_written, snippet_written;
	char msg[512];          /* a libarchive message, for one callback */
};

/* ---- small helpers ---- */

static char *cat3(const char *a, const char *b, const char *c)
{
	size_t x = strlen(a), y = strlen(b), z = strlen(c);
	char *p = malloc(x + y + z + 1);

	if (p) {
		memcpy(p, a, x);
		memcpy(p + x, b, y);
		memcpy(p + x + y, c, z + 1);
	}
	return p;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The key of index I in the array behind a table. */
typedef const char *(*keyof_fn)(const void *keys, size_t i);

/* The index whose key is KEY, or NONE. */
static size_t table_find(const struct table *t, const char *key, keyof_fn keyof, const void *c)
{
	if (!t->cap)
		return NONE;
	for (size_t i = hash_str(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i])
			return NONE;
		if (strcmp(keyof(c, t->slot[i] - 1), key) == 0)
			return t->slot[i] - 1;
	}
}

static bool table_add(struct table *t, size_t index, keyof_fn keyof, const void *c)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024, *slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return false;
		for (size_t i = 0; i < t->cap; i++) {
			size_t j;
			if (!t->slot[i])
				continue;
			for (j = hash_str(keyof(c, t->slot[i] - 1)) & (cap - 1); slot[j];
			     j = (j + 1) & (cap - 1))
				;
			slot[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	size_t i = hash_str(keyof(c, index)) & (t->cap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = index + 1;
	t->n++;
	return true;
}

static const char *norm_of(const void *c, size_t i)
{
	return ((const struct ctx *)c)->items[i].norm;
}

/* Keys in an array of strings. */
static const char *string_of(const void *v, size_t i)
{
	return ((char *const *)v)[i];
}

static size_t find_item(const struct ctx *c, const char *norm)
{
	return table_find(&c->byname, norm, norm_of, c);
}

static void item_free(struct item *it)
{
	free(it->name);
	free(it->norm);
	free(it->link);
	free(it->hardlink);
	free(it->uname);
	free(it->gname);
	memset(it, 0, sizeof(*it));
}

/* Is NORM the tree TREE or below it? */
static bool within(const char *norm, const char *tree)
{
	size_t n = strlen(tree);

	return n == 0 || (strncmp(norm, tree, n) == 0 && (norm[n] == '\0' || norm[n] == '/'));
}

/* ---- reporting ---- */

/* One on_file call about the input: PATH names an entry ("" the input). */
static void report(struct ctx *c, const char *path, kiln_status st, int errnum, const char *what)
{
	struct kiln_report r;

	memset(&r, 0, sizeof(r));
	r.root = c->input;
	r.path = path;
	r.outcome = KILN_OUTCOME_ERROR;
	r.error.status = st;
	r.error.errnum = errnum;
	r.error.what = what;
	r.error.suffix = "";
	r.in_archive = !c->is_dir && *path;
	if (c->run->cb.on_file)
		c->run->cb.on_file(c->run->cb.user, &r);
	c->failed = true;
}

/* libarchive's message for A, in c->msg, lowercase first letter as kiln's
 * messages are. */
static const char *archive_msg(struct ctx *c, struct archive *a, const char *fallback)
{
	const char *m = archive_error_string(a);

	snprintf(c->msg, sizeof(c->msg), "%s%s%s", fallback, m ? ": " : "", m ? m : "");
	return c->msg;
}

static void report_output(struct ctx *c, kiln_status st, int errnum, const char *what)
{
	struct kiln_error err = { st, errnum, what, "" };

	if (c->run->cb.on_artifact)
		c->run->cb.on_artifact(c->run->cb.user, "archive", c->output, &err);
	c->failed = true;
}

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
static kiln_status make_stage(struct ctx *c)
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
			report_output(c, st, err.errnum, "cannot create staging directory");
		return st;
	}
	c->stage_len = strlen(c->stage.path);
	c->root_fd = open(c->stage.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->root_fd < 0) {
		report_output(c, KILN_ERR_IO, errno, "cannot open staging directory");
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

static void drop_stage(struct ctx *c)
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

/* ---- step 1: reading the input ---- */

/*
 * Normalise NAME: drop empty and "." components.  Returns NULL with *OUT
 * malloc'ed ("" for the root), or a static reason to refuse NAME (*OUT
 * NULL; "out of memory" when that is the reason).
 */
static const char *normalise(const char *name, char **out)
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

/* Append *IT (whose strings the table now owns) to the item list. */
static kiln_status push_item(struct ctx *c, struct item *it)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct item *v = realloc(c->items, cap * sizeof(*v));
		if (!v)
			return KILN_ERR_NOMEM;
		c->items = v;
		c->cap = cap;
	}
	c->items[c->n] = *it;
	if (!table_add(&c->byname, c->n, norm_of, c))
		return KILN_ERR_NOMEM;
	c->n++;
	memset(it, 0, sizeof(*it));
	return KILN_OK;
}

/* A source of entry data: an archive's current entry, or a file. */
struct data_source {
	struct archive *a;
	int fd;
};

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
				report(c, name, KILN_ERR_IO, 0, archive_msg(c, src->a, "cannot read entry"));
				return KILN_ERR_IO;
			}
		} else {
			ssize_t n = read(src->fd, c->buf, BLOCK_SIZE);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				report(c, name, KILN_ERR_IO, errno, "cannot read");
				return KILN_ERR_IO;
			}
			if (n == 0)
				break;
			buf = c->buf;
			len = (size_t)n;
			off = end;
		}
		if (off < 0 || len > INT64_MAX - (uint64_t)off) {
			report(c, name, KILN_ERR_INVALID, 0, "bad data offset, refused");
			return KILN_ERR_UNSAFE;
		}
		if (max && (uint64_t)off + len > max) {
			report(c, name, KILN_ERR_UNSAFE, EFBIG, "larger than --max-file-size, refused");
			return KILN_ERR_UNSAFE;
		}
		/* a hole before this block expands as much as data does: a sparse
		 * entry must not slip past the limits */
		if ((why = count_expanded(c, src, len + (off > end ? (uint64_t)(off - end) : 0))) != NULL) {
			report(c, name, KILN_ERR_UNSAFE, 0, why);
			return KILN_ERR_UNSAFE;
		}
		if (fd >= 0 && write_all(fd, buf, len, off) != 0) {
			report(c, name, KILN_ERR_IO, errno, "cannot write to the staging directory");
			return KILN_ERR_IO;
		}
		if (off + (int64_t)len > end)
			end = off + (int64_t)len;
	}
	/* a sparse entry may end in a hole, which counts too */
	if (size > end && (why = count_expanded(c, src, (uint64_t)(size - end))) != NULL) {
		report(c, name, KILN_ERR_UNSAFE, 0, why);
		return KILN_ERR_UNSAFE;
	}
	if (fd >= 0 && size > end && ftruncate(fd, (off_t)size) != 0) {
		report(c, name, KILN_ERR_IO, errno, "cannot write to the staging directory");
		return KILN_ERR_IO;
	}
	return KILN_OK;
}

/*
 * Validate the entry *IT (name, norm and metadata filled in) and create it
 * in the staging tree: a directory, a link to IT->link, a hard link to the
 * entry named HARDLINK (as the input names it), or a file with the data of
 * SRC (SIZE bytes, -1 if unknown).  NAME names the entry in messages.
 * Takes the strings of *IT in every case.
 */
static kiln_status stage_entry(struct ctx *c, const char *name, struct item *it,
			       const char *hardlink, const struct data_source *src, int64_t size)
{
	uint64_t max = c->run->opt.max_file_size;
	kiln_status ret = KILN_ERR_UNSAFE;
	const char *base, *why;
	int pfd = -1, fd = -1, r, e;

	if (c->n >= c->aopt->max_entries && c->aopt->max_entries) {
		report(c, name, KILN_ERR_UNSAFE, 0, "more entries than the limit, refused");
		goto out;
	}
	if (find_item(c, it->norm) != NONE) {
		report(c, name, KILN_ERR_UNSAFE, 0, "duplicate entry, refused");
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
			report(c, name, KILN_ERR_UNSAFE, 0, "the root is not a directory, refused");
			goto out;
		}
		ret = push_item(c, it);
		goto out;
	}
	if (max && size > 0 && (uint64_t)size > max && !hardlink) {
		report(c, name, KILN_ERR_UNSAFE, EFBIG, "larger than --max-file-size, refused");
		goto out;
	}
	if (hardlink) {
		char *target;
		size_t t;
		if ((why = normalise(hardlink, &target)) != NULL) {
			report(c, name, KILN_ERR_UNSAFE, 0,
			       strcmp(why, "out of memory") == 0 ? why : "hard link target outside the tree, refused");
			ret = strcmp(why, "out of memory") == 0 ? KILN_ERR_NOMEM : KILN_ERR_UNSAFE;
			goto out;
		}
		t = find_item(c, target);
		free(target);
		if (t == NONE || c->items[t].type != ITEM_FILE) {
			report(c, name, KILN_ERR_UNSAFE, 0,
			       t == NONE ? "hard link to an entry not in the input, refused"
					 : "hard link to a directory or link, refused");
			goto out;
		}
		it->hardlink = strdup(c->items[t].hardlink ? c->items[t].hardlink : c->items[t].norm);
		if (!it->hardlink) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		it->type = ITEM_FILE;
	}

	pfd = open_parent(c, it->norm, &base, true);
	if (pfd < 0) {
		e = errno;
		if (e == ECANCELED)
			ret = KILN_ERR_CANCELLED;
		else if (e == ELOOP || e == ENOTDIR)
			report(c, name, KILN_ERR_UNSAFE, 0, "below a link or a file, refused");
		else
			report(c, name, KILN_ERR_IO, e, "cannot create in the staging directory"),
				ret = KILN_ERR_IO;
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
		if (e == EEXIST)
			report(c, name, KILN_ERR_UNSAFE, 0, "duplicate entry, refused");
		else
			report(c, name, KILN_ERR_IO, e, "cannot create in the staging directory"),
				ret = KILN_ERR_IO;
		goto out;
	}
	if (fd >= 0) {
		ret = stage_data(c, name, fd, src, size);
		if (ret != KILN_OK)
			goto out;
		if (close(fd) != 0) {
			fd = -1;
			report(c, name, KILN_ERR_IO, errno, "cannot write to the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		fd = -1;
	}
	ret = push_item(c, it);
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	item_free(it);
	return ret;
}

/* Refusal for an archive entry type kiln does not carry, or NULL. */
static const char *type_refusal(mode_t type)
{
	switch (type) {
	case AE_IFCHR:
	case AE_IFBLK: return "device node, refused";
	case AE_IFIFO: return "FIFO, refused";
	case AE_IFSOCK: return "socket, refused";
	default: return "unknown entry type, refused";
	}
}

static char *dup_or_null(const char *s, bool *nomem)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*nomem = true;
	return d;
}

/* Read every entry of the archive INPUT into the staging tree. */
static kiln_status read_archive(struct ctx *c)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	struct data_source src = { a, -1 };
	kiln_status ret = KILN_OK;
	int r;

	if (!a)
		return KILN_ERR_NOMEM;
	/* not archive_read_support_format_all(): mtree would open the files
	 * its entries name, anywhere on this machine */
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_ar(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_compress(a);
	if (archive_read_open_filename(a, c->input, BLOCK_SIZE) != ARCHIVE_OK) {
		report(c, "", KILN_ERR_IO, 0, archive_msg(c, a, "cannot read archive"));
		archive_read_free(a);
		return KILN_ERR_IO;
	}
	while ((r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		struct item it;
		const char *name, *why, *hardlink;
		mode_t type;
		bool nomem = false;

		if (r < ARCHIVE_WARN) {
			report(c, "", KILN_ERR_IO, 0, archive_msg(c, a, "cannot read archive"));
			ret = KILN_ERR_IO;
			break;
		}
		if (atomic_load(&c->run->cancelled)) {
			ret = KILN_ERR_CANCELLED;
			break;
		}
		name = archive_entry_pathname(ae);
		if (!name)
			name = archive_entry_pathname_utf8(ae);
		if (!name) {
			report(c, "", KILN_ERR_INVALID, 0, "an entry without a usable name, refused");
			ret = KILN_ERR_UNSAFE;
			break;
		}
		memset(&it, 0, sizeof(it));
		if ((why = normalise(name, &it.norm)) != NULL) {
			if (strcmp(why, "out of memory") == 0) {
				ret = KILN_ERR_NOMEM;
				break;
			}
			report(c, name, KILN_ERR_UNSAFE, 0, why);
			ret = KILN_ERR_UNSAFE;
			break;
		}
		hardlink = archive_entry_hardlink(ae);
		type = archive_entry_filetype(ae);
		if (hardlink || type == AE_IFREG)
			it.type = ITEM_FILE;
		else if (type == AE_IFDIR)
			it.type = ITEM_DIR;
		else if (type == AE_IFLNK)
			it.type = ITEM_LINK;
		else {
			report(c, name, KILN_ERR_UNSAFE, 0, type_refusal(type));
			item_free(&it);
			ret = KILN_ERR_UNSAFE;
			break;
		}
		if (it.type == ITEM_LINK) {
			const char *target = archive_entry_symlink(ae);
			if (!target)
				target = archive_entry_symlink_utf8(ae);
			if (!target || !*target) {
				report(c, name, KILN_ERR_UNSAFE, 0, "link without a target, refused");
				item_free(&it);
				ret = KILN_ERR_UNSAFE;
				break;
			}
			it.link = dup_or_null(target, &nomem);
		}
		it.name = dup_or_null(name, &nomem);
		it.mode = archive_entry_perm(ae) & 07777;
		if (archive_entry_mtime_is_set(ae)) {
			it.mtime = archive_entry_mtime(ae);
			it.mtime_ns = archive_entry_mtime_nsec(ae);
		}
		it.uid = archive_entry_uid(ae);
		it.gid = archive_entry_gid(ae);
		it.uname = dup_or_null(archive_entry_uname(ae), &nomem);
		it.gname = dup_or_null(archive_entry_gname(ae), &nomem);
		if (nomem) {
			item_free(&it);
			ret = KILN_ERR_NOMEM;
			break;
		}
		ret = stage_entry(c, name, &it, hardlink, &src,
				  archive_entry_size_is_set(ae) ? archive_entry_size(ae) : -1);
		if (ret != KILN_OK)
			break;
	}
	archive_read_free(a);
	return ret;
}

/* Directory input: the hard link key of a file with several links. */
static kiln_status note_inode(struct ctx *c, const struct stat *st, char **hardlink_of)
{
	char key[64];
	size_t i;

	*hardlink_of = NULL;
	if (st->st_nlink < 2)
		return KILN_OK;
	snprintf(key, sizeof(key), "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	i = table_find(&c->byino, key, string_of, c->inokeys);
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
	if (!table_add(&c->byino, c->ninokeys, string_of, c->inokeys)) {
		free(c->inokeys[c->ninokeys]);
		return KILN_ERR_NOMEM;
	}
	c->ninokeys++;
	return KILN_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static kiln_status walk_input(struct ctx *c, int dfd, const char *prefix, const char *rel);

/* One name NAME of the input directory DFD, REL being the directory's path
 * relative to the input ("" for the input itself). */
static kiln_status visit_input(struct ctx *c, int dfd, const char *prefix, const char *rel,
			       const char *dname)
{
	struct data_source src = { NULL, -1 };
	char *path = *rel ? cat3(rel, "/", dname) : strdup(dname);
	char *hardlink = NULL;
	struct item it;
	struct stat st;
	kiln_status ret = KILN_OK;
	bool nomem = false;

	memset(&it, 0, sizeof(it));
	if (!path)
		return KILN_ERR_NOMEM;
	if (fstatat(dfd, dname, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		report(c, path, KILN_ERR_IO, errno, "cannot stat");
		ret = KILN_ERR_IO;
		goto out;
	}
	if (S_ISREG(st.st_mode))
		it.type = ITEM_FILE;
	else if (S_ISDIR(st.st_mode))
		it.type = ITEM_DIR;
	else if (S_ISLNK(st.st_mode))
		it.type = ITEM_LINK;
	else {
		report(c, path, KILN_ERR_UNSAFE, 0, type_refusal(st.st_mode & S_IFMT));
		ret = KILN_ERR_UNSAFE;
		goto out;
	}
	it.name = cat3(prefix, path, it.type == ITEM_DIR ? "/" : "");
	it.norm = *prefix ? cat3(prefix, path, "") : strdup(path);
	if (it.norm && *prefix == '.') /* "./x": the tree is the root */
		memmove(it.norm, it.norm + 2, strlen(it.norm + 2) + 1);
	it.mode = st.st_mode & 07777;
	it.mtime = st.st_mtim.tv_sec;
	it.mtime_ns = st.st_mtim.tv_nsec;
	it.uid = st.st_uid;
	it.gid = st.st_gid;
	if (!it.name || !it.norm) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (it.type == ITEM_LINK) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dfd, dname, target, sizeof(target) - 1);
		if (n < 0) {
			report(c, path, KILN_ERR_IO, errno, "cannot read link");
			ret = KILN_ERR_IO;
			goto out;
		}
		target[n] = '\0';
		it.link = dup_or_null(target, &nomem);
		if (nomem) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
	}
	if (it.type == ITEM_FILE) {
		if ((ret = note_inode(c, &st, &hardlink)) != KILN_OK)
			goto out;
		if (!hardlink) {
			src.fd = openat(dfd, dname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (src.fd < 0) {
				report(c, path, KILN_ERR_IO, errno, "cannot open");
				ret = KILN_ERR_IO;
				goto out;
			}
		}
	}
	ret = stage_entry(c, path, &it, hardlink, &src, hardlink ? 0 : (int64_t)st.st_size);
	if (ret == KILN_OK && S_ISDIR(st.st_mode)) {
		int sub = openat(dfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			report(c, path, KILN_ERR_IO, errno, "cannot open directory");
			ret = KILN_ERR_IO;
		} else {
			ret = walk_input(c, sub, prefix, path);
		}
	}
out:
	if (src.fd >= 0)
		close(src.fd);
	item_free(&it);
	free(hardlink);
	free(path);
	return ret;
}

/* Stage every entry below the directory DFD (closed here). */
static kiln_status walk_input(struct ctx *c, int dfd, const char *prefix, const char *rel)
{
	DIR *d = fdopendir(dfd);
	char **names = NULL;
	size_t n = 0, cap = 0;
	kiln_status ret = KILN_OK;
	struct dirent *e;

	if (!d) {
		close(dfd);
		return KILN_ERR_NOMEM;
	}
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!v) {
				ret = KILN_ERR_NOMEM;
				goto out;
			}
			names = v;
		}
		if (!(names[n] = strdup(e->d_name))) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		report(c, rel, KILN_ERR_IO, errno, "cannot read directory");
		ret = KILN_ERR_IO;
		goto out;
	}
	/* sorted, so that the first refused entry is always the same one */
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && ret == KILN_OK; i++)
		ret = visit_input(c, dirfd(d), prefix, rel, names[i]);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

/* The directory INPUT, as `tar -C PARENT NAME` would archive it. */
static kiln_status read_directory(struct ctx *c)
{
	char *copy = kiln_root_normalise(c->input), *base, *prefix = NULL;
	struct item it;
	struct stat st;
	kiln_status ret;
	int fd;

	memset(&it, 0, sizeof(it));
	if (!copy)
		return KILN_ERR_NOMEM;
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		base = (char *)".";
	fd = open(c->input, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		report(c, "", KILN_ERR_IO, errno, "cannot open directory");
		ret = KILN_ERR_IO;
		goto out;
	}
	prefix = cat3(base, "/", "");
	it.name = strdup(prefix ? prefix : "");
	it.norm = strcmp(base, ".") == 0 ? strdup("") : strdup(base);
	it.type = ITEM_DIR;
	it.mode = st.st_mode & 07777;
	it.mtime = st.st_mtim.tv_sec;
	it.mtime_ns = st.st_mtim.tv_nsec;
	it.uid = st.st_uid;
	it.gid = st.st_gid;
	if (!prefix || !it.name || !it.norm) {
		item_free(&it);
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	ret = stage_entry(c, "", &it, NULL, NULL, 0);
	if (ret == KILN_OK) {
		ret = walk_input(c, fd, prefix, "");
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(prefix);
	free(copy);
	return ret;
}

/* ---- between steps 1 and 2 ---- */

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
		i = find_item(c, cur);
		if (i != NONE && c->items[i].type == ITEM_LINK) {
			const char *t = c->items[i].link;
			char *v;
			if (++hops > MAX_LINK_HOPS || t[0] == '/')
				goto out;
			len = old;
			cur[len] = '\0';
			v = cat3(t, "/", next);
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
static kiln_status choose_tree(struct ctx *c)
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
		d = find_item(c, top);
		if (d == NONE || c->items[d].type == ITEM_DIR) {
			c->tree = top;
			return KILN_OK;
		}
		free(top);
	}
	c->tree = strdup("");
	return c->tree ? KILN_OK : KILN_ERR_NOMEM;
}

static kiln_status check_links(struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		bool inside;
		if (c->items[i].type != ITEM_LINK)
			continue;
		if (resolve_link(c, &c->items[i], &inside, NULL) != KILN_OK)
			return KILN_ERR_NOMEM;
		if (!inside) {
			report(c, c->is_dir ? c->items[i].norm + strlen(c->tree) + (*c->tree ? 1 : 0)
					    : c->items[i].name,
			       KILN_ERR_UNSAFE, 0, "symbolic link points outside the tree, refused");
			return KILN_ERR_UNSAFE;
		}
	}
	return KILN_OK;
}

/* ---- step 2: the tree run, through wrapped callbacks ---- */

/* An event path inside the tree, as the user knows it; malloc'ed. */
static char *user_path(const struct ctx *c, const char *path)
{
	size_t n = strlen(c->tree_path);
	const char *rel;
	char *entry, *p;

	if (strncmp(path, c->tree_path, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return strdup(path);
	rel = path + n + (path[n] == '/');
	if (c->is_dir)
		return *rel ? cat3(c->input, "/", rel) : strdup(c->input);
	entry = *c->tree && *rel ? cat3(c->tree, "/", rel) : strdup(*c->tree ? c->tree : rel);
	if (!entry)
		return NULL;
	p = *entry ? cat3(c->input, ": ", entry) : strdup(c->input);
	free(entry);
	return p;
}

static void wrap_plan(void *user, const char *root, uint64_t files, uint64_t bytes)
{
	struct ctx *c = user;

	(void)root;
	if (c->user.on_plan)
		c->user.on_plan(c->user.user, c->input, files, bytes);
}

static void wrap_file(void *user, const struct kiln_report *r)
{
	struct ctx *c = user;
	struct kiln_report m = *r;
	char *p = NULL;

	if (r->outcome == KILN_OUTCOME_ERROR && r->error.status != KILN_ERR_CANCELLED)
		c->failed = true;
	for (int k = 0; k < (int)kiln_coding_count(); k++) {
		if (r->coding[k].outcome != KILN_CODING_KEPT)
			continue;
		if (c->nkept == c->capkept) {
			size_t cap = c->capkept ? c->capkept * 2 : 256;
			struct kept *v = realloc(c->kept, cap * sizeof(*v));
			if (!v) {
				c->failed = true;
				break;
			}
			c->kept = v;
			c->capkept = cap;
		}
		c->kept[c->nkept].rel = strdup(r->path);
		c->kept[c->nkept].coding = k;
		if (!c->kept[c->nkept].rel)
			c->failed = true;
		else
			c->nkept++;
	}
	m.root = c->input;
	if (!c->is_dir && *c->tree)
		p = *r->path ? cat3(c->tree, "/", r->path) : strdup(c->tree);
	m.path = p ? p : r->path;
	m.in_archive = !c->is_dir;
	if (c->user.on_file)
		c->user.on_file(c->user.user, &m);
	free(p);
}

static void wrap_event(void *user, kiln_event ev, const char *path, int coding,
		       const struct kiln_error *err)
{
	struct ctx *c = user;
	char *p = user_path(c, path);

	if (ev == KILN_EVENT_REMOVE_FAILED || ev == KILN_EVENT_CACHE_FAILED)
		c->failed = true;
	if (c->user.on_event)
		c->user.on_event(c->user.user, ev, p ? p : path, coding, err);
	free(p);
}

static void wrap_artifact(void *user, const char *what, const char *path,
			  const struct kiln_error *err)
{
	struct ctx *c = user;
	char *p = user_path(c, path);

	if (err)
		c->failed = true;
	else if (strcmp(what, "manifest") == 0)
		c->manifest_written = true;
	else
		c->snippet_written = true;
	if (c->user.on_artifact)
		c->user.on_artifact(c->user.user, what, p ? p : path, err);
	free(p);
}

static kiln_status run_tree(struct ctx *c)
{
	struct kiln_callbacks wrapped = {
		.on_plan = wrap_plan,
		.on_file = wrap_file,
		.on_event = wrap_event,
		.on_artifact = wrap_artifact,
		.user = c,
	};
	kiln_status st;

	c->tree_path = *c->tree ? cat3(c->stage.path, "/", c->tree) : strdup(c->stage.path);
	if (!c->tree_path)
		return KILN_ERR_NOMEM;
	c->user = c->run->cb;
	st = kiln_tree_compress(c->run, c->tree_path, &wrapped);
	return st;
}

/* ---- step 3: the output ---- */

static int cmp_out(const void *a, const void *b)
{
	return strcmp(((const struct out_entry *)a)->key, ((const struct out_entry *)b)->key);
}

/* The item a link (checked by check_links()) resolves to, or NULL. */
static const struct item *link_final(const struct ctx *c, const struct item *it)
{
	char *final = NULL;
	bool inside;
	size_t i;

	if (resolve_link(c, it, &inside, &final) != KILN_OK || !inside)
		return NULL;
	i = find_item(c, final);
	free(final);
	return i == NONE || c->items[i].type != ITEM_FILE ? NULL : &c->items[i];
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
	return *c->tree ? cat3(c->tree, "/", rel) : strdup(rel);
}

/* The name prefix of entries kiln adds at the tree's top. */
static char *top_prefix(const struct ctx *c)
{
	size_t t = find_item(c, c->tree);
	const char *name = t != NONE ? c->items[t].name : c->tree;
	size_t n = strlen(name);

	if (n == 0)
		return strdup("");
	return cat3(name, name[n - 1] == '/' ? "" : "/", "");
}

/* What goes into the output: every original entry still in the staging
 * tree and not replaced, the siblings kept and the artifacts written. */
static kiln_status list_output(struct ctx *c, struct out_list *l)
{
	struct table kept = { 0 };
	char **kept_keys = calloc(c->nkept + 1, sizeof(char *));
	char *artifacts[2] = { NULL, NULL }, *prefix = top_prefix(c);
	const bool written[2] = { c->manifest_written, c->snippet_written };
	static const char *const art_names[2] = { KILN_MANIFEST_NAME, KILN_NGINX_CONF_NAME };
	kiln_status ret = KILN_ERR_NOMEM;

	if (!kept_keys || !prefix)
		goto out;
	for (int k = 0; k < 2; k++)
		if (written[k] && !(artifacts[k] = tree_join(c, art_names[k])))
			goto out;
	/* the siblings kept, keyed by their staging path */
	for (size_t i = 0; i < c->nkept; i++) {
		const struct kept *kp = &c->kept[i];
		char *rel = tree_join(c, kp->rel);
		const struct item *src, *meta;
		size_t s = rel ? find_item(c, rel) : NONE;
		if (!rel)
			goto out;
		src = s == NONE ? NULL : &c->items[s];
		meta = src && src->type == ITEM_LINK ? link_final(c, src) : src;
		if (!src || !meta) { /* cannot happen: kiln only compresses what is there */
			free(rel);
			report(c, kp->rel, KILN_ERR_INVALID, 0, "sibling without a source");
			ret = KILN_ERR_IO;
			goto out;
		}
		kept_keys[i] = cat3(rel, kiln_coding_suffix((kiln_coding)kp->coding), "");
		free(rel);
		if (!kept_keys[i] ||
		    out_add(l, strdup(kept_keys[i]),
			    cat3(src->name, kiln_coding_suffix((kiln_coding)kp->coding), ""), meta,
			    OUT_SIBLING) != KILN_OK)
			goto out;
	}
	{
		for (size_t i = 0; i < c->nkept; i++)
			if (!table_add(&kept, i, string_of, kept_keys))
				goto out;
		for (size_t i = 0; i < c->n; i++) {
			const struct item *it = &c->items[i];
			struct stat st;
			if (table_find(&kept, it->norm, string_of, kept_keys) != NONE)
				continue; /* replaced by kiln's sibling */
			if ((artifacts[0] && strcmp(it->norm, artifacts[0]) == 0) ||
			    (artifacts[1] && strcmp(it->norm, artifacts[1]) == 0))
				continue; /* rewritten below */
			if (*it->norm && fstatat(c->root_fd, it->norm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
				if (errno == ENOENT)
					continue; /* a stale sibling the run removed */
				report(c, it->name, KILN_ERR_IO, errno, "cannot stat in the staging directory");
				ret = KILN_ERR_IO;
				goto out;
			}
			if (out_add(l, strdup(it->norm), strdup(it->name), it, OUT_ORIGINAL) != KILN_OK)
				goto out;
		}
	}
	for (int k = 0; k < 2; k++)
		if (artifacts[k] &&
		    out_add(l, strdup(artifacts[k]), cat3(prefix, art_names[k], ""), NULL,
			    OUT_ARTIFACT) != KILN_OK)
			goto out;
	qsort(l->v, l->n, sizeof(*l->v), cmp_out);
	ret = KILN_OK;
out:
	for (size_t i = 0; kept_keys && i < c->nkept; i++)
		free(kept_keys[i]);
	free(kept_keys);
	free(kept.slot);
	free(artifacts[0]);
	free(artifacts[1]);
	free(prefix);
	return ret;
}

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
		size_t g = m->hardlink ? find_item(c, m->hardlink) : (size_t)(m - c->items);
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
			report(c, e->name, KILN_ERR_IO, errno, "cannot read from the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		archive_entry_set_size(ae, st.st_size);
	}
	if (archive_write_header(a, ae) < ARCHIVE_WARN) {
		report_output(c, KILN_ERR_IO, archive_errno(a) > 0 ? archive_errno(a) : 0,
			      archive_msg(c, a, "cannot write"));
		ret = KILN_ERR_IO;
		goto out;
	}
	for (ssize_t n; fd >= 0 && (n = read(fd, c->buf, BLOCK_SIZE)) != 0;) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			report(c, e->name, KILN_ERR_IO, errno, "cannot read from the staging directory");
			ret = KILN_ERR_IO;
			goto out;
		}
		if (archive_write_data(a, c->buf, (size_t)n) != n) {
			report_output(c, KILN_ERR_IO, archive_errno(a) > 0 ? archive_errno(a) : 0,
				      archive_msg(c, a, "cannot write"));
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

static kiln_status write_output(struct ctx *c)
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
		g = m->hardlink ? find_item(c, m->hardlink) : (size_t)(m - c->items);
		if (g != NONE && c->items[g].leader == NONE)
			c->items[g].leader = k;
	}
	meta.mode = output_mode(lstat(c->output, &old) == 0 && S_ISREG(old.st_mode) ? &old : NULL);
	if ((ret = kiln_tempfile_create(c->temps, &tf, c->output, &meta, &err)) != KILN_OK) {
		if (ret != KILN_ERR_CANCELLED)
			report_output(c, ret, err.errnum, err.what);
		goto out;
	}
	a = new_writer(c->format);
	ae = archive_entry_new();
	if (!a || !ae) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (archive_write_open_fd(a, tf.fd) != ARCHIVE_OK) {
		report_output(c, KILN_ERR_IO, 0, archive_msg(c, a, "cannot write"));
		ret = KILN_ERR_IO;
		goto out;
	}
	for (size_t k = 0; k < l.n && ret == KILN_OK; k++)
		ret = write_entry(c, a, ae, &l, k, fixed);
	if (ret != KILN_OK)
		goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		report_output(c, KILN_ERR_IO, archive_errno(a) > 0 ? archive_errno(a) : 0,
			      archive_msg(c, a, "cannot write"));
		ret = KILN_ERR_IO;
		goto out;
	}
	if ((ret = kiln_tempfile_commit(&tf, c->output, &meta, &err)) != KILN_OK) {
		if (ret != KILN_ERR_CANCELLED)
			report_output(c, ret, err.errnum, err.what);
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

/*
 * libarchive converts names between the archive's charset and the current
 * locale's: in the C locale, a UTF-8 name read from a zip fails to convert
 * and one written to pax gets "hdrcharset=BINARY", which GNU tar warns
 * about.  Names are bytes to kiln, so archives are read and written with
 * this thread in C.UTF-8 (uselocale(3) is per thread: the tree run and its
 * glob matching keep the process's locale).
 */
static locale_t enter_utf8(void)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);

	if (utf8 == (locale_t)0)
		return (locale_t)0;
	return uselocale(utf8);
}

static void leave_utf8(locale_t old)
{
	locale_t utf8;

	if (old == (locale_t)0)
		return;
	utf8 = uselocale(old);
	freelocale(utf8);
}

/* ---- the whole ---- */

void kiln_archive_options_init(struct kiln_archive_options *aopt)
{
	memset(aopt, 0, sizeof(*aopt));
	aopt->format = KILN_ARCHIVE_AUTO;
	aopt->max_expanded_size = (uint64_t)4 << 30;
	aopt->max_expansion_ratio = 200.0;
	aopt->max_entries = 1000000;
}

const char *kiln_archive_library_version(void)
{
	return archive_version_string() + strlen("libarchive ");
}

/* Is OUTPUT's directory inside the directory INPUT? */
static bool output_inside(const char *input, const char *output)
{
	const char *slash = strrchr(output, '/');
	char *dir = slash ? strndup(output, (size_t)(slash - output) + 1) : strdup(".");
	char *rd = dir ? realpath(dir, NULL) : NULL, *ri = realpath(input, NULL);
	bool inside = false;

	if (rd && ri) {
		size_t n = strlen(ri);
		inside = strncmp(rd, ri, n) == 0 && (rd[n] == '\0' || rd[n] == '/' || n == 1);
	}
	free(dir);
	free(rd);
	free(ri);
	return inside;
}

kiln_status kiln_run_archive(struct kiln_run *run, const char *input, const char *output,
			     const struct kiln_archive_options *aopt)
{
	struct ctx c;
	struct stat st;
	kiln_status ret;

	memset(&c, 0, sizeof(c));
	c.run = run;
	c.aopt = aopt;
	c.input = input;
	c.output = output;
	c.temps = &run->temps;
	c.root_fd = -1;
	c.format = aopt->format ? aopt->format : kiln_archive_format_from_name(output);
	if (c.format == KILN_ARCHIVE_AUTO || (unsigned)c.format > KILN_ARCHIVE_ZIP ||
	    run->opt.manifest_path || run->opt.nginx_conf_path || !*output)
		return KILN_ERR_INVALID;
	c.is_dir = stat(input, &st) == 0 && S_ISDIR(st.st_mode);
	if (c.is_dir && output_inside(input, output)) {
		report(&c, "", KILN_ERR_INVALID, 0, "the output is inside the input directory");
		return KILN_ERR_INVALID;
	}
	if (!(c.buf = malloc(BLOCK_SIZE)))
		return KILN_ERR_NOMEM;
	if ((ret = make_stage(&c)) != KILN_OK)
		goto out;
	if (c.is_dir) {
		ret = read_directory(&c);
	} else {
		locale_t old = enter_utf8();
		ret = read_archive(&c);
		leave_utf8(old);
	}
	if (ret == KILN_OK)
		ret = choose_tree(&c);
	if (ret == KILN_OK)
		ret = check_links(&c);
	if (ret == KILN_OK) {
		for (size_t i = 0; i < c.n; i++)
			c.items[i].leader = NONE;
		ret = run_tree(&c);
	}
	if (ret == KILN_OK && c.failed)
		ret = KILN_ERR_IO;
	if (ret == KILN_OK && !run->opt.dry_run) {
		locale_t old = enter_utf8();
		ret = write_output(&c);
		leave_utf8(old);
	}
	if (ret == KILN_OK && c.failed)
		ret = KILN_ERR_IO;
out:
	drop_stage(&c);
	for (size_t i = 0; i < c.n; i++)
		item_free(&c.items[i]);
	free(c.items);
	free(c.byname.slot);
	for (size_t i = 0; i < c.ninokeys; i++)
		free(c.inokeys[i]);
	free(c.inokeys);
	free(c.inoitem);
	free(c.byino.slot);
	for (size_t i = 0; i < c.nkept; i++)
		free(c.kept[i].rel);
	free(c.kept);
	free(c.tree);
	free(c.tree_path);
	free(c.buf);
	return ret;
}
