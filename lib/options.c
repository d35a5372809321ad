/* options.c - the defaults of kiln_options, and their ranges. */
#include "codec.h"
#include "kiln.h"

#include "classify.h"

#include <string.h>

void kiln_options_init(struct kiln_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	for (unsigned c = 0; c < kiln_ncodecs; c++) {
		opt->level[c] = kiln_codecs[c]->info.level_default;
		if (kiln_codecs[c]->info.default_on)
			opt->codings |= 1u << c;
	}
	opt->min_size = 256;
	opt->max_ratio = 0.95;
	opt->write_manifest = true;
	opt->servers = 1u; /* nginx: kiln_servers[0] */
	opt->url_prefix = "/";
	opt->cache_control = true;
	opt->cache_max_size = (uint64_t)1 << 30;
	opt->stream_size = (uint64_t)64 << 20;
}

/* Begins and ends with '/', and holds nothing a server configuration
 * would need quoted or escaped in a path: no control bytes, space, quotes,
 * backslash, braces, '#', ';', '%', '?' or '$'. */
static bool url_prefix_ok(const char *p)
{
	size_t n = p ? strlen(p) : 0;

	if (n == 0 || p[0] != '/' || p[n - 1] != '/' || strstr(p, "//"))
		return false;
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c <= 0x20 || *c == 0x7f || strchr("\"'\\{}#;%?$`*", *c))
			return false;
	return true;
}

kiln_status kiln_options_check(const struct kiln_options *opt, const char **field,
			       kiln_coding *coding)
{
	const char *bad = NULL;
	kiln_coding which = -1;

	if (opt->codings == 0 || (opt->codings & ~((1u << kiln_ncodecs) - 1)))
		bad = "codings";
	for (unsigned c = 0; !bad && c < kiln_ncodecs; c++) {
		const struct kiln_coding_info *i = &kiln_codecs[c]->info;
		if (opt->level[c] < i->level_min || opt->level[c] > i->level_max) {
			bad = "level";
			which = (kiln_coding)c;
		} else if (opt->extra[c] != 0 &&
			   (!i->extra_word || opt->extra[c] < i->extra_min || opt->extra[c] > i->extra_max)) {
			bad = "extra";
			which = (kiln_coding)c;
		}
	}
	if (!bad && !(opt->max_ratio > 0.0 && opt->max_ratio <= 1.0))
		bad = "max_ratio";
	if (!bad && (opt->servers & ~((1u << kiln_server_count()) - 1)))
		bad = "servers";
	if (!bad && !url_prefix_ok(opt->url_prefix))
		bad = "url_prefix";
	if (!bad && opt->shard_count &&
	    (opt->shard_count > KILN_MAX_SHARDS || opt->shard_index < 1 ||
	     opt->shard_index > opt->shard_count || !opt->write_manifest))
		bad = "shard";
	/* a manifest named like a part would be taken for another tree's part */
	if (!bad && opt->manifest_path &&
	    kiln_is_part_name(strrchr(opt->manifest_path, '/') ? strrchr(opt->manifest_path, '/') + 1
							       : opt->manifest_path,
			      NULL, NULL, NULL))
		bad = "manifest_path";
	if (!bad && opt->n_previous > KILN_MAX_PREVIOUS)
		bad = "previous";
	for (size_t i = 0; !bad && i < opt->n_previous; i++)
		if (!opt->previous[i] || !*opt->previous[i])
			bad = "previous";
	for (size_t i = 0; !bad && i < opt->n_fingerprints; i++)
		if (!opt->fingerprints[i] || !*opt->fingerprints[i])
			bad = "fingerprints";
	if (field)
		*field = bad;
	if (coding)
		*coding = which;
	return bad ? KILN_ERR_INVALID : KILN_OK;
}
