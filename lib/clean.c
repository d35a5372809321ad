/*
 * clean.c - `kiln clean`: take back exactly what kiln wrote.
 *
 * The record (manifest, journals of dead runs, stale siblings) says which
 * siblings kiln wrote and what their bytes were; a sibling is removed only
 * while it still has those bytes, so a file someone else put at that name
 * survives (and is pointed out, as is any file named like a sibling that
 * the record does not hold).  The snippet is removed only if it is one kiln generated (its
 * first line says so), the manifest last, so an interrupted clean can be run
 * again.  Dictionary deltas are the exception: their names are kiln's
 * (dict.h), so every file named like one goes.
 */
#include "run.h"

#include "beneath.h"
#include "error.h"
#include "classify.h"
#include "codec.h"
#include "index.h"
#include "lock.h"
#include "outputs.h"
#include "server.h"
#include "previous.h"
#include "sibling.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove the file at PATH, reporting it; false if that failed.  A file
 * already gone is fine. */
static bool remove_file(struct kiln_tree *t, const char *path, uint64_t *removed)
{
	struct kiln_error err = { KILN_ERR_IO, 0, "cannot remove", "" };

	struct stat st;

	if (t->opt->dry_run ? kiln_beneath_lstat(t->root, path, &st) != 0 && errno == ENOENT
			    : kiln_sibling_remove(t->root, path) != 0) {
		if (errno == ENOENT)
			return true; /* nothing there: nothing to count */
		err.errnum = errno;
		kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, path, -1, &err);
		return false;
	}
	(*removed)++;
	kiln_tree_event(t, KILN_EVENT_REMOVED, path, -1, NULL);
	return true;
}

/* Every sibling the record holds. */
static void remove_siblings(struct kiln_tree *t, uint64_t *removed)
{
	for (size_t i = 0; i < t->state.n; i++)
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (kiln_state_has_sibling(&t->state.v[i], (kiln_coding)c) &&
			    kiln_prev_remove_recorded(t, &t->state.v[i], (kiln_coding)c))
				(*removed)++;
	for (size_t i = 0; i < t->state.nstale; i++)
		if (kiln_prev_remove_stale(t, &t->state.stale[i]))
			(*removed)++;
}

/*
 * E, named like a sibling of a file the walk found, is not one the record
 * holds: someone else wrote it, and clean leaves it.  Say so, since the
 * user asked for the tree as it was before kiln: a warning if it decodes to
 * its source, and a failure if it does not (a server would send it).
 */
static void point_out_unrecorded(struct kiln_tree *t, const struct kiln_entry *e)
{
	const char *base = strrchr(e->rel, '/');
	kiln_coding c = kiln_sibling_coding(base ? base + 1 : e->rel);
	char *src_rel = NULL, *src = NULL;
	struct stat st;
	bool decodes;
	int fd = -1;

	if (c < 0 || !S_ISREG(e->st.st_mode) || kiln_state_records_sibling(&t->state, e->rel))
		return;
	src_rel = strndup(e->rel, strlen(e->rel) - strlen(kiln_codecs[c]->info.suffix));
	src = src_rel ? kiln_path_join(t->root, src_rel, "") : NULL;
	if (!src || (fd = kiln_beneath_open(t->root, src, O_RDONLY | O_NONBLOCK, 0)) < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out; /* no source beside it: not a sibling of anything */
	if (kiln_prev_foreign_at(t, NULL, src_rel, c, fd, (uint64_t)st.st_size, &decodes)) {
		char *sib = kiln_path_join(t->root, e->rel, "");
		if (!decodes)
			kiln_ledger_foreign_stale(&t->ledger);
		if (sib)
			kiln_tree_event(t, decodes ? KILN_EVENT_FOREIGN : KILN_EVENT_FOREIGN_STALE,
					sib, (int)c, NULL);
		free(sib);
	}
out:
	if (fd >= 0)
		close(fd);
	free(src);
	free(src_rel);
}

/* A file named like a dictionary delta: kiln's, whoever wrote it (dict.h),
 * so removed; one that is not a regular file is pointed out, as a server
 * would follow it. */
static void remove_delta(struct kiln_tree *t, const struct kiln_entry *e, uint64_t *removed)
{
	char *path = kiln_path_join(t->root, e->rel, "");

	if (!path)
		return;
	if (!S_ISREG(e->st.st_mode)) {
		kiln_ledger_foreign_stale(&t->ledger);
		kiln_tree_event(t, KILN_EVENT_FOREIGN_STALE, path, -1, NULL);
	} else if (!remove_file(t, path, removed)) {
		kiln_ledger_remove_failed(&t->ledger);
	}
	free(path);
}

/* Temporary files and journals of dead runs, anywhere in the tree; and
 * siblings kiln did not write, pointed out. */
static void remove_leftovers(struct kiln_tree *t, uint64_t *removed)
{
	struct kiln_options opt = *t->opt;
	struct kiln_error err;

	opt.n_include = opt.n_exclude = 0;
	if (kiln_walk(t->root, &opt, NULL, 0, &t->walk, &err) != KILN_OK)
		return;
	for (size_t i = 0; i < t->walk.n; i++) {
		const char *base = strrchr(t->walk.v[i].rel, '/');
		char *path;
		base = base ? base + 1 : t->walk.v[i].rel;
		if (kiln_dict_sibling_base_len(base)) {
			remove_delta(t, &t->walk.v[i], removed);
			continue;
		}
		if (!kiln_is_temp_name(base) && !kiln_is_journal_name(base)) {
			point_out_unrecorded(t, &t->walk.v[i]);
			continue;
		}
		path = kiln_path_join(t->root, t->walk.v[i].rel, "");
		if (path && kiln_temp_is_stale(t->root, path))
			remove_file(t, path, removed);
		free(path);
	}
}

kiln_status kiln_clean_tree(struct kiln_run *run, const char *root, uint64_t *removed)
{
	struct kiln_tree t;
	struct kiln_error err = { 0 };
	char *snippet = NULL, *bad = NULL, *index = NULL;
	uint8_t digest[32];
	struct stat top_st;
	kiln_status ret;

	*removed = 0;
	if ((ret = kiln_tree_begin(&t, run, root, &run->cb)) != KILN_OK)
		goto out;
	{
		/* a DIR that is not there (a typo in CI) is an error, not an
		 * empty record */
		int top = kiln_beneath_top(t.root);
		if (top < 0) {
			ret = kiln_fail(&err, KILN_ERR_IO, errno, "cannot open directory");
			kiln_tree_root_error(&t, &err);
			goto out;
		}
		close(top);
	}
	if (!run->opt.dry_run && (ret = kiln_lock_take(&t, &err)) != KILN_OK) {
		kiln_tree_root_error(&t, &err);
		goto out;
	}
	if (run->opt.dry_run)
		kiln_lock_note_dry_run(&t);
	if (!(index = kiln_index_path(t.manifest_path))) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	/* the record from the index when it is the manifest's: its stamps
	 * prove siblings kiln's without reading them (previous.c) */
	if ((stat(t.root, &top_st) != 0 ||
	     !kiln_index_load(index, t.manifest_path, &top_st, &t.state, digest)) &&
	    kiln_state_load(t.manifest_path, &t.state, &err) != KILN_OK) {
		kiln_tree_event(&t, KILN_EVENT_NO_MANIFEST, t.manifest_path, -1, &err);
		ret = KILN_ERR_IO;
		goto out;
	}
	if (kiln_outputs_manifest_owner(&t, &t.state, &err) != KILN_OK) {
		kiln_tree_event(&t, KILN_EVENT_OTHER_TREE, t.manifest_path, -1, &err);
		ret = KILN_ERR_IO;
		goto out;
	}
	kiln_journal_merge(t.root, &t.state); /* interrupted runs' siblings */
	/* shard runs' siblings, not merged yet: a part kiln cannot read leaves
	 * siblings it cannot tell from someone else's, so nothing is removed
	 * (as for a manifest it cannot read) */
	if (kiln_parts_merge(t.manifest_path, &t.state, &t.parts_seen, &bad, &err) != KILN_OK) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (bad) {
		kiln_tree_path_error(&t, bad, &err);
		ret = KILN_ERR_IO;
		goto out;
	}
	if (!t.state.loaded && t.parts_seen.n == 0) {
		kiln_tree_event(&t, KILN_EVENT_NO_MANIFEST, t.manifest_path, -1, NULL);
		goto out;
	}
	remove_siblings(&t, removed);
	remove_leftovers(&t, removed);
	/* every server's snippet files that kiln wrote, chosen or not, at
	 * the tree's top, where --nginx-conf puts them and in --artifacts'
	 * directory (once when two are the same place: a dry run would count
	 * it twice) */
	for (unsigned sv = 0; sv < kiln_nservers; sv++)
		for (unsigned f = 0; kiln_servers[sv]->files[f].name; f++) {
			const char *name = kiln_servers[sv]->files[f].name;
			char *top = kiln_path_join(t.root, name, "");
			char *art = run->opt.artifacts_dir ? kiln_path_join(run->opt.artifacts_dir, name, "")
							   : NULL;
			snippet = kiln_server_file_path(&run->opt, t.root, sv, f);
			if (top && kiln_is_kiln_snippet(top) && !remove_file(&t, top, removed))
				ret = KILN_ERR_IO;
			if (snippet && (!top || strcmp(snippet, top) != 0) && kiln_is_kiln_snippet(snippet) &&
			    !remove_file(&t, snippet, removed))
				ret = KILN_ERR_IO;
			if (art && (!top || strcmp(art, top) != 0) && (!snippet || strcmp(art, snippet) != 0) &&
			    kiln_is_kiln_snippet(art) && !remove_file(&t, art, removed))
				ret = KILN_ERR_IO;
			free(top);
			free(art);
			free(snippet);
			snippet = NULL;
		}
	if (kiln_ledger_had_remove_failed(&t.ledger) || ret != KILN_OK)
		ret = KILN_ERR_IO; /* keep the manifest: it still records what is left */
	else if ((kiln_index_is_kilns(index) && !remove_file(&t, index, removed)) ||
		 !remove_file(&t, t.manifest_path, removed))
		ret = KILN_ERR_IO;
	for (size_t i = 0; ret == KILN_OK && i < t.parts_seen.n; i++)
		if (!remove_file(&t, t.parts_seen.v[i].path, removed))
			ret = KILN_ERR_IO;
	if (kiln_ledger_had_foreign_stale(&t.ledger))
		ret = KILN_ERR_IO; /* a stale sibling of someone else's is still served */
out:
	free(snippet);
	free(bad);
	free(index);
	kiln_lock_drop(&t);
	kiln_tree_end(&t);
	return ret;
}
