/*
 * tempfile.h - the one way libkiln puts a file in place: temporary file,
 * write, metadata, rename.
 *
 * Every file kiln writes -- siblings, cache entries, the manifest and the
 * snippet, the output archive -- appears under its final name only whole:
 * its bytes go to a temporary file in the final file's own directory (so
 * rename(2) stays on one filesystem and is atomic), which gets its
 * permission bits and timestamps and is then renamed over the final name.
 * Readers see the old file or the new one, never a mix, never a prefix.
 * Temporary directories (an archive's staging tree) and the run journal are
 * made here too, and this is the only file of lib/ that calls rename(2).
 *
 * In the tree, every step -- the check of what stands at the final name, the
 * temporary file's creation, the rename and any removal -- is done relative
 * to the final file's directory, opened beneath the tree's top without
 * following a link (kiln_temps.root, beneath.h): a directory swapped for a
 * link to somewhere else makes the write fail (ENOENT), never land outside.
 *
 * Calling sequence, for a file written as it is produced:
 *
 *	struct kiln_tempfile tf;
 *	if (kiln_tempfile_create(reg, &tf, final, &meta, &err) != KILN_OK)
 *		... nothing exists; err says why
 *	write(tf.fd, ...)                      any number of times
 *	kiln_tempfile_commit(&tf, final, &meta, &err)  or  kiln_tempfile_discard(&tf)
 *
 * and kiln_write_atomic() does all of it for bytes already in memory.
 *
 * Signals.  Every temporary file and directory is recorded, from the moment
 * it exists until it is renamed or removed, in a registry (one per run).
 * Creating and recording, and renaming and forgetting, each happen under the
 * registry's lock, so kiln_temps_shutdown() -- called from the thread that
 * waits for SIGINT/SIGTERM, never from a signal handler -- always knows
 * every temporary file that exists, removes it, and makes every later
 * creation fail as cancelled.  A temporary file survives only a SIGKILL or
 * a crash: it has a recognisable name (".kiln-XXXXXX.tmp", see classify.h),
 * is locked with flock(2) while its writer lives, and a later run removes it
 * once it is stale (kiln_temp_is_stale()).
 *
 * Error handling.  Every function here returns a kiln_status and fills a
 * kiln_error naming the failed step with the errno of the failing call; on
 * failure nothing is left behind: no temporary file, and the final name as
 * it was.
 */
#ifndef KILN_TEMPFILE_H
#define KILN_TEMPFILE_H

#include "kiln.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/* A run's registry of live temporary files and directories. */
struct kiln_temps {
	pthread_mutex_t lock;
	bool closed;                 /* shut down: create nothing more */
	struct kiln_tempfile *head;  /* live entries, under LOCK */
	/* The tree being changed (its top as kiln_path_join() starts its
	 * paths), or NULL: a file whose final path lies beneath it is made,
	 * checked, renamed and removed relative to its directory opened
	 * beneath ROOT without following a link (beneath.h), never through a
	 * path that may cross one.  Set by the tree's owner before its workers
	 * start and cleared after they stop (kiln_temps_set_root()). */
	const char *root;
};

/* One temporary file or directory.  Owned by its writer (on its stack or in
 * its state); linked into the registry while it exists on disk. */
struct kiln_tempfile {
	struct kiln_temps *reg;
	struct kiln_tempfile *next, *prev;
	bool live;      /* PATH names what we created, not yet renamed or removed */
	bool is_dir;
	int fd;         /* the open file; -1 for a directory or once closed */
	/* A file's directory, opened beneath the registry's root when the
	 * final path lies in the tree (owned, closed when TF is finished), or
	 * AT_FDCWD; NAME is the file relative to it (a pointer into PATH). */
	int dirfd;
	const char *name;
	char path[PATH_MAX];
};

void kiln_temps_init(struct kiln_temps *reg);
void kiln_temps_destroy(struct kiln_temps *reg);

/* Make ROOT (owned by the caller, alive until cleared) the tree whose files
 * REG puts in place beneath it; NULL clears it.  Not thread-safe: call it
 * while no writer of REG runs. */
void kiln_temps_set_root(struct kiln_temps *reg, const char *root);

/* Remove every live temporary file and directory of REG (directories with
 * everything below them, never following a link) and make every later
 * creation fail with KILN_ERR_CANCELLED.  Thread-safe; waits for a writer
 * that is creating or renaming.  Not async-signal-safe. */
void kiln_temps_shutdown(struct kiln_temps *reg);

/* How the final file must look, and what may stand in its way. */
struct kiln_file_meta {
	mode_t mode;                   /* permission bits to set */
	const struct timespec *times;  /* atime, mtime to set; NULL: leave them */
	uid_t uid;                     /* owner to set when running as root */
	gid_t gid;
	bool set_owner;
	bool keep_if_same;             /* kiln_write_atomic(): leave an identical
	                                  existing file alone (same inode, mtime) */
	bool fsync;                    /* durable before and after the rename */
	bool refuse_read_only;         /* an existing file without write bits is
	                                  an error, unless MODE has none either */
};

/*
 * The refusals for FINAL_PATH, checked before anything is created and again
 * just before the rename: a last component over NAME_MAX (KILN_ERR_IO,
 * ENAMETOOLONG); a symbolic link, directory or special file there
 * (KILN_ERR_UNSAFE: never followed or replaced); with META's
 * refuse_read_only, a read-only file (KILN_ERR_UNSAFE, EACCES).
 */
kiln_status kiln_final_check(const char *final_path, const struct kiln_file_meta *meta,
			     struct kiln_error *err);

/*
 * Check FINAL_PATH (kiln_final_check()), then create, lock and register a
 * temporary file beside it in REG, open for writing as TF->fd.
 * KILN_ERR_CANCELLED once REG is shut down.
 */
kiln_status kiln_tempfile_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				 const char *final_path, const struct kiln_file_meta *meta,
				 struct kiln_error *err);

/*
 * Give TF META's mode, owner and times, fsync it if asked, close it, check
 * FINAL_PATH again, and rename it over FINAL_PATH (then fsync the directory
 * if asked).  On failure the temporary file is removed and *err set.  TF is
 * finished either way.
 */
kiln_status kiln_tempfile_commit(struct kiln_tempfile *tf, const char *final_path,
				 const struct kiln_file_meta *meta, struct kiln_error *err);

/* After kiln_tempfile_commit() or kiln_write_atomic() failed with *ERR: is
 * the new file in place all the same (renamed, then the directory could not
 * be synced)?  The caller must then treat it as written. */
bool kiln_tempfile_in_place(const struct kiln_error *err);

/* Close and remove TF, if it still exists.  Safe on a finished TF. */
void kiln_tempfile_discard(struct kiln_tempfile *tf);

/*
 * Write DATA[0..len) as FINAL_PATH through a temporary file in REG, with
 * META (and, with keep_if_same, not at all if FINAL_PATH already holds
 * exactly DATA).
 */
kiln_status kiln_write_atomic(struct kiln_temps *reg, const char *final_path,
			      const uint8_t *data, size_t len, const struct kiln_file_meta *meta,
			      struct kiln_error *err);

/*
 * Write TEXT (a malloc'ed string, freed here; NULL means building it ran out
 * of memory, reported with WHAT) as the artifact PATH: mode 0644, durably
 * with FSYNC, and not at all if PATH already holds exactly TEXT (so an
 * unchanged manifest keeps its inode and mtime): then *KEPT (when KEPT is
 * not NULL) is set true, else false.
 */
kiln_status kiln_write_artifact(struct kiln_temps *reg, const char *path, char *text,
				bool fsync, const char *what, bool *kept, struct kiln_error *err);

/*
 * An artifact written as it is made (the manifest, the index), without its
 * whole text in memory, and left alone when its bytes turn out to be the
 * ones PATH already holds (same inode, same mtime): while they match, each
 * piece is only compared with the file there; at the first difference a
 * temporary file is made, given the matching part and every piece after
 * it, and put in place at the end.
 *
 *	struct kiln_artifact a;
 *	kiln_artifact_begin(&a, reg, path, fsync);
 *	kiln_artifact_put(&a, p, n)             any number of times
 *	kiln_artifact_end(&a, &kept, &err)      or  kiln_artifact_abandon(&a)
 *
 * A failure sticks (later pieces are dropped) and is told by the end, which
 * then leaves PATH as it was.  One writer, one thread.
 */
struct kiln_artifact {
	struct kiln_temps *reg;
	const char *path;
	struct kiln_file_meta meta;
	int old_fd;              /* PATH while the bytes so far are its own; -1 */
	uint64_t old_size, at;   /* its size; the bytes put so far */
	bool writing;            /* TF holds the new file */
	struct kiln_tempfile tf;
	struct kiln_error err;   /* the first failure (status KILN_OK: none) */
};

void kiln_artifact_begin(struct kiln_artifact *a, struct kiln_temps *reg, const char *path,
			 bool fsync);
void kiln_artifact_put(struct kiln_artifact *a, const void *p, size_t n);
/* Make the failure ERR a's first (say, out of memory while building it). */
void kiln_artifact_fail(struct kiln_artifact *a, const struct kiln_error *err);
/* KILN_OK with *KEPT telling whether PATH was left as it was; or the first
 * failure (PATH as it was).  A is finished either way. */
kiln_status kiln_artifact_end(struct kiln_artifact *a, bool *kept, struct kiln_error *err);
void kiln_artifact_abandon(struct kiln_artifact *a);

/*
 * Create and register a private directory (mode 0700) named
 * PARENT/PREFIX + "XXXXXX", its path in TF->path.  kiln_tempdir_remove()
 * removes it with everything below it.
 */
kiln_status kiln_tempdir_create(struct kiln_temps *reg, struct kiln_tempfile *tf,
				const char *parent, const char *prefix, struct kiln_error *err);
void kiln_tempdir_remove(struct kiln_tempfile *tf);

/*
 * For a writer that creates files inside a registered temporary directory:
 * take REG's lock, so that kiln_temps_shutdown() cannot remove the
 * directory while something is being created in it, and return true; or,
 * once REG is shut down, return false without the lock held.
 */
bool kiln_temps_hold(struct kiln_temps *reg);
void kiln_temps_release(struct kiln_temps *reg);

/*
 * Create a new file DIR/PREFIX + "XXXXXX" (unique, mode 0600), opened with
 * FLAGS added to O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC and locked with
 * flock(2); its path in *PATH (malloc'ed).  Not registered: for a file
 * that must outlive a killed run (the run journal).  Returns the fd, or -1
 * with *err set.
 */
int kiln_unique_file(const char *dir, const char *prefix, int flags, char **path,
		     struct kiln_error *err);

/* write(2) all of P[0..len) to FD, retrying short writes and EINTR;
 * 0, or -1 with errno set. */
int kiln_write_all(int fd, const uint8_t *p, size_t len);

/* A temporary file older than this, that no process holds locked, was left
 * by a run that died (SIGKILL, power loss). */
#define KILN_TEMP_STALE_SECONDS 2

/* True if the kiln temporary file at PATH (opened beneath ROOT, beneath.h)
 * is stale: its writer holds no lock on it and its status last changed over
 * KILN_TEMP_STALE_SECONDS ago. */
bool kiln_temp_is_stale(const char *root, const char *path);

/* Remove PATH (beneath ROOT) when it is such a stale temporary file: 0,
 * or -1 with errno (EBUSY when it is not stale: a live run's). */
int kiln_temp_remove_dead(const char *root, const char *path);

#endif
