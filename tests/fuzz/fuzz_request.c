/*
 * fuzz_request.c - libFuzzer target for what `kiln serve` reads from a
 * request (serve_negotiate.c): the URL path, Accept-Encoding, If-None-Match,
 * Range, HTTP-dates and Available-Dictionary, each given the input as a
 * field value.  Besides "no crash", it checks what the server relies on: a
 * key from a URL holds no NUL and no empty, "." or ".." component; an
 * accepted set names only codings of the table; a range lies inside the
 * representation; a date formatted is read back as itself.
 */
#include "serve.h"

#include "codec.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void url_key(const char *s)
{
	char out[256];
	size_t len;
	int kind = kiln_srv_url_key(s, out, sizeof(out), &len);

	if (!kind)
		return;
	if (strlen(out) != len || len >= sizeof(out))
		abort(); /* a NUL inside the key, or past the buffer */
	if (kind == 2 && len && out[len - 1] != '/')
		abort();
	for (const char *p = out; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			abort(); /* a component that could leave the tree */
		p += n;
		if (*p == '/')
			p++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 2);
	uint64_t rsize = 0, first, last;
	uint8_t dict[32];
	long long t;
	char date[30];

	if (!s)
		return 0;
	s[0] = '/';
	memcpy(s + 1, data, size);
	s[size + 1] = '\0';
	url_key(s);     /* the input as a path */
	url_key(s + 1); /* and as it came */
	if (kiln_srv_accepted(s + 1) & ~((1u << kiln_ncodecs) - 1))
		abort();
	(void)kiln_srv_lists(s + 1, kiln_codec_dcz.name);
	(void)kiln_srv_etag_listed(s + 1, "\"0123456789abcdef0123\"");
	for (size_t i = 0; i < 8 && i < size; i++)
		rsize = rsize << 8 | data[i];
	rsize %= (uint64_t)1 << 40;
	if (kiln_srv_range(s + 1, rsize, &first, &last) == 1 && !(first <= last && last < rsize))
		abort();
	if ((t = kiln_srv_parse_date(s + 1)) >= 0) {
		kiln_srv_format_date(t, date);
		if (kiln_srv_parse_date(date) != t)
			abort();
	}
	(void)kiln_srv_available_dictionary(s + 1, dict);
	free(s);
	return 0;
}
