/*
 * test_spell.c - whether letters read as English spells words (spell.c):
 * English words against strings no language spells (four consonants in a
 * row, no vowel, a pair English never writes: "vr" in "chevron", which is
 * why its icons are named by a list in fingerprint.c), and letters typed
 * in sequence against letters drawn at random.
 */
#include "spell.h"

#include "check.h"

#include <string.h>

static bool all(bool (*f)(const char *, size_t), const char *const *v, size_t n, bool want)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++)
		if (f(v[i], strlen(v[i])) != want) {
			fprintf(stderr, "test_spell: %s: expected %d\n", v[i], want);
			ok = false;
		}
	return ok;
}

#define ALL(f, v, want) all(f, v, sizeof(v) / sizeof(v[0]), want)

int main(void)
{
	static const char *const words[] = { "maskable", "python", "OVERVIEW", "Variable",
					     "portrait", "load", "parse", "State" };
	/* four consonants, no vowel, an initial pair no word starts with */
	static const char *const not_words[] = { "znsx", "Cykgqyv", "Dqicusza", "Ggertfo",
						 "VIRMOKMZ", "Grn", "xyz", "abc1" };
	static const char *const well[] = { "FACEBOOK", "LINKEDIN", "OVERVIEW", "summer", "easter" };
	static const char *const not_well[] = { "VIRMOKMZ", "KZQTRBFA", "Dqicusza" };
	static const char *const wordish[] = { "Submit", "Redux", "Change", "Month", "load" };
	static const char *const not_wordish[] = { "chevron", "Grn", "Md", "Nzpq", "x" };
	static const char *const runs[] = { "ABCdefGH", "QWERTYui", "XYZabcDE", "HGFEDCBA",
					    "AbCdEfGh", "asdfghjk", "zxcvbnm" };
	static const char *const not_runs[] = { "B2x9_kQ1", "ABDCEFGH", "KZ3T4RBF", "Dhmtqwxz",
						"abcdXYab", "" };

	CHECK(ALL(kiln_spelt, words, true));
	CHECK(ALL(kiln_spelt, not_words, false));
	CHECK(ALL(kiln_spelt_well, well, true));
	CHECK(ALL(kiln_spelt_well, not_well, false));
	CHECK(ALL(kiln_wordish, wordish, true));
	CHECK(ALL(kiln_wordish, not_wordish, false));
	CHECK(ALL(kiln_letter_runs, runs, true));
	CHECK(ALL(kiln_letter_runs, not_runs, false));
	/* the levels: kiln_spelt_well() is (3, 11); raising the floor or the
	 * mean keeps fewer */
	CHECK(kiln_spelt_at("FACEBOOK", 8, 3, 11) == kiln_spelt_well("FACEBOOK", 8));
	CHECK(!kiln_spelt_at("FACEBOOK", 8, 10, 0) && !kiln_spelt_at("FACEBOOK", 8, 0, 19));
	CHECK(kiln_spelt_at("STORE", 5, 5, 12));
	/* common pairs: "gr" and "rn" are ("green", "barn"), "md" is not */
	CHECK(kiln_pairs_common("Grn", 3) && !kiln_pairs_common("Md", 2) &&
	      kiln_pairs_common("x", 1));
	return check_exit("test_spell");
}
