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

#include "beneath.h"
#include "error.h"
#include "paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
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

void kiln_temps_set_root(struct kiln_temps *reg, const char *root)
{
	reg->root = root;
}

/* the one failure that comes after the rename: see kiln_tempfile_in_place() */
static const char SYNC_DIR_FAILED[] = "cannot sync directory";

/* Under REG's lock: link TF in. */

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
		unlinkat(tf->dirfd, tf->name, 0);
	link_out(tf);
}

/* TF is finished: close its directory. */
static void close_dir(struct kiln_tempfile *tf)
{
	if (tf->dirfd >= 0)
		close(tf->dirfd);
	tf->dirfd = AT_FDCWD;
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

/* Does the file BASE in DFD hold exactly DATA[0..len)? */
static bool same_content(int dfd, const char *base, const uint8_t *data, size_t len)
{
	int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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

static const char *not_replaced(mode_t mode)
{
	return S_ISLNK(mode)   ? "is a symbolic link, not replaced"
	       : S_ISDIR(mode) ? "is a directory, not replaced"
			       : "is not a regular file, not replaced";
}

/* fsync the directory DFD, or the one holding PATH (DFD AT_FDCWD). */
static int sync_dir(int dfd, const char *path)
{
	size_t n = dir_len(path);
	char dir[PATH_MAX];
	int fd, ret;

	if (dfd >= 0)
		return fsync(dfd);
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

/* The directory FINAL_PATH's file is changed through: opened beneath
 * REG's root when FINAL_PATH lies in the tree (the caller closes it), else
 * AT_FDCWD (*BASE is then FINAL_PATH); -1 with errno set (ENOENT for a
 * link on the way). */
static int final_dir(const struct kiln_temps *reg, const char *final_path, const char **base)
{
	*base = final_path;
	return reg && reg->root ? kiln_beneath_parent(reg->root, final_path, base) : AT_FDCWD;
}

/* kiln_final_check() of the file BASE in DFD. */
static kiln_status final_check_at(int dfd, const char *base, const struct kiln_file_meta *meta,
				  struct kiln_error *err)
{
	const char *slash = strrchr(base, '/');
	struct stat st;

	if (strlen(slash ? slash + 1 : base) > NAME_MAX)
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "name too long");
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return KILN_OK;
	if (!S_ISREG(st.st_mode))
		return kiln_fail(err, KILN_ERR_UNSAFE, 0, not_replaced(st.st_mode));
	/* kiln gives siblings their source's mode: a sibling with no write bit
	 * beside a writable source was made read-only on purpose */
	if (meta->refuse_read_only && (st.st_mode & 0222) == 0 && (meta->mode & 0222) != 0)
		return kiln_fail(err, KILN_ERR_UNSAFE, EACCES, "is read-only, not replaced");
	return KILN_OK;
}

/* Create a new file DFD/NAME, whose last 10 bytes are "XXXXXX.tmp": the
 * six X replaced until the name is new (O_EXCL, never following a link),
 * mode 0600.  The descriptor, or -1 with errno set. */
static int create_unique(int dfd, char *name, size_t len, int flags)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long counter;
	char *x = name + len - 6;
	unsigned char r[6];
	int fd;

	for (int tries = 0; tries < 1000; tries++) {
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			unsigned long v = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 2654435761u ^
					  (unsigned long)getpid() ^ (unsigned long)time(NULL);
			for (int i = 0; i < 6; i++, v >>= 6)
				r[i] = (unsigned char)v;
		}
		for (int i = 0; i < 6; i++)
			x[i] = chars[r[i] % (sizeof(chars) - 1)];
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}


kiln_status kiln_final_check(const char *final_path, const struct kiln_file_meta *meta,
			     struct kiln_error *err)
{
	return final_check_at(AT_FDCWD, final_path, meta, err);
}

kiln_status kiln_tempfile_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				 const char *final_path, const struct kiln_file_meta *meta,
				 struct kiln_error *err)
{
	size_t n = dir_len(final_path);
	const char *base;
	int e;

	memset(tf, 0, sizeof(*tf));
	tf->fd = -1;
	tf->reg = reg;
	tf->dirfd = AT_FDCWD;
	if (n + sizeof(TEMP_PATTERN) > sizeof(tf->path))
		return kiln_fail(err, KILN_ERR_IO, ENAMETOOLONG, "cannot create temporary file");
	if ((tf->dirfd = final_dir(reg, final_path, &base)) == -1) {
		e = errno;
		tf->dirfd = AT_FDCWD;
		return kiln_fail(err, KILN_ERR_IO, e, "cannot open its directory");
	}
	if (final_check_at(tf->dirfd, base, meta, err) != KILN_OK) {
		close_dir(tf);
		return err->status;
	}
	memcpy(tf->path, final_path, n);
	memcpy(tf->path + n, TEMP_PATTERN, sizeof(TEMP_PATTERN));
	tf->name = tf->dirfd == AT_FDCWD ? tf->path : tf->path + n;
	if (!kiln_temps_hold(reg)) {
		close_dir(tf);
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	}
	tf->fd = create_unique(tf->dirfd, (char *)tf->name, strlen(tf->name) - 4, 0);
	e = errno;
	if (tf->fd >= 0)
		link_in(reg, tf);
	kiln_temps_release(reg);
	if (tf->fd < 0) {
		close_dir(tf);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot create temporary file");
	}
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
	if (!tf->is_dir)
		close_dir(tf);
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
	const char *slash = strrchr(final_path, '/');
	/* the final name, relative to the directory the temporary file is in */
	const char *base = tf->dirfd == AT_FDCWD ? final_path : slash ? slash + 1 : final_path;
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
		close_dir(tf);
		return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
	}
	/* checked when the temporary file was made, but a streamed sibling may
	 * take minutes: a link or directory put there since is not replaced */
	if (fstatat(tf->dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		remove_entry(tf);
		pthread_mutex_unlock(&reg->lock);
		close_dir(tf);
		return kiln_fail(err, KILN_ERR_UNSAFE, 0, not_replaced(st.st_mode));
	}
	if (renameat(tf->dirfd, tf->name, tf->dirfd, base) != 0) {
		e = errno;
		remove_entry(tf);
		pthread_mutex_unlock(&reg->lock);
		close_dir(tf);
		return kiln_fail(err, KILN_ERR_IO, e, "cannot rename into place");
	}
	link_out(tf);
	pthread_mutex_unlock(&reg->lock);
	e = meta->fsync && sync_dir(tf->dirfd, final_path) != 0 ? errno : 0;
	close_dir(tf);
	if (e)
		return kiln_fail(err, KILN_ERR_IO, e, SYNC_DIR_FAILED);
	return KILN_OK;
}

bool kiln_tempfile_in_place(const struct kiln_error *err)
{
	return err->what == SYNC_DIR_FAILED;
}

/* Does FINAL_PATH hold exactly DATA[0..len), as META wants it kept? */
static bool kept_as_is(const struct kiln_temps *reg, const char *final_path, const uint8_t *data,
		       size_t len, const struct kiln_file_meta *meta, struct kiln_error *err)
{
	const char *base;
	struct stat st;
	bool same;
	int dfd;

	if (!meta->keep_if_same || (dfd = final_dir(reg, final_path, &base)) == -1)
		return false;
	same = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_size == len && final_check_at(dfd, base, meta, err) == KILN_OK &&
	       same_content(dfd, base, data, len);
	if (dfd >= 0)
		close(dfd);
	return same;
}

kiln_status kiln_write_atomic(struct kiln_temps *reg, const char *final_path,
			      const uint8_t *data, size_t len, const struct kiln_file_meta *meta,
			      struct kiln_error *err)
{
	struct kiln_tempfile tf;
	int e;

	if (kept_as_is(reg, final_path, data, len, meta, err))
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
	if (kept && kept_as_is(reg, path, (const uint8_t *)text, strlen(text), &meta, err)) {
		*kept = true;
		free(text);
		return KILN_OK;
	}
	st = kiln_write_atomic(reg, path, (const uint8_t *)text, strlen(text), &meta, err);
	free(text);
	return st;
}

void kiln_artifact_begin(struct kiln_artifact *a, struct kiln_temps *reg, const char *path,
			 bool fsync)
{
	const char *base;
	struct stat st;
	int dfd;

	memset(a, 0, sizeof(*a));
	a->reg = reg;
	a->path = path;
	a->meta = (struct kiln_file_meta){ .mode = 0644, .keep_if_same = true, .fsync = fsync };
	a->old_fd = -1;
	a->tf.fd = -1;
	if ((dfd = final_dir(reg, path, &base)) == -1)
		return;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    final_check_at(dfd, base, &a->meta, &a->err) == KILN_OK) {
		a->old_fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		a->old_size = (uint64_t)st.st_size;
	}
	a->err = (struct kiln_error){ KILN_OK, 0, "", "" };
	if (dfd >= 0)
		close(dfd);
}

void kiln_artifact_fail(struct kiln_artifact *a, const struct kiln_error *err)
{
	if (a->err.status == KILN_OK)
		a->err = *err;
}

/* The bytes differ from PATH's (or PATH holds none): the new file gets the
 * A->at bytes that matched, read back from PATH. */
static void artifact_diverge(struct kiln_artifact *a)
{
	uint8_t buf[65536];
	uint64_t off = 0;

	if (kiln_tempfile_create(a->reg, &a->tf, a->path, &a->meta, &a->err) != KILN_OK)
		goto out;
	a->writing = true;
	while (off < a->at) {
		size_t want = a->at - off < sizeof(buf) ? (size_t)(a->at - off) : sizeof(buf);
		ssize_t n = kiln_pread_full(a->old_fd, buf, want, off);
		if (n != (ssize_t)want) { /* PATH shrank under us */
			kiln_fail(&a->err, KILN_ERR_IO, n < 0 ? errno : EIO, "cannot read back");
			goto out;
		}
		if (kiln_write_all(a->tf.fd, buf, want) != 0) {
			kiln_fail(&a->err, KILN_ERR_IO, errno, "cannot write");
			goto out;
		}
		off += want;
	}
out:
	if (a->old_fd >= 0)
		close(a->old_fd);
	a->old_fd = -1;
}

void kiln_artifact_put(struct kiln_artifact *a, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t buf[65536];

	if (a->err.status != KILN_OK || !n)
		return;
	while (a->old_fd >= 0 && n) {
		size_t want = n < sizeof(buf) ? n : sizeof(buf);
		if (a->old_size - a->at < want ||
		    kiln_pread_full(a->old_fd, buf, want, a->at) != (ssize_t)want ||
		    memcmp(buf, b, want) != 0)
			break;
		a->at += want;
		b += want;
		n -= want;
	}
	if (!n)
		return;
	if (!a->writing)
		artifact_diverge(a);
	if (a->err.status != KILN_OK)
		return;
	if (kiln_write_all(a->tf.fd, b, n) != 0) {
		kiln_fail(&a->err, KILN_ERR_IO, errno, "cannot write");
		return;
	}
	a->at += n;
}

kiln_status kiln_artifact_end(struct kiln_artifact *a, bool *kept, struct kiln_error *err)
{
	*kept = false;
	if (a->err.status == KILN_OK && a->old_fd >= 0 && a->at == a->old_size) {
		close(a->old_fd);
		a->old_fd = -1;
		*kept = true;
		return KILN_OK;
	}
	if (a->err.status == KILN_OK && !a->writing)
		artifact_diverge(a); /* shorter than the old file, or none there */
	if (a->err.status != KILN_OK) {
		*err = a->err;
		kiln_artifact_abandon(a);
		return err->status;
	}
	a->writing = false;
	return kiln_tempfile_commit(&a->tf, a->path, &a->meta, err);
}

void kiln_artifact_abandon(struct kiln_artifact *a)
{
	if (a->old_fd >= 0)
		close(a->old_fd);
	a->old_fd = -1;
	if (a->writing)
		kiln_tempfile_discard(&a->tf);
	a->writing = false;
}

kiln_status kiln_tempdir_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				const char *parent, const char *prefix, struct kiln_error *err)
{
	int n, e;

	memset(tf, 0, sizeof(*tf));
	tf->fd = -1;
	tf->reg = reg;
	tf->is_dir = true;
	tf->dirfd = AT_FDCWD;
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
	int fd, dfd, e;

	if (!(*path = malloc(n))) {
		kiln_fail(err, KILN_ERR_NOMEM, ENOMEM, "out of memory");
		return -1;
	}
	snprintf(*path, n, "%s/%sXXXXXX", dir, prefix);
	/* in DIR as the tree began (beneath.h: DIR is a pinned top) */
	dfd = kiln_beneath_top(dir);
	fd = dfd >= 0 ? create_unique(dfd, *path + n - strlen(prefix) - sizeof("XXXXXX"),
				      strlen(prefix) + 6, flags)
		      : -1;
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		kiln_fail(err, KILN_ERR_IO, e, "cannot create file");
		free(*path);
		*path = NULL;
		return -1;
	}
	flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

bool kiln_temp_is_stale(const char *root, const char *path)
{
	int fd = kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0);
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

int kiln_temp_remove_dead(const char *root, const char *path)
{
	if (!kiln_temp_is_stale(root, path)) {
		errno = EBUSY;
		return -1;
	}
	return kiln_beneath_unlink(root, path);
}
