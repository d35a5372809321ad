/*
 * lock.c - one kiln at a time changes a tree (lock.h).
 */
#include "lock.h"

#include "error.h"

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

kiln_status kiln_lock_take(struct kiln_tree *t, struct kiln_error *err)
{
	static __thread char text[128]; /* read before the next tree */
	char who[32] = "";
	bool told = false;
	struct stat st;
	int dir;

	t->lock_fd = -1;
	if ((dir = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return KILN_OK; /* the walk says what is wrong with ROOT */
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
				 "another kiln%s is changing this tree; not waiting (--no-wait)", who);
			return kiln_fail(err, KILN_ERR_BUSY, 0, text);
		}
		if (!told) {
			struct kiln_error why = { KILN_OK, 0, text, "" };
			snprintf(text, sizeof(text), "waiting for another kiln%s", who);
			kiln_tree_event(t, KILN_EVENT_WAITING, t->root, -1, &why);
			told = true;
		}
		sleep_ms(KILN_LOCK_POLL_MS);
	}
	t->lock_fd = dir;
	return KILN_OK;
}

void kiln_lock_drop(struct kiln_tree *t)
{
	if (t->lock_fd < 0)
		return;
	close(t->lock_fd); /* and the lock with it */
	t->lock_fd = -1;
}

long kiln_lock_holder(const char *root)
{
	struct stat st;

	return stat(root, &st) == 0 && S_ISDIR(st.st_mode) ? holder_of(&st) : -1;
}
