/*
 * fuzz_bundler.c - libFuzzer target for the bundlers' manifests
 * (bundler.c), which come from outside: any bytes read as one must give
 * KILN_OK or KILN_ERR_INVALID (or NOMEM), and every proof it gives a span
 * must be a candidate token of its path.
 */
#include "bundler.h"
#include "fingerprint.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_proofs p = { 0 };
	const char *format = NULL;
	kiln_status st = kiln_bundler_read((const char *)data, size, &p, &format);

	if (st != KILN_OK && st != KILN_ERR_INVALID && st != KILN_ERR_NOMEM)
		abort();
	if (st == KILN_OK && !format)
		abort();
	for (size_t i = 0; i < p.n; i++)
		if (!p.v[i].path || !*p.v[i].path ||
		    (p.v[i].len && !kiln_token_at_min(p.v[i].path, p.v[i].start, p.v[i].len,
						KILN_TOKEN_MIN_BUNDLER)))
			abort(); /* a proof of what is no token */
	kiln_proofs_free(&p);
	return 0;
}
