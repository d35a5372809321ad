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
 * built (struct cached), and later ones check the open file (fstat) and
 * queue them.  A response holds its own descriptor: a deploy that replaces
 * files never makes a response mix two versions.
 */
#include "serve.h"

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
/*
 * A connection's memory (MHD_OPTION_CONNECTION_MEMORY_LIMIT): the request
 * line and header fields must fit in about half of it (a request that does
 * not is refused: 431 or 414, or the connection closed), with the header
 * block of the answer.  libmicrohttpd zeroes a connection's whole memory
 * between two requests, and the unused half of its read buffer once a
 * request is read: with 32 KiB that was 48 KiB of memset per request,
 * half of kiln serve's user CPU and more than L1 holds.  16 KiB takes a
 * request of about 7.5 KB (nginx's default limit is 8 KB a line).
 */
#define REQUEST_MEMORY 16384

struct kiln_httpd {
	char *root;
	char *manifest; /* the manifest's path, or NULL: ROOT's own */
	struct kiln_httpd_options opt;
	struct MHD_Daemon *d;
	pthread_mutex_t lock; /* guards table */
	struct kiln_srv_table *table;
	unsigned port;
};

static struct kiln_srv_table *table_get(struct kiln_httpd *h)
{
	struct kiln_srv_table *t;

	pthread_mutex_lock(&h->lock);
	t = h->table;
	kiln_srv_table_ref(t);
	pthread_mutex_unlock(&h->lock);
	return t;
}

/* The fields a request's answer depends on, and what it got (for the
 * access log). */
struct fields {
	unsigned status;
	const char *ce;
	uint64_t bytes;
	char ae[FIELD_MAX], inm[FIELD_MAX];
	bool has_ae, has_inm;
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
static void join(char *buf, bool *has, const char *value)
{
	size_t n = strlen(buf);

	if (*has && n + 2 < FIELD_MAX) {
		memcpy(buf + n, ", ", 3);
		n += 2;
	}
	*has = true;
	snprintf(buf + n, FIELD_MAX - n, "%s", value);
}

static enum MHD_Result one_field(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct fields *f = cls;

	(void)kind;
	if (!value)
		return MHD_YES;
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) == 0)
		join(f->ae, &f->has_ae, value);
	else if (strcasecmp(key, MHD_HTTP_HEADER_IF_NONE_MATCH) == 0)
		join(f->inm, &f->has_inm, value);
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

static void cached_free(void *p)
{
	struct cached *c = p;

	if (c->ok)
		MHD_destroy_response(c->ok);
	if (c->not_modified)
		MHD_destroy_response(c->not_modified);
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
	struct cached *c = atomic_load(&rep->cache), *expect = NULL;
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
	if (rep->size == 0 || !(c = calloc(1, sizeof(*c))) ||
	    !(c->ok = MHD_create_response_from_fd64(rep->size, fd))) {
		free(c);
		close(fd);
		return true; /* the slow path answers */
	}
	c->fd = fd;
	c->mtime = sb.st_mtim.tv_sec;
	atomic_init(&c->checked, coarse_now()); /* open_rep() just checked it */
	kiln_srv_format_date(c->mtime, c->lastmod);
	if (!(c->not_modified = MHD_create_response_from_buffer(0, (void *)"",
								 MHD_RESPMEM_PERSISTENT))) {
		cached_free(c);
		return true;
	}
	MHD_add_response_header(c->ok, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
	if (rep->token)
		MHD_add_response_header(c->ok, MHD_HTTP_HEADER_CONTENT_ENCODING, rep->token);
	MHD_add_response_header(c->ok, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	rep_headers(c->ok, h, a, rep, c->lastmod);
	rep_headers(c->not_modified, h, a, rep, c->lastmod);
	if (!atomic_compare_exchange_strong(&rep->cache, &expect, c)) {
		cached_free(c); /* another request made it first */
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
		if (!(r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT)))
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
 * Answer with the representation of A that request F gets: the delta it
 * can take, else the smallest sibling it accepts, else the source; a
 * representation whose file is not as the manifest says is passed over
 * for the next (the source's: 404 when gone, 503 when of another size).
 * Without a Range, from the representation's cache while it holds.
 */
static enum MHD_Result send_asset(const struct kiln_httpd *h, struct MHD_Connection *c,
				  const struct kiln_srv_table *t, const struct kiln_srv_asset *a,
				  struct fields *f)
{
	unsigned accept = kiln_srv_accepted(f->has_ae ? f->ae : NULL), status = MHD_HTTP_NOT_FOUND;
	const struct kiln_srv_rep *rep = delta_wanted(a, f);
	struct stat sb;
	int fd;

	for (;;) {
		struct cached *k = NULL;
		bool usable = true;

		if (!rep)
			rep = kiln_srv_choose(a, accept);
		if (!f->nrange) {
			/* the cache is the representation's own memo: the table
			 * is otherwise read-only */
			usable = cached_of(h, t, a, (struct kiln_srv_rep *)rep, &k, &status);
			if (k)
				return send_cached(c, rep, k, f);
		}
		if (usable && (fd = open_rep(t, rep, &sb, &status)) >= 0)
			return send_opened(h, c, a, rep, fd, &sb, f);
		if (rep->coding < 0 && !rep->token) /* the source: nothing left */
			return plain(c, f, status, status == MHD_HTTP_NOT_FOUND ? "not found\n"
										 : "changing, try again\n");
		if (rep->coding >= 0)
			accept &= ~(1u << rep->coding);
		rep = NULL;
	}
}

static enum MHD_Result answer(struct kiln_httpd *h, struct MHD_Connection *c, const char *url,
			       struct fields *f)
{
	struct kiln_srv_table *t;
	const struct kiln_srv_asset *a;
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
	t = table_get(h);
	if (kind == 2) {
		memcpy(key + len, "index.html", sizeof("index.html"));
		len += sizeof("index.html") - 1;
	}
	a = kind ? kiln_srv_find(t, key, len) : NULL;
	if (a) {
		ok = send_asset(h, c, t, a, f);
	} else if (kind == 1 && (memcpy(key + len, "/index.html", sizeof("/index.html")),
				 kiln_srv_find(t, key, len + sizeof("/index.html") - 1))) {
		ok = redirect(c, f, url); /* a directory, named without its '/' */
	} else {
		ok = plain(c, f, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	kiln_srv_table_unref(t);
	return ok;
}

/* S, quoted for the access log: bytes outside printable ASCII, '"' and
 * '\\' as \xHH, at most CAP - 1 bytes. */
static size_t log_quote(char *out, size_t cap, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; s && *s && n + 5 < cap; s++) {
		unsigned char b = (unsigned char)*s;
		if (b < 0x20 || b >= 0x7f || b == '"' || b == '\\') {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[b >> 4];
			out[n++] = hex[b & 15];
		} else {
			out[n++] = (char)b;
		}
	}
	out[n] = '\0';
	return n;
}

/* One line per request, written with one write(2) so that lines from
 * several threads never interleave:
 * ADDR [DATE] method="M" uri="U" status=N ce="C" ae="A" ad="D" bytes=B */
static void log_request(const struct kiln_httpd *h, struct MHD_Connection *c,
			const char *method, const char *url, const struct fields *f)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[INET6_ADDRSTRLEN] = "-", date[30], m[64], u[1024], ae[512], ad[128], line[1900];
	int n;

	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, addr,
			  sizeof(addr));
	else if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr,
			  addr, sizeof(addr));
	kiln_srv_format_date(time(NULL), date);
	log_quote(m, sizeof(m), method);
	log_quote(u, sizeof(u), url);
	log_quote(ae, sizeof(ae), f->has_ae ? f->ae : "-");
	log_quote(ad, sizeof(ad), f->ad ? f->ad : "-");
	n = snprintf(line, sizeof(line),
		     "%s [%s] method=\"%s\" uri=\"%s\" status=%u ce=\"%s\" ae=\"%s\" ad=\"%s\" bytes=%llu\n",
		     addr, date, m, u, f->status, f->ce ? f->ce : "-", ae, ad,
		     strcmp(method, MHD_HTTP_METHOD_HEAD) == 0 ? 0ULL : (unsigned long long)f->bytes);
	if (n > 0 && write(h->opt.access_log_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* a log that cannot be written does not stop the serving */
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct kiln_httpd *h = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	struct fields f;
	enum MHD_Result ok;

	(void)version;
	(void)upload_data;
	if (*req_cls == &answered || *req_cls == &corked)
		return MHD_YES;
	if (!*req_cls) {
		/* answered at the next call, once the request is read whole
		 * (answered at the first, pipelined requests went unanswered:
		 * serve_hostile.py) */
		*req_cls = &started;
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
	f.has_ae = f.has_inm = false;
	f.range = f.if_range = f.ims = f.ad = NULL;
	f.nrange = 0;
	f.head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	f.corked = false;
	MHD_get_connection_values(c, MHD_HEADER_KIND, one_field, &f);
	ok = get ? answer(h, c, url, &f)
		 : plain(c, &f, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (h->opt.access_log_fd >= 0)
		log_request(h, c, method, url, &f);
	if (f.corked)
		*req_cls = &corked;
	return ok;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	if (*req_cls == &corked)
		cork(c, 0);
}

/* The URL as it came: decoded by kiln_srv_url_key(), never here. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

kiln_status kiln_httpd_start(const char *root, const struct kiln_httpd_options *opt,
			     struct kiln_httpd **out, struct kiln_error *err)
{
	struct kiln_httpd *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
	kiln_status st;
	const union MHD_DaemonInfo *info;

	*out = NULL;
	if (!h || !(h->root = strdup(root)) ||
	    (opt->manifest_path && !(h->manifest = strdup(opt->manifest_path)))) {
		if (h)
			free(h->root);
		free(h);
		return KILN_ERR_NOMEM;
	}
	h->opt = *opt;
	pthread_mutex_init(&h->lock, NULL);
	if (!h->opt.url_prefix)
		h->opt.url_prefix = "/";
	if (h->opt.url_prefix[0] != '/' || h->opt.url_prefix[strlen(h->opt.url_prefix) - 1] != '/') {
		err->status = st = KILN_ERR_INVALID;
		err->errnum = 0;
		err->what = "--url-prefix: begins and ends with '/'";
		err->suffix = "";
		goto fail;
	}
	if ((st = kiln_srv_table_load(root, h->manifest, h->opt.url_prefix, h->opt.verify, &h->table,
				      err)) != KILN_OK)
		goto fail;
	h->table->cache_free = cached_free;
	if (inet_pton(AF_INET, opt->address, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)opt->port);
	} else if (inet_pton(AF_INET6, opt->address, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)opt->port);
		flags |= MHD_USE_IPv6;
	} else {
		err->status = st = KILN_ERR_INVALID;
		err->errnum = 0;
		err->what = "--listen: not a numeric IPv4 or IPv6 address";
		err->suffix = "";
		goto fail;
	}
	h->d = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_THREAD_POOL_SIZE,
		(unsigned)(opt->threads ? opt->threads : 1), MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)(opt->max_connections ? opt->max_connections : 1024),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(opt->timeout ? opt->timeout : 30),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
		MHD_OPTION_END);
	if (!h->d) {
		err->status = st = KILN_ERR_IO;
		err->errnum = errno;
		err->what = "cannot listen on the --listen address";
		err->suffix = "";
		goto fail;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : opt->port;
	*out = h;
	return KILN_OK;
fail:
	kiln_srv_table_unref(h->table);
	pthread_mutex_destroy(&h->lock);
	free(h->manifest);
	free(h->root);
	free(h);
	return st;
}

void kiln_httpd_info(struct kiln_httpd *h, struct kiln_httpd_info *info)
{
	struct kiln_srv_table *t = table_get(h);

	info->port = h->port;
	info->assets = t->n;
	info->siblings = t->nsiblings;
	info->deltas = t->ndeltas;
	info->missing = t->missing;
	info->codings = t->codings;
	kiln_srv_table_unref(t);
}

kiln_status kiln_httpd_reload(struct kiln_httpd *h, bool if_changed, bool *reloaded,
			      struct kiln_error *err)
{
	struct kiln_srv_table *t, *old;
	kiln_status st;

	*reloaded = false;
	if (if_changed) {
		t = table_get(h);
		bool stale = kiln_srv_table_stale(t, h->root, h->manifest);
		kiln_srv_table_unref(t);
		if (!stale)
			return KILN_OK;
	}
	if ((st = kiln_srv_table_load(h->root, h->manifest, h->opt.url_prefix, h->opt.verify, &t,
				      err)) != KILN_OK)
		return st; /* the old table goes on serving */
	t->cache_free = cached_free;
	pthread_mutex_lock(&h->lock);
	old = h->table;
	h->table = t;
	pthread_mutex_unlock(&h->lock);
	kiln_srv_table_unref(old);
	*reloaded = true;
	return KILN_OK;
}

void kiln_httpd_stop(struct kiln_httpd *h, unsigned grace_ms)
{
	if (!h)
		return;
	if (h->d) {
		MHD_socket s = MHD_quiesce_daemon(h->d); /* no new connections */
		for (unsigned waited = 0; waited < grace_ms; waited += 50) {
			const union MHD_DaemonInfo *i =
				MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
			if (!i || i->num_connections == 0)
				break;
			usleep(50 * 1000);
		}
		MHD_stop_daemon(h->d);
		if (s != MHD_INVALID_SOCKET)
			close(s);
	}
	kiln_srv_table_unref(h->table);
	pthread_mutex_destroy(&h->lock);
	free(h->manifest);
	free(h->root);
	free(h);
}
