/*
 * immutable.c - the decision of immutable.h: each file of the tree, tried
 * against the evidence in order, the first that proves it recorded with
 * the span of its fingerprint.
 *
 * Paths in a bundler's manifest are URLs or paths relative to some other
 * root (webpack's publicPath, Next.js's .next/), so a proof names a tree
 * file when one of the two paths is the other or ends with "/" and the
 * other: the index of the tree's files by base name finds them.  The
 * earlier releases are the ones dict.c listed (files whose names hold a
 * candidate token); a rename is only compared byte for byte when the sizes
 * agree.  A directory that a complete manifest (Vite's, esbuild's,
 * webpack's stats) accounts for takes no file by the tree's shapes: the
 * bundler said which of its files are hashed.
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
	"ngsw.json",
};

/* Manifests larger than this are not read. */
#define MANIFEST_MAX_SIZE ((size_t)64 << 20)

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

/* Apply the proofs P to the tree's files. */
static void apply(struct decide *d, const struct kiln_proofs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const char *path = p->v[i].path, *base = base_of(path);
		size_t lo = 0, hi = d->nfiles, off = (size_t)(base - path);
		while (lo < hi) { /* the first file with this base name */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(d->by_base[mid].base, base) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < d->nfiles && strcmp(d->by_base[lo].base, base) == 0; lo++) {
			const char *rel = d->by_base[lo].rel;
			struct kiln_fp *fp = &d->fp[d->by_base[lo].k];
			if (!names(rel, path))
				continue;
			if (p->v[i].complete)
				add_bundled(d, rel);
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

/* Read the manifest PATH (REQUIRED: one given with --fingerprints, whose
 * problems are errors) into *P. */
static void read_manifest(struct decide *d, const char *path, bool required,
			  struct kiln_proofs *p)
{
	struct kiln_error err = { 0 };
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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
		ret = kiln_bundler_read(text ? (const char *)text : "", (size_t)st.st_size, p,
					&format);
		if (ret == KILN_ERR_INVALID)
			kiln_fail(&err, KILN_ERR_INVALID, 0, "not a bundler manifest kiln reads "
				  "(Vite, webpack, esbuild, Next.js, Angular)");
		else if (ret == KILN_ERR_NOMEM)
			kiln_fail(&err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
	}
	if (fd >= 0)
		close(fd);
	free(text);
	if (ret == KILN_ERR_NOMEM)
		kiln_ledger_lost(&d->t->ledger);
	if (ret != KILN_OK && required) {
		d->t->fingerprints_failed = true;
		kiln_tree_path_error(d->t, path, &err);
	}
}

static void bundler_evidence(struct decide *d)
{
	struct kiln_proofs p = { 0 };

	for (size_t i = 0; i < sizeof(top_manifests) / sizeof(top_manifests[0]); i++) {
		char *path;
		if (!in_tree(d, top_manifests[i]) ||
		    !(path = kiln_path_join(d->t->root, top_manifests[i], "")))
			continue;
		read_manifest(d, path, false, &p);
		free(path);
	}
	for (size_t i = 0; i < d->t->opt->n_fingerprints; i++)
		read_manifest(d, d->t->opt->fingerprints[i], true, &p);
	apply(d, &p);
	kiln_proofs_free(&p);
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

/* Entry K renamed from release R: a file there that is its path with
 * another token at [START, START + LEN), changed as a new hash changes it
 * (kiln_token_changed(): not a counter or a date), not in the tree, with
 * other bytes. */
static bool renamed(struct decide *d, size_t k, size_t r, size_t start, size_t len)
{
	const struct kiln_release *rel = &d->t->releases[r];
	const char *name = d->t->walk.v[k].rel;
	size_t n = strlen(name), lo = 0, hi = rel->n;

	while (lo < hi) { /* the first file past the prefix */
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(rel->v[mid].rel, name, start) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < rel->n && strncmp(rel->v[lo].rel, name, start) == 0; lo++) {
		const struct kiln_release_file *f = &rel->v[lo];
		const char *tok = f->rel + start;
		if (strlen(f->rel) != n || strcmp(tok + len, name + start + len) != 0 ||
		    !kiln_token_at(f->rel, start, len) || !kiln_token_changed(tok, name + start, len) ||
		    in_tree(d, f->rel))
			continue;
		if (bytes_differ(d, k, r, f))
			return true;
	}
	return false;
}

static void previous_evidence(struct decide *d)
{
	struct kiln_tree *t = d->t;

	for (size_t f = 0; f < d->nfiles; f++) {
		size_t k = d->by_rel[f].k, at[16], len[16], n = 0;
		for (size_t j = 0; j < 16; j++)
			at[j] = SIZE_MAX;
		const char *rel = d->by_rel[f].rel;
		if (d->fp[k].why != KILN_WHY_NONE)
			continue;
		for (size_t p = 0; n < 16 && kiln_token_next(rel, &p, &len[n]); p++)
			at[n++] = p;
		/* the token nearest the extension first, and of the tokens
		 * that end together only the shortest: "index-XXXXXXXX"'s hash,
		 * never the whole of it (which would pair "sale-SALE2025" with
		 * any other name of its length) */
		while (n-- > 0 && d->fp[k].why == KILN_WHY_NONE) {
			bool inner = false;
			for (size_t j = n + 1; j < 16 && at[j] != SIZE_MAX; j++)
				inner |= at[j] + len[j] == at[n] + len[n];
			if (inner || !kiln_token_hashlike(rel + at[n], len[n]))
				continue;
			for (size_t r = 0; r < t->opt->n_previous; r++)
				if (!kiln_release_find(&t->releases[r], rel) &&
				    renamed(d, k, r, at[n], len[n])) {
					d->fp[k] = (struct kiln_fp){ KILN_WHY_PREVIOUS, (uint32_t)at[n],
								     (uint32_t)len[n] };
					break;
				}
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
	/* where a complete manifest said which files are hashed, the others
	 * were not (Vite's copies of public/: "badge-appstore.svg") */
	for (size_t f = 0; ok && f < d->nfiles; f++)
		if (out[f].why != KILN_WHY_TREE || !in_bundled(d, rels[f]))
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
	d.by_base = malloc((t->walk.n + 1) * sizeof(*d.by_base));
	d.by_rel = malloc((t->walk.n + 1) * sizeof(*d.by_rel));
	if (!d.fp || !d.by_base || !d.by_rel)
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
	t->fp = d.fp;
	return;
nomem:
	kiln_ledger_lost(&t->ledger);
	free(d.fp);
	free(d.by_base);
	free(d.by_rel);
	free(d.bundled);
}

struct kiln_fp kiln_immutable_of(const struct kiln_tree *t, size_t k)
{
	return t->fp && k < t->walk.n ? t->fp[k] : (struct kiln_fp){ 0 };
}
