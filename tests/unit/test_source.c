/*
 * test_source.c - opening, reading and hashing a source (source.c) on a
 * scratch tree: a file opens when it is the one the walk listed and is
 * refused when it was replaced, when it is a link not to be followed, when
 * a link lies on the way or when it is a FIFO (which must not hang); a read
 * returns the bytes and fails when the file is shorter or longer than
 * listed; the digests are the ones OpenSSL computes here; a file written to
 * after it was opened is no longer "unchanged".
 */
#include "source.h"

#include "handmade.h"

#include "check.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the walk's view of a file listed with lstat(2) */
#define LISTED(st) (&(struct kiln_stat[]){ kiln_stat_of(&(st)) }[0])

static char dir[] = "/tmp/kiln-source-XXXXXX";

static const char text[] = "body { color: #123456; } /* a source of a few dozen bytes */\n";

static void test_open(void)
{
	struct kiln_error err = { 0 };
	struct stat listed, st, other;
	uint8_t head[4];
	int fd;

	hm_put("a.css", text, strlen(text));
	hm_put("b.css", "other", 5);
	CHECK(lstat(hm_path("a.css"), &listed) == 0);
	CHECK(lstat(hm_path("b.css"), &other) == 0);

	fd = kiln_source_open(hm_root, hm_path("a.css"), false, LISTED(listed), &st, &err);
	CHECK(fd >= 0);
	CHECK(st.st_ino == listed.st_ino && st.st_size == (off_t)strlen(text));
	CHECK(kiln_source_head(fd, head, sizeof(head)) == 4 && memcmp(head, "body", 4) == 0);
	CHECK(kiln_source_unchanged(fd, &st));
	if (fd >= 0)
		close(fd);

	/* another file than the walk listed (replaced during the run) */
	memset(&err, 0, sizeof(err));
	fd = kiln_source_open(hm_root, hm_path("a.css"), false, LISTED(other), &st, &err);
	CHECK(fd < 0 && err.status == KILN_ERR_CHANGED);

	/* a gone file: an I/O error saying ENOENT */
	memset(&err, 0, sizeof(err));
	fd = kiln_source_open(hm_root, hm_path("gone.css"), false, LISTED(listed), &st, &err);
	CHECK(fd < 0 && err.status == KILN_ERR_IO && err.errnum == ENOENT);

	/* a link to it: refused unless followed */
	CHECK(symlink("a.css", hm_path("link.css")) == 0);
	memset(&err, 0, sizeof(err));
	fd = kiln_source_open(hm_root, hm_path("link.css"), false, LISTED(listed), &st, &err);
	CHECK(fd < 0 && err.status == KILN_ERR_IO);
	fd = kiln_source_open(hm_root, hm_path("link.css"), true, LISTED(listed), &st, &err);
	CHECK(fd >= 0 && st.st_ino == listed.st_ino);
	if (fd >= 0)
		close(fd);

	/* a link on the way (a directory linked out of the tree): not crossed
	 * even when the last component may be followed */
	CHECK(mkdir(scratch_path(dir, "outside"), 0755) == 0);
	{
		FILE *f = fopen(scratch_path(dir, "outside/x.css"), "w");
		struct stat xs;

		CHECK(f != NULL);
		if (f) {
			fputs(text, f);
			fclose(f);
		}
		CHECK(symlink(scratch_path(dir, "outside"), hm_path("out")) == 0);
		CHECK(stat(scratch_path(dir, "outside/x.css"), &xs) == 0);
		memset(&err, 0, sizeof(err));
		fd = kiln_source_open(hm_root, hm_path("out/x.css"), true, LISTED(xs), &st, &err);
		CHECK(fd < 0 && err.status == KILN_ERR_IO);
	}

	/* a FIFO put in the file's place: opened without hanging, refused */
	CHECK(mkfifo(hm_path("fifo.css"), 0644) == 0);
	{
		struct stat fs;

		CHECK(lstat(hm_path("fifo.css"), &fs) == 0);
		memset(&err, 0, sizeof(err));
		fd = kiln_source_open(hm_root, hm_path("fifo.css"), false, LISTED(fs), &st, &err);
		CHECK(fd < 0 && err.status == KILN_ERR_CHANGED);
	}
}

static void test_read_and_hash(void)
{
	struct kiln_error err = { 0 };
	struct stat listed, st, wrong;
	uint8_t *buf = NULL, sha256[32], sha384[48], want256[32], want384[48];
	uint64_t size = 0;
	int fd;

	CHECK(lstat(hm_path("a.css"), &listed) == 0);
	fd = kiln_source_open(hm_root, hm_path("a.css"), false, LISTED(listed), &st, &err);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(kiln_source_read(fd, &st, &buf, &err) == KILN_OK);
	CHECK(buf && memcmp(buf, text, strlen(text)) == 0);
	free(buf);

	hm_digest("sha256", text, strlen(text), want256);
	hm_digest("sha384", text, strlen(text), want384);
	CHECK(kiln_source_hash(fd, &st, sha256, sha384, &err) == KILN_OK);
	CHECK(memcmp(sha256, want256, 32) == 0 && memcmp(sha384, want384, 48) == 0);

	/* the file longer than listed: it grew while being read */
	wrong = st;
	wrong.st_size = st.st_size - 1;
	buf = NULL;
	memset(&err, 0, sizeof(err));
	CHECK(kiln_source_read(fd, &wrong, &buf, &err) == KILN_ERR_CHANGED && buf == NULL);
	CHECK(err.what && strstr(err.what, "grew"));
	memset(&err, 0, sizeof(err));
	CHECK(kiln_source_hash(fd, &wrong, sha256, sha384, &err) == KILN_ERR_CHANGED);
	/* shorter than listed: it shrank */
	wrong.st_size = st.st_size + 10;
	memset(&err, 0, sizeof(err));
	CHECK(kiln_source_read(fd, &wrong, &buf, &err) == KILN_ERR_CHANGED && buf == NULL);
	CHECK(err.what && strstr(err.what, "shrank"));
	memset(&err, 0, sizeof(err));
	CHECK(kiln_source_hash(fd, &wrong, sha256, sha384, &err) == KILN_ERR_CHANGED);

	/* written to after it was opened: no longer what was read */
	{
		int w = open(hm_path("a.css"), O_WRONLY | O_APPEND);
		struct timespec pause = { 0, 20 * 1000 * 1000 };

		nanosleep(&pause, NULL);
		CHECK(w >= 0 && write(w, "x", 1) == 1);
		if (w >= 0)
			close(w);
		CHECK(!kiln_source_unchanged(fd, &st));
	}
	close(fd);

	/* the digest of a whole file by path, and beneath the top */
	hm_put("a.css", text, strlen(text));
	CHECK(kiln_file_digest(hm_path("a.css"), false, &size, sha256) == KILN_OK);
	CHECK(size == strlen(text) && memcmp(sha256, want256, 32) == 0);
	size = 0;
	CHECK(kiln_file_digest_beneath(hm_root, hm_path("a.css"), &size, sha256) == KILN_OK);
	CHECK(size == strlen(text) && memcmp(sha256, want256, 32) == 0);
	/* a link: followed only when asked; never beneath the top */
	CHECK(kiln_file_digest(hm_path("link.css"), false, &size, sha256) == KILN_ERR_IO);
	CHECK(kiln_file_digest(hm_path("link.css"), true, &size, sha256) == KILN_OK);
	CHECK(kiln_file_digest_beneath(hm_root, hm_path("out/x.css"), &size, sha256) ==
	      KILN_ERR_IO);
	/* a directory is not a file */
	errno = 0;
	CHECK(kiln_file_digest(hm_root, true, &size, sha256) == KILN_ERR_IO && errno == EINVAL);
}

int main(void)
{
	if (!hm_begin(dir))
		return 1;
	test_open();
	test_read_and_hash();
	return scratch_end(dir, "test_source");
}
