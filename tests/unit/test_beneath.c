/*
 * test_beneath.c - changing the tree through descriptors opened beneath its
 * top (beneath.c), on a scratch tree: a name reached through a link on the
 * way is not in the tree (ENOENT) and nothing behind the link is read,
 * opened or removed; the last component is never followed; ".." never
 * climbs above the top; a path outside the root is used as it is; a pinned
 * root keeps meaning the directory it named when pinned.
 */
#include "beneath.h"

#include "check.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-beneath-XXXXXX";

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(scratch_path(dir, rel), "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int exists(const char *rel)
{
	struct stat st;

	return lstat(scratch_path(dir, rel), &st) == 0;
}

/* The first bytes read from FD, as a string (the descriptor is closed). */
static char *slurp(int fd)
{
	static char buf[64];
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static void test_links(const char *root)
{
	char path[512];
	struct stat st;
	char *on_way;
	int fd;

	/* a plain name, in a subdirectory: read, then removed */
	snprintf(path, sizeof(path), "%s/a/b/in.txt", root);
	CHECK(strcmp(slurp(kiln_beneath_open(root, path, O_RDONLY, 0)), "inside") == 0);
	CHECK(kiln_beneath_lstat(root, path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 6);
	CHECK(kiln_beneath_link_on_way(root, path) == NULL);
	CHECK(kiln_beneath_unlink(root, path) == 0 && !exists("top/a/b/in.txt"));

	/* through a directory link that leads outside: refused, the file behind kept */
	snprintf(path, sizeof(path), "%s/a/out/secret.txt", root);
	errno = 0;
	CHECK(kiln_beneath_open(root, path, O_RDONLY, 0) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(kiln_beneath_lstat(root, path, &st) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(kiln_beneath_unlink(root, path) == -1 && errno == ENOENT);
	CHECK(exists("outside/secret.txt"));
	fd = kiln_beneath_open(root, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd == -1);
	if (fd >= 0)
		close(fd);
	CHECK(!exists("outside/secret.txt") || strcmp(slurp(open(scratch_path(dir, "outside/secret.txt"),
								      O_RDONLY)), "secret") == 0);
	on_way = kiln_beneath_link_on_way(root, path);
	snprintf(path, sizeof(path), "%s/a/out", root);
	CHECK_MSG(on_way && strcmp(on_way, path) == 0, "link on the way: %s", on_way ? on_way : "(none)");
	free(on_way);
	/* a link to a directory inside the tree is refused all the same */
	snprintf(path, sizeof(path), "%s/inlink/b/in2.txt", root);
	errno = 0;
	CHECK(kiln_beneath_open(root, path, O_RDONLY, 0) == -1 && errno == ENOENT);

	/* the last component is a link: lstat sees the link, open refuses it,
	 * unlink removes the link and not its target */
	snprintf(path, sizeof(path), "%s/tofile", root);
	CHECK(kiln_beneath_lstat(root, path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(kiln_beneath_open(root, path, O_RDONLY, 0) == -1 && errno == ELOOP);
	CHECK(kiln_beneath_link_on_way(root, path) == NULL); /* the last is not on the way */
	CHECK(kiln_beneath_unlink(root, path) == 0 && !exists("top/tofile") &&
	      exists("outside/secret.txt"));

	/* a regular file on the way is not a directory: not in the tree */
	snprintf(path, sizeof(path), "%s/plain/x", root);
	errno = 0;
	CHECK(kiln_beneath_lstat(root, path, &st) == -1 && errno == ENOENT);
}

static void test_dotdot(const char *root)
{
	char path[512];
	struct stat st, top, above;
	int fd;

	CHECK(stat(root, &top) == 0 && stat(dir, &above) == 0);
	/* ".." on the way, climbing out of the top: never */
	snprintf(path, sizeof(path), "%s/../outside/secret.txt", root);
	errno = 0;
	CHECK(kiln_beneath_lstat(root, path, &st) == -1 && errno == ENOENT);
	CHECK(kiln_beneath_unlink(root, path) == -1 && exists("outside/secret.txt"));
	snprintf(path, sizeof(path), "%s/a/../../outside/secret.txt", root);
	errno = 0;
	CHECK(kiln_beneath_open(root, path, O_RDONLY, 0) == -1 && errno == ENOENT);
	CHECK(kiln_beneath_unlink(root, path) == -1 && exists("outside/secret.txt"));
	/* ".." as the last component: the directory above the top is not in the tree */
	snprintf(path, sizeof(path), "%s/..", root);
	errno = 0;
	CHECK_MSG(kiln_beneath_lstat(root, path, &st) == -1 || st.st_ino != above.st_ino,
		  "lstat of ROOT/.. reached the directory above the top");
	fd = kiln_beneath_open(root, path, O_RDONLY | O_DIRECTORY, 0);
	CHECK_MSG(fd == -1 || (fstat(fd, &st) == 0 && st.st_ino != above.st_ino),
		  "open of ROOT/.. reached the directory above the top");
	if (fd >= 0)
		close(fd);
	/* the top itself has no parent in the tree */
	snprintf(path, sizeof(path), "%s/", root);
	errno = 0;
	CHECK(kiln_beneath_lstat(root, path, &st) == -1 && errno == EINVAL);
}

static void test_outside_and_pin(const char *root)
{
	char path[512], moved[512];
	const char *base;
	struct stat st;

	/* a path not under ROOT "/" is used as it is */
	snprintf(path, sizeof(path), "%s/outside/secret.txt", dir);
	CHECK(kiln_beneath_parent(root, path, &base) == AT_FDCWD && base == path);
	CHECK(kiln_beneath_lstat(root, path, &st) == 0 && st.st_size == 6);
	/* ROOT as a prefix of another name is not ROOT */
	snprintf(path, sizeof(path), "%s2/x", root);
	CHECK(kiln_beneath_parent(root, path, &base) == AT_FDCWD);

	/* pinned: ROOT keeps meaning the directory it named */
	CHECK(kiln_beneath_pin(root) == 0);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	CHECK(rename(root, moved) == 0);
	CHECK(mkdir(root, 0755) == 0);
	put("top/pinned.txt", "new top");
	snprintf(path, sizeof(path), "%s/plain", root);
	CHECK(kiln_beneath_lstat(root, path, &st) == 0 && st.st_size == 5);
	CHECK(kiln_beneath_unlink(root, path) == 0 && !exists("moved/plain"));
	snprintf(path, sizeof(path), "%s/pinned.txt", root);
	CHECK(kiln_beneath_lstat(root, path, &st) == -1 && errno == ENOENT && exists("top/pinned.txt"));
	kiln_beneath_unpin(root);
	/* unpinned: ROOT is looked up again */
	CHECK(kiln_beneath_lstat(root, path, &st) == 0 && st.st_size == 7);
}

int main(void)
{
	char root[256];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/top", dir);
	CHECK(mkdir(scratch_path(dir, "outside"), 0755) == 0);
	put("outside/secret.txt", "secret");
	CHECK(mkdir(root, 0755) == 0 && mkdir(scratch_path(dir, "top/a"), 0755) == 0 &&
	      mkdir(scratch_path(dir, "top/a/b"), 0755) == 0);
	put("top/a/b/in.txt", "inside");
	put("top/a/b/in2.txt", "inside2");
	put("top/plain", "plain");
	CHECK(symlink("../../outside", scratch_path(dir, "top/a/out")) == 0);
	CHECK(symlink("a", scratch_path(dir, "top/inlink")) == 0);
	CHECK(symlink("../outside/secret.txt", scratch_path(dir, "top/tofile")) == 0);
	test_links(root);
	test_dotdot(root);
	test_outside_and_pin(root);
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_beneath");
}
