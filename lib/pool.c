/*
 * pool.c - the thread pool.
 *
 * How kiln uses threads.  The walk lists the whole tree first (it is cheap:
 * directory reads and lstat, no file contents).  The candidates are then
 * sorted largest first and handed out through one atomic counter: each
 * worker takes the next file, reads it, encodes it with every requested
 * content-coding, verifies, writes the siblings, reports, and takes the next.
 * Largest first means the long encodes start early and the small files fill
 * the gaps at the end, so the run ends close to max(total work / N, the
 * longest single file).  What workers share, and how: the counter and the
 * cancel flag (atomics); the callbacks (tree.c serialises them under its
 * lock); the tree's outcome (ledger.c: entry K's record is written by the
 * worker that took K alone, stale siblings under the ledger's lock, failure
 * flags as atomics); the dictionary plan (dict.c), read-only while the pool
 * runs, each entry's deltas written by its own worker; the temporary-file
 * registry (tempfile.c, under its lock, for the signal handler); the run
 * journal (journal.c, under its lock: each sibling's line before its
 * rename); the content cache (cache.c, whose entries are written through
 * temporary files and renamed, so that workers never see half of one).  Each
 * worker owns its encoder states (reused from file to file) and its
 * temporary-file slot.  Because every file is encoded independently from
 * its own bytes (and, for a delta, a dictionary fixed before the pool
 * starts), the output cannot depend on how many workers there are or which
 * one took which file.
 */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

struct thread_arg {
	void (*fn)(void *arg, unsigned worker);
	void *arg;
	unsigned worker;
};

static void *thread_main(void *p)
{
	struct thread_arg *t = p;

	t->fn(t->arg, t->worker);
	return NULL;
}

unsigned kiln_pool_run(unsigned n, void (*fn)(void *arg, unsigned worker), void *arg)
{
	pthread_t *tids = NULL;
	struct thread_arg *args = NULL;
	unsigned started = 0;

	if (n > 1) {
		tids = calloc(n, sizeof(*tids));
		args = calloc(n, sizeof(*args));
	}
	for (unsigned i = 1; tids && args && i < n; i++) {
		args[started] = (struct thread_arg){ fn, arg, started + 1 };
		if (pthread_create(&tids[started], NULL, thread_main, &args[started]) != 0)
			break;
		started++;
	}
	fn(arg, 0);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	free(args);
	return started + 1;
}
