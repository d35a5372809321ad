/*
 * server.h - the table of web servers kiln writes snippets for, and what
 * every snippet is generated from.
 *
 * A snippet makes a server send, for each request of an asset, the smallest
 * sibling whose content-coding the request's Accept-Encoding allows (else
 * the source), with the source's Content-Type, "Vary: Accept-Encoding" on
 * every response of an asset that has a sibling (identity ones too), and the
 * Cache-Control the manifest gives the asset; and it never serves kiln's own
 * files (the manifest, the snippets, temporary files and journals).  The
 * rule for Accept-Encoding (RFC 9110 section 12.5.3): a coding listed with
 * q=0 is refused; listed with any other q (or none) it is accepted; a "*"
 * with q other than 0 accepts every coding not listed; "x-gzip" is gzip.
 * Preference among accepted codings is by size alone (q-values only accept
 * or refuse): the keep rules (decide.c) make sizes fall along the codec
 * table's order, so the latest accepted coding that has a sibling wins.
 *
 * Which siblings exist is checked by the server per request on disk, not
 * listed in the snippet: a snippet left from an earlier deploy can then
 * never point at a sibling that is gone.  What the snippet lists per file
 * is which assets are immutable (see kiln_serve_asset); every other file
 * the snippet serves gets "no-cache", so a file added after the snippet was
 * made is revalidated, never cached on a guess.
 *
 * Dictionary deltas (RFC 9842): every response of an asset marked
 * "dictionary" carries "Use-As-Dictionary: match=PATTERN", the pattern its
 * URL path with the fingerprint replaced by '*' (kiln_serve_match()), and
 * "Vary: Accept-Encoding, Available-Dictionary"; a request whose
 * Available-Dictionary names a dictionary one of the tree's deltas was
 * made against, whose Accept-Encoding lists dcz (not with q=0) and that
 * asks for no Range gets that asset's delta when its file exists (checked
 * on disk, as for the other siblings), with "Content-Encoding: dcz";
 * otherwise the negotiation above applies.  A delta's own URL is never
 * served (404).
 *
 * Adding a server is one snippet_*.c file and one row in kiln_servers[]
 * (servers.c).
 */
#ifndef KILN_SERVER_H
#define KILN_SERVER_H

#include "kiln.h"
#include "record.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One asset of the tree, as the manifest has it. */
struct kiln_serve_asset {
	const char *rel;  /* relative path bytes, '/'-separated, no leading '/' */
	unsigned kept;    /* bit set of (1u << kiln_coding) with a sibling */
	bool immutable;   /* the manifest says why (immutable.h) */
	/* Served with "Use-As-Dictionary" (RFC 9842): fingerprinted (its
	 * decision has a span), and compressible (compressed, or no-gain), so
	 * that a later release's version of it can be sent as a delta. */
	bool dictionary;
	/* Then its family: REL with the fingerprint replaced by '*'
	 * (kiln_family_at()); NULL otherwise. */
	const char *family;
	/* Its dictionary deltas (dcz siblings), NDICTS of them. */
	const struct kiln_dict_record *dicts;
	size_t ndicts;
};

/* Cache-Control values (README.md, "Serving"). */
#define KILN_CACHE_IMMUTABLE "public, max-age=31536000, immutable"
#define KILN_CACHE_REVALIDATE "no-cache"

/* What every snippet is generated from. */
struct kiln_serve {
	const struct kiln_options *opt;
	/* Where the tree is served: opt->url_prefix, begins and ends with '/'.
	 * The URL path of an asset is url_prefix + rel. */
	const char *url_prefix;
	/* Every asset the manifest lists, sorted by rel (strcmp order). */
	const struct kiln_serve_asset *assets;
	size_t n;
	/* Union of the assets' kept bit sets. */
	unsigned kept;
	/* Base names of the files kiln writes into the tree that must never be
	 * served (the manifest's and every snippet's default names: the only
	 * ones kiln's files have in a tree, outputs.h), NULL-terminated.  Temporary files and journals are recognised by the
	 * patterns KILN_TEMP_GLOB and KILN_JOURNAL_GLOB, shard parts and deltas
	 * by KILN_PART_GLOB and KILN_DCZ_GLOB. */
	const char *const *own;
};

/* Names of kiln's temporary files and journals, as fnmatch(3) patterns on a
 * base name (tempfile.c, journal.c). */
#define KILN_TEMP_GLOB ".kiln-*.tmp"
#define KILN_JOURNAL_GLOB ".kiln-journal-*"
/* Shards' partial manifests (shard.c), and dictionary deltas, which a
 * server sends only as a coding of their source (never by their own URL). */
#define KILN_PART_GLOB "kiln-manifest.shard-*.json"
#define KILN_DCZ_GLOB "*.dcz"

/* One file a server's snippet consists of. */
struct kiln_server_file {
	/* Its name at the tree's top (or beside opt->nginx_conf_path's file
	 * for nginx), e.g. "kiln.nginx.conf". */
	const char *name;
	/* Its text for S: a malloc'ed string, NULL when out of memory.
	 * Deterministic: a function of S alone. */
	char *(*text)(const struct kiln_serve *s);
};

struct kiln_server {
	/* As --server names it: "nginx", "caddy", "apache". */
	const char *name;
	/* Its files, the first the one users include; ends with {NULL}. */
	struct kiln_server_file files[3];
	/* Why the snippet leaves asset A out of what it does per file (lists
	 * it as immutable, serves its siblings), and what A gets instead: a
	 * static sentence ("its URL path cannot be written in a Caddyfile:
	 * served no-cache"), or NULL when A is served by every rule.  NULL
	 * when the server leaves nothing out.  The run reports each one as a
	 * warning (KILN_EVENT_SNIPPET_LEFT_OUT). */
	const char *(*left_out)(const struct kiln_serve *s, const struct kiln_serve_asset *a);
	/* The option that puts its first file elsewhere ("--nginx-conf"),
	 * and the kiln_options field (offsetof) that holds that path. */
	const char *option;
	size_t path_field;
};

/* The table, indexed by the bits of kiln_options.servers; at most
 * KILN_MAX_SERVERS rows. */
#define KILN_MAX_SERVERS 8
extern const struct kiln_server *const kiln_servers[];
extern const unsigned kiln_nservers;

/* The path OPT gives server SV's first file (its row's option), or NULL. */
const char *kiln_server_given(const struct kiln_options *opt, unsigned sv);

/*
 * Where file F of server SV goes for a tree at ROOT: ROOT/NAME, or beside
 * the path kiln_server_given() returns when there is one: the first file
 * at that path, each other one named like it with the first file's name
 * replaced ("x.conf" -> "x.http.conf" for nginx's "kiln.nginx.http.conf").
 * Malloc'ed; NULL when out of memory.
 */
char *kiln_server_file_path(const struct kiln_options *opt, const char *root, unsigned sv,
			    unsigned f);

/*
 * Helpers for the snippet_*.c files.
 *
 * kiln_snippet_header(): the header comment every snippet starts with:
 * LEAD ("# ") before each line, then "SERVER snippet generated by kiln
 * VERSION (libraries)", the options that shaped the tree, and a blank
 * comment line; user strings (globs) have control characters escaped.
 *
 * kiln_serve_cache_control(): the Cache-Control value for asset A, or NULL
 * when the snippet sets none (--no-cache-control).
 */
void kiln_snippet_header(FILE *f, const struct kiln_serve *s, const char *server,
			 const char *lead);
const char *kiln_serve_cache_control(const struct kiln_serve *s,
				     const struct kiln_serve_asset *a);

/*
 * kiln_serve_match(): for an asset marked dictionary, the value of its
 * Use-As-Dictionary header, 'match="PATTERN"', PATTERN being the URL path
 * (url_prefix + rel) with the fingerprint replaced by '*'; a malloc'ed
 * string, or NULL when there is none (not a dictionary, a path with bytes
 * a URL pattern would need escaped, or out of memory).
 *
 * kiln_serve_dict_ids(): the distinct dictionaries the tree's deltas were
 * made against, sorted by SHA-256: a malloc'ed array of *N digests (NULL
 * when there are none, or out of memory: then *N is 0 and *NOMEM says
 * which).
 */
char *kiln_serve_match(const struct kiln_serve *s, const struct kiln_serve_asset *a);
uint8_t (*kiln_serve_dict_ids(const struct kiln_serve *s, size_t *n, bool *nomem))[32];

#endif
