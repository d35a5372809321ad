/*
 * serve_daemon.c - `kiln serve`'s libmicrohttpd daemon: started on the
 * table of the manifest, given a new table between requests
 * (kiln_httpd_reload()), stopped after its open responses (server.h and
 * kiln.h's kiln_httpd_*).  The requests are serve_mhd.c's.
 */
#include "serve_mhd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * A connection's memory (MHD_OPTION_CONNECTION_MEMORY_LIMIT): the request
 * line and header fields must fit in about half of it (a request that does
 * not is refused: 431 or 414, or the connection closed), with the header
 * block of the answer.  libmicrohttpd zeroes a connection's whole memory
 * between two requests, and the unused half of its read buffer once a
 * request is read: with 32 KiB that was 48 KiB of memset per request,
 * half of kiln serve's user CPU and more than L1 holds.  16 KiB takes one
 * field of about 7.9 KB, about 15 KB of fields in all (measured; nginx's
 * defaults take 8 KB a line, 32 KB in all: docs/serving.md).
 */
#define REQUEST_MEMORY 16384

/* The URL as it came: decoded by kiln_srv_url_key(), never here. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

/*
 * The descriptors H may use, by the process's limit: a quarter for files
 * kept open (h->keep_max), a reserve for libmicrohttpd's own (an epoll
 * and a pipe per thread), the tables' tops and the manifest, and two per
 * connection (its socket, and the file of a response not kept open); so
 * --max-connections is lowered to what is left, and libmicrohttpd stops
 * accepting before accept(2) can fail with EMFILE (it then retried at
 * once, a core spinning, until a descriptor came free).
 */
static unsigned fit_descriptors(struct kiln_httpd *h, unsigned connections, unsigned threads)
{
	struct rlimit rl;
	size_t limit = 1024, reserve = 64 + 4 * (size_t)threads;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		limit = (size_t)rl.rlim_cur;
	else if (rl.rlim_cur == RLIM_INFINITY)
		limit = 1u << 20;
	h->keep_max = limit / 4;
	if (limit < h->keep_max + reserve + 2)
		return 1;
	if ((limit - h->keep_max - reserve) / 2 < connections)
		connections = (unsigned)((limit - h->keep_max - reserve) / 2);
	return connections;
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
	pthread_mutex_init(&h->reload_lock, NULL);
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
	h->cache_free = kiln_srv_cached_free;
	h->table->cache_free = kiln_srv_cached_free;
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
	h->max_connections = fit_descriptors(h, opt->max_connections ? opt->max_connections : 1024,
					     opt->threads ? opt->threads : 1);
	h->d = MHD_start_daemon(
		flags, 0, NULL, NULL, kiln_srv_on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_THREAD_POOL_SIZE,
		(unsigned)(opt->threads ? opt->threads : 1), MHD_OPTION_CONNECTION_LIMIT,
		h->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, opt->max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(opt->timeout ? opt->timeout : 30),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_NOTIFY_COMPLETED, kiln_srv_on_completed, h, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
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
	pthread_mutex_destroy(&h->reload_lock);
	free(h->manifest);
	free(h->root);
	free(h);
	return st;
}

void kiln_httpd_info(struct kiln_httpd *h, struct kiln_httpd_info *info)
{
	struct kiln_srv_table *t = kiln_srv_table_get(h);

	info->port = h->port;
	info->assets = t->n;
	info->siblings = t->nsiblings;
	info->deltas = t->ndeltas;
	info->missing = t->missing;
	info->max_connections = h->max_connections;
	info->changed = t->nchanged;
	info->codings = t->codings;
	kiln_srv_table_unref(t);
}

/* How often, at most, the table is loaded anew to close the files kept
 * open when there are as many as may be (h->keep_max): a load reads the
 * manifest and opens every source (about a second at 100,000 files). */
#define REFRESH_SECONDS 10

static time_t coarse_seconds(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0 ? ts.tv_sec : 0;
}

/* The manifest file's status now (its path: --manifest, or DIR's own). */
static bool manifest_stat(const struct kiln_httpd *h, struct stat *st)
{
	char *p = h->manifest ? strdup(h->manifest)
			      : malloc(strlen(h->root) + sizeof("/" KILN_MANIFEST_NAME));
	bool ok;

	if (!p)
		return false;
	if (!h->manifest)
		sprintf(p, "%s/%s", h->root, KILN_MANIFEST_NAME);
	ok = stat(p, st) == 0;
	free(p);
	return ok;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

kiln_status kiln_httpd_reload(struct kiln_httpd *h, bool if_changed, bool *reloaded,
			      struct kiln_error *err)
{
	kiln_status st = KILN_OK;
	bool stale = true;

	struct stat now;
	bool have = manifest_stat(h, &now);

	pthread_mutex_lock(&h->reload_lock);
	if (if_changed) {
		struct kiln_srv_table *t = kiln_srv_table_get(h);
		stale = kiln_srv_table_stale(t, h->root, h->manifest, true);
		kiln_srv_table_unref(t);
		/* a manifest that failed to load is not read again, every
		 * second, until it changes (it may be large) */
		if (stale && h->failed && have && same_file(&now, &h->failed_st))
			stale = false;
	}
	if (stale) {
		st = kiln_srv_load_swap(h, err);
		h->failed = st != KILN_OK && have;
		if (h->failed)
			h->failed_st = now;
	} else if (if_changed && atomic_load(&h->kept) >= h->keep_max &&
		   coarse_seconds() - h->refreshed >= REFRESH_SECONDS &&
		   kiln_srv_load_swap(h, err) == KILN_OK) {
		/* every file it may keep open is: the same manifest loaded
		 * anew, so the old table's files close once its requests are
		 * done and the files asked for from now on are kept (the ones
		 * asked for first, maybe a scan of every file, went on
		 * holding the places) */
		h->refreshed = coarse_seconds();
		atomic_fetch_add(&h->loads_told, 1); /* not a new manifest */
	}
	/* a load a request made since counts too */
	*reloaded = atomic_exchange(&h->loads_told, atomic_load(&h->loads)) != atomic_load(&h->loads);
	pthread_mutex_unlock(&h->reload_lock);
	return st;
}


void kiln_httpd_stop(struct kiln_httpd *h, unsigned grace_ms)
{
	if (!h)
		return;
	if (h->d) {
		MHD_socket s = MHD_quiesce_daemon(h->d); /* no new connections */
		/* the responses being sent finish; an idle keep-alive connection
		 * is not waited for (it waited the whole grace) */
		for (unsigned waited = 0; waited < grace_ms && atomic_load(&h->inflight);
		     waited += 50)
			usleep(50 * 1000);
		MHD_stop_daemon(h->d);
		if (s != MHD_INVALID_SOCKET)
			close(s);
	}
	kiln_srv_table_unref(h->table);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->reload_lock);
	free(h->manifest);
	free(h->root);
	free(h);
}
