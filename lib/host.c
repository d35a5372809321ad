/*
 * host.c - what differs between the systems kiln runs on (host.h).
 *
 * The native kiln calls Linux directly: of this file it has only the rules
 * at the top, which its unit tests check.  The WebAssembly kiln runs under
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

const char *kiln_host_name_refused(const char *name, unsigned flags)
{
	static const char *const devices[] = { "CON", "PRN", "AUX", "NUL" };
	size_t n = strlen(name), stem = strcspn(name, ". ");

	if (!(flags & KILN_HOST_WINDOWS))
		return NULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || strchr("<>:\"/\\|?*", *p))
			return *p == '\\' ? "a name with '\\' (a directory separator on Windows)"
					  : "a name with a character Windows refuses";
	if (n > 0 && (name[n - 1] == '.' || name[n - 1] == ' '))
		return "a name ending in '.' or ' ' (Windows drops them)";
	/* a device name, alone or with an extension: "nul", "Com1.js" */
	for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++)
		if (stem == 3 && strncasecmp(name, devices[i], 3) == 0)
			return "a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
	if ((strncasecmp(name, "COM", 3) == 0 || strncasecmp(name, "LPT", 3) == 0) &&
	    ((stem == 4 && name[3] >= '1' && name[3] <= '9') ||
	     /* superscript 1, 2, 3 in UTF-8 */
	     (stem == 5 && (unsigned char)name[3] == 0xc2 &&
	      ((unsigned char)name[4] == 0xb9 || (unsigned char)name[4] == 0xb2 ||
	       (unsigned char)name[4] == 0xb3))))
		return "a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
	return NULL;
}

mode_t kiln_host_mode(mode_t mode, unsigned flags)
{
	if (!(flags & KILN_HOST_WINDOWS))
		return mode;
	return (mode & S_IFMT) | (S_ISDIR(mode) ? 0755 : 0644);
}

bool kiln_host_retry(int errnum, unsigned attempt, unsigned flags, unsigned *wait_ms)
{
	/* 10, 20, 40 ... 640 ms: 1.27 s of waiting over 8 tries */
	if (!(flags & KILN_HOST_WINDOWS) || attempt >= 7 ||
	    (errnum != EACCES && errnum != EPERM && errnum != EBUSY))
		return false;
	*wait_ms = 10u << attempt;
	return true;
}

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

/* Emscripten's version, "3.1.6" */
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define VERSION_TEXT TEXT(__EMSCRIPTEN_major__) "." TEXT(__EMSCRIPTEN_minor__) "." TEXT(__EMSCRIPTEN_tiny__)

/* ---- Node's side, run on the main thread ---- */

/* Every function below that reads or writes the memory starts with this
 * line: another thread may have grown it. */
EM_JS(int, js_flags, (void), {
	return process.platform === "win32" ? 3 : process.platform === "darwin" ? 2 : 0;
});

/* "VERSION, WebAssembly, Node.js vX.Y.Z", malloc'ed. */
EM_JS(char *, js_node_version, (const char *version), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	var s = UTF8ToString(version) + ", WebAssembly, Node.js " + process.version;
	var n = lengthBytesUTF8(s) + 1, p = _malloc(n);
	if (p) stringToUTF8(s, p, n);
	return p;
});

/* PATH (relative to DIRFD; DIRFD itself when EMPTY and PATH is "")
 * stat'ed, a last link followed unless NOFOLLOW, into OUT: dev, ino (each
 * two 32-bit halves, low first), mode, nlink, uid, gid, rdev, size (two
 * halves), blocks, then atime, mtime, ctime each as seconds (two halves)
 * and nanoseconds.  0 or -errno. */
EM_JS(int, js_stat, (int dirfd, const char *path, int empty, int nofollow, uint32_t *out), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	var fs = require("fs"), st;
	try {
		var p = UTF8ToString(path);
		if (empty && p === "") {
			var s = FS.getStream(dirfd);
			if (!s) return -ERRNO_CODES.EBADF;
			st = s.kilnDir ? fs.statSync(s.path, { bigint: true }) : fs.fstatSync(s.nfd, { bigint: true });
		} else {
			var full = SYSCALLS.calculateAt(dirfd, p);
			st = nofollow ? fs.lstatSync(full, { bigint: true }) : fs.statSync(full, { bigint: true });
		}
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
	var u = HEAPU32, i = out >> 2, low = BigInt(4294967295), g = BigInt(1000000000);
	var put64 = function (v) { v = BigInt.asUintN(64, v); u[i++] = Number(v & low); u[i++] = Number(v >> BigInt(32)); };
	var time = function (ns) {
		var s = ns / g, r = ns % g;
		if (r < BigInt(0)) { s -= BigInt(1); r += g; }
		put64(s); u[i++] = Number(r);
	};
	put64(st.dev); put64(st.ino);
	u[i++] = Number(st.mode); u[i++] = Number(st.nlink); u[i++] = Number(st.uid); u[i++] = Number(st.gid);
	u[i++] = Number(st.rdev); put64(st.size); u[i++] = Number(st.blocks);
	time(st.atimeNs); time(st.mtimeNs); time(st.ctimeNs);
	return 0;
});

/* 1 when PATH (relative to DIRFD) is listed by its exact name in its
 * directory, 0 when not, or -errno. */
EM_JS(int, js_listed, (int dirfd, const char *path), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	try {
		var full = SYSCALLS.calculateAt(dirfd, UTF8ToString(path));
		var cut = Math.max(full.lastIndexOf("/"), full.lastIndexOf(String.fromCharCode(92)));
		var dir = cut < 0 ? "." : cut === 0 ? "/" : full.slice(0, cut);
		return require("fs").readdirSync(dir).indexOf(full.slice(cut + 1)) >= 0 ? 1 : 0;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* A descriptor for the directory PATH (relative to DIRFD), or -errno: an
 * Emscripten stream that holds its path and no descriptor of Node's (on
 * Windows Node opens no directory), which readdir and fstatat use by path,
 * and close just forgets.  SAME: the stream of such a descriptor to copy
 * instead (dup), or -1. */
EM_JS(int, js_open_dir, (int dirfd, const char *path, int flags, int same), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	try {
		var full, st;
		if (same >= 0) {
			full = FS.getStream(same).path;
		} else {
			full = SYSCALLS.calculateAt(dirfd, UTF8ToString(path));
		}
		st = require("fs").statSync(full);
		if (!st.isDirectory()) return -ERRNO_CODES.ENOTDIR;
		/* as open(2) would: a directory that cannot be read is not opened */
		require("fs").accessSync(full, require("fs").constants.R_OK);
		var fd = FS.nextfd();
		var ops = {
			llseek: function (stream, offset, whence) {
				var to = whence === 1 ? stream.position + offset : whence === 0 ? offset : -1;
				if (to < 0) throw new FS.ErrnoError(ERRNO_CODES.EINVAL);
				if (to === 0) stream.kilnNames = null; /* rewinddir: listed again */
				stream.position = to;
				return to;
			},
			read: function () { throw new FS.ErrnoError(ERRNO_CODES.EISDIR); },
			write: function () { throw new FS.ErrnoError(ERRNO_CODES.EISDIR); },
		};
		FS.streams[fd] = {
			fd: fd, path: full, flags: flags, position: 0, seekable: true, kilnDir: true,
			stream_ops: ops, node: { id: st.ino, mode: st.mode, node_ops: NODERAWFS, path: full },
		};
		return fd;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* Up to COUNT bytes of the entries of the directory FD (a stream of
 * js_open_dir()) from its position on, as struct dirent records of SIZE
 * bytes at DIRP whose fields are at OFF (d_ino, d_off, d_reclen, d_type,
 * d_name): the bytes written, or -errno.  Names are Node's, as bytes; the
 * types are Node's too (no lstat of each entry). */
EM_JS(int, js_getdents, (int fd, uint8_t *dirp, int count, int size, const int *off), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	var s = FS.getStream(fd);
	if (!s) return -ERRNO_CODES.EBADF;
	if (!s.kilnDir) return -ERRNO_CODES.ENOTDIR;
	try {
		if (!s.kilnNames) {
			s.kilnNames = require("fs").readdirSync(s.path, { withFileTypes: true, encoding: "buffer" });
		}
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
	var i32 = HEAP32, u8 = HEAPU8, o = off >> 2, pos = 0;
	var idx = Math.floor(s.position / size);
	for (; idx < s.kilnNames.length + 2 && pos + size <= count; idx++, pos += size) {
		var at = dirp + pos, name, type = 4;
		if (idx < 2) {
			name = idx === 0 ? [46] : [46, 46];
		} else {
			var d = s.kilnNames[idx - 2];
			name = d.name;
			type = d.isFile() ? 8 : d.isDirectory() ? 4 : d.isSymbolicLink() ? 10 : d.isFIFO() ? 1 :
			       d.isSocket() ? 12 : d.isCharacterDevice() ? 2 : d.isBlockDevice() ? 6 : 0;
		}
		if (name.length > 255) name = name.slice(0, 255);
		i32[(at + i32[o]) >> 2] = idx + 1; i32[(at + i32[o] + 4) >> 2] = 0;
		i32[(at + i32[o + 1]) >> 2] = (idx + 1) * size; i32[(at + i32[o + 1] + 4) >> 2] = 0;
		HEAP16[(at + i32[o + 2]) >> 1] = size;
		u8[at + i32[o + 3]] = type;
		for (var k = 0; k < name.length; k++) u8[at + i32[o + 4] + k] = name[k];
		u8[at + i32[o + 4] + name.length] = 0;
	}
	s.position = idx * size;
	return pos;
});

/* Whether FD is a stream of js_open_dir(). */
EM_JS(int, js_is_dir_stream, (int fd), {
	var s = FS.getStream(fd);
	return s && s.kilnDir ? 1 : 0;
});

/* Set the times of FD (PATH NULL) or of PATH (relative to DIRFD; a last
 * link's own with NOFOLLOW) to ATIME and MTIME seconds, each with its
 * nanoseconds: 0 or -errno. */
EM_JS(int, js_utimes, (int dirfd, const char *path, int nofollow, double at, int at_ns, double mt,
		       int mt_ns), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	var fs = require("fs");
	/* Node takes seconds as a number, which its libuv cuts to the
	 * microsecond: half a microsecond more, so that the cut cannot fall
	 * below the microsecond meant where the sum is not exact */
	var a = at + (Math.floor(at_ns / 1000) + 0.5) / 1e6, m = mt + (Math.floor(mt_ns / 1000) + 0.5) / 1e6;
	try {
		if (!path) {
			var s = FS.getStream(dirfd);
			if (!s) return -ERRNO_CODES.EBADF;
			if (s.kilnDir) fs.utimesSync(s.path, a, m);
			else fs.futimesSync(s.nfd, a, m);
		} else {
			var full = SYSCALLS.calculateAt(dirfd, UTF8ToString(path));
			if (nofollow) fs.lutimesSync(full, a, m);
			else fs.utimesSync(full, a, m);
		}
		return 0;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* Whether FD is a terminal, by Node's tty module: 1, 0, or -errno. */
EM_JS(int, js_isatty, (int fd), {
	var s = FS.getStream(fd);
	if (!s) return -ERRNO_CODES.EBADF;
	return !s.kilnDir && s.nfd !== undefined && require("tty").isatty(s.nfd) ? 1 : 0;
});

/* From now on, Node's SIGINT, SIGTERM and SIGHUP are handed to
 * kiln_host_signal() instead of ending the process. */
EM_JS(void, js_take_signals, (void), {
	var numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
	Object.keys(numbers).forEach(function (name) {
		process.on(name, function () { Module["_kiln_host_signal"](numbers[name]); });
	});
});

/* End the process by signal SIG (1, 2 or 15), as its default action would:
 * Node's listener dropped, the signal sent again. */
EM_JS(void, js_die_of, (int sig), {
	var name = sig === 1 ? "SIGHUP" : sig === 2 ? "SIGINT" : "SIGTERM";
	process.removeAllListeners(name);
	process.kill(process.pid, name);
});

/* The size of the terminal FD is, into WS (rows, columns): 0 or -errno. */
EM_JS(int, js_winsize, (int fd, unsigned short *ws), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	var s = FS.getStream(fd);
	if (!s) return -ERRNO_CODES.EBADF;
	var out = s.nfd === 1 ? process.stdout : s.nfd === 2 ? process.stderr : null;
	if (!out || !out.isTTY || !out.columns) return -ERRNO_CODES.ENOTTY;
	HEAPU16[ws >> 1] = out.rows;
	HEAPU16[(ws >> 1) + 1] = out.columns;
	return 0;
});

/* fsync(2) of FD's file: 0 or -errno (nothing to do for a directory). */
EM_JS(int, js_fsync, (int fd), {
	try {
		var s = FS.getStream(fd);
		if (!s) return -ERRNO_CODES.EBADF;
		if (!s.kilnDir) require("fs").fsyncSync(s.nfd);
		return 0;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* A symbolic link PATH (relative to DIRFD) to TARGET: 0 or -errno. */
EM_JS(int, js_symlink, (const char *target, int dirfd, const char *path), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	try {
		require("fs").symlinkSync(UTF8ToString(target), SYSCALLS.calculateAt(dirfd, UTF8ToString(path)));
		return 0;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* A hard link NEWPATH (relative to NEWDIRFD) to OLDPATH (relative to
 * OLDDIRFD): 0 or -errno. */
EM_JS(int, js_link, (int olddirfd, const char *oldpath, int newdirfd, const char *newpath), {
	if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
	try {
		require("fs").linkSync(SYSCALLS.calculateAt(olddirfd, UTF8ToString(oldpath)),
				       SYSCALLS.calculateAt(newdirfd, UTF8ToString(newpath)));
		return 0;
	} catch (e) {
		if (e instanceof FS.ErrnoError) return -e.errno;
		return -(ERRNO_CODES[e.code] || ERRNO_CODES.EIO);
	}
});

/* ---- the C library's functions, on the main thread ---- */

/* One call on the main thread, where Emscripten's descriptors are: FN(ARG),
 * which returns a result or -errno; the result, or -1 with errno. */
static int on_main(int (*fn)(void *), void *arg)
{
	int r = emscripten_is_main_runtime_thread()
			? fn(arg)
			: emscripten_sync_run_in_main_runtime_thread(EM_FUNC_SIG_II, fn, arg);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

static pthread_once_t flags_once = PTHREAD_ONCE_INIT;
static unsigned host_flags;
static char *node_version;

static int flags_main(void *arg)
{
	(void)arg;
	host_flags = (unsigned)js_flags();
	node_version = js_node_version(VERSION_TEXT);
	return 0;
}

static void flags_init(void)
{
	on_main(flags_main, NULL);
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

/* The last component of PATH. */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* -EILSEQ when PATH is not UTF-8, which Node's file names (strings) cannot
 * hold: such a name (on Linux only) is refused with a clear reason rather
 * than taken for another. */
static int not_utf8(const char *path)
{
	for (size_t n; *path; path += n)
		if (!(n = kiln_utf8_len(path)))
			return -EILSEQ;
	return 0;
}

struct call {
	int dirfd, flags;
	const char *path;
	mode_t mode;
	int dirfd2;
	const char *path2;
	struct stat *st;
	const struct timespec *times;
};

/* fstatat: Emscripten 3.1.6 gives times in whole seconds and inode numbers
 * through a double (kiln tells a changed file by its mtime to the
 * nanosecond, a hard link by its inode): Node's exact figures instead, the
 * times cut to the microsecond, which is all Node can set (utimensat below),
 * so that a sibling's mtime is its source's as kiln sees both.  On Windows,
 * no mode bits (kiln_host_mode()); where case folds, a name that is another
 * file's is not found (kiln_host_listed()). */
static int stat_raw(struct call *c)
{
	uint32_t o[23];
	bool empty = (c->flags & AT_EMPTY_PATH) && !*c->path;
	int r = not_utf8(c->path);

	if (r == 0)
		r = js_stat(c->dirfd, c->path, empty, (c->flags & AT_SYMLINK_NOFOLLOW) != 0, o);
	if (r < 0)
		return r;
	memset(c->st, 0, sizeof(*c->st));
#define U64(i) ((uint64_t)o[i] | (uint64_t)o[(i) + 1] << 32)
	c->st->st_dev = (dev_t)U64(0);
	c->st->st_ino = (ino_t)U64(2);
	c->st->st_mode = kiln_host_mode((mode_t)o[4], host_flags);
	c->st->st_nlink = (nlink_t)o[5];
	c->st->st_uid = (uid_t)o[6];
	c->st->st_gid = (gid_t)o[7];
	c->st->st_rdev = (dev_t)o[8];
	c->st->st_size = (off_t)U64(9);
	c->st->st_blocks = (blkcnt_t)o[11];
	c->st->st_blksize = 4096;
	c->st->st_atim = (struct timespec){ (time_t)U64(12), (long)(o[14] / 1000 * 1000) };
	c->st->st_mtim = (struct timespec){ (time_t)U64(15), (long)(o[17] / 1000 * 1000) };
	c->st->st_ctim = (struct timespec){ (time_t)U64(18), (long)(o[20] / 1000 * 1000) };
#undef U64
	return 0;
}

/* Where case folds, whether the name C->path found is another file's: 1,
 * 0, or -errno. */
static int other_name(struct call *c)
{
	int r;

	const char *base = base_of(c->path);

	if (!(host_flags & KILN_HOST_CASE_FOLDS) || ((c->flags & AT_EMPTY_PATH) && !*c->path))
		return 0;
	/* ".", "..", "dir/": no name of their own in a listing */
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return 0;
	r = js_listed(c->dirfd, c->path);
	return r < 0 ? r : !r;
}

static int stat_main(void *arg)
{
	struct call *c = arg;
	int r = stat_raw(c);

	if (r == 0 && (r = other_name(c)) != 0)
		return r < 0 ? r : -ENOENT;
	return r;
}

int fstatat(int dirfd, const char *restrict path, struct stat *restrict st, int flags)
{
	struct call c = { .dirfd = dirfd, .path = path, .flags = flags, .st = st };

	kiln_host_flags();
	return on_main(stat_main, &c);
}

/* utimensat: Emscripten 3.1.6 hands Node milliseconds where it takes
 * seconds.  The times are set to the microsecond, Node's precision. */
static int utimes_main(void *arg)
{
	struct call *c = arg;
	struct timespec t[2];
	struct stat st;

	if (c->path && not_utf8(c->path))
		return -EILSEQ;
	for (int i = 0; i < 2; i++) {
		t[i] = c->times ? c->times[i] : (struct timespec){ 0, UTIME_NOW };
		if (t[i].tv_nsec == UTIME_NOW)
			clock_gettime(CLOCK_REALTIME, &t[i]);
	}
	if (t[0].tv_nsec == UTIME_OMIT || t[1].tv_nsec == UTIME_OMIT) {
		struct call s = { .dirfd = c->dirfd, .path = c->path ? c->path : "",
				  .flags = c->path ? c->flags : AT_EMPTY_PATH, .st = &st };
		int r = stat_main(&s);
		if (r < 0)
			return r;
		if (t[0].tv_nsec == UTIME_OMIT)
			t[0] = st.st_atim;
		if (t[1].tv_nsec == UTIME_OMIT)
			t[1] = st.st_mtim;
	}
	return js_utimes(c->dirfd, c->path, (c->flags & AT_SYMLINK_NOFOLLOW) != 0, (double)t[0].tv_sec,
			 (int)t[0].tv_nsec, (double)t[1].tv_sec, (int)t[1].tv_nsec);
}

int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	struct call c = { .dirfd = dirfd, .path = path, .flags = flags, .times = times };

	kiln_host_flags();
	return on_main(utimes_main, &c);
}

int futimens(int fd, const struct timespec times[2])
{
	return utimensat(fd, NULL, times, 0);
}

/* fsync: Emscripten 3.1.6's does nothing on Node's files, where kiln's
 * --fsync (a sibling on disk before its name) needs Node's fsync. */
static int fsync_main(void *arg)
{
	return js_fsync(((struct call *)arg)->dirfd);
}

int fsync(int fd)
{
	struct call c = { .dirfd = fd };

	return on_main(fsync_main, &c);
}

int fdatasync(int fd)
{
	return fsync(fd);
}

/* flock: Emscripten's does nothing, and Node has no file locks.  Between
 * processes nothing can be done (docs/install.md: one kiln at a time is
 * the user's to see to); within kiln, a lock is kept here by file, so that
 * a run still tells the temporary files it writes from those a killed run
 * left (tempfile.c), as flock(2) would: a file is locked by one descriptor
 * at a time, until LOCK_UN or until that descriptor is closed or names
 * another file. */
#define MAX_LOCKS 1024
static pthread_mutex_t locks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held {
	int fd;
	dev_t dev;
	ino_t ino;
} locks[MAX_LOCKS];
static size_t nlocks;

int __wrap_flock(int fd, int op); /* flock (packaging/wasm/wasm.cmake) */

int __wrap_flock(int fd, int op)
{
	struct stat st, hs;
	int ret = 0;

	if (fstat(fd, &st) != 0)
		return -1;
	pthread_mutex_lock(&locks_lock);
	for (size_t i = 0; i < nlocks; i++) {
		struct held *h = &locks[i];
		bool same = h->dev == st.st_dev && h->ino == st.st_ino;
		/* a holder gone: closed, or its number now another file's */
		if (h->fd != fd && (fstat(h->fd, &hs) != 0 || hs.st_dev != h->dev ||
				    hs.st_ino != h->ino)) {
			locks[i--] = locks[--nlocks];
			continue;
		}
		if (same && h->fd != fd && !(op & LOCK_UN)) {
			ret = EWOULDBLOCK;
			goto out;
		}
		if (h->fd == fd)
			locks[i--] = locks[--nlocks]; /* unlocked, or locked anew below */
	}
	if (!(op & LOCK_UN)) {
		if (nlocks == MAX_LOCKS) {
			ret = ENOLCK;
			goto out;
		}
		locks[nlocks++] = (struct held){ fd, st.st_dev, st.st_ino };
	}
out:
	pthread_mutex_unlock(&locks_lock);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

/* openat: on Windows Node opens no directory, and ignores O_NOFOLLOW; a
 * directory is opened here as a stream that holds its path
 * (js_open_dir()), on every host, so that all run the same code, and a
 * link where O_NOFOLLOW is asked for is refused here (ELOOP), as Linux
 * refuses it.  Where case folds, a name that is another file's is not
 * found (or, to be created, exists: EEXIST); on Windows a name it cannot
 * hold is not created (EINVAL). */
static int open_main(void *arg)
{
	struct call *c = arg;
	struct stat st;
	struct call s = { .dirfd = c->dirfd, .path = c->path,
			  .flags = (c->flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0, .st = &st };
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
	return (int)__syscall_openat(c->dirfd, (long)c->path, c->flags, c->mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	struct call c = { .dirfd = dirfd, .path = path, .flags = flags };

	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		c.mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	kiln_host_flags();
	return on_main(open_main, &c);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return openat(AT_FDCWD, path, flags, mode);
}

/* dup: Emscripten's opens the descriptor's path again, which for a
 * directory Windows refuses: a directory's stream is copied instead. */
static int dup_main(void *arg)
{
	int fd = ((struct call *)arg)->dirfd;

	return js_is_dir_stream(fd) ? js_open_dir(-1, "", O_RDONLY | O_DIRECTORY, fd)
				    : (int)__syscall_dup(fd);
}

int dup(int fd)
{
	struct call c = { .dirfd = fd };

	return on_main(dup_main, &c);
}

/* Where case folds, whether PATH (relative to DIRFD) exists under another
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
 * while: tried again for about a second (kiln_host_retry()), then the
 * error is kiln's.  Where case folds, a name that is another file's is
 * neither replaced (EEXIST) nor removed (ENOENT); on Windows, a name it
 * cannot hold is not created (EINVAL). */
static int rename_main(void *arg)
{
	struct call *c = arg;
	int r;

	if (not_utf8(c->path) || not_utf8(c->path2))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->path2), host_flags))
		return -EINVAL;
	if ((r = other_file(c->dirfd2, c->path2)) != 0)
		return r < 0 ? r : -EEXIST;
	if ((r = other_file(c->dirfd, c->path)) != 0)
		return r < 0 ? r : -ENOENT;
	return (int)__syscall_renameat(c->dirfd, (long)c->path, c->dirfd2, (long)c->path2);
}

static int unlink_main(void *arg)
{
	struct call *c = arg;
	int r;

	if (not_utf8(c->path))
		return -EILSEQ;
	if ((r = other_file(c->dirfd, c->path)) != 0)
		return r < 0 ? r : -ENOENT;
	return (int)__syscall_unlinkat(c->dirfd, (long)c->path, c->flags);
}

/* FN(C) on the main thread, tried again while kiln_host_retry() says. */
static int retried(int (*fn)(void *), struct call *c)
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
	struct call c = { .dirfd = olddirfd, .path = oldpath, .dirfd2 = newdirfd, .path2 = newpath };

	return retried(rename_main, &c);
}

int rename(const char *oldpath, const char *newpath)
{
	return renameat(AT_FDCWD, oldpath, AT_FDCWD, newpath);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	struct call c = { .dirfd = dirfd, .path = path, .flags = flags };

	return retried(unlink_main, &c);
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
 * symlinkat takes the addresses of its two names for the names: Node's
 * link and symlink make them. */
static int mkdir_main(void *arg)
{
	struct call *c = arg;

	if (not_utf8(c->path))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->path), host_flags))
		return -EINVAL;
	return (int)__syscall_mkdirat(c->dirfd, (long)c->path, c->mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	struct call c = { .dirfd = dirfd, .path = path, .mode = mode };

	kiln_host_flags();
	return on_main(mkdir_main, &c);
}

int mkdir(const char *path, mode_t mode)
{
	return mkdirat(AT_FDCWD, path, mode);
}

static int symlink_main(void *arg)
{
	struct call *c = arg;

	if (not_utf8(c->path) || not_utf8(c->path2))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->path2), host_flags))
		return -EINVAL;
	return js_symlink(c->path, c->dirfd2, c->path2);
}

int symlinkat(const char *target, int newdirfd, const char *linkpath)
{
	struct call c = { .path = target, .dirfd2 = newdirfd, .path2 = linkpath };

	kiln_host_flags();
	return on_main(symlink_main, &c);
}

static int link_main(void *arg)
{
	struct call *c = arg;

	if (not_utf8(c->path) || not_utf8(c->path2))
		return -EILSEQ;
	if (kiln_host_name_refused(base_of(c->path2), host_flags))
		return -EINVAL;
	return js_link(c->dirfd, c->path, c->dirfd2, c->path2);
}

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	struct call c = { .dirfd = olddirfd, .path = oldpath, .dirfd2 = newdirfd, .path2 = newpath };

	if (flags & ~AT_SYMLINK_FOLLOW) {
		errno = EINVAL;
		return -1;
	}
	kiln_host_flags();
	return on_main(link_main, &c);
}

/* fchmod: Windows keeps no mode bits (Node's chmod sets or clears its
 * read-only attribute, which would then stop the next run replacing the
 * sibling): nothing is changed there, and fstatat reports what
 * kiln_host_mode() says. */
static int fchmod_main(void *arg)
{
	struct call *c = arg;

	return (host_flags & KILN_HOST_WINDOWS) ? 0 : (int)__syscall_fchmod(c->dirfd, c->mode);
}

int fchmod(int fd, mode_t mode)
{
	struct call c = { .dirfd = fd, .mode = mode };

	kiln_host_flags();
	return on_main(fchmod_main, &c);
}

/* ioctl TIOCGWINSZ: Emscripten 3.1.6 gives every terminal 24 rows of 80
 * columns, and kiln would draw its progress line for 80: the terminal's
 * own size instead (standard output and error, which Node knows).  Any
 * other request is Emscripten's. */
long __syscall_ioctl(long fd, long op, ...);

struct winsize_call {
	int fd;
	struct winsize *ws;
};

static int winsize_main(void *arg)
{
	struct winsize_call *c = arg;
	int r = js_winsize(c->fd, &c->ws->ws_row);

	c->ws->ws_xpixel = c->ws->ws_ypixel = 0;
	return r;
}

int ioctl(int fd, int req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == TIOCGWINSZ) {
		struct winsize_call c = { fd, arg };
		return on_main(winsize_main, &c);
	}
	{
		long r = __syscall_ioctl(fd, req, arg);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return (int)r;
	}
}

/* getdents: Emscripten 3.1.6 lists a directory's names as JavaScript
 * strings, which hold no name that is not UTF-8 (Linux allows any bytes;
 * macOS and Windows do not), and gives up the whole listing, with no
 * error readdir reports, at a name it cannot find again: kiln would skip
 * files in silence.  Node's names as bytes instead, with their types.  A
 * name that is not UTF-8 is then listed, and refused where it is used
 * (utf8_path()). */
struct getdents_call {
	int fd, count;
	uint8_t *dirp;
};

static int getdents_main(void *arg)
{
	struct getdents_call *c = arg;
	static const int off[] = { offsetof(struct dirent, d_ino), offsetof(struct dirent, d_off),
				   offsetof(struct dirent, d_reclen), offsetof(struct dirent, d_type),
				   offsetof(struct dirent, d_name) };

	return js_getdents(c->fd, c->dirp, c->count, (int)sizeof(struct dirent), off);
}

long __syscall_getdents64(long fd, long dirp, long count);

long __syscall_getdents64(long fd, long dirp, long count)
{
	struct getdents_call c = { (int)fd, (int)count, (uint8_t *)dirp };
	int r = on_main(getdents_main, &c);

	return r < 0 ? -errno : r;
}

/* isatty: Emscripten 3.1.6 calls standard input, output and error
 * terminals whatever they are (kiln would draw its progress line into a
 * pipe or a CI log): Node's answer instead. */
static int isatty_main(void *arg)
{
	int r = js_isatty(((struct call *)arg)->dirfd);

	return r == 0 ? -ENOTTY : r;
}

int isatty(int fd)
{
	struct call c = { .dirfd = fd };

	return on_main(isatty_main, &c) == 1;
}

/* sigwait, raise: Emscripten keeps signals within the program: sigwait
 * returns at once when none is pending, and the default action of a
 * signal raised is to do nothing, while the signals from outside (Ctrl-C,
 * a CI runner's SIGTERM) end Node's process at once, as SIGKILL would end
 * a native kiln.  Here the first sigwait() has Node hand SIGINT, SIGTERM
 * and SIGHUP to kiln_host_signal(), for sigwait() to return, so that
 * kiln's signal thread (cmd/signals.c) does as it does natively; and a
 * fatal signal raised with its default action ends the process by that
 * signal, through Node.  (These are __wrap_sigwait, __wrap_raise and
 * __wrap_pthread_sigmask, as flock is __wrap_flock.) */
static pthread_mutex_t signals_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t signals_came = PTHREAD_COND_INITIALIZER;
static unsigned long signals_pending;
static pthread_once_t signals_once = PTHREAD_ONCE_INIT;

static int take_signals_main(void *arg)
{
	(void)arg;
	js_take_signals();
	return 0;
}

static void take_signals(void)
{
	on_main(take_signals_main, NULL);
}

/* Called by Node, on the main thread, with a signal it received. */
EMSCRIPTEN_KEEPALIVE void kiln_host_signal(int sig);

EMSCRIPTEN_KEEPALIVE void kiln_host_signal(int sig)
{
	pthread_mutex_lock(&signals_lock);
	signals_pending |= 1ul << sig;
	pthread_cond_broadcast(&signals_came);
	pthread_mutex_unlock(&signals_lock);
}

/* pthread_sigmask: a thread that blocks SIGINT, SIGTERM or SIGHUP (kiln
 * does, first thing, before it starts its signal thread) will take them
 * with sigwait(): Node hands them over from then on, not only once the
 * signal thread has started (a Web Worker takes a while to start). */
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

static int die_main(void *arg)
{
	js_die_of(*(int *)arg);
	return 0;
}

int __wrap_raise(int sig)
{
	if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !__sig_is_blocked(sig) &&
	    !(__sig_actions[sig].sa_flags & SA_SIGINFO) && __sig_actions[sig].sa_handler == SIG_DFL) {
		on_main(die_main, &sig);
		for (;;) /* until the signal ends the process */
			pause();
	}
	return __real_raise(sig);
}

/* strerror: Emscripten's C library (musl) words some errors otherwise
 * than Linux's (glibc), which kiln's messages, documentation and tests
 * use: "Symbolic link loop" for "Too many levels of symbolic links".
 * Those of file calls are glibc's here (this is __wrap_strerror, as
 * flock is __wrap_flock). */
char *__wrap_strerror(int errnum);
char *__real_strerror(int errnum);

char *__wrap_strerror(int errnum)
{
	static const struct {
		int errnum;
		const char *text;
	} glibc[] = {
		{ EIO, "Input/output error" },
		{ ENOMEM, "Cannot allocate memory" },
		{ EBUSY, "Device or resource busy" },
		{ EXDEV, "Invalid cross-device link" },
		{ EMFILE, "Too many open files" },
		{ ENOTTY, "Inappropriate ioctl for device" },
		{ ESPIPE, "Illegal seek" },
		{ ERANGE, "Numerical result out of range" },
		{ EDEADLK, "Resource deadlock avoided" },
		{ ENAMETOOLONG, "File name too long" },
		{ ELOOP, "Too many levels of symbolic links" },
		{ EOVERFLOW, "Value too large for defined data type" },
		{ EILSEQ, "Invalid or incomplete multibyte or wide character" },
		{ ENOTSUP, "Operation not supported" },
		{ EDQUOT, "Disk quota exceeded" },
		{ ETIMEDOUT, "Connection timed out" },
		{ ECHILD, "No child processes" },
	};

	for (size_t i = 0; i < sizeof(glibc) / sizeof(*glibc); i++)
		if (glibc[i].errnum == errnum)
			return (char *)glibc[i].text;
	return __real_strerror(errnum);
}

/* getrandom: missing from Emscripten 3.1.6's C library; its getentropy
 * (crypto.randomFillSync under Node) gives 256 bytes a call. */
ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	(void)flags;
	for (size_t done = 0; done < len; done += 256)
		if (getentropy((char *)buf + done, len - done < 256 ? len - done : 256) != 0)
			return -1;
	return (ssize_t)len;
}

#endif
