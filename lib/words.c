/*
 * words.c - whether a token reads as a name someone chose (words.h).
 *
 * A token is read as pieces, the way people write names in one word:
 * lowercase words, capitalised words ("Hanks"), acronyms of capitals
 * ("DOM"), numbers ("32", "10th", "2x"), letters alone ("R", "i") and
 * separators ('-', '_').  A run of capitals before lowercase letters has
 * two readings, an acronym and a capitalised word ("DRbArray": "D" "Rb"
 * "Array", or "DR" "b" "Array"; "USBtypeC": "US" "Btype" "C", or "USB"
 * "type" "C"), and every reading is tried.  What makes a reading words
 * is then a matter of counting: how many pieces, how many of them spell,
 * how many letters stand alone.  A random token of 8 base64url characters
 * breaks into many short pieces that spell nothing; a name into few that
 * do.  The forms and their limits were chosen against random tokens (the
 * unit tests measure them) and against the names of Debian's packages,
 * people's names and identifiers of real libraries (tests/data/
 * unhashed-names.txt).
 *
 * Beside the pieces, a few forms are read whole: CamelCase of spelt words,
 * upper-case words, codes and counters, compounds, identifiers led by a
 * verb, letters typed in sequence.  The spelling itself is spell.c's.
 */
#include "words.h"

#include "spell.h"

#include <string.h>

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

static bool is_vowel(char c)
{
	return c && strchr("aeiouAEIOU", c) != NULL;
}

/* ---- the pieces ---- */

enum piece_kind {
	P_SEP,  /* '-' or '_' */
	P_NUM,  /* digits */
	P_WORD, /* 2 letters or more: lowercase, or a capital and lowercase */
	P_ACR,  /* 2 capitals or more, maybe with a plural 's' */
	P_ONE,  /* one letter alone */
};

struct piece {
	unsigned char kind, at, len;
};

/* A judge of one reading: the N pieces P of the token T. */
typedef bool (*judge_fn)(const char *t, const struct piece *p, size_t n);

/* Is there a reading of T[I..LEN) after the N pieces P that JUDGE says is
 * words?  P has room for KILN_WORDS_MAX pieces. */
static bool read_from(const char *t, size_t len, size_t i, struct piece *p, size_t n,
		      judge_fn judge)
{
	size_t u = i, j;

	if (i == len)
		return judge(t, p, n);
	if (t[i] == '-' || t[i] == '_') {
		p[n] = (struct piece){ P_SEP, (unsigned char)i, 1 };
		return read_from(t, len, i + 1, p, n + 1, judge);
	}
	if (is_digit(t[i]) || is_lower(t[i])) {
		bool digit = is_digit(t[i]);
		for (j = i; j < len && (digit ? is_digit(t[j]) : is_lower(t[j])); j++)
			;
		p[n] = (struct piece){ digit ? P_NUM : j - i > 1 ? P_WORD : P_ONE, (unsigned char)i,
				       (unsigned char)(j - i) };
		return read_from(t, len, j, p, n + 1, judge);
	}
	if (!is_upper(t[i]))
		return false;
	while (u < len && is_upper(t[u]))
		u++;
	for (j = u; j < len && is_lower(t[j]); j++)
		;
	if (j == u) { /* capitals alone */
		p[n] = (struct piece){ u - i > 1 ? P_ACR : P_ONE, (unsigned char)i, (unsigned char)(u - i) };
		return read_from(t, len, u, p, n + 1, judge);
	}
	if (u - i == 1) { /* a capitalised word */
		p[n] = (struct piece){ P_WORD, (unsigned char)i, (unsigned char)(j - i) };
		return read_from(t, len, j, p, n + 1, judge);
	}
	/* capitals, then lowercase letters: the last capital starts a word ... */
	p[n] = (struct piece){ u - i > 2 ? P_ACR : P_ONE, (unsigned char)i, (unsigned char)(u - 1 - i) };
	p[n + 1] = (struct piece){ P_WORD, (unsigned char)(u - 1), (unsigned char)(j - u + 1) };
	if (read_from(t, len, j, p, n + 2, judge))
		return true;
	/* ... or the capitals are an acronym, maybe plural, before a word */
	if (j - u == 1 && t[u] == 's') {
		p[n] = (struct piece){ P_ACR, (unsigned char)i, (unsigned char)(j - i) };
		return read_from(t, len, j, p, n + 1, judge);
	}
	p[n] = (struct piece){ P_ACR, (unsigned char)i, (unsigned char)(u - i) };
	p[n + 1] = (struct piece){ j - u > 1 ? P_WORD : P_ONE, (unsigned char)u, (unsigned char)(j - u) };
	return read_from(t, len, j, p, n + 2, judge);
}

static bool read_as(const char *t, size_t len, judge_fn judge)
{
	struct piece p[KILN_WORDS_MAX];

	return len && len <= KILN_WORDS_MAX && read_from(t, len, 0, p, 0, judge);
}

/* A word of 2 letters: a vowel, and a pair English spells often ("Xu",
 * "Li", "De", "In"; not "Qx", "Md"). */
static bool two_letters(const char *w)
{
	return ((is_vowel(w[0]) || is_vowel(w[1])) && kiln_pairs_common(w, 2)) ||
	       (w[0] == 'M' && w[1] == 'c'); /* "IanMcKay": a name's particle */
}

/* Could the N letters at W be a name: a vowel (or a 'y' after a
 * consonant), never four consonants in a row ("Garza", "Lynn", "Hanks";
 * not "Dhmtqw")?  Of 2 letters, two_letters(). */
static bool nameable(const char *w, size_t n)
{
	size_t run = 0;
	bool vowel = false;

	if (n == 2)
		return two_letters(w);
	for (size_t i = 0; i < n; i++) {
		bool v = is_vowel(w[i]) || (i && (w[i] == 'y' || w[i] == 'Y'));
		vowel |= v;
		run = v ? 0 : run + 1;
		if (run >= 4)
			return false;
	}
	return vowel;
}

/* A word that spells well enough to count beside acronyms and numbers: of
 * 2 letters two_letters(), of 3 kiln_spelt(), longer every pair of its
 * letters one English spells (level 2 or more) and common on average
 * ("Chat", "React", "Init"; not "Hsik", "Ywax"). */
static bool good_word(const char *w, size_t n)
{
	if (n <= 3)
		return n == 2 ? two_letters(w) : kiln_spelt(w, n);
	return kiln_spelt_at(w, n, 2, 11);
}

/* Is the lowercase W (N letters) a number's unit or ordinal ("2x",
 * "4k", "10th", "1st", "3px")? */
static bool units(const char *w, size_t n)
{
	static const char *const u[] = { "x", "k", "m", "s", "d", "p", "g", "st", "nd", "rd", "th",
					 "px", "em", "kb", "mb" };

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (strlen(u[i]) == n && memcmp(u[i], w, n) == 0)
			return true;
	return false;
}

/* The counts of one reading. */
struct tally {
	size_t pieces;      /* all but separators, a unit counted with its number */
	size_t words;       /* words of 2 letters or more */
	size_t good;        /* ... of which good_word() */
	size_t good_letters; /* letters of the good words of 3 or more */
	size_t spelt;       /* words of 3 or more that kiln_spelt() */
	size_t named;       /* words that are nameable() */
	size_t long_named;  /* ... of 5 letters or more */
	size_t short_bad;   /* words of 2 or 3 letters that are not good_word() */
	size_t long_bad;    /* words of 4 or more neither spelt nor nameable */
	size_t acronyms, long_acronyms, numbers, long_numbers;
	size_t longest;     /* letters of the longest good word */
	size_t stray;       /* lowercase words (CamelCase of names has them,
			     * the other forms not), units not of units() */
	size_t ones;        /* letters alone (not a number's unit) */
	size_t capitals;    /* ... of which capitals */
	size_t inner_ones;  /* ... but a lowercase prefix first before a
			     * capitalised word ("iPad") or a capital last
			     * ("ChevronR") */
};

/* Count the N pieces P of T.  A lowercase piece of 1 or 2 letters right
 * after a number is its unit ("2x", "10th", "24aa"); a lowercase letter
 * alone first, before a capital, is a prefix ("iPad", "jQuery"). */
static void count(const char *t, const struct piece *p, size_t n, struct tally *c)
{
	size_t last = n;

	memset(c, 0, sizeof(*c));
	while (last > 0 && p[last - 1].kind == P_SEP)
		last--;
	for (size_t i = 0, first = 1; i < n; i++) {
		const struct piece *q = &p[i];
		const char *w = t + q->at;
		bool unit = i > 0 && p[i - 1].kind == P_NUM && is_lower(*w) && q->len <= 2;
		if (unit)
			c->stray += !units(w, q->len);
		if (q->kind == P_SEP || unit)
			continue;
		c->pieces++;
		switch (q->kind) {
		case P_NUM:
			c->numbers++;
			c->long_numbers += q->len > 4;
			break;
		case P_ACR:
			c->acronyms++;
			c->long_acronyms += q->len - (w[q->len - 1] == 's') > 5;
			break;
		case P_ONE:
			c->ones++;
			c->capitals += is_upper(*w);
			c->inner_ones += !(first && is_lower(*w) && i + 1 < n && p[i + 1].kind == P_WORD &&
					   is_upper(t[p[i + 1].at])) &&
					 !(i + 1 == last && is_upper(*w));
			break;
		default:
			c->words++;
			c->stray += is_lower(*w);
			if (good_word(w, q->len)) {
				c->good++;
				c->good_letters += q->len >= 3 ? q->len : 0;
				c->longest = q->len > c->longest ? q->len : c->longest;
			} else if (q->len <= 3) {
				c->short_bad++;
			}
			c->spelt += q->len >= 3 && kiln_spelt(w, q->len);
			c->long_bad += q->len >= 4 && !kiln_spelt(w, q->len) && !nameable(w, q->len);
			c->named += nameable(w, q->len);
			c->long_named += q->len >= 5 && nameable(w, q->len);
		}
		first = 0;
	}
}

/* Words by the pieces (words.h, kiln_token_words()):
 *  - CamelCase of names: words only, each nameable(), two of them and one
 *    spelt, or one capital alone at the end after a spelt word or one of
 *    5 letters ("TomHanks", "XuLiPing", "AmyGarza", "ChevronR");
 *  - capitalised good words, one of 4 letters or more (or 6 letters in
 *    all), with one acronym, one number and one letter alone at most, at
 *    least one of them, in 3 pieces at most ("ReactDOM", "GitHubCI",
 *    "ChatGPT4", "jQueryUI", "ZoomIn2x");
 *  - good words of 5 letters or more in all and one abbreviation of 2 or
 *    3 letters ("CssLexer", "TkWindow"). */
static bool narrow(const char *t, const struct piece *p, size_t n)
{
	struct tally c;

	count(t, p, n, &c);
	if (c.long_numbers || c.long_acronyms || c.inner_ones)
		return false;
	if (!c.acronyms && !c.numbers && c.named == c.words &&
	    ((!c.ones && c.words >= 2 && c.spelt) ||
	     (c.capitals == 1 && c.ones == 1 && !c.stray && (c.spelt || c.long_named))))
		return true;
	if (c.good == c.words && (c.longest >= 4 || c.good_letters >= 6) && c.pieces <= 3 &&
	    !c.stray && c.acronyms <= 1 && c.numbers <= 1 && c.ones <= 1 &&
	    c.acronyms + c.numbers + c.ones >= 1)
		return true;
	return !c.acronyms && !c.numbers && !c.ones && c.short_bad == 1 && c.good + 1 == c.words &&
	       c.good_letters >= 5;
}

/* ---- whole forms ---- */

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

bool kiln_token_code(const char *t, size_t len)
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
 * "APPSTORE"): kiln_spelt() keeps out four consonants in a row, which a
 * compound may have ("ppst"). */
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
 * capital alone ("woodGrnA", "robotoMd", "heroImgL", "easterEg"). */
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
	if (!len || len > KILN_WORDS_MAX)
		return false;
	return spelt_camel(t, len) || spelt_upper(t, len, 0) || upper_number(t, len) ||
	       kiln_token_code(t, len) || compound(t, len) || cased_words(t, len) ||
	       kiln_letter_runs(t, len) || read_as(t, len, narrow);
}

/* ---- the looser forms of kiln_token_chosen() ---- */

/* Could be chosen by the pieces (kiln_token_chosen()): at most 4 pieces,
 * each a word (of 4 letters or more, spelt), an acronym of at most 5, a
 * number of at most 4 digits or a letter alone, with at most one
 * abbreviation of 2 or 3 letters, two letters alone, and 4 letters of
 * good words ("DRbArray", "LeBronJ2", "GWIdConv"), or 3 beside a number
 * ("iPad10th", "Win32API"). */
static bool broad(const char *t, const struct piece *p, size_t n)
{
	struct tally c;

	count(t, p, n, &c);
	if (c.long_numbers || c.long_acronyms || c.pieces > 4 || c.long_bad || c.short_bad > 1 ||
	    c.ones > 2)
		return false;
	/* 4 letters of good words; or 3 with a number, in 3 pieces
	 * ("iPad10th", "Win32API", "ZoomIn2x") */
	return c.good_letters >= 4 ||
	       (c.good_letters >= 3 && c.pieces <= 3 && c.numbers == 1 && !c.short_bad && !c.stray);
}

/* Could be chosen by the pieces between separators: two parts or more
 * between '-' and '_', each of at most two pieces, good words, acronyms
 * of at most 5, numbers of at most 4 digits (with a unit), a letter before
 * a number ("en_GB_v2", "_is_IP19", "LZ4_byte"). */
static bool parts(const char *t, const struct piece *p, size_t n)
{
	size_t chunks = 0, in = 0;

	for (size_t i = 0; i < n; i++) {
		const struct piece *q = &p[i];
		const char *w = t + q->at;
		if (q->kind == P_SEP) {
			in = 0;
			continue;
		}
		if (i && p[i - 1].kind == P_NUM && is_lower(*w) && q->len <= 2)
			continue; /* a unit */
		chunks += !in;
		if (++in > 2 || (q->kind == P_NUM && q->len > 4) || (q->kind == P_ACR && q->len > 5) ||
		    (q->kind == P_WORD && !good_word(w, q->len)) ||
		    (q->kind == P_ONE && !(i + 1 < n && p[i + 1].kind == P_NUM)))
			return false;
	}
	return chunks >= 2;
}

/* A code of capitals and digits whose only lowercase letters are a unit
 * at its end (1 or 2 letters after a number) or a 'v' before a number
 * ("Q3FY24aa", "PKCS1v15", "RTX4090ti"). */
static bool unit_code(const char *t, size_t len)
{
	bool lower = false;

	for (size_t i = 0; i < len; i++) {
		size_t j = i;
		if (!is_lower(t[i]))
			continue;
		while (j < len && is_lower(t[j]))
			j++;
		if (!((i && is_digit(t[i - 1]) && j - i <= 2 && j == len) ||
		      (j - i == 1 && t[i] == 'v' && j < len && is_digit(t[j]))))
			return false;
		lower = true;
		i = j - 1;
	}
	return lower;
}

/* An identifier led by a verb of 2 letters ("toA98Rgb", "toXyzD50",
 * "isIPv6ok"): what follows is another identifier's business. */
static bool verb_led(const char *t, size_t len)
{
	return len > 3 && is_lower(t[0]) && is_lower(t[1]) && is_upper(t[2]) && verb(t, 2);
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
 * year. */
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
			return false; /* '-' or '_' */
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
 * every run of 4 letters or more spelt (kiln_spelt()). */
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

static bool lower_only(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (is_upper(t[i]))
			return false;
	return true;
}

static bool upper_only(const char *t, size_t len)
{
	bool letter = false;

	for (size_t i = 0; i < len; i++) {
		if (is_lower(t[i]))
			return false;
		letter |= is_upper(t[i]);
	}
	return letter;
}

bool kiln_token_chosen(const char *t, size_t len)
{
	if (!len || len > KILN_WORDS_MAX)
		return false;
	if (kiln_token_words(t, len) || number_words(t, len) || acronym_camel(t, len) ||
	    proper_nouns(t, len) || lower_camel(t, len) || spelt_upper(t, len, 2))
		return true;
	/* in upper case, a code; with a digit esbuild's base32 has not (0, 1,
	 * 8, 9), a product's ("X7K2PQ9Z"), not esbuild's hash; in lower case,
	 * the way people write names ("vsprintf", "xcb_cw_t", "v2048f32") */
	if (upper_only(t, len))
		return kiln_token_chosen32(t, len) || kiln_token_model32(t, len) ||
		       strcspn(t, "0189") < len;
	if (lower_only(t, len))
		return true;
	return verb_led(t, len) || unit_code(t, len) || read_as(t, len, broad) ||
	       read_as(t, len, parts);
}

/* ---- upper case ---- */

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

bool kiln_token_chosen32(const char *t, size_t len)
{
	size_t numbers = 0, hex = 0;
	bool spelt = false, short_spelt = false;

	if (kiln_token_words32(t, len) || spelt_upper(t, len, 2) || kiln_token_code(t, len))
		return true;
	for (size_t i = 0, j; i < len; i = j) {
		j = i + 1;
		if (is_digit(t[i])) {
			while (j < len && is_digit(t[j]))
				j++;
			numbers++;
		} else if (is_upper(t[i])) {
			while (j < len && is_upper(t[j]))
				j++;
			spelt |= j - i >= 4 && kiln_spelt(t + i, j - i);
			short_spelt |= j - i == 3 && kiln_spelt_well(t + i, 3);
		}
	}
	for (size_t i = 0; i < len; i++)
		hex += is_digit(t[i]) || (t[i] >= 'A' && t[i] <= 'F');
	/* a word ("AUDIO", "TYPE", "WIFI"), or a short word beside a single
	 * number ("BIT2"); the letters and digits of hexadecimal ("B5E456AE") */
	return spelt || (short_spelt && numbers <= 1) || hex == len;
}

bool kiln_token_model32(const char *t, size_t len)
{
	for (size_t i = 0, j; i < len; i = j + 1) {
		for (j = i; j < len && is_digit(t[j]); j++)
			;
		if (j - i >= 3 && i > 0 && j < len)
			return true;
	}
	return false;
}
