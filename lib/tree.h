/*
 * tree.h - one operation on one tree (compress, check, clean, merge) under
 * way: its state, and the callbacks it serialises.  Not part of the public
 * interface.
 *
 * A kiln_tree lives from kiln_tree_begin() to kiln_tree_end(), for one
 * directory, inside a kiln_run (run.h).  Next to every field: which thread
 * may write it, and under which lock.  "Main" is the thread that called
 * the public operation; "worker k" is the pool thread processing walk
 * entry k (each entry goes to exactly one worker).
 */
#ifndef KILN_TREE_H
#define KILN_TREE_H

#include "kiln.h"

#include "cache.h"
#include "fingerprint.h"
#include "journal.h"
#include "ledger.h"
#include "record.h"
#include "release.h"
#include "shard.h"
#include "state.h"
#include "walk.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct kiln_run;

/* What became of a walk entry, once settled. */
struct kiln_done {
	uint8_t outcome;  /* kiln_outcome */
	uint8_t kept;     /* bit C: coding C's sibling kept */
};

struct kiln_tree {
	/* Set by kiln_tree_begin() (main), read-only afterwards. */
	struct kiln_run *run;
	const struct kiln_options *opt;  /* &run->opt */
	const struct kiln_callbacks *cb; /* this operation's callbacks */
	const char *root;                /* normalised, owned */
	bool hashing;                    /* records will be written */
	bool pinned;                     /* ROOT pinned (beneath.h) */
	int lock_fd;                     /* lock.h: held while >= 0 */
	int record_lock_fd;              /* lock.h: the manifest's directory, kept elsewhere */
	int outer_lock_fd[8];            /* lock.h: the trees around it, held (KILN_LOCK_OUTER) */
	size_t nouter_lock;
	char *manifest_path;             /* where the record is read and written */

	/* The index beside the manifest (index.h).  Main, before the pool;
	 * read-only afterwards. */
	char *index_path;                /* where it is read and written; NULL: none */
	bool indexing;                   /* this run writes it */
	bool quick;                      /* a file that matches its stamp is not read */
	bool local;                      /* kiln_index_local() of the top */
	struct stat top;                 /* the top's status as the run began */
	int64_t since_ns;                /* the coarse clock then (kiln_index_now()) */
	uint8_t digest[32];              /* the options' (kiln_manifest_settings_digest()) */

	/* Main, before the pool starts; read-only while it runs (except
	 * state entries' SEEN, written by main only). */
	struct kiln_walk walk;
	struct kiln_state state;
	/* per walk entry, its entry of STATE by path, or NULL: set by
	 * kiln_prev_load(), once STATE has all it will hold (kiln_tree_prev()) */
	struct kiln_prev_entry **prev_of;
	struct kiln_cache *cache;        /* thread-safe itself */
	size_t *order, norder;           /* entries to process, largest first */

	/* Entry k's outcome and the codings it kept: written by worker k only
	 * while the pool runs (by main for the entries it settles itself),
	 * then read by main.  Its full report is made, told and dropped by
	 * whoever settles it: nothing the size of a report is kept per entry. */
	struct kiln_done *done;
	/* What the new manifest records, and the failure flags: through
	 * ledger.h only (who writes what is said there). */
	struct kiln_ledger ledger;
	/* Main only: the shard parts read into STATE (shard.h). */
	struct kiln_parts_seen parts_seen;

	/* Any thread: the next index into order. */
	atomic_size_t next;
	/* Any thread; its own lock. */
	struct kiln_journal journal;
	/* Main, before the pool (dict.c), read-only afterwards: the earlier
	 * releases (opt.previous), their files that may be dictionaries. */
	struct kiln_release releases[KILN_MAX_PREVIOUS];
	bool release_absent[KILN_MAX_PREVIOUS]; /* not there yet: a first deploy */
	/* Main, before the pool (immutable.c), read-only afterwards: per walk
	 * entry, why it is immutable; NULL when none is. */
	struct kiln_fp *fp;
	/* Per walk entry, its dictionary deltas (walk.n lists, or NULL):
	 * entry k's by the worker that took k (dict.c, the pipeline's last
	 * step), read by main after the pool, which hands them to the ledger. */
	struct kiln_dict_list *dicts;
	/* Main, before the pool (dict.c), read-only while it runs, freed
	 * after it: what each file's deltas are made against. */
	struct kiln_dict_plan *dict_plan;
	/* Main only. */
	bool dict_failed;     /* an earlier release (opt.previous) unreadable */
	bool fingerprints_failed; /* an opt.fingerprints file unreadable */
	bool artifact_failed;
	bool manifest_failed; /* then the journals stay: they are the record */

	/* Any thread, under CB_LOCK: every callback call. */
	pthread_mutex_t cb_lock;
};

/*
 * Start an operation on ROOT_ARG with callbacks CB (the run's, or wrapped
 * ones: kiln_run_archive() passes its own): normalise the root, copy
 * nothing else.  KILN_ERR_NOMEM, or KILN_OK; kiln_tree_end() in every case.
 */
kiln_status kiln_tree_begin(struct kiln_tree *t, struct kiln_run *run, const char *root_arg,
			    const struct kiln_callbacks *cb);
void kiln_tree_end(struct kiln_tree *t);

/* Entry K is settled as *R says: note its outcome and kept codings
 * (t->done[k]), then tell R through on_file.  Worker K, or main. */
void kiln_tree_settled(struct kiln_tree *t, size_t k, const struct kiln_report *r);

/* The entry of T's previous state with the path of walk entry K, or NULL. */
static inline struct kiln_prev_entry *kiln_tree_prev(const struct kiln_tree *t, size_t k)
{
	return t->prev_of ? t->prev_of[k] : kiln_state_find(&t->state, t->walk.v[k].rel);
}

/* Callbacks, serialised by T's lock; each is a no-op when unset. */
void kiln_tree_report(struct kiln_tree *t, const struct kiln_report *r);
void kiln_tree_event(struct kiln_tree *t, kiln_event ev, const char *path, int coding,
		     const struct kiln_error *err);
void kiln_tree_artifact(struct kiln_tree *t, const char *what, const char *path,
			const struct kiln_error *err);

/*
 * Progress of the file whose counter is *CREDITED (SIZE bytes, as the plan
 * counted it): BYTES more of it done, and FILES more files finished.  The
 * bytes passed on are capped so that the file never counts more than SIZE
 * in all.  Any thread (*CREDITED is the caller's own).
 */
void kiln_tree_progress(struct kiln_tree *t, uint64_t *credited, uint64_t size, uint64_t files,
			uint64_t bytes);

/* Report the root itself failing (path ""). */
void kiln_tree_root_error(struct kiln_tree *t, const struct kiln_error *err);

/* Report the file or directory PATH, named whole (no suffix), failing as
 * ERR says: a manifest, a shard part, a release, a delta.  Any thread. */
void kiln_tree_path_error(struct kiln_tree *t, const char *path, const struct kiln_error *err);

/* Mark *R failed: outcome KILN_OUTCOME_ERROR, error (ST, ERRNUM, WHAT) about
 * the sibling with SUFFIX ("" for the source itself). */
void kiln_report_fail(struct kiln_report *r, kiln_status st, int errnum, const char *what,
		      const char *suffix);

/* The manifest path for ROOT: opt.manifest_path or ROOT/kiln-manifest.json;
 * malloc'ed (NULL when out of memory). */
char *kiln_tree_manifest_path(const struct kiln_run *run, const char *root);

/* A malloc'ed copy of a root as given, without repeated or trailing
 * slashes and "." components past the first ("./s//assets/" -> "./s/assets",
 * "/" stays "/", "./" is "."): what messages show.  NULL when out of
 * memory. */
char *kiln_root_normalise(const char *root);

#endif
