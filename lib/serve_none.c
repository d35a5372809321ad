/*
 * serve_none.c - kiln_httpd_*() in a kiln built without libmicrohttpd
 * (-DKILN_SERVE=OFF, the default of the static build): `kiln serve` says
 * so and exits.
 */
#include "kiln.h"

#include <stddef.h>

kiln_status kiln_httpd_start(const char *root, const struct kiln_httpd_options *opt,
			     struct kiln_httpd **out, struct kiln_error *err)
{
	(void)root;
	(void)opt;
	*out = NULL;
	err->status = KILN_ERR_INVALID;
	err->errnum = 0;
	err->what = "this kiln was built without kiln serve (libmicrohttpd)";
	err->suffix = "";
	return KILN_ERR_INVALID;
}

void kiln_httpd_info(struct kiln_httpd *h, struct kiln_httpd_info *info)
{
	(void)h;
	*info = (struct kiln_httpd_info){ 0 };
}

kiln_status kiln_httpd_reload(struct kiln_httpd *h, bool if_changed, bool *reloaded,
			      struct kiln_error *err)
{
	(void)h;
	(void)if_changed;
	(void)err;
	*reloaded = false;
	return KILN_OK;
}

void kiln_httpd_stop(struct kiln_httpd *h, unsigned grace_ms)
{
	(void)h;
	(void)grace_ms;
}
