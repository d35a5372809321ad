/*
 * snippet_nginx.h - what the two forms of the nginx snippet share
 * (snippet_nginx.c: the form that negotiates with the rewrite module, and
 * the row; snippet_nginx_static.c: the form that lets nginx's static
 * modules choose).  Both write the same two files, kiln.nginx.conf and
 * kiln.nginx.http.conf, from the same struct kiln_serve.
 */
#ifndef KILN_SNIPPET_NGINX_H
#define KILN_SNIPPET_NGINX_H

#include "server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A map key longer than this is left out (it gets no-cache): nginx's map
 * buckets must hold the longest key. */
#define KILN_NGINX_MAX_KEY 2048

/* The accept maps' variables: ACCEPT_VAR and the coding's index. */
#define KILN_NGINX_ACCEPT_VAR "kiln1_accepts_"
/* In an Accept-Encoding regular expression, after a token: q=0, and any
 * parameters, each up to the member's end. */
#define KILN_NGINX_Q_ZERO ";\\s*q\\s*=\\s*0(?:\\.0{0,3})?\\s*(?:,|$)"
#define KILN_NGINX_ANY_PARAMS "(?:;[^,]*)?(?:,|$)"

/* Append S to F as a double-quoted nginx string that reads back as S,
 * whatever its bytes (a map's keys and constant values). */
void kiln_nginx_put_quoted(FILE *f, const char *s);

/* Append S to F as a PCRE literal inside a double-quoted nginx string. */
void kiln_nginx_put_regex_literal(FILE *f, const char *s);

/* The maps $kiln1_accepts_C, one per coding C of the table: C's index
 * digit when the request's Accept-Encoding accepts C by server.h's rule,
 * else "".  The same text in every file of this kiln (nginx takes a map
 * defined twice alike). */
void kiln_nginx_put_accept_maps(FILE *f);

/* "kiln_" WHAT "_" and 16 hex digits of the SHA-256 of the URL prefix and
 * BODY, into NAME: a map variable's name, the same for the same map.
 * False when out of memory. */
bool kiln_nginx_digest_name(const struct kiln_serve *s, const char *what, const char *body,
			    char name[40]);

/* The entries of the Cache-Control map (the immutable assets' URL paths),
 * a malloc'ed string, with its longest key and count; NULL when out of
 * memory. */
char *kiln_nginx_cc_body(const struct kiln_serve *s, size_t *longest, size_t *count);

/* The entries of the Use-As-Dictionary map (each dictionary asset's URL
 * path to its header value), a malloc'ed string ("" for none); NULL when
 * out of memory. */
char *kiln_nginx_uad_body(const struct kiln_serve *s);

/* map_hash_bucket_size and map_hash_max_size, when the maps' LONGEST key
 * and COUNT (of the largest) need more than nginx's defaults. */
void kiln_nginx_put_hash_sizes(FILE *f, const struct kiln_serve *s, size_t longest, size_t count);

/* The regular expression (inside a double-quoted nginx string) that
 * matches a $uri naming one of kiln's own files. */
void kiln_nginx_put_own_regex(FILE *f, const struct kiln_serve *s);

/*
 * The entries of the map $NAME of $uri that says which URL paths end in a
 * sibling suffix of the table and are not an asset of the manifest (a
 * sibling by its own URL, whether its source is there or deleted since
 * kiln ran): 1, and "" for the assets whose own names end so (a .tar.gz
 * the tree holds as a file of its own).  A malloc'ed string, *LONGEST its
 * longest key; NULL when out of memory.
 */
char *kiln_nginx_sib_map(const struct kiln_serve *s, char name[40], size_t *longest);

/* The header of the http {} file, either form: what it is, where it is
 * included, when to reload nginx. */
void kiln_nginx_put_http_header(FILE *f, const struct kiln_serve *s);

/* The map $NAME with BODY (kiln_nginx_sib_map()), and its comment. */
void kiln_nginx_put_sib_map(FILE *f, const char *name, const char *body);

/* disable_symlinks beneath the tree's top, for the location {} file. */
void kiln_nginx_put_no_links(FILE *f);

/* The guard of the location {} file: a URL path $NAME maps to 1 is 404. */
void kiln_nginx_put_sib_guard(FILE *f, const char *name, const char *indent);

/* The regular expression that matches a file path ending in a sibling
 * suffix of the table, capturing the rest as $kiln_direct. */
void kiln_nginx_put_direct_regex(FILE *f);

/*
 * The static form (snippet_nginx_static.c) is the one S gets when every
 * coding of the run has an nginx static module (codec.h) that the nginx
 * is known to load (part of nginx's own build, or
 * kiln_options.nginx_static_modules), and the run made no dictionary
 * delta.  Its two files' texts, malloc'ed; NULL when out of memory.
 */
bool kiln_nginx_static_form(const struct kiln_serve *s);
char *kiln_nginx_static_location(const struct kiln_serve *s);
char *kiln_nginx_static_http(const struct kiln_serve *s);

#endif
