/*
 * fuzz_names.c - libFuzzer target for everything that handles file names:
 * sibling and own-output recognition, media by extension and by magic
 * bytes, media types, globs, UTF-8 scanning, and the manifest's encoding of
 * names, and the fingerprint rules.  Besides "no crash", it checks round
 * trips: any relative path kiln could meet, written into a manifest and
 * read back, is the same bytes with the same fingerprint.
 */
#include "classify.h"
#include "fingerprint.h"
#include "manifest.h"
#include "mime.h"
#include "shape.h"
#include "state.h"
#include "words.h"

#include <stdlib.h>
#include <string.h>

/* The rules on names: a span found is a candidate token found again where
 * it is; the shapes of the lines of S, as paths of one tree, take only
 * candidate tokens. */
static void fingerprints(char *s)
{
	size_t start, len, n = 0;
	const char *rels[64];
	struct kiln_fp out[64];

	if (kiln_fingerprint_span(s, &start, &len) &&
	    (!kiln_token_at(s, start, len) || kiln_token_find(s, s + start, len) > start))
		abort(); /* the rule's token is not where a manifest finds it */
	(void)kiln_token_hashlike(s, strlen(s));
	/* the readings as words, of any length (beyond KILN_WORDS_MAX: none) */
	if ((kiln_token_words(s, strlen(s)) && !kiln_token_chosen(s, strlen(s))) ||
	    (kiln_token_words32(s, strlen(s)) && !kiln_token_chosen32(s, strlen(s))))
		abort(); /* words are chosen */
	(void)kiln_token_model32(s, strlen(s));
	for (char *p = s; p && n < 64; n++) {
		rels[n] = p;
		if ((p = strchr(p, '\n')))
			*p++ = '\0';
	}
	memset(out, 0, sizeof(out));
	if (kiln_shape_prove(rels, n, out))
		for (size_t i = 0; i < n; i++)
			if (out[i].why && !kiln_token_at(rels[i], out[i].start, out[i].len))
				abort(); /* a shape took what is no token */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A path the walk could produce: no empty, "." or ".." component. */
static bool walkable(const char *p)
{
	if (!*p || *p == '/')
		return false;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
		if (*s == '/' && !*++s)
			return false;
	}
	return true;
}

static void round_trip(const char *path)
{
	struct kiln_options opt;
	struct kiln_record r;
	struct kiln_state st;
	char *text;
	size_t start = 0, len = 0;

	kiln_options_init(&opt);
	memset(&r, 0, sizeof(r));
	r.rel = (char *)path;
	r.outcome = KILN_OUTCOME_COMPRESSED;
	r.size = 1000;
	r.coding[0].outcome = KILN_CODING_KEPT;
	r.coding[0].size = 500;
	r.coding[0].recipe = "x-1"; /* interned in a run (intern.h): shared, never written */
	/* as immutable.c records it: the first place the token stands */
	if (kiln_fingerprint_span(path, &start, &len))
		r.fp = (struct kiln_fp){ KILN_WHY_NAME,
					 (uint32_t)kiln_token_find(path, path + start, len),
					 (uint32_t)len, 0 };
	text = kiln_manifest_dump(&opt, &(struct kiln_manifest_item){ &r, r.fp }, 1, NULL, 0, NULL, 0,
				  NULL);
	if (!text)
		return; /* out of memory */
	memset(&st, 0, sizeof(st));
	if (kiln_state_parse(text, strlen(text), &st) != KILN_OK || st.n != 1 ||
	    strcmp(st.v[0].rec.rel, path) != 0 || st.v[0].rec.coding[0].outcome != KILN_CODING_KEPT ||
	    strcmp(st.v[0].rec.coding[0].recipe, "x-1") != 0)
		abort(); /* a name did not survive the manifest */
	if (st.v[0].rec.fp.why != r.fp.why || st.v[0].rec.fp.start != r.fp.start ||
	    st.v[0].rec.fp.len != r.fp.len)
		abort(); /* nor its fingerprint */
	kiln_state_free(&st);
	free(text);
}

/* Manifest keys are one-to-one: two different names never share a key, and
 * every key decodes back to its name. */
static void keys_injective(const char *a, const char *b)
{
	bool ea, eb;
	char *ka = kiln_manifest_key(a, &ea), *kb = kiln_manifest_key(b, &eb);
	char *da = ka ? kiln_manifest_key_decode(ka) : NULL;

	if (ka && kb && (strcmp(a, b) == 0) != (strcmp(ka, kb) == 0))
		abort(); /* two names, one key (or one name, two keys) */
	if (ka && da && strcmp(da, a) != 0)
		abort(); /* the key does not give the name back */
	if (ka && !da && *a)
		abort(); /* a key kiln made that it cannot read */
	if (ka && ea != (strcmp(ka, a) != 0))
		abort(); /* "encoded" must say whether the key differs */
	free(ka);
	free(kb);
	free(da);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *glob, *path, *copy;
	bool enc;
	char *key;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	/* two names, split at the first NUL */
	if (strlen(s) < size)
		keys_injective(s, s + strlen(s) + 1);
	(void)kiln_sibling_base_len(s);
	(void)kiln_is_own_output(s);
	(void)kiln_media_extension(s);
	(void)kiln_media_magic(data, size);
	(void)kiln_media_type(s);
	for (const char *p = s; *p;)
		p += kiln_utf8_len(p) ? kiln_utf8_len(p) : 1;
	key = kiln_manifest_key(s, &enc);
	free(key);
	if ((copy = strdup(s))) {
		fingerprints(copy);
		free(copy);
	}
	/* the first line is a glob, the rest a path */
	glob = s;
	path = strchr(s, '\n');
	if (path) {
		*path++ = '\0';
		(void)kiln_glob_match(glob, path);
	}
	if (strlen(s) == size && walkable(s))
		round_trip(s);
	free(s);
	return 0;
}
