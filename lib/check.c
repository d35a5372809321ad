/*
 * check.c - `kiln check`: does the tree on disk match its manifest?
 *
 * Writes nothing.  The manifest is the claim ("these assets, with these
 * digests, have these siblings"); check tests the claim against the disk
 * in both directions: every asset and sibling on disk must be recorded,
 * every record must be on disk, and every recorded sibling must decode (with
 * the independent decoders) to the source as it is now.  A sibling that
 * decodes to an older version of its source is exactly what a server would
 * send stale, so this is the test a CI gate wants.
 */
#include "run.h"

#include "beneath.h"
#include "classify.h"
#include "codec.h"
#include "index.h"
#include "lock.h"
#include "outputs.h"
#include "shard.h"
#include "sibling.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One problem found, told once the check knows no kiln changed the tree
 * while it looked (lock.h). */
struct found {
	kiln_event ev;
	char *path, *detail;
	int coding;
};

struct check {
	struct kiln_tree *t;
	uint64_t problems;
	bool io_failed, busy;
	struct found *found;
	size_t nfound, cap;
	/* the tree's top and its manifest as the check began (a run that
	 * starts and ends while the check reads changes one of them: it
	 * writes its journal at the top and renames its manifest into place) */
	struct stat top0, man0;
	bool has_top0, has_man0;
	/* the record came from the manifest's index: a file that matches its
	 * stamp is not read (index.h), unless opt.reread */
	bool quick;
};

/* The trace a run leaves that the check can see after it: has the top
 * directory or the manifest changed since the check began? */
static bool changed_since(const struct check *k)
{
	struct stat top, man;
	bool has_top = stat(k->t->root, &top) == 0, has_man = stat(k->t->manifest_path, &man) == 0;

	if (has_top != k->has_top0 || has_man != k->has_man0)
		return true;
	if (has_top && (top.st_mtim.tv_sec != k->top0.st_mtim.tv_sec ||
			top.st_mtim.tv_nsec != k->top0.st_mtim.tv_nsec ||
			top.st_ctim.tv_sec != k->top0.st_ctim.tv_sec ||
			top.st_ctim.tv_nsec != k->top0.st_ctim.tv_nsec))
		return true;
	return has_man && (man.st_ino != k->man0.st_ino || man.st_dev != k->man0.st_dev ||
			   man.st_ctim.tv_sec != k->man0.st_ctim.tv_sec ||
			   man.st_ctim.tv_nsec != k->man0.st_ctim.tv_nsec);
}

static void problem(struct check *k, kiln_event ev, const char *path, int coding,
		    const char *detail)
{
	struct kiln_error err = { KILN_OK, 0, detail, "" };
	struct found *f;

	k->problems++;
	if (k->nfound == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		struct found *v = realloc(k->found, cap * sizeof(*v));
		if (v) {
			k->found = v;
			k->cap = cap;
		}
	}
	if (k->nfound < k->cap) {
		f = &k->found[k->nfound];
		f->ev = ev;
		f->coding = coding;
		f->path = strdup(path);
		f->detail = detail ? strdup(detail) : NULL;
		if (f->path && (f->detail || !detail)) {
			k->nfound++;
			return;
		}
		free(f->path);
		free(f->detail);
	}
	kiln_tree_event(k->t, ev, path, coding, detail ? &err : NULL); /* no memory to wait */
}

/* Tell the problems found, or, when another kiln is changing the tree (or
 * was as the check began: BEFORE its pid, -1 if none), that instead. */
static void tell(struct check *k, long before)
{
	long now = kiln_lock_holder(k->t->root);

	if (before >= 0 || now >= 0 || (k->problems && changed_since(k))) {
		static __thread char text[160];
		struct kiln_error err = { KILN_ERR_BUSY, 0, text, "" };
		long pid = now > 0 ? now : before;

		if (pid > 0)
			snprintf(text, sizeof(text),
				 "another kiln (pid %ld) is changing this tree: checked nothing; "
				 "check again once it is done", pid);
		else if (before < 0 && now < 0)
			snprintf(text, sizeof(text), "the tree changed while it was checked (a run "
						     "began and ended meanwhile?): checked nothing; "
						     "check again");
		else
			snprintf(text, sizeof(text), "another kiln is changing this tree: checked "
						     "nothing; check again once it is done");
		kiln_tree_event(k->t, KILN_EVENT_IN_PROGRESS, k->t->root, -1, &err);
		k->problems = 0;
		k->busy = true;
	} else {
		for (size_t i = 0; i < k->nfound; i++) {
			struct found *f = &k->found[i];
			struct kiln_error err = { KILN_OK, 0, f->detail, "" };
			kiln_tree_event(k->t, f->ev, f->path, f->coding, f->detail ? &err : NULL);
		}
	}
	for (size_t i = 0; i < k->nfound; i++) {
		free(k->found[i].path);
		free(k->found[i].detail);
	}
	free(k->found);
	k->found = NULL;
	k->nfound = k->cap = 0;
}

/* Shard parts beside the manifest (shard.h) are runs the manifest does not
 * record yet: each is a problem until merged, and one kiln cannot read or
 * parse an error.  false when out of memory. */
static bool check_parts(struct check *k)
{
	struct kiln_state st = { 0 };
	struct kiln_parts_seen seen = { 0 };
	struct kiln_error err;
	char *bad = NULL;
	bool ok = kiln_parts_merge(k->t->manifest_path, &st, &seen, &bad, &err) == KILN_OK;

	if (ok && bad) {
		kiln_tree_path_error(k->t, bad, &err);
		k->io_failed = true;
	}
	for (size_t i = 0; ok && i < seen.n; i++)
		problem(k, KILN_EVENT_OUT_OF_DATE, seen.v[i].path, -1,
			"a shard part not merged yet (run kiln merge)");
	free(bad);
	kiln_parts_seen_free(&seen);
	kiln_state_free(&st);
	return ok;
}

static void io_error(struct check *k, const char *rel, const struct kiln_error *err)
{
	struct kiln_report r = { .root = k->t->root, .path = rel, .outcome = KILN_OUTCOME_ERROR };

	r.error = *err;
	kiln_tree_report(k->t, &r);
	k->io_failed = true;
}

/* Which of a sibling's mtime and permission bits are not its source's
 * (nginx would send another Last-Modified for each coding), or NULL. */
static const char *metadata_differs(const struct stat *sib, const struct stat *src)
{
	bool mtime = sib->st_mtim.tv_sec != src->st_mtim.tv_sec ||
		     sib->st_mtim.tv_nsec != src->st_mtim.tv_nsec;
	bool mode = (sib->st_mode & 0777) != (src->st_mode & 0777);

	return mtime && mode ? "mtime and mode differ from its source's"
	       : mtime	     ? "mtime differs from its source's"
	       : mode	     ? "mode differs from its source's"
			     : NULL;
}

/* A sibling no record holds, at PATH: stale if it does not decode to its
 * source (the walk entry named like it without the suffix), which a
 * server would send. */
static void check_unrecorded(struct check *k, const struct kiln_entry *e, const char *path)
{
	const char *base = strrchr(e->rel, '/');
	kiln_coding c = kiln_sibling_coding(base ? base + 1 : e->rel);
	size_t n = strlen(path) - (c >= 0 ? strlen(kiln_codecs[c]->info.suffix) : 0);
	char *src = c >= 0 && S_ISREG(e->st.st_mode) ? strndup(path, n) : NULL;
	int fd = src ? kiln_beneath_open(k->t->root, src, O_RDONLY | O_NONBLOCK, 0) : -1;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    kiln_sibling_decodes(k->t->root, path, c, fd, (uint64_t)st.st_size) != 1)
		problem(k, KILN_EVENT_STALE_SIBLING, path, (int)c,
			"not written by kiln, and a server would send it: delete it");
	else
		problem(k, KILN_EVENT_UNRECORDED_SIBLING, path, -1, NULL);
	if (fd >= 0)
		close(fd);
	free(src);
}

/* The dictionary deltas REC records, against the disk: each must hold the
 * recorded bytes (its dictionary is not at hand to decode it: the digest
 * is what kiln wrote for this content, and the header names the
 * dictionary) with its source's metadata (SRC).  PATH names the asset. */
static void check_deltas(struct check *k, const struct kiln_record *rec, const char *path,
			 const struct stat *src)
{
	for (size_t i = 0; i < rec->ndicts; i++) {
		const struct kiln_dict_record *d = &rec->dicts[i];
		char *sib = kiln_dict_sibling_path(k->t->root, rec->rel, d->dict_sha256);
		int fd = sib ? kiln_beneath_open(k->t->root, sib, O_RDONLY | O_NONBLOCK, 0) : -1;
		uint8_t sha[32], sha384[48], head[64];
		struct kiln_error err;
		struct stat st;
		ssize_t nhead;

		if (fd < 0) {
			problem(k, KILN_EVENT_MISSING_SIBLING, sib ? sib : path, -1, NULL);
		} else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
			   (uint64_t)st.st_size != d->size ||
			   kiln_source_hash(fd, &st, sha, sha384, &err) != KILN_OK ||
			   memcmp(sha, d->sha256, 32) != 0 ||
			   (nhead = kiln_source_head(fd, head, sizeof(head))) < 0 ||
			   !kiln_codec_dcz.names_dictionary(head, (size_t)nhead, d->dict_sha256)) {
			problem(k, KILN_EVENT_STALE_SIBLING, sib, -1,
				"not the dictionary delta kiln wrote for this content");
		} else if (metadata_differs(&st, src)) {
			problem(k, KILN_EVENT_SIBLING_METADATA, sib, -1, metadata_differs(&st, src));
		}
		if (fd >= 0)
			close(fd);
		free(sib);
	}
}

/* Are E, recorded as PE, and its siblings as their stamps say (index.h):
 * its bytes the recorded ones, each kept sibling what kiln wrote for
 * them?  Then they need not be read. */
static bool proven(const struct check *k, const struct kiln_entry *e,
		   const struct kiln_prev_entry *pe)
{
	const struct kiln_walk *w = &k->t->walk;

	if (!k->quick || !pe || !pe->in_manifest || pe->rec.ndicts ||
	    !kiln_index_matches(&pe->rec, &e->st, -1))
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (pe->rec.coding[c].outcome == KILN_CODING_KEPT &&
		    (!e->sib[c] || e->sib[c] == KILN_SIB_NOT_ENTRY ||
		     !kiln_index_matches(&pe->rec, &w->v[e->sib[c] - 1].st, (int)c)))
			return false;
	return true;
}

/* The checks of an asset proven unchanged: only its siblings' mode and
 * mtime, from the walk, may be wrong. */
static void check_proven(struct check *k, const struct kiln_entry *e,
			 const struct kiln_prev_entry *pe, const char *path)
{
	struct stat src = { .st_mode = e->st.st_mode, .st_mtim = e->st.st_mtim };

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_stat *s;
		struct stat sib;
		if (pe->rec.coding[c].outcome != KILN_CODING_KEPT)
			continue;
		s = &k->t->walk.v[e->sib[c] - 1].st;
		sib = (struct stat){ .st_mode = s->st_mode, .st_mtim = s->st_mtim };
		if (metadata_differs(&sib, &src))
			problem(k, KILN_EVENT_SIBLING_METADATA, path, (int)c,
				metadata_differs(&sib, &src));
	}
}

/* One asset on disk against its record. */
static void check_asset(struct check *k, const struct kiln_entry *e)
{
	struct kiln_tree *t = k->t;
	struct kiln_prev_entry *pe = kiln_state_find(&t->state, e->rel);
	char *path = kiln_path_join(t->root, e->rel, "");
	uint8_t sha[32], sha384[48];
	struct kiln_error err = { 0 };
	struct stat st;
	int fd = -1;

	if (!path)
		return;
	if (pe)
		pe->seen = true; /* present, even if it cannot be read */
	if (proven(k, e, pe)) {
		check_proven(k, e, pe, path);
		free(path);
		return;
	}
	fd = kiln_source_open(k->t->root, path, e->via_link, &e->st, &st, &err);
	if (fd < 0 || kiln_source_hash(fd, &st, sha, sha384, &err) != KILN_OK) {
		io_error(k, e->rel, &err);
		goto out;
	}
	if (!pe || !pe->in_manifest) {
		problem(k, KILN_EVENT_OUT_OF_DATE, path, -1, "not in the manifest");
		goto out;
	}
	if (pe->rec.size != (uint64_t)st.st_size || memcmp(pe->rec.sha256, sha, 32) != 0)
		problem(k, KILN_EVENT_OUT_OF_DATE, path, -1, "changed since the manifest");
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		char *sib = kiln_path_join(t->root, e->rel, kiln_codecs[c]->info.suffix);
		struct stat sst;
		bool exists = sib && kiln_beneath_lstat(t->root, sib, &sst) == 0;

		if (pe->rec.coding[c].outcome != KILN_CODING_KEPT) {
			free(sib);
			continue;
		}
		if (!exists)
			problem(k, KILN_EVENT_MISSING_SIBLING, path, (int)c, NULL);
		else if (kiln_sibling_decodes(k->t->root, sib, (kiln_coding)c, fd, (uint64_t)st.st_size) != 1)
			problem(k, KILN_EVENT_STALE_SIBLING, path, (int)c, NULL);
		else if (metadata_differs(&sst, &st))
			problem(k, KILN_EVENT_SIBLING_METADATA, path, (int)c,
				metadata_differs(&sst, &st));
		free(sib);
	}
	check_deltas(k, &pe->rec, path, &st);
out:
	if (fd >= 0)
		close(fd);
	free(path);
}

/* One walk entry. */
static void check_entry(struct check *k, const struct kiln_entry *e, const struct stat *own,
			size_t nown)
{
	struct kiln_tree *t = k->t;
	const char *base = strrchr(e->rel, '/');
	char *path;

	base = base ? base + 1 : e->rel;
	switch (e->outcome) {
	case KILN_OUTCOME_ERROR:
		io_error(k, e->rel, &e->err);
		break;
	case KILN_OUTCOME_SIBLING:
		if (nown && own->st_ino == e->st.st_ino && own->st_dev == e->st.st_dev)
			break;
		if (kiln_is_journal_name(base) || kiln_is_temp_name(base)) {
			if ((path = kiln_path_join(t->root, e->rel, "")))
				problem(k, KILN_EVENT_OUT_OF_DATE, path, -1,
					"left by an interrupted run: run kiln again");
			free(path);
			break;
		}
		if (kiln_is_own_output(base) || kiln_state_records_sibling(&t->state, e->rel))
			break;
		if ((path = kiln_path_join(t->root, e->rel, "")))
			check_unrecorded(k, e, path);
		free(path);
		break;
	case KILN_OUTCOME_CANDIDATE:
		/* "X.gz" whose X is recorded but gone is an orphan, not an asset */
		if (!kiln_state_find(&t->state, e->rel) &&
		    kiln_state_records_sibling(&t->state, e->rel))
			break;
		check_asset(k, e);
		break;
	default: /* symlinks and special files are not assets */
		break;
	}
}

/* Records whose asset is gone, and stale siblings still on disk. */
static void check_leftovers(struct check *k)
{
	struct kiln_tree *t = k->t;

	for (size_t i = 0; i < t->state.n; i++) {
		const struct kiln_prev_entry *pe = &t->state.v[i];
		char *path;
		if (pe->seen || !pe->in_manifest || !(path = kiln_path_join(t->root, pe->rec.rel, "")))
			continue;
		problem(k, KILN_EVENT_OUT_OF_DATE, path, -1, "in the manifest, not in the tree");
		for (unsigned c = 0; c < kiln_ncodecs; c++) {
			char *sib = kiln_path_join(t->root, pe->rec.rel, kiln_codecs[c]->info.suffix);
			struct stat st;
			if (pe->rec.coding[c].outcome == KILN_CODING_KEPT && sib &&
			    kiln_beneath_lstat(t->root, sib, &st) == 0)
				problem(k, KILN_EVENT_ORPHANED_SIBLING, sib, (int)c, NULL);
			free(sib);
		}
		for (size_t d = 0; d < pe->rec.ndicts; d++) {
			char *sib = kiln_dict_sibling_path(t->root, pe->rec.rel,
							   pe->rec.dicts[d].dict_sha256);
			struct stat st;
			if (sib && kiln_beneath_lstat(t->root, sib, &st) == 0)
				problem(k, KILN_EVENT_ORPHANED_SIBLING, sib, -1, NULL);
			free(sib);
		}
		free(path);
	}
	for (size_t i = 0; i < t->state.nstale; i++) {
		char *sib = kiln_path_join(t->root, t->state.stale[i].rel, "");
		struct stat st;
		if (sib && kiln_beneath_lstat(t->root, sib, &st) == 0)
			problem(k, KILN_EVENT_STALE_SIBLING, sib, (int)t->state.stale[i].coding,
				"kiln could not remove it: run kiln again");
		free(sib);
	}
}

/* The record from the manifest's index, when it is the manifest's
 * (index.h); false: read the manifest. */
static bool load_index(struct check *k)
{
	struct kiln_tree *t = k->t;
	struct stat top;
	uint8_t digest[32];
	char *path;
	bool got;

	if (t->opt->reread || stat(t->root, &top) != 0 ||
	    !(path = kiln_index_path(t->manifest_path)))
		return false;
	got = kiln_index_load(path, t->manifest_path, &top, &t->state, digest);
	free(path);
	k->quick = got && kiln_index_local(t->root);
	return got;
}

kiln_status kiln_check_tree(struct kiln_run *run, const char *root, uint64_t *problems)
{
	struct kiln_options opt = run->opt;
	struct kiln_tree t;
	struct check k = { .t = &t };
	struct kiln_error err = { 0 };
	struct stat own;
	size_t nown = 0;
	kiln_status ret;
	long before = -1;

	*problems = 0;
	if ((ret = kiln_tree_begin(&t, run, root, &run->cb)) != KILN_OK)
		goto out;
	before = kiln_lock_holder(t.root);
	k.has_top0 = stat(t.root, &k.top0) == 0;
	k.has_man0 = stat(t.manifest_path, &k.man0) == 0;
	if (stat(t.manifest_path, &own) == 0)
		nown = 1;
	opt.n_include = opt.n_exclude = 0; /* every file is an asset of the manifest */
	ret = kiln_walk(t.root, &opt, &own, nown, &t.walk, &err);
	if (ret != KILN_OK) {
		if (ret == KILN_ERR_IO)
			kiln_tree_root_error(&t, &err);
		goto out;
	}
	if (!check_parts(&k)) {
		ret = KILN_ERR_NOMEM;
		goto out;
	}
	if (!load_index(&k) &&
	    (kiln_state_load(t.manifest_path, &t.state, &err) != KILN_OK || !t.state.loaded)) {
		problem(&k, KILN_EVENT_NO_MANIFEST, t.manifest_path, -1, err.what);
		goto out;
	}
	if (kiln_outputs_manifest_owner(&t, &t.state, &err) != KILN_OK) {
		problem(&k, KILN_EVENT_OTHER_TREE, t.manifest_path, -1, err.what);
		goto out;
	}
	for (size_t i = 0; i < t.walk.n; i++)
		check_entry(&k, &t.walk.v[i], &own, nown);
	check_leftovers(&k);
	ret = k.io_failed ? KILN_ERR_IO : KILN_OK;
out:
	if (t.root)
		tell(&k, before);
	if (k.busy && (ret == KILN_OK || ret == KILN_ERR_IO))
		ret = KILN_ERR_BUSY;
	*problems = k.problems;
	kiln_tree_end(&t);
	return ret;
}
