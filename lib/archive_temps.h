/*
 * archive_temps.h - what kiln_run_archive() has on disk while it runs, so that
 * kiln_run_remove_temps() can remove it from the thread that waits for a
 * signal.  The whole module is archive.c; the public part is in kiln.h.
 */
#ifndef KILN_ARCHIVE_TEMPS_H
#define KILN_ARCHIVE_TEMPS_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

/*
 * The staging directory and the temporary output.  Everything archive.c
 * creates in either happens under LOCK after checking CLOSED, so that
 * kiln_archive_temps_shutdown() removes all of it and nothing is created
 * after.
 */
struct kiln_archive_temps {
	pthread_mutex_t lock;
	bool closed;            /* shut down: create nothing more */
	bool stage_live;        /* stage names a directory we created */
	bool out_live;          /* out_tmp names a file we created */
	char stage[PATH_MAX];
	char out_tmp[PATH_MAX];
};

void kiln_archive_temps_init(struct kiln_archive_temps *t);
void kiln_archive_temps_destroy(struct kiln_archive_temps *t);

/* Remove the staging directory (recursively) and the temporary output, and
 * make every later creation fail.  Thread-safe; not async-signal-safe. */
void kiln_archive_temps_shutdown(struct kiln_archive_temps *t);

#endif
