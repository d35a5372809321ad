/* previous.c - see previous.h. */
#include "previous.h"

#include "classify.h"
#include "codec.h"
#include "error.h"
#include "hash.h"
#include "index.h"
#include "outputs.h"
#include "shard.h"
#include "sibling.h"
#include "source.h"
#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keep the sibling REL (its own path) of coding C, SIZE bytes with SHA256,
 * in T's record as stale. */
static void keep_stale(struct kiln_tree *t, const char *rel, kiln_coding c, uint64_t size,
		       const uint8_t sha256[32])
{
	kiln_ledger_keep_stale(&t->ledger, rel, c, size, sha256);
}

/* SHA-256 and size of the regular file at PATH (links not followed); false
 * if it cannot be read (out of memory too: then T's record is lost). */
static bool file_sha256(struct kiln_tree *t, const char *path, uint64_t *size, uint8_t out[32])
{
	kiln_status ret = kiln_file_digest_beneath(t->root, path, size, out);

	if (ret == KILN_ERR_NOMEM)
		kiln_ledger_lost(&t->ledger);
	return ret == KILN_OK;
}

/*
 * SIB, a sibling of coding C that kiln did not write (or no longer holds
 * what it wrote), is left in place: point it out.  One that does not decode
 * to its source is stale, and a server would send it: a failure of the
 * tree, whether or not the coding is requested.  One that decodes is
 * mentioned only for a requested coding (or when ALWAYS).
 */
static void point_out(struct kiln_tree *t, const char *sib, kiln_coding c, int src_fd,
		      uint64_t src_size, bool always)
{
	struct stat st, sst;
	char *src = NULL;
	int own_fd = -1;

	if (kiln_beneath_lstat(t->root, sib, &st) != 0)
		return;
	if (src_fd < 0 && S_ISREG(st.st_mode) &&
	    (src = strndup(sib, strlen(sib) - strlen(kiln_codecs[c]->info.suffix))) &&
	    (own_fd = kiln_beneath_open(t->root, src, O_RDONLY | O_NONBLOCK, 0)) >= 0 &&
	    fstat(own_fd, &sst) == 0 && S_ISREG(sst.st_mode)) {
		/* no source given (clean): the one beside it, to tell */
		src_fd = own_fd;
		src_size = (uint64_t)sst.st_size;
	}
	free(src);
	if (S_ISREG(st.st_mode) && kiln_sibling_decodes(t->root, sib, c, src_fd, src_size) == 0) {
		kiln_ledger_foreign_stale(&t->ledger);
		kiln_tree_event(t, KILN_EVENT_FOREIGN_STALE, sib, (int)c, NULL);
	} else if (always || (t->opt->codings & (1u << c))) {
		kiln_tree_event(t, KILN_EVENT_FOREIGN, sib, (int)c, NULL);
	}
	if (own_fd >= 0)
		close(own_fd);
}

struct owner {
	const struct kiln_prev_entry *pe;
	kiln_coding c;
};

static bool owned_by_entry(const void *arg, uint64_t size, const uint8_t sha[32])
{
	const struct owner *o = arg;

	return kiln_state_owns(o->pe, o->c, size, sha);
}

static bool owned_as_stale(const void *arg, uint64_t size, const uint8_t sha[32])
{
	const struct kiln_stale *s = arg;

	return s->size == size && memcmp(s->sha256, sha, 32) == 0;
}

/* Does ST, the status of O's sibling, match the stamp of O's record? */
static bool stamped_as(const void *arg, const struct stat *st)
{
	const struct owner *o = arg;
	struct kiln_stat ks = kiln_stat_of(st);

	return o->pe->in_manifest && kiln_index_matches(&o->pe->rec, &ks, (int)o->c);
}

/* Keep on record, as stale, every version of O's sibling the record knows
 * (SIB_REL names it): its bytes cannot be read to tell which is there. */
static void keep_recorded(struct kiln_tree *t, const struct owner *o, const char *sib_rel)
{
	const struct kiln_coding_record *cr = &o->pe->rec.coding[o->c];

	if (o->pe->in_manifest && cr->outcome == KILN_CODING_KEPT)
		keep_stale(t, sib_rel, o->c, cr->size, cr->sha256);
	for (size_t i = 0; i < o->pe->njv; i++)
		if (o->pe->jv[i].coding == o->c)
			keep_stale(t, sib_rel, o->c, o->pe->jv[i].size, o->pe->jv[i].sha256);
}

/* Remove REL's sibling of coding C if OWNED(ARG, its size, its digest)
 * says it is what kiln wrote; see kiln_prev_remove_recorded().  SRC_FD
 * (SRC_SIZE bytes) is the source, or -1. */
static bool remove_sibling(struct kiln_tree *t, const char *rel, kiln_coding c,
			   bool (*owned)(const void *arg, uint64_t size, const uint8_t sha[32]),
			   const void *arg, int src_fd, uint64_t src_size)
{
	const char *suffix = kiln_codecs[c]->info.suffix;
	/* on the stack: a removal must not need memory (a run out of it
	 * still removes what a changed source made stale) */
	char sib[PATH_MAX], *sib_rel = NULL;
	struct kiln_error err = { KILN_ERR_IO, 0, "cannot remove stale sibling", "" };
	uint8_t sha[32];
	uint64_t size;
	struct stat st;
	bool removed = false;

	if ((size_t)snprintf(sib, sizeof(sib), "%s/%s%s", t->root, rel, suffix) >= sizeof(sib)) {
		kiln_ledger_lost(&t->ledger);
		return false;
	}
	if (kiln_beneath_lstat(t->root, sib, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			/* already gone, or out of reach behind a link */
			char *link = kiln_beneath_link_on_way(t->root, sib);
			if (link) {
				struct kiln_error why = { KILN_OK, 0, link, "" };
				kiln_tree_event(t, KILN_EVENT_BEHIND_LINK, sib, (int)c, &why);
			}
			free(link);
			goto out;
		}
		err.errnum = errno;
	} else if (!S_ISREG(st.st_mode)) {
		point_out(t, sib, c, src_fd, src_size, true);
		goto out;
	} else if (owned == owned_by_entry && !t->opt->reread && stamped_as(arg, &st)) {
		/* its stamp proves it the record's bytes (index.h): not read */
		size = (uint64_t)st.st_size;
		memcpy(sha, ((const struct owner *)arg)->pe->rec.coding[c].sha256, 32);
	} else if (errno = 0, !file_sha256(t, sib, &size, sha)) {
		err.errnum = errno ? errno : EIO;
	}
	if (err.errnum) {
		/* cannot be looked at (a directory kiln cannot search, a file
		 * it cannot read): still there as far as anyone knows, so every
		 * version the record knows stays on record, as stale */
		kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, sib, (int)c, &err);
		kiln_ledger_remove_failed(&t->ledger);
		if (!(sib_rel = kiln_path_join("", rel, suffix)))
			kiln_ledger_lost(&t->ledger);
		else if (owned == owned_as_stale)
			keep_stale(t, sib_rel + 1, c, ((const struct kiln_stale *)arg)->size,
				   ((const struct kiln_stale *)arg)->sha256);
		else
			keep_recorded(t, arg, sib_rel + 1);
		goto out;
	}
	if (!owned(arg, size, sha)) {
		point_out(t, sib, c, src_fd, src_size, true);
		goto out;
	}
	if (!t->opt->dry_run && kiln_sibling_remove(t->root, sib) != 0) {
		err.errnum = errno;
		kiln_tree_event(t, KILN_EVENT_REMOVE_FAILED, sib, (int)c, &err);
		kiln_ledger_remove_failed(&t->ledger);
		if ((sib_rel = kiln_path_join("", rel, suffix)))
			keep_stale(t, sib_rel + 1, c, size, sha);
		else
			kiln_ledger_lost(&t->ledger);
		goto out;
	}
	kiln_tree_event(t, KILN_EVENT_REMOVED, sib, (int)c, NULL);
	removed = true;
out:
	free(sib_rel);
	return removed;
}


bool kiln_prev_remove_recorded(struct kiln_tree *t, const struct kiln_prev_entry *pe,
			       kiln_coding c)
{
	struct owner o = { pe, c };

	return remove_sibling(t, pe->rec.rel, c, owned_by_entry, &o, -1, 0);
}

bool kiln_prev_foreign_at(struct kiln_tree *t, const struct kiln_prev_entry *pe, const char *rel,
			  kiln_coding c, int src_fd, uint64_t src_size, bool *decodes)
{
	char *sib = kiln_path_join(t->root, rel, kiln_codecs[c]->info.suffix);
	uint8_t sha[32];
	uint64_t size;
	struct stat st;
	bool foreign = false;

	*decodes = false;
	if (!sib || kiln_beneath_lstat(t->root, sib, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	/* the record's own sibling (its digest proves it) is no news */
	if (pe && kiln_state_has_sibling(pe, c) && file_sha256(t, sib, &size, sha) &&
	    kiln_state_owns(pe, c, size, sha))
		goto out;
	foreign = true;
	*decodes = kiln_sibling_decodes(t->root, sib, c, src_fd, src_size) == 1;
out:
	free(sib);
	return foreign;
}

void kiln_prev_keep_stale(struct kiln_tree *t, const struct kiln_prev_entry *pe, kiln_coding c)
{
	const char *suffix = kiln_codecs[c]->info.suffix;
	char *sib = kiln_path_join(t->root, pe->rec.rel, suffix);
	uint8_t sha[32];
	uint64_t size;

	struct stat st;

	if (!sib)
		kiln_ledger_lost(&t->ledger);
	else if (file_sha256(t, sib, &size, sha)) {
		if (kiln_state_owns(pe, c, size, sha))
			keep_stale(t, sib + strlen(t->root) + 1, c, size, sha);
	} else if (kiln_beneath_lstat(t->root, sib, &st) == 0 ||
		   (errno != ENOENT && errno != ENOTDIR)) {
		/* there, but its bytes cannot be read: every version on record */
		struct owner o = { pe, c };
		keep_recorded(t, &o, sib + strlen(t->root) + 1);
	}
	free(sib);
}

bool kiln_prev_remove_stale(struct kiln_tree *t, const struct kiln_stale *s)
{
	size_t n = strlen(s->rel) - strlen(kiln_codecs[s->coding]->info.suffix);
	char *src = strndup(s->rel, n);
	bool removed = src && remove_sibling(t, src, s->coding, owned_as_stale, s, -1, 0);

	if (!src)
		kiln_ledger_lost(&t->ledger);
	free(src);
	return removed;
}

void kiln_prev_no_sibling(struct kiln_tree *t, const struct kiln_prev_entry *pe,
			  const char *rel, kiln_coding c, int src_fd, uint64_t src_size)
{
	struct owner o = { pe, c };
	char *sib;

	if (pe && kiln_state_has_sibling(pe, c)) {
		remove_sibling(t, pe->rec.rel, c, owned_by_entry, &o, src_fd, src_size);
		return;
	}
	if (!(sib = kiln_path_join(t->root, rel, kiln_codecs[c]->info.suffix)))
		return;
	point_out(t, sib, c, src_fd, src_size, false);
	free(sib);
}

void kiln_prev_remove_all(struct kiln_tree *t, const struct kiln_prev_entry *pe)
{
	for (unsigned c = 0; pe && c < kiln_ncodecs; c++)
		if (kiln_state_has_sibling(pe, (kiln_coding)c))
			kiln_prev_remove_recorded(t, pe, (kiln_coding)c);
}

uint64_t kiln_prev_tried(const struct kiln_prev_entry *pe, kiln_coding c, const char *recipe,
			 uint64_t src_size, const uint8_t src_sha[32])
{
	const struct kiln_coding_record *cr;

	if (!pe || !pe->in_manifest || pe->rec.size != src_size ||
	    memcmp(pe->rec.sha256, src_sha, 32) != 0)
		return 0;
	cr = &pe->rec.coding[c];
	if (cr->outcome != KILN_CODING_NO_GAIN || !*cr->recipe || strcmp(cr->recipe, recipe) != 0)
		return 0;
	return cr->size;
}

/* The file FD (status ST) passes --verify against the source. */
static bool decodes(struct kiln_tree *t, kiln_coding c, int fd, const struct stat *st,
		    const struct stat *src_st, const uint8_t *src, int src_fd)
{
	const struct kiln_codec *codec = kiln_codecs[c];
	struct kiln_error err;
	uint8_t *buf = NULL;
	bool good;

	if (!t->opt->verify)
		return true;
	if (!src)
		return codec->verify_fd(fd, (uint64_t)st->st_size, src_fd,
					(uint64_t)src_st->st_size) == KILN_OK;
	good = kiln_source_read(fd, st, &buf, &err) == KILN_OK &&
	       codec->verify(buf, (size_t)st->st_size, src, (size_t)src_st->st_size) == KILN_OK;
	free(buf);
	return good;
}

bool kiln_prev_reusable(struct kiln_tree *t, const char *rel, const struct kiln_prev_entry *pe,
			kiln_coding c, const char *recipe, const struct stat *src_st,
			const uint8_t src_sha[32], const uint8_t *src, int src_fd,
			uint64_t *size, uint8_t sha256[32], struct stat *seen)
{
	const struct kiln_coding_record *cr = pe ? &pe->rec.coding[c] : NULL;
	uint64_t src_size = (uint64_t)src_st->st_size;
	bool from_manifest, hashed = false, ok = false;
	uint8_t file_sha[32], sha384[48];
	struct kiln_error err;
	struct stat st;
	char *sib;
	int fd;

	if (!pe || !*recipe)
		return false;
	from_manifest = pe->in_manifest && pe->rec.size == src_size &&
			memcmp(pe->rec.sha256, src_sha, 32) == 0 &&
			cr->outcome == KILN_CODING_KEPT && strcmp(cr->recipe, recipe) == 0;
	if (!from_manifest && pe->njv == 0)
		return false;
	if (!(sib = kiln_path_join(t->root, rel, kiln_codecs[c]->info.suffix)))
		return false;
	fd = kiln_beneath_open(t->root, sib, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	if (from_manifest && (uint64_t)st.st_size == cr->size) {
		/* the record's own sibling: its stamp (index.h) proves it
		 * unchanged since kiln wrote or checked it, so that a file whose
		 * siblings are untouched reads none of them; unless a journal or
		 * a shard's part says other bytes were put there since (a run
		 * killed, or a shard run, on other content of the source).
		 * Without a stamp that still holds, only its digest proves it:
		 * its size and mtime may be kept by whatever wrote it. */
		struct kiln_stat ks = kiln_stat_of(&st);
		bool doubt = t->opt->reread || !kiln_index_matches(&pe->rec, &ks, (int)c);
		for (size_t i = 0; !doubt && i < pe->njv; i++)
			doubt = pe->jv[i].coding == c && memcmp(pe->jv[i].sha256, cr->sha256, 32) != 0;
		if (!doubt) {
			memcpy(sha256, cr->sha256, 32);
			ok = true;
		} else if (kiln_source_hash(fd, &st, file_sha, sha384, &err) == KILN_OK) {
			hashed = true;
			if (memcmp(file_sha, cr->sha256, 32) == 0) {
				memcpy(sha256, file_sha, 32);
				ok = true;
			}
		}
	}
	/* a journal's: proved by its digest, as nothing else vouches for it */
	for (size_t i = pe->njv; !ok && i-- > 0;) {
		const struct kiln_journaled *j = &pe->jv[i];
		if (j->coding != c || !j->src_known || j->src_size != src_size ||
		    memcmp(j->src_sha256, src_sha, 32) != 0 || strcmp(j->recipe, recipe) != 0 ||
		    j->size != (uint64_t)st.st_size)
			continue;
		if (!hashed && kiln_source_hash(fd, &st, file_sha, sha384, &err) != KILN_OK)
			break;
		hashed = true;
		if (memcmp(file_sha, j->sha256, 32) == 0) {
			memcpy(sha256, file_sha, 32);
			ok = true;
		}
	}
	if (!ok || !decodes(t, c, fd, &st, src_st, src, src_fd)) {
		ok = false;
		goto out;
	}
	*size = (uint64_t)st.st_size;
	/* hard-linked elsewhere, and not its source's: written again, as a
	 * new inode */
	ok = kiln_sibling_fix_meta_fd(fd, &st, src_st, t->opt->dry_run) && fstat(fd, seen) == 0;
out:
	if (fd >= 0)
		close(fd);
	free(sib);
	return ok;
}

/* Could the walk error E hide a file that still exists?  An unreadable
 * directory or file does; a dangling link, a loop or a link that now points
 * outside the tree is no source at all any more. */
static bool hides_source(const struct kiln_entry *e)
{
	return e->outcome == KILN_OUTCOME_ERROR && e->err.status == KILN_ERR_IO &&
	       e->err.errnum != ENOENT && e->err.errnum != ELOOP && e->err.errnum != ENOTDIR;
}

/* Carry over the records of REL, which the walk could not read, and of
 * everything below it. */
static void carry(struct kiln_tree *t, const char *rel)
{
	size_t n = strlen(rel);

	for (size_t i = 0; i < t->state.n; i++) {
		struct kiln_prev_entry *pe = &t->state.v[i];
		if (pe->seen || strncmp(pe->rec.rel, rel, n) != 0 ||
		    (pe->rec.rel[n] != '/' && pe->rec.rel[n] != '\0') ||
		    !kiln_shard_mine(t->opt, pe->rec.rel))
			continue;
		pe->seen = true;
		/* journaled siblings with no manifest entry cannot be carried as
		 * a record: they stay known as stale, to go once readable */
		for (size_t j = 0; j < pe->njv; j++) {
			char *sib = kiln_path_join("", pe->rec.rel,
						   kiln_codecs[pe->jv[j].coding]->info.suffix);
			if (sib)
				keep_stale(t, sib + 1, pe->jv[j].coding, pe->jv[j].size,
					   pe->jv[j].sha256);
			else
				kiln_ledger_lost(&t->ledger);
			free(sib);
		}
		if (pe->in_manifest)
			kiln_ledger_carry(&t->ledger, &pe->rec);
	}
}

/* Is the stale sibling S of a source in T's shard? */
static bool stale_mine(const struct kiln_tree *t, const struct kiln_stale *s)
{
	size_t n = strlen(s->rel), sl = strlen(kiln_codecs[s->coding]->info.suffix);
	char *src;
	bool mine;

	if (!t->opt->shard_count || n <= sl)
		return true;
	if (!(src = strndup(s->rel, n - sl)))
		return true; /* rather once too often than never */
	mine = kiln_shard_mine(t->opt, src);
	free(src);
	return mine;
}

/* The stale siblings the record lists: removed while they hold those
 * bytes; one that holds other bytes now is no longer the stale one. */
static void retry_stale(struct kiln_tree *t)
{
	for (size_t i = 0; i < t->state.nstale; i++) {
		const struct kiln_stale *s = &t->state.stale[i];
		char *path = kiln_path_join(t->root, s->rel, "");
		uint8_t sha[32];
		uint64_t size;
		struct stat st;
		if (!stale_mine(t, s))
			; /* another shard's, kept in its part */
		else if (!path)
			kiln_ledger_lost(&t->ledger);
		else if (kiln_beneath_lstat(t->root, path, &st) != 0 &&
			 (errno == ENOENT || errno == ENOTDIR))
			; /* gone: off the record */
		else if (!file_sha256(t, path, &size, sha) || owned_as_stale(s, size, sha))
			kiln_prev_remove_stale(t, s); /* removed, or kept on record */
		free(path);
	}
}

/*
 * E is named like a sibling the record holds, and its source is gone.  If
 * its bytes are not what kiln wrote there, someone replaced the sibling with
 * a file of their own: it is theirs now, an asset like any other (as a
 * `.tar.gz` download is), and kiln says so instead of leaving it neither
 * removed nor recorded.
 */
static void disown_foreign_orphan(struct kiln_tree *t, struct kiln_entry *e)
{
	kiln_coding c = kiln_sibling_coding(e->rel);
	size_t n = strlen(e->rel) - (c >= 0 ? strlen(kiln_codecs[c]->info.suffix) : 0);
	char *src = strndup(e->rel, n), *path = kiln_path_join(t->root, e->rel, "");
	struct kiln_prev_entry *pe = src ? kiln_state_find(&t->state, src) : NULL;
	struct kiln_error err = { KILN_OK, 0, "its source is gone: kept as an asset of its own", "" };
	uint8_t sha[32];
	uint64_t size;
	bool owned = false;

	if (c < 0 || !path || (pe && pe->seen) || !file_sha256(t, path, &size, sha))
		goto out; /* a sibling after all, or unreadable: left to the rest */
	owned = pe && kiln_state_owns(pe, c, size, sha);
	for (size_t i = 0; !owned && i < t->state.nstale; i++)
		owned = strcmp(t->state.stale[i].rel, e->rel) == 0 &&
			owned_as_stale(&t->state.stale[i], size, sha);
	if (owned)
		goto out;
	e->outcome = e->was;
	if (pe) { /* nothing of kiln's to remove there any more */
		pe->rec.coding[c].outcome = KILN_CODING_OFF;
		for (size_t i = 0; i < pe->njv; i++)
			if (pe->jv[i].coding == c)
				pe->jv[i].coding = -1;
	}
	kiln_tree_event(t, KILN_EVENT_FOREIGN, path, (int)c, &err);
out:
	e->was = 0;
	free(src);
	free(path);
}

/* The record from the index, when it is the manifest's (index.h): then
 * true, and t->quick set when it was made under these options and a file
 * that matches its stamp may go unread. */
static bool load_index(struct kiln_tree *t)
{
	const struct kiln_options *opt = t->opt;
	uint8_t digest[32];

	if (!t->index_path ||
	    !kiln_index_load(t->index_path, t->manifest_path, &t->top, &t->state, digest))
		return false;
	t->quick = memcmp(digest, t->digest, 32) == 0 && t->local && !opt->force && !opt->reread &&
		   !opt->n_previous;
	/* Made under other options, a stamp proves a record's bytes but not
	 * its decisions: this run's index, written under these options, must
	 * not carry it for a file this run does not decide again (one it is
	 * cancelled or fails before): the next run reads that file. */
	if (memcmp(digest, t->digest, 32) != 0)
		for (size_t i = 0; i < t->state.n; i++)
			t->state.v[i].rec.stamped = KILN_STAMP_NONE;
	return true;
}

kiln_status kiln_prev_load(struct kiln_tree *t, struct kiln_error *err, char **where)
{
	struct kiln_error bad_err;
	char *bad = NULL;
	kiln_status ret;

	*where = t->manifest_path;
	if (!t->opt->write_manifest)
		return KILN_OK; /* no record is kept (run.c refused a tree that has one) */
	if (t->manifest_path && !load_index(t) &&
	    (ret = kiln_state_load(t->manifest_path, &t->state, err)) != KILN_OK) {
		kiln_state_free(&t->state);
		if (ret != KILN_ERR_INVALID)
			return ret;
		/* a path given with --manifest names a file on purpose: one that
		 * is not kiln's is someone's (an asset of the tree, perhaps) */
		if (t->opt->manifest_path) {
			kiln_fail(err, KILN_ERR_IO, 0, "not a kiln manifest, so not replaced (give "
				  "--manifest a new path, or kiln's manifest's)");
			return KILN_ERR_IO;
		}
		kiln_tree_event(t, KILN_EVENT_STATE_IGNORED, t->manifest_path, -1, err);
	}
	if ((ret = kiln_outputs_manifest_owner(t, &t->state, err)) != KILN_OK) {
		kiln_state_free(&t->state);
		return ret;
	}
	/* siblings written by runs that died before their manifest are kiln's
	 * too, and so are those the parts of shard runs record */
	if (kiln_journal_merge(t->root, &t->state) != KILN_OK ||
	    (t->manifest_path &&
	     kiln_parts_merge(t->manifest_path, &t->state, &t->parts_seen, &bad, &bad_err) !=
		     KILN_OK)) {
		kiln_state_free(&t->state);
		free(bad);
		*err = (struct kiln_error){ KILN_ERR_NOMEM, ENOMEM, "cannot read the journals", "" };
		return KILN_ERR_NOMEM;
	}
	if (bad) {
		/* a part kiln cannot read or parse is a record it cannot read
		 * (its name is kiln's: it is no one else's file) */
		kiln_state_free(&t->state);
		*err = bad_err;
		*where = bad;
		return KILN_ERR_IO;
	}
	/* each walk entry's record, found once (the state is complete now) */
	if ((t->prev_of = malloc((t->walk.n + 1) * sizeof(*t->prev_of))))
		for (size_t k = 0; k < t->walk.n; k++)
			t->prev_of[k] = kiln_state_find(&t->state, t->walk.v[k].rel);
	for (size_t k = 0; k < t->walk.n; k++) {
		struct kiln_entry *e = &t->walk.v[k];
		struct kiln_prev_entry *pe = kiln_tree_prev(t, k);
		/* "X.gz" the record holds as kiln's: a sibling (removed if its
		 * source is gone), never an asset, whatever the walk thought */
		if ((e->outcome == KILN_OUTCOME_CANDIDATE || e->outcome == KILN_OUTCOME_EXCLUDED) &&
		    !(pe && pe->in_manifest) && kiln_state_records_sibling(&t->state, e->rel)) {
			e->was = e->outcome;
			e->outcome = KILN_OUTCOME_SIBLING;
			pe = NULL;
		}
		if (hides_source(e)) {
			carry(t, e->rel);
			continue;
		}
		/* gone as a source, or no longer a regular file one (a link not
		 * followed, a FIFO): its siblings go too */
		if (e->outcome == KILN_OUTCOME_ERROR || e->outcome == KILN_OUTCOME_SYMLINK ||
		    e->outcome == KILN_OUTCOME_SPECIAL)
			continue;
		if (pe && e->outcome != KILN_OUTCOME_SIBLING)
			pe->seen = true;
	}
	for (size_t k = 0; k < t->walk.n; k++)
		if (t->walk.v[k].was && kiln_shard_mine(t->opt, t->walk.v[k].rel))
			disown_foreign_orphan(t, &t->walk.v[k]);
	/* another shard's records are its business: none of them is a deleted
	 * file's here */
	for (size_t i = 0; i < t->state.n; i++)
		if (!kiln_shard_mine(t->opt, t->state.v[i].rec.rel))
			t->state.v[i].seen = true;
	if (!t->opt->dry_run)
		retry_stale(t);
	return KILN_OK;
}

/* Temporary files left by a run that was killed: remove the stale ones. */
static void remove_dead_temps(struct kiln_tree *t)
{
	for (size_t i = 0; i < t->walk.n && !t->opt->dry_run; i++) {
		const struct kiln_entry *e = &t->walk.v[i];
		const char *base = strrchr(e->rel, '/');
		char *path;

		if (!kiln_is_temp_name(base ? base + 1 : e->rel) || !S_ISREG(e->st.st_mode))
			continue;
		path = kiln_path_join(t->root, e->rel, "");
		if (path && kiln_temp_remove_dead(t->root, path) == 0)
			kiln_tree_event(t, KILN_EVENT_TEMP_REMOVED, path, -1, NULL);
		free(path);
	}
}

void kiln_prev_finish(struct kiln_tree *t)
{
	for (size_t i = 0; i < t->state.n; i++)
		if (!t->state.v[i].seen)
			kiln_prev_remove_all(t, &t->state.v[i]);
	remove_dead_temps(t);
}
