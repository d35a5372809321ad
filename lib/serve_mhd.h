/*
 * serve_mhd.h - what `kiln serve`'s two libmicrohttpd files share:
 * serve_mhd.c answers requests, serve_daemon.c starts, reloads and stops
 * the daemon that calls it.
 */
#ifndef KILN_SERVE_MHD_H
#define KILN_SERVE_MHD_H

#include "serve.h"

#include <microhttpd.h>
#include <pthread.h>

struct kiln_httpd {
	char *root;
	char *manifest; /* the manifest's path, or NULL: ROOT's own */
	struct kiln_httpd_options opt;
	struct MHD_Daemon *d;
	pthread_mutex_t lock; /* guards table */
	pthread_mutex_t reload_lock; /* one load at a time */
	_Atomic unsigned loads, loads_told; /* tables swapped in, and reported */
	void (*cache_free)(void *cache); /* each new table's (serve_mhd.c) */
	struct kiln_srv_table *table;
	unsigned port;
	/* Files kept open with their responses (struct cached), over every
	 * table, and the most there may be: a quarter of the descriptor
	 * limit, so that the rest answer requests and accept connections
	 * (past it, a representation's file is opened for each request). */
	_Atomic size_t kept;
	size_t keep_max;
	unsigned max_connections; /* --max-connections, or what fits */
	time_t refreshed;     /* when the table was last loaded anew to close
	                         its kept files (the poll's alone) */
	/* Requests read and not yet completed (their responses being sent):
	 * what a stop waits for, not the idle keep-alive connections. */
	_Atomic unsigned inflight;
	/* The manifest file a load failed on (device, inode, size, mtime):
	 * the poll does not read it again until it changes. */
	bool failed;
	struct stat failed_st;
};

/* The current table, with a reference the caller drops. */
static inline struct kiln_srv_table *kiln_srv_table_get(struct kiln_httpd *h)
{
	struct kiln_srv_table *t;

	pthread_mutex_lock(&h->lock);
	t = h->table;
	kiln_srv_table_ref(t);
	pthread_mutex_unlock(&h->lock);
	return t;
}

/* libmicrohttpd's callbacks (MHD_AccessHandlerCallback and
 * MHD_OPTION_NOTIFY_COMPLETED), CLS the struct kiln_httpd. */
enum MHD_Result kiln_srv_on_request(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size, void **req_cls);
void kiln_srv_on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			   enum MHD_RequestTerminationCode toe);

/* For a request that found a file of T gone: when DIR or its manifest is
 * another since T was loaded (a deploy that removed T's release at once),
 * the new table, loaded now if no other request or the poll did it first
 * (they wait for each other), with a reference the caller drops; NULL
 * when T is still current or the load fails. */
struct kiln_srv_table *kiln_srv_reload_now(struct kiln_httpd *h, struct kiln_srv_table *t);

/* Load H's manifest again and swap the new table in, the caller holding
 * h->reload_lock; the old one goes on serving when it fails (*ERR). */
kiln_status kiln_srv_load_swap(struct kiln_httpd *h, struct kiln_error *err);

/* A representation's cache (struct cached), freed with its table. */
void kiln_srv_cached_free(void *p);

#endif
