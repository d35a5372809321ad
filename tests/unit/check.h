/*
 * check.h - the smallest test harness that does the job: CHECK(cond) records
 * a failure with its location and goes on; check_exit() turns the tally into
 * the process status ctest reads.
 */
#ifndef KILN_CHECK_H
#define KILN_CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                              \
	do {                                                                     \
		check_count++;                                                   \
		if (!(cond)) {                                                   \
			check_failures++;                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,   \
				__LINE__, #cond);                                \
		}                                                                \
	} while (0)

#define CHECK_MSG(cond, ...)                                                     \
	do {                                                                     \
		check_count++;                                                   \
		if (!(cond)) {                                                   \
			check_failures++;                                        \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,   \
				__LINE__, #cond);                                \
			fprintf(stderr, __VA_ARGS__);                            \
			fputc('\n', stderr);                                     \
		}                                                                \
	} while (0)

static inline int check_exit(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : (check_count ? 0 : 1);
}

#endif
