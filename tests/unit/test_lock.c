/*
 * test_lock.c - one kiln at a time changes a tree (lock.c), on scratch
 * trees, with a child process as the other kiln: while it holds the tree's
 * lock, kiln_lock_holder() reads its pid, a taker with no_wait is refused
 * (KILN_ERR_BUSY, naming the pid) and a waiting taker is told once, then
 * gets the lock when the child lets go; a cancelled run stops waiting; a
 * tree inside another kiln tree holds the outer tree's lock too; dropping
 * lets go of all of them.
 */
#include "lock.h"

#include "check.h"
#include "scratch.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/kiln-lock-XXXXXX";

struct events {
	unsigned waiting;
	char text[160];
};

static void on_event(void *user, kiln_event event, const char *path, int coding,
		     const struct kiln_error *err)
{
	struct events *e = user;

	(void)path;
	(void)coding;
	if (event == KILN_EVENT_WAITING) {
		e->waiting++;
		snprintf(e->text, sizeof(e->text), "%s", err && err->what ? err->what : "");
	}
}

/* A child holding an exclusive flock on PATH until it reads a byte from
 * *RELEASE (or its end); returns its pid once it holds the lock. */
static pid_t hold(const char *path, int *release)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(go))
		return -1;
	if ((pid = fork()) == 0) {
		int fd = open(path, O_RDONLY | O_DIRECTORY);
		close(ready[0]);
		close(go[1]);
		if (fd < 0 || flock(fd, LOCK_EX) != 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	*release = go[1];
	return pid;
}

struct later {
	int fd;
	atomic_int *flag;
	long ms;
};

/* After L->ms milliseconds: write to L->fd (releasing a holder), or set
 * *L->flag. */
static void *after(void *arg)
{
	struct later *l = arg;
	struct timespec ts = { l->ms / 1000, (l->ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	if (l->flag)
		atomic_store(l->flag, 1);
	else
		(void)!write(l->fd, "x", 1);
	return NULL;
}

static struct kiln_run *new_run(bool no_wait, struct events *ev, struct kiln_callbacks *cb)
{
	struct kiln_options opt;

	kiln_options_init(&opt);
	opt.jobs = 1;
	opt.no_wait = no_wait;
	memset(cb, 0, sizeof(*cb));
	cb->on_event = on_event;
	cb->user = ev;
	return kiln_run_new(&opt, cb);
}

static void test_other_kiln(const char *root)
{
	struct events ev = { 0, "" };
	struct kiln_callbacks cb;
	struct kiln_run *run;
	struct kiln_tree t;
	struct kiln_error err = { KILN_OK, 0, NULL, "" };
	char want[64];
	int release, status;
	pid_t pid;

	CHECK(kiln_lock_holder(root) == -1);
	pid = hold(root, &release);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_MSG(kiln_lock_holder(root) == pid, "holder %ld, child %ld", kiln_lock_holder(root),
		  (long)pid);
	snprintf(want, sizeof(want), "(pid %ld)", (long)pid);

	/* no_wait: refused at once, naming the holder */
	run = new_run(true, &ev, &cb);
	CHECK(run && kiln_tree_begin(&t, run, root, &run->cb) == KILN_OK);
	CHECK(kiln_lock_take(&t, &err) == KILN_ERR_BUSY);
	CHECK_MSG(err.what && strstr(err.what, want), "%s", err.what ? err.what : "(none)");
	CHECK(t.lock_fd == -1 && ev.waiting == 0);
	kiln_tree_end(&t);
	kiln_run_free(run);

	/* waiting: told once, then the lock once the child lets go */
	{
		struct later l = { release, NULL, 300 };
		pthread_t th;

		run = new_run(false, &ev, &cb);
		CHECK(run && kiln_tree_begin(&t, run, root, &run->cb) == KILN_OK);
		CHECK(pthread_create(&th, NULL, after, &l) == 0);
		CHECK(kiln_lock_take(&t, &err) == KILN_OK);
		pthread_join(th, NULL);
		CHECK_MSG(ev.waiting == 1 && strstr(ev.text, want), "told %u times: %s", ev.waiting,
			  ev.text);
		CHECK(t.lock_fd >= 0 && kiln_lock_holder(root) == getpid());
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		kiln_lock_drop(&t);
		CHECK(t.lock_fd == -1 && kiln_lock_holder(root) == -1);
		kiln_tree_end(&t);
		kiln_run_free(run);
	}
	close(release);

	/* cancelled while waiting: gives up */
	pid = hold(root, &release);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	{
		pthread_t th;
		struct later l = { -1, NULL, 200 };

		run = new_run(false, &ev, &cb);
		CHECK(run && kiln_tree_begin(&t, run, root, &run->cb) == KILN_OK);
		l.flag = &run->cancelled;
		CHECK(pthread_create(&th, NULL, after, &l) == 0);
		CHECK(kiln_lock_take(&t, &err) == KILN_ERR_CANCELLED);
		pthread_join(th, NULL);
		CHECK(t.lock_fd == -1 && kiln_lock_holder(root) == pid);
		kiln_tree_end(&t);
		kiln_run_free(run);
	}
	close(release);
	waitpid(pid, &status, 0);
}

static void test_nested(void)
{
	char outer[300], inner[300];
	struct events ev = { 0, "" };
	struct kiln_callbacks cb;
	struct kiln_run *run;
	struct kiln_tree t;
	struct kiln_error err = { KILN_OK, 0, NULL, "" };
	FILE *f;
	int release, status;
	pid_t pid;

	snprintf(outer, sizeof(outer), "%s/outer", dir);
	snprintf(inner, sizeof(inner), "%s/outer/sub/inner", dir);
	CHECK(mkdir(outer, 0755) == 0 && mkdir(scratch_path(dir, "outer/sub"), 0755) == 0 &&
	      mkdir(inner, 0755) == 0);
	/* not yet a kiln tree: only the inner one is locked */
	run = new_run(true, &ev, &cb);
	CHECK(run && kiln_tree_begin(&t, run, inner, &run->cb) == KILN_OK);
	CHECK(kiln_lock_take(&t, &err) == KILN_OK && t.nouter_lock == 0);
	CHECK(kiln_lock_holder(inner) == getpid() && kiln_lock_holder(outer) == -1);
	kiln_lock_drop(&t);
	/* the outer directory holds a manifest: its lock is taken too */
	f = fopen(scratch_path(dir, "outer/" KILN_MANIFEST_NAME), "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(kiln_lock_take(&t, &err) == KILN_OK && t.nouter_lock == 1);
	CHECK(kiln_lock_holder(inner) == getpid() && kiln_lock_holder(outer) == getpid());
	kiln_lock_drop(&t);
	CHECK(kiln_lock_holder(inner) == -1 && kiln_lock_holder(outer) == -1 && t.nouter_lock == 0);
	/* another kiln on the outer tree: the inner run is refused, and holds nothing */
	pid = hold(outer, &release);
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK(kiln_lock_take(&t, &err) == KILN_ERR_BUSY);
		CHECK(err.what && strstr(err.what, "the tree around it"));
		CHECK(kiln_lock_holder(inner) == -1 && t.lock_fd == -1 && t.nouter_lock == 0);
		close(release);
		waitpid(pid, &status, 0);
	}
	kiln_tree_end(&t);
	kiln_run_free(run);
}

int main(void)
{
	char root[256];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/tree", dir);
	CHECK(mkdir(root, 0755) == 0);
	test_other_kiln(root);
	test_nested();
	if (!check_failures)
		scratch_remove(dir);
	return check_exit("test_lock");
}
