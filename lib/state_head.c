/*
 * state_head.c - the head of a manifest read back: its "generator" (kiln's
 * and each encoder's version), its "settings" (the options that decide a
 * file's record, as manifest.c writes them) and its "shard" (which part of
 * a sharded run wrote it).
 *
 * `kiln merge` needs them to trust parts (every part made by one kiln with
 * one set of options, and this kiln able to write the same) and to run the
 * artifacts with the options the shards ran with.  They are read here,
 * beside the reader of the records, so that the manifest's format has one
 * reader (state.c, state_stream.c and this file) and one writer
 * (manifest.c).  The readers keep the two objects as jansson values, as
 * the text held them: comparing two manifests' heads is comparing values,
 * whatever their order or spacing.
 */
#include "state.h"

#include "codec.h"
#include "manifest.h"
#include "state_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kiln_state_head {
	json_t *generator; /* NULL when the manifest has none */
	json_t *settings;
	long shard_index, shard_count; /* 0 when not a shard's part */
};

kiln_status kiln_state_head_read(json_t *root, struct kiln_state *st)
{
	struct kiln_state_head *h = calloc(1, sizeof(*h));
	json_t *sh = json_object_get(root, "shard");
	json_t *k = json_object_get(sh, "index"), *n = json_object_get(sh, "count");

	if (!h)
		return KILN_ERR_NOMEM;
	h->generator = json_incref(json_object_get(root, "generator"));
	h->settings = json_incref(json_object_get(root, "settings"));
	if (json_is_integer(k) && json_is_integer(n) && json_integer_value(n) >= 1 &&
	    json_integer_value(n) <= 1000000 && json_integer_value(k) >= 1 &&
	    json_integer_value(k) <= json_integer_value(n)) {
		h->shard_index = (long)json_integer_value(k);
		h->shard_count = (long)json_integer_value(n);
	}
	st->head = h;
	return KILN_OK;
}

void kiln_state_head_free(struct kiln_state_head *h)
{
	if (!h)
		return;
	json_decref(h->generator);
	json_decref(h->settings);
	free(h);
}

bool kiln_state_shard(const struct kiln_state *st, unsigned *index, unsigned *count)
{
	if (!st->head || st->head->shard_count == 0)
		return false;
	*index = (unsigned)st->head->shard_index;
	*count = (unsigned)st->head->shard_count;
	return true;
}

/* The first key whose value differs between objects A and B (either may
 * be NULL: an absent object), or NULL when they are equal. */
static const char *first_difference(json_t *a, json_t *b)
{
	const char *key;
	json_t *v;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b) || (!a && !b) ? NULL : "(the whole object)";
	json_object_foreach(a, key, v)
		if (!json_equal(v, json_object_get(b, key)))
			return key;
	json_object_foreach(b, key, v)
		if (!json_object_get(a, key))
			return key;
	return NULL;
}

const char *kiln_state_settings_difference(const struct kiln_state *a,
					   const struct kiln_state *b)
{
	return first_difference(a->head ? a->head->settings : NULL,
				b->head ? b->head->settings : NULL);
}

const char *kiln_state_generator_difference(const struct kiln_state *a,
					    const struct kiln_state *b)
{
	return first_difference(a->head ? a->head->generator : NULL,
				b->head ? b->head->generator : NULL);
}

static int integer(json_t *s, const char *key, bool *ok)
{
	json_t *v = json_object_get(s, key);

	*ok = *ok && json_is_integer(v) && json_integer_value(v) >= 0 &&
	      json_integer_value(v) <= 1000000;
	return (int)json_integer_value(v);
}

static uint64_t size(json_t *s, const char *key, bool *ok)
{
	json_t *v = json_object_get(s, key);

	*ok = *ok && json_is_integer(v) && json_integer_value(v) >= 0;
	return *ok ? (uint64_t)json_integer_value(v) : 0;
}

/* The globs of settings key KEY appended to GLOBS[*n..], pointed to by
 * *OUT; false if KEY is not an array of globs kiln writes. */
static bool globs(json_t *s, const char *key, char **v, size_t *n, const char *const **out,
		  size_t *count)
{
	json_t *a = json_object_get(s, key), *g;
	size_t i, start = *n;

	if (!json_is_array(a))
		return false;
	json_array_foreach(a, i, g) {
		char *glob = json_is_string(g) ? kiln_manifest_key_decode(json_string_value(g)) : NULL;
		if (!glob)
			return false;
		v[(*n)++] = glob;
	}
	*out = (const char *const *)v + start;
	*count = *n - start;
	return true;
}

bool kiln_state_options(const struct kiln_state *st, struct kiln_options *opt, char ***globs_out,
			size_t *nglobs_out)
{
	json_t *s = st->head ? st->head->settings : NULL;
	json_t *enc = json_object_get(s, "encodings"), *v;
	bool ok = json_is_object(s) && json_is_array(enc);
	size_t i, n = 0, cap;
	char **v_globs;

	*globs_out = NULL;
	*nglobs_out = 0;
	opt->shard_index = opt->shard_count = 0;
	opt->codings = 0;
	json_array_foreach(enc, i, v) {
		kiln_coding c = json_is_string(v) ? kiln_coding_find(json_string_value(v)) : -1;
		ok = ok && c >= 0 && strcmp(kiln_codecs[c]->info.name, json_string_value(v)) == 0;
		if (ok)
			opt->codings |= 1u << c;
	}
	for (unsigned c = 0; ok && c < kiln_ncodecs; c++) {
		const struct kiln_coding_info *ci = &kiln_codecs[c]->info;
		char key[64];
		snprintf(key, sizeof(key), "%s_%s", ci->word, ci->level_word);
		opt->level[c] = integer(s, key, &ok);
		if (ci->extra_word) {
			snprintf(key, sizeof(key), "%s_%s", ci->extra_word, ci->extra_param);
			opt->extra[c] = integer(s, key, &ok);
		}
	}
	opt->min_size = size(s, "min_size", &ok);
	opt->stream_size = size(s, "stream_size", &ok);
	v = json_object_get(s, "max_ratio");
	ok = ok && json_is_number(v);
	opt->max_ratio = json_number_value(v);
	if (!ok)
		return false;
	cap = json_array_size(json_object_get(s, "include")) +
	      json_array_size(json_object_get(s, "exclude")) +
	      json_array_size(json_object_get(s, "immutable")) +
	      json_array_size(json_object_get(s, "mutable"));
	if (!(v_globs = calloc(cap + 1, sizeof(char *))))
		return false;
	ok = globs(s, "include", v_globs, &n, &opt->include, &opt->n_include) &&
	     globs(s, "exclude", v_globs, &n, &opt->exclude, &opt->n_exclude) &&
	     globs(s, "immutable", v_globs, &n, &opt->immutable, &opt->n_immutable) &&
	     globs(s, "mutable", v_globs, &n, &opt->mutable_globs, &opt->n_mutable);
	*globs_out = v_globs;
	*nglobs_out = n;
	return ok && kiln_options_check(opt, NULL, NULL) == KILN_OK;
}
