/* jscan.c - see jscan.h. */
#include "jscan.h"

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
