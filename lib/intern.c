/* intern.c - see intern.h. */
#include "intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Strings are copied into chunks of this size (or one of their own when
 * longer), so that a pool costs a few allocations, not one per string. */
#define CHUNK 4096

struct kiln_intern_chunk {
	struct kiln_intern_chunk *next;
	size_t used, size;
	char data[];
};

struct kiln_intern *kiln_intern_new(void)
{
	struct kiln_intern *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void kiln_intern_free(struct kiln_intern *p)
{
	if (!p)
		return;
	for (struct kiln_intern_chunk *c = p->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(p->slot);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* Room for twice N strings; false when out of memory. */
static int grow(struct kiln_intern *p)
{
	size_t cap = p->cap ? 2 * p->cap : 16;
	const char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return 0;
	for (size_t i = 0; i < p->cap; i++) {
		size_t at;
		if (!p->slot[i])
			continue;
		for (at = (size_t)hash(p->slot[i]) & (cap - 1); slot[at]; at = (at + 1) & (cap - 1))
			;
		slot[at] = p->slot[i];
	}
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
	return 1;
}

/* A copy of S (LEN bytes and its NUL) in P's chunks, or NULL. */
static const char *store(struct kiln_intern *p, const char *s, size_t len)
{
	struct kiln_intern_chunk *c = p->chunks;
	char *copy;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > CHUNK ? len + 1 : CHUNK;
		if (!(c = malloc(sizeof(*c) + size)))
			return NULL;
		c->size = size;
		c->used = 0;
		/* a string of its own goes behind the chunk being filled */
		if (size > CHUNK && p->chunks) {
			c->next = p->chunks->next;
			p->chunks->next = c;
		} else {
			c->next = p->chunks;
			p->chunks = c;
		}
	}
	copy = c->data + c->used;
	memcpy(copy, s, len + 1);
	c->used += len + 1;
	return copy;
}

const char *kiln_intern(struct kiln_intern *p, const char *s)
{
	const char *got = NULL;
	size_t at;

	if (!*s)
		return "";
	pthread_mutex_lock(&p->lock);
	if (2 * (p->n + 1) > p->cap && !grow(p))
		goto out;
	for (at = (size_t)hash(s) & (p->cap - 1); p->slot[at]; at = (at + 1) & (p->cap - 1))
		if (strcmp(p->slot[at], s) == 0) {
			got = p->slot[at];
			goto out;
		}
	if ((got = store(p, s, strlen(s))) != NULL) {
		p->slot[at] = got;
		p->n++;
	}
out:
	pthread_mutex_unlock(&p->lock);
	return got;
}
