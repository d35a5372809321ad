/*
 * state_int.h - what state.c (a manifest read as one jansson tree, and the
 * record it makes) shares with state_stream.c (the readers that take a
 * manifest member by member, from memory or from its file).  No other
 * module includes it.
 */
#ifndef KILN_STATE_INT_H
#define KILN_STATE_INT_H

#include "state.h"

#include <jansson.h>
#include <stdbool.h>

/* Fill *PE from the entry E of "files" keyed KEY, of a manifest of
 * VERSION, its recipes interned in POOL: 1, or 0 if E is malformed (it is
 * then dropped), or -1 when out of memory. */
int kiln_state_entry(const char *key, json_t *e, int version, struct kiln_intern *pool,
		     struct kiln_prev_entry *pe);

/* The rest of a manifest once ST holds the entries of ROOT's "files": their
 * order, the stale siblings, the snippets and the tree.  On failure ST is
 * emptied. */
kiln_status kiln_state_finish(json_t *root, int version, struct kiln_state *st);

/* Keep ROOT's "generator", "settings" and "shard" in st->head
 * (state_head.c).  KILN_OK or KILN_ERR_NOMEM; kiln_state_free() frees it. */
kiln_status kiln_state_head_read(json_t *root, struct kiln_state *st);
void kiln_state_head_free(struct kiln_state_head *h);

/* jansson's allocations on this thread: note failures from now on, and
 * tell whether one failed since (jansson reports an allocation failure
 * while parsing as a syntax error). */
void kiln_state_json_reset(void);
bool kiln_state_json_failed(void);

#endif
