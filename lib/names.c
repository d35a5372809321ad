/* names.c - names of outcomes, and kiln's own version. */
#include "kiln.h"

static const char *const outcome_names[KILN_NOUTCOMES] = {
	[KILN_OUTCOME_COMPRESSED] = "compressed",
	[KILN_OUTCOME_SIBLING] = "sibling",
	[KILN_OUTCOME_EXCLUDED] = "excluded",
	[KILN_OUTCOME_MEDIA] = "media",
	[KILN_OUTCOME_SMALL] = "small",
	[KILN_OUTCOME_NO_GAIN] = "no-gain",
	[KILN_OUTCOME_SYMLINK] = "symlink",
	[KILN_OUTCOME_SPECIAL] = "special",
	[KILN_OUTCOME_ERROR] = "error",
};

const char *kiln_outcome_name(kiln_outcome outcome)
{
	return (unsigned)outcome < KILN_NOUTCOMES ? outcome_names[outcome] : "?";
}

const char *kiln_version(void)
{
	return KILN_VERSION_STRING;
}
