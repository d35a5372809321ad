/*
 * decide.c - the keep rules for siblings.
 *
 *  - Each encoding is kept if its size <= max_ratio * source size.
 *  - When any other sibling is kept, gzip is kept too whenever it is smaller
 *    than the source at all.  nginx's gzip_static module adds
 *    "Vary: Accept-Encoding" to every response of an asset that has a .gz,
 *    while the brotli_static module adds it only to the .br responses it
 *    sends; without the .gz, an identity response would carry no Vary and a
 *    shared cache could hand it to a client that wanted br (nginx
 *    documentation, ngx_http_gzip_static_module, gzip_vary).  Gzip-only
 *    clients also get a prebuilt file instead of the original.
 *  - Two kept siblings never have the same size.  nginx's ETag is
 *    "hex(mtime)-hex(size)" of the file it sends, and siblings share the
 *    source's mtime, so equal sizes would give two different bodies one
 *    strong ETag.  The later coding in kiln_coding order (the less widely
 *    supported one) is dropped.
 */
#include "decide.h"

void kiln_decide(const struct kiln_options *opt, uint64_t size,
		 const size_t enc[KILN_NCODINGS], bool keep[KILN_NCODINGS])
{
	bool other = false;

	for (int c = 0; c < KILN_NCODINGS; c++) {
		keep[c] = (opt->codings & (1u << c)) && enc[c] > 0 &&
			  (double)enc[c] <= opt->max_ratio * (double)size;
		if (c != KILN_CODING_GZIP && keep[c])
			other = true;
	}
	if (other && (opt->codings & (1u << KILN_CODING_GZIP)) &&
	    enc[KILN_CODING_GZIP] > 0 && enc[KILN_CODING_GZIP] < size)
		keep[KILN_CODING_GZIP] = true;
	for (int c = 1; c < KILN_NCODINGS; c++)
		for (int d = 0; d < c; d++)
			if (keep[c] && keep[d] && enc[c] == enc[d])
				keep[c] = false;
}
