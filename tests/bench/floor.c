/*
 * floor.c - the physical floor for compressing a tree on P cores.
 *
 * usage: floor [-j P] [-r REPEATS] [--WORD | --no-WORD | --EXTRA]... DIR
 *        (WORD: a coding's option word, as kiln takes it: gzip, brotli,
 *        zstd; EXTRA a coding's extra setting, on at its default: zopfli)
 *
 * Times, on one thread, each single encode kiln would do (libdeflate gzip at
 * level 12 with one reused compressor; brotli quality 11 with the window
 * sized to the file) for every regular file under DIR that is not already a
 * .gz/.br sibling, and prints
 *   sum   the total single-thread encode time,
 *   max   the longest single encode,
 *   floor max(sum / P, max): no run on P cores can be faster.
 * It uses libkiln's own codec table, so the settings are kiln's exactly.
 * Each encode's output buffer is touched before the clock starts, and with
 * -r N each encode is timed N times and the fastest counts: the floor is a
 * lower bound, so noise must not raise it.
 * Reading and deciding are left out on purpose: the floor is encoding only.
 */
#include "codec.h"
#include "classify.h"

#include <dirent.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct totals {
	double sum, max;
	unsigned long files;
	int repeats;
	void *state[KILN_MAX_CODINGS];
	struct kiln_options opt;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const atomic_int never;
static const struct kiln_encode_ctl go_on = { &never, NULL, NULL };

static void encode_file(struct totals *t, const char *path, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	int fd = open(path, O_RDONLY);
	size_t done = 0;

	while (fd >= 0 && done < size) {
		ssize_t r = read(fd, buf + done, size - done);
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	for (unsigned c = 0; c < kiln_ncodecs && done == size; c++) {
		const struct kiln_codec *codec = kiln_codecs[c];
		size_t cap, out_len;
		uint8_t *out;
		double t0, dt;
		if (!(t->opt.codings & (1u << c)))
			continue;
		cap = codec->bound(size);
		out = malloc(cap);
		if (!out)
			break;
		memset(out, 0, cap);
		dt = 1e30;
		for (int r = 0; r < t->repeats; r++) {
			t0 = now();
			codec->encode(t->state[c], buf, size, out, cap, &out_len, &go_on);
			t0 = now() - t0;
			if (t0 < dt)
				dt = t0;
		}
		t->sum += dt;
		if (dt > t->max)
			t->max = dt;
		free(out);
	}
	t->files++;
	free(buf);
}

static void walk(struct totals *t, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(t, path);
		else if (S_ISREG(st.st_mode) && !kiln_sibling_base_len(e->d_name) &&
			 !kiln_is_own_output(e->d_name) && !kiln_media_extension(e->d_name) &&
			 (uint64_t)st.st_size >= t->opt.min_size)
			encode_file(t, path, (size_t)st.st_size);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	long p = sysconf(_SC_NPROCESSORS_ONLN);
	const char *dir = NULL;

	kiln_options_init(&t.opt);
	t.repeats = 1;
	for (int i = 1; i < argc; i++) {
		kiln_coding x = -1;
		for (unsigned k = 0; k < kiln_ncodecs; k++)
			if (kiln_codecs[k]->info.extra_word &&
			    strcmp(argv[i] + 2, kiln_codecs[k]->info.extra_word) == 0 &&
			    strncmp(argv[i], "--", 2) == 0)
				x = (kiln_coding)k;
		if (x >= 0) {
			t.opt.extra[x] = kiln_codecs[x]->info.extra_default;
			continue;
		}
		kiln_coding c = strncmp(argv[i], "--no-", 5) == 0 ? kiln_coding_find(argv[i] + 5)
				: strncmp(argv[i], "--", 2) == 0 ? kiln_coding_find(argv[i] + 2) : -1;
		if (c >= 0 && argv[i][2] == 'n' && argv[i][3] == 'o' && argv[i][4] == '-')
			t.opt.codings &= ~(1u << c);
		else if (c >= 0)
			t.opt.codings |= 1u << c;
		else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc)
			p = atol(argv[++i]);
		else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
			t.repeats = atoi(argv[++i]);
		else
			dir = argv[i];
	}
	if (!dir || p < 1 || t.repeats < 1) {
		fputs("usage: floor [-j P] [-r REPEATS] [--WORD | --no-WORD]... DIR\n", stderr);
		return 2;
	}
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (t.opt.codings & (1u << c))
			t.state[c] = kiln_codecs[c]->state_new(t.opt.level[c], t.opt.extra[c]);
	walk(&t, dir);
	printf("files %lu\nsum %.3f\nmax %.3f\nfloor %.3f\n", t.files, t.sum, t.max,
	       t.sum / (double)p > t.max ? t.sum / (double)p : t.max);
	for (unsigned c = 0; c < kiln_ncodecs; c++)
		if (t.state[c])
			kiln_codecs[c]->state_free(t.state[c]);
	return 0;
}
