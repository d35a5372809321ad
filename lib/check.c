/*
 * check.c - `kiln check`: does the tree on disk match its manifest?
 *
 * Writes nothing.  The manifest is the claim ("these assets, with these
 * digests, have these siblings"); check tests the claim against the disk
 * in both directions: every asset and sibling on disk must be recorded,
 * every record must be on disk, and every recorded sibling must decode (with
 * the independent decoders) to the source as it is now.  A sibling that
 * decodes to an older version of its source is exactly what nginx would
 * serve stale, so this is the test a CI gate wants.
 */
#include "run.h"

#include "classify.h"
#include "codec.h"
#include "hash.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void problem(struct kiln_run *run, uint64_t *n, kiln_event ev, const char *path,
		    int coding, const char *detail)
{
	struct kiln_error err = { KILN_OK, 0, detail, "" };

	(*n)++;
	kiln_run_event(run, ev, path, coding, detail ? &err : NULL);
}

static void io_error(struct kiln_run *run, const char *root, const char *rel,
		     const struct kiln_error *err)
{
	struct kiln_report r = { .root = root, .path = rel, .outcome = KILN_OUTCOME_ERROR };

	r.error = *err;
	kiln_run_report(run, &r);
}

/* Does SIB (a regular file) decode with coding C to the LEN bytes of the
 * source SRC_FD?  Both are read in chunks: memory does not grow with size. */
static bool sibling_matches(const char *sib, kiln_coding c, int src_fd, uint64_t len)
{
	int fd = open(sib, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     kiln_codecs[c]->verify_fd(fd, (uint64_t)st.st_size, src_fd, len) == KILN_OK;
	close(fd);
	return ok;
}

/* One asset on disk against its record. */
static void check_asset(struct kiln_run *run, const char *root, const struct kiln_entry *e,
			uint64_t *n)
{
	struct kiln_prev_entry *pe = kiln_state_find(&run->state, e->rel);
	char *path = kiln_run_join(root, e->rel, "");
	uint8_t sha[32], sha384[48];
	struct kiln_error err = { 0 };
	struct stat st;
	int fd = -1;

	if (!path)
		return;
	if (pe)
		pe->seen = true; /* present, even if it cannot be read */
	fd = kiln_source_open(path, e->via_link, &e->st, &st, &err);
	if (fd < 0 || kiln_source_hash(fd, &st, sha, sha384, &err) != KILN_OK) {
		io_error(run, root, e->rel, &err);
		run->remove_failed = true; /* an I/O error: exit 1 */
		goto out;
	}
	if (!pe) {
		problem(run, n, KILN_EVENT_OUT_OF_DATE, path, -1, "not in the manifest");
		goto out;
	}
	if (pe->size != (uint64_t)st.st_size || memcmp(pe->sha256, sha, 32) != 0)
		problem(run, n, KILN_EVENT_OUT_OF_DATE, path, -1, "changed since the manifest");
	for (int c = 0; c < KILN_NCODINGS; c++) {
		char *sib = kiln_run_join(root, e->rel, kiln_codecs[c]->suffix);
		struct stat sst;
		bool exists = sib && lstat(sib, &sst) == 0;

		if (pe->coding[c].kept && !exists)
			problem(run, n, KILN_EVENT_MISSING_SIBLING, path, c, NULL);
		else if (pe->coding[c].kept &&
			 !sibling_matches(sib, (kiln_coding)c, fd, (uint64_t)st.st_size))
			problem(run, n, KILN_EVENT_STALE_SIBLING, path, c, NULL);
		free(sib);
	}
out:
	if (fd >= 0)
		close(fd);
	free(path);
}

kiln_status kiln_check_tree(struct kiln_run *run, const char *root_arg, uint64_t *problems)
{
	struct kiln_options opt = run->opt;
	struct kiln_walk walk = { 0 };
	struct kiln_error err = { 0 };
	char *root = kiln_run_root(root_arg), *mpath = NULL;
	struct stat own[1];
	size_t nown = 0;
	kiln_status ret;

	*problems = 0;
	if (!root)
		return KILN_ERR_NOMEM;
	run->remove_failed = false;
	kiln_state_free(&run->state);
	mpath = kiln_run_manifest_path(run, root);
	if (mpath && stat(mpath, &own[0]) == 0)
		nown = 1;
	opt.n_include = opt.n_exclude = 0; /* every file is an asset of the manifest */
	ret = kiln_walk(root, &opt, own, nown, &walk, &err);
	if (ret != KILN_OK) {
		struct kiln_report r = { .root = root, .path = "", .outcome = KILN_OUTCOME_ERROR };
		r.error = err;
		if (ret == KILN_ERR_IO)
			kiln_run_report(run, &r);
		goto out;
	}
	if (!mpath || kiln_state_load(mpath, &run->state, &err) != KILN_OK || !run->state.loaded) {
		problem(run, problems, KILN_EVENT_NO_MANIFEST, mpath ? mpath : root, -1,
			err.what ? err.what : NULL);
		goto out;
	}
	for (size_t i = 0; i < walk.n; i++) {
		const struct kiln_entry *e = &walk.v[i];
		const char *base = strrchr(e->rel, '/');
		char *path;

		base = base ? base + 1 : e->rel;
		switch (e->outcome) {
		case KILN_OUTCOME_ERROR:
			io_error(run, root, e->rel, &e->err);
			run->remove_failed = true;
			break;
		case KILN_OUTCOME_SIBLING:
			if (kiln_is_own_output(base) ||
			    (nown && own[0].st_ino == e->st.st_ino && own[0].st_dev == e->st.st_dev))
				break;
			if (!kiln_state_records_sibling(&run->state, e->rel) && (path = kiln_run_join(root, e->rel, ""))) {
				problem(run, problems, KILN_EVENT_UNRECORDED_SIBLING, path, -1, NULL);
				free(path);
			}
			break;
		case KILN_OUTCOME_CANDIDATE:
			/* "X.gz" whose X is recorded but gone is an orphan, not an asset */
			if (!kiln_state_find(&run->state, e->rel) && kiln_state_records_sibling(&run->state, e->rel))
				break;
			check_asset(run, root, e, problems);
			break;
		default: /* symlinks and special files are not assets */
			break;
		}
	}
	for (size_t i = 0; i < run->state.n; i++) {
		const struct kiln_prev_entry *pe = &run->state.v[i];
		char *path;
		if (pe->seen || !(path = kiln_run_join(root, pe->rel, "")))
			continue;
		problem(run, problems, KILN_EVENT_OUT_OF_DATE, path, -1,
			"in the manifest, not in the tree");
		for (int c = 0; c < KILN_NCODINGS; c++) {
			char *sib = kiln_run_join(root, pe->rel, kiln_codecs[c]->suffix);
			struct stat st;
			if (pe->coding[c].kept && sib && lstat(sib, &st) == 0)
				problem(run, problems, KILN_EVENT_ORPHANED_SIBLING, sib, c, NULL);
			free(sib);
		}
		free(path);
	}
	ret = run->remove_failed ? KILN_ERR_IO : KILN_OK;
out:
	kiln_walk_free(&walk);
	kiln_state_free(&run->state);
	free(mpath);
	free(root);
	return ret;
}
