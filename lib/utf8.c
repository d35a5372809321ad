/* utf8.c - recognising well-formed UTF-8 (RFC 3629, section 4). */
#include "kiln.h"

size_t kiln_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0; /* overlong, or a UTF-16 surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0; /* overlong, or above U+10FFFF */
		return 4;
	}
	return 0;
}
