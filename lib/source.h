/*
 * source.h - opening and reading a source file without trusting it to hold
 * still.
 *
 * A source is opened with O_NONBLOCK (a FIFO put in place of a listed file
 * cannot hang the run) and O_NOFOLLOW unless it was reached through a link
 * kiln was told to follow, then checked to be the very file the walk listed.
 * It is read with read(2) into memory, not mmap(2): a file truncated under an
 * mmap kills the reader with SIGBUS, a file truncated under read(2) is merely
 * reported.  After encoding, kiln_source_unchanged() compares the file's
 * identity, size and times with what was read, so a file rewritten during the
 * run never gets a sibling of inconsistent content.
 */
#ifndef KILN_SOURCE_H
#define KILN_SOURCE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * What kiln keeps of a file's status for every file of a tree (the walk's
 * entries): the fields of struct stat it reads, under their names, in 64
 * bytes instead of 144.
 */
struct kiln_stat {
	mode_t st_mode;
	dev_t st_dev;
	ino_t st_ino;
	off_t st_size;
	struct timespec st_mtim, st_ctim;
};

/* *ST's fields that struct kiln_stat keeps. */
struct kiln_stat kiln_stat_of(const struct stat *st);

/*
 * Open PATH (in the tree ROOT: its directory opened beneath ROOT, beneath.h;
 * its last component followed only with FOLLOW) for reading and fstat it
 * into *st.  LISTED is the stat the walk recorded; the open file must be a
 * regular file with the same device and inode.  Returns an fd, or -1 with
 * *err set.
 */
int kiln_source_open(const char *root, const char *path, bool follow,
		     const struct kiln_stat *listed, struct stat *st, struct kiln_error *err);

/* Read up to N bytes from offset 0 into BUF; returns bytes read or -1. */
ssize_t kiln_source_head(int fd, uint8_t *buf, size_t n);

/*
 * Read the whole file (ST->st_size bytes) into a new malloc'ed buffer *out
 * (NULL for an empty file).  Fails with KILN_ERR_CHANGED if the file turns out
 * shorter or longer than ST says.  The caller frees *out.
 */
kiln_status kiln_source_read(int fd, const struct stat *st, uint8_t **out,
			     struct kiln_error *err);

/*
 * Hash the whole file (ST->st_size bytes) in chunks, without holding it in
 * memory: SHA-256 and SHA-384 into the report-sized arrays.  Fails with
 * KILN_ERR_CHANGED if the size turns out different.
 */
kiln_status kiln_source_hash(int fd, const struct stat *st, uint8_t sha256[32],
			     uint8_t sha384[48], struct kiln_error *err);

/*
 * Size and SHA-256 of the regular file at PATH (a symbolic link followed
 * only when FOLLOW), read whole in chunks.  KILN_OK; KILN_ERR_IO when it
 * cannot be opened or is not a regular file (errno says why);
 * KILN_ERR_NOMEM.  Thread-safe.
 */
kiln_status kiln_file_digest(const char *path, bool follow, uint64_t *size, uint8_t sha256[32]);
/* The same for PATH beneath ROOT (beneath.h): no link on the way is
 * followed, and a PATH that crosses one is not read (KILN_ERR_IO, errno
 * ENOENT). */
kiln_status kiln_file_digest_beneath(const char *root, const char *path, uint64_t *size,
				     uint8_t sha256[32]);

/* True if FD still has ST's inode, size, mtime and ctime. */
bool kiln_source_unchanged(int fd, const struct stat *st);

/* Reading a source back in order, to compare it with decoded bytes. */
struct kiln_src_cmp {
	int fd;
	uint64_t off, len;
	bool io_error; /* a read failed (rather than a mismatch) */
};

/* True if the next N bytes of the source (read from C->fd at C->off, which
 * then moves on) are P[0..n), and they lie within C->len. */
/* Thread-safe for distinct C (pread(2), no shared offset). */
bool kiln_src_cmp_next(struct kiln_src_cmp *c, const uint8_t *p, size_t n);

#endif
