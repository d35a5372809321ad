/*
 * manifest.c - building the manifest with jansson.
 *
 * Determinism is the point: the same tree and options must give the same
 * bytes on any machine, so there are no timestamps, no absolute paths, keys
 * are sorted (JSON_SORT_KEYS) and reals are printed with a fixed precision.
 * JSON strings must be UTF-8, and file names are bytes: a name that is not
 * valid UTF-8 is keyed by a percent-encoded form and carries its exact bytes
 * in base64, so nothing is lost and the document is always valid JSON.
 */
#include "manifest.h"

#include "codec.h"
#include "hash.h"
#include "mime.h"

#include <jansson.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kiln_manifest_key(const char *rel, bool *encoded)
{
	size_t len = strlen(rel);
	char *out = malloc(3 * len + 1), *o = out;
	const char *s = rel;

	*encoded = false;
	if (!out)
		return NULL;
	while (*s) {
		size_t n = kiln_utf8_len(s);
		if (n) {
			memcpy(o, s, n);
			o += n;
			s += n;
			continue;
		}
		*encoded = true;
		o += sprintf(o, "%%%02X", (unsigned char)*s++);
	}
	*o = '\0';
	if (!*encoded)
		return out;
	/* encoded: '%' must be escaped too, so start over */
	o = out;
	for (s = rel; *s;) {
		size_t n = kiln_utf8_len(s);
		if (n && *s != '%') {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			o += sprintf(o, "%%%02X", (unsigned char)*s++);
		}
	}
	*o = '\0';
	return out;
}

static bool is_entry(const struct kiln_report *r)
{
	switch (r->outcome) {
	case KILN_OUTCOME_COMPRESSED:
	case KILN_OUTCOME_EXCLUDED:
	case KILN_OUTCOME_MEDIA:
	case KILN_OUTCOME_SMALL:
	case KILN_OUTCOME_NO_GAIN:
		return r->hashed;
	default:
		return false;
	}
}

/* Add "key": string, stealing a reference; false when out of memory. */
static bool put_str(json_t *obj, const char *key, const char *value)
{
	json_t *v = json_string(value);

	return v && json_object_set_new(obj, key, v) == 0;
}

static bool put_int(json_t *obj, const char *key, uint64_t value)
{
	json_t *v = json_integer((json_int_t)value);

	return v && json_object_set_new(obj, key, v) == 0;
}

static json_t *glob_array(const char *const *globs, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		bool enc;
		char *g = kiln_manifest_key(globs[i], &enc);
		json_t *s = g ? json_string(g) : NULL;
		free(g);
		if (!s || json_array_append_new(a, s) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *settings(const struct kiln_options *opt)
{
	json_t *s = json_object(), *enc = json_array();
	bool ok = s && enc;

	for (int c = 0; ok && c < KILN_NCODINGS; c++)
		if (opt->codings & (1u << c))
			ok = json_array_append_new(enc, json_string(kiln_codecs[c]->name)) == 0;
	ok = ok && json_object_set_new(s, "encodings", enc) == 0;
	enc = NULL;
	ok = ok && put_int(s, "gzip_level", (uint64_t)opt->gzip_level) &&
	     put_int(s, "brotli_quality", (uint64_t)opt->brotli_quality) &&
	     put_int(s, "min_size", opt->min_size) &&
	     put_int(s, "stream_size", opt->stream_size) &&
	     json_object_set_new(s, "max_ratio", json_real(opt->max_ratio)) == 0 &&
	     json_object_set_new(s, "include", glob_array(opt->include, opt->n_include)) == 0 &&
	     json_object_set_new(s, "exclude", glob_array(opt->exclude, opt->n_exclude)) == 0;
	if (!ok) {
		json_decref(enc);
		json_decref(s);
		return NULL;
	}
	return s;
}

static json_t *generator(void)
{
	json_t *g = json_object();

	if (g && put_str(g, "name", "kiln") && put_str(g, "version", kiln_version()) &&
	    put_str(g, "libdeflate", kiln_libdeflate_version()) &&
	    put_str(g, "brotli", kiln_brotli_version()) &&
	    put_str(g, "zlib", kiln_zlib_version()))
		return g;
	json_decref(g);
	return NULL;
}

/* Add the kept sibling of coding C to ENCS: {"path", "size", "sha256"}. */
static bool add_encoding(json_t *encs, const struct kiln_report *r, kiln_coding c,
			 const char *key)
{
	const char *suffix = kiln_codecs[c]->suffix;
	char hex[2 * KILN_SHA256_LEN + 1];
	char *path = malloc(strlen(key) + strlen(suffix) + 1);
	json_t *s = json_object();
	bool ok = s && path;

	if (ok) {
		strcpy(path, key);
		strcat(path, suffix);
		kiln_hex(r->coding[c].sha256, KILN_SHA256_LEN, hex);
		ok = put_str(s, "path", path) && put_int(s, "size", r->coding[c].size) &&
		     put_str(s, "sha256", hex);
	}
	free(path);
	if (!ok) {
		json_decref(s);
		return false;
	}
	return json_object_set_new(encs, kiln_codecs[c]->name, s) == 0;
}

static json_t *entry(const struct kiln_report *r, const char *key, bool encoded)
{
	json_t *e = json_object(), *encs;
	char hex[2 * KILN_SHA256_LEN + 1], sri[80];
	bool ok;

	if (!e)
		return NULL;
	kiln_hex(r->sha256, KILN_SHA256_LEN, hex);
	kiln_sri_sha384(r->sha384, sri);
	ok = put_int(e, "size", r->size) && put_str(e, "sha256", hex) &&
	     put_str(e, "integrity", sri) && put_str(e, "content_type", kiln_media_type(r->path));
	if (ok && encoded) {
		size_t len = strlen(r->path);
		char *b64 = malloc(4 * ((len + 2) / 3) + 1);
		ok = b64 != NULL;
		if (ok) {
			EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)r->path, (int)len);
			ok = put_str(e, "path_base64", b64);
		}
		free(b64);
	}
	if (ok) {
		/* sizes of encodings tried and not kept: a later run that sees the
		 * same content need not encode them again to decide */
		json_t *ng = json_object();
		for (int c = 0; ng && ok && c < KILN_NCODINGS; c++)
			if (r->coding[c].outcome == KILN_CODING_NO_GAIN && r->coding[c].size > 0)
				ok = put_int(ng, kiln_codecs[c]->name, r->coding[c].size);
		if (ng && ok && json_object_size(ng) > 0)
			ok = json_object_set_new(e, "no_gain", ng) == 0;
		else
			json_decref(ng);
		ok = ok && ng;
	}
	if (ok && r->outcome != KILN_OUTCOME_COMPRESSED) {
		ok = put_str(e, "skipped", kiln_outcome_name(r->outcome));
	} else if (ok) {
		encs = json_object();
		ok = encs && json_object_set_new(e, "encodings", encs) == 0;
		for (int c = 0; ok && c < KILN_NCODINGS; c++)
			if (r->coding[c].outcome == KILN_CODING_KEPT)
				ok = add_encoding(encs, r, (kiln_coding)c, key);
	}
	if (!ok) {
		json_decref(e);
		return NULL;
	}
	return e;
}

char *kiln_manifest_dump(const struct kiln_options *opt, const struct kiln_report *reports,
			 size_t n)
{
	json_t *root = json_object(), *files = json_object();
	char *text = NULL, *out = NULL;
	bool ok = root && files;

	ok = ok && put_int(root, "kiln_manifest", KILN_MANIFEST_VERSION) &&
	     json_object_set_new(root, "generator", generator()) == 0 &&
	     json_object_set_new(root, "settings", settings(opt)) == 0;
	for (size_t i = 0; ok && i < n; i++) {
		bool encoded;
		char *key;
		json_t *e;
		if (!is_entry(&reports[i]))
			continue;
		key = kiln_manifest_key(reports[i].path, &encoded);
		e = key ? entry(&reports[i], key, encoded) : NULL;
		ok = e && json_object_set_new(files, key, e) == 0;
		free(key);
	}
	ok = ok && json_object_set(root, "files", files) == 0;
	if (ok)
		text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
	if (text && (out = malloc(strlen(text) + 2)) != NULL) {
		strcpy(out, text);
		strcat(out, "\n");
	}
	free(text);
	json_decref(files);
	json_decref(root);
	return out;
}

kiln_status kiln_manifest_write(const char *path, const struct kiln_options *opt,
				const struct kiln_report *reports, size_t n,
				struct kiln_tempslot *slot, struct kiln_error *err)
{
	return kiln_artifact_write(slot, path, kiln_manifest_dump(opt, reports, n), opt->fsync,
				   "cannot build the manifest", err);
}
