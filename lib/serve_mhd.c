/*
 * serve_mhd.c - `kiln serve`'s HTTP side: libmicrohttpd parses and frames,
 * the table (serve.h) decides, sendfile(2) sends.
 *
 * libmicrohttpd owns the connection: request line and header parsing,
 * limits (a request whose header block does not fit a connection's memory
 * is refused with 431 or 414), keep-alive, pipelining, HTTP/1.0, HEAD
 * (headers and Content-Length without the body), Date, and the timeouts
 * that close idle or slow connections.  Its URL unescaping is turned off:
 * the raw path is decoded here (serve_negotiate.c), so that an encoded
 * NUL or slash is refused rather than cut or split.
 *
 * A request takes a reference on the current table, so a reload can swap
 * the table under running requests (kiln_httpd_reload()).  A file is
 * opened beneath the tree's top with no link followed and checked against
 * the table (a regular file of the recorded size) before a byte is sent;
 * the first request of a representation keeps it open with its responses
 * built (struct cached; up to the daemon's keep_max of them), and later
 * ones check the open file (fstat) and queue them.  No sibling is sent
 * while its source is not the file the load found (source_state()).  A
 * response holds its own descriptor: a deploy that replaces files never
 * makes a response mix two versions.
 */
#include "serve_mhd.h"

#include "beneath.h"
#include "codec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Longest URL path key; a longer path names no file kiln keeps. */
#define KEY_MAX 4096
/* Longest Accept-Encoding or If-None-Match value read (all fields of the
 * name joined); the rest is ignored. */
#define FIELD_MAX 2048

/* The fields a request's answer depends on, and what it got (for the
 * access log). */
struct fields {
	unsigned status;
	const char *ce;
	uint64_t bytes;
	char ae[FIELD_MAX], inm[FIELD_MAX];
	bool has_ae, has_inm;
	bool ae_cut;          /* AE cut at FIELD_MAX: no weight of it refuses */
	const char *range, *if_range, *ims, *ad;
	unsigned nrange;
	bool head;            /* a HEAD request: no body is sent */
	bool corked;          /* a file body queued on a corked socket */
};

/* What a request's req_cls points at: read (started), answered, answered
 * with a file body on a corked socket (corked). */
static int started, answered, corked;

/*
 * Cork C's socket (ON 1) or uncork it (0), around a response with a file
 * body.  libmicrohttpd sends such a response's header block by itself, with
 * a push (so that a client may act on it while the body is read), then the
 * file with sendfile(2): two packets where one does, and on loopback each
 * packet is the sender's CPU (measured: 4 TCP segments per request instead
 * of 2).  Corked, the header block waits for the file's first bytes and
 * they leave together; on_completed() uncorks once the whole response is
 * written, which pushes out what the cork still holds.  (nginx does the
 * same with tcp_nopush.)  A failure only costs the extra packet.
 */
static void cork(struct MHD_Connection *c, int on)
{
#ifdef TCP_CORK
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (ci)
		(void)setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
#else
	(void)c;
	(void)on;
#endif
}

/* Join VALUE onto BUF (", " between), as a recipient combines a field
 * listed several times (RFC 9110 section 5.3). */
/* Is all of VALUE kept (false: the field was cut at FIELD_MAX, VALUE
 * back to its last whole member, or left out: a member cut in two,
 * "br;q=0" as "br", would say another thing)? */
static bool join(char *buf, bool *has, const char *value)
{
	size_t n = strlen(buf);
	char *comma;

	if (*has) {
		if (n + 2 >= FIELD_MAX)
			return false;
		memcpy(buf + n, ", ", 3);
		n += 2;
	}
	*has = true;
	if ((size_t)snprintf(buf + n, FIELD_MAX - n, "%s", value) < FIELD_MAX - n)
		return true;
	comma = strrchr(buf + n, ',');
	buf[comma ? (size_t)(comma - buf) : n >= 2 ? n - 2 : 0] = '\0';
	return false;
}

static enum MHD_Result one_field(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct fields *f = cls;

	(void)kind;
	if (!value)
		return MHD_YES;
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) == 0)
		f->ae_cut |= !join(f->ae, &f->has_ae, value);
	else if (strcasecmp(key, MHD_HTTP_HEADER_IF_NONE_MATCH) == 0)
		(void)join(f->inm, &f->has_inm, value);
	else if (strcasecmp(key, MHD_HTTP_HEADER_RANGE) == 0) {
		f->range = value;
		f->nrange++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_IF_RANGE) == 0)
		f->if_range = value;
	else if (strcasecmp(key, MHD_HTTP_HEADER_IF_MODIFIED_SINCE) == 0)
		f->ims = value;
	else if (strcasecmp(key, "Available-Dictionary") == 0)
		f->ad = value;
	return MHD_YES;
}

static enum MHD_Result plain(struct MHD_Connection *c, struct fields *f, unsigned status,
			     const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	f->status = status;
	f->bytes = strlen(text);
	return ok;
}

/* Does the request refuse identity?  Not when its Accept-Encoding was cut
 * (a weight read from a cut field may be another: "q=0.5" as "q=0"). */
static bool refuses_identity(const struct fields *f)
{
	return f->has_ae && !f->ae_cut && kiln_srv_identity_refused(f->ae);
}

/* 406: the request refuses identity and accepts none of A's codings
 * (RFC 9110 section 15.5.7), with the Vary the asset's responses carry. */
static enum MHD_Result not_acceptable(struct MHD_Connection *c, const struct kiln_srv_asset *a,
				      struct fields *f)
{
	static const char text[] = "not acceptable: no coding the request accepts\n";
	struct MHD_Response *r =
		MHD_create_response_from_buffer(sizeof(text) - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				a->use_as_dictionary || a->ndeltas ? "Accept-Encoding, Available-Dictionary"
								   : "Accept-Encoding");
	ok = MHD_queue_response(c, MHD_HTTP_NOT_ACCEPTABLE, r);
	MHD_destroy_response(r);
	f->status = MHD_HTTP_NOT_ACCEPTABLE;
	f->bytes = sizeof(text) - 1;
	return ok;
}

static enum MHD_Result redirect(struct MHD_Connection *c, struct fields *f, const char *url)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	size_t n = strlen(url);
	char *loc = malloc(n + 2);
	enum MHD_Result ok = MHD_NO;

	if (r && loc) {
		memcpy(loc, url, n);
		memcpy(loc + n, "/", 2);
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, loc);
		ok = MHD_queue_response(c, MHD_HTTP_MOVED_PERMANENTLY, r);
		f->status = MHD_HTTP_MOVED_PERMANENTLY;
	}
	free(loc);
	if (r)
		MHD_destroy_response(r);
	return ok;
}

/* Never called: a 304 has no body (below). */
static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	(void)pos;
	(void)buf;
	(void)max;
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

/*
 * A 304 response for REP.  libmicrohttpd (0.9.75) sends a 304 with the
 * Content-Length of the response it is given and no body; an empty one
 * would say "Content-Length: 0", which RFC 9110 section 8.6 forbids unless
 * the representation is empty (a 304's Content-Length, if any, is the
 * 200's).  So the response is one of the representation's size whose
 * body is never read.
 */
static struct MHD_Response *not_modified(const struct kiln_srv_rep *rep)
{
	return MHD_create_response_from_callback(rep->size, 4096, no_body, NULL, NULL);
}

/* The headers every answer about representation REP of A carries. */
static void rep_headers(struct MHD_Response *r, const struct kiln_httpd *h,
			const struct kiln_srv_asset *a, const struct kiln_srv_rep *rep,
			const char *lastmod)
{
	if (a->use_as_dictionary || a->ndeltas)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
					"Accept-Encoding, Available-Dictionary");
	else if (a->nreps > 1)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (a->use_as_dictionary)
		MHD_add_response_header(r, "Use-As-Dictionary", a->use_as_dictionary);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, rep->etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_LAST_MODIFIED, lastmod);
	if (h->opt.cache_control)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
					a->immutable ? "public, max-age=31536000, immutable"
						     : "no-cache");
}

/*
 * Open REP of A beneath the top: the descriptor of a regular file of the
 * recorded size (*SB its status), or -1 with *STATUS the answer to give
 * instead (404 when it is gone, 503 when it has other bytes than the
 * manifest says: the tree is being changed under the server).
 */
static int open_rep(const struct kiln_srv_table *t, const struct kiln_srv_rep *rep,
		    struct stat *sb, unsigned *status)
{
	int fd = kiln_beneath_openat(t->topfd, rep->rel, O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		/* not there (or a link, or unreadable) is 404; out of
		 * descriptors or memory is the server's trouble, not the tree's */
		*status = errno == EMFILE || errno == ENFILE || errno == ENOMEM
				  ? MHD_HTTP_SERVICE_UNAVAILABLE
				  : MHD_HTTP_NOT_FOUND;
		return -1;
	}
	if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
		close(fd);
		*status = MHD_HTTP_NOT_FOUND;
		return -1;
	}
	if ((uint64_t)sb->st_size != rep->size) {
		close(fd);
		*status = MHD_HTTP_SERVICE_UNAVAILABLE;
		return -1;
	}
	return fd;
}

/*
 * A representation's file, opened once and kept, with its two responses
 * (200 and 304) built once and queued for every request that gets them
 * (libmicrohttpd counts a response's references, and sends a file
 * response with sendfile(2) from an offset of each connection's own, so one
 * response serves any number of connections at once).  It is used only
 * while the file is still what the manifest says: a regular file of the
 * recorded size that has not been unlinked (a deploy that renames a new
 * file over it unlinks it); otherwise the request takes the slow path,
 * which opens the name again.  That is checked (fstat(2)) at most once a
 * second, as the manifest is polled: a check per request was a tenth of
 * the server's CPU per request, and what a response sends is the open
 * file either way.  (nginx's open_file_cache checks every
 * open_file_cache_valid, 60 s in the serving docs.)
 */
struct cached {
	struct MHD_Response *ok, *not_modified;
	int fd;               /* owned by OK, which closes it */
	_Atomic size_t *kept; /* the daemon's count of them, or NULL */
	time_t mtime;
	char lastmod[30];
	/* the second (CLOCK_MONOTONIC_COARSE) the file was last found right */
	_Atomic time_t checked;
};

/* Now, in whole seconds of a clock that never goes back; read from the
 * vDSO, without a system call. */
static time_t coarse_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0; /* then every request checks */
	return ts.tv_sec;
}

void kiln_srv_cached_free(void *p)
{
	struct cached *c = p;

	if (c->ok)
		MHD_destroy_response(c->ok);
	if (c->not_modified)
		MHD_destroy_response(c->not_modified);
	if (c->kept)
		atomic_fetch_sub(c->kept, 1);
	free(c);
}

static void rep_headers(struct MHD_Response *r, const struct kiln_httpd *h,
			const struct kiln_srv_asset *a, const struct kiln_srv_rep *rep,
			const char *lastmod);

/* REP's cache, made now if it has none (false: it cannot be, the file is
 * not right: *STATUS says what to answer); *OUT is NULL when the file
 * changed since the cache was made (the slow path decides). */
static bool cached_of(const struct kiln_httpd *h, const struct kiln_srv_table *t,
		      const struct kiln_srv_asset *a, struct kiln_srv_rep *rep,
		      struct cached **out, unsigned *status)
{
	struct cached *c = atomic_load(&rep->cache);
	void *expect = NULL;
	struct stat sb;
	int fd;

	*out = NULL;
	if (c) {
		time_t now = coarse_now();
		if (now && atomic_load_explicit(&c->checked, memory_order_relaxed) == now) {
			*out = c;
		} else if (fstat(c->fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink > 0 &&
			   (uint64_t)sb.st_size == rep->size) {
			atomic_store_explicit(&c->checked, now, memory_order_relaxed);
			*out = c;
		}
		return true;
	}
	if ((fd = open_rep(t, rep, &sb, status)) < 0)
		return false;
	if (rep == &a->rep[0] && !kiln_srv_source_proven((struct kiln_srv_asset *)a, fd, &sb)) {
		close(fd); /* another file than the load found: not cached */
		return false;
	}
	/* the daemon's tally, the only field of it a request changes */
	_Atomic size_t *kept = &((struct kiln_httpd *)h)->kept;
	if (atomic_fetch_add(kept, 1) >= h->keep_max) {
		atomic_fetch_sub(kept, 1);
		close(fd);
		return true; /* as many kept open as may be: the slow path */
	}
	if (rep->size == 0 || !(c = calloc(1, sizeof(*c))) ||
	    !(c->ok = MHD_create_response_from_fd64(rep->size, fd))) {
		atomic_fetch_sub(kept, 1);
		free(c);
		close(fd);
		return true; /* the slow path answers */
	}
	c->kept = kept;
	c->fd = fd;
	c->mtime = sb.st_mtim.tv_sec;
	atomic_init(&c->checked, coarse_now()); /* open_rep() just checked it */
	kiln_srv_format_date(c->mtime, c->lastmod);
	if (!(c->not_modified = not_modified(rep))) {
		kiln_srv_cached_free(c);
		return true;
	}
	MHD_add_response_header(c->ok, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
	if (rep->token)
		MHD_add_response_header(c->ok, MHD_HTTP_HEADER_CONTENT_ENCODING, rep->token);
	MHD_add_response_header(c->ok, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	rep_headers(c->ok, h, a, rep, c->lastmod);
	rep_headers(c->not_modified, h, a, rep, c->lastmod);
	if (!atomic_compare_exchange_strong(&rep->cache, &expect, c)) {
		kiln_srv_cached_free(c); /* another request made it first */
		c = expect;
	}
	*out = c;
	return true;
}

/* Answer from REP's cache C: 304 or the whole file. */
static enum MHD_Result send_cached(struct MHD_Connection *c, const struct kiln_srv_rep *rep,
				   struct cached *k, struct fields *f)
{
	long long ims;
	bool fresh = f->has_inm ? kiln_srv_etag_listed(f->inm, rep->etag)
				: f->ims && (ims = kiln_srv_parse_date(f->ims)) >= 0 && k->mtime <= ims;

	f->status = fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK;
	f->ce = fresh ? NULL : rep->token;
	f->bytes = fresh ? 0 : rep->size;
	if (!fresh && !f->head) {
		cork(c, 1);
		f->corked = true;
	}
	return MHD_queue_response(c, f->status, fresh ? k->not_modified : k->ok);
}

/* Answer with REP of A from FD, just opened and checked (*SB its status):
 * 304, 416, 206 or the whole file.  FD is the response's, or closed. */
static enum MHD_Result send_opened(const struct kiln_httpd *h, struct MHD_Connection *c,
				   const struct kiln_srv_asset *a, const struct kiln_srv_rep *rep,
				   int fd, const struct stat *sb, struct fields *f)
{
	struct MHD_Response *r;
	unsigned status = MHD_HTTP_OK;
	char lastmod[30], cr[80];
	uint64_t first = 0, last = 0;
	long long ims;
	int range = 0;
	enum MHD_Result ok;

	kiln_srv_format_date(sb->st_mtim.tv_sec, lastmod);
	if (f->has_inm ? kiln_srv_etag_listed(f->inm, rep->etag)
		       : f->ims && (ims = kiln_srv_parse_date(f->ims)) >= 0 && sb->st_mtim.tv_sec <= ims) {
		close(fd);
		if (!(r = not_modified(rep)))
			return MHD_NO;
		rep_headers(r, h, a, rep, lastmod);
		ok = MHD_queue_response(c, MHD_HTTP_NOT_MODIFIED, r);
		MHD_destroy_response(r);
		f->status = MHD_HTTP_NOT_MODIFIED;
		return ok;
	}
	if (f->nrange == 1 && (!f->if_range || strcmp(f->if_range, rep->etag) == 0))
		range = kiln_srv_range(f->range, rep->size, &first, &last);
	if (range < 0) {
		close(fd);
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)rep->size);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
	} else if (rep->size == 0) {
		close(fd);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else if (range > 0) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)first,
			 (unsigned long long)last, (unsigned long long)rep->size);
		r = MHD_create_response_from_fd_at_offset64(last - first + 1, fd, first);
		status = MHD_HTTP_PARTIAL_CONTENT;
	} else {
		/* libmicrohttpd sends it with sendfile(2) and closes FD */
		r = MHD_create_response_from_fd64(rep->size, fd);
	}
	if (!r) {
		if (range >= 0 && rep->size)
			close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
	if (rep->token && range >= 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, rep->token);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	if (range != 0)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
	rep_headers(r, h, a, rep, lastmod);
	if (range >= 0 && rep->size && !f->head) {
		cork(c, 1);
		f->corked = true;
	}
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	f->status = status;
	f->ce = range >= 0 ? rep->token : NULL;
	f->bytes = range < 0 ? 0 : range > 0 ? last - first + 1 : rep->size;
	return ok;
}

/* The delta request F gets of A (RFC 9842): when it names a dictionary one
 * of A's deltas was made against, lists dcz in Accept-Encoding and asks
 * for no range; else NULL. */
static const struct kiln_srv_rep *delta_wanted(const struct kiln_srv_asset *a,
					       const struct fields *f)
{
	const struct kiln_srv_delta *dz;
	uint8_t dict[32];

	if (!a->ndeltas || !f->ad || f->nrange ||
	    !kiln_srv_lists(f->has_ae ? f->ae : NULL, kiln_codec_dcz.name) ||
	    !kiln_srv_available_dictionary(f->ad, dict))
		return NULL;
	dz = kiln_srv_delta_for(a, dict);
	return dz ? &dz->rep : NULL;
}

/*
 * What A's source is now (KILN_SRV_SOURCE_*), looked at again at most once
 * a second (as the open files are, struct cached): its siblings are sent
 * only while it is the file the load found.
 */
static int source_state(const struct kiln_srv_table *t, struct kiln_srv_asset *a)
{
	int64_t now = coarse_now(), memo = atomic_load_explicit(&a->src_memo, memory_order_relaxed);
	struct stat sb;
	int state;

	if (a->changed)
		return KILN_SRV_SOURCE_CHANGED;
	if (now && memo >> 2 == now)
		return (int)(memo & 3);
	state = kiln_srv_source_now(t, a, &sb);
	atomic_store_explicit(&a->src_memo, now * 4 + state, memory_order_relaxed);
	return state;
}

/* A's source, opened by name beneath T's top (no link followed) and
 * fstat'ed into *SB: its descriptor, or -1 with errno (ENOENT when it is
 * there but not a regular file). */
static int open_source(const struct kiln_srv_table *t, const struct kiln_srv_asset *a,
		       struct stat *sb)
{
	int fd = kiln_beneath_openat(t->topfd, a->rel, O_RDONLY | O_NONBLOCK);

	if (fd >= 0 && (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode))) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* The answer when a source could not be opened (errno says why): gone,
 * for a request that may look for a new table first (GONE not NULL: a
 * deploy may have removed the table's release, answer() loads the new
 * one); else 503 when out of descriptors, 404. */
static enum MHD_Result source_missing(struct MHD_Connection *c, struct fields *f, bool *gone)
{
	if (gone && (errno == ENOENT || errno == ENOTDIR)) {
		*gone = true;
		return MHD_YES;
	}
	return plain(c, f,
		     errno == EMFILE || errno == ENFILE ? MHD_HTTP_SERVICE_UNAVAILABLE
							: MHD_HTTP_NOT_FOUND,
		     "not found\n");
}

/*
 * Answer with A's source as it is now, its bytes no longer (or not known
 * to be) the manifest's: identity only, with an ETag made from its status
 * as nginx makes one ("mtime-size" in hex), so that no cache takes it for
 * the recorded representation.  FD is the source opened and checked (*SB
 * its status), or -1 to open it here.
 */
static enum MHD_Result send_changed(const struct kiln_httpd *h, struct MHD_Connection *c,
				    const struct kiln_srv_table *t,
				    const struct kiln_srv_asset *a, int fd, struct stat *sb,
				    struct fields *f, bool *gone)
{
	struct kiln_srv_rep now = { .coding = -1, .rel = a->rel };

	if (refuses_identity(f)) {
		if (fd >= 0)
			close(fd);
		return not_acceptable(c, a, f);
	}
	if (fd < 0 && (fd = open_source(t, a, sb)) < 0)
		return source_missing(c, f, gone);
	now.size = (uint64_t)sb->st_size;
	snprintf(now.etag, sizeof(now.etag), "\"%llx-%llx\"", (unsigned long long)sb->st_mtim.tv_sec,
		 (unsigned long long)sb->st_size);
	return send_opened(h, c, a, &now, fd, sb, f);
}

/*
 * Answer with the representation of A that request F gets: the delta it
 * can take, else the smallest sibling it accepts, else the source; a
 * representation whose file is not as the manifest says is passed over
 * for the next.  While the source is not the file the load found, none
 * of its siblings: the source as it is (send_changed()), or 404 when it
 * is gone.  Without a Range, from the representation's cache while it
 * holds.
 */
static enum MHD_Result send_asset(const struct kiln_httpd *h, struct MHD_Connection *c,
				  const struct kiln_srv_table *t, struct kiln_srv_asset *a,
				  struct fields *f, bool *gone)
{
	unsigned accept = kiln_srv_accepted(f->has_ae ? f->ae : NULL), status = MHD_HTTP_NOT_FOUND;
	const struct kiln_srv_rep *rep;
	struct stat sb;
	int fd;

	switch (source_state(t, a)) {
	case KILN_SRV_SOURCE_GONE:
		if (gone) {
			*gone = true; /* answer() looks for a new table first */
			return MHD_YES;
		}
		return plain(c, f, MHD_HTTP_NOT_FOUND, "not found\n");
	case KILN_SRV_SOURCE_CHANGED:
		return send_changed(h, c, t, a, -1, &sb, f, gone);
	}
	rep = delta_wanted(a, f);
	for (;;) {
		struct cached *k = NULL;
		bool usable = true;

		if (!rep)
			rep = kiln_srv_choose(a, accept);
		if (rep == &a->rep[0] && refuses_identity(f))
			return not_acceptable(c, a, f); /* nothing acceptable left */
		if (!f->nrange) {
			/* the cache is the representation's own memo: the table
			 * is otherwise read-only */
			usable = cached_of(h, t, a, (struct kiln_srv_rep *)rep, &k, &status);
			if (k)
				return send_cached(c, rep, k, f);
		}
		if (rep == &a->rep[0]) {
			/* the source, opened by name: sent as recorded only when it
			 * is still the file the load found (its replacement may have
			 * the recorded size) */
			if ((fd = open_source(t, a, &sb)) < 0)
				return source_missing(c, f, gone);
			if (!kiln_srv_source_proven(a, fd, &sb)) {
				atomic_store_explicit(&a->src_memo,
						      coarse_now() * 4 + KILN_SRV_SOURCE_CHANGED,
						      memory_order_relaxed);
				return send_changed(h, c, t, a, fd, &sb, f, NULL);
			}
			return send_opened(h, c, a, rep, fd, &sb, f);
		}
		if (usable && (fd = open_rep(t, rep, &sb, &status)) >= 0)
			return send_opened(h, c, a, rep, fd, &sb, f);
		if (rep->coding >= 0)
			accept &= ~(1u << rep->coding);
		rep = NULL;
	}
}

static enum MHD_Result answer(struct kiln_httpd *h, struct MHD_Connection *c, const char *url,
			       struct fields *f)
{
	struct kiln_srv_table *t;
	struct kiln_srv_asset *a;
	char key[KEY_MAX + sizeof("/index.html")];
	size_t len;
	int kind;
	enum MHD_Result ok;

	size_t plen = strlen(h->opt.url_prefix);

	/* the prefix, its last '/' kept as the path's first */
	if (strncmp(url, h->opt.url_prefix, plen) != 0) {
		if (plen > 1 && strlen(url) == plen - 1 && strncmp(url, h->opt.url_prefix, plen - 1) == 0)
			return redirect(c, f, url); /* the prefix without its '/' */
		return plain(c, f, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	kind = kiln_srv_url_key(url + plen - 1, key, KEY_MAX, &len);
	t = kiln_srv_table_get(h);
	if (kind == 2) {
		memcpy(key + len, "index.html", sizeof("index.html"));
		len += sizeof("index.html") - 1;
	}
	/* the asset's memos are its own: the table is otherwise read-only */
	a = kind ? (struct kiln_srv_asset *)kiln_srv_find(t, key, len) : NULL;
	if (a) {
		bool gone = false;
		struct kiln_srv_table *n;

		ok = send_asset(h, c, t, a, f, &gone);
		/* its file gone: a deploy may have removed the table's release
		 * right after it put the new one in place (the poll would see
		 * it only later), so the new table is loaded now, once */
		if (gone && (n = kiln_srv_reload_now(h, t))) {
			kiln_srv_table_unref(t);
			t = n;
			a = (struct kiln_srv_asset *)kiln_srv_find(t, key, len);
		}
		if (gone)
			ok = a ? send_asset(h, c, t, a, f, NULL)
			       : plain(c, f, MHD_HTTP_NOT_FOUND, "not found\n");
	} else if (kind == 1 && (memcpy(key + len, "/index.html", sizeof("/index.html")),
				 kiln_srv_find(t, key, len + sizeof("/index.html") - 1))) {
		ok = redirect(c, f, url); /* a directory, named without its '/' */
	} else {
		ok = plain(c, f, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	kiln_srv_table_unref(t);
	return ok;
}

/* REQUEST's line of the access log (serve.h), written with one write(2)
 * so that lines from several threads never interleave. */
static void log_request(const struct kiln_httpd *h, struct MHD_Connection *c,
			const char *method, const char *url, const char *version,
			const struct fields *f)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct kiln_srv_logged r = {
		method, url, version, f->ce, f->has_ae ? f->ae : NULL, f->ad, f->status,
		strcmp(method, MHD_HTTP_METHOD_HEAD) == 0 ? 0 : f->bytes
	};
	char line[KILN_SRV_LOG_MAX];
	size_t n = kiln_srv_log_line(line, sizeof(line), ci ? ci->client_addr : NULL, time(NULL), &r);

	if (write(h->opt.access_log_fd, line, n) < 0) {
		/* a log that cannot be written does not stop the serving */
	}
}

enum MHD_Result kiln_srv_on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct kiln_httpd *h = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	struct fields f;
	enum MHD_Result ok;

	(void)upload_data;
	if (*req_cls == &answered || *req_cls == &corked)
		return MHD_YES;
	if (!*req_cls) {
		/* answered at the next call, once the request is read whole
		 * (answered at the first, pipelined requests went unanswered:
		 * serve_hostile.py) */
		*req_cls = &started;
		atomic_fetch_add(&h->inflight, 1);
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a body is read and dropped */
		return MHD_YES;
	}
	*req_cls = &answered;
	/* the fields are read once the header block is in; the buffers are
	 * used as strings only after join() */
	f.status = 0;
	f.ce = NULL;
	f.bytes = 0;
	f.ae[0] = f.inm[0] = '\0';
	f.has_ae = f.has_inm = f.ae_cut = false;
	f.range = f.if_range = f.ims = f.ad = NULL;
	f.nrange = 0;
	f.head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	f.corked = false;
	MHD_get_connection_values(c, MHD_HEADER_KIND, one_field, &f);
	ok = get ? answer(h, c, kiln_srv_origin_form(url), &f)
		 : plain(c, &f, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (h->opt.access_log_fd >= 0)
		log_request(h, c, method, url, version, &f);
	if (f.corked)
		*req_cls = &corked;
	return ok;
}

void kiln_srv_on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct kiln_httpd *h = cls;

	(void)toe;
	if (*req_cls == &corked)
		cork(c, 0);
	if (*req_cls)
		atomic_fetch_sub(&h->inflight, 1);
}

