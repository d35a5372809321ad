/*
 * serve_reload.c - a new table for `kiln serve`, loaded and swapped in
 * between requests: by the poll or SIGHUP (serve_daemon.c), or at once by
 * a request that found its file gone (serve_mhd.c), one at a time.
 */
#include "serve_mhd.h"

/* Load the table again and swap it in, under h->reload_lock. */
kiln_status kiln_srv_load_swap(struct kiln_httpd *h, struct kiln_error *err)
{
	struct kiln_srv_table *t, *old;
	kiln_status st;

	if ((st = kiln_srv_table_load(h->root, h->manifest, h->opt.url_prefix, h->opt.verify, &t,
				      err)) != KILN_OK)
		return st; /* the old table goes on serving */
	t->cache_free = h->cache_free;
	pthread_mutex_lock(&h->lock);
	old = h->table;
	h->table = t;
	pthread_mutex_unlock(&h->lock);
	kiln_srv_table_unref(old);
	atomic_fetch_add(&h->loads, 1);
	return KILN_OK;
}

struct kiln_srv_table *kiln_srv_reload_now(struct kiln_httpd *h, struct kiln_srv_table *t)
{
	struct kiln_srv_table *cur;
	struct kiln_error err;

	pthread_mutex_lock(&h->reload_lock);
	cur = kiln_srv_table_get(h);
	if (cur == t && kiln_srv_table_stale(t, h->root, h->manifest, false) &&
	    kiln_srv_load_swap(h, &err) == KILN_OK) {
		kiln_srv_table_unref(cur);
		cur = kiln_srv_table_get(h);
	}
	pthread_mutex_unlock(&h->reload_lock);
	if (cur == t) {
		kiln_srv_table_unref(cur);
		return NULL;
	}
	return cur;
}
