/*
 * snippet_caddy.c - kiln.caddy.conf: a Caddyfile fragment, imported inside
 * the site block (or handle_path block) that serves the tree, that makes
 * Caddy 2.6 serve it by the rules of server.h.
 *
 * It owns the whole serving of the tree: one route {} holding the
 * Cache-Control, the choice of coding, Vary, and its own file_server.  What it relies on in Caddy, and where that comes from
 * (caddyserver/caddy v2.6.2 sources, and measured with curl against
 * Debian's caddy 2.6.2 by tests/e2e/serve_caddy.sh):
 *
 *  - Handlers inside route {} run in the order written (Caddy docs,
 *    "route" directive); "header" without defer sets the response header
 *    before the next handler runs, so a later one replaces an earlier.
 *  - file_server's "precompressed" (fileserver/staticfiles.go) serves
 *    NAME.SUFFIX for the first coding of encode.AcceptedEncodings() whose
 *    file exists, with the Content-Type of NAME (mime.TypeByExtension on
 *    the source's name: exactly the identity response's), the sibling's
 *    own ETag ("mtime36size36", so distinct per coding since kiln never
 *    keeps two equal sizes), Content-Encoding, and "Vary" added to that
 *    response only.  AcceptedEncodings (encode/encode.go) ranks codings by
 *    q-value before the configured order, takes "*" and "x-gzip" as plain
 *    names that match no precompressor, and reads only the first
 *    Accept-Encoding field line (measured: "gzip;q=1, br;q=0.5" gets gzip,
 *    "*" and "x-gzip" get identity).  So the snippet decides which codings
 *    the request accepts itself, with header_regexp matchers (Go RE2: no
 *    lookahead, hence one matcher per case and "not" clauses), and hands
 *    file_server a rewritten Accept-Encoding listing exactly those, all at
 *    q=1: Caddy then takes the first whose sibling exists in the order
 *    "precompressed" lists, which is the codec table's order reversed,
 *    smallest first (server.h).  The access log keeps the client's header:
 *    Caddy encodes the request for the log before any handler runs
 *    (server.go).
 *  - Go's http.ServeContent, under file_server, sends no Content-Length
 *    when Content-Encoding is set (net/http/fs.go): a sibling's GET is
 *    chunked (or sized by the server when it fits one buffer) and its HEAD
 *    has no Content-Length.  Nothing in a Caddyfile can restore it.  Range
 *    and If-None-Match are ServeContent's, on the bytes and ETag sent.
 *  - "header ... { defer }" (headers/caddyfile.go) applies when the
 *    response is written, after file_server's own Vary, so Set leaves
 *    exactly one.  The file matcher (fileserver/matcher.go) checks a path
 *    under {http.vars.root} per request, with '*', '[' and '?' in
 *    placeholders escaped before globbing, but not a backslash: every
 *    matcher is handed {vars.kiln_glob}, the path with its backslashes
 *    doubled (put_glob_path()).
 *  - map (map/map.go) compares its input with each key as a plain string;
 *    {http.request.orig_uri.path} is the decoded URL path before
 *    handle_path strips a prefix, so keys are url_prefix + rel.  The path
 *    matcher is not used: it lowercases and trims paths (matchers.go).
 *  - file_server's hide (staticfiles.go) matches a pattern without '/'
 *    against every component of the cleaned file-system path with
 *    filepath.Match, so kiln's files are hidden (404) at any depth and
 *    under any spelling of the URL.
 *  - The Caddyfile lexer (caddyfile/lexer.go) reads UTF-8 runes; inside
 *    `...` nothing is an escape; inside "..." only \" is.  Before lexing,
 *    {$NAME} is replaced from the environment across the whole file, the
 *    HTTP adapter rewrites shorthands such as {path} in every token, and
 *    an import runs each token through the replacer: token_safe() says
 *    which names survive all three, the others are left out of the list
 *    (caddy_left_out() says so), and comments escape both braces.
 */
#include "server.h"

#include "codec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index file name file_server is given, and the only one "DIR/" is
 * taken to serve (Caddy's default list adds index.txt). */
#define INDEX_NAME "index.html"

/* Append S to F for a comment line: control characters, backslashes,
 * braces and bytes that are not UTF-8 as \xNN. */
static void put_comment_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = kiln_utf8_len((const char *)p);

		if (n == 0 || *p < 0x20 || *p == 0x7f || *p == '\\' || *p == '{' || *p == '}') {
			fprintf(f, "\\x%02x", *p++);
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
}

/*
 * Whether the N bytes at S can be one Caddyfile token that Caddy reads back
 * as exactly those bytes: well-formed UTF-8 (the lexer reads runes, and a
 * byte that is not UTF-8 comes back as U+FFFD), no "{$" anywhere (before
 * lexing, Caddy replaces "{$NAME}" from the environment across the whole
 * file, up to the next '}' of any line: caddyfile/parse.go
 * replaceEnvVars), and no '{' followed anywhere by '}' (the HTTP adapter
 * rewrites shorthands such as {path} in every token, and import arguments
 * are of that form too).  Control characters are fine inside quotes (the
 * lexer keeps them, and counts a newline's lines).  See below for what an
 * import does to a token with a '{'.
 */
static bool token_safe(const char *s, size_t n)
{
	size_t open = 0;

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = kiln_utf8_len(s + i);

		if (k == 0 || i + k > n)
			return false;
		if (c == '{' && i + 1 < n && s[i + 1] == '$')
			return false;
		if (c == '{')
			open++;
		else if (c == '}' && open)
			return false;
		i += k;
	}
	if (!open)
		return true;
	/* An imported file's tokens go through Caddy's replacer for the import
	 * arguments (parse.go, ReplaceKnown): in a token with a '{' it takes a
	 * backslash before a brace for an escape and drops it, and past 100
	 * unclosed braces it gives up and leaves the token empty. */
	if (open > 100)
		return false;
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '\\' && (s[i + 1] == '{' || s[i + 1] == '}'))
			return false;
	return true;
}

/*
 * Whether the URL path S (N bytes) can be written as one quoted token that
 * reads back as S: inside `...` nothing is an escape, so anything but a
 * backtick; inside "..." a backslash escapes a double quote and is kept
 * before anything else (caddyfile/lexer.go), so a path with a backtick is
 * written there with each '"' as \", unless a backslash stands right
 * before a '"' or at the end (the lexer would take it for an escape).
 */
static bool listable(const char *s, size_t n)
{
	if (!token_safe(s, n))
		return false;
	if (!memchr(s, '`', n))
		return true;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\\' && (i + 1 == n || s[i + 1] == '"'))
			return false;
	return true;
}

/* Write the N listable bytes at S as one quoted token. */
static void put_token(FILE *f, const char *s, size_t n)
{
	if (!memchr(s, '`', n)) {
		fprintf(f, "`%.*s`", (int)n, s);
		return;
	}
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('\\', f);
		fputc(s[i], f);
	}
	fputc('"', f);
}

/*
 * A hide pattern for base name NAME: every rune that is not plain ASCII or
 * UTF-8 text, and every glob, quote or brace character, becomes '?'
 * (filepath.Match: any one rune; a byte that is not UTF-8 is one rune).  The
 * pattern then matches NAME and at worst a few look-alike names, which are
 * hidden too: the safe side.  KEEP_STAR keeps '*' (for kiln's own globs).
 */
static void put_hide_pattern(FILE *f, const char *name, bool keep_star)
{
	const unsigned char *p = (const unsigned char *)name;

	fputc('`', f);
	while (*p) {
		size_t n = kiln_utf8_len((const char *)p);

		if (n == 0) {
			fputc('?', f);
			p++;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f || strchr("?[]\\{}\"`", *p) ||
				      (*p == '*' && !keep_star))) {
			fputc('?', f);
			p++;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('`', f);
}

static void put_usage(FILE *f, const struct kiln_serve *s)
{
	bool prefixed = strcmp(s->url_prefix, "/") != 0;

	fputs("# Import it where Caddy serves this tree, after its root:\n"
	      "#\n"
	      "#     example.com {\n",
	      f);
	if (prefixed) {
		fputs("#         handle_path ", f);
		put_comment_safe(f, s->url_prefix);
		fputs("* {\n"
		      "#             root * /srv/site/dist\n"
		      "#             import /srv/site/dist/kiln.caddy.conf\n"
		      "#         }\n",
		      f);
	} else {
		fputs("#         root * /srv/site/dist\n"
		      "#         import /srv/site/dist/kiln.caddy.conf\n",
		      f);
	}
	fputs("#     }\n"
	      "#\n"
	      "# Written for Caddy 2.6 (Debian 12's caddy 2.6.2).  It is the whole of\n"
	      "# serving the tree: a route {} with its own file_server, so add no other\n"
	      "# file_server, and no encode, for these paths (encode would compress\n"
	      "# what kiln left uncompressed on purpose).  Cache-Control set outside is\n"
	      "# replaced (unless --no-cache-control).  Requests for kiln's own files\n"
	      "# (the manifest, snippets, temporary files, journals) get 404.\n"
	      "#\n"
	      "# Each request gets the smallest sibling its Accept-Encoding accepts\n"
	      "# (q=0 refuses, any other q accepts, \"*\" accepts the codings not\n"
	      "# named, x-gzip is gzip), else the file itself, with the file's\n"
	      "# Content-Type, and \"Vary: Accept-Encoding\" on every response of a\n"
	      "# file that has a sibling.  Caddy 2.6 sends no Content-Length with a\n"
	      "# sibling (its GET is chunked, its HEAD has none).\n"
	      "#\n"
	      "# Siblings are looked for on disk per request; only the list of\n"
	      "# immutable files below is per file.  Rerun kiln and reload Caddy\n"
	      "# (caddy reload) after each deploy: a stale snippet is still safe,\n"
	      "# since a file it does not list is sent as revalidated, never as\n"
	      "# immutable.\n",
	      f);
	if (prefixed) {
		fputs("#\n"
		      "# The tree is served at ",
		      f);
		put_comment_safe(f, s->url_prefix);
		fputs(" (--url-prefix): Cache-Control is keyed by\n"
		      "# the URL path as the client sent it, before handle_path strips the\n"
		      "# prefix.\n",
		      f);
	}
	fputs("\n", f);
}

/* The length of REL's directory part with its '/' ("" for the top) when
 * REL is an index file (its directory's URL serves it), else -1. */
static long index_dir_len(const char *rel)
{
	size_t n = strlen(rel), k = strlen(INDEX_NAME);

	if (n < k || strcmp(rel + n - k, INDEX_NAME) != 0 || (n > k && rel[n - k - 1] != '/'))
		return -1;
	return (long)(n - k);
}

/* The URL path of the first N bytes of REL, malloc'ed (NULL: no memory). */
static char *url_path(const struct kiln_serve *s, const char *rel, size_t n)
{
	size_t p = strlen(s->url_prefix);
	char *key = malloc(p + n + 1);

	if (key) {
		memcpy(key, s->url_prefix, p);
		memcpy(key + p, rel, n);
		key[p + n] = '\0';
	}
	return key;
}

/*
 * One map line for the URL path of the first N bytes of REL, or, when it
 * cannot be listed, a comment saying so (in the pass with SKIPPED set; the
 * other pass writes only map lines).  False when out of memory.
 */
static bool put_map_line(FILE *f, const struct kiln_serve *s, const char *rel, size_t n,
			 bool skipped)
{
	char *key = url_path(s, rel, n);
	size_t len;

	if (!key)
		return false;
	len = strlen(key);
	if (listable(key, len) && !skipped) {
		fputs("\t\t", f);
		put_token(f, key, len);
		fputs(" immutable\n", f);
	} else if (!listable(key, len) && skipped) {
		fputs("\t#   ", f);
		put_comment_safe(f, key);
		fputs("\n", f);
	}
	free(key);
	return true;
}

/* Whether A is served with KILN_CACHE_IMMUTABLE. */
static bool immutable(const struct kiln_serve *s, const struct kiln_serve_asset *a)
{
	const char *cc = kiln_serve_cache_control(s, a);

	return cc && strcmp(cc, KILN_CACHE_IMMUTABLE) == 0;
}

/* The map lines of every immutable asset (SKIPPED: the comment lines of
 * those that cannot be listed).  False when out of memory. */
static bool put_map_lines(FILE *f, const struct kiln_serve *s, bool skipped)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct kiln_serve_asset *a = &s->assets[i];
		long d = index_dir_len(a->rel);

		if (!immutable(s, a))
			continue;
		if (!put_map_line(f, s, a->rel, strlen(a->rel), skipped))
			return false;
		if (d >= 0 && !put_map_line(f, s, a->rel, (size_t)d, skipped))
			return false;
	}
	return true;
}

/* How many immutable assets' URL paths can (*GOOD) and cannot (*BAD) be
 * listed.  False when out of memory. */
static bool count_listable(const struct kiln_serve *s, size_t *good, size_t *bad)
{
	*good = *bad = 0;
	for (size_t i = 0; i < s->n; i++) {
		char *key;

		if (!immutable(s, &s->assets[i]))
			continue;
		key = url_path(s, s->assets[i].rel, strlen(s->assets[i].rel));
		if (!key)
			return false;
		if (listable(key, strlen(key)))
			++*good;
		else
			++*bad;
		free(key);
	}
	return true;
}

/*
 * Cache-Control (server.h): the value of a file the manifest does not mark
 * immutable on every response of the route, then the immutable one for the
 * URLs listed.  False when out of memory.
 */
static bool put_cache_control(FILE *f, const struct kiln_serve *s)
{
	static const struct kiln_serve_asset plain = { .rel = "", .kept = 0, .immutable = false };
	const char *other = kiln_serve_cache_control(s, &plain);
	size_t good, bad;

	if (!other)
		return true; /* --no-cache-control */
	if (!count_listable(s, &good, &bad))
		return false;
	fprintf(f,
		"\t# Cache-Control: this on every response, and the immutable value\n"
		"\t# below for the URLs of immutable files (exact paths; a directory's\n"
		"\t# URL goes with its " INDEX_NAME "), only when the file exists, so that\n"
		"\t# no 404 is made cacheable.\n"
		"\theader Cache-Control \"%s\"\n",
		other);
	if (bad) {
		fputs("\t# Not listed, since no Caddyfile token reads back as their URL\n"
		      "\t# path (sent as the others):\n",
		      f);
		if (!put_map_lines(f, s, true))
			return false;
	}
	if (good == 0) {
		fputs("\n", f);
		return true;
	}
	fputs("\tmap {http.request.orig_uri.path} {kiln_cache} {\n", f);
	if (!put_map_lines(f, s, false))
		return false;
	fprintf(f,
		"\t}\n"
		"\t@kiln_immutable {\n"
		"\t\tvars {kiln_cache} immutable\n"
		"\t\tfile {vars.kiln_glob} {vars.kiln_glob}" INDEX_NAME "\n"
		"\t}\n"
		"\theader @kiln_immutable Cache-Control \"%s\"\n"
		"\n",
		KILN_CACHE_IMMUTABLE);
	return true;
}

/* Whether coding C can be served: its tokens are plain, so that they fit
 * a regular expression and a Caddyfile token as they are. */
static bool coding_plain(unsigned c)
{
	const char *names[] = { kiln_codecs[c]->info.name, kiln_codecs[c]->http_alias };

	for (int i = 0; i < 2; i++)
		for (const char *p = names[i]; p && *p; p++)
			if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-", *p))
				return false;
	return true;
}

/* The codings the snippet serves: those the run writes or the tree has
 * (a coding with no sibling today may have one after the next run), and
 * plain. */
static unsigned served_codings(const struct kiln_serve *s)
{
	unsigned m = 0;

	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (((s->kept | s->opt->codings) & (1u << c)) && coding_plain(c))
			m |= 1u << c;
	return m;
}

/*
 * Regular expressions on one Accept-Encoding field line, case-insensitive,
 * after RFC 9110 section 12.5.3: a list member is a coding, optionally
 * ";q=" and a qvalue (0 to 1, at most three decimals), with optional
 * whitespace around the separators.  A member with a malformed weight
 * names nothing.  REFUSED: listed with q=0; ACCEPTED: listed without a
 * weight or with one above 0; LISTED: either.  C < 0 is "*".
 */
enum weight { ACCEPTED, REFUSED, LISTED };

static void put_member_re(FILE *f, int c, enum weight w)
{
	static const char *const tail[] = {
		[ACCEPTED] = "[ \\t]*(;[ \\t]*q[ \\t]*=[ \\t]*(0\\.([1-9][0-9]?[0-9]?|0[1-9][0-9]?|00[1-9])"
			     "|1(\\.0?0?0?)?)[ \\t]*)?(,|$)",
		[REFUSED] = "[ \\t]*;[ \\t]*q[ \\t]*=[ \\t]*0(\\.0?0?0?)?[ \\t]*(,|$)",
		[LISTED] = "[ \\t]*(;[ \\t]*q[ \\t]*=[ \\t]*(0(\\.[0-9]?[0-9]?[0-9]?)?|1(\\.0?0?0?)?)"
			   "[ \\t]*)?(,|$)",
	};

	fputs("`(?i)(^|,)[ \\t]*(", f);
	if (c < 0) {
		fputs("\\*", f);
	} else {
		fputs(kiln_codecs[c]->info.name, f);
		if (kiln_codecs[c]->http_alias)
			fprintf(f, "|%s", kiln_codecs[c]->http_alias);
	}
	fprintf(f, ")%s`", tail[w]);
}

static void put_negotiation(FILE *f, unsigned codings)
{
	bool first = true;

	fputs("\t# The codings this request accepts, each set in {vars.kiln_NAME}:\n"
	      "\t# named with q above 0 and never with q=0, or not named (with a\n"
	      "\t# valid weight) while \"*\" is, with q above 0.\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *name = kiln_codecs[c]->info.name;

		if (!(codings & (1u << c)))
			continue;
		fprintf(f, "\t@kiln_%s_named {\n\t\theader_regexp Accept-Encoding ", name);
		put_member_re(f, (int)c, ACCEPTED);
		fputs("\n\t\tnot header_regexp Accept-Encoding ", f);
		put_member_re(f, (int)c, REFUSED);
		fprintf(f, "\n\t}\n\t@kiln_%s_star {\n\t\theader_regexp Accept-Encoding ", name);
		put_member_re(f, -1, ACCEPTED);
		fputs("\n\t\tnot header_regexp Accept-Encoding ", f);
		put_member_re(f, -1, REFUSED);
		fputs("\n\t\tnot header_regexp Accept-Encoding ", f);
		put_member_re(f, (int)c, LISTED);
		fprintf(f,
			"\n\t}\n"
			"\tvars @kiln_%s_named kiln_%s %s\n"
			"\tvars @kiln_%s_star kiln_%s %s\n",
			name, name, name, name, name, name);
	}
	fputs("\t# ... handed to file_server as the only Accept-Encoding, all at q=1:\n"
	      "\t# it sends the first whose sibling exists, in the order of\n"
	      "\t# \"precompressed\", smallest first.\n"
	      "\trequest_header Accept-Encoding \"",
	      f);
	for (unsigned c = kiln_ncodecs; c-- > 0;) {
		if (!(codings & (1u << c)))
			continue;
		fprintf(f, "%s{vars.kiln_%s}", first ? "" : ",", kiln_codecs[c]->info.name);
		first = false;
	}
	fputs("\"\n"
	      "\n"
	      "\t# Vary on every response of a file that has a sibling, identity ones\n"
	      "\t# too; deferred, it replaces the one file_server adds to a sibling's.\n"
	      "\t@kiln_has_sibling file",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (codings & (1u << c))
			fprintf(f, " {vars.kiln_glob}%s", kiln_codecs[c]->info.suffix);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (codings & (1u << c))
			fprintf(f, " {vars.kiln_glob}" INDEX_NAME "%s", kiln_codecs[c]->info.suffix);
	fputs("\n"
	      "\theader @kiln_has_sibling {\n"
	      "\t\tVary Accept-Encoding\n"
	      "\t\tdefer\n"
	      "\t}\n"
	      "\n",
	      f);
}

static void put_file_server(FILE *f, const struct kiln_serve *s, unsigned codings,
			    const char *matcher)
{
	fprintf(f, "\tfile_server %s%s{\n", matcher ? matcher : "", matcher ? " " : "");
	fputs(""
	      "\t\tindex " INDEX_NAME "\n"
	      "\t\thide",
	      f);
	for (const char *const *o = s->own; o && *o; o++) {
		fputc(' ', f);
		put_hide_pattern(f, *o, false);
	}
	fputc(' ', f);
	put_hide_pattern(f, KILN_TEMP_GLOB, true);
	fputc(' ', f);
	put_hide_pattern(f, KILN_JOURNAL_GLOB, true);
	fputc(' ', f);
	put_hide_pattern(f, KILN_PART_GLOB, true);
	fputc(' ', f);
	put_hide_pattern(f, KILN_DCZ_GLOB, true);
	fputs("\n", f);
	if (codings) {
		fputs("\t\tprecompressed", f);
		for (unsigned c = kiln_ncodecs; c-- > 0;)
			if (codings & (1u << c))
				fprintf(f, " %s", kiln_codecs[c]->info.name);
		fputs("\n", f);
	}
	fputs("\t}\n", f);
}

/*
 * {vars.kiln_glob}: the request's path as the file matcher must be given
 * it.  The matcher globs its pattern (fileserver/matcher.go, fs.Glob),
 * escaping '*', '[' and '?' in the placeholders' values but not a
 * backslash, which the glob then takes for an escape: a name with one
 * would never be found.  So each backslash is doubled, one per step (a
 * vars_regexp on the part not yet done, and vars that move it over); the
 * placeholders' values are never expanded again (replacer.go), whatever
 * braces a name holds.  A path with more than GLOB_STEPS backslashes is
 * left over in {vars.kiln_rest}: put_deep() serves it as itself.
 */
#define GLOB_STEPS 16
#define GLOB_STEPS_TEXT "16"

static void put_glob_path(FILE *f)
{
	fputs("\t# {vars.kiln_glob}: the path for the file matcher, which globs it:\n"
	      "\t# each backslash doubled, one a step (only a path that has one\n"
	      "\t# pays for the steps).\n"
	      "\tvars kiln_glob {path}\n"
	      "\t@kiln_backslash path_regexp kiln_backslash `\\\\`\n"
	      "\troute @kiln_backslash {\n"
	      "\t\tvars {\n"
	      "\t\t\tkiln_done \"\"\n"
	      "\t\t\tkiln_rest {path}\n"
	      "\t\t}\n",
	      f);
	for (int i = 0; i < GLOB_STEPS; i++)
		fprintf(f,
			"\t\t@kiln_bs%d vars_regexp kiln_bs%d {vars.kiln_rest} `(?s)^([^\\\\]*)\\\\(.*)$`\n"
			"\t\tvars @kiln_bs%d {\n"
			"\t\t\tkiln_done `{vars.kiln_done}{re.kiln_bs%d.1}\\\\`\n"
			"\t\t\tkiln_rest {re.kiln_bs%d.2}\n"
			"\t\t}\n",
			i, i, i, i, i);
	fputs("\t\tvars kiln_glob {vars.kiln_done}{vars.kiln_rest}\n"
	      "\t\t@kiln_left vars_regexp kiln_left {vars.kiln_rest} `\\\\`\n"
	      "\t\tvars @kiln_left kiln_deep yes\n"
	      "\t}\n\n",
	      f);
}

/* Whether REL has more backslashes than put_glob_path() doubles. */
static bool too_deep(const char *rel)
{
	int n = 0;

	for (const char *p = rel; *p; p++)
		n += *p == '\\';
	return n > GLOB_STEPS;
}

/* A path with more backslashes than put_glob_path() doubles: served as
 * itself, by a file_server without precompressed. */
static void put_deep(FILE *f, const struct kiln_serve *s)
{
	fputs("\t# A path with more backslashes than that: served as itself.\n"
	      "\t@kiln_deep vars kiln_deep yes\n",
	      f);
	put_file_server(f, s, 0, "@kiln_deep");
	fputs("\n", f);
}

/* A sibling asked for by its own URL while its source is there is 404,
 * so that rules written for the source's URL (basicauth, respond 403)
 * cannot be walked around: the file matcher looks for the path without
 * the sibling's suffix, which a vars step takes off first (matchers of one
 * set run in no set order, so one cannot use another's placeholders). */
static void put_direct(FILE *f)
{
	fputs("\t# A sibling asked for by its own URL while its source is there:\n"
	      "\t# 404, so that rules written for the source's URL cannot be\n"
	      "\t# walked around.  (The path matcher ignores case: the regular\n"
	      "\t# expression decides.)\n"
	      "\t@kiln_suffix path",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, " *%s", kiln_codecs[c]->info.suffix);
	fputs("\n\troute @kiln_suffix {\n"
	      "\t\t@kiln_sibling vars_regexp kiln_sibling {vars.kiln_glob} `(?s)^(.+)(?:",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "%s\\%s", c ? "|" : "", kiln_codecs[c]->info.suffix);
	fputs(")$`\n"
	      "\t\tvars @kiln_sibling {\n"
	      "\t\t\tkiln_sibling yes\n"
	      "\t\t\tkiln_source {re.kiln_sibling.1}\n"
	      "\t\t}\n"
	      "\t}\n"
	      "\t@kiln_direct {\n"
	      "\t\tvars kiln_sibling yes\n"
	      "\t\tfile {vars.kiln_source}\n"
	      "\t}\n"
	      "\trespond @kiln_direct 404\n\n",
	      f);
}

static char *caddy_text(const struct kiln_serve *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned codings = served_codings(s);

	if (!f)
		return NULL;
	kiln_snippet_header(f, s, "caddy", "# ");
	put_usage(f, s);
	fputs("route {\n", f);
	put_glob_path(f);
	if (!put_cache_control(f, s)) {
		fclose(f);
		free(text);
		return NULL;
	}
	put_deep(f, s);
	put_direct(f);
	if (codings)
		put_negotiation(f, codings);
	put_file_server(f, s, codings, NULL);
	fputs("}\n", f);
	if (ferror(f)) {
		fclose(f);
		free(text);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Whether the URL paths of A (its own, and its directory's for an index
 * file) can all be listed. */
static bool all_listable(const struct kiln_serve *s, const struct kiln_serve_asset *a,
			 bool *nomem)
{
	long d = index_dir_len(a->rel);
	bool yes = true;

	for (int k = 0; k < (d >= 0 ? 2 : 1) && yes; k++) {
		char *key = url_path(s, a->rel, k ? (size_t)d : strlen(a->rel));

		if (!key) {
			*nomem = true;
			return true;
		}
		yes = listable(key, strlen(key));
		free(key);
	}
	return yes;
}

static const char *caddy_left_out(const struct kiln_serve *s, const struct kiln_serve_asset *a)
{
	bool nomem = false;

	if (too_deep(a->rel))
		return "more than " GLOB_STEPS_TEXT " backslashes in its path, more than the "
		       "snippet can hand Caddy's file matcher: served as itself (no sibling, "
		       "no-cache), and its siblings by their own URLs too";
	if (immutable(s, a) && !all_listable(s, a, &nomem) && !nomem)
		return "its URL path cannot be written in an imported Caddyfile (not UTF-8, "
		       "\"{$\", '{' before '}', or a backslash before a brace): served "
		       "no-cache, not immutable";
	return NULL;
}

const struct kiln_server kiln_server_caddy = {
	"caddy",
	{ { "kiln.caddy.conf", caddy_text }, { NULL, NULL } },
	caddy_left_out,
	"--caddy-conf",
	offsetof(struct kiln_options, caddy_conf_path),
};
