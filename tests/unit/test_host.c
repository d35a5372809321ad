/*
 * test_host.c - the platform layer (host.c).
 *
 * Its rules, in every build, for each kind of host (the flags are the test
 * switch: a Linux machine checks what kiln does on Windows): Microsoft's
 * reserved device names and characters ("Naming Files, Paths, and
 * Namespaces"), a Windows file's mode bits, the retries of a file held
 * open.  In the WebAssembly build, run by Node.js, also its stand-ins on
 * a scratch directory, against Node's file system: times to the
 * microsecond and back, inode numbers, directory descriptors (opened,
 * duplicated, listed, stat'ed), O_NOFOLLOW, hard links, fsync, and the
 * file locks it keeps within the process; with Node made to look like
 * macOS or Windows (KILN_TEST_PLATFORM) over a case-insensitive file
 * system, the names held under another spelling and, on Windows, the names
 * and modes (folded()).
 */
#include "host.h"

#include "check.h"
#include "scratch.h"

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static void refused(const char *name, unsigned flags, const char *want)
{
	const char *why = kiln_host_name_refused(name, flags);

	if (!want)
		CHECK_MSG(why == NULL, "'%s' refused (%s)", name, why);
	else
		CHECK_MSG(why && strstr(why, want), "'%s': '%s', want '%s'", name,
			  why ? why : "(accepted)", want);
}

static void names(void)
{
	const unsigned win = KILN_HOST_WINDOWS;
	static const char *const devices[] = {
		"CON", "con", "Con", "PRN", "AUX", "aux", "NUL", "nul",
		"COM1", "com9", "LPT1", "lpt9",
		"COM\xc2\xb9", "COM\xc2\xb2", "LPT\xc2\xb3", /* superscript 1, 2, 3 */
		/* with an extension, or a space: the same device */
		"NUL.txt", "nul.tar.gz", "con.js.gz", "Aux.html", "COM1.css", "CON .txt",
		"CONIN$", "conout$.js",
	};
	static const char *const fine[] = {
		"CONSOLE", "con-x.js", "econ.js", "NULL", "nul_", "COM", "COM10", "COM0",
		"LPT", "lpt10.txt", "COM\xc2\xb4", "AUXILIARY.js", "index.html", ".htaccess",
		"app.js.gz", "caf\xc3\xa9.svg", "a b.txt",
	};

	for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++) {
		refused(devices[i], win, "device name");
		refused(devices[i], 0, NULL); /* Linux and macOS take any */
		refused(devices[i], KILN_HOST_CASE_FOLDS, NULL);
	}
	for (size_t i = 0; i < sizeof(fine) / sizeof(*fine); i++)
		refused(fine[i], win, NULL);
	/* '\' is a directory separator there */
	refused("a\\b.js", win, "'\\'");
	refused("\\", win, "'\\'");
	refused("a\\b.js", 0, NULL);
	/* the other characters Windows refuses, and the control ones */
	for (const char *c = "<>:\"|?*"; *c; c++) {
		char name[] = { 'a', *c, 'b', 0 };
		refused(name, win, "character Windows refuses");
		refused(name, 0, NULL);
	}
	for (int c = 1; c < 0x20; c++) {
		char name[] = { 'x', (char)c, 0 };
		refused(name, win, "character Windows refuses");
	}
	/* a last '.' or ' ' is dropped by Windows: another name */
	refused("index.", win, "ending in");
	refused("index.html ", win, "ending in");
	refused("index.", 0, NULL);
}

static void modes(void)
{
	const unsigned win = KILN_HOST_WINDOWS;

	/* Windows keeps no mode bits: every file one mode, every directory one */
	CHECK(kiln_host_mode(S_IFREG | 0600, win) == (S_IFREG | 0644));
	CHECK(kiln_host_mode(S_IFREG | 0755, win) == (S_IFREG | 0644));
	CHECK(kiln_host_mode(S_IFREG | 0444, win) == (S_IFREG | 0644));
	CHECK(kiln_host_mode(S_IFDIR | 0700, win) == (S_IFDIR | 0755));
	CHECK(kiln_host_mode(S_IFLNK | 0777, win) == (S_IFLNK | 0644));
	/* elsewhere, what the file system says */
	CHECK(kiln_host_mode(S_IFREG | 0600, 0) == (S_IFREG | 0600));
	CHECK(kiln_host_mode(S_IFREG | 04755, KILN_HOST_CASE_FOLDS) == (S_IFREG | 04755));
	CHECK(kiln_host_mode(S_IFDIR | 0700, 0) == (S_IFDIR | 0700));
}

static void retries(void)
{
	const unsigned win = KILN_HOST_WINDOWS;
	unsigned wait, total = 0, n = 0;

	/* a file held open on Windows: tried again, each wait longer, about a
	 * second in all, then given up */
	while (kiln_host_retry(EACCES, n, win, &wait)) {
		CHECK(wait >= 10 && wait <= 1000);
		total += wait;
		n++;
		CHECK(n < 100);
		if (n >= 100)
			break;
	}
	CHECK_MSG(total >= 500 && total <= 3000, "waited %u ms in all", total);
	CHECK(n >= 3);
	CHECK(kiln_host_retry(EPERM, 0, win, &wait));
	CHECK(kiln_host_retry(EBUSY, 0, win, &wait));
	/* not what a file held open gives */
	CHECK(!kiln_host_retry(ENOENT, 0, win, &wait));
	CHECK(!kiln_host_retry(EEXIST, 0, win, &wait));
	CHECK(!kiln_host_retry(EINVAL, 0, win, &wait));
	/* never elsewhere: a failure there is a failure */
	CHECK(!kiln_host_retry(EACCES, 0, 0, &wait));
	CHECK(!kiln_host_retry(EBUSY, 0, KILN_HOST_CASE_FOLDS, &wait));
}

#ifdef __EMSCRIPTEN__
/* The stand-ins, on DIR, against Node's file system. */
static void stand_ins(const char *dir)
{
	char path[4096], link[4096], hard[4096];
	struct timespec t[2] = { { 1700000000, 123456789 }, { 1600000000, 987654321 } };
	struct stat st, st2;
	int d, d2, fd, fd2, found = 0;
	DIR *list;
	struct dirent *e;

	CHECK(kiln_host_flags() == 0); /* Node on Linux */
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0640);
	CHECK(fd >= 0);
	CHECK(write(fd, "kiln", 4) == 4);
	CHECK(fsync(fd) == 0);
	/* times: set to the microsecond, read back so */
	CHECK(futimens(fd, t) == 0);
	CHECK(fstat(fd, &st) == 0);
	CHECK_MSG(st.st_mtim.tv_sec == 1600000000 && st.st_mtim.tv_nsec == 987654000,
		  "mtime %lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	CHECK(st.st_atim.tv_sec == 1700000000 && st.st_atim.tv_nsec == 123456000);
	CHECK(st.st_size == 4 && (st.st_mode & 07777) == 0640 && S_ISREG(st.st_mode));
	CHECK(close(fd) == 0);
	/* the same figures by path, and the inode a hard link shares */
	snprintf(hard, sizeof(hard), "%s/hard", dir);
	CHECK(linkat(AT_FDCWD, path, AT_FDCWD, hard, 0) == 0);
	CHECK(lstat(hard, &st2) == 0);
	CHECK(st2.st_ino == st.st_ino && st2.st_dev == st.st_dev && st2.st_nlink == 2);
	CHECK(st2.st_mtim.tv_nsec == 987654000);
	/* O_NOFOLLOW: a link is refused, as Linux refuses it */
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK(symlink("file", link) == 0);
	errno = 0;
	CHECK(open(link, O_RDONLY | O_NOFOLLOW) == -1 && errno == ELOOP);
	CHECK(fstatat(AT_FDCWD, link, &st2, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st2.st_mode));
	/* a directory: opened, stat'ed, duplicated, listed, its files opened
	 * relative to it */
	d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0);
	CHECK(fstat(d, &st2) == 0 && S_ISDIR(st2.st_mode));
	errno = 0;
	CHECK(read(d, path, 1) == -1 && errno == EISDIR);
	fd = openat(d, "file", O_RDONLY | O_NOFOLLOW);
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st2) == 0 && st2.st_ino == st.st_ino);
	errno = 0;
	CHECK(openat(d, "file", O_RDONLY | O_DIRECTORY) == -1 && errno == ENOTDIR);
	d2 = dup(d);
	CHECK(d2 >= 0 && d2 != d);
	list = fdopendir(d2);
	CHECK(list != NULL);
	while (list && (e = readdir(list)) != NULL)
		found += strcmp(e->d_name, "file") == 0 || strcmp(e->d_name, "hard") == 0 ||
			 strcmp(e->d_name, "link") == 0;
	CHECK(found == 3);
	if (list) {
		rewinddir(list);
		found = 0;
		while ((e = readdir(list)) != NULL)
			found += strcmp(e->d_name, "file") == 0;
		CHECK(found == 1);
		closedir(list);
	}
	/* locks within the process: one descriptor at a time per file */
	fd2 = openat(d, "hard", O_RDONLY);
	CHECK(fd2 >= 0);
	CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
	errno = 0;
	CHECK(flock(fd2, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK);
	CHECK(flock(fd, LOCK_UN) == 0);
	CHECK(flock(fd2, LOCK_EX | LOCK_NB) == 0);
	CHECK(close(fd2) == 0);
	CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0); /* its holder closed */
	CHECK(close(fd) == 0);
	/* a link made relative to the directory */
	CHECK(symlinkat("file", d, "link2") == 0);
	{
		char target[16] = { 0 };
		CHECK(readlinkat(d, "link2", target, sizeof(target) - 1) == 4 &&
		      strcmp(target, "file") == 0);
	}
	CHECK(fstatat(d, "link2", &st2, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st2.st_mode));
	/* rename and unlink relative to the directory */
	CHECK(renameat(d, "hard", d, "moved") == 0);
	CHECK(fstatat(d, "moved", &st2, AT_SYMLINK_NOFOLLOW) == 0 && st2.st_ino == st.st_ino);
	CHECK(unlinkat(d, "moved", 0) == 0);
	errno = 0;
	CHECK(fstatat(d, "moved", &st2, 0) == -1 && errno == ENOENT);
	CHECK(close(d) == 0);
	/* the runtime, for kiln --version */
	{
		const char *name, *version;
		CHECK(kiln_host_runtime(&name, &version) && strcmp(name, "emscripten") == 0 &&
		      strstr(version, "WebAssembly, Node.js v"));
	}
}
/* On DIR, with Node made to look like macOS or Windows (FLAGS: tests/
 * package/platform_preload.js) over a file system made case-insensitive
 * (casefold_preload.js), as theirs are: a name the directory holds under
 * another spelling is another file's, and on Windows its names and modes. */
static void folded(const char *dir, unsigned flags)
{
	char path[4096], buf[8] = { 0 };
	struct stat st;
	int d, fd;

	CHECK(kiln_host_flags() == flags);
	snprintf(path, sizeof(path), "%s/APP.JS.GZ", dir); /* the user's file */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "user", 4) == 4 && close(fd) == 0);
	d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0);
	/* the file system finds it as app.js.gz too */
	snprintf(path, sizeof(path), "%s/app.js.gz", dir);
	CHECK(access(path, F_OK) == 0);
	/* kiln does not: not there to stat, open or remove, there to create
	 * or to rename over */
	errno = 0;
	CHECK(fstatat(d, "app.js.gz", &st, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(openat(d, "app.js.gz", O_RDONLY | O_NOFOLLOW) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(openat(d, "app.js.gz", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644) == -1 &&
	      errno == EEXIST);
	errno = 0;
	CHECK(openat(d, "app.js.gz", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644) == -1 &&
	      errno == EEXIST);
	fd = openat(d, ".tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	CHECK(fd >= 0 && close(fd) == 0);
	errno = 0;
	CHECK(renameat(d, ".tmp", d, "app.js.gz") == -1 && errno == EEXIST);
	errno = 0;
	CHECK(renameat(d, "app.js.gz", d, "moved") == -1 && errno == ENOENT);
	errno = 0;
	CHECK(unlinkat(d, "app.js.gz", 0) == -1 && errno == ENOENT);
	/* under its own name it is found, and it is untouched */
	CHECK(fstatat(d, "APP.JS.GZ", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size == 4);
	fd = openat(d, "APP.JS.GZ", O_RDONLY | O_NOFOLLOW);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 4 && strcmp(buf, "user") == 0 && close(fd) == 0);
	/* a name no other file's is kiln's to make, replace and remove */
	CHECK(renameat(d, ".tmp", d, "index.html.gz") == 0);
	CHECK(fstatat(d, "index.html.gz", &st, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(unlinkat(d, "index.html.gz", 0) == 0);
	if (flags & KILN_HOST_WINDOWS) {
		/* names Windows would not keep are not made */
		errno = 0;
		CHECK(openat(d, "CON.js", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644) == -1 &&
		      errno == EINVAL);
		errno = 0;
		CHECK(openat(d, "nul.txt.gz", O_WRONLY | O_CREAT | O_EXCL, 0644) == -1 && errno == EINVAL);
		errno = 0;
		CHECK(mkdirat(d, "a\\b", 0755) == -1 && errno == EINVAL);
		errno = 0;
		CHECK(mkdirat(d, "dir.", 0755) == -1 && errno == EINVAL);
		fd = openat(d, ".tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
		CHECK(fd >= 0 && close(fd) == 0);
		errno = 0;
		CHECK(renameat(d, ".tmp", d, "aux.css.br") == -1 && errno == EINVAL);
		errno = 0;
		CHECK(symlinkat(".tmp", d, "com1") == -1 && errno == EINVAL);
		CHECK(unlinkat(d, ".tmp", 0) == 0);
		snprintf(path, sizeof(path), "%s/CON.js", dir);
		CHECK(access(path, F_OK) == -1);
		/* no mode bits: every file 0644, every directory 0755, and a
		 * mode set changes nothing */
		fd = openat(d, "mode", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		CHECK(fd >= 0);
		CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0644);
		CHECK(fchmod(fd, 0400) == 0);
		CHECK(close(fd) == 0);
		CHECK(fstatat(d, "mode", &st, 0) == 0 && (st.st_mode & 07777) == 0644);
		CHECK(mkdirat(d, "sub", 0700) == 0);
		CHECK(fstatat(d, "sub", &st, 0) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0755);
	} else {
		/* macOS: any name, and the modes the files have */
		fd = openat(d, "CON.js", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		CHECK(fd >= 0 && close(fd) == 0);
		CHECK(fstatat(d, "CON.js", &st, 0) == 0 && (st.st_mode & 07777) == 0600);
	}
	CHECK(close(d) == 0);
}
#endif

int main(void)
{
	names();
	modes();
	retries();
#ifdef __EMSCRIPTEN__
	{
		const char *tmp = getenv("TMPDIR");
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s/kiln-test-host.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		const char *platform = getenv("KILN_TEST_PLATFORM");

		CHECK(mkdtemp(dir) != NULL);
		/* Node made to look like macOS or Windows (KILN_TEST_PLATFORM:
		 * tests/package/wasm.sh) over a case-insensitive file system */
		if (platform && strncmp(platform, "darwin-", 7) == 0)
			folded(dir, KILN_HOST_CASE_FOLDS);
		else if (platform && strncmp(platform, "win32-", 6) == 0)
			folded(dir, KILN_HOST_CASE_FOLDS | KILN_HOST_WINDOWS);
		else
			stand_ins(dir);
		if (check_failures == 0)
			scratch_remove(dir);
	}
#else
	{
		const char *name, *version;
		CHECK(kiln_host_flags() == 0);
		CHECK(!kiln_host_runtime(&name, &version));
	}
#endif
	return check_exit("test_host");
}
