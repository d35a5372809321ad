/*
 * ui.c - messages, progress and summary for the kiln program.
 *
 * The progress line is drawn only when asked (by default when stderr is a
 * terminal), at most ten times a second, and by a small ticker thread too so
 * that elapsed time and ETA keep moving while one large file is encoded.  It
 * counts the bytes the library reports as read or encoded, and is cut to
 * the terminal's width (TIOCGWINSZ on stderr, read at each draw) so that it
 * never wraps.  A mutex keeps the ticker and the library's (already
 * serialised) callbacks from drawing at once.  The closing summary is
 * ui_summary.c's.
 */
#include "ui.h"
#include "ui_state.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

double ui_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *ui_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
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

/* S escaped as ui_put_escaped() writes it, malloc'ed (NULL: no memory). */
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

void ui_human(char *buf, size_t n, uint64_t bytes)
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

/* ---- the progress line ---- */

void ui_clear_line(struct ui *ui)
{
	if (ui->line_shown) {
		fputs("\r\033[K", ui->err);
		ui->line_shown = false;
	}
}

/* Columns of the terminal on F (80 if it will not say). */
static size_t term_width(FILE *f)
{
	struct winsize ws;

	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Append PART to LINE (LEN bytes so far) if the result stays within MAX. */
static void add_part(char *line, size_t *len, size_t max, const char *part)
{
	size_t n = strlen(part);

	if (*len + n <= max) {
		memcpy(line + *len, part, n + 1);
		*len += n;
	}
}

static void draw(struct ui *ui, bool force)
{
	double t = ui_now(), elapsed = t - ui->start;
	char line[512], part[128], done[32], total[32];
	size_t len, max;

	if (!ui->progress || (!force && t - ui->last_draw < 0.1))
		return;
	ui->last_draw = t;
	/* one column short of the width: writing the last column wraps on
	 * some terminals */
	max = term_width(ui->err) - 1;
	if (max >= sizeof(line))
		max = sizeof(line) - 1;
	len = (size_t)snprintf(line, sizeof(line), "kiln: %s%llu/%llu files",
			       ui->interrupted ? "stopping, " : "",
			       (unsigned long long)ui->done_files,
			       (unsigned long long)ui->total_files);
	if (len > max)
		len = max; /* a very narrow terminal: cut */
	line[len] = '\0';
	ui_human(done, sizeof(done), ui->done_bytes);
	ui_human(total, sizeof(total), ui->total_bytes);
	snprintf(part, sizeof(part), ", %s/%s", done, total);
	add_part(line, &len, max, part);
	snprintf(part, sizeof(part), ", %.1f s", elapsed);
	add_part(line, &len, max, part);
	if (ui->done_bytes > 0 && ui->total_bytes > ui->done_bytes && elapsed > 0.5 &&
	    !ui->interrupted) {
		double eta = elapsed * (double)(ui->total_bytes - ui->done_bytes) /
			     (double)ui->done_bytes;
		snprintf(part, sizeof(part), ", ETA %.0f s", eta);
		add_part(line, &len, max, part);
	}
	fprintf(ui->err, "\r\033[K%s", line);
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

struct ui *ui_new(FILE *err, enum ui_command command, enum ui_verbosity verbosity,
		  bool progress, bool dry_run)
{
	struct ui *ui = calloc(1, sizeof(*ui));

	if (!ui)
		return NULL;
	ui->err = err;
	ui->command = command;
	ui->verbosity = verbosity;
	ui->progress = progress;
	ui->dry_run = dry_run;
	ui->start = ui_now();
	pthread_mutex_init(&ui->lock, NULL);
	pthread_cond_init(&ui->wake, NULL);
	ui->error_list = json_array();
	ui->warning_list = json_array();
	ui->problems = json_array();
	if (!ui->error_list || !ui->warning_list || !ui->problems) {
		ui_free(ui);
		return NULL;
	}
	if (progress && pthread_create(&ui->ticker, NULL, ticker_main, ui) == 0)
		ui->ticker_running = true;
	return ui;
}

void ui_stop_ticker(struct ui *ui)
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
	ui_stop_ticker(ui);
	pthread_cond_destroy(&ui->wake);
	pthread_mutex_destroy(&ui->lock);
	json_decref(ui->error_list);
	json_decref(ui->warning_list);
	json_decref(ui->problems);
	free(ui->archive);
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

void ui_on_progress(void *user, uint64_t files, uint64_t bytes)
{
	struct ui *ui = user;

	pthread_mutex_lock(&ui->lock);
	ui->done_files += files;
	ui->done_bytes += bytes;
	draw(ui, false);
	pthread_mutex_unlock(&ui->lock);
}

/* ---- messages ---- */

/* "ROOT/PATH" (or, for an archive's entry, "ROOT: PATH") + SUFFIX, as bytes:
 * the file a message is about; malloc'ed. */
static char *report_path(const struct kiln_report *r, const char *suffix)
{
	const char *sep = !*r->path ? "" : r->in_archive ? ": " : strcmp(r->root, "/") ? "/" : "";
	size_t n = strlen(r->root) + strlen(sep) + strlen(r->path) + strlen(suffix) + 1;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s%s", r->root, sep, r->path, suffix);
	return p;
}

/* {"path": PATH as the manifest writes names, "path_base64" when needed}. */
static json_t *path_object(const char *path)
{
	char *b64 = NULL, *key = kiln_path_key(path, &b64);
	json_t *o = key ? json_pack("{s:s}", "path", key) : NULL;

	if (o && b64 && json_object_set_new(o, "path_base64", json_string(b64)) != 0) {
		json_decref(o);
		o = NULL;
	}
	free(key);
	free(b64);
	return o;
}

/* Append {"path": PATH, FIELD: TEXT} to LIST; a failure makes the JSON
 * incomplete, which is an error. */
static void note(struct ui *ui, json_t *list, const char *path, const char *field,
		 const char *text)
{
	json_t *o = path_object(path ? path : "");

	if (o && json_object_set_new(o, field, json_string(text)) == 0) {
		if (json_array_append_new(list, o) == 0) /* takes O, also on failure */
			return;
	} else {
		json_decref(o);
	}
	ui->errors++;
}

/* Print "kiln: PATH: REASON[: strerror]" and keep it for the JSON. */
static void error_line(struct ui *ui, const char *path, const char *what, int errnum)
{
	char reason[768];
	char *p = escaped(path ? path : "");

	snprintf(reason, sizeof(reason), "%s%s%s", what ? what : "failed", errnum ? ": " : "",
		 errnum ? strerror(errnum) : "");
	ui_clear_line(ui);
	fprintf(ui->err, "kiln: %s: %s\n", p ? p : "?", reason);
	free(p);
	ui->errors++;
	note(ui, ui->error_list, path, "reason", reason);
}

/* Print "kiln: PATH: warning: TEXT" (unless quiet) and keep it. */
static void warning_line(struct ui *ui, const char *path, const char *text)
{
	char *p = escaped(path ? path : "");

	if (ui->verbosity >= UI_NORMAL) {
		ui_clear_line(ui);
		fprintf(ui->err, "kiln: %s: warning: %s\n", p ? p : "?", text);
	}
	free(p);
	note(ui, ui->warning_list, path, "warning", text);
}

/* The sibling suffixes of the codings of R with OUTCOME, "/"-joined. */
static void coding_suffixes(const struct kiln_report *r, kiln_coding_outcome outcome, char *buf,
			    size_t n)
{
	size_t len = 0;

	*buf = '\0';
	for (int c = 0; c < (int)kiln_coding_count() && len < n; c++)
		if (r->coding[c].outcome == outcome)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "/" : "",
						kiln_coding_suffix((kiln_coding)c));
}

static void print_verbose(struct ui *ui, const struct kiln_report *r)
{
	char *p = report_path(r, ""), *e = p ? escaped(p) : NULL;

	ui_clear_line(ui);
	fprintf(ui->err, "%s: %s", e ? e : "?", kiln_outcome_name(r->outcome));
	free(e);
	free(p);
	if (r->outcome == KILN_OUTCOME_COMPRESSED || r->outcome == KILN_OUTCOME_NO_GAIN) {
		fprintf(ui->err, ", %llu B", (unsigned long long)r->size);
		for (int c = 0; c < (int)kiln_coding_count(); c++) {
			if (r->coding[c].outcome != KILN_CODING_KEPT &&
			    r->coding[c].outcome != KILN_CODING_NO_GAIN)
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
	} else if (r->outcome == KILN_OUTCOME_MEDIA || r->outcome == KILN_OUTCOME_SMALL ||
		   r->outcome == KILN_OUTCOME_LONG_NAME) {
		fprintf(ui->err, ", %llu B", (unsigned long long)r->size);
	}
	/* why it is served immutable, so that a wrong call can be seen */
	if (r->immutable)
		fprintf(ui->err, ", immutable (%s)", r->immutable);
	fputc('\n', ui->err);
}

static void print_error(struct ui *ui, const struct kiln_report *r)
{
	const struct kiln_error *e = &r->error;
	char *path = report_path(r, e->suffix ? e->suffix : "");

	/* a file given as DIR: most likely an archive meant for -o */
	if (!*r->path && e->errnum == ENOTDIR && ui->command == UI_COMPRESS)
		error_line(ui, path ? path : r->root,
			   "not a directory (to read an archive and write a new one with its "
			   "siblings, add -o OUT)", 0);
	else if (!*r->path && e->errnum == ENOTDIR)
		error_line(ui, path ? path : r->root, "not a directory", 0);
	else
		error_line(ui, path ? path : r->path, e->what, e->errnum);
	free(path);
}

void ui_on_file(void *user, const struct kiln_report *r)
{
	struct ui *ui = user;
	char *path;

	/* a file abandoned because the run was interrupted is not a failure of
	 * its own: the interruption is what the exit status will say */
	pthread_mutex_lock(&ui->lock);
	if (r->outcome == KILN_OUTCOME_ERROR && r->error.status == KILN_ERR_CANCELLED) {
		ui->undone++;
		pthread_mutex_unlock(&ui->lock);
		return;
	}
	if (r->outcome == KILN_OUTCOME_ERROR) {
		print_error(ui, r); /* an error, not a file: counted with errors */
		draw(ui, false);
		pthread_mutex_unlock(&ui->lock);
		return;
	}
	ui->count[r->outcome]++;
	if (r->outcome == KILN_OUTCOME_COMPRESSED) {
		bool all_previous = true;
		for (int c = 0; c < (int)kiln_coding_count(); c++) {
			if (r->coding[c].outcome != KILN_CODING_KEPT)
				continue;
			if (r->coding[c].origin != KILN_ORIGIN_PREVIOUS) {
				all_previous = false;
				ui->written++;
				ui->from_cache += r->coding[c].origin == KILN_ORIGIN_CACHE;
			}
			ui->bytes_in[c] += r->size;
			ui->bytes_out[c] += r->coding[c].size;
		}
		for (int c = 0; c < (int)kiln_coding_count(); c++) {
			if (r->coding[c].outcome != KILN_CODING_NO_GAIN)
				continue;
			ui->not_kept[c]++;
			for (int k = 0; k < (int)kiln_coding_count(); k++)
				if (r->coding[k].outcome == KILN_CODING_KEPT &&
				    r->coding[k].size <= r->coding[c].size) {
					ui->not_smaller[c]++;
					break;
				}
		}
		ui->unchanged += all_previous;
	}
	if (ui->verbosity >= UI_VERBOSE)
		print_verbose(ui, r);
	if (r->outcome == KILN_OUTCOME_SPECIAL && (path = report_path(r, ""))) {
		warning_line(ui, path, "not a regular file, skipped");
		free(path);
	}
	if ((r->outcome == KILN_OUTCOME_LONG_NAME || r->outcome == KILN_OUTCOME_COMPRESSED ||
	     r->outcome == KILN_OUTCOME_NO_GAIN) && (path = report_path(r, ""))) {
		char sfx[64], text[160];
		coding_suffixes(r, KILN_CODING_LONG_NAME, sfx, sizeof(sfx));
		if (*sfx) {
			snprintf(text, sizeof(text),
				 "name too long for its %s sibling%s (over %d bytes), none written",
				 sfx, strchr(sfx, '/') ? "s" : "", NAME_MAX);
			warning_line(ui, path, text);
		}
		free(path);
	}
	draw(ui, false);
	pthread_mutex_unlock(&ui->lock);
}

void ui_interrupted(struct ui *ui)
{
	pthread_mutex_lock(&ui->lock);
	ui_clear_line(ui);
	fputs("kiln: interrupted: saving what is done (again to stop at once)\n", ui->err);
	fflush(ui->err);
	ui->interrupted = true;
	draw(ui, true);
	pthread_mutex_unlock(&ui->lock);
}

void ui_error(struct ui *ui, const char *path, const char *what, int errnum)
{
	pthread_mutex_lock(&ui->lock);
	error_line(ui, path, what, errnum);
	pthread_mutex_unlock(&ui->lock);
}

void ui_on_artifact(void *user, const char *what, const char *path, const struct kiln_error *err)
{
	struct ui *ui = user;
	char *p;

	pthread_mutex_lock(&ui->lock);
	if (err && err->status != KILN_OK) {
		char reason[256];
		snprintf(reason, sizeof(reason), "cannot write the %s: %s", what,
			 err->what ? err->what : "failed");
		error_line(ui, path, reason, err->errnum);
	} else {
		if (strcmp(what, "archive") == 0) {
			free(ui->archive);
			ui->archive = escaped(path);
		}
		if (ui->verbosity >= UI_VERBOSE && (p = escaped(path))) {
			ui_clear_line(ui);
			fprintf(ui->err, "%s: %s %s\n", p, what, err ? "unchanged" : "written");
			free(p);
		}
	}
	pthread_mutex_unlock(&ui->lock);
}

/* "gzip" / "brotli": how a person names the coding in a message. */
static const char *coding_word(int coding)
{
	const struct kiln_coding_info *i = kiln_coding_info(coding);

	return i ? i->word : "";
}

/* One of check's problems: printed (it is check's output) and kept. */
static void problem(struct ui *ui, const char *path, kiln_event ev, int coding,
		    const char *detail)
{
	char *p = escaped(path ? path : "");
	json_t *rec = path_object(path ? path : "");

	ui_clear_line(ui);
	fprintf(ui->err, "kiln: %s: ", p ? p : "?");
	if (ev == KILN_EVENT_MISSING_SIBLING || ev == KILN_EVENT_STALE_SIBLING)
		fprintf(ui->err, "%s %s%ssibling", ev == KILN_EVENT_STALE_SIBLING ? "stale" : "missing",
			coding_word(coding), *coding_word(coding) ? " " : "");
	else if (ev == KILN_EVENT_SIBLING_METADATA)
		fprintf(ui->err, "%s%ssibling", coding_word(coding), *coding_word(coding) ? " " : "");
	else if (ev != KILN_EVENT_OTHER_TREE || !detail) /* its detail says it all */
		fputs(kiln_event_name(ev), ui->err);
	fprintf(ui->err, "%s%s\n", detail && ev != KILN_EVENT_OTHER_TREE ? ": " : "",
		detail ? detail : "");
	free(p);
	if (rec && (json_object_set_new(rec, "kind", json_string(kiln_event_name(ev))) != 0 ||
		    (coding >= 0 && json_object_set_new(rec, "coding",
							json_string(kiln_coding_name(coding))) != 0) ||
		    (detail && json_object_set_new(rec, "detail", json_string(detail)) != 0))) {
		json_decref(rec);
		rec = NULL;
	}
	if (!rec || json_array_append_new(ui->problems, rec) != 0)
		ui->errors++; /* the JSON would be incomplete */
}

void ui_on_event(void *user, kiln_event ev, const char *path, int coding,
		 const struct kiln_error *err)
{
	struct ui *ui = user;
	const char *detail = err && err->what ? err->what : NULL;
	char text[600], *glob;
	bool verbose = ui->verbosity >= UI_VERBOSE;

	pthread_mutex_lock(&ui->lock);
	switch (ev) {
	case KILN_EVENT_REMOVED: /* a sibling, or with a detail what else */
		if (detail)
			ui->snippets_removed++;
		else
			ui->removed++;
		if (verbose && (glob = escaped(path))) {
			ui_clear_line(ui);
			fprintf(ui->err, "%s: %s%s%s%s\n", glob,
				ui->dry_run ? "would be removed" : "removed", detail ? " (" : "",
				detail ? detail : "", detail ? ")" : "");
			free(glob);
		}
		break;
	case KILN_EVENT_DICT_DELTA:
		ui->deltas++;
		if (verbose && (glob = escaped(path))) {
			ui_clear_line(ui);
			fprintf(ui->err, "%s: %s\n", glob, kiln_event_name(ev));
			free(glob);
		}
		break;
	case KILN_EVENT_FINGERPRINTS: /* what a bundler's manifest proves */
		if (verbose && (glob = escaped(path))) {
			char *said = escaped(detail ? detail : kiln_event_name(ev));
			ui_clear_line(ui);
			fprintf(ui->err, "%s: %s\n", glob, said ? said : "?");
			free(said);
			free(glob);
		}
		break;
	case KILN_EVENT_TEMP_REMOVED:
		if (verbose && (glob = escaped(path))) {
			ui_clear_line(ui);
			fprintf(ui->err, "%s: %s\n", glob, kiln_event_name(ev));
			free(glob);
		}
		break;
	case KILN_EVENT_FOREIGN: /* with a reason when it is no sibling any more */
		snprintf(text, sizeof(text), "%s%s%s", kiln_event_name(ev), detail ? ": " : "",
			 detail ? detail : "");
		warning_line(ui, path, text);
		break;
	case KILN_EVENT_FOREIGN_STALE:
		error_line(ui, path,
			   "stale sibling kiln did not write: it does not decode to its source "
			   "and a server would send it; delete it", 0);
		break;
	case KILN_EVENT_FOREIGN_REPLACED:
		if (err && err->status == KILN_OK) {
			/* the same content, kiln's bytes: no news but in -v */
			if (verbose && (glob = escaped(path))) {
				ui_clear_line(ui);
				fprintf(ui->err, "%s: %s a sibling not written by kiln (%s)\n", glob,
					ui->dry_run ? "would replace" : "replaced", detail);
				free(glob);
			}
			break;
		}
		snprintf(text, sizeof(text), "%s a sibling not written by kiln: %s",
			 ui->dry_run ? "would replace" : "replaced", detail ? detail : "");
		warning_line(ui, path, text);
		break;
	case KILN_EVENT_STATE_IGNORED:
		snprintf(text, sizeof(text), "%s%s%s", kiln_event_name(ev), detail ? ": " : "",
			 detail ? detail : "");
		warning_line(ui, path, text);
		break;
	case KILN_EVENT_WAITING: /* "kiln: T: waiting for another kiln (pid N)" */
		if (ui->verbosity >= UI_NORMAL && (glob = escaped(path))) {
			ui_clear_line(ui);
			fprintf(ui->err, "kiln: %s: %s\n", glob, detail ? detail : kiln_event_name(ev));
			free(glob);
		}
		break;
	case KILN_EVENT_IN_PROGRESS: /* check: an error; a dry run: a warning */
		if (err && err->status == KILN_OK)
			warning_line(ui, path, detail ? detail : kiln_event_name(ev));
		else
			error_line(ui, path, detail ? detail : kiln_event_name(ev), 0);
		break;
	case KILN_EVENT_BEHIND_LINK: /* the link's path, escaped like every path */
		glob = detail ? escaped(detail) : NULL;
		snprintf(text, sizeof(text), "%s (%s is a link)", kiln_event_name(ev),
			 glob ? glob : "a directory on its way");
		free(glob);
		warning_line(ui, path, text);
		break;
	case KILN_EVENT_BYTES_CHANGED:
	case KILN_EVENT_SNIPPET_LEFT_OUT:
	case KILN_EVENT_SNIPPET_EDITED:
	case KILN_EVENT_PREVIOUS_UNUSED:
		warning_line(ui, path, detail ? detail : kiln_event_name(ev));
		break;
	case KILN_EVENT_INCLUDE_UNMATCHED:
	case KILN_EVENT_EXCLUDE_UNMATCHED:
		glob = escaped(detail ? detail : "");
		snprintf(text, sizeof(text), "--%s '%s' matches no file",
			 ev == KILN_EVENT_INCLUDE_UNMATCHED ? "include" : "exclude", glob ? glob : "?");
		free(glob);
		warning_line(ui, path, text);
		break;
	case KILN_EVENT_REMOVE_FAILED:
	case KILN_EVENT_CACHE_FAILED:
		snprintf(text, sizeof(text), "%s%s%s", kiln_event_name(ev), detail ? ": " : "",
			 detail ? detail : "");
		error_line(ui, path, text, err ? err->errnum : 0);
		break;
	case KILN_EVENT_OTHER_TREE:
		if (ui->command != UI_CLEAN) {
			problem(ui, path, ev, coding, detail);
			break;
		}
		snprintf(text, sizeof(text), "%s; nothing removed",
			 detail ? detail : kiln_event_name(ev));
		error_line(ui, path, text, 0);
		break;
	case KILN_EVENT_NO_MANIFEST:
		if (ui->command != UI_CLEAN) {
			problem(ui, path, ev, coding, detail);
			break;
		}
		/* clean: nothing to go by */
		if (detail) {
			snprintf(text, sizeof(text), "%s: %s; nothing removed", kiln_event_name(ev), detail);
			error_line(ui, path, text, err ? err->errnum : 0);
		} else {
			warning_line(ui, path, "no manifest, so nothing kiln wrote to remove");
		}
		break;
	default: /* check's findings */
		problem(ui, path, ev, coding, detail);
		break;
	}
	pthread_mutex_unlock(&ui->lock);
}

/* ---- the end ---- */

uint64_t ui_errors(const struct ui *ui)
{
	return ui->errors;
}
