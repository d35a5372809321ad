/*
 * test_tempfile.c - the one atomic writer (tempfile.c) and the siblings it
 * writes (sibling.c): content, permission bits and times copied, an existing
 * file replaced whole, symlinks/directories/special files at the final path
 * refused and left alone, no temporary file left behind on success or
 * failure, an unchanged artifact left alone, temporary directories, and the
 * signal-time cleanup of everything registered.
 */
#include "sibling.h"
#include "tempfile.h"

#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static int count_temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".kiln-", 6) == 0)
			n++;
	closedir(d);
	return n;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static bool has(const char *path, const char *text)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

static void test_write(void)
{
	struct kiln_temps slot;
	struct kiln_error err = { 0 };
	struct timespec times[2] = { { 1000000000, 123456789 }, { 1234567890, 987654321 } };
	struct stat src, st;

	kiln_temps_init(&slot);
	put(at("a.js"), "source bytes", 0640);
	CHECK(utimensat(AT_FDCWD, at("a.js"), times, 0) == 0);
	CHECK(stat(at("a.js"), &src) == 0);
	CHECK(kiln_sibling_write(&slot, at("a.js.gz"), (const uint8_t *)"encoded", 7, &src, false, false,
				 &err) == KILN_OK);
	CHECK(stat(at("a.js.gz"), &st) == 0); /* before reading it moves atime */
	CHECK((st.st_mode & 07777) == 0640);
	CHECK(st.st_mtim.tv_sec == 1234567890 && st.st_mtim.tv_nsec == 987654321);
	CHECK(st.st_atim.tv_sec == 1000000000 && st.st_atim.tv_nsec == 123456789);
	CHECK(has(at("a.js.gz"), "encoded"));
	CHECK(count_temps() == 0);
	CHECK(slot.head == NULL);

	/* an existing sibling is replaced whole, by a new inode */
	ino_t old = st.st_ino;
	int fd = open(at("a.js.gz"), O_RDONLY); /* a reader holding the old file */
	CHECK(kiln_sibling_write(&slot, at("a.js.gz"), (const uint8_t *)"v2", 2, &src, false, true,
				 &err) == KILN_OK);
	CHECK(has(at("a.js.gz"), "v2"));
	CHECK(stat(at("a.js.gz"), &st) == 0 && st.st_ino != old);
	char buf[16];
	CHECK(read(fd, buf, sizeof(buf)) == 7 && memcmp(buf, "encoded", 7) == 0);
	close(fd);
	/* the source is untouched */
	CHECK(has(at("a.js"), "source bytes"));
	CHECK(count_temps() == 0);
}

static void test_refusals(void)
{
	struct kiln_temps slot;
	struct kiln_error err = { 0 };
	struct stat src, st;

	kiln_temps_init(&slot);
	put(at("b.js"), "b", 0644);
	put(at("target"), "precious", 0644);
	CHECK(stat(at("b.js"), &src) == 0);

	/* a symlink at the sibling path: not followed, not replaced */
	CHECK(symlink("target", at("b.js.gz")) == 0);
	CHECK(kiln_sibling_write(&slot, at("b.js.gz"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_UNSAFE);
	CHECK(err.status == KILN_ERR_UNSAFE && err.what != NULL);
	CHECK(lstat(at("b.js.gz"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(has(at("target"), "precious"));

	/* a directory */
	CHECK(mkdir(at("b.js.br"), 0755) == 0);
	CHECK(kiln_sibling_write(&slot, at("b.js.br"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_UNSAFE);
	CHECK(lstat(at("b.js.br"), &st) == 0 && S_ISDIR(st.st_mode));

	/* a FIFO */
	CHECK(mkfifo(at("c.js.gz"), 0644) == 0);
	CHECK(kiln_sibling_write(&slot, at("c.js.gz"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_UNSAFE);
	CHECK(lstat(at("c.js.gz"), &st) == 0 && S_ISFIFO(st.st_mode));

	/* a read-only file beside a writable source: refused, unless the
	 * caller knows it for kiln's own (its source was read-only) */
	put(at("r.js.gz"), "old", 0444);
	CHECK(kiln_sibling_write(&slot, at("r.js.gz"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_UNSAFE);
	CHECK(err.errnum == EACCES && has(at("r.js.gz"), "old"));
	CHECK(kiln_sibling_check(at("r.js.gz"), &src, false, &err) == KILN_ERR_UNSAFE);
	CHECK(kiln_sibling_check(at("r.js.gz"), &src, true, &err) == KILN_OK);
	CHECK(kiln_sibling_write(&slot, at("r.js.gz"), (const uint8_t *)"x", 1, &src, true, false,
				 &err) == KILN_OK);
	CHECK(has(at("r.js.gz"), "x") && stat(at("r.js.gz"), &st) == 0 && (st.st_mode & 0777) == 0644);

	/* a directory that does not exist: I/O error with errno, nothing left */
	CHECK(kiln_sibling_write(&slot, at("nodir/d.js.gz"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_IO);
	CHECK(err.errnum == ENOENT);

	/* a name one byte over NAME_MAX: an error, never a truncated name */
	char name[NAME_MAX + 2];
	memset(name, 'n', NAME_MAX + 1);
	name[NAME_MAX + 1] = '\0';
	CHECK(kiln_sibling_write(&slot, at(name), (const uint8_t *)"x", 1, &src, false, false, &err) ==
	      KILN_ERR_IO);
	CHECK(err.errnum == ENAMETOOLONG);
	CHECK(count_temps() == 0);
	CHECK(slot.head == NULL);
}

static void test_shutdown(void)
{
	struct kiln_temps reg;
	struct kiln_tempfile a, b, d;
	struct kiln_file_meta meta = { .mode = 0644 };
	struct kiln_error err = { 0 };
	struct stat st, src;
	char inside[PATH_MAX + 16];

	kiln_temps_init(&reg);
	/* as if a writer streaming two siblings were between create and rename,
	 * while an archive's staging directory holds a file */
	CHECK(kiln_tempfile_create(&reg, &a, at("s1.gz"), &meta, &err) == KILN_OK);
	CHECK(kiln_tempfile_create(&reg, &b, at("s1.br"), &meta, &err) == KILN_OK);
	CHECK(write(a.fd, "partial", 7) == 7);
	CHECK(kiln_tempdir_create(&reg, &d, dir, ".kiln-stage-", &err) == KILN_OK);
	snprintf(inside, sizeof(inside), "%s/sub", d.path);
	CHECK(mkdir(inside, 0700) == 0);
	snprintf(inside, sizeof(inside), "%s/sub/file", d.path);
	put(inside, "x", 0600);
	CHECK(count_temps() == 3);
	kiln_temps_shutdown(&reg);
	CHECK(count_temps() == 0);
	CHECK(stat(a.path, &st) != 0 && stat(b.path, &st) != 0 && stat(d.path, &st) != 0);
	CHECK(!a.live && !b.live && !d.live && reg.closed && reg.head == NULL);
	/* the writers finish after the shutdown: nothing appears */
	CHECK(kiln_tempfile_commit(&a, at("s1.gz"), &meta, &err) == KILN_ERR_CANCELLED);
	kiln_tempfile_discard(&b);
	kiln_tempdir_remove(&d);
	CHECK(stat(at("s1.gz"), &st) != 0 && stat(at("s1.br"), &st) != 0);
	/* after shutdown, a write creates nothing at all */
	put(at("e.js"), "e", 0644);
	CHECK(stat(at("e.js"), &src) == 0);
	CHECK(kiln_sibling_write(&reg, at("e.js.gz"), (const uint8_t *)"x", 1, &src, false, false,
				 &err) == KILN_ERR_CANCELLED);
	CHECK(kiln_tempdir_create(&reg, &d, dir, ".kiln-stage-", &err) == KILN_ERR_CANCELLED);
	CHECK(!kiln_temps_hold(&reg));
	CHECK(stat(at("e.js.gz"), &st) != 0);
	CHECK(count_temps() == 0);
	kiln_temps_destroy(&reg);
}

static void test_artifact_and_unique(void)
{
	struct kiln_temps reg;
	struct kiln_error err = { 0 };
	struct stat st1, st2;
	char *path = NULL;
	bool kept = true;
	int fd;

	kiln_temps_init(&reg);
	CHECK(kiln_write_artifact(&reg, at("m.json"), strdup("{}\n"), false, "m", &kept, &err) ==
		      KILN_OK &&
	      !kept);
	CHECK(stat(at("m.json"), &st1) == 0 && (st1.st_mode & 0777) == 0644);
	/* the same text again: same inode, same mtime (nothing written) */
	CHECK(kiln_write_artifact(&reg, at("m.json"), strdup("{}\n"), false, "m", &kept, &err) ==
		      KILN_OK &&
	      kept);
	CHECK(stat(at("m.json"), &st2) == 0 && st2.st_ino == st1.st_ino &&
	      st2.st_mtim.tv_nsec == st1.st_mtim.tv_nsec && st2.st_mtim.tv_sec == st1.st_mtim.tv_sec);
	/* other text: a new inode */
	CHECK(kiln_write_artifact(&reg, at("m.json"), strdup("[]\n"), false, "m", &kept, &err) ==
		      KILN_OK &&
	      !kept);
	CHECK(stat(at("m.json"), &st2) == 0 && st2.st_ino != st1.st_ino && has(at("m.json"), "[]\n"));
	/* out of memory while building the text */
	CHECK(kiln_write_artifact(&reg, at("m.json"), NULL, false, "cannot build", NULL, &err) ==
	      KILN_ERR_NOMEM && strcmp(err.what, "cannot build") == 0);
	/* a unique file, locked while open: not stale; stale once closed and old */
	fd = kiln_unique_file(dir, ".kiln-journal-", 0, &path, &err);
	CHECK(fd >= 0 && path && strncmp(path, dir, strlen(dir)) == 0);
	CHECK(!kiln_temp_is_stale(dir, path));
	close(fd);
	CHECK(!kiln_temp_is_stale(dir, path)); /* too young */
	{
		struct timespec old[2] = { { 1, 0 }, { 1, 0 } };
		/* ctime cannot be set back: a young closed file is not stale yet */
		CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
	}
	unlink(path);
	free(path);
	kiln_temps_destroy(&reg);
}

/* With the registry's root set, every step happens in the final file's
 * directory opened beneath the root: a directory on the way that is a link
 * (to somewhere outside) makes the write fail, and nothing appears, changes
 * or goes away outside; a temporary file made before the directory was
 * swapped is renamed in the directory it was made in, never through the
 * link; the signal-time cleanup removes it there too. */
static void test_beneath(void)
{
	struct kiln_temps reg;
	struct kiln_tempfile tf;
	struct kiln_file_meta meta = { .mode = 0644 };
	struct kiln_error err = { 0 };
	char tree[PATH_MAX], outside[PATH_MAX], p[PATH_MAX + 32], q[PATH_MAX + 32];
	struct stat st;

	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	CHECK(mkdir(tree, 0755) == 0 && mkdir(outside, 0755) == 0);
	snprintf(p, sizeof(p), "%s/sub", tree);
	CHECK(symlink(outside, p) == 0);
	snprintf(q, sizeof(q), "%s/b.js.gz", outside);
	put(q, "outside's own", 0600);
	kiln_temps_init(&reg);
	kiln_temps_set_root(&reg, tree);
	/* a write through the link: refused, the outside file as it was */
	snprintf(p, sizeof(p), "%s/sub/b.js.gz", tree);
	CHECK(kiln_write_atomic(&reg, p, (const uint8_t *)"new", 3, &meta, &err) == KILN_ERR_IO &&
	      err.errnum == ENOENT);
	CHECK(has(q, "outside's own") && stat(q, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(p, sizeof(p), "%s/sub/new.js.gz", tree);
	CHECK(kiln_write_atomic(&reg, p, (const uint8_t *)"new", 3, &meta, &err) == KILN_ERR_IO);
	snprintf(q, sizeof(q), "%s/new.js.gz", outside);
	CHECK(stat(q, &st) != 0);
	/* a real directory, swapped for the link between create and commit */
	snprintf(p, sizeof(p), "%s/sub", tree);
	CHECK(unlink(p) == 0 && mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/sub/c.js.gz", tree);
	CHECK(kiln_tempfile_create(&reg, &tf, p, &meta, &err) == KILN_OK);
	CHECK(write(tf.fd, "ccc", 3) == 3);
	snprintf(p, sizeof(p), "%s/sub", tree);
	snprintf(q, sizeof(q), "%s/moved", tree);
	CHECK(rename(p, q) == 0 && symlink(outside, p) == 0);
	snprintf(p, sizeof(p), "%s/sub/c.js.gz", tree);
	CHECK(kiln_tempfile_commit(&tf, p, &meta, &err) == KILN_OK);
	snprintf(q, sizeof(q), "%s/c.js.gz", outside);
	CHECK(stat(q, &st) != 0); /* not outside */
	snprintf(q, sizeof(q), "%s/moved/c.js.gz", tree);
	CHECK(has(q, "ccc")); /* in the directory it was made in */
	/* a live temporary file whose directory moved: removed where it is */
	snprintf(p, sizeof(p), "%s/moved/d.js.gz", tree);
	CHECK(kiln_tempfile_create(&reg, &tf, p, &meta, &err) == KILN_OK);
	snprintf(p, sizeof(p), "%s/moved", tree);
	snprintf(q, sizeof(q), "%s/moved2", tree);
	CHECK(rename(p, q) == 0 && symlink(outside, p) == 0);
	kiln_temps_shutdown(&reg);
	{
		DIR *d = opendir(q);
		struct dirent *e;
		int temps = 0;
		while (d && (e = readdir(d)) != NULL)
			temps += strncmp(e->d_name, ".kiln-", 6) == 0;
		if (d)
			closedir(d);
		CHECK(d != NULL && temps == 0);
	}
	kiln_tempfile_discard(&tf);
	kiln_temps_destroy(&reg);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/kiln-test-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_write();
	test_refusals();
	test_shutdown();
	test_artifact_and_unique();
	test_beneath();
	if (check_failures == 0) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return check_exit("test_tempfile");
}
