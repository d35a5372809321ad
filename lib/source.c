/* source.c - see source.h. */
#include "source.h"
#include "beneath.h"

#include "error.h"

#include "hash.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kiln_stat kiln_stat_of(const struct stat *st)
{
	return (struct kiln_stat){ st->st_mode, st->st_dev,  st->st_ino,
				   st->st_size, st->st_mtim, st->st_ctim };
}

int kiln_source_open(const char *root, const char *path, bool follow,
		     const struct kiln_stat *listed, struct stat *st, struct kiln_error *err)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	const char *base;
	/* its directory beneath the top (beneath.h); the name itself is
	 * followed only when the walk found a link to a file in the tree */
	int dfd = kiln_beneath_parent(root, path, &base), fd = -1, e;

	if (dfd != -1)
		fd = openat(dfd, base, flags);
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		kiln_fail(err, KILN_ERR_IO, e, "cannot open");
		return -1;
	}
	if (fstat(fd, st) != 0) {
		kiln_fail(err, KILN_ERR_IO, errno, "cannot stat");
		goto fail;
	}
	if (!S_ISREG(st->st_mode) || st->st_dev != listed->st_dev ||
	    st->st_ino != listed->st_ino) {
		kiln_fail(err, KILN_ERR_CHANGED, 0, "file was replaced during the run");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

ssize_t kiln_source_head(int fd, uint8_t *buf, size_t n)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, 0);
	while (r < 0 && errno == EINTR);
	return r;
}

kiln_status kiln_source_read(int fd, const struct stat *st, uint8_t **out,
			     struct kiln_error *err)
{
	size_t size = (size_t)st->st_size, done = 0;
	uint8_t *buf = NULL, extra;
	ssize_t r;

	*out = NULL;
	if ((uint64_t)st->st_size > SIZE_MAX) {
		kiln_fail(err, KILN_ERR_NOMEM, EFBIG, "file too large to read");
		return KILN_ERR_NOMEM;
	}
	if (size && !(buf = malloc(size))) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot read");
		return KILN_ERR_NOMEM;
	}
	while (done < size) {
		size_t want = size - done > (1u << 30) ? (1u << 30) : size - done;
		r = pread(fd, buf + done, want, (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			kiln_fail(err, KILN_ERR_IO, errno, "cannot read");
			goto fail;
		}
		if (r == 0) {
			kiln_fail(err, KILN_ERR_CHANGED, 0, "file shrank while being read");
			goto fail;
		}
		done += (size_t)r;
	}
	do
		r = pread(fd, &extra, 1, (off_t)size);
	while (r < 0 && errno == EINTR);
	if (r != 0) {
		kiln_fail(err, r < 0 ? KILN_ERR_IO : KILN_ERR_CHANGED, r < 0 ? errno : 0,
			r < 0 ? "cannot read" : "file grew while being read");
		goto fail;
	}
	*out = buf;
	return KILN_OK;
fail:
	free(buf);
	return err->status;
}

kiln_status kiln_source_hash(int fd, const struct stat *st, uint8_t sha256[32],
			     uint8_t sha384[48], struct kiln_error *err)
{
	enum { CHUNK = 1 << 20 };
	struct kiln_hasher *h = kiln_hasher_new();
	uint8_t *buf = malloc(CHUNK);
	off_t off = 0;
	ssize_t r;

	if (!h || !buf) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot hash");
		goto fail;
	}
	for (;;) {
		r = pread(fd, buf, CHUNK, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			kiln_fail(err, KILN_ERR_IO, errno, "cannot read");
			goto fail;
		}
		if (r == 0)
			break;
		kiln_hasher_update(h, buf, (size_t)r);
		off += r;
		if (off > st->st_size)
			break;
	}
	if (off != st->st_size) {
		kiln_fail(err, KILN_ERR_CHANGED, 0,
			off < st->st_size ? "file shrank while being read"
					  : "file grew while being read");
		goto fail;
	}
	free(buf);
	if (kiln_hasher_final(h, sha256, sha384) != KILN_OK) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "cannot hash");
		return KILN_ERR_NOMEM;
	}
	return KILN_OK;
fail:
	free(buf);
	if (h)
		kiln_hasher_final(h, NULL, NULL);
	return err->status;
}

bool kiln_source_unchanged(int fd, const struct stat *st)
{
	struct stat now;

	return fstat(fd, &now) == 0 && now.st_ino == st->st_ino &&
	       now.st_dev == st->st_dev && now.st_size == st->st_size &&
	       now.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       now.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       now.st_ctim.tv_sec == st->st_ctim.tv_sec &&
	       now.st_ctim.tv_nsec == st->st_ctim.tv_nsec;
}

static kiln_status digest_fd(int fd, uint64_t *size, uint8_t sha256[32])
{
	struct kiln_error err = { 0 };
	uint8_t sha384[48];
	struct stat st;
	kiln_status ret;
	int e = 0;

	if (fd < 0)
		return errno == ENOMEM ? KILN_ERR_NOMEM : KILN_ERR_IO;
	if (fstat(fd, &st) != 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	if (e) {
		close(fd);
		errno = e;
		return KILN_ERR_IO;
	}
	ret = kiln_source_hash(fd, &st, sha256, sha384, &err);
	*size = (uint64_t)st.st_size;
	close(fd);
	return ret;
}

kiln_status kiln_file_digest(const char *path, bool follow, uint64_t *size, uint8_t sha256[32])
{
	return digest_fd(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)),
			 size, sha256);
}

kiln_status kiln_file_digest_beneath(const char *root, const char *path, uint64_t *size,
				     uint8_t sha256[32])
{
	return digest_fd(kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0), size, sha256);
}

bool kiln_src_cmp_next(struct kiln_src_cmp *c, const uint8_t *p, size_t n)
{
	uint8_t buf[65536];

	if (n > c->len - c->off)
		return false;
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t r = kiln_pread_full(c->fd, buf, k, c->off);
		if (r != (ssize_t)k) {
			c->io_error = r < 0;
			return false;
		}
		if (memcmp(buf, p, k) != 0)
			return false;
		c->off += k;
		p += k;
		n -= k;
	}
	return true;
}
