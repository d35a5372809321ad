/*
 * host.c - what differs between the systems kiln runs on (host.h).
 *
 * The native kiln calls Linux directly: the rules of host.h are in
 * host_rules.c, which both builds have.  The WebAssembly kiln runs under
 * Node.js on Linux, macOS or Windows, where Emscripten's C library
 * (Debian 12's Emscripten 3.1.6) makes each file call a call of Node's fs
 * module on the host's files (NODERAWFS): by path (Node has no openat),
 * on the main thread, which holds Emscripten's table of descriptors.
 * Where that is not what the rest of lib/ relies on, a function below
 * takes the place of the C library's function of the same name (the
 * linker finds libkiln's first), with what differs said above it:
 *
 *   fstatat     times in whole seconds, inode numbers through a double
 *   utimensat   milliseconds where Node takes seconds
 *   fsync       does nothing
 *   flock       does nothing (this one is __wrap_flock: Emscripten's sits
 *               in an object the linker takes for other functions)
 *   openat      directories (Windows opens none), O_NOFOLLOW (Windows
 *               ignores it), names (Windows), case (macOS, Windows)
 *   dup         directories, again
 *   renameat, unlinkat   files held open (Windows), case
 *   mkdirat, symlinkat, linkat   names; no hard links, links by address
 *   fchmod      no mode bits (Windows)
 *   isatty, ioctl   a terminal of 80 columns, whatever is there
 *   getdents    names as strings, a listing cut short in silence
 *   sigwait, raise, pthread_sigmask   no signal from outside reaches
 *               the program
 *   strerror    other words
 *   getrandom   missing
 *
 * They run on the main thread (on_main()), as Emscripten's own calls do,
 * and use Emscripten 3.1.6's JavaScript (FS, SYSCALLS, ERRNO_CODES) as it
 * is: a new Emscripten needs this file read again.  What cannot be done at
 * all is in docs/install.md: another kiln is not kept off the tree (Node
 * has no file locks), a directory swapped for a link during a run is not
 * caught (every path is resolved again from its start), and times are kept
 * to the microsecond (Node's utimes).
 */
#include "host.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#ifndef __EMSCRIPTEN__

unsigned kiln_host_flags(void)
{
	return 0;
}

bool kiln_host_runtime(const char **name, const char **version)
{
	(void)name;
	(void)version;
	return false;
}

#else /* the WebAssembly build: the stand-ins */

#include "kiln.h"

#include <dirent.h>
#include <emscripten.h>
#include <emscripten/threading.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Emscripten's system calls (its syscall_arch.h): -errno on failure. */
long __syscall_openat(long dirfd, long path, long flags, ...);
long __syscall_renameat(long olddirfd, long oldpath, long newdirfd, long newpath);
long __syscall_unlinkat(long dirfd, long path, long flags);
long __syscall_mkdirat(long dirfd, long path, long mode);
long __syscall_fchmod(long fd, long mode);
long __syscall_dup(long fd);
long __syscall_ioctl(long fd, long op, ...);

/* Emscripten's version, "3.1.6" */
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define VERSION_TEXT                                                       \
	TEXT(__EMSCRIPTEN_major__) "." TEXT(__EMSCRIPTEN_minor__) "." TEXT(__EMSCRIPTEN_tiny__)

/* ---- Node's side: functions of packaging/wasm/host.js, the JavaScript
 * half of this file (what each does is said there), run on the main thread:
 * 0 or a result, or -errno. */
EM_JS(int, js_flags, (void), { return kilnFlags(); });
EM_JS(char *, js_node_version, (const char *version), { return kilnNodeVersion(version); });
EM_JS(int, js_stat, (int dirfd, const char *path, int empty, int nofollow, uint32_t *out),
	{ return kilnStat(dirfd, path, empty, nofollow, out); });
EM_JS(int, js_listed, (int dirfd, const char *path, int op), { return kilnListed(dirfd, path, op); });
EM_JS(int, js_open_dir, (int dirfd, const char *path, int flags, int same),
	{ return kilnOpenDir(dirfd, path, flags, same); });
EM_JS(int, js_getdents, (int fd, uint8_t *dirp, int count, int size, const int *off),
	{ return kilnGetdents(fd, dirp, count, size, off); });
EM_JS(int, js_utimes, (int fd, const char *path, int nofollow, double at, int an, double mt, int mn),
	{ return kilnUtimes(fd, path, nofollow, at, an, mt, mn); });
EM_JS(int, js_fd, (int op, int fd, unsigned short *ws), { return kilnFd(op, fd, ws); });
EM_JS(int, js_link, (int hard, int olddirfd, const char *old, int newdirfd, const char *path),
	{ return kilnLink(hard, olddirfd, old, newdirfd, path); });
EM_JS(void, js_signals, (int sig), { kilnSignals(sig); });

/* ---- the C library's functions ---- */

/* All that a stand-in's call on the main thread needs. */
struct call {
	int dirfd, flags, dirfd2, count;
	const char *path, *path2;
	mode_t mode;
	struct stat *st;
	const struct timespec *times;
	void *buf;
};

/* FN(C) on the main thread, where Emscripten's descriptors are, as its own
 * calls run: FN returns a result or -errno; the result, or -1 and errno. */
static int on_main(int (*fn)(struct call *), struct call *c)
{
	int r = emscripten_is_main_runtime_thread()
			? fn(c)
			: emscripten_sync_run_in_main_runtime_thread(EM_FUNC_SIG_II, fn, c);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

static pthread_once_t flags_once = PTHREAD_ONCE_INIT;
static unsigned host_flags;
static char *node_version;

static int flags_main(struct call *c)
{
	(void)c;
	host_flags = (unsigned)js_flags();
	node_version = js_node_version(VERSION_TEXT);
	return 0;
}

static void flags_init(void)
{
	on_main(flags_main, &(struct call){ 0 });
}

unsigned kiln_host_flags(void)
{
	pthread_once(&flags_once, flags_init);
	return host_flags;
}

bool kiln_host_runtime(const char **name, const char **version)
{
	kiln_host_flags();
	*name = "emscripten";
	*version = node_version ? node_version : VERSION_TEXT ", WebAssembly";
	return true;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* -EILSEQ when PATH (or PATH2) is not UTF-8: Node's file names are strings,
 * which hold no other (Linux allows any bytes; macOS and Windows do not):
 * such a name is refused with that reason rather than taken for another. */
static int not_utf8(const char *path, const char *path2)
{
	for (const char *p = path; p && *p;) {
		size_t n = kiln_utf8_len(p);
		if (!n)
			return -EILSEQ;
		p += n;
	}
	return path2 ? not_utf8(path2, NULL) : 0;
}

/* fstatat: Emscripten 3.1.6 gives times in whole seconds and inode numbers
 * through a double, and kiln tells a changed file by its mtime to the
 * nanosecond, a hard link by its inode: Node's exact figures instead, times
 * cut to the microsecond, all Node can set (utimensat), so that a sibling's
 * mtime is its source's as kiln sees both.  On Windows, the mode of
 * kiln_host_mode(); where case folds, a name another file's is not found. */
static int stat_raw(struct call *c)
{
	uint32_t o[23];
	int r = not_utf8(c->path, NULL);

	if (r == 0)
		r = js_stat(c->dirfd, c->path, (c->flags & AT_EMPTY_PATH) != 0,
			    (c->flags & AT_SYMLINK_NOFOLLOW) != 0, o);
	if (r < 0)
		return r;
#define U64(i) ((uint64_t)o[i] | (uint64_t)o[(i) + 1] << 32)
	*c->st = (struct stat){
		.st_dev = (dev_t)U64(0), .st_ino = (ino_t)U64(2),
		.st_mode = kiln_host_mode((mode_t)o[4], host_flags), .st_nlink = (nlink_t)o[5],
		.st_uid = (uid_t)o[6], .st_gid = (gid_t)o[7], .st_rdev = (dev_t)o[8],
		.st_size = (off_t)U64(9), .st_blocks = (blkcnt_t)o[11], .st_blksize = 4096,
		.st_atim = { (time_t)U64(12), (long)(o[14] / 1000 * 1000) },
		.st_mtim = { (time_t)U64(15), (long)(o[17] / 1000 * 1000) },
		.st_ctim = { (time_t)U64(18), (long)(o[20] / 1000 * 1000) },
	};
#undef U64
	return 0;
}

/* Where case folds, whether the name C found is another file's (listed
 * under another spelling): 1, 0, or -errno. */
static int other_name(struct call *c)
{
	const char *base = base_of(c->path);
	int r;

	if (!(host_flags & KILN_HOST_CASE_FOLDS) || !*base || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0)
		return 0;
	r = js_listed(c->dirfd, c->path, 0);
	return r < 0 ? r : !r;
}

/* R, the result of a call that created (OP 1) or removed (2) PATH: where
 * case folds, its directory's listing (host.js) keeps up with it. */
static int keep_up(int r, int dirfd, const char *path, int op)
{
	if (r >= 0 && (host_flags & KILN_HOST_CASE_FOLDS))
		js_listed(dirfd, path, op);
	return r;
}

static int stat_main(struct call *c)
{
	int r = stat_raw(c);

	if (r == 0 && (r = other_name(c)) != 0)
		return r < 0 ? r : -ENOENT;
	return r;
}

int fstatat(int dirfd, const char *restrict path, struct stat *restrict st, int flags)
{
	kiln_host_flags();
	return on_main(stat_main,
		       &(struct call){ .dirfd = dirfd, .path = path, .flags = flags, .st = st });
}

/* utimensat: Emscripten 3.1.6 hands Node milliseconds where it takes
 * seconds.  Set to the microsecond, Node's precision. */
static int utimes_main(struct call *c)
{
	struct timespec t[2];
	struct stat st;

	if (not_utf8(c->path, NULL))
		return -EILSEQ;
	for (int i = 0; i < 2; i++) {
		t[i] = c->times ? c->times[i] : (struct timespec){ 0, UTIME_NOW };
		if (t[i].tv_nsec == UTIME_NOW)
			clock_gettime(CLOCK_REALTIME, &t[i]);
		if (t[i].tv_nsec == UTIME_OMIT) {
			struct call s = { .dirfd = c->dirfd, .path = c->path ? c->path : "",
					  .flags = c->path ? c->flags : AT_EMPTY_PATH, .st = &st };
			int r = stat_raw(&s);
			if (r < 0)
				return r;
			t[i] = i ? st.st_mtim : st.st_atim;
		}
	}
	return js_utimes(c->dirfd, c->path, (c->flags & AT_SYMLINK_NOFOLLOW) != 0, (double)t[0].tv_sec,
			 (int)t[0].tv_nsec, (double)t[1].tv_sec, (int)t[1].tv_nsec);
}

int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	kiln_host_flags();
	return on_main(utimes_main,
		       &(struct call){ .dirfd = dirfd, .path = path, .flags = flags, .times = times });
}

int futimens(int fd, const struct timespec times[2])
{
	return utimensat(fd, NULL, times, 0);
}

/* fsync: Emscripten 3.1.6's does nothing on Node's files, where --fsync (a
 * sibling on disk before its name) needs Node's.  isatty, ioctl
 * TIOCGWINSZ: it takes standard input, output and error for terminals of
 * 80 columns whatever they are (a progress line drawn into a CI log):
 * Node's answers instead.  Any other ioctl is Emscripten's. */
static int fd_main(struct call *c)
{
	int r = js_fd(c->count, c->dirfd, c->buf);

	return c->count == 2 && r == 0 ? -ENOTTY : r;
}

int fsync(int fd)
{
	return on_main(fd_main, &(struct call){ .dirfd = fd, .count = 1 });
}

int fdatasync(int fd)
{
	return fsync(fd);
}

int isatty(int fd)
{
	return on_main(fd_main, &(struct call){ .dirfd = fd, .count = 2 }) == 1;
}

int ioctl(int fd, int req, ...)
{
	va_list ap;
	void *arg;
	long r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == TIOCGWINSZ) {
		*(struct winsize *)arg = (struct winsize){ 0 };
		return on_main(fd_main, &(struct call){ .dirfd = fd, .count = 3, .buf = arg });
	}
	if ((r = __syscall_ioctl(fd, req, arg)) < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

/* flock: Emscripten's does nothing (and this is __wrap_flock: its own sits
 * in an object the linker takes for other functions), and Node has no file
 * locks.  Between processes nothing can be done (docs/install.md); within
 * kiln a lock is kept here by file, so that a run still tells the
 * temporary files it writes from those a killed run left (tempfile.c), as
 * flock(2) would: one descriptor at a time holds a file's, until LOCK_UN
 * or until it is closed or names another file. */
#define MAX_LOCKS 1024
static pthread_mutex_t locks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held {
	int fd;
	dev_t dev;
	ino_t ino;
} locks[MAX_LOCKS];
static size_t nlocks;

int __wrap_flock(int fd, int op);

int __wrap_flock(int fd, int op)
{
	struct stat st, hs;
	int ret = 0;

	if (fstat(fd, &st) != 0)
		return -1;
	pthread_mutex_lock(&locks_lock);
	for (size_t i = 0; i < nlocks && !ret; i++) {
		struct held *h = &locks[i];
		if (h->fd == fd || fstat(h->fd, &hs) != 0 || hs.st_dev != h->dev || hs.st_ino != h->ino)
			locks[i--] = locks[--nlocks]; /* this one's, or a holder gone */
		else if (h->dev == st.st_dev && h->ino == st.st_ino && !(op & LOCK_UN))
			ret = EWOULDBLOCK;
	}
	if (!ret && !(op & LOCK_UN)) {
		if (nlocks == MAX_LOCKS)
			ret = ENOLCK;
		else
			locks[nlocks++] = (struct held){ fd, st.st_dev, st.st_ino };
	}
	pthread_mutex_unlock(&locks_lock);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

/* openat: Node on Windows opens no directory, and ignores O_NOFOLLOW.  A
 * directory is opened here as a stream holding its path (js_open_dir()),
 * on every host, so that all run the same code, and a link is refused
 * (ELOOP) where O_NOFOLLOW asks, as Linux refuses it.  Where case folds,
 * a name another file's is not found (or, to create, exists: EEXIST); on
 * Windows, a name it cannot hold is not created (EINVAL). */
static int open_main(struct call *c)
{
	struct stat st;
	struct call s = { .dirfd = c->dirfd, .path = c->path, .st = &st,
			  .flags = (c->flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0 };
	int r = stat_raw(&s);

	if (r == 0) {
		if ((r = other_name(&s)) != 0)
			return r < 0 ? r : (c->flags & O_CREAT) ? -EEXIST : -ENOENT;
		if ((c->flags & O_CREAT) && (c->flags & O_EXCL))
			return -EEXIST;
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (S_ISDIR(st.st_mode) && (c->flags & O_ACCMODE) == O_RDONLY)
			return js_open_dir(c->dirfd, c->path, c->flags, -1);
		if (c->flags & O_DIRECTORY)
			return -ENOTDIR;
	} else if (r != -ENOENT || !(c->flags & O_CREAT)) {
		return r;
	} else if (kiln_host_name_refused(base_of(c->path), host_flags)) {
		return -EINVAL;
	}
	r = (int)__syscall_openat(c->dirfd, (long)c->path, c->flags, c->mode);
	return (c->flags & O_CREAT) ? keep_up(r, c->dirfd, c->path, 1) : r;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	struct call c = { .dirfd = dirfd, .path = path, .flags = flags };
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		c.mode = va_arg(ap, mode_t);
	va_end(ap);
	kiln_host_flags();
	return on_main(open_main, &c);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

/* dup: Emscripten's opens the path again, which for a directory Windows
 * refuses: a directory's stream is copied instead. */
static int dup_main(struct call *c)
{
	int r = js_open_dir(-1, 0, O_RDONLY | O_DIRECTORY, c->dirfd);

	return r == -ENOTDIR ? (int)__syscall_dup(c->dirfd) : r;
}

int dup(int fd)
{
	return on_main(dup_main, &(struct call){ .dirfd = fd });
}

/* Where case folds, whether PATH (relative to DIRFD) is there under another
 * file's name: 1, 0, or -errno. */
static int other_file(int dirfd, const char *path)
{
	struct stat st;
	struct call s = { .dirfd = dirfd, .path = path, .flags = AT_SYMLINK_NOFOLLOW, .st = &st };
	int r;

	if (!(host_flags & KILN_HOST_CASE_FOLDS))
		return 0;
	if ((r = stat_raw(&s)) != 0)
		return r == -ENOENT ? 0 : r;
	return other_name(&s);
}

/* renameat, unlinkat: on Windows a file another program holds open (a
 * server, a virus scanner) can be neither replaced nor removed for a
 * while: tried again (kiln_host_retry()), then the error is kiln's.
 * Where case folds, a name another file's is neither replaced (EEXIST) nor
 * removed (ENOENT); on Windows, a name it cannot hold is not created. */
static int rename_main(struct call *c)
{
	int r;

	if (not_utf8(c->path, c->path2))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->path2), host_flags))
		return -EINVAL;
	if ((r = other_file(c->dirfd2, c->path2)) != 0)
		return r < 0 ? r : -EEXIST;
	if ((r = other_file(c->dirfd, c->path)) != 0)
		return r < 0 ? r : -ENOENT;
	r = (int)__syscall_renameat(c->dirfd, (long)c->path, c->dirfd2, (long)c->path2);
	return keep_up(keep_up(r, c->dirfd, c->path, 2), c->dirfd2, c->path2, 1);
}

static int unlink_main(struct call *c)
{
	int r;

	if (not_utf8(c->path, NULL))
		return -EILSEQ;
	if ((r = other_file(c->dirfd, c->path)) != 0)
		return r < 0 ? r : -ENOENT;
	return keep_up((int)__syscall_unlinkat(c->dirfd, (long)c->path, c->flags), c->dirfd, c->path, 2);
}

static int retried(int (*fn)(struct call *), struct call *c)
{
	unsigned wait_ms;
	int r;

	kiln_host_flags();
	for (unsigned attempt = 0;; attempt++) {
		if ((r = on_main(fn, c)) == 0 || !kiln_host_retry(errno, attempt, host_flags, &wait_ms))
			return r;
		nanosleep(&(struct timespec){ wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L }, NULL);
	}
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	return retried(rename_main, &(struct call){ .dirfd = olddirfd, .path = oldpath,
						    .dirfd2 = newdirfd, .path2 = newpath });
}

int rename(const char *oldpath, const char *newpath)
{
	return renameat(AT_FDCWD, oldpath, AT_FDCWD, newpath);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	return retried(unlink_main, &(struct call){ .dirfd = dirfd, .path = path, .flags = flags });
}

int unlink(const char *path)
{
	return unlinkat(AT_FDCWD, path, 0);
}

int rmdir(const char *path)
{
	return unlinkat(AT_FDCWD, path, AT_REMOVEDIR);
}

/* mkdirat, symlinkat, linkat: on Windows, a name it cannot hold is not
 * created (EINVAL).  Emscripten 3.1.6 makes no hard link (EMLINK), and its
 * symlinkat takes the addresses of its names for the names: Node's link
 * and symlink make them.  (C->count: 0 a directory, 1 a symbolic link, 2 a
 * hard link.) */
static int make_main(struct call *c)
{
	if (not_utf8(c->path, c->path2))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->count ? c->path2 : c->path), host_flags))
		return -EINVAL;
	if (c->count == 0)
		return (int)__syscall_mkdirat(c->dirfd, (long)c->path, c->mode);
	return js_link(c->count == 2, c->dirfd, c->path, c->dirfd2, c->path2);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	kiln_host_flags();
	return on_main(make_main, &(struct call){ .dirfd = dirfd, .path = path, .mode = mode });
}

int mkdir(const char *path, mode_t mode)
{
	return mkdirat(AT_FDCWD, path, mode);
}

int symlinkat(const char *target, int newdirfd, const char *linkpath)
{
	kiln_host_flags();
	return on_main(make_main, &(struct call){ .count = 1, .path = target, .dirfd2 = newdirfd,
						  .path2 = linkpath });
}

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	if (flags & ~AT_SYMLINK_FOLLOW) {
		errno = EINVAL;
		return -1;
	}
	kiln_host_flags();
	return on_main(make_main, &(struct call){ .count = 2, .dirfd = olddirfd, .path = oldpath,
						  .dirfd2 = newdirfd, .path2 = newpath });
}

/* fchmod: Windows keeps no mode bits, and Node's chmod sets or clears the
 * read-only attribute, which would then stop the next run replacing the
 * sibling: nothing is changed there (fstatat says kiln_host_mode()). */
static int fchmod_main(struct call *c)
{
	return (host_flags & KILN_HOST_WINDOWS) ? 0 : (int)__syscall_fchmod(c->dirfd, c->mode);
}

int fchmod(int fd, mode_t mode)
{
	kiln_host_flags();
	return on_main(fchmod_main, &(struct call){ .dirfd = fd, .mode = mode });
}

/* getdents: Emscripten 3.1.6 lists names as JavaScript strings, which hold
 * no name that is not UTF-8, and gives up the whole listing, with no error
 * readdir reports, at a name it cannot find again: kiln would skip files in
 * silence.  Node's names as bytes instead, with their types (no lstat of
 * each); a name that is not UTF-8 is then refused where it is used. */
static int getdents_main(struct call *c)
{
	static const int off[] = { offsetof(struct dirent, d_ino), offsetof(struct dirent, d_off),
				   offsetof(struct dirent, d_reclen), offsetof(struct dirent, d_type),
				   offsetof(struct dirent, d_name) };

	return js_getdents(c->dirfd, c->buf, c->count, (int)sizeof(struct dirent), off);
}

long __syscall_getdents64(long fd, long dirp, long count);

long __syscall_getdents64(long fd, long dirp, long count)
{
	int r = on_main(getdents_main, &(struct call){ .dirfd = (int)fd, .count = (int)count,
						       .buf = (void *)dirp });

	return r < 0 ? -errno : r;
}

/* sigwait, raise, pthread_sigmask: Emscripten keeps signals within the
 * program (sigwait returns at once when none is pending; a raised signal's
 * default action is to do nothing), while a signal from outside (Ctrl-C,
 * a CI runner's SIGTERM) ends Node's process at once, as SIGKILL would a
 * native kiln.  Here, once a thread blocks SIGINT, SIGTERM or SIGHUP (kiln
 * does first thing, cmd/signals.c), Node hands them to kiln_host_signal()
 * for sigwait() to return them, so that kiln's signal thread does as it
 * does natively; and a fatal signal raised with its default action ends
 * the process by that signal, through Node.  (They are __wrap_ functions,
 * as flock is.) */
static pthread_mutex_t signals_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t signals_came = PTHREAD_COND_INITIALIZER;
static unsigned long signals_pending;
static pthread_once_t signals_once = PTHREAD_ONCE_INIT;

static int signals_main(struct call *c)
{
	js_signals(c->count);
	return 0;
}

static void take_signals(void)
{
	on_main(signals_main, &(struct call){ .count = 0 });
}

/* Node's, on the main thread: SIG came. */
EMSCRIPTEN_KEEPALIVE void kiln_host_signal(int sig);

EMSCRIPTEN_KEEPALIVE void kiln_host_signal(int sig)
{
	pthread_mutex_lock(&signals_lock);
	signals_pending |= 1ul << sig;
	pthread_cond_broadcast(&signals_came);
	pthread_mutex_unlock(&signals_lock);
}

int __wrap_pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old);
int __real_pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old);

int __wrap_pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
	if (how == SIG_BLOCK && set &&
	    (sigismember(set, SIGINT) || sigismember(set, SIGTERM) || sigismember(set, SIGHUP)))
		pthread_once(&signals_once, take_signals);
	return __real_pthread_sigmask(how, set, old);
}

int __wrap_sigwait(const sigset_t *restrict set, int *restrict sig);

int __wrap_sigwait(const sigset_t *restrict set, int *restrict sig)
{
	pthread_once(&signals_once, take_signals);
	pthread_mutex_lock(&signals_lock);
	for (;;) {
		for (int s = 1; s < 32; s++)
			if ((signals_pending & (1ul << s)) && sigismember(set, s)) {
				signals_pending &= ~(1ul << s);
				pthread_mutex_unlock(&signals_lock);
				*sig = s;
				return 0;
			}
		pthread_cond_wait(&signals_came, &signals_lock);
	}
}

extern struct sigaction __sig_actions[_NSIG]; /* Emscripten's raise.c */
bool __sig_is_blocked(int sig);
int __wrap_raise(int sig);
int __real_raise(int sig);

int __wrap_raise(int sig)
{
	if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !__sig_is_blocked(sig) &&
	    !(__sig_actions[sig].sa_flags & SA_SIGINFO) && __sig_actions[sig].sa_handler == SIG_DFL) {
		on_main(signals_main, &(struct call){ .count = sig });
		for (;;) /* until the signal ends the process */
			pause();
	}
	return __real_raise(sig);
}

/* strerror: Emscripten's C library (musl) words some errors otherwise than
 * Linux's (glibc), which kiln's messages, documentation and tests use
 * ("Symbolic link loop" for "Too many levels of symbolic links"): glibc's
 * words for those of file calls (__wrap_strerror, as flock is). */
char *__wrap_strerror(int errnum);
char *__real_strerror(int errnum);

char *__wrap_strerror(int errnum)
{
	static const struct {
		int errnum;
		const char *text;
	} glibc[] = {
		{ EIO, "Input/output error" }, { ENOMEM, "Cannot allocate memory" },
		{ EBUSY, "Device or resource busy" }, { EXDEV, "Invalid cross-device link" },
		{ EMFILE, "Too many open files" }, { ENOTTY, "Inappropriate ioctl for device" },
		{ ESPIPE, "Illegal seek" }, { ERANGE, "Numerical result out of range" },
		{ EDEADLK, "Resource deadlock avoided" }, { ENAMETOOLONG, "File name too long" },
		{ ELOOP, "Too many levels of symbolic links" },
		{ EOVERFLOW, "Value too large for defined data type" },
		{ EILSEQ, "Invalid or incomplete multibyte or wide character" },
		{ ENOTSUP, "Operation not supported" }, { EDQUOT, "Disk quota exceeded" },
		{ ETIMEDOUT, "Connection timed out" }, { ECHILD, "No child processes" },
	};

	for (size_t i = 0; i < sizeof(glibc) / sizeof(*glibc); i++)
		if (glibc[i].errnum == errnum)
			return (char *)glibc[i].text;
	return __real_strerror(errnum);
}

/* getrandom: missing from Emscripten 3.1.6; its getentropy (Node's crypto)
 * gives 256 bytes a call. */
ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	(void)flags;
	for (size_t done = 0; done < len; done += 256)
		if (getentropy((char *)buf + done, len - done < 256 ? len - done : 256) != 0)
			return -1;
	return (ssize_t)len;
}

#endif
