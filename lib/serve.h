/*
 * serve.h - `kiln serve`: a tree's manifest as a table of representations,
 * and the pure decisions of a request against it.
 *
 * The manifest already says everything a static server needs: which URL
 * paths exist (its assets; nothing else is ever sent), each one's media
 * type and Cache-Control rule, which siblings exist with their sizes and
 * digests.  serve_table.c reads it into a table, sorted by path, with one
 * representation per coding (identity first) and its strong ETag made
 * from the digest; a sibling whose file is not on disk with its recorded
 * size is left out of the table at load, and so is an asset whose source
 * is not there; a source not of its recorded size keeps no sibling.  The
 * source is the proof its siblings are its own: the HTTP side looks at it
 * again (kiln_srv_source_now()) before it sends one.  serve_negotiate.c decides, with
 * no I/O, what a request gets: the URL path decoded into a manifest key
 * (or refused), the representation its Accept-Encoding allows, and the
 * conditional and Range answers.  serve_mhd.c is the HTTP side
 * (libmicrohttpd): it parses nothing itself, opens the chosen file beneath
 * the tree's top, checks its size against the table and sends it with
 * sendfile(2).
 *
 * The rule for Accept-Encoding is the snippets' (server.h): q=0 refuses a
 * coding, any other q accepts it, "*" stands for every coding not listed,
 * "x-gzip" is gzip; among accepted siblings the smallest wins (a tie to
 * the later coding of the table); with none, the source is sent, even
 * when identity is refused (RFC 9110 section 12.5.3 lets a server
 * disregard the header rather than answer 406; every snippet does so).
 */
#ifndef KILN_SERVE_H
#define KILN_SERVE_H

#include "kiln.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

/* One representation of an asset: the source (coding -1) or a sibling. */
struct kiln_srv_rep {
	kiln_coding coding;   /* -1: identity */
	const char *token;    /* Content-Encoding value; NULL for identity */
	char *rel;            /* the file, relative to the top; owned */
	uint64_t size;        /* bytes, as the manifest records them */
	char etag[24];        /* "\"" 20 hex digits of its SHA-256 "\"" */
	/* The HTTP side's own state for it (its file kept open and its
	 * responses prebuilt, serve_mhd.c), set once by whichever request
	 * comes first; freed with the table by the table's cache_free. */
	_Atomic(void *) cache;
};

/* A dictionary delta (RFC 9842 dcz) of an asset, against the dictionary
 * whose SHA-256 is DICT: sent when a request's Available-Dictionary names
 * it and its Accept-Encoding lists dcz. */
struct kiln_srv_delta {
	struct kiln_srv_rep rep; /* coding -1, token "dcz" */
	uint8_t dict[32];
};

/* One asset: its URL path is the prefix + REL. */
struct kiln_srv_asset {
	char *rel;            /* manifest key's exact bytes; owned */
	const char *type;     /* media type (static) */
	bool immutable;
	unsigned nreps;       /* rep[0] is identity; the rest by coding */
	struct kiln_srv_rep rep[1 + KILN_MAX_CODINGS];
	/* Use-As-Dictionary's value (match="/family"), for a fingerprinted
	 * compressible asset whose URL pattern needs no escaping; owned, or
	 * NULL.  Its responses, and those of an asset with deltas, vary on
	 * Available-Dictionary too. */
	char *use_as_dictionary;
	struct kiln_srv_delta *deltas; /* owned, sorted by dict */
	size_t ndeltas;
	/* The source as the load found it (opened beneath the top, no link
	 * followed): a source whose bytes are no longer the manifest's has
	 * siblings that are not its own (kiln_srv_source_now()). */
	uint64_t src_dev, src_ino;
	struct timespec src_mtime;
	uint8_t src_sha256[32]; /* the manifest's digest of it */
	/* its ctime (ns) when last proven the manifest's bytes: at load, or
	 * later by its digest (kiln_srv_source_now()); a write in place
	 * changes it whatever it does to the size and mtime */
	_Atomic int64_t src_ctime;
	bool changed;         /* already at load: not of the recorded size (or,
	                         verified, digest): no sibling, no delta */
	/* The HTTP side's memo of the last check of the source: the second
	 * (CLOCK_MONOTONIC_COARSE) times 4 plus what it found (0 as loaded,
	 * 1 changed, 2 gone); 0 before the first. */
	_Atomic int64_t src_memo;
};

/* A file the manifest records that the load did not find as recorded (a
 * source, sibling or delta): looked for again at each poll (a tree copied
 * file by file, rsync, may bring its manifest before the files). */
struct kiln_srv_absent {
	char *rel;            /* owned */
	uint64_t size;
	uint8_t sha256[32];
};

/* A loaded manifest. */
struct kiln_srv_table {
	int topfd;            /* the tree's top, opened at load */
	struct kiln_srv_asset *v; /* sorted by rel, strcmp order */
	size_t n;
	unsigned codings;     /* bit set of the codings some asset has */
	size_t nsiblings;     /* representations besides identity */
	size_t ndeltas;       /* dictionary deltas on disk as recorded */
	size_t missing;       /* recorded files left out: not on disk as recorded */
	size_t nchanged;      /* sources not as recorded: sent as they are */
	struct kiln_srv_absent *absent; /* the files left out (at most
	                         ABSENT_MAX of them); owned */
	size_t nabsent;
	bool verify;          /* loaded with their digests checked */
	/* the manifest file as loaded, to notice a new one */
	uint64_t m_dev, m_ino, m_size;
	struct timespec m_mtime;
	/* the index beside it as it was then (index.h; all 0 when none): a
	 * run that changes no record but the files' status (a touch) writes
	 * only the index, and the table's siblings may come back then */
	uint64_t i_dev, i_ino;
	struct timespec i_mtime;
	atomic_uint refs;     /* requests and the server holding it */
	void (*cache_free)(void *cache); /* for each representation's cache */
};

/*
 * Load the manifest of the tree ROOT into a new table: MANIFEST, or
 * ROOT/kiln-manifest.json when that is NULL (read beneath ROOT, no link
 * followed).  A manifest names the tree it records as kiln writes it
 * (docs/manifest.md: "tree", relative to the manifest's directory; none:
 * that directory), and one that names another tree is refused, as every
 * kiln command refuses it.  The tree is served at URL_PREFIX (begins and
 * ends with '/'; the URL patterns of Use-As-Dictionary start with it).
 * With VERIFY, each file is also read and its SHA-256 compared with the
 * manifest's: a sibling or delta that differs is left out, and so is an
 * asset whose source differs.  KILN_OK with *OUT set (refs 1);
 * KILN_ERR_IO with *ERR (no manifest, top not a directory: errnum says
 * why); KILN_ERR_INVALID with *ERR (not a manifest kiln reads, or another
 * tree's record); KILN_ERR_NOMEM.
 */
kiln_status kiln_srv_table_load(const char *root, const char *manifest, const char *url_prefix,
				bool verify, struct kiln_srv_table **out, struct kiln_error *err);

/* Should T be loaded again: does the manifest file of ROOT (MANIFEST, or
 * ROOT/kiln-manifest.json when NULL) differ (device, inode, size, mtime)
 * from the one T was loaded from, does ROOT name another directory than
 * T's top (a link flipped to a release hard-linked from the last one, whose
 * manifest is the same file), or, with ABSENT, is a file the load did not
 * find as recorded there now (an open(2) each)?  A manifest gone counts as
 * unchanged.  Two stat(2) without ABSENT. */
bool kiln_srv_table_stale(const struct kiln_srv_table *t, const char *root, const char *manifest,
			  bool absent);

/* Take and drop a reference; the last drop frees T.  Thread-safe. */
void kiln_srv_table_ref(struct kiln_srv_table *t);
void kiln_srv_table_unref(struct kiln_srv_table *t);

/*
 * The source of A now against what the load found (its device, inode,
 * size, mtime and ctime, by a new open beneath T's top, no link followed):
 * KILN_SRV_SOURCE_AS_LOADED, _CHANGED (its bytes may not be the
 * manifest's: only the file as it is may be sent, never a sibling), or
 * _GONE (nothing may be sent: 404).  *SB gets its status when not gone.
 * A ctime alone changed (a chmod, a hard link, or bytes written in place
 * with the size and mtime put back) is settled by reading the file: its
 * SHA-256 the manifest's, the new ctime is A's from then on.  Thread-safe;
 * one open(2) and fstat(2), and a read of the file when the ctime moved.
 */
enum { KILN_SRV_SOURCE_AS_LOADED, KILN_SRV_SOURCE_CHANGED, KILN_SRV_SOURCE_GONE };
int kiln_srv_source_now(const struct kiln_srv_table *t, struct kiln_srv_asset *a,
			struct stat *sb);

/* Is SB the source A's load found, or last proved (and A not changed
 * already at load)? */
bool kiln_srv_source_same(const struct kiln_srv_asset *a, const struct stat *sb);

/* kiln_srv_source_same(), or, when only the ctime differs, are the bytes
 * of FD (the source open, SB its status) the manifest's: then SB's ctime
 * is A's from now on.  Thread-safe; reads FD when the ctime moved. */
bool kiln_srv_source_proven(struct kiln_srv_asset *a, int fd, const struct stat *sb);

/* The asset whose rel is KEY[0..len), or NULL.  Thread-safe for readers. */
const struct kiln_srv_asset *kiln_srv_find(const struct kiln_srv_table *t, const char *key,
					   size_t len);

/*
 * Decode URL path RAW (as the request line has it, without the query)
 * into a key of at most CAP - 1 bytes in OUT (NUL-terminated, *LEN bytes).
 * Returns 1 for a file key, 2 for a directory ("/", or a path ending in
 * '/': OUT is the directory's key with its '/', "" for the top), 0 when
 * the path names nothing that may be sent: not starting with '/', a %
 * not followed by two hex digits, an encoded NUL or '/', an empty, "."
 * or ".." component, a component starting with '.' other than
 * ".well-known" (RFC 8615: a dotfile or dot-directory, .git, .env, is
 * never sent even when the manifest lists it), or too long.  Every other
 * byte, decoded or not, is a name byte (a backslash, a control byte:
 * POSIX names may hold them, and kiln serves what it compressed).
 */
int kiln_srv_url_key(const char *raw, char *out, size_t cap, size_t *len);

/* The codings Accept-Encoding value AE (NULL: no header) accepts, as a bit
 * set of (1u << coding); identity is not in it (always the fallback). */
unsigned kiln_srv_accepted(const char *ae);

/* Does Accept-Encoding value AE (NULL: none) refuse identity: it lists
 * "identity;q=0", or "*;q=0" and not identity (RFC 9110 section 12.5.3)?
 * Then a response with no content coding is not acceptable either: 406. */
bool kiln_srv_identity_refused(const char *ae);

/* What the access log says of one request; NULL or "" fields are "-". */
struct kiln_srv_logged {
	const char *method, *url, *version;
	const char *ce;       /* the Content-Encoding sent */
	const char *ae, *ad;  /* the request's Accept-Encoding, Available-Dictionary */
	unsigned status;
	unsigned long long bytes; /* the body's; 0 for none (a HEAD's) */
};

#define KILN_SRV_LOG_MAX 1900

/*
 * R's line of the access log, for a client at ADDR (NULL: "-") at WHEN,
 * into OUT (CAP bytes, KILN_SRV_LOG_MAX holds any), NUL-terminated: its
 * length.  The Common Log Format (NCSA httpd's, which nginx, Apache and
 * log tools read), times in UTC, then kiln's fields:
 *   ADDR - - [DD/Mon/YYYY:HH:MM:SS +0000] "METHOD PATH VERSION" STATUS BYTES
 *   ce="CODING" ae="ACCEPT-ENCODING" ad="AVAILABLE-DICTIONARY"
 * on one line; BYTES "-" for none; bytes outside printable ASCII, '"' and
 * '\\', and in the request line a space, as \\xHH, so that a line is one
 * line and its request three words.  A line longer than CAP is cut, its
 * newline kept.  Thread-safe; no allocation.
 */
size_t kiln_srv_log_line(char *out, size_t cap, const struct sockaddr *addr, time_t when,
			 const struct kiln_srv_logged *r);

/* The origin-form path of request target URL: URL itself, or the path of
 * an absolute-form target ("http://host/path", which a server must accept,
 * RFC 9112 section 3.2.2; "/" when it has none).  Points into URL. */
const char *kiln_srv_origin_form(const char *url);

/* Does Accept-Encoding value AE (NULL: none) list the coding TOKEN by
 * name with a q other than 0 (a "*" does not count: the dictionary
 * codings are offered by name)? */
bool kiln_srv_lists(const char *ae, const char *token);

/* The 32 bytes an Available-Dictionary value AV holds (an RFC 8941 byte
 * sequence, ":" base64 ":" with optional spaces around); false if it is
 * not one of 32 bytes. */
bool kiln_srv_available_dictionary(const char *av, uint8_t out[32]);

/* The delta of A against dictionary DICT, or NULL. */
const struct kiln_srv_delta *kiln_srv_delta_for(const struct kiln_srv_asset *a,
						const uint8_t dict[32]);

/* The representation of A to send for the accepted set ACCEPT. */
const struct kiln_srv_rep *kiln_srv_choose(const struct kiln_srv_asset *a, unsigned accept);

/* Does If-None-Match value INM list ETAG (weak comparison, or "*")? */
bool kiln_srv_etag_listed(const char *inm, const char *etag);

/*
 * The Range header RANGE against a representation of SIZE bytes: 0 to
 * send the whole (no header, not "bytes=", malformed, or more than one
 * range: a server may ignore Range), 1 for one satisfiable range
 * [*FIRST, *LAST], -1 when unsatisfiable (416).
 */
int kiln_srv_range(const char *range, uint64_t size, uint64_t *first, uint64_t *last);

/* An HTTP-date (IMF-fixdate, RFC 9110 section 5.6.7) as seconds since the
 * epoch; -1 if S is not one. */
long long kiln_srv_parse_date(const char *s);

/* T as an IMF-fixdate into OUT (at least 30 bytes). */
void kiln_srv_format_date(long long t, char out[30]);

#endif
