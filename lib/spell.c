/*
 * spell.c - whether letters read as English spells words, from the pairs
 * of letters of Debian's wamerican word list (2020.12.07): what keeps
 * names written as words ("maskable", "FACEBOOK", "loadJSON") from being
 * taken for content hashes (fingerprint.c, shape.c), and letters typed in
 * sequence ("QWERTYui").  No word list is kept: 8 random letters spell
 * one time in 17 (kiln_spelt()), spell well one time in 70.
 */
#include "spell.h"

#include <stdint.h>
#include <string.h>

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

/* The pairs of letters English spells often: bit J of row I is set when
 * the pair ('a' + I, 'a' + J) is in 20 or more of the words of Debian's
 * wamerican list (2020.12.07), case folded.  464 of the 676 pairs are; a
 * random string of 8 lowercase letters has only common pairs one time in
 * eight, a word almost always. */
static const uint32_t common_pairs[26] = {
	0x3ffffff, 0x11e7b1f, 0x11f4d95, 0x17efbff,
	0x3ffffff, 0x11e4931, 0x15ef9f3, 0x15ef9bf,
	0x2ffffff, 0x0104111, 0x15efdbb, 0x17efdff,
	0x116f937, 0x3ffffff, 0x3ffffff, 0x15ef9bf,
	0x0100000, 0x17fffff, 0x17ffdff, 0x35ef9ff,
	0x3aeffff, 0x1104111, 0x10efdbb, 0x198c195,
	0x25ef9ff, 0x3104991,
};

/* The pairs of letters English words start with: bit J of row I is set
 * when 2 or more of the words of the same list start with ('a' + I,
 * 'a' + J), case folded.  392 of the 676 pairs do ("gg" does not: a random
 * "Ggertfo6" is no word). */
static const uint32_t initial_pairs[26] = {
	0x3ffffff, 0x11edb93, 0x31ec9b3, 0x376f399,
	0x3ffffff, 0x05e5b19, 0x152f999, 0x11e515b,
	0x22fff7f, 0x010c111, 0x15679d1, 0x1bcc9d3,
	0x11ee177, 0x17cc1df, 0x3feffff, 0x15e7dff,
	0x0100101, 0x17ce1bb, 0x37fff95, 0x3766997,
	0x22ebcee, 0x0184999, 0x15a5591, 0x1a25115,
	0x072d111, 0x1504191,
};

static int fold(char c)
{
	return is_upper(c) ? c - 'A' : c - 'a';
}

/* Could the N letters at P be spelt in a language: a vowel other than y,
 * never four consonants in a row, only pairs of letters that English
 * spells often, and, from 3 letters on, a pair that English words start
 * with first ("maskable", "python"; not "znsx", "Cykgqyv", "Dqicusza",
 * "Ggertfo")? */
static bool spelt(const char *p, size_t n)
{
	size_t run = 0;
	bool vowel = false;

	if (n >= 3 && !(initial_pairs[fold(p[0])] >> fold(p[1]) & 1))
		return false;

	for (size_t i = 0; i < n; i++) {
		bool v = p[i] && strchr("aeiouyAEIOUY", p[i]) != NULL;
		vowel |= v && p[i] != 'y' && p[i] != 'Y';
		run = v ? 0 : run + 1;
		if (run >= 4 || (i && !(common_pairs[fold(p[i - 1])] >> fold(p[i]) & 1)))
			return false;
	}
	return vowel;
}

/* How often English spells each pair of letters: row I, column J is the
 * level of the pair ('a' + I, 'a' + J) among the pairs of the words of
 * Debian's wamerican list (2020.12.07), case folded: floor(log2(its count
 * / the mean count) + 6), from 0 (never, or 64 times rarer than the mean)
 * to 9. */
static const char pair_level[26][27] = {
	"17774564725879262879655364", /* a */
	"75117000620711600652600030", /* b */
	"80507007707600801647600040", /* c */
	"63258242820533620562523040", /* d */
	"75797654523879563997465653", /* e */
	"50006500600600600534600030", /* f */
	"61007056600635500652501030", /* g */
	"72018201700333700545502050", /* h */
	"75868661214779863688361306", /* i */
	"40004000300000400000400000", /* j */
	"42007103601414310251202030", /* k */
	"83358331804843730165641070", /* l */
	"76207200700253760150500030", /* m */
	"73778593725436633388542142", /* n */
	"55664563515779761877766443", /* o */
	"71107006700611760755501030", /* p */
	"00000000000000000000600000", /* q */
	"85669453815566851687643060", /* r */
	"63728327705665664279614040", /* s */
	"83519317900533720776604063", /* t */
	"65656450602767350777020212", /* u */
	"60007000600000500000200010", /* v */
	"62026004601304510441000010", /* w */
	"30304002400000240004200110", /* x */
	"42334121400444340353202000", /* y */
	"40006000500200300000100013", /* z */
};

/* kiln_spelt() and every pair of letters of level MIN or more, of a mean
 * level of MEAN2 / 2 or more. */
bool kiln_spelt_at(const char *p, size_t n, int min, size_t mean2)
{
	size_t sum = 0;

	if (n < 2 || !kiln_spelt(p, n))
		return false;
	for (size_t i = 1; i < n; i++) {
		int l = pair_level[fold(p[i - 1])][fold(p[i])] - '0';
		if (l < min)
			return false;
		sum += (size_t)l;
	}
	return 2 * sum >= mean2 * (n - 1);
}

bool kiln_spelt_well(const char *p, size_t n)
{
	return kiln_spelt_at(p, n, 3, 11); /* a mean level of 5.5 */
}

bool kiln_spelt(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_upper(p[i]) && !is_lower(p[i]))
			return false;
	return spelt(p, n);
}

/* Could the N letters at P be a word of an identifier: a vowel other
 * than y, never four consonants in a row, from 3 letters on a first pair
 * English words start with, no pair English never spells, and pairs
 * that are common on average (a mean level of 5: "chevron", "Submit",
 * "Redux"; not "Kax", "Zrd")? */
bool kiln_wordish(const char *p, size_t n)
{
	size_t run = 0, sum = 0;
	bool vowel = false;

	if (n < 2 || (n >= 3 && !(initial_pairs[fold(p[0])] >> fold(p[1]) & 1)))
		return false;
	for (size_t i = 0; i < n; i++) {
		bool v = strchr("aeiouyAEIOUY", p[i]) != NULL;
		vowel |= v && p[i] != 'y' && p[i] != 'Y';
		run = v ? 0 : run + 1;
		if (run >= 4)
			return false;
		if (i) {
			int l = pair_level[fold(p[i - 1])][fold(p[i])] - '0';
			if (l < 1)
				return false;
			sum += (size_t)l;
		}
	}
	return vowel && sum >= 5 * (n - 1);
}

/* Are the N letters at P pairs that English spells often (an
 * abbreviation: "Grn", "Md")? */
bool kiln_pairs_common(const char *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (!(common_pairs[fold(p[i - 1])] >> fold(p[i]) & 1))
			return false;
	return true;
}

/* Letters in sequence, of the alphabet or of a keyboard's row, either
 * way, in either case, in at most 3 runs of 3 or more ("ABCdefGH",
 * "QWERTYui", "XYZabcDE", "HGFEDCBA"): typed, not drawn. */
bool kiln_letter_runs(const char *t, size_t len)
{
	static const char *const rows[] = { "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl",
					    "zxcvbnm" };
	size_t runs = 0;

	for (size_t i = 0; i < len;) {
		size_t best = 0;
		for (size_t r = 0; r < 4; r++)
			for (int dir = -1; dir <= 1; dir += 2) {
				const char *row = rows[r], *at;
				size_t n = 1;
				if (!is_upper(t[i]) && !is_lower(t[i]))
					return false;
				if (!(at = strchr(row, 'a' + fold(t[i]))))
					continue;
				for (; i + n < len && (is_upper(t[i + n]) || is_lower(t[i + n])); n++) {
					long k = (long)(at - row) + dir * (long)n;
					if (k < 0 || k >= (long)strlen(row) || row[k] != 'a' + fold(t[i + n]))
						break;
				}
				best = n > best ? n : best;
			}
		if (best < 3 || ++runs > 3)
			return false;
		i += best;
	}
	return runs > 0;
}
