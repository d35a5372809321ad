/*
 * archive_items.c - the input's entries as kiln_run_archive() keeps them
 * between reading the input and writing the output: the item list, lookup
 * by normalised path (through a small open-addressing table, also used for
 * inode and sibling keys), and the two reports every step makes: about an
 * entry of the input, and about the output.
 *
 * Only metadata lives here (one struct item per entry, at most
 * aopt->max_entries of them); entry data lives in the staging tree.
 */
#include "archive_int.h"
#include "error.h"

#include <archive.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings and tables ---- */

char *kiln_arc_cat3(const char *a, const char *b, const char *c)
{
	size_t x = strlen(a), y = strlen(b), z = strlen(c);
	char *p = malloc(x + y + z + 1);

	if (p) {
		memcpy(p, a, x);
		memcpy(p + x, b, y);
		memcpy(p + x + y, c, z + 1);
	}
	return p;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The index whose key is KEY, or NONE. */
size_t kiln_arc_table_find(const struct table *t, const char *key, keyof_fn keyof,
			   const void *c)
{
	if (!t->cap)
		return NONE;
	for (size_t i = hash_str(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i])
			return NONE;
		if (strcmp(keyof(c, t->slot[i] - 1), key) == 0)
			return t->slot[i] - 1;
	}
}

bool kiln_arc_table_add(struct table *t, size_t index, keyof_fn keyof, const void *c)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024, *slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return false;
		for (size_t i = 0; i < t->cap; i++) {
			size_t j;
			if (!t->slot[i])
				continue;
			for (j = hash_str(keyof(c, t->slot[i] - 1)) & (cap - 1); slot[j];
			     j = (j + 1) & (cap - 1))
				;
			slot[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	size_t i = hash_str(keyof(c, index)) & (t->cap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = index + 1;
	t->n++;
	return true;
}

static const char *norm_of(const void *c, size_t i)
{
	return ((const struct ctx *)c)->items[i].norm;
}

/* Keys in an array of strings. */
const char *kiln_arc_string_of(const void *v, size_t i)
{
	return ((char *const *)v)[i];
}

size_t kiln_arc_find_item(const struct ctx *c, const char *norm)
{
	return kiln_arc_table_find(&c->byname, norm, norm_of, c);
}

void kiln_arc_item_free(struct item *it)
{
	free(it->name);
	free(it->norm);
	free(it->link);
	free(it->hardlink);
	free(it->uname);
	free(it->gname);
	memset(it, 0, sizeof(*it));
}

/* Append *IT (whose strings the table now owns) to the item list. */
kiln_status kiln_arc_push_item(struct ctx *c, struct item *it)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct item *v = realloc(c->items, cap * sizeof(*v));
		if (!v)
			return KILN_ERR_NOMEM;
		c->items = v;
		c->cap = cap;
	}
	c->items[c->n] = *it;
	if (!kiln_arc_table_add(&c->byname, c->n, norm_of, c))
		return KILN_ERR_NOMEM;
	c->n++;
	memset(it, 0, sizeof(*it));
	return KILN_OK;
}

/* ---- reports ---- */

/* One on_file call about the input: PATH names an entry ("" the input). */
void kiln_arc_report(struct ctx *c, const char *path, kiln_status st, int errnum,
		     const char *what)
{
	struct kiln_report r;

	memset(&r, 0, sizeof(r));
	r.root = c->input;
	r.path = path;
	r.outcome = KILN_OUTCOME_ERROR;
	kiln_fail(&r.error, st, errnum, what);
	r.error.suffix = "";
	r.in_archive = !c->is_dir && *path;
	if (c->run->cb.on_file)
		c->run->cb.on_file(c->run->cb.user, &r);
	c->failed = true;
}

/* libarchive's message for A, in c->msg, lowercase first letter as kiln's
 * messages are. */
const char *kiln_arc_msg(struct ctx *c, struct archive *a, const char *fallback)
{
	const char *m = archive_error_string(a);

	snprintf(c->msg, sizeof(c->msg), "%s%s%s", fallback, m ? ": " : "", m ? m : "");
	return c->msg;
}

void kiln_arc_report_output(struct ctx *c, kiln_status st, int errnum, const char *what)
{
	struct kiln_error err = { st, errnum, what, "" };

	if (c->run->cb.on_artifact)
		c->run->cb.on_artifact(c->run->cb.user, "archive", c->output, &err);
	c->failed = true;
}
