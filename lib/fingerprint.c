/*
 * fingerprint.c - content hashes in file names, as bundlers write them.
 *
 * A token is a run of at least KILN_TOKEN_MIN base64url bytes that ends
 * right before a '.' (the extension) and starts the base name or follows a
 * '.' or '-'.  The rule on a name alone (docs/cache-control.md,
 * "Cache-Control"): a
 * name is fingerprinted when it holds a token T, right after a '.' or '-'
 * that is not the base name's first byte, such that
 *  (a) T is 8 or more lowercase hexadecimal digits with at least one digit
 *      and one letter: webpack and Create React App
 *      ("main.3f9a2c7b1d4e.chunk.js"), Parcel, Angular, Next.js
 *      ("framework-2c79e2a64abdb08b.js"); or
 *  (b) T is exactly 8 characters, not made of words
 *      (kiln_token_hashlike(): "python23", "mobile-2"), and either
 *      upper-case base32 with a digit, and not a code or a word with a
 *      number (a few letters or a spelt word, then digits:
 *      "CRS.EPSG4326.js", "manual-ENGLISH2.html"): esbuild
 *      ("styles.KZ3T4RBF.css"); or base64url with both an uppercase and a
 *      lowercase letter and a digit, or with no digit but a lowercase
 *      letter directly followed by an uppercase one, and not a CamelCase
 *      word ("SemiBold", "iPhone12", "Web3Auth", "BTreeMap"), nor words
 *      with numbers ("v2Config", "Model3LR", "Jan2024a", "Part1of3",
 *      "SUMMER24"), codes and counters ("iD4-0003"), identifiers of
 *      words and acronyms ("loadJSON", "setState", "arrowUpR") or letters
 *      typed in sequence ("QWERTYui"): Vite and Rollup
 *      ("index-B2x9_kQ1.js"); or
 *  (c) the base name starts with 16 or more lowercase hexadecimal digits,
 *      a digit and a letter among them, followed by a '.': webpack's
 *      "[hash][ext]" ("3f9a2c7b1d4e5f6a7b8c.svg").
 * The conditions keep words, versions ("jquery-3.7.1.min.js": a token
 * holds no '.'), sizes ("favicon-32x32.png": too short) and dates
 * ("report.20241201.js": no letter) out; they also keep out a few per cent
 * of real hashes, which the other evidence (immutable.c) brings back.
 */
#include "fingerprint.h"
#include "spell.h"

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
 * "darkMode", "rotateCw", "iPhone12"): lowercase letters, then runs of an
 * uppercase letter and lowercase ones, then digits.  '-' and '_' are
 * skipped when SKIP. */
static bool plain_camel(const char *t, size_t len, bool skip)
{
	size_t i = 0, runs = 0;

	while (i < len && (is_lower(t[i]) || (skip && (t[i] == '-' || t[i] == '_'))))
		i++;
	while (i < len && is_upper(t[i])) {
		size_t n = 0;
		for (i++; i < len && (is_lower(t[i]) || (skip && (t[i] == '-' || t[i] == '_'))); i++)
			n += is_lower(t[i]);
		if (!n)
			return false;
		runs++;
	}
	while (i < len && is_digit(t[i]))
		i++;
	return runs && i == len;
}

/* A part of acronym_camel(): N letters at P, 3 with a vowel ("Ipv", "Top",
 * "Vec") or more spelt ("Addr", "Atomic"). */
static bool short_word(const char *p, size_t n)
{
	if (n == 3)
		return strchr("aeiouAEIOU", p[0]) || strchr("aeiou", p[1]) || strchr("aeiou", p[2]);
	return n > 3 && kiln_spelt(p, n);
}

/* CamelCase with a number inside or an acronym's capital alone ("Web3Auth",
 * "Top10Tip", "Ipv4Addr", "BTreeMap", "AtomicU8"): parts that are
 * lowercase letters (first only), an uppercase letter and lowercase ones,
 * an uppercase letter alone, or digits, never a lowercase letter right
 * after a digit; at least one part of an uppercase letter and lowercase
 * ones, at most one capital alone, one number of at most 2 digits, and
 * every run of 4 letters or more spelt (kiln_spelt()).  A random base64url
 * token has this form well under one time in a hundred (the unit test
 * measures it). */
static bool acronym_camel(const char *t, size_t len)
{
	size_t i = 0, runs = 0, alone = 0, numbers = 0, digits = 0;

	while (i < len && is_lower(t[i]))
		i++;
	if (i && !short_word(t, i))
		return false;
	while (i < len) {
		size_t at = i;
		if (is_upper(t[i])) {
			for (i++; i < len && is_lower(t[i]); i++)
				;
			if (i - at == 1) {
				alone++;
				continue;
			}
			if (!short_word(t + at, i - at))
				return false;
			runs++;
		} else if (is_digit(t[i])) {
			for (; i < len && is_digit(t[i]); i++)
				;
			if (i < len && is_lower(t[i]))
				return false;
			numbers++;
			digits += i - at;
		} else {
			return false;
		}
	}
	return runs && alone <= 1 && numbers <= 1 && digits <= 2;
}

static bool camel_word(const char *t, size_t len, bool skip)
{
	return plain_camel(t, len, skip) || acronym_camel(t, len);
}

/* A year 1900-2099 at T (4 digits)? */
static bool is_year(const char *t)
{
	return (t[0] == '1' && t[1] == '9') || (t[0] == '2' && t[1] == '0');
}

/* Words and a number or two, the way names of models, versions, dates and
 * parts are written ("v2Config", "Model3LR", "Jan2024a", "Part1of3",
 * "asn1Coding"): it starts with a letter and is made of words (letter runs
 * of 3 or more, a capital maybe, that could be spelt: kiln_spelt()), one or two
 * numbers of 4 digits in all at most, and at most one short piece (1 or 2
 * letters of one case: "v", "LR", "of"), with 4 letters of words or a
 * year.  With this form and the spelt upper-case word with digits among
 * the words, the rule on the name alone takes 91.4% of random base64url
 * tokens of 8, without them 91.6% (the unit test measures the first);
 * the tree brings the others back. */
static bool number_words(const char *t, size_t len)
{
	size_t i = 0, words = 0, shorts = 0, numbers = 0, letters = 0, digits = 0;
	bool year = false;

	if (!len || is_digit(t[0]))
		return false;
	while (i < len) {
		size_t at = i, u = 0;
		if (is_digit(t[i])) {
			for (; i < len && is_digit(t[i]); i++)
				;
			year |= i - at == 4 && is_year(t + at);
			digits += i - at;
			numbers++;
			continue;
		}
		while (i + u < len && is_upper(t[i + u]))
			u++;
		if (u && !(i + u < len && is_lower(t[i + u]))) { /* an acronym */
			if (u > 2)
				return false;
			shorts++;
			i += u;
			continue;
		}
		if (u >= 2) { /* an acronym before a capitalised word */
			if (u > 3)
				return false;
			shorts++;
			i += u - 1;
		}
		at = i;
		for (i += u > 0; i < len && is_lower(t[i]); i++)
			;
		if (i < len && !is_digit(t[i]) && !is_upper(t[i]))
			return false; /* '-' or '_': kiln_token_hashlike()'s */
		if (i - at <= 2) {
			shorts++;
		} else if (kiln_spelt(t + at, i - at)) {
			words++;
			letters += i - at;
		} else {
			return false;
		}
	}
	return words && (letters >= 4 || year) && shorts <= 1 && numbers >= 1 && numbers <= 2 &&
	       digits <= 4;
}

/* CamelCase of two words or more, each of 4 letters or more that could be
 * spelt, or one after a lowercase letter, then at most 2 digits
 * ("SemiBold", "DarkMode", "iPhone12"). */
static bool spelt_camel(const char *t, size_t len)
{
	size_t i = 0, runs = 0, digits = 0;
	bool lead = len && is_lower(t[0]);

	i = lead;
	while (i < len && is_upper(t[i])) {
		size_t at = i;
		for (i++; i < len && is_lower(t[i]); i++)
			;
		if (i - at < 4 || !kiln_spelt(t + at, i - at))
			return false;
		runs++;
	}
	for (; i < len && is_digit(t[i]); i++)
		digits++;
	return i == len && digits <= 2 && (runs >= 2 || (runs == 1 && lead && digits));
}

/* An upper-case word of 4 letters or more that could be spelt, then at
 * most DIGITS digits ("FACEBOOK"; with 2, "ENGLISH2", "SUMMER24"). */
static bool spelt_upper(const char *t, size_t len, size_t digits)
{
	size_t i = 0;

	while (i < len && is_upper(t[i]))
		i++;
	if (i < 4 || !kiln_spelt(t, i) || len - i > digits)
		return false;
	for (; i < len && is_digit(t[i]); i++)
		;
	return i == len;
}

/* A code or a counter: 2 to 4 letters of one case, maybe a '-' or '_',
 * then 4 digits or more ("DSC01234", "DSC_0042", "EPSG4326", "SALE2024");
 * or anything that ends in '-' or '_' and 4 digits or more ("iD4-0003"). */
static bool code_number(const char *t, size_t len)
{
	size_t i = 0, letters, digits = 0;

	while (i < len && is_upper(t[i]))
		i++;
	if (!i)
		while (i < len && is_lower(t[i]))
			i++;
	letters = i;
	if (i < len && (t[i] == '-' || t[i] == '_'))
		i++;
	while (i + digits < len && is_digit(t[i + digits]))
		digits++;
	if (letters >= 2 && letters <= 4 && digits >= 4 && i + digits == len)
		return true;
	for (digits = 0; digits < len && is_digit(t[len - 1 - digits]); digits++)
		;
	return digits >= 4 && digits < len && (t[len - 1 - digits] == '-' || t[len - 1 - digits] == '_');
}

/* Two words of 3 letters or more that could be spelt, written together,
 * lowercase with a capital maybe or upper-case ("appstore", "darkmode",
 * "APPSTORE"): kiln_spelt() keeps out
 * four consonants in a row, which a compound may have ("ppst"). */
static bool compound(const char *t, size_t len)
{
	bool upper = len && is_upper(t[len - 1]);

	for (size_t i = 0; i < len; i++)
		if (!(upper ? is_upper(t[i]) : is_lower(t[i]) || (i == 0 && is_upper(t[i]))))
			return false;
	for (size_t k = 3; k + 3 <= len; k++)
		if (kiln_spelt(t, k) && kiln_spelt(t + k, len - k))
			return true;
	return false;
}

/* An upper-case word that spells as English does, then 1 or 2 digits
 * ("TWITTER1", "ENGLISH2"). */
static bool upper_number(const char *t, size_t len)
{
	size_t n = len;

	while (n && is_digit(t[n - 1]))
		n--;
	for (size_t i = 0; i < n; i++)
		if (!is_upper(t[i]))
			return false;
	return n >= 4 && len - n >= 1 && len - n <= 2 && kiln_spelt_well(t, n);
}

/* The words names of functions and methods start with, lowercase
 * ("loadJSON", "toString", "useState", "onChange"), the formats and
 * protocols they convert ("jsonToJS") and the icons' shapes
 * ("chevronL", "caretUp"), some of which spell as no English word does. */
static const char *const verbs[] = {
	"add", "ajax", "api", "arrow", "as", "call", "can", "caret", "check", "chevron", "clear",
	"close", "copy", "create", "css", "del", "delete", "do", "dom", "draw", "edit", "fetch",
	"fill", "find", "for", "from", "get", "go", "handle", "has", "hide", "html", "http", "in",
	"init", "is", "json", "load", "make", "map", "move", "new", "of", "on", "open", "parse",
	"play", "post", "print", "push", "put", "read", "remove", "render", "reset", "run", "save",
	"scroll", "send", "set", "setup", "show", "sort", "start", "stop", "svg", "test", "to",
	"up", "update", "uri", "url", "use", "view", "with", "write", "xml",
};

/* Is the word at P (N letters, lowercase but maybe the first) one of
 * verbs[]? */
static bool verb(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strlen(verbs[i]) == n && (p[0] | 0x20) == verbs[i][0] &&
		    memcmp(verbs[i] + 1, p + 1, n - 1) == 0)
			return true;
	return false;
}

/* An identifier of words and acronyms, the way functions, methods, icons
 * and campaigns are named: a lowercase word, then capitalised words
 * (from 3 letters on that could be spelt, kiln_wordish(), or after a word
 * not of verbs[] spell well, kiln_spelt_well(); of 2 letters, of
 * verbs[]: "To", "Up") and loose pieces: an acronym (2 to 5
 * capitals, maybe a plural 's'), an abbreviation of 2 or 3 letters of
 * common pairs ("Str", "Grn") or, last or before a last capital, of any
 * ("Md", "ImgL"), a capital alone at the end, a number of at most 2
 * digits.  After one of verbs[] ("loadJSON", "toUTCStr",
 * "playMP3s", "setState") 2 loose pieces may follow; after another word
 * of 4 letters or more that spells well (kiln_spelt_well()), one and a
 * capital alone ("woodGrnA", "robotoMd", "heroImgL", "easterEg").  A
 * random base64url token has one of these forms well under one time in a
 * thousand (the unit test measures kiln_token_words()). */
static bool cased_words(const char *t, size_t len)
{
	size_t i = 0, loose = 0, digits = 0;
	bool led, end = false;

	while (i < len && is_lower(t[i]))
		i++;
	if (i < 2 || i == len || !is_upper(t[i]))
		return false;
	led = verb(t, i);
	if (!led && (i < 4 || !kiln_spelt_well(t, i)))
		return false;
	while (i < len) {
		size_t at = i, u = 0, l = 0;
		if (is_digit(t[i])) {
			for (; i < len && is_digit(t[i]); i++)
				digits++;
			if (i < len && !(t[i] == 's' && i + 1 == len))
				return false;
			i += i < len;
			loose++;
			continue;
		}
		if (!is_upper(t[i]))
			return false;
		while (i + u < len && is_upper(t[i + u]))
			u++;
		while (i + u + l < len && is_lower(t[i + u + l]))
			l++;
		if (u >= 2) { /* an acronym, maybe before a word or a plural */
			if (l >= 2)
				u--;
			if (u < 2 || u > 5 || (l == 1 && t[i + u] != 's'))
				return false;
			i += u + (l == 1);
			loose++;
			continue;
		}
		i += 1 + l;
		if (l == 0 && i != len)
			return false; /* a capital alone is the end ("chevronL") */
		if (l >= 2 && (led ? kiln_wordish(t + at, 1 + l) : kiln_spelt_well(t + at, 1 + l)))
			continue;
		if (l == 1 && verb(t + at, 2))
			continue;
		if (l > 2 || (l && !kiln_pairs_common(t + at, 1 + l) &&
			      !(i == len || (i + 1 == len && is_upper(t[i])))))
			return false;
		if (l == 0)
			end = true;
		else
			loose++;
	}
	return digits <= 2 && loose + end <= 2 && (led || loose <= 1);
}

bool kiln_token_words(const char *t, size_t len)
{
	return spelt_camel(t, len) || spelt_upper(t, len, 0) || upper_number(t, len) ||
	       code_number(t, len) || compound(t, len) || cased_words(t, len) ||
	       kiln_letter_runs(t, len);
}

/* An upper-case word that spells as English does, or two written
 * together, then at most 2 digits ("LINKEDIN", "APPSTORE", "TWITTER1"). */
bool kiln_token_words32(const char *t, size_t len)
{
	size_t n = len;

	while (n && is_digit(t[n - 1]))
		n--;
	if (len - n > 2 || n < 4)
		return false;
	if (n == len ? kiln_spelt_well(t, n) : kiln_spelt_at(t, n, 5, 13))
		return true;
	/* two words: a consonant each side of the seam, every pair common */
	for (size_t k = 3; k + 4 <= n && n == len; k++)
		if (kiln_spelt_at(t, k, 5, 12) && kiln_spelt_at(t + k, n - k, 5, 12) &&
		    !strchr("AEIOU", t[k - 1]) && !strchr("AEIOU", t[k]))
			return true;
	return kiln_letter_runs(t, len);
}

/* Proper nouns: two capitalised words or more of 3 letters or more that
 * could be spelt ("NewYork", "SanJose", "JohnDoe"). */
static bool proper_nouns(const char *t, size_t len)
{
	size_t i = 0, runs = 0;

	while (i < len && is_upper(t[i])) {
		size_t at = i;
		for (i++; i < len && is_lower(t[i]); i++)
			;
		if (i - at < 3 || !kiln_spelt(t + at, i - at))
			return false;
		runs++;
	}
	return i == len && runs >= 2;
}

/* Written like words with or without numbers, in the forms above whose
 * letters are spelt (not plain_camel(): a Vite hash without a digit is
 * often a capital and lowercase letters, which a rename must find): a
 * renamed word is a campaign or a new version, not a new hash
 * ("promo-BlackFri" -> "promo-CyberMon", "asn1Coding" -> "asn2Parser",
 * "lp-xmasDeal" -> "lp-xmasSale"). */
/* A lowercase word of 3 letters or more with a vowel, then capitalised
 * words of 3 letters or more that could be spelt (kiln_wordish():
 * "xmasDeal", "xmasSale"). */
static bool lower_camel(const char *t, size_t len)
{
	size_t i = 0, runs = 0;
	bool vowel = false;

	for (; i < len && is_lower(t[i]); i++)
		vowel |= strchr("aeiou", t[i]) != NULL;
	if (i < 3 || !vowel)
		return false;
	while (i < len && is_upper(t[i])) {
		size_t at = i;
		for (i++; i < len && is_lower(t[i]); i++)
			;
		if (i - at < 3 || !kiln_wordish(t + at, i - at))
			return false;
		runs++;
	}
	return i == len && runs;
}

static bool worded_part(const char *t, size_t len)
{
	return kiln_token_words(t, len) || number_words(t, len) || acronym_camel(t, len) ||
	       proper_nouns(t, len) || lower_camel(t, len);
}

/* A token with a '-' or '_' is also words when its part after the last
 * one is ("bg-blueSky" -> "bg-redDusk": the only token of a name whose
 * word is too short to be one). */
static bool worded(const char *t, size_t len)
{
	size_t n = len;

	if (worded_part(t, len))
		return true;
	while (n && t[n - 1] != '-' && t[n - 1] != '_')
		n--;
	return n && len - n >= 4 && worded_part(t + n, len - n);
}

bool kiln_token_changed(const char *old, const char *new, size_t len)
{
	size_t differ = 0;
	bool letter = false, letters_changed = false;

	if (!kiln_token_hashlike(old, len) || !kiln_token_hashlike(new, len) ||
	    worded(old, len) || worded(new, len))
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
	const char *base = base_of(name), *t = name + start;

	if (t < base || len < KILN_TOKEN_MIN || (size_t)(t - name) + len > strlen(name) ||
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

/* Rule (b) for the token at T: its length (8), or 0.  esbuild's base32 is
 * upper-case letters and digits; a base64url hash holds both cases (with
 * a digit, or with a lowercase letter before an uppercase one), where
 * words and versions hold one ("c9search", "2x2-plus", "EPSG3857") or
 * make CamelCase. */
static size_t base64url_token(const char *t)
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
	if (kiln_token_alphabets(t, 8) & KILN_ALPHA_B32) {
		/* a few letters, then 3 digits or more, is a code ("EPSG4326"),
		 * and a word then digits a word ("ENGLISH2") */
		size_t letters = 0, digits = 0;
		while (letters < 8 && is_upper(t[letters]))
			letters++;
		while (letters + digits < 8 && is_digit(t[letters + digits]))
			digits++;
		return digit && !(letters >= 1 && letters + digits == 8 &&
				  (letters <= 5 || kiln_spelt(t, letters))) ? 8 : 0;
	}
	if (kiln_token_words(t, 8) || number_words(t, 8) || spelt_upper(t, 8, 2))
		return 0;
	if (digit)
		return upper && lower && !camel_word(t, 8, false) ? 8 : 0;
	return mix && !camel_word(t, 8, true) ? 8 : 0;
}

bool kiln_fingerprint_span(const char *name, size_t *start, size_t *len)
{
	const char *base = base_of(name);
	size_t n;

	if ((n = hex_token(base, 16))) {
		*start = (size_t)(base - name);
		*len = n;
		return true;
	}
	for (const char *p = *base ? base + 1 : base; *p; p++) /* "dir/" has no name */
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
