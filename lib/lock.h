/*
 * lock.h - one kiln at a time changes a tree.
 *
 * compress, clean and merge (and so the manifest and snippet writes they
 * end with) hold an exclusive flock(2) on the tree's top directory itself
 * from before they read the tree's record until after they wrote the new
 * one: no file is made for it, so a run that changes nothing changes
 * nothing on disk, and the kernel drops the lock when the process dies,
 * however it dies.  Another kiln waits (polling, so that a signal still
 * cancels it), told once through KILN_EVENT_WAITING with the holder's pid
 * (from /proc/locks); with opt.no_wait it gives up at once.  check does not
 * take the lock: it looks in /proc/locks whether one is held, before and
 * after it reads the tree, and reports a run in progress instead of
 * problems.  A dry run reads only, and does not take the lock either; it
 * says so when another kiln holds it.
 *
 * A tree inside another kiln tree (a directory above it holds a manifest
 * at its default place) shares files with that tree's runs: a run on it
 * takes the lock of each such tree above it too, outermost first, before
 * its own, so runs on nested trees never change one file at once.  (A run
 * on the outer tree cannot know of trees inside it that it has not read:
 * it is the inner run that looks up.)
 *
 * Where the file system cannot lock (some network file systems), the run
 * goes on unlocked.
 */
#ifndef KILN_LOCK_H
#define KILN_LOCK_H

#include "run.h"

#include <stdbool.h>

/* How long a waiting kiln sleeps between two tries, in milliseconds. */
#define KILN_LOCK_POLL_MS 50

/* At most this many kiln trees around a tree are locked with it (the
 * outermost ones); sizes kiln_tree.outer_lock_fd. */
#define KILN_LOCK_OUTER 8

/*
 * Take T's lock: t->lock_fd, the top directory's descriptor holding it (-1
 * when the run goes on unlocked), and the locks of the kiln trees around
 * it (t->outer_lock_fd).
 * KILN_OK; KILN_ERR_BUSY with opt.no_wait when another kiln holds it
 * (*ERR says which process); KILN_ERR_CANCELLED when the run was cancelled
 * while waiting; KILN_ERR_IO when the lock file cannot be made.  Main
 * thread.
 */
kiln_status kiln_lock_take(struct kiln_tree *t, struct kiln_error *err);

/* For a dry run, which takes no lock: when another kiln holds T's lock,
 * say so (KILN_EVENT_IN_PROGRESS, ERR->status KILN_OK: a warning), since
 * what the dry run reports may change under it.  Main thread. */
void kiln_lock_note_dry_run(struct kiln_tree *t);

/* Let go of T's lock, if held. */
void kiln_lock_drop(struct kiln_tree *t);

/* The process ID of a kiln holding ROOT's lock (0 when it cannot be told),
 * or -1 when none holds it (or /proc/locks cannot be read). */
long kiln_lock_holder(const char *root);

#endif
