/*
 * words.h - whether a token of a file name reads as a name someone chose
 * (words, acronyms, numbers, people's names, identifiers, codes) rather
 * than a hash a bundler drew (words.c).  Every function reads only the LEN
 * bytes at T and keeps no state: safe from any thread.
 *
 * Two readings, one inside the other:
 *  - kiln_token_words(): written as words by a form a random base64url
 *    token of 8 takes well under one time in a hundred (the unit test
 *    measures it).  No evidence ever takes such a token for a hash: not
 *    the name, the tree's shapes or a rename.
 *  - kiln_token_chosen(): could be a hand-chosen name, read more loosely
 *    (abbreviations, two letters alone, codes of acronyms and numbers):
 *    the name alone never takes it, nor the tree for a file that is no
 *    bundler code (an image, a font, a document), where hand-named files
 *    sit beside a bundler's outputs.  A few per cent of random tokens read
 *    so; the tree brings those of a bundler's code back.
 */
#ifndef KILN_WORDS_H
#define KILN_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* Tokens longer than this are not read as words (a hash of 12 or more is
 * not mistaken for one; a name that long is no token a rule takes). */
#define KILN_WORDS_MAX 32

/* Is T (LEN bytes of [A-Za-z0-9_-]) written as words (docs/
 * cache-control.md, "Words"): CamelCase of parts that could be names,
 * people's names with parts of 2 letters ("TomHanks", "XuLiPing",
 * "ChevronR", "OConnorP"); spelt words with one acronym of 2 to 5
 * capitals, one number of at most 4 digits (maybe with a unit: "2x",
 * "10th") and one letter alone ("ReactDOM", "jQueryUI", "Win32API",
 * "ChatGPT4", "iPad10th", "USBtypeC"); a word with an abbreviation
 * ("CssLexer"); CamelCase of spelt words of 4 or more letters
 * ("SemiBold"); an upper-case spelt word, maybe with 1 or 2 digits
 * ("FACEBOOK", "TWITTER1"); a code of 2 to 4 letters and 4 digits or more
 * ("DSC01234", "DSC_0042"); a counter after '-' or '_' ("iD4-0003"); two
 * words written together ("appstore"); an identifier of a lowercase word,
 * capitalised words and acronyms ("loadJSON", "setState"); letters typed
 * in sequence ("QWERTYui")? */
bool kiln_token_words(const char *t, size_t len);

/* kiln_token_words(), or could T be a hand-chosen name read more loosely:
 * at most four pieces of words, acronyms, numbers and letters alone, with
 * at most one abbreviation and two letters alone ("TkWindow", "Q3FY24aa",
 * "PKCS1v15", "en_GB_v2", "IanMcKay"); words with numbers ("v2Config",
 * "Model3LR"); CamelCase with a number or an acronym's capital
 * ("Web3Auth", "BTreeMap"); proper nouns and lowercase words with
 * capitalised ones ("NewYork", "xmasDeal"); in upper case,
 * kiln_token_chosen32() or a digit esbuild's base32 has not ("X7K2PQ9Z");
 * in lower case always (the way people write names: "vsprintf")? */
bool kiln_token_chosen(const char *t, size_t len);

/* Is T a code or a counter: 2 to 4 letters of one case, maybe a '-' or
 * '_', then 4 digits or more ("DSC01234", "DSC_0042", "EPSG4326",
 * "SALE2024"); or anything that ends in '-' or '_' and 4 digits or more
 * ("iD4-0003")?  Part of kiln_token_words(). */
bool kiln_token_code(const char *t, size_t len);

/* Is the upper-case token T (LEN bytes of [A-Z0-9_-]) one word or two
 * that spell as English does, then at most 2 digits, or letters in
 * sequence ("LINKEDIN", "APPSTORE", "TWITTER1", "ABCDEFGH")? */
bool kiln_token_words32(const char *t, size_t len);

/* kiln_token_words32(), or could the upper-case token T be a hand-chosen
 * code: a spelt word with at most 2 digits, a code of kiln_token_code(), a
 * run of 4 letters or more that could be spelt ("MP3AUDIO", "SOC2TYPE",
 * "WIFI6GHZ"), a spelt run of 3 beside a single number ("BIT2BOOL"), or
 * only the letters and digits of hexadecimal ("B5E456AE")? */
bool kiln_token_chosen32(const char *t, size_t len);

/* Is there a number of 3 digits or more between letters of the upper-case
 * token T: a model's ("H264HEVC", "X509V3AB")?  One random token of
 * esbuild's in 25 has one: only for a file that is no bundler's code is it
 * taken for a chosen name. */
bool kiln_token_model32(const char *t, size_t len);

#endif
