/*
 * ui.c - messages, progress and summary for the kiln program.
 *
 * The progress line is drawn only when asked (by default when stderr is a
 * terminal), at most ten times a second, and by a small ticker thread too so
 * that elapsed time and ETA keep moving while one large file is encoded.  A
 * mutex keeps the ticker and the library's (already serialised) callbacks
 * from drawing at once.
 */
#include "ui.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ui {
	FILE *err;
	enum ui_verbosity verbosity;
	bool progress;
	pthread_mutex_t lock;
	pthread_t ticker;
	bool ticker_running, stop;
	pthread_cond_t wake;

	double start, last_draw;
	bool line_shown;
	uint64_t total_files, total_bytes, done_files, done_bytes;
	uint64_t count[KILN_NOUTCOMES];
	uint64_t bytes_in[KILN_MAX_CODINGS], bytes_out[KILN_MAX_CODINGS];
	uint64_t artifact_errors, removed, unchanged;
	json_t *errors; /* [{"path", "reason"}], for --json */
	json_t *problems; /* check's: [{"path", "kind", "detail"}], for --json */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Length of the printable UTF-8 character at S, or 0 for a control
 * character (C0, DEL, C1) or a byte that is not valid UTF-8. */
static size_t printable_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = kiln_utf8_len(s);

	if (n == 1 && (u[0] < 0x20 || u[0] == 0x7f))
		return 0;
	if (n == 2 && u[0] == 0xc2 && u[1] < 0xa0)
		return 0;
	/* bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069)
	 * can make a name display as another */
	if (n == 3 && u[0] == 0xe2 && ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) ||
				       (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)))
		return 0;
	return n;
}

void ui_put_escaped(FILE *f, const char *str)
{
	const char *s = str;

	while (*s) {
		size_t n = printable_len(s);
		if (n && *s != '\\') {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		switch (*s) {
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default: fprintf(f, "\\x%02x", (unsigned char)*s); break;
		}
		s++;
	}
}

static void human(char *buf, size_t n, uint64_t bytes)
{
	if (bytes < 1024)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, n, "%.1f KiB", (double)bytes / 1024);
	else if (bytes < 1024ull * 1024 * 1024)
		snprintf(buf, n, "%.1f MiB", (double)bytes / (1024 * 1024));
	else
		snprintf(buf, n, "%.2f GiB", (double)bytes / (1024.0 * 1024 * 1024));
}

static void clear_line(struct ui *ui)
{
	if (ui->line_shown) {
		fputs("\r\033[K", ui->err);
		ui->line_shown = false;
	}
}

static void draw(struct ui *ui, bool force)
{
	double t = now(), elapsed = t - ui->start;
	char done[32], total[32];

	if (!ui->progress || (!force && t - ui->last_draw < 0.1))
		return;
	ui->last_draw = t;
	human(done, sizeof(done), ui->done_bytes);
	human(total, sizeof(total), ui->total_bytes);
	fprintf(ui->err, "\r\033[Kkiln: %llu/%llu files, %s/%s, %.1f s",
		(unsigned long long)ui->done_files, (unsigned long long)ui->total_files,
		done, total, elapsed);
	if (ui->done_bytes > 0 && ui->total_bytes > ui->done_bytes && elapsed > 0.5) {
		double eta = elapsed * (double)(ui->total_bytes - ui->done_bytes) /
			     (double)ui->done_bytes;
		fprintf(ui->err, ", ETA %.0f s", eta);
	}
	fflush(ui->err);
	ui->line_shown = true;
}

static void *ticker_main(void *p)
{
	struct ui *ui = p;
	struct timespec ts;

	pthread_mutex_lock(&ui->lock);
	while (!ui->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ui->wake, &ui->lock, &ts);
		if (!ui->stop && ui->total_files)
			draw(ui, false);
	}
	pthread_mutex_unlock(&ui->lock);
	return NULL;
}

struct ui *ui_new(FILE *err, enum ui_verbosity verbosity, bool progress)
{
	struct ui *ui = calloc(1, sizeof(*ui));

	if (!ui)
		return NULL;
	ui->err = err;
	ui->verbosity = verbosity;
	ui->progress = progress;
	ui->start = now();
	ui->errors = json_array();
	ui->problems = json_array();
	pthread_mutex_init(&ui->lock, NULL);
	pthread_cond_init(&ui->wake, NULL);
	if (progress && pthread_create(&ui->ticker, NULL, ticker_main, ui) == 0)
		ui->ticker_running = true;
	return ui;
}

static void stop_ticker(struct ui *ui)
{
	if (!ui->ticker_running)
		return;
	pthread_mutex_lock(&ui->lock);
	ui->stop = true;
	pthread_cond_signal(&ui->wake);
	pthread_mutex_unlock(&ui->lock);
	pthread_join(ui->ticker, NULL);
	ui->ticker_running = false;
}

void ui_free(struct ui *ui)
{
	if (!ui)
		return;
	stop_ticker(ui);
	pthread_cond_destroy(&ui->wake);
	pthread_mutex_destroy(&ui->lock);
	json_decref(ui->errors);
	json_decref(ui->problems);
	free(ui);
}

void ui_on_plan(void *user, const char *root, uint64_t files, uint64_t bytes)
{
	struct ui *ui = user;

	(void)root;
	pthread_mutex_lock(&ui->lock);
	ui->total_files += files;
	ui->total_bytes += bytes;
	draw(ui, true);
	pthread_mutex_unlock(&ui->lock);
}

/* "ROOT/PATH" (or, for an archive's entry, "ROOT: PATH") + suffix,
 * escaped: the file a message is about. */
static void put_path(struct ui *ui, const struct kiln_report *r, const char *suffix)
{
	ui_put_escaped(ui->err, r->root);
	if (*r->path) {
		if (r->in_archive)
			fputs(": ", ui->err);
		else if (strcmp(r->root, "/") != 0)
			fputc('/', ui->err);
		ui_put_escaped(ui->err, r->path);
	}
	fputs(suffix, ui->err);
}

/* Print "kiln: PATH: reason" and keep it for the JSON summary.  PATH is
 * printed already escaped by the caller's put function. */
static void error_line(struct ui *ui, const char *escaped_path, const char *what, int errnum)
{
	char reason[512];
	json_t *rec;

	snprintf(reason, sizeof(reason), "%s%s%s", what ? what : "failed", errnum ? ": " : "",
		 errnum ? strerror(errnum) : "");
	fprintf(ui->err, "kiln: %s: %s\n", escaped_path, reason);
	rec = json_pack("{s:s, s:s}", "path", escaped_path, "reason", reason);
	if (rec && ui->errors)
		json_array_append_new(ui->errors, rec);
	else
		json_decref(rec);
}

/* The escaped "ROOT/PATH" + suffix of a report, malloc'ed. */
static char *report_path(const struct kiln_report *r, const char *suffix)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	ui_put_escaped(f, r->root);
	if (*r->path) {
		if (r->in_archive)
			fputs(": ", f);
		else if (strcmp(r->root, "/") != 0)
			fputc('/', f);
		ui_put_escaped(f, r->path);
	}
	ui_put_escaped(f, suffix);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void print_error(struct ui *ui, const struct kiln_report *r)
{
	const struct kiln_error *e = &r->error;
	char *path = report_path(r, e->suffix ? e->suffix : "");

	error_line(ui, path ? path : r->path, e->what, e->errnum);
	free(path);
}

static void print_verbose(struct ui *ui, const struct kiln_report *r)
{
	put_path(ui, r, "");
	fprintf(ui->err, ": %s", kiln_outcome_name(r->outcome));
	if (r->outcome == KILN_OUTCOME_COMPRESSED || r->outcome == KILN_OUTCOME_NO_GAIN) {
		fprintf(ui->err, ", %llu B", (unsigned long long)r->size);
		for (int c = 0; c < (int)kiln_coding_count(); c++) {
			if (r->coding[c].outcome == KILN_CODING_OFF)
				continue;
			fprintf(ui->err, ", %s %llu B", kiln_coding_name((kiln_coding)c),
				(unsigned long long)r->coding[c].size);
			if (r->size)
				fprintf(ui->err, " (%.1f%%)",
					100.0 * (double)r->coding[c].size / (double)r->size);
			if (r->coding[c].outcome != KILN_CODING_KEPT)
				fputs(" no-gain", ui->err);
			else if (r->coding[c].origin == KILN_ORIGIN_CACHE)
				fputs(" from cache", ui->err);
			else if (r->coding[c].origin == KILN_ORIGIN_PREVIOUS)
				fputs(" unchanged", ui->err);
		}
	} else if (r->outcome == KILN_OUTCOME_MEDIA || r->outcome == KILN_OUTCOME_SMALL) {
		fprintf(ui->err, ", %llu B", (unsigned long long)r->size);
	}
	fputc('\n', ui->err);
}

void ui_on_file(void *user, const struct kiln_report *r)
{
	struct ui *ui = user;

	/* a file abandoned because the run was interrupted is not a failure of
	 * its own: the interruption is what the exit status will say */
	if (r->outcome == KILN_OUTCOME_ERROR && r->error.status == KILN_ERR_CANCELLED)
		return;
	pthread_mutex_lock(&ui->lock);
	ui->done_files++;
	ui->done_bytes += r->size;
	ui->count[r->outcome]++;
	if (r->outcome == KILN_OUTCOME_COMPRESSED) {
		bool all_previous = true;
		for (int c = 0; c < (int)kiln_coding_count(); c++)
			if (r->coding[c].outcome == KILN_CODING_KEPT &&
			    r->coding[c].origin != KILN_ORIGIN_PREVIOUS)
				all_previous = false;
		ui->unchanged += all_previous;
	}
	for (int c = 0; c < (int)kiln_coding_count(); c++) {
		if (r->coding[c].outcome != KILN_CODING_KEPT)
			continue;
		ui->bytes_in[c] += r->size;
		ui->bytes_out[c] += r->coding[c].size;
	}
	if (r->outcome == KILN_OUTCOME_ERROR) {
		clear_line(ui);
		print_error(ui, r);
	} else if (r->outcome == KILN_OUTCOME_SPECIAL && ui->verbosity >= UI_NORMAL) {
		clear_line(ui);
		fputs("kiln: ", ui->err);
		put_path(ui, r, "");
		fputs(": warning: not a regular file, skipped\n", ui->err);
	} else if (ui->verbosity >= UI_VERBOSE) {
		clear_line(ui);
		print_verbose(ui, r);
	}
	draw(ui, false);
	pthread_mutex_unlock(&ui->lock);
}

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	ui_put_escaped(f, s);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void ui_error(struct ui *ui, const char *path, const char *what, int errnum)
{
	char *p = escaped(path);

	pthread_mutex_lock(&ui->lock);
	clear_line(ui);
	error_line(ui, p ? p : "?", what, errnum);
	ui->artifact_errors++;
	pthread_mutex_unlock(&ui->lock);
	free(p);
}

void ui_on_artifact(void *user, const char *what, const char *path, const struct kiln_error *err)
{
	struct ui *ui = user;
	char *p = escaped(path);

	pthread_mutex_lock(&ui->lock);
	clear_line(ui);
	if (err) {
		char reason[256];
		snprintf(reason, sizeof(reason), "cannot write the %s: %s", what,
			 err->what ? err->what : "failed");
		error_line(ui, p ? p : "?", reason, err->errnum);
		ui->artifact_errors++;
	} else if (ui->verbosity >= UI_VERBOSE) {
		fprintf(ui->err, "%s: %s written\n", p ? p : "?", what);
	}
	pthread_mutex_unlock(&ui->lock);
	free(p);
}

/* "gzip" / "brotli": how a person names the coding in a message. */
static const char *coding_word(int coding)
{
	const struct kiln_coding_info *i = kiln_coding_info(coding);

	return i ? i->word : "";
}

/* Keep one of check's problems for --json. */
static void add_problem(struct ui *ui, const char *path, kiln_event ev, int coding,
			const char *detail)
{
	json_t *rec = json_pack("{s:s, s:s}", "path", path ? path : "?", "kind",
				kiln_event_name(ev));

	if (rec && coding >= 0)
		json_object_set_new(rec, "coding", json_string(kiln_coding_name(coding)));
	if (rec && detail)
		json_object_set_new(rec, "detail", json_string(detail));
	if (!rec || json_array_append_new(ui->problems, rec) != 0)
		ui->artifact_errors++; /* the JSON would be incomplete */
}

void ui_on_event(void *user, kiln_event ev, const char *path, int coding,
		 const struct kiln_error *err)
{
	struct ui *ui = user;
	char *p = escaped(path), what[200];
	const char *detail = err && err->what ? err->what : NULL;

	pthread_mutex_lock(&ui->lock);
	clear_line(ui);
	switch (ev) {
	case KILN_EVENT_REMOVED:
		ui->removed++;
		if (ui->verbosity >= UI_VERBOSE)
			fprintf(ui->err, "%s: removed\n", p ? p : "?");
		break;
	case KILN_EVENT_TEMP_REMOVED:
		if (ui->verbosity >= UI_VERBOSE)
			fprintf(ui->err, "%s: %s\n", p ? p : "?", kiln_event_name(ev));
		break;
	case KILN_EVENT_FOREIGN:
	case KILN_EVENT_STATE_IGNORED:
		if (ui->verbosity >= UI_NORMAL)
			fprintf(ui->err, "kiln: %s: warning: %s%s%s\n", p ? p : "?", kiln_event_name(ev),
				detail ? ": " : "", detail ? detail : "");
		break;
	case KILN_EVENT_REMOVE_FAILED:
	case KILN_EVENT_CACHE_FAILED:
		snprintf(what, sizeof(what), "%s%s%s", kiln_event_name(ev), detail ? ": " : "",
			 detail ? detail : "");
		error_line(ui, p ? p : "?", what, err ? err->errnum : 0);
		ui->artifact_errors++;
		break;
	case KILN_EVENT_MISSING_SIBLING:
	case KILN_EVENT_STALE_SIBLING:
		/* check's findings: always printed, they are its output */
		fprintf(ui->err, "kiln: %s: %s %s sibling%s%s\n", p ? p : "?",
			ev == KILN_EVENT_STALE_SIBLING ? "stale" : "missing", coding_word(coding),
			detail ? ": " : "", detail ? detail : "");
		add_problem(ui, p, ev, coding, detail);
		break;
	default:
		fprintf(ui->err, "kiln: %s: %s%s%s\n", p ? p : "?", kiln_event_name(ev),
			detail ? ": " : "", detail ? detail : "");
		add_problem(ui, p, ev, coding, detail);
		break;
	}
	pthread_mutex_unlock(&ui->lock);
	free(p);
}

void ui_finish_command(struct ui *ui, const char *command, uint64_t n)
{
	pthread_mutex_lock(&ui->lock);
	clear_line(ui);
	if (ui->verbosity >= UI_NORMAL) {
		if (strcmp(command, "check") == 0)
			fprintf(ui->err, "kiln: check: %llu problem%s, %llu error%s\n",
				(unsigned long long)n, n == 1 ? "" : "s",
				(unsigned long long)ui_errors(ui), ui_errors(ui) == 1 ? "" : "s");
		else
			fprintf(ui->err, "kiln: clean: %llu file%s removed, %llu error%s\n",
				(unsigned long long)n, n == 1 ? "" : "s",
				(unsigned long long)ui_errors(ui), ui_errors(ui) == 1 ? "" : "s");
	}
	pthread_mutex_unlock(&ui->lock);
}

uint64_t ui_errors(const struct ui *ui)
{
	return ui->count[KILN_OUTCOME_ERROR] + ui->artifact_errors;
}

int ui_print_json(struct ui *ui, FILE *f, const char *command)
{
	json_t *root = json_object(), *files = json_object(), *bytes = json_object();
	int ret = -1;

	if (!root || !files || !bytes)
		goto out;
	if (command && strcmp(command, "check") == 0) {
		/* check's output is its problems, and the errors beside them */
		json_object_set_new(root, "command", json_string(command));
		json_object_set(root, "problems", ui->problems);
		json_object_set_new(root, "problem_count",
				    json_integer((json_int_t)json_array_size(ui->problems)));
		json_object_set(root, "errors", ui->errors);
		json_object_set_new(root, "elapsed_seconds", json_real(now() - ui->start));
		goto dump;
	}
	if (command)
		json_object_set_new(root, "command", json_string(command));
	for (int o = 0; o < KILN_NOUTCOMES; o++)
		json_object_set_new(files, kiln_outcome_name((kiln_outcome)o),
				    json_integer((json_int_t)ui->count[o]));
	for (int c = 0; c < (int)kiln_coding_count(); c++)
		json_object_set_new(bytes, kiln_coding_name((kiln_coding)c),
				    json_pack("{s:I, s:I}", "in", (json_int_t)ui->bytes_in[c],
					      "out", (json_int_t)ui->bytes_out[c]));
	json_object_set(root, "files", files);
	json_object_set(root, "bytes", bytes);
	json_object_set_new(root, "removed", json_integer((json_int_t)ui->removed));
	json_object_set_new(root, "unchanged", json_integer((json_int_t)ui->unchanged));
	json_object_set_new(root, "elapsed_seconds", json_real(now() - ui->start));
	json_object_set(root, "errors", ui->errors);
dump:
	if (json_dumpf(root, f, JSON_COMPACT | JSON_REAL_PRECISION(6)) == 0 && fputc('\n', f) != EOF &&
	    fflush(f) == 0)
		ret = 0;
out:
	json_decref(files);
	json_decref(bytes);
	json_decref(root);
	return ret;
}

void ui_finish(struct ui *ui)
{
	static const kiln_outcome shown[] = {
		KILN_OUTCOME_COMPRESSED, KILN_OUTCOME_MEDIA, KILN_OUTCOME_SMALL,
		KILN_OUTCOME_NO_GAIN, KILN_OUTCOME_EXCLUDED,
	};
	static const kiln_outcome if_any[] = {
		KILN_OUTCOME_SIBLING, KILN_OUTCOME_SYMLINK, KILN_OUTCOME_SPECIAL,
	};
	uint64_t files = 0;

	stop_ticker(ui);
	pthread_mutex_lock(&ui->lock);
	clear_line(ui);
	if (ui->verbosity >= UI_NORMAL) {
		for (int o = 0; o < KILN_NOUTCOMES; o++)
			files += ui->count[o];
		fprintf(ui->err, "kiln: %llu files: ", (unsigned long long)files);
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
			fprintf(ui->err, "%llu %s, ", (unsigned long long)ui->count[shown[i]],
				kiln_outcome_name(shown[i]));
		for (size_t i = 0; i < sizeof(if_any) / sizeof(if_any[0]); i++)
			if (ui->count[if_any[i]])
				fprintf(ui->err, "%llu %s, ", (unsigned long long)ui->count[if_any[i]],
					kiln_outcome_name(if_any[i]));
		fprintf(ui->err, "%llu errors, %llu removed", (unsigned long long)ui->count[KILN_OUTCOME_ERROR],
			(unsigned long long)ui->removed);
		if (ui->unchanged)
			fprintf(ui->err, ", %llu unchanged", (unsigned long long)ui->unchanged);
		for (int c = 0; c < (int)kiln_coding_count(); c++) {
			char in[32], out[32];
			if (!ui->bytes_in[c])
				continue;
			human(in, sizeof(in), ui->bytes_in[c]);
			human(out, sizeof(out), ui->bytes_out[c]);
			fprintf(ui->err, "; %s %s -> %s (%.1f%%)", kiln_coding_name((kiln_coding)c),
				in, out, 100.0 * (double)ui->bytes_out[c] / (double)ui->bytes_in[c]);
		}
		fprintf(ui->err, "; %.2f s\n", now() - ui->start);
	}
	fflush(ui->err);
	pthread_mutex_unlock(&ui->lock);
}
