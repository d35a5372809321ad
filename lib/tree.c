/*
 * tree.c - one operation on one tree: its state's lifetime, and the
 * callbacks that report it, serialised.  The tree operations (run.c,
 * check.c, clean.c) and the steps they use (pipeline.c, previous.c,
 * produce.c) report through here; see tree.h for who writes what.
 */
#include "tree.h"

#include "run.h"

#include "beneath.h"
#include "codec.h"
#include "error.h"
#include "sibling.h"

#include <stdlib.h>
#include <string.h>

char *kiln_root_normalise(const char *root)
{
	char *r = malloc(strlen(root) + 2), *o = r;
	bool first = true;

	if (!r || !*root) {
		if (r)
			*r = '\0';
		return r;
	}
	if (*root == '/')
		*o++ = '/';
	/* "./s//assets/" is "./s/assets": a repeated '/' and a "." past the
	 * first component name nothing, and would show in every message */
	for (const char *s = root; *s;) {
		size_t n;
		while (*s == '/')
			s++;
		if (!*s)
			break;
		n = strcspn(s, "/");
		if (!(n == 1 && *s == '.' && (!first || *root == '/'))) {
			if (o > r && o[-1] != '/')
				*o++ = '/';
			memcpy(o, s, n);
			o += n;
		}
		first = false;
		s += n;
	}
	if (o == r)
		*o++ = '.';
	*o = '\0';
	return r;
}

char *kiln_tree_manifest_path(const struct kiln_run *run, const char *root)
{
	return run->opt.manifest_path ? strdup(run->opt.manifest_path)
				      : kiln_path_join(root, KILN_MANIFEST_NAME, "");
}

kiln_status kiln_tree_begin(struct kiln_tree *t, struct kiln_run *run, const char *root_arg,
			    const struct kiln_callbacks *cb)
{
	memset(t, 0, sizeof(*t));
	t->run = run;
	t->opt = &run->opt;
	t->cb = cb;
	pthread_mutex_init(&t->cb_lock, NULL);
	kiln_ledger_init(&t->ledger);
	t->lock_fd = -1;
	t->record_lock_fd = -1;
	t->root = kiln_root_normalise(root_arg);
	kiln_journal_init(&t->journal, t->root, true);
	if (!t->root || !(t->manifest_path = kiln_tree_manifest_path(run, t->root)))
		return KILN_ERR_NOMEM;
	/* every file put in place beneath the top goes through descriptors
	 * opened beneath it (tempfile.h), the top opened once, now: a link to
	 * it changed during the run does not move the run to another tree */
	t->pinned = kiln_beneath_pin(t->root) == 0;
	kiln_temps_set_root(&run->temps, t->root);
	return KILN_OK;
}

void kiln_tree_end(struct kiln_tree *t)
{
	if (t->run && t->root && t->run->temps.root == t->root)
		kiln_temps_set_root(&t->run->temps, NULL);
	if (t->pinned)
		kiln_beneath_unpin(t->root);
	kiln_ledger_free(&t->ledger);
	free(t->done);
	free(t->order);
	free(t->fp);
	for (size_t i = 0; i < KILN_MAX_PREVIOUS; i++)
		kiln_release_free(&t->releases[i]);
	kiln_walk_free(&t->walk);
	free(t->prev_of);
	kiln_state_free(&t->state);
	kiln_parts_seen_free(&t->parts_seen);
	kiln_journal_close(&t->journal, false);
	pthread_mutex_destroy(&t->journal.lock);
	kiln_cache_close(t->cache);
	free(t->manifest_path);
	free(t->index_path);
	free((char *)t->root);
	pthread_mutex_destroy(&t->cb_lock);
}

void kiln_tree_settled(struct kiln_tree *t, size_t k, const struct kiln_report *r)
{
	struct kiln_done d = { (uint8_t)r->outcome, 0 };

	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (r->coding[c].outcome == KILN_CODING_KEPT)
			d.kept |= (uint8_t)(1u << c);
	if (t->done)
		t->done[k] = d;
	kiln_tree_report(t, r);
}

void kiln_tree_report(struct kiln_tree *t, const struct kiln_report *r)
{
	if (!t->cb->on_file)
		return;
	pthread_mutex_lock(&t->cb_lock);
	t->cb->on_file(t->cb->user, r);
	pthread_mutex_unlock(&t->cb_lock);
}

void kiln_tree_event(struct kiln_tree *t, kiln_event ev, const char *path, int coding,
		     const struct kiln_error *err)
{
	if (!t->cb->on_event)
		return;
	pthread_mutex_lock(&t->cb_lock);
	t->cb->on_event(t->cb->user, ev, path, coding, err);
	pthread_mutex_unlock(&t->cb_lock);
}

void kiln_tree_artifact(struct kiln_tree *t, const char *what, const char *path,
			const struct kiln_error *err)
{
	if (!t->cb->on_artifact)
		return;
	pthread_mutex_lock(&t->cb_lock);
	t->cb->on_artifact(t->cb->user, what, path, err);
	pthread_mutex_unlock(&t->cb_lock);
}

void kiln_tree_progress(struct kiln_tree *t, uint64_t *credited, uint64_t size, uint64_t files,
			uint64_t bytes)
{
	if (bytes > size - *credited)
		bytes = size - *credited;
	*credited += bytes;
	if (!t->cb->on_progress || (!files && !bytes))
		return;
	pthread_mutex_lock(&t->cb_lock);
	t->cb->on_progress(t->cb->user, files, bytes);
	pthread_mutex_unlock(&t->cb_lock);
}

void kiln_tree_root_error(struct kiln_tree *t, const struct kiln_error *err)
{
	struct kiln_report r = { .root = t->root, .path = "", .outcome = KILN_OUTCOME_ERROR };

	r.error = *err;
	kiln_tree_report(t, &r);
}

void kiln_tree_path_error(struct kiln_tree *t, const char *path, const struct kiln_error *err)
{
	struct kiln_report r = { .root = path, .path = "", .outcome = KILN_OUTCOME_ERROR };

	r.error = *err;
	r.error.suffix = "";
	kiln_tree_report(t, &r);
}

void kiln_report_fail(struct kiln_report *r, kiln_status st, int errnum, const char *what,
		      const char *suffix)
{
	r->outcome = KILN_OUTCOME_ERROR;
	kiln_fail(&r->error, st, errnum, what);
	r->error.suffix = suffix;
}

