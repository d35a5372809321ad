/*
 * fingerprint.c - content hashes in file names, as bundlers write them.
 *
 * A token is a run of at least KILN_TOKEN_MIN base64url bytes that ends
 * right before a '.' (the extension) and starts the base name or follows a
 * '.' or '-'.  The rule on a name alone (docs/cache-control.md, "The
 * name"): a name that is no page (kiln_name_kind()) is fingerprinted when
 * it holds a token T, right after a '.' or '-' that is not the base name's
 * first byte, such that
 *  (a) T is 8 or more lowercase hexadecimal digits with at least one digit
 *      and one letter, and no colour, UUID's group or id after a
 *      timestamp (hex_other()):
 *      webpack and Create React App ("main.3f9a2c7b1d4e.chunk.js"),
 *      Parcel, Next.js ("framework-2c79e2a64abdb08b.js"); or
 *  (b) T is exactly 8 characters, hash-like (kiln_token_hashlike():
 *      "python23", "mobile-2" are words), and either esbuild's upper-case
 *      base32 with a number and no name someone could have chosen
 *      (kiln_token_chosen32(): "MP3AUDIO", "EPSG4326"; "styles.KZ3T4RBF.css"
 *      is a hash); or base64url with both cases and a digit or a lowercase
 *      letter right before an uppercase one, neither plain CamelCase
 *      ("KqxWpzVr") nor a name someone could have chosen
 *      (kiln_token_chosen(): people, brands, identifiers, codes): Vite and
 *      Rollup ("index-B2x9_kQ1.js").  In a file that is no bundler's code
 *      (an image, a font, a document), where people name files by hand,
 *      more: in base32 two numbers and no model's number (H264HEVC), in
 *      base64url a digit and two runs of each case; or
 *  (c) the base name starts with 16 or more lowercase hexadecimal digits,
 *      a digit and a letter among them, followed by a '.': webpack's
 *      "[hash][ext]" ("3f9a2c7b1d4e5f6a7b8c.svg").
 * The conditions keep words, versions ("jquery-3.7.1.min.js": a token
 * holds no '.'), sizes ("favicon-32x32.png": too short) and dates
 * ("report.20241201.js": no letter) out; they also keep out a tenth of
 * real hashes in code and more than half in images, which the other
 * evidence (immutable.c) brings back.
 */
#include "fingerprint.h"
#include "spell.h"
#include "words.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const why_names[KILN_NWHY] = {
	[KILN_WHY_NAME] = "name",
	[KILN_WHY_BUNDLER] = "bundler",
	[KILN_WHY_PREVIOUS] = "previous",
	[KILN_WHY_TREE] = "tree",
	[KILN_WHY_GLOB] = "glob",
};

const char *kiln_why_name(unsigned why)
{
	return why < KILN_NWHY ? why_names[why] : NULL;
}

unsigned kiln_why_parse(const char *s)
{
	for (unsigned w = 1; s && w < KILN_NWHY; w++)
		if (strcmp(s, why_names[w]) == 0)
			return w;
	return KILN_NWHY;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_hex_lower(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static bool is_base64url(char c)
{
	return is_upper(c) || is_lower(c) || is_digit(c) || c == '_' || c == '-';
}

unsigned kiln_token_alphabets(const char *t, size_t len)
{
	unsigned a = KILN_ALPHA_HEX | KILN_ALPHA_B32 | KILN_ALPHA_B64;

	for (size_t i = 0; i < len && a; i++) {
		if (!is_hex_lower(t[i]))
			a &= ~(unsigned)KILN_ALPHA_HEX;
		if (!is_upper(t[i]) && !(t[i] >= '2' && t[i] <= '7'))
			a &= ~(unsigned)KILN_ALPHA_B32;
		if (!is_base64url(t[i]))
			a &= ~(unsigned)KILN_ALPHA_B64;
	}
	return len ? a : 0;
}

/* Does T (LEN bytes, all digits) begin with a date YYYYMMDD of 1970-2099? */
static bool is_date(const char *t, size_t len)
{
	int y, m, d;

	if (len < 8)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_digit(t[i]))
			return false;
	y = (t[0] - '0') * 1000 + (t[1] - '0') * 100 + (t[2] - '0') * 10 + (t[3] - '0');
	m = (t[4] - '0') * 10 + (t[5] - '0');
	d = (t[6] - '0') * 10 + (t[7] - '0');
	return y >= 1970 && y <= 2099 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/* One part of a token between '-' and '_' (N bytes at P; ALONE: the only
 * one): 2 for a word ("menu", "Python", "python23": a capital maybe, then
 * lowercase letters that could be spelt, 3 or more when not ALONE, then
 * digits), 1 for a number or a version ("2", "v2"), 0 for anything else. */
static int word_part(const char *p, size_t n, bool alone)
{
	size_t i = n && is_upper(p[0]), lower = 0, digits = 0;

	while (i + lower < n && is_lower(p[i + lower]))
		lower++;
	while (i + lower + digits < n && is_digit(p[i + lower + digits]))
		digits++;
	if (i + lower + digits != n)
		return 0;
	if (lower >= 2)
		return (alone || i + lower >= 3) && kiln_spelt(p, i + lower) ? 2 : 0;
	return i + lower <= 1 && digits ? 1 : 0;
}

bool kiln_token_hashlike(const char *t, size_t len)
{
	bool word = false, lower = false;

	if (is_date(t, len))
		return false;
	for (size_t i = 0; i < len; i++)
		lower |= is_lower(t[i]);
	if (!lower || kiln_token_alphabets(t, len) & KILN_ALPHA_HEX)
		return true;
	for (size_t i = 0; i <= len;) {
		size_t n = 0;
		int w;
		while (i + n < len && t[i + n] != '-' && t[i + n] != '_')
			n++;
		if (!(w = word_part(t + i, n, n == len)))
			return true;
		word |= w == 2;
		i += n + 1;
	}
	return !word;
}

/* A plain CamelCase word, maybe with a number after it ("SemiBold",
 * "darkMode", "KqxWpzVr", "iPhone12"): lowercase letters, then runs of an
 * uppercase letter and lowercase ones, then digits, whether or not its
 * parts spell.  The name alone does not take it (the tree may: it is no
 * word unless kiln_token_words() says so). */
static bool plain_camel(const char *t, size_t len)
{
	size_t i = 0, runs = 0;

	while (i < len && is_lower(t[i]))
		i++;
	while (i < len && is_upper(t[i])) {
		size_t n = 0;
		for (i++; i < len && is_lower(t[i]); i++)
			n++;
		if (!n)
			return false;
		runs++;
	}
	while (i < len && is_digit(t[i]))
		i++;
	return runs && i == len;
}

/* Has a token the shape of a bundler's hash, whole: 8 characters of
 * base64url without '-' or '_' (Vite, Rollup), of base32 when upper case
 * (esbuild), or 8 or more lowercase hexadecimal digits (webpack, Parcel,
 * Next.js)? */
static bool hash_shape(const char *t, size_t len)
{
	unsigned a = kiln_token_alphabets(t, len);
	bool lower = false;

	for (size_t i = 0; i < len; i++)
		lower |= is_lower(t[i]);
	if (a & KILN_ALPHA_HEX)
		return len >= KILN_TOKEN_MIN;
	/* upper case is esbuild's base32 ("sku-X7K2PQ9Z" is no hash of it) */
	return len == 8 && (a & (lower ? KILN_ALPHA_B64 : KILN_ALPHA_B32)) && !memchr(t, '-', len) &&
	       !memchr(t, '_', len);
}

/* Could the token T (LEN bytes) be a name someone chose, by any reading:
 * kiln_token_chosen(), or in upper case kiln_token_chosen32()? */
static bool chosen(const char *t, size_t len)
{
	return !(kiln_token_alphabets(t, len) & KILN_ALPHA_HEX) && kiln_token_chosen(t, len);
}

bool kiln_token_changed(const char *old, const char *new, size_t len)
{
	size_t differ = 0;
	bool letter = false, letters_changed = false;

	if (!hash_shape(old, len) || !hash_shape(new, len) || !kiln_token_hashlike(old, len) ||
	    !kiln_token_hashlike(new, len) || chosen(old, len) || chosen(new, len))
		return false;
	for (size_t i = 0; i < len; i++) {
		bool d = old[i] != new[i];
		differ += d;
		letter |= !is_digit(old[i]) || !is_digit(new[i]);
		letters_changed |= d && (!is_digit(old[i]) || !is_digit(new[i]));
	}
	return 2 * differ > len && (!letter || letters_changed);
}

static const char *base_of(const char *name)
{
	const char *b = strrchr(name, '/');

	return b ? b + 1 : name;
}

bool kiln_token_at(const char *name, size_t start, size_t len)
{
	return kiln_token_at_min(name, start, len, KILN_TOKEN_MIN);
}

bool kiln_token_at_min(const char *name, size_t start, size_t len, size_t min)
{
	const char *base = base_of(name), *t = name + start;

	if (t < base || len < min || !len || (size_t)(t - name) + len > strlen(name) ||
	    t[len] != '.' || (t > base && t[-1] != '.' && t[-1] != '-'))
		return false;
	return kiln_token_alphabets(t, len) & KILN_ALPHA_B64;
}

bool kiln_token_next(const char *name, size_t *at, size_t *len)
{
	size_t base = (size_t)(base_of(name) - name), n = strlen(name);

	for (size_t p = *at > base ? *at : base; p < n; p++) {
		size_t l = 0;
		if (p > base && name[p - 1] != '.' && name[p - 1] != '-')
			continue;
		while (name[p + l] && name[p + l] != '.')
			l++;
		if (kiln_token_at(name, p, l)) {
			*at = p;
			*len = l;
			return true;
		}
	}
	return false;
}

unsigned kiln_name_kind(const char *name)
{
	static const char *const code[] = { "js", "mjs", "cjs", "css", "map", "wasm" };
	static const char *const page[] = { "html", "htm", "xhtml" };
	const char *base = base_of(name), *ext = strrchr(base, '.');

	if (!ext || ext == base)
		return KILN_KIND_OTHER;
	for (size_t i = 0; i < sizeof(code) / sizeof(code[0]); i++)
		if (strcmp(ext + 1, code[i]) == 0)
			return KILN_KIND_CODE;
	for (size_t i = 0; i < sizeof(page) / sizeof(page[0]); i++)
		if (strcmp(ext + 1, page[i]) == 0)
			return KILN_KIND_PAGE;
	return KILN_KIND_OTHER;
}

/* Rule (a) for the token at T, or (c) when MIN is 16: its length, or 0. */
static size_t hex_token(const char *t, size_t min)
{
	size_t n = 0;
	bool digit = false, letter = false;

	for (; is_hex_lower(t[n]); n++) {
		digit |= t[n] <= '9';
		letter |= t[n] >= 'a';
	}
	return n >= min && t[n] == '.' && digit && letter ? n : 0;
}

/* Does each of T's LEN digits (or letters: DIGITS false) that follows
 * another of its kind step from it by STEP ("1234567890": 9 then 0)? */
static bool steps_by(const char *t, size_t len, bool digits, int step)
{
	char last = 0;

	for (size_t i = 0; i < len; i++) {
		if (is_digit(t[i]) != digits)
			continue;
		if (last) {
			int d = t[i] - last;
			if (d != step && !(digits && (d == 9 * -step)))
				return false;
		}
		last = t[i];
	}
	return true;
}

/* Are the LEN hexadecimal digits at T typed, not drawn: its letters, in
 * order, each the one after the last (or before), and so its digits
 * ("a1b2c3d4", "abc12345", "1234567890abcdef", "dcba4321"); a pattern
 * repeated ("ab12ab12", "1a1a1a1a"), two characters alone ("a0000001"),
 * five of one in a row in 8 ("abc00000"), a grey and its alpha
 * ("f5f5f5ff")?  A random hash of 8 is so about one time in 10,000. */
static bool typed_sequence(const char *t, size_t len)
{
	size_t distinct = 0, run = 1, longest = 1;
	bool seen[256] = { false }, periodic;

	for (int step = -1; step <= 1; step += 2)
		if (steps_by(t, len, true, step) && steps_by(t, len, false, step))
			return true;
	for (size_t p = 1; p <= len / 2; p *= 2) {
		periodic = true;
		for (size_t i = 0; i + p < len && periodic; i++)
			periodic = t[i] == t[i + p];
		if (periodic)
			return true;
	}
	for (size_t i = 0; i < len; i++) {
		distinct += !seen[(unsigned char)t[i]];
		seen[(unsigned char)t[i]] = true;
		run = i && t[i] == t[i - 1] ? run + 1 : 1;
		longest = run > longest ? run : longest;
	}
	if (distinct <= 2)
		return true;
	/* (in a longer hash, five of one in a row is not rare: webpack's
	 * "a8a6ac4f2f4e6eeeee4f") */
	return len == 8 && (longest >= 5 || (t[0] == t[2] && t[2] == t[4] && t[1] == t[3] &&
					     t[3] == t[5]));
}

/* Is the hexadecimal token T (LEN digits) of the base name BASE something
 * other than a hash: a colour of four doubled digits ("ff00aa11"), a
 * placeholder typed in sequence (typed_sequence()), the last group of a UUID
 * ("550e8400-e29b-41d4-a716-4466554400ab"), or the part of an id after a
 * number of 10 digits or more and a '-' (a timestamp: Unsplash's
 * "photo-1506744038136-46273834b3fb")? */
static bool hex_other(const char *base, const char *t, size_t len)
{
	static const size_t groups[] = { 8, 4, 4, 4 };
	const char *p = base;
	size_t digits = 0;

	if (len == 8 && t[0] == t[1] && t[2] == t[3] && t[4] == t[5] && t[6] == t[7])
		return true;
	if (typed_sequence(t, len))
		return true;
	if (t - base >= 11 && t[-1] == '-') {
		size_t i = (size_t)(t - base) - 1; /* the '-' */
		for (; i > 0 && base[i - 1] >= '0' && base[i - 1] <= '9'; i--)
			digits++;
		if (digits >= 10 && (i == 0 || base[i - 1] == '-' || base[i - 1] == '_' ||
				     base[i - 1] == '.'))
			return true;
	}
	if (len != 12 || t - base < 24)
		return false;
	p = t - 24;
	if (p > base && p[-1] != '-' && p[-1] != '.' && p[-1] != '_')
		return false;
	for (size_t g = 0; g < 4; g++) {
		for (size_t i = 0; i < groups[g]; i++, p++)
			if (!is_hex_lower(*p))
				return false;
		if (*p++ != '-')
			return false;
	}
	return true;
}

/* Rule (b) for esbuild's base32, upper case and the digits 2 to 7: a
 * number (outside a bundler's code, KIND, two, and no model's number of 3
 * digits: "H264HEVC"), and not a name someone could have chosen
 * (kiln_token_chosen32(): "MP3AUDIO", "SOLID226", "B5E456AE"). */
static bool base32_token(const char *t, unsigned kind)
{
	size_t numbers = 0, hex = 0;

	for (size_t i = 0; i < 8; i++) {
		numbers += is_digit(t[i]) && (i == 0 || !is_digit(t[i - 1]));
		hex += is_digit(t[i]) || (t[i] >= 'A' && t[i] <= 'F');
	}
	if (kind != KILN_KIND_CODE && (numbers < 2 || kiln_token_model32(t, 8)))
		return false;
	return numbers && hex < 8 && !kiln_token_chosen32(t, 8);
}

/* The runs of the 8 bytes at T of which IS is true. */
static size_t runs(const char *t, bool (*is)(char))
{
	size_t n = 0;

	for (size_t i = 0; i < 8; i++)
		n += is(t[i]) && (i == 0 || !is(t[i - 1]));
	return n;
}

/* Rule (b) for the token at T: its length (8), or 0.  A base64url hash
 * holds both cases, with a digit or a lowercase letter right before an
 * uppercase one, and is not a name someone could have chosen
 * (kiln_token_chosen()) nor CamelCase. */
static size_t base64url_token(const char *t, unsigned kind)
{
	bool digit = false, upper = false, lower = false, mix = false;

	for (size_t i = 0; i < 8; i++) {
		if (!is_base64url(t[i]))
			return 0;
		digit |= is_digit(t[i]);
		upper |= is_upper(t[i]);
		lower |= is_lower(t[i]);
		mix |= i > 0 && is_lower(t[i - 1]) && is_upper(t[i]);
	}
	if (t[8] != '.' || !(upper || lower) || !kiln_token_hashlike(t, 8))
		return 0;
	if (kiln_token_alphabets(t, 8) & KILN_ALPHA_B32)
		return base32_token(t, kind) ? 8 : 0;
	if (!upper || !lower || !(digit || mix) || kiln_token_chosen(t, 8) || plain_camel(t, 8))
		return 0;
	return kind == KILN_KIND_CODE || (digit && runs(t, is_upper) >= 2 && runs(t, is_lower) >= 2) ? 8 : 0;
}

bool kiln_token_other(const char *name, size_t start, size_t len)
{
	return (kiln_token_alphabets(name + start, len) & KILN_ALPHA_HEX) &&
	       hex_other(base_of(name), name + start, len);
}

/* The rule on the name alone, NAME's file of KIND. */
static bool span_as(const char *name, unsigned kind, size_t *start, size_t *len)
{
	const char *base = base_of(name);
	size_t n;

	if (kind == KILN_KIND_PAGE)
		return false;
	if ((n = hex_token(base, 16))) {
		*start = (size_t)(base - name);
		*len = n;
		return true;
	}
	for (const char *p = *base ? base + 1 : base; *p; p++) /* "dir/" has no name */
		if ((*p == '.' || *p == '-') &&
		    (((n = hex_token(p + 1, 8)) && !hex_other(base, p + 1, n)) ||
		     (n = base64url_token(p + 1, kind)))) {
			*start = (size_t)(p + 1 - name);
			*len = n;
			return true;
		}
	return false;
}

bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len)
{
	return span_as(name, kiln_name_kind(name), start, len);
}

bool kiln_fingerprinted(const char *name)
{
	size_t start, len;

	return kiln_fingerprint_span(name, &start, &len);
}

char *kiln_family_at(const char *name, size_t start, size_t len)
{
	size_t n = strlen(name);
	char *f = malloc(n - len + 2);

	if (!f)
		return NULL;
	memcpy(f, name, start);
	f[start] = '*';
	memcpy(f + start + 1, name + start + len, n - start - len + 1);
	return f;
}

size_t kiln_token_find(const char *name, const char *token, size_t len)
{
	const char *base = base_of(name);
	size_t n = strlen(name);

	for (size_t p = (size_t)(base - name); p + len <= n; p++)
		if (memcmp(name + p, token, len) == 0 && kiln_token_at(name, p, len))
			return p;
	return SIZE_MAX;
}
