/* test_decide.c - the keep rules: max ratio per encoding, never as large as
 * the source, gzip kept beside another sibling when smaller at all, no two
 * siblings of one size. */
#include "codec.h"
#include "decide.h"

#include "check.h"

static struct kiln_options opts(unsigned codings, double ratio)
{
	struct kiln_options o;

	kiln_options_init(&o);
	o.codings = codings;
	o.max_ratio = ratio;
	return o;
}

int main(void)
{
	const kiln_coding KILN_CODING_GZIP = kiln_coding_find("gzip");
	const kiln_coding KILN_CODING_BR = kiln_coding_find("br");
	const kiln_coding ZST = kiln_coding_find("zstd");
	const unsigned GZ = 1u << KILN_CODING_GZIP, BR = 1u << KILN_CODING_BR, ZS = 1u << ZST;
	struct kiln_options o = opts(GZ, 0.95);
	bool keep[KILN_MAX_CODINGS];

	/* the sizes below are given as {gzip, br, zstd} */
	CHECK(KILN_CODING_GZIP == 0 && KILN_CODING_BR == 1 && ZST == 2);

	/* gzip alone: 950 of 1000 is exactly 0.95, kept; 951 is not */
	kiln_decide(&o, 1000, (size_t[]){ 950, 0, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	kiln_decide(&o, 1000, (size_t[]){ 951, 0, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP]);
	kiln_decide(&o, 1000, (size_t[]){ 0, 0, 0 }, keep); /* did not fit */
	CHECK(!keep[KILN_CODING_GZIP]);
	/* a br size is ignored when br is off */
	kiln_decide(&o, 1000, (size_t[]){ 500, 400, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);

	o = opts(GZ | BR, 0.95);
	kiln_decide(&o, 1000, (size_t[]){ 600, 500, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);
	/* br kept: gzip kept too while smaller than the source at all */
	kiln_decide(&o, 1000, (size_t[]){ 990, 900, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);
	kiln_decide(&o, 1000, (size_t[]){ 999, 900, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP]);
	kiln_decide(&o, 1000, (size_t[]){ 1000, 900, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);
	/* br not kept: gzip judged on its own */
	kiln_decide(&o, 1000, (size_t[]){ 990, 980, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	/* same size: keep gzip, drop br (ETag "mtime-size" would collide) */
	kiln_decide(&o, 1000, (size_t[]){ 700, 700, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	/* br larger than gzip: dropped (a server tries br first, and the
	 * client would get the larger one) */
	kiln_decide(&o, 1000, (size_t[]){ 700, 701, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	/* gzip fails the ratio on its own but is kept beside the br */
	o = opts(GZ | BR, 0.5);
	kiln_decide(&o, 1000, (size_t[]){ 700, 400, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);
	o = opts(GZ | BR, 0.95);
	/* never the source's own size, even at --max-ratio 1: one ETag for two
	 * bodies (a sibling of 1000 bytes beside a source of 1000) */
	o = opts(GZ | BR, 1.0);
	kiln_decide(&o, 1000, (size_t[]){ 1000, 0, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP]);
	kiln_decide(&o, 1000, (size_t[]){ 999, 1000, 0 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	kiln_decide(&o, 1000, (size_t[]){ 1000, 999, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);
	kiln_decide(&o, 1000, (size_t[]){ 1001, 1000, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR]);
	/* gzip off: br alone */
	o = opts(BR, 0.95);
	kiln_decide(&o, 1000, (size_t[]){ 0, 700, 0 }, keep);
	CHECK(!keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR]);

	/* zstd beside br: kept only when smaller than the br (and the gzip),
	 * so that "zstd, then br, then gzip" gives each client its smallest */
	o = opts(GZ | BR | ZS, 0.95);
	kiln_decide(&o, 1000, (size_t[]){ 600, 500, 520 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR] && !keep[ZST]);
	kiln_decide(&o, 1000, (size_t[]){ 600, 500, 480 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && keep[KILN_CODING_BR] && keep[ZST]);
	kiln_decide(&o, 1000, (size_t[]){ 600, 500, 500 }, keep);
	CHECK(!keep[ZST]);
	/* zstd alone beside gzip */
	o = opts(GZ | ZS, 0.95);
	kiln_decide(&o, 1000, (size_t[]){ 600, 300, 550 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR] && keep[ZST]);
	/* br dropped (larger than gzip): zstd compared with what is kept */
	o = opts(GZ | BR | ZS, 0.95);
	kiln_decide(&o, 1000, (size_t[]){ 600, 650, 620 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR] && !keep[ZST]);
	kiln_decide(&o, 1000, (size_t[]){ 600, 650, 590 }, keep);
	CHECK(keep[KILN_CODING_GZIP] && !keep[KILN_CODING_BR] && keep[ZST]);

	/* a dictionary delta: under the ratio, strictly smaller than every
	 * kept sibling, never the size of another kept delta */
	o = opts(GZ | BR, 0.95);
	CHECK(kiln_decide_delta(&o, 1000, 100, (uint64_t[]){ 300, 250 }, 2, NULL, 0));
	CHECK(!kiln_decide_delta(&o, 1000, 250, (uint64_t[]){ 300, 250 }, 2, NULL, 0));
	CHECK(!kiln_decide_delta(&o, 1000, 260, (uint64_t[]){ 300, 250 }, 2, NULL, 0));
	CHECK(kiln_decide_delta(&o, 1000, 249, (uint64_t[]){ 300, 250 }, 2, (uint64_t[]){ 248 }, 1));
	CHECK(!kiln_decide_delta(&o, 1000, 248, (uint64_t[]){ 300, 250 }, 2, (uint64_t[]){ 248 }, 1));
	/* no sibling kept (the source did not shrink enough for one): the
	 * ratio alone */
	CHECK(kiln_decide_delta(&o, 1000, 950, NULL, 0, NULL, 0));
	CHECK(!kiln_decide_delta(&o, 1000, 951, NULL, 0, NULL, 0));
	CHECK(!kiln_decide_delta(&o, 100, 100, NULL, 0, NULL, 0));

	return check_exit("test_decide");
}
