/*
 * dict.c - dictionary deltas; see dict.h for the rules.
 *
 * The earlier releases are listed before the pool (release.c: with the
 * same walk as the tree, so their siblings and kiln's own files are never
 * taken for dictionaries; only names that may hold a hash), and their files
 * that fit the family of a fingerprinted asset of the tree (immutable.h:
 * its path with a token of the same length where its fingerprint is) are
 * kept, by family.  Each asset of the tree
 * whose family has members there is one piece of work for the pool: read
 * the asset and hash it (it must still be the content its record holds),
 * then for each member, newest release first, read it, and reuse the
 * earlier run's delta for this content and dictionary or encode one, verify
 * it with --verify, and keep it by the size rule.  A kept delta whose bytes
 * are already on disk is left there untouched (an unchanged re-run writes
 * nothing); another is written atomically with its source's metadata.
 * Then every file named like a delta that no asset kept is removed.
 */
#include "dict.h"
#include "beneath.h"

#include "codec.h"
#include "decide.h"
#include "error.h"
#include "hash.h"
#include "immutable.h"
#include "release.h"
#include "sibling.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Neither a source nor a dictionary larger than this gets a delta: both are
 * held in memory, and a client may refuse a window over 128 MiB. */
#define DICT_MAX_SIZE ((uint64_t)64 << 20)

/* A fingerprinted file of an earlier release. */
struct member {
	char *family;
	const char *rel;   /* the release's */
	size_t release;    /* index into opt->previous: 0 is the newest */
	const uint8_t *data; /* an archive's file: its bytes (LEN), else NULL */
	size_t len;
};

/* One asset to work on. */
struct job {
	size_t k;          /* walk index */
	size_t first, n;   /* its family's members, in the sorted list */
	size_t len;        /* its fingerprint's length */
};

/* What the pool's workers read (kiln_dict_file()): set by main before the
 * pool, read-only while it runs (t->dict_plan). */
struct kiln_dict_plan {
	struct kiln_tree *t;
	struct member *m;  /* every earlier release's members, sorted by family */
	size_t nm;
	struct family *fams; /* the tree's, sorted and unique */
	size_t nfams;
};

/* The family of a fingerprinted asset, and its fingerprint's length. */
struct family {
	char *family;
	size_t len;
};

static int family_cmp(const void *a, const void *b)
{
	const struct family *x = a, *y = b;
	int c = strcmp(x->family, y->family);

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->family, y->family);

	if (c)
		return c;
	if (x->release != y->release)
		return x->release < y->release ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* Add member M to D (which then owns its family); false when out of
 * memory (then freed). */
static bool add_member(struct kiln_dict_plan *d, struct member m)
{
	struct member *v = realloc(d->m, (d->nm + 1) * sizeof(*v));

	if (!v) {
		free(m.family);
		return false;
	}
	d->m = v;
	v[d->nm++] = m;
	return true;
}

void kiln_dict_begin(struct kiln_tree *t)
{
	for (size_t i = 0; i < t->opt->n_previous; i++) {
		struct kiln_error err = { 0 };
		struct stat st;
		/* the very first deploy has no previous release yet */
		if (stat(t->opt->previous[i], &st) != 0 && errno == ENOENT) {
			err.what = "no previous release there, no dictionary deltas";
			kiln_tree_event(t, KILN_EVENT_PREVIOUS_UNUSED, t->opt->previous[i], -1, &err);
			t->release_absent[i] = true;
			continue;
		}
		if (kiln_release_read(t->opt->previous[i], t->opt, DICT_MAX_SIZE, &t->releases[i],
				      &err) != KILN_OK) {
			kiln_tree_path_error(t, t->opt->previous[i], &err);
			t->dict_failed = true; /* its deltas go */
		}
	}
}

/* The families of the tree's fingerprinted assets the pool will try to
 * compress (before it runs: the candidates it takes). */
static bool list_families(struct kiln_dict_plan *d)
{
	struct kiln_tree *t = d->t;
	size_t n = 0;

	if (!(d->fams = calloc(t->walk.n + 1, sizeof(*d->fams))))
		return false;
	for (size_t k = 0; k < t->walk.n; k++) {
		struct kiln_fp fp = kiln_immutable_of(t, k);
		if (!fp.len || t->walk.v[k].outcome != KILN_OUTCOME_CANDIDATE || !t->walk.v[k].queued)
			continue;
		if (!(d->fams[n].family = kiln_family_at(t->walk.v[k].rel, fp.start, fp.len)))
			goto nomem;
		d->fams[n++].len = fp.len;
	}
	if (n > 1)
		qsort(d->fams, n, sizeof(*d->fams), family_cmp);
	for (size_t i = 0; i < n; i++) {
		if (d->nfams && family_cmp(&d->fams[d->nfams - 1], &d->fams[i]) == 0)
			free(d->fams[i].family);
		else
			d->fams[d->nfams++] = d->fams[i];
	}
	return true;
nomem:
	d->nfams = n;
	return false;
}

/* Release I's files that are members of a family of the tree, into D. */
static bool list_members(struct kiln_dict_plan *d, size_t i)
{
	const struct kiln_release *r = &d->t->releases[i];

	for (size_t f = 0; f < r->n; f++) {
		const char *rel = r->v[f].rel;
		struct family key = { NULL, 0 };
		for (size_t p = 0; kiln_token_next(rel, &p, &key.len); p++) {
			if (!(key.family = kiln_family_at(rel, p, key.len)))
				return false;
			if (!d->nfams || !bsearch(&key, d->fams, d->nfams, sizeof(key), family_cmp)) {
				free(key.family);
				continue;
			}
			if (!add_member(d, (struct member){ key.family, rel, i, r->v[f].data,
							     r->v[f].len }))
				return false;
		}
	}
	return true;
}

/* Does the tree have the family FAM (fingerprint LEN) one directory further
 * down (DOWN: a family X/FAM), or further up (FAM is X/family)? */
static bool family_shifted(const struct kiln_dict_plan *d, const char *fam, size_t len, bool down)
{
	const char *s = strchr(fam, '/');
	struct family key = { (char *)(s ? s + 1 : ""), len };

	if (!down)
		return s && bsearch(&key, d->fams, d->nfams, sizeof(key), family_cmp);
	for (size_t j = 0; j < d->nfams; j++) {
		const char *t = strchr(d->fams[j].family, '/');
		if (t && d->fams[j].len == len && strcmp(t + 1, fam) == 0)
			return true;
	}
	return false;
}

/* Release I shares no family with the tree: a warning naming the likely
 * mistake, a path given one directory too deep or too high. */
static void warn_unshared(struct kiln_dict_plan *d, size_t i)
{
	const struct kiln_release *r = &d->t->releases[i];
	const char *path = d->t->opt->previous[i];
	struct kiln_error err = { 0 };
	char text[512];
	int shift = 0; /* 1: too deep, -1: too high */

	for (size_t f = 0; !shift && f < r->n; f++) {
		const char *rel = r->v[f].rel;
		size_t len;
		for (size_t p = 0; !shift && kiln_token_next(rel, &p, &len); p++) {
			char *fam = kiln_family_at(rel, p, len);
			if (!fam)
				return;
			if (family_shifted(d, fam, len, true))
				shift = 1;
			else if (family_shifted(d, fam, len, false))
				shift = -1;
			if (shift == -1)
				snprintf(text, sizeof(text),
					 "shares no file family with the tree, no dictionary "
					 "deltas: given one level too high? its %.*s/ holds the tree's "
					 "files (give %s/%.*s)",
					 (int)strcspn(rel, "/"), rel, path, (int)strcspn(rel, "/"), rel);
			free(fam);
		}
	}
	if (shift == 1)
		snprintf(text, sizeof(text),
			 "shares no file family with the tree, no dictionary deltas: given one "
			 "level too deep? its files are the tree's one directory down (give the "
			 "release's top directory, the one that holds this)");
	else if (!shift)
		snprintf(text, sizeof(text),
			 "shares no file family with the tree (no file named like one of its "
			 "fingerprinted assets), no dictionary deltas");
	err.what = text;
	kiln_tree_event(d->t, KILN_EVENT_PREVIOUS_UNUSED, path, -1, &err);
}

/* Read the regular file ROOT/REL whole: *BUF (malloc'ed), *LEN, SHA256. */
static bool read_whole(const char *root, const char *rel, uint8_t **buf, size_t *len,
		       uint8_t sha[32])
{
	char *path = kiln_path_join(root, rel, "");
	int fd = path ? kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0) : -1;
	struct kiln_error err;
	struct stat st;
	bool ok = false;

	*buf = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size <= DICT_MAX_SIZE &&
	    kiln_source_read(fd, &st, buf, &err) == KILN_OK) {
		*len = (size_t)st.st_size;
		ok = kiln_sha256(*buf ? (const void *)*buf : "", *len, sha) == KILN_OK;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return ok;
}

/* One asset's state while its deltas are made. */
struct asset {
	struct kiln_tree *t;
	const struct kiln_entry *e;
	const struct kiln_report *r;
	struct stat st;
	uint8_t *src;
	size_t len;
	uint8_t sha[32];
	struct kiln_dict_list kept;
};

/* May a delta of SIZE bytes be kept beside what A has kept so far
 * (decide.c's rule)? */
static bool small_enough(const struct asset *a, uint64_t size)
{
	uint64_t sib[KILN_MAX_CODINGS], *kept = NULL;
	size_t nsib = 0;
	bool ok;

	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (a->r->coding[c].outcome == KILN_CODING_KEPT)
			sib[nsib++] = a->r->coding[c].size;
	if (a->kept.n && !(kept = malloc(a->kept.n * sizeof(*kept))))
		return false;
	for (size_t i = 0; i < a->kept.n; i++)
		kept[i] = a->kept.v[i].size;
	ok = kiln_decide_delta(a->t->opt, a->len, size, sib, nsib, kept, a->kept.n);
	free(kept);
	return ok;
}

/* The earlier run's delta of this content against DICT_SHA, still on disk
 * as recorded at PATH: its record, or NULL. */
static const struct kiln_dict_record *recorded(const struct asset *a, const uint8_t dict_sha[32],
					       const char *recipe, const char *path)
{
	const struct kiln_prev_entry *pe = kiln_state_find(&a->t->state, a->e->rel);
	struct stat st;

	if (!pe || !pe->in_manifest || pe->rec.size != a->len ||
	    memcmp(pe->rec.sha256, a->sha, 32) != 0)
		return NULL;
	for (size_t i = 0; i < pe->rec.ndicts; i++) {
		const struct kiln_dict_record *dr = &pe->rec.dicts[i];
		if (memcmp(dr->dict_sha256, dict_sha, 32) == 0 && strcmp(dr->recipe, recipe) == 0 &&
		    kiln_beneath_lstat(a->t->root, path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size == dr->size)
			return dr;
	}
	return NULL;
}

/* Add a kept delta to A's list, in dictionary order. */
static bool keep(struct asset *a, const struct kiln_dict_record *dr)
{
	struct kiln_dict_record *v = realloc(a->kept.v, (a->kept.n + 1) * sizeof(*v));
	size_t i;

	if (!v)
		return false;
	a->kept.v = v;
	for (i = a->kept.n; i > 0 && memcmp(v[i - 1].dict_sha256, dr->dict_sha256, 32) > 0; i--)
		v[i] = v[i - 1];
	v[i] = *dr;
	if (!(v[i].dict_path = strdup(dr->dict_path))) {
		memmove(&v[i], &v[i + 1], (a->kept.n - i) * sizeof(*v));
		return false;
	}
	a->kept.n++;
	return true;
}

/* Verify ENC against the dictionary and A's source, when --verify asks. */
static bool verified(const struct asset *a, const uint8_t *enc, size_t enc_len,
		     const uint8_t *dict, size_t dict_len, const uint8_t dict_sha[32])
{
	return !a->t->opt->verify || kiln_codec_dcz.verify(enc, enc_len, dict, dict_len, dict_sha,
							   a->src, a->len) == KILN_OK;
}

/* A delta of A against the member M (bytes DICT, DICT_LEN, DICT_SHA). */
static void one_delta(struct asset *a, const struct member *m, const uint8_t *dict,
		      size_t dict_len, const uint8_t dict_sha[32])
{
	struct kiln_tree *t = a->t;
	struct kiln_dict_record dr = { .dict_path = (char *)m->rel } /* keep() copies it */;
	const struct kiln_dict_record *old;
	char *path = kiln_dict_sibling_path(t->root, a->e->rel, dict_sha);
	uint8_t *enc = NULL, sha[32];
	size_t enc_len = 0;
	uint64_t size;
	struct kiln_error err;

	memcpy(dr.dict_sha256, dict_sha, 32);
	kiln_codec_dcz.recipe(dr.recipe);
	if (!path || !kiln_sibling_name_fits(a->e->rel, path + strlen(path) -
						(KILN_DICT_ID_HEX + 1 + strlen(kiln_codec_dcz.suffix))))
		goto out;
	if ((old = recorded(a, dict_sha, dr.recipe, path))) {
		/* the earlier run's: read back to check its digest and header
		 * (and, with --verify, to decode it) */
		uint8_t *buf = NULL;
		size_t blen = 0;
		char *rel = path + strlen(t->root) + 1;
		if (small_enough(a, old->size) && read_whole(t->root, rel, &buf, &blen, sha) &&
		    blen == old->size && memcmp(sha, old->sha256, 32) == 0 &&
		    kiln_codec_dcz.names_dictionary(buf, blen, dict_sha) &&
		    verified(a, buf, blen, dict, dict_len, dict_sha) &&
		    (t->opt->dry_run || kiln_sibling_fix_meta(t->root, path, &a->st))) {
			dr.size = old->size;
			memcpy(dr.sha256, old->sha256, 32);
			if (!keep(a, &dr))
				kiln_ledger_lost(&t->ledger);
			free(buf);
			goto out;
		}
		free(buf);
	}
	if (atomic_load(&t->run->cancelled))
		goto out;
	if (kiln_codec_dcz.encode(dict, dict_len, dict_sha, a->src, a->len, &enc, &enc_len) !=
	    KILN_OK)
		goto out; /* no delta: the other siblings serve */
	if (!small_enough(a, enc_len))
		goto out;
	if (!verified(a, enc, enc_len, dict, dict_len, dict_sha)) {
		kiln_fail(&err, KILN_ERR_VERIFY, 0, "delta does not decode to its source");
		kiln_tree_path_error(t, path, &err); /* the run goes on without it */
		goto out;
	}
	if (kiln_sha256(enc, enc_len, dr.sha256) != KILN_OK)
		goto out;
	dr.size = enc_len;
	if (t->opt->dry_run) {
		if (!keep(a, &dr))
			kiln_ledger_lost(&t->ledger);
		goto out;
	}
	if (kiln_file_digest_beneath(t->root, path, &size, sha) == KILN_OK && size == enc_len &&
	    memcmp(sha, dr.sha256, 32) == 0 && kiln_sibling_fix_meta(t->root, path, &a->st)) {
		/* these very bytes are there already */
	} else if (kiln_sibling_check(path, &a->st, true, &err) != KILN_OK ||
		   kiln_sibling_write(&t->run->temps, path, enc, enc_len, &a->st, true,
				      t->opt->fsync, &err) != KILN_OK) {
		/* none: a file left there goes (a file named like a delta is
		 * kiln's, read-only or not: the one of a source that was
		 * read-only is), also one the write put in place before it
		 * failed (a directory that could not be synced): the walk,
		 * which the unkept are removed from, never saw it */
		kiln_tree_path_error(t, path, &err); /* the run goes on without it */
		if (kiln_sibling_remove(t->root, path) != 0 && errno != ENOENT)
			kiln_ledger_remove_failed(&t->ledger);
		goto out;
	}
	if (!keep(a, &dr)) {
		kiln_ledger_lost(&t->ledger);
		kiln_sibling_remove(t->root, path);
	}
out:
	free(enc);
	free(path);
}

static void work_one(struct kiln_dict_plan *d, const struct job *j, const struct kiln_report *r)
{
	struct kiln_tree *t = d->t;
	struct asset a = { .t = t, .e = &t->walk.v[j->k], .r = r };
	const struct kiln_record *rec;
	char *path = kiln_path_join(t->root, a.e->rel, "");
	struct kiln_error err;
	int fd = path ? kiln_source_open(t->root, path, a.e->via_link, &a.e->st, &a.st, &err) : -1;

	free(path);
	if (fd < 0 || (uint64_t)a.st.st_size > DICT_MAX_SIZE ||
	    kiln_source_read(fd, &a.st, &a.src, &err) != KILN_OK)
		goto out;
	a.len = (size_t)a.st.st_size;
	if (kiln_sha256(a.src ? (const void *)a.src : "", a.len, a.sha) != KILN_OK)
		goto out;
	/* the content the run settled, or none: a file changed since gets none */
	if ((rec = kiln_ledger_record(&t->ledger, j->k)) != NULL &&
	    (rec->size != a.len || memcmp(rec->sha256, a.sha, 32) != 0))
		goto out;
	for (size_t i = j->first; i < j->first + j->n; i++) {
		const struct member *m = &d->m[i];
		uint8_t *dict = NULL, dsha[32];
		size_t dlen = 0;
		bool seen;
		if (strlen(m->rel) + 1 != strlen(m->family) + j->len)
			continue; /* a token of another length */
		if (m->data) { /* from an archive */
			dlen = m->len;
			if (kiln_sha256(dlen ? (const void *)m->data : "", dlen, dsha) != KILN_OK)
				continue;
		} else if (!read_whole(t->opt->previous[m->release], m->rel, &dict, &dlen, dsha)) {
			free(dict);
			continue;
		}
		/* the same bytes as the source, or a dictionary already used */
		seen = memcmp(dsha, a.sha, 32) == 0;
		for (size_t x = 0; !seen && x < a.kept.n; x++)
			seen = memcmp(a.kept.v[x].dict_sha256, dsha, 32) == 0;
		if (!seen)
			one_delta(&a, m, m->data ? m->data : dict, dlen, dsha);
		free(dict);
	}
	if (!kiln_source_unchanged(fd, &a.st)) {
		/* changed under us: what was made from it goes */
		for (size_t i = 0; i < a.kept.n; i++) {
			char *p = kiln_dict_sibling_path(t->root, a.e->rel, a.kept.v[i].dict_sha256);
			if (p && !t->opt->dry_run)
				kiln_sibling_remove(t->root, p);
			free(p);
			free(a.kept.v[i].dict_path);
		}
		a.kept.n = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	free(a.src);
	t->dicts[j->k] = a.kept;
}

/* Entry K's job: its family's members, when it may get deltas (false
 * when it may not). */
static bool job_of(const struct kiln_dict_plan *d, size_t k, kiln_outcome o, struct job *j)
{
	struct kiln_tree *t = d->t;
	struct kiln_fp fp = kiln_immutable_of(t, k);
	char *family;
	size_t lo = 0, hi = d->nm;

	if ((o != KILN_OUTCOME_COMPRESSED && o != KILN_OUTCOME_NO_GAIN) || !fp.len || !d->nm)
		return false;
	if (!(family = kiln_family_at(t->walk.v[k].rel, fp.start, fp.len))) {
		kiln_ledger_lost(&t->ledger);
		return false;
	}
	while (lo < hi) { /* the first member of the family */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(d->m[mid].family, family) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < d->nm && strcmp(d->m[hi].family, family) == 0; hi++)
		;
	free(family);
	/* two members in one release: a pattern several files share (Vite's
	 * lazy chunks are all index-*.js), not one file's versions; which of
	 * them a client holds is anyone's guess, and a delta against each
	 * would grow with the square of the family */
	{
		unsigned per[KILN_MAX_PREVIOUS] = { 0 };
		for (size_t i = lo; i < hi; i++)
			if (d->m[i].release < KILN_MAX_PREVIOUS && ++per[d->m[i].release] > 1)
				return false;
	}
	*j = (struct job){ k, lo, hi - lo, fp.len };
	return hi > lo;
}

void kiln_dict_file(struct kiln_tree *t, size_t k, const struct kiln_report *r)
{
	struct job j;

	if (t->dict_plan && t->dicts && job_of(t->dict_plan, k, r->outcome, &j))
		work_one(t->dict_plan, &j, r);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Remove every file named like a delta that no asset kept now. */
static void remove_unkept(struct kiln_tree *t)
{
	size_t n = 0, cap = 16;
	char **kept = malloc(cap * sizeof(*kept));

	for (size_t k = 0; kept && k < t->walk.n; k++)
		for (size_t i = 0; i < t->dicts[k].n; i++) {
			if (n == cap) {
				char **v = realloc(kept, (cap *= 2) * sizeof(*v));
				if (!v)
					goto nomem;
				kept = v;
			}
			if (!(kept[n] = kiln_dict_sibling_path("", t->walk.v[k].rel,
							       t->dicts[k].v[i].dict_sha256)))
				goto nomem;
			n++;
		}
	if (!kept)
		goto nomem;
	qsort(kept, n, sizeof(*kept), str_cmp);
	for (size_t k = 0; k < t->walk.n; k++) {
		const struct kiln_entry *e = &t->walk.v[k];
		const char *base = strrchr(e->rel, '/');
		char *path, *key;
		struct stat st;
		base = base ? base + 1 : e->rel;
		if (!kiln_dict_sibling_base_len(base))
			continue;
		/* a shard leaves the deltas of another shard's files alone */
		if (t->opt->shard_count) {
			char *src = strndup(e->rel, (size_t)(base - e->rel) + kiln_dict_sibling_base_len(base));
			bool other = !src || kiln_shard_of(src, t->opt->shard_count) != t->opt->shard_index;
			free(src);
			if (other)
				continue;
		}
		if (!(key = kiln_path_join("", e->rel, "")))
			continue;
		if (n && bsearch(&key, kept, n, sizeof(*kept), str_cmp)) {
			free(key);
			continue;
		}
		free(key);
		if (!(path = kiln_path_join(t->root, e->rel, "")) ||
		    kiln_beneath_lstat(t->root, path, &st) != 0) {
			free(path);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			/* not kiln's to remove, and a server would follow it */
			kiln_ledger_foreign_stale(&t->ledger);
			kiln_tree_event(t, KILN_EVENT_FOREIGN_STALE, path, -1, NULL);
		} else if (!t->opt->dry_run && kiln_sibling_remove(t->root, path) != 0) {
			struct kiln_error err = { KILN_ERR_IO, errno, "cannot remove stale sibling",
						  "" };
			kiln_ledger_remove_failed(&t->ledger);
			kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, path, -1, &err);
		} else {
			kiln_tree_event(t, KILN_EVENT_REMOVED, path, -1, NULL);
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(kept[i]);
	free(kept);
	return;
nomem:
	/* cannot tell which to keep: the previous manifest stays */
	kiln_ledger_lost(&t->ledger);
	for (size_t i = 0; kept && i < n; i++)
		free(kept[i]);
	free(kept);
}

/* Free D. */
static void plan_free(struct kiln_dict_plan *d)
{
	for (size_t i = 0; i < d->nm; i++)
		free(d->m[i].family);
	free(d->m);
	for (size_t i = 0; i < d->nfams; i++)
		free(d->fams[i].family);
	free(d->fams);
	free(d);
}

void kiln_dict_plan(struct kiln_tree *t)
{
	struct kiln_dict_plan *d = calloc(1, sizeof(*d));
	bool listed;

	if (!d || !(t->dicts = calloc(t->walk.n + 1, sizeof(*t->dicts)))) {
		free(d);
		kiln_ledger_lost(&t->ledger);
		return;
	}
	d->t = t;
	listed = list_families(d);
	for (size_t i = 0; listed && i < t->opt->n_previous; i++) {
		size_t before = d->nm;
		listed = list_members(d, i);
		if (listed && d->nm == before && d->nfams && !t->dict_failed &&
		    !t->release_absent[i])
			warn_unshared(d, i);
	}
	if (!listed) { /* no delta rather than some */
		kiln_ledger_lost(&t->ledger);
		for (size_t i = 0; i < d->nm; i++)
			free(d->m[i].family);
		d->nm = 0;
	}
	if (d->nm > 1)
		qsort(d->m, d->nm, sizeof(*d->m), member_cmp);
	t->dict_plan = d;
}

void kiln_dict_finish(struct kiln_tree *t)
{
	if (t->dict_plan) {
		plan_free(t->dict_plan);
		t->dict_plan = NULL;
	}
	if (!t->dicts)
		return;
	remove_unkept(t);
	for (size_t k = 0; k < t->walk.n; k++)
		for (size_t i = 0; i < t->dicts[k].n; i++) {
			char *p = kiln_dict_sibling_path(t->root, t->walk.v[k].rel,
							 t->dicts[k].v[i].dict_sha256);
			if (p)
				kiln_tree_event(t, KILN_EVENT_DICT_DELTA, p, -1, NULL);
			free(p);
		}
	/* each record holds exactly the deltas on disk now */
	for (size_t k = 0; k < t->walk.n; k++)
		kiln_ledger_set_dicts(&t->ledger, k, t->dicts[k].v, t->dicts[k].n);
}

const struct kiln_dict_record *kiln_dict_of(const struct kiln_tree *t, size_t k, size_t *n)
{
	*n = t->dicts ? t->dicts[k].n : 0;
	return *n ? t->dicts[k].v : NULL;
}

void kiln_dict_end(struct kiln_tree *t)
{
	if (t->dict_plan) { /* a run that stopped before the end of the pool */
		plan_free(t->dict_plan);
		t->dict_plan = NULL;
	}
	for (size_t k = 0; t->dicts && k < t->walk.n; k++) {
		for (size_t i = 0; i < t->dicts[k].n; i++)
			free(t->dicts[k].v[i].dict_path);
		free(t->dicts[k].v);
	}
	free(t->dicts);
	t->dicts = NULL;
}
