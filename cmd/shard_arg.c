/*
 * shard_arg.c - see shard_arg.h.
 *
 * Only engines that give both numbers qualify: with an index alone (a
 * Kubernetes Indexed Job's JOB_COMPLETION_INDEX) kiln cannot know how many
 * shards there are, and guessing would leave files to no shard.  GitHub
 * Actions sets neither: its matrix passes them on the command line.
 */
#include "shard_arg.h"

#include "kiln.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine {
	const char *name;
	const char *index, *count; /* environment variables */
	unsigned base;             /* the first index: 0 or 1 */
};

static const struct engine engines[] = {
	{ "GitLab CI (parallel:)", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1 },
	{ "CircleCI (parallelism:)", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0 },
	{ "Buildkite (parallelism:)", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0 },
	{ "Azure Pipelines (parallel:)", "SYSTEM_JOBPOSITIONINPHASE", "SYSTEM_TOTALJOBSINPHASE", 1 },
};

/* A decimal number from LO to HI, the whole of S. */
static bool number(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out >= lo && *out <= hi;
}

static const char *from_environment(unsigned *k, unsigned *n, char *msg, size_t len)
{
	const struct engine *found = NULL;

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		const struct engine *e = &engines[i];
		const char *is = getenv(e->index), *cs = getenv(e->count);
		unsigned long idx, cnt;
		if (!is || !cs)
			continue;
		if (!number(cs, 1, KILN_MAX_SHARDS, &cnt) ||
		    !number(is, e->base, cnt - 1 + e->base, &idx)) {
			snprintf(msg, len, "--shard auto: %s=%s and %s=%s are not a shard of %s", e->index,
				 is, e->count, cs, e->name);
			return msg;
		}
		if (found && (*k != idx + 1 - e->base || *n != cnt)) {
			snprintf(msg, len, "--shard auto: %s and %s disagree: give --shard K/N",
				 found->name, e->name);
			return msg;
		}
		found = e;
		*k = (unsigned)(idx + 1 - e->base);
		*n = (unsigned)cnt;
	}
	if (found)
		return NULL;
	if (getenv("JOB_COMPLETION_INDEX"))
		snprintf(msg, len, "--shard auto: a Kubernetes Indexed Job gives its index "
			 "(JOB_COMPLETION_INDEX) but not the count: give --shard K/N, K being "
			 "JOB_COMPLETION_INDEX + 1 and N the job's completions");
	else
		snprintf(msg, len, "--shard auto: no CI engine in the environment gives a shard "
			 "and a count (GitLab CI_NODE_INDEX/CI_NODE_TOTAL, CircleCI, Buildkite, "
			 "Azure Pipelines); elsewhere (GitHub Actions matrix, Kubernetes, GNU "
			 "parallel) give --shard K/N");
	return msg;
}

const char *shard_arg_parse(const char *arg, unsigned *k, unsigned *n, char *msg, size_t len)
{
	const char *slash = strchr(arg, '/');
	unsigned long kk, nn;
	char head[16];

	if (strcmp(arg, "auto") == 0)
		return from_environment(k, n, msg, len);
	if (slash && (size_t)(slash - arg) < sizeof(head)) {
		memcpy(head, arg, (size_t)(slash - arg));
		head[slash - arg] = '\0';
		if (number(slash + 1, 1, KILN_MAX_SHARDS, &nn) && number(head, 1, nn, &kk)) {
			*k = (unsigned)kk;
			*n = (unsigned)nn;
			return NULL;
		}
	}
	snprintf(msg, len, "--shard takes K/N (1 <= K <= N <= %d) or auto, not '%s'",
		 KILN_MAX_SHARDS, arg);
	return msg;
}
