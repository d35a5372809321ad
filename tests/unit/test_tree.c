/*
 * test_tree.c - one operation on one tree (tree.c): how a root as typed is
 * normalised for messages, and progress that never counts a file for more
 * than its size; and sibling names that must fit NAME_MAX (sibling.c).
 */
#include "run.h"
#include "sibling.h"

#include "check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void check_root(const char *typed, const char *want)
{
	char *got = kiln_root_normalise(typed);

	CHECK_MSG(got && strcmp(got, want) == 0, "'%s' -> '%s', want '%s'", typed,
		  got ? got : "(null)", want);
	free(got);
}

static void test_roots(void)
{
	check_root("dist", "dist");
	check_root("dist/", "dist");
	check_root("dist///", "dist");
	check_root("./s//assets/", "./s/assets");
	check_root("a/./b/.", "a/b");
	check_root("/", "/");
	check_root("//", "/");
	check_root("/./srv//www/", "/srv/www");
	check_root(".", ".");
	check_root("./", ".");
	check_root("./.", ".");
	check_root("../x/", "../x"); /* ".." is left alone: it depends on links */
	check_root("", "");
}

struct seen {
	uint64_t files, bytes;
	unsigned calls;
};

static void on_progress(void *user, uint64_t files, uint64_t bytes)
{
	struct seen *s = user;

	s->files += files;
	s->bytes += bytes;
	s->calls++;
}

static void test_progress(void)
{
	struct kiln_options opt;
	struct seen seen = { 0, 0, 0 };
	struct kiln_callbacks cb = { .on_progress = on_progress, .user = &seen };
	struct kiln_run *run;
	struct kiln_tree t;
	uint64_t credited = 0;

	kiln_options_init(&opt);
	opt.jobs = 1;
	run = kiln_run_new(&opt, &cb);
	CHECK(run != NULL);
	if (!run)
		return;
	CHECK(kiln_tree_begin(&t, run, "somewhere", &run->cb) == KILN_OK);
	kiln_tree_progress(&t, &credited, 100, 0, 60);
	CHECK(seen.bytes == 60 && credited == 60 && seen.calls == 1);
	kiln_tree_progress(&t, &credited, 100, 0, 60); /* capped at the file's size */
	CHECK(seen.bytes == 100 && credited == 100);
	kiln_tree_progress(&t, &credited, 100, 0, 5); /* nothing left: no call */
	CHECK(seen.calls == 2);
	kiln_tree_progress(&t, &credited, 100, 1, 100); /* done: the file, no bytes */
	CHECK(seen.files == 1 && seen.bytes == 100 && seen.calls == 3);
	kiln_tree_end(&t);
	kiln_run_free(run);
}

static void test_name_fits(void)
{
	char name[NAME_MAX + 2], rel[NAME_MAX + 16];

	memset(name, 'x', sizeof(name));
	name[NAME_MAX - 3] = '\0'; /* 252 bytes */
	CHECK(kiln_sibling_name_fits(name, ".gz"));  /* 255 */
	CHECK(!kiln_sibling_name_fits(name, ".zst")); /* 256 */
	snprintf(rel, sizeof(rel), "deep/dir/%s", name); /* only the last component counts */
	CHECK(kiln_sibling_name_fits(rel, ".br"));
	name[NAME_MAX - 3] = 'x';
	name[NAME_MAX - 2] = '\0'; /* 253 bytes */
	CHECK(strlen(name) == 253);
	CHECK(!kiln_sibling_name_fits(name, ".gz"));
}

int main(void)
{
	test_roots();
	test_progress();
	test_name_fits();
	return check_exit("test_tree");
}
