/* The native fast path of the Chrome-trace event reader (see native.py).
 *
 * read_batch(data, start, end) reads the bytes data[start:end], a run of JSON objects separated
 * by commas (one cut batch of the event array, without its brackets), into columns. It accepts
 * only what it fully understands and what the Python path (msgspec) would decode the same way;
 * anything else (invalid JSON, an escape in a key, a surrogate escape, invalid UTF-8, a time
 * written with an exponent or a sign, a duplicate known key, an object where a label was
 * expected, nesting deeper than MAX_DEPTH, flow-v2 keys) makes it return None, and the Python
 * path reads the batch. Returning columns thus also proves the batch is valid JSON, as a
 * successful decode does on the Python path.
 *
 * Columns (all little-endian native arrays in bytearrays, one entry per event):
 *   fields  int32[NF][n]  token id of ph, pid, tid, name, cat, cname, id, id2, bp, s (-1: absent
 *                         or null); tokens, the distinct raw JSON texts of these values, come
 *                         as one JSON array's text, decoded in one go by the caller
 *   ts      int64[n], ts_ok uint8[n]    exact ns of `ts` (numbers and decimal strings)
 *   dur     int64[n], dur_ok uint8[n]   exact ns of `dur` (numbers), rounded half away from 0
 *   bounds  int64[n][2]   the byte range of each event in `data`
 *   combo   int32[n]      id of the event's (cname, pid, tid, name, cat) tokens, numbered in
 *                         order of first appearance; combos int32[k][5] holds them
 *
 * Every read is bounds-checked against `end`; the parse never reads outside data[start:end].
 * The GIL is released while parsing: the buffer is held for the whole call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define NF 10 /* token fields */
#define NCOMBO 5
#define RECENT_BITS 10
#define RECENT (1 << RECENT_BITS)

enum { F_PH, F_PID, F_TID, F_NAME, F_CAT, F_CNAME, F_ID, F_ID2, F_BP, F_S };
/* Known keys beyond the token fields: each may appear once. */
enum { K_TS = NF, K_DUR, K_ARGS, K_SCOPE, K_COUNT };
/* Their texts, in the order above. */
static const char *const KEYS[K_COUNT] = {"ph", "pid", "tid", "name", "cat", "cname", "id",
                                          "id2", "bp", "s", "ts", "dur", "args", "scope"};
/* The bytes of a known key quoted and followed by its colon, as one word (zeros past them),
 * the mask of these bytes and their number: set up when the module is loaded. */
static uint64_t key_word[K_COUNT], key_mask[K_COUNT];
static uint8_t key_size[K_COUNT];
#define K_FIRST K_COUNT /* before an event's first key */
#define K_OTHER (K_COUNT + 1) /* after a key not known */

/* The whole microsecond part must stay below these (the Python path's limits lie above). */
#define TS_WHOLE_LIMIT 9000000000000000LL /* 9e15 us */
#define DUR_WHOLE_LIMIT 1000000000000LL   /* 1e12 us */

typedef const unsigned char *cptr;

typedef struct {
    Py_ssize_t start, len;
    uint64_t hash;
} Token;

typedef struct {
    int32_t parts[NCOMBO];
    uint64_t hash;
} Combo;

typedef struct {
    cptr base; /* data: token offsets count from here */
    cptr end;
    /* per event columns */
    Py_ssize_t n, cap;
    int32_t *fields; /* [cap][NF]: an event's in one place (build_result turns them) */
    int64_t *ts, *dur, *bounds;
    uint8_t *ts_ok, *dur_ok;
    int32_t *combo;
    /* distinct tokens, open addressing */
    Token *tokens;
    Py_ssize_t n_tokens, tokens_cap;
    int32_t *token_slots;
    Py_ssize_t token_mask;
    /* distinct combos */
    Combo *combos;
    Py_ssize_t n_combos, combos_cap;
    int32_t *combo_slots;
    Py_ssize_t combo_mask;
    int32_t last[NF]; /* the last token of each field */
    int32_t recent[RECENT]; /* a token seen lately for each fingerprint (-1: none) */
    int8_t next_key[K_COUNT + 2][2]; /* the known keys seen after each (-1: none yet) */
    int32_t last_combo;
    int32_t combo_of_name[RECENT]; /* the last combo of a name token's fingerprint (-1: none) */
    struct Shape *shapes; /* [SHAPES], made at the first `args` */
    int nomem;
} Batch;

/* Loads of 8 and 4 bytes that may be unaligned. */
static inline uint64_t load64(cptr p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint32_t load32(cptr p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* -- whitespace, strings, numbers, values ------------------------------------------------ */

static inline cptr skip_ws(cptr p, cptr end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* Past the decimal digits at p, 16 bytes at a time where 16 are left (no loop exit to
 * mispredict for each number of a different length). */
static inline cptr skip_digits(cptr p, cptr end) {
#if defined(__SSE2__)
    while (end - p >= 16) {
        __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)p), _mm_set1_epi8('0'));
        /* a digit is a byte whose distance above '0' is at most 9, unsigned */
        __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v);
        unsigned other = ~(unsigned)_mm_movemask_epi8(digit) & 0xFFFFu;
        if (other) return p + __builtin_ctz(other);
        p += 16;
    }
#endif
    while (p < end && *p >= '0' && *p <= '9') p++;
    return p;
}

static inline int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One UTF-8 sequence starting at p (p[0] >= 0x80): its end, or NULL if invalid (overlong,
 * a surrogate, beyond U+10FFFF, cut short). */
static cptr utf8_end(cptr p, cptr end) {
    unsigned char c = p[0];
    Py_ssize_t need;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; }
    else return NULL;
    if (end - p <= need) return NULL;
    for (Py_ssize_t i = 1; i <= need; i++) {
        if ((p[i] & 0xC0) != 0x80) return NULL;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return NULL;
    if (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) return NULL;
    return p + need + 1;
}

#if defined(__SSE2__)
/* Which of the 16 bytes at p are special in a string: a quote, a backslash, a control byte or
 * >= 0x80 (signed, those compare below 0x20 too); one bit each. */
static inline unsigned string_specials(cptr p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                   _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    return (unsigned)_mm_movemask_epi8(special);
}
#endif

/* scan_string past its first check: the string's bytes from p on. */
static cptr scan_string_rest(cptr p, cptr end, int *escaped) {
    while (p < end) {
#if defined(__SSE2__)
        /* 16 plain bytes at a time */
        while (end - p >= 16) {
            unsigned mask = string_specials(p);
            if (mask) {
                p += __builtin_ctz(mask);
                break;
            }
            p += 16;
        }
        if (p >= end) break;
#endif
        unsigned char c = *p;
        if (c == '"') return p + 1;
        if (c == '\\') {
            if (escaped) *escaped = 1;
            if (end - p < 2) return NULL;
            unsigned char e = p[1];
            if (e == 'u') {
                if (end - p < 6) return NULL;
                int v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = hexval(p[i]);
                    if (h < 0) return NULL;
                    v = (v << 4) | h;
                }
                if (v >= 0xD800 && v <= 0xDFFF) return NULL;
                p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                       e == 'r' || e == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else if (c >= 0x80) {
            p = utf8_end(p, end);
            if (!p) return NULL;
        } else {
            p++;
        }
    }
    return NULL;
}

/* A JSON string at p (p[0] == '"'): the byte after its closing quote, or NULL. `escaped` is
 * set when it holds a backslash. Surrogate escapes are refused (the Python path refuses a
 * lone one; a pair is left to it too). Most strings (keys, names) are short and plain: their
 * closing quote is the first special byte of the 16 after the opening one, found inline; any
 * other string is left to scan_string_rest. */
static inline cptr scan_string(cptr p, cptr end, int *escaped) {
    p++;
#if defined(__SSE2__)
    if (end - p >= 16) {
        unsigned mask = string_specials(p);
        if (!mask) return scan_string_rest(p + 16, end, escaped); /* 16 plain bytes */
        cptr q = p + __builtin_ctz(mask);
        if (*q == '"') return q + 1;
    }
#endif
    return scan_string_rest(p, end, escaped);
}

/* A JSON number at p: its end, or NULL. Sets the shape of its text. */
typedef struct {
    int negative, has_exp;
    cptr whole, whole_end, frac, frac_end; /* digits before and after the dot */
} Number;

static cptr scan_number(cptr p, cptr end, Number *num) {
    num->negative = 0;
    num->has_exp = 0;
    if (p < end && *p == '-') { num->negative = 1; p++; }
    if (p >= end) return NULL;
    num->whole = p;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        p = skip_digits(p + 1, end);
    } else {
        return NULL;
    }
    num->whole_end = p;
    num->frac = num->frac_end = p;
    if (p < end && *p == '.') {
        p++;
        num->frac = p;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        p = skip_digits(p + 1, end);
        num->frac_end = p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        num->has_exp = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    return p;
}

static inline cptr scan_literal(cptr p, cptr end, const char *word, Py_ssize_t len) {
    if (end - p < len || memcmp(p, word, (size_t)len) != 0) return NULL;
    return p + len;
}

/* The end of the JSON number at p (p < end), or NULL: scan_number's grammar without the
 * shape, for the numbers skip_value only steps over (most of them, in `args`). */
static inline cptr skip_number(cptr p, cptr end) {
    if (*p == '-' && ++p >= end) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        p = skip_digits(p + 1, end);
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        if (++p >= end || *p < '0' || *p > '9') return NULL;
        p = skip_digits(p + 1, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        p = skip_digits(p + 1, end);
    }
    return p;
}

static cptr skip_value(cptr p, cptr end, int depth);

static cptr skip_container(cptr p, cptr end, int depth) {
    int object = *p == '{';
    unsigned char close = object ? '}' : ']';
    if (depth >= MAX_DEPTH) return NULL;
    p = skip_ws(p + 1, end);
    if (p < end && *p == close) return p + 1;
    for (;;) {
        if (object) {
            if (p >= end || *p != '"') return NULL;
            p = scan_string(p, end, NULL);
            if (!p) return NULL;
            p = skip_ws(p, end);
            if (p >= end || *p != ':') return NULL;
            p = skip_ws(p + 1, end);
        }
        p = skip_value(p, end, depth + 1);
        if (!p) return NULL;
        p = skip_ws(p, end);
        if (p >= end) return NULL;
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p = skip_ws(p + 1, end);
    }
}

/* Any JSON value at p (already past whitespace): its end, or NULL. */
static cptr skip_value(cptr p, cptr end, int depth) {
    if (p >= end) return NULL;
    switch (*p) {
    case '"': return scan_string(p, end, NULL);
    case '{':
    case '[': return skip_container(p, end, depth);
    case 't': return scan_literal(p, end, "true", 4);
    case 'f': return scan_literal(p, end, "false", 5);
    case 'n': return scan_literal(p, end, "null", 4);
    default: return skip_number(p, end);
    }
}

/* -- exact times ---------------------------------------------------------------------------- */

/* The 8 digits of w (ASCII, the first in the lowest byte) as an integer: pairs, then
 * fours, then the eight, each step one multiply for all lanes. */
static inline uint64_t eight_digits(uint64_t w) {
    w -= 0x3030303030303030ULL;
    w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFULL;
    w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFULL;
    return (w * 10000 + (w >> 32)) & 0xFFFFFFFFULL;
}

/* The digits [p, q) as an integer, or -1 past `limit` (below 10**16). 8 to 16 digits (the
 * whole part of a time since the epoch or since boot) are read by two loads inside them, not
 * digit by digit: the last 8, and the first 8 shifted so that only those before the last 8
 * are left, zeros before them. */
static int64_t digits_value(cptr p, cptr q, int64_t limit) {
    Py_ssize_t n = q - p;
    if (n >= 8 && n <= 16) {
        uint64_t v = eight_digits(load64(q - 8));
        Py_ssize_t m = n - 8;
        if (m == 8) {
            v += eight_digits(load64(p)) * 100000000ULL;
        } else if (m > 0) {
            uint64_t head = load64(p) << (8 * (8 - m)) | 0x3030303030303030ULL >> (8 * m);
            v += eight_digits(head) * 100000000ULL;
        }
        return v < (uint64_t)limit ? (int64_t)v : -1;
    }
    int64_t v = 0;
    for (; p < q; p++) {
        v = v * 10 + (*p - '0');
        if (v >= limit) return -1;
    }
    return v;
}

/* ns of whole.frac us, rounded half away from zero at the ns (the sign is the caller's). */
static int64_t exact_ns(int64_t whole, cptr frac, cptr frac_end) {
    int64_t ns = whole * 1000;
    int64_t scale = 100;
    cptr p = frac;
    for (; p < frac_end && scale; p++, scale /= 10) ns += (*p - '0') * scale;
    if (p < frac_end && *p >= '5') ns += 1;
    return ns;
}

/* A time text whose whole part has 13 digits or more and whose decimals are neither 0 nor 3,
 * 17 significant digits at most, is read as the double it is the shortest text of (as
 * timeconv._double_text / _double_ns decide). */
static int64_t time_ns(int64_t whole, cptr whole_p, cptr whole_end, cptr frac, cptr frac_end) {
    Py_ssize_t integer_digits = whole_end - whole_p, decimals = frac_end - frac;
    if (integer_digits >= 13 && decimals != 0 && decimals != 3 &&
        integer_digits + decimals <= 17) {
        int64_t fraction = 0, pow10 = 1;
        for (cptr p = frac; p < frac_end; p++) {
            fraction = fraction * 10 + (*p - '0');
            pow10 *= 10;
        }
        double whole_f = (double)whole;
        double us = whole_f + (double)fraction / (double)pow10;
        return whole * 1000 + (int64_t)rint((us - whole_f) * 1000.0);
    }
    return exact_ns(whole, frac, frac_end);
}

/* `ts`: an unsigned number without exponent, or a string of digits with an optional dot and
 * decimals (no leading zero), or null. Returns the value's end, or NULL to decline. */
static cptr read_ts(cptr p, cptr end, int64_t *ns, uint8_t *ok) {
    Number num;
    cptr q;
    *ns = 0;
    *ok = 0;
    if (*p == 'n') return scan_literal(p, end, "null", 4);
    if (*p == '"') {
        cptr s = p + 1, t = s;
        t = skip_digits(t, end);
        if (t == s || (*s == '0' && t - s > 1)) return NULL;
        num.whole = s;
        num.whole_end = t;
        num.frac = num.frac_end = t;
        if (t < end && *t == '.') {
            num.frac = ++t;
            t = skip_digits(t, end);
            if (t == num.frac) return NULL;
            num.frac_end = t;
        }
        if (t >= end || *t != '"') return NULL;
        q = t + 1;
    } else {
        q = scan_number(p, end, &num);
        if (!q || num.negative || num.has_exp) return NULL;
    }
    int64_t whole = digits_value(num.whole, num.whole_end, TS_WHOLE_LIMIT);
    if (whole < 0) return NULL;
    *ns = time_ns(whole, num.whole, num.whole_end, num.frac, num.frac_end);
    *ok = 1;
    return q;
}

/* `dur`: a number without exponent (its sign kept), or null. */
static cptr read_dur(cptr p, cptr end, int64_t *ns, uint8_t *ok) {
    Number num;
    *ns = 0;
    *ok = 0;
    if (*p == 'n') return scan_literal(p, end, "null", 4);
    cptr q = scan_number(p, end, &num);
    if (!q || num.has_exp) return NULL;
    int64_t whole = digits_value(num.whole, num.whole_end, DUR_WHOLE_LIMIT);
    if (whole < 0) return NULL;
    int64_t v = exact_ns(whole, num.frac, num.frac_end);
    *ns = num.negative ? -v : v;
    *ok = 1;
    return q;
}

/* -- tokens and combos ---------------------------------------------------------------------- */

/* The bytes [p, p + n) as at most two 64-bit words, for the last steps of hash_bytes and
 * same_bytes: the tail of 1-8 bytes is read by fixed-size loads that overlap inside the
 * n bytes (a copy of variable size is a library call), never outside them. */
static inline uint64_t tail_word(cptr p, Py_ssize_t n) {
    if (n >= 8) return load64(p + n - 8);
    if (n >= 4) return ((uint64_t)load32(p) << 32) | load32(p + n - 4);
    if (n > 0) return ((uint64_t)p[0] << 16) | ((uint64_t)p[n / 2] << 8) | p[n - 1];
    return 0;
}

/* A hash of the n bytes at p (only slots depend on it: ids count in order of appearance). */
static inline uint64_t hash_bytes(cptr p, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    Py_ssize_t i = 0;
    for (; n - i > 8; i += 8) {
        h = (h ^ load64(p + i)) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    h = (h ^ tail_word(p + i, n - i)) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

/* Whether the n bytes at p and q are the same (the short texts of tokens, inline). */
static inline int same_bytes(cptr p, cptr q, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; n - i > 8; i += 8)
        if (load64(p + i) != load64(q + i)) return 0;
    return tail_word(p + i, n - i) == tail_word(q + i, n - i);
}

/* The slots of an open-addressing table grown for `n` items and more (kept at most a quarter
 * full), the `n` items already there put in again by their hashes: item i's hash is the
 * uint64 at byte `hash_at` of the item at items + i * stride. */
static int grow_slots(int32_t **slots, Py_ssize_t *mask, Py_ssize_t n, const void *items,
                      size_t stride, size_t hash_at) {
    Py_ssize_t size = 64;
    while (size < 2 * (2 * n + 3)) size *= 2;
    int32_t *s = malloc((size_t)size * sizeof(int32_t));
    if (!s) return -1;
    memset(s, 0xff, (size_t)size * sizeof(int32_t));
    free(*slots);
    *slots = s;
    *mask = size - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t h;
        memcpy(&h, (const char *)items + (size_t)i * stride + hash_at, sizeof h);
        Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)*mask);
        while (s[j] >= 0) j = (j + 1) & *mask;
        s[j] = (int32_t)i;
    }
    return 0;
}

/* Whether token t (>= 0) is the n bytes at p. */
static inline int is_token(const Batch *b, int32_t t, cptr p, Py_ssize_t n) {
    return b->tokens[t].len == n && same_bytes(b->base + b->tokens[t].start, p, n);
}

/* The id of the token [p, p + len) from the table of every token, added if new. */
static int32_t lookup_token(Batch *b, cptr p, Py_ssize_t len) {
    if (2 * (b->n_tokens + 1) > b->token_mask &&
        grow_slots(&b->token_slots, &b->token_mask, b->n_tokens, b->tokens, sizeof(Token),
                   offsetof(Token, hash)))
        goto nomem;
    uint64_t h = hash_bytes(p, len);
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)b->token_mask);
    Py_ssize_t off = p - b->base;
    for (;;) {
        int32_t t = b->token_slots[j];
        if (t < 0) break;
        if (b->tokens[t].hash == h && is_token(b, t, p, len)) return t;
        j = (j + 1) & b->token_mask;
    }
    if (b->n_tokens == b->tokens_cap) {
        Py_ssize_t cap = b->tokens_cap ? 2 * b->tokens_cap : 256;
        Token *t = realloc(b->tokens, (size_t)cap * sizeof(Token));
        if (!t) goto nomem;
        b->tokens = t;
        b->tokens_cap = cap;
    }
    b->tokens[b->n_tokens] = (Token){off, len, h};
    b->token_slots[j] = (int32_t)b->n_tokens;
    return (int32_t)b->n_tokens++;
nomem:
    b->nomem = 1;
    return -2;
}

static int32_t token_id(Batch *b, cptr p, Py_ssize_t len) {
    /* a token seen lately with the same length, first and last 8 bytes (most names): found
     * without hashing all its bytes */
    uint64_t f = ((len >= 8 ? load64(p) : 0) ^ (uint64_t)len) * 0x9E3779B97F4A7C15ULL;
    f = (f ^ tail_word(p, len)) * 0xff51afd7ed558ccdULL;
    int32_t *recent = &b->recent[f >> (64 - RECENT_BITS)];
    if (*recent >= 0 && is_token(b, *recent, p, len)) return *recent;
    int32_t t = lookup_token(b, p, len);
    if (t >= 0) *recent = t;
    return t;
}

static int32_t combo_id(Batch *b, const int32_t *parts) {
    if (2 * (b->n_combos + 1) > b->combo_mask &&
        grow_slots(&b->combo_slots, &b->combo_mask, b->n_combos, b->combos, sizeof(Combo),
                   offsetof(Combo, hash)))
        goto nomem;
    uint64_t h = hash_bytes((cptr)parts, NCOMBO * sizeof(int32_t));
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)b->combo_mask);
    for (;;) {
        int32_t c = b->combo_slots[j];
        if (c < 0) break;
        if (b->combos[c].hash == h &&
            memcmp(b->combos[c].parts, parts, NCOMBO * sizeof(int32_t)) == 0)
            return c;
        j = (j + 1) & b->combo_mask;
    }
    if (b->n_combos == b->combos_cap) {
        Py_ssize_t cap = b->combos_cap ? 2 * b->combos_cap : 64;
        Combo *c = realloc(b->combos, (size_t)cap * sizeof(Combo));
        if (!c) goto nomem;
        b->combos = c;
        b->combos_cap = cap;
    }
    memcpy(b->combos[b->n_combos].parts, parts, NCOMBO * sizeof(int32_t));
    b->combos[b->n_combos].hash = h;
    b->combo_slots[j] = (int32_t)b->n_combos;
    return (int32_t)b->n_combos++;
nomem:
    b->nomem = 1;
    return -2;
}

/* -- events --------------------------------------------------------------------------------- */

static int grow_events(Batch *b) {
    Py_ssize_t cap = b->cap ? 2 * b->cap : 4096;
    int32_t *fields = realloc(b->fields, (size_t)cap * NF * sizeof(int32_t));
    if (fields) b->fields = fields;
    int64_t *ts = realloc(b->ts, (size_t)cap * sizeof(int64_t));
    if (ts) b->ts = ts;
    int64_t *dur = realloc(b->dur, (size_t)cap * sizeof(int64_t));
    if (dur) b->dur = dur;
    int64_t *bounds = realloc(b->bounds, (size_t)cap * 2 * sizeof(int64_t));
    if (bounds) b->bounds = bounds;
    uint8_t *ts_ok = realloc(b->ts_ok, (size_t)cap);
    if (ts_ok) b->ts_ok = ts_ok;
    uint8_t *dur_ok = realloc(b->dur_ok, (size_t)cap);
    if (dur_ok) b->dur_ok = dur_ok;
    int32_t *combo = realloc(b->combo, (size_t)cap * sizeof(int32_t));
    if (combo) b->combo = combo;
    if (!fields || !ts || !dur || !bounds || !ts_ok || !dur_ok || !combo) {
        b->nomem = 1;
        return -1;
    }
    b->cap = cap;
    return 0;
}

/* Which known key [p, p+len) is: a field, K_TS ... K_SCOPE, -2 for flow-v2 keys (declined),
 * -1 for any other key (skipped). */
static int known_key(cptr p, Py_ssize_t len) {
#define IS(word) (len == (Py_ssize_t)sizeof(word) - 1 && memcmp(p, word, sizeof(word) - 1) == 0)
    switch (len) {
    case 1: if (IS("s")) return F_S; break;
    case 2:
        if (IS("ph")) return F_PH;
        if (IS("ts")) return K_TS;
        if (IS("id")) return F_ID;
        if (IS("bp")) return F_BP;
        break;
    case 3:
        if (IS("pid")) return F_PID;
        if (IS("tid")) return F_TID;
        if (IS("cat")) return F_CAT;
        if (IS("dur")) return K_DUR;
        if (IS("id2")) return F_ID2;
        break;
    case 4:
        if (IS("name")) return F_NAME;
        if (IS("args")) return K_ARGS;
        break;
    case 5:
        if (IS("cname")) return F_CNAME;
        if (IS("scope")) return K_SCOPE;
        break;
    case 7:
        if (IS("bind_id") || IS("flow_in")) return -2;
        break;
    case 8:
        if (IS("flow_out")) return -2;
        break;
    }
    return -1;
#undef IS
}

/* Whether c may continue a number (a byte of its grammar). */
static inline int continues_number(unsigned char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

#if defined(__SSE2__)
/* Whether the n <= 16 bytes at p and q, both 16 bytes or more before the end, are the same. */
static inline int same_short(cptr p, cptr q, Py_ssize_t n) {
    __m128i eq = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p),
                                _mm_loadu_si128((const __m128i *)q));
    return (~(unsigned)_mm_movemask_epi8(eq) & ((1u << n) - 1)) == 0;
}
#endif

/* Whether the value at p is token t (>= 0): the same bytes, and not a number that the next
 * byte continues (a token is a whole value: the scan of a string or a literal would end at
 * the same byte, but a number's could go on). */
static inline int is_value(const Batch *b, int32_t t, cptr p, cptr end) {
    Py_ssize_t n = b->tokens[t].len;
    cptr text = b->base + b->tokens[t].start;
    int same;
#if defined(__SSE2__)
    if (n <= 16 && end - p > 16 && end - text >= 16)
        same = same_short(text, p, n);
    else
#endif
        same = end - p > n && same_bytes(text, p, n);
    return same && !continues_number(p[n]);
}

/* -- args ---------------------------------------------------------------------------------- */

/* The shape of the `args` object last read for an event name and pid: the bytes between its
 * values (the opening brace, the blanks, each key and its colon, the commas, the closing
 * brace) as ranges of the data, read and found valid then. The args of events of one name
 * and pid mostly have the same keys in the same order, so the next such args is matched
 * against these bytes first and only its values are scanned: where each value starts then
 * depends on no byte read, and its key is not scanned. */
#define SHAPE_PARTS 24 /* members at most (an args with more keeps no shape) */
#define SHAPE_BITS 7
#define SHAPES (1 << SHAPE_BITS)

typedef struct Shape {
    int32_t name, pid; /* whose args (tokens; -1: absent) */
    int n;             /* members, -1: no shape; then n + 1 parts */
    cptr text[SHAPE_PARTS + 1];
    Py_ssize_t len[SHAPE_PARTS + 1];
    /* each member's value before, where short: n > 0 an unsigned integer of n digits, n < 0
     * a string of -n bytes quotes included; 0 any other value */
    int8_t value[SHAPE_PARTS];
} Shape;

/* Whether the n >= 1 bytes at text, earlier in the data, are the n at p (p < end). */
static inline int same_text(cptr text, cptr p, Py_ssize_t n, cptr end) {
    if (end - p < n) return 0;
#if defined(__SSE2__)
    /* text < p: where 16 bytes from p are inside the data, 16 from text are too */
    if (n <= 16) return end - p >= 16 ? same_short(text, p, n) : same_bytes(text, p, n);
    for (Py_ssize_t i = 0; n - i > 16; i += 16)
        if (!same_short(text + i, p + i, 16)) return 0;
    return same_short(text + n - 16, p + n - 16, 16); /* the last 16, overlapping */
#else
    return same_bytes(text, p, n);
#endif
}

/* The value [v, p) as Shape.value says it. */
static inline int8_t value_length(cptr v, cptr p) {
    Py_ssize_t n = p - v;
    if (*v >= '0' && *v <= '9' && n <= 15 && skip_digits(v, p) == p) return (int8_t)n;
    if (*v == '"' && n <= 17) return (int8_t)-n;
    return 0;
}

/* Whether the value at q (16 bytes or more before the end) is as long as one of Shape.value
 * n (not 0) and of its kind: a guess from the bytes of a fixed length, told by predicted
 * branches, so that where the next part starts depends on no byte read. */
static inline int same_length(cptr q, Py_ssize_t n) {
#if defined(__SSE2__)
    if (n > 0) {
        /* n digits, no leading zero, and a byte that ends the number after them (the next
         * part, compared next, starts with a blank, a comma or a brace) */
        __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)q), _mm_set1_epi8('0'));
        unsigned digit = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v));
        return (digit & ((2u << n) - 1)) == (1u << n) - 1 && (n == 1 || *q != '0');
    }
    /* a quote, -n - 2 plain bytes, a quote */
    unsigned special = string_specials(q + 1) & ((2u << (-n - 2)) - 1);
    return *q == '"' && special == 1u << (-n - 2) && q[-n - 1] == '"';
#else
    (void)q;
    (void)n;
    return 0;
#endif
}

/* `args` at p (p[0] == '{') of an event of tokens name and pid: its end, or NULL. */
static cptr skip_args(Batch *b, cptr p, cptr end, int32_t name, int32_t pid) {
    if (!b->shapes) {
        b->shapes = malloc(SHAPES * sizeof(Shape));
        if (!b->shapes) {
            b->nomem = 1;
            return NULL;
        }
        for (int i = 0; i < SHAPES; i++) b->shapes[i].n = -1;
    }
    uint32_t h = (uint32_t)name * 0x9E3779B1u ^ (uint32_t)pid * 0x85EBCA77u;
    Shape *s = &b->shapes[h >> (32 - SHAPE_BITS)];
    if (s->n >= 0 && s->name == name && s->pid == pid) {
        /* each part the same bytes as before is valid JSON here as it was there; a part that
         * differs, or a value that does not scan (blanks before it, say), is left to the
         * member by member reading below, from the start */
        cptr q = p;
        for (int k = 0; same_text(s->text[k], q, s->len[k], end); k++) {
            q += s->len[k];
            if (k == s->n) return q;
            Py_ssize_t n = s->value[k];
            if (n && end - q > 16 && same_length(q, n)) {
                q += n > 0 ? n : -n;
            } else {
                q = skip_value(q, end, 1);
                if (!q) break;
            }
        }
    }
    s->name = name;
    s->pid = pid;
    s->n = -1;
    cptr part = p;
    int k = 0;
    p = skip_ws(p + 1, end);
    if (p >= end) return NULL;
    if (*p != '}') {
        for (;;) {
            if (*p != '"') return NULL;
            p = scan_string(p, end, NULL);
            if (!p) return NULL;
            p = skip_ws(p, end);
            if (p >= end || *p != ':') return NULL;
            p = skip_ws(p + 1, end);
            if (k < SHAPE_PARTS) {
                s->text[k] = part;
                s->len[k] = p - part;
            }
            cptr v = p;
            p = skip_value(p, end, 1);
            if (!p) return NULL;
            if (k < SHAPE_PARTS) s->value[k] = value_length(v, p);
            k++;
            part = p;
            p = skip_ws(p, end);
            if (p >= end) return NULL;
            if (*p == '}') break;
            if (*p != ',') return NULL;
            p = skip_ws(p + 1, end);
            if (p >= end) return NULL;
        }
    }
    p++;
    if (k <= SHAPE_PARTS) {
        s->text[k] = part;
        s->len[k] = p - part;
        s->n = k;
    }
    return p;
}

/* One event object at p: its end, or NULL to decline the batch. */
static cptr read_event(Batch *b, cptr p, cptr end) {
    if (b->n == b->cap && grow_events(b)) return NULL;
    Py_ssize_t i = b->n;
    cptr first = p;
    int32_t *fields = b->fields + (size_t)i * NF;
    for (int f = 0; f < NF; f++) fields[f] = -1;
    b->ts[i] = b->dur[i] = 0;
    b->ts_ok[i] = b->dur_ok[i] = 0;
    unsigned seen = 0;
    if (p >= end || *p != '{') return NULL;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
        goto done;
    }
    for (int last = K_FIRST;;) {
        if (p >= end || *p != '"') return NULL;
        /* a key that followed the last one before (the keys of events come in a few orders),
         * quoted and with its colon right after it, is matched by one load: where the next
         * byte is depends on no byte read; any other key is scanned and told by known_key */
        int8_t *next = b->next_key[last];
        int k = -1;
        if (end - p >= 8) {
            uint64_t w = load64(p);
            if (next[0] >= 0 && ((w ^ key_word[next[0]]) & key_mask[next[0]]) == 0)
                k = next[0];
            else if (next[1] >= 0 && ((w ^ key_word[next[1]]) & key_mask[next[1]]) == 0)
                k = next[1];
        }
        if (k >= 0) {
            p += key_size[k];
        } else {
            int escaped = 0;
            cptr key = p + 1, after = scan_string(p, end, &escaped);
            if (!after || escaped) return NULL;
            k = known_key(key, after - 1 - key);
            if (k == -2) return NULL;
            if (k >= 0) next[next[0] >= 0] = (int8_t)k;
            p = skip_ws(after, end);
            if (p >= end || *p != ':') return NULL;
            p++;
        }
        p = skip_ws(p, end);
        if (p >= end) return NULL;
        if (k >= 0) {
            if (seen & (1u << k)) return NULL;
            seen |= 1u << k;
        }
        last = k >= 0 ? k : K_OTHER;
        cptr v = p;
        if (k >= 0 && k < NF) {
            /* the previous event's value of the field (the usual case for ph, pid, tid, cat)
             * is matched by its bytes: where it ends depends on no byte read */
            int32_t t = b->last[k];
            if (t >= 0 && is_value(b, t, p, end)) {
                p += b->tokens[t].len;
                fields[k] = t;
            } else {
                if (*p == '{' || *p == '[') return NULL;
                p = skip_value(p, end, 0);
                if (!p) return NULL;
                if (!(*v == 'n')) { /* null is absent: the Python path's default */
                    t = token_id(b, v, p - v);
                    if (t < 0) return NULL;
                    fields[k] = b->last[k] = t;
                }
            }
        } else if (k == K_TS) {
            p = read_ts(p, end, &b->ts[i], &b->ts_ok[i]);
        } else if (k == K_DUR) {
            p = read_dur(p, end, &b->dur[i], &b->dur_ok[i]);
        } else if (k == K_ARGS && *p == '{') {
            p = skip_args(b, p, end, fields[F_NAME], fields[F_PID]);
        } else {
            p = skip_value(p, end, 0);
        }
        if (!p) return NULL;
        p = skip_ws(p, end);
        if (p >= end) return NULL;
        if (*p == '}') {
            p++;
            break;
        }
        if (*p != ',') return NULL;
        p = skip_ws(p + 1, end);
    }
done:;
    int32_t parts[NCOMBO];
    parts[0] = fields[F_CNAME];
    parts[1] = fields[F_PID];
    parts[2] = fields[F_TID];
    parts[3] = fields[F_NAME];
    parts[4] = fields[F_CAT];
    /* the last event's combo, else the last one of the event's name (the name changes from
     * event to event, the rest of the combo of one name mostly not): found without hashing */
    int32_t c = b->last_combo;
    if (c < 0 || memcmp(b->combos[c].parts, parts, sizeof parts) != 0) {
        int32_t *of_name = &b->combo_of_name[(uint32_t)parts[3] & (RECENT - 1)];
        c = *of_name;
        if (c < 0 || memcmp(b->combos[c].parts, parts, sizeof parts) != 0) {
            c = combo_id(b, parts);
            if (c < 0) return NULL;
            *of_name = c;
        }
    }
    b->combo[i] = b->last_combo = c;
    b->bounds[2 * i] = first - b->base;
    b->bounds[2 * i + 1] = p - b->base;
    b->n++;
    return p;
}

/* The whole range: objects separated by commas, blanks around them. 0 when every byte was
 * understood. */
static int read_all(Batch *b, cptr p, cptr end) {
    p = skip_ws(p, end);
    if (p >= end) return -1;
    for (;;) {
        p = read_event(b, p, end);
        if (!p) return -1;
        p = skip_ws(p, end);
        if (p >= end) return 0;
        if (*p != ',') return -1;
        p = skip_ws(p + 1, end);
    }
}

static void free_batch(Batch *b) {
    free(b->fields);
    free(b->ts);
    free(b->dur);
    free(b->bounds);
    free(b->ts_ok);
    free(b->dur_ok);
    free(b->combo);
    free(b->tokens);
    free(b->token_slots);
    free(b->combos);
    free(b->combo_slots);
    free(b->shapes);
}

static PyObject *column(const void *data, Py_ssize_t size) {
    return PyByteArray_FromStringAndSize((const char *)data, size);
}

/* The distinct tokens as the text of one JSON array, decoded by the caller in one go. */
static PyObject *token_array(Batch *b) {
    Py_ssize_t size = 2 + (b->n_tokens ? b->n_tokens - 1 : 0);
    for (Py_ssize_t t = 0; t < b->n_tokens; t++) size += b->tokens[t].len;
    PyObject *text = PyBytes_FromStringAndSize(NULL, size);
    if (!text) return NULL;
    char *out = PyBytes_AS_STRING(text);
    *out++ = '[';
    for (Py_ssize_t t = 0; t < b->n_tokens; t++) {
        if (t) *out++ = ',';
        memcpy(out, b->base + b->tokens[t].start, (size_t)b->tokens[t].len);
        out += b->tokens[t].len;
    }
    *out = ']';
    return text;
}

static PyObject *build_result(Batch *b) {
    Py_ssize_t n = b->n;
    PyObject *tokens = token_array(b);
    if (!tokens) return NULL;
    PyObject *fields = PyByteArray_FromStringAndSize(NULL, n * NF * (Py_ssize_t)sizeof(int32_t));
    if (!fields) {
        Py_DECREF(tokens);
        return NULL;
    }
    int32_t *out = (int32_t *)PyByteArray_AS_STRING(fields); /* [NF][n] */
    for (int f = 0; f < NF; f++)
        for (Py_ssize_t i = 0; i < n; i++)
            out[(size_t)f * n + i] = b->fields[(size_t)i * NF + f];
    PyObject *combos = PyByteArray_FromStringAndSize(NULL, b->n_combos * NCOMBO *
                                                           (Py_ssize_t)sizeof(int32_t));
    if (!combos) {
        Py_DECREF(tokens);
        Py_DECREF(fields);
        return NULL;
    }
    char *cout = PyByteArray_AS_STRING(combos);
    for (Py_ssize_t c = 0; c < b->n_combos; c++)
        memcpy(cout + (size_t)c * NCOMBO * sizeof(int32_t), b->combos[c].parts,
               NCOMBO * sizeof(int32_t));
    return Py_BuildValue(
        "(nNNNNNNNNN)", n, tokens, fields,
        column(b->ts, n * (Py_ssize_t)sizeof(int64_t)), column(b->ts_ok, n),
        column(b->dur, n * (Py_ssize_t)sizeof(int64_t)), column(b->dur_ok, n),
        column(b->bounds, 2 * n * (Py_ssize_t)sizeof(int64_t)),
        column(b->combo, n * (Py_ssize_t)sizeof(int32_t)), combos);
}

static PyObject *read_batch(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &stop)) return NULL;
    if (start < 0 || stop > view.len || start > stop) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "read_batch: the range is not inside the data");
        return NULL;
    }
    PyObject *result = Py_None;
    Py_INCREF(result);
    if (start < stop) {
        Batch b;
        memset(&b, 0, sizeof b);
        memset(b.last, 0xff, sizeof b.last);
        memset(b.recent, 0xff, sizeof b.recent);
        memset(b.combo_of_name, 0xff, sizeof b.combo_of_name);
        memset(b.next_key, 0xff, sizeof b.next_key);
        b.last_combo = -1;
        b.base = (cptr)view.buf;
        b.end = b.base + stop;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = read_all(&b, b.base + start, b.end);
        Py_END_ALLOW_THREADS
        if (b.nomem) {
            Py_DECREF(result);
            result = PyErr_NoMemory();
        } else if (rc == 0) {
            Py_DECREF(result);
            result = build_result(&b);
        }
        free_batch(&b);
    }
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"read_batch", read_batch, METH_VARARGS,
     "read_batch(data, start, end): the columns of the events in data[start:end], or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "The native fast path of the Chrome-trace event reader.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    for (int k = 0; k < K_COUNT; k++) {
        unsigned char text[8] = {0}, mask[8] = {0};
        size_t len = strlen(KEYS[k]);
        text[0] = '"';
        memcpy(text + 1, KEYS[k], len);
        text[len + 1] = '"';
        text[len + 2] = ':';
        memset(mask, 0xff, len + 3);
        memcpy(&key_word[k], text, 8);
        memcpy(&key_mask[k], mask, 8);
        key_size[k] = (uint8_t)(len + 3);
    }
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddIntConstant(m, "FIELDS", NF) ||
              PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH))) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
