/*
 * ui_summary.c - the closing summary of the kiln program, as a line on
 * stderr or (--json) one JSON object on stdout.
 *
 * The summary counts assets (the files the manifest records); siblings and
 * kiln's own outputs found in the tree are not assets and are counted apart,
 * and so are errors, which are not files.  Both forms give the same counts.
 */
#include "ui_state.h"

#include <stdio.h>

/* The outcomes of assets, in the order the summary gives them. */
const kiln_outcome ui_asset_outcomes[] = {
	KILN_OUTCOME_COMPRESSED, KILN_OUTCOME_MEDIA, KILN_OUTCOME_SMALL,
	KILN_OUTCOME_NO_GAIN, KILN_OUTCOME_EXCLUDED, KILN_OUTCOME_LONG_NAME,
};
const size_t ui_nasset_outcomes = sizeof(ui_asset_outcomes) / sizeof(ui_asset_outcomes[0]);

static uint64_t assets(const struct ui *ui)
{
	uint64_t n = 0;

	for (size_t i = 0; i < ui_nasset_outcomes; i++)
		n += ui->count[ui_asset_outcomes[i]];
	return n;
}

/* "kiln: [dry run: ]19 assets: 12 compressed (12 unchanged), 4 media, ...;
 * 12 siblings written (4 from the cache), 3 removed; 2 symlinks skipped;
 * 1 error; gzip A -> B (P%); T s" */
static void summary(struct ui *ui)
{
	uint64_t n = assets(ui), sym = ui->count[KILN_OUTCOME_SYMLINK],
		 special = ui->count[KILN_OUTCOME_SPECIAL];
	const char *sep = ": ";

	fprintf(ui->err, "kiln: %s%llu %s", ui->dry_run ? "dry run: " : "", (unsigned long long)n,
		ui_plural(n, "asset", "assets"));
	for (size_t i = 0; i < ui_nasset_outcomes; i++) {
		uint64_t k = ui->count[ui_asset_outcomes[i]];
		if (!k)
			continue;
		fprintf(ui->err, "%s%llu %s", sep, (unsigned long long)k,
			kiln_outcome_name(ui_asset_outcomes[i]));
		if (ui_asset_outcomes[i] == KILN_OUTCOME_COMPRESSED && ui->unchanged)
			fprintf(ui->err, " (%llu unchanged)", (unsigned long long)ui->unchanged);
		sep = ", ";
	}
	if (ui->written || ui->removed) {
		char cached[48] = "";
		if (ui->from_cache)
			snprintf(cached, sizeof(cached), " (%llu from the cache)",
				 (unsigned long long)ui->from_cache);
		if (ui->dry_run && ui->written && ui->removed)
			fprintf(ui->err, "; would write %llu %s, remove %llu",
				(unsigned long long)ui->written,
				ui_plural(ui->written, "sibling", "siblings"),
				(unsigned long long)ui->removed);
		else if (ui->dry_run)
			fprintf(ui->err, "; would %s %llu %s", ui->written ? "write" : "remove",
				(unsigned long long)(ui->written ? ui->written : ui->removed),
				ui_plural(ui->written ? ui->written : ui->removed, "sibling", "siblings"));
		else if (ui->written && ui->removed)
			fprintf(ui->err, "; %llu %s written%s, %llu removed",
				(unsigned long long)ui->written,
				ui_plural(ui->written, "sibling", "siblings"), cached,
				(unsigned long long)ui->removed);
		else
			fprintf(ui->err, "; %llu %s %s%s",
				(unsigned long long)(ui->written ? ui->written : ui->removed),
				ui_plural(ui->written ? ui->written : ui->removed, "sibling", "siblings"),
				ui->written ? "written" : "removed", ui->written ? cached : "");
	}
	if (ui->snippets_removed)
		fprintf(ui->err, "; %llu stale %s removed", (unsigned long long)ui->snippets_removed,
			ui_plural(ui->snippets_removed, "snippet", "snippets"));
	if (ui->deltas)
		fprintf(ui->err, "; %llu dictionary %s", (unsigned long long)ui->deltas,
			ui_plural(ui->deltas, "delta", "deltas"));
	if (sym)
		fprintf(ui->err, "; %llu %s skipped", (unsigned long long)sym,
			ui_plural(sym, "symlink", "symlinks"));
	if (special)
		fprintf(ui->err, "; %llu %s skipped", (unsigned long long)special,
			ui_plural(special, "special file", "special files"));
	if (ui->errors)
		fprintf(ui->err, "; %llu %s", (unsigned long long)ui->errors,
			ui_plural(ui->errors, "error", "errors"));
	if (ui->archive)
		fprintf(ui->err, "; %s written", ui->archive);
	if (ui->undone)
		fprintf(ui->err, "; interrupted: %llu %s not done", (unsigned long long)ui->undone,
			ui_plural(ui->undone, "file", "files"));
	for (int c = 0; c < (int)kiln_coding_count(); c++) {
		char in[32], out[32];
		if (!ui->bytes_in[c])
			continue;
		ui_human(in, sizeof(in), ui->bytes_in[c]);
		ui_human(out, sizeof(out), ui->bytes_out[c]);
		fprintf(ui->err, "; %s %s -> %s (%.1f%%)", kiln_coding_name((kiln_coding)c), in, out,
			100.0 * (double)ui->bytes_out[c] / (double)ui->bytes_in[c]);
	}
	/* a coding asked for that left no sibling at all: say why, or a user
	 * who gave --zstd sees nothing of it */
	for (int c = 0; c < (int)kiln_coding_count(); c++) {
		if (ui->bytes_in[c] || !ui->not_kept[c])
			continue;
		fprintf(ui->err, "; %s: none kept (%s)", kiln_coding_name((kiln_coding)c),
			ui->not_smaller[c] == ui->not_kept[c]
				? "none smaller than the siblings kept beside it"
				: "none small enough");
	}
	fprintf(ui->err, "; %.2f s\n", ui_now() - ui->start);
}

void ui_finish(struct ui *ui, uint64_t n)
{
	ui_stop_ticker(ui);
	pthread_mutex_lock(&ui->lock);
	ui_clear_line(ui);
	if (ui->verbosity >= UI_NORMAL) {
		if (ui->command == UI_COMPRESS)
			summary(ui);
		else if (ui->command == UI_MERGE)
			fprintf(ui->err, "kiln: merge: %s, %llu %s\n",
				ui->errors ? "nothing written" : "manifest written",
				(unsigned long long)ui->errors, ui_plural(ui->errors, "error", "errors"));
		else if (ui->command == UI_CHECK)
			fprintf(ui->err, "kiln: check: %llu %s, %llu %s\n", (unsigned long long)n,
				ui_plural(n, "problem", "problems"), (unsigned long long)ui->errors,
				ui_plural(ui->errors, "error", "errors"));
		else
			fprintf(ui->err, "kiln: clean: %s%llu %s%s, %llu %s\n",
				ui->dry_run ? "would remove " : "", (unsigned long long)n,
				ui_plural(n, "file", "files"), ui->dry_run ? "" : " removed",
				(unsigned long long)ui->errors, ui_plural(ui->errors, "error", "errors"));
	}
	fflush(ui->err);
	pthread_mutex_unlock(&ui->lock);
}

/* Set KEY of OBJ to V (taking it); false if V is NULL or that failed. */
static bool put(json_t *obj, const char *key, json_t *v)
{
	return v && json_object_set_new(obj, key, v) == 0;
}

static bool put_count(json_t *obj, const char *key, uint64_t n)
{
	return put(obj, key, json_integer((json_int_t)n));
}

int ui_print_json(struct ui *ui, FILE *f)
{
	static const char *const names[] = { "compress", "check", "clean", "merge" };
	json_t *root = json_object(), *files = json_object(), *other = json_object(),
	       *bytes = json_object();
	bool ok = root && files && other && bytes;
	int ret = -1;

	ok = ok && put(root, "command", json_string(names[ui->command]));
	if (ui->command == UI_CHECK) {
		/* check's output is its problems, and the errors beside them */
		ok = ok && json_object_set(root, "problems", ui->problems) == 0 &&
		     put_count(root, "problem_count", json_array_size(ui->problems));
	} else {
		ok = ok && put(root, "dry_run", json_boolean(ui->dry_run));
	}
	if (ui->command == UI_COMPRESS) {
		for (size_t i = 0; ok && i < ui_nasset_outcomes; i++)
			ok = put_count(files, kiln_outcome_name(ui_asset_outcomes[i]),
				       ui->count[ui_asset_outcomes[i]]);
		ok = ok && put_count(other, "sibling", ui->count[KILN_OUTCOME_SIBLING]) &&
		     put_count(other, "symlink", ui->count[KILN_OUTCOME_SYMLINK]) &&
		     put_count(other, "special", ui->count[KILN_OUTCOME_SPECIAL]);
		for (int c = 0; ok && c < (int)kiln_coding_count(); c++)
			ok = put(bytes, kiln_coding_name((kiln_coding)c),
				 json_pack("{s:I, s:I, s:I, s:I}", "in", (json_int_t)ui->bytes_in[c], "out",
					   (json_int_t)ui->bytes_out[c], "not_kept",
					   (json_int_t)ui->not_kept[c], "not_smaller",
					   (json_int_t)ui->not_smaller[c]));
		ok = ok && put_count(root, "assets", assets(ui)) &&
		     json_object_set(root, "files", files) == 0 &&
		     json_object_set(root, "not_assets", other) == 0 &&
		     put_count(root, "unchanged", ui->unchanged) &&
		     put_count(root, "written", ui->written) &&
		     put_count(root, "from_cache", ui->from_cache) &&
		     put_count(root, "dictionary_deltas", ui->deltas) &&
		     put_count(root, "not_done", ui->undone) &&
		     json_object_set(root, "bytes", bytes) == 0;
	}
	if (ui->command != UI_CHECK)
		ok = ok && put_count(root, "removed", ui->removed) &&
		     put_count(root, "snippets_removed", ui->snippets_removed) &&
		     json_object_set(root, "warnings", ui->warning_list) == 0 &&
		     put_count(root, "warning_count", json_array_size(ui->warning_list));
	ok = ok && json_object_set(root, "errors", ui->error_list) == 0 &&
	     put_count(root, "error_count", json_array_size(ui->error_list)) &&
	     put(root, "elapsed_seconds", json_real(ui_now() - ui->start));
	if (ok && json_dumpf(root, f, JSON_COMPACT | JSON_REAL_PRECISION(6)) == 0 &&
	    fputc('\n', f) != EOF && fflush(f) == 0)
		ret = 0;
	json_decref(files);
	json_decref(other);
	json_decref(bytes);
	json_decref(root);
	return ret;
}
