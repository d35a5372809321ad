/*
 * decide.c - the keep rules for siblings.  Codings are taken in the codec
 * table's order: the first is the one every client accepts (gzip), each
 * later one is accepted by fewer clients and usually smaller.
 *
 *  - Each encoding is kept if its size <= max_ratio * source size, and is
 *    strictly smaller than the source.
 *  - When any other sibling is kept, the first coding's is kept too whenever
 *    it is smaller than the source at all: clients that accept only the
 *    first coding (gzip) then get a prebuilt file too, and never the
 *    identity bytes while a smaller representation exists.
 *  - A later coding's sibling is kept only if it is strictly smaller than
 *    every kept sibling of an earlier coding.  Servers pick a precompressed
 *    file by a fixed order of codings, not by size: nginx's brotli_static
 *    answers before gzip_static, Caddy's `precompressed zstd br gzip` tries
 *    them as listed.  With siblings whose sizes fall along the table's
 *    order, that fixed order, latest coding first, always gives a client
 *    the smallest sibling it accepts, and kiln's own snippets (server.h)
 *    rely on it too.  (The .zst beside a .br is therefore kept only when it
 *    is smaller than the .br.)
 *  - So no two of {source, kept siblings} have the same size.  nginx's ETag
 *    is "hex(mtime)-hex(size)" of the file it sends, and siblings share the
 *    source's mtime, so equal sizes would give two different bodies one
 *    strong ETag, and a conditional request for one would be answered 304
 *    for the other (RFC 9110 section 8.8.3).
 *  - A dictionary delta (RFC 9842) is accepted by fewer clients than any
 *    sibling, and only by one that holds its dictionary: it is kept when
 *    it passes the first rule and is strictly smaller than every kept
 *    sibling (else a client offering the dictionary would get more bytes
 *    than a sibling it also accepts), and never the size of another kept
 *    delta of the same source (the ETag rule above).
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
			if (keep[c] && keep[d] && enc[c] >= enc[d])
				keep[c] = false;
}

bool kiln_decide_delta(const struct kiln_options *opt, uint64_t size, uint64_t delta,
		       const uint64_t sib[], size_t nsib, const uint64_t kept[], size_t nkept)
{
	if (delta >= size || (double)delta > opt->max_ratio * (double)size)
		return false;
	for (size_t i = 0; i < nsib; i++)
		if (delta >= sib[i])
			return false;
	for (size_t i = 0; i < nkept; i++)
		if (kept[i] == delta)
			return false;
	return true;
}
