/*
 * immutable.c - the decision of immutable.h: each file of the tree, tried
 * against the evidence in order, the first that proves it recorded with
 * the span of its fingerprint.
 *
 * Paths in a bundler's manifest are URLs or paths relative to some other
 * root (webpack's publicPath, Next.js's .next/), so a proof names a tree
 * file when one of the two paths is the other or ends with "/" and the
 * other: the index of the tree's files by base name finds them.  A
 * complete manifest (Vite's, esbuild's metafile, webpack's stats) decides
 * the directories of the outputs it lists: there a file it does not prove
 * is not immutable by its name, the tree's shapes or a rename, since the
 * bundler said which of its files are hashed.  A complete manifest is
 * stale, and decides nothing, when an output it lists is not in the tree
 * or a file it lists, or a file of those directories that holds a
 * candidate token, is newer than it (a later build wrote them:
 * MANIFEST_SLACK).  The earlier releases are the ones dict.c listed (files
 * whose names hold a candidate token), indexed by the name around a token
 * of a bundler's hash shape; a rename is only compared byte for byte when
 * the sizes agree.
 */
#include "immutable.h"

#include "bundler.h"
#include "classify.h"
#include "error.h"
#include "hash.h"
#include "index.h"
#include "shape.h"
#include "shard.h"
#include "sibling.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bundler manifests looked for at the tree's top. */
static const char *const top_manifests[] = {
	".vite/manifest.json", "manifest.json", "asset-manifest.json", "build-manifest.json",
};

/* Manifests larger than this are not read. */
#define MANIFEST_MAX_SIZE ((size_t)64 << 20)

/* Seconds a build's outputs may be written after its manifest (bundlers
 * write them together) before the manifest counts as an earlier build's. */
#define MANIFEST_SLACK 2

/* An earlier release's files of one name around a token: more than this
 * many is a series (map tiles, numbered pages), not one file renamed. */
#define RENAME_MAX 16

/* What the bundlers' manifests say of a file of the tree (bits). */
enum { LISTED = 1, PROVEN = 2, DENIED = 4 };

/* A file of the tree: its walk index, path and the path's length. */
struct name {
	size_t k;
	const char *rel;
	size_t len;
};

/* A directory: the path of a file in it, and the directory's length. */
struct dir {
	const char *rel;
	size_t len;
};

struct decide {
	struct kiln_tree *t;
	struct kiln_fp *fp;
	struct name *by_rel;  /* the tree's files, sorted by path */
	struct name *by_rev;  /* the same, sorted by path read backwards */
	size_t nfiles;
	/* the directories a complete manifest accounts for (struct
	 * kiln_proof): each a path and the length of its directory part;
	 * SORTED: sorted by directory, each once (in_bundled() sorts them) */
	struct dir *bundled;
	size_t nbundled, capbundled;
	bool sorted;
	unsigned char *listed; /* per walk entry: LISTED, PROVEN, DENIED */
	/* sampled()'s last answer: a directory (REL's first N bytes), the
	 * byte before a token and its length */
	struct { const char *rel; size_t n, len; char sep; bool yes; } sample;
	bool nomem;
};

static size_t dir_len(const char *rel)
{
	const char *b = strrchr(rel, '/');

	return b ? (size_t)(b - rel) + 1 : 0;
}

static int bundled_cmp(const void *a, const void *b)
{
	const struct dir *x = a, *y = b;
	int c = memcmp(x->rel, y->rel, x->len < y->len ? x->len : y->len);

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* Is REL's directory one a complete manifest accounts for?  (The set is
 * sorted, and each directory kept once, on the first question after a
 * directory was added.) */
static bool in_bundled(struct decide *d, const char *rel)
{
	struct dir key = { rel, dir_len(rel) };
	size_t m = 0;

	if (!d->sorted && d->nbundled) {
		qsort(d->bundled, d->nbundled, sizeof(*d->bundled), bundled_cmp);
		for (size_t i = 0; i < d->nbundled; i++)
			if (!m || bundled_cmp(&d->bundled[m - 1], &d->bundled[i]) != 0)
				d->bundled[m++] = d->bundled[i];
		d->nbundled = m;
	}
	d->sorted = true;
	return d->nbundled && bsearch(&key, d->bundled, d->nbundled, sizeof(*d->bundled), bundled_cmp);
}

/* Record REL's directory as one a complete manifest accounts for. */
static void add_bundled(struct decide *d, const char *rel)
{
	void *w;

	if (d->nbundled == d->capbundled) {
		size_t c = d->capbundled ? 2 * d->capbundled : 64;
		if (!(w = realloc(d->bundled, c * sizeof(*d->bundled)))) {
			d->nomem = true;
			return;
		}
		d->bundled = w;
		d->capbundled = c;
	}
	d->bundled[d->nbundled].rel = rel;
	d->bundled[d->nbundled++].len = dir_len(rel);
	d->sorted = false;
}

static bool is_file(const struct kiln_entry *e)
{
	return (e->outcome == KILN_OUTCOME_CANDIDATE || e->outcome == KILN_OUTCOME_EXCLUDED) &&
	       S_ISREG(e->st.st_mode);
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Paths read backwards, from their last byte: those that end alike are
 * together. */
static int by_rev(const void *a, const void *b)
{
	const struct name *x = a, *y = b;

	for (size_t i = 0; i < x->len && i < y->len; i++)
		if (x->rel[x->len - 1 - i] != y->rel[y->len - 1 - i])
			return (unsigned char)x->rel[x->len - 1 - i] <
					       (unsigned char)y->rel[y->len - 1 - i]
				       ? -1
				       : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Does the path R (RN bytes) end with '/' and PATH (PN bytes): 0; else
 * which way it sorts from those that do (by_rev()). */
static int ends_with(const char *r, size_t rn, const char *path, size_t pn)
{
	for (size_t i = 0; i <= pn; i++) {
		unsigned char c = i < pn ? (unsigned char)path[pn - 1 - i] : '/';
		if (i >= rn)
			return -1;
		if ((unsigned char)r[rn - 1 - i] != c)
			return (unsigned char)r[rn - 1 - i] < c ? -1 : 1;
	}
	return 0;
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct name *)a)->rel, ((const struct name *)b)->rel);
}

/* Is REL a file of the tree? */
static bool in_tree(const struct decide *d, const char *rel)
{
	struct name key = { 0, rel, 0 };

	return d->nfiles && bsearch(&key, d->by_rel, d->nfiles, sizeof(key), by_rel);
}

/* Call FN(D, F, ARG) for each file F of the tree that stands for the
 * manifest's PATH: PATH itself or a path PATH ends with after a '/' (found
 * by path), or one that ends with '/' and PATH (by the path read
 * backwards): a lookup each, never a scan of the files. */
static void each_named(struct decide *d, const char *path,
		       void (*fn)(struct decide *, const struct name *, void *), void *arg)
{
	size_t pn = strlen(path), lo = 0, hi = d->nfiles;

	for (const char *s = path; s;) {
		struct name key = { 0, s, 0 }, *f;
		if (d->nfiles && (f = bsearch(&key, d->by_rel, d->nfiles, sizeof(key), by_rel)))
			fn(d, f, arg);
		s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ends_with(d->by_rev[mid].rel, d->by_rev[mid].len, path, pn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < d->nfiles && ends_with(d->by_rev[lo].rel, d->by_rev[lo].len, path, pn) == 0; lo++)
		fn(d, &d->by_rev[lo], arg);
}

/* Apply the proof P to the tree's file F that stands for it. */
static void apply_one(struct decide *d, const struct name *f, void *arg)
{
	const struct kiln_proof *p = arg;
	struct kiln_fp *fp = &d->fp[f->k];
	size_t off = (size_t)(base_of(p->path) - p->path);

	if (p->complete)
		add_bundled(d, f->rel);
	d->listed[f->k] |= LISTED | (p->denied ? DENIED : 0);
	if (!p->proven)
		return;
	d->listed[f->k] |= PROVEN;
	if (fp->why != KILN_WHY_NONE)
		return;
	*fp = (struct kiln_fp){ KILN_WHY_BUNDLER, 0, 0, 0 };
	if (p->len) {
		fp->start = (uint32_t)((size_t)(base_of(f->rel) - f->rel) + p->start - off);
		fp->len = (uint32_t)p->len;
	}
}

/* Apply the proofs P to the tree's files. */
static void apply(struct decide *d, const struct kiln_proofs *p)
{
	for (size_t i = 0; i < p->n; i++)
		each_named(d, p->v[i].path, apply_one, &p->v[i]);
}

/* What stale() finds of one output. */
struct staleness {
	struct decide *dirs;
	time_t mtime;
	size_t found;
	bool old;
};

static void stale_one(struct decide *d, const struct name *f, void *arg)
{
	struct staleness *s = arg;

	s->found++;
	add_bundled(s->dirs, f->rel);
	s->old |= d->t->walk.v[f->k].st.st_mtime > s->mtime + MANIFEST_SLACK;
}

/* Is the complete manifest P, of modification time MTIME, an earlier
 * build's: an output it lists (its implied source maps aside) not in the
 * tree, or a file it lists, or one of a candidate token in the directories
 * it lists, newer than it by more than MANIFEST_SLACK? */
static bool stale(struct decide *d, const struct kiln_proofs *p, time_t mtime)
{
	struct decide dirs = { .t = d->t };
	struct staleness s = { &dirs, mtime, 0, false };

	for (size_t i = 0; i < p->n && !s.old; i++) {
		const char *path = p->v[i].path;
		size_t n = strlen(path);
		if (!p->v[i].complete)
			continue;
		s.found = 0;
		each_named(d, path, stale_one, &s);
		s.old |= !s.found && !(n > 4 && strcmp(path + n - 4, ".map") == 0);
	}
	for (size_t f = 0; f < d->nfiles && !s.old; f++) {
		const char *rel = d->by_rel[f].rel;
		size_t at = 0, len;
		if (in_bundled(&dirs, rel) && kiln_token_next(rel, &at, &len))
			s.old |= d->t->walk.v[d->by_rel[f].k].st.st_mtime > mtime + MANIFEST_SLACK;
	}
	d->nomem |= dirs.nomem;
	free(dirs.bundled);
	return s.old;
}

/* Read the manifest PATH (REQUIRED: one given with --fingerprints, whose
 * problems are errors, and which may be a link: the user named it; one of
 * the tree's is opened without following one) and apply it. */
static void read_manifest(struct decide *d, const char *path, bool required)
{
	struct kiln_error err = { 0 };
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (required ? 0 : O_NOFOLLOW));
	struct kiln_proofs p = { 0 };
	struct stat st;
	uint8_t *text = NULL;
	const char *format;
	kiln_status ret = KILN_ERR_IO;

	if (fd < 0) {
		kiln_fail(&err, KILN_ERR_IO, errno, "cannot open the bundler manifest");
	} else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		   (size_t)st.st_size > MANIFEST_MAX_SIZE) {
		kiln_fail(&err, KILN_ERR_INVALID, 0, "not a bundler manifest: not a regular file "
			  "of at most 64 MiB");
	} else if (kiln_source_read(fd, &st, &text, &err) == KILN_OK) {
		ret = kiln_bundler_read(text ? (const char *)text : "", (size_t)st.st_size, &p,
					&format);
		/* found at the top: Next.js's is only ever build-manifest.json */
		if (ret == KILN_OK && !required && strcmp(format, KILN_FORMAT_NEXT) == 0 &&
		    strcmp(base_of(path), "build-manifest.json") != 0)
			ret = KILN_ERR_INVALID;
		if (ret == KILN_ERR_INVALID)
			kiln_fail(&err, KILN_ERR_INVALID, 0, "not a bundler manifest kiln reads "
				  "(Vite, webpack, esbuild, Next.js)");
		else if (ret == KILN_ERR_NOMEM)
			kiln_fail(&err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
	}
	if (fd >= 0)
		close(fd);
	free(text);
	if (ret == KILN_OK && stale(d, &p, st.st_mtime))
		for (size_t i = 0; i < p.n; i++)
			p.v[i].complete = false;
	if (ret == KILN_OK)
		apply(d, &p);
	kiln_proofs_free(&p);
	if (ret == KILN_ERR_NOMEM)
		kiln_ledger_lost(&d->t->ledger);
	if (ret != KILN_OK && required) {
		d->t->fingerprints_failed = true;
		kiln_tree_path_error(d->t, path, &err);
	}
}

static void bundler_evidence(struct decide *d)
{
	for (size_t i = 0; i < sizeof(top_manifests) / sizeof(top_manifests[0]); i++) {
		char *path;
		if (!in_tree(d, top_manifests[i]) ||
		    !(path = kiln_path_join(d->t->root, top_manifests[i], "")))
			continue;
		read_manifest(d, path, false);
		free(path);
	}
	for (size_t i = 0; i < d->t->opt->n_fingerprints; i++)
		read_manifest(d, d->t->opt->fingerprints[i], true);
}

/* The SHA-256 of the tree's entry K into OUT, read once (*HAVE: 0 not
 * yet, 1 read, -1 unreadable). */
static bool digest_of(struct decide *d, size_t k, uint8_t out[32], int *have)
{
	char *path;
	uint64_t size;

	if (*have)
		return *have > 0;
	*have = -1;
	if (!(path = kiln_path_join(d->t->root, d->t->walk.v[k].rel, "")))
		return false;
	if (kiln_file_digest(path, d->t->walk.v[k].via_link, &size, out) == KILN_OK)
		*have = 1;
	free(path);
	return *have > 0;
}

/* Do the bytes of the tree's entry K (its digest in CUR, read once: *HAVE)
 * and of release R's file F differ? */
static bool bytes_differ(struct decide *d, size_t k, size_t r, const struct kiln_release_file *f,
			 uint8_t cur[32], int *have)
{
	struct kiln_tree *t = d->t;
	uint8_t b[32];
	uint64_t size;
	char *path;
	bool got;

	if ((uint64_t)t->walk.v[k].st.st_size != f->len)
		return true;
	if (!digest_of(d, k, cur, have))
		return false;
	if (f->data) {
		got = kiln_sha256(f->len ? (const void *)f->data : "", f->len, b) == KILN_OK;
	} else if ((path = kiln_path_join(t->opt->previous[r], f->rel, ""))) {
		got = kiln_file_digest(path, false, &size, b) == KILN_OK;
		free(path);
	} else {
		got = false;
	}
	return got && memcmp(cur, b, 32) != 0;
}

/* A name of an earlier release around a token of a bundler's hash shape:
 * its path REL (of file F of the release) is the stem REL[0..START), the
 * token and the rest. */
struct around {
	const char *rel;
	size_t start, len, f;
};

static int around_cmp(const void *a, const void *b)
{
	const struct around *x = a, *y = b;
	size_t n = x->start < y->start ? x->start : y->start;
	int c = memcmp(x->rel, y->rel, n);

	if (c)
		return c;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->rel + x->start + x->len, y->rel + y->start + y->len);
}

/* May [AT, AT + LEN) of REL pair with the same place of another name: a
 * candidate token of a bundler's hash shape (8 base64url characters
 * without '-' or '_', or 8 hexadecimal digits or more), after a non-empty
 * stem that ends in '-' or '.', or the whole name before its extension
 * only as webpack's "[hash]" (16 hexadecimal digits or more); never in a
 * page's name? */
static bool pairable(const char *rel, size_t at, size_t len)
{
	const char *t = rel + at;
	unsigned a = kiln_token_alphabets(t, len);

	if (kiln_name_kind(rel) == KILN_KIND_PAGE)
		return false;
	if (at == (size_t)(base_of(rel) - rel))
		return (a & KILN_ALPHA_HEX) && len >= 16;
	if (a & KILN_ALPHA_HEX)
		return true;
	return len == 8 && (a & KILN_ALPHA_B64) && !memchr(t, '-', len) && !memchr(t, '_', len);
}

/* The pairable tokens of REL, at most 4 (the first ones): their offsets
 * in AT and lengths in LEN; returns how many.  A pairable token holds no
 * '-' or '_', so it is the part of a segment of the base name between
 * '.'s after its last '-' (or all of it): the name is read once. */
static size_t tokens_of(const char *rel, size_t at[4], size_t len[4])
{
	const char *base = base_of(rel);
	size_t n = 0, b = (size_t)(base - rel);

	for (size_t s = b, e; rel[s] && n < 4; s = e + 1) {
		size_t t = s;
		for (e = s; rel[e] && rel[e] != '.'; e++)
			if (rel[e] == '-' || rel[e] == '_')
				t = e + 1;
		if (!rel[e])
			break; /* no '.' after it: the extension */
		if (t > s && rel[t - 1] != '-')
			continue; /* after a '_' */
		if (kiln_token_at(rel, t, e - t) && pairable(rel, t, e - t)) {
			at[n] = t;
			len[n++] = e - t;
		}
	}
	return n;
}

/* The index of release R's names around their tokens, sorted
 * (around_cmp()): malloc'ed, *N of them; NULL when out of memory. */
static struct around *index_release(const struct kiln_release *r, size_t *n)
{
	struct around *v = malloc((4 * r->n + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t f = 0; f < r->n; f++) {
		size_t at[4], len[4], k = tokens_of(r->v[f].rel, at, len);
		for (size_t j = 0; j < k; j++)
			v[(*n)++] = (struct around){ r->v[f].rel, at[j], len[j], f };
	}
	qsort(v, *n, sizeof(*v), around_cmp);
	return v;
}

/* Entry K renamed from release R (indexed by IX, N entries): a file
 * there whose name is K's with another token at [START, START + LEN),
 * changed as a new hash changes it (kiln_token_changed(): not a counter,
 * a date or a name someone chose), not in the tree, with other bytes; of
 * at most RENAME_MAX names around that place. */
static bool renamed(struct decide *d, size_t k, size_t r, const struct around *ix, size_t n,
		    size_t start, size_t len)
{
	const char *name = d->t->walk.v[k].rel;
	struct around key = { name, start, len, 0 };
	size_t lo = 0, hi = n, end;
	uint8_t sha[32];
	int have = 0;

	while (lo < hi) { /* the first name around the same place */
		size_t mid = lo + (hi - lo) / 2;
		if (around_cmp(&ix[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < n && around_cmp(&ix[end], &key) == 0; end++)
		if (end - lo >= RENAME_MAX)
			return false;
	for (; lo < end; lo++) {
		const struct kiln_release_file *f = &d->t->releases[r].v[ix[lo].f];
		if (kiln_token_changed(f->rel + start, name + start, len) && !in_tree(d, f->rel) &&
		    bytes_differ(d, k, r, f, sha, &have))
			return true;
	}
	return false;
}

/* The byte before the token at AT of REL: '-', '.', or 0 at the start of
 * its base name. */
static char sep_of(const char *rel, size_t at)
{
	return at == dir_len(rel) ? 0 : rel[at - 1];
}

/* Does REL's directory hold a sample of the shape of REL's token at [AT,
 * AT + LEN): a hexadecimal token of that length after the same byte that
 * its name or the bundler proves?  The last directory's answer is kept in
 * D (the tree's files come by path, a directory's together). */
static bool sampled(struct decide *d, const char *rel, size_t at, size_t len)
{
	size_t n = dir_len(rel), lo = 0, hi = d->nfiles;
	char sep = sep_of(rel, at);

	if (d->sample.rel && d->sample.n == n && memcmp(d->sample.rel, rel, n) == 0 &&
	    d->sample.sep == sep && d->sample.len == len)
		return d->sample.yes;
	d->sample.rel = rel;
	d->sample.n = n;
	d->sample.sep = sep;
	d->sample.len = len;
	d->sample.yes = false;
	while (lo < hi) { /* the first path of the directory */
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(d->by_rel[mid].rel, rel, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < d->nfiles && strncmp(d->by_rel[lo].rel, rel, n) == 0 && !d->sample.yes; lo++) {
		const char *o = d->by_rel[lo].rel;
		const struct kiln_fp *fp = &d->fp[d->by_rel[lo].k];
		d->sample.yes = !strchr(o + n, '/') &&
				(fp->why == KILN_WHY_NAME || fp->why == KILN_WHY_BUNDLER) && fp->len == len &&
				sep_of(o, fp->start) == sep &&
				(kiln_token_alphabets(o + fp->start, len) & KILN_ALPHA_HEX);
	}
	return d->sample.yes;
}

/* Is [AT, AT + LEN) of REL digits alone: a counter as often as a hash? */
static bool digits(const char *rel, size_t at, size_t len)
{
	for (size_t i = at; i < at + len; i++)
		if (rel[i] < '0' || rel[i] > '9')
			return false;
	return true;
}

/* Renames from each earlier release.  A token of digits alone (an
 * invoice's or a build's number as often as webpack's hash) pairs only
 * where the tree proves its shape: a sample beside it. */
static void previous_evidence(struct decide *d)
{
	struct kiln_tree *t = d->t;

	for (size_t r = 0; r < t->opt->n_previous; r++) {
		size_t n;
		struct around *ix = index_release(&t->releases[r], &n);
		if (!ix) {
			d->nomem = true;
			return;
		}
		for (size_t f = 0; f < d->nfiles; f++) {
			size_t k = d->by_rel[f].k, at[4], len[4], m;
			const char *rel = d->by_rel[f].rel;
			if (d->fp[k].why != KILN_WHY_NONE || kiln_release_find(&t->releases[r], rel))
				continue;
			m = tokens_of(rel, at, len);
			for (size_t j = 0; j < m && d->fp[k].why == KILN_WHY_NONE; j++)
				if ((!digits(rel, at[j], len[j]) || sampled(d, rel, at[j], len[j])) &&
				    renamed(d, k, r, ix, n, at[j], len[j]))
					d->fp[k] = (struct kiln_fp){ KILN_WHY_PREVIOUS, (uint32_t)at[j],
								     (uint32_t)len[j], 0 };
		}
		free(ix);
	}
}

/* In a directory a complete manifest decides, a file it does not list
 * (a copy of Vite's public/), or one its bundler says it did not hash
 * (webpack's), is immutable by nothing but a glob: the bundler said which
 * are its outputs and hashed.  An output it lists without proving it (no
 * logical name to read the hash against) keeps the other evidence. */
static void decided(struct decide *d)
{
	if (!d->nbundled)
		return;
	for (size_t f = 0; f < d->nfiles; f++) {
		size_t k = d->by_rel[f].k;
		unsigned why = d->fp[k].why;
		if ((!d->listed[k] || (d->listed[k] & (PROVEN | DENIED)) == DENIED) &&
		    why != KILN_WHY_NONE && why != KILN_WHY_BUNDLER && in_bundled(d, d->by_rel[f].rel))
			d->fp[k] = (struct kiln_fp){ 0 };
	}
}

/* Is WHY a reading of the name (its own, the tree's shapes, a rename)
 * that bytes changed under the name refute?  A bundler's account and a
 * glob are not readings: the bundler says it hashed the name, a glob is
 * the user's word. */
static bool read_from_name(unsigned why)
{
	return why == KILN_WHY_NAME || why == KILN_WHY_TREE || why == KILN_WHY_PREVIOUS;
}

/* Did the bytes of entry K change under its name: other than its record
 * of the last run says (its size, or its sha256 unless the index proves
 * the file untouched), or than the file of the same path in an earlier
 * release? */
static bool bytes_changed(struct decide *d, size_t k, const struct kiln_prev_entry *pe)
{
	const struct kiln_entry *e = &d->t->walk.v[k];
	uint8_t sha[32];
	int have = 0;

	if (pe && pe->in_manifest) {
		if (pe->rec.size != (uint64_t)e->st.st_size)
			return true;
		if ((d->t->opt->reread || !kiln_index_matches(&pe->rec, &e->st, -1)) &&
		    digest_of(d, k, sha, &have) && memcmp(sha, pe->rec.sha256, 32) != 0)
			return true;
	}
	for (size_t r = 0; r < d->t->opt->n_previous; r++) {
		const struct kiln_release_file *f = kiln_release_find(&d->t->releases[r], e->rel);
		if (f && bytes_differ(d, k, r, f, sha, &have))
			return true;
	}
	return false;
}

/* A name that held other bytes is no content hash: a file read as one
 * (name, tree, previous) whose bytes changed under its name, or whose
 * record says they once did (the mark is carried while the name stays),
 * is revalidated, and the change is told (once: when it is seen).  Only
 * this shard's files are read. */
static void changed(struct decide *d)
{
	struct kiln_tree *t = d->t;

	for (size_t f = 0; f < d->nfiles; f++) {
		size_t k = d->by_rel[f].k;
		const struct kiln_prev_entry *pe = kiln_tree_prev(t, k);
		struct kiln_fp *fp = &d->fp[k];
		bool now = false;
		char *path;
		if (pe && !pe->seen)
			pe = NULL; /* the name of a recorded sibling */
		fp->changed = pe && pe->in_manifest && pe->rec.fp.changed;
		if (!fp->changed && read_from_name(fp->why) && kiln_shard_mine(t->opt, d->by_rel[f].rel))
			fp->changed = now = bytes_changed(d, k, pe);
		if (fp->changed && read_from_name(fp->why))
			*fp = (struct kiln_fp){ .changed = 1 };
		if (now && (path = kiln_path_join(t->root, d->by_rel[f].rel, ""))) {
			kiln_tree_event(t, KILN_EVENT_BYTES_CHANGED, path, -1, NULL);
			free(path);
		}
	}
}

static bool tree_evidence(struct decide *d)
{
	const char **rels = malloc((d->nfiles + 1) * sizeof(*rels));
	struct kiln_fp *out = malloc((d->nfiles + 1) * sizeof(*out));
	bool ok = rels && out;

	for (size_t f = 0; ok && f < d->nfiles; f++) {
		rels[f] = d->by_rel[f].rel;
		out[f] = d->fp[d->by_rel[f].k];
	}
	ok = ok && kiln_shape_prove(rels, d->nfiles, out);
	for (size_t f = 0; ok && f < d->nfiles; f++)
		d->fp[d->by_rel[f].k] = out[f];
	free(rels);
	free(out);
	return ok;
}

static bool any_glob(const char *const *globs, size_t n, const char *rel)
{
	for (size_t i = 0; i < n; i++)
		if (kiln_glob_match(globs[i], rel))
			return true;
	return false;
}

void kiln_immutable_decide(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;
	struct decide d = { .t = t };
	size_t start, len;

	d.fp = calloc(t->walk.n + 1, sizeof(*d.fp));
	d.listed = calloc(t->walk.n + 1, sizeof(*d.listed));
	d.by_rev = malloc((t->walk.n + 1) * sizeof(*d.by_rev));
	d.by_rel = malloc((t->walk.n + 1) * sizeof(*d.by_rel));
	if (!d.fp || !d.listed || !d.by_rev || !d.by_rel)
		goto nomem;
	for (size_t k = 0; k < t->walk.n; k++)
		if (is_file(&t->walk.v[k])) {
			d.by_rev[d.nfiles] = (struct name){ k, t->walk.v[k].rel,
							    strlen(t->walk.v[k].rel) };
			d.by_rel[d.nfiles] = d.by_rev[d.nfiles];
			d.nfiles++;
		}
	qsort(d.by_rev, d.nfiles, sizeof(*d.by_rev), by_rev);
	qsort(d.by_rel, d.nfiles, sizeof(*d.by_rel), by_rel);
	for (size_t f = 0; f < d.nfiles; f++) {
		size_t k = d.by_rel[f].k;
		if (kiln_fingerprint_span(d.by_rel[f].rel, &start, &len))
			d.fp[k] = (struct kiln_fp){ KILN_WHY_NAME, (uint32_t)start, (uint32_t)len, 0 };
	}
	bundler_evidence(&d);
	previous_evidence(&d);
	if (!tree_evidence(&d) || d.nomem)
		goto nomem;
	decided(&d);
	changed(&d);
	for (size_t f = 0; f < d.nfiles; f++) {
		size_t k = d.by_rel[f].k;
		const char *rel = d.by_rel[f].rel;
		if (d.fp[k].why == KILN_WHY_NONE && any_glob(opt->immutable, opt->n_immutable, rel))
			d.fp[k].why = KILN_WHY_GLOB;
		if (any_glob(opt->mutable_globs, opt->n_mutable, rel))
			d.fp[k] = (struct kiln_fp){ .changed = d.fp[k].changed };
		/* the manifest names the token; it must find the same span again */
		if (d.fp[k].len && (start = kiln_token_find(rel, rel + d.fp[k].start, d.fp[k].len)) !=
					   SIZE_MAX)
			d.fp[k].start = (uint32_t)start;
	}
	free(d.by_rev);
	free(d.by_rel);
	free(d.bundled);
	free(d.listed);
	t->fp = d.fp;
	return;
nomem:
	kiln_ledger_lost(&t->ledger);
	free(d.fp);
	free(d.listed);
	free(d.by_rev);
	free(d.by_rel);
	free(d.bundled);
}

struct kiln_fp kiln_immutable_of(const struct kiln_tree *t, size_t k)
{
	return t->fp && k < t->walk.n ? t->fp[k] : (struct kiln_fp){ 0 };
}
