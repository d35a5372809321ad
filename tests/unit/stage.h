/*
 * stage.h - a tree run taken step by step, in the order run.c's
 * compress_tree() takes them, for the unit tests of the steps it calls:
 *
 *   stage_load()    the run, the tree, its walk and its record
 *                   (previous.c);
 *   stage_plan()    the earlier releases and the dictionary plan (dict.c),
 *                   which files are immutable, a ledger slot for every
 *                   entry, the entries the pool would take;
 *   stage_pool()    the pool, as one thread: each of those entries through
 *                   kiln_pipeline_file() in walk order;
 *   stage_finish()  what follows the pool: deltas settled, siblings of
 *                   gone files removed, the manifest written, the journal
 *                   dropped;
 *   stage_end()     the deltas' lists freed, the tree and the run.
 *
 * No lock is taken, no shard, cache trim or snippet check is made: a test
 * that needs those runs kiln_run_tree().  Events are kept as handmade.h
 * keeps them (set hm_root first), and each entry's report as the run
 * tells it (stage_report()).
 */
#ifndef KILN_STAGE_H
#define KILN_STAGE_H

#include "artifacts.h"
#include "dict.h"
#include "immutable.h"
#include "pipeline.h"
#include "previous.h"
#include "run.h"
#include "walk.h"

#include "check.h"
#include "handmade.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct stage {
	struct kiln_options opt; /* set by the test between stage_init() and stage_load() */
	struct kiln_callbacks cb;
	struct kiln_run *run;
	struct kiln_tree t;
	struct hm_events ev;
	/* per walk entry, its report as the run told it (the walk's
	 * decision until then): set by stage_plan() */
	struct kiln_report *reports;
	bool begun;
};

/* The walk index of REL, or SIZE_MAX. */
static inline size_t stage_index(const struct stage *s, const char *rel)
{
	for (size_t k = 0; k < s->t.walk.n; k++)
		if (strcmp(s->t.walk.v[k].rel, rel) == 0)
			return k;
	return SIZE_MAX;
}

static inline void stage_on_event(void *user, kiln_event event, const char *path, int coding,
				  const struct kiln_error *err)
{
	hm_on_event(&((struct stage *)user)->ev, event, path, coding, err);
}

/* A report told: kept as its entry's (its strings the walk's). */
static inline void stage_on_file(void *user, const struct kiln_report *r)
{
	struct stage *s = user;
	size_t k = s->reports && r->root == s->t.root ? stage_index(s, r->path) : SIZE_MAX;

	if (k == SIZE_MAX)
		return;
	s->reports[k] = *r;
	s->reports[k].path = s->t.walk.v[k].rel;
}

/* Default options, one job, the tree's events and reports kept. */
static inline void stage_init(struct stage *s)
{
	memset(s, 0, sizeof(*s));
	kiln_options_init(&s->opt);
	s->opt.jobs = 1;
	s->cb.on_event = stage_on_event;
	s->cb.on_file = stage_on_file;
	s->cb.user = s;
}

/* A run of S's options on hm_root, walked, its record loaded. */
static inline bool stage_load(struct stage *s)
{
	struct kiln_error err = { 0 };
	struct stat own;
	char *where = NULL;
	size_t nown;

	if (!(s->run = kiln_run_new(&s->opt, &s->cb)))
		return false;
	s->begun = true;
	if (kiln_tree_begin(&s->t, s->run, hm_root, &s->run->cb) != KILN_OK)
		return false;
	s->t.hashing = s->opt.write_manifest && !s->opt.dry_run;
	nown = stat(s->t.manifest_path, &own) == 0;
	if (kiln_walk(s->t.root, &s->run->opt, &own, nown, &s->t.walk, &err) != KILN_OK)
		return false;
	if (kiln_prev_load(&s->t, &err, &where) != KILN_OK) {
		CHECK_MSG(0, "kiln_prev_load: %s", err.what);
		return false;
	}
	return true;
}

static inline bool stage_plan(struct stage *s)
{
	struct kiln_tree *t = &s->t;
	size_t n = t->walk.n ? t->walk.n : 1;

	t->journal.disabled = !t->hashing;
	kiln_dict_begin(t);
	kiln_immutable_decide(t);
	if (!(s->reports = calloc(n, sizeof(*s->reports))) ||
	    !(t->done = calloc(n, sizeof(*t->done))) || !kiln_ledger_size(&t->ledger, t->walk.n))
		return false;
	for (size_t k = 0; k < t->walk.n; k++) {
		struct kiln_entry *e = &t->walk.v[k];
		/* as run.c's plan() makes it before the pool */
		kiln_pipeline_report_of(t, k, &s->reports[k]);
		t->done[k] = (struct kiln_done){ e->outcome, 0 };
		/* what plan() hands to the pool (every entry is this shard's) */
		e->queued = e->outcome == KILN_OUTCOME_CANDIDATE ||
			    (e->outcome == KILN_OUTCOME_EXCLUDED && S_ISREG(e->st.st_mode) && t->hashing);
	}
	kiln_dict_plan(t);
	return true;
}

static inline void stage_pool(struct stage *s)
{
	for (size_t k = 0; k < s->t.walk.n; k++)
		if (s->t.walk.v[k].queued)
			kiln_pipeline_file(&s->t, &s->run->workers[0], k);
}

static inline void stage_finish(struct stage *s)
{
	struct kiln_tree *t = &s->t;

	kiln_dict_finish(t);
	kiln_prev_finish(t);
	if (!s->opt.dry_run)
		kiln_tree_write_artifacts(t);
	/* (kiln_dict_end() waits for stage_end(): the test reads the deltas) */
	if (t->hashing && !t->manifest_failed) {
		kiln_journal_close(&t->journal, true);
		kiln_journal_remove_stale(t->root, NULL);
	}
}

static inline void stage_end(struct stage *s)
{
	if (s->begun) {
		kiln_dict_end(&s->t);
		kiln_tree_end(&s->t);
	}
	kiln_run_free(s->run);
	s->run = NULL;
	s->begun = false;
	free(s->reports);
	s->reports = NULL;
}

/* A whole run of S's options, every step; S stays for the test to read
 * (its reports, ledger, events) until stage_end(). */
static inline bool stage_run(struct stage *s)
{
	if (!stage_load(s) || !stage_plan(s))
		return false;
	stage_pool(s);
	stage_finish(s);
	return true;
}

/* REL's report, or NULL when the walk did not list it. */
static inline const struct kiln_report *stage_report(const struct stage *s, const char *rel)
{
	size_t k = stage_index(s, rel);

	return k == SIZE_MAX || !s->reports ? NULL : &s->reports[k];
}

#endif
