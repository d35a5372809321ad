/*
 * shard.c - see shard.h.
 *
 * The rule is FNV-1a (64 bits) over the exact bytes of the relative path,
 * as the manifest names the file, reduced modulo N: K = hash % N + 1.  It
 * needs nothing but the path, costs nothing next to an encoder, and spreads
 * the names of a real tree evenly; it does not weigh files by size, which
 * only matters for trees of a few huge files (docs/shards.md, "Shards:
 * past one machine").
 */
#include "shard.h"

#include "classify.h"
#include "codec.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PART_PREFIX "kiln-manifest.shard-"
#define PART_SUFFIX ".json"

unsigned kiln_shard_of(const char *rel, unsigned count)
{
	uint64_t h = 14695981039346656037ull;

	if (count == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)rel; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	return (unsigned)(h % count) + 1;
}

bool kiln_shard_mine(const struct kiln_options *opt, const char *rel)
{
	return opt->shard_count == 0 || kiln_shard_of(rel, opt->shard_count) == opt->shard_index;
}

char *kiln_part_dir(const char *manifest_path)
{
	const char *slash = strrchr(manifest_path, '/');

	if (!slash)
		return strdup(".");
	if (slash == manifest_path)
		return strdup("/");
	return strndup(manifest_path, (size_t)(slash - manifest_path));
}

/* The stem of MANIFEST_PATH's parts' names: its whole base name (*LEN
 * bytes; whole, so that two names never share a stem), or NULL for
 * kiln-manifest.json's, which have none. */
static const char *part_stem(const char *manifest_path, size_t *len)
{
	const char *base = strrchr(manifest_path, '/');

	base = base ? base + 1 : manifest_path;
	if (strcmp(base, KILN_MANIFEST_NAME) == 0)
		return NULL;
	*len = strlen(base);
	return base;
}

char *kiln_part_path(const char *manifest_path, unsigned k, unsigned n)
{
	char *dir = kiln_part_dir(manifest_path), *p = NULL;
	size_t len, slen = 0;
	const char *stem = part_stem(manifest_path, &slen);

	if (!dir)
		return NULL;
	len = strlen(dir) + sizeof(PART_PREFIX) + slen + 64;
	if ((p = malloc(len)))
		snprintf(p, len, "%s%s" PART_PREFIX "%u-of-%u%s%.*s" PART_SUFFIX, dir,
			 strcmp(dir, "/") ? "/" : "", k, n, stem ? "." : "", (int)slen,
			 stem ? stem : "");
	free(dir);
	return p;
}

bool kiln_part_of(const char *manifest_path, const char *name, unsigned *k, unsigned *n)
{
	size_t want_len = 0;
	const char *want = part_stem(manifest_path, &want_len), *stem;

	if (!kiln_is_part_name(name, k, n, &stem))
		return false;
	if (!want || !stem)
		return want == stem;
	return strlen(stem) - 5 == want_len && memcmp(stem, want, want_len) == 0;
}

/* Every sibling of part ST as journaled into *OUT. */
static kiln_status add_part(struct kiln_state *out, const struct kiln_state *part)
{
	kiln_status ret = KILN_OK;

	for (size_t i = 0; ret == KILN_OK && i < part->n; i++) {
		const struct kiln_record *r = &part->v[i].rec;
		if (!part->v[i].in_manifest)
			continue;
		for (unsigned c = 0; ret == KILN_OK && c < kiln_ncodecs; c++) {
			struct kiln_journaled j = { .coding = (kiln_coding)c };
			if (r->coding[c].outcome != KILN_CODING_KEPT)
				continue;
			j.size = r->coding[c].size;
			memcpy(j.sha256, r->coding[c].sha256, 32);
			j.src_known = true;
			j.src_size = r->size;
			memcpy(j.src_sha256, r->sha256, 32);
			snprintf(j.recipe, sizeof(j.recipe), "%s", r->coding[c].recipe);
			ret = kiln_state_add_journaled(out, r->rel, &j);
		}
	}
	for (size_t i = 0; ret == KILN_OK && i < part->nstale; i++) {
		const struct kiln_stale *s = &part->stale[i];
		size_t n = strlen(s->rel), sl = strlen(kiln_codecs[s->coding]->info.suffix);
		struct kiln_journaled j = { .coding = s->coding, .size = s->size };
		char *src;
		if (n <= sl)
			continue;
		if (!(src = strndup(s->rel, n - sl)))
			return KILN_ERR_NOMEM;
		memcpy(j.sha256, s->sha256, 32);
		ret = kiln_state_add_journaled(out, src, &j);
		free(src);
	}
	return ret;
}

static kiln_status note_seen(struct kiln_parts_seen *seen, const char *path,
			     const struct stat *st)
{
	struct kiln_part_seen *v = realloc(seen->v, (seen->n + 1) * sizeof(*v));

	if (!v)
		return KILN_ERR_NOMEM;
	seen->v = v;
	if (!(v[seen->n].path = strdup(path)))
		return KILN_ERR_NOMEM;
	v[seen->n].dev = st->st_dev;
	v[seen->n].ino = st->st_ino;
	seen->n++;
	return KILN_OK;
}

kiln_status kiln_parts_merge(const char *manifest_path, struct kiln_state *st,
			     struct kiln_parts_seen *seen, char **bad,
			     struct kiln_error *bad_err)
{
	char *dir = kiln_part_dir(manifest_path);
	kiln_status ret = KILN_OK;
	struct dirent *e;
	DIR *d;

	*bad = NULL;
	if (!dir)
		return KILN_ERR_NOMEM;
	if (!(d = opendir(dir))) {
		free(dir);
		return KILN_OK;
	}
	while (ret == KILN_OK && (e = readdir(d)) != NULL) {
		struct kiln_state part = { 0 };
		struct kiln_error err;
		struct stat pst;
		char *path;
		size_t len;
		if (!kiln_part_of(manifest_path, e->d_name, NULL, NULL))
			continue;
		len = strlen(dir) + strlen(e->d_name) + 2;
		if (!(path = malloc(len))) {
			ret = KILN_ERR_NOMEM;
			break;
		}
		snprintf(path, len, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", e->d_name);
		if (lstat(path, &pst) == 0 && S_ISREG(pst.st_mode)) {
			kiln_status got = kiln_state_load(path, &part, &err);
			if (got == KILN_ERR_NOMEM)
				ret = got;
			else if (got == KILN_OK && part.loaded &&
				 (ret = add_part(st, &part)) == KILN_OK)
				ret = note_seen(seen, path, &pst);
			else if (got != KILN_OK && ret == KILN_OK && !*bad) {
				/* (a part gone since the directory was read is
				 * merged or cleaned: nothing to say) */
				err.what = got == KILN_ERR_INVALID
						   ? "not a shard part kiln can read (remove it, "
						     "then run that shard again)"
						   : "cannot read the shard part";
				*bad_err = err;
				*bad = path;
				path = NULL;
			}
		}
		kiln_state_free(&part);
		free(path);
	}
	closedir(d);
	free(dir);
	return ret;
}

bool kiln_parts_remove(const struct kiln_parts_seen *seen)
{
	bool ok = true;

	for (size_t i = 0; i < seen->n; i++) {
		struct stat st;
		if (lstat(seen->v[i].path, &st) != 0 || st.st_dev != seen->v[i].dev ||
		    st.st_ino != seen->v[i].ino)
			continue;
		if (unlink(seen->v[i].path) != 0 && errno != ENOENT)
			ok = false;
	}
	return ok;
}

void kiln_parts_seen_free(struct kiln_parts_seen *seen)
{
	for (size_t i = 0; i < seen->n; i++)
		free(seen->v[i].path);
	free(seen->v);
	seen->v = NULL;
	seen->n = 0;
}
