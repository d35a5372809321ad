/*
 * ledger.c - the one owner of a tree's outcome (ledger.h).
 */
#include "ledger.h"

#include <stdlib.h>
#include <string.h>

void kiln_ledger_init(struct kiln_ledger *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->stale_lock, NULL);
	atomic_init(&l->remove_failed, false);
	atomic_init(&l->cache_failed, false);
	atomic_init(&l->foreign_stale, false);
	atomic_init(&l->record_lost, false);
}

static bool is_borrowed(const struct kiln_ledger *l, size_t k)
{
	return l->borrowed && l->borrowed[k];
}

/* Entry K has no record any more (an owned one freed). */
static void drop(struct kiln_ledger *l, size_t k)
{
	if (l->records[k] && !is_borrowed(l, k)) {
		kiln_record_free(l->records[k]);
		free(l->records[k]);
	}
	l->records[k] = NULL;
	if (l->borrowed)
		l->borrowed[k] = false;
}

void kiln_ledger_free(struct kiln_ledger *l)
{
	for (size_t k = 0; l->records && k < l->n; k++)
		drop(l, k);
	for (size_t i = 0; i < l->ncarried; i++)
		kiln_record_free(&l->carried[i]);
	for (size_t i = 0; i < l->nstale; i++)
		free(l->stale[i].rel);
	free(l->stale);
	free(l->carried);
	free(l->records);
	free(l->borrowed);
	l->borrowed = NULL;
	kiln_intern_free(l->strings);
	l->strings = NULL;
	pthread_mutex_destroy(&l->stale_lock);
	l->records = NULL;
	l->carried = NULL;
	l->stale = NULL;
	l->n = l->ncarried = l->carried_cap = l->nstale = l->stale_cap = 0;
}

bool kiln_ledger_size(struct kiln_ledger *l, size_t n)
{
	struct kiln_record **records = calloc(n + 1, sizeof(*records));
	bool *borrowed = calloc(n + 1, sizeof(*borrowed));

	if (!records || !borrowed || (!l->strings && !(l->strings = kiln_intern_new()))) {
		free(records);
		free(borrowed);
		return false;
	}
	l->borrowed = borrowed;
	l->records = records;
	l->n = n;
	return true;
}

void kiln_ledger_set(struct kiln_ledger *l, size_t k, const struct kiln_record *rec)
{
	struct kiln_record *r;

	drop(l, k);
	if ((r = malloc(sizeof(*r))) && kiln_record_copy(r, rec))
		l->records[k] = r;
	else {
		free(r);
		kiln_ledger_lost(l);
	}
}

void kiln_ledger_borrow(struct kiln_ledger *l, size_t k, const struct kiln_record *rec)
{
	drop(l, k);
	l->records[k] = (struct kiln_record *)rec;
	l->borrowed[k] = true;
}

const char *kiln_ledger_recipe(struct kiln_ledger *l, const char *recipe)
{
	const char *got = l->strings ? kiln_intern(l->strings, recipe) : NULL;

	if (!got)
		kiln_ledger_lost(l);
	return got;
}

const struct kiln_record *kiln_ledger_record(const struct kiln_ledger *l, size_t k)
{
	return k < l->n && l->records ? l->records[k] : NULL;
}

void kiln_ledger_set_dicts(struct kiln_ledger *l, size_t k, const struct kiln_dict_record *v,
			   size_t n)
{
	struct kiln_record *r;

	if (k >= l->n || !l->records[k] || (!n && !l->records[k]->ndicts))
		return;
	if (is_borrowed(l, k)) /* the state's: a copy of its own, changed */
		kiln_ledger_set(l, k, l->records[k]);
	if (!(r = l->records[k]))
		return;
	kiln_record_free_dicts(r);
	if (!n)
		return;
	if (!(r->dicts = calloc(n, sizeof(*r->dicts)))) {
		kiln_ledger_lost(l);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		r->dicts[i] = v[i];
		r->ndicts++;
		if (!(r->dicts[i].dict_path = strdup(v[i].dict_path))) {
			kiln_ledger_lost(l);
			return;
		}
	}
}

void kiln_ledger_carry(struct kiln_ledger *l, const struct kiln_record *rec)
{
	if (l->ncarried == l->carried_cap) {
		size_t cap = l->carried_cap ? 2 * l->carried_cap : 16;
		struct kiln_record *v = realloc(l->carried, cap * sizeof(*v));
		if (!v) {
			kiln_ledger_lost(l);
			return;
		}
		l->carried = v;
		l->carried_cap = cap;
	}
	if (kiln_record_copy(&l->carried[l->ncarried], rec))
		l->ncarried++;
	else
		kiln_ledger_lost(l);
}

const struct kiln_record *kiln_ledger_carried(const struct kiln_ledger *l, size_t *n)
{
	*n = l->ncarried;
	return l->carried;
}

void kiln_ledger_keep_stale(struct kiln_ledger *l, const char *rel, kiln_coding c,
			    uint64_t size, const uint8_t sha256[32])
{
	char *copy = strdup(rel);
	bool kept = false;

	pthread_mutex_lock(&l->stale_lock);
	if (copy && l->nstale == l->stale_cap) {
		size_t cap = l->stale_cap ? 2 * l->stale_cap : 16;
		struct kiln_stale *v = realloc(l->stale, cap * sizeof(*v));
		if (v) {
			l->stale = v;
			l->stale_cap = cap;
		}
	}
	if (copy && l->nstale < l->stale_cap) {
		struct kiln_stale *s = &l->stale[l->nstale++];
		s->rel = copy;
		s->coding = c;
		s->size = size;
		memcpy(s->sha256, sha256, 32);
		copy = NULL;
		kept = true;
	}
	pthread_mutex_unlock(&l->stale_lock);
	free(copy);
	if (!kept)
		kiln_ledger_lost(l);
}

const struct kiln_stale *kiln_ledger_stale(const struct kiln_ledger *l, size_t *n)
{
	*n = l->nstale;
	return l->stale;
}

void kiln_ledger_lost(struct kiln_ledger *l)
{
	atomic_store(&l->record_lost, true);
}

void kiln_ledger_remove_failed(struct kiln_ledger *l)
{
	atomic_store(&l->remove_failed, true);
}

void kiln_ledger_cache_failed(struct kiln_ledger *l)
{
	atomic_store(&l->cache_failed, true);
}

void kiln_ledger_foreign_stale(struct kiln_ledger *l)
{
	atomic_store(&l->foreign_stale, true);
}

bool kiln_ledger_is_lost(const struct kiln_ledger *l)
{
	return atomic_load(&l->record_lost);
}

bool kiln_ledger_had_remove_failed(const struct kiln_ledger *l)
{
	return atomic_load(&l->remove_failed);
}

bool kiln_ledger_had_cache_failed(const struct kiln_ledger *l)
{
	return atomic_load(&l->cache_failed);
}

bool kiln_ledger_had_foreign_stale(const struct kiln_ledger *l)
{
	return atomic_load(&l->foreign_stale);
}
