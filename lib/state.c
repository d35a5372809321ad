/* state.c - reading a manifest back; see state.h. */
#include "state.h"

#include "codec.h"
#include "error.h"
#include "hash.h"
#include "intern.h"
#include "manifest.h"
#include "sort.h"
#include "state_int.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * jansson reports an allocation failure during parsing as a syntax error,
 * yet "out of memory" and "not a manifest" must part ways: the first stops
 * the run (its record is unknown), the second only warns.  So jansson's
 * allocator is wrapped, once, to note a failure in the calling thread.
 */
static json_malloc_t next_malloc;
static json_free_t next_free;
static _Thread_local bool json_nomem;
static pthread_once_t json_once = PTHREAD_ONCE_INIT;

static void *noting_malloc(size_t n)
{
	void *p = next_malloc(n);

	if (!p)
		json_nomem = true;
	return p;
}

static void wrap_json_alloc(void)
{
	json_get_alloc_funcs(&next_malloc, &next_free);
	json_set_alloc_funcs(noting_malloc, next_free);
}

void kiln_state_json_reset(void)
{
	pthread_once(&json_once, wrap_json_alloc);
	json_nomem = false;
}

bool kiln_state_json_failed(void)
{
	return json_nomem;
}

static int cmp_rel(const void *a, const void *b)
{
	return strcmp(((const struct kiln_prev_entry *)a)->rec.rel,
		      ((const struct kiln_prev_entry *)b)->rec.rel);
}

static bool hex32(const char *s, uint8_t out[32])
{
	if (!s || strlen(s) != 64)
		return false;
	for (int i = 0; i < 32; i++) {
		unsigned v = 0;
		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + k];
			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= (unsigned)(c - 'a' + 10);
			else
				return false;
		}
		out[i] = (uint8_t)v;
	}
	return true;
}

static bool get_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

bool kiln_state_safe_rel(const char *rel, size_t len)
{
	if (len == 0 || rel[0] == '/' || rel[len - 1] == '/' || memchr(rel, '\0', len))
		return false;
	for (const char *p = rel, *end = rel + len; p < end;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = slash ? (size_t)(slash - p) : (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n + 1;
	}
	return true;
}

char *kiln_state_rel_base64(const char *b64)
{
	size_t n = strlen(b64), len;
	char *out;

	if (n % 4 != 0 || n == 0 || n > 16384)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	if (!kiln_base64_decode(b64, n, (uint8_t *)out, &len)) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	if (!kiln_state_safe_rel(out, len)) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * The exact path an object keyed KEY names: path_base64 when present, else
 * the key (literally in a version-1 manifest, percent-decoded in a later
 * one); NULL if malformed or unsafe.  A base64 path must have KEY as its
 * key, so that one path cannot hide behind another's key.
 */
static char *entry_rel(const char *key, json_t *e, int version)
{
	json_t *b = json_object_get(e, "path_base64");
	char *rel, *again;
	bool encoded;

	if (b) {
		if (!json_is_string(b) || !(rel = kiln_state_rel_base64(json_string_value(b))))
			return NULL;
		if (version >= 2) {
			again = kiln_manifest_key(rel, &encoded);
			if (!again || strcmp(again, key) != 0) {
				free(again);
				free(rel);
				return NULL;
			}
			free(again);
		}
		return rel;
	}
	rel = version >= 2 ? kiln_manifest_key_decode(key) : strdup(key);
	if (rel && !kiln_state_safe_rel(rel, strlen(rel))) {
		free(rel);
		return NULL;
	}
	return rel;
}

static kiln_outcome skipped_outcome(const char *s)
{
	if (!s)
		return KILN_NOUTCOMES;
	for (int o = 0; o < KILN_NOUTCOMES; o++)
		if ((o == KILN_OUTCOME_MEDIA || o == KILN_OUTCOME_SMALL ||
		     o == KILN_OUTCOME_NO_GAIN || o == KILN_OUTCOME_EXCLUDED ||
		     o == KILN_OUTCOME_LONG_NAME) &&
		    strcmp(s, kiln_outcome_name((kiln_outcome)o)) == 0)
			return (kiln_outcome)o;
	return KILN_NOUTCOMES;
}

/* The recipe in OBJ's "encoder" ("" when absent, as in version 1). */
static bool get_recipe(json_t *obj, char out[KILN_RECIPE_MAX])
{
	json_t *r = json_object_get(obj, "encoder");
	const char *s;

	out[0] = '\0';
	if (!r)
		return true;
	s = json_string_value(r);
	if (!s || strlen(s) >= KILN_RECIPE_MAX)
		return false;
	strcpy(out, s);
	return true;
}

/* The same, as POOL's copy in *OUT: false if malformed, with errno ENOMEM
 * when out of memory. */
static bool get_shared_recipe(json_t *obj, struct kiln_intern *pool, const char **out)
{
	char buf[KILN_RECIPE_MAX];

	if (!get_recipe(obj, buf))
		return false;
	if (!(*out = kiln_intern(pool, buf))) {
		errno = ENOMEM;
		return false;
	}
	return true;
}

/* SHA-384 from an SRI value "sha384-" + base64 (64 characters). */
static bool sri384(const char *s, uint8_t out[48])
{
	uint8_t buf[48];
	size_t n;

	return s && strlen(s) == 7 + 64 && strncmp(s, "sha384-", 7) == 0 &&
	       kiln_base64_decode(s + 7, 64, buf, &n) && n == 48 && (memcpy(out, buf, 48), true);
}

/* One coding of an entry: a kept sibling S (if non-NULL) or a no-gain
 * record NG (an integer in version 1, an object later). */
static bool parse_coding(const char *key, json_t *s, json_t *ng, kiln_coding c,
			 struct kiln_intern *pool, struct kiln_coding_record *cr)
{
	const char *suffix = kiln_codecs[c]->info.suffix, *path;

	if (s) {
		path = json_string_value(json_object_get(s, "path"));
		if (!get_u64(s, "size", &cr->size) || !path || !get_shared_recipe(s, pool, &cr->recipe) ||
		    !hex32(json_string_value(json_object_get(s, "sha256")), cr->sha256))
			return false;
		/* the sibling must be the entry's own: KEY + suffix */
		if (strlen(path) != strlen(key) + strlen(suffix) ||
		    strncmp(path, key, strlen(key)) != 0 || strcmp(path + strlen(key), suffix) != 0)
			return false;
		cr->outcome = KILN_CODING_KEPT;
	} else if (json_is_integer(ng) && json_integer_value(ng) > 0) {
		cr->outcome = KILN_CODING_NO_GAIN;
		cr->size = (uint64_t)json_integer_value(ng);
		cr->recipe = "";
	} else if (json_is_object(ng) && get_u64(ng, "size", &cr->size) && cr->size > 0 &&
		   get_shared_recipe(ng, pool, &cr->recipe)) {
		cr->outcome = KILN_CODING_NO_GAIN;
	} else if (errno == ENOMEM) {
		return false;
	}
	return true;
}

/* Entry E's "dictionaries" into R (KEY its key): false if malformed,
 * with errno ENOMEM when out of memory. */
static bool parse_dicts(const char *key, json_t *e, struct kiln_record *r)
{
	json_t *a = json_object_get(e, "dictionaries"), *o;
	size_t i;

	if (!a)
		return true;
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > 64)
		return false;
	if (!(r->dicts = calloc(json_array_size(a), sizeof(*r->dicts)))) {
		errno = ENOMEM;
		return false;
	}
	json_array_foreach(a, i, o) {
		struct kiln_dict_record *d = &r->dicts[r->ndicts];
		const char *path = json_string_value(json_object_get(o, "path"));
		const char *dict = json_string_value(json_object_get(o, "dictionary"));
		char *want;
		bool same;
		if (!path || !dict || !get_u64(o, "size", &d->size) || !get_recipe(o, d->recipe) ||
		    !hex32(json_string_value(json_object_get(o, "sha256")), d->sha256) ||
		    !hex32(json_string_value(json_object_get(o, "dictionary_sha256")),
			   d->dict_sha256))
			return false;
		/* the delta must be the entry's own, for that dictionary */
		if (!(want = kiln_dict_sibling_path("", key, d->dict_sha256))) {
			errno = ENOMEM;
			return false;
		}
		same = strcmp(want + 1, path) == 0;
		free(want);
		if (!same || (r->ndicts && memcmp(r->dicts[r->ndicts - 1].dict_sha256,
						  d->dict_sha256, 32) >= 0))
			return false;
		if (!(d->dict_path = strdup(dict))) {
			errno = ENOMEM;
			return false;
		}
		r->ndicts++;
	}
	return true;
}

/* Fill *pe from entry E: 1, or 0 if E is malformed (it is then dropped),
 * or -1 when out of memory. */
int kiln_state_entry(const char *key, json_t *e, int version, struct kiln_intern *pool,
		     struct kiln_prev_entry *pe)
{
	json_t *encs = json_object_get(e, "encodings"), *nogain = json_object_get(e, "no_gain");
	struct kiln_record *r = &pe->rec;

	memset(pe, 0, sizeof(*pe));
	if (!json_is_object(e) || !get_u64(e, "size", &r->size) ||
	    !hex32(json_string_value(json_object_get(e, "sha256")), r->sha256) ||
	    !sri384(json_string_value(json_object_get(e, "integrity")), r->sha384))
		return false;
	if (encs) {
		if (!json_is_object(encs) || json_object_get(e, "skipped"))
			return false;
		r->outcome = KILN_OUTCOME_COMPRESSED;
	} else {
		r->outcome = skipped_outcome(json_string_value(json_object_get(e, "skipped")));
		if (r->outcome == KILN_NOUTCOMES)
			return false;
	}
	errno = 0;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *name = kiln_codecs[c]->info.name;
		json_t *s = encs ? json_object_get(encs, name) : NULL;
		json_t *ng = json_is_object(nogain) ? json_object_get(nogain, name) : NULL;
		if (!parse_coding(key, s, ng, (kiln_coding)c, pool, &r->coding[c]))
			return errno == ENOMEM ? -1 : 0;
	}
	if (!parse_dicts(key, e, r)) {
		kiln_record_free_dicts(r);
		return errno == ENOMEM ? -1 : 0;
	}
	if (!(r->rel = entry_rel(key, e, version))) {
		kiln_record_free_dicts(r);
		return errno == ENOMEM ? -1 : 0;
	}
	/* why it is immutable, for a merge to write again (immutable.h) */
	if (json_is_string(json_object_get(e, "immutable")))
		r->fp.why = (uint8_t)kiln_why_parse(json_string_value(json_object_get(e, "immutable")));
	else if (json_is_true(json_object_get(e, "immutable")))
		r->fp.why = KILN_WHY_NAME; /* version 2 said no more */
	if (r->fp.why == KILN_NWHY)
		r->fp.why = KILN_WHY_NONE;
	if (r->fp.why != KILN_WHY_NONE && json_is_string(json_object_get(e, "fingerprint"))) {
		const char *tok = json_string_value(json_object_get(e, "fingerprint"));
		size_t at = kiln_token_find(r->rel, tok, strlen(tok));
		if (at != SIZE_MAX)
			r->fp = (struct kiln_fp){ r->fp.why, (uint32_t)at, (uint32_t)strlen(tok), 0 };
	}
	r->fp.changed = json_is_true(json_object_get(e, "bytes_changed"));
	pe->in_manifest = true;
	return 1;
}

/* The manifest's "stale_siblings": siblings kiln could not remove. */
static kiln_status parse_stale(json_t *obj, int version, struct kiln_state *st)
{
	const char *key;
	json_t *e;

	if (!json_is_object(obj) || json_object_size(obj) == 0)
		return KILN_OK;
	st->stale = calloc(json_object_size(obj), sizeof(*st->stale));
	if (!st->stale)
		return KILN_ERR_NOMEM;
	json_object_foreach(obj, key, e) {
		struct kiln_stale *s = &st->stale[st->nstale];
		const char *name = json_string_value(json_object_get(e, "coding"));
		kiln_coding c = name ? kiln_coding_find(name) : -1;
		if (c < 0 || strcmp(name, kiln_codecs[c]->info.name) != 0 ||
		    !get_u64(e, "size", &s->size) ||
		    !hex32(json_string_value(json_object_get(e, "sha256")), s->sha256))
			continue;
		errno = 0;
		if (!(s->rel = entry_rel(key, e, version))) {
			if (errno == ENOMEM)
				return KILN_ERR_NOMEM;
			continue;
		}
		s->coding = c;
		st->nstale++;
	}
	return KILN_OK;
}

/* The manifest's "snippets": {NAME: {"sha256": HEX}} (a name with a '/'
 * or that is "." or ".." is no file at the top, and is ignored). */
static kiln_status parse_snippets(json_t *obj, struct kiln_state *st)
{
	const char *key;
	json_t *e;

	if (!json_is_object(obj) || json_object_size(obj) == 0)
		return KILN_OK;
	st->snippets = calloc(json_object_size(obj), sizeof(*st->snippets));
	if (!st->snippets)
		return KILN_ERR_NOMEM;
	json_object_foreach(obj, key, e) {
		struct kiln_snippet_rec *r = &st->snippets[st->nsnippets];

		if (!*key || strchr(key, '/') || strcmp(key, ".") == 0 || strcmp(key, "..") == 0 ||
		    !hex32(json_string_value(json_object_get(e, "sha256")), r->sha256))
			continue;
		if (!(r->name = strdup(key)))
			return KILN_ERR_NOMEM;
		st->nsnippets++;
	}
	return KILN_OK;
}

/* The rest of a manifest once ST holds the entries of ROOT's "files":
 * their order, the stale siblings, the snippets and the tree.  On failure
 * ST is emptied. */
kiln_status kiln_state_finish(json_t *root, int version, struct kiln_state *st)
{
	kiln_sort(st->v, st->n, sizeof(*st->v), cmp_rel);
	/* two keys naming the same bytes (a forged path_base64): keep neither */
	for (size_t i = 1; i < st->n; i++)
		if (strcmp(st->v[i - 1].rec.rel, st->v[i].rec.rel) == 0) {
			kiln_state_free(st);
			return KILN_ERR_INVALID;
		}
	if (parse_stale(json_object_get(root, "stale_siblings"), (int)version, st) != KILN_OK ||
	    parse_snippets(json_object_get(root, "snippets"), st) != KILN_OK ||
	    kiln_state_head_read(root, st) != KILN_OK) {
		kiln_state_free(st);
		return KILN_ERR_NOMEM;
	}
	if (json_is_string(json_object_get(root, "tree")) &&
	    !(st->tree = kiln_manifest_key_decode(json_string_value(json_object_get(root, "tree"))))) {
		kiln_state_free(st);
		return KILN_ERR_INVALID; /* not a path kiln writes there */
	}
	st->loaded = true;
	return KILN_OK;
}

/* The whole TEXT as one jansson tree: the reader of any text the member
 * scan does not take (state.h). */
kiln_status kiln_state_parse_whole(const char *text, size_t len, struct kiln_state *st)
{
	json_t *root, *files, *e;
	const char *key;
	kiln_status ret = KILN_ERR_INVALID;
	json_int_t version;
	int got;

	pthread_once(&json_once, wrap_json_alloc);
	json_nomem = false;
	if (!(root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL)))
		return json_nomem ? KILN_ERR_NOMEM : KILN_ERR_INVALID;
	files = json_object_get(root, "files");
	version = json_integer_value(json_object_get(root, "kiln_manifest"));
	if (!json_is_object(root) || !json_is_integer(json_object_get(root, "kiln_manifest")) ||
	    version < 1 || version > KILN_MANIFEST_VERSION || !json_is_object(files))
		goto out;
	st->v = calloc(json_object_size(files) + 1, sizeof(*st->v));
	if (!st->v || (!st->strings && !(st->strings = kiln_intern_new()))) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	json_object_foreach(files, key, e) {
		if ((got = kiln_state_entry(key, e, (int)version, st->strings, &st->v[st->n])) < 0) {
			kiln_state_free(st);
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		st->n += (size_t)got;
	}
	ret = kiln_state_finish(root, (int)version, st);
out:
	json_decref(root);
	return ret;
}

struct kiln_prev_entry *kiln_state_find(const struct kiln_state *st, const char *rel)
{
	struct kiln_prev_entry key = { .rec.rel = (char *)rel };

	if (st->n == 0)
		return NULL;
	return bsearch(&key, st->v, st->n, sizeof(*st->v), cmp_rel);
}

kiln_status kiln_state_add_journaled(struct kiln_state *st, const char *rel,
				     const struct kiln_journaled *j)
{
	struct kiln_prev_entry *pe = kiln_state_find(st, rel);
	struct kiln_journaled *jv;

	if (!pe) {
		/* insert in order, so lookups keep working */
		struct kiln_prev_entry *v = realloc(st->v, (st->n + 1) * sizeof(*v));
		size_t lo = 0, hi = st->n;
		if (!v)
			return KILN_ERR_NOMEM;
		st->v = v;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(st->v[mid].rec.rel, rel) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&st->v[lo + 1], &st->v[lo], (st->n - lo) * sizeof(*v));
		pe = &st->v[lo];
		memset(pe, 0, sizeof(*pe));
		if (!(pe->rec.rel = strdup(rel))) {
			memmove(&st->v[lo], &st->v[lo + 1], (st->n - lo) * sizeof(*v));
			return KILN_ERR_NOMEM;
		}
		st->n++;
	}
	jv = realloc(pe->jv, (pe->njv + 1) * sizeof(*jv));
	if (!jv)
		return KILN_ERR_NOMEM;
	pe->jv = jv;
	pe->jv[pe->njv++] = *j;
	st->loaded = true;
	return KILN_OK;
}

bool kiln_state_owns(const struct kiln_prev_entry *pe, kiln_coding c, uint64_t size,
		     const uint8_t sha256[32])
{
	const struct kiln_coding_record *cr = &pe->rec.coding[c];

	if (pe->in_manifest && cr->outcome == KILN_CODING_KEPT && cr->size == size &&
	    memcmp(cr->sha256, sha256, 32) == 0)
		return true;
	for (size_t i = 0; i < pe->njv; i++)
		if (pe->jv[i].coding == c && pe->jv[i].size == size &&
		    memcmp(pe->jv[i].sha256, sha256, 32) == 0)
			return true;
	return false;
}

bool kiln_state_has_sibling(const struct kiln_prev_entry *pe, kiln_coding c)
{
	if (pe->in_manifest && pe->rec.coding[c].outcome == KILN_CODING_KEPT)
		return true;
	for (size_t i = 0; i < pe->njv; i++)
		if (pe->jv[i].coding == c)
			return true;
	return false;
}

/* Does ST record REL, the delta of its first N bytes, as one of its
 * dictionary deltas? */
static bool records_delta(const struct kiln_state *st, const char *rel, size_t n)
{
	char *src = strndup(rel, n);
	const struct kiln_prev_entry *pe = src ? kiln_state_find(st, src) : NULL;
	bool yes = false;

	for (size_t i = 0; pe && pe->in_manifest && !yes && i < pe->rec.ndicts; i++) {
		char *p = kiln_dict_sibling_path("", src, pe->rec.dicts[i].dict_sha256);
		yes = p && strcmp(p + 1, rel) == 0;
		free(p);
	}
	free(src);
	return yes;
}

bool kiln_state_records_sibling(const struct kiln_state *st, const char *rel)
{
	const char *base = strrchr(rel, '/');
	kiln_coding c = kiln_sibling_coding(base ? base + 1 : rel);
	size_t n = strlen(rel);
	const struct kiln_prev_entry *pe;
	char *src;

	for (size_t i = 0; i < st->nstale; i++)
		if (strcmp(st->stale[i].rel, rel) == 0)
			return true;
	if ((n = kiln_dict_sibling_base_len(base ? base + 1 : rel)))
		return records_delta(st, rel, (size_t)(base ? base + 1 - rel : 0) + n);
	n = strlen(rel);
	if (c < 0 || !(src = strndup(rel, n - strlen(kiln_codecs[c]->info.suffix))))
		return false;
	pe = kiln_state_find(st, src);
	free(src);
	return pe && kiln_state_has_sibling(pe, c);
}

void kiln_state_free(struct kiln_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		kiln_record_free(&st->v[i].rec);
		free(st->v[i].jv);
	}
	free(st->v);
	for (size_t i = 0; i < st->nstale; i++)
		free(st->stale[i].rel);
	free(st->stale);
	for (size_t i = 0; i < st->nsnippets; i++)
		free(st->snippets[i].name);
	free(st->snippets);
	free(st->tree);
	kiln_intern_free(st->strings);
	kiln_state_head_free(st->head);
	memset(st, 0, sizeof(*st));
}
