/* codec.c - the table of content-codings, and their names. */
#include "codec.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

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

ssize_t kiln_pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

bool kiln_src_cmp_next(struct kiln_src_cmp *c, const uint8_t *p, size_t n)
{
	uint8_t buf[65536];

	if (n > c->len - c->off)
		return false;
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t r = kiln_pread_full(c->fd, buf, k, c->off);
		if (r != (ssize_t)k) {
			c->io_error = r < 0;
			return false;
		}
		if (memcmp(buf, p, k) != 0)
			return false;
		c->off += k;
		p += k;
		n -= k;
	}
	return true;
}
