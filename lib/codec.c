/* codec.c - the table of content-codings, and their names. */
#include "codec.h"

const struct kiln_codec *const kiln_codecs[KILN_NCODINGS] = {
	[KILN_CODING_GZIP] = &kiln_codec_gzip,
	[KILN_CODING_BR] = &kiln_codec_brotli,
};

const char *kiln_coding_name(kiln_coding coding)
{
	return (unsigned)coding < KILN_NCODINGS ? kiln_codecs[coding]->name : "?";
}

const char *kiln_coding_suffix(kiln_coding coding)
{
	return (unsigned)coding < KILN_NCODINGS ? kiln_codecs[coding]->suffix : "";
}
