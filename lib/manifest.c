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
#include "sort.h"

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

/*
 * The entries of "files" are written by hand, as jansson would print them
 * (JSON_INDENT(2), JSON_SORT_KEYS), into a buffer handed on as it fills:
 * a JSON tree per entry cost more than everything else an unchanged run
 * does, and the whole text is never held (tests/unit/test_manifest.c
 * compares the two on every kind of entry).
 */
struct out {
	kiln_manifest_put put;
	void *arg;
	bool failed;            /* out of memory, or a string not UTF-8 */
	size_t len;
	char buf[65536];
};

static void out_flush(struct out *o)
{
	if (o->len && !o->failed)
		o->put(o->arg, o->buf, o->len);
	o->len = 0;
}

static void out_add(struct out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			out_flush(o);
	}
}

static void out_lit(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* S[0..n) inside a JSON string, escaped as jansson escapes it: '"', '\\'
 * and control characters; the rest as it is.  A string that is not UTF-8
 * fails the text, as jansson refuses to hold one. */
static void out_body(struct out *o, const char *s, size_t n)
{
	const char *end = s + n, *run = s;
	char esc[8];

	while (s < end) {
		unsigned char c = (unsigned char)*s;
		size_t len;
		if (c >= 0x20 && c != '"' && c != '\\') {
			if (c < 0x80) {
				s++;
				continue;
			}
			if (!(len = kiln_utf8_len(s)) || len > (size_t)(end - s)) {
				o->failed = true;
				return;
			}
			s += len;
			continue;
		}
		out_add(o, run, (size_t)(s - run));
		switch (c) {
		case '"': out_add(o, "\\\"", 2); break;
		case '\\': out_add(o, "\\\\", 2); break;
		case '\b': out_add(o, "\\b", 2); break;
		case '\f': out_add(o, "\\f", 2); break;
		case '\n': out_add(o, "\\n", 2); break;
		case '\r': out_add(o, "\\r", 2); break;
		case '\t': out_add(o, "\\t", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);
			out_add(o, esc, 6);
		}
		run = ++s;
	}
	out_add(o, run, (size_t)(s - run));
}

static void out_str(struct out *o, const char *s, size_t n)
{
	out_add(o, "\"", 1);
	out_body(o, s, n);
	out_add(o, "\"", 1);
}

static void out_cstr(struct out *o, const char *s)
{
	out_str(o, s, strlen(s));
}

static void out_u64(struct out *o, uint64_t v)
{
	char d[24];
	size_t i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	out_add(o, d + i, sizeof(d) - i);
}

static void out_sha(struct out *o, const uint8_t sha[32])
{
	char hex[2 * KILN_SHA256_LEN + 3];

	hex[0] = '"';
	kiln_hex(sha, KILN_SHA256_LEN, hex + 1);
	hex[2 * KILN_SHA256_LEN + 1] = '"';
	out_add(o, hex, 2 * KILN_SHA256_LEN + 2);
}

/* The next member KEY of an object whose members are IND spaces in:
 * ",\n" (or "\n" for the first), the indent, the key and ": ". */
static void out_member(struct out *o, unsigned ind, bool *first, const char *key)
{
	static const char spaces[] = "            ";

	out_add(o, *first ? "\n" : ",\n", *first ? 1 : 2);
	*first = false;
	out_add(o, spaces, ind);
	out_cstr(o, key);
	out_add(o, ": ", 2);
}

/* Close an object or array opened IND - 2 spaces in: "\n" + indent + C,
 * or only C when it got no member (FIRST still true). */
static void out_close(struct out *o, unsigned ind, bool first, const char *c)
{
	static const char spaces[] = "            ";

	if (!first) {
		out_add(o, "\n", 1);
		out_add(o, spaces, ind - 2);
	}
	out_lit(o, c);
}

/* The codings in the order of their tokens (JSON_SORT_KEYS's). */
static void coding_order(unsigned order[KILN_NCODECS])
{
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		unsigned at = c;
		while (at > 0 &&
		       strcmp(kiln_codecs[order[at - 1]]->info.name, kiln_codecs[c]->info.name) > 0) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = c;
	}
}

/* R's codings whose outcome is KEPT (KEPT true) or another but OFF, as an
 * object of IND spaces in: {TOKEN: {"encoder", ["path", "sha256",]
 * "size"}}. */
static void out_codings(struct out *o, const struct kiln_record *r, const char *key,
			const unsigned order[KILN_NCODECS], bool kept, unsigned ind)
{
	bool first = true;

	out_add(o, "{", 1);
	for (unsigned i = 0; i < kiln_ncodecs; i++) {
		const struct kiln_coding_record *cr = &r->coding[order[i]];
		const struct kiln_coding_info *info = &kiln_codecs[order[i]]->info;
		bool f = true;
		if (cr->outcome == KILN_CODING_OFF || (cr->outcome == KILN_CODING_KEPT) != kept)
			continue;
		out_member(o, ind, &first, info->name);
		out_add(o, "{", 1);
		out_member(o, ind + 2, &f, "encoder");
		out_cstr(o, cr->recipe ? cr->recipe : "");
		if (kept) {
			out_member(o, ind + 2, &f, "path");
			out_add(o, "\"", 1);
			out_body(o, key, strlen(key));
			out_body(o, info->suffix, strlen(info->suffix));
			out_add(o, "\"", 1);
			out_member(o, ind + 2, &f, "sha256");
			out_sha(o, cr->sha256);
		}
		out_member(o, ind + 2, &f, "size");
		out_u64(o, cr->size);
		out_close(o, ind + 2, f, "}");
	}
	out_close(o, ind, first, "}");
}

/* R's dictionary deltas, an array of IND spaces in, in R's order. */
static void out_dicts(struct out *o, const struct kiln_record *r, const char *key, unsigned ind)
{
	bool first = true;

	out_add(o, "[", 1);
	for (size_t i = 0; i < r->ndicts; i++) {
		const struct kiln_dict_record *d = &r->dicts[i];
		char *path = kiln_dict_sibling_path("", key, d->dict_sha256), *dkey;
		bool enc, f = true;
		if (!path || !(dkey = kiln_manifest_key(d->dict_path, &enc))) {
			free(path);
			o->failed = true;
			return;
		}
		out_add(o, first ? "\n" : ",\n", first ? 1 : 2);
		first = false;
		out_add(o, "            ", ind);
		out_add(o, "{", 1);
		out_member(o, ind + 2, &f, "dictionary");
		out_cstr(o, dkey);
		out_member(o, ind + 2, &f, "dictionary_sha256");
		out_sha(o, d->dict_sha256);
		out_member(o, ind + 2, &f, "encoder");
		out_cstr(o, d->recipe);
		out_member(o, ind + 2, &f, "path");
		out_cstr(o, path + 1);
		out_member(o, ind + 2, &f, "sha256");
		out_sha(o, d->sha256);
		out_member(o, ind + 2, &f, "size");
		out_u64(o, d->size);
		out_close(o, ind + 2, f, "}");
		free(path);
		free(dkey);
	}
	out_close(o, ind, first, "]");
}

/* The entry of IT, keyed KEY (ENCODED: not REL itself), members 6 spaces
 * in: its members in the order of their names. */
static void out_entry(struct out *o, const struct kiln_manifest_item *it, const char *key,
		      bool encoded, const unsigned order[KILN_NCODECS])
{
	const struct kiln_record *r = it->r;
	bool first = true, nogain = false;
	char sri[80];

	for (unsigned c = 0; c < kiln_ncodecs; c++)
		nogain |= r->coding[c].outcome != KILN_CODING_OFF &&
			  r->coding[c].outcome != KILN_CODING_KEPT;
	out_add(o, "{", 1);
	/* its bytes changed under its name once: revalidated while it stays */
	if (it->fp.changed) {
		out_member(o, 6, &first, "bytes_changed");
		out_add(o, "true", 4);
	}
	out_member(o, 6, &first, "content_type");
	out_cstr(o, kiln_media_type(r->rel));
	if (r->ndicts) {
		out_member(o, 6, &first, "dictionaries");
		out_dicts(o, r, key, 8);
	}
	if (r->outcome == KILN_OUTCOME_COMPRESSED) {
		out_member(o, 6, &first, "encodings");
		out_codings(o, r, key, order, true, 8);
	}
	/* the fingerprint a dictionary's family replaces with '*', and why it
	 * is served with a year of freshness (docs/cache-control.md) */
	if (it->fp.len) {
		out_member(o, 6, &first, "fingerprint");
		out_str(o, r->rel + it->fp.start, it->fp.len);
	}
	if (it->fp.why != KILN_WHY_NONE) {
		out_member(o, 6, &first, "immutable");
		out_cstr(o, kiln_why_name(it->fp.why));
	}
	kiln_sri_sha384(r->sha384, sri);
	out_member(o, 6, &first, "integrity");
	out_cstr(o, sri);
	/* sizes of encodings tried and not kept: a later run that sees the same
	 * content and recipe need not encode them again to decide */
	if (nogain) {
		out_member(o, 6, &first, "no_gain");
		out_codings(o, r, key, order, false, 8);
	}
	if (encoded) {
		char *b64 = base64_of(r->rel);
		if (!b64) {
			o->failed = true;
			return;
		}
		out_member(o, 6, &first, "path_base64");
		out_cstr(o, b64);
		free(b64);
	}
	out_member(o, 6, &first, "sha256");
	out_sha(o, r->sha256);
	out_member(o, 6, &first, "size");
	out_u64(o, r->size);
	if (r->outcome != KILN_OUTCOME_COMPRESSED) {
		out_member(o, 6, &first, "skipped");
		out_cstr(o, kiln_outcome_name(r->outcome));
	}
	out_close(o, 6, first, "}");
}

struct keyed {
	const char *key;   /* the record's path, or the malloc'ed key (ENCODED) */
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

/* Is REL its own key (kiln_manifest_key() would change nothing)? */
static bool plain_key(const char *rel)
{
	for (const char *s = rel; *s;) {
		size_t n = kiln_utf8_len(s);
		if (!n || *s == '%')
			return false;
		s += n;
	}
	return true;
}

/* The "files" object of the N assets ITEMS, as jansson would print it as
 * the value of a top-level key. */
static void out_files(struct out *o, const struct kiln_manifest_item *items, size_t n)
{
	struct keyed *k = calloc(n + 1, sizeof(*k));
	unsigned order[KILN_NCODECS];
	bool first = true;
	size_t m = 0;

	if (!k) {
		o->failed = true;
		return;
	}
	coding_order(order);
	for (; m < n && !o->failed; m++) {
		k[m].i = m;
		if (plain_key(items[m].r->rel))
			k[m].key = items[m].r->rel;
		else if (!(k[m].key = kiln_manifest_key(items[m].r->rel, &k[m].encoded)))
			o->failed = true;
	}
	if (!o->failed)
		kiln_sort(k, n, sizeof(*k), keyed_cmp);
	out_add(o, "{", 1);
	for (size_t j = 0; j < n && !o->failed; j++) {
		if (j + 1 < n && strcmp(k[j].key, k[j + 1].key) == 0)
			continue;
		out_add(o, first ? "\n    " : ",\n    ", first ? 5 : 6);
		first = false;
		out_cstr(o, k[j].key);
		out_add(o, ": ", 2);
		out_entry(o, &items[k[j].i], k[j].key, k[j].encoded, order);
	}
	out_close(o, 4, first, "}");
	for (size_t i = 0; i < m; i++)
		if (k[i].encoded)
			free((char *)k[i].key);
	free(k);
}

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6))

bool kiln_manifest_write(const struct kiln_options *opt, const struct kiln_manifest_item *items,
			 size_t n, const struct kiln_stale *stale, size_t nstale,
			 const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree,
			 kiln_manifest_put put, void *arg)
{
	static const char mark[] = "\n  \"files\": {}";
	json_t *root = json_object(), *files = json_object(), *st = json_object();
	struct out *o = malloc(sizeof(*o));
	char *text = NULL, *at;
	bool ok = root && files && st && o;

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
	/* "files" empty here, written in below, one entry at a time */
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
		o->put = put;
		o->arg = arg;
		o->failed = false;
		o->len = 0;
		out_add(o, text, (size_t)(at - text) + sizeof(mark) - 3); /* up to "files": */
		out_files(o, items, n);
		out_lit(o, at + sizeof(mark) - 1);
		out_add(o, "\n", 1);
		out_flush(o);
	}
	ok = at && !o->failed;
	free(text);
	free(o);
	json_decref(st);
	json_decref(files);
	json_decref(root);
	return ok;
}

/* A growing text, for kiln_manifest_dump(). */
struct text {
	char *p;
	size_t len, cap;
	bool failed;
};

static void text_put(void *arg, const char *s, size_t n)
{
	struct text *t = arg;

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

char *kiln_manifest_dump(const struct kiln_options *opt, const struct kiln_manifest_item *items,
			 size_t n, const struct kiln_stale *stale, size_t nstale,
			 const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree)
{
	struct text t = { 0 };

	if (!kiln_manifest_write(opt, items, n, stale, nstale, snip, nsnip, tree, text_put, &t) ||
	    t.failed) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

bool kiln_manifest_settings_digest(const struct kiln_options *opt, uint8_t out[32])
{
	json_t *o = json_object();
	char *text = NULL;
	bool ok = o && json_object_set_new(o, "generator", generator()) == 0 &&
		  json_object_set_new(o, "settings", settings(opt)) == 0 &&
		  put_int(o, "max_file_size", opt->max_file_size) &&
		  json_object_set_new(o, "follow_symlinks", json_boolean(opt->follow_symlinks)) == 0 &&
		  json_object_set_new(o, "verify", json_boolean(opt->verify)) == 0;

	ok = ok && (text = dump_whole(o, DUMP_FLAGS)) != NULL &&
	     kiln_sha256(text, strlen(text), out) == KILN_OK;
	free(text);
	json_decref(o);
	return ok;
}
