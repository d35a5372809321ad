/*
 * serve_table.c - a tree's manifest read into the table `kiln serve`
 * answers from (serve.h).
 *
 * The manifest is read by the same reader every other command uses
 * (state.c), which trusts nothing in it: malformed entries are dropped and
 * every path stays inside the tree.  What it adds here is what serving
 * needs: each representation's file, size and ETag, the media type, and a
 * check that each recorded sibling is on disk with its recorded size, so
 * that a sibling the table offers is one that was there at load (the file
 * is checked again when a request opens it); each source's status at load,
 * which its siblings are offered against; and the files it did not find,
 * for the poll to look for again.
 */
#include "serve.h"

#include "beneath.h"
#include "codec.h"
#include "hash.h"
#include "index.h"
#include "mime.h"
#include "paths.h"
#include "server.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_NAME "kiln-manifest.json"
/* Most files left out at load that each poll looks for again (a tree
 * still being copied in may miss them all; past this many, a new manifest
 * or SIGHUP brings them in). */
#define ABSENT_MAX 4096

static void set_err(struct kiln_error *err, kiln_status st, int errnum, const char *what)
{
	err->status = st;
	err->errnum = errnum;
	err->what = what;
	err->suffix = "";
}

static void etag_of(const uint8_t sha[32], char out[24])
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '"';
	for (int i = 0; i < 10; i++) {
		out[1 + 2 * i] = hex[sha[i] >> 4];
		out[2 + 2 * i] = hex[sha[i] & 15];
	}
	out[21] = '"';
	out[22] = '\0';
}

/* Are the SIZE bytes of the file open at FD those whose SHA-256 is SHA
 * (and no more)? */
static bool digest_is(int fd, uint64_t size, const uint8_t sha[32])
{
	struct kiln_hasher *hs = kiln_hasher_new();
	uint8_t buf[65536], got[32];
	uint64_t off = 0;
	ssize_t n = 0;

	if (!hs)
		return false;
	while (off < size && (n = kiln_pread_full(fd, buf, sizeof(buf), off)) > 0) {
		kiln_hasher_update(hs, buf, (size_t)n);
		off += (uint64_t)n;
	}
	return kiln_hasher_final(hs, got, NULL) == KILN_OK && off == size &&
	       kiln_pread_full(fd, buf, 1, off) == 0 && memcmp(got, sha, 32) == 0;
}

/* Is REL on disk with SIZE bytes (and, VERIFY, the digest SHA)? */
static bool on_disk_as(const struct kiln_srv_table *t, const char *rel, uint64_t size,
		       const uint8_t sha[32], bool verify)
{
	struct stat sb;
	int fd = kiln_beneath_openat(t->topfd, rel, O_RDONLY | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == size &&
	     (!verify || digest_is(fd, size, sha));
	close(fd);
	return ok;
}

/* Is REL a regular file beneath T's top of exactly SIZE bytes (and, when
 * T verifies, with SHA-256 SHA)? */
static bool on_disk(const struct kiln_srv_table *t, const char *rel, uint64_t size,
		    const uint8_t sha[32])
{
	return on_disk_as(t, rel, size, sha, t->verify);
}

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* REL (SIZE bytes, SHA) was not found as recorded: counted, and kept to
 * be looked for again at each poll (false: out of memory). */
static bool absent(struct kiln_srv_table *t, const char *rel, uint64_t size,
		   const uint8_t sha[32])
{
	struct kiln_srv_absent *x;

	t->missing++;
	if (t->nabsent == ABSENT_MAX)
		return true;
	if (!(t->nabsent & (t->nabsent + 1))) { /* 0, 1, 3, 7...: grow */
		x = realloc(t->absent, (t->nabsent * 2 + 1) * sizeof(*x));
		if (!x)
			return false;
		t->absent = x;
	}
	x = &t->absent[t->nabsent];
	if (!(x->rel = strdup(rel)))
		return false;
	x->size = size;
	memcpy(x->sha256, sha, 32);
	t->nabsent++;
	return true;
}

static void rep_free(const struct kiln_srv_table *t, struct kiln_srv_rep *r)
{
	void *c = atomic_load(&r->cache);

	if (c && t && t->cache_free)
		t->cache_free(c);
}

static void asset_free(const struct kiln_srv_table *t, struct kiln_srv_asset *a)
{
	rep_free(t, &a->rep[0]);
	for (unsigned i = 1; i < a->nreps; i++) {
		rep_free(t, &a->rep[i]);
		free(a->rep[i].rel);
	}
	for (size_t i = 0; i < a->ndeltas; i++) {
		rep_free(t, &a->deltas[i].rep);
		free(a->deltas[i].rep.rel);
	}
	free(a->deltas);
	free(a->use_as_dictionary);
	free(a->rel);
}

/* R's dictionary role and deltas into *A: false when out of memory. */
static bool dicts_of(struct kiln_srv_table *t, const struct kiln_record *r,
		     const char *url_prefix, struct kiln_srv_asset *a)
{
	struct kiln_serve s = { .url_prefix = url_prefix };
	struct kiln_serve_asset sa = { .rel = r->rel };
	char *family = NULL;

	sa.dictionary = r->fp.len && (r->outcome == KILN_OUTCOME_COMPRESSED ||
				      r->outcome == KILN_OUTCOME_NO_GAIN);
	if (sa.dictionary) {
		if (!(family = kiln_family_at(r->rel, r->fp.start, r->fp.len)))
			return false;
		sa.family = family;
		a->use_as_dictionary = kiln_serve_match(&s, &sa); /* NULL: none */
		free(family);
	}
	if (r->ndicts && !(a->deltas = calloc(r->ndicts, sizeof(*a->deltas))))
		return false;
	for (size_t i = 0; i < r->ndicts; i++) {
		const struct kiln_dict_record *d = &r->dicts[i];
		struct kiln_srv_delta *x = &a->deltas[a->ndeltas];
		char *p = kiln_dict_sibling_path("", r->rel, d->dict_sha256);

		if (!p)
			return false;
		memmove(p, p + 1, strlen(p)); /* "/REL..." -> "REL..." */
		if (!on_disk(t, p, d->size, d->sha256)) {
			bool ok = absent(t, p, d->size, d->sha256);
			free(p);
			if (!ok)
				return false;
			continue;
		}
		x->rep = (struct kiln_srv_rep){ .coding = -1, .token = kiln_codec_dcz.name,
						.rel = p, .size = d->size };
		etag_of(d->sha256, x->rep.etag);
		memcpy(x->dict, d->dict_sha256, 32);
		a->ndeltas++;
		t->ndeltas++;
	}
	return true;
}

static void table_free(struct kiln_srv_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		asset_free(t, &t->v[i]);
	free(t->v);
	for (size_t i = 0; i < t->nabsent; i++)
		free(t->absent[i].rel);
	free(t->absent);
	if (t->topfd >= 0)
		close(t->topfd);
	free(t);
}

/*
 * The source of R as it is now, opened beneath T's top: its status into
 * *SB; false when it is not there as a regular file.  *SAME: of the
 * recorded size and, when T verifies, digest.
 */
static bool source_at_load(const struct kiln_srv_table *t, const struct kiln_record *r,
			   struct stat *sb, bool *same)
{
	int fd = kiln_beneath_openat(t->topfd, r->rel, O_RDONLY | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, sb) == 0 && S_ISREG(sb->st_mode);
	close(fd);
	*same = ok && (uint64_t)sb->st_size == r->size &&
		(!t->verify || on_disk(t, r->rel, r->size, r->sha256));
	return ok;
}

/* The manifest's path: MANIFEST, or ROOT's own.  Malloc'ed; NULL when
 * out of memory. */
static char *manifest_path(const char *root, const char *manifest)
{
	char *p = manifest ? strdup(manifest) : malloc(strlen(root) + sizeof(MANIFEST_NAME) + 1);

	if (p && !manifest)
		sprintf(p, "%s/%s", root, MANIFEST_NAME);
	return p;
}

/* The status of the index beside the manifest at MPATH (NULL: out of
 * memory): its device, inode and mtime, all 0 when it is not there. */
static void index_status(const char *mpath, uint64_t *dev, uint64_t *ino, struct timespec *mtime)
{
	char *p = mpath ? kiln_index_path(mpath) : NULL;
	struct stat sb;

	*dev = *ino = 0;
	mtime->tv_sec = mtime->tv_nsec = 0;
	if (p && stat(p, &sb) == 0) {
		*dev = (uint64_t)sb.st_dev;
		*ino = (uint64_t)sb.st_ino;
		*mtime = sb.st_mtim;
	}
	free(p);
}

/* The index beside the manifest at MPATH, when it is that manifest's as
 * it is now, into *STAMPS: the stamps that prove a source unchanged since
 * kiln read it without reading it (index.h); empty otherwise. */
static void load_stamps(const struct kiln_srv_table *t, const char *mpath,
			struct kiln_state *stamps)
{
	char *p = mpath ? kiln_index_path(mpath) : NULL;
	uint8_t digest[32];
	struct stat top;

	if (p && fstat(t->topfd, &top) == 0)
		(void)kiln_index_load(p, mpath, &top, stamps, digest); /* empty if not */
	free(p);
}

/* The kept siblings of R that are there but do not carry the source's
 * mtime *SRC (kiln gives each its source's), as bits by coding; *THERE
 * the bits of those there at all.  A sibling dated otherwise was changed
 * since, or made from other bytes: when every one there is, the source
 * itself was edited since kiln ran, whatever its size. */
static unsigned misdated(const struct kiln_srv_table *t, const struct kiln_record *r,
			 const struct stat *src, unsigned *there)
{
	unsigned bad = 0;

	*there = 0;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const char *suffix = kiln_codec((kiln_coding)c)->info.suffix;
		char rel[PATH_MAX];
		struct stat sb;
		int fd;

		if (r->coding[c].outcome != KILN_CODING_KEPT ||
		    (size_t)snprintf(rel, sizeof(rel), "%s%s", r->rel, suffix) >= sizeof(rel) ||
		    (fd = kiln_beneath_openat(t->topfd, rel, O_RDONLY | O_NONBLOCK)) < 0)
			continue; /* not there: left out below */
		*there |= 1u << c;
		if (fstat(fd, &sb) == 0 && (sb.st_mtim.tv_sec != src->st_mtim.tv_sec ||
					    sb.st_mtim.tv_nsec != src->st_mtim.tv_nsec))
			bad |= 1u << c;
		close(fd);
	}
	return bad;
}

/* Entry PE of the manifest into *A (zeroed): 1; 0 when the source is not
 * on disk (the asset is left out, to be looked for again); -1 when out of
 * memory.  A source not as recorded is kept without its siblings. */
static int asset_of(struct kiln_srv_table *t, const struct kiln_prev_entry *pe,
		     const struct kiln_state *stamps, const char *url_prefix,
		     struct kiln_srv_asset *a)
{
	const struct kiln_record *r = &pe->rec;
	const struct kiln_prev_entry *stamp = stamps->n ? kiln_state_find(stamps, r->rel) : NULL;
	struct kiln_srv_rep *id = &a->rep[0];
	unsigned bad, there;
	struct kiln_stat ks;
	struct stat sb;
	bool same;

	if (!(a->rel = strdup(r->rel)))
		return -1;
	if (!source_at_load(t, r, &sb, &same))
		return absent(t, r->rel, r->size, r->sha256) ? 0 : -1;
	a->src_dev = (uint64_t)sb.st_dev;
	a->src_ino = (uint64_t)sb.st_ino;
	a->src_mtime = sb.st_mtim;
	atomic_init(&a->src_ctime, ns_of(sb.st_ctim));
	memcpy(a->src_sha256, r->sha256, 32);
	bad = misdated(t, r, &sb, &there);
	/* a source with siblings to offer is the manifest's bytes when its
	 * status is still the stamp kiln's index gives it (index.h: its ctime
	 * moves at any change); otherwise (no index, another manifest's, a
	 * chmod, a hard link, bytes written in place with the size and mtime
	 * put back) only its digest tells: read now (with --verify, already) */
	ks = kiln_stat_of(&sb);
	if (same && there && bad != there && !t->verify &&
	    !(stamp && kiln_index_matches(&stamp->rec, &ks, -1)))
		same = on_disk_as(t, r->rel, r->size, r->sha256, true);
	a->changed = !same || (there && bad == there);
	a->type = kiln_media_type(r->rel);
	a->immutable = r->fp.why != KILN_WHY_NONE;
	id->coding = -1;
	id->rel = a->rel;
	id->size = r->size;
	etag_of(r->sha256, id->etag);
	a->nreps = 1;
	if (a->changed) {
		t->nchanged++;
		return 1;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *cr = &r->coding[c];
		struct kiln_srv_rep *rep = &a->rep[a->nreps];
		const struct kiln_codec *k = kiln_codec((kiln_coding)c);

		if (cr->outcome != KILN_CODING_KEPT)
			continue;
		if (bad & (1u << c)) { /* dated otherwise: not the one kiln made */
			t->missing++;
			continue;
		}
		if (!(rep->rel = malloc(strlen(r->rel) + strlen(k->info.suffix) + 1)))
			return -1;
		strcpy(rep->rel, r->rel);
		strcat(rep->rel, k->info.suffix);
		if (!on_disk(t, rep->rel, cr->size, cr->sha256)) {
			bool ok = absent(t, rep->rel, cr->size, cr->sha256);
			free(rep->rel);
			rep->rel = NULL;
			if (!ok)
				return -1;
			continue;
		}
		rep->coding = (kiln_coding)c;
		rep->token = k->info.name;
		rep->size = cr->size;
		etag_of(cr->sha256, rep->etag);
		a->nreps++;
		t->nsiblings++;
		t->codings |= 1u << c;
	}
	return dicts_of(t, r, url_prefix, a) ? 1 : -1;
}

/* Is SB the source A's load found, but perhaps for its ctime? */
static bool same_but_ctime(const struct kiln_srv_asset *a, const struct stat *sb)
{
	return !a->changed && S_ISREG(sb->st_mode) && (uint64_t)sb->st_dev == a->src_dev &&
	       (uint64_t)sb->st_ino == a->src_ino && (uint64_t)sb->st_size == a->rep[0].size &&
	       sb->st_mtim.tv_sec == a->src_mtime.tv_sec &&
	       sb->st_mtim.tv_nsec == a->src_mtime.tv_nsec;
}

bool kiln_srv_source_same(const struct kiln_srv_asset *a, const struct stat *sb)
{
	return same_but_ctime(a, sb) &&
	       ns_of(sb->st_ctim) == atomic_load_explicit(&a->src_ctime, memory_order_relaxed);
}

bool kiln_srv_source_proven(struct kiln_srv_asset *a, int fd, const struct stat *sb)
{
	if (kiln_srv_source_same(a, sb))
		return true;
	if (!same_but_ctime(a, sb) || !digest_is(fd, a->rep[0].size, a->src_sha256))
		return false;
	atomic_store_explicit(&a->src_ctime, ns_of(sb->st_ctim), memory_order_relaxed);
	return true;
}

int kiln_srv_source_now(const struct kiln_srv_table *t, struct kiln_srv_asset *a,
			struct stat *sb)
{
	int fd = kiln_beneath_openat(t->topfd, a->rel, O_RDONLY | O_NONBLOCK);
	int state;

	if (fd < 0)
		return KILN_SRV_SOURCE_GONE;
	if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode))
		state = KILN_SRV_SOURCE_GONE;
	else
		state = kiln_srv_source_proven(a, fd, sb) ? KILN_SRV_SOURCE_AS_LOADED
							  : KILN_SRV_SOURCE_CHANGED;
	close(fd);
	return state;
}

/* Is the manifest read into *ST from MANIFEST (NULL: the tree's own, at
 * its top) this tree's record?  Its "tree" names the tree relative to the
 * manifest's directory (or absolutely); a manifest that names none is its
 * directory's (outputs.c reads it alike for the other commands). */
static bool owns_tree(const struct kiln_state *st, int topfd, const char *root,
		      const char *manifest)
{
	struct stat a, b;
	char *dir, *p;
	size_t n;
	bool same;

	if (!manifest)
		dir = strdup(root);
	else if (!strchr(manifest, '/'))
		dir = strdup(".");
	else
		dir = strndup(manifest, (size_t)(strrchr(manifest, '/') - manifest) + 1);
	if (!dir)
		return false;
	n = strlen(dir) + (st->tree ? strlen(st->tree) : 0) + 2;
	if (!(p = malloc(n))) {
		free(dir);
		return false;
	}
	if (st->tree && st->tree[0] == '/')
		snprintf(p, n, "%s", st->tree);
	else
		snprintf(p, n, "%s/%s", dir, st->tree ? st->tree : ".");
	same = stat(p, &a) == 0 && fstat(topfd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
	free(p);
	free(dir);
	return same;
}

kiln_status kiln_srv_table_load(const char *root, const char *manifest, const char *url_prefix,
				bool verify, struct kiln_srv_table **out, struct kiln_error *err)
{
	struct kiln_srv_table *t = calloc(1, sizeof(*t));
	struct kiln_state st = { 0 }, stamps = { 0 };
	struct stat sb;
	kiln_status rc;
	int mfd = -1;
	char *text = NULL, *mpath = NULL;

	*out = NULL;
	if (!t)
		return KILN_ERR_NOMEM;
	atomic_init(&t->refs, 1);
	t->verify = verify;
	if (verify && kiln_hash_init() != KILN_OK) {
		free(t);
		return KILN_ERR_NOMEM;
	}
	if ((t->topfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		set_err(err, KILN_ERR_IO, errno, "cannot open the directory");
		rc = KILN_ERR_IO;
		goto fail;
	}
	/* the manifest, read through the descriptor it is checked by; one
	 * given elsewhere is the user's path, as for every kiln command */
	mfd = manifest ? open(manifest, O_RDONLY | O_CLOEXEC)
		       : kiln_beneath_openat(t->topfd, MANIFEST_NAME, O_RDONLY);
	if (mfd < 0 || fstat(mfd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		set_err(err, KILN_ERR_IO, mfd < 0 ? errno : EINVAL,
			manifest ? "cannot read the manifest given with --manifest or --artifacts"
				 : "has no kiln-manifest.json to serve from (run kiln on it first)");
		rc = KILN_ERR_IO;
		goto fail;
	}
	mpath = manifest_path(root, manifest);
	index_status(mpath, &t->i_dev, &t->i_ino, &t->i_mtime);
	t->m_dev = (uint64_t)sb.st_dev;
	t->m_ino = (uint64_t)sb.st_ino;
	t->m_size = (uint64_t)sb.st_size;
	t->m_mtime = sb.st_mtim;
	if (!(text = malloc((size_t)sb.st_size + 1))) {
		rc = KILN_ERR_NOMEM;
		goto fail;
	}
	if (kiln_pread_full(mfd, (uint8_t *)text, (size_t)sb.st_size, 0) != (ssize_t)sb.st_size) {
		set_err(err, KILN_ERR_IO, errno ? errno : EIO, "cannot read its manifest");
		rc = KILN_ERR_IO;
		goto fail;
	}
	rc = kiln_state_parse(text, (size_t)sb.st_size, &st);
	if (rc == KILN_ERR_INVALID) {
		set_err(err, rc, 0, manifest ? "the manifest given is not one this kiln reads"
					      : "kiln-manifest.json is not a manifest this kiln reads");
		goto fail;
	}
	if (rc != KILN_OK)
		goto fail;
	if (!owns_tree(&st, t->topfd, root, manifest)) {
		set_err(err, KILN_ERR_INVALID, 0,
			manifest ? "the manifest given is another tree's record (its \"tree\" names "
				   "another directory)"
				 : "kiln-manifest.json is another tree's record (its \"tree\" names "
				   "another directory)");
		rc = KILN_ERR_INVALID;
		goto fail;
	}
	load_stamps(t, mpath, &stamps);
	if (st.n && !(t->v = calloc(st.n, sizeof(*t->v)))) {
		rc = KILN_ERR_NOMEM;
		goto fail;
	}
	/* st.v is sorted by rel, bytewise: so is the table */
	for (size_t i = 0; i < st.n; i++) {
		if (!st.v[i].in_manifest)
			continue;
		int got = asset_of(t, &st.v[i], &stamps, url_prefix, &t->v[t->n]);
		if (got <= 0) {
			asset_free(t, &t->v[t->n]);
			memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
			if (got == 0)
				continue;
			rc = KILN_ERR_NOMEM;
			goto fail;
		}
		t->n++;
	}
	kiln_state_free(&st);
	kiln_state_free(&stamps);
	free(text);
	free(mpath);
	close(mfd);
	*out = t;
	return KILN_OK;
fail:
	kiln_state_free(&st);
	kiln_state_free(&stamps);
	free(text);
	free(mpath);
	if (mfd >= 0)
		close(mfd);
	table_free(t);
	return rc;
}

bool kiln_srv_table_stale(const struct kiln_srv_table *t, const char *root, const char *manifest,
			  bool absent)
{
	struct stat sb, top;
	char *p = manifest_path(root, manifest);
	bool changed;

	if (!p)
		return false;
	changed = stat(p, &sb) == 0 &&
		  ((uint64_t)sb.st_dev != t->m_dev || (uint64_t)sb.st_ino != t->m_ino ||
		   (uint64_t)sb.st_size != t->m_size || sb.st_mtim.tv_sec != t->m_mtime.tv_sec ||
		   sb.st_mtim.tv_nsec != t->m_mtime.tv_nsec);
	if (!changed) { /* a run that wrote only the index (index.h) */
		uint64_t dev, ino;
		struct timespec m;
		index_status(p, &dev, &ino, &m);
		changed = dev != t->i_dev || ino != t->i_ino || m.tv_sec != t->i_mtime.tv_sec ||
			  m.tv_nsec != t->i_mtime.tv_nsec;
	}
	free(p);
	/* ROOT now another directory (a release hard-linked from the last) */
	if (!changed && stat(root, &sb) == 0 && fstat(t->topfd, &top) == 0)
		changed = sb.st_dev != top.st_dev || sb.st_ino != top.st_ino;
	/* a file left out at load there now: only a new load can offer it */
	for (size_t i = 0; absent && !changed && i < t->nabsent; i++)
		changed = on_disk(t, t->absent[i].rel, t->absent[i].size, t->absent[i].sha256);
	return changed;
}

void kiln_srv_table_ref(struct kiln_srv_table *t)
{
	atomic_fetch_add(&t->refs, 1);
}

void kiln_srv_table_unref(struct kiln_srv_table *t)
{
	if (t && atomic_fetch_sub(&t->refs, 1) == 1)
		table_free(t);
}

const struct kiln_srv_asset *kiln_srv_find(const struct kiln_srv_table *t, const char *key,
					   size_t len)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *r = t->v[mid].rel;
		size_t rl = strlen(r);
		int c = memcmp(r, key, rl < len ? rl : len);

		if (c == 0)
			c = rl < len ? -1 : rl > len ? 1 : 0;
		if (c == 0)
			return &t->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
