/* state.c - reading a manifest back; see state.h. */
#include "state.h"

#include "classify.h"
#include "codec.h"

#include <jansson.h>
#include <openssl/evp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_rel(const void *a, const void *b)
{
	return strcmp(((const struct kiln_prev_entry *)a)->rel,
		      ((const struct kiln_prev_entry *)b)->rel);
}

static bool hex32(const char *s, uint8_t out[32])
{
	if (!s || strlen(s) != 64)
		return false;
	for (int i = 0; i < 32; i++) {
		unsigned v = 0;
		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + k];
			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v |= (unsigned)(c - 'a' + 10);
			else
				return false;
		}
		out[i] = (uint8_t)v;
	}
	return true;
}

static bool get_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* A relative path kiln may act on: not empty, not absolute, no "." or ".."
 * component, no empty component, no NUL (base64 could smuggle one in). */
bool kiln_state_safe_rel(const char *rel, size_t len)
{
	if (len == 0 || rel[0] == '/' || memchr(rel, '\0', len))
		return false;
	for (const char *p = rel, *end = rel + len; p < end;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = slash ? (size_t)(slash - p) : (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n + 1;
	}
	return true;
}

/* The exact path of an entry: path_base64 when present, else the key. */
static char *entry_rel(const char *key, json_t *e)
{
	json_t *b = json_object_get(e, "path_base64");
	const char *b64;
	size_t n, len;
	char *out;
	int got;

	if (!b) {
		len = strlen(key);
		if (!kiln_state_safe_rel(key, len))
			return NULL;
		return strdup(key);
	}
	if (!json_is_string(b))
		return NULL;
	b64 = json_string_value(b);
	n = strlen(b64);
	if (n % 4 != 0 || n == 0 || n > 16384)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	got = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		free(out);
		return NULL;
	}
	len = (size_t)got; /* EVP_DecodeBlock counts '=' padding as zero bytes */
	if (n >= 1 && b64[n - 1] == '=')
		len--;
	if (n >= 2 && b64[n - 2] == '=')
		len--;
	out[len] = '\0';
	if (!kiln_state_safe_rel(out, len)) {
		free(out);
		return NULL;
	}
	return out;
}

static kiln_outcome skipped_outcome(const char *s)
{
	if (!s)
		return KILN_NOUTCOMES;
	for (int o = 0; o < KILN_NOUTCOMES; o++)
		if ((o == KILN_OUTCOME_MEDIA || o == KILN_OUTCOME_SMALL ||
		     o == KILN_OUTCOME_NO_GAIN || o == KILN_OUTCOME_EXCLUDED) &&
		    strcmp(s, kiln_outcome_name((kiln_outcome)o)) == 0)
			return (kiln_outcome)o;
	return KILN_NOUTCOMES;
}

/* Fill *pe from entry E; false if E is malformed (it is then dropped). */
static bool parse_entry(const char *key, json_t *e, struct kiln_prev_entry *pe)
{
	json_t *encs = json_object_get(e, "encodings"), *nogain = json_object_get(e, "no_gain");

	memset(pe, 0, sizeof(*pe));
	if (!json_is_object(e) || !get_u64(e, "size", &pe->size) ||
	    !hex32(json_string_value(json_object_get(e, "sha256")), pe->sha256))
		return false;
	if (encs) {
		if (!json_is_object(encs) || json_object_get(e, "skipped"))
			return false;
		pe->outcome = KILN_OUTCOME_COMPRESSED;
	} else {
		pe->outcome = skipped_outcome(json_string_value(json_object_get(e, "skipped")));
		if (pe->outcome == KILN_NOUTCOMES)
			return false;
	}
	for (int c = 0; c < KILN_NCODINGS; c++) {
		const struct kiln_codec *codec = kiln_codecs[c];
		json_t *s = encs ? json_object_get(encs, codec->name) : NULL;
		json_t *ng = json_is_object(nogain) ? json_object_get(nogain, codec->name) : NULL;
		const char *path;
		if (s) {
			path = json_string_value(json_object_get(s, "path"));
			if (!get_u64(s, "size", &pe->coding[c].size) || !path ||
			    !hex32(json_string_value(json_object_get(s, "sha256")), pe->coding[c].sha256))
				return false;
			/* the sibling must be the entry's own: KEY + suffix */
			if (strlen(path) != strlen(key) + strlen(codec->suffix) ||
			    strncmp(path, key, strlen(key)) != 0 ||
			    strcmp(path + strlen(key), codec->suffix) != 0)
				return false;
			pe->coding[c].kept = true;
		} else if (json_is_integer(ng) && json_integer_value(ng) > 0) {
			pe->coding[c].tried = true;
			pe->coding[c].size = (uint64_t)json_integer_value(ng);
		}
	}
	if (!(pe->rel = entry_rel(key, e)))
		return false;
	return true;
}

static void parse_settings(json_t *root, struct kiln_state *st)
{
	json_t *s = json_object_get(root, "settings"), *g = json_object_get(root, "generator");
	json_t *enc = json_object_get(s, "encodings"), *v;
	size_t i;

	st->gzip_level = -1;
	st->brotli_quality = -1;
	json_array_foreach(enc, i, v)
		for (int c = 0; c < KILN_NCODINGS; c++)
			if (json_is_string(v) && strcmp(json_string_value(v), kiln_codecs[c]->name) == 0)
				st->codings |= 1u << c;
	if (json_is_integer(json_object_get(s, "gzip_level")))
		st->gzip_level = (int)json_integer_value(json_object_get(s, "gzip_level"));
	if (json_is_integer(json_object_get(s, "brotli_quality")))
		st->brotli_quality = (int)json_integer_value(json_object_get(s, "brotli_quality"));
	get_u64(s, "min_size", &st->min_size);
	if (!get_u64(s, "stream_size", &st->stream_size))
		st->stream_size = UINT64_MAX;
	st->max_ratio = json_number_value(json_object_get(s, "max_ratio"));
	if (json_is_string(json_object_get(g, "libdeflate")))
		strncpy(st->libdeflate, json_string_value(json_object_get(g, "libdeflate")),
			sizeof(st->libdeflate) - 1);
	if (json_is_string(json_object_get(g, "zlib")))
		strncpy(st->zlib, json_string_value(json_object_get(g, "zlib")), sizeof(st->zlib) - 1);
	if (json_is_string(json_object_get(g, "brotli")))
		strncpy(st->brotli, json_string_value(json_object_get(g, "brotli")),
			sizeof(st->brotli) - 1);
}

kiln_status kiln_state_parse(const char *text, size_t len, struct kiln_state *st)
{
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *files, *e;
	const char *key;
	kiln_status ret = KILN_ERR_INVALID;

	if (!root)
		return KILN_ERR_INVALID;
	files = json_object_get(root, "files");
	if (!json_is_object(root) || !json_is_integer(json_object_get(root, "kiln_manifest")) ||
	    json_integer_value(json_object_get(root, "kiln_manifest")) != 1 ||
	    !json_is_object(files))
		goto out;
	parse_settings(root, st);
	st->v = calloc(json_object_size(files) + 1, sizeof(*st->v));
	if (!st->v) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	json_object_foreach(files, key, e)
		if (parse_entry(key, e, &st->v[st->n]))
			st->n++;
	qsort(st->v, st->n, sizeof(*st->v), cmp_rel);
	/* two keys naming the same bytes (a forged path_base64): keep neither */
	for (size_t i = 1; i < st->n; i++)
		if (strcmp(st->v[i - 1].rel, st->v[i].rel) == 0) {
			kiln_state_free(st);
			goto out;
		}
	st->loaded = true;
	ret = KILN_OK;
out:
	json_decref(root);
	return ret;
}

kiln_status kiln_state_load(const char *path, struct kiln_state *st, struct kiln_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	char *buf = NULL;
	size_t done = 0;
	kiln_status ret;

	err->suffix = "";
	if (fd < 0 && errno == ENOENT)
		return KILN_OK;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		err->status = KILN_ERR_IO;
		err->errnum = fd < 0 ? errno : (S_ISREG(sb.st_mode) ? errno : EINVAL);
		err->what = "cannot read the previous manifest";
		if (fd >= 0)
			close(fd);
		return KILN_ERR_IO;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && done < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + done, (size_t)sb.st_size - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	close(fd);
	if (!buf)
		return KILN_ERR_NOMEM;
	ret = kiln_state_parse(buf, done, st);
	free(buf);
	if (ret == KILN_ERR_INVALID) {
		err->status = KILN_ERR_INVALID;
		err->errnum = 0;
		err->what = "previous manifest is not a kiln manifest, ignored";
	}
	return ret;
}

struct kiln_prev_entry *kiln_state_find(const struct kiln_state *st, const char *rel)
{
	struct kiln_prev_entry key = { .rel = (char *)rel };

	if (!st->loaded || st->n == 0)
		return NULL;
	return bsearch(&key, st->v, st->n, sizeof(*st->v), cmp_rel);
}

bool kiln_state_coding_reusable(const struct kiln_state *st, const struct kiln_options *opt,
				kiln_coding c)
{
	if (!st->loaded)
		return false;
	/* which encoder made a .gz depends on the file's size and stream_size
	 * (libdeflate below it, zlib from it on): both must be as they were */
	if (c == KILN_CODING_GZIP)
		return st->gzip_level == opt->gzip_level && st->stream_size == opt->stream_size &&
		       strcmp(st->libdeflate, kiln_libdeflate_version()) == 0 &&
		       strcmp(st->zlib, kiln_zlib_version()) == 0;
	return st->brotli_quality == opt->brotli_quality &&
	       strcmp(st->brotli, kiln_brotli_version()) == 0;
}

bool kiln_state_records_sibling(const struct kiln_state *st, const char *rel)
{
	const char *base = strrchr(rel, '/');
	size_t blen = kiln_sibling_base_len(base ? base + 1 : rel);
	size_t prefix = base ? (size_t)(base + 1 - rel) : 0;
	const struct kiln_prev_entry *pe;
	bool yes = false;
	char *src;

	if (!blen || !st->loaded || !(src = strndup(rel, prefix + blen)))
		return false;
	pe = kiln_state_find(st, src);
	for (int c = 0; pe && c < KILN_NCODINGS; c++)
		if (pe->coding[c].kept && strcmp(rel + prefix + blen, kiln_codecs[c]->suffix) == 0)
			yes = true;
	free(src);
	return yes;
}

void kiln_state_free(struct kiln_state *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->v[i].rel);
	free(st->v);
	memset(st, 0, sizeof(*st));
}
