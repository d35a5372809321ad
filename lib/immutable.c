/*
 * immutable.c - the decision of immutable.h: each file of the tree, tried
 * against the evidence in order, the first that proves it recorded with
 * the span of its fingerprint.
 *
 * Paths in a bundler's manifest are URLs or paths relative to some other
 * root (webpack's publicPath, Next.js's .next/), so a proof names a tree
 * file when one of the two paths is the other or ends with "/" and the
 * other: the tree's files sorted by path, and by path read backwards,
 * find them with a lookup each.  A
 * complete manifest (Vite's, esbuild's metafile, webpack's stats) decides
 * the directories of the outputs it lists: there a file it does not prove
 * is not immutable by its name, the tree's shapes or a rename, since the
 * bundler said which of its files are hashed.  A complete manifest is
 * stale, and decides nothing, when an output it lists is not in the tree
 * or a file it lists, or a file of those directories that holds a
 * candidate token, is newer than it (a later build wrote them:
 * MANIFEST_SLACK).  Renames and bytes changed under a name are renames.c's.
 */
#include "immutable.h"
#include "immutable_int.h"

#include "bundler.h"
#include "classify.h"
#include "error.h"
#include "shape.h"
#include "sibling.h"
#include "sort.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

static int bundled_cmp(const void *a, const void *b)
{
	const struct dir *x = a, *y = b;
	int c = memcmp(x->rel, y->rel, x->len < y->len ? x->len : y->len);

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* Is REL's directory one a complete manifest accounts for?  (The set is
 * sorted, and each directory kept once, on the first question after a
 * directory was added.) */
static bool in_bundled(struct kiln_decide *d, const char *rel)
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
static void add_bundled(struct kiln_decide *d, const char *rel)
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

/* Call FN(D, F, ARG) for each file F of the tree that stands for the
 * manifest's PATH: PATH itself or a path PATH ends with after a '/' (found
 * by path), or one that ends with '/' and PATH (by the path read
 * backwards): a lookup each, never a scan of the files. */
static void each_named(struct kiln_decide *d, const char *path,
		       void (*fn)(struct kiln_decide *, const struct name *, void *), void *arg)
{
	size_t pn = strlen(path), lo = 0, hi = d->nfiles;

	/* sorted the first time a tree has a bundler's manifest to read:
	 * most trees have none, and a sort of every path costs n log n */
	if (!d->by_rev) {
		if (!(d->by_rev = malloc((d->nfiles + 1) * sizeof(*d->by_rev)))) {
			d->nomem = true;
			return;
		}
		memcpy(d->by_rev, d->by_rel, d->nfiles * sizeof(*d->by_rev));
		qsort(d->by_rev, d->nfiles, sizeof(*d->by_rev), by_rev);
	}

	for (const char *s = path; s;) {
		struct name key = { 0, s, 0 }, *f;
		if (d->nfiles && (f = bsearch(&key, d->by_rel, d->nfiles, sizeof(key), kiln_decide_by_rel)))
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

/* Record the root of a complete manifest's outputs that F, standing for
 * its output PATH, gives: the part of F's path before PATH ("" when F's
 * path is PATH or a part of it).  More roots than kept: none is trusted
 * (the outputs' directories alone are decided). */
static void add_root(struct kiln_decide *d, const struct name *f, const char *path)
{
	const size_t most = sizeof(d->roots) / sizeof(d->roots[0]);
	size_t pn = strlen(path), len = f->len > pn ? f->len - pn : 0;

	for (size_t i = 0; i < d->nroots && i < most; i++)
		if (d->roots[i].len == len && memcmp(d->roots[i].rel, f->rel, len) == 0)
			return;
	if (d->nroots < most)
		d->roots[d->nroots++] = (struct dir){ f->rel, len };
	else
		d->nroots = most + 1;
}

/* Is REL under a root of a complete manifest's outputs (add_root())? */
static bool under_root(const struct kiln_decide *d, const char *rel)
{
	if (d->nroots > sizeof(d->roots) / sizeof(d->roots[0]))
		return false;
	for (size_t i = 0; i < d->nroots; i++)
		if (strncmp(rel, d->roots[i].rel, d->roots[i].len) == 0)
			return true;
	return false;
}

/* Apply the proof P to the tree's file F that stands for it. */
static void apply_one(struct kiln_decide *d, const struct name *f, void *arg)
{
	const struct kiln_proof *p = arg;
	struct kiln_fp *fp = &d->fp[f->k];
	size_t off = (size_t)(base_of(p->path) - p->path);

	if (p->complete) {
		add_bundled(d, f->rel);
		add_root(d, f, p->path);
	}
	d->listed[f->k] |= LISTED | (p->denied ? DENIED : 0);
	if (!p->proven)
		return;
	if (!(d->listed[f->k] & COUNTED))
		d->nproved++;
	d->listed[f->k] |= PROVEN | COUNTED;
	if (fp->why != KILN_WHY_NONE)
		return;
	*fp = (struct kiln_fp){ KILN_WHY_BUNDLER, 0, 0, 0 };
	if (p->len) {
		fp->start = (uint32_t)((size_t)(base_of(f->rel) - f->rel) + p->start - off);
		fp->len = (uint32_t)p->len;
	}
}

/* Apply the proofs P to the tree's files. */
static void apply(struct kiln_decide *d, const struct kiln_proofs *p)
{
	for (size_t i = 0; i < p->n; i++)
		each_named(d, p->v[i].path, apply_one, &p->v[i]);
}

/* What stale() finds of one output. */
struct staleness {
	struct kiln_decide *dirs;
	time_t mtime;
	size_t found;
	const char *newer; /* a file newer than the manifest */
};

static void stale_one(struct kiln_decide *d, const struct name *f, void *arg)
{
	struct staleness *s = arg;

	s->found++;
	add_bundled(s->dirs, f->rel);
	if (!s->newer && d->t->walk.v[f->k].st.st_mtime > s->mtime + MANIFEST_SLACK)
		s->newer = f->rel;
}

/* Is the complete manifest P, of modification time MTIME, an earlier
 * build's: an output it lists (its implied source maps aside) not in the
 * tree, or a file it lists, or one of a candidate token in the directories
 * it lists, newer than it by more than MANIFEST_SLACK?  Then WHY (N bytes)
 * says which; else *NDIRS is how many directories it decides. */
static bool stale(struct kiln_decide *d, const struct kiln_proofs *p, time_t mtime, char *why,
		  size_t n, size_t *ndirs)
{
	struct kiln_decide dirs = { .t = d->t };
	struct staleness s = { &dirs, mtime, 0, NULL };
	const char *gone = NULL;

	for (size_t i = 0; i < p->n && !s.newer && !gone; i++) {
		const char *path = p->v[i].path;
		size_t len = strlen(path);
		if (!p->v[i].complete)
			continue;
		s.found = 0;
		each_named(d, path, stale_one, &s);
		if (!s.found && !(len > 4 && strcmp(path + len - 4, ".map") == 0))
			gone = path;
	}
	in_bundled(&dirs, ""); /* (sorted, each directory once) */
	for (size_t f = 0; f < d->nfiles && !s.newer && !gone; f++) {
		const char *rel = d->by_rel[f].rel;
		size_t at = 0, len;
		if (in_bundled(&dirs, rel) && kiln_token_next(rel, &at, &len) &&
		    d->t->walk.v[d->by_rel[f].k].st.st_mtime > mtime + MANIFEST_SLACK)
			s.newer = rel;
	}
	if (gone)
		snprintf(why, n, "it lists %s, which the tree does not hold", gone);
	else if (s.newer)
		snprintf(why, n, "%s is newer than it: a later build's", s.newer);
	*ndirs = dirs.nbundled;
	d->nomem |= dirs.nomem;
	free(dirs.bundled);
	return gone || s.newer;
}

/* Tell what the manifest PATH of FORMAT (complete: COMPLETE) proved
 * (D->nproved files) and decides (NDIRS directories), or why it is STALE
 * (WHY), through on_event (-v shows it). */
static void tell(struct kiln_decide *d, const char *path, const char *format, bool complete,
		 bool stale, const char *why, size_t ndirs)
{
	struct kiln_error e = { KILN_OK, 0, NULL, "" };
	char text[1024];
	int n = snprintf(text, sizeof(text), "%s: proves %zu file%s", format, d->nproved,
			 d->nproved == 1 ? "" : "s");

	if (n < 0 || (size_t)n >= sizeof(text))
		n = 0;
	if (stale)
		snprintf(text + n, sizeof(text) - (size_t)n, "; stale: decides nothing (%s)", why);
	else if (complete)
		snprintf(text + n, sizeof(text) - (size_t)n, ", decides %zu director%s", ndirs,
			 ndirs == 1 ? "y" : "ies");
	else
		snprintf(text + n, sizeof(text) - (size_t)n, ", decides no directory (it does not "
			 "list every output)");
	e.what = text;
	kiln_tree_event(d->t, KILN_EVENT_FINGERPRINTS, path, -1, &e);
}

/* Read the manifest PATH (REQUIRED: one given with --fingerprints, whose
 * problems are errors, and which may be a link: the user named it; one of
 * the tree's is opened without following one) and apply it. */
static void read_manifest(struct kiln_decide *d, const char *path, bool required)
{
	struct kiln_error err = { 0 };
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (required ? 0 : O_NOFOLLOW));
	struct kiln_proofs p = { 0 };
	struct stat st;
	uint8_t *text = NULL;
	const char *format;
	kiln_status ret = KILN_ERR_IO;
	char why[512] = "";
	size_t ndirs = 0;
	bool complete, old = false;

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
	complete = ret == KILN_OK && p.n && p.v[0].complete;
	if (complete && (old = stale(d, &p, st.st_mtime, why, sizeof(why), &ndirs)))
		for (size_t i = 0; i < p.n; i++)
			p.v[i].complete = false;
	d->nproved = 0;
	for (size_t k = 0; k < d->t->walk.n; k++)
		d->listed[k] &= (unsigned char)~COUNTED;
	if (ret == KILN_OK)
		apply(d, &p);
	if (ret == KILN_OK)
		tell(d, path, format, complete, old, why, ndirs);
	else if (ret == KILN_ERR_INVALID && !required)
		kiln_tree_event(d->t, KILN_EVENT_FINGERPRINTS, path, -1, &err);
	kiln_proofs_free(&p);
	if (ret == KILN_ERR_NOMEM)
		kiln_ledger_lost(&d->t->ledger);
	if (ret != KILN_OK && required) {
		d->t->fingerprints_failed = true;
		kiln_tree_path_error(d->t, path, &err);
	}
}

static void bundler_evidence(struct kiln_decide *d)
{
	for (size_t i = 0; i < sizeof(top_manifests) / sizeof(top_manifests[0]); i++) {
		char *path;
		if (!kiln_decide_in_tree(d, top_manifests[i]) ||
		    !(path = kiln_path_join(d->t->root, top_manifests[i], "")))
			continue;
		read_manifest(d, path, false);
		free(path);
	}
	for (size_t i = 0; i < d->t->opt->n_fingerprints; i++)
		read_manifest(d, d->t->opt->fingerprints[i], true);
}

/* Under the root of a complete manifest's outputs (the tree's top for
 * Vite's .vite/manifest.json), a file it does not list (a copy of Vite's
 * public/, in any directory), or one its bundler says it did not hash
 * (webpack's), is immutable by nothing but a glob: the bundler said which
 * are its outputs and hashed.  An output it lists without proving it (no
 * logical name to read the hash against) keeps the other evidence. */
static void decided(struct kiln_decide *d)
{
	if (!d->nbundled)
		return;
	for (size_t f = 0; f < d->nfiles; f++) {
		size_t k = d->by_rel[f].k;
		unsigned why = d->fp[k].why;
		if ((!d->listed[k] || (d->listed[k] & (PROVEN | DENIED)) == DENIED) &&
		    why != KILN_WHY_NONE && why != KILN_WHY_BUNDLER &&
		    (in_bundled(d, d->by_rel[f].rel) || under_root(d, d->by_rel[f].rel)))
			d->fp[k] = (struct kiln_fp){ 0 };
	}
}

static bool tree_evidence(struct kiln_decide *d)
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
	struct kiln_decide d = { .t = t };
	size_t start, len;

	d.fp = calloc(t->walk.n + 1, sizeof(*d.fp));
	d.listed = calloc(t->walk.n + 1, sizeof(*d.listed));
	d.by_rel = malloc((t->walk.n + 1) * sizeof(*d.by_rel));
	if (!d.fp || !d.listed || !d.by_rel)
		goto nomem;
	for (size_t k = 0; k < t->walk.n; k++)
		if (is_file(&t->walk.v[k]))
			d.by_rel[d.nfiles++] = (struct name){ k, t->walk.v[k].rel,
							      strlen(t->walk.v[k].rel) };
	kiln_sort(d.by_rel, d.nfiles, sizeof(*d.by_rel), kiln_decide_by_rel);
	for (size_t f = 0; f < d.nfiles; f++) {
		size_t k = d.by_rel[f].k;
		if (kiln_fingerprint_span(d.by_rel[f].rel, &start, &len))
			d.fp[k] = (struct kiln_fp){ KILN_WHY_NAME, (uint32_t)start, (uint32_t)len, 0 };
	}
	bundler_evidence(&d);
	kiln_renames_find(&d);
	if (!tree_evidence(&d) || d.nomem)
		goto nomem;
	decided(&d);
	kiln_renames_changed(&d);
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
