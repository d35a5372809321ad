/*
 * serve_negotiate.c - what a request gets, decided without I/O (serve.h):
 * its URL path as a manifest key, the representation its Accept-Encoding
 * allows, If-None-Match, Range and HTTP-dates.
 *
 * Everything here reads bytes a client sent, so every parser is bounded
 * by its input, refuses rather than guesses, and is tested on its own
 * (tests/unit/test_serve.c).
 */
#include "serve.h"

#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

int kiln_srv_url_key(const char *raw, char *out, size_t cap, size_t *len)
{
	size_t n = 0, comp = 0; /* comp: where the current component began */

	*len = 0;
	if (raw[0] != '/' || cap == 0)
		return 0;
	for (const char *p = raw + 1;; p++) {
		int c = (unsigned char)*p;

		if (c == '/' || c == '\0') {
			size_t clen = n - comp;
			const char *cs = out + comp;

			if (clen == 0 && !(c == '\0' && n == comp && (n == 0 || out[n - 1] == '/')))
				return 0; /* an empty component ("//") */
			/* ".", "..", and a dotfile or dot-directory (.git, .env,
			 * .htpasswd: what a tree holds but never publishes), all
			 * but RFC 8615's .well-known */
			if (clen && cs[0] == '.' &&
			    !(clen == 11 && memcmp(cs, ".well-known", 11) == 0))
				return 0;
			if (c == '\0')
				break;
			if (n + 1 >= cap)
				return 0;
			out[n++] = '/';
			comp = n;
			continue;
		}
		if (c == '%') {
			int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
			if (h < 0 || l < 0)
				return 0;
			c = h * 16 + l;
			p += 2;
			if (c == 0 || c == '/')
				return 0; /* an encoded NUL or slash names no file */
		}
		if (n + 1 >= cap)
			return 0;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	*len = n;
	return n == 0 || out[n - 1] == '/' ? 2 : 1;
}

/* Is C a tchar (RFC 9110 section 5.6.2)? */
static bool tchar(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A qvalue (RFC 9110 section 12.4.2): 0 to 1000, or -1. */
static int qvalue(const char *s, size_t n)
{
	int q, scale = 100;

	if (n == 0 || (s[0] != '0' && s[0] != '1'))
		return -1;
	q = (s[0] - '0') * 1000;
	if (n == 1)
		return q;
	if (s[1] != '.' || n > 5)
		return -1;
	for (size_t i = 2; i < n; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		q += (s[i] - '0') * scale;
	}
	return q > 1000 ? -1 : q;
}

static bool ows(char c)
{
	return c == ' ' || c == '\t';
}

/* The codec whose token (or alias) is S[0..n), any case; -1 for none,
 * -2 for "*". */
static int coding_named(const char *s, size_t n)
{
	if (n == 1 && s[0] == '*')
		return -2;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_codec *k = kiln_codec((kiln_coding)c);
		const char *alias = k->http_alias;

		if ((strlen(k->info.name) == n && strncasecmp(k->info.name, s, n) == 0) ||
		    (alias && strlen(alias) == n && strncasecmp(alias, s, n) == 0))
			return (int)c;
	}
	return -1;
}

/*
 * Each well-formed member of Accept-Encoding value AE, in order: NAME
 * (LEN bytes, not NUL-terminated) and its weight Q (0..1000), given to
 * EACH with ARG.  Malformed members and empty list elements are skipped.
 */
static void each_member(const char *ae, void (*each)(void *arg, const char *name, size_t len, int q),
			void *arg)
{
	const char *p = ae;

	while (*p) {
		const char *name, *end = p + strcspn(p, ",");
		size_t nlen;
		int q = 1000;
		bool ok = true;

		while (p < end && ows(*p))
			p++;
		name = p;
		while (p < end && tchar((unsigned char)*p))
			p++;
		nlen = (size_t)(p - name);
		/* parameters: ";" OWS name "=" value, only q matters */
		while (ok && p < end) {
			const char *k, *v;
			size_t klen, vlen;

			while (p < end && ows(*p))
				p++;
			if (p == end)
				break;
			if (*p != ';') {
				ok = false;
				break;
			}
			p++;
			while (p < end && ows(*p))
				p++;
			k = p;
			while (p < end && tchar((unsigned char)*p))
				p++;
			klen = (size_t)(p - k);
			while (p < end && ows(*p))
				p++;
			if (klen == 0 && (p == end || *p == ';'))
				continue; /* an empty parameter */
			if (p == end || *p != '=') {
				ok = false;
				break;
			}
			p++;
			while (p < end && ows(*p))
				p++;
			v = p;
			while (p < end && !ows(*p) && *p != ';')
				p++;
			vlen = (size_t)(p - v);
			if (klen == 1 && (k[0] == 'q' || k[0] == 'Q') && (q = qvalue(v, vlen)) < 0)
				ok = false;
		}
		p = *end ? end + 1 : end;
		if (ok && nlen > 0) /* else malformed, or an empty list element */
			each(arg, name, nlen, q);
	}
}

/* What an Accept-Encoding value says: of each coding, of "*" and of
 * identity, whether it is listed and, the first weight counting, taken. */
struct accepted {
	unsigned listed, yes;
	bool star_listed, star, identity_listed, identity;
};

static void accept_one(void *arg, const char *name, size_t len, int q)
{
	struct accepted *a = arg;
	int which = coding_named(name, len);

	if (which == -2 && !a->star_listed) {
		a->star_listed = true;
		a->star = q > 0;
	} else if (which >= 0 && !(a->listed & (1u << which))) {
		a->listed |= 1u << which; /* the first weight counts */
		if (q > 0)
			a->yes |= 1u << which;
	} else if (which == -1 && len == 8 && strncasecmp(name, "identity", 8) == 0 &&
		   !a->identity_listed) {
		a->identity_listed = true;
		a->identity = q > 0;
	}
}

static struct accepted accepted_of(const char *ae)
{
	struct accepted a = { 0 };

	if (ae)
		each_member(ae, accept_one, &a);
	return a;
}

unsigned kiln_srv_accepted(const char *ae)
{
	struct accepted a = accepted_of(ae);

	if (a.star)
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (!(a.listed & (1u << c)))
				a.yes |= 1u << c;
	return a.yes;
}

bool kiln_srv_identity_refused(const char *ae)
{
	struct accepted a = accepted_of(ae);

	return a.identity_listed ? !a.identity : a.star_listed && !a.star;
}

const char *kiln_srv_origin_form(const char *url)
{
	const char *p = NULL;

	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8;
	if (!p)
		return url;
	p = strchr(p, '/');
	return p ? p : "/";
}

struct listed {
	const char *token;
	bool seen, yes;
};

static void list_one(void *arg, const char *name, size_t len, int q)
{
	struct listed *l = arg;

	if (!l->seen && strlen(l->token) == len && strncasecmp(l->token, name, len) == 0) {
		l->seen = true;
		l->yes = q > 0;
	}
}

bool kiln_srv_lists(const char *ae, const char *token)
{
	struct listed l = { token, false, false };

	if (ae)
		each_member(ae, list_one, &l);
	return l.yes;
}

static int b64val(char c)
{
	return c >= 'A' && c <= 'Z'   ? c - 'A'
	       : c >= 'a' && c <= 'z' ? c - 'a' + 26
	       : c >= '0' && c <= '9' ? c - '0' + 52
	       : c == '+'	      ? 62
	       : c == '/'	      ? 63
				      : -1;
}

bool kiln_srv_available_dictionary(const char *av, uint8_t out[32])
{
	const char *p = av;
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;

	while (ows(*p))
		p++;
	if (*p++ != ':')
		return false;
	/* 32 bytes: 43 base64 digits and one '=' */
	for (int i = 0; i < 43; i++, p++) {
		int v = b64val(*p);
		if (v < 0)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n < 32)
				out[n++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (n != 32 || acc != 0 || *p++ != '=' || *p++ != ':')
		return false;
	while (ows(*p))
		p++;
	return *p == '\0';
}

const struct kiln_srv_delta *kiln_srv_delta_for(const struct kiln_srv_asset *a,
						const uint8_t dict[32])
{
	for (size_t i = 0; i < a->ndeltas; i++)
		if (memcmp(a->deltas[i].dict, dict, 32) == 0)
			return &a->deltas[i];
	return NULL;
}

const struct kiln_srv_rep *kiln_srv_choose(const struct kiln_srv_asset *a, unsigned accept)
{
	const struct kiln_srv_rep *best = NULL;

	for (unsigned i = 1; i < a->nreps; i++) {
		const struct kiln_srv_rep *r = &a->rep[i];
		if (accept & (1u << r->coding) && (!best || r->size <= best->size))
			best = r;
	}
	return best ? best : &a->rep[0];
}

bool kiln_srv_etag_listed(const char *inm, const char *etag)
{
	const char *p = inm;
	size_t elen = strlen(etag);

	while (*p) {
		const char *s;
		while (ows(*p) || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (*p != '"')
			return false; /* not an entity-tag list */
		s = p;
		p = strchr(p + 1, '"');
		if (!p)
			return false;
		p++;
		if ((size_t)(p - s) == elen && memcmp(s, etag, elen) == 0)
			return true;
	}
	return false;
}

/* A decimal of at most 19 digits at S[0..n); -1 otherwise. */
static long long decimal(const char *s, size_t n)
{
	long long v = 0;

	if (n == 0 || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int kiln_srv_range(const char *range, uint64_t size, uint64_t *first, uint64_t *last)
{
	const char *p, *dash, *end;
	long long a, b;

	if (!range || strncasecmp(range, "bytes=", 6) != 0)
		return 0;
	p = range + 6;
	while (ows(*p))
		p++;
	end = p + strlen(p);
	while (end > p && ows(end[-1]))
		end--;
	if (memchr(p, ',', (size_t)(end - p)))
		return 0; /* several ranges: sent whole */
	if (!(dash = memchr(p, '-', (size_t)(end - p))))
		return 0;
	if (dash == p) { /* a suffix: the last N bytes */
		if ((b = decimal(dash + 1, (size_t)(end - dash - 1))) < 0)
			return 0;
		if (b == 0 || size == 0)
			return -1;
		*first = (uint64_t)b >= size ? 0 : size - (uint64_t)b;
		*last = size - 1;
		return 1;
	}
	if ((a = decimal(p, (size_t)(dash - p))) < 0)
		return 0;
	b = dash + 1 == end ? -2 : decimal(dash + 1, (size_t)(end - dash - 1));
	if (b == -1 || (b >= 0 && b < a))
		return 0; /* malformed: ignored */
	if ((uint64_t)a >= size)
		return -1;
	*first = (uint64_t)a;
	*last = b == -2 || (uint64_t)b >= size ? size - 1 : (uint64_t)b;
	return 1;
}

static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Days from 1970-01-01 to Y-M-D (proleptic Gregorian; M 1..12). */
static long long days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

long long kiln_srv_parse_date(const char *s)
{
	/* "Sun, 06 Nov 1994 08:49:37 GMT" */
	int d, y, hh, mm, ss, m = -1, n = 0;
	char mon[4] = "", wd[4] = "";

	if (strlen(s) != 29 ||
	    sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wd, &d, mon, &y, &hh, &mm,
		   &ss, &n) != 7 || n != 29)
		return -1;
	for (int i = 0; i < 12; i++)
		if (strcmp(mon, months[i]) == 0)
			m = i + 1;
	if (m < 0 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60 || y < 1970)
		return -1;
	return days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss;
}

void kiln_srv_format_date(long long t, char out[30])
{
	long long z = (t >= 0 ? t : 0) / 86400, secs = (t >= 0 ? t : 0) % 86400;
	long long era, doe, yoe, y, doy, mp;
	int d, m;

	/* civil_from_days */
	z += 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = (int)(doy - (153 * mp + 2) / 5 + 1);
	m = (int)(mp < 10 ? mp + 3 : mp - 9);
	y += m <= 2;
	snprintf(out, 30, "%s, %02d %s %04lld %02lld:%02lld:%02lld GMT",
		 days[((t >= 0 ? t : 0) / 86400 + 4) % 7], d, months[m - 1], y % 10000,
		 secs / 3600, secs / 60 % 60, secs % 60);
}
