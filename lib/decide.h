/*
 * decide.h - which siblings of one file to keep, once each encoding's size is
 * known.  Pure functions; the rules and where they come from are in decide.c.
 */
#ifndef KILN_DECIDE_H
#define KILN_DECIDE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Given the source SIZE in bytes and each coding's encoded size ENC[c]
 * (0 when not requested or not encoded), set KEEP[c] for the siblings to
 * keep (c < kiln_coding_count()).
 */
void kiln_decide(const struct kiln_options *opt, uint64_t size, const size_t enc[],
		 bool keep[]);

#endif
