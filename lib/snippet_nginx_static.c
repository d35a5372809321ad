/*
 * snippet_nginx_static.c - the nginx snippet's static form: nginx's own
 * static modules send the siblings, and the snippet adds only what they
 * do not do.  The form a run gets is decided by kiln_nginx_static_form().
 *
 * When every coding of a run has a static module (the codec table's
 * nginx_static: gzip_static, brotli_static) and the run made no dictionary
 * delta, the modules already do the negotiation server.h asks for, at
 * gzip_static's cost per request instead of the rewrite module's dozen
 * regular expressions and -f tests (snippet_nginx.c): each checks on disk
 * for its sibling of the requested file, and they answer in the reverse
 * of their load order, br before gzip, which under kiln's keep rules
 * (decide.c: a later coding's sibling is kept only when smaller than
 * every earlier one's) is the smallest sibling accepted.  They send the
 * source's Content-Type, an ETag and Last-Modified of the file sent, and
 * with gzip_vary "Vary: Accept-Encoding" whenever the file has a sibling,
 * whether it is sent or not.  What the snippet adds:
 *  - gzip_http_version 1.0 and gzip_proxied any: gzip_static otherwise
 *    leaves HTTP/1.0 and proxied requests (Via) without their sibling;
 *  - kiln's own files are 404, and a sibling asked for by its own URL
 *    while its source is there (a nested location that only URIs ending in
 *    a sibling suffix reach, so the others pay one regular expression);
 *  - Cache-Control, Use-As-Dictionary and the Vary of a dictionary asset
 *    (Available-Dictionary), from maps of $uri read by add_header;
 *  - Accept-Encoding values the modules do not read as server.h's rule
 *    does: they know neither "*" nor "x-gzip", gzip_static stops at a
 *    parameter other than q and only takes a space or a comma before a
 *    token.  A value with any byte but letters, digits, '-', ',' and space,
 *    or with "x-", is odd ($kiln1_ae_odd: no browser sends one); a request
 *    for a file with an odd value is rewritten to an internal location
 *    that has the modules of just the codings the rule accepts
 *    ($kiln1_accepts_C, the negotiating form's maps) in "always" mode.
 * What the modules do differently, and the snippet leaves: a sibling
 * whose source is gone is still sent (the next run removes it), and with
 * several Accept-Encoding fields nginx reads the first (as the negotiating
 * form does).
 * Sources: nginx documentation of ngx_http_gzip_static_module ("always"),
 * ngx_http_gzip_module (gzip_vary, gzip_http_version, gzip_proxied),
 * ngx_http_headers_module, ngx_http_map_module, ngx_http_rewrite_module;
 * ngx_brotli's static module; measured on nginx 1.22 with Debian's
 * libnginx-mod-http-brotli-static.
 */
#include "snippet_nginx.h"

#include "codec.h"

#include <stdlib.h>
#include <string.h>

bool kiln_nginx_static_form(const struct kiln_serve *s)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_codec *k = kiln_codecs[c];
		if (!(s->opt->codings & (1u << c)))
			continue;
		if (!k->nginx_static || (!k->nginx_static_own && !s->opt->nginx_static_modules))
			return false;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->assets[i].ndicts)
			return false;
	return true;
}

/* The run's codings, in table order. */
static bool in_run(const struct kiln_serve *s, unsigned c)
{
	return (s->opt->codings & (1u << c)) != 0;
}

/* The names of the maps a tree's two files share: its Cache-Control map,
 * its Use-As-Dictionary map (when it has a dictionary asset) and the Vary
 * map made from that one. */
struct names {
	char cc[40], uad[40], vary[40], sib[40];
	bool has_uad;
	size_t sib_longest;
};

static bool map_names(const struct kiln_serve *s, struct names *n, char **cc_body, char **uad_body,
		      char **sib_body, size_t *longest, size_t *count)
{
	*cc_body = kiln_nginx_cc_body(s, longest, count);
	*uad_body = *cc_body ? kiln_nginx_uad_body(s) : NULL;
	*sib_body = *uad_body ? kiln_nginx_sib_map(s, n->sib, &n->sib_longest) : NULL;
	if (*sib_body && kiln_nginx_digest_name(s, "cc", *cc_body, n->cc) &&
	    kiln_nginx_digest_name(s, "uad", *uad_body, n->uad) &&
	    kiln_nginx_digest_name(s, "vary", *uad_body, n->vary)) {
		n->has_uad = **uad_body != '\0';
		return true;
	}
	free(*cc_body);
	free(*uad_body);
	free(*sib_body);
	return false;
}

/* The rewrite of a request for a file whose Accept-Encoding is odd, to
 * the internal location of the codings the rule accepts; the maps of $uri
 * read first, while it is still the request's (nginx keeps a map's value
 * for the rest of the request). */
static void put_odd(FILE *f, const struct kiln_serve *s, const struct names *n, const char *indent)
{
	fprintf(f, "%sset $kiln_odd_file \"\";\n"
		   "%sif ($kiln1_ae_odd) { set $kiln_odd_file $request_filename; }\n"
		   "%sif (-f $kiln_odd_file) {\n"
		   "%s    set $kiln_file $request_filename;\n",
		indent, indent, indent, indent);
	fprintf(f, "%s    set $kiln_maps \"%s%s%s%s%s%s\";\n", indent,
		s->opt->cache_control ? "$" : "", s->opt->cache_control ? n->cc : "",
		n->has_uad ? "$" : "", n->has_uad ? n->uad : "", "$",
		n->has_uad ? n->vary : "kiln1_ae_vary");
	/* the accept maps read before the rewrite, whose $2 they would
	 * replace with their own regular expressions' captures */
	fprintf(f, "%s    set $kiln_accepts \"", indent);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (in_run(s, c))
			fprintf(f, "$kiln1_accepts_%u", c);
	fprintf(f, "\";\n%s    rewrite \"(?s)^(.*?)(\\.[^./]*)?\\z\" \"$1$2/.kiln-ae$kiln_accepts$2\" last;\n"
		   "%s}\n",
		indent, indent);
}

/* Does every coding of the run have a static module of nginx's own build? */
static bool own_modules_only(const struct kiln_serve *s)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (in_run(s, c) && !kiln_codecs[c]->nginx_static_own)
			return false;
	return true;
}

static void put_modules(FILE *f, const struct kiln_serve *s, unsigned accepted, const char *on,
			const char *indent)
{
	for (unsigned c = kiln_ncodecs; c-- > 0;)
		if (in_run(s, c))
			fprintf(f, "%s%s %s;\n", indent, kiln_codecs[c]->nginx_static,
				(accepted & (1u << c)) ? on : "off");
}

char *kiln_nginx_static_location(const struct kiln_serve *s)
{
	size_t longest, count, len = 0;
	char *text = NULL, *cc_body, *uad_body, *sib_body;
	struct names n;
	FILE *f;

	if (!map_names(s, &n, &cc_body, &uad_body, &sib_body, &longest, &count))
		return NULL;
	free(cc_body);
	free(uad_body);
	free(sib_body);
	if (!(f = open_memstream(&text, &len)))
		return NULL;
	kiln_snippet_header(f, s, "nginx", "# ");
	fputs("# Include it inside the location {} that serves this tree (or in\n"
	      "# server {} if the server serves nothing else), and include\n"
	      "# kiln.nginx.http.conf of the same run inside http {}.  Every coding\n"
	      "# of this run has a static module of nginx's, which sends a file's\n"
	      "# sibling when the request's Accept-Encoding names its coding and the\n"
	      "# sibling is on disk, the smallest first; nginx never compresses\n"
	      "# anything itself.  The location {} must be the one the URL prefix\n"
	      "# the run was given (--url-prefix) falls in.\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *m = kiln_codecs[c]->nginx_static;
		if (!in_run(s, c) || kiln_codecs[c]->nginx_static_own)
			continue;
		/* Debian's package of it: libnginx-mod-http-brotli-static */
		fprintf(f, "# It needs nginx's %s module loaded (Debian: the package\n"
			   "# libnginx-mod-http-", m);
		for (const char *p = m; *p; p++)
			fputc(*p == '_' ? '-' : *p, f);
		fputs(", with its load_module line).\n", f);
	}
	fputs("# add_header here replaces those inherited from outer blocks: repeat\n"
	      "# yours in the same block.\n\n"
	      "gzip off;\n",
	      f);
	put_modules(f, s, ~0u, "on", "");
	fputs("# Vary: Accept-Encoding on every response of a file that has a\n"
	      "# sibling; the siblings for HTTP/1.0 and proxied requests too.\n"
	      "gzip_vary on;\ngzip_http_version 1.0;\ngzip_proxied any;\n",
	      f);
	if (own_modules_only(s))
		kiln_nginx_put_no_links(f);
	else
		fputs("\n# Links are followed: the brotli_static module finds no sibling\n"
		      "# under disable_symlinks with from= (measured: Debian's 1.0.0~rc),\n"
		      "# and without from= a link on the way to the tree's top (current\n"
		      "# -> releases/N) would refuse the whole tree.  Keep links to outside\n"
		      "# out of the tree, or use kiln's other nginx form or kiln serve.\n",
		      f);
	fputs("\n# kiln's own files are never sent.\n"
	      "if ($uri ~ \"",
	      f);
	kiln_nginx_put_own_regex(f, s);
	fputs("\") { return 404; }\n", f);
	fputs("\n# A source deleted since kiln ran: the modules do not look at it, and\n"
	      "# its siblings are not its own any more: 404.  (Only \"if\" blocks\n"
	      "# that match for a source on disk or to answer: a matching one loses\n"
	      "# the block's try_files.)\n"
	      "set $kiln_gone $request_filename;\n"
	      "if (-f $request_filename) { set $kiln_gone \"$request_filename/.kiln-none\"; }\n",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (in_run(s, c))
			fprintf(f, "if (-f $kiln_gone%s) { return 404; }\n", kiln_codecs[c]->info.suffix);
	fputs("\n", f);
	if (s->opt->cache_control)
		fprintf(f, "add_header Cache-Control $%s;\n", n.cc);
	if (n.has_uad)
		fprintf(f, "add_header Use-As-Dictionary $%s;\n", n.uad);
	fprintf(f, "add_header Vary $%s;\n", n.has_uad ? n.vary : "kiln1_ae_vary");
	fputs("\n# An Accept-Encoding the modules do not read as kiln's rule does\n"
	      "# (\"*\", \"x-gzip\", parameters, tabs): the modules of the codings the\n"
	      "# rule accepts, in an internal location.\n",
	      f);
	put_odd(f, s, &n, "");
	fputs("location ~ \"/\\.kiln-ae[0-9]*(?:\\.[^./]*)?\\z\" {\n    internal;\n", f);
	for (unsigned set = 0; set < (1u << kiln_ncodecs); set++) {
		if (set & ~s->opt->codings)
			continue;
		fputs("    location ~ \"/\\.kiln-ae", f);
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (set & (1u << c))
				fprintf(f, "%u", c);
		fputs("(?:\\.[^./]*)?\\z\" {\n        internal;\n        alias $kiln_file;\n", f);
		put_modules(f, s, set, "always", "        ");
		fputs("    }\n", f);
	}
	fputs("}\n\n# A sibling asked for by its own name while its source is there:\n"
	      "# 404, so that rules written for the source's URL (auth_basic,\n"
	      "# deny) cannot be walked around; and one whose source is gone, or\n"
	      "# any name with a sibling's suffix that is no asset (the map).\n"
	      "location ~ \"(?:",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (c)
			fputc('|', f);
		kiln_nginx_put_regex_literal(f, kiln_codecs[c]->info.suffix);
	}
	fputs(")\\z\" {\n    set $kiln_direct \"\";\n    if ($request_filename ~ \"", f);
	kiln_nginx_put_direct_regex(f);
	fputs("\") { }\n    if (-f $kiln_direct) { return 404; }\n", f);
	kiln_nginx_put_sib_guard(f, n.sib, "    ");
	put_odd(f, s, &n, "    ");
	fputs("}\n\nsendfile on;\ntcp_nopush on;\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

char *kiln_nginx_static_http(const struct kiln_serve *s)
{
	size_t longest, count, len = 0;
	char *text = NULL, *cc_body, *uad_body, *sib_body;
	struct names n;
	FILE *f;

	if (!map_names(s, &n, &cc_body, &uad_body, &sib_body, &longest, &count))
		return NULL;
	if (!(f = open_memstream(&text, &len))) {
		free(cc_body);
		free(uad_body);
		free(sib_body);
		return NULL;
	}
	kiln_nginx_put_http_header(f, s);
	if (!s->opt->cache_control)
		longest = count = 0;
	kiln_nginx_put_hash_sizes(f, s, longest > n.sib_longest ? longest : n.sib_longest, count);
	if (s->opt->cache_control)
		fprintf(f, "\nmap $uri $%s {\n    default \"" KILN_CACHE_REVALIDATE "\";\n%s}\n",
			n.cc, cc_body);
	kiln_nginx_put_sib_map(f, n.sib, sib_body);
	if (n.has_uad)
		fprintf(f, "\n# Dictionary transport (RFC 9842): the Use-As-Dictionary header of\n"
			   "# each fingerprinted asset, and Vary: Available-Dictionary with it.\n"
			   "map $uri $%s {\n    default \"\";\n%s}\n"
			   "map \"$kiln1_ae_odd$%s\" $%s {\n"
			   "    default \"Accept-Encoding, Available-Dictionary\";\n"
			   "    \"\" \"\";\n    \"1\" \"Accept-Encoding\";\n"
			   "    \"~^m\" \"Available-Dictionary\";\n}\n",
			n.uad, uad_body, n.uad, n.vary);
	fputs("\n# An Accept-Encoding value nginx's static modules may read otherwise\n"
	      "# than kiln's rule: a byte but letters, digits, '-', ',' and space, or\n"
	      "# \"x-\" (no browser sends one); and its Vary, which the modules' always\n"
	      "# mode does not send.\n"
	      "map $http_accept_encoding $kiln1_ae_odd {\n"
	      "    default \"\";\n"
	      "    \"~[^ ,0-9A-Za-z-]|[xX]-\" 1;\n}\n"
	      "map $kiln1_ae_odd $kiln1_ae_vary {\n"
	      "    default \"Accept-Encoding\";\n"
	      "    \"\" \"\";\n}\n",
	      f);
	kiln_nginx_put_accept_maps(f);
	free(cc_body);
	free(uad_body);
	free(sib_body);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
