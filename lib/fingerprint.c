/*
 * fingerprint.c - which files never change under their name: fingerprinted
 * assets (a content hash in the file name, as bundlers write them), and
 * those the user marks with --immutable.  The server snippets give them a
 * year of freshness and "immutable"; every other file is revalidated.
 *
 * The rule (README.md, "Cache-Control"), on the file's base name: it is
 * fingerprinted when it holds a token T, right after a '.' or '-' that is
 * not the name's first byte and right before a '.', such that
 *  (a) T is 8 or more lowercase hexadecimal digits with at least one digit
 *      and at least one letter: webpack and Create React App
 *      ("main.3f9a2c7b1d4e.chunk.js"), Parcel, Angular, Next.js, Gatsby
 *      ("framework-2c79e2a64abdb08b.js"); or
 *  (b) T is exactly 8 characters of the base64url alphabet [A-Za-z0-9_-]
 *      with a letter, and a digit or a lowercase letter directly followed
 *      by an uppercase one: Vite and Rollup ("index-B2x9_kQ1.js"),
 *      esbuild's upper-case base32 ("styles.KZ3T4RBF.css").
 *  (c) the name starts with 16 or more lowercase hexadecimal digits, with
 *      at least one digit and one letter, followed by a '.': webpack's
 *      default names for assets and chunks ("[hash][ext]",
 *      "3f9a2c7b1d4e5f6a7b8c.svg").
 * The digit and case-mix conditions keep words out: "settings.js",
 * "Inter-Variable.woff2", "vue.esm-browser.js", and versions
 * ("jquery-3.7.1.min.js": a token holds no '.'), sizes
 * ("favicon-32x32.png": too short) and dates ("report.20241201.js": no
 * letter).  A hash that happens to hold no digit
 * (about 2% of 8-digit hex hashes, 25% of Rollup's) is not recognised: such
 * a file is revalidated, which costs a round trip, never a stale byte.
 */
#include "fingerprint.h"

#include "classify.h"

#include <stdlib.h>
#include <string.h>

static bool is_hex_lower(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_base64url(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Rule (a) for the token starting at T, or (c) when MIN is 16: its
 * length, or 0. */
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

/* Rule (b) for the token starting at T: its length (8), or 0. */
static size_t base64url_token(const char *t)
{
	bool digit = false, letter = false, mix = false;

	for (size_t i = 0; i < 8; i++) {
		if (!is_base64url(t[i]))
			return 0;
		digit |= t[i] >= '0' && t[i] <= '9';
		letter |= (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z');
		mix |= i > 0 && t[i - 1] >= 'a' && t[i - 1] <= 'z' && t[i] >= 'A' && t[i] <= 'Z';
	}
	return t[8] == '.' && letter && (digit || mix) ? 8 : 0;
}

bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len)
{
	const char *base = strrchr(name, '/');
	size_t n;

	base = base ? base + 1 : name;
	if ((n = hex_token(base, 16))) {
		*start = (size_t)(base - name);
		*len = n;
		return true;
	}
	for (const char *p = base + 1; *p; p++)
		if ((*p == '.' || *p == '-') &&
		    ((n = hex_token(p + 1, 8)) || (n = base64url_token(p + 1)))) {
			*start = (size_t)(p + 1 - name);
			*len = n;
			return true;
		}
	return false;
}

bool kiln_fingerprinted(const char *name)
{
	size_t start, len;

	return kiln_fingerprint_span(name, &start, &len);
}

char *kiln_fingerprint_family(const char *name)
{
	size_t start, len, n = strlen(name);
	char *f;

	if (!kiln_fingerprint_span(name, &start, &len) || !(f = malloc(n - len + 2)))
		return NULL;
	memcpy(f, name, start);
	f[start] = '*';
	memcpy(f + start + 1, name + start + len, n - start - len + 1);
	return f;
}

bool kiln_immutable(const struct kiln_options *opt, const char *rel)
{
	if (kiln_fingerprinted(rel))
		return true;
	for (size_t i = 0; i < opt->n_immutable; i++)
		if (kiln_glob_match(opt->immutable[i], rel))
			return true;
	return false;
}
