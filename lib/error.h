/*
 * error.h - filling a kiln_error, the one way every module does it.
 */
#ifndef KILN_ERROR_H
#define KILN_ERROR_H

#include "kiln.h"

/* Set *err to (ST, ERRNUM, WHAT) about the source itself (suffix "") and
 * return ST, so a failing step can end with `return kiln_fail(...)`. */
static inline kiln_status kiln_fail(struct kiln_error *err, kiln_status st, int errnum,
				    const char *what)
{
	err->status = st;
	err->errnum = errnum;
	err->what = what;
	err->suffix = "";
	return st;
}

#endif
