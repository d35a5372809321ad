/*
 * sibling.c - create-temp, write, set metadata, rename.
 *
 * Order matters: data first, then fchmod (the temp file starts 0600), then
 * futimens last, because any later write would move mtime again.  rename(2)
 * does not touch the file's timestamps, so the final name carries the
 * source's mtime, which is what nginx turns into Last-Modified and ETag.
 */
#include "sibling.h"

#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

int kiln_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Does the file at PATH hold exactly DATA[0..len)? */
static bool same_content(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uint8_t buf[65536];
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		return false;
	while (done < len && (n = read(fd, buf, sizeof(buf))) > 0) {
		if ((size_t)n > len - done || memcmp(buf, data + done, (size_t)n) != 0)
			break;
		done += (size_t)n;
	}
	n = done == len ? read(fd, buf, 1) : -1;
	close(fd);
	return done == len && n == 0;
}

/* fsync the directory holding PATH (its first DIRLEN bytes, or "."). */
static int sync_dir(const char *path, size_t dirlen)
{
	char dir[PATH_MAX];
	int fd, ret;

	if (dirlen == 0)
		strcpy(dir, ".");
	else
		memcpy(dir, path, dirlen), dir[dirlen] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

/* Remove the slot's temporary file I after a failure. */
static void drop_temp(struct kiln_tempslot *slot, unsigned i)
{
	pthread_mutex_lock(&slot->lock);
	if (slot->t[i].live)
		unlink(slot->t[i].path);
	slot->t[i].live = false;
	pthread_mutex_unlock(&slot->lock);
}

/* The refusals for an existing FINAL_PATH; *st gets its status (mode 0 if
 * there is none). */
static kiln_status check_final(const char *final_path, const struct kiln_file_meta *meta,
			       struct stat *st, struct kiln_error *err)
{
	const char *slash = strrchr(final_path, '/');

	if (strlen(slash ? slash + 1 : final_path) > NAME_MAX)
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "name too long");
	if (lstat(final_path, st) != 0)
		st->st_mode = 0;
	else if (!S_ISREG(st->st_mode))
		return kiln_fail(err, KILN_ERR_UNSAFE, 0,
			    S_ISLNK(st->st_mode) ? "is a symbolic link, not replaced"
			    : S_ISDIR(st->st_mode) ? "is a directory, not replaced"
						   : "is not a regular file, not replaced");
	/* kiln gives siblings their source's mode: a sibling with no write bit
	 * beside a writable source was made read-only on purpose */
	if (meta->refuse_read_only && S_ISREG(st->st_mode) && (st->st_mode & 0222) == 0 &&
	    (meta->mode & 0222) != 0)
		return kiln_fail(err, KILN_ERR_UNSAFE, EACCES, "is read-only, not replaced");
	return KILN_OK;
}

static int create_temp(struct kiln_tempslot *slot, unsigned i, const char *final_path,
		       struct kiln_error *err)
{
	const char *slash = strrchr(final_path, '/');
	size_t dirlen = slash ? (size_t)(slash - final_path) + 1 : 0;
	char *path = slot->t[i].path;
	int fd, e;

	if (dirlen + sizeof(".kiln-XXXXXX.tmp") > sizeof(slot->t[i].path)) {
		kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "cannot create temporary file");
		return -1;
	}
	pthread_mutex_lock(&slot->lock);
	if (slot->closed) {
		pthread_mutex_unlock(&slot->lock);
		kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
		return -1;
	}
	memcpy(path, final_path, dirlen);
	memcpy(path + dirlen, ".kiln-XXXXXX.tmp", sizeof(".kiln-XXXXXX.tmp"));
	fd = mkostemps(path, 4, O_CLOEXEC);
	slot->t[i].live = fd >= 0;
	e = errno;
	pthread_mutex_unlock(&slot->lock);
	if (fd < 0) {
		kiln_fail(err, KILN_ERR_IO, e, "cannot create temporary file");
		return -1;
	}
	/* held until close: a later run can tell a live temp from a dead one's */
	flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

int kiln_temp_create(struct kiln_tempslot *slot, unsigned i, const char *final_path,
		     const struct kiln_file_meta *meta, struct kiln_error *err)
{
	struct stat st;

	if (check_final(final_path, meta, &st, err) != KILN_OK)
		return -1;
	return create_temp(slot, i, final_path, err);
}

void kiln_temp_discard(struct kiln_tempslot *slot, unsigned i, int fd)
{
	close(fd);
	drop_temp(slot, i);
}

kiln_status kiln_temp_commit(struct kiln_tempslot *slot, unsigned i, int fd,
			     const char *final_path, const struct kiln_file_meta *meta,
			     struct kiln_error *err)
{
	const char *slash = strrchr(final_path, '/');
	size_t dirlen = slash ? (size_t)(slash - final_path) + 1 : 0;
	const char *what;
	struct stat st;
	int e;

	if (fchmod(fd, meta->mode) != 0) {
		what = "cannot set permissions";
		goto fail_close;
	}
	if (meta->set_owner && geteuid() == 0 && fchown(fd, meta->uid, meta->gid) != 0) {
		/* best effort: a filesystem without owners is not an error */
	}
	if (meta->times && futimens(fd, meta->times) != 0) {
		what = "cannot set times";
		goto fail_close;
	}
	if (meta->fsync && fsync(fd) != 0) {
		what = "cannot write";
		goto fail_close;
	}
	if (close(fd) != 0) { /* NFS and some quotas report write errors here */
		e = errno;
		drop_temp(slot, i);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot write");
	}
	pthread_mutex_lock(&slot->lock);
	if (!slot->t[i].live) { /* shut down under us: the file is gone */
		pthread_mutex_unlock(&slot->lock);
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	}
	/* checked when the temporary file was made, but a streamed sibling may
	 * take minutes: a link or directory put there since is not replaced */
	if (lstat(final_path, &st) == 0 && !S_ISREG(st.st_mode)) {
		unlink(slot->t[i].path);
		slot->t[i].live = false;
		pthread_mutex_unlock(&slot->lock);
		return kiln_fail(err, KILN_ERR_UNSAFE, 0,
			    S_ISLNK(st.st_mode) ? "is a symbolic link, not replaced"
			    : S_ISDIR(st.st_mode) ? "is a directory, not replaced"
						  : "is not a regular file, not replaced");
	}
	if (rename(slot->t[i].path, final_path) != 0) {
		e = errno;
		unlink(slot->t[i].path);
		slot->t[i].live = false;
		pthread_mutex_unlock(&slot->lock);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot rename into place");
	}
	slot->t[i].live = false;
	pthread_mutex_unlock(&slot->lock);
	if (meta->fsync && sync_dir(final_path, dirlen) != 0)
		return kiln_fail(err, KILN_ERR_IO, errno, "cannot sync directory");
	return KILN_OK;

fail_close:
	e = errno;
	close(fd);
	drop_temp(slot, i);
	return kiln_fail(err, KILN_ERR_IO, e, what);
}

kiln_status kiln_atomic_write(struct kiln_tempslot *slot, const char *final_path,
			      const uint8_t *data, size_t len,
			      const struct kiln_file_meta *meta, struct kiln_error *err)
{
	struct stat st;
	int fd, e;

	if (check_final(final_path, meta, &st, err) != KILN_OK)
		return err->status;
	if (meta->keep_if_same && S_ISREG(st.st_mode) && (size_t)st.st_size == len &&
	    same_content(final_path, data, len))
		return KILN_OK; /* nothing changed: no new inode, no new mtime */
	if ((fd = create_temp(slot, 0, final_path, err)) < 0)
		return err->status;
	if (kiln_write_all(fd, data, len) != 0) {
		e = errno;
		kiln_temp_discard(slot, 0, fd);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot write");
	}
	return kiln_temp_commit(slot, 0, fd, final_path, meta, err);
}

kiln_status kiln_artifact_write(struct kiln_tempslot *slot, const char *path, char *text,
				bool fsync, const char *what, struct kiln_error *err)
{
	struct kiln_file_meta meta = { .mode = 0644, .keep_if_same = true, .fsync = fsync };
	kiln_status st;

	if (!text)
		return kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, what);
	st = kiln_atomic_write(slot, path, (const uint8_t *)text, strlen(text), &meta, err);
	free(text);
	return st;
}

struct kiln_file_meta kiln_sibling_meta(const struct stat *src, bool fsync,
					struct timespec times[2])
{
	times[0] = src->st_atim;
	times[1] = src->st_mtim;
	return (struct kiln_file_meta){
		.mode = src->st_mode & 0777,
		.times = times,
		.uid = src->st_uid,
		.gid = src->st_gid,
		.set_owner = true,
		.fsync = fsync,
		.refuse_read_only = true,
	};
}

kiln_status kiln_sibling_check(const char *final_path, const struct stat *src,
			       struct kiln_error *err)
{
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src, false, times);
	struct stat st;

	return check_final(final_path, &meta, &st, err);
}

kiln_status kiln_sibling_write(struct kiln_tempslot *slot, const char *final_path,
			       const uint8_t *data, size_t len, const struct stat *src,
			       bool fsync, struct kiln_error *err)
{
	struct timespec times[2];
	struct kiln_file_meta meta = kiln_sibling_meta(src, fsync, times);

	return kiln_atomic_write(slot, final_path, data, len, &meta, err);
}

bool kiln_temp_is_stale(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct timespec now;
	struct stat st;
	bool stale;

	if (fd < 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	stale = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		now.tv_sec - st.st_ctim.tv_sec > KILN_TEMP_STALE_SECONDS &&
		flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return stale;
}

void kiln_tempslot_init(struct kiln_tempslot *slot)
{
	memset(slot, 0, sizeof(*slot));
	pthread_mutex_init(&slot->lock, NULL);
}

void kiln_tempslot_destroy(struct kiln_tempslot *slot)
{
	pthread_mutex_destroy(&slot->lock);
}

void kiln_tempslot_shutdown(struct kiln_tempslot *slot)
{
	pthread_mutex_lock(&slot->lock);
	for (unsigned i = 0; i < KILN_TEMPSLOT_FILES; i++) {
		if (slot->t[i].live)
			unlink(slot->t[i].path);
		slot->t[i].live = false;
	}
	slot->closed = true;
	pthread_mutex_unlock(&slot->lock);
}
