/*
 * tempfile.c - see tempfile.h.
 *
 * Order matters in a commit: data first, then fchmod (the temporary file
 * starts 0600), then futimens last, because any later write would move
 * mtime again.  rename(2) does not touch the file's timestamps, so the final
 * name carries the times it was given, which is what servers turn into
 * Last-Modified and ETag.
 */
#include "tempfile.h"

#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define TEMP_PATTERN ".kiln-XXXXXX.tmp"

void kiln_temps_init(struct kiln_temps *reg)
{
	memset(reg, 0, sizeof(*reg));
	pthread_mutex_init(&reg->lock, NULL);
}

void kiln_temps_destroy(struct kiln_temps *reg)
{
	pthread_mutex_destroy(&reg->lock);
}

/* Under REG's lock: link TF in. */
/* the one failure that comes after the rename: see kiln_tempfile_in_place() */
static const char SYNC_DIR_FAILED[] = "cannot sync directory";

static void link_in(struct kiln_temps *reg, struct kiln_tempfile *tf)
{
	tf->reg = reg;
	tf->live = true;
	tf->prev = NULL;
	tf->next = reg->head;
	if (reg->head)
		reg->head->prev = tf;
	reg->head = tf;
}

/* Under its registry's lock: TF no longer exists on disk. */
static void link_out(struct kiln_tempfile *tf)
{
	struct kiln_temps *reg = tf->reg;

	if (!tf->live)
		return;
	if (tf->prev)
		tf->prev->next = tf->next;
	else
		reg->head = tf->next;
	if (tf->next)
		tf->next->prev = tf->prev;
	tf->next = tf->prev = NULL;
	tf->live = false;
}

/* Remove everything below the directory DFD (which is closed), never
 * following a link. */
static void remove_below(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		int sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_below(sub);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		rewinddir(d); /* entries may have moved while we removed */
	}
	closedir(d);
}

static void remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	/* a tree run's last journal may appear while we remove: a few tries */
	for (int i = 0; i < 3 && fd >= 0; i++) {
		remove_below(fd);
		if (rmdir(path) == 0 || errno != ENOTEMPTY)
			break;
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
}

/* Under the lock: remove what TF names from disk. */
static void remove_entry(struct kiln_tempfile *tf)
{
	if (tf->is_dir)
		remove_tree(tf->path);
	else
		unlink(tf->path);
	link_out(tf);
}

void kiln_temps_shutdown(struct kiln_temps *reg)
{
	pthread_mutex_lock(&reg->lock);
	while (reg->head)
		remove_entry(reg->head);
	reg->closed = true;
	pthread_mutex_unlock(&reg->lock);
}

bool kiln_temps_hold(struct kiln_temps *reg)
{
	pthread_mutex_lock(&reg->lock);
	if (!reg->closed)
		return true;
	pthread_mutex_unlock(&reg->lock);
	return false;
}

void kiln_temps_release(struct kiln_temps *reg)
{
	pthread_mutex_unlock(&reg->lock);
}

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

/* Length of PATH's directory part, with its slash (0: the current one). */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) + 1 : 0;
}

/* fsync the directory holding PATH. */
static int sync_dir(const char *path)
{
	size_t n = dir_len(path);
	char dir[PATH_MAX];
	int fd, ret;

	if (n == 0)
		strcpy(dir, ".");
	else
		memcpy(dir, path, n), dir[n] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

static const char *not_replaced(mode_t mode)
{
	return S_ISLNK(mode)   ? "is a symbolic link, not replaced"
	       : S_ISDIR(mode) ? "is a directory, not replaced"
			       : "is not a regular file, not replaced";
}

kiln_status kiln_final_check(const char *final_path, const struct kiln_file_meta *meta,
			     struct kiln_error *err)
{
	const char *slash = strrchr(final_path, '/');
	struct stat st;

	if (strlen(slash ? slash + 1 : final_path) > NAME_MAX)
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "name too long");
	if (lstat(final_path, &st) != 0)
		return KILN_OK;
	if (!S_ISREG(st.st_mode))
		return kiln_fail(err, KILN_ERR_UNSAFE, 0, not_replaced(st.st_mode));
	/* kiln gives siblings their source's mode: a sibling with no write bit
	 * beside a writable source was made read-only on purpose */
	if (meta->refuse_read_only && (st.st_mode & 0222) == 0 && (meta->mode & 0222) != 0)
		return kiln_fail(err, KILN_ERR_UNSAFE, EACCES, "is read-only, not replaced");
	return KILN_OK;
}

kiln_status kiln_tempfile_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				 const char *final_path, const struct kiln_file_meta *meta,
				 struct kiln_error *err)
{
	size_t n = dir_len(final_path);
	int e;

	memset(tf, 0, sizeof(*tf));
	tf->fd = -1;
	tf->reg = reg;
	if (kiln_final_check(final_path, meta, err) != KILN_OK)
		return err->status;
	if (n + sizeof(TEMP_PATTERN) > sizeof(tf->path))
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "cannot create temporary file");
	memcpy(tf->path, final_path, n);
	memcpy(tf->path + n, TEMP_PATTERN, sizeof(TEMP_PATTERN));
	if (!kiln_temps_hold(reg))
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	tf->fd = mkostemps(tf->path, 4, O_CLOEXEC);
	e = errno;
	if (tf->fd >= 0)
		link_in(reg, tf);
	kiln_temps_release(reg);
	if (tf->fd < 0)
		return kiln_fail(err, KILN_ERR_IO, e, "cannot create temporary file");
	/* held until close: a later run can tell a live temp from a dead one's */
	flock(tf->fd, LOCK_EX | LOCK_NB);
	return KILN_OK;
}

void kiln_tempfile_discard(struct kiln_tempfile *tf)
{
	if (tf->fd >= 0)
		close(tf->fd);
	tf->fd = -1;
	if (!tf->reg)
		return;
	pthread_mutex_lock(&tf->reg->lock);
	if (tf->live)
		remove_entry(tf);
	pthread_mutex_unlock(&tf->reg->lock);
}

/* Fail the commit of TF with (ST, E, WHAT): remove it, fill *err. */
static kiln_status commit_failed(struct kiln_tempfile *tf, kiln_status st, int e,
				 const char *what, struct kiln_error *err)
{
	kiln_tempfile_discard(tf);
	return kiln_fail(err, st, e, what);
}

kiln_status kiln_tempfile_commit(struct kiln_tempfile *tf, const char *final_path,
				 const struct kiln_file_meta *meta, struct kiln_error *err)
{
	struct kiln_temps *reg = tf->reg;
	struct stat st;
	int e;

	if (fchmod(tf->fd, meta->mode) != 0)
		return commit_failed(tf, KILN_ERR_IO, errno, "cannot set permissions", err);
	if (meta->set_owner && geteuid() == 0 && fchown(tf->fd, meta->uid, meta->gid) != 0) {
		/* best effort: a filesystem without owners is not an error */
	}
	if (meta->times && futimens(tf->fd, meta->times) != 0)
		return commit_failed(tf, KILN_ERR_IO, errno, "cannot set times", err);
	if (meta->fsync && fsync(tf->fd) != 0)
		return commit_failed(tf, KILN_ERR_IO, errno, "cannot write", err);
	e = close(tf->fd) != 0 ? errno : 0; /* NFS and quotas report write errors here */
	tf->fd = -1;
	if (e)
		return commit_failed(tf, KILN_ERR_IO, e, "cannot write", err);
	pthread_mutex_lock(&reg->lock);
	if (!tf->live) { /* shut down under us: the file is gone */
		pthread_mutex_unlock(&reg->lock);
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	}
	/* checked when the temporary file was made, but a streamed sibling may
	 * take minutes: a link or directory put there since is not replaced */
	if (lstat(final_path, &st) == 0 && !S_ISREG(st.st_mode)) {
		remove_entry(tf);
		pthread_mutex_unlock(&reg->lock);
		return kiln_fail(err, KILN_ERR_UNSAFE, 0, not_replaced(st.st_mode));
	}
	if (rename(tf->path, final_path) != 0) {
		e = errno;
		remove_entry(tf);
		pthread_mutex_unlock(&reg->lock);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot rename into place");
	}
	link_out(tf);
	pthread_mutex_unlock(&reg->lock);
	if (meta->fsync && sync_dir(final_path) != 0)
		return kiln_fail(err, KILN_ERR_IO, errno, SYNC_DIR_FAILED);
	return KILN_OK;
}

bool kiln_tempfile_in_place(const struct kiln_error *err)
{
	return err->what == SYNC_DIR_FAILED;
}

/* Does FINAL_PATH hold exactly DATA[0..len), as META wants it kept? */
static bool kept_as_is(const char *final_path, const uint8_t *data, size_t len,
		       const struct kiln_file_meta *meta, struct kiln_error *err)
{
	struct stat st;

	return meta->keep_if_same && lstat(final_path, &st) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_size == len && kiln_final_check(final_path, meta, err) == KILN_OK &&
	       same_content(final_path, data, len);
}

kiln_status kiln_write_atomic(struct kiln_temps *reg, const char *final_path,
			      const uint8_t *data, size_t len, const struct kiln_file_meta *meta,
			      struct kiln_error *err)
{
	struct kiln_tempfile tf;
	int e;

	if (kept_as_is(final_path, data, len, meta, err))
		return KILN_OK; /* nothing changed: no new inode, no new mtime */
	if (kiln_tempfile_create(reg, &tf, final_path, meta, err) != KILN_OK)
		return err->status;
	if (kiln_write_all(tf.fd, data, len) != 0) {
		e = errno;
		kiln_tempfile_discard(&tf);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot write");
	}
	return kiln_tempfile_commit(&tf, final_path, meta, err);
}

kiln_status kiln_write_artifact(struct kiln_temps *reg, const char *path, char *text,
				bool fsync, const char *what, bool *kept, struct kiln_error *err)
{
	struct kiln_file_meta meta = { .mode = 0644, .keep_if_same = true, .fsync = fsync };
	kiln_status st;

	if (kept)
		*kept = false;
	if (!text)
		return kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, what);
	if (kept && kept_as_is(path, (const uint8_t *)text, strlen(text), &meta, err)) {
		*kept = true;
		free(text);
		return KILN_OK;
	}
	st = kiln_write_atomic(reg, path, (const uint8_t *)text, strlen(text), &meta, err);
	free(text);
	return st;
}

kiln_status kiln_tempdir_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				const char *parent, const char *prefix, struct kiln_error *err)
{
	int n, e;

	memset(tf, 0, sizeof(*tf));
	tf->fd = -1;
	tf->reg = reg;
	tf->is_dir = true;
	n = snprintf(tf->path, sizeof(tf->path), "%s%s%sXXXXXX", parent,
		     *parent && parent[strlen(parent) - 1] != '/' ? "/" : "", prefix);
	if (n < 0 || (size_t)n >= sizeof(tf->path))
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "cannot create temporary directory");
	if (!kiln_temps_hold(reg))
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	e = mkdtemp(tf->path) ? 0 : errno;
	if (!e)
		link_in(reg, tf);
	kiln_temps_release(reg);
	if (e)
		return kiln_fail(err, KILN_ERR_IO, e, "cannot create temporary directory");
	return KILN_OK;
}

void kiln_tempdir_remove(struct kiln_tempfile *tf)
{
	kiln_tempfile_discard(tf);
}

int kiln_unique_file(const char *dir, const char *prefix, int flags, char **path,
		     struct kiln_error *err)
{
	size_t n = strlen(dir) + strlen(prefix) + sizeof("/XXXXXX");
	int fd;

	if (!(*path = malloc(n))) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
		return -1;
	}
	snprintf(*path, n, "%s/%sXXXXXX", dir, prefix);
	fd = mkostemp(*path, O_CLOEXEC | flags);
	if (fd < 0) {
		kiln_fail(err, KILN_ERR_IO, errno, "cannot create file");
		free(*path);
		*path = NULL;
		return -1;
	}
	flock(fd, LOCK_EX | LOCK_NB);
	return fd;
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
