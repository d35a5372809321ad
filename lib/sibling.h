/*
 * sibling.h - the atomic sibling writer.
 *
 * A sibling is never visible half-written: bytes go to a temporary file in
 * the sibling's own directory (so rename(2) stays on one filesystem and is
 * atomic), which gets the source's permission bits and timestamps and is then
 * renamed over the final name.  Readers see the old sibling or the new one,
 * never a mix, never a prefix.
 *
 * Each writer owns a kiln_tempslot that records the temporary file it has
 * open.  Creating the file and recording it, and renaming it and forgetting
 * it, each happen under the slot's lock, so kiln_tempslot_shutdown() (called
 * from a thread that waits for SIGINT/SIGTERM) always knows every temporary
 * file that exists, removes it, and stops the writer from making another.
 * A temporary file survives only a SIGKILL or a crash; it has a recognisable
 * name (".kiln-XXXXXX.tmp", see classify.h), is locked with flock(2) while
 * its writer lives, and is never mistaken for an input.
 */
#ifndef KILN_SIBLING_H
#define KILN_SIBLING_H

#include "kiln.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* How many temporary files one writer may have open at once: one per
 * content-coding, for a source streamed to all its siblings in one pass. */
#define KILN_TEMPSLOT_FILES 2

struct kiln_tempslot {
	pthread_mutex_t lock;
	bool closed;          /* shut down: no new temporary file */
	struct {
		bool live;    /* path names a temporary file we created */
		char path[PATH_MAX];
	} t[KILN_TEMPSLOT_FILES];
};

void kiln_tempslot_init(struct kiln_tempslot *slot);
void kiln_tempslot_destroy(struct kiln_tempslot *slot);

/* Metadata for kiln_atomic_write(). */
struct kiln_file_meta {
	mode_t mode;                   /* permission bits to set */
	const struct timespec *times;  /* atime, mtime to set; NULL: now */
	uid_t uid;                     /* owner to set when running as root */
	gid_t gid;
	bool set_owner;
	bool keep_if_same;             /* leave an identical existing file alone */
	bool fsync;                    /* make it durable before and after rename */
	bool refuse_read_only;         /* an existing file without write bits is
	                                  an error, unless MODE has none either */
};

/*
 * Write DATA[0..len) as FINAL_PATH atomically (temporary file in the same
 * directory, then rename), with META.  Same refusals and failure guarantees
 * as kiln_sibling_write(), which is this with the source's metadata.
 */
kiln_status kiln_atomic_write(struct kiln_tempslot *slot, const char *final_path,
			      const uint8_t *data, size_t len,
			      const struct kiln_file_meta *meta, struct kiln_error *err);

/*
 * The same writer in three steps, for a file written as it is produced (a
 * sibling streamed from a large source).  kiln_temp_create() applies
 * kiln_atomic_write()'s refusals to FINAL_PATH (META's refuse_read_only;
 * keep_if_same is ignored), creates and locks a temporary file beside it,
 * records it as SLOT's file number I (< KILN_TEMPSLOT_FILES, unused), and
 * returns its fd, or -1 with *err set.  The caller writes the data to the fd,
 * then either kiln_temp_commit()s it (sets META's mode and times, fsyncs if
 * asked, closes FD and renames the file over FINAL_PATH; on failure the
 * temporary file is removed and *err set) or kiln_temp_discard()s it (closes
 * FD and removes the file).  Either way FD is closed and file I is free again.
 */
int kiln_temp_create(struct kiln_tempslot *slot, unsigned i, const char *final_path,
		     const struct kiln_file_meta *meta, struct kiln_error *err);
kiln_status kiln_temp_commit(struct kiln_tempslot *slot, unsigned i, int fd,
			     const char *final_path, const struct kiln_file_meta *meta,
			     struct kiln_error *err);
void kiln_temp_discard(struct kiln_tempslot *slot, unsigned i, int fd);

/* The refusals kiln_sibling_write() applies to FINAL_PATH before writing
 * anything, for a sibling of SRC: a name over NAME_MAX, a symbolic link,
 * directory or special file there, a read-only file beside a writable
 * source.  KILN_OK, or the error with *err set.  Lets a caller check every
 * sibling of a file before writing the first, and a dry run find what
 * would stop the real one. */
kiln_status kiln_sibling_check(const char *final_path, const struct stat *src,
			       struct kiln_error *err);

/* write(2) all of P[0..len) to FD, retrying short writes and EINTR;
 * 0, or -1 with errno set. */
int kiln_write_all(int fd, const uint8_t *p, size_t len);

/* The metadata kiln_sibling_write() gives a sibling of SRC; TIMES (2 entries)
 * is filled and pointed to by the result. */
struct kiln_file_meta kiln_sibling_meta(const struct stat *src, bool fsync,
					struct timespec times[2]);

/*
 * Write TEXT (a malloc'ed string, freed here; NULL means building it ran out
 * of memory) as the artifact PATH: atomically, mode 0644, durably with
 * FSYNC, and not at all if PATH already holds exactly TEXT (so an unchanged
 * manifest keeps its inode and mtime).  WHAT names it in errors.
 */
kiln_status kiln_artifact_write(struct kiln_tempslot *slot, const char *path, char *text,
				bool fsync, const char *what, struct kiln_error *err);

/*
 * Write DATA[0..len) as the file FINAL_PATH, atomically, with SRC's
 * permission bits (mode & 0777), and SRC's atime and mtime to the nanosecond;
 * when run as root, also SRC's owner and group (best effort).
 * Refuses (KILN_ERR_UNSAFE) when FINAL_PATH exists and is not a regular file:
 * a symlink, directory or special file there is never followed or replaced.
 * On any failure the temporary file is removed, FINAL_PATH is left as it
 * was, and *err says what failed (err->what names CODING_NAME's sibling).
 * SLOT must not be used by another thread at the same time.
 */
kiln_status kiln_sibling_write(struct kiln_tempslot *slot, const char *final_path,
			       const uint8_t *data, size_t len, const struct stat *src,
			       bool fsync, struct kiln_error *err);

/* A temporary file older than this, that no process holds locked, was left
 * by a run that died (SIGKILL, power loss). */
#define KILN_TEMP_STALE_SECONDS 2

/* True if the kiln temporary file at PATH is stale: its writer holds no lock
 * on it and its status last changed over KILN_TEMP_STALE_SECONDS ago.  Live
 * writers lock their temporary file from creation to rename. */
bool kiln_temp_is_stale(const char *path);

/* Unlink SLOT's temporary files, if it has any, and make every later write
 * through SLOT fail with KILN_ERR_CANCELLED before it creates anything.
 * Thread-safe; waits for a writer that is creating or renaming its file. */
void kiln_tempslot_shutdown(struct kiln_tempslot *slot);

#endif
