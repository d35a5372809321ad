/*
 * state_stream.c - a manifest read member by member: from memory
 * (kiln_state_parse()) or from its file through a window
 * (kiln_state_load()), so that memory holds the records, not a JSON tree
 * of every file, nor (from a file) the text.  Any text these readers do
 * not take as they are goes to the reader of the whole tree,
 * kiln_state_parse_whole() (state.c), so that every reader reads every
 * text alike (tests/unit/test_state_stream.c compares them).
 */
#include "state.h"

#include "error.h"
#include "jscan.h"
#include "manifest.h"
#include "state_int.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The value TEXT[at..end) parsed by jansson alone, as the whole text's
 * parse would read it; NULL when it is not one JSON value (or out of
 * memory: kiln_state_json_failed()). */
static json_t *load_slice(const char *text, size_t at, size_t end)
{
	return json_loadb(text + at, end - at, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
}

static uint64_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define STREAM_FALLBACK (-100)

/*
 * The manifest read member by member (jscan.h): the top-level members but
 * "files" as jansson values, then each entry of "files" parsed, turned
 * into its record and freed, so that memory holds the records, not a JSON
 * tree of every file.  KILN_OK, KILN_ERR_INVALID, KILN_ERR_NOMEM as
 * kiln_state_parse_whole() would say, or STREAM_FALLBACK (ST empty) for
 * any text this reader does not take as it is: not the shape of valid
 * JSON, a slice jansson rejects, a key twice (JSON_REJECT_DUPLICATES; two
 * keys of "files" with one hash count as a repeat).  The whole-tree reader
 * then decides, so both read every text alike.  (One difference: jansson's
 * nesting limit, 2048, counts from each slice here, not from the top.)
 */
static int parse_streamed(const char *text, size_t len, struct kiln_state *st)
{
	struct kiln_jscan top, fs;
	json_t *root = json_object(), *key = NULL, *v, *ver;
	size_t vat, vend, files_at = 0, files_end = 0, count = 0;
	uint64_t *hashes = NULL;
	bool have_files = false;
	int r, ret = STREAM_FALLBACK, got;
	json_int_t version;

	kiln_state_json_reset();
	if (!root)
		return KILN_ERR_NOMEM;
	if (!kiln_jscan_open(&top, text, len, 0))
		goto out;
	while ((r = kiln_jscan_next(&top, &key, &vat, &vend)) == KILN_JSCAN_MEMBER) {
		const char *k = json_string_value(key);
		if (json_object_get(root, k) || (have_files && strcmp(k, "files") == 0))
			goto out;
		if (strcmp(k, "files") == 0) {
			have_files = true;
			files_at = vat;
			files_end = vend;
		} else if (!(v = load_slice(text, vat, vend)) ||
			   json_object_set_new(root, k, v) != 0) {
			if (kiln_state_json_failed() || v)
				ret = KILN_ERR_NOMEM;
			goto out;
		}
		json_decref(key);
		key = NULL;
	}
	if (r == KILN_JSCAN_NOMEM || kiln_state_json_failed())
		ret = KILN_ERR_NOMEM;
	if (r != KILN_JSCAN_END || kiln_state_json_failed() || !kiln_jscan_blank(text, len, kiln_jscan_after(&top)))
		goto out;
	ver = json_object_get(root, "kiln_manifest");
	version = json_integer_value(ver);
	if (!have_files || !kiln_jscan_open(&fs, text, files_end, files_at))
		goto out; /* kiln_state_parse_whole() says whether it is JSON */
	while ((r = kiln_jscan_next(&fs, NULL, &vat, &vend)) == KILN_JSCAN_MEMBER)
		count++;
	if (r != KILN_JSCAN_END || kiln_jscan_after(&fs) != files_end)
		goto out;
	if (!json_is_integer(ver) || version < 1 || version > KILN_MANIFEST_VERSION) {
		ret = KILN_ERR_INVALID; /* valid JSON or not: not a manifest */
		goto out;
	}
	st->v = calloc(count + 1, sizeof(*st->v));
	hashes = calloc(count + 1, sizeof(*hashes));
	if (!st->v || !hashes || (!st->strings && !(st->strings = kiln_intern_new()))) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	kiln_jscan_open(&fs, text, files_end, files_at);
	for (size_t i = 0; (r = kiln_jscan_next(&fs, &key, &vat, &vend)) == KILN_JSCAN_MEMBER; i++) {
		json_t *e = load_slice(text, vat, vend);
		if (!e) {
			if (kiln_state_json_failed())
				ret = KILN_ERR_NOMEM;
			goto out;
		}
		hashes[i] = key_hash(json_string_value(key));
		got = kiln_state_entry(json_string_value(key), e, (int)version, st->strings,
				       &st->v[st->n]);
		json_decref(e);
		json_decref(key);
		key = NULL;
		if (got < 0) {
			ret = KILN_ERR_NOMEM;
			goto out;
		}
		st->n += (size_t)got;
	}
	if (r != KILN_JSCAN_END) {
		if (r == KILN_JSCAN_NOMEM || kiln_state_json_failed())
			ret = KILN_ERR_NOMEM;
		goto out;
	}
	qsort(hashes, count, sizeof(*hashes), cmp_u64);
	for (size_t i = 1; i < count; i++)
		if (hashes[i - 1] == hashes[i])
			goto out;
	ret = kiln_state_finish(root, (int)version, st);
out:
	if (ret != KILN_OK)
		kiln_state_free(st);
	json_decref(key);
	json_decref(root);
	free(hashes);
	return ret;
}

kiln_status kiln_state_parse(const char *text, size_t len, struct kiln_state *st)
{
	int ret;

	kiln_state_json_reset();
	ret = parse_streamed(text, len, st);
	return ret == STREAM_FALLBACK ? kiln_state_parse_whole(text, len, st) : (kiln_status)ret;
}

/* A manifest this big or bigger is read from its file through a window of
 * this size, never held whole (KILN_STATE_WINDOW). */
#define WINDOW ((size_t)1 << 20)

/*
 * The manifest in FD (SIZE bytes) read as parse_streamed() reads a text,
 * through a window of WINDOW bytes (jscan.h), in one pass: its entries are
 * read before "kiln_manifest" (keys come sorted) with version 2's keys,
 * and a manifest of version 1 goes to the reader of the whole text.
 * Returns as parse_streamed().
 */
static int parse_file(int fd, uint64_t size, size_t window, struct kiln_state *st)
{
	struct kiln_jwin w;
	json_t *root = json_object(), *key = NULL, *v, *ver;
	uint64_t *hashes = NULL;
	size_t cap = 0, count = 0, n;
	bool have_files = false;
	int r = KILN_JSCAN_BAD, ret = STREAM_FALLBACK, got;
	json_int_t version;
	const char *p;

	kiln_state_json_reset();
	if (!root || !(st->strings = kiln_intern_new())) {
		json_decref(root);
		return KILN_ERR_NOMEM;
	}
	if (!kiln_jwin_open(&w, fd, size, window)) {
		json_decref(root);
		kiln_state_free(st);
		return STREAM_FALLBACK;
	}
	while ((r = kiln_jwin_key(&w, &key)) == KILN_JSCAN_MEMBER) {
		const char *k = json_string_value(key);
		if (json_object_get(root, k) || (have_files && strcmp(k, "files") == 0))
			goto out;
		if (strcmp(k, "files") != 0) {
			if (!kiln_jwin_value(&w, &p, &n))
				goto out;
			if (!(v = load_slice(p, 0, n)) || json_object_set_new(root, k, v) != 0) {
				if (kiln_state_json_failed() || v)
					ret = KILN_ERR_NOMEM;
				goto out;
			}
			json_decref(key);
			key = NULL;
			continue;
		}
		have_files = true;
		json_decref(key);
		key = NULL;
		if (!kiln_jwin_enter(&w))
			goto out;
		while ((r = kiln_jwin_key(&w, &key)) == KILN_JSCAN_MEMBER) {
			json_t *e;
			if (!kiln_jwin_value(&w, &p, &n))
				goto out;
			if (!(e = load_slice(p, 0, n))) {
				if (kiln_state_json_failed())
					ret = KILN_ERR_NOMEM;
				goto out;
			}
			if (count == cap) {
				size_t c = cap ? 2 * cap : 1024;
				struct kiln_prev_entry *vv = realloc(st->v, (c + 1) * sizeof(*vv));
				uint64_t *hh = vv ? realloc(hashes, c * sizeof(*hh)) : NULL;
				if (vv)
					st->v = vv;
				if (!hh) {
					json_decref(e);
					ret = KILN_ERR_NOMEM;
					goto out;
				}
				hashes = hh;
				cap = c;
			}
			hashes[count++] = key_hash(json_string_value(key));
			got = kiln_state_entry(json_string_value(key), e, KILN_MANIFEST_VERSION,
					       st->strings, &st->v[st->n]);
			json_decref(e);
			json_decref(key);
			key = NULL;
			if (got < 0) {
				ret = KILN_ERR_NOMEM;
				goto out;
			}
			st->n += (size_t)got;
		}
		if (r != KILN_JSCAN_END)
			break;
	}
	if (r == KILN_JSCAN_NOMEM || kiln_state_json_failed())
		ret = KILN_ERR_NOMEM;
	if (r != KILN_JSCAN_END || w.failed || kiln_state_json_failed() || !kiln_jwin_done(&w) ||
	    !have_files)
		goto out;
	ver = json_object_get(root, "kiln_manifest");
	version = json_integer_value(ver);
	if (!json_is_integer(ver) || version < 1 || version > KILN_MANIFEST_VERSION) {
		ret = KILN_ERR_INVALID; /* valid JSON or not: not a manifest */
		goto out;
	}
	if (version < 2)
		goto out; /* its keys are not version 2's */
	if (!st->v && !(st->v = calloc(1, sizeof(*st->v)))) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	qsort(hashes, count, sizeof(*hashes), cmp_u64);
	for (size_t i = 1; i < count; i++)
		if (hashes[i - 1] == hashes[i])
			goto out;
	ret = kiln_state_finish(root, (int)version, st);
out:
	if (ret != KILN_OK)
		kiln_state_free(st);
	kiln_jwin_close(&w);
	json_decref(key);
	json_decref(root);
	free(hashes);
	return ret;
}

kiln_status kiln_state_load_window(const char *path, size_t window, struct kiln_state *st,
				   struct kiln_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	char *buf = NULL;
	size_t done = 0;
	int ret = STREAM_FALLBACK;

	err->suffix = "";
	if (fd < 0 && errno == ENOENT)
		return KILN_OK;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		kiln_fail(err, KILN_ERR_IO, fd < 0 ? errno : (S_ISREG(sb.st_mode) ? errno : EINVAL),
			  "cannot read the previous manifest");
		if (fd >= 0)
			close(fd);
		return KILN_ERR_IO;
	}
	if (window || (size_t)sb.st_size >= WINDOW)
		ret = parse_file(fd, (uint64_t)sb.st_size, window ? window : WINDOW, st);
	if (ret == STREAM_FALLBACK) {
		buf = malloc((size_t)sb.st_size + 1);
		while (buf && done < (size_t)sb.st_size) {
			ssize_t r = pread(fd, buf + done, (size_t)sb.st_size - done, (off_t)done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			done += (size_t)r;
		}
		ret = buf ? kiln_state_parse(buf, done, st) : KILN_ERR_NOMEM;
		free(buf);
	}
	close(fd);
	if (ret == KILN_ERR_INVALID)
		kiln_fail(err, KILN_ERR_INVALID, 0, "not a kiln manifest");
	else if (ret == KILN_ERR_NOMEM)
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot read the previous manifest");
	return (kiln_status)ret;
}

kiln_status kiln_state_load(const char *path, struct kiln_state *st, struct kiln_error *err)
{
	return kiln_state_load_window(path, 0, st, err);
}
