/*
 * shape.c - the tree evidence: a directory's names of one shape.
 *
 * Every candidate token of every name (fingerprint.h: a base64url run of
 * at least KILN_TOKEN_MIN bytes before a '.', at the start of the name or
 * after a '.' or '-') is a member of the shapes (directory, byte before,
 * length, alphabet) of each alphabet it fits; the token the rule on the
 * name alone finds is a sample.  Sorting the members by directory, byte
 * before and length puts each shape's together; a shape with enough
 * samples, and at least as many samples as other members, proves its
 * other members, and so does a shape with one sample that is half of it
 * when the same shape over the whole tree has enough (an entry alone beside
 * its style sheet at the top of esbuild's output), for its members that
 * look like hashes of its alphabet (strong()); and a directory's one or
 * two members with no sample, when the tree's shape is proven or a sample
 * has their logical name (orphan(), kin()).  docs/cache-control.md, "Cache-Control", has the
 * numbers that chose KILN_SHAPE_SEVERAL and "half".
 */
#include "shape.h"

#include <stdlib.h>
#include <string.h>

struct member {
	const char *rel;
	size_t dir;      /* bytes of REL before its base name */
	size_t i;        /* index into RELS */
	size_t start, len;
	char before;     /* '.', '-', or 0 at the start of the name */
	unsigned alpha;  /* the alphabets it fits */
	bool sample;     /* the rule on the name alone's token */
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

/* Append REL's candidate tokens (file I) to *V. */
static bool add_members(const char *rel, size_t i, struct member **v, size_t *n, size_t *cap)
{
	const char *slash = strrchr(rel, '/');
	size_t base = slash ? (size_t)(slash - rel) + 1 : 0, s0 = 0, l0 = 0;
	bool named = kiln_fingerprint_span(rel, &s0, &l0);

	for (size_t p = 0, len; kiln_token_next(rel, &p, &len); p++) {
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 256;
			struct member *w = realloc(*v, c * sizeof(*w));
			if (!w)
				return false;
			*v = w;
			*cap = c;
		}
		(*v)[(*n)++] = (struct member){ rel, base, i, p, len, p > base ? rel[p - 1] : 0,
						kiln_token_alphabets(rel + p, len),
						named && s0 == p && l0 == len, 0 };
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

static bool has_lower(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (t[i] >= 'a' && t[i] <= 'z')
			return true;
	return false;
}

/* May M be a hash of a shape of alphabet ALPHA? */
static bool could_be(const struct member *m, unsigned alpha)
{
	const char *t = m->rel + m->start;

	if (alpha == KILN_ALPHA_B64 && kiln_token_words(t, m->len))
		return false; /* "Inter-SemiBold", "photo-DSC_0042" beside Vite's outputs */
	if (alpha == KILN_ALPHA_B32 && kiln_token_words32(t, m->len))
		return false; /* "icon-FACEBOOK", "badge-APPSTORE" beside esbuild's */
	return kiln_token_hashlike(t, m->len) && (alpha == KILN_ALPHA_HEX || has_letter(t, m->len));
}

/* Does the token T (LEN bytes) of a shape of alphabet ALPHA hold what a
 * hash of it mostly holds: a digit and a letter (hexadecimal), a digit
 * or letters that cannot be spelt (base32), both cases (base64url)? */
static bool strong(const char *t, size_t len, unsigned alpha)
{
	bool digit = false, upper = false, lower = false;

	for (size_t i = 0; i < len; i++) {
		digit |= t[i] >= '0' && t[i] <= '9';
		upper |= t[i] >= 'A' && t[i] <= 'Z';
		lower |= t[i] >= 'a' && t[i] <= 'z';
	}
	if (alpha == KILN_ALPHA_HEX)
		return digit && lower;
	if (alpha == KILN_ALPHA_B32)
		return digit || !kiln_spelt(t, len);
	return upper && lower;
}

/* Is the name after M's token a bundler's code: ".js", ".mjs", ".cjs" or
 * ".css", maybe with ".chunk" before and ".map" after? */
static bool code_output(const struct member *m)
{
	const char *e = m->rel + m->start + m->len, *x;
	size_t n;

	if (strncmp(e, ".chunk.", 7) == 0)
		e += 6;
	n = strlen(e);
	if (n > 4 && strcmp(e + n - 4, ".map") == 0)
		n -= 4;
	for (x = e + 1; x < e + n && *x != '.'; x++)
		;
	return x == e + n && ((n == 3 && strncmp(e, ".js", 3) == 0) ||
			      (n == 4 && (strncmp(e, ".mjs", 4) == 0 || strncmp(e, ".cjs", 4) == 0 ||
					  strncmp(e, ".css", 4) == 0)));
}

/* May M be taken in a directory where its shape has no sample, the shape
 * over the whole tree being proven: hexadecimal digits alone (webpack's
 * "[contenthash:8]" without a letter, 2.3% of them) in a bundler's code
 * output, or base32 letters that cannot be spelt (esbuild's "[hash]"
 * without a digit, 19%)?  Base64url is never taken so: Vite and Rollup
 * write their outputs into one directory. */
static bool orphan(const struct member *m, unsigned alpha)
{
	const char *t = m->rel + m->start;

	if (alpha == KILN_ALPHA_HEX)
		return !has_letter(t, m->len) && code_output(m);
	return alpha == KILN_ALPHA_B32 && strong(t, m->len, alpha);
}

/* A shape over the whole tree: byte before and length, per alphabet (HEX,
 * B32, B64: 0, 1, 2) its members that may be hashes and its samples. */
struct global {
	char before;
	size_t len;
	size_t members[3], samples[3];
};

static bool proves(size_t members, size_t samples)
{
	return samples >= KILN_SHAPE_SEVERAL && 2 * samples >= members;
}

/* The shape of alphabet ALPHA (index A) among V[0..N), one directory, byte
 * before and length: mark its other members in OUT if its samples prove
 * it, or if it has one and the tree's shape G proves it. */
static void prove(struct member *v, size_t n, unsigned alpha, int a, const struct global *g,
		  struct kiln_fp *out)
{
	size_t members = 0, samples = 0, base32 = 0, cm[2] = { 0, 0 }, cs[2] = { 0, 0 };

	/* words are never taken, so they neither prove nor disprove */
	for (size_t i = 0; i < n; i++)
		if (v[i].alpha & alpha && (v[i].sample || could_be(&v[i], alpha))) {
			members++;
			samples += v[i].sample;
			base32 += v[i].sample && v[i].alpha & KILN_ALPHA_B32;
			cm[code_output(&v[i])]++;
			cs[code_output(&v[i])] += v[i].sample;
		}
	/* samples that are all base32 are esbuild's (or a Vite hash of one
	 * case): beside them an upper-case token outside base32 is no hash
	 * ("cert-X509V3AB.pem", "icon-TWITTER1.svg") */
	bool esbuild = alpha == KILN_ALPHA_B64 && samples && base32 == samples;
	/* a bundler's code outputs (.js, .css) prove only code outputs, and
	 * its other outputs only other outputs: the files copied from Vite's
	 * public/ sit beside its chunks ("assets/team-TomHanks.jpg" beside
	 * "assets/index-BHKYpVxk.js") and are no evidence of each other */
	bool own_of[2] = { proves(cm[0], cs[0]), proves(cm[1], cs[1]) };
	bool own = own_of[0] || own_of[1], lone, orphans;

	/* one sample proves only a shape it is half of (an entry beside its
	 * style sheet), and only tokens that look like hashes of its alphabet
	 * (strong()) and of the sample's kind: never a directory of camera
	 * names beside one hash */
	lone = !own && samples && 2 * samples >= members && proves(g->members[a], g->samples[a]);
	/* no sample at all: a directory of one or two outputs (webpack's
	 * static/js/main.12345678.js, esbuild's entry and its style sheet at
	 * the top), taken only in the shapes orphan() allows */
	orphans = !own && !samples && members && members <= 2 && alpha != KILN_ALPHA_B64 &&
		  proves(g->members[a], g->samples[a]);
	if (!own && !samples && members && members <= 2 && alpha != KILN_ALPHA_B64)
		for (size_t i = 0; i < n; i++)
			v[i].lonely |= alpha;
	if (!own && !lone && !orphans)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct member *m = &v[i];
		bool code = code_output(m);
		if (!(m->alpha & alpha) || m->sample || out[m->i].why != KILN_WHY_NONE ||
		    !could_be(m, alpha) || (own && !own_of[code]) ||
		    (lone && (!cs[code] || !strong(m->rel + m->start, m->len, alpha))) ||
		    (orphans && !orphan(m, alpha)) ||
		    (esbuild && !(m->alpha & KILN_ALPHA_B32) && !has_lower(m->rel + m->start, m->len)))
			continue;
		out[m->i] = (struct kiln_fp){ KILN_WHY_TREE, (uint32_t)m->start, (uint32_t)m->len };
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

/* A lonely member (no sample in its directory's shape) is a hash when a
 * sample elsewhere in the tree has its logical name and the shape of its
 * hash and it is a token orphan() allows: webpack's static/css/main.HASH.css
 * beside static/js/main.3f9a2c7b.js, the only two outputs of the build. */
static bool kin(struct member *v, size_t nv, struct kiln_fp *out)
{
	const struct member **s = malloc((nv + 1) * sizeof(*s));
	size_t ns = 0;

	if (!s)
		return false;
	for (size_t i = 0; i < nv; i++)
		if (v[i].sample)
			s[ns++] = &v[i];
	qsort(s, ns, sizeof(*s), stem_ptr_cmp);
	for (size_t i = 0; i < nv && ns; i++) {
		const struct member *m = &v[i], *key = m;
		size_t lo = 0, hi = ns;
		if (!m->lonely || out[m->i].why != KILN_WHY_NONE)
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
				    orphan(m, alpha)) {
					out[m->i] = (struct kiln_fp){ KILN_WHY_TREE, (uint32_t)m->start,
								      (uint32_t)m->len };
					break;
				}
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
			g[(*ng)++] = (struct global){ v[i].before, v[i].len, { 0 }, { 0 } };
		}
		for (int a = 0; a < 3; a++)
			if (v[i].alpha & alphas[a] && (v[i].sample || could_be(&v[i], alphas[a]))) {
				g[k].members[a]++;
				g[k].samples[a] += v[i].sample;
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
