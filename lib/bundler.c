/*
 * bundler.c - bundlers' manifests, read with jansson, as proofs that an
 * output's name holds a hash.
 *
 * A manifest lists unhashed files too (Create React App's lists
 * index.html, webpack-manifest-plugin lists what CopyWebpackPlugin
 * copied, Vite's lists whatever its output names say), so a listing
 * alone proves nothing.  What proves a token is the manifest's own
 * account of one output: the logical name its entry gives it, which the
 * output's name is with a token inserted ("main.js" -> "main.3f9a2c7b.js",
 * chunk "index" -> "index-DPJWWXvr.js"), the inserted part hash-like and
 * not repeated in another output (a pattern's literal, "main.standalone.js",
 * is neither); or the bundler's word (webpack's info.immutable; Next.js
 * serves everything under static/ immutable itself).  An asset Vite lists
 * under a chunk is proven by its own entry, never by the chunk's name
 * ("index" and "index-background.png" are no insertion).  Angular's
 * ngsw.json is not read: it lists every file with a hash of its bytes,
 * which says nothing of the names (its build's esbuild metafile does).
 */
#include "bundler.h"

#include "fingerprint.h"

#include <jansson.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kiln_proofs_free(struct kiln_proofs *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* A manifest's path or URL as a path: without "scheme://host", a query or
 * fragment, and leading "/" or "./"; malloc'ed, NULL when empty (or out of
 * memory: *NOMEM). */
static char *clean_url(const char *s, bool *nomem)
{
	const char *p = strstr(s, "://");
	size_t n;
	char *out;

	if (p && (p = strchr(p + 3, '/')) == NULL)
		return NULL;
	p = p ? p : s;
	for (;;) {
		if (*p == '/')
			p++;
		else if (p[0] == '.' && p[1] == '/')
			p += 2;
		else
			break;
	}
	n = strcspn(p, "?#");
	if (!n)
		return NULL;
	if (!(out = strndup(p, n)))
		*nomem = true;
	return out;
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Add PATH (owned now) with the span START, LEN to OUT, proven or only
 * listed. */
static bool add(struct kiln_proofs *out, char *path, size_t start, size_t len, bool proven)
{
	if (out->n == out->cap) {
		size_t c = out->cap ? 2 * out->cap : 32;
		struct kiln_proof *v = realloc(out->v, c * sizeof(*v));
		if (!v) {
			free(path);
			return false;
		}
		out->v = v;
		out->cap = c;
	}
	out->v[out->n++] = (struct kiln_proof){ path, start, len, proven, false, false };
	return true;
}

/* Add PATH's source map, PATH.map, with the span START, LEN of PATH. */
static bool add_map(struct kiln_proofs *out, const char *path, size_t start, size_t len)
{
	size_t n = strlen(path);
	char *m = malloc(n + 5);

	if (!m)
		return false;
	memcpy(m, path, n);
	memcpy(m + n, ".map", 5);
	return add(out, m, start, len, true);
}

/* Is [AT, AT + LEN) of PATH what a bundler inserts, a hash: a candidate
 * token of KILN_TOKEN_MIN_BUNDLER bytes or more, hash-like (no word:
 * "standalone", "background"), and no upper-case word ("PRODUCTION") but
 * of 8, esbuild's hash (its manifest says it inserted it; a literal of a
 * pattern is the same in every output, literal())? */
static bool inserted(const char *path, size_t at, size_t len)
{
	const char *t = path + at;
	bool lower = false;

	if (!kiln_token_at_min(path, at, len, KILN_TOKEN_MIN_BUNDLER) || !kiln_token_hashlike(t, len))
		return false;
	for (size_t i = 0; i < len; i++)
		lower |= t[i] >= 'a' && t[i] <= 'z';
	return lower || len == 8 || !kiln_token_words32(t, len);
}

/* Is [AT, AT + LEN) of PATH a token with a digit and a letter?  Vite's
 * and esbuild's manifests name an output's hash where their pattern put
 * it, so there a hash of base36 that reads as a word and a number
 * ("edidli90") is one: a pattern's literal is the same in every output
 * (literal()). */
static bool numbered(const char *path, size_t at, size_t len)
{
	bool digit = false, letter = false;

	if (!kiln_token_at_min(path, at, len, KILN_TOKEN_MIN_BUNDLER))
		return false;
	for (size_t i = at; i < at + len; i++) {
		digit |= path[i] >= '0' && path[i] <= '9';
		letter |= (path[i] >= 'a' && path[i] <= 'z') || (path[i] >= 'A' && path[i] <= 'Z');
	}
	return digit && letter;
}

/* The token of OUTPUT (a cleaned path) that starts right after its base
 * name's first N bytes and a '-' or '.': its offset, or 0 when none. */
static size_t token_after(const char *output, size_t n, size_t *len)
{
	const char *b = base_of(output);
	size_t at = (size_t)(b - output) + n + 1, l = 0;

	if (strlen(b) <= n + 1 || (b[n] != '-' && b[n] != '.'))
		return 0;
	while (output[at + l] && output[at + l] != '.')
		l++;
	if (!inserted(output, at, l) && !numbered(output, at, l))
		return 0;
	*len = l;
	return at;
}

/* OUTPUT (a URL) is proven when its base name begins with the logical
 * NAME (a path, or NULL; without its directory and, with STRIP, its
 * extensions) and a token; else, with LIST, it is listed. */
static bool prove_stem(struct kiln_proofs *out, const char *output, const char *name, bool strip,
		       bool list, bool *nomem)
{
	char *o;
	const char *b;
	size_t n, at, len = 0;

	if (!output || !(o = clean_url(output, nomem)))
		return false;
	if (name) {
		b = base_of(name);
		n = strip ? strcspn(b, ".") : strlen(b);
		if (n && strncmp(base_of(o), b, n) == 0 && (at = token_after(o, n, &len)))
			return (add(out, o, at, len, true) && add_map(out, o, at, len)) ||
			       (*nomem = true, false);
		/* "foo.module.css" is named "foo.module" too */
		if (strip && strrchr(b, '.') && (size_t)(strrchr(b, '.') - b) != n) {
			n = (size_t)(strrchr(b, '.') - b);
			if (strncmp(base_of(o), b, n) == 0 && (at = token_after(o, n, &len)))
				return (add(out, o, at, len, true) && add_map(out, o, at, len)) ||
				       (*nomem = true, false);
		}
	}
	if (list && !add(out, o, 0, 0, false))
		*nomem = true;
	else if (!list)
		free(o);
	return false;
}

/* List OUTPUT (a URL): an output of the bundler, not proven. */
static void list(struct kiln_proofs *out, const char *output, bool *nomem)
{
	char *o;

	if (output && (o = clean_url(output, nomem)) && !add(out, o, 0, 0, false))
		*nomem = true;
}

/* OUTPUT (a URL) is proven when taking a '-' or '.' and a token out of its
 * base name leaves the base name of KEY: the token was inserted. */
static void prove_insert(struct kiln_proofs *out, const char *output, const char *key, bool *nomem)
{
	char *o = clean_url(output, nomem);
	const char *b, *k = base_of(key);
	size_t off;

	if (!o)
		return;
	b = base_of(o);
	off = (size_t)(b - o);
	for (size_t at = off + 1, l; kiln_token_next(o, &at, &l); at++) {
		size_t p = at - off;
		if (strlen(b) == strlen(k) + l + 1 && memcmp(b, k, p - 1) == 0 &&
		    strcmp(b + p + l, k + p - 1) == 0 && inserted(o, at, l)) {
			if (!add(out, o, at, l, true))
				*nomem = true;
			return;
		}
	}
	free(o);
}

/* Add OUTPUT (a URL), proven, with the token the rule on the name alone
 * finds (or none: the bundler's word is enough). */
static void prove_any(struct kiln_proofs *out, const char *output, bool *nomem)
{
	char *o = clean_url(output, nomem);
	size_t len = 0, at = 0;

	if (!o)
		return;
	if (!kiln_fingerprint_span(o, &at, &len))
		at = len = 0;
	if (!add(out, o, at, len, true))
		*nomem = true;
}

static void vite(json_t *root, struct kiln_proofs *out, bool *nomem)
{
	const char *key;
	json_t *e;

	json_object_foreach(root, key, e) {
		const char *names[3] = { json_string_value(json_object_get(e, "name")),
					 json_string_value(json_object_get(e, "src")),
					 key[0] == '_' ? key + 1 : key };
		json_t *f;
		size_t i;
		int n = names[0] ? 0 : names[1] ? 1 : 2; /* the first Vite gives */
		prove_stem(out, json_string_value(json_object_get(e, "file")), names[n], n > 0, true,
			   nomem);
		/* a chunk's style sheets are named after it; its assets have
		 * entries of their own */
		json_array_foreach(json_object_get(e, "css"), i, f)
			prove_stem(out, json_string_value(f), names[n], n > 0, true, nomem);
		json_array_foreach(json_object_get(e, "assets"), i, f)
			list(out, json_string_value(f), nomem);
	}
}

static void flat(json_t *map, struct kiln_proofs *out, bool *nomem)
{
	const char *key;
	json_t *v;

	json_object_foreach(map, key, v)
		if (json_is_string(v))
			prove_insert(out, json_string_value(v), key, nomem);
}

static void webpack_assets(json_t *stats, struct kiln_proofs *out, bool *nomem, int depth)
{
	static const char *const hashes[] = { "contenthash", "chunkhash", "fullhash" };
	json_t *a, *c;
	size_t i;

	json_array_foreach(json_object_get(stats, "assets"), i, a) {
		json_t *info = json_object_get(a, "info");
		const char *name = json_string_value(json_object_get(a, "name"));
		char *o;
		size_t at = SIZE_MAX, len = 0;
		if (!name)
			continue;
		if (!json_is_true(json_object_get(info, "immutable"))) {
			/* webpack's word, but of a source map (info.development),
			 * whose name is its script's */
			list(out, name, nomem);
			if (out->n && !*nomem && !json_is_true(json_object_get(info, "development")))
				out->v[out->n - 1].denied = true;
			continue;
		}
		if (!(o = clean_url(name, nomem)))
			continue;
		for (size_t h = 0; h < 3 && at == SIZE_MAX; h++) {
			json_t *v = json_object_get(info, hashes[h]), *x;
			size_t j;
			if (json_is_string(v) && (len = strlen(json_string_value(v))))
				at = kiln_token_find(o, json_string_value(v), len);
			json_array_foreach(v, j, x)
				if (at == SIZE_MAX && json_is_string(x) &&
				    (len = strlen(json_string_value(x))))
					at = kiln_token_find(o, json_string_value(x), len);
		}
		if (!add(out, o, at == SIZE_MAX ? 0 : at, at == SIZE_MAX ? 0 : len, true))
			*nomem = true;
	}
	json_array_foreach(json_object_get(stats, "children"), i, c)
		if (depth < 8)
			webpack_assets(c, out, nomem, depth + 1);
}

static void esbuild(json_t *outputs, struct kiln_proofs *out, bool *nomem)
{
	const char *key;
	json_t *o;

	json_object_foreach(outputs, key, o) {
		const char *entry = json_string_value(json_object_get(o, "entryPoint"));
		json_t *inputs = json_object_get(o, "inputs");
		const char *only = NULL;
		if (json_object_size(inputs) == 1) {
			void *it = json_object_iter(inputs);
			only = json_object_iter_key(it);
		}
		/* a shared chunk is named "chunk" by default */
		if (!prove_stem(out, key, entry, true, false, nomem) &&
		    !prove_stem(out, key, only, true, false, nomem))
			prove_stem(out, key, entry ? NULL : "chunk", false, true, nomem);
		/* an entry's style sheet is named after it */
		prove_stem(out, json_string_value(json_object_get(o, "cssBundle")), entry, true, false,
			   nomem);
	}
}

static void next(json_t *root, struct kiln_proofs *out, bool *nomem)
{
	static const char *const lists[] = { "polyfillFiles", "lowPriorityFiles", "rootMainFiles" };
	const char *key;
	json_t *v, *f;
	size_t i;

	json_object_foreach(json_object_get(root, "pages"), key, v)
		json_array_foreach(v, i, f)
			if (json_is_string(f) && strncmp(json_string_value(f), "static/", 7) == 0)
				prove_any(out, json_string_value(f), nomem);
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(json_object_get(root, lists[l]), i, f)
			if (json_is_string(f) && strncmp(json_string_value(f), "static/", 7) == 0)
				prove_any(out, json_string_value(f), nomem);
}

/* Is ROOT Next.js's build-manifest.json: "pages" and Next's own lists
 * beside it ("lowPriorityFiles", and "polyfillFiles", "devFiles" or
 * "rootMainFiles"), not any manifest with a "pages" key? */
static bool is_next(json_t *root)
{
	return json_is_object(json_object_get(root, "pages")) &&
	       json_is_array(json_object_get(root, "lowPriorityFiles")) &&
	       (json_is_array(json_object_get(root, "polyfillFiles")) ||
		json_is_array(json_object_get(root, "devFiles")) ||
		json_is_array(json_object_get(root, "rootMainFiles")));
}

/* Is every value of the object O a string (IS_STRING) or an object, and
 * is there one? */
static bool all_values(json_t *o, bool is_string)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o) || !json_object_size(o))
		return false;
	json_object_foreach(o, key, v)
		if (is_string ? !json_is_string(v) : !json_is_object(v))
			return false;
	return true;
}

/* A proven output's token, for literal(). */
struct tok {
	const char *t, *path;
	size_t len, plen; /* PLEN: PATH without a ".map" */
	size_t i;
};

static int tok_cmp(const void *a, const void *b)
{
	const struct tok *x = a, *y = b;
	int c = x->len != y->len ? (x->len < y->len ? -1 : 1) : memcmp(x->t, y->t, x->len);

	if (c)
		return c;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return memcmp(x->path, y->path, x->plen);
}

/* Unprove the outputs OUT->v[N0..] whose inserted token is the same as
 * another output's (a source map aside): the literal of a name pattern
 * ("[name].standalone.js"), not a hash of each output's bytes.  False when
 * out of memory. */
static bool literal(struct kiln_proofs *out, size_t n0)
{
	struct tok *v = malloc((out->n - n0 + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return false;
	for (size_t i = n0; i < out->n; i++) {
		const struct kiln_proof *p = &out->v[i];
		size_t pl = strlen(p->path);
		if (!p->proven || !p->len)
			continue;
		if (pl > 4 && strcmp(p->path + pl - 4, ".map") == 0)
			pl -= 4;
		v[n++] = (struct tok){ p->path + p->start, p->path, p->len, pl, i };
	}
	qsort(v, n, sizeof(*v), tok_cmp);
	for (size_t a = 0, b; a < n; a = b) {
		bool other = false;
		for (b = a + 1; b < n && v[b].len == v[a].len && memcmp(v[b].t, v[a].t, v[a].len) == 0; b++)
			other |= tok_cmp(&v[b], &v[b - 1]) != 0;
		for (size_t k = a; other && k < b; k++)
			out->v[v[k].i].proven = false;
	}
	free(v);
	return true;
}

/* Is the inserted token T (LEN bytes) one no name pattern writes as a
 * literal: hash-like (inserted()) and not a name someone could have chosen
 * (kiln_token_chosen(): "es2017", "v20240301", "build42a" are versions),
 * or hexadecimal with a digit and a letter (webpack's)?  Any other
 * inserted token (base36, digits alone, a hash that reads as words) is
 * weak: only the build's other outputs can prove its pattern. */
static bool strong(const char *t, size_t len)
{
	bool digit = false, letter = false;

	if (!kiln_token_hashlike(t, len))
		return false;
	for (size_t i = 0; i < len; i++) {
		digit |= t[i] >= '0' && t[i] <= '9';
		letter |= t[i] >= 'a' && t[i] <= 'f';
	}
	if ((kiln_token_alphabets(t, len) & KILN_ALPHA_HEX) && len >= KILN_TOKEN_MIN)
		return digit && letter;
	return len > KILN_WORDS_MAX || !kiln_token_chosen(t, len);
}

/* Unprove the outputs OUT->v[N0..] whose inserted token is weak (strong())
 * unless the build's other outputs prove the pattern: a strong token of the
 * same length, or 3 distinct weak ones of that length in all (a pattern's
 * hash drawn for each output; one or two versions are not).  False when
 * out of memory. */
static bool weak(struct kiln_proofs *out, size_t n0)
{
	struct tok *v = malloc((out->n - n0 + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return false;
	for (size_t i = n0; i < out->n; i++) {
		const struct kiln_proof *p = &out->v[i];
		if (p->proven && p->len)
			v[n++] = (struct tok){ p->path + p->start, p->path, p->len, strlen(p->path), i };
	}
	qsort(v, n, sizeof(*v), tok_cmp);
	for (size_t a = 0, b; a < n; a = b) {
		size_t nstrong = 0, nweak = 0;
		for (b = a; b < n && v[b].len == v[a].len; b++)
			if (b == a || memcmp(v[b].t, v[b - 1].t, v[b].len) != 0) {
				if (strong(v[b].t, v[b].len))
					nstrong++;
				else
					nweak++;
			}
		for (size_t k = a; !nstrong && nweak < 3 && k < b; k++)
			if (!strong(v[k].t, v[k].len))
				out->v[v[k].i].proven = false;
	}
	free(v);
	return true;
}

kiln_status kiln_bundler_read(const char *text, size_t len, struct kiln_proofs *out,
			      const char **format)
{
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *e;
	bool nomem = false, vite_like = false, complete = false, insertions = true;
	const char *key, *f = NULL;
	size_t n0 = out->n;

	if (!json_is_object(root)) {
		json_decref(root);
		return KILN_ERR_INVALID;
	}
	if (json_is_object(json_object_get(root, "outputs")) &&
	    json_is_object(json_object_get(root, "inputs"))) {
		esbuild(json_object_get(root, "outputs"), out, &nomem);
		f = "esbuild metafile";
		complete = true;
	} else if (json_is_array(json_object_get(root, "assets"))) {
		webpack_assets(root, out, &nomem, 0);
		f = "webpack stats";
		insertions = false; /* webpack's own word, [fullhash] too */
		complete = true;
	} else if (is_next(root)) {
		next(root, out, &nomem);
		f = KILN_FORMAT_NEXT;
		insertions = false;
	} else if (all_values(json_object_get(root, "files"), true)) {
		flat(json_object_get(root, "files"), out, &nomem);
		f = "asset manifest";
	} else if (all_values(root, true)) {
		flat(root, out, &nomem);
		f = "webpack manifest";
	} else if (all_values(root, false)) {
		json_object_foreach(root, key, e)
			vite_like |= json_is_string(json_object_get(e, "file"));
		if (vite_like) {
			vite(root, out, &nomem);
			f = "Vite manifest";
			complete = true;
		}
	}
	json_decref(root);
	for (size_t i = n0; i < out->n; i++)
		out->v[i].complete = complete;
	if (insertions && (!literal(out, n0) || !weak(out, n0)))
		nomem = true;
	if (nomem)
		return KILN_ERR_NOMEM;
	if (!f)
		return KILN_ERR_INVALID;
	*format = f;
	return KILN_OK;
}
