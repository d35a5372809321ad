/*
 * codec.c - the table of content-codings, and what is derived from it.
 *
 * A row per coding, in order of preference (see kiln_coding in kiln.h).  The
 * rows themselves live in codec_*.c; this file knows them only by the
 * extern names below.
 */
#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern const struct kiln_codec kiln_codec_gzip;
extern const struct kiln_codec kiln_codec_brotli;
extern const struct kiln_codec kiln_codec_zstd;

const struct kiln_codec *const kiln_codecs[] = {
	&kiln_codec_gzip,
	&kiln_codec_brotli,
	&kiln_codec_zstd,
};

const unsigned kiln_ncodecs = sizeof(kiln_codecs) / sizeof(kiln_codecs[0]);

_Static_assert(sizeof(kiln_codecs) / sizeof(kiln_codecs[0]) == KILN_NCODECS,
	       "KILN_NCODECS is not the number of rows");
_Static_assert(sizeof(kiln_codecs) / sizeof(kiln_codecs[0]) <= KILN_MAX_CODINGS,
	       "more codings than KILN_MAX_CODINGS");

/* Suffixes of codings a later kiln may write (see codec.h), NULL-ended. */
static const char *const reserved_suffixes[] = { ".dcb", NULL };

unsigned kiln_coding_count(void)
{
	return kiln_ncodecs;
}

const struct kiln_coding_info *kiln_coding_info(kiln_coding c)
{
	return c >= 0 && (unsigned)c < kiln_ncodecs ? &kiln_codecs[c]->info : NULL;
}

kiln_coding kiln_coding_find(const char *s)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (strcmp(s, kiln_codecs[c]->info.name) == 0 ||
		    strcmp(s, kiln_codecs[c]->info.word) == 0)
			return (kiln_coding)c;
	return -1;
}

const char *kiln_coding_name(kiln_coding c)
{
	const struct kiln_coding_info *i = kiln_coding_info(c);

	return i ? i->name : "?";
}

const char *kiln_coding_suffix(kiln_coding c)
{
	const struct kiln_coding_info *i = kiln_coding_info(c);

	return i ? i->suffix : "";
}

void kiln_codec_recipe(const struct kiln_options *opt, kiln_coding c, uint64_t size,
		       char out[KILN_RECIPE_MAX])
{
	bool streamed = opt->stream_size && size >= opt->stream_size;

	kiln_codecs[c]->recipe(opt->level[c], opt->extra[c], streamed, out);
}

/* The length of NAME without SUFFIX, if it ends in it and is longer; 0. */
static size_t strip(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && memcmp(name + n - k, suffix, k) == 0 ? n - k : 0;
}

kiln_coding kiln_sibling_coding(const char *name)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (strip(name, kiln_codecs[c]->info.suffix))
			return (kiln_coding)c;
	return -1;
}

size_t kiln_sibling_base_len(const char *name)
{
	size_t n;

	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if ((n = strip(name, kiln_codecs[c]->info.suffix)))
			return n;
	if ((n = kiln_dict_sibling_base_len(name)))
		return n;
	if ((n = strip(name, kiln_codec_dcz.suffix)))
		return n;
	for (size_t i = 0; reserved_suffixes[i]; i++)
		if ((n = strip(name, reserved_suffixes[i])))
			return n;
	return 0;
}

bool kiln_is_sibling_extension(const char *ext)
{
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (strcasecmp(ext, kiln_codecs[c]->info.suffix + 1) == 0)
			return true;
	if (strcasecmp(ext, kiln_codec_dcz.suffix + 1) == 0)
		return true;
	for (size_t i = 0; reserved_suffixes[i]; i++)
		if (strcasecmp(ext, reserved_suffixes[i] + 1) == 0)
			return true;
	return false;
}

size_t kiln_dict_sibling_base_len(const char *name)
{
	size_t n = strip(name, kiln_codec_dcz.suffix);

	if (n <= KILN_DICT_ID_HEX + 1)
		return 0;
	n -= KILN_DICT_ID_HEX;
	for (size_t i = 0; i < KILN_DICT_ID_HEX; i++)
		if (!((name[n + i] >= '0' && name[n + i] <= '9') ||
		      (name[n + i] >= 'a' && name[n + i] <= 'f')))
			return 0;
	return name[n - 1] == '.' ? n - 1 : 0;
}

void kiln_dict_id(const uint8_t dict_sha[32], char out[KILN_DICT_ID_HEX + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < KILN_DICT_ID_HEX / 2; i++) {
		out[2 * i] = hex[dict_sha[i] >> 4];
		out[2 * i + 1] = hex[dict_sha[i] & 15];
	}
	out[KILN_DICT_ID_HEX] = '\0';
}

char *kiln_dict_sibling_path(const char *root, const char *rel, const uint8_t dict_sha[32])
{
	char id[KILN_DICT_ID_HEX + 1];
	size_t n = strlen(root) + strlen(rel) + KILN_DICT_ID_HEX + strlen(kiln_codec_dcz.suffix) + 3;
	char *p = malloc(n);

	kiln_dict_id(dict_sha, id);
	if (p)
		snprintf(p, n, "%s/%s.%s%s", root, rel, id, kiln_codec_dcz.suffix);
	return p;
}
