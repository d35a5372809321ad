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

/*
 * May a dictionary delta of DELTA bytes be kept for a source of SIZE bytes
 * whose kept siblings are SIB[0..nsib) bytes and whose deltas kept so far
 * are KEPT[0..nkept) bytes (all sizes in bytes)?  The same rules as a
 * sibling's, for a representation fewer clients accept than any sibling.
 */
bool kiln_decide_delta(const struct kiln_options *opt, uint64_t size, uint64_t delta,
		       const uint64_t sib[], size_t nsib, const uint64_t kept[], size_t nkept);

#endif
