/*
 * run.c - a run's life, and one tree from its walk to its manifest.
 *
 * kiln_tree_compress() walks the tree (walk.c), loads what earlier runs left
 * (previous.c), reports what the walk already decided, sorts the other
 * entries largest first and lets the pool (pool.c) put each through the
 * pipeline (pipeline.c).  Then it removes the siblings of deleted files,
 * writes the manifest and the snippets (artifacts.c), and drops the
 * journals the manifest now makes redundant.
 *
 * A cancelled run does not stop short: the pool still takes every file, but
 * nothing is encoded any more (produce.c refuses), so each file keeps its
 * earlier siblings if its content is unchanged and loses them if not, and
 * the manifest written at the end records exactly what is on disk.
 */
#include "run.h"

#include "artifacts.h"

#include "codec.h"
#include "dict.h"
#include "hash.h"
#include "index.h"
#include "lock.h"
#include "manifest.h"
#include "outputs.h"
#include "pipeline.h"
#include "pool.h"
#include "previous.h"
#include "shard.h"
#include "sibling.h"
#include "immutable.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

/* opt.artifacts_dir: the manifest and each chosen server's snippet there,
 * under their default names, unless an option names them already. */
static bool artifacts_in(struct kiln_run *run)
{
	const char *dir = run->opt.artifacts_dir;

	if (run->opt.write_manifest && !run->opt.manifest_path) {
		if (!(run->artifact_paths[0] = kiln_path_join(dir, KILN_MANIFEST_NAME, "")))
			return false;
		run->opt.manifest_path = run->artifact_paths[0];
		run->artifacts_manifest = true;
	}
	for (unsigned sv = 0; sv < kiln_nservers; sv++) {
		char **p = &run->artifact_paths[1 + sv];
		if (!(run->opt.servers & (1u << sv)) || kiln_server_given(&run->opt, sv))
			continue;
		if (!(*p = kiln_path_join(dir, kiln_servers[sv]->files[0].name, "")))
			return false;
		memcpy((char *)&run->opt + kiln_servers[sv]->path_field, p, sizeof(*p));
		run->artifacts_servers |= 1u << sv;
	}
	return true;
}

struct kiln_run *kiln_run_new(const struct kiln_options *opt, const struct kiln_callbacks *cb)
{
	struct kiln_run *run;
	/* every array of strings, copied into run->globs one after another */
	const char *const *const *arrays[] = { &opt->include, &opt->exclude, &opt->immutable,
					       &opt->previous, &opt->mutable_globs,
					       &opt->fingerprints };
	const size_t counts[] = { opt->n_include, opt->n_exclude, opt->n_immutable,
				  opt->n_previous, opt->n_mutable, opt->n_fingerprints };
	size_t nglobs = 0, at = 0;
	const char **strs[7];

	kiln_manifest_alloc_init();

	for (size_t a = 0; a < 6; a++)
		nglobs += counts[a];
	if (kiln_options_check(opt, NULL, NULL) != KILN_OK || kiln_hash_init() != KILN_OK)
		return NULL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->opt = *opt;
	if (cb)
		run->cb = *cb;
	kiln_temps_init(&run->temps);
	run->nworkers = opt->jobs ? opt->jobs : online_cpus();
	run->workers = calloc(run->nworkers, sizeof(*run->workers));
	run->globs = calloc(nglobs + 1, sizeof(char *));
	if (!run->workers || !run->globs)
		goto fail;
	{
		const char *const **dst[] = { &run->opt.include, &run->opt.exclude,
					      &run->opt.immutable, &run->opt.previous,
					      &run->opt.mutable_globs, &run->opt.fingerprints };
		for (size_t a = 0; a < 6; a++) {
			for (size_t i = 0; i < counts[a]; i++)
				if (!(run->globs[at + i] = strdup((*arrays[a])[i])))
					goto fail;
			*dst[a] = (const char *const *)run->globs + at;
			at += counts[a];
		}
	}
	/* a shard's record is a part; the snippet is the merge's */
	if (opt->shard_count)
		run->opt.servers = 0;
	strs[0] = &run->opt.manifest_path;
	strs[1] = &run->opt.nginx_conf_path;
	strs[2] = &run->opt.cache_dir;
	strs[3] = &run->opt.url_prefix;
	strs[4] = &run->opt.caddy_conf_path;
	strs[5] = &run->opt.apache_conf_path;
	strs[6] = &run->opt.artifacts_dir;
	for (size_t i = 0; i < 7; i++) {
		if (!*strs[i])
			continue;
		if (!(run->owned[i] = strdup(*strs[i])))
			goto fail;
		*strs[i] = run->owned[i];
	}
	if (run->opt.artifacts_dir && !artifacts_in(run))
		goto fail;
	return run;
fail:
	kiln_run_free(run);
	return NULL;
}

void kiln_run_free(struct kiln_run *run)
{
	if (!run)
		return;
	for (unsigned w = 0; run->workers && w < run->nworkers; w++)
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (run->workers[w].codec_state[c])
				kiln_codecs[c]->state_free(run->workers[w].codec_state[c]);
	for (size_t i = 0; run->globs && run->globs[i]; i++)
		free(run->globs[i]);
	free(run->globs);
	for (size_t i = 0; i < sizeof(run->owned) / sizeof(run->owned[0]); i++)
		free(run->owned[i]);
	for (size_t i = 0; i < sizeof(run->artifact_paths) / sizeof(run->artifact_paths[0]); i++)
		free(run->artifact_paths[i]);
	free(run->workers);
	kiln_temps_destroy(&run->temps);
	free(run);
}

void kiln_run_cancel(struct kiln_run *run)
{
	atomic_store(&run->cancelled, 1);
}

void kiln_run_remove_temps(struct kiln_run *run)
{
	kiln_temps_shutdown(&run->temps);
}

/* ---- one tree ---- */

static void work(void *arg, unsigned worker)
{
	struct kiln_tree *t = arg;

	/* after a cancel too: each file then settles without encoding */
	for (;;) {
		size_t i = atomic_fetch_add(&t->next, 1);
		if (i >= t->norder)
			return;
		kiln_pipeline_file(t, &t->run->workers[worker], t->order[i]);
	}
}

struct order_key {
	uint64_t size;
	size_t index;
};

/* Largest first; walk order (already deterministic) between equals. */
static int by_size_desc(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Does PE record any sibling at all? */
static bool has_siblings(const struct kiln_prev_entry *pe)
{
	for (unsigned c = 0; pe && c < kiln_ncodecs; c++)
		if (kiln_state_has_sibling(pe, (kiln_coding)c))
			return true;
	return false;
}

/* Fill reports, pick the entries for the pool, sorted; report the rest. */
static kiln_status plan(struct kiln_tree *t)
{
	size_t n = t->walk.n ? t->walk.n : 1;
	struct order_key *keys = malloc(n * sizeof(*keys));
	uint64_t bytes = 0;
	size_t norder;

	t->order = malloc(n * sizeof(*t->order));
	t->done = malloc(n * sizeof(*t->done));
	if (!keys || !t->order || !t->done || !kiln_ledger_size(&t->ledger, t->walk.n)) {
		free(keys);
		return KILN_ERR_NOMEM;
	}
	for (size_t i = 0; i < t->walk.n; i++) {
		struct kiln_entry *e = &t->walk.v[i];
		const struct kiln_prev_entry *pe = kiln_tree_prev(t, i);
		bool regular = S_ISREG(e->st.st_mode);
		uint64_t size = regular ? (uint64_t)e->st.st_size : 0;

		t->done[i] = (struct kiln_done){ (uint8_t)e->outcome, 0 };
		if (!kiln_shard_mine(t->opt, e->rel))
			continue; /* another shard's: not even reported */
		/* unchanged since its record, as the index proves: not read */
		if (t->quick && kiln_pipeline_unchanged(t, i)) {
			e->queued = true;
			continue;
		}
		/* excluded files are opened only to be hashed for the manifest,
		 * or to lose the siblings an earlier run gave them */
		if (e->outcome == KILN_OUTCOME_CANDIDATE ||
		    (e->outcome == KILN_OUTCOME_EXCLUDED && regular &&
		     (t->hashing || has_siblings(pe)))) {
			keys[t->norder++] = (struct order_key){ size, i };
			bytes += size;
		}
	}
	norder = t->norder;
	qsort(keys, t->norder, sizeof(*keys), by_size_desc);
	for (size_t i = 0; i < t->norder; i++) {
		t->order[i] = keys[i].index;
		t->walk.v[keys[i].index].queued = true;
	}
	/* (the queue's order is all the keys were for) */
	free(keys);
	if (t->cb->on_plan)
		t->cb->on_plan(t->cb->user, t->root, norder, bytes);
	/* what the walk decided alone is reported before any work starts */
	for (size_t i = 0; i < t->walk.n; i++) {
		const struct kiln_entry *e = &t->walk.v[i];
		/* a directory kiln cannot read may hold any shard's files:
		 * every shard says so */
		bool any_shard = e->outcome == KILN_OUTCOME_ERROR && S_ISDIR(e->st.st_mode);
		struct kiln_report rep;
		if (!e->queued && (kiln_shard_mine(t->opt, e->rel) || any_shard)) {
			kiln_pipeline_report_of(t, i, &rep);
			kiln_tree_report(t, &rep);
		}
	}
	return KILN_OK;
}

/* The manifest and every snippet file a path is given for. */
#define KILN_OWN_MAX (1 + 3 * KILN_MAX_SERVERS)

/* Stat an artifact path that exists, so the walk can tell it is ours. */
static void note_own(const char *path, struct stat *own, size_t *n)
{
	if (path && stat(path, &own[*n]) == 0 && S_ISREG(own[*n].st_mode))
		(*n)++;
}

/* Without a manifest kiln keeps no record: a tree that has one from an
 * earlier run would be left with a record gone out of date. */
static bool holds_record(struct kiln_tree *t)
{
	struct kiln_state st = { 0 };
	struct kiln_error err;
	char *path = kiln_path_join(t->root, KILN_MANIFEST_NAME, "");
	kiln_status got = path ? kiln_state_load(path, &st, &err) : KILN_ERR_NOMEM;
	/* one that cannot be read (or no memory to tell) may well be a record */
	bool yes = got == KILN_OK ? st.loaded : got != KILN_ERR_INVALID;

	kiln_state_free(&st);
	free(path);
	return yes || kiln_journal_any(t->root);
}

/* With --manifest elsewhere, a manifest at the tree's default place is the
 * record of earlier runs that a run keeping its record elsewhere would
 * leave behind, out of date, its siblings recorded nowhere.  Its path
 * (malloc'ed) when the tree has one, else NULL. */
static char *default_record_left(struct kiln_tree *t)
{
	struct kiln_state st = { 0 };
	struct kiln_error err;
	struct stat a, b;
	char *path;

	if (!t->opt->manifest_path || !t->opt->write_manifest ||
	    !(path = kiln_path_join(t->root, KILN_MANIFEST_NAME, "")))
		return NULL;
	if ((stat(path, &a) == 0 && stat(t->manifest_path, &b) == 0 && a.st_dev == b.st_dev &&
	     a.st_ino == b.st_ino) ||
	    kiln_state_load(path, &st, &err) != KILN_OK || !st.loaded) {
		kiln_state_free(&st);
		free(path);
		return NULL;
	}
	kiln_state_free(&st);
	return path;
}

/* A glob that matched no file is most likely mistyped: say so. */
static void report_unmatched_globs(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;

	for (size_t i = 0; i < opt->n_include + opt->n_exclude; i++) {
		bool include = i < opt->n_include;
		struct kiln_error err = { KILN_OK, 0, "", "" };
		if (t->walk.glob_used[i])
			continue;
		err.what = include ? opt->include[i] : opt->exclude[i - opt->n_include];
		kiln_tree_event(t, include ? KILN_EVENT_INCLUDE_UNMATCHED
					   : KILN_EVENT_EXCLUDE_UNMATCHED,
				t->root, -1, &err);
	}
}

/* Would the globs take every sibling away: of the files still in the tree
 * that the record holds siblings of, are all excluded?  A run that removes
 * every sibling kiln wrote is almost always a mistyped --include. */
static bool globs_drop_all(struct kiln_tree *t)
{
	size_t present = 0, excluded = 0;

	if (!t->opt->n_include && !t->opt->n_exclude)
		return false;
	for (size_t k = 0; k < t->walk.n; k++) {
		const struct kiln_entry *e = &t->walk.v[k];
		if ((e->outcome != KILN_OUTCOME_CANDIDATE && e->outcome != KILN_OUTCOME_EXCLUDED) ||
		    !has_siblings(kiln_tree_prev(t, k)))
			continue;
		present++;
		excluded += e->outcome == KILN_OUTCOME_EXCLUDED;
	}
	return present > 0 && excluded == present;
}

/* Open the cache; a failure is an event, and the run goes on without. */
static void open_cache(struct kiln_tree *t)
{
	struct kiln_error err = { 0 };

	if (!t->opt->cache_dir)
		return;
	t->cache = kiln_cache_open(t->opt->cache_dir, t->opt->cache_max_size, &err);
	if (!t->cache) {
		kiln_tree_event(t, KILN_EVENT_CACHE_FAILED, t->opt->cache_dir, -1, &err);
		kiln_ledger_cache_failed(&t->ledger);
	}
}

/* A shard read the record from the manifest; it writes its part. */
static kiln_status to_part(struct kiln_tree *t)
{
	char *part = kiln_part_path(t->manifest_path, t->opt->shard_index, t->opt->shard_count);

	if (!part)
		return KILN_ERR_NOMEM;
	free(t->manifest_path);
	t->manifest_path = part;
	t->journal.shard_index = t->opt->shard_index;
	t->journal.shard_count = t->opt->shard_count;
	return KILN_OK;
}

/* Where T's index is (index.h), and whether this run writes it: runs that
 * write the manifest, but not a shard's (its part is not the manifest; it
 * reads the index all the same) or an archive's staging tree (no run sees
 * it again).  The clock is read first, as the run begins. */
static void index_begin(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;

	t->since_ns = kiln_index_now();
	if (!opt->write_manifest || t->run->staging || !t->manifest_path ||
	    stat(t->root, &t->top) != 0 || !kiln_manifest_settings_digest(opt, t->digest) ||
	    !(t->index_path = kiln_index_path(t->manifest_path)))
		return;
	t->local = kiln_index_local(t->root);
	/* (a shard reads the index of the manifest it starts from) */
	t->indexing = t->hashing && !opt->shard_count;
}

/* The tree T, once begun. */
static kiln_status compress_tree(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;
	struct kiln_error err = { 0 };
	char *where = NULL;
	struct stat own[KILN_OWN_MAX];
	size_t nown = 0;
	kiln_status ret;

	t->hashing = opt->write_manifest && !opt->dry_run;
	if (!opt->dry_run && (ret = kiln_lock_take(t, &err)) != KILN_OK) {
		kiln_tree_root_error(t, &err);
		return ret;
	}
	if (opt->dry_run)
		kiln_lock_note_dry_run(t);
	if ((ret = kiln_outputs_check(t, &err, &where)) != KILN_OK) {
		if (where)
			kiln_tree_path_error(t, where, &err);
		free(where);
		return ret;
	}
	index_begin(t);
	if (opt->write_manifest)
		note_own(t->manifest_path, own, &nown);
	for (unsigned sv = 0; sv < kiln_nservers; sv++) {
		if (!(opt->servers & (1u << sv)) || !kiln_server_given(opt, sv))
			continue;
		for (unsigned f = 0; kiln_servers[sv]->files[f].name && nown < KILN_OWN_MAX; f++) {
			char *path = kiln_server_file_path(opt, t->root, sv, f);
			note_own(path, own, &nown);
			free(path);
		}
	}
	ret = kiln_walk(t->root, opt, own, nown, &t->walk, &err);
	if (ret == KILN_ERR_IO)
		kiln_tree_root_error(t, &err);
	if (ret != KILN_OK)
		return ret;
	if (!opt->write_manifest && !opt->dry_run && holds_record(t)) {
		err = (struct kiln_error){ KILN_ERR_INVALID, 0,
					   "holds the record of an earlier kiln run, which "
					   "--no-manifest would leave out of date (drop "
					   "--no-manifest, or run 'kiln clean' first)", "" };
		kiln_tree_root_error(t, &err);
		return KILN_ERR_INVALID;
	}
	if (!opt->dry_run && (where = default_record_left(t)) != NULL) {
		err = (struct kiln_error){ KILN_ERR_INVALID, 0,
					   "holds the record of earlier kiln runs, which a run "
					   "keeping its manifest elsewhere (--manifest, --artifacts) "
					   "would leave out of date (run 'kiln clean' on the tree "
					   "first, or keep the manifest there)", "" };
		kiln_tree_path_error(t, where, &err);
		free(where);
		return KILN_ERR_INVALID;
	}
	if ((ret = kiln_prev_load(t, &err, &where)) != KILN_OK) {
		/* the manifest's own path (or the part's) names the problem */
		kiln_tree_path_error(t, where, &err);
		if (where != t->manifest_path)
			free(where);
		return ret;
	}
	if (opt->shard_count && (ret = to_part(t)) != KILN_OK)
		return ret;
	report_unmatched_globs(t);
	if (!opt->force && globs_drop_all(t)) {
		err = (struct kiln_error){ KILN_ERR_INVALID, 0,
					   "the globs exclude every file that has siblings, so "
					   "this run would remove all of them (check --include "
					   "and --exclude, or add --force)", "" };
		kiln_tree_root_error(t, &err);
		return KILN_ERR_INVALID;
	}
	open_cache(t);
	t->journal.disabled = !t->hashing;
	kiln_dict_begin(t);
	kiln_immutable_decide(t);
	if ((ret = plan(t)) != KILN_OK)
		return ret;
	kiln_dict_plan(t);
	/* the stamps of the files read from here on are proved against the
	 * clock as it is now, once past the tick the run began in (index.h):
	 * a file changed just before the run is then not taken for racy */
	if (t->indexing)
		t->since_ns = kiln_index_after(t->since_ns);
	atomic_store(&t->next, 0);
	kiln_pool_run(t->run->nworkers, work, t);
	kiln_dict_finish(t);
	kiln_prev_finish(t);
	if (!opt->dry_run)
		kiln_tree_write_artifacts(t);
	kiln_dict_end(t);
	/* the manifest now records what the journals did: drop them, unless it
	 * could not be written (then they are all a later run will have); a
	 * shard's part records its own shard's only, and the manifest of the
	 * whole tree what every part read did */
	if (t->hashing && !t->manifest_failed) {
		kiln_journal_close(&t->journal, true);
		if (opt->shard_count) {
			kiln_journal_remove_shard(t->root, opt->shard_index, opt->shard_count);
		} else {
			kiln_journal_remove_stale(t->root, NULL);
			kiln_parts_remove(&t->parts_seen);
		}
	}
	if (t->cache && !opt->dry_run)
		kiln_cache_trim(t->cache);
	if (atomic_load(&t->run->cancelled))
		return KILN_ERR_CANCELLED;
	return t->artifact_failed || t->dict_failed || t->fingerprints_failed ||
			       kiln_ledger_had_remove_failed(&t->ledger) ||
			       kiln_ledger_had_cache_failed(&t->ledger) || kiln_ledger_had_foreign_stale(&t->ledger)
		       ? KILN_ERR_IO
		       : KILN_OK;
}

kiln_status kiln_tree_compress(struct kiln_run *run, const char *root,
			       const struct kiln_callbacks *cb)
{
	struct kiln_tree t;
	kiln_status ret;

	if (atomic_load(&run->cancelled))
		return KILN_ERR_CANCELLED;
	ret = kiln_tree_begin(&t, run, root, cb);
	if (ret == KILN_OK)
		ret = compress_tree(&t);
	kiln_lock_drop(&t);
	kiln_tree_end(&t);
	return ret;
}

kiln_status kiln_run_tree(struct kiln_run *run, const char *root)
{
	return kiln_tree_compress(run, root, &run->cb);
}
