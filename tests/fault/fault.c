/*
 * fault.c - a fault-injection shim, loaded with LD_PRELOAD into the real
 * kiln binary by tests/e2e/faults.sh.
 *
 * KILN_FAULT="CALL:N[:ERRNO]" makes the Nth call (1-based, counted over the
 * whole process) of CALL fail with ERRNO (default ENOSPC; ENOMEM for
 * malloc), and every later one too when N is prefixed with '+'.  CALL is
 * one of write, rename (rename and renameat), fsync, futimens, fchmod,
 * close, create (a new file made: openat with O_CREAT | O_EXCL, mkostemp,
 * mkostemps), malloc.
 * KILN_FAULT_VANISH=NAME unlinks any file whose path ends in "/NAME" just
 * before kiln opens it (open, or openat: its directory's path read from
 * /proc/self/fd) (a file that disappears between listing and reading);
 * a NAME that starts with '/' names one file exactly: only a path equal to
 * it is unlinked.
 * KILN_FAULT_KILL_AFTER_RENAME=N makes the process die of SIGKILL right
 * after its Nth successful rename or renameat (a run killed at the worst moment: a file
 * just put in place, nothing after that done).
 * KILN_FAULT_SLOW_MS=N makes every rename, renameat and unlinkat wait N milliseconds
 * first (a run slow enough that another can be started while it holds the
 * tree's lock: concurrent.sh).
 * KILN_FAULT_SLOW_OPEN_MS=N makes every openat of a file (not a directory,
 * nothing created) wait N milliseconds first (a check slow enough that a
 * whole run fits inside it: concurrent.sh).
 * KILN_FAULT_NO_OPENAT2=1 makes every openat2 system call fail with ENOSYS,
 * as on kernels before 5.6 and under qemu-user: kiln then resolves each
 * path one component at a time (lib/beneath.c's fallback), which the
 * e2e_noopenat2_* suites run on this machine's own architecture.
 * write and close faults only hit regular files (siblings, temporary files,
 * the manifest, cache entries), never the terminal or pipes.
 *
 * malloc is counted from the start of the walk (the first fdopendir), not
 * from process start: OpenSSL 3.0 does not survive an allocation failure
 * inside its one-time initialisation, which kiln does before any work.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);

static atomic_long counter;
static char fault_call[32];
static long fault_n = -1;
static int fault_errno;
static int fault_sticky;
static int configured;
static atomic_int malloc_armed;

static void configure(void)
{
	const char *spec = getenv("KILN_FAULT");
	char buf[64];
	char *colon;

	configured = 1;
	if (!spec || strlen(spec) >= sizeof(buf))
		return;
	strcpy(buf, spec);
	colon = strchr(buf, ':');
	if (!colon)
		return;
	*colon++ = '\0';
	strncpy(fault_call, buf, sizeof(fault_call) - 1);
	if (*colon == '+') {
		fault_sticky = 1;
		colon++;
	}
	fault_n = strtol(colon, &colon, 10);
	fault_errno = strcmp(fault_call, "malloc") == 0 ? ENOMEM : ENOSPC;
	if (*colon == ':')
		fault_errno = atoi(colon + 1);
}

/* Should this call of CALL fail?  Counts calls of the configured CALL. */
static int should_fail(const char *call)
{
	long n;

	if (!configured)
		configure();
	if (fault_n < 0 || strcmp(call, fault_call) != 0)
		return 0;
	n = atomic_fetch_add(&counter, 1) + 1;
	return fault_sticky ? n >= fault_n : n == fault_n;
}

/* Is FD a regular file (a sibling, temp file, manifest or cache entry)? */
static int is_file(int fd)
{
	struct stat st;

	return fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t n)
{
	if (is_file(fd) && should_fail("write")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(write)(fd, buf, n);
}

static atomic_long renames;

static void slow(void)
{
	const char *ms = getenv("KILN_FAULT_SLOW_MS");
	long n = ms ? atol(ms) : 0;

	if (n > 0) {
		struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

#ifdef SYS_openat2
/* kiln calls openat2 through syscall(2), which glibc has no wrapper for:
 * the six argument registers are passed on as they came */
long syscall(long number, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_openat2 && getenv("KILN_FAULT_NO_OPENAT2")) {
		errno = ENOSYS;
		return -1;
	}
	return REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
#endif

int unlinkat(int dir, const char *path, int flags)
{
	slow();
	return REAL(unlinkat)(dir, path, flags);
}

/* After a successful rename: die if this was the one to die after. */
static void renamed(void)
{
	const char *kill_after = getenv("KILN_FAULT_KILL_AFTER_RENAME");

	if (kill_after && atomic_fetch_add(&renames, 1) + 1 == atol(kill_after))
		raise(SIGKILL);
}

int rename(const char *a, const char *b)
{
	int r;

	slow();
	if (should_fail("rename")) {
		errno = fault_errno;
		return -1;
	}
	r = REAL(rename)(a, b);
	if (r == 0)
		renamed();
	return r;
}

int renameat(int da, const char *a, int db, const char *b)
{
	int r;

	slow();
	if (should_fail("rename")) {
		errno = fault_errno;
		return -1;
	}
	r = REAL(renameat)(da, a, db, b);
	if (r == 0)
		renamed();
	return r;
}

int fsync(int fd)
{
	if (should_fail("fsync")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(fsync)(fd);
}

int futimens(int fd, const struct timespec t[2])
{
	if (should_fail("futimens")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(futimens)(fd, t);
}

int fchmod(int fd, mode_t mode)
{
	if (should_fail("fchmod")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(fchmod)(fd, mode);
}

int close(int fd)
{
	if (is_file(fd) && should_fail("close")) {
		REAL(close)(fd); /* the descriptor is gone either way, as on NFS */
		errno = fault_errno;
		return -1;
	}
	return REAL(close)(fd);
}

int mkostemps(char *tmpl, int suffixlen, int flags)
{
	if (should_fail("create")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(mkostemps)(tmpl, suffixlen, flags);
}

int mkostemp(char *tmpl, int flags)
{
	if (should_fail("create")) {
		errno = fault_errno;
		return -1;
	}
	return REAL(mkostemp)(tmpl, flags);
}

static void vanish(const char *path);

int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) && should_fail("create")) {
		errno = fault_errno;
		return -1;
	}
	if (!(flags & (O_CREAT | O_DIRECTORY)) && getenv("KILN_FAULT_SLOW_OPEN_MS")) {
		long n = atol(getenv("KILN_FAULT_SLOW_OPEN_MS"));
		struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
		if (n > 0)
			nanosleep(&ts, NULL);
	}
	if (!(flags & (O_CREAT | O_DIRECTORY)) && getenv("KILN_FAULT_VANISH")) {
		/* the whole path, for KILN_FAULT_VANISH's matching */
		char link[64], full[8192];
		ssize_t n;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
		if (path[0] == '/')
			vanish(path);
		else if (dir != AT_FDCWD && (n = readlink(link, full, sizeof(full) - 1)) > 0 &&
			 (size_t)n + strlen(path) + 2 < sizeof(full)) {
			full[n] = '\0';
			strcat(full, "/");
			strcat(full, path);
			vanish(full);
		} else if (dir == AT_FDCWD) {
			vanish(path);
		}
	}
	return REAL(openat)(dir, path, flags, mode);
}

static void vanish(const char *path)
{
	const char *name = getenv("KILN_FAULT_VANISH");
	size_t n, k;

	if (!name || !path)
		return;
	if (name[0] == '/') {
		if (strcmp(path, name) == 0)
			unlink(path);
		return;
	}
	n = strlen(path);
	k = strlen(name);
	if (n > k && path[n - k - 1] == '/' && strcmp(path + n - k, name) == 0)
		unlink(path);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!(flags & (O_CREAT | O_DIRECTORY)))
		vanish(path);
	return REAL(open)(path, flags, mode);
}

DIR *fdopendir(int fd)
{
	atomic_store(&malloc_armed, 1);
	return REAL(fdopendir)(fd);
}

void *malloc(size_t n)
{
	/* no dlsym here: it may allocate; glibc exports its allocator */
	if (configured && fault_n >= 0 && atomic_load(&malloc_armed) && should_fail("malloc")) {
		errno = ENOMEM;
		return NULL;
	}
	if (!configured && getenv("KILN_FAULT"))
		configure();
	return __libc_malloc(n);
}
