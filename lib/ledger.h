/*
 * ledger.h - the one owner of a tree's outcome: what the new manifest will
 * record (each walk entry's record, the records carried over for entries
 * the walk did not reach, the stale siblings kept for the next run) and
 * the failure flags that decide what a failed run leaves behind.
 *
 * Every field of struct kiln_ledger is read and written through the
 * functions below only, never by another file (tests/layout.py checks it),
 * so that one file says who may write what, and when:
 *
 *  - entry K's record: worker K only while the pool runs, then main;
 *  - carried records: main only;
 *  - stale siblings: any thread (under the ledger's own lock);
 *  - the flags: any thread (atomic); once set they stay set.
 *
 * Out of memory while recording is never silent: the record is then lost
 * (kiln_ledger_lost()), and a lost record keeps the previous manifest and
 * the journals, as after a run that was killed, so nothing goes unrecorded
 * (artifacts.c).
 */
#ifndef KILN_LEDGER_H
#define KILN_LEDGER_H

#include "intern.h"
#include "record.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kiln_ledger {
	size_t n;                       /* walk entries */
	/* n of them, NULL where entry k has no record: one pointer per walk
	 * entry (siblings included), a record only per asset */
	struct kiln_record **records;
	/* borrowed[k]: records[k] is borrowed (kiln_ledger_borrow()), not
	 * owned.  One byte per entry, not a bit: worker k writes its own byte
	 * while the others write theirs. */
	bool *borrowed;
	struct kiln_record *carried;
	size_t ncarried, carried_cap;
	struct kiln_intern *strings;    /* the recipes of records made here */
	pthread_mutex_t stale_lock;
	struct kiln_stale *stale;
	size_t nstale, stale_cap;
	atomic_bool remove_failed, cache_failed, foreign_stale, record_lost;
};

/* Make L empty (no entries).  Main, before any other call. */
void kiln_ledger_init(struct kiln_ledger *l);

/* Free everything L holds.  Main, after the pool. */
void kiln_ledger_free(struct kiln_ledger *l);

/* Room for N walk entries' records, none set.  False when out of memory
 * (L is then as before).  Main, before the pool. */
bool kiln_ledger_size(struct kiln_ledger *l, size_t n);

/* Entry K's record becomes a copy of REC (the one it held is freed).  Out
 * of memory: K has none, and the record is lost.  Worker K, or main. */
void kiln_ledger_set(struct kiln_ledger *l, size_t k, const struct kiln_record *rec);

/* Entry K's record is REC itself, not a copy: a record of the previous
 * state that stands unchanged, which outlives L's use of it (the state is
 * freed after the ledger).  Main, before the pool. */
void kiln_ledger_borrow(struct kiln_ledger *l, size_t k, const struct kiln_record *rec);

/* L's copy of the recipe RECIPE, for a record L is given (it lives as
 * long as L); NULL when out of memory (the record is then lost).  Any
 * thread. */
const char *kiln_ledger_recipe(struct kiln_ledger *l, const char *recipe);

/* Entry K's record, or NULL when it has none (not an asset, or its
 * siblings are gone).  Owned by L, valid until it is set again. */
const struct kiln_record *kiln_ledger_record(const struct kiln_ledger *l, size_t k);

/* Entry K's record (if it has one) holds exactly the N dictionary deltas
 * V (copied; the ones it held are freed).  Out of memory: lost.  Main,
 * after the pool. */
void kiln_ledger_set_dicts(struct kiln_ledger *l, size_t k, const struct kiln_dict_record *v,
			   size_t n);

/* Carry a copy of REC over unchanged (an entry the walk did not reach, or
 * a merged shard's).  Out of memory: lost.  Main. */
void kiln_ledger_carry(struct kiln_ledger *l, const struct kiln_record *rec);

/* The carried records, *N of them; owned by L. */
const struct kiln_record *kiln_ledger_carried(const struct kiln_ledger *l, size_t *n);

/* Keep the sibling REL (its own relative path, copied) of coding C, SIZE
 * bytes with SHA256, on record as stale: it could not be removed, and the
 * next run removes it once it can.  Out of memory: lost.  Any thread. */
void kiln_ledger_keep_stale(struct kiln_ledger *l, const char *rel, kiln_coding c,
			    uint64_t size, const uint8_t sha256[32]);

/* The stale siblings kept, *N of them; owned by L.  Main, after the pool. */
const struct kiln_stale *kiln_ledger_stale(const struct kiln_ledger *l, size_t *n);

/* Set a flag (any thread):
 *  - lost: bookkeeping the new manifest needs was lost (out of memory);
 *  - remove_failed: a sibling kiln owns could not be removed;
 *  - cache_failed: the --cache directory could not be used;
 *  - foreign_stale: a sibling kiln did not write does not decode to its
 *    source (a server would send stale bytes), and was left alone. */
void kiln_ledger_lost(struct kiln_ledger *l);
void kiln_ledger_remove_failed(struct kiln_ledger *l);
void kiln_ledger_cache_failed(struct kiln_ledger *l);
void kiln_ledger_foreign_stale(struct kiln_ledger *l);

/* Read a flag (any thread). */
bool kiln_ledger_is_lost(const struct kiln_ledger *l);
bool kiln_ledger_had_remove_failed(const struct kiln_ledger *l);
bool kiln_ledger_had_cache_failed(const struct kiln_ledger *l);
bool kiln_ledger_had_foreign_stale(const struct kiln_ledger *l);

#endif
