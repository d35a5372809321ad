/* jscan.c - see jscan.h. */
#include "jscan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
	while (i < len && is_ws(t[i]))
		i++;
	return i;
}

/* The offset just past the string whose '"' is at T[i], or 0 if it does
 * not end. */
static size_t string_end(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return 0;
}

/* The offset just past the value that starts at T[i], or 0 if its end is
 * not found.  Brackets are only counted, not matched: jansson checks the
 * slice. */
static size_t value_end(const char *t, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return 0;
	if (t[i] == '"')
		return string_end(t, len, i);
	if (t[i] != '{' && t[i] != '[') {
		while (i < len && !is_ws(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']')
			i++;
		return i;
	}
	for (; i < len; i++) {
		if (t[i] == '"') {
			size_t e = string_end(t, len, i);
			if (!e)
				return 0;
			i = e - 1;
		} else if (t[i] == '{' || t[i] == '[') {
			depth++;
		} else if (t[i] == '}' || t[i] == ']') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

bool kiln_jscan_open(struct kiln_jscan *s, const char *text, size_t len, size_t at)
{
	at = skip_ws(text, len, at);
	if (at >= len || text[at] != '{')
		return false;
	*s = (struct kiln_jscan){ text, len, at + 1, true };
	return true;
}

int kiln_jscan_next(struct kiln_jscan *s, json_t **key, size_t *vat, size_t *vend)
{
	const char *t = s->text;
	size_t i = skip_ws(t, s->len, s->pos), kend;

	if (i < s->len && t[i] == '}') {
		s->pos = i + 1;
		return KILN_JSCAN_END;
	}
	if (!s->first) {
		if (i >= s->len || t[i] != ',')
			return KILN_JSCAN_BAD;
		i = skip_ws(t, s->len, i + 1);
	}
	if (i >= s->len || t[i] != '"' || !(kend = string_end(t, s->len, i)))
		return KILN_JSCAN_BAD;
	if (key) {
		json_error_t err;
		*key = json_loadb(t + i, kend - i, JSON_DECODE_ANY, &err);
		if (!*key)
			return json_error_code(&err) == json_error_out_of_memory
				       ? KILN_JSCAN_NOMEM
				       : KILN_JSCAN_BAD;
		if (!json_is_string(*key)) {
			json_decref(*key);
			*key = NULL;
			return KILN_JSCAN_BAD;
		}
	}
	i = skip_ws(t, s->len, kend);
	if (i >= s->len || t[i] != ':')
		goto bad;
	*vat = skip_ws(t, s->len, i + 1);
	if (!(*vend = value_end(t, s->len, *vat)))
		goto bad;
	s->pos = *vend;
	s->first = false;
	return KILN_JSCAN_MEMBER;
bad:
	if (key) {
		json_decref(*key);
		*key = NULL;
	}
	return KILN_JSCAN_BAD;
}

size_t kiln_jscan_after(const struct kiln_jscan *s)
{
	return s->pos;
}

bool kiln_jscan_blank(const char *text, size_t len, size_t at)
{
	return skip_ws(text, len, at) == len;
}

/* ---- through a window ---- */

/* The byte at file offset OFF (>= w->base), reading more when need be and
 * letting go of what lies before KEEP; -1 past the end, or when it
 * cannot be read (w->failed). */
static int byte_at(struct kiln_jwin *w, uint64_t off, uint64_t keep)
{
	if (off >= w->size || off < w->base)
		return -1;
	while (off >= w->base + w->len) {
		size_t drop = keep > w->base ? (size_t)(keep - w->base) : 0;
		ssize_t got;
		if (drop > w->len)
			drop = w->len;
		memmove(w->buf, w->buf + drop, w->len - drop);
		w->len -= drop;
		w->base += drop;
		if (w->len == w->cap) { /* one member larger than the window */
			char *b = realloc(w->buf, 2 * w->cap);
			if (!b) {
				w->failed = true;
				return -1;
			}
			w->buf = b;
			w->cap *= 2;
		}
		got = pread(w->fd, w->buf + w->len, w->cap - w->len, (off_t)(w->base + w->len));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			w->failed = true; /* an error, or the file shrank */
			return -1;
		}
		w->len += (size_t)got;
	}
	return (unsigned char)w->buf[off - w->base];
}

static uint64_t win_ws(struct kiln_jwin *w, uint64_t i, uint64_t keep)
{
	int c;

	while ((c = byte_at(w, i, keep)) >= 0 && is_ws((char)c))
		i++;
	return i;
}

/* As string_end(), through the window. */
static uint64_t win_string_end(struct kiln_jwin *w, uint64_t i, uint64_t keep)
{
	int c;

	for (i++; (c = byte_at(w, i, keep)) >= 0; i++) {
		if (c == '\\')
			i++;
		else if (c == '"')
			return i + 1;
	}
	return 0;
}

/* As value_end(), through the window. */
static uint64_t win_value_end(struct kiln_jwin *w, uint64_t i, uint64_t keep)
{
	size_t depth = 0;
	int c = byte_at(w, i, keep);

	if (c < 0)
		return 0;
	if (c == '"')
		return win_string_end(w, i, keep);
	if (c != '{' && c != '[') {
		while ((c = byte_at(w, i, keep)) >= 0 && !is_ws((char)c) && c != ',' && c != '}' &&
		       c != ']')
			i++;
		return w->failed ? 0 : i;
	}
	for (; (c = byte_at(w, i, keep)) >= 0; i++) {
		if (c == '"') {
			uint64_t e = win_string_end(w, i, keep);
			if (!e)
				return 0;
			i = e - 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

bool kiln_jwin_open(struct kiln_jwin *w, int fd, uint64_t size, size_t cap)
{
	uint64_t at;

	*w = (struct kiln_jwin){ .fd = fd, .size = size, .cap = cap ? cap : 1, .depth = 1 };
	if (!(w->buf = malloc(w->cap)))
		return false;
	at = win_ws(w, 0, 0);
	if (byte_at(w, at, at) != '{') {
		kiln_jwin_close(w);
		return false;
	}
	w->pos = at + 1;
	w->first[1] = true;
	return true;
}

void kiln_jwin_close(struct kiln_jwin *w)
{
	free(w->buf);
	w->buf = NULL;
}

int kiln_jwin_key(struct kiln_jwin *w, json_t **key)
{
	uint64_t i = win_ws(w, w->pos, w->pos), kend;
	json_error_t err;
	int c = byte_at(w, i, i);

	if (c == '}') {
		w->pos = i + 1;
		w->depth--;
		return KILN_JSCAN_END;
	}
	if (!w->first[w->depth]) {
		if (c != ',')
			return KILN_JSCAN_BAD;
		i = win_ws(w, i + 1, i + 1);
		c = byte_at(w, i, i);
	}
	if (c != '"' || !(kend = win_string_end(w, i, i)) || byte_at(w, kend - 1, i) < 0)
		return KILN_JSCAN_BAD;
	*key = json_loadb(w->buf + (i - w->base), (size_t)(kend - i), JSON_DECODE_ANY, &err);
	if (!*key)
		return json_error_code(&err) == json_error_out_of_memory ? KILN_JSCAN_NOMEM
									 : KILN_JSCAN_BAD;
	if (!json_is_string(*key))
		goto bad;
	i = win_ws(w, kend, kend);
	if (byte_at(w, i, i) != ':')
		goto bad;
	w->pos = win_ws(w, i + 1, i + 1);
	w->first[w->depth] = false;
	return KILN_JSCAN_MEMBER;
bad:
	json_decref(*key);
	*key = NULL;
	return KILN_JSCAN_BAD;
}

bool kiln_jwin_value(struct kiln_jwin *w, const char **p, size_t *n)
{
	uint64_t at = w->pos, end = win_value_end(w, at, at);

	/* the whole value in the window: its last byte read with it kept */
	if (!end || byte_at(w, end - 1, at) < 0)
		return false;
	*p = w->buf + (at - w->base);
	*n = (size_t)(end - at);
	w->pos = end;
	return true;
}

bool kiln_jwin_enter(struct kiln_jwin *w)
{
	if (w->depth != 1 || byte_at(w, w->pos, w->pos) != '{')
		return false;
	w->pos++;
	w->depth = 2;
	w->first[2] = true;
	return true;
}

bool kiln_jwin_done(struct kiln_jwin *w)
{
	return w->depth == 0 && win_ws(w, w->pos, w->pos) == w->size && !w->failed;
}
