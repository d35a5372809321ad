/* serve_log.c - `kiln serve`'s access log line (serve.h). */
#include "serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* S, quoted for the access log: bytes outside printable ASCII, '"' and
 * '\\' (and, SPACE, ' ') as \\xHH, at most CAP - 1 bytes; "-" for NULL or
 * "". */
static void log_quote(char *out, size_t cap, const char *s, bool space)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (!s || !*s)
		s = "-";
	for (; *s && n + 5 < cap; s++) {
		unsigned char b = (unsigned char)*s;
		if (b < 0x20 || b >= 0x7f || b == '"' || b == '\\' || (space && b == ' ')) {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[b >> 4];
			out[n++] = hex[b & 15];
		} else {
			out[n++] = (char)b;
		}
	}
	out[n] = '\0';
}

size_t kiln_srv_log_line(char *out, size_t cap, const struct sockaddr *addr, time_t when,
			 const struct kiln_srv_logged *r)
{
	static const char mon[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char a[INET6_ADDRSTRLEN] = "-", m[64], u[1024], v[32], ae[512], ad[128], nbytes[24] = "-";
	struct tm tm;
	int n;

	if (cap == 0)
		return 0;
	if (addr && addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, a, sizeof(a));
	else if (addr && addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, a, sizeof(a));
	if (!gmtime_r(&when, &tm))
		memset(&tm, 0, sizeof(tm));
	if (r->bytes)
		snprintf(nbytes, sizeof(nbytes), "%llu", r->bytes);
	log_quote(m, sizeof(m), r->method, true);
	log_quote(u, sizeof(u), r->url, true);
	log_quote(v, sizeof(v), r->version, true);
	log_quote(ae, sizeof(ae), r->ae, false);
	log_quote(ad, sizeof(ad), r->ad, false);
	n = snprintf(out, cap,
		     "%s - - [%02d/%s/%04d:%02d:%02d:%02d +0000] \"%s %s %s\" %u %s ce=\"%s\" ae=\"%s\" ad=\"%s\"\n",
		     a, tm.tm_mday, mon[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, m, u, v, r->status, nbytes, r->ce ? r->ce : "-", ae, ad);
	if (n < 0)
		return 0;
	if ((size_t)n >= cap) { /* cut: still one line */
		out[cap - 2] = '\n';
		out[cap - 1] = '\0';
		return cap - 1;
	}
	return (size_t)n;
}
