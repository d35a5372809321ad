/*
 * shard_arg.h - the argument of --shard: "K/N", or "auto" from the
 * environment of the CI engine that runs kiln.
 */
#ifndef KILN_SHARD_ARG_H
#define KILN_SHARD_ARG_H

#include <stddef.h>

/*
 * Parse ARG ("K/N" with 1 <= K <= N <= KILN_MAX_SHARDS, or "auto") into *K
 * and *N.  "auto" reads the engines that give both a shard's index and the
 * count (GitLab CI, CircleCI, Buildkite, Azure Pipelines; docs/shards.md,
 * "Shards: past one machine"); none, or two that disagree, is an error.
 * Returns NULL, or a
 * message for a usage error written into MSG (LEN bytes).
 */
const char *shard_arg_parse(const char *arg, unsigned *k, unsigned *n, char *msg, size_t len);

#endif
