/*
 * intern.h - one copy of each distinct short string: the recipes of a
 * tree's records ("libdeflate-1.14-12"), which nearly every record of a
 * tree shares, so that a record holds a pointer to its recipe, not a copy.
 *
 * A pool hands out pointers that stay valid until it is freed; the records
 * that point into it must not outlive it (a state's pool lives as long as
 * the state, a ledger's as long as the ledger).  Memory grows with the
 * number of distinct strings only.  Thread-safe: every call takes the
 * pool's own lock.
 */
#ifndef KILN_INTERN_H
#define KILN_INTERN_H

#include <pthread.h>
#include <stddef.h>

struct kiln_intern {
	pthread_mutex_t lock;
	const char **slot;     /* open addressing, CAP slots (a power of 2) */
	size_t cap, n;
	struct kiln_intern_chunk *chunks; /* where the strings live */
};

/* An empty pool.  Returns the pool, or NULL when out of memory. */
struct kiln_intern *kiln_intern_new(void);

/* Free P and every string it handed out.  NULL is allowed. */
void kiln_intern_free(struct kiln_intern *p);

/* P's copy of S (a NUL-terminated string of any length), made on first
 * use; "" for an empty S (a static string).  NULL when out of memory. */
const char *kiln_intern(struct kiln_intern *p, const char *s);

#endif
