/*
 * snippet_apache.c - kiln.apache.conf, the Apache httpd 2.4 snippet: the
 * directives that make Apache send each request the smallest sibling the
 * client accepts, with the source's headers, the manifest's Cache-Control,
 * and never kiln's own files (server.h states the rules).
 *
 * What it writes, and the Apache behaviour each part relies on ("docs": the
 * httpd 2.4 manual of the module named; "measured": on Debian's 2.4, by
 * tests/e2e/serve_apache.sh):
 *
 *  - Selection: one <If>/<ElseIf> chain, the codings of the table from the
 *    last to the first (kept sizes fall along the table, server.h), each
 *    branch "no PATH_INFO, NAME.SUFFIX is a file, Accept-Encoding accepts
 *    the coding" (ap_expr: -f, req_novary(), =~ with the i flag; docs
 *    "Expressions in Apache HTTP Server").  An <If> is merged after the
 *    <Directory> and <Files> sections, once the request is mapped to a file
 *    (docs core, "<If>"), so REQUEST_FILENAME is the file in every context:
 *    that is what lets one text work inside a <VirtualHost> and inside a
 *    <Directory>.  The branch holds the rewrite: mod_rewrite inside <If> runs
 *    in per-directory context (measured: its trace log names the directory
 *    "*If/"), which ends in an internal redirect to the sibling's URL-path
 *    (docs mod_rewrite, "Per-directory Rewrites").
 *    That path is the request's own decoded path (REQUEST_URI) captured by
 *    a RewriteCond and re-escaped by the B flag, '/' kept (BNE=/, 2.4.57)
 *    and spaces as %20 (BNP): the redirect decodes it again, so names with
 *    spaces, '%', '?', '#' and non-ASCII bytes reach their sibling (measured).
 *    A section with mod_rewrite directives replaces the per-directory rules
 *    of the scope (docs mod_rewrite, "RewriteOptions"): the user's own
 *    <Directory>/.htaccess rules do not run for a request answered with a
 *    sibling; everywhere else they are untouched.  mod_rewrite refuses (403)
 *    a per-directory rewrite unless FollowSymLinks or SymLinksIfOwnerMatch
 *    is on (docs mod_rewrite, "RewriteRule"): the branch turns the second
 *    on for itself, which follows no link, the request having been mapped
 *    to its file already, and the redirected request is mapped afresh
 *    under the scope's own Options.
 *  - The redirected request carries the coding as REDIRECT_KILN_CODING
 *    (docs "Environment Variables", internal redirects), the first branch
 *    of the chain.  There RemoveType stops both AddType and TypesConfig
 *    (mime.types) from typing ".gz" and ".zst" (docs mod_mime
 *    "RemoveType"; Debian's mime.conf and mime.types do), and "Header set
 *    Content-Encoding" sends the one coding chosen.  mod_mime reads every
 *    extension of a name, not only the last (docs mod_mime, "Files with
 *    Multiple Extensions"): so in the whole scope RemoveEncoding and
 *    RemoveLanguage keep the suffixes from giving any file a coding or a
 *    language (Debian's "AddLanguage br .br", a configuration's
 *    "AddEncoding x-gzip .gz"), wherever they stand: "x.gz.js.gz" is sent
 *    with one Content-Encoding, "x.br.js" with no Content-Language
 *    (measured: tests/e2e/serve_names.py).  The Content-Type then comes
 *    from the other extensions, as the source's does.  A client asking for
 *    the sibling's URL itself gets the plain file, as Apache sends it.
 *  - Vary: "Header merge" (docs mod_headers: merge adds a token only once)
 *    on every response of an asset with a sibling on disk, and on every
 *    redirected one.  ETag: Apache's default (FileETag MTime Size) differs
 *    per coding because kiln never keeps two bodies of one size (decide.c);
 *    conditional requests are answered by the redirected request, against
 *    the sibling's own ETag (measured).  mod_deflate and mod_brotli are told
 *    not to compress anything of the scope (no-gzip, no-brotli: docs
 *    mod_deflate, set with mod_setenvif), and they never touch a response
 *    that already has a Content-Encoding.
 *  - Cache-Control: "no-cache" on every file under the prefix, then the
 *    immutable ones: "Header set" with an expr= condition on REQUEST_URI
 *    (the decoded path, also after the redirect), a regular expression per
 *    run of assets: a trie of their URL paths, each optionally followed by
 *    a kept sibling suffix; the later "set" wins (docs mod_headers, "Order
 *    of Processing").  An ap_expr regular expression holds at most 8191 bytes
 *    (server/util_expr_scan.l), so the list is cut into runs of at most
 *    APACHE_REGEX_MAX bytes; a request costs one regex match per run
 *    (docs/serving.md, "Apache", has the measured cost).
 *  - kiln's own files: a <FilesMatch> on the base name with "Require all
 *    denied" (docs core, "<FilesMatch>"; mod_authz_core) answers 403 at any
 *    depth, whatever <Directory> grants.
 *
 * Quoting: every byte of a name that is not [A-Za-z0-9_/,:=@~-] is written
 * in a regular expression as \ and itself (PCRE's metacharacters) or as
 * \xHH (every other byte: quotes, '#', '%', space, controls, non-ASCII), so
 * no name can end a string, a section or an expression, whatever bytes it
 * holds; no name goes into a comment.
 */
#include "server.h"

#include "codec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest regular expression written for one run of Cache-Control names:
 * ap_expr takes at most 8191 bytes (server/util_expr_scan.l). */
#define APACHE_REGEX_MAX 8000

/* Runs of Cache-Control names grouped under one <If> (see put_cache_value). */
#define APACHE_GROUP 16

/* The environment variable that marks a request kiln redirected to a
 * sibling: its value is the coding's token. */
#define APACHE_CODING_VAR "KILN_CODING"

/* Bytes BYTE takes in a regular expression (see put_re_byte). */
static size_t re_byte_len(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c && strchr("_/,:=@~-", c)))
		return 1;
	if (c && strchr(".^$|?*+()[]{}", c))
		return 2;
	return 4;
}

/* Write byte C so that a PCRE pattern matches exactly it, in a form that is
 * inert in every place a pattern goes (quoted config argument, ap_expr
 * m#...#, <FilesMatch>). */
static void put_re_byte(FILE *f, unsigned char c)
{
	switch (re_byte_len(c)) {
	case 1:
		fputc(c, f);
		break;
	case 2:
		fputc('\\', f);
		fputc(c, f);
		break;
	default:
		fprintf(f, "\\x%02x", c);
	}
}

static void put_re_string(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		put_re_byte(f, *p);
}

static size_t re_string_len(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += re_byte_len(*p);
	return n;
}

/* An fnmatch(3) pattern on a base name (only * and ? special, as kiln's own
 * are) as a regular expression. */
static void put_re_glob(FILE *f, const char *glob)
{
	for (const unsigned char *p = (const unsigned char *)glob; *p; p++) {
		if (*p == '*')
			fputs("[^/]*", f);
		else if (*p == '?')
			fputs("[^/]", f);
		else
			put_re_byte(f, *p);
	}
}

/*
 * A trie of the names NM[0..n) cut after K bytes, as one pattern: sorted
 * (strcmp order), distinct, all sharing their first D bytes, which are
 * already written.  In strcmp order the byte at D only grows from the first
 * name to the last (a name that ends there comes first), so the first and
 * the last name agree on it exactly when all do.  Bounded by the lengths of
 * the distinct cut names plus 6 bytes each (a group "(?:" ")?" and a "|"
 * per branch).
 */
static void put_trie(FILE *f, const char *const *nm, size_t n, size_t d, size_t k)
{
	while (d < k && nm[0][d] && nm[0][d] == nm[n - 1][d])
		put_re_byte(f, (unsigned char)nm[0][d++]);
	if (d == k || (!nm[0][d] && n == 1))
		return;
	bool ends = !nm[0][d];
	size_t i = ends ? 1 : 0;

	fputs("(?:", f);
	for (bool first = true; i < n; first = false) {
		size_t j = i + 1;

		while (j < n && nm[j][d] == nm[i][d])
			j++;
		if (!first)
			fputc('|', f);
		put_re_byte(f, (unsigned char)nm[i][d]);
		put_trie(f, nm + i, j - i, d + 1, k);
		i = j;
	}
	fputs(ends ? ")?" : ")", f);
}

/* "(?:\.gz|\.br)?" for the kept codings' suffixes: a sibling fetched by its
 * own URL, and the redirected request, get the asset's Cache-Control. */
static void put_suffixes(FILE *f, unsigned kept)
{
	bool any = false;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (!(kept & (1u << c)))
			continue;
		fputs(any ? "|" : "(?:", f);
		put_re_string(f, kiln_codecs[c]->info.suffix);
		any = true;
	}
	if (any)
		fputs(")?", f);
}

/* The Header line for the run NM[0..n) of assets whose Cache-Control is CC. */
static void put_cache_run(FILE *f, const struct kiln_serve *s, const char *cc,
			  const char *const *nm, size_t n, const char *indent)
{
	fprintf(f, "%sHeader set Cache-Control \"%s\" \"expr=%%{REQUEST_URI} =~ m#^", indent, cc);
	put_re_string(f, s->url_prefix);
	put_trie(f, nm, n, 0, (size_t)-1);
	put_suffixes(f, (s->kept | s->opt->codings));
	fputs("\\z#\"\n", f);
}

/* Pattern bytes of the names NM[0..n) cut after K bytes (the bound of
 * put_trie). */
static size_t cut_trie_len(const char *const *nm, size_t n, size_t k)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && strncmp(nm[i - 1], nm[i], k) == 0)
			continue;
		for (size_t d = 0; d < k && nm[i][d]; d++)
			len += re_byte_len((unsigned char)nm[i][d]);
		len += 6;
	}
	return len;
}

/* An <If> that holds the runs of NM[0..n): true for every URL-path of them
 * (their names cut as long as the pattern fits ROOM), so that a request
 * matches only the runs of its own group.  False when no cut fits. */
static bool put_group_if(FILE *f, const struct kiln_serve *s, const char *const *nm, size_t n,
			 size_t room)
{
	for (size_t k = 64; k > 0; k--) {
		if (cut_trie_len(nm, n, k) > room)
			continue;
		fputs("<If \"%{REQUEST_URI} =~ m#^", f);
		put_re_string(f, s->url_prefix);
		put_trie(f, nm, n, 0, k);
		fputs("#\">\n", f);
		return true;
	}
	return false;
}

/*
 * The assets NM[0..n) whose Cache-Control is CC, in runs of at most ROOM
 * pattern bytes; past APACHE_GROUP runs, each APACHE_GROUP of them inside an
 * <If> of their own, so that a request is matched against a few groups and
 * one group's runs rather than against every run.  False when out of memory.
 */
static bool put_cache_value(FILE *f, const struct kiln_serve *s, const char *cc,
			    const char *const *nm, size_t n, size_t room)
{
	size_t *start = malloc((n + 1) * sizeof(*start));
	size_t runs = 0, len = 0;

	if (!start)
		return false;
	for (size_t i = 0; i < n; i++) {
		size_t l = re_string_len(nm[i]) + 6;

		if (!i || len + l > room) {
			start[runs++] = i;
			len = 0;
		}
		len += l;
	}
	start[runs] = n;
	for (size_t g = 0; g < runs; g += APACHE_GROUP) {
		size_t ge = g + APACHE_GROUP < runs ? g + APACHE_GROUP : runs;
		bool grouped = runs > APACHE_GROUP &&
			       put_group_if(f, s, nm + start[g], start[ge] - start[g], room);

		for (size_t r = g; r < ge; r++)
			put_cache_run(f, s, cc, nm + start[r], start[r + 1] - start[r],
				      grouped ? "    " : "");
		if (grouped)
			fputs("</If>\n", f);
	}
	free(start);
	return true;
}

/* Pattern bytes the names of one run may take: around them go "^", the
 * prefix, the suffixes (at most 8 bytes a coding and 5 more) and "\z". */
static size_t run_room(const struct kiln_serve *s)
{
	size_t room = APACHE_REGEX_MAX - 1 - 8 * kiln_ncodecs - 5 - 2;
	size_t prefix = re_string_len(s->url_prefix);

	return prefix < room ? room - prefix : 0;
}

/*
 * The Cache-Control lines (none with --no-cache-control): "no-cache" on
 * every file served under the prefix, then, overriding it (mod_headers
 * applies a scope's Header lines in order, an <If>'s after the scope's
 * own), each other value (server.h has one: immutable) on the URL-paths of
 * its assets.  Returns false when out of memory.
 */
static bool put_cache_control(FILE *f, const struct kiln_serve *s)
{
	const char **nm = malloc((s->n ? s->n : 1) * sizeof(*nm));
	const char *done[8];
	size_t ndone = 0, skipped = 0;
	bool ok = nm != NULL;
	size_t room = run_room(s);

	if (!s->opt->cache_control) {
		free(nm);
		return ok;
	}
	fputs("\n# Cache-Control: " KILN_CACHE_REVALIDATE " on every file served here (a file\n"
	      "# added since kiln ran too), unless listed below.\n"
	      "Header set Cache-Control \"" KILN_CACHE_REVALIDATE "\" \"expr=%{REQUEST_URI} =~ m#^",
	      f);
	put_re_string(f, s->url_prefix);
	fputs("# && -f %{REQUEST_FILENAME}\"\n", f);
	/* server.h has one other value; DONE has room for more. */
	for (size_t a = 0; ok && a < s->n; a++) {
		const char *cc = kiln_serve_cache_control(s, &s->assets[a]);
		bool seen = !cc || strcmp(cc, KILN_CACHE_REVALIDATE) == 0;
		size_t n = 0;

		for (size_t k = 0; k < ndone && !seen; k++)
			seen = strcmp(done[k], cc) == 0;
		if (seen || ndone == sizeof(done) / sizeof(done[0]))
			continue;
		done[ndone++] = cc;
		for (size_t b = a; b < s->n; b++) {
			const char *v = kiln_serve_cache_control(s, &s->assets[b]);

			if (!v || strcmp(v, cc) != 0)
				continue;
			if (re_string_len(s->assets[b].rel) + 6 > room)
				skipped++;
			else
				nm[n++] = s->assets[b].rel;
		}
		fprintf(f, "\n# Cache-Control: %s\n", cc);
		ok = put_cache_value(f, s, cc, nm, n, room);
	}
	free(nm);
	if (skipped)
		fprintf(f, "# %zu asset(s) with a path too long for one expression are left\n"
			   "# out: they are served " KILN_CACHE_REVALIDATE ", revalidated.\n",
			skipped);
	return ok;
}

/* ap_expr: Accept-Encoding accepts the coding whose token is NAME
 * (server.h): it is not listed with q=0 (under its token or alias), and
 * it is listed, or "*" is listed and not with q=0.  A coding listed twice,
 * once with q=0, is refused. */
static void put_re_listed(FILE *f, const char *token, bool zero)
{
	fputs("m#(?:^|,)[ \\t]*", f);
	fputs(token, f);
	if (zero)
		fputs("[ \\t]*;(?:[^,;]*;)*[ \\t]*q[ \\t]*=[ \\t]*0(?:\\.0{0,3})?", f);
	fputs("[ \\t]*(?:[;,]|$)#i", f);
}

static void put_accepts(FILE *f, const struct kiln_codec *k)
{
	char token[96];
	const char *ae = "req_novary('Accept-Encoding')";

	/* the token, or its alias (RFC 9110 section 8.4.1.3: "x-gzip") */
	if (k->http_alias)
		snprintf(token, sizeof(token), "(?:%s|%s)", k->info.name, k->http_alias);
	else
		snprintf(token, sizeof(token), "%s", k->info.name);
	fprintf(f, "%s !~ ", ae);
	put_re_listed(f, token, true);
	fprintf(f, " && (%s =~ ", ae);
	put_re_listed(f, token, false);
	fprintf(f, " || (%s =~ ", ae);
	put_re_listed(f, "\\*", false);
	fprintf(f, " && %s !~ ", ae);
	put_re_listed(f, "\\*", true);
	fputs("))", f);
}

/* The <If> chain: mod_mime for the redirected request, then one branch per
 * kept coding, the table's last first. */
static void put_selection(FILE *f, const struct kiln_serve *s)
{
	fputs("\n# No file here takes a content-coding or a language from a suffix\n"
	      "# kiln's siblings use, wherever it stands in the name (x.gz.js is\n"
	      "# JavaScript, x.br.html no Breton page).\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "RemoveEncoding %s\nRemoveLanguage %s\n", kiln_codecs[c]->info.suffix,
			kiln_codecs[c]->info.suffix);
	fputs("\n# A request kiln sent on to a sibling: its Content-Type from the\n"
	      "# source's extensions, and the one Content-Encoding it was sent for.\n"
	      "Header set Content-Encoding %{REDIRECT_" APACHE_CODING_VAR "}e "
	      "\"expr=-n reqenv('REDIRECT_" APACHE_CODING_VAR "')\"\n"
	      "<If \"-n reqenv('REDIRECT_" APACHE_CODING_VAR "')\">\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_info *i = &kiln_codecs[c]->info;

		if (!((s->kept | s->opt->codings) & (1u << c)))
			continue;
		fprintf(f,
			"    RemoveType %s\n"
			"    RemoveCharset %s\n"
			"    RemoveHandler %s\n",
			i->suffix, i->suffix, i->suffix);
	}
	fputs("</If>\n", f);
	/* a sibling asked for by its own URL while its source is there: rules
	 * written for the source's URL must not be walked around */
	fputs("# A sibling asked for by its own URL while its source is there: 404.\n"
	      "<ElseIf \"%{REQUEST_FILENAME} =~ m#^(.+)(?:", f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "%s\\%s", c ? "|" : "", kiln_codecs[c]->info.suffix);
	fputs(")\\z# && -f $1\">\n"
	      "    Options +SymLinksIfOwnerMatch\n"
	      "    RewriteEngine On\n"
	      "    RewriteRule ^ - [R=404,L]\n"
	      "</ElseIf>\n",
	      f);
	for (unsigned k = kiln_ncodecs; k-- > 0;) {
		const struct kiln_coding_info *i = &kiln_codecs[k]->info;

		if (!((s->kept | s->opt->codings) & (1u << k)))
			continue;
		fprintf(f,
			"# %s when accepted and NAME%s exists\n"
			"<ElseIf \"-z %%{PATH_INFO} && -f '%%{REQUEST_FILENAME}' && "
			"-f '%%{REQUEST_FILENAME}%s' && ",
			i->name, i->suffix, i->suffix);
		put_accepts(f, kiln_codecs[k]);
		fprintf(f,
			"\">\n"
			"    Options +SymLinksIfOwnerMatch\n"
			"    RewriteEngine On\n"
			"    RewriteCond %%{REQUEST_URI} ^(.+)$\n"
			"    RewriteRule ^ %%1%s [B,BNP,BNE=/,E=" APACHE_CODING_VAR ":%s,L]\n"
			"</ElseIf>\n",
			i->suffix, i->name);
	}
}

/* Vary on every response of an asset with a sibling on disk. */
static void put_vary(FILE *f, const struct kiln_serve *s)
{
	fputs("\n# Vary on every response of an asset that has a sibling.\n"
	      "Header merge Vary Accept-Encoding \"expr=-n reqenv('REDIRECT_" APACHE_CODING_VAR
	      "')",
	      f);
	for (unsigned c = kiln_ncodecs; c-- > 0;)
		if ((s->kept | s->opt->codings) & (1u << c))
			fprintf(f, " || -f '%%{REQUEST_FILENAME}%s'", kiln_codecs[c]->info.suffix);
	fputs("\"\n", f);
}

/* <FilesMatch> denying kiln's own files, and their would-be siblings. */
static void put_own(FILE *f, const struct kiln_serve *s)
{
	fputs("\n# kiln's own files (manifest, snippets, temporary files, journals),\n"
	      "# at any depth: 403.\n"
	      "<FilesMatch \"^(?:",
	      f);
	for (const char *const *o = s->own; o && *o; o++) {
		put_re_string(f, *o);
		fputc('|', f);
	}
	put_re_glob(f, KILN_TEMP_GLOB);
	fputc('|', f);
	put_re_glob(f, KILN_JOURNAL_GLOB);
	fputc('|', f);
	put_re_glob(f, KILN_PART_GLOB);
	fputc('|', f);
	put_re_glob(f, KILN_DCZ_GLOB);
	fputc(')', f);
	put_suffixes(f, (1u << kiln_ncodecs) - 1);
	fputs("\\z\">\n"
	      "    Require all denied\n"
	      "</FilesMatch>\n",
	      f);
}

static void put_usage(FILE *f, const struct kiln_serve *s)
{
	fprintf(f,
		"# Include it inside the <Directory> or the <VirtualHost> that serves\n"
		"# this tree at %s (both work; AllowOverride is not needed):\n"
		"#     Include /path/to/tree/kiln.apache.conf\n"
		"# Modules: rewrite, headers, mime, setenvif and authz_core\n"
		"# (a2enmod rewrite headers; the others are on in Debian's default);\n"
		"# Apache 2.4.57 or later.\n"
		"#\n"
		"# Apache sends each request the smallest sibling its Accept-Encoding\n"
		"# accepts (checked on disk per request), with the source's Content-Type\n"
		"# and Vary: Accept-Encoding; Cache-Control: immutable for the files the\n"
		"# manifest marks so, no-cache for every other file served here.  It\n"
		"# never serves kiln's own files, and turns off mod_deflate and\n"
		"# mod_brotli where it is included (the whole <VirtualHost> when\n"
		"# included there).  Your own per-directory RewriteRules (<Directory>,\n"
		"# .htaccess) do not run for a request answered with a sibling.\n"
		"#\n"
		"# Regenerate it (run kiln) after each deploy and reload Apache\n"
		"# (apache2ctl graceful): until then a new fingerprinted file is served\n"
		"# no-cache.  A stale snippet is still safe: it never points at a\n"
		"# sibling that is gone.\n",
		s->url_prefix);
}

static char *apache_text(const struct kiln_serve *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bool ok;

	if (!f)
		return NULL;
	kiln_snippet_header(f, s, "apache", "# ");
	put_usage(f, s);
	fputs("\n<IfModule !rewrite_module>\n"
	      "    Error \"kiln.apache.conf needs mod_rewrite: a2enmod rewrite\"\n"
	      "</IfModule>\n"
	      "<IfModule !headers_module>\n"
	      "    Error \"kiln.apache.conf needs mod_headers: a2enmod headers\"\n"
	      "</IfModule>\n"
	      "<IfModule !mime_module>\n"
	      "    Error \"kiln.apache.conf needs mod_mime: a2enmod mime\"\n"
	      "</IfModule>\n"
	      "<IfModule !setenvif_module>\n"
	      "    Error \"kiln.apache.conf needs mod_setenvif: a2enmod setenvif\"\n"
	      "</IfModule>\n",
	      f);
	put_own(f, s);
	fputs("\n# Apache compresses nothing here (mod_deflate, mod_brotli).\n"
	      "SetEnvIf Request_URI \"^\" no-gzip=1 no-brotli=1\n",
	      f);
	if ((s->kept | s->opt->codings)) {
		put_selection(f, s);
		put_vary(f, s);
	}
	ok = put_cache_control(f, s);
	if (fclose(f) != 0 || !ok) {
		free(text);
		return NULL;
	}
	return text;
}

static const char *apache_left_out(const struct kiln_serve *s, const struct kiln_serve_asset *a)
{
	const char *cc = kiln_serve_cache_control(s, a);

	if (cc && strcmp(cc, KILN_CACHE_REVALIDATE) != 0 &&
	    re_string_len(a->rel) + 6 > run_room(s))
		return "its path is too long for one expression of the immutable list: "
		       "served no-cache, not immutable";
	return NULL;
}

const struct kiln_server kiln_server_apache = {
	"apache",
	{ { "kiln.apache.conf", apache_text }, { NULL, NULL } },
	apache_left_out,
	"--apache-conf",
	offsetof(struct kiln_options, apache_conf_path),
};
