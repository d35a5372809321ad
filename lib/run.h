/*
 * run.h - the inside of a kiln_run, and the compress operation on one tree.
 * Not part of the public interface.
 *
 * A kiln_run lives from kiln_run_new() to kiln_run_free() and holds what
 * does not change between trees; each operation on one directory is a
 * kiln_tree (tree.h).  Next to every field: which thread may write it, and
 * under which lock.  "Main" is the thread that called the public operation.
 */
#ifndef KILN_RUN_H
#define KILN_RUN_H

#include "kiln.h"

#include "server.h"
#include "tempfile.h"
#include "tree.h"

#include <stdatomic.h>
#include <stdbool.h>

/* What one pool thread owns: only that thread touches it. */
struct worker {
	void *codec_state[KILN_MAX_CODINGS]; /* made on first use, reused */
};

struct kiln_run {
	/* Set by kiln_run_new(), read-only afterwards (any thread). */
	struct kiln_options opt;
	char **globs;        /* owned copies of opt.include, opt.exclude,
	                        opt.immutable, opt.previous, opt.mutable_globs
	                        then opt.fingerprints */
	char *owned[7];      /* owned copies of opt's path strings */
	/* the paths opt.artifacts_dir gave (owned): the manifest's, then each
	 * server's first file's; and which of opt's paths they are */
	char *artifact_paths[1 + KILN_MAX_SERVERS];
	bool artifacts_manifest;  /* opt.manifest_path is ARTIFACTS_DIR's */
	unsigned artifacts_servers; /* bit SV: server SV's path is ARTIFACTS_DIR's */
	struct kiln_callbacks cb; /* the caller's, for its own operations */
	unsigned nworkers;
	/* workers[i]: pool thread i only. */
	struct worker *workers;
	/* Set by kiln_run_archive() around its staging tree, which no later
	 * run sees: no index is kept for it (index.h). */
	bool staging;
	/* Any thread, any time (atomic): kiln_run_cancel() sets it. */
	atomic_int cancelled;
	/* Any thread; its own lock (tempfile.h). */
	struct kiln_temps temps;
};

/*
 * The compress operation on one tree (kiln_run_tree() with the run's
 * callbacks; kiln_run_archive() with its own).  Returns as kiln_run_tree().
 */
kiln_status kiln_tree_compress(struct kiln_run *run, const char *root,
			       const struct kiln_callbacks *cb);

#endif
