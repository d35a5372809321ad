/*
 * spell.h - whether letters read as English spells words (spell.c).
 * Every function reads only the N bytes at P (or T) and keeps no state:
 * safe from any thread.
 */
#ifndef KILN_SPELL_H
#define KILN_SPELL_H

#include <stdbool.h>
#include <stddef.h>

/* Could the N letters at P (either case) be spelt in a language: a vowel
 * other than y, never four consonants in a row, only pairs of letters
 * English spells often, and from 3 letters on a first pair English words
 * start with ("maskable", "OVERVIEW"; not "VIRMOKMZ", "Ggertfo")? */
bool kiln_spelt(const char *p, size_t n);

/* Does the word at P (N letters, either case) read as English spells
 * words: kiln_spelt(), and every pair of letters one that English words
 * spell often, most of them very often ("FACEBOOK", "LINKEDIN",
 * "OVERVIEW")?  8 random letters do about one time in 70 (kiln_spelt():
 * one in 17). */
bool kiln_spelt_well(const char *p, size_t n);

/* kiln_spelt(), and every pair of letters of the N at P of level MIN or
 * more and their mean level MEAN2 / 2 or more, where a pair's level is
 * floor(log2(its count in the list's words / the mean count) + 6), 0
 * (never, or 64 times rarer than the mean) to 9.  kiln_spelt_well() is
 * (3, 11). */
bool kiln_spelt_at(const char *p, size_t n, int min, size_t mean2);

/* Could the N letters at P (either case) be a word of an identifier: a
 * vowel other than y, never four consonants in a row, from 3 letters on
 * a first pair English words start with, no pair the list never spells,
 * and a mean level of 5 ("chevron" is not: "vr"; "Submit", "Redux" are)? */
bool kiln_wordish(const char *p, size_t n);

/* Are all pairs of the N letters at P (either case) pairs English spells
 * often (an abbreviation: "Grn", "Str"; not "Md")? True for N < 2. */
bool kiln_pairs_common(const char *p, size_t n);

/* Are the LEN bytes at T letters in sequence, of the alphabet or of a
 * keyboard's row ("qwertyuiop", "asdfghjkl", "zxcvbnm"), either way, in
 * either case, in 1 to 3 runs of 3 or more ("ABCdefGH", "QWERTYui",
 * "XYZabcDE", "HGFEDCBA")?  False when a byte is not a letter. */
bool kiln_letter_runs(const char *t, size_t len);

#endif
