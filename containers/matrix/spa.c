/* Sparse accumulators (include/rmc/csr.h, seed 001 Table 7.3): one row of a product or a sum is
 * built from scaled sparse rows and extracted column-sorted with duplicates summed.
 *   DENSE  values + flags over all ncols columns and a list of the touched ones: scatter O(1) per
 *          contribution; extraction scans the touched span when it is dense, else sorts the list;
 *          only touched flags are reset.
 *   HASH   open addressing (linear probing) over the next power of two >= 2 * min(bound, ncols)
 *          slots, of which a row uses only that many (small rows stay in cache); extraction sorts
 *          the touched keys; only touched slots are reset.
 *   HEAP   the rows kept by reference, merged by a binary heap of their cursors: O(b log k) for b
 *          contributions from k rows, no random access, no sort.
 *   KWAY   the rows kept by reference, merged pairwise in rounds (a tournament of two-way merges):
 *          O(b log k) sequential passes through two buffers of the bound.
 *   AUTO   keeps the rows by reference and chooses at rmc_spa_end (auto_kind below).
 * Every kind sums a column's contributions in the order the rows were added, except KWAY, which
 * sums in the tournament's order (equal up to rounding). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "csr_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

#define SPA_MAGIC 0x53504131u /* "SPA1" */

/* AUTO's rule (rmc_spa_end, from k rows, b contributions, ncols):
 *   k <= AUTO_HEAP_ROWS                      HEAP (a plain merge: nothing to scatter or sort)
 *   ncols <= AUTO_DENSE_SMALL                DENSE (values and flags, ~1 MiB, stay in cache)
 *   ncols <= AUTO_DENSE_COLS and ncols <= AUTO_DENSE_RATIO * b
 *                                            DENSE (the row covers a good part of the columns:
 *                                            scattering beats hashing, the span scan beats sorting)
 *   otherwise                                HASH
 * A structure that cannot be allocated falls back to HEAP, which needs nothing more. (Measured on
 * R-MAT scales 14-16 and G(2^17, 8/2^17) squared: DENSE was the fastest kind or within noise of
 * it, HASH 1.1-1.5x and KWAY 2x slower, HEAP 4x; heap merging only pays for two rows.) */
#define AUTO_HEAP_ROWS   2
#define AUTO_DENSE_SMALL ((int64_t)1 << 17)
#define AUTO_DENSE_COLS  ((int64_t)1 << 24)
#define AUTO_DENSE_RATIO 16

/* An input row kept by reference (merging kinds and AUTO). */
typedef struct {
    const void *cols;
    const double *vals;
    int64_t n;
    double scale;
    int idx64;
} ref_t;

/* A heap entry: a row's current column, the row (ties go to the earlier row: add order). */
typedef struct {
    int64_t col, r;
} hent_t;

struct rmc_spa {
    uint32_t magic;
    rmc_spa_kind_t kind;
    int64_t ncols;
    int open;             /* between begin and end */
    int64_t bound, added; /* this row's bound and contributions so far */
    /* DENSE: values and flags over ncols (AUTO: allocated at first use) */
    double *dval;
    uint8_t *dflag;
    /* touched columns (DENSE) or slots (HASH), and the sort's keys and scratch */
    int64_t *touched, *keys, *ktmp;
    int64_t tcap, nt, tmin, tmax;
    /* HASH: hkey (-1 empty) and hval over hcap slots; this row uses hmask + 1 of them */
    int64_t *hkey;
    double *hval;
    int64_t hcap, hmask;
    int hshift;
    /* merging: the rows, their cursors, the heap */
    ref_t *refs;
    int64_t *pos;
    hent_t *heap;
    int64_t nrefs, rcap;
    /* KWAY: two buffers of mcap entries */
    int64_t *mcol[2];
    double *mval[2];
    int64_t mcap;
    rmc_spa_kind_t last; /* the kind that built the last row */
};

/* ------------------------------------------------------------------------- sizing --- */

static int grow_touched(struct rmc_spa *s, int64_t need)
{
    if (need <= s->tcap)
        return 0;
    int64_t cap = s->tcap * 2 > need ? s->tcap * 2 : need;
    if (cap > s->ncols)
        cap = s->ncols > need ? s->ncols : need;
    int64_t *t = rmcc_malloc_n(cap, sizeof(int64_t)), *k = rmcc_malloc_n(cap, sizeof(int64_t)),
            *x = rmcc_malloc_n(cap, sizeof(int64_t));
    if (!t || !k || !x) {
        free(t);
        free(k);
        free(x);
        return -1;
    }
    free(s->touched);
    free(s->keys);
    free(s->ktmp);
    s->touched = t;
    s->keys = k;
    s->ktmp = x;
    s->tcap = cap;
    return 0;
}

static int alloc_dense(struct rmc_spa *s)
{
    if (s->dval)
        return 0;
    s->dval = rmcc_malloc_n(s->ncols, sizeof(double));
    /* rounded up to whole 8-byte words: dense_out reads the flags a word at a time */
    s->dflag = s->dval ? calloc((size_t)(s->ncols / 8 + 1) * 8, 1) : NULL;
    if (!s->dval || !s->dflag) {
        free(s->dval);
        free(s->dflag);
        s->dval = NULL;
        s->dflag = NULL;
        return -1;
    }
    return 0;
}

/* Table of the next power of two >= 2 * m slots (at least 8) for a row of m distinct columns. */
static int prepare_hash(struct rmc_spa *s, int64_t m)
{
    int lg = 3;
    while (lg < 62 && ((int64_t)1 << lg) < 2 * m)
        lg++;
    int64_t cap = (int64_t)1 << lg;
    if (cap > s->hcap) {
        int64_t *k = rmcc_malloc_n(cap, sizeof(int64_t));
        double *v = rmcc_malloc_n(cap, sizeof(double));
        if (!k || !v) {
            free(k);
            free(v);
            return -1;
        }
        memset(k, 0xff, (size_t)cap * sizeof(int64_t)); /* -1: empty */
        free(s->hkey);
        free(s->hval);
        s->hkey = k;
        s->hval = v;
        s->hcap = cap;
    }
    s->hmask = cap - 1;
    s->hshift = 64 - lg;
    return 0;
}

static int prepare_merge(struct rmc_spa *s, int64_t b)
{
    if (b <= s->mcap)
        return 0;
    int64_t *c0 = rmcc_malloc_n(b, sizeof(int64_t)), *c1 = rmcc_malloc_n(b, sizeof(int64_t));
    double *v0 = rmcc_malloc_n(b, sizeof(double)), *v1 = rmcc_malloc_n(b, sizeof(double));
    if (!c0 || !c1 || !v0 || !v1) {
        free(c0);
        free(c1);
        free(v0);
        free(v1);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        free(s->mcol[i]);
        free(s->mval[i]);
    }
    s->mcol[0] = c0;
    s->mcol[1] = c1;
    s->mval[0] = v0;
    s->mval[1] = v1;
    s->mcap = b;
    return 0;
}

static int push_ref(struct rmc_spa *s, const ref_t *r)
{
    if (s->nrefs == s->rcap) {
        int64_t cap = s->rcap ? 2 * s->rcap : 16;
        ref_t *nr = realloc(s->refs, (size_t)cap * sizeof(ref_t));
        if (!nr)
            return -1;
        s->refs = nr;
        int64_t *np = realloc(s->pos, (size_t)cap * sizeof(int64_t));
        if (!np)
            return -1;
        s->pos = np;
        hent_t *nh = realloc(s->heap, (size_t)cap * sizeof(hent_t));
        if (!nh)
            return -1;
        s->heap = nh;
        s->rcap = cap;
    }
    s->refs[s->nrefs++] = *r;
    return 0;
}

/* -------------------------------------------------------------- create, destroy --- */

static const char *kind_name(rmc_spa_kind_t k)
{
    static const char *names[] = {"DENSE", "HASH", "HEAP", "KWAY", "AUTO"};
    return (unsigned)k <= RMC_SPA_AUTO ? names[k] : "?";
}

rmc_status_t rmc_spa_create(rmc_spa_kind_t kind, int64_t ncols, rmc_spa_h *sp)
{
    const char *fn = __func__;
    if (!sp)
        return rmc_error_set(RMC_ERR_ARG, fn, "s is NULL");
    *sp = NULL;
    if ((unsigned)kind > RMC_SPA_AUTO)
        return rmc_error_set(RMC_ERR_ARG, fn, "kind %d is not an accumulator kind (0 to %d)",
                             (int)kind, (int)RMC_SPA_AUTO);
    if (ncols < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "ncols = " I64 " < 0", LL(ncols));
    struct rmc_spa *s = calloc(1, sizeof(*s));
    if (!s)
        return rmc_error_set(RMC_ERR_NOMEM, fn, "no memory for an accumulator");
    s->magic = SPA_MAGIC;
    s->kind = s->last = kind;
    s->ncols = ncols;
    if (kind == RMC_SPA_DENSE && alloc_dense(s)) {
        free(s);
        return rmc_error_set(RMC_ERR_NOMEM, fn,
                             "no memory for a dense accumulator of " I64 " columns", LL(ncols));
    }
    *sp = s;
    return RMC_OK;
}

void rmc_spa_destroy(rmc_spa_h s)
{
    if (!s || s->magic != SPA_MAGIC)
        return;
    s->magic = 0;
    free(s->dval);
    free(s->dflag);
    free(s->touched);
    free(s->keys);
    free(s->ktmp);
    free(s->hkey);
    free(s->hval);
    free(s->refs);
    free(s->pos);
    free(s->heap);
    for (int i = 0; i < 2; i++) {
        free(s->mcol[i]);
        free(s->mval[i]);
    }
    free(s);
}

/* -------------------------------------------------------------------- scatter --- */

/* The scatter loop, once per index width (the width test hoisted out of the loop). */
#define DENSE_ADD(T)                                                                               \
    for (int64_t j = 0; j < n; j++) {                                                              \
        int64_t c = ((const T *)cols)[j];                                                          \
        double v = scale * vals[j];                                                                \
        if (df[c]) {                                                                               \
            dv[c] += v;                                                                            \
        } else {                                                                                   \
            df[c] = 1;                                                                             \
            dv[c] = v;                                                                             \
            t[nt++] = c;                                                                           \
            lo = c < lo ? c : lo;                                                                  \
            hi = c > hi ? c : hi;                                                                  \
        }                                                                                          \
    }

static void dense_add(struct rmc_spa *s, double scale, const void *cols, const double *vals,
                      int64_t n, int idx64)
{
    double *dv = s->dval;
    uint8_t *df = s->dflag;
    int64_t nt = s->nt, lo = s->tmin, hi = s->tmax, *t = s->touched;
    if (idx64)
        DENSE_ADD(int64_t)
    else
        DENSE_ADD(int32_t)
    s->nt = nt;
    s->tmin = lo;
    s->tmax = hi;
}

static inline int64_t hash_slot(const struct rmc_spa *s, int64_t c)
{
    return (int64_t)(((uint64_t)c * 0x9e3779b97f4a7c15ull) >> s->hshift);
}

#define HASH_ADD(T)                                                                                \
    for (int64_t j = 0; j < n; j++) {                                                              \
        int64_t c = ((const T *)cols)[j], h = hash_slot(s, c);                                     \
        while (hk[h] != c && hk[h] != -1)                                                          \
            h = (h + 1) & m;                                                                       \
        double v = scale * vals[j];                                                                \
        if (hk[h] == c) {                                                                          \
            hv[h] += v;                                                                            \
        } else {                                                                                   \
            hk[h] = c;                                                                             \
            hv[h] = v;                                                                             \
            s->touched[s->nt++] = h;                                                               \
        }                                                                                          \
    }

static void hash_add(struct rmc_spa *s, double scale, const void *cols, const double *vals,
                     int64_t n, int idx64)
{
    int64_t *hk = s->hkey, m = s->hmask;
    double *hv = s->hval;
    if (idx64)
        HASH_ADD(int64_t)
    else
        HASH_ADD(int32_t)
}

/* ----------------------------------------------------------------- extraction --- */

static int64_t dense_out(struct rmc_spa *s, void *cols, double *vals, int idx64)
{
    int64_t nt = s->nt, w = 0;
    if (!nt)
        return 0;
    if (s->tmax - s->tmin + 1 <= 16 * nt) {
        /* dense enough: scan the touched span in column order, eight flags at a time (the flag
         * array has a spare byte per 8 at its end: alloc_dense) */
        uint8_t *f = s->dflag;
        for (int64_t c0 = s->tmin & ~(int64_t)7; c0 <= s->tmax; c0 += 8) {
            uint64_t word;
            memcpy(&word, f + c0, 8);
            if (!word)
                continue;
            for (int64_t c = c0; c < c0 + 8; c++)
                if (f[c]) {
                    f[c] = 0;
                    rmcc_idx_set(cols, w, c, idx64);
                    vals[w++] = s->dval[c];
                }
        }
    } else {
        rmcc_sort_i64(s->touched, nt, s->ktmp);
        for (int64_t t = 0; t < nt; t++) {
            int64_t c = s->touched[t];
            s->dflag[c] = 0;
            rmcc_idx_set(cols, w, c, idx64);
            vals[w++] = s->dval[c];
        }
    }
    return w;
}

static int64_t hash_out(struct rmc_spa *s, void *cols, double *vals, int idx64)
{
    int64_t nt = s->nt, *hk = s->hkey, m = s->hmask;
    for (int64_t t = 0; t < nt; t++)
        s->keys[t] = hk[s->touched[t]];
    rmcc_sort_i64(s->keys, nt, s->ktmp);
    for (int64_t t = 0; t < nt; t++) {
        int64_t c = s->keys[t], h = hash_slot(s, c);
        while (hk[h] != c)
            h = (h + 1) & m;
        rmcc_idx_set(cols, t, c, idx64);
        vals[t] = s->hval[h];
    }
    for (int64_t t = 0; t < nt; t++)
        hk[s->touched[t]] = -1;
    return nt;
}

static inline int hent_less(hent_t a, hent_t b)
{
    return a.col < b.col || (a.col == b.col && a.r < b.r);
}

static void sift_down(hent_t *h, int64_t n, int64_t i)
{
    hent_t x = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && hent_less(h[c + 1], h[c]))
            c++;
        if (!hent_less(h[c], x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static int64_t heap_out(struct rmc_spa *s, void *cols, double *vals, int idx64)
{
    hent_t *h = s->heap;
    int64_t hn = 0, w = 0, last = -1;
    for (int64_t r = 0; r < s->nrefs; r++) {
        s->pos[r] = 0;
        if (s->refs[r].n > 0)
            h[hn++] = (hent_t){rmcc_idx_get(s->refs[r].cols, 0, s->refs[r].idx64), r};
    }
    for (int64_t i = hn / 2 - 1; i >= 0; i--)
        sift_down(h, hn, i);
    while (hn > 0) {
        const ref_t *r = &s->refs[h[0].r];
        int64_t c = h[0].col, p = s->pos[h[0].r]++;
        double v = r->scale * r->vals[p];
        if (c == last) {
            vals[w - 1] += v;
        } else {
            rmcc_idx_set(cols, w, c, idx64);
            vals[w++] = v;
            last = c;
        }
        if (p + 1 < r->n)
            h[0].col = rmcc_idx_get(r->cols, p + 1, r->idx64);
        else
            h[0] = h[--hn];
        sift_down(h, hn, 0);
    }
    return w;
}

/* Merges two sorted rows (scaled) into dst (width didx64), summing equal columns; returns the
 * length. */
static int64_t merge2(const ref_t *a, const ref_t *b, void *dc, double *dv, int didx64)
{
    int64_t i = 0, j = 0, w = 0;
    while (i < a->n && j < b->n) {
        int64_t ca = rmcc_idx_get(a->cols, i, a->idx64), cb = rmcc_idx_get(b->cols, j, b->idx64);
        if (ca < cb) {
            rmcc_idx_set(dc, w, ca, didx64);
            dv[w++] = a->scale * a->vals[i++];
        } else if (cb < ca) {
            rmcc_idx_set(dc, w, cb, didx64);
            dv[w++] = b->scale * b->vals[j++];
        } else {
            rmcc_idx_set(dc, w, ca, didx64);
            dv[w++] = a->scale * a->vals[i++] + b->scale * b->vals[j++];
        }
    }
    for (; i < a->n; i++, w++) {
        rmcc_idx_set(dc, w, rmcc_idx_get(a->cols, i, a->idx64), didx64);
        dv[w] = a->scale * a->vals[i];
    }
    for (; j < b->n; j++, w++) {
        rmcc_idx_set(dc, w, rmcc_idx_get(b->cols, j, b->idx64), didx64);
        dv[w] = b->scale * b->vals[j];
    }
    return w;
}

/* Pairwise rounds: the segments (first the input rows) are merged two by two into a buffer, the
 * buffers alternating, until two remain; their merge is the output. Rewrites s->refs. */
static int64_t kway_out(struct rmc_spa *s, void *cols, double *vals, int idx64)
{
    ref_t *seg = s->refs;
    int64_t k = s->nrefs;
    int b = 0;
    while (k > 2) {
        int64_t off = 0, nk = 0;
        for (int64_t i = 0; i < k; i += 2) {
            ref_t one = {s->mcol[b] + off, s->mval[b] + off, 0, 1.0, 1};
            if (i + 1 < k) {
                one.n = merge2(&seg[i], &seg[i + 1], s->mcol[b] + off, s->mval[b] + off, 1);
            } else { /* the odd one out is copied: no segment outlives the round after it */
                ref_t none = {NULL, NULL, 0, 1.0, 1};
                one.n = merge2(&seg[i], &none, s->mcol[b] + off, s->mval[b] + off, 1);
            }
            off += one.n;
            seg[nk++] = one;
        }
        k = nk;
        b ^= 1;
    }
    ref_t none = {NULL, NULL, 0, 1.0, 1};
    return merge2(&seg[0], k == 2 ? &seg[1] : &none, cols, vals, idx64);
}

/* ------------------------------------------------------------------- AUTO --- */

static rmc_spa_kind_t auto_kind(const struct rmc_spa *s)
{
    if (s->nrefs <= AUTO_HEAP_ROWS)
        return RMC_SPA_HEAP;
    if (s->ncols <= AUTO_DENSE_SMALL ||
        (s->ncols <= AUTO_DENSE_COLS && s->ncols <= AUTO_DENSE_RATIO * s->added))
        return RMC_SPA_DENSE;
    return RMC_SPA_HASH;
}

/* AUTO's row: the chosen structure is made ready (HEAP when it cannot be) and the kept rows
 * scattered into it or merged. */
static int64_t auto_out(struct rmc_spa *s, void *cols, double *vals, int idx64)
{
    s->last = RMC_SPA_AUTO;
    if (s->nrefs == 0)
        return 0;
    rmc_spa_kind_t k = auto_kind(s);
    int64_t m = s->added < s->ncols ? s->added : s->ncols;
    if (k == RMC_SPA_DENSE && (alloc_dense(s) || grow_touched(s, m)))
        k = RMC_SPA_HASH;
    if (k == RMC_SPA_HASH && (grow_touched(s, m) || prepare_hash(s, m)))
        k = RMC_SPA_HEAP;
    s->nt = 0;
    s->tmin = INT64_MAX;
    s->tmax = -1;
    s->last = k;
    if (k == RMC_SPA_HEAP)
        return heap_out(s, cols, vals, idx64);
    for (int64_t r = 0; r < s->nrefs; r++) {
        const ref_t *f = &s->refs[r];
        (k == RMC_SPA_DENSE ? dense_add : hash_add)(s, f->scale, f->cols, f->vals, f->n, f->idx64);
    }
    return k == RMC_SPA_DENSE ? dense_out(s, cols, vals, idx64) : hash_out(s, cols, vals, idx64);
}

/* ------------------------------------------------------------------ unchecked --- */

rmc_status_t rmcc_spa_begin(rmc_spa_h s, int64_t bound)
{
    int64_t m = bound < s->ncols ? bound : s->ncols;
    int fail = 0;
    switch (s->kind) {
    case RMC_SPA_DENSE:
        fail = grow_touched(s, m);
        break;
    case RMC_SPA_HASH:
        fail = grow_touched(s, m) || prepare_hash(s, m);
        break;
    case RMC_SPA_KWAY:
        fail = prepare_merge(s, bound);
        break;
    default:
        break;
    }
    if (fail)
        return rmc_error_set(RMC_ERR_NOMEM, "rmc_spa_begin",
                             "no memory for a %s accumulator row of bound " I64, kind_name(s->kind),
                             LL(bound));
    s->open = 1;
    s->bound = bound;
    s->added = 0;
    s->nrefs = 0;
    s->nt = 0;
    s->tmin = INT64_MAX;
    s->tmax = -1;
    return RMC_OK;
}

rmc_status_t rmcc_spa_add(rmc_spa_h s, double scale, const void *cols, const double *vals,
                          int64_t n, int idx64)
{
    if (n == 0)
        return RMC_OK;
    if (s->kind == RMC_SPA_DENSE) {
        dense_add(s, scale, cols, vals, n, idx64);
    } else if (s->kind == RMC_SPA_HASH) {
        hash_add(s, scale, cols, vals, n, idx64);
    } else {
        ref_t r = {cols, vals, n, scale, idx64};
        if (push_ref(s, &r))
            return rmc_error_set(RMC_ERR_NOMEM, "rmc_spa_add_row", "no memory to keep " I64 " rows",
                                 LL(s->nrefs + 1));
    }
    s->added += n;
    return RMC_OK;
}

rmc_status_t rmcc_spa_end(rmc_spa_h s, void *cols, double *vals, int64_t *n, int idx64)
{
    switch (s->kind) {
    case RMC_SPA_DENSE:
        *n = dense_out(s, cols, vals, idx64);
        break;
    case RMC_SPA_HASH:
        *n = hash_out(s, cols, vals, idx64);
        break;
    case RMC_SPA_HEAP:
        *n = heap_out(s, cols, vals, idx64);
        break;
    case RMC_SPA_KWAY:
        *n = s->nrefs ? kway_out(s, cols, vals, idx64) : 0;
        break;
    default:
        *n = auto_out(s, cols, vals, idx64);
        break;
    }
    s->open = 0;
    s->nrefs = 0;
    return RMC_OK;
}

/* ------------------------------------------------------------------- checked --- */

static rmc_status_t check_spa(rmc_spa_h s, const char *fn, int want_open)
{
    if (!s)
        return rmc_error_set(RMC_ERR_ARG, fn, "s is NULL");
    if (s->magic != SPA_MAGIC)
        return rmc_error_set(RMC_ERR_HANDLE, fn, "s is not a live accumulator");
    if (want_open && !s->open)
        return rmc_error_set(RMC_ERR_STATE, fn, "no row begun (call rmc_spa_begin first)");
    if (!want_open && s->open)
        return rmc_error_set(RMC_ERR_STATE, fn,
                             "a row is open (rmc_spa_end it before beginning another)");
    return RMC_OK;
}

rmc_status_t rmc_spa_begin(rmc_spa_h s, int64_t bound)
{
    rmc_status_t st = check_spa(s, __func__, 0);
    if (st)
        return st;
    if (bound < 0)
        return rmc_error_set(RMC_ERR_ARG, __func__, "bound = " I64 " < 0", LL(bound));
    return rmcc_spa_begin(s, bound);
}

rmc_status_t rmc_spa_add_row(rmc_spa_h s, double scale, const void *cols, const double *vals,
                             int64_t n, int idx64)
{
    const char *fn = __func__;
    rmc_status_t st = check_spa(s, fn, 1);
    if (!st)
        st = rmcc_check_idx64(idx64, fn, "idx64");
    if (st)
        return st;
    if (n < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "n = " I64 " < 0", LL(n));
    if (n > 0 && (!cols || !vals))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s is NULL with n = " I64, cols ? "vals" : "cols",
                             LL(n));
    if (n > s->bound - s->added)
        return rmc_error_set(RMC_ERR_ARG, fn,
                             I64 " more entries exceed the row's bound " I64 " (" I64
                                 " added already)",
                             LL(n), LL(s->bound), LL(s->added));
    for (int64_t j = 0, prev = -1; j < n; j++) {
        int64_t c = rmcc_idx_get(cols, j, idx64);
        if (c < 0 || c >= s->ncols)
            return rmc_error_set(RMC_ERR_ARG, fn,
                                 "entry " I64 ": column " I64 " out of range [0, " I64 ")", LL(j),
                                 LL(c), LL(s->ncols));
        if (c <= prev)
            return rmc_error_set(RMC_ERR_FORMAT, fn,
                                 "entry " I64 ": column " I64 " after column " I64
                                 ": the row is not sorted without duplicates",
                                 LL(j), LL(c), LL(prev));
        prev = c;
    }
    return rmcc_spa_add(s, scale, cols, vals, n, idx64);
}

rmc_status_t rmc_spa_end(rmc_spa_h s, void *cols, double *vals, int64_t *n, int idx64)
{
    const char *fn = __func__;
    rmc_status_t st = check_spa(s, fn, 1);
    if (!st)
        st = rmcc_check_idx64(idx64, fn, "idx64");
    if (st)
        return st;
    if (!n)
        return rmc_error_set(RMC_ERR_ARG, fn, "n is NULL");
    if (s->bound > 0 && (!cols || !vals))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s is NULL for a row of bound " I64,
                             cols ? "vals" : "cols", LL(s->bound));
    if (!rmcc_fits(s->ncols, idx64))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             "32-bit output columns for an accumulator of " I64 " columns",
                             LL(s->ncols));
    return rmcc_spa_end(s, cols, vals, n, idx64);
}

rmc_spa_kind_t rmc_spa_chosen(rmc_spa_h s)
{
    return s && s->magic == SPA_MAGIC ? s->last : RMC_SPA_AUTO;
}
