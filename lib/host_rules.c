/*
 * host_rules.c - the rules of host.h that hold whatever kiln runs on, and
 * that its unit tests check natively: the names Windows cannot hold, the
 * mode bits it has, and when a call it refused is worth trying again.
 * The stand-ins of the WebAssembly build that apply them are in host.c.
 */
#include "host.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

const char *kiln_host_name_refused(const char *name, unsigned flags)
{
	static const char *const devices[] = { "CON", "PRN", "AUX", "NUL" };
	size_t n = strlen(name), stem = strcspn(name, ". ");

	if (!(flags & KILN_HOST_WINDOWS))
		return NULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || strchr("<>:\"/\\|?*", *p))
			return *p == '\\' ? "a name with '\\' (a directory separator on Windows)"
					  : "a name with a character Windows refuses";
	if (n > 0 && (name[n - 1] == '.' || name[n - 1] == ' '))
		return "a name ending in '.' or ' ' (Windows drops them)";
	/* a device name, alone or with an extension: "nul", "Com1.js" */
	for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++)
		if (stem == 3 && strncasecmp(name, devices[i], 3) == 0)
			return "a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
	if ((strncasecmp(name, "COM", 3) == 0 || strncasecmp(name, "LPT", 3) == 0) &&
	    ((stem == 4 && name[3] >= '1' && name[3] <= '9') ||
	     /* superscript 1, 2, 3 in UTF-8 */
	     (stem == 5 && (unsigned char)name[3] == 0xc2 &&
	      ((unsigned char)name[4] == 0xb9 || (unsigned char)name[4] == 0xb2 ||
	       (unsigned char)name[4] == 0xb3))))
		return "a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
	/* the console's own: "CONIN$", "conout$.js" */
	if ((stem == 6 && strncasecmp(name, "CONIN$", 6) == 0) ||
	    (stem == 7 && strncasecmp(name, "CONOUT$", 7) == 0))
		return "a Windows device name (CONIN$, CONOUT$)";
	return NULL;
}

mode_t kiln_host_mode(mode_t mode, unsigned flags)
{
	if (!(flags & KILN_HOST_WINDOWS))
		return mode;
	return (mode & S_IFMT) | (S_ISDIR(mode) ? 0755 : 0644);
}

bool kiln_host_retry(int errnum, unsigned attempt, unsigned flags, unsigned *wait_ms)
{
	/* 10, 20, 40 ... 640 ms: 1.27 s of waiting over 8 tries */
	if (!(flags & KILN_HOST_WINDOWS) || attempt >= 7 ||
	    (errnum != EACCES && errnum != EPERM && errnum != EBUSY))
		return false;
	*wait_ms = 10u << attempt;
	return true;
}
