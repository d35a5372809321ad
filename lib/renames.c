/*
 * renames.c - what a path of the tree held before, as evidence of its
 * name: a rename from an earlier release (--previous) with new bytes makes
 * a token a hash; other bytes under the same name (the last run's record,
 * or an earlier release's file of the same path) make it none.
 *
 * The earlier releases are the ones dict.c listed (files whose names hold
 * a candidate token), indexed by the name around a token of a bundler's
 * hash shape; a rename is only compared byte for byte when the sizes
 * agree, and a file of the tree is read once for all of them.
 */
#include "immutable_int.h"

#include "hash.h"
#include "index.h"
#include "shard.h"
#include "sibling.h"
#include "source.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An earlier release's files of one name around a token: more than this
 * many is a series (map tiles, numbered pages), not one file renamed. */
#define RENAME_MAX 16

/* The SHA-256 of the tree's entry K into OUT, read once (*HAVE: 0 not
 * yet, 1 read, -1 unreadable). */
static bool digest_of(struct kiln_decide *d, size_t k, uint8_t out[32], int *have)
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
static bool bytes_differ(struct kiln_decide *d, size_t k, size_t r, const struct kiln_release_file *f,
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
static bool renamed(struct kiln_decide *d, size_t k, size_t r, const struct around *ix, size_t n,
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
		if (kiln_token_changed(f->rel + start, name + start, len) && !kiln_decide_in_tree(d, f->rel) &&
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
static bool sampled(struct kiln_decide *d, const char *rel, size_t at, size_t len)
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
void kiln_renames_find(struct kiln_decide *d)
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
static bool bytes_changed(struct kiln_decide *d, size_t k, const struct kiln_prev_entry *pe)
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

/* Does an earlier release's own manifest say REL's bytes once changed
 * under its name (a fresh build given --previous keeps the mark)? */
static bool marked_before(const struct kiln_decide *d, const char *rel)
{
	for (size_t r = 0; r < d->t->opt->n_previous; r++) {
		const struct kiln_release_file *f = kiln_release_find(&d->t->releases[r], rel);
		if (f && f->changed)
			return true;
	}
	return false;
}

/* A name that held other bytes is no content hash: a file read as one
 * (name, tree, previous) whose bytes changed under its name, or whose
 * record says they once did (the mark is carried while the name stays),
 * is revalidated, and the change is told (once: when it is seen).  Only
 * this shard's files are read. */
void kiln_renames_changed(struct kiln_decide *d)
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
		fp->changed = (pe && pe->in_manifest && pe->rec.fp.changed) ||
			      marked_before(d, d->by_rel[f].rel);
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

