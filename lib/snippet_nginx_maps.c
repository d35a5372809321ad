/*
 * snippet_nginx_maps.c - the nginx configuration text both forms of the
 * nginx snippet write (snippet_nginx.h): strings and regular expressions
 * that hold any bytes, the maps of the http {} file (Cache-Control,
 * Use-As-Dictionary, which codings Accept-Encoding accepts), and the
 * regular expressions that find kiln's own files and a sibling asked for
 * by its own URL.
 */
#include "snippet_nginx.h"

#include "codec.h"
#include "hash.h"

#include <stdlib.h>
#include <string.h>

/* Append S to F as a double-quoted nginx string that reads back as S,
 * whatever its bytes: nginx's parser keeps every byte inside quotes but
 * for the escapes \" \\ \t \r \n, which it turns into their bytes
 * (ngx_conf_file.c); so a quote and a backslash are escaped, TAB, CR and
 * LF written as escapes, and every other byte as it is.  Only a map's keys
 * and constant values go through here: nginx expands no variable in
 * either (a map's value only when it holds one, and kiln's never do). */
void kiln_nginx_put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		if (*p == '\t')
			fputs("\\t", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Append S to F as a PCRE literal inside a double-quoted nginx string
 * (nginx turns a doubled backslash into one, and keeps any other
 * backslash escape as it is but those of quotes, t, r and n). */
void kiln_nginx_put_regex_literal(FILE *f, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			fputs("\\\\\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (strchr("^$.|?*+()[]{}/", *p))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
}

/* The Accept-Encoding test for TOKEN: '(?:^|,)\s*TOKEN\s*' . */
static void put_token(FILE *f, const struct kiln_codec *k)
{
	fputs("(?:^|,)\\s*", f);
	if (k->http_alias) {
		fputs("(?:", f);
		kiln_nginx_put_regex_literal(f, k->info.name);
		fputc('|', f);
		kiln_nginx_put_regex_literal(f, k->http_alias);
		fputc(')', f);
	} else {
		kiln_nginx_put_regex_literal(f, k->info.name);
	}
	fputs("\\s*", f);
}

/* Which codings the request accepts (RFC 9110 section 12.5.3), one map
 * per coding: its digit when accepted, else "".  Maps, not "if" blocks: a
 * matching "if" in a location makes the request run in the if's own
 * configuration, which inherits no try_files.  The names carry the
 * version of this rule, so that two trees' http {} files of one kiln
 * define them alike (nginx takes a map defined twice). */
void kiln_nginx_put_accept_maps(FILE *f)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		fprintf(f, "\n# Accept-Encoding accepts %s: listed with q=0 it does not; listed\n"
			   "# it does; else \"*;q=0\" does not and \"*\" does (nginx takes the\n"
			   "# first expression of a map that matches).\n"
			   "map $http_accept_encoding $" KILN_NGINX_ACCEPT_VAR "%u {\n"
			   "    default \"\";\n",
			kiln_codecs[c]->info.name, c);
		fputs("    \"~*", f);
		put_token(f, kiln_codecs[c]);
		fputs(KILN_NGINX_Q_ZERO "\" \"\";\n    \"~*", f);
		put_token(f, kiln_codecs[c]);
		fprintf(f, KILN_NGINX_ANY_PARAMS "\" %u;\n", c);
		fputs("    \"~(?:^|,)\\s*\\*\\s*" KILN_NGINX_Q_ZERO "\" \"\";\n", f);
		fprintf(f, "    \"~(?:^|,)\\s*\\*\\s*" KILN_NGINX_ANY_PARAMS "\" %u;\n}\n", c);
	}
}

/* "kiln_" + WHAT + "_" and 16 hex digits of the SHA-256 of the prefix
 * and BODY: a map variable's name. */
bool kiln_nginx_digest_name(const struct kiln_serve *s, const char *what, const char *body,
			char name[40])
{
	uint8_t d[KILN_SHA256_LEN];
	size_t lp = strlen(s->url_prefix), lb = strlen(body);
	char *all = malloc(lp + lb + 1);
	int o;

	if (!all)
		return false;
	memcpy(all, s->url_prefix, lp);
	memcpy(all + lp, body, lb + 1);
	if (kiln_sha256(all, lp + lb, d) != KILN_OK) {
		free(all);
		return false;
	}
	free(all);
	o = snprintf(name, 40, "kiln_%s_", what);
	for (int i = 0; i < 8; i++)
		snprintf(name + o + 2 * i, 3, "%02x", d[i]);
	return true;
}

struct key {
	char *text;     /* the URL path */
	bool immutable;
	bool drop;      /* collides, ignoring ASCII case, with a key that disagrees */
};

static int key_cmp_nocase(const void *a, const void *b)
{
	return strcasecmp(((const struct key *)a)->text, ((const struct key *)b)->text);
}

/* The map's keys: the immutable assets' URL paths (sorted without regard
 * to case, those that collide and disagree with a plain one dropped).
 * NULL when out of memory; *N their count. */
static struct key *map_keys(const struct kiln_serve *s, size_t *n)
{
	struct key *k = calloc(s->n + 1, sizeof(*k));
	size_t m = 0;

	if (!k)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		size_t len = strlen(s->url_prefix) + strlen(s->assets[i].rel);
		if (len > KILN_NGINX_MAX_KEY)
			continue;
		k[m].text = malloc(len + 1);
		if (!k[m].text)
			goto nomem;
		strcpy(k[m].text, s->url_prefix);
		strcat(k[m].text, s->assets[i].rel);
		k[m++].immutable = s->assets[i].immutable;
	}
	qsort(k, m, sizeof(*k), key_cmp_nocase);
	for (size_t i = 0, j; i < m; i = j) {
		bool all = true, any = false;
		for (j = i; j < m && strcasecmp(k[i].text, k[j].text) == 0; j++) {
			all &= k[j].immutable;
			any |= k[j].immutable;
		}
		for (size_t x = i; x < j; x++)
			k[x].drop = !k[x].immutable || (any && !all) || x > i;
	}
	*n = m;
	return k;
nomem:
	while (m)
		free(k[--m].text);
	free(k);
	return NULL;
}

static bool is_immutable(const struct kiln_serve_asset *a)
{
	return a->immutable;
}

/* (kiln_serve_match() answers NULL for any other) */
static bool is_dictionary(const struct kiln_serve_asset *a)
{
	return a->dictionary && a->family;
}

/* Is P true of any of S's assets?  A map whose entries all need it is
 * empty when none is, with no key made or sorted. */
static bool any_asset(const struct kiln_serve *s, bool (*p)(const struct kiln_serve_asset *))
{
	for (size_t i = 0; i < s->n; i++)
		if (p(&s->assets[i]))
			return true;
	return false;
}

static void free_keys(struct key *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i].text);
	free(k);
}

/* The body of the map (its entries), a malloc'ed string, and its
 * longest key and count; NULL when out of memory. */
char *kiln_nginx_cc_body(const struct kiln_serve *s, size_t *longest, size_t *count)
{
	size_t n = 0, len = 0;
	char *text = NULL;
	struct key *k;
	FILE *f;

	*longest = *count = 0;
	if (!any_asset(s, is_immutable))
		return strdup(""); /* no key to sort */
	k = map_keys(s, &n);
	f = k ? open_memstream(&text, &len) : NULL;
	if (!f) {
		if (k)
			free_keys(k, n);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (k[i].drop)
			continue;
		fputs("    ", f);
		kiln_nginx_put_quoted(f, k[i].text);
		fputs(" \"" KILN_CACHE_IMMUTABLE "\";\n", f);
		if (strlen(k[i].text) > *longest)
			*longest = strlen(k[i].text);
		(*count)++;
	}
	free_keys(k, n);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The asset whose path is REL (s->assets is sorted by it), or NULL. */
static const struct kiln_serve_asset *find_asset(const struct kiln_serve *s, const char *rel)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->assets[mid].rel, rel);
		if (c == 0)
			return &s->assets[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The Use-As-Dictionary map's entries: each dictionary asset's URL path
 * to its header value, leaving out paths that collide, ignoring ASCII
 * case, with another asset's (nginx's map would mix them up).  A
 * malloc'ed string; NULL when out of memory. */
char *kiln_nginx_uad_body(const struct kiln_serve *s)
{
	size_t n = 0, len = 0;
	struct key *k;
	char *text = NULL;
	FILE *f;

	if (!any_asset(s, is_dictionary))
		return strdup(""); /* no key to sort */
	k = map_keys(s, &n);
	f = k ? open_memstream(&text, &len) : NULL;
	if (!f)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct kiln_serve_asset *a = NULL;
		char *match;
		bool clash = (i > 0 && strcasecmp(k[i - 1].text, k[i].text) == 0) ||
			     (i + 1 < n && strcasecmp(k[i + 1].text, k[i].text) == 0);
		if (!clash)
			a = find_asset(s, k[i].text + strlen(s->url_prefix));
		if (!a || !(match = kiln_serve_match(s, a)))
			continue;
		fputs("    ", f);
		kiln_nginx_put_quoted(f, k[i].text);
		fputc(' ', f);
		kiln_nginx_put_quoted(f, match);
		fputs(";\n", f);
		free(match);
	}
	if (fclose(f) != 0) {
		free(text);
		text = NULL;
	}
out:
	if (k)
		free_keys(k, n);
	return text;
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 64;
	while (p < n)
		p *= 2;
	return p;
}

void kiln_nginx_put_hash_sizes(FILE *f, const struct kiln_serve *s, size_t longest, size_t count)
{
	(void)s;
	/* nginx's defaults (64-byte buckets, 2048 of them at most) hold keys
	 * of up to 46 bytes, about 2,000 of them: only past that does the
	 * file set the sizes, since two such files in one http {} conflict */
	if (longest > 40 || count > 1000) {
		/* nginx needs buckets that hold the longest key, and a hash
		 * large enough to place every key */
		fprintf(f, "#\n# It sets the map hash sizes its keys need: remove your own\n"
			   "# map_hash_bucket_size and map_hash_max_size, or keep them at\n"
			   "# least this large.\n"
			   "map_hash_bucket_size %zu;\nmap_hash_max_size %zu;\n",
			pow2_at_least(longest + 32), pow2_at_least(4 * count + 1024));
	}
}

/* The regular expression that matches a URI naming one of kiln's own files.
 * Its names start with the '/' before them (nginx's $uri always begins
 * with one), and a delta's (any name that ends in .ID.dcz) is matched from
 * its end alone, so that PCRE tries the pattern at the '/'s and '.'s alone
 * and never scans a name back and forth ("(?:^|/)" before the names and
 * "[^/]*" before a delta's ID made this the costliest regular expression
 * of the static form: callgrind, tests/bench/serve.sh's trees). */
void kiln_nginx_put_own_regex(FILE *f, const struct kiln_serve *s)
{
	fputs("(?:/(?:", f);
	for (const char *const *o = s->own; *o; o++) {
		kiln_nginx_put_regex_literal(f, *o);
		fputc('|', f);
	}
	/* KILN_TEMP_GLOB, KILN_JOURNAL_GLOB, KILN_PART_GLOB, and a dictionary
	 * delta's own name (codec.h) */
	fprintf(f, "\\.kiln-[^/]*\\.tmp|\\.kiln-journal-[^/]*|kiln-manifest\\.shard-[^/]*\\.json)"
		   "|\\.[0-9a-f]{%d}\\%s)\\z",
		KILN_DICT_ID_HEX, kiln_codec_dcz.suffix);
}

/* Does REL end in a sibling suffix of the table? */
static bool sibling_named(const char *rel)
{
	size_t n = strlen(rel);

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		size_t k = strlen(kiln_codecs[c]->info.suffix);
		if (n > k && strcmp(rel + n - k, kiln_codecs[c]->info.suffix) == 0)
			return true;
	}
	return false;
}

char *kiln_nginx_sib_map(const struct kiln_serve *s, char name[40], size_t *longest)
{
	size_t len = 0;
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);

	*longest = 0;
	if (!f)
		return NULL;
	fputs("    \"~(?:", f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (c)
			fputc('|', f);
		kiln_nginx_put_regex_literal(f, kiln_codecs[c]->info.suffix);
	}
	fputs(")\\z\" 1;\n", f);
	/* exact keys win over the regular expression, whatever their order */
	for (size_t i = 0; i < s->n; i++) {
		const char *rel = s->assets[i].rel;
		size_t n = strlen(s->url_prefix) + strlen(rel);
		char *key;

		if (!sibling_named(rel) || n > KILN_NGINX_MAX_KEY)
			continue;
		if (!(key = malloc(n + 1))) {
			fclose(f);
			free(text);
			return NULL;
		}
		strcpy(key, s->url_prefix);
		strcat(key, rel);
		fputs("    ", f);
		kiln_nginx_put_quoted(f, key);
		fputs(" \"\";\n", f);
		if (n > *longest)
			*longest = n;
		free(key);
	}
	if (fclose(f) != 0 || !kiln_nginx_digest_name(s, "sib", text, name)) {
		free(text);
		return NULL;
	}
	return text;
}

void kiln_nginx_put_sib_map(FILE *f, const char *name, const char *body)
{
	fprintf(f, "\n# URL paths that end in a sibling's suffix but are no asset of the\n"
		   "# manifest: a sibling asked for by its own URL, also when its source\n"
		   "# was deleted since kiln ran (nginx cannot tell it from a file of its\n"
		   "# own, the manifest can).  Exact paths win over the expression.\n"
		   "map $uri $%s {\n    default \"\";\n%s}\n",
		name, body);
}

void kiln_nginx_put_no_links(FILE *f)
{
	fputs("\n# No link is followed beneath the tree's top (the top itself may be\n"
	      "# one, current -> releases/N): a file or directory replaced by a\n"
	      "# link to outside the tree is never sent (403).\n"
	      "set $kiln_root $document_root;\n"
	      "disable_symlinks on from=$kiln_root;\n",
	      f);
}

void kiln_nginx_put_sib_guard(FILE *f, const char *name, const char *indent)
{
	fprintf(f, "%sif ($%s) { return 404; }\n", indent, name);
}

/* (A named capture: nginx escapes numbered ones, spaces and all.) */
void kiln_nginx_put_direct_regex(FILE *f)
{
	fputs("(?s)^(?<kiln_direct>.+)(?:", f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (c)
			fputc('|', f);
		kiln_nginx_put_regex_literal(f, kiln_codecs[c]->info.suffix);
	}
	fputs(")\\z", f);
}

void kiln_nginx_put_http_header(FILE *f, const struct kiln_serve *s)
{
	kiln_snippet_header(f, s, "nginx http {}", "# ");
	fputs("# Include it inside http {}, next to the server {} whose location {}\n"
	      "# includes kiln.nginx.conf of the same run; both change together.\n"
	      "# It maps the URL paths of the assets the manifest marks immutable\n"
	      "# (fingerprinted, or --immutable) to their Cache-Control.  Files\n"
	      "# it does not list are served with no-cache.  Regenerated by every\n"
	      "# run: reload nginx after a deploy, or new fingerprinted files are\n"
	      "# revalidated (no-cache) until then.\n",
	      f);
}
