/*
 * snippet_nginx.c - the nginx row: kiln.nginx.conf, to include inside the
 * location {} that serves the tree, and kiln.nginx.http.conf, to include
 * inside http {}; in one of two forms.  A run whose codings all have a
 * static module nginx is known to load, and that made no dictionary
 * delta, gets the static form (snippet_nginx_static.c); every other run
 * gets the form below, which negotiates.  What both write alike is in
 * snippet_nginx_maps.c.
 *
 * nginx has no module in Debian that sends a zstd sibling or a delta (and
 * its static modules ignore "*" and "x-gzip"); so this form negotiates
 * with the rewrite module alone, the same way for every coding of the
 * codec table (server.h states the rule):
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
#include "snippet_nginx.h"

#include "codec.h"
#include "hash.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* --- the http {} file ---------------------------------------------------- */

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
		kiln_nginx_put_regex_literal(f, enc);
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
	m->uad = kiln_nginx_uad_body(s);
	m->dict = dict_body(s);
	if (m->uad && m->dict && kiln_nginx_digest_name(s, "uad", m->uad, m->uad_name) &&
	    kiln_nginx_digest_name(s, "dict", m->dict, m->dict_name))
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


static char *negotiating_http(const struct kiln_serve *s)
{
	size_t longest, count, sib_longest, len = 0;
	char name[40], sib_name[40], *text = NULL, *body = kiln_nginx_cc_body(s, &longest, &count);
	char *sib = body ? kiln_nginx_sib_map(s, sib_name, &sib_longest) : NULL;
	struct dict_maps dm;
	bool dm_ok = sib && dict_maps(s, &dm);
	FILE *f = dm_ok && kiln_nginx_digest_name(s, "cc", body, name) ? open_memstream(&text, &len) : NULL;

	if (!f) {
		free(sib);
		if (dm_ok) {
			free(dm.uad);
			free(dm.dict);
		}
		free(body);
		return NULL;
	}
	kiln_nginx_put_http_header(f, s);
	if (!s->opt->cache_control)
		longest = count = 0;
	kiln_nginx_put_hash_sizes(f, s, longest > sib_longest ? longest : sib_longest, count);
	fprintf(f, "\nmap $uri $%s {\n    default \"" KILN_CACHE_REVALIDATE "\";\n%s}\n", name,
		s->opt->cache_control ? body : "");
	kiln_nginx_put_sib_map(f, sib_name, sib);
	fputs("\n# A request with a Range header: \"r\" (it gets the source, below).\n"
	      "map $http_range $kiln1_ranged {\n    default r;\n    \"\" \"\";\n}\n",
	      f);
	kiln_nginx_put_accept_maps(f);
	put_dict_maps(f, &dm);
	free(dm.uad);
	free(dm.dict);
	free(body);
	free(sib);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* --- the location {} file ------------------------------------------------ */

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
	fprintf(f, "if ($http_accept_encoding ~* \"(?:^|,)\\s*%s\\s*" KILN_NGINX_ANY_PARAMS
		   "\") { set $kiln_dcz 1; }\n", tok);
	fprintf(f, "if ($http_accept_encoding ~* \"(?:^|,)\\s*%s\\s*" KILN_NGINX_Q_ZERO
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

static void put_negotiation(FILE *f, const char *dict_name, const char *sib_name)
{
	fputs("# A sibling asked for by its own name while its source is there:\n"
	      "# 404, so that rules written for the source's URL (auth_basic,\n"
	      "# deny) cannot be walked around; and one whose source is gone, or\n"
	      "# any name with a sibling's suffix that is no asset (the map).\n"
	      "# (A named capture: nginx escapes numbered ones, spaces and all.)\n"
	      "set $kiln_direct \"\";\n"
	      "if ($request_filename ~ \"",
	      f);
	kiln_nginx_put_direct_regex(f);
	fputs("\") { }\n"
	      "if (-f $kiln_direct) { return 404; }\n",
	      f);
	kiln_nginx_put_sib_guard(f, sib_name, "");
	fputs("\n", f);
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
	fputs("\n# The smallest accepted sibling: the latest coding both have.  Not\n"
	      "# for a Range request (\"r\" first), which gets the source: nginx\n"
	      "# would answer an unsatisfiable range of a sibling with a 416 that\n"
	      "# carries the sibling's Content-Encoding (add_header runs before the\n"
	      "# range check), and dcz is not sent with a Range either.\n"
	      "set $kiln_pick \"$kiln1_ranged$kiln_have:",
	      f);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		fprintf(f, "$" KILN_NGINX_ACCEPT_VAR "%u", c);
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

static char *negotiating_location(const struct kiln_serve *s)
{
	size_t longest, count, sib_longest, len = 0;
	char name[40], sib_name[40], *text = NULL, *body = kiln_nginx_cc_body(s, &longest, &count);
	char *sib = body ? kiln_nginx_sib_map(s, sib_name, &sib_longest) : NULL;
	struct dict_maps dm;
	bool dm_ok = sib && dict_maps(s, &dm);
	FILE *f = dm_ok && kiln_nginx_digest_name(s, "cc", body, name) ? open_memstream(&text, &len) : NULL;

	free(body);
	free(sib);
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
	      "gzip off;\n",
	      f);
	kiln_nginx_put_no_links(f);
	fputs("\n# kiln's own files are never sent.\n"
	      "if ($uri ~ \"",
	      f);
	kiln_nginx_put_own_regex(f, s);
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
	put_negotiation(f, dm.dict_name, sib_name);
	fputs("\nsendfile on;\ntcp_nopush on;\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The form this run gets (snippet_nginx.h). */
static char *location_text(const struct kiln_serve *s)
{
	return kiln_nginx_static_form(s) ? kiln_nginx_static_location(s) : negotiating_location(s);
}

static char *http_text(const struct kiln_serve *s)
{
	return kiln_nginx_static_form(s) ? kiln_nginx_static_http(s) : negotiating_http(s);
}

static const char *nginx_left_out(const struct kiln_serve *s, const struct kiln_serve_asset *a)
{
	if (kiln_serve_cache_control(s, a) && a->immutable &&
	    strlen(s->url_prefix) + strlen(a->rel) > KILN_NGINX_MAX_KEY)
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
