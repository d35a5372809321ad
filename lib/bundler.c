/*
 * bundler.c - bundlers' manifests, read with jansson, as proofs that an
 * output's name holds a hash.
 *
 * A manifest lists unhashed files too (Create React App's lists
 * index.html, webpack-manifest-plugin lists what CopyWebpackPlugin
 * copied, Vite's lists whatever its output names say), so a listing
 * alone proves nothing.  What proves a token is the manifest's own
 * account of the name: the logical name it gives an output, which the
 * output's name is with a token inserted ("main.js" -> "main.3f9a2c7b.js",
 * chunk "index" -> "index-DPJWWXvr.js"), or the bundler's word
 * (webpack's info.immutable; Next.js serves everything under static/
 * immutable itself).  Angular's ngsw.json gives no logical names: there
 * the token must have the shape of Angular's hashes.
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

/* Add PATH (owned now) with the span START, LEN to OUT. */
static bool add(struct kiln_proofs *out, char *path, size_t start, size_t len)
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
	out->v[out->n++] = (struct kiln_proof){ path, start, len, false };
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
	return add(out, m, start, len);
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
	if (!kiln_token_at(output, at, l))
		return 0;
	*len = l;
	return at;
}

/* OUTPUT (a URL) is proven when its base name begins with the logical
 * NAME (a path, or NULL; without its directory and, with STRIP, its
 * extensions) and a token. */
static bool prove_stem(struct kiln_proofs *out, const char *output, const char *name, bool strip,
		       bool *nomem)
{
	char *o;
	const char *b;
	size_t n, at, len = 0;

	if (!output || !name || !(o = clean_url(output, nomem)))
		return false;
	b = base_of(name);
	n = strip ? strcspn(b, ".") : strlen(b);
	if (n && strncmp(base_of(o), b, n) == 0 && (at = token_after(o, n, &len)))
		return (add(out, o, at, len) && add_map(out, o, at, len)) || (*nomem = true, false);
	/* "foo.module.css" is named "foo.module" too */
	if (strip && strrchr(b, '.') && (size_t)(strrchr(b, '.') - b) != n) {
		n = (size_t)(strrchr(b, '.') - b);
		if (strncmp(base_of(o), b, n) == 0 && (at = token_after(o, n, &len)))
			return (add(out, o, at, len) && add_map(out, o, at, len)) ||
			       (*nomem = true, false);
	}
	free(o);
	return false;
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
		    strcmp(b + p + l, k + p - 1) == 0) {
			if (!add(out, o, at, l))
				*nomem = true;
			return;
		}
	}
	free(o);
}

/* The first candidate token of PATH after a '-' or '.' that passes TEST,
 * or (TEST NULL) the rule on the name alone's, else a hash-like one;
 * SIZE_MAX when none. */
static size_t some_token(const char *path, bool (*test)(const char *, size_t, size_t),
			 size_t *len)
{
	const char *b = base_of(path);
	size_t off = (size_t)(b - path), s;

	if (!test && kiln_fingerprint_span(path, &s, len))
		return s;
	for (size_t at = off + 1, l; kiln_token_next(path, &at, &l); at++)
		if (test ? test(path, at, l) : kiln_token_hashlike(path + at, l)) {
			*len = l;
			return at;
		}
	return SIZE_MAX;
}

/* Angular's hashes: esbuild's 8 upper-case base32 after '-', webpack's 16
 * or 20 hexadecimal digits after '.'. */
static bool angular_token(const char *path, size_t at, size_t len)
{
	unsigned a = kiln_token_alphabets(path + at, len);

	return (len == 8 && path[at - 1] == '-' && (a & KILN_ALPHA_B32)) ||
	       (len >= 16 && path[at - 1] == '.' && (a & KILN_ALPHA_HEX));
}

/* Add OUTPUT (a URL) with the token TEST finds (or none, when LOOSE). */
static void prove_any(struct kiln_proofs *out, const char *output,
		      bool (*test)(const char *, size_t, size_t), bool loose, bool *nomem)
{
	char *o = clean_url(output, nomem);
	size_t len = 0, at;

	if (!o)
		return;
	at = some_token(o, test, &len);
	if (at == SIZE_MAX && !loose)
		free(o);
	else if (!add(out, o, at == SIZE_MAX ? 0 : at, at == SIZE_MAX ? 0 : len))
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
		json_t *lists[2] = { json_object_get(e, "css"), json_object_get(e, "assets") }, *f;
		size_t i;
		int n = names[0] ? 0 : names[1] ? 1 : 2; /* the first Vite gives */
		prove_stem(out, json_string_value(json_object_get(e, "file")), names[n], n > 0, nomem);
		for (int l = 0; l < 2; l++)
			json_array_foreach(lists[l], i, f)
				prove_stem(out, json_string_value(f), names[n], n > 0, nomem);
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
		if (!name || !json_is_true(json_object_get(info, "immutable")) ||
		    !(o = clean_url(name, nomem)))
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
		if (!add(out, o, at == SIZE_MAX ? 0 : at, at == SIZE_MAX ? 0 : len))
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
		if (!prove_stem(out, key, entry, true, nomem) && !prove_stem(out, key, only, true, nomem) &&
		    !entry)
			prove_stem(out, key, "chunk", false, nomem);
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
				prove_any(out, json_string_value(f), NULL, true, nomem);
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(json_object_get(root, lists[l]), i, f)
			if (json_is_string(f) && strncmp(json_string_value(f), "static/", 7) == 0)
				prove_any(out, json_string_value(f), NULL, true, nomem);
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

kiln_status kiln_bundler_read(const char *text, size_t len, struct kiln_proofs *out,
			      const char **format)
{
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *e;
	bool nomem = false, vite_like = false, complete = false;
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
		complete = true;
	} else if (json_is_object(json_object_get(root, "pages"))) {
		next(root, out, &nomem);
		f = "Next.js build manifest";
	} else if (json_is_object(json_object_get(root, "hashTable")) &&
		   json_object_get(root, "configVersion")) {
		json_object_foreach(json_object_get(root, "hashTable"), key, e)
			prove_any(out, key, angular_token, false, &nomem);
		f = "Angular ngsw.json";
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
	if (nomem)
		return KILN_ERR_NOMEM;
	if (!f)
		return KILN_ERR_INVALID;
	*format = f;
	return KILN_OK;
}
