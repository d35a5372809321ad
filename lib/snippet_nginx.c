/*
 * snippet_nginx.c - the nginx row: kiln.nginx.conf, to include inside the
 * location {} that serves the tree, and kiln.nginx.http.conf, to include
 * inside http {}.
 *
 * nginx's own gzip_static and the brotli_static module pick a sibling by a
 * fixed order of their own, ignore "*", and nginx has no module in Debian
 * for zstd; so the snippet negotiates with the rewrite module alone, the
 * same way for every coding of the codec table (server.h states the rule):
 *  - Accept-Encoding is matched, in a map per coding in the http {} file,
 *    with one regular expression per case (listed with q=0 refuses,
 *    listed accepts, "*;q=0" refuses, "*" accepts; the first that matches
 *    wins), into one variable per coding holding its index digit when
 *    accepted;
 *  - "-f $request_filename" and "-f $request_filename.SUFFIX" tell whether
 *    the source and which siblings exist now: no sibling is sent for a
 *    source that is gone, and a snippet older than the tree never names a
 *    sibling that is gone;
 *  - a sibling asked for by its own URL while its source exists is 404,
 *    so that rules written for the source's URL cannot be walked around;
 *  - the latest coding of the table that is both is the smallest (decide.c),
 *    and the request is rewritten to URI/.kiln-TOKEN.EXT, which a nested
 *    location serves from the sibling's file with alias.  The rewritten
 *    URI keeps the source's extension, so the enclosing block's types give
 *    the source's Content-Type; a nested location inherits the enclosing
 *    one's root, types, access rules and add_header lines, so the sibling
 *    is served under the same rules as its source.  Content-Encoding, Vary
 *    and Cache-Control come from add_header lines with variables (an empty
 *    value adds no header), set before the rewrite;
 *  - ETag is nginx's "mtime-size" of the file sent, and no two of a source
 *    and its siblings share a size (decide.c), so a validator is never
 *    shared between codings and If-None-Match answers 304 per coding.
 * Cache-Control: the http {} file maps $uri to "immutable" for the assets
 * the manifest marks so; everything else the block serves gets "no-cache".
 * nginx's map matches its keys without regard to ASCII case, so names that
 * differ only in case and disagree are left out of the map (no-cache).  The
 * map's variable is named after a digest of the map itself: two trees'
 * http {} files can be included side by side, and an identical one twice.
 * Sources: nginx documentation of ngx_http_rewrite_module (if, set,
 * rewrite ... last), ngx_http_core_module (location nesting, alias with a
 * regular expression and variables, internal), ngx_http_headers_module
 * (add_header: inherited only by blocks that have none of their own;
 * empty values add nothing), ngx_http_map_module; measured on 1.22.
 */
#include "server.h"

#include "codec.h"
#include "hash.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A map key longer than this is left out (it gets no-cache): nginx's map
 * buckets must hold the longest key. */
#define MAX_KEY 2048

/* Append S to F as a double-quoted nginx string that reads back as S,
 * whatever its bytes: nginx's parser keeps every byte inside quotes but
 * for the escapes \" \\ \t \r \n, which it turns into their bytes
 * (ngx_conf_file.c); so a quote and a backslash are escaped, TAB, CR and
 * LF written as escapes, and every other byte as it is.  Only a map's keys
 * and constant values go through here: nginx expands no variable in
 * either (a map's value only when it holds one, and kiln's never do). */
static void put_quoted(FILE *f, const char *s)
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
static void put_regex_literal(FILE *f, const char *s)
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
		put_regex_literal(f, k->info.name);
		fputc('|', f);
		put_regex_literal(f, k->http_alias);
		fputc(')', f);
	} else {
		put_regex_literal(f, k->info.name);
	}
	fputs("\\s*", f);
}

/* The accept maps' variables: ACCEPT_VAR and the coding's index. */
#define ACCEPT_VAR "kiln1_accepts_"

#define Q_ZERO ";\\s*q\\s*=\\s*0(?:\\.0{0,3})?\\s*(?:,|$)"
#define ANY_PARAMS "(?:;[^,]*)?(?:,|$)"

/* Which codings the request accepts (RFC 9110 section 12.5.3), one map
 * per coding: its digit when accepted, else "".  Maps, not "if" blocks: a
 * matching "if" in a location makes the request run in the if's own
 * configuration, which inherits no try_files.  The names carry the
 * version of this rule, so that two trees' http {} files of one kiln
 * define them alike (nginx takes a map defined twice). */
static void put_accept_maps(FILE *f)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		fprintf(f, "\n# Accept-Encoding accepts %s: listed with q=0 it does not; listed\n"
			   "# it does; else \"*;q=0\" does not and \"*\" does (nginx takes the\n"
			   "# first expression of a map that matches).\n"
			   "map $http_accept_encoding $" ACCEPT_VAR "%u {\n"
			   "    default \"\";\n",
			kiln_codecs[c]->info.name, c);
		fputs("    \"~*", f);
		put_token(f, kiln_codecs[c]);
		fputs(Q_ZERO "\" \"\";\n    \"~*", f);
		put_token(f, kiln_codecs[c]);
		fprintf(f, ANY_PARAMS "\" %u;\n", c);
		fputs("    \"~(?:^|,)\\s*\\*\\s*" Q_ZERO "\" \"\";\n", f);
		fprintf(f, "    \"~(?:^|,)\\s*\\*\\s*" ANY_PARAMS "\" %u;\n}\n", c);
	}
}

/* --- the http {} file ---------------------------------------------------- */

/* "kiln_" + WHAT + "_" and 16 hex digits of the SHA-256 of the prefix
 * and BODY: a map variable's name. */
static bool digest_name(const struct kiln_serve *s, const char *what, const char *body,
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
		if (len > MAX_KEY)
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

static void free_keys(struct key *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i].text);
	free(k);
}

/* The body of the map (its entries), a malloc'ed string, and its
 * longest key and count; NULL when out of memory. */
static char *map_body(const struct kiln_serve *s, size_t *longest, size_t *count)
{
	size_t n = 0, len = 0;
	char *text = NULL;
	struct key *k = map_keys(s, &n);
	FILE *f = k ? open_memstream(&text, &len) : NULL;

	*longest = *count = 0;
	if (!f) {
		if (k)
			free_keys(k, n);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (k[i].drop)
			continue;
		fputs("    ", f);
		put_quoted(f, k[i].text);
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

/* --- dictionary transport (RFC 9842) ------------------------------------ */

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
static char *uad_body(const struct kiln_serve *s)
{
	size_t n = 0, len = 0;
	struct key *k = map_keys(s, &n);
	char *text = NULL;
	FILE *f = k ? open_memstream(&text, &len) : NULL;

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
		put_quoted(f, k[i].text);
		fputc(' ', f);
		put_quoted(f, match);
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

/* The Available-Dictionary map's entries: the header naming each
 * dictionary (":" base64 of its SHA-256 ":", RFC 9842 section 2.2),
 * matched as a case-sensitive regular expression (nginx's map compares
 * plain keys without regard to case, and base64 is not caseless), to its
 * id, the part of its deltas' names that tells them apart.  A malloc'ed
 * string; NULL when out of memory. */
static char *dict_body(const struct kiln_serve *s)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n, len = 0;
	bool nomem;
	uint8_t(*ids)[32] = kiln_serve_dict_ids(s, &n, &nomem);
	char *text = NULL;
	FILE *f = nomem ? NULL : open_memstream(&text, &len);

	if (!f) {
		free(ids);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char enc[48], id[KILN_DICT_ID_HEX + 1];
		size_t o = 0;
		for (size_t j = 0; j < 32; j += 3) {
			uint32_t v = (uint32_t)ids[i][j] << 16 |
				     (j + 1 < 32 ? (uint32_t)ids[i][j + 1] << 8 : 0) |
				     (j + 2 < 32 ? ids[i][j + 2] : 0);
			enc[o++] = b64[v >> 18 & 63];
			enc[o++] = b64[v >> 12 & 63];
			enc[o++] = j + 1 < 32 ? b64[v >> 6 & 63] : '=';
			enc[o++] = j + 2 < 32 ? b64[v & 63] : '=';
		}
		enc[o] = '\0';
		kiln_dict_id(ids[i], id);
		fputs("    \"~^:", f);
		put_regex_literal(f, enc);
		fprintf(f, ":$\" %s;\n", id);
	}
	free(ids);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}


/* The two dictionary maps: their bodies and variable names. */
struct dict_maps {
	char *uad, *dict;
	char uad_name[40], dict_name[40];
};

static bool dict_maps(const struct kiln_serve *s, struct dict_maps *m)
{
	m->uad = uad_body(s);
	m->dict = dict_body(s);
	if (m->uad && m->dict && digest_name(s, "uad", m->uad, m->uad_name) &&
	    digest_name(s, "dict", m->dict, m->dict_name))
		return true;
	free(m->uad);
	free(m->dict);
	return false;
}

static void put_dict_maps(FILE *f, const struct dict_maps *m)
{
	fprintf(f, "\n# Dictionary transport (RFC 9842): the Use-As-Dictionary header of\n"
		   "# each fingerprinted asset, and the id of each dictionary this tree\n"
		   "# has deltas against, by the request's Available-Dictionary.\n"
		   "map $uri $%s {\n    default \"\";\n%s}\n"
		   "map $http_available_dictionary $%s {\n    default \"\";\n%s}\n",
		m->uad_name, m->uad, m->dict_name, m->dict);
}


static size_t pow2_at_least(size_t n)
{
	size_t p = 64;
	while (p < n)
		p *= 2;
	return p;
}

static char *http_text(const struct kiln_serve *s)
{
	size_t longest, count, len = 0;
	char name[40], *text = NULL, *body = map_body(s, &longest, &count);
	struct dict_maps dm;
	bool dm_ok = body && dict_maps(s, &dm);
	FILE *f = dm_ok && digest_name(s, "cc", body, name) ? open_memstream(&text, &len) : NULL;

	if (!f) {
		if (dm_ok) {
			free(dm.uad);
			free(dm.dict);
		}
		free(body);
		return NULL;
	}
	kiln_snippet_header(f, s, "nginx http {}", "# ");
	fputs("# Include it inside http {}, next to the server {} whose location {}\n"
	      "# includes kiln.nginx.conf of the same run; both change together.\n"
	      "# It maps the URL paths of the assets the manifest marks immutable\n"
	      "# (fingerprinted, or --immutable) to their Cache-Control.  Files\n"
	      "# it does not list are served with no-cache.  Regenerated by every\n"
	      "# run: reload nginx after a deploy, or new fingerprinted files are\n"
	      "# revalidated (no-cache) until then.\n",
	      f);
	/* nginx's defaults (64-byte buckets, 2048 of them at most) hold keys
	 * of up to 46 bytes, about 2,000 of them: only past that does the
	 * file set the sizes, since two such files in one http {} conflict */
	if (s->opt->cache_control && (longest > 40 || count > 1000)) {
		/* nginx needs buckets that hold the longest key, and a hash
		 * large enough to place every key */
		fprintf(f, "#\n# It sets the map hash sizes its keys need: remove your own\n"
			   "# map_hash_bucket_size and map_hash_max_size, or keep them at\n"
			   "# least this large.\n"
			   "map_hash_bucket_size %zu;\nmap_hash_max_size %zu;\n",
			pow2_at_least(longest + 32), pow2_at_least(4 * count + 1024));
	}
	fprintf(f, "\nmap $uri $%s {\n    default \"" KILN_CACHE_REVALIDATE "\";\n%s}\n", name,
		s->opt->cache_control ? body : "");
	put_accept_maps(f);
	put_dict_maps(f, &dm);
	free(dm.uad);
	free(dm.dict);
	free(body);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* --- the location {} file ------------------------------------------------ */

/* The regular expression that matches a URI naming one of kiln's own files. */
static void put_own_regex(FILE *f, const struct kiln_serve *s)
{
	fputs("(?:^|/)(?:", f);
	for (const char *const *o = s->own; *o; o++) {
		put_regex_literal(f, *o);
		fputc('|', f);
	}
	/* a dictionary delta's own name (codec.h) */
	fprintf(f, "[^/]*\\.[0-9a-f]{%d}\\%s|", KILN_DICT_ID_HEX, kiln_codec_dcz.suffix);
	/* KILN_TEMP_GLOB, KILN_JOURNAL_GLOB, KILN_PART_GLOB (the deltas' own
	 * URLs are refused with the dictionary rules) */
	fputs("\\.kiln-[^/]*\\.tmp|\\.kiln-journal-[^/]*|kiln-manifest\\.shard-[^/]*\\.json)\\z", f);
}

/* The dictionary delta, when the request names its dictionary and
 * accepts it; before every other coding. */
static void put_dcz(FILE *f, const char *dict_name)
{
	const char *tok = kiln_codec_dcz.name;

	fputs("\n# Dictionary transport (RFC 9842): every response of a dictionary\n"
	      "# asset varies on Available-Dictionary too.  The delta made against the\n"
	      "# dictionary the request names, when Accept-Encoding lists the coding\n"
	      "# (not with q=0), the request asks for no Range, the source and the\n"
	      "# delta exist (\"if\" blocks that match only then: a matching \"if\"\n"
	      "# loses the block's try_files).\n"
	      "if ($kiln_uad) { set $kiln_vary \"Accept-Encoding, Available-Dictionary\"; }\n"
	      "set $kiln_dcz \"\";\n",
	      f);
	fprintf(f, "if ($http_accept_encoding ~* \"(?:^|,)\\s*%s\\s*" ANY_PARAMS
		   "\") { set $kiln_dcz 1; }\n", tok);
	fprintf(f, "if ($http_accept_encoding ~* \"(?:^|,)\\s*%s\\s*" Q_ZERO
		   "\") { set $kiln_dcz \"\"; }\n", tok);
	fprintf(f, "if ($http_range) { set $kiln_dcz \"\"; }\n"
		   "set $kiln_dcz \"$kiln_have:$kiln_dcz:$%s\";\n"
		   "set $kiln_dcz_file \"$request_filename/.kiln-none\";\n"
		   "if ($kiln_dcz ~ \"^s[0-9]*:1:([0-9a-f]{%d})$\") { set $kiln_dcz_file \"$request_filename.$1%s\"; }\n"
		   "if (-f $kiln_dcz_file) {\n"
		   "    set $kiln_coding %s;\n"
		   "    set $kiln_vary \"Accept-Encoding, Available-Dictionary\";\n"
		   "    rewrite \"(?s)^(.*?)(\\.[^./]*)?\\z\" \"$1$2/.kiln-%s$2\" last;\n"
		   "}\n",
		dict_name, KILN_DICT_ID_HEX, kiln_codec_dcz.suffix, tok, tok);
}

static void put_negotiation(FILE *f, const char *dict_name)
{
	fputs("# A sibling asked for by its own name while its source is there:\n"
	      "# 404, so that rules written for the source's URL (auth_basic,\n"
	      "# deny) cannot be walked around.\n"
	      "# (A named capture: nginx escapes numbered ones, spaces and all.)\n"
	      "set $kiln_direct \"\";\n"
	      "if ($request_filename ~ \"(?s)^(?<kiln_direct>.+)(?:",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (c)
			fputc('|', f);
		put_regex_literal(f, kiln_codecs[c]->info.suffix);
	}
	fputs(")\\z\") { }\n"
	      "if (-f $kiln_direct) { return 404; }\n\n",
	      f);
	fputs("# Which siblings exist now, beside a source that exists: $kiln_have\n"
	      "# holds their digits after an \"s\" for the source.\n"
	      "set $kiln_have \"\";\n"
	      "if (-f $request_filename) { set $kiln_have s; }\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "if (-f $request_filename%s) { set $kiln_have \"${kiln_have}%u\"; }\n",
			kiln_codecs[c]->info.suffix, c);
	/* ("if ($kiln_have)" would be false for "0") */
	fputs("if ($kiln_have ~ \"^s.\") { set $kiln_vary Accept-Encoding; }\n", f);
	put_dcz(f, dict_name);
	fputs("\n# The smallest accepted sibling: the latest coding both have.\n"
	      "set $kiln_pick \"$kiln_have:",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "$" ACCEPT_VAR "%u", c);
	fputs("\";\n", f);
	for (unsigned c = kiln_ncodecs; c-- > 0;)
		fprintf(f,
			"if ($kiln_pick ~ \"^s[^:]*%u[^:]*:[^:]*%u\") {\n"
			"    set $kiln_coding %s;\n"
			"    rewrite \"(?s)^(.*?)(\\.[^./]*)?\\z\" \"$1$2/.kiln-%s$2\" last;\n"
			"}\n",
			c, c, kiln_codecs[c]->info.name, kiln_codecs[c]->info.name);
	fputs("\n# Each sibling, served from its file under the source's URI and\n"
	      "# extension, so with the source's Content-Type and this block's rules.\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f,
			"location ~ \"/\\.kiln-%s(?:\\.[^./]*)?\\z\" {\n"
			"    internal;\n"
			"    alias $kiln_file%s;\n"
			"}\n",
			kiln_codecs[c]->info.name, kiln_codecs[c]->info.suffix);
	/* gzip off again: a gzip on that reaches here would compress the
	 * delta a second time, which no client can decode */
	fprintf(f,
		"location ~ \"/\\.kiln-%s(?:\\.[^./]*)?\\z\" {\n"
		"    internal;\n"
		"    gzip off;\n"
		"    alias $kiln_dcz_file;\n"
		"}\n",
		kiln_codec_dcz.name);
}

static char *location_text(const struct kiln_serve *s)
{
	size_t longest, count, len = 0;
	char name[40], *text = NULL, *body = map_body(s, &longest, &count);
	struct dict_maps dm;
	bool dm_ok = body && dict_maps(s, &dm);
	FILE *f = dm_ok && digest_name(s, "cc", body, name) ? open_memstream(&text, &len) : NULL;

	free(body);
	if (dm_ok) {
		free(dm.uad);
		free(dm.dict);
	}
	if (!f)
		return NULL;
	kiln_snippet_header(f, s, "nginx", "# ");
	fputs("# Include it inside the location {} that serves this tree (or in\n"
	      "# server {} if the server serves nothing else), and include\n"
	      "# kiln.nginx.http.conf of the same run inside http {}.  For each\n"
	      "# request nginx sends the smallest prebuilt sibling the client\n"
	      "# accepts (checking on disk which exist), else the file, and never\n"
	      "# compresses anything itself.  The location {} must be the one the\n"
	      "# URL prefix the run was given (--url-prefix) falls in.\n"
	      "# add_header here replaces those inherited from outer blocks: repeat\n"
	      "# yours in the same block.\n\n"
	      "gzip off;\n"
	      "\n# kiln's own files are never sent.\n"
	      "if ($uri ~ \"",
	      f);
	put_own_regex(f, s);
	fputs("\") { return 404; }\n\n", f);
	fputs("set $kiln_file $request_filename;\n"
	      "set $kiln_coding \"\";\n"
	      "set $kiln_vary \"\";\n",
	      f);
	if (s->opt->cache_control)
		fprintf(f, "set $kiln_cache_control $%s;\n", name);
	fprintf(f, "set $kiln_uad $%s;\n", dm.uad_name);
	fputs("add_header Content-Encoding $kiln_coding;\n"
	      "add_header Vary $kiln_vary;\n"
	      "add_header Use-As-Dictionary $kiln_uad;\n",
	      f);
	if (s->opt->cache_control)
		fputs("add_header Cache-Control $kiln_cache_control;\n", f);
	fputs("\n", f);
	put_negotiation(f, dm.dict_name);
	fputs("\nsendfile on;\ntcp_nopush on;\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static const char *nginx_left_out(const struct kiln_serve *s, const struct kiln_serve_asset *a)
{
	if (kiln_serve_cache_control(s, a) && a->immutable &&
	    strlen(s->url_prefix) + strlen(a->rel) > MAX_KEY)
		return "its URL path is longer than the map of immutable files takes (2048 "
		       "bytes): served no-cache, not immutable";
	return NULL;
}

const struct kiln_server kiln_server_nginx = {
	.name = "nginx",
	.left_out = nginx_left_out,
	.option = "--nginx-conf",
	.path_field = offsetof(struct kiln_options, nginx_conf_path),
	.files = { { KILN_NGINX_CONF_NAME, location_text },
		   { KILN_NGINX_HTTP_CONF_NAME, http_text },
		   { NULL, NULL } },
};
