/*
 * shape.c - the tree evidence: a directory's names of one shape.
 *
 * Every candidate token of every name that is no page (fingerprint.h: a
 * base64url run of at least KILN_TOKEN_MIN bytes before a '.', at the
 * start of the name or after a '.' or '-'; at most KILN_SHAPE_TOKENS of
 * them per name, none longer than KILN_SHAPE_TOKEN_MAX) is a member of the
 * shapes (directory, byte before, length, alphabet, and whether the file
 * is a bundler's code) of each alphabet it fits; a token the rule on the
 * name alone takes is a sample.  Sorting the members by directory, byte
 * before and length puts each shape's together; a shape with enough
 * samples (a third of the members in code, an eighth in other files,
 * where the name alone takes fewer) proves its other members, and so does
 * a shape with one sample that is half of it when the same shape over the
 * whole tree is proven (an entry alone beside its style sheet at the top
 * of esbuild's output), for its members that look like hashes of its
 * alphabet (strong()); a directory's one or two members with no sample,
 * when the tree's shape is proven or a sample has their logical name
 * (orphan(), kin()); and a script's style sheet beside it (kin()).
 *
 * What a member must be to be taken (could_be()): never words
 * (kiln_token_words(), kiln_token_words32()) in any shape, and in a file
 * that is no bundler's code never a name someone could have chosen
 * (kiln_token_chosen(), kiln_token_chosen32()): hand-named images, fonts
 * and documents sit beside a bundler's outputs (Vite copies public/ there),
 * hand-named scripts seldom.  docs/cache-control.md, "The tree", says why
 * and "What it costs" what it costs.
 */
#include "shape.h"

#include "spell.h"
#include "words.h"

#include <stdlib.h>
#include <string.h>

struct member {
	const char *rel;
	size_t dir;      /* bytes of REL before its base name */
	size_t i;        /* index into RELS */
	size_t start, len;
	char before;     /* '.', '-', or 0 at the start of the name */
	bool code;       /* a bundler's code (.js, .css, .map, ...) */
	unsigned alpha;  /* the alphabets it fits */
	bool sample;     /* the rule on the name alone takes it */
	unsigned lonely; /* the alphabets of its shapes with no sample in its
			  * directory and at most 2 members */
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->dir < y->dir ? x->dir : y->dir;
	int c = memcmp(x->rel, y->rel, n);

	if (c)
		return c;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	if (x->before != y->before)
		return (unsigned char)x->before < (unsigned char)y->before ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static bool same_shape(const struct member *x, const struct member *y)
{
	return x->dir == y->dir && x->before == y->before && x->len == y->len &&
	       memcmp(x->rel, y->rel, x->dir) == 0;
}

static bool is_b64(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_';
}

/* Append REL's candidate tokens (file I) to *V: at most KILN_SHAPE_TOKENS,
 * the ones nearest the end of the name first, each at most
 * KILN_SHAPE_TOKEN_MAX long; the name is read once from the end, so a long
 * name of many '-' costs no more than its length. */
static bool add_members(const char *rel, size_t i, struct member **v, size_t *n, size_t *cap)
{
	const char *slash = strrchr(rel, '/');
	size_t base = slash ? (size_t)(slash - rel) + 1 : 0, s0 = 0, l0 = 0, end = strlen(rel), got = 0;
	unsigned kind = kiln_name_kind(rel);
	bool named;

	if (kind == KILN_KIND_PAGE)
		return true; /* a page's name is never a hash's */
	named = kiln_fingerprint_span(rel, &s0, &l0);
	/* each '.' ends a segment; a token starts the segment or follows a
	 * '-' in it, and holds only base64url bytes */
	while (end > base && got < KILN_SHAPE_TOKENS) {
		size_t dot = end, p;
		while (dot > base && rel[dot - 1] != '.')
			dot--;
		if (dot == base || dot - 1 == base) { /* no '.' left, or a leading one */
			break;
		}
		dot--; /* rel[dot] == '.', the token's end */
		for (p = dot; p > base && is_b64(rel[p - 1]) && got < KILN_SHAPE_TOKENS; p--) {
			size_t at = p - 1, len = dot - at;
			if (at > base && rel[at - 1] != '-' && rel[at - 1] != '.')
				continue;
			if (len > KILN_SHAPE_TOKEN_MAX)
				break;
			if (!kiln_token_at(rel, at, len))
				continue;
			if (*n == *cap) {
				size_t c = *cap ? 2 * *cap : 256;
				struct member *w = realloc(*v, c * sizeof(*w));
				if (!w)
					return false;
				*v = w;
				*cap = c;
			}
			(*v)[(*n)++] = (struct member){ rel, base, i, at, len, at > base ? rel[at - 1] : 0,
							kind == KILN_KIND_CODE,
							kiln_token_alphabets(rel + at, len),
							named && s0 == at && l0 == len, 0 };
			got++;
		}
		end = dot;
	}
	return true;
}

static bool has_letter(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z'))
			return true;
	return false;
}

static bool has_digit(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (t[i] >= '0' && t[i] <= '9')
			return true;
	return false;
}

static bool has_lower(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (t[i] >= 'a' && t[i] <= 'z')
			return true;
	return false;
}

/* May M be a hash of a shape of alphabet ALPHA?  Never words, in any
 * shape; outside a bundler's code never a name someone could have chosen;
 * in hexadecimal a digit (not "deadbeef"), no colour, placeholder or
 * UUID, no date, and outside a bundler's code a letter: digits alone
 * there are an id's or a counter's ("id.10012345.png", "00012345") as
 * often as a hash's (2.3% of those of 8), and are not taken; in
 * webpack's code they are. */
static bool could_be(const struct member *m, unsigned alpha)
{
	const char *t = m->rel + m->start;

	if (!kiln_token_hashlike(t, m->len) || (alpha != KILN_ALPHA_HEX && m->alpha & KILN_ALPHA_HEX))
		return false; /* a hexadecimal token is judged as one alone */
	if (alpha == KILN_ALPHA_HEX)
		return has_digit(t, m->len) && !kiln_token_other(m->rel, m->start, m->len) &&
		       (m->code || has_letter(t, m->len));
	if (!has_letter(t, m->len))
		return false;
	if (alpha == KILN_ALPHA_B32)
		return m->code ? !kiln_token_words32(t, m->len) :
				 !kiln_token_chosen32(t, m->len) && !kiln_token_model32(t, m->len);
	/* an image beside Vite's in upper case is a code ("badge-MP3AUDIO"): a
	 * Vite hash is of one case one time in 70 */
	if (!m->code && !has_lower(t, m->len))
		return false;
	return m->code ? !kiln_token_words(t, m->len) : !kiln_token_chosen(t, m->len);
}

/* Is M's hexadecimal token all digits, and no counter: not led by a 0
 * ("00000041"), not a date (could_be())? */
static bool digits_only(const struct member *m)
{
	const char *t = m->rel + m->start;

	return !has_letter(t, m->len) && t[0] != '0';
}

/* Does the token of M, of a shape of alphabet ALPHA, hold what a hash of
 * it mostly holds: a digit and a letter, or digits alone but no counter
 * (hexadecimal: webpack's "[contenthash:8]" without a letter, 2.3% of
 * them), a digit or letters that cannot be spelt (base32), both cases
 * (base64url)? */
static bool strong(const struct member *m, unsigned alpha)
{
	const char *t = m->rel + m->start;
	size_t len = m->len;
	bool digit = false, upper = false, lower = false;

	for (size_t i = 0; i < len; i++) {
		digit |= t[i] >= '0' && t[i] <= '9';
		upper |= t[i] >= 'A' && t[i] <= 'Z';
		lower |= t[i] >= 'a' && t[i] <= 'z';
	}
	if (alpha == KILN_ALPHA_HEX)
		return digit && (lower || digits_only(m));
	if (alpha == KILN_ALPHA_B32)
		return digit || !kiln_spelt(t, len);
	return upper && lower;
}

/* May M be taken in a directory where its shape has no sample, the shape
 * over the whole tree being proven: hexadecimal digits alone in a
 * bundler's code output, or base32 letters that cannot be spelt (esbuild's
 * "[hash]" without a digit, 19%)?  Base64url is never taken so: Vite and
 * Rollup write their outputs into one directory. */
static bool orphan(const struct member *m, unsigned alpha)
{
	if (alpha == KILN_ALPHA_HEX)
		return digits_only(m) && m->code;
	return alpha == KILN_ALPHA_B32 && strong(m, alpha);
}

/* A shape over the whole tree: byte before and length, per alphabet (HEX,
 * B32, B64: 0, 1, 2) and kind (other, code) its members that may be hashes
 * and its samples. */
struct global {
	char before;
	size_t len;
	size_t members[3][2], samples[3][2];
};

/* Do SAMPLES of MEMBERS prove a shape of a bundler's code (CODE) or of its
 * other outputs?  Several, and a third of the code's (the name alone takes
 * 89% of Vite's hashes, 69% of esbuild's); an eighth of the others', of
 * which the name alone takes fewer (two numbers, two runs of each case:
 * 42% of Vite's hashes, 33% of esbuild's) and no name of the corpora
 * (docs/cache-control.md, "What it costs"). */
static bool proves(size_t members, size_t samples, bool code)
{
	return samples >= KILN_SHAPE_SEVERAL && (code ? 3 : 8) * samples >= members;
}

/* Is the shape over the whole tree proven (a bundler named files so):
 * by its code's samples, its other outputs', or both together?  A
 * directory's own samples decide which of its files are taken. */
static bool proves_global(const struct global *g, int a)
{
	return proves(g->members[a][0], g->samples[a][0], false) ||
	       proves(g->members[a][1], g->samples[a][1], true) ||
	       proves(g->members[a][0] + g->members[a][1], g->samples[a][0] + g->samples[a][1], true);
}

/* The shape of alphabet ALPHA (index A) among V[0..N), one directory, byte
 * before and length: mark its other members in OUT if its samples prove
 * it, or if it has one and the tree's shape G proves it. */
static void prove(struct member *v, size_t n, unsigned alpha, int a, const struct global *g,
		  struct kiln_fp *out)
{
	size_t all = 0, samples = 0, base32 = 0, cm[2] = { 0, 0 }, cs[2] = { 0, 0 };

	/* (CM leaves out the quiet ones, ALL does not) words are never taken, so they neither prove nor disprove; nor do
	 * a bundler's code outputs of digits alone (webpack's all-digit
	 * hashes beside its others in a directory of few) */
	for (size_t i = 0; i < n; i++)
		if (v[i].alpha & alpha && (v[i].sample || could_be(&v[i], alpha))) {
			bool quiet = alpha == KILN_ALPHA_HEX && v[i].code && digits_only(&v[i]);
			all++;
			samples += v[i].sample;
			base32 += v[i].sample && v[i].alpha & KILN_ALPHA_B32;
			cm[v[i].code] += !quiet;
			cs[v[i].code] += v[i].sample;
		}
	/* samples that are all base32 are esbuild's (or a Vite hash of one
	 * case): beside them an upper-case token outside base32 is no hash
	 * ("cert-X509V3AB.pem", "icon-TWITTER1.svg") */
	bool esbuild = alpha == KILN_ALPHA_B64 && samples && base32 == samples;
	/* a bundler's code outputs (.js, .css) prove only code outputs, and
	 * its other outputs only other outputs: the files copied from Vite's
	 * public/ sit beside its chunks ("assets/team-TomHanks.jpg" beside
	 * "assets/index-BHKYpVxk.js") and are no evidence of each other */
	bool own_of[2] = { proves(cm[0], cs[0], false), proves(cm[1], cs[1], true) };
	bool lone_of[2], lone, orphans;

	/* one sample of a kind proves only a shape of that kind it is half of
	 * (an entry beside its style sheet), and only tokens that look like
	 * hashes of its alphabet (strong()): never a directory of camera names
	 * beside one hash */
	for (int k = 0; k < 2; k++)
		lone_of[k] = !own_of[k] && cs[k] && 2 * cs[k] >= cm[k] && proves_global(g, a);
	lone = lone_of[0] || lone_of[1];
	/* no sample at all: a directory of one or two outputs (webpack's
	 * static/js/main.12345678.js, esbuild's entry and its style sheet at
	 * the top), taken only in the shapes orphan() allows */
	orphans = !own_of[0] && !own_of[1] && !samples && all && all <= 2 && alpha != KILN_ALPHA_B64 &&
		  proves_global(g, a);
	if (!samples && all && all <= 2 && alpha != KILN_ALPHA_B64)
		for (size_t i = 0; i < n; i++)
			v[i].lonely |= alpha;
	if (!own_of[0] && !own_of[1] && !lone && !orphans)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct member *m = &v[i];
		if (!(m->alpha & alpha) || out[m->i].why != KILN_WHY_NONE ||
		    !could_be(m, alpha) ||
		    !(own_of[m->code] || (lone_of[m->code] && strong(m, alpha)) ||
		      (orphans && orphan(m, alpha))) ||
		    (esbuild && !(m->alpha & KILN_ALPHA_B32) && !has_lower(m->rel + m->start, m->len)))
			continue;
		out[m->i] = (struct kiln_fp){ KILN_WHY_TREE, (uint32_t)m->start, (uint32_t)m->len, 0 };
	}
}

/* The base name of M before its token (with the byte before), and the
 * token's length: a logical name and its hash's shape. */
static int stem_cmp(const struct member *x, const struct member *y)
{
	size_t nx = x->start - x->dir, ny = y->start - y->dir;
	int c = memcmp(x->rel + x->dir, y->rel + y->dir, nx < ny ? nx : ny);

	if (c)
		return c;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int stem_ptr_cmp(const void *a, const void *b)
{
	return stem_cmp(*(const struct member *const *)a, *(const struct member *const *)b);
}

/* Compare the directories, then the logical names (stem_cmp()) of X and
 * Y. */
static int dir_stem_cmp(const void *a, const void *b)
{
	const struct member *x = *(const struct member *const *)a, *y = *(const struct member *const *)b;
	size_t n = x->dir < y->dir ? x->dir : y->dir;
	int c = memcmp(x->rel, y->rel, n);

	if (c)
		return c;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return stem_cmp(x, y);
}

static bool take(struct kiln_fp *out, const struct member *m)
{
	out[m->i] = (struct kiln_fp){ KILN_WHY_TREE, (uint32_t)m->start, (uint32_t)m->len, 0 };
	return true;
}

/* A bundler's code output beside the one sample of its logical name in
 * its directory, two or three of that name in all (a script, its style
 * sheet, a source map: esbuild's out/main-VIRMOKMZ.css beside
 * out/main-K2ZT4RBQ.js), is a hash when it may be one and looks like one
 * (strong()); and a lonely member (no sample in its directory's shape) is
 * a hash when a sample elsewhere in the tree has its logical name and the
 * shape of its hash and it is a token orphan() allows: webpack's
 * static/css/main.HASH.css beside static/js/main.3f9a2c7b.js, the only two
 * outputs of the build. */
static bool kin(struct member *v, size_t nv, struct kiln_fp *out)
{
	const struct member **s = malloc((nv + 1) * sizeof(*s));
	size_t ns = 0;

	if (!s)
		return false;
	for (size_t i = 0; i < nv; i++)
		if (v[i].code)
			s[ns++] = &v[i];
	qsort(s, ns, sizeof(*s), dir_stem_cmp);
	for (size_t a = 0, b; a < ns; a = b) { /* beside its sample */
		size_t samples = 0;
		const struct member *sample = NULL;
		for (b = a; b < ns && dir_stem_cmp(&s[a], &s[b]) == 0; b++)
			if (s[b]->sample) {
				samples++;
				sample = s[b];
			}
		for (size_t i = a; samples == 1 && b - a <= 3 && i < b; i++)
			for (unsigned alpha = KILN_ALPHA_HEX; alpha <= KILN_ALPHA_B64; alpha <<= 1)
				if (!s[i]->sample && out[s[i]->i].why == KILN_WHY_NONE &&
				    s[i]->alpha & alpha & sample->alpha && could_be(s[i], alpha) &&
				    strong(s[i], alpha) && take(out, s[i]))
					break;
	}
	/* elsewhere: the samples by logical name alone */
	ns = 0;
	for (size_t i = 0; i < nv; i++)
		if (v[i].sample && v[i].code)
			s[ns++] = &v[i];
	qsort(s, ns, sizeof(*s), stem_ptr_cmp);
	for (size_t i = 0; i < nv && ns; i++) {
		const struct member *m = &v[i], *key = m;
		size_t lo = 0, hi = ns;
		if (!m->lonely || !m->code || out[m->i].why != KILN_WHY_NONE)
			continue;
		while (lo < hi) { /* the first sample of M's stem */
			size_t mid = lo + (hi - lo) / 2;
			if (stem_cmp(s[mid], key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ns && stem_cmp(s[lo], key) == 0 && out[m->i].why == KILN_WHY_NONE; lo++)
			for (unsigned alpha = KILN_ALPHA_HEX; alpha <= KILN_ALPHA_B32; alpha <<= 1)
				if (m->lonely & alpha & s[lo]->alpha && could_be(m, alpha) &&
				    orphan(m, alpha) && take(out, m))
					break;
	}
	free(s);
	return true;
}

/* The tree's shapes, counted from V[0..NV): malloc'ed, *NG of them. */
static struct global *globals(const struct member *v, size_t nv, size_t *ng)
{
	static const unsigned alphas[3] = { KILN_ALPHA_HEX, KILN_ALPHA_B32, KILN_ALPHA_B64 };
	struct global *g = NULL;

	*ng = 0;
	for (size_t i = 0; i < nv; i++) {
		size_t k;
		for (k = 0; k < *ng && !(g[k].before == v[i].before && g[k].len == v[i].len); k++)
			;
		if (k == *ng) {
			struct global *w = realloc(g, (*ng + 1) * sizeof(*w));
			if (!w) {
				free(g);
				return NULL;
			}
			g = w;
			g[(*ng)++] = (struct global){ v[i].before, v[i].len, { { 0 } }, { { 0 } } };
		}
		for (int a = 0; a < 3; a++)
			if (v[i].alpha & alphas[a] && (v[i].sample || could_be(&v[i], alphas[a]))) {
				g[k].members[a][v[i].code]++;
				g[k].samples[a][v[i].code] += v[i].sample;
			}
	}
	return g ? g : malloc(1);
}

bool kiln_shape_prove(const char *const *rels, size_t n, struct kiln_fp *out)
{
	struct member *v = NULL;
	struct global *g;
	size_t nv = 0, cap = 0, ng;
	bool ok;

	for (size_t i = 0; i < n; i++)
		if (!add_members(rels[i], i, &v, &nv, &cap)) {
			free(v);
			return false;
		}
	if (!(g = globals(v, nv, &ng))) {
		free(v);
		return false;
	}
	if (nv > 1)
		qsort(v, nv, sizeof(*v), member_cmp);
	for (size_t a = 0, b; a < nv; a = b) {
		const struct global *shape = g;
		for (b = a + 1; b < nv && same_shape(&v[a], &v[b]); b++)
			;
		while (!(shape->before == v[a].before && shape->len == v[a].len))
			shape++;
		prove(v + a, b - a, KILN_ALPHA_HEX, 0, shape, out);
		prove(v + a, b - a, KILN_ALPHA_B32, 1, shape, out);
		prove(v + a, b - a, KILN_ALPHA_B64, 2, shape, out);
	}
	free(g);
	ok = kin(v, nv, out);
	free(v);
	return ok;
}
