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
#include "shape.h"
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

/* A file of the tree: its walk index, path and base name. */
struct name {
	size_t k;
	const char *rel, *base;
};

struct decide {
	struct kiln_tree *t;
	struct kiln_fp *fp;
	struct name *by_base; /* the tree's files, sorted by base name */
	struct name *by_rel;  /* the same, sorted by path */
	size_t nfiles;
	/* the directories a complete manifest accounts for (struct
	 * kiln_proof): each a path and the length of its directory part */
	struct { const char *rel; size_t len; } *bundled;
	size_t nbundled;
	unsigned char *listed; /* per walk entry: LISTED, PROVEN, DENIED */
	bool nomem;
};

static size_t dir_len(const char *rel)
{
	const char *b = strrchr(rel, '/');

	return b ? (size_t)(b - rel) + 1 : 0;
}

/* Is REL's directory one a complete manifest accounts for? */
static bool in_bundled(const struct decide *d, const char *rel)
{
	size_t n = dir_len(rel);

	for (size_t i = 0; i < d->nbundled; i++)
		if (d->bundled[i].len == n && memcmp(d->bundled[i].rel, rel, n) == 0)
			return true;
	return false;
}

/* Record REL's directory as one a complete manifest accounts for. */
static void add_bundled(struct decide *d, const char *rel)
{
	void *w;

	if (in_bundled(d, rel))
		return;
	if (!(w = realloc(d->bundled, (d->nbundled + 1) * sizeof(*d->bundled)))) {
		d->nomem = true;
		return;
	}
	d->bundled = w;
	d->bundled[d->nbundled].rel = rel;
	d->bundled[d->nbundled++].len = dir_len(rel);
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

static int by_base(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	int c = strcmp(x->base, y->base);

	return c ? c : strcmp(x->rel, y->rel);
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct name *)a)->rel, ((const struct name *)b)->rel);
}

/* Is REL a file of the tree? */
static bool in_tree(const struct decide *d, const char *rel)
{
	struct name key = { 0, rel, NULL };

	return d->nfiles && bsearch(&key, d->by_rel, d->nfiles, sizeof(key), by_rel);
}

/* Does the tree path REL stand for the manifest's PATH? */
static bool names(const char *rel, const char *path)
{
	size_t r = strlen(rel), p = strlen(path);

	if (r == p)
		return strcmp(rel, path) == 0;
	if (r < p)
		return path[p - r - 1] == '/' && strcmp(path + p - r, rel) == 0;
	return rel[r - p - 1] == '/' && strcmp(rel + r - p, path) == 0;
}

/* The first of the tree's files (by base name) whose base name is BASE. */
static size_t first_of(const struct decide *d, const char *base)
{
	size_t lo = 0, hi = d->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(d->by_base[mid].base, base) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Apply the proofs P to the tree's files. */
static void apply(struct decide *d, const struct kiln_proofs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const char *path = p->v[i].path, *base = base_of(path);
		size_t off = (size_t)(base - path);
		for (size_t f = first_of(d, base); f < d->nfiles && strcmp(d->by_base[f].base, base) == 0;
		     f++) {
			const char *rel = d->by_base[f].rel;
			size_t k = d->by_base[f].k;
			struct kiln_fp *fp = &d->fp[k];
			if (!names(rel, path))
				continue;
			if (p->v[i].complete)
				add_bundled(d, rel);
			d->listed[k] |= LISTED | (p->v[i].denied ? DENIED : 0);
			if (!p->v[i].proven)
				continue;
			d->listed[k] |= PROVEN;
			if (fp->why != KILN_WHY_NONE)
				continue;
			*fp = (struct kiln_fp){ KILN_WHY_BUNDLER, 0, 0 };
			if (p->v[i].len) {
				fp->start = (uint32_t)((size_t)(base_of(rel) - rel) + p->v[i].start - off);
				fp->len = (uint32_t)p->v[i].len;
			}
		}
	}
}

/* Is the complete manifest P, of modification time MTIME, an earlier
 * build's: an output it lists (its implied source maps aside) not in the
 * tree, or a file it lists, or one of a candidate token in the directories
 * it lists, newer than it by more than MANIFEST_SLACK? */
static bool stale(struct decide *d, const struct kiln_proofs *p, time_t mtime)
{
	struct decide dirs = { .t = d->t };
	bool old = false;

	for (size_t i = 0; i < p->n && !old; i++) {
		const char *path = p->v[i].path, *base = base_of(path);
		size_t n = strlen(path), found = 0;
		if (!p->v[i].complete)
			continue;
		for (size_t f = first_of(d, base); f < d->nfiles && strcmp(d->by_base[f].base, base) == 0;
		     f++)
			if (names(d->by_base[f].rel, path)) {
				found++;
				add_bundled(&dirs, d->by_base[f].rel);
				old |= d->t->walk.v[d->by_base[f].k].st.st_mtime > mtime + MANIFEST_SLACK;
			}
		old |= !found && !(n > 4 && strcmp(path + n - 4, ".map") == 0);
	}
	for (size_t f = 0; f < d->nfiles && !old; f++) {
		const char *rel = d->by_rel[f].rel;
		size_t at = 0, len;
		if (in_bundled(&dirs, rel) && kiln_token_next(rel, &at, &len))
			old |= d->t->walk.v[d->by_rel[f].k].st.st_mtime > mtime + MANIFEST_SLACK;
	}
	d->nomem |= dirs.nomem;
	free(dirs.bundled);
	return old;
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

/* Do the bytes of the tree's entry K and of release R's file F differ? */
static bool bytes_differ(struct decide *d, size_t k, size_t r, const struct kiln_release_file *f)
{
	struct kiln_tree *t = d->t;
	uint8_t a[32], b[32];
	uint64_t size;
	char *path;
	bool got;

	if ((uint64_t)t->walk.v[k].st.st_size != f->len)
		return true;
	if (!(path = kiln_path_join(t->root, t->walk.v[k].rel, "")))
		return false;
	got = kiln_file_digest(path, t->walk.v[k].via_link, &size, a) == KILN_OK;
	free(path);
	if (!got)
		return false;
	if (f->data) {
		got = kiln_sha256(f->len ? (const void *)f->data : "", f->len, b) == KILN_OK;
	} else if ((path = kiln_path_join(t->opt->previous[r], f->rel, ""))) {
		got = kiln_file_digest(path, false, &size, b) == KILN_OK;
		free(path);
	} else {
		got = false;
	}
	return got && memcmp(a, b, 32) != 0;
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
		    bytes_differ(d, k, r, f))
			return true;
	}
	return false;
}

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
				if (renamed(d, k, r, ix, n, at[j], len[j]))
					d->fp[k] = (struct kiln_fp){ KILN_WHY_PREVIOUS, (uint32_t)at[j],
								     (uint32_t)len[j] };
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
	d.by_base = malloc((t->walk.n + 1) * sizeof(*d.by_base));
	d.by_rel = malloc((t->walk.n + 1) * sizeof(*d.by_rel));
	if (!d.fp || !d.listed || !d.by_base || !d.by_rel)
		goto nomem;
	for (size_t k = 0; k < t->walk.n; k++)
		if (is_file(&t->walk.v[k])) {
			d.by_base[d.nfiles] = (struct name){ k, t->walk.v[k].rel,
							     base_of(t->walk.v[k].rel) };
			d.by_rel[d.nfiles] = d.by_base[d.nfiles];
			d.nfiles++;
		}
	qsort(d.by_base, d.nfiles, sizeof(*d.by_base), by_base);
	qsort(d.by_rel, d.nfiles, sizeof(*d.by_rel), by_rel);
	for (size_t f = 0; f < d.nfiles; f++) {
		size_t k = d.by_rel[f].k;
		if (kiln_fingerprint_span(d.by_rel[f].rel, &start, &len))
			d.fp[k] = (struct kiln_fp){ KILN_WHY_NAME, (uint32_t)start, (uint32_t)len };
	}
	bundler_evidence(&d);
	previous_evidence(&d);
	if (!tree_evidence(&d) || d.nomem)
		goto nomem;
	decided(&d);
	for (size_t f = 0; f < d.nfiles; f++) {
		size_t k = d.by_rel[f].k;
		const char *rel = d.by_rel[f].rel;
		if (d.fp[k].why == KILN_WHY_NONE && any_glob(opt->immutable, opt->n_immutable, rel))
			d.fp[k].why = KILN_WHY_GLOB;
		if (any_glob(opt->mutable_globs, opt->n_mutable, rel))
			d.fp[k] = (struct kiln_fp){ 0 };
		/* the manifest names the token; it must find the same span again */
		if (d.fp[k].len && (start = kiln_token_find(rel, rel + d.fp[k].start, d.fp[k].len)) !=
					   SIZE_MAX)
			d.fp[k].start = (uint32_t)start;
	}
	free(d.by_base);
	free(d.by_rel);
	free(d.bundled);
	free(d.listed);
	t->fp = d.fp;
	return;
nomem:
	kiln_ledger_lost(&t->ledger);
	free(d.fp);
	free(d.listed);
	free(d.by_base);
	free(d.by_rel);
	free(d.bundled);
}

struct kiln_fp kiln_immutable_of(const struct kiln_tree *t, size_t k)
{
	return t->fp && k < t->walk.n ? t->fp[k] : (struct kiln_fp){ 0 };
}
