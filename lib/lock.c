/*
 * lock.c - one kiln at a time changes a tree (lock.h).
 */
#include "lock.h"

#include "beneath.h"
#include "error.h"
#include "paths.h"
#include "sibling.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The process holding an exclusive flock(2) on the directory ST, as
 * /proc/locks lists it (proc(5): "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE
 * START END", lines of waiters marked "->"): its pid, 0 when held but the
 * pid cannot be told, -1 when none holds it. */
static long holder_of(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	long pid = -1;

	if (!f)
		return -1;
	while (pid < 0 && fgets(line, sizeof(line), f)) {
		char kind[16], mode[16];
		unsigned maj, min;
		unsigned long ino;
		long who;

		if (strstr(line, "->"))
			continue; /* a waiter */
		if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%lu", kind, mode, &who, &maj, &min,
			   &ino) == 6 &&
		    strcmp(kind, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 &&
		    ino == (unsigned long)st->st_ino && maj == major(st->st_dev) &&
		    min == minor(st->st_dev))
			pid = who > 0 ? who : 0;
	}
	fclose(f);
	return pid;
}

/* Why a run goes on unlocked rather than fails: a file system without
 * locks (some network ones) has no other way. */
static bool unlockable(int e)
{
	return e == ENOLCK || e == EOPNOTSUPP || e == EINVAL;
}

/* Lock the directory DIR (an open descriptor, closed here on failure) for
 * T: WHAT names it in --no-wait's message ("this tree"), WAITING is said
 * after "waiting for another kiln (pid N)".  KILN_OK with *HELD set (false:
 * the file system cannot lock, DIR closed), or as kiln_lock_take(). */
static kiln_status lock_dir_as(struct kiln_tree *t, int dir, const char *what, const char *waiting,
			       bool *held, struct kiln_error *err)
{
	static __thread char text[160]; /* read before the next tree */
	char who[32] = "";
	bool told = false;
	struct stat st;

	*held = false;
	while (flock(dir, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		long holder;

		if (e == EINTR)
			continue;
		if (e != EWOULDBLOCK) {
			close(dir);
			return unlockable(e) ? KILN_OK : kiln_fail(err, KILN_ERR_IO, e, "cannot lock");
		}
		if (atomic_load(&t->run->cancelled)) {
			close(dir);
			return kiln_fail(err, KILN_ERR_CANCELLED, 0, "cancelled");
		}
		holder = fstat(dir, &st) == 0 ? holder_of(&st) : 0;
		if (holder > 0)
			snprintf(who, sizeof(who), " (pid %ld)", holder);
		if (t->opt->no_wait) {
			close(dir);
			snprintf(text, sizeof(text),
				 "another kiln%s is changing %s; not waiting (--no-wait)", who, what);
			return kiln_fail(err, KILN_ERR_BUSY, 0, text);
		}
		if (!told) {
			struct kiln_error why = { KILN_OK, 0, text, "" };
			snprintf(text, sizeof(text), "waiting for another kiln%s%s", who, waiting);
			kiln_tree_event(t, KILN_EVENT_WAITING, t->root, -1, &why);
			told = true;
		}
		sleep_ms(KILN_LOCK_POLL_MS);
	}
	*held = true;
	return KILN_OK;
}

/* Lock the directory DIR (an open descriptor, closed here on failure) for
 * T, whose top is WHERE's tree (the path the waiting event names).  KILN_OK
 * with *HELD set (false: the file system cannot lock, DIR closed), or as
 * kiln_lock_take(). */
static kiln_status lock_dir(struct kiln_tree *t, int dir, const char *where, bool *held,
			    struct kiln_error *err)
{
	return lock_dir_as(t, dir, where == t->root ? "this tree" : "the tree around it",
			   where == t->root ? "" : " changing the tree around it", held, err);
}

/* The directories above T's top (outermost first) that hold a manifest at
 * their default place: kiln trees T's tree lies inside.  Their number; the
 * descriptors in FDS (at most KILN_LOCK_OUTER). */
static size_t outer_trees(const struct kiln_tree *t, int *fds)
{
	char *real = realpath(t->root, NULL), *slash;
	int found[KILN_LOCK_OUTER];
	size_t n = 0;

	/* from the innermost up, the outermost KILN_LOCK_OUTER kept last */
	while (real && (slash = strrchr(real, '/')) != NULL && slash != real) {
		struct stat st;
		char *m;
		*slash = '\0';
		if (!(m = kiln_path_join(real, KILN_MANIFEST_NAME, "")))
			break;
		if (lstat(m, &st) == 0 && S_ISREG(st.st_mode)) {
			int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd >= 0 && n == KILN_LOCK_OUTER) {
				close(found[0]);
				memmove(found, found + 1, (n - 1) * sizeof(*found));
				n--;
			}
			if (fd >= 0)
				found[n++] = fd;
		}
		free(m);
	}
	free(real);
	for (size_t i = 0; i < n; i++)
		fds[i] = found[n - 1 - i];
	return n;
}

kiln_status kiln_lock_take(struct kiln_tree *t, struct kiln_error *err)
{
	int outer[KILN_LOCK_OUTER], dir;
	size_t nouter;
	kiln_status ret = KILN_OK;
	bool held;

	t->lock_fd = -1;
	t->record_lock_fd = -1;
	t->nouter_lock = 0;
	if ((dir = kiln_beneath_top(t->root)) < 0)
		return KILN_OK; /* the walk says what is wrong with ROOT */
	/* a run on a tree inside another kiln tree changes files that tree's
	 * runs change too: it holds that tree's lock as well, taken first
	 * (outermost first, so no two runs wait for each other) */
	nouter = outer_trees(t, outer);
	for (size_t i = 0; i < nouter; i++) {
		if (ret != KILN_OK) {
			close(outer[i]);
			continue;
		}
		ret = lock_dir(t, outer[i], "", &held, err);
		if (held)
			t->outer_lock_fd[t->nouter_lock++] = outer[i];
	}
	if (ret != KILN_OK) {
		close(dir);
		kiln_lock_drop(t);
		return ret;
	}
	if ((ret = lock_dir(t, dir, t->root, &held, err)) != KILN_OK) {
		kiln_lock_drop(t);
		return ret;
	}
	t->lock_fd = held ? dir : -1;
	/* a record kept elsewhere (--manifest, --artifacts) may be named by
	 * another tree's run too: its directory is locked last, so that the
	 * check of whose record it is and its write are one step */
	if (t->opt->manifest_path) {
		char *rdir = kiln_path_real_dir(t->manifest_path), *rtop = realpath(t->root, NULL);
		int fd = -1;
		if (rdir && (!rtop || strcmp(rdir, rtop) != 0))
			fd = open(rdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(rdir);
		free(rtop);
		if (fd >= 0) {
			ret = lock_dir_as(t, fd, "the directory of this tree's manifest",
					  " changing the directory of this tree's manifest", &held, err);
			if (ret != KILN_OK) {
				kiln_lock_drop(t);
				return ret;
			}
			t->record_lock_fd = held ? fd : -1;
		}
	}
	return KILN_OK;
}

void kiln_lock_drop(struct kiln_tree *t)
{
	if (t->lock_fd >= 0)
		close(t->lock_fd); /* and the lock with it */
	t->lock_fd = -1;
	if (t->record_lock_fd >= 0)
		close(t->record_lock_fd);
	t->record_lock_fd = -1;
	while (t->nouter_lock > 0)
		close(t->outer_lock_fd[--t->nouter_lock]);
}

long kiln_lock_holder(const char *root)
{
	struct stat st;

	return stat(root, &st) == 0 && S_ISDIR(st.st_mode) ? holder_of(&st) : -1;
}

_Static_assert(sizeof(((struct kiln_tree *)0)->outer_lock_fd) / sizeof(int) == KILN_LOCK_OUTER,
	       "kiln_tree.outer_lock_fd holds KILN_LOCK_OUTER descriptors");

void kiln_lock_note_dry_run(struct kiln_tree *t)
{
	static __thread char text[160];
	struct kiln_error why = { KILN_OK, 0, text, "" };
	long pid = kiln_lock_holder(t->root);
	const char *what = "this tree";
	int outer[KILN_LOCK_OUTER];
	size_t nouter = outer_trees(t, outer);

	/* a run on a kiln tree around this one changes it too */
	for (size_t i = 0; i < nouter; i++) {
		struct stat st;
		if (pid < 0 && fstat(outer[i], &st) == 0 && (pid = holder_of(&st)) >= 0)
			what = "the tree around it";
		close(outer[i]);
	}
	if (pid < 0)
		return;
	if (pid > 0)
		snprintf(text, sizeof(text),
			 "another kiln (pid %ld) is changing %s: what this dry run says "
			 "may be out of date when it ends", pid, what);
	else
		snprintf(text, sizeof(text), "another kiln is changing %s: what this dry "
					     "run says may be out of date when it ends", what);
	kiln_tree_event(t, KILN_EVENT_IN_PROGRESS, t->root, -1, &why);
}
