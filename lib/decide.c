/*
 * decide.c - the keep rules for siblings.  Codings are taken in the codec
 * table's order, which is their order of preference: the first is the one
 * every client accepts (gzip), the others are smaller but less widely
 * accepted.
 *
 *  - Each encoding is kept if its size <= max_ratio * source size, and is
 *    strictly smaller than the source.
 *  - When any other sibling is kept, the first coding's is kept too whenever
 *    it is smaller than the source at all.  nginx's gzip_static module adds
 *    "Vary: Accept-Encoding" to every response of an asset that has a .gz,
 *    while the brotli_static module adds it only to the .br responses it
 *    sends; without the .gz, an identity response would carry no Vary and a
 *    shared cache could hand it to a client that wanted br (nginx
 *    documentation, ngx_http_gzip_static_module, gzip_vary).  Clients that
 *    accept only the first coding also get a prebuilt file.
 *  - No two of {source, kept siblings} have the same size.  nginx's ETag is
 *    "hex(mtime)-hex(size)" of the file it sends, and siblings share the
 *    source's mtime, so equal sizes would give two different bodies one
 *    strong ETag, and a conditional request for one would be answered 304
 *    for the other (RFC 9110 section 8.8.3).  A sibling as large as its
 *    source is never kept (first rule); of two siblings of equal size, the
 *    later coding is dropped.
 */
#include "decide.h"

#include "codec.h"

void kiln_decide(const struct kiln_options *opt, uint64_t size, const size_t enc[],
		 bool keep[])
{
	bool other = false;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		keep[c] = (opt->codings & (1u << c)) && enc[c] > 0 && (uint64_t)enc[c] < size &&
			  (double)enc[c] <= opt->max_ratio * (double)size;
		if (c != 0 && keep[c])
			other = true;
	}
	if (other && (opt->codings & 1u) && enc[0] > 0 && (uint64_t)enc[0] < size)
		keep[0] = true;
	for (unsigned c = 1; c < kiln_ncodecs; c++)
		for (unsigned d = 0; d < c; d++)
			if (keep[c] && keep[d] && enc[c] == enc[d])
				keep[c] = false;
}
