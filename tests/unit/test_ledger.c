/*
 * test_ledger.c - the ledger (ledger.c), the one owner of a tree's
 * outcome: an entry's record is a copy (the caller's may go), set again
 * it replaces the first, none set reads as none; dictionary deltas
 * replace the record's own; carried records and stale siblings grow past
 * any first capacity and keep every value; stale siblings kept from many
 * threads at once are all there, each once; records of neighbouring
 * entries, borrowed from the state by main, set by many threads at once
 * as the pool's workers do (each its own entries), are each the one set
 * and owned; flags start clear and stay set.  Run under ASan and TSan in CI, which also check the frees and the
 * locking.
 */
#include "ledger.h"

#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct kiln_record make(const char *rel, uint64_t size)
{
	struct kiln_record r;

	memset(&r, 0, sizeof(r));
	r.rel = strdup(rel);
	r.size = size;
	memset(r.sha256, (int)(size & 0xff), sizeof(r.sha256));
	return r;
}

static void test_records(void)
{
	struct kiln_ledger l;
	struct kiln_record r = make("a.js", 7), r2 = make("a.js", 9);
	struct kiln_dict_record d[2];
	const struct kiln_record *got;

	kiln_ledger_init(&l);
	CHECK(kiln_ledger_size(&l, 3));
	CHECK(kiln_ledger_record(&l, 0) == NULL);
	CHECK(kiln_ledger_record(&l, 3) == NULL); /* past the end: none */
	kiln_ledger_set(&l, 1, &r);
	kiln_record_free(&r); /* the ledger holds its own copy */
	got = kiln_ledger_record(&l, 1);
	CHECK(got && strcmp(got->rel, "a.js") == 0 && got->size == 7 && got->sha256[0] == 7);
	kiln_ledger_set(&l, 1, &r2);
	got = kiln_ledger_record(&l, 1);
	CHECK(got && got->size == 9);
	kiln_record_free(&r2);
	/* deltas: copied in, replaced as a whole, none for an entry without a
	 * record */
	memset(d, 0, sizeof(d));
	d[0].dict_path = "v1/a.js";
	d[0].size = 11;
	d[1].dict_path = "v2/a.js";
	d[1].size = 12;
	kiln_ledger_set_dicts(&l, 1, d, 2);
	got = kiln_ledger_record(&l, 1);
	CHECK(got && got->ndicts == 2 && got->dicts[1].size == 12 &&
	      got->dicts[1].dict_path != d[1].dict_path && strcmp(got->dicts[1].dict_path, "v2/a.js") == 0);
	kiln_ledger_set_dicts(&l, 1, d + 1, 1);
	got = kiln_ledger_record(&l, 1);
	CHECK(got && got->ndicts == 1 && strcmp(got->dicts[0].dict_path, "v2/a.js") == 0);
	kiln_ledger_set_dicts(&l, 1, NULL, 0);
	CHECK(kiln_ledger_record(&l, 1)->ndicts == 0 && kiln_ledger_record(&l, 1)->dicts == NULL);
	kiln_ledger_set_dicts(&l, 2, d, 2);
	CHECK(kiln_ledger_record(&l, 2) == NULL);
	CHECK(!kiln_ledger_is_lost(&l));
	kiln_ledger_free(&l);
}

static void test_carried(void)
{
	struct kiln_ledger l;
	const struct kiln_record *v;
	size_t n, bad = 0;
	char rel[32];

	kiln_ledger_init(&l);
	v = kiln_ledger_carried(&l, &n);
	CHECK(n == 0);
	for (unsigned i = 0; i < 1000; i++) {
		struct kiln_record r;
		snprintf(rel, sizeof(rel), "dir/f%u.css", i);
		r = make(rel, i);
		kiln_ledger_carry(&l, &r);
		kiln_record_free(&r);
	}
	v = kiln_ledger_carried(&l, &n);
	CHECK(n == 1000);
	for (size_t i = 0; v && i < n; i++) {
		snprintf(rel, sizeof(rel), "dir/f%zu.css", i);
		bad += strcmp(v[i].rel, rel) != 0 || v[i].size != i;
	}
	CHECK_MSG(bad == 0, "%zu carried records differ", bad);
	kiln_ledger_free(&l);
}

struct keeper {
	struct kiln_ledger *l;
	unsigned id;
};

enum { THREADS = 4, EACH = 500 };

static void *keep_many(void *arg)
{
	const struct keeper *k = arg;
	uint8_t sha[32];
	char rel[48];

	for (unsigned i = 0; i < EACH; i++) {
		snprintf(rel, sizeof(rel), "t%u/s%u.js.gz", k->id, i);
		memset(sha, (int)(i & 0xff), sizeof(sha));
		kiln_ledger_keep_stale(k->l, rel, (kiln_coding)0, (uint64_t)k->id * EACH + i, sha);
	}
	return NULL;
}

static void test_stale(void)
{
	struct kiln_ledger l;
	pthread_t th[THREADS];
	struct keeper k[THREADS];
	const struct kiln_stale *v;
	unsigned char *seen = calloc(THREADS * EACH, 1);
	size_t n, bad = 0;
	char rel[48];

	kiln_ledger_init(&l);
	for (unsigned i = 0; i < THREADS; i++) {
		k[i] = (struct keeper){ &l, i };
		CHECK(pthread_create(&th[i], NULL, keep_many, &k[i]) == 0);
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	v = kiln_ledger_stale(&l, &n);
	CHECK(n == THREADS * EACH);
	for (size_t i = 0; seen && v && i < n; i++) {
		uint64_t s = v[i].size;
		snprintf(rel, sizeof(rel), "t%u/s%u.js.gz", (unsigned)(s / EACH), (unsigned)(s % EACH));
		if (s >= THREADS * EACH || seen[s]++ || strcmp(v[i].rel, rel) != 0 ||
		    v[i].sha256[31] != (uint8_t)(s % EACH))
			bad++;
	}
	CHECK_MSG(bad == 0, "%zu stale siblings wrong or twice", bad);
	free(seen);
	kiln_ledger_free(&l);
}

struct setter {
	struct kiln_ledger *l;
	unsigned id;
};

enum { ENTRIES = 4096 };

/* Entries id, id + THREADS, ...: interleaved, so that every thread's
 * neighbours are the other threads' entries. */
static void *set_many(void *arg)
{
	const struct setter *s = arg;
	char rel[32];

	for (size_t k = s->id; k < ENTRIES; k += THREADS) {
		snprintf(rel, sizeof(rel), "e%zu.js", k);
		struct kiln_record r = make(rel, k);
		kiln_ledger_set(s->l, k, &r);
		kiln_record_free(&r);
	}
	return NULL;
}

static void test_workers(void)
{
	struct kiln_ledger l;
	struct kiln_record *state = calloc(ENTRIES, sizeof(*state));
	pthread_t th[THREADS];
	struct setter s[THREADS];
	size_t bad = 0;
	char rel[32];

	kiln_ledger_init(&l);
	CHECK(state && kiln_ledger_size(&l, ENTRIES));
	if (!state)
		return;
	/* main, before the pool: every entry borrows the state's record */
	for (size_t k = 0; k < ENTRIES; k++) {
		snprintf(rel, sizeof(rel), "e%zu.js", k);
		state[k] = make(rel, 1);
		kiln_ledger_borrow(&l, k, &state[k]);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		s[i] = (struct setter){ &l, i };
		CHECK(pthread_create(&th[i], NULL, set_many, &s[i]) == 0);
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (size_t k = 0; k < ENTRIES; k++) {
		const struct kiln_record *got = kiln_ledger_record(&l, k);
		snprintf(rel, sizeof(rel), "e%zu.js", k);
		/* its own copy, owned: not the state's, which stays as it was */
		if (!got || got == &state[k] || got->size != k || strcmp(got->rel, rel) != 0 ||
		    l.borrowed[k] || state[k].size != 1)
			bad++;
	}
	CHECK_MSG(bad == 0, "%zu of %d entries wrong after concurrent sets", bad, ENTRIES);
	kiln_ledger_free(&l); /* frees the owned copies, never the state's */
	for (size_t k = 0; k < ENTRIES; k++)
		kiln_record_free(&state[k]);
	free(state);
}

static void test_flags(void)
{
	struct kiln_ledger l;

	kiln_ledger_init(&l);
	CHECK(!kiln_ledger_is_lost(&l) && !kiln_ledger_had_remove_failed(&l) &&
	      !kiln_ledger_had_cache_failed(&l) && !kiln_ledger_had_foreign_stale(&l));
	kiln_ledger_remove_failed(&l);
	CHECK(kiln_ledger_had_remove_failed(&l) && !kiln_ledger_is_lost(&l) &&
	      !kiln_ledger_had_cache_failed(&l) && !kiln_ledger_had_foreign_stale(&l));
	kiln_ledger_cache_failed(&l);
	kiln_ledger_foreign_stale(&l);
	kiln_ledger_lost(&l);
	kiln_ledger_lost(&l); /* set twice: still set */
	CHECK(kiln_ledger_is_lost(&l) && kiln_ledger_had_remove_failed(&l) &&
	      kiln_ledger_had_cache_failed(&l) && kiln_ledger_had_foreign_stale(&l));
	kiln_ledger_free(&l);
}

int main(void)
{
	test_records();
	test_carried();
	test_stale();
	test_workers();
	test_flags();
	return check_exit("test_ledger");
}
