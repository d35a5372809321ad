/* journal.c - see journal.h. */
#include "journal.h"

#include "beneath.h"

#include "classify.h"
#include "codec.h"
#include "hash.h"
#include "tempfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define PREFIX ".kiln-journal-"

void kiln_journal_init(struct kiln_journal *j, const char *root, bool disabled)
{
	memset(j, 0, sizeof(*j));
	pthread_mutex_init(&j->lock, NULL);
	j->root = root;
	j->disabled = disabled;
	j->fd = -1;
}

/* Under J's lock: the journal's fd, creating it on first use. */
static int journal_fd(struct kiln_journal *j)
{
	struct kiln_error err;

	if (j->fd < 0 && !j->disabled && !j->failed) {
		j->fd = kiln_unique_file(j->root, PREFIX, O_APPEND, &j->path, &err);
		if ((j->failed = j->fd < 0))
			j->errnum = err.errnum ? err.errnum : EIO;
		if (j->fd >= 0 && j->shard_count) {
			char tag[64];
			int n = snprintf(tag, sizeof(tag), "shard %u %u\n", j->shard_index,
					 j->shard_count);
			if (write(j->fd, tag, (size_t)n) != n) {
				j->failed = true;
				j->errnum = errno ? errno : ENOSPC;
				close(j->fd);
				j->fd = -1;
			}
		}
	}
	return j->fd;
}

int kiln_journal_add(struct kiln_journal *j, const char *rel, kiln_coding c,
		      const char *recipe, uint64_t size, const uint8_t sha256[32],
		      uint64_t src_size, const uint8_t src_sha256[32])
{
	size_t len = strlen(rel), cap = 4 * ((len + 2) / 3) + 256 + KILN_RECIPE_MAX;
	char *line, hex[65], src_hex[65];
	int k, fd;

	if (!(line = malloc(cap)))
		return ENOMEM;
	kiln_hex(sha256, 32, hex);
	kiln_hex(src_sha256, 32, src_hex);
	k = snprintf(line, cap, "%s %s %llu %s %llu %s ", kiln_codecs[c]->info.name,
		     *recipe ? recipe : "-", (unsigned long long)size, hex,
		     (unsigned long long)src_size, src_hex);
	k += (int)kiln_base64_encode(rel, len, line + k);
	line[k++] = '\n';
	/* under the lock, whole: a short write (a file size limit, a full
	 * disk) is retried to learn its errno, and no other line can land in
	 * the middle of this one */
	pthread_mutex_lock(&j->lock);
	fd = journal_fd(j);
	if (fd >= 0 && kiln_write_all(fd, (const uint8_t *)line, (size_t)k) != 0) {
		j->errnum = errno ? errno : ENOSPC;
		j->failed = true;
		fd = -1;
	}
	pthread_mutex_unlock(&j->lock);
	free(line);
	if (fd >= 0)
		return 0;
	pthread_mutex_lock(&j->lock);
	k = j->errnum ? j->errnum : EIO;
	pthread_mutex_unlock(&j->lock);
	return k;
}

void kiln_journal_close(struct kiln_journal *j, bool remove)
{
	if (j->fd >= 0)
		close(j->fd);
	if (remove && j->path)
		kiln_beneath_unlink(j->root, j->path);
	free(j->path);
	j->fd = -1;
	j->path = NULL;
}

static bool parse_hex(const char *hex, uint8_t out[32])
{
	if (strlen(hex) != 64)
		return false;
	for (int i = 0; i < 32; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (uint8_t)v;
	}
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* Parse one line; false if it is malformed.  Lines of kiln 0.1 have only
 * the coding, size, digest and path. */
static bool parse_line(char *line, struct kiln_journaled *j, char **rel)
{
	char *f[8];
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \n", &save); t && n < 8; t = strtok_r(NULL, " \n", &save))
		f[n++] = t;
	if (n != 7 && n != 4)
		return false;
	memset(j, 0, sizeof(*j));
	j->coding = kiln_coding_find(f[0]);
	if (j->coding < 0 || strcmp(f[0], kiln_codecs[j->coding]->info.name) != 0)
		return false;
	if (n == 7) {
		if (strlen(f[1]) >= KILN_RECIPE_MAX || !parse_u64(f[2], &j->size) ||
		    !parse_hex(f[3], j->sha256) || !parse_u64(f[4], &j->src_size) ||
		    !parse_hex(f[5], j->src_sha256))
			return false;
		if (strcmp(f[1], "-") != 0)
			strcpy(j->recipe, f[1]);
		j->src_known = true;
	} else if (!parse_u64(f[1], &j->size) || !parse_hex(f[2], j->sha256)) {
		return false;
	}
	/* a NUL inside, or a path kiln would never write, is refused */
	return (*rel = kiln_state_rel_base64(f[n - 1])) != NULL;
}

/* The journal PATH (in ROOT), opened beneath it for reading, or NULL. */
static FILE *open_journal(const char *root, const char *path)
{
	int fd = kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	if (fd >= 0 && !f)
		close(fd);
	return f;
}

/* Nobody holds the journal's lock: its run is over.  (Unlike temporary
 * files, no age is required: removing a journal in the instant between its
 * creation and its lock costs that run nothing but the journal.) */
static bool writer_gone(const char *root, const char *path)
{
	int fd = kiln_beneath_open(root, path, O_RDONLY | O_NONBLOCK, 0);
	bool gone;

	if (fd < 0)
		return false;
	gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return gone;
}

/* Call FN(ARG, ROOT, PATH) for each journal in ROOT whose writer is gone
 * (ROOT's directory as beneath.h opens it). */
static kiln_status each_dead(const char *root,
			     kiln_status (*fn)(void *, const char *, const char *),
			     void *arg)
{
	int fd = kiln_beneath_top(root);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	kiln_status ret = KILN_OK;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return KILN_OK;
	}
	while (ret == KILN_OK && (e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		if (!kiln_is_journal_name(e->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", root, e->d_name) >= (int)sizeof(path))
			continue;
		if (writer_gone(root, path))
			ret = fn(arg, root, path);
	}
	closedir(d);
	return ret;
}

static kiln_status merge_file(void *arg, const char *root, const char *path)
{
	struct kiln_state *st = arg;
	char line[PATH_MAX * 2 + 512];
	kiln_status ret = KILN_OK;
	FILE *f = open_journal(root, path);

	if (!f)
		return KILN_OK;
	while (ret == KILN_OK && fgets(line, sizeof(line), f)) {
		struct kiln_journaled j;
		char *rel;
		if (!strchr(line, '\n') || !parse_line(line, &j, &rel))
			continue;
		ret = kiln_state_add_journaled(st, rel, &j);
		free(rel);
	}
	fclose(f);
	return ret;
}

kiln_status kiln_journal_merge(const char *root, struct kiln_state *st)
{
	return each_dead(root, merge_file, st);
}

static kiln_status found(void *arg, const char *root, const char *path)
{
	(void)root;
	(void)path;
	*(bool *)arg = true;
	return KILN_ERR_CANCELLED; /* stop at the first */
}

bool kiln_journal_any(const char *root)
{
	bool any = false;

	each_dead(root, found, &any);
	return any;
}

struct removal {
	const char *own;
};

static kiln_status remove_one(void *arg, const char *root, const char *path)
{
	struct removal *r = arg;

	if (!r->own || strcmp(path, r->own) != 0)
		kiln_beneath_unlink(root, path);
	return KILN_OK;
}

void kiln_journal_remove_stale(const char *root, const char *own)
{
	struct removal r = { own };

	each_dead(root, remove_one, &r);
}

struct settled_removal {
	bool (*settled)(void *arg, const char *rel, const struct kiln_journaled *j);
	void *arg;
};

/* Remove the journal at PATH if every line of it is settled. */
static kiln_status remove_if_settled(void *arg, const char *root, const char *path)
{
	const struct settled_removal *r = arg;
	char line[PATH_MAX * 2 + 512];
	bool all = true;
	FILE *f = open_journal(root, path);

	if (!f)
		return KILN_OK;
	while (all && fgets(line, sizeof(line), f)) {
		struct kiln_journaled j;
		char *rel;
		if (strncmp(line, "shard ", 6) == 0 && strchr(line, '\n'))
			continue; /* the shard a journal was written by */
		if (!strchr(line, '\n'))
			break; /* cut short by a kill: its sibling was never renamed */
		if (!parse_line(line, &j, &rel)) {
			all = false; /* a line it cannot read: who knows */
			break;
		}
		all = r->settled(r->arg, rel, &j);
		free(rel);
	}
	fclose(f);
	if (all)
		kiln_beneath_unlink(root, path);
	return KILN_OK;
}

void kiln_journal_remove_settled(const char *root,
				 bool (*settled)(void *arg, const char *rel,
						 const struct kiln_journaled *j),
				 void *arg)
{
	struct settled_removal r = { settled, arg };

	each_dead(root, remove_if_settled, &r);
}

struct shard_removal {
	unsigned k, n;
};

/* Remove the journal at PATH if its first line names shard K of N. */
static kiln_status remove_if_shard(void *arg, const char *root, const char *path)
{
	const struct shard_removal *r = arg;
	char line[64], want[64];
	FILE *f = open_journal(root, path);
	bool ours;

	if (!f)
		return KILN_OK;
	snprintf(want, sizeof(want), "shard %u %u\n", r->k, r->n);
	ours = fgets(line, sizeof(line), f) && strcmp(line, want) == 0;
	fclose(f);
	if (ours)
		kiln_beneath_unlink(root, path);
	return KILN_OK;
}

void kiln_journal_remove_shard(const char *root, unsigned k, unsigned n)
{
	struct shard_removal r = { k, n };

	each_dead(root, remove_if_shard, &r);
}
