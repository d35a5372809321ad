/*
 * test_sort.c - kiln_sort() (sort.c): paths in the walk's order, which is
 * strcmp(3)'s but where a directory's name is a prefix of a sibling's
 * followed by a byte below '/' ("assets/" walked before "assets.json"),
 * come out in strcmp(3)'s order; paths in order already cost one
 * comparison each, and nothing else.
 */
#include "sort.h"

#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t compared;

static int by_str(const void *a, const void *b)
{
	compared++;
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool in_order(const char **v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (strcmp(v[i - 1], v[i]) > 0)
			return false;
	return true;
}

int main(void)
{
	/* a walk: each directory's names sorted, "assets" visited where its
	 * name sorts, before "assets.json" */
	const char *walked[] = { "a.css", "assets/app.js", "assets/logo.svg", "assets.json",
				 "docs/index.html", "docs-v2/index.html", "index.html" };
	const char *want[] = { "a.css", "assets.json", "assets/app.js", "assets/logo.svg",
			       "docs-v2/index.html", "docs/index.html", "index.html" };
	size_t n = sizeof(walked) / sizeof(walked[0]);
	const char **big = malloc(1000 * sizeof(*big));
	char (*names)[16] = malloc(1000 * sizeof(*names));

	kiln_sort(walked, n, sizeof(*walked), by_str);
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(strcmp(walked[i], want[i]) == 0, "%zu: %s, not %s", i, walked[i], want[i]);

	/* in order already: n - 1 comparisons, the order unchanged */
	compared = 0;
	kiln_sort(want, n, sizeof(*want), by_str);
	CHECK(compared == n - 1);
	CHECK(in_order(want, n));

	/* one out of place at the end of 1,000, then backwards: sorted */
	CHECK(big && names);
	if (!big || !names)
		return check_exit("test_sort");
	for (size_t i = 0; i < 1000; i++) {
		snprintf(names[i], sizeof(names[i]), "f%04zu.js", (i * 7919) % 1000);
		big[i] = names[i];
	}
	kiln_sort(big, 1000, sizeof(*big), by_str);
	CHECK(in_order(big, 1000));
	big[999] = "a.js";
	kiln_sort(big, 1000, sizeof(*big), by_str);
	CHECK(in_order(big, 1000) && strcmp(big[0], "a.js") == 0);
	for (size_t i = 0; i < 500; i++) {
		const char *t = big[i];
		big[i] = big[999 - i];
		big[999 - i] = t;
	}
	kiln_sort(big, 1000, sizeof(*big), by_str);
	CHECK(in_order(big, 1000));
	kiln_sort(big, 0, sizeof(*big), by_str);
	kiln_sort(big, 1, sizeof(*big), by_str);
	CHECK(in_order(big, 1000));
	free(big);
	free(names);
	return check_exit("test_sort");
}
