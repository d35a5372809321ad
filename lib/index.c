/*
 * index.c - the stamps of a tree's records, beside its manifest (index.h).
 *
 * The file, in this machine's byte order (an index is read where it was
 * written; one from another order is rejected by its mark):
 *
 *   "KILNIDX\n", u32 version, u32 0x01020304
 *   the manifest's dev, ino, size (u64), mtime, ctime (i64 ns)
 *   the top's dev, ino (u64); the options digest (32 bytes)
 *   u32 codings, each its name (u8 length, bytes): the table it was made by
 *   u32 recipes, each (u8 length, bytes): what records name by number
 *   u64 records, sorted by path, each:
 *     path (u32 length, bytes), size (u64), SHA-256, SHA-384, outcome (u8),
 *     why immutable (u8; high bit: bytes changed), fingerprint (u32 start, u32 length),
 *     per coding: outcome (u8), and unless OFF its size (u64) and recipe
 *       (u16), and when KEPT its SHA-256,
 *     deltas (u16), each: dictionary SHA-256, dictionary path (u32, bytes),
 *       size (u64), SHA-256, recipe (u8 length, bytes),
 *     stamped (u8), and then dev, ino (u64), mode (u32), mtime, ctime
 *       (i64), and per KEPT coding the sibling's ino (u64) and ctime (i64)
 *   u64 stale siblings, each: path (u32, bytes), coding (u8), size (u64),
 *     SHA-256
 *   u32 snippets, each: name (u32, bytes), SHA-256
 *   the tree field: present (u8), (u32, bytes)
 *   the SHA-256 of everything before it.
 */
#include "index.h"

#include "beneath.h"
#include "codec.h"
#include "error.h"
#include "hash.h"
#include "paths.h"
#include "sort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "KILNIDX\n"
#define VERSION 1
/* A record's "why" byte holds its fp.changed in its high bit (an index an
 * earlier kiln cannot read then: it reads the manifest instead). */
#define WHY_CHANGED 0x80u
#define ORDER 0x01020304u

/* Limits a reader holds an index to (no record kiln writes comes near). */
#define MAX_NAME 65535
#define MAX_DELTAS 64

char *kiln_index_path(const char *manifest_path)
{
	const char *slash = strrchr(manifest_path, '/');
	size_t dir = slash ? (size_t)(slash - manifest_path) + 1 : 0;
	size_t n = strlen(manifest_path) + sizeof(".index") + 1;
	char *p = malloc(n);

	if (!p)
		return NULL;
	memcpy(p, manifest_path, dir);
	p[dir] = '.';
	strcpy(p + dir + 1, manifest_path + dir);
	strcat(p, ".index");
	return p;
}

bool kiln_index_is_kilns(const char *path)
{
	char magic[8];
	struct stat st;
	int fd = lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ? -1 :
		 open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool ours = fd >= 0 && kiln_pread_full(fd, (uint8_t *)magic, 8, 0) == 8 &&
		    memcmp(magic, MAGIC, 8) == 0;

	if (fd >= 0)
		close(fd);
	return ours || (fd < 0 && lstat(path, &st) != 0 && errno == ENOENT);
}

bool kiln_index_local(const char *root)
{
	/* file systems whose timestamps a server or another node sets (f_type) */
	static const unsigned long remote[] = {
		0x6969ul /* NFS */, 0x517Bul /* SMB */, 0xFF534D42ul /* CIFS */,
		0xFE534D42ul /* SMB2 */, 0x65735546ul /* FUSE */, 0x01021997ul /* 9P */,
		0x00c36400ul /* Ceph */, 0x5346414Ful /* AFS */, 0x73757245ul /* Coda */,
		0x564cul /* NCP */, 0x01161970ul /* GFS2 */, 0x7461636ful /* OCFS2 */,
		0x0bd00bd0ul /* Lustre */, 0x47504653ul /* GPFS */,
		/* and those whose ctime any program sets: FAT keeps it equal
		 * to the mtime (Linux 6.0 on), exFAT stores what it is given */
		0x4d44ul /* FAT */, 0x2011BAB0ul /* exFAT */,
	};
	struct statfs sf = { 0 }; /* (the WebAssembly build's statfs sets no f_type) */

	if (statfs(root, &sf) != 0)
		return false;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((unsigned long)sf.f_type == remote[i])
			return false;
	return true;
}

int64_t kiln_index_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0)
		return 0; /* then nothing is ever proved unchanged */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kiln_index_after(int64_t then_ns)
{
	const struct timespec ms = { 0, 1000000 };
	int64_t now = kiln_index_now();

	/* one clock tick (1 to 10 ms), unless it has passed already */
	for (int i = 0; now && now <= then_ns && i < 100; i++) {
		nanosleep(&ms, NULL);
		now = kiln_index_now();
	}
	return now;
}

static int64_t ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The coarsest timestamp granularity a ctime of CTIME_NS may come with:
 * 2 s for a whole second, else the unit of its last nonzero digit. */
static int64_t granularity(int64_t ctime_ns)
{
	int64_t sub = ctime_ns % 1000000000, g = 1;

	if (sub < 0)
		sub += 1000000000;
	if (sub == 0)
		return 2000000000;
	while (sub % 10 == 0) {
		sub /= 10;
		g *= 10;
	}
	return g;
}

/* Was the clock past CTIME_NS, whatever the granularity, at NOW_NS? */
static bool settled_by(int64_t ctime_ns, int64_t now_ns)
{
	return ctime_ns < now_ns && ctime_ns + granularity(ctime_ns) <= now_ns;
}

void kiln_index_stamp(struct kiln_record *r, const struct stat *st, const struct stat *sibs)
{
	memset(&r->stamp, 0, sizeof(r->stamp));
	r->stamp.dev = st->st_dev;
	r->stamp.ino = st->st_ino;
	r->stamp.mode = st->st_mode;
	r->stamp.mtime_ns = ns(st->st_mtim);
	r->stamp.ctime_ns = ns(st->st_ctim);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		if (r->coding[c].outcome != KILN_CODING_KEPT)
			continue;
		r->stamp.sib[c].ino = sibs[c].st_ino;
		r->stamp.sib[c].ctime_ns = ns(sibs[c].st_ctim);
		/* the sibling must look as kiln leaves it */
		if (!S_ISREG(sibs[c].st_mode) || sibs[c].st_dev != st->st_dev ||
		    (uint64_t)sibs[c].st_size != r->coding[c].size ||
		    ns(sibs[c].st_mtim) != r->stamp.mtime_ns ||
		    (sibs[c].st_mode & 0777) != (st->st_mode & 0777))
			return;
	}
	r->stamped = KILN_STAMP_SEEN;
}

bool kiln_index_matches(const struct kiln_record *r, const struct kiln_stat *st, int c)
{
	const struct kiln_stamp *s = &r->stamp;

	if (r->stamped != KILN_STAMP_TRUSTED || !S_ISREG(st->st_mode) || st->st_dev != s->dev)
		return false;
	if (c < 0)
		return st->st_ino == s->ino && st->st_mode == s->mode &&
		       (uint64_t)st->st_size == r->size && ns(st->st_mtim) == s->mtime_ns &&
		       ns(st->st_ctim) == s->ctime_ns;
	return r->coding[c].outcome == KILN_CODING_KEPT && st->st_ino == s->sib[c].ino &&
	       ns(st->st_ctim) == s->sib[c].ctime_ns && (uint64_t)st->st_size == r->coding[c].size &&
	       ns(st->st_mtim) == s->mtime_ns && (st->st_mode & 0777) == (s->mode & 0777);
}

/* ---- writing ---- */

struct out {
	struct kiln_artifact *a;
	struct kiln_hasher *h;
	size_t len;
	uint8_t buf[65536];
};

static void flush(struct out *o)
{
	kiln_hasher_update(o->h, o->buf, o->len);
	kiln_artifact_put(o->a, o->buf, o->len);
	o->len = 0;
}

static void put(struct out *o, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		size_t k = sizeof(o->buf) - o->len < n ? sizeof(o->buf) - o->len : n;
		memcpy(o->buf + o->len, b, k);
		o->len += k;
		b += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			flush(o);
	}
}

static void put_u8(struct out *o, unsigned v)
{
	uint8_t b = (uint8_t)v;

	put(o, &b, 1);
}

static void put_u16(struct out *o, unsigned v)
{
	uint16_t b = (uint16_t)v;

	put(o, &b, 2);
}

static void put_u32(struct out *o, uint64_t v)
{
	uint32_t b = (uint32_t)v;

	put(o, &b, 4);
}

static void put_u64(struct out *o, uint64_t v)
{
	put(o, &v, 8);
}

static void put_name(struct out *o, const char *s)
{
	size_t n = strlen(s);

	put_u32(o, n);
	put(o, s, n);
}

static void put_short(struct out *o, const char *s)
{
	size_t n = strlen(s);

	put_u8(o, (unsigned)n);
	put(o, s, n);
}

/* The recipes the records name, each once (a short list: the codings'
 * recipes under one or two sets of options). */
struct recipes {
	const char **v;
	size_t n, cap;
};

/* The number of recipe R in *RS, added if new; -1 when out of memory or
 * past the 65,535 a record can name. */
static long recipe_no(struct recipes *rs, const char *r)
{
	for (size_t i = rs->n; i-- > 0;)
		if (rs->v[i] == r || strcmp(rs->v[i], r) == 0)
			return (long)i;
	if (rs->n == 65535)
		return -1;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 8;
		const char **v = realloc(rs->v, cap * sizeof(*v));
		if (!v)
			return -1;
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n] = r;
	return (long)rs->n++;
}

struct item {
	const struct kiln_record *r;
	struct kiln_fp fp;
	size_t i;           /* its place among the manifest's records */
	bool stamped;       /* its stamp is written */
};

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->r->rel, y->r->rel);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* Is the stamp of R, taken in this run, still true at NOW_NS: its asset
 * settled before the run began (SINCE_NS), each kept sibling still as it
 * was seen and settled now? */
static bool confirm(const struct kiln_index_input *in, const struct kiln_record *r, int64_t now_ns)
{
	const struct kiln_stamp *s = &r->stamp;

	if (!in->local || s->dev != in->top->st_dev || !settled_by(s->ctime_ns, in->since_ns))
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		struct stat st;
		char *sib;
		bool there;
		if (r->coding[c].outcome != KILN_CODING_KEPT)
			continue;
		if (!(sib = kiln_path_join(in->root, r->rel, kiln_codecs[c]->info.suffix)))
			return false;
		there = kiln_beneath_lstat(in->root, sib, &st) == 0;
		free(sib);
		if (!there || st.st_ino != s->sib[c].ino || ns(st.st_ctim) != s->sib[c].ctime_ns ||
		    !settled_by(s->sib[c].ctime_ns, now_ns) || (uint64_t)st.st_size != r->coding[c].size ||
		    ns(st.st_mtim) != s->mtime_ns || !S_ISREG(st.st_mode) || st.st_dev != s->dev)
			return false;
	}
	return true;
}

static void put_record(struct out *o, const struct item *it, struct recipes *rs)
{
	const struct kiln_record *r = it->r;

	put_name(o, r->rel);
	put_u64(o, r->size);
	put(o, r->sha256, 32);
	put(o, r->sha384, 48);
	put_u8(o, (unsigned)r->outcome);
	put_u8(o, it->fp.why | (it->fp.changed ? WHY_CHANGED : 0));
	put_u32(o, it->fp.start);
	put_u32(o, it->fp.len);
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		const struct kiln_coding_record *cr = &r->coding[c];
		put_u8(o, (unsigned)cr->outcome);
		if (cr->outcome == KILN_CODING_OFF)
			continue;
		put_u64(o, cr->size);
		put_u16(o, (unsigned)recipe_no(rs, cr->recipe ? cr->recipe : ""));
		if (cr->outcome == KILN_CODING_KEPT)
			put(o, cr->sha256, 32);
	}
	put_u16(o, (unsigned)r->ndicts);
	for (size_t i = 0; i < r->ndicts; i++) {
		const struct kiln_dict_record *d = &r->dicts[i];
		put(o, d->dict_sha256, 32);
		put_name(o, d->dict_path);
		put_u64(o, d->size);
		put(o, d->sha256, 32);
		put_short(o, d->recipe);
	}
	put_u8(o, it->stamped);
	if (!it->stamped)
		return;
	put_u64(o, (uint64_t)r->stamp.dev);
	put_u64(o, (uint64_t)r->stamp.ino);
	put_u32(o, r->stamp.mode);
	put_u64(o, (uint64_t)r->stamp.mtime_ns);
	put_u64(o, (uint64_t)r->stamp.ctime_ns);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (r->coding[c].outcome == KILN_CODING_KEPT) {
			put_u64(o, (uint64_t)r->stamp.sib[c].ino);
			put_u64(o, (uint64_t)r->stamp.sib[c].ctime_ns);
		}
}

kiln_status kiln_index_write(struct kiln_temps *reg, const char *path, bool fsync,
			     const struct kiln_index_input *in, struct kiln_error *err)
{
	struct out *o = malloc(sizeof(*o));
	struct item *items = calloc(in->n + 1, sizeof(*items));
	struct recipes rs = { 0 };
	struct kiln_artifact a;
	struct stat man;
	int64_t now = kiln_index_now();
	uint8_t sum[32];
	size_t m = 0;
	bool kept, ok = o && items && (o->h = kiln_hasher_new_sha256()) != NULL;

	kiln_artifact_begin(&a, reg, path, fsync);
	/* siblings written in this clock tick are settled once it is over:
	 * waiting for it spares the next run reading their files again */
	for (size_t i = 0; i < in->n; i++)
		if (in->items[i].r->stamped == KILN_STAMP_SEEN) {
			now = kiln_index_after(now);
			break;
		}
	if (ok && lstat(in->manifest_path, &man) != 0) {
		kiln_artifact_fail(&a, &(struct kiln_error){ KILN_ERR_IO, errno,
							    "cannot stat the manifest", "" });
		ok = false;
	}
	for (size_t i = 0; ok && i < in->n; i++) {
		const struct kiln_record *r = in->items[i].r;
		items[m++] = (struct item){ r, in->items[i].fp, i,
					    r->stamped == KILN_STAMP_TRUSTED ||
						    (r->stamped == KILN_STAMP_SEEN && confirm(in, r, now)) };
		for (unsigned c = 0; ok && c < kiln_ncodecs; c++)
			if (r->coding[c].outcome != KILN_CODING_OFF)
				ok = recipe_no(&rs, r->coding[c].recipe ? r->coding[c].recipe : "") >= 0;
	}
	if (ok) {
		o->a = &a;
		o->len = 0;
		/* as the manifest: of two records of one path, the later */
		kiln_sort(items, m, sizeof(*items), item_cmp);
		put(o, MAGIC, 8);
		put_u32(o, VERSION);
		put_u32(o, ORDER);
		put_u64(o, (uint64_t)man.st_dev);
		put_u64(o, (uint64_t)man.st_ino);
		put_u64(o, (uint64_t)man.st_size);
		put_u64(o, (uint64_t)ns(man.st_mtim));
		put_u64(o, (uint64_t)ns(man.st_ctim));
		put_u64(o, (uint64_t)in->top->st_dev);
		put_u64(o, (uint64_t)in->top->st_ino);
		put(o, in->digest, 32);
		put_u32(o, kiln_ncodecs);
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			put_short(o, kiln_codecs[c]->info.name);
		put_u32(o, rs.n);
		for (size_t i = 0; i < rs.n; i++)
			put_short(o, rs.v[i]);
		{
			size_t unique = 0;
			for (size_t i = 0; i < m; i++)
				unique += i + 1 == m || strcmp(items[i].r->rel, items[i + 1].r->rel) != 0;
			put_u64(o, unique);
		}
		for (size_t i = 0; i < m; i++)
			if (i + 1 == m || strcmp(items[i].r->rel, items[i + 1].r->rel) != 0)
				put_record(o, &items[i], &rs);
		put_u64(o, in->nstale);
		for (size_t i = 0; i < in->nstale; i++) {
			put_name(o, in->stale[i].rel);
			put_u8(o, (unsigned)in->stale[i].coding);
			put_u64(o, in->stale[i].size);
			put(o, in->stale[i].sha256, 32);
		}
		put_u32(o, in->nsnip);
		for (size_t i = 0; i < in->nsnip; i++) {
			put_name(o, in->snip[i].name);
			put(o, in->snip[i].sha256, 32);
		}
		put_u8(o, in->tree != NULL);
		if (in->tree)
			put_name(o, in->tree);
		flush(o);
		ok = kiln_hasher_final(o->h, sum, NULL) == KILN_OK;
		o->h = NULL;
		if (ok)
			kiln_artifact_put(&a, sum, 32);
	}
	if (!ok)
		kiln_artifact_fail(&a, &(struct kiln_error){ KILN_ERR_NOMEM, ENOMEM,
							    "cannot build the index", "" });
	if (o && o->h)
		kiln_hasher_final(o->h, NULL, NULL);
	free(o);
	free(items);
	free(rs.v);
	return kiln_artifact_end(&a, &kept, err);
}

/* ---- reading ---- */

struct in {
	int fd;
	uint64_t size;         /* the file's: no count may claim more */
	uint8_t *buf;
	size_t at, len, cap;   /* unread bytes: buf[at..len) */
	struct kiln_hasher *h; /* of every byte taken */
	bool bad;              /* short, malformed, or out of memory */
};

/* Make N bytes available at buf + at; false (and bad) if the file ends. */
static bool need(struct in *r, size_t n)
{
	if (r->bad)
		return false;
	if (r->len - r->at >= n)
		return true;
	if (r->at) {
		memmove(r->buf, r->buf + r->at, r->len - r->at);
		r->len -= r->at;
		r->at = 0;
	}
	if (n > r->cap) {
		size_t cap = n > 2 * r->cap ? n : 2 * r->cap;
		uint8_t *b = realloc(r->buf, cap);
		if (!b) {
			r->bad = true;
			return false;
		}
		r->buf = b;
		r->cap = cap;
	}
	while (r->len < n) {
		ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r->bad = true;
			return false;
		}
		r->len += (size_t)got;
	}
	return true;
}

/* Take N bytes into P (hashed). */
static bool take(struct in *r, void *p, size_t n)
{
	if (!need(r, n))
		return false;
	memcpy(p, r->buf + r->at, n);
	kiln_hasher_update(r->h, r->buf + r->at, n);
	r->at += n;
	return true;
}

static uint64_t get_u64(struct in *r)
{
	uint64_t v = 0;

	take(r, &v, 8);
	return v;
}

static uint32_t get_u32(struct in *r)
{
	uint32_t v = 0;

	take(r, &v, 4);
	return v;
}

static unsigned get_u16(struct in *r)
{
	uint16_t v = 0;

	take(r, &v, 2);
	return v;
}

static unsigned get_u8(struct in *r)
{
	uint8_t v = 0;

	take(r, &v, 1);
	return v;
}

/* A string of LEN bytes, malloc'ed, holding no NUL; NULL (bad) if not. */
static char *get_bytes(struct in *r, size_t len)
{
	char *s;

	if (len > MAX_NAME || !(s = malloc(len + 1))) {
		r->bad = true;
		return NULL;
	}
	if (!take(r, s, len) || memchr(s, '\0', len)) {
		r->bad = true;
		free(s);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

static char *get_name(struct in *r)
{
	return get_bytes(r, get_u32(r));
}

/* One record into *PE; RECIPES the pool's copies of the recipe table. */
static void get_record(struct in *r, struct kiln_prev_entry *pe, const char **recipes,
		       size_t nrecipes)
{
	struct kiln_record *rec = &pe->rec;
	unsigned why, outcome, ndicts;

	if (!(rec->rel = get_name(r)) || !kiln_state_safe_rel(rec->rel, strlen(rec->rel)))
		goto bad;
	rec->size = get_u64(r);
	take(r, rec->sha256, 32);
	take(r, rec->sha384, 48);
	outcome = get_u8(r);
	why = get_u8(r);
	rec->fp.changed = (why & WHY_CHANGED) != 0;
	why &= ~(unsigned)WHY_CHANGED;
	rec->fp.start = get_u32(r);
	rec->fp.len = get_u32(r);
	if (outcome >= KILN_NOUTCOMES || outcome == KILN_OUTCOME_SIBLING || why >= KILN_NWHY ||
	    (rec->fp.len && ((uint64_t)rec->fp.start + rec->fp.len > strlen(rec->rel))))
		goto bad;
	rec->outcome = (kiln_outcome)outcome;
	rec->fp.why = (uint8_t)why;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		struct kiln_coding_record *cr = &rec->coding[c];
		unsigned o = get_u8(r), no;
		if (o > KILN_CODING_NO_GAIN)
			goto bad;
		cr->outcome = (kiln_coding_outcome)o;
		if (o == KILN_CODING_OFF)
			continue;
		cr->size = get_u64(r);
		if ((no = get_u16(r)) >= nrecipes)
			goto bad;
		cr->recipe = recipes[no];
		if (o == KILN_CODING_KEPT)
			take(r, cr->sha256, 32);
	}
	if ((ndicts = get_u16(r)) > MAX_DELTAS ||
	    (ndicts && !(rec->dicts = calloc(ndicts, sizeof(*rec->dicts)))))
		goto bad;
	rec->ndicts = ndicts;
	for (size_t i = 0; i < rec->ndicts && !r->bad; i++) {
		struct kiln_dict_record *d = &rec->dicts[i];
		char *recipe;
		take(r, d->dict_sha256, 32);
		d->dict_path = get_name(r);
		d->size = get_u64(r);
		take(r, d->sha256, 32);
		if ((recipe = get_bytes(r, get_u8(r))) && strlen(recipe) < KILN_RECIPE_MAX)
			strcpy(d->recipe, recipe);
		else
			r->bad = true;
		free(recipe);
	}
	if (get_u8(r)) {
		struct kiln_stamp *s = &rec->stamp;
		s->dev = (dev_t)get_u64(r);
		s->ino = (ino_t)get_u64(r);
		s->mode = (mode_t)get_u32(r);
		s->mtime_ns = (int64_t)get_u64(r);
		s->ctime_ns = (int64_t)get_u64(r);
		for (unsigned c = 0; c < kiln_ncodecs; c++)
			if (rec->coding[c].outcome == KILN_CODING_KEPT) {
				s->sib[c].ino = (ino_t)get_u64(r);
				s->sib[c].ctime_ns = (int64_t)get_u64(r);
			}
		rec->stamped = KILN_STAMP_TRUSTED;
	}
	if (r->bad)
		goto bad;
	pe->in_manifest = true;
	return;
bad:
	/* (the record is dropped whole: the index with it) */
	kiln_record_free(rec);
	memset(pe, 0, sizeof(*pe));
	r->bad = true;
}

/* The header: this manifest's, this tree's, this codec table's. */
static bool header_fits(struct in *r, const struct stat *man, const struct stat *top,
			uint8_t digest[32])
{
	char magic[8];
	uint64_t v[7];

	if (!take(r, magic, 8) || memcmp(magic, MAGIC, 8) != 0 || get_u32(r) != VERSION ||
	    get_u32(r) != ORDER)
		return false;
	for (int i = 0; i < 7; i++)
		v[i] = get_u64(r);
	take(r, digest, 32);
	if (r->bad || v[0] != (uint64_t)man->st_dev || v[1] != (uint64_t)man->st_ino ||
	    v[2] != (uint64_t)man->st_size || v[3] != (uint64_t)ns(man->st_mtim) ||
	    v[4] != (uint64_t)ns(man->st_ctim) || v[5] != (uint64_t)top->st_dev ||
	    v[6] != (uint64_t)top->st_ino || get_u32(r) != kiln_ncodecs)
		return false;
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		char *name = get_bytes(r, get_u8(r));
		bool same = name && strcmp(name, kiln_codecs[c]->info.name) == 0;
		free(name);
		if (!same)
			return false;
	}
	return !r->bad;
}

/* The rest, once the header fits: into *ST. */
static void get_body(struct in *r, struct kiln_state *st)
{
	size_t nrecipes = get_u32(r);
	const char **recipes = nrecipes <= r->size ? calloc(nrecipes + 1, sizeof(*recipes)) : NULL;
	uint64_t n;

	if (!recipes || !(st->strings = kiln_intern_new()))
		goto bad;
	for (size_t i = 0; i < nrecipes && !r->bad; i++) {
		char *s = get_bytes(r, get_u8(r));
		if (!s || strlen(s) >= KILN_RECIPE_MAX || !(recipes[i] = kiln_intern(st->strings, s)))
			r->bad = true;
		free(s);
	}
	n = get_u64(r);
	/* each record takes over 100 bytes, each stale sibling over 40: a
	 * count past the file's size is a damaged index, not an allocation
	 * to try */
	if (r->bad || n > r->size / 100 || !(st->v = calloc((size_t)n + 1, sizeof(*st->v))))
		goto bad;
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		get_record(r, &st->v[st->n], recipes, nrecipes);
		if (st->v[st->n].rec.rel)
			st->n++;
		if (st->n > 1 && strcmp(st->v[st->n - 2].rec.rel, st->v[st->n - 1].rec.rel) >= 0)
			r->bad = true; /* sorted, each path once */
	}
	if ((n = get_u64(r)) > r->size / 40 ||
	    (n && !(st->stale = calloc((size_t)n, sizeof(*st->stale)))))
		goto bad;
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		struct kiln_stale *s = &st->stale[st->nstale];
		unsigned c;
		if (!(s->rel = get_name(r)))
			break;
		st->nstale++;
		if ((c = get_u8(r)) >= kiln_ncodecs || !kiln_state_safe_rel(s->rel, strlen(s->rel)))
			r->bad = true;
		s->coding = (kiln_coding)c;
		s->size = get_u64(r);
		take(r, s->sha256, 32);
	}
	if ((n = get_u32(r)) > 64 || (n && !(st->snippets = calloc((size_t)n, sizeof(*st->snippets)))))
		goto bad;
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		struct kiln_snippet_rec *s = &st->snippets[st->nsnippets];
		if (!(s->name = get_name(r)))
			break;
		st->nsnippets++;
		if (!*s->name || strchr(s->name, '/'))
			r->bad = true;
		take(r, s->sha256, 32);
	}
	if (get_u8(r) && !(st->tree = get_name(r)))
		r->bad = true;
	free(recipes);
	return;
bad:
	free(recipes);
	r->bad = true;
}

bool kiln_index_load(const char *path, const char *manifest_path, const struct stat *top,
		     struct kiln_state *st, uint8_t digest[32])
{
	struct in r = { .fd = -1 };
	struct stat man, ist;
	uint8_t sum[32], want[32];
	bool ok = false;

	if (lstat(manifest_path, &man) != 0 || !S_ISREG(man.st_mode) ||
	    (r.fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0 ||
	    fstat(r.fd, &ist) != 0 || !S_ISREG(ist.st_mode) || !(r.h = kiln_hasher_new_sha256()))
		goto out;
	r.cap = 1 << 20;
	r.size = (uint64_t)ist.st_size;
	if (!(r.buf = malloc(r.cap)) || !header_fits(&r, &man, top, digest))
		goto out;
	get_body(&r, st);
	if (r.bad || kiln_hasher_final(r.h, sum, NULL) != KILN_OK)
		goto out;
	r.h = NULL;
	/* the checksum, then nothing more */
	ok = need(&r, 32) && (memcpy(want, r.buf + r.at, 32), r.at += 32, true) &&
	     memcmp(sum, want, 32) == 0 && r.at == r.len && read(r.fd, want, 1) == 0;
out:
	if (r.h)
		kiln_hasher_final(r.h, NULL, NULL);
	if (r.fd >= 0)
		close(r.fd);
	free(r.buf);
	if (!ok)
		kiln_state_free(st);
	else
		st->loaded = true;
	return ok;
}
