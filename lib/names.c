/* names.c - names of outcomes and events, and kiln's own version. */
#include "kiln.h"

static const char *const outcome_names[KILN_NOUTCOMES] = {
	[KILN_OUTCOME_COMPRESSED] = "compressed",
	[KILN_OUTCOME_SIBLING] = "sibling",
	[KILN_OUTCOME_EXCLUDED] = "excluded",
	[KILN_OUTCOME_MEDIA] = "media",
	[KILN_OUTCOME_SMALL] = "small",
	[KILN_OUTCOME_NO_GAIN] = "no-gain",
	[KILN_OUTCOME_LONG_NAME] = "long-name",
	[KILN_OUTCOME_SYMLINK] = "symlink",
	[KILN_OUTCOME_SPECIAL] = "special",
	[KILN_OUTCOME_ERROR] = "error",
};

const char *kiln_outcome_name(kiln_outcome outcome)
{
	return (unsigned)outcome < KILN_NOUTCOMES ? outcome_names[outcome] : "?";
}

static const char *const event_names[KILN_NEVENTS] = {
	[KILN_EVENT_REMOVED] = "removed",
	[KILN_EVENT_REMOVE_FAILED] = "cannot remove",
	[KILN_EVENT_FOREIGN] = "sibling not written by kiln, left in place",
	[KILN_EVENT_FOREIGN_STALE] = "stale sibling not written by kiln, left in place",
	[KILN_EVENT_FOREIGN_REPLACED] = "replaced a sibling not written by kiln",
	[KILN_EVENT_TEMP_REMOVED] = "removed a temporary file left by an interrupted run",
	[KILN_EVENT_STATE_IGNORED] = "previous manifest ignored",
	[KILN_EVENT_CACHE_FAILED] = "cache",
	[KILN_EVENT_INCLUDE_UNMATCHED] = "include glob matches no file",
	[KILN_EVENT_EXCLUDE_UNMATCHED] = "exclude glob matches no file",
	[KILN_EVENT_DICT_DELTA] = "dictionary delta",
	[KILN_EVENT_SNIPPET_LEFT_OUT] = "left out of a snippet",
	[KILN_EVENT_SNIPPET_EDITED] = ("a snippet this run does not write, changed since kiln wrote "
				       "it: left in place, no longer kiln's"),
	[KILN_EVENT_PREVIOUS_UNUSED] = "no dictionary deltas from this release",
	[KILN_EVENT_BEHIND_LINK] = "behind a link now, outside the tree: left alone",
	[KILN_EVENT_WAITING] = "waiting for another kiln",
	[KILN_EVENT_FINGERPRINTS] = "bundler manifest read",
	[KILN_EVENT_BYTES_CHANGED] = "bytes changed under a name read as a fingerprint; revalidated",
	[KILN_EVENT_IN_PROGRESS] = "another kiln is changing this tree",
	[KILN_EVENT_NO_MANIFEST] = "no manifest",
	[KILN_EVENT_OTHER_TREE] = "manifest of another tree",
	[KILN_EVENT_OUT_OF_DATE] = "manifest out of date",
	[KILN_EVENT_MISSING_SIBLING] = "missing sibling",
	[KILN_EVENT_STALE_SIBLING] = "stale sibling",
	[KILN_EVENT_ORPHANED_SIBLING] = "orphaned sibling",
	[KILN_EVENT_UNRECORDED_SIBLING] = "sibling not in the manifest",
	[KILN_EVENT_SIBLING_METADATA] = "sibling metadata differs from its source's",
};

const char *kiln_event_name(kiln_event event)
{
	return (unsigned)event < KILN_NEVENTS ? event_names[event] : "?";
}

const char *kiln_version(void)
{
	return KILN_VERSION_STRING;
}
