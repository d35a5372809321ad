/*
 * run.h - the inside of a kiln_run, shared by the modules that drive a tree:
 * run.c (compress), check.c and clean.c.  Not part of the public interface.
 */
#ifndef KILN_RUN_H
#define KILN_RUN_H

#include "kiln.h"

#include "archive_temps.h"
#include "cache.h"
#include "journal.h"
#include "sibling.h"
#include "state.h"
#include "walk.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct worker {
	void *codec_state[KILN_NCODINGS]; /* made on first use, reused */
	struct kiln_tempslot slot;
};

struct kiln_run {
	struct kiln_options opt;
	char **globs; /* owned copies of opt.include then opt.exclude */
	struct kiln_callbacks cb;
	pthread_mutex_t cb_lock;
	atomic_int cancelled;
	unsigned nworkers;
	struct worker *workers;

	/* the tree under way */
	const char *root;
	struct kiln_walk walk;
	size_t *order;     /* indexes of entries to open, largest first */
	struct kiln_report *reports; /* one per walk entry, for the manifest */
	bool hashing;      /* digests are needed (a manifest will be written) */
	bool artifact_failed, remove_failed, cache_failed;
	char *manifest_path; /* where this tree's manifest is read and written */
	struct kiln_state state; /* the previous run's manifest, if any */
	struct kiln_cache *cache;
	struct kiln_journal journal; /* this run's record of siblings written */
	char *owned[4];    /* copies of the option strings below */
	struct kiln_archive_temps archive_temps; /* kiln_run_archive()'s (archive.c) */
	size_t norder;
	atomic_size_t next; /* next index into order */
};

/* A malloc'ed copy of the tree root as given, without trailing slashes
 * ("dist/" -> "dist", "/" stays "/"); NULL when out of memory. */
char *kiln_run_root(const char *root);

/* "ROOT/REL" + SUFFIX, malloc'ed; NULL when out of memory. */
char *kiln_run_join(const char *root, const char *rel, const char *suffix);

/* Callbacks, serialised by the run's lock; each is a no-op when unset. */
void kiln_run_report(struct kiln_run *run, const struct kiln_report *r);
void kiln_run_event(struct kiln_run *run, kiln_event ev, const char *path, int coding,
		    const struct kiln_error *err);

/* SHA-256 of the regular file at PATH (links not followed); false if it
 * cannot be read. */
bool kiln_run_file_sha256(const char *path, uint8_t out[32]);

/*
 * A sibling kiln recorded (PREV, with its size and SHA-256) that should no
 * longer exist: remove it if it is still what kiln wrote, else leave it and
 * report KILN_EVENT_FOREIGN.  Nothing is removed in a dry run.
 */
void kiln_run_remove_recorded(struct kiln_run *run, const char *root, const char *rel,
			      kiln_coding c, const struct kiln_prev_coding *prev);

/*
 * Coding C of entry REL gets no sibling this run: remove the one the previous
 * run wrote (PREV, may be NULL), or report one kiln never wrote
 * (KILN_EVENT_FOREIGN: nginx would serve it).
 */
void kiln_run_no_sibling(struct kiln_run *run, const struct kiln_prev_entry *prev,
			 const char *rel, kiln_coding c);

/*
 * Is the previous run's sibling of coding C of E still usable: recorded
 * (PREV), present as a regular file with the recorded size, and (with
 * --verify) decoding to the source, given as SRC[0..size) or, when SRC is
 * NULL, read from SRC_FD?  Brings its mode and mtime back to the source's
 * (SRC_ST) if they moved.
 */
bool kiln_run_previous_ok(struct kiln_run *run, const struct kiln_entry *e,
			  const struct kiln_prev_coding *prev, kiln_coding c,
			  const struct stat *src_st, const uint8_t *src, int src_fd);

/* After R failed on REL: remove the siblings this run wrote for it
 * (WRITTEN, by coding), so a failed file is left with none of them. */
void kiln_run_undo_written(struct kiln_run *run, const char *rel,
			   const bool written[KILN_NCODINGS], const struct kiln_report *r);

/* After R failed on REL: remove the siblings the previous run wrote (PREV)
 * for what is no longer this content (unless REUSE says it still is). */
void kiln_run_drop_outdated(struct kiln_run *run, const struct kiln_prev_entry *prev, bool reuse,
			    const char *rel, const struct kiln_report *r);

/* The manifest path for ROOT: opt.manifest_path or ROOT/kiln-manifest.json. */
char *kiln_run_manifest_path(const struct kiln_run *run, const char *root);

#endif
