/*
 * manifest.c - building the manifest with jansson.
 *
 * Determinism is the point: the same tree and options must give the same
 * bytes on any machine with the same encoders, so there are no timestamps,
 * no absolute paths, keys are sorted (JSON_SORT_KEYS) and reals are printed
 * with a fixed precision.  JSON strings must be UTF-8, and file names are
 * bytes: a name that is not valid UTF-8, or holds a '%', is keyed by a
 * percent-encoded form and carries its exact bytes in base64, so nothing is
 * lost, no two names share a key, and the document is always valid JSON.
 */
#include "manifest.h"

#include "fingerprint.h"

#include "codec.h"
#include "hash.h"
#include "mime.h"

#include <jansson.h>

#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

char *kiln_manifest_key(const char *rel, bool *encoded)
{
	char *out = malloc(3 * strlen(rel) + 1), *o = out;

	*encoded = false;
	if (!out)
		return NULL;
	for (const char *s = rel; *s;) {
		size_t n = kiln_utf8_len(s);
		if (n && *s != '%') {
			memcpy(o, s, n);
			o += n;
			s += n;
			continue;
		}
		*encoded = true;
		o += sprintf(o, "%%%02X", (unsigned char)*s++);
	}
	*o = '\0';
	return out;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *kiln_manifest_key_decode(const char *key)
{
	char *out = malloc(strlen(key) + 1), *o = out, *again = NULL;
	bool ok = out != NULL, encoded;

	for (const char *s = key; ok && *s;) {
		int hi, lo;
		if (*s != '%') {
			*o++ = *s++;
			continue;
		}
		hi = hex_digit(s[1]);
		lo = hi >= 0 ? hex_digit(s[2]) : -1;
		ok = lo >= 0 && (hi || lo); /* uppercase hex, never a NUL */
		if (ok) {
			*o++ = (char)(hi << 4 | lo);
			s += 3;
		}
	}
	if (ok) {
		*o = '\0';
		/* only the key kiln_manifest_key() makes: "%41" is not "A"'s */
		again = kiln_manifest_key(out, &encoded);
		ok = again && strcmp(again, key) == 0;
	}
	free(again);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

/* Add "key": string; false when out of memory. */
static bool put_str(json_t *obj, const char *key, const char *value)
{
	json_t *v = json_string(value);

	return v && json_object_set_new(obj, key, v) == 0;
}

static bool put_int(json_t *obj, const char *key, uint64_t value)
{
	json_t *v = json_integer((json_int_t)value);

	return v && json_object_set_new(obj, key, v) == 0;
}

static bool put_sha(json_t *obj, const char *key, const uint8_t sha[32])
{
	char hex[2 * KILN_SHA256_LEN + 1];

	kiln_hex(sha, KILN_SHA256_LEN, hex);
	return put_str(obj, key, hex);
}

/* The base64 of the bytes of S, malloc'ed. */
static char *base64_of(const char *s)
{
	size_t len = strlen(s);
	char *b64 = malloc(KILN_BASE64_LEN(len) + 1);

	if (b64)
		kiln_base64_encode(s, len, b64);
	return b64;
}

static bool put_base64(json_t *obj, const char *key, const char *bytes)
{
	char *b64 = base64_of(bytes);
	bool ok = b64 && put_str(obj, key, b64);

	free(b64);
	return ok;
}

char *kiln_path_key(const char *path, char **base64)
{
	bool encoded;
	char *key = kiln_manifest_key(path, &encoded);

	if (!base64)
		return key;
	*base64 = NULL;
	if (key && encoded && !(*base64 = base64_of(path))) {
		free(key);
		return NULL;
	}
	return key;
}

static json_t *glob_array(const char *const *globs, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		bool enc;
		char *g = kiln_manifest_key(globs[i], &enc);
		json_t *s = g ? json_string(g) : NULL;
		free(g);
		if (!s || json_array_append_new(a, s) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *settings(const struct kiln_options *opt)
{
	json_t *s = json_object(), *enc = json_array();
	bool ok = s && enc;

	for (unsigned c = 0; ok && c < kiln_ncodecs; c++)
		if (opt->codings & (1u << c))
			ok = json_array_append_new(enc, json_string(kiln_codecs[c]->info.name)) == 0;
	ok = ok && json_object_set_new(s, "encodings", enc) == 0;
	enc = NULL;
	for (unsigned c = 0; ok && c < kiln_ncodecs; c++) {
		const struct kiln_coding_info *i = &kiln_codecs[c]->info;
		char key[64];
		snprintf(key, sizeof(key), "%s_%s", i->word, i->level_word);
		ok = put_int(s, key, (uint64_t)opt->level[c]);
		if (ok && i->extra_word) {
			snprintf(key, sizeof(key), "%s_%s", i->extra_word, i->extra_param);
			ok = put_int(s, key, (uint64_t)opt->extra[c]);
		}
	}
	ok = ok && put_int(s, "min_size", opt->min_size) &&
	     put_int(s, "stream_size", opt->stream_size) &&
	     json_object_set_new(s, "max_ratio", json_real(opt->max_ratio)) == 0 &&
	     json_object_set_new(s, "include", glob_array(opt->include, opt->n_include)) == 0 &&
	     json_object_set_new(s, "exclude", glob_array(opt->exclude, opt->n_exclude)) == 0 &&
	     json_object_set_new(s, "immutable", glob_array(opt->immutable, opt->n_immutable)) == 0 &&
	     json_object_set_new(s, "mutable", glob_array(opt->mutable_globs, opt->n_mutable)) == 0;
	if (!ok) {
		json_decref(enc);
		json_decref(s);
		return NULL;
	}
	return s;
}

static json_t *generator(void)
{
	json_t *g = json_object();
	bool ok = g && put_str(g, "name", "kiln") && put_str(g, "version", kiln_version());

	/* the encoders' libraries, which decide the bytes (libarchive does not) */
	for (unsigned c = 0; ok && c < kiln_ncodecs; c++)
		for (const struct kiln_codec_library *l = kiln_codecs[c]->libraries; ok && l->name; l++)
			ok = put_str(g, l->name, l->version());
	if (ok)
		return g;
	json_decref(g);
	return NULL;
}

/* ENCS.<token> = {"path", "size", "sha256", "encoder"} for a kept sibling;
 * NOGAIN.<token> = {"size", "encoder"} for one tried and dropped. */
static bool add_coding(json_t *encs, json_t *nogain, const struct kiln_coding_record *cr,
		       kiln_coding c, const char *key)
{
	const struct kiln_coding_info *i = &kiln_codecs[c]->info;
	json_t *s = json_object();
	bool ok = s != NULL;

	if (ok && cr->outcome == KILN_CODING_KEPT) {
		char *path = malloc(strlen(key) + strlen(i->suffix) + 1);
		ok = path != NULL;
		if (ok) {
			strcpy(path, key);
			strcat(path, i->suffix);
			ok = put_str(s, "path", path);
		}
		free(path);
		ok = ok && put_sha(s, "sha256", cr->sha256);
	}
	ok = ok && put_int(s, "size", cr->size) && put_str(s, "encoder", cr->recipe);
	if (!ok) {
		json_decref(s);
		return false;
	}
	return json_object_set_new(cr->outcome == KILN_CODING_KEPT ? encs : nogain, i->name, s) == 0;
}

/* E.dictionaries = [{"path", "size", "sha256", "encoder", "dictionary",
 * "dictionary_sha256"}, ...] for R's dictionary deltas, in R's order. */
static bool add_dicts(json_t *e, const struct kiln_record *r, const char *key)
{
	json_t *a = json_array();
	bool ok = a != NULL;

	for (size_t i = 0; ok && i < r->ndicts; i++) {
		const struct kiln_dict_record *d = &r->dicts[i];
		json_t *o = json_object();
		char *path = kiln_dict_sibling_path("", key, d->dict_sha256);
		bool enc;
		char *dkey = kiln_manifest_key(d->dict_path, &enc);
		ok = o && path && dkey && put_str(o, "path", path + 1) && put_int(o, "size", d->size) &&
		     put_sha(o, "sha256", d->sha256) && put_str(o, "encoder", d->recipe) &&
		     put_str(o, "dictionary", dkey) &&
		     put_sha(o, "dictionary_sha256", d->dict_sha256) && json_array_append(a, o) == 0;
		json_decref(o);
		free(path);
		free(dkey);
	}
	ok = ok && json_object_set(e, "dictionaries", a) == 0;
	json_decref(a);
	return ok;
}

static json_t *entry(const struct kiln_manifest_item *it, const char *key, bool encoded)
{
	const struct kiln_record *r = it->r;
	json_t *e = json_object(), *encs = json_object(), *nogain = json_object();
	char sri[80];
	bool ok = e && encs && nogain;

	kiln_sri_sha384(r->sha384, sri);
	ok = ok && put_int(e, "size", r->size) && put_sha(e, "sha256", r->sha256) &&
	     put_str(e, "integrity", sri) && put_str(e, "content_type", kiln_media_type(r->rel));
	if (ok && encoded)
		ok = put_base64(e, "path_base64", r->rel);
	/* served with a year of freshness (docs/cache-control.md,
	 * "Cache-Control"): why,
	 * and the fingerprint a dictionary's family replaces with '*' */
	if (ok && it->fp.why != KILN_WHY_NONE)
		ok = put_str(e, "immutable", kiln_why_name(it->fp.why));
	if (ok && it->fp.len) {
		char *tok = strndup(r->rel + it->fp.start, it->fp.len);
		ok = tok && put_str(e, "fingerprint", tok);
		free(tok);
	}
	for (unsigned c = 0; ok && c < kiln_ncodecs; c++)
		if (r->coding[c].outcome != KILN_CODING_OFF)
			ok = add_coding(encs, nogain, &r->coding[c], (kiln_coding)c, key);
	if (ok && r->ndicts)
		ok = add_dicts(e, r, key);
	if (ok && r->outcome != KILN_OUTCOME_COMPRESSED)
		ok = put_str(e, "skipped", kiln_outcome_name(r->outcome));
	else if (ok)
		ok = json_object_set(e, "encodings", encs) == 0;
	/* sizes of encodings tried and not kept: a later run that sees the same
	 * content and recipe need not encode them again to decide */
	if (ok && json_object_size(nogain) > 0)
		ok = json_object_set(e, "no_gain", nogain) == 0;
	json_decref(encs);
	json_decref(nogain);
	if (!ok) {
		json_decref(e);
		return NULL;
	}
	return e;
}

static json_t *stale_entry(const struct kiln_stale *s, bool encoded)
{
	json_t *e = json_object();

	if (e && put_str(e, "coding", kiln_codecs[s->coding]->info.name) &&
	    put_int(e, "size", s->size) && put_sha(e, "sha256", s->sha256) &&
	    (!encoded || put_base64(e, "path_base64", s->rel)))
		return e;
	json_decref(e);
	return NULL;
}

/* "snippets": {NAME: {"sha256": HEX}}, or NULL when out of memory. */
static json_t *snippets(const struct kiln_snippet_rec *snip, size_t nsnip)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < nsnip; i++) {
		json_t *e = json_object();
		if (!e || !put_sha(e, "sha256", snip[i].sha256) ||
		    json_object_set_new(o, snip[i].name, e) != 0) {
			json_decref(e);
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* A growing text: the manifest is built in one buffer, never a JSON tree
 * of the whole tree (issue: a 200,000-file tree held its whole jansson
 * tree, its text and two copies of it at once). */
struct text {
	char *p;
	size_t len, cap;
	bool failed;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->failed)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		char *p;
		while (cap < t->len + n + 1)
			cap *= 2;
		if (!(p = realloc(t->p, cap))) {
			t->failed = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

/* Allocations jansson could not make, on this thread.  jansson's dump
 * ignores a failure to append an object's key (dump.c), so a text it
 * returns after an allocation failed may lack bytes: such a text is never
 * written (found by the sequence test's malloc faults). */
static __thread unsigned long alloc_failures;

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		alloc_failures++;
	return p;
}

static void set_alloc(void)
{
	json_set_alloc_funcs(counting_malloc, free);
}

void kiln_manifest_alloc_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, set_alloc);
}

/* json_dumps of V with FLAGS, or NULL: also when an allocation failed
 * during it (see alloc_failures). */
static char *dump_whole(json_t *v, size_t flags)
{
	unsigned long before = alloc_failures;
	char *d = v ? json_dumps(v, flags) : NULL;

	if (d && alloc_failures != before) {
		free(d);
		d = NULL;
	}
	return d;
}

/* Append V as jansson prints it DEPTH objects deep with JSON_INDENT(2):
 * its own dump, each newline followed by 2 * DEPTH more spaces (a JSON
 * text holds a raw newline only between tokens, never in a string). */
static void text_add_json(struct text *t, json_t *v, size_t flags, unsigned depth)
{
	char *d = dump_whole(v, flags);
	const char *s = d, *nl;

	if (!d) {
		t->failed = true;
		return;
	}
	while ((nl = strchr(s, '\n'))) {
		text_add(t, s, (size_t)(nl + 1 - s));
		for (unsigned i = 0; i < depth; i++)
			text_add(t, "  ", 2);
		s = nl + 1;
	}
	text_add(t, s, strlen(s));
	free(d);
}

struct keyed {
	char *key;
	size_t i;
	bool encoded;
};

/* By key as JSON_SORT_KEYS orders them (bytewise), then by index: of two
 * records with one key the later wins, as json_object_set would have it. */
static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6))

/* Append the "files" object of the N assets ITEMS, as jansson would print
 * it as the value of a top-level key, one entry's JSON at a time. */
static bool add_files(struct text *t, const struct kiln_manifest_item *items, size_t n)
{
	struct keyed *k = calloc(n + 1, sizeof(*k));
	size_t m = 0;
	bool ok = k != NULL, first = true;

	for (size_t i = 0; ok && i < n; i++) {
		k[i].i = i;
		ok = (k[i].key = kiln_manifest_key(items[i].r->rel, &k[i].encoded)) != NULL;
		m = i + 1;
	}
	if (ok)
		qsort(k, n, sizeof(*k), keyed_cmp);
	text_add(t, "{", 1);
	for (size_t j = 0; ok && j < n; j++) {
		json_t *key, *e;
		if (j + 1 < n && strcmp(k[j].key, k[j + 1].key) == 0)
			continue;
		key = json_string(k[j].key);
		e = entry(&items[k[j].i], k[j].key, k[j].encoded);
		ok = key && e;
		text_add(t, first ? "\n    " : ",\n    ", first ? 5 : 6);
		first = false;
		if (ok) {
			text_add_json(t, key, JSON_ENCODE_ANY, 0);
			text_add(t, ": ", 2);
			text_add_json(t, e, DUMP_FLAGS, 2);
		}
		json_decref(key);
		json_decref(e);
	}
	text_add(t, "\n  }", 4);
	for (size_t i = 0; k && i < m; i++)
		free(k[i].key);
	free(k);
	return ok && !t->failed;
}

char *kiln_manifest_dump(const struct kiln_options *opt, const struct kiln_manifest_item *items,
			 size_t n, const struct kiln_stale *stale, size_t nstale,
			 const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree)
{
	static const char mark[] = "\n  \"files\": {}";
	json_t *root = json_object(), *files = json_object(), *st = json_object();
	char *text = NULL, *at;
	struct text out = { 0 };
	bool ok = root && files && st;

	ok = ok && put_int(root, "kiln_manifest", KILN_MANIFEST_VERSION) &&
	     json_object_set_new(root, "generator", generator()) == 0 &&
	     json_object_set_new(root, "settings", settings(opt)) == 0;
	if (ok && tree) {
		bool encoded;
		char *key = kiln_manifest_key(tree, &encoded);
		ok = key && json_object_set_new(root, "tree", json_string(key)) == 0;
		free(key);
	}
	if (ok && opt->shard_count) { /* a part (shard.h) */
		json_t *sh = json_object();
		bool built = sh && put_int(sh, "index", opt->shard_index) &&
			     put_int(sh, "count", opt->shard_count);
		ok = built && json_object_set_new(root, "shard", sh) == 0;
		if (!built)
			json_decref(sh);
	}
	for (size_t i = 0; ok && i < nstale; i++) {
		bool encoded;
		char *key = kiln_manifest_key(stale[i].rel, &encoded);
		json_t *e = key ? stale_entry(&stale[i], encoded) : NULL;
		ok = e && json_object_set_new(st, key, e) == 0;
		free(key);
	}
	/* "files" empty here, spliced in below, one entry at a time */
	ok = ok && json_object_set(root, "files", files) == 0;
	if (ok && nstale)
		ok = json_object_set(root, "stale_siblings", st) == 0;
	if (ok && nsnip)
		ok = json_object_set_new(root, "snippets", snippets(snip, nsnip)) == 0;
	if (ok)
		text = dump_whole(root, DUMP_FLAGS);
	/* the top-level key, at its indent: nowhere else in the text */
	at = text ? strstr(text, mark) : NULL;
	if (at) {
		size_t head = (size_t)(at - text) + sizeof(mark) - 3; /* up to "files": */
		text_add(&out, text, head);
		if (n == 0 ? (text_add(&out, "{}", 2), true) : add_files(&out, items, n)) {
			text_add(&out, at + sizeof(mark) - 1, strlen(at + sizeof(mark) - 1));
			text_add(&out, "\n", 1);
		} else
			out.failed = true;
	}
	free(text);
	json_decref(st);
	json_decref(files);
	json_decref(root);
	if (!at || out.failed) {
		free(out.p);
		return NULL;
	}
	return out.p;
}
