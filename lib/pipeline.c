/*
 * pipeline.c - one file, from its bytes to its siblings and its record.
 *
 * Every file a worker takes goes through the same sequence, whether its
 * bytes are held in memory or streamed (produce.c is the only place that
 * differs):
 *
 *   open      the very file the walk listed, read-only, never through a
 *             link kiln was not told to follow;
 *   classify  excluded, media (extension or magic bytes), small;
 *   reuse     for each requested coding, an earlier sibling made from this
 *             content with this recipe (or its recorded no-gain size);
 *   encode    the rest (cache, whole-buffer or streaming encoders);
 *   decide    which siblings to keep (decide.c), encoding any coding that
 *             is kept but was known only by its size;
 *   verify    with --verify, decode each new sibling and compare;
 *   commit    check every new sibling's path, put each in place and journal
 *             it; then remove the earlier siblings of codings not kept;
 *   record    fill the report and, when a manifest is kept, the record;
 *   deltas    with --previous, its dictionary deltas (dict.c), each kept
 *             only when smaller than every sibling it kept.
 *
 * A failure at any step settles what the file is left with (settle()): a
 * file whose content is unchanged, or unknown because it cannot be read,
 * keeps its earlier siblings and record; a file that vanished or changed
 * loses its earlier siblings; siblings written for it in this run are
 * removed, and one that cannot be is journaled (the next run removes it)
 * and fails the run.  So no failure leaves a sibling kiln does not know
 * of, and none leaves one that does not decode to its source as the
 * manifest says.
 */
#include "pipeline.h"
#include "beneath.h"
#include "dict.h"

#include "classify.h"
#include "decide.h"
#include "hash.h"
#include "immutable.h"
#include "index.h"
#include "previous.h"
#include "produce.h"
#include "sibling.h"
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum have { HAVE_NONE = 0, HAVE_PREVIOUS, HAVE_TRIED };

/* One file under way. */
struct work {
	struct kiln_tree *t;
	struct worker *w;
	const struct kiln_entry *e;
	struct kiln_report *r;
	size_t k;                          /* its walk index */
	const struct kiln_prev_entry *pe;  /* what the record says, or NULL */
	struct kiln_source src;
	struct stat st;
	uint8_t *buf;
	bool gone;                         /* vanished or replaced: no source */
	unsigned codings;                  /* requested, and the name fits */
	/* per coding */
	char recipe[KILN_MAX_CODINGS][KILN_RECIPE_MAX];
	enum have have[KILN_MAX_CODINGS];
	uint8_t prev_sha[KILN_MAX_CODINGS][32];
	size_t size[KILN_MAX_CODINGS];
	bool keep[KILN_MAX_CODINGS];
	bool written[KILN_MAX_CODINGS];
	bool foreign[KILN_MAX_CODINGS];    /* replacing a file kiln did not write */
	bool foreign_decodes[KILN_MAX_CODINGS];
	/* the kept sibling's status right after this run checked or wrote
	 * it: what its stamp must still find (seen_ok[c]) */
	struct stat seen[KILN_MAX_CODINGS];
	bool seen_ok[KILN_MAX_CODINGS];
	struct kiln_product prod[KILN_MAX_CODINGS];
};

/* The source to decode a sibling against, when it is still the one the
 * file had: its descriptor, or -1. */
static int source_fd(const struct work *wk)
{
	return wk->gone || wk->r->error.status == KILN_ERR_CHANGED ? -1 : wk->src.fd;
}

/* Set entry k's record to REC (copied). */
static void set_record(struct work *wk, const struct kiln_record *rec)
{
	kiln_ledger_set(&wk->t->ledger, wk->k, rec);
}

/* Take REC's stamp (index.h): the source as it was opened, its kept
 * siblings as they are now, if that is still as this run checked or wrote
 * each (a sibling changed since, while the run encoded the rest, gets no
 * stamp: the next run reads it). */
static void stamp(struct work *wk, struct kiln_record *rec)
{
	struct stat sibs[KILN_NCODECS];

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct stat *was = &wk->seen[c];
		char *sib;
		int got;
		if (rec->coding[c].outcome != KILN_CODING_KEPT)
			continue;
		if (!wk->seen_ok[c] ||
		    !(sib = kiln_path_join(wk->t->root, wk->e->rel, kiln_codecs[c]->info.suffix)))
			return;
		got = kiln_beneath_lstat(wk->t->root, sib, &sibs[c]);
		free(sib);
		if (got != 0 || sibs[c].st_dev != was->st_dev || sibs[c].st_ino != was->st_ino ||
		    sibs[c].st_size != was->st_size || sibs[c].st_mode != was->st_mode ||
		    sibs[c].st_mtim.tv_sec != was->st_mtim.tv_sec ||
		    sibs[c].st_mtim.tv_nsec != was->st_mtim.tv_nsec ||
		    sibs[c].st_ctim.tv_sec != was->st_ctim.tv_sec ||
		    sibs[c].st_ctim.tv_nsec != was->st_ctim.tv_nsec)
			return;
	}
	kiln_index_stamp(rec, &wk->st, sibs);
}

/* The record of a file that ended well, from its report. */
static void record_outcome(struct work *wk)
{
	const struct kiln_report *r = wk->r;
	struct kiln_record rec = { .rel = (char *)wk->e->rel };

	if (!wk->t->hashing || !wk->src.hashed)
		return;
	rec.size = r->size;
	rec.outcome = r->outcome;
	memcpy(rec.sha256, wk->src.sha256, 32);
	memcpy(rec.sha384, wk->src.sha384, 48);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		struct kiln_coding_record *cr = &rec.coding[c];
		cr->outcome = r->coding[c].outcome;
		if (cr->outcome == KILN_CODING_LONG_NAME)
			cr->outcome = KILN_CODING_OFF; /* nothing to record */
		if (cr->outcome == KILN_CODING_OFF)
			continue;
		cr->size = r->coding[c].size;
		memcpy(cr->sha256, r->coding[c].sha256, 32);
		if (!(cr->recipe = kiln_ledger_recipe(&wk->t->ledger, wk->recipe[c])))
			return; /* lost: the ledger says so */
	}
	if (wk->t->indexing)
		stamp(wk, &rec);
	set_record(wk, &rec);
}

/* Does the record hold this very content? */
static bool same_content(const struct work *wk)
{
	const struct kiln_prev_entry *pe = wk->pe;

	return wk->src.hashed && pe && pe->in_manifest && pe->rec.size == (uint64_t)wk->st.st_size &&
	       memcmp(pe->rec.sha256, wk->src.sha256, 32) == 0;
}

/* Is entry WK's sibling of coding C on disk (anything at its name: what
 * is there is for previous.c to judge)?  True when it cannot be told. */
static bool sibling_there(const struct work *wk, unsigned c)
{
	char sib[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(sib, sizeof(sib), "%s/%s%s", wk->t->root, wk->e->rel,
			     kiln_codecs[c]->info.suffix) >= sizeof(sib))
		return true;
	return kiln_beneath_lstat(wk->t->root, sib, &st) == 0 || errno != ENOENT;
}

/* Remove the sibling SIB of coding C on a file's failure; one that cannot
 * be removed is said (KILN_EVENT_REMOVE_FAILED) and fails the run: a
 * FOREIGN one (not kiln's, and stale) as a stale sibling left alone, one
 * this run wrote as a removal that failed. */
static void remove_reporting(struct kiln_tree *t, const char *sib, int c, bool foreign)
{
	struct kiln_error err = { KILN_ERR_IO, 0, "cannot remove", "" };

	if (kiln_sibling_remove(t->root, sib) == 0) {
		kiln_tree_event(t, KILN_EVENT_REMOVED, sib, c, NULL);
		return;
	}
	if (errno == ENOENT)
		return;
	err.errnum = errno;
	if (foreign)
		kiln_ledger_foreign_stale(&t->ledger);
	else
		kiln_ledger_remove_failed(&t->ledger);
	kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, sib, c, &err);
}

/*
 * After a failure (wk->r says which): remove what this run wrote for the
 * file, then keep or drop what earlier runs left, as the comment at the
 * top says.
 */
static void settle(struct work *wk)
{
	struct kiln_tree *t = wk->t;
	const struct kiln_prev_entry *pe = wk->pe;
	struct kiln_record carried;
	bool unknown;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		char *sib;
		if (!wk->written[c] ||
		    !(sib = kiln_path_join(t->root, wk->e->rel, kiln_codecs[c]->info.suffix)))
			continue;
		/* one that stays is journaled: the next run removes it */
		remove_reporting(t, sib, (int)c, false);
		free(sib);
	}
	/* a stale file kiln did not write, which this run was about to
	 * replace: it goes all the same (a server would send it) */
	for (unsigned c = 0; c < kiln_ncodecs && !t->opt->dry_run; c++) {
		char *sib;
		if (!wk->foreign[c] || wk->foreign_decodes[c] || wk->written[c] ||
		    !(sib = kiln_path_join(t->root, wk->e->rel, kiln_codecs[c]->info.suffix)))
			continue;
		remove_reporting(t, sib, (int)c, true);
		free(sib);
	}
	if (!pe || t->opt->dry_run)
		return;
	/* a readable file is hashed now, if it was not yet, to know which */
	if (!wk->gone && !wk->src.hashed && wk->src.fd >= 0 &&
	    wk->r->error.status != KILN_ERR_CHANGED) {
		struct kiln_error err;
		wk->src.hashed = kiln_source_hash(wk->src.fd, &wk->st, wk->src.sha256,
						  wk->src.sha384, &err) == KILN_OK;
	}
	unknown = !wk->gone && !wk->src.hashed && wk->r->error.status != KILN_ERR_CHANGED;
	/* changed while read: whatever was hashed, the file is not that now;
	 * and a file opened at another size than the record's holds other
	 * bytes, whatever could not be hashed (out of memory) */
	if (!pe->in_manifest || wk->r->error.status == KILN_ERR_CHANGED ||
	    (unknown && wk->src.fd >= 0 && (uint64_t)wk->st.st_size != pe->rec.size) ||
	    !(unknown || same_content(wk))) {
		/* outdated: removed, except one kiln was refused to replace
		 * (read-only on purpose), which stays recorded as stale */
		for (unsigned c = 0; c < kiln_ncodecs; c++) {
			if (!kiln_state_has_sibling(pe, (kiln_coding)c))
				continue;
			if (wk->r->error.status == KILN_ERR_UNSAFE &&
			    strcmp(wk->r->error.suffix, kiln_codecs[c]->info.suffix) == 0)
				kiln_prev_keep_stale(t, pe, (kiln_coding)c);
			else
				kiln_prev_remove_recorded(t, pe, (kiln_coding)c);
		}
		return;
	}
	/* unchanged or unreadable: the record stays, less what was rewritten
	 * and then removed above, and less siblings only a journal knew */
	if (!kiln_record_copy(&carried, &pe->rec)) {
		kiln_ledger_lost(&t->ledger);
		return;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (wk->written[c] && carried.coding[c].outcome == KILN_CODING_KEPT)
			carried.coding[c].outcome = KILN_CODING_OFF;
		/* one recorded but no longer there (deleted since, and not
		 * written again: a cancelled run encodes nothing) is not on
		 * record any more: the manifest records what is on disk */
		if (carried.coding[c].outcome == KILN_CODING_KEPT && !sibling_there(wk, c))
			carried.coding[c].outcome = KILN_CODING_OFF;
		if (carried.coding[c].outcome != KILN_CODING_KEPT && kiln_state_has_sibling(pe, c))
			kiln_prev_no_sibling(t, pe, wk->e->rel, (kiln_coding)c, source_fd(wk),
					     (uint64_t)wk->st.st_size);
	}
	kiln_ledger_set(&t->ledger, wk->k, &carried);
	kiln_record_free(&carried);
}

/* A file that gets no sibling: MEDIA, SMALL, EXCLUDED or LONG_NAME. */
static void skip(struct work *wk, kiln_outcome outcome)
{
	struct kiln_tree *t = wk->t;

	wk->r->outcome = outcome;
	if (t->hashing) {
		if (kiln_source_hash(wk->src.fd, &wk->st, wk->src.sha256, wk->src.sha384,
				     &wk->r->error) != KILN_OK) {
			wk->r->outcome = KILN_OUTCOME_ERROR;
			settle(wk);
			return;
		}
		wk->src.hashed = true;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		kiln_prev_no_sibling(t, wk->pe, wk->e->rel, (kiln_coding)c, wk->src.fd,
				     (uint64_t)wk->st.st_size);
	record_outcome(wk);
}

/* Which requested codings an earlier run already settled for this content. */
static void reuse(struct work *wk)
{
	struct kiln_tree *t = wk->t;
	uint64_t size = (uint64_t)wk->st.st_size, n;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (!(wk->codings & (1u << c)))
			continue;
		kiln_codec_recipe(t->opt, (kiln_coding)c, size, wk->recipe[c]);
		if (t->opt->force || !wk->src.hashed || !wk->pe)
			continue;
		if (kiln_prev_reusable(t, wk->e->rel, wk->pe, (kiln_coding)c, wk->recipe[c], &wk->st,
				       wk->src.sha256, wk->src.buf, wk->src.fd, &n, wk->prev_sha[c],
				       &wk->seen[c])) {
			wk->seen_ok[c] = true;
			wk->have[c] = HAVE_PREVIOUS;
			wk->size[c] = (size_t)n;
		} else if ((n = kiln_prev_tried(wk->pe, (kiln_coding)c, wk->recipe[c], size,
						wk->src.sha256))) {
			wk->have[c] = HAVE_TRIED;
			wk->size[c] = (size_t)n;
		}
	}
}

/* Encode what TODO asks, noting sizes.  false on failure (r filled). */
static bool encode(struct work *wk, unsigned todo)
{
	if (kiln_produce(wk->t, wk->w, &wk->src, todo, (const char(*)[KILN_RECIPE_MAX])wk->recipe,
			 wk->prod, wk->r) != KILN_OK)
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (todo & (1u << c)) {
			wk->size[c] = (size_t)wk->prod[c].len;
			wk->have[c] = HAVE_NONE;
		}
	return true;
}

/* Decide, encoding a kept coding known only by its size, until stable. */
static bool decide(struct work *wk)
{
	struct kiln_options opt = *wk->t->opt;

	opt.codings = wk->codings;
	for (unsigned round = 0; round <= kiln_ncodecs; round++) {
		unsigned more = 0;
		kiln_decide(&opt, (uint64_t)wk->st.st_size, wk->size, wk->keep);
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (wk->keep[c] && wk->have[c] == HAVE_TRIED)
				more |= 1u << c;
		if (!more)
			return true;
		if (!encode(wk, more))
			return false;
	}
	return true;
}

/* Verify and hash the new kept siblings, and check every new sibling's
 * path, before anything is written.  false on failure (r filled). */
static bool check_new(struct work *wk)
{
	struct kiln_report *r = wk->r;

	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *suffix = kiln_codecs[c]->info.suffix;
		bool foreign, decodes;
		kiln_status s;
		char *sib;
		if (!wk->keep[c] || !wk->prod[c].made)
			continue;
		s = wk->t->opt->verify ? kiln_product_verify(&wk->prod[c], (kiln_coding)c, &wk->src)
				       : KILN_OK;
		if (s != KILN_OK) {
			kiln_report_fail(r, s, s == KILN_ERR_NOMEM ? ENOMEM : 0,
					 s == KILN_ERR_VERIFY ? "sibling does not decode to its source"
							      : "cannot verify sibling",
					 suffix);
			return false;
		}
		if (kiln_product_hash(&wk->prod[c]) != KILN_OK) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", suffix);
			return false;
		}
		if (!(sib = kiln_path_join(wk->t->root, wk->e->rel, suffix))) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", suffix);
			return false;
		}
		/* (a sibling kiln wrote, as its record, a journal or a part
		 * proves by its digest, is replaced whatever its mode: it must
		 * hold the current source; a read-only file kiln did not write
		 * beside a writable source is not) */
		foreign = kiln_prev_foreign_at(wk->t, wk->pe, wk->e->rel, (kiln_coding)c,
					       wk->src.fd, (uint64_t)wk->st.st_size, &decodes);
		wk->prod[c].own_there = !foreign;
		s = kiln_sibling_check(sib, &wk->st, wk->prod[c].own_there, &r->error);
		free(sib);
		if (s != KILN_OK) {
			/* (a refused file is not one this run replaces: settle()
			 * leaves it) */
			r->outcome = KILN_OUTCOME_ERROR;
			r->error.suffix = suffix;
			return false;
		}
		wk->foreign[c] = foreign;
		wk->foreign_decodes[c] = decodes;
	}
	if (!kiln_source_unchanged(wk->src.fd, &wk->st)) {
		kiln_report_fail(r, KILN_ERR_CHANGED, 0, "file changed while being compressed", "");
		return false;
	}
	return true;
}

/* Put the new kept siblings in place, then drop the codings not kept. */
static bool commit(struct work *wk)
{
	struct kiln_tree *t = wk->t;
	struct kiln_report *r = wk->r;

	for (unsigned c = 0; c < kiln_ncodecs && !t->opt->dry_run; c++) {
		const char *suffix = kiln_codecs[c]->info.suffix;
		char *sib;
		if (!wk->keep[c] || !wk->prod[c].made)
			continue;
		if (!(sib = kiln_path_join(t->root, wk->e->rel, suffix))) {
			kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", suffix);
			return false;
		}
		/* journaled before the rename: a run killed right after it must
		 * not leave a sibling nobody knows (a line for a sibling that
		 * never appears costs nothing: ownership is proved by digest) */
		if (t->hashing) {
			int errnum = kiln_journal_add(&t->journal, wk->e->rel, (kiln_coding)c,
						      wk->recipe[c], wk->prod[c].len,
						      wk->prod[c].sha256,
						      (uint64_t)wk->st.st_size, wk->src.sha256);
			if (errnum) {
				free(sib);
				kiln_report_fail(r, KILN_ERR_IO, errnum,
						 "cannot record the sibling (no journal at the top)",
						 suffix);
				return false;
			}
		}
		if (kiln_product_commit(t, &wk->prod[c], sib, &wk->src, &r->error) != KILN_OK) {
			/* in place but not synced: settle() removes it with the rest */
			wk->written[c] = kiln_tempfile_in_place(&r->error);
			free(sib);
			r->outcome = KILN_OUTCOME_ERROR;
			r->error.suffix = suffix;
			return false;
		}
		/* its status now, right after the rename, is the one kiln left */
		wk->seen_ok[c] = kiln_beneath_lstat(t->root, sib, &wk->seen[c]) == 0;
		free(sib);
		wk->written[c] = true;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		struct kiln_error said = { KILN_OK, 0, "it decoded to its source", "" };
		char *sib;
		if (!wk->keep[c]) {
			kiln_prev_no_sibling(t, wk->pe, wk->e->rel, (kiln_coding)c, wk->src.fd,
					     (uint64_t)wk->st.st_size);
			continue;
		}
		/* what kiln's sibling replaced (or, dry run, would) */
		if (!wk->foreign[c] ||
		    !(sib = kiln_path_join(t->root, wk->e->rel, kiln_codecs[c]->info.suffix)))
			continue;
		if (!wk->foreign_decodes[c])
			said = (struct kiln_error){ KILN_ERR_VERIFY, 0,
						    "it did not decode to its source", "" };
		kiln_tree_event(t, KILN_EVENT_FOREIGN_REPLACED, sib, (int)c, &said);
		free(sib);
	}
	return true;
}

/* Fill the report's codings after a commit. */
static void report_codings(struct work *wk)
{
	struct kiln_report *r = wk->r;

	r->outcome = KILN_OUTCOME_NO_GAIN;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if ((wk->t->opt->codings & ~wk->codings) & (1u << c))
			r->coding[c].outcome = KILN_CODING_LONG_NAME;
		if (!(wk->codings & (1u << c)))
			continue;
		r->coding[c].size = wk->size[c];
		if (!wk->keep[c]) {
			r->coding[c].outcome = KILN_CODING_NO_GAIN;
			continue;
		}
		r->coding[c].outcome = KILN_CODING_KEPT;
		r->outcome = KILN_OUTCOME_COMPRESSED;
		if (wk->prod[c].made) {
			r->coding[c].origin = wk->prod[c].origin;
			memcpy(r->coding[c].sha256, wk->prod[c].sha256, 32);
		} else {
			r->coding[c].origin = KILN_ORIGIN_PREVIOUS;
			memcpy(r->coding[c].sha256, wk->prev_sha[c], 32);
		}
	}
}

/* The steps from reuse to record, for a file to compress. */
static void compress(struct work *wk)
{
	unsigned todo = 0;

	reuse(wk);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if ((wk->codings & (1u << c)) && wk->have[c] == HAVE_NONE)
			todo |= 1u << c;
	if (!encode(wk, todo) || !decide(wk) || !check_new(wk) || !commit(wk)) {
		settle(wk);
		return;
	}
	report_codings(wk);
	record_outcome(wk);
}

/* Hash a source held in memory (its digests are needed by the record, by
 * reuse, and as the cache key). */
static bool hash_buffer(struct work *wk)
{
	struct kiln_hasher *h = kiln_hasher_new();

	if (h)
		kiln_hasher_update(h, wk->buf, (size_t)wk->st.st_size);
	if (!h || kiln_hasher_final(h, wk->src.sha256, wk->src.sha384) != KILN_OK) {
		kiln_report_fail(wk->r, KILN_ERR_NOMEM, ENOMEM, "cannot hash", "");
		return false;
	}
	wk->src.hashed = true;
	return true;
}

/* Might an earlier sibling be reused for a streamed source of this size?
 * Then it is hashed first, in a pass of its own. */
static bool worth_hashing_first(const struct work *wk)
{
	const struct kiln_prev_entry *pe = wk->pe;
	uint64_t size = (uint64_t)wk->st.st_size;

	if (!pe || wk->t->opt->force)
		return false;
	if (pe->in_manifest && pe->rec.size == size)
		return true;
	for (size_t i = 0; i < pe->njv; i++)
		if (pe->jv[i].src_known && pe->jv[i].src_size == size)
			return true;
	return false;
}

/* The open source: classify, read or stream, compress. */
static void process_open(struct work *wk)
{
	struct kiln_tree *t = wk->t;
	const struct kiln_options *opt = t->opt;
	struct kiln_report *r = wk->r;
	uint8_t head[KILN_MAGIC_BYTES];
	ssize_t nhead;

	r->size = (uint64_t)wk->st.st_size;
	if (wk->e->outcome == KILN_OUTCOME_EXCLUDED)
		return skip(wk, KILN_OUTCOME_EXCLUDED);
	nhead = kiln_source_head(wk->src.fd, head, sizeof(head));
	if (nhead < 0) {
		kiln_report_fail(r, KILN_ERR_IO, errno, "cannot read", "");
		return settle(wk);
	}
	if (kiln_media_extension(wk->e->rel) || kiln_media_magic(head, (size_t)nhead))
		return skip(wk, KILN_OUTCOME_MEDIA);
	if (r->size < opt->min_size)
		return skip(wk, KILN_OUTCOME_SMALL);
	/* a coding whose sibling name the filesystem cannot hold gets none */
	wk->codings = opt->codings;
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (!kiln_sibling_name_fits(wk->e->rel, kiln_codecs[c]->info.suffix))
			wk->codings &= ~(1u << c);
	if (!wk->codings) {
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (opt->codings & (1u << c))
				r->coding[c].outcome = KILN_CODING_LONG_NAME;
		return skip(wk, KILN_OUTCOME_LONG_NAME);
	}
	if (opt->max_file_size && r->size > opt->max_file_size) {
		kiln_report_fail(r, KILN_ERR_INVALID, EFBIG,
				 "larger than --max-file-size, not compressed", "");
		return settle(wk);
	}
	if (opt->stream_size && r->size >= opt->stream_size) {
		if (worth_hashing_first(wk)) {
			if (kiln_source_hash(wk->src.fd, &wk->st, wk->src.sha256, wk->src.sha384,
					     &r->error) != KILN_OK) {
				r->outcome = KILN_OUTCOME_ERROR;
				return settle(wk);
			}
			wk->src.hashed = true;
		}
		return compress(wk);
	}
	if (kiln_source_read(wk->src.fd, &wk->st, &wk->buf, &r->error) != KILN_OK) {
		r->outcome = KILN_OUTCOME_ERROR;
		return settle(wk);
	}
	wk->src.buf = wk->buf;
	if ((t->hashing || wk->pe || t->cache) && !hash_buffer(wk))
		return settle(wk);
	compress(wk);
}

/* Fill R's outcome and codings from the record REC of an unchanged file,
 * as the steps above would have from its bytes. */
static void report_record(struct kiln_tree *t, const struct kiln_record *rec,
			  struct kiln_report *r)
{
	r->outcome = rec->outcome;
	r->size = rec->size;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *cr = &rec->coding[c];
		if ((t->opt->codings & (1u << c)) &&
		    (rec->outcome == KILN_OUTCOME_LONG_NAME ||
		     ((rec->outcome == KILN_OUTCOME_COMPRESSED || rec->outcome == KILN_OUTCOME_NO_GAIN) &&
		      !kiln_sibling_name_fits(rec->rel, kiln_codecs[c]->info.suffix))))
			r->coding[c].outcome = KILN_CODING_LONG_NAME;
		if (cr->outcome == KILN_CODING_OFF)
			continue;
		r->coding[c].outcome = cr->outcome;
		r->coding[c].size = cr->size;
		if (cr->outcome == KILN_CODING_KEPT) {
			r->coding[c].origin = KILN_ORIGIN_PREVIOUS;
			memcpy(r->coding[c].sha256, cr->sha256, 32);
		}
	}
}

bool kiln_pipeline_unchanged(struct kiln_tree *t, size_t k)
{
	const struct kiln_entry *e = &t->walk.v[k];
	const struct kiln_prev_entry *pe;
	const struct kiln_record *rec;
	struct kiln_report rep;
	char recipe[KILN_RECIPE_MAX];

	if (!t->quick || (e->outcome != KILN_OUTCOME_CANDIDATE && e->outcome != KILN_OUTCOME_EXCLUDED) ||
	    !(pe = kiln_tree_prev(t, k)) || !pe->seen || !pe->in_manifest || pe->njv)
		return false;
	rec = &pe->rec;
	/* the same bytes (its stamp), decided the same way as its record: the
	 * same options, no delta to redo, excluded as it was */
	if (rec->ndicts || (rec->outcome == KILN_OUTCOME_EXCLUDED) != (e->outcome == KILN_OUTCOME_EXCLUDED) ||
	    !kiln_index_matches(rec, &e->st, -1))
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *cr = &rec->coding[c];
		uint32_t s = e->sib[c];
		/* its own siblings as they were; no other file at their names */
		if (cr->outcome == KILN_CODING_KEPT
			    ? !s || s == KILN_SIB_NOT_ENTRY || !kiln_index_matches(rec, &t->walk.v[s - 1].st, (int)c)
			    : s != 0)
			return false;
		if (cr->outcome != KILN_CODING_OFF) {
			kiln_codec_recipe(t->opt, (kiln_coding)c, rec->size, recipe);
			if (strcmp(recipe, cr->recipe) != 0)
				return false;
		}
	}
	kiln_ledger_borrow(&t->ledger, k, rec);
	kiln_pipeline_report_of(t, k, &rep);
	report_record(t, rec, &rep);
	kiln_tree_settled(t, k, &rep);
	return true;
}

void kiln_pipeline_report_of(struct kiln_tree *t, size_t k, struct kiln_report *r)
{
	const struct kiln_entry *e = &t->walk.v[k];

	memset(r, 0, sizeof(*r));
	r->root = t->root;
	r->path = e->rel;
	r->outcome = e->outcome;
	r->size = S_ISREG(e->st.st_mode) ? (uint64_t)e->st.st_size : 0;
	r->error = e->err;
	r->immutable = kiln_why_name(kiln_immutable_of(t, k).why);
}

void kiln_pipeline_file(struct kiln_tree *t, struct worker *w, size_t k)
{
	const struct kiln_entry *e = &t->walk.v[k];
	struct work *wk = calloc(1, sizeof(*wk));
	char *path = kiln_path_join(t->root, e->rel, "");
	struct kiln_report rep, *r = &rep;
	uint64_t planned = S_ISREG(e->st.st_mode) ? (uint64_t)e->st.st_size : 0, credited = 0;

	kiln_pipeline_report_of(t, k, r);
	if (!wk || !path) {
		/* nothing settled for this file: the previous manifest must stay */
		kiln_ledger_lost(&t->ledger);
		kiln_report_fail(r, KILN_ERR_NOMEM, ENOMEM, "out of memory", "");
		goto out;
	}
	wk->src.fd = -1;
	wk->src.planned = planned;
	wk->t = t;
	wk->w = w;
	wk->e = e;
	wk->r = r;
	wk->k = k;
	wk->pe = kiln_tree_prev(t, k);
	if (wk->pe && !wk->pe->seen)
		wk->pe = NULL; /* the name of a recorded sibling, not this asset's */
	wk->src.rel = e->rel;
	wk->src.st = &wk->st;
	wk->src.fd = kiln_source_open(t->root, path, e->via_link, &e->st, &wk->st, &r->error);
	if (wk->src.fd < 0) {
		r->outcome = KILN_OUTCOME_ERROR;
		/* gone, or another file now: what was written for it must go */
		wk->gone = r->error.errnum == ENOENT || r->error.status == KILN_ERR_CHANGED;
		settle(wk);
		goto out;
	}
	process_open(wk);
	/* its dictionary deltas, last: they must be smaller than what it kept */
	kiln_dict_file(t, k, r);
out:
	if (wk) {
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			kiln_product_discard(&wk->prod[c]);
		if (wk->src.fd >= 0)
			close(wk->src.fd);
		free(wk->buf);
		credited = wk->src.credited;
	}
	/* the file is done: whatever of it was not reported yet */
	kiln_tree_progress(t, &credited, planned, 1, planned);
	free(wk);
	free(path);
	kiln_tree_settled(t, k, r);
}
