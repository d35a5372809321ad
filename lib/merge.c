/*
 * merge.c - `kiln merge`: the parts of N shard runs made into the manifest
 * and snippet one run of the whole tree would have written, or nothing.
 *
 * A merge trusts no part: it may come from another run, another machine's
 * tree, or an artifact transfer that lost a file.  So everything is checked
 * before anything is written: the parts (all N of one N, each saying it is
 * the shard its name says), their settings and generator (the same in all,
 * and the ones this kiln writes: otherwise the manifest would not be the one
 * run's), their records (each in its own shard, none twice), and the tree
 * (every file a run would record is recorded, with its current content;
 * every recorded sibling is there, with its recorded bytes).  Only then are
 * the siblings given their sources' mode and mtime, and the artifacts
 * written by the very function a tree run uses (artifacts.h), from the records
 * the parts hold: whatever a run writes, a merge writes the same.
 */
#include "run.h"

#include "artifacts.h"

#include "beneath.h"
#include "classify.h"
#include "codec.h"
#include "journal.h"
#include "lock.h"
#include "manifest.h"
#include "outputs.h"
#include "shard.h"
#include "sibling.h"
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct part {
	unsigned k, n;
	char *name;            /* its file name */
	char *path;
	struct kiln_state st;
};

/* One record of one part, and the walk entry of its file. */
struct slot {
	const struct kiln_record *rec;
	unsigned k;
	size_t entry;          /* index into the walk, or SIZE_MAX */
};

struct merger {
	struct kiln_tree *t;
	char *dir;             /* where the parts are */
	struct part *parts;
	size_t nparts;
	unsigned n;
	struct kiln_options opt; /* the parts' settings, the run's artifacts */
	char **globs;
	size_t nglobs;
	struct slot *slots;
	size_t nslots;
	struct kiln_walk walk;
	struct kiln_state known; /* every part's siblings, as journaled */
	bool failed, io;
};

/* Report a problem with PATH (relative to ROOT); WHAT is printf-style. */
__attribute__((format(printf, 4, 5)))
static void problem(struct merger *m, const char *root, const char *path, const char *fmt, ...)
{
	struct kiln_report r = { .root = root, .path = path, .outcome = KILN_OUTCOME_ERROR };
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r.error = (struct kiln_error){ KILN_ERR_INVALID, 0, what, "" };
	m->failed = true;
	kiln_tree_report(m->t, &r);
}

static int by_shard(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* List the parts beside the manifest, sorted by N then K. */
static kiln_status find_parts(struct merger *m)
{
	DIR *d = opendir(m->dir);
	struct dirent *e;

	if (!d) {
		problem(m, m->dir, "", "cannot read the directory of the parts: %s", strerror(errno));
		m->io = true;
		return KILN_ERR_IO;
	}
	while ((e = readdir(d)) != NULL) {
		unsigned k, n;
		struct part *v;
		if (!kiln_part_of(m->t->manifest_path, e->d_name, &k, &n))
			continue;
		if (!(v = realloc(m->parts, (m->nparts + 1) * sizeof(*v)))) {
			closedir(d);
			return KILN_ERR_NOMEM;
		}
		m->parts = v;
		v = &m->parts[m->nparts];
		memset(v, 0, sizeof(*v));
		v->k = k;
		v->n = n;
		v->name = strdup(e->d_name);
		v->path = kiln_path_join(m->dir, e->d_name, "");
		m->nparts++;
		if (!v->name || !v->path) {
			closedir(d);
			return KILN_ERR_NOMEM;
		}
	}
	closedir(d);
	if (m->nparts == 0) {
		problem(m, m->t->manifest_path, "", "no shard parts to merge beside it (kiln "
			"--shard K/N writes them)");
		return KILN_ERR_INVALID;
	}
	qsort(m->parts, m->nparts, sizeof(*m->parts), by_shard);
	/* the N most parts have: the others are what is left of another run */
	for (size_t i = 0, best = 0; i < m->nparts;) {
		size_t j = i;
		while (j < m->nparts && m->parts[j].n == m->parts[i].n)
			j++;
		if (j - i > best) {
			best = j - i;
			m->n = m->parts[i].n;
		}
		i = j;
	}
	return KILN_OK;
}

/* Report that part K of M's N is not there. */
static void missing(struct merger *m, unsigned k)
{
	char *path = kiln_part_path(m->t->manifest_path, k, m->n);

	problem(m, path ? path : m->dir, "", "missing: shard %u of %u did not run, or its part "
		"was not gathered here", k, m->n);
	free(path);
}

/* All N there, of one N, each readable and saying what its name says. */
static kiln_status read_parts(struct merger *m)
{
	unsigned want = 1;

	for (size_t i = 0; i < m->nparts; i++) {
		struct part *p = &m->parts[i];
		struct kiln_error err = { 0 };
		unsigned k, n;
		if (p->n != m->n) {
			problem(m, m->dir, p->name, "a part of %u shards beside parts of %u: "
				"left from another run (remove it, or the others)", p->n, m->n);
			continue;
		}
		for (; want < p->k; want++)
			missing(m, want);
		want = p->k + 1;
		if (kiln_state_load(p->path, &p->st, &err) != KILN_OK || !p->st.loaded) {
			bool io = err.status == KILN_ERR_IO;
			problem(m, m->dir, p->name, "not a part kiln can read%s%s (remove it, then "
				"run that shard again)", io ? ": " : "",
				io ? strerror(err.errnum ? err.errnum : EIO) : "");
			m->io |= io;
			continue;
		}
		if (!kiln_state_shard(&p->st, &k, &n) || k != p->k || n != p->n)
			problem(m, m->dir, p->name, "does not say it is shard %u of %u", p->k, p->n);
	}
	for (; want <= m->n; want++)
		missing(m, want);
	return m->failed ? KILN_ERR_INVALID : KILN_OK;
}

/* The same settings and generator in every part, and the ones this kiln
 * writes with the options they give (with the run's own artifact and
 * serving options: servers, paths, URL prefix, Cache-Control). */
static kiln_status check_settings(struct merger *m)
{
	const struct kiln_state *first = &m->parts[0].st;
	struct kiln_state ours = { 0 };
	char *text = NULL;
	const char *key;
	kiln_status ret;

	for (size_t i = 1; i < m->nparts; i++) {
		const struct kiln_state *st = &m->parts[i].st;
		if ((key = kiln_state_settings_difference(first, st)))
			problem(m, m->dir, m->parts[i].name, "made with other settings than shard "
				"%u's (%s): run every shard with the same options", m->parts[0].k, key);
		else if ((key = kiln_state_generator_difference(first, st)))
			problem(m, m->dir, m->parts[i].name, "made by another kiln or encoder version "
				"than shard %u's (%s)", m->parts[0].k, key);
	}
	if (m->failed)
		return KILN_ERR_INVALID;
	m->opt = *m->t->opt;
	if (!kiln_state_options(first, &m->opt, &m->globs, &m->nglobs)) {
		problem(m, m->dir, m->parts[0].name, "settings this kiln cannot read");
		return KILN_ERR_INVALID;
	}
	if (!(text = kiln_manifest_dump(&m->opt, NULL, 0, NULL, 0, NULL, 0, NULL)))
		return KILN_ERR_NOMEM;
	ret = kiln_state_parse(text, strlen(text), &ours);
	free(text);
	if (ret != KILN_OK) {
		kiln_state_free(&ours);
		return ret == KILN_ERR_NOMEM ? ret : KILN_ERR_INVALID;
	}
	if ((key = kiln_state_generator_difference(first, &ours)))
		problem(m, m->dir, m->parts[0].name, "made by another kiln or encoder version than "
			"this one (%s): merge with the kiln the shards ran", key);
	else if ((key = kiln_state_settings_difference(first, &ours)))
		problem(m, m->dir, m->parts[0].name, "settings this kiln cannot reproduce (%s)", key);
	kiln_state_free(&ours);
	return m->failed ? KILN_ERR_INVALID : KILN_OK;
}

static int by_rel(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = strcmp(x->rec->rel, y->rec->rel);

	return c ? c : x->k < y->k ? -1 : x->k > y->k;
}

/* Every record, each in its own shard and in one part only. */
static kiln_status check_records(struct merger *m)
{
	size_t total = 0;

	for (size_t i = 0; i < m->nparts; i++)
		total += m->parts[i].st.n;
	if (!(m->slots = calloc(total + 1, sizeof(*m->slots))))
		return KILN_ERR_NOMEM;
	for (size_t i = 0; i < m->nparts; i++)
		for (size_t j = 0; j < m->parts[i].st.n; j++) {
			const struct kiln_prev_entry *pe = &m->parts[i].st.v[j];
			if (!pe->in_manifest)
				continue;
			m->slots[m->nslots++] = (struct slot){ &pe->rec, m->parts[i].k, SIZE_MAX };
		}
	qsort(m->slots, m->nslots, sizeof(*m->slots), by_rel);
	for (size_t i = 0; i < m->nslots; i++) {
		const struct slot *s = &m->slots[i];
		unsigned home = kiln_shard_of(s->rec->rel, m->n);
		if (i > 0 && strcmp(m->slots[i - 1].rec->rel, s->rec->rel) == 0)
			problem(m, m->t->root, s->rec->rel, "recorded by the parts of shards %u and %u: "
				"each file belongs to one shard", m->slots[i - 1].k, s->k);
		else if (home != s->k)
			problem(m, m->t->root, s->rec->rel, "recorded by shard %u's part, but it belongs "
				"to shard %u", s->k, home);
	}
	for (size_t i = 0; i < m->nparts; i++)
		for (size_t j = 0; j < m->parts[i].st.nstale; j++) {
			const struct kiln_stale *s = &m->parts[i].st.stale[j];
			size_t n = strlen(s->rel), sl = strlen(kiln_codecs[s->coding]->info.suffix);
			char *src;
			if (n <= sl)
				continue; /* the reader keeps none such */
			if (!(src = strndup(s->rel, n - sl)))
				return KILN_ERR_NOMEM;
			if (kiln_shard_of(src, m->n) != m->parts[i].k)
				problem(m, m->t->root, s->rel, "recorded as stale by shard %u's part, but "
					"its source belongs to shard %u", m->parts[i].k,
					kiln_shard_of(src, m->n));
			free(src);
		}
	return m->failed ? KILN_ERR_INVALID : KILN_OK;
}

static struct slot *find_slot(struct merger *m, const char *rel)
{
	size_t lo = 0, hi = m->nslots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->slots[mid].rec->rel, rel);
		if (c == 0)
			return &m->slots[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One walk entry against the records. */
static kiln_status check_entry(struct merger *m, size_t k)
{
	const struct kiln_entry *e = &m->walk.v[k];
	const char *root = m->t->root;
	struct slot *s;
	uint8_t sha[32];
	uint64_t size;
	char *path;

	if (e->outcome == KILN_OUTCOME_ERROR) {
		problem(m, root, e->rel, "%s%s%s: a merge needs the whole tree", e->err.what,
			e->err.errnum ? ": " : "", e->err.errnum ? strerror(e->err.errnum) : "");
		m->io = true;
		return KILN_OK;
	}
	if (e->outcome != KILN_OUTCOME_CANDIDATE && e->outcome != KILN_OUTCOME_EXCLUDED)
		return KILN_OK;
	if (e->outcome == KILN_OUTCOME_EXCLUDED && !S_ISREG(e->st.st_mode))
		return KILN_OK; /* an excluded link or special file: no part records it */
	if (!(s = find_slot(m, e->rel))) {
		/* a sibling some part records (its source gone) is no asset */
		if (!kiln_state_records_sibling(&m->known, e->rel))
			problem(m, root, e->rel, "in the tree but in no part: shard %u's tree did "
				"not have it", kiln_shard_of(e->rel, m->n));
		return KILN_OK;
	}
	s->entry = k;
	if (!(path = kiln_path_join(root, e->rel, "")))
		return KILN_ERR_NOMEM;
	if (kiln_file_digest(path, e->via_link, &size, sha) != KILN_OK) {
		problem(m, root, e->rel, "cannot read it to compare it with shard %u's record: %s",
			s->k, strerror(errno ? errno : EIO));
		m->io = true;
	} else if (size != s->rec->size || memcmp(sha, s->rec->sha256, 32) != 0) {
		problem(m, root, e->rel, "not the file shard %u encoded: it changed since, or the "
			"shards' trees differ", s->k);
	}
	free(path);
	return KILN_OK;
}

/* Every record's file is in the tree, and its siblings are there, intact. */
static kiln_status check_siblings(struct merger *m)
{
	for (size_t i = 0; i < m->nslots; i++) {
		const struct slot *s = &m->slots[i];
		if (s->entry == SIZE_MAX) {
			problem(m, m->t->root, s->rec->rel, "recorded by shard %u's part, but not in "
				"the tree", s->k);
			continue;
		}
		for (unsigned c = 0; c < kiln_ncodecs; c++) {
			const char *suffix = kiln_codecs[c]->info.suffix;
			char *sib, *rel;
			uint8_t sha[32];
			uint64_t size;
			bool good;
			if (s->rec->coding[c].outcome != KILN_CODING_KEPT)
				continue;
			if (!(sib = kiln_path_join(m->t->root, s->rec->rel, suffix)))
				return KILN_ERR_NOMEM;
			good = kiln_file_digest_beneath(m->t->root, sib, &size, sha) == KILN_OK &&
			       size == s->rec->coding[c].size &&
			       memcmp(sha, s->rec->coding[c].sha256, 32) == 0;
			free(sib);
			if (good)
				continue;
			if (!(rel = kiln_path_join("", s->rec->rel, suffix)))
				return KILN_ERR_NOMEM;
			problem(m, m->t->root, rel + 1, "missing, or not the sibling shard %u wrote: "
				"gather every shard's output", s->k);
			free(rel);
		}
	}
	return KILN_OK;
}

static kiln_status check_tree(struct merger *m)
{
	struct kiln_error err = { 0 };
	struct stat own;
	size_t nown = 0;
	kiln_status ret;

	if (stat(m->t->manifest_path, &own) == 0 && S_ISREG(own.st_mode))
		nown = 1;
	ret = kiln_walk(m->t->root, &m->opt, &own, nown, &m->walk, &err);
	if (ret == KILN_ERR_IO) {
		problem(m, m->t->root, "", "%s: %s", err.what, strerror(err.errnum));
		m->io = true;
	}
	if (ret != KILN_OK)
		return ret;
	for (size_t k = 0; k < m->walk.n && ret == KILN_OK; k++)
		ret = check_entry(m, k);
	if (ret == KILN_OK)
		ret = check_siblings(m);
	return ret == KILN_OK && m->failed ? KILN_ERR_INVALID : ret;
}

/* Siblings get their sources' mode and mtime, as a run gives them. */
static void settle_siblings(struct merger *m)
{
	for (size_t i = 0; i < m->nslots; i++) {
		const struct slot *s = &m->slots[i];
		const struct kiln_stat *ks = &m->walk.v[s->entry].st;
		/* the walk keeps no atime: the sibling keeps its own */
		struct stat src = { .st_mode = ks->st_mode, .st_mtim = ks->st_mtim,
				    .st_atim = { 0, UTIME_OMIT } };
		for (unsigned c = 0; c < kiln_ncodecs; c++) {
			char *sib;
			if (s->rec->coding[c].outcome != KILN_CODING_KEPT ||
			    !(sib = kiln_path_join(m->t->root, s->rec->rel, kiln_codecs[c]->info.suffix)))
				continue;
			errno = 0;
			if (!kiln_sibling_fix_meta(m->t->root, sib, &src))
				problem(m, m->t->root, sib + strlen(m->t->root) + 1,
					"cannot give it its source's mode and mtime%s%s",
					errno ? ": " : "", errno ? strerror(errno) : "");
			free(sib);
		}
	}
}

/* Does the merged manifest account for the sibling journal line J of REL:
 * it records those bytes, or they are not on disk (removed or replaced)? */
static bool settled(void *arg, const char *rel, const struct kiln_journaled *j)
{
	struct merger *m = arg;
	const struct slot *s = find_slot(m, rel);
	char *path;
	uint8_t sha[32];
	uint64_t size;
	size_t nstale;
	const struct kiln_stale *stale = kiln_ledger_stale(&m->t->ledger, &nstale);
	bool there;

	if (s && s->rec->coding[j->coding].outcome == KILN_CODING_KEPT &&
	    memcmp(s->rec->coding[j->coding].sha256, j->sha256, 32) == 0)
		return true;
	if (!(path = kiln_path_join(m->t->root, rel, kiln_codecs[j->coding]->info.suffix)))
		return false;
	there = kiln_file_digest(path, false, &size, sha) == KILN_OK && size == j->size &&
		memcmp(sha, j->sha256, 32) == 0;
	free(path);
	/* (recorded as stale: the manifest knows it) */
	for (size_t i = 0; there && i < nstale; i++)
		there = !(stale[i].coding == j->coding &&
			  memcmp(stale[i].sha256, j->sha256, 32) == 0 &&
			  strncmp(stale[i].rel, rel, strlen(rel)) == 0 &&
			  strcmp(stale[i].rel + strlen(rel), kiln_codecs[j->coding]->info.suffix) == 0);
	return !there;
}

/* Hand every record and stale sibling to the tree, and write. */
static kiln_status write_merged(struct merger *m)
{
	struct kiln_tree *t = m->t;

	for (size_t i = 0; i < m->nslots; i++)
		kiln_ledger_carry(&t->ledger, m->slots[i].rec);
	for (size_t i = 0; i < m->nparts; i++)
		for (size_t j = 0; j < m->parts[i].st.nstale; j++) {
			const struct kiln_stale *s = &m->parts[i].st.stale[j];
			kiln_ledger_keep_stale(&t->ledger, s->rel, s->coding, s->size, s->sha256);
		}
	if (kiln_ledger_is_lost(&t->ledger))
		return KILN_ERR_NOMEM;
	settle_siblings(m);
	t->opt = &m->opt;
	kiln_tree_write_artifacts(t);
	t->opt = &t->run->opt;
	if (t->artifact_failed)
		return KILN_ERR_IO;
	if (!kiln_parts_remove(&t->parts_seen)) {
		struct kiln_error err = { KILN_ERR_IO, errno, "cannot remove a merged part", "" };
		kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, m->dir, -1, &err);
		return KILN_ERR_IO;
	}
	/* the journals of dead runs whose siblings the manifest now accounts
	 * for go, as after a run of the whole tree */
	kiln_journal_remove_settled(t->root, settled, m);
	return KILN_OK;
}

static kiln_status merge(struct merger *m)
{
	struct kiln_error err;
	char *bad = NULL;
	kiln_status ret;

	if (!m->t->opt->dry_run && (ret = kiln_lock_take(m->t, &err)) != KILN_OK) {
		kiln_tree_root_error(m->t, &err);
		return ret;
	}
	if ((ret = kiln_outputs_check(m->t, &err, &bad)) != KILN_OK) {
		if (bad)
			kiln_tree_path_error(m->t, bad, &err);
		free(bad);
		return ret;
	}
	if (!(m->dir = kiln_part_dir(m->t->manifest_path)))
		return KILN_ERR_NOMEM;
	if ((ret = find_parts(m)) != KILN_OK || (ret = read_parts(m)) != KILN_OK ||
	    (ret = check_settings(m)) != KILN_OK || (ret = check_records(m)) != KILN_OK)
		return ret;
	/* what the parts know of siblings, and which parts were read */
	if (kiln_parts_merge(m->t->manifest_path, &m->known, &m->t->parts_seen, &bad, &err) !=
	    KILN_OK) {
		free(bad);
		return KILN_ERR_NOMEM;
	}
	free(bad); /* read_parts() said what was wrong with it */
	if ((ret = check_tree(m)) != KILN_OK)
		return ret == KILN_ERR_INVALID && m->io ? KILN_ERR_IO : ret;
	return m->t->opt->dry_run ? KILN_OK : write_merged(m);
}

kiln_status kiln_merge_tree(struct kiln_run *run, const char *root)
{
	struct kiln_tree t;
	struct merger m = { .t = &t };
	kiln_status ret;

	if ((ret = kiln_tree_begin(&t, run, root, &run->cb)) == KILN_OK) {
		ret = run->opt.write_manifest ? merge(&m) : KILN_ERR_INVALID;
		if (!run->opt.write_manifest)
			problem(&m, t.root, "", "a merge writes the manifest: drop --no-manifest");
	}
	for (size_t i = 0; i < m.nparts; i++) {
		free(m.parts[i].name);
		free(m.parts[i].path);
		kiln_state_free(&m.parts[i].st);
	}
	free(m.parts);
	for (size_t i = 0; i < m.nglobs; i++)
		free(m.globs[i]);
	free(m.globs);
	free(m.slots);
	free(m.dir);
	kiln_walk_free(&m.walk);
	kiln_state_free(&m.known);
	kiln_lock_drop(&t);
	kiln_tree_end(&t);
	return ret;
}
