/* journal.c - see journal.h. */
#include "journal.h"

#include "classify.h"
#include "codec.h"
#include "hash.h"
#include "sibling.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define PREFIX ".kiln-journal-"

kiln_status kiln_journal_open(const char *root, struct kiln_journal *j, struct kiln_error *err)
{
	size_t n = strlen(root) + sizeof("/" PREFIX "XXXXXX");

	j->fd = -1;
	err->suffix = "";
	if (!(j->path = malloc(n))) {
		err->status = KILN_ERR_NOMEM;
		err->errnum = ENOMEM;
		err->what = "cannot create the run journal";
		return KILN_ERR_NOMEM;
	}
	snprintf(j->path, n, "%s/" PREFIX "XXXXXX", root);
	j->fd = mkostemp(j->path, O_CLOEXEC | O_APPEND);
	if (j->fd < 0) {
		err->status = KILN_ERR_IO;
		err->errnum = errno;
		err->what = "cannot create the run journal";
		free(j->path);
		j->path = NULL;
		return KILN_ERR_IO;
	}
	flock(j->fd, LOCK_EX | LOCK_NB);
	return KILN_OK;
}

void kiln_journal_add(struct kiln_journal *j, const char *rel, kiln_coding c, uint64_t size,
		      const uint8_t sha256[32])
{
	size_t len = strlen(rel), cap = 4 * ((len + 2) / 3) + 128;
	char *line, hex[65];
	int k;

	if (!j || j->fd < 0 || !(line = malloc(cap)))
		return;
	kiln_hex(sha256, 32, hex);
	k = snprintf(line, cap, "%s %llu %s ", kiln_codecs[c]->name, (unsigned long long)size, hex);
	k += EVP_EncodeBlock((unsigned char *)line + k, (const unsigned char *)rel, (int)len);
	line[k++] = '\n';
	if (write(j->fd, line, (size_t)k) != k) {
		/* a journal that cannot be written only costs a later run its
		 * knowledge of this sibling; the run itself is not affected */
	}
	free(line);
}

void kiln_journal_close(struct kiln_journal *j, bool remove)
{
	if (j->fd >= 0)
		close(j->fd);
	if (remove && j->path)
		unlink(j->path);
	free(j->path);
	j->fd = -1;
	j->path = NULL;
}

/* Parse one line into its parts; false if it is malformed. */
static bool parse_line(char *line, kiln_coding *c, uint64_t *size, uint8_t sha[32], char **rel)
{
	char *name = strtok(line, " "), *sz = strtok(NULL, " "), *hex = strtok(NULL, " ");
	char *b64 = strtok(NULL, " \n"), *end;
	size_t n;
	int got;

	if (!name || !sz || !hex || !b64 || strlen(hex) != 64)
		return false;
	*c = KILN_NCODINGS;
	for (int k = 0; k < KILN_NCODINGS; k++)
		if (strcmp(name, kiln_codecs[k]->name) == 0)
			*c = (kiln_coding)k;
	*size = strtoull(sz, &end, 10);
	if (*c == KILN_NCODINGS || *end)
		return false;
	for (int i = 0; i < 32; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		sha[i] = (uint8_t)v;
	}
	n = strlen(b64);
	if (n == 0 || n % 4 || !(*rel = malloc(n / 4 * 3 + 1)))
		return false;
	got = EVP_DecodeBlock((unsigned char *)*rel, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		free(*rel);
		return false;
	}
	got -= (b64[n - 1] == '=') + (n > 1 && b64[n - 2] == '=');
	(*rel)[got] = '\0';
	if (!kiln_state_safe_rel(*rel, (size_t)got)) {
		free(*rel); /* a NUL inside, or a path kiln would never write */
		return false;
	}
	return true;
}

/* Record one journal line in *st. */
static kiln_status merge_one(struct kiln_state *st, kiln_coding c, uint64_t size,
			     const uint8_t sha[32], char *rel)
{
	struct kiln_prev_entry *pe = kiln_state_find(st, rel);

	if (!pe) {
		/* insert in order, so lookups keep working */
		struct kiln_prev_entry *v = realloc(st->v, (st->n + 1) * sizeof(*v));
		size_t lo = 0, hi = st->n;
		if (!v) {
			free(rel);
			return KILN_ERR_NOMEM;
		}
		st->v = v;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(st->v[mid].rel, rel) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&st->v[lo + 1], &st->v[lo], (st->n - lo) * sizeof(*v));
		st->n++;
		pe = &st->v[lo];
		memset(pe, 0, sizeof(*pe));
		pe->rel = rel;
		pe->outcome = KILN_OUTCOME_COMPRESSED; /* content unknown: never reused */
	} else {
		free(rel);
	}
	if (!pe->coding[c].kept) {
		pe->coding[c].kept = true;
		pe->coding[c].tried = false;
		pe->coding[c].size = size;
		memcpy(pe->coding[c].sha256, sha, 32);
	} else {
		pe->coding[c].alt = true;
		pe->coding[c].alt_size = size;
		memcpy(pe->coding[c].alt_sha256, sha, 32);
	}
	return KILN_OK;
}

kiln_status kiln_journal_merge(const char *root, const char *own, struct kiln_state *st)
{
	DIR *d = opendir(root);
	struct dirent *e;
	kiln_status ret = KILN_OK;

	if (!d)
		return KILN_OK;
	while (ret == KILN_OK && (e = readdir(d)) != NULL) {
		char path[PATH_MAX], line[PATH_MAX * 2];
		FILE *f;
		if (!kiln_is_journal_name(e->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", root, e->d_name) >= (int)sizeof(path) ||
		    (own && strcmp(path, own) == 0))
			continue;
		if (!(f = fopen(path, "re")))
			continue;
		if (!st->loaded) { /* no manifest: the journals are all there is */
			st->loaded = true;
			st->gzip_level = st->brotli_quality = -1;
		}
		while (ret == KILN_OK && fgets(line, sizeof(line), f)) {
			kiln_coding c;
			uint64_t size;
			uint8_t sha[32];
			char *rel;
			if (strchr(line, '\n') && parse_line(line, &c, &size, sha, &rel))
				ret = merge_one(st, c, size, sha, rel);
		}
		fclose(f);
	}
	closedir(d);
	return ret;
}

/* Nobody holds the journal's lock: its run is over.  (Unlike temporary
 * files, no age is required: removing a journal in the instant between its
 * creation and its lock costs that run nothing but the journal.) */
static bool writer_gone(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool gone;

	if (fd < 0)
		return false;
	gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return gone;
}

void kiln_journal_remove_stale(const char *root, const char *own)
{
	DIR *d = opendir(root);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		if (!kiln_is_journal_name(e->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", root, e->d_name) >= (int)sizeof(path) ||
		    (own && strcmp(path, own) == 0))
			continue;
		if (writer_gone(path))
			unlink(path);
	}
	closedir(d);
}
