/*
 * artifacts.c - what a tree's run writes after its files: the manifest,
 * each chosen server's snippet files (and a warning for each file a
 * snippet leaves out), and the removal of the snippets an earlier run
 * recorded that this one writes no more.
 *
 * The snippets are built before the manifest is written, since the
 * manifest records the SHA-256 of each one written at the top of the tree
 * ("snippets"): that record, not a file's name or first line, is what lets
 * a later run remove a snippet it no longer writes (--server changed) and
 * leave alone a file someone else put there or edited since.
 */
#include "artifacts.h"

#include "run.h"

#include "beneath.h"
#include "codec.h"
#include "dict.h"
#include "hash.h"
#include "immutable.h"
#include "index.h"
#include "manifest.h"
#include "outputs.h"
#include "server.h"
#include "sibling.h"
#include "sort.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int asset_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kiln_serve_asset *)a)->rel,
		      ((const struct kiln_serve_asset *)b)->rel);
}

/* Every record of the tree, for the manifest: entries' and carried ones,
 * borrowed from the ledger (a pointer each, not a copy). */
static struct kiln_manifest_item *gather(struct kiln_tree *t, size_t *n)
{
	size_t ncarried, nrec = 0;
	const struct kiln_record *carried = kiln_ledger_carried(&t->ledger, &ncarried);
	struct kiln_manifest_item *v;

	/* (sized to the records: a tree's walk has as many siblings again) */
	for (size_t k = 0; k < t->walk.n; k++)
		nrec += kiln_ledger_record(&t->ledger, k) != NULL;
	v = malloc((nrec + ncarried + 1) * sizeof(*v));
	*n = 0;
	for (size_t k = 0; v && k < t->walk.n; k++) {
		const struct kiln_record *r = kiln_ledger_record(&t->ledger, k);
		if (r)
			v[(*n)++] = (struct kiln_manifest_item){ r, kiln_immutable_of(t, k) };
	}
	for (size_t i = 0; v && i < ncarried; i++)
		v[(*n)++] = (struct kiln_manifest_item){ &carried[i], carried[i].fp };
	return v;
}

/* Free the first N of A, the snippets' assets. */
static void free_assets(struct kiln_serve_asset *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		free((char *)a[i].family);
	free(a);
}

/* The snippets' view of the tree: every asset the records hold, and those
 * of files that have no record (all of them with --no-manifest).  Fills
 * *S; its ASSETS are malloc'ed, OWN is the caller's array (false when out
 * of memory). */
static bool serve_input(struct kiln_tree *t, const struct kiln_manifest_item *recs, size_t n,
			struct kiln_serve *s, const char **own)
{
	const struct kiln_options *opt = t->opt;
	struct kiln_serve_asset *a;
	size_t m = 0, o = 0, more = 0;

	for (size_t k = 0; k < t->walk.n; k++)
		more += !kiln_ledger_record(&t->ledger, k) &&
			t->done[k].outcome == KILN_OUTCOME_COMPRESSED;
	if (!(a = malloc((n + more + 1) * sizeof(*a))))
		return false;
	for (size_t i = 0; i < n + t->walk.n; i++) {
		const char *rel;
		kiln_outcome outcome;
		struct kiln_fp fp;
		unsigned mine = 0;
		if (i >= n && (kiln_ledger_record(&t->ledger, i - n) ||
			       t->done[i - n].outcome != KILN_OUTCOME_COMPRESSED))
			continue;
		rel = i < n ? recs[i].r->rel : t->walk.v[i - n].rel;
		outcome = i < n ? recs[i].r->outcome : (kiln_outcome)t->done[i - n].outcome;
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (i < n ? recs[i].r->coding[c].outcome == KILN_CODING_KEPT
				  : (t->done[i - n].kept & (1u << c)) != 0)
				mine |= 1u << c;
		fp = i < n ? recs[i].fp : kiln_immutable_of(t, i - n);
		/* the decision (immutable.h) drives Cache-Control and dictionaries */
		a[m] = (struct kiln_serve_asset){ .rel = rel, .kept = mine,
						  .immutable = fp.why != KILN_WHY_NONE };
		a[m].dictionary = fp.len && (outcome == KILN_OUTCOME_COMPRESSED ||
					     outcome == KILN_OUTCOME_NO_GAIN);
		if (a[m].dictionary && !(a[m].family = kiln_family_at(rel, fp.start, fp.len))) {
			free_assets(a, m);
			return false;
		}
		if (i < n) {
			a[m].dicts = recs[i].r->dicts;
			a[m].ndicts = recs[i].r->ndicts;
		} else {
			a[m].dicts = kiln_dict_of(t, i - n, &a[m].ndicts);
		}
		m++;
		s->kept |= mine;
	}
	kiln_sort(a, m, sizeof(*a), asset_cmp);
	s->opt = opt;
	s->url_prefix = opt->url_prefix;
	s->assets = a;
	s->n = m;
	/* kiln's own names: the only ones its files have in the tree (an
	 * output an option names elsewhere in it is refused, outputs.h; one
	 * outside it is not the tree's to hide: an asset may share its name) */
	own[o++] = KILN_MANIFEST_NAME;
	own[o++] = KILN_INDEX_NAME;
	for (unsigned sv = 0; sv < kiln_nservers; sv++)
		for (const struct kiln_server_file *f = kiln_servers[sv]->files; f->name; f++)
			own[o++] = f->name;
	own[o] = NULL;
	s->own = own;
	return true;
}

/* A warning for each asset a chosen server's snippet leaves out of its
 * special handling (server.h), "SERVER snippet: why". */
static void report_left_out(struct kiln_tree *t, const struct kiln_serve *s)
{
	for (unsigned sv = 0; sv < kiln_nservers; sv++) {
		if (!(t->opt->servers & (1u << sv)) || !kiln_servers[sv]->left_out)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			const char *why = kiln_servers[sv]->left_out(s, &s->assets[i]);
			char text[256], *path;
			struct kiln_error err = { KILN_OK, 0, text, "" };

			if (!why || !(path = kiln_path_join(t->root, s->assets[i].rel, "")))
				continue;
			snprintf(text, sizeof(text), "%s snippet: %s", kiln_servers[sv]->name, why);
			kiln_tree_event(t, KILN_EVENT_SNIPPET_LEFT_OUT, path, -1, &err);
			free(path);
		}
	}
}

/* The snippet files of one run: each chosen server's, with its text. */
struct snippet_set {
	struct {
		unsigned sv, f;
		char *path, *text; /* text NULL: out of memory */
	} v[3 * KILN_MAX_SERVERS];
	size_t n;
	/* What the manifest records: those written at the top of the tree,
	 * and those of earlier runs kiln could not remove. */
	struct kiln_snippet_rec rec[4 * KILN_MAX_SERVERS];
	size_t nrec;
};

/* Build each chosen server's snippet files into *B (with the warnings
 * for what they leave out). */
static void build_snippets(struct kiln_tree *t, const struct kiln_manifest_item *recs, size_t n,
			   struct snippet_set *b)
{
	const struct kiln_options *opt = t->opt;
	const char *own[3 + 3 * KILN_MAX_SERVERS];
	struct kiln_serve s = { 0 };
	bool ok = recs != NULL && serve_input(t, recs, n, &s, own);

	if (ok)
		report_left_out(t, &s);
	for (unsigned sv = 0; sv < kiln_nservers; sv++) {
		if (!(opt->servers & (1u << sv)))
			continue;
		for (unsigned f = 0; kiln_servers[sv]->files[f].name; f++) {
			b->v[b->n].sv = sv;
			b->v[b->n].f = f;
			b->v[b->n].path = kiln_server_file_path(t->opt, t->root, sv, f);
			b->v[b->n].text = ok ? kiln_servers[sv]->files[f].text(&s) : NULL;
			b->n++;
		}
	}
	free_assets((struct kiln_serve_asset *)s.assets, s.n);
}

/* PATH's name when it is a file at the top of the tree (ROOT/NAME), else
 * NULL. */
static const char *top_name(const char *root, const char *path)
{
	size_t r = strlen(root);

	while (r > 1 && root[r - 1] == '/')
		r--;
	if (!path || strncmp(path, root, r) != 0 || path[r] != '/' || !path[r + 1] ||
	    strchr(path + r + 1, '/'))
		return NULL;
	return path + r + 1;
}

/* Add NAME and SHA to what the manifest records; false when out of memory. */
static bool add_rec(struct snippet_set *b, const char *name, const uint8_t sha[32])
{
	bool encoded;
	char *key = kiln_manifest_key(name, &encoded);

	if (!key)
		return false;
	free(key);
	if (encoded || b->nrec == sizeof(b->rec) / sizeof(b->rec[0]))
		return true; /* not a name a JSON key holds as it is: not recorded */
	for (size_t i = 0; i < b->nrec; i++)
		if (strcmp(b->rec[i].name, name) == 0)
			return true;
	if (!(b->rec[b->nrec].name = strdup(name)))
		return false;
	memcpy(b->rec[b->nrec++].sha256, sha, 32);
	return true;
}

/* Whether the top-level file NAME (opened beneath DIR, no link followed)
 * is a regular file holding exactly the bytes whose SHA-256 is SHA. */
static bool holds(int dir, const char *name, const uint8_t sha[32])
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	uint8_t got[KILN_SHA256_LEN];
	char *buf = NULL;
	bool same = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (64 << 20) &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL &&
	    kiln_pread_full(fd, (uint8_t *)buf, (size_t)st.st_size, 0) == (ssize_t)st.st_size &&
	    kiln_sha256(buf, (size_t)st.st_size, got) == KILN_OK)
		same = memcmp(got, sha, 32) == 0;
	free(buf);
	close(fd);
	return same;
}

/*
 * The manifest could not be written, so the previous one stays: a
 * dictionary delta it records that this run wrote again with other bytes
 * (its source changed; the delta's name depends on the dictionary alone)
 * would contradict it, and no journal records deltas.  Such a delta goes:
 * a recorded sibling missing after a failed run is what the next run
 * repairs; one the manifest describes wrongly is not.
 */
static void drop_contradicted_deltas(struct kiln_tree *t)
{
	for (size_t i = 0; i < t->state.n && !t->opt->dry_run; i++) {
		const struct kiln_prev_entry *pe = &t->state.v[i];
		for (size_t k = 0; pe->in_manifest && k < pe->rec.ndicts; k++) {
			const struct kiln_dict_record *dr = &pe->rec.dicts[k];
			char *path = kiln_dict_sibling_path(t->root, pe->rec.rel, dr->dict_sha256);
			uint8_t sha[32];
			uint64_t size;

			if (path && kiln_file_digest_beneath(t->root, path, &size, sha) == KILN_OK &&
			    (size != dr->size || memcmp(sha, dr->sha256, 32) != 0)) {
				if (kiln_sibling_remove(t->root, path) == 0) {
					kiln_tree_event(t, KILN_EVENT_REMOVED, path, -1, NULL);
				} else if (errno != ENOENT) {
					struct kiln_error err = { KILN_ERR_IO, errno, "cannot remove", "" };
					kiln_ledger_remove_failed(&t->ledger);
					kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, path, -1, &err);
				}
			}
			free(path);
		}
	}
}

/*
 * The snippets an earlier run recorded that this one does not write (a
 * server dropped from --server): removed while they hold the bytes kiln
 * wrote, each one reported (KILN_EVENT_REMOVED); one that has other bytes
 * is a file of someone else's and stays, unrecorded, reported once
 * (KILN_EVENT_SNIPPET_EDITED).  One kiln cannot
 * remove stays recorded, so that a later run tries again.
 */
static bool remove_stale_snippets(struct kiln_tree *t, struct snippet_set *b)
{
	static const struct kiln_error gone = { KILN_OK, 0, "a snippet this run does not write",
						"" };
	int dir = -1;
	bool ok = true;

	for (size_t i = 0; ok && i < t->state.nsnippets; i++) {
		const struct kiln_snippet_rec *r = &t->state.snippets[i];
		bool written = false;
		char *path;

		for (size_t k = 0; k < b->n && !written; k++) {
			const char *top = top_name(t->root, b->v[k].path);
			written = top && strcmp(top, r->name) == 0;
		}
		if (written)
			continue;
		if (dir < 0 && (dir = kiln_beneath_top(t->root)) < 0)
			return true; /* the run has reported the root already */
		if (!(path = kiln_path_join(t->root, r->name, ""))) {
			ok = false;
			break;
		}
		if (!holds(dir, r->name, r->sha256)) {
			struct stat st;
			/* gone already is nothing to say; other bytes are an edit */
			if (fstatat(dir, r->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				kiln_tree_event(t, KILN_EVENT_SNIPPET_EDITED, path, -1, NULL);
		} else if (unlinkat(dir, r->name, 0) == 0 || errno == ENOENT)
			kiln_tree_event(t, KILN_EVENT_REMOVED, path, -1, &gone);
		else {
			struct kiln_error err = { KILN_ERR_IO, errno, "cannot remove", "" };
			kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, path, -1, &err);
			ok = add_rec(b, r->name, r->sha256);
		}
		free(path);
	}
	if (dir >= 0)
		close(dir);
	return ok;
}

/* The records of the snippets B writes at the top of the tree. */
static bool record_snippets(struct kiln_tree *t, struct snippet_set *b)
{
	for (size_t k = 0; k < b->n; k++) {
		const char *top = top_name(t->root, b->v[k].path);
		uint8_t sha[KILN_SHA256_LEN];

		if (top && b->v[k].text &&
		    (kiln_sha256(b->v[k].text, strlen(b->v[k].text), sha) != KILN_OK ||
		     !add_rec(b, top, sha)))
			return false;
	}
	return true;
}

/* What on_artifact is given for an artifact that already held exactly its
 * bytes, and was kept (kiln.h). */
static const struct kiln_error unchanged = { KILN_OK, 0, "unchanged", "" };

/* Write the snippet files of B (each text freed). */
static void write_snippets(struct kiln_tree *t, struct snippet_set *b)
{
	for (size_t k = 0; k < b->n; k++) {
		struct kiln_error err = { 0 };
		const char *path = b->v[k].path;
		const struct kiln_server *sv = kiln_servers[b->v[k].sv];
		char what[64];
		bool kept;

		snprintf(what, sizeof(what), "%s snippet", sv->name);
		if (!path || kiln_write_artifact(&t->run->temps, path, b->v[k].text, t->opt->fsync,
						 "cannot build the snippet", &kept, &err) != KILN_OK) {
			t->artifact_failed = true;
			if (!path) {
				free(b->v[k].text);
				err = (struct kiln_error){ KILN_ERR_NOMEM, ENOMEM, "out of memory", "" };
			}
			kiln_tree_artifact(t, what, path ? path : sv->files[b->v[k].f].name, &err);
		} else {
			kiln_tree_artifact(t, what, path, kept ? &unchanged : NULL);
		}
		b->v[k].text = NULL;
	}
}

static void free_snippets(struct snippet_set *b)
{
	for (size_t k = 0; k < b->n; k++) {
		free(b->v[k].path);
		free(b->v[k].text);
	}
	for (size_t i = 0; i < b->nrec; i++)
		free(b->rec[i].name);
}

/* The index of the manifest just written or kept (index.h); a failure is
 * told as the index's, and fails the run, the manifest standing. */
static void write_index(struct kiln_tree *t, const struct kiln_manifest_item *recs, size_t n,
			const struct kiln_stale *stale, size_t nstale,
			const struct kiln_snippet_rec *snip, size_t nsnip, const char *tree)
{
	struct kiln_index_input in = {
		.root = t->root, .top = &t->top, .manifest_path = t->manifest_path,
		.digest = t->digest, .since_ns = t->since_ns, .local = t->local,
		.items = recs, .n = n, .stale = stale, .nstale = nstale,
		.snip = snip, .nsnip = nsnip, .tree = tree,
	};
	struct kiln_error err = { 0 };

	if (!kiln_index_is_kilns(t->index_path)) {
		t->artifact_failed = true;
		err = (struct kiln_error){ KILN_ERR_IO, 0, "not a kiln index, so not replaced "
					   "(move it away)", "" };
		kiln_tree_artifact(t, "index", t->index_path, &err);
		return;
	}
	if (kiln_index_write(&t->run->temps, t->index_path, t->opt->fsync, &in, &err) != KILN_OK) {
		t->artifact_failed = true;
		kiln_tree_artifact(t, "index", t->index_path, &err);
	}
}

/* kiln_manifest_put for an artifact being written (tempfile.h). */
static void put_artifact(void *arg, const char *p, size_t n)
{
	kiln_artifact_put(arg, p, n);
}

void kiln_tree_write_artifacts(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;
	struct kiln_error err = { 0 };
	size_t n = 0, nstale;
	struct kiln_manifest_item *recs = gather(t, &n);
	const struct kiln_stale *stale = kiln_ledger_stale(&t->ledger, &nstale);
	struct snippet_set *b = calloc(1, sizeof(*b));
	bool snip_ok = b != NULL, kept = false;

	if (b && opt->servers)
		build_snippets(t, recs, n, b);
	/* a shard writes no snippet: the merge's are the tree's */
	snip_ok = snip_ok && (opt->shard_count || remove_stale_snippets(t, b)) &&
		  record_snippets(t, b);
	if (opt->write_manifest && kiln_ledger_is_lost(&t->ledger)) {
		t->artifact_failed = t->manifest_failed = true;
		err = (struct kiln_error){ KILN_ERR_NOMEM, ENOMEM,
					   "out of memory earlier in the run; the previous "
					   "manifest and the journals are kept for the next run",
					   "" };
		kiln_tree_artifact(t, "manifest", t->manifest_path, &err);
	} else if (opt->write_manifest) {
		char *tree = kiln_outputs_tree_field(t);
		struct kiln_artifact a;
		kiln_artifact_begin(&a, &t->run->temps, t->manifest_path, opt->fsync);
		if (!recs || !snip_ok ||
		    !kiln_manifest_write(opt, recs, n, stale, nstale, b->rec, b->nrec, tree,
					 put_artifact, &a))
			kiln_artifact_fail(&a, &(struct kiln_error){ KILN_ERR_NOMEM, ENOMEM,
								     "cannot build the manifest", "" });
		if (kiln_artifact_end(&a, &kept, &err) != KILN_OK)
			t->artifact_failed = t->manifest_failed = true;
		if (!recs || !snip_ok)
			err = (struct kiln_error){ KILN_ERR_NOMEM, ENOMEM, "out of memory", "" };
		kiln_tree_artifact(t, "manifest", t->manifest_path,
				   t->artifact_failed ? &err : kept ? &unchanged : NULL);
		/* (a manifest not written leaves the index of the one there) */
		if (t->indexing && !t->manifest_failed)
			write_index(t, recs, n, stale, nstale, b->rec, b->nrec, tree);
		free(tree);
	}
	if (t->manifest_failed)
		drop_contradicted_deltas(t);
	if (b && opt->servers)
		write_snippets(t, b);
	else if (!b && opt->servers) {
		t->artifact_failed = true;
		err = (struct kiln_error){ KILN_ERR_NOMEM, ENOMEM, "out of memory", "" };
		kiln_tree_artifact(t, "snippets", t->root, &err);
	}
	if (b)
		free_snippets(b);
	free(b);
	free(recs);
}

