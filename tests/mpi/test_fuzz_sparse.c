/* A seeded random test of the sparse matrices: local CSR (include/rmc/csr.h), Matrix Market input
 * and output, and the distributed sparse matrix with its multiplications (include/rmc/sparse.h).
 * Three cmocka tests:
 *   mm_fuzz     Each rank writes Matrix Market files in its own mkdtemp folder (removed at the
 *               end): valid ones (coordinate real / integer / pattern, general / symmetric /
 *               skew-symmetric, dense arrays, 0 x n and empty files, duplicates, comments, blank
 *               lines, tabs, CRLF, banner case, no final newline, columns past 2^31 read with
 *               64-bit indices), each read (rmc_csr_read_mm, random index width), written and read
 *               back (the same matrix, the second write byte-identical to the first); then random
 *               mutations of each (truncation, flipped / inserted / deleted characters, NUL bytes,
 *               huge, negative, zero and out-of-range numbers, indices past 32 bits, wrong entry
 *               counts, bad banners, NaN / inf / overflowing values, extra tokens, duplicated and
 *               deleted lines, CRLF, lines of up to 70 000 characters). A reference parser in this
 *               file decides every file: read with the same status, the same matrix (exact
 *               structure, values bit for bit, NaN as NaN) passing rmc_csr_check, or the same error
 *               (RMC_ERR_FORMAT or RMC_ERR_TOO_BIG) with a message naming the path and the line;
 *               an output left empty on error. Then a few files read collectively
 *               (rmc_spmatrix_read_mm, every block kind): the same outcome on every rank, the
 *               matrix gathered equal to the reference, a 0-row or 0-column file
 *               RMC_ERR_UNSUPPORTED.
 *   malformed   Valid random CSR matrices broken one way (unsorted or repeated columns, columns
 *               out of range, rowptr[0], rowptr[nrows], decreasing or wild row pointers, negative
 *               sizes or nnz, a bad idx64, NULL arrays, 32-bit sizes overflowing) handed to every
 *               function that takes one (check, copy, to_dense, slice, write_mm, spmm, spgemm as A
 *               and as B and sum as each summand with every accumulator, the accumulators' add_row,
 *               from_coo with bad triplets): the status rmc_csr_check gives, the input untouched
 *               byte for byte, outputs empty, dense results, files and flop counts unchanged;
 *               slices of the rows the fault is not in succeed. Collectively: a broken tile to
 *               rmc_spmatrix_tile_set, a broken whole to scatter, a broken part to assemble fail
 *               (on every rank for the collectives) and leave the matrix as it was.
 *   dist_ops    Random shapes (m, k, n up to RMC_FUZZ_MAXDIM), densities (empty tiles and rows,
 *               explicit zeros, duplicate triplets), both index widths, every distribution kind
 *               (regular block-cyclic, round-robin, irregular, irregular on a process grid, the
 *               five BCL descriptors, ranks permuted): the matrix filled by scatter, assemble or
 *               tile_set + renew, checked by gather, total nnz, every tile through tile_get_nb in
 *               random order (and tile_view, tile_nnz), random slices; SpMM (every algorithm and
 *               update path, random alpha, beta, width of B) against a serial dense product, exact
 *               (small integers); SpGEMM A*B and A*A with every algorithm and every accumulator
 *               against a serial Gustavson product (exact structure and values), C's tiles
 *               sometimes set (not renewed) before; grids that do not line up refused on every
 *               rank with C unchanged; SUMMA on one-tile-per-process grids. The local kernels
 *               (rmc_csr_spgemm, rmc_csr_spmm, rmc_csr_sum) on the same data.
 * Not here: I/O errors (unreadable or unwritable files: tests/unit/test_mm.c, test_sparse.c), the
 * generators (test_sparse.c), RMC_ERR_TOO_BIG from products (tests/unit/test_csr.c), matrices of
 * a subset of the ranks.
 * Knobs: RMC_FUZZ_SEED (default 1), RMC_FUZZ_FILES (valid files per rank, 32), RMC_FUZZ_MUTS
 * (mutants per file, 8), RMC_FUZZ_COLLFILES (collective reads, 4), RMC_FUZZ_MALFORMED (broken
 * matrices per rank, 40), RMC_FUZZ_DISTMAL (collective rounds of broken tiles, 3),
 * RMC_FUZZ_CASES (distributed cases, 6; 2 beyond 2 ranks), RMC_FUZZ_MAXDIM (200), RMC_FUZZ_MAXTILES
 * (tiles a side of random splits, 6), RMC_FUZZ_BETA0NAN=1 (SpMM with beta 0 on a C of NaNs: C is
 * not read), RMC_TEST_ONLY (a test: test_mm_fuzz, test_malformed, test_dist_ops), RMC_FUZZ_TRACE=1
 * (what is done, outcome counts; 2: each multiplication's time), RMC_FUZZ_SABOTAGE (self-test: 1
 * every reference of this file corrupted, each of the three tests must fail; 2 the SpGEMM reference
 * alone; 3 the expectations of the collective broken-tile rounds alone). A failure prints the seed,
 * the step and, for files, the text. */
#include "cttest.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <strings.h>
#include <rmc/csr.h>
#include <rmc/sparse.h>

/* ------------------------------------------------------------------ common --- */

static uint64_t SEED;
static int SAB, TRACE, FILES, MUTS, COLLFILES, MALROUNDS, DISTMAL, CASES, MAXDIM, MAXT;
static long fails;
static char where[200];

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (fails++ < 20) {                                                                        \
            fprintf(stderr, "[rank %d] seed %" PRIu64 " %s: ", me, SEED, where);                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? (int)strtol(s, NULL, 0) : dflt;
}

static void knobs(void)
{
    const char *s = getenv("RMC_FUZZ_SEED");
    SEED = s && *s ? (uint64_t)strtoull(s, NULL, 0) : 1;
    SAB = env_int("RMC_FUZZ_SABOTAGE", 0);
    TRACE = env_int("RMC_FUZZ_TRACE", 0);
    FILES = env_int("RMC_FUZZ_FILES", 32);
    MUTS = env_int("RMC_FUZZ_MUTS", 8);
    COLLFILES = env_int("RMC_FUZZ_COLLFILES", 4);
    MALROUNDS = env_int("RMC_FUZZ_MALFORMED", 40);
    DISTMAL = env_int("RMC_FUZZ_DISTMAL", 3);
    CASES = env_int("RMC_FUZZ_CASES", np <= 2 ? 6 : 2); /* (more ranks than cores: slow) */
    MAXDIM = env_int("RMC_FUZZ_MAXDIM", 200);
    if (MAXDIM < 1)
        MAXDIM = 1;
    MAXT = env_int("RMC_FUZZ_MAXTILES", 6);
    if (MAXT < 1 || MAXT > 32)
        MAXT = MAXT < 1 ? 1 : 32;
    fails = 0;
    where[0] = 0;
}

static uint64_t rnd(uint64_t *s)
{
    return mpitest_splitmix(s);
}
/* uniform in [0, n) (0 when n <= 0) */
static int64_t rn(uint64_t *s, int64_t n)
{
    return n > 0 ? (int64_t)(rnd(s) % (uint64_t)n) : 0;
}
static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Both doubles the same: bit for bit, or both NaN. */
static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}
static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    assert_non_null(p);
    return p;
}

/* ------------------------------------------------------- reference matrices --- */

/* The test's own sparse matrix: 64-bit row pointers and columns, built from triplets by sorting
 * them stably by (row, column) and summing duplicates in input order (as csr.h documents). */
typedef struct {
    int64_t m, n, nnz;
    int64_t *rp, *ci;
    double *v;
} ref_t;

static void ref_free(ref_t *a)
{
    free(a->rp);
    free(a->ci);
    free(a->v);
    memset(a, 0, sizeof *a);
}

typedef struct {
    int64_t r, c, seq;
    double v;
} trip_t;

static int trip_cmp(const void *x, const void *y)
{
    const trip_t *a = x, *b = y;
    if (a->r != b->r)
        return a->r < b->r ? -1 : 1;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void ref_build(ref_t *out, int64_t m, int64_t n, int64_t ne, const int64_t *ri,
                      const int64_t *cj, const double *v)
{
    trip_t *t = xmalloc((size_t)ne * sizeof *t);
    for (int64_t e = 0; e < ne; e++)
        t[e] = (trip_t){ri[e], cj[e], e, v[e]};
    qsort(t, (size_t)ne, sizeof *t, trip_cmp);
    out->m = m;
    out->n = n;
    out->rp = xcalloc((size_t)m + 1, sizeof(int64_t));
    out->ci = xmalloc((size_t)ne * sizeof(int64_t));
    out->v = xmalloc((size_t)ne * sizeof(double));
    int64_t w = 0;
    for (int64_t e = 0; e < ne; e++) {
        if (w > 0 && e > 0 && t[e - 1].r == t[e].r && t[e - 1].c == t[e].c) {
            out->v[w - 1] += t[e].v;
            continue;
        }
        out->ci[w] = t[e].c;
        out->v[w] = t[e].v;
        out->rp[t[e].r + 1]++;
        w++;
    }
    for (int64_t i = 0; i < m; i++)
        out->rp[i + 1] += out->rp[i];
    out->nnz = w;
    free(t);
}

static void ref_slice(const ref_t *a, int64_t r0, int64_t r1, int64_t c0, int64_t c1, ref_t *out)
{
    out->m = r1 - r0;
    out->n = c1 - c0;
    out->rp = xcalloc((size_t)(r1 - r0) + 1, sizeof(int64_t));
    out->ci = xmalloc((size_t)a->nnz * sizeof(int64_t));
    out->v = xmalloc((size_t)a->nnz * sizeof(double));
    int64_t w = 0;
    for (int64_t i = r0; i < r1; i++) {
        for (int64_t q = a->rp[i]; q < a->rp[i + 1]; q++)
            if (a->ci[q] >= c0 && a->ci[q] < c1) {
                out->ci[w] = a->ci[q] - c0;
                out->v[w++] = a->v[q];
            }
        out->rp[i - r0 + 1] = w;
    }
    out->nnz = w;
}

/* Gustavson: out = a * b, the structure of the symbolic product (cancellations kept). */
static void ref_gemm(const ref_t *a, const ref_t *b, ref_t *out)
{
    int64_t m = a->m, n = b->n, cap = 16, w = 0;
    int64_t *mark = xmalloc((size_t)n * sizeof(int64_t)), *list = xmalloc((size_t)n * 8);
    double *acc = xmalloc((size_t)n * sizeof(double));
    for (int64_t j = 0; j < n; j++)
        mark[j] = -1;
    out->m = m;
    out->n = n;
    out->rp = xcalloc((size_t)m + 1, sizeof(int64_t));
    out->ci = xmalloc((size_t)cap * sizeof(int64_t));
    out->v = xmalloc((size_t)cap * sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        int64_t nl = 0;
        for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) {
            int64_t k = a->ci[p];
            for (int64_t q = b->rp[k]; q < b->rp[k + 1]; q++) {
                int64_t j = b->ci[q];
                if (mark[j] != i) {
                    mark[j] = i;
                    list[nl++] = j;
                    acc[j] = a->v[p] * b->v[q];
                } else {
                    acc[j] += a->v[p] * b->v[q];
                }
            }
        }
        /* insertion sort of the row's columns (rows are short) */
        for (int64_t x = 1; x < nl; x++) {
            int64_t y = list[x], z = x;
            for (; z > 0 && list[z - 1] > y; z--)
                list[z] = list[z - 1];
            list[z] = y;
        }
        if (w + nl > cap) {
            while (w + nl > cap)
                cap *= 2;
            out->ci = realloc(out->ci, (size_t)cap * sizeof(int64_t));
            out->v = realloc(out->v, (size_t)cap * sizeof(double));
            assert_non_null(out->ci);
            assert_non_null(out->v);
        }
        for (int64_t x = 0; x < nl; x++) {
            out->ci[w] = list[x];
            out->v[w++] = acc[list[x]];
        }
        out->rp[i + 1] = w;
    }
    out->nnz = w;
    free(mark);
    free(list);
    free(acc);
}

/* a as an rmc_csr_t of index width idx64 (owning its arrays). */
static void ref_to_csr(const ref_t *a, int idx64, rmc_csr_t *out)
{
    rmc_csr_init(out, idx64);
    assert_int_equal(rmc_csr_alloc(out, a->m, a->n, a->nnz, idx64), RMC_OK);
    for (int64_t i = 0; i <= a->m; i++) {
        if (idx64)
            ((int64_t *)out->rowptr)[i] = a->rp[i];
        else
            ((int32_t *)out->rowptr)[i] = (int32_t)a->rp[i];
    }
    for (int64_t q = 0; q < a->nnz; q++) {
        if (idx64)
            ((int64_t *)out->colind)[q] = a->ci[q];
        else
            ((int32_t *)out->colind)[q] = (int32_t)a->ci[q];
        out->val[q] = a->v[q];
    }
}

/* An rmc_csr_t equal to the reference (shape, structure, values bit for bit or both NaN)?
 * Writes the first difference into why. */
static int csr_vs_ref(const rmc_csr_t *a, const ref_t *r, char *why, size_t cap)
{
    if (a->nrows != r->m || a->ncols != r->n || a->nnz != r->nnz) {
        snprintf(why, cap, "shape %lld x %lld nnz %lld, want %lld x %lld nnz %lld",
                 (long long)a->nrows, (long long)a->ncols, (long long)a->nnz, (long long)r->m,
                 (long long)r->n, (long long)r->nnz);
        return 0;
    }
    for (int64_t i = 0; i <= r->m; i++) {
        int64_t p = a->rowptr ? rmc_csr_rowptr(a, i) : 0;
        if (p != r->rp[i]) {
            snprintf(why, cap, "rowptr[%lld] = %lld, want %lld", (long long)i, (long long)p,
                     (long long)r->rp[i]);
            return 0;
        }
    }
    for (int64_t q = 0; q < r->nnz; q++) {
        if (rmc_csr_colind(a, q) != r->ci[q] || !same_double(a->val[q], r->v[q])) {
            snprintf(why, cap, "entry %lld: column %lld value %.17g, want column %lld value %.17g",
                     (long long)q, (long long)rmc_csr_colind(a, q), a->val[q], (long long)r->ci[q],
                     r->v[q]);
            return 0;
        }
    }
    return 1;
}

/* An output matrix as a failed call must leave it: empty, as rmc_csr_init made it. */
static int csr_is_empty(const rmc_csr_t *a)
{
    return a->nrows == 0 && a->ncols == 0 && a->nnz == 0 && !a->rowptr && !a->colind && !a->val &&
           (a->idx64 == 0 || a->idx64 == 1);
}

/* Fills an output matrix with junk (not owned), so that a function must reset it. */
static void csr_junk(rmc_csr_t *a)
{
    a->nrows = 77;
    a->ncols = 88;
    a->nnz = 99;
    a->idx64 = 1;
    a->rowptr = (void *)(uintptr_t)0x10;
    a->colind = (void *)(uintptr_t)0x20;
    a->val = (double *)(uintptr_t)0x30;
    a->own = 0;
}

/* ----------------------------------------------------------------- byte buffers --- */

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static void b_reserve(buf_t *b, size_t extra)
{
    if (b->n + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1)
        cap *= 2;
    b->p = realloc(b->p, cap);
    assert_non_null(b->p);
    b->cap = cap;
}
static void b_add(buf_t *b, const char *s, size_t len)
{
    b_reserve(b, len);
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}
static void b_str(buf_t *b, const char *s)
{
    b_add(b, s, strlen(s));
}
static void b_fmt(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void b_fmt(buf_t *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    b_add(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}
/* Replaces bytes [s, e) by str[0..len). */
static void b_splice(buf_t *b, size_t s, size_t e, const char *str, size_t len)
{
    if (e > b->n)
        e = b->n;
    if (s > e)
        s = e;
    b_reserve(b, len);
    memmove(b->p + s + len, b->p + e, b->n - e);
    memcpy(b->p + s, str, len);
    b->n = b->n - (e - s) + len;
    b->p[b->n] = 0;
}
static void b_copy(buf_t *dst, const buf_t *src)
{
    dst->n = 0;
    b_add(dst, src->p ? src->p : "", src->n);
}

static int write_file(const char *path, const char *text, size_t len)
{
    remove(path); /* a new file: rewriting a truncated one may flush it to disk at close (ext4) */
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}
static int read_file(const char *path, buf_t *b)
{
    b->n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char tmp[4096];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
        b_add(b, tmp, k);
    fclose(f);
    b_reserve(b, 0);
    b->p[b->n] = 0;
    return 1;
}

/* The first bytes of a text, escaped, for failure messages. */
static const char *escaped(const char *t, size_t n)
{
    static char out[700];
    size_t w = 0;
    for (size_t i = 0; i < n && w + 8 < sizeof out; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '\n')
            w += (size_t)snprintf(out + w, sizeof out - w, "\\n");
        else if (c == '\r')
            w += (size_t)snprintf(out + w, sizeof out - w, "\\r");
        else if (c == '\t')
            w += (size_t)snprintf(out + w, sizeof out - w, "\\t");
        else if (c < 32 || c > 126)
            w += (size_t)snprintf(out + w, sizeof out - w, "\\x%02x", c);
        else
            out[w++] = (char)c;
    }
    out[w] = 0;
    return out;
}

/* ====================================================== 1. Matrix Market fuzz === */

/* --- the reference reader -------------------------------------------------------
 * Matrix Market as csr.h describes it: a banner line first ("%%MatrixMarket matrix" and format,
 * field, symmetry, case-insensitive, words separated by blanks or tabs), then lines that are
 * blank or comments (first non-blank character '%') anywhere after it, a size line of 3 integers
 * (coordinate) or 2 (array), then exactly the entries the size line gives and nothing else but
 * blank and comment lines. Line ends: '\n', with '\r's before it stripped. A NUL byte in a line
 * read makes the file malformed. Numbers are C's strtoll (indices, integer values) and strtod
 * (real values) of a whole blank-separated field; a real that overflows to infinity is
 * malformed, "nan" and "inf" are numbers. (As in the library, a field is parsed where it starts
 * and C's conversions skip white space of their own first: "1 \r 2 3" is the entry (1, 2) = 3,
 * '\r', '\v' and '\f' before a number count as blanks; after one they do not.) The first fault
 * decides the line reported. */

typedef struct {
    const char *t;
    size_t len, pos;
    long long lineno;
    char *line;
    size_t cap;
} lr_t;

/* The next line (end stripped) in L->line: 1; 0 at the end; -1 for a NUL byte in it. */
static int lr_next(lr_t *L)
{
    if (L->pos >= L->len)
        return 0;
    size_t s = L->pos, e = s;
    while (e < L->len && L->t[e] != '\n')
        e++;
    L->pos = e < L->len ? e + 1 : e;
    L->lineno++;
    size_t n = e - s;
    if (memchr(L->t + s, 0, n))
        return -1;
    if (n + 1 > L->cap) {
        L->cap = n + 1;
        L->line = realloc(L->line, L->cap);
        assert_non_null(L->line);
    }
    memcpy(L->line, L->t + s, n);
    while (n > 0 && (L->line[n - 1] == '\r' || L->line[n - 1] == '\n'))
        n--;
    L->line[n] = 0;
    return 1;
}

static const char *skipb(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The next line that is neither blank nor a comment (as lr_next). */
static int lr_data(lr_t *L)
{
    for (;;) {
        int k = lr_next(L);
        if (k <= 0)
            return k;
        const char *p = skipb(L->line);
        if (*p && *p != '%')
            return 1;
    }
}

static int fend(char c)
{
    return c == 0 || c == ' ' || c == '\t';
}
static int r_int(const char **pp, int64_t *v)
{
    const char *p = skipb(*pp);
    char *e;
    if (!*p)
        return 0;
    errno = 0;
    long long x = strtoll(p, &e, 10);
    if (e == p || !fend(*e) || errno == ERANGE)
        return 0;
    *v = x;
    *pp = e;
    return 1;
}
static int r_real(const char **pp, double *v)
{
    const char *p = skipb(*pp);
    char *e;
    if (!*p)
        return 0;
    errno = 0;
    double x = strtod(p, &e);
    if (e == p || !fend(*e) || (errno == ERANGE && isinf(x)))
        return 0;
    *v = x;
    *pp = e;
    return 1;
}
static int r_end(const char *p)
{
    return *skipb(p) == 0;
}

typedef struct {
    rmc_status_t st;
    long long line; /* the line an error names */
    int64_t m, n;   /* the size line's (when read) */
    ref_t a;        /* the matrix when st == RMC_OK */
} mmref_t;

typedef struct {
    int64_t n, cap, *r, *c;
    double *v;
} trips_t;

static void tr_push(trips_t *t, int64_t r, int64_t c, double v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->r = realloc(t->r, (size_t)t->cap * sizeof(int64_t));
        t->c = realloc(t->c, (size_t)t->cap * sizeof(int64_t));
        t->v = realloc(t->v, (size_t)t->cap * sizeof(double));
        assert_true(t->r && t->c && t->v);
    }
    t->r[t->n] = r;
    t->c[t->n] = c;
    t->v[t->n++] = v;
}

static int word_is(const char *w, const char *name)
{
    return strcasecmp(w, name) == 0;
}

static void mm_reference(const char *text, size_t len, int idx64, mmref_t *R)
{
    memset(R, 0, sizeof *R);
    lr_t L = {text, len, 0, 0, NULL, 0};
    trips_t T = {0};
#define BAD(status)                                                                                \
    do {                                                                                           \
        R->st = (status);                                                                          \
        R->line = L.lineno;                                                                        \
        goto done;                                                                                 \
    } while (0)
    int k = lr_next(&L);
    if (k == 0) {
        L.lineno = 1;
        BAD(RMC_ERR_FORMAT);
    }
    if (k < 0)
        BAD(RMC_ERR_FORMAT);
    /* the banner */
    char *w[6];
    int nw = 0;
    for (char *p = L.line; nw < 6;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        w[nw++] = p;
        while (!fend(*p))
            p++;
        if (*p)
            *p++ = 0;
    }
    if (nw != 5 || !word_is(w[0], "%%MatrixMarket") || !word_is(w[1], "matrix"))
        BAD(RMC_ERR_FORMAT);
    int coord = word_is(w[2], "coordinate"), array = word_is(w[2], "array");
    int field = word_is(w[3], "real")      ? 0
                : word_is(w[3], "integer") ? 1
                : word_is(w[3], "pattern") ? 2
                                           : -1;
    int sym = word_is(w[4], "general")          ? 0
              : word_is(w[4], "symmetric")      ? 1
              : word_is(w[4], "skew-symmetric") ? 2
                                                : -1;
    if ((!coord && !array) || field < 0 || sym < 0 || (array && (field == 2 || sym != 0)) ||
        (field == 2 && sym == 2))
        BAD(RMC_ERR_FORMAT);
    /* the size line */
    if ((k = lr_data(&L)) < 0)
        BAD(RMC_ERR_FORMAT);
    if (k == 0) {
        L.lineno++;
        BAD(RMC_ERR_FORMAT);
    }
    int64_t m, n, ne = 0;
    const char *p = L.line;
    if (!r_int(&p, &m) || !r_int(&p, &n) || (coord && !r_int(&p, &ne)) || !r_end(p))
        BAD(RMC_ERR_FORMAT);
    R->m = m;
    R->n = n;
    if (m < 0 || n < 0 || ne < 0 || (sym && m != n))
        BAD(RMC_ERR_FORMAT);
    if (!idx64 && (m > INT32_MAX || n > INT32_MAX))
        BAD(RMC_ERR_TOO_BIG);
    if (array) {
        if (m > 0 && n > INT64_MAX / m)
            BAD(RMC_ERR_TOO_BIG);
        ne = m * n;
    }
    for (int64_t e = 0; e < ne; e++) {
        if ((k = lr_data(&L)) < 0)
            BAD(RMC_ERR_FORMAT);
        if (k == 0) {
            L.lineno++;
            BAD(RMC_ERR_FORMAT);
        }
        p = L.line;
        int64_t i, j;
        double v = 1.0;
        if (coord) {
            if (!r_int(&p, &i) || !r_int(&p, &j))
                BAD(RMC_ERR_FORMAT);
            if (i < 1 || i > m || j < 1 || j > n)
                BAD(RMC_ERR_FORMAT);
            i--, j--;
        } else {
            i = e % m;
            j = e / m;
        }
        if (field == 1) {
            int64_t x;
            if (!r_int(&p, &x))
                BAD(RMC_ERR_FORMAT);
            v = (double)x;
        } else if (field == 0 && !r_real(&p, &v)) {
            BAD(RMC_ERR_FORMAT);
        }
        if (!r_end(p))
            BAD(RMC_ERR_FORMAT);
        if (sym && j > i)
            BAD(RMC_ERR_FORMAT);
        if (sym == 2 && i == j && v != 0)
            BAD(RMC_ERR_FORMAT);
        if (array && v == 0)
            continue;
        tr_push(&T, i, j, v);
        if (sym && i != j)
            tr_push(&T, j, i, sym == 2 ? -v : v);
    }
    if ((k = lr_data(&L)) != 0)
        BAD(RMC_ERR_FORMAT); /* a NUL byte, or more entries */
    R->st = RMC_OK;
    R->line = 0;
    if (m <= (1 << 22))
        ref_build(&R->a, m, n, T.n, T.r, T.c, T.v);
    else
        R->a.m = m; /* too large to build: the caller does not read it */
    if (SAB == 1 && m <= (1 << 22))
        R->a.m++; /* self-test: the reference is wrong */
done:
#undef BAD
    free(L.line);
    free(T.r);
    free(T.c);
    free(T.v);
}

/* --- the generator of valid files ------------------------------------------------ */

static const char *sep(uint64_t *r)
{
    static const char *const s[] = {" ", " ", " ", "\t", "  ", " \t "};
    return s[rn(r, 6)];
}
static const char *opt_ws(uint64_t *r)
{
    return rn(r, 5) == 0 ? sep(r) : "";
}
/* A word in random case. */
static void word(uint64_t *r, buf_t *b, const char *w)
{
    int how = (int)rn(r, 4);
    for (const char *p = w; *p; p++) {
        char c = *p;
        if (how == 1)
            c = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        else if (how == 2)
            c = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
        b_add(b, &c, 1);
    }
}
/* Sometimes a comment or blank line. */
static void noise(uint64_t *r, buf_t *b, const char *eol, int pct)
{
    while (rn(r, 100) < pct) {
        switch (rn(r, 5)) {
        case 0:
            b_fmt(b, "%% comment %d%s", (int)rn(r, 1000), eol);
            break;
        case 1:
            b_fmt(b, "%s%s", sep(r), eol);
            break;
        case 2:
            b_fmt(b, "%s%%%% 1 2 3 not data%s", opt_ws(r), eol);
            break;
        case 3:
            b_str(b, eol);
            break;
        default:
            b_fmt(b, "%%%s", eol);
        }
        pct /= 2;
    }
}

static void gen_value(uint64_t *r, buf_t *b, int field, int zero)
{
    static const char *const zr[] = {"0", "-0", "0.0", "0e5", "+0", "-0.000"};
    static const char *const zi[] = {"0", "-0", "+0", "000"};
    if (zero) {
        b_str(b, field == 1 ? zi[rn(r, 4)] : zr[rn(r, 6)]);
        return;
    }
    if (field == 1) {
        switch (rn(r, 4)) {
        case 0:
            b_fmt(b, "+%d", (int)rn(r, 50));
            break;
        case 1:
            b_fmt(b, "%lld", (long long)rn(r, 2000000000000ll) - 1000000000000ll);
            break;
        case 2:
            b_fmt(b, "00%d", (int)rn(r, 10));
            break;
        default:
            b_fmt(b, "%d", (int)rn(r, 19) - 9);
        }
        return;
    }
    switch (rn(r, 10)) {
    case 0:
        b_fmt(b, "%.3f", (double)(rn(r, 161) - 80) / 8.0);
        break;
    case 1:
        b_fmt(b, "%de%d", (int)rn(r, 9) + 1, -(int)rn(r, 4));
        break;
    case 2:
        b_fmt(b, "%.17g", ((double)(rnd(r) >> 11) * 0x1p-53 - 0.5) * 2000.0);
        break;
    case 3: {
        static const char *const odd[] = {
            "+5", ".5", "-.25", "1E2", "5.", "-0", "1e-300", "4.9406564584124654e-324", "0x1p-3"};
        b_str(b, odd[rn(r, 9)]);
        break;
    }
    case 4:
        b_fmt(b, "%.17g", ldexp((double)(rnd(r) >> 11), (int)rn(r, 1200) - 650));
        break;
    default:
        b_fmt(b, "%d", (int)rn(r, 19) - 9);
    }
}

static int64_t pick_dim(uint64_t *r)
{
    if (rn(r, 10) == 0)
        return 0;
    return rn(r, 4) == 0 ? 1 + rn(r, 60) : 1 + rn(r, 12);
}

/* A valid Matrix Market text. big: may have columns past 2^31 (or rows, only in files read with
 * 32-bit indices: there they are refused before anything is allocated). */
static void gen_mm(uint64_t *r, buf_t *b, int big)
{
    b->n = 0;
    const char *eol = rn(r, 10) == 0 ? "\r\n" : "\n";
    int coord = rn(r, 100) < 85;
    int field = coord ? (int)rn(r, 3) : (int)rn(r, 2);
    int sym = coord ? (int)rn(r, field == 2 ? 2 : 3) : 0;
    if (rn(r, 3) == 0)
        sym = 0;
    int64_t m = pick_dim(r), n = sym ? m : pick_dim(r);
    int bigcols = 0, bigrows = 0;
    if (!coord && m * n > 40) { /* dense arrays: small */
        m = 1 + rn(r, 6);
        n = 1 + rn(r, 6);
    }
    if (big && coord && !sym && rn(r, 10) == 0) {
        bigcols = 1;
        m = 1 + rn(r, 4);
        n = (int64_t)INT32_MAX + 1 + rn(r, 8000000000ll);
    } else if (big && coord && !sym && rn(r, 20) == 0) {
        bigrows = 1;
        m = 3000000000ll + rn(r, 1000);
        n = 1 + rn(r, 5);
    }
    static const char *const fields[] = {"real", "integer", "pattern"};
    static const char *const syms[] = {"general", "symmetric", "skew-symmetric"};
    b_str(b, "%%");
    word(r, b, "MatrixMarket");
    b_str(b, sep(r));
    word(r, b, "matrix");
    b_str(b, sep(r));
    word(r, b, coord ? "coordinate" : "array");
    b_str(b, sep(r));
    word(r, b, fields[field]);
    b_str(b, sep(r));
    word(r, b, syms[sym]);
    b_str(b, opt_ws(r));
    b_str(b, eol);
    noise(r, b, eol, 40);
    int64_t ne = 0;
    if (coord && m > 0 && n > 0)
        ne = bigcols || bigrows ? rn(r, 6) : rn(r, min64(3 * max64(m, n) + 2, 300));
    b_fmt(b, "%s%lld%s%lld", opt_ws(r), (long long)m, sep(r), (long long)n);
    if (coord)
        b_fmt(b, "%s%lld", sep(r), (long long)ne);
    b_str(b, opt_ws(r));
    b_str(b, eol);
    noise(r, b, eol, 20);
    if (coord) {
        int64_t pi = 1, pj = 1;
        for (int64_t e = 0; e < ne; e++) {
            int64_t i, j;
            if (e > 0 && rn(r, 6) == 0) {
                i = pi, j = pj; /* a duplicate */
            } else {
                i = bigrows ? m - rn(r, 3) : 1 + rn(r, m);
                if (bigcols) {
                    const int64_t c[4] = {n, n - 1, (int64_t)INT32_MAX + 1, 1 + rn(r, n)};
                    j = c[rn(r, 4)];
                } else {
                    j = 1 + rn(r, n);
                }
                if (sym && j > i) {
                    int64_t t = i;
                    i = j;
                    j = t;
                }
            }
            pi = i, pj = j;
            b_fmt(b, "%s%s%lld%s%lld", opt_ws(r), rn(r, 20) == 0 ? "0" : "", (long long)i, sep(r),
                  (long long)j);
            if (field != 2) {
                b_str(b, sep(r));
                gen_value(r, b, field, sym == 2 && i == j);
            }
            b_str(b, opt_ws(r));
            b_str(b, eol);
            noise(r, b, eol, 8);
        }
    } else {
        for (int64_t e = 0; e < m * n; e++) {
            b_str(b, opt_ws(r));
            gen_value(r, b, field, rn(r, 3) == 0);
            b_str(b, opt_ws(r));
            b_str(b, eol);
            noise(r, b, eol, 8);
        }
    }
    noise(r, b, eol, 30);
    if (rn(r, 10) == 0) /* no final line end */
        while (b->n > 0 && (b->p[b->n - 1] == '\n' || b->p[b->n - 1] == '\r'))
            b->p[--b->n] = 0;
}

/* --- mutations --------------------------------------------------------------------- */

/* Line idx's bytes [*s, *e) (without its '\n'); 0 when there is no such line. */
static int line_at(const buf_t *b, long idx, size_t *s, size_t *e)
{
    size_t p = 0;
    for (long l = 0; p < b->n || (l == 0 && b->n == 0); l++) {
        size_t q = p;
        while (q < b->n && b->p[q] != '\n')
            q++;
        if (l == idx) {
            *s = p;
            *e = q;
            return 1;
        }
        if (q >= b->n)
            break;
        p = q + 1;
    }
    return 0;
}
static long count_lines(const buf_t *b)
{
    long n = 0;
    for (size_t i = 0; i < b->n; i++)
        n += b->p[i] == '\n';
    return n + (b->n > 0 && b->p[b->n - 1] != '\n');
}
/* Token t (blank-separated) of the bytes [s, e): its bounds; 0 when there is none. */
static int token_at(const buf_t *b, size_t s, size_t e, int t, size_t *ts, size_t *te)
{
    size_t p = s;
    for (int k = 0;; k++) {
        while (p < e && (b->p[p] == ' ' || b->p[p] == '\t' || b->p[p] == '\r'))
            p++;
        if (p >= e)
            return 0;
        size_t q = p;
        while (q < e && b->p[q] != ' ' && b->p[q] != '\t' && b->p[q] != '\r')
            q++;
        if (k == t) {
            *ts = p;
            *te = q;
            return 1;
        }
        p = q;
    }
}
/* The index of the size line (the first data line after the first), or -1. */
static long size_line(const buf_t *b)
{
    long nl = count_lines(b);
    for (long l = 1; l < nl; l++) {
        size_t s, e;
        if (!line_at(b, l, &s, &e))
            return -1;
        while (s < e && (b->p[s] == ' ' || b->p[s] == '\t'))
            s++;
        if (s < e && b->p[s] != '%' && b->p[s] != '\r')
            return l;
    }
    return -1;
}

static const char *const special[] = {"99999999999999999999",
                                      "9223372036854775807",
                                      "9223372036854775808",
                                      "-9223372036854775808",
                                      "-9223372036854775809",
                                      "2147483647",
                                      "2147483648",
                                      "4294967296",
                                      "4294967297",
                                      "3000000000",
                                      "-1",
                                      "0",
                                      "-0",
                                      "+1",
                                      "1e400",
                                      "-1e400",
                                      "1e-400",
                                      "nan",
                                      "NaN",
                                      "-nan",
                                      "inf",
                                      "-Inf",
                                      "infinity",
                                      "0x1p-2",
                                      "0x10",
                                      "1.5",
                                      "1,5",
                                      "",
                                      "abc",
                                      "1e",
                                      "--1",
                                      "1 2",
                                      "%",
                                      "2e9",
                                      "007",
                                      "1e308",
                                      "-2147483649",
                                      "+-3",
                                      "1.7976931348623157e308"};
#define NSPECIAL (int64_t)(sizeof special / sizeof special[0])

/* A token of a random line from line `from` on: its bounds. */
static int pick_token(uint64_t *r, const buf_t *b, long from, int tok, size_t *ts, size_t *te)
{
    long nl = count_lines(b);
    if (nl <= from)
        return 0;
    size_t s, e;
    if (!line_at(b, from + rn(r, nl - from), &s, &e))
        return 0;
    return token_at(b, s, e, tok, ts, te);
}

static const char *mut_name[] = {"truncate", "flip",   "insert",  "delete",  "token",
                                 "count",    "banner", "dupline", "delline", "extra",
                                 "crlf",     "long",   "index",   "nanval",  "nul"};
enum { MUT_N = 15 };

static void mutate(uint64_t *r, buf_t *b, char *desc, size_t dcap)
{
    static const char alpha[] = "0123456789 \t\n\r-+.eE%xnaifNI,;\x7f\xff";
    int nops = 1 + (int)rn(r, 3);
    size_t dl = 0;
    desc[0] = 0;
    for (int o = 0; o < nops; o++) {
        int op = (int)rn(r, MUT_N);
        if (op == 14 && rn(r, 3)) /* NUL bytes: rarer */
            op = 2;
        dl += (size_t)snprintf(desc + dl, dl < dcap ? dcap - dl : 0, "%s%s", o ? "+" : "",
                               mut_name[op]);
        if (dl >= dcap)
            dl = dcap - 1;
        size_t ts, te, s, e;
        char tmp[80];
        switch (op) {
        case 0: /* truncate */
            b->n = (size_t)rn(r, (int64_t)b->n + 1);
            b_reserve(b, 0);
            b->p[b->n] = 0;
            break;
        case 1: /* flip */
            if (b->n)
                b->p[rn(r, (int64_t)b->n)] = alpha[rn(r, (int64_t)sizeof alpha - 1)];
            break;
        case 2: { /* insert */
            size_t at = (size_t)rn(r, (int64_t)b->n + 1);
            b_splice(b, at, at, &alpha[rn(r, (int64_t)sizeof alpha - 1)], 1);
            break;
        }
        case 3: /* delete */
            if (b->n) {
                size_t at = (size_t)rn(r, (int64_t)b->n);
                b_splice(b, at, at + 1, "", 0);
            }
            break;
        case 4: /* a token replaced by a special one */
            if (pick_token(r, b, 1, (int)rn(r, 4), &ts, &te)) {
                const char *x = special[rn(r, NSPECIAL)];
                b_splice(b, ts, te, x, strlen(x));
            }
            break;
        case 5: { /* the entry count (or a size) off by a little */
            long sl = size_line(b);
            if (sl >= 0 && line_at(b, sl, &s, &e) && token_at(b, s, e, (int)rn(r, 3), &ts, &te)) {
                long long v = strtoll(b->p + ts, NULL, 10) + (rn(r, 2) ? 1 : -1) * (1 + rn(r, 2));
                int k = snprintf(tmp, sizeof tmp, "%lld", v);
                b_splice(b, ts, te, tmp, (size_t)k);
            }
            break;
        }
        case 6: { /* another banner */
            static const char *const ban[] = {
                "%%MatrixMarket matrix coordinate complex general",
                "%%MatrixMarket matrix coordinate real hermitian",
                "%%MatrixMarket vector coordinate real general",
                "%%MatrixMarket matrix coordinate real",
                "%%MatrixMarket matrix coordinate real general extra",
                "%MatrixMarket matrix coordinate real general",
                "%%MatrixMarketmatrix coordinate real general",
                "",
                "%%MatrixMarket matrix array pattern general",
                "%%MatrixMarket matrix array real symmetric",
                "%%MatrixMarket matrix coordinate pattern skew-symmetric",
                "%%MatrixMarket matrix coordinate pattern general",
                "%%MatrixMarket matrix coordinate integer symmetric",
                "%%MatrixMarket matrix coordinate real skew-symmetric",
                "%%MatrixMarket matrix array integer general",
                "%%MatrixMarket\tmatrix\tcoordinate\treal\tgeneral\t",
                "  %%MatrixMarket matrix coordinate real general",
                "%%MatrixMarket matrix coordinate real general %comment",
                "%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL"};
            const char *x = ban[rn(r, (int64_t)(sizeof ban / sizeof ban[0]))];
            if (line_at(b, 0, &s, &e))
                b_splice(b, s, e, x, strlen(x));
            break;
        }
        case 7: /* a line twice */
            if (line_at(b, rn(r, count_lines(b)), &s, &e)) {
                buf_t l = {0};
                b_add(&l, b->p + s, e - s);
                b_add(&l, "\n", 1);
                b_splice(b, s, s, l.p, l.n);
                free(l.p);
            }
            break;
        case 8: /* a line deleted */
            if (line_at(b, rn(r, count_lines(b)), &s, &e))
                b_splice(b, s, e < b->n ? e + 1 : e, "", 0);
            break;
        case 9: { /* an extra token */
            static const char *const ex[] = {" 7", " x", "\t1.0", " %", " 1 1", " -"};
            const char *x = ex[rn(r, 6)];
            if (line_at(b, rn(r, count_lines(b)), &s, &e)) {
                while (e > s && b->p[e - 1] == '\r')
                    e--;
                b_splice(b, e, e, x, strlen(x));
            }
            break;
        }
        case 10: /* CRLF (every line, or one) */
            if (rn(r, 2)) {
                for (size_t i = 0; i < b->n; i++)
                    if (b->p[i] == '\n' && (i == 0 || b->p[i - 1] != '\r')) {
                        b_splice(b, i, i, "\r", 1);
                        i++;
                    }
            } else if (line_at(b, rn(r, count_lines(b)), &s, &e)) {
                b_splice(b, e, e, rn(r, 2) ? "\r" : "\r\r", rn(r, 2) ? 1 : 2);
            }
            break;
        case 11: { /* a very long line or field */
            size_t L = 1000 + (size_t)rn(r, 69000);
            buf_t l = {0};
            int how = (int)rn(r, 5);
            if (how == 0)
                b_add(&l, "%", 1);
            for (size_t i = 0; i < L; i++)
                b_add(&l, how <= 1 ? (how ? " " : "c") : how == 4 ? "1" : "0", 1);
            if (how == 2)
                b_add(&l, "1", 1); /* 000...01: a valid integer */
            if (how == 3)
                b_splice(&l, 0, 0, "0.", 2);
            if (how <= 1) {
                b_add(&l, "\n", 1);
                if (line_at(b, 1 + rn(r, max64(count_lines(b) - 1, 1)), &s, &e))
                    b_splice(b, s, s, l.p, l.n);
            } else if (pick_token(r, b, 1, (int)rn(r, 3), &ts, &te)) {
                b_splice(b, ts, te, l.p, l.n);
            }
            free(l.p);
            break;
        }
        case 12: { /* an index made negative, zero, out of range or past 32 bits */
            long sl = size_line(b);
            if (sl < 0)
                break;
            int64_t m = 0, n = 0;
            if (line_at(b, sl, &s, &e) && token_at(b, s, e, 0, &ts, &te))
                m = strtoll(b->p + ts, NULL, 10);
            if (line_at(b, sl, &s, &e) && token_at(b, s, e, 1, &ts, &te))
                n = strtoll(b->p + ts, NULL, 10);
            int t = (int)rn(r, 2);
            if (!pick_token(r, b, sl + 1, t, &ts, &te))
                break;
            long long v;
            switch (rn(r, 8)) {
            case 0:
                v = -1 - rn(r, 3);
                break;
            case 1:
                v = 0;
                break;
            case 2:
                v = (t ? n : m) + 1;
                break;
            case 3:
                v = (long long)INT32_MAX + 1;
                break;
            case 4:
                v = (1ll << 32) + 1; /* 1 when cut to 32 bits */
                break;
            case 5:
                v = INT64_MAX;
                break;
            case 6:
                v = (t ? n : m);
                break;
            default:
                v = -(long long)INT32_MAX - 1;
            }
            int k = snprintf(tmp, sizeof tmp, "%lld", v);
            b_splice(b, ts, te, tmp, (size_t)k);
            break;
        }
        case 13: { /* a value made NaN, infinite or overflowing */
            static const char *const nv[] = {"nan",    "inf",    "-inf",   "NaN",      "1e400",
                                             "-1e999", "1e-400", "0x1p-2", "infinity", "nan(0x1)",
                                             "-nan",   "+inf",   "INF",    "1e308",    "2e308"};
            long sl = size_line(b);
            if (sl >= 0 && pick_token(r, b, sl + 1, (int)rn(r, 3), &ts, &te)) {
                const char *x = nv[rn(r, 15)];
                b_splice(b, ts, te, x, strlen(x));
            }
            break;
        }
        default: { /* a NUL byte */
            size_t at = (size_t)rn(r, (int64_t)b->n + 1);
            b_splice(b, at, at, "\0", 1);
        }
        }
    }
}

/* --- reading and checking ------------------------------------------------------------ */

static long n_ok, n_format, n_toobig, n_skipped, n_unsupported;

/* Reads path (holding text) with rmc_csr_read_mm and checks the outcome against the reference.
 * Returns 1 when the file was read (*got holds the matrix), 0 otherwise (*got empty). */
static int check_read(const char *path, const buf_t *text, int idx64, mmref_t *R, rmc_csr_t *got)
{
    mm_reference(text->p ? text->p : "", text->n, idx64, R);
    rmc_csr_init(got, 0);
    if (R->st == RMC_OK && R->m > (1 << 22)) { /* too many rows to allocate here */
        n_skipped++;
        return 0;
    }
    csr_junk(got);
    rmc_last_error_clear();
    rmc_status_t st = rmc_csr_read_mm(got, path, idx64);
    const char *msg = rmc_last_error();
    char want_line[48], why[200];
    snprintf(want_line, sizeof want_line, "line %lld:", R->line);
    n_ok += st == RMC_OK;
    n_format += st == RMC_ERR_FORMAT;
    n_toobig += st == RMC_ERR_TOO_BIG;
    if (st != R->st) {
        FAIL("read_mm (idx64 %d) -> %s (%s), the reference says %s at line %lld; file: %s", idx64,
             rmc_status_string(st), st ? msg : "", rmc_status_string(R->st), R->line,
             escaped(text->p, text->n));
    } else if (st != RMC_OK) {
        if (!strstr(msg, path) || !strstr(msg, want_line))
            FAIL("read_mm -> %s: the message '%s' does not name %s and %s", rmc_status_string(st),
                 msg, path, want_line);
        if (!csr_is_empty(got))
            FAIL("read_mm -> %s left the output not empty (%lld x %lld nnz %lld)",
                 rmc_status_string(st), (long long)got->nrows, (long long)got->ncols,
                 (long long)got->nnz);
    } else {
        if (got->idx64 != idx64 || !got->own)
            FAIL("read_mm: idx64 %d own %d, want idx64 %d, owned", got->idx64, got->own, idx64);
        rmc_status_t cs = rmc_csr_check(got);
        if (cs != RMC_OK)
            FAIL("read_mm's matrix fails rmc_csr_check: %s", rmc_last_error());
        else if (!csr_vs_ref(got, &R->a, why, sizeof why))
            FAIL("read_mm's matrix differs from the reference: %s; file: %s", why,
                 escaped(text->p, text->n));
    }
    if (st != RMC_OK) {
        rmc_csr_init(got, 0);
        return 0;
    }
    return 1;
}

static void mm_paths(char *dir, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, cap, "%s/rmc_fuzz_sparse.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
}

/* One rank's files: valid ones read, written, read back; their mutants read. */
static void mm_local(void)
{
    char dir[256], in[300], out[300], out2[300];
    mm_paths(dir, sizeof dir);
    snprintf(in, sizeof in, "%s/in.mtx", dir);
    snprintf(out, sizeof out, "%s/out.mtx", dir);
    snprintf(out2, sizeof out2, "%s/out2.mtx", dir);
    uint64_t r = SEED * 0x9E3779B97F4A7C15ull + 0x1000u * (uint64_t)(me + 1);
    buf_t text = {0}, mut = {0}, w1 = {0}, w2 = {0};
    char desc[120];
    for (int f = 0; f < FILES; f++) {
        gen_mm(&r, &text, 1);
        int idx64 = (int)rn(&r, 2);
        snprintf(where, sizeof where, "mm file %d (valid)", f);
        assert_true(write_file(in, text.p, text.n));
        mmref_t R;
        rmc_csr_t got;
        int read = check_read(in, &text, idx64, &R, &got);
        if (read) {
            /* written and read back: the same matrix; written again: the same bytes */
            remove(out); /* (a new file: see write_file) */
            rmc_status_t st = rmc_csr_write_mm(&got, out);
            if (st != RMC_OK)
                FAIL("write_mm -> %s (%s)", rmc_status_string(st), rmc_last_error());
            else {
                int idx2 = got.ncols > INT32_MAX ? 1 : (int)rn(&r, 2);
                mmref_t R2;
                rmc_csr_t back;
                assert_true(read_file(out, &w1));
                snprintf(where, sizeof where, "mm file %d (as written)", f);
                if (check_read(out, &w1, idx2, &R2, &back)) {
                    char why[200];
                    if (!csr_vs_ref(&back, &R.a, why, sizeof why))
                        FAIL("written and read back: %s", why);
                    remove(out2);
                    if (rmc_csr_write_mm(&back, out2) != RMC_OK || !read_file(out2, &w2) ||
                        w1.n != w2.n || memcmp(w1.p, w2.p, w1.n) != 0)
                        FAIL("the second write differs from the first");
                } else if (R2.st != RMC_OK || R2.m <= (1 << 22)) {
                    FAIL("the written file was not read back: %s", escaped(w1.p, w1.n));
                }
                rmc_csr_free(&back);
                ref_free(&R2.a);
            }
        } else if (R.st != RMC_OK && R.st != RMC_ERR_TOO_BIG) {
            FAIL("a valid file was refused by the reference (%s, line %lld): %s",
                 rmc_status_string(R.st), R.line, escaped(text.p, text.n));
        }
        rmc_csr_free(&got);
        ref_free(&R.a);
        for (int v = 0; v < MUTS; v++) {
            b_copy(&mut, &text);
            mutate(&r, &mut, desc, sizeof desc);
            snprintf(where, sizeof where, "mm file %d mutant %d (%s)", f, v, desc);
            assert_true(write_file(in, mut.p, mut.n));
            int i64 = (int)rn(&r, 2);
            check_read(in, &mut, i64, &R, &got);
            rmc_csr_free(&got);
            ref_free(&R.a);
        }
        if (fails)
            break;
    }
    remove(in);
    remove(out);
    remove(out2);
    assert_int_equal(rmdir(dir), 0);
    free(text.p);
    free(mut.p);
    free(w1.p);
    free(w2.p);
}

/* Collective reads: the same files for every rank (rank 0's folder), each with its expected
 * outcome on every rank. */
static void mm_collective(void)
{
    char dir[256] = {0}, path[300], opath[300];
    if (me == 0)
        mm_paths(dir, sizeof dir);
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/coll.mtx", dir);
    snprintf(opath, sizeof opath, "%s/collout.mtx", dir);
    uint64_t s = SEED * 0xD1B54A32D192ED03ull + 17;
    buf_t text = {0};
    char desc[120] = "";
    for (int c = 0; c < COLLFILES; c++) {
        gen_mm(&s, &text, 0);
        if (c % 2)
            mutate(&s, &text, desc, sizeof desc);
        rmc_block_t kind = (rmc_block_t)rn(&s, 5);
        int idx64 = (int)rn(&s, 2), root = (int)rn(&s, np);
        snprintf(where, sizeof where, "collective read %d (%s, kind %d, idx64 %d)", c,
                 c % 2 ? desc : "valid", (int)kind, idx64);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            assert_true(write_file(path, text.p, text.n));
        MPI_Barrier(MPI_COMM_WORLD);
        mmref_t R;
        mm_reference(text.p, text.n, idx64, &R);
        rmc_status_t want = R.st;
        if (want == RMC_OK && (R.m > 4096 || R.n > 4096)) { /* every rank decides alike */
            ref_free(&R.a);
            continue;
        }
        if (want == RMC_OK && (R.m == 0 || R.n == 0))
            want = RMC_ERR_UNSUPPORTED;
        rmc_spmatrix_h S = (rmc_spmatrix_h)1;
        rmc_last_error_clear();
        rmc_status_t st = rmc_spmatrix_read_mm(path, kind, idx64, &S);
        const char *msg = rmc_last_error();
        char line[48];
        snprintf(line, sizeof line, "line %lld:", R.line);
        n_unsupported += st == RMC_ERR_UNSUPPORTED;
        if (st != want)
            FAIL("rmc_spmatrix_read_mm -> %s (%s), want %s (line %lld); file: %s",
                 rmc_status_string(st), st ? msg : "", rmc_status_string(want), R.line,
                 escaped(text.p, text.n));
        else if (st != RMC_OK && (S != NULL || !strstr(msg, path) ||
                                  (want != RMC_ERR_UNSUPPORTED && !strstr(msg, line))))
            FAIL("rmc_spmatrix_read_mm -> %s: handle %p, message '%s' (want %s and %s)",
                 rmc_status_string(st), (void *)S, msg, path, line);
        MPI_CHECK_ALL(fails == 0);
        if (st == RMC_OK) {
            rmc_csr_t g;
            rmc_csr_init(&g, 0);
            MPI_CHECK_ALL(rmc_spmatrix_idx64(S) == idx64);
            MPI_CHECK_OK(rmc_spmatrix_gather(S, root, me == root ? &g : NULL));
            char why[200];
            if (me == root && !csr_vs_ref(&g, &R.a, why, sizeof why))
                FAIL("rmc_spmatrix_read_mm then gather: %s", why);
            rmc_csr_free(&g);
            /* written collectively, read back locally */
            if (me == 0)
                remove(opath);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_CHECK_OK(rmc_spmatrix_write_mm(S, opath));
            if (me == 0) {
                rmc_status_t rs = rmc_csr_read_mm(&g, opath, 1);
                if (rs != RMC_OK || !csr_vs_ref(&g, &R.a, why, sizeof why))
                    FAIL("rmc_spmatrix_write_mm, read back -> %s (%s)", rmc_status_string(rs),
                         rs ? rmc_last_error() : why);
                rmc_csr_free(&g);
            }
            MPI_CHECK_OK(rmc_spmatrix_destroy(S));
        }
        ref_free(&R.a);
        MPI_CHECK_ALL(fails == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        remove(path);
        remove(opath);
        assert_int_equal(rmdir(dir), 0);
    }
    free(text.p);
}

static void test_mm_fuzz(void **state)
{
    (void)state;
    knobs();
    n_ok = n_format = n_toobig = n_skipped = n_unsupported = 0;
    if (me == 0)
        printf("fuzz_sparse mm: seed %" PRIu64 " np %d files %d x %d mutants%s\n", SEED, np, FILES,
               MUTS, SAB ? " SABOTAGE" : "");
    mm_local();
    if (TRACE)
        fprintf(stderr, "[rank %d] mm: read %ld, FORMAT %ld, TOO_BIG %ld, skipped %ld\n", me, n_ok,
                n_format, n_toobig, n_skipped);
    MPI_CHECK_ALL(fails == 0);
    mm_collective();
    MPI_CHECK_ALL(fails == 0);
}

/* ========================================================= 2. malformed CSR === */

enum {
    M_UNSORTED,
    M_DUP,
    M_COLHIGH,
    M_COLNEG,
    M_RP0,
    M_RPEND,
    M_RPDEC,
    M_RPWILD,
    M_NNZNEG,
    M_DIMNEG,
    M_IDX64,
    M_RPNULL,
    M_CINULL,
    M_VALNULL,
    M_BIG32,
    M_N
};
static const char *const mal_name[] = {
    "unsorted",   "duplicate",         "column-high", "column-negative", "rowptr0",
    "rowptr-end", "rowptr-decreasing", "rowptr-wild", "nnz-negative",    "size-negative",
    "idx64",      "rowptr-NULL",       "colind-NULL", "val-NULL",        "32-bit-overflow"};

/* A broken copy of a valid matrix: arrays of its own (not owned by the struct), their sizes, the
 * row the fault is in (-1: not one row's), the status rmc_csr_check must give. */
typedef struct {
    rmc_csr_t a, snap;
    void *rp, *ci;
    double *v;
    size_t rpb, cib, vb;
    void *rp0, *ci0, *v0; /* snapshot of the arrays */
    int64_t row;          /* the row a column fault is in (-1: none) */
    int64_t rpi;          /* the row pointer a rowptr fault changed inside (-1: none) */
    rmc_status_t want;
    int kind;
} mal_t;

static void mal_free(mal_t *x)
{
    free(x->rp);
    free(x->ci);
    free(x->v);
    free(x->rp0);
    free(x->ci0);
    free(x->v0);
    memset(x, 0, sizeof *x);
}

static int64_t idx_get(const void *p, int64_t k, int idx64)
{
    return idx64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k];
}

static void set_idx(void *p, int64_t k, int64_t v, int idx64)
{
    if (idx64)
        ((int64_t *)p)[k] = v;
    else
        ((int32_t *)p)[k] = (int32_t)v;
}

/* Breaks a copy of g (valid, from reference gr) by fault `kind`; 0 when the fault does not apply
 * to this matrix. */
static int mal_make(uint64_t *r, const rmc_csr_t *g, const ref_t *gr, int kind, mal_t *x)
{
    memset(x, 0, sizeof *x);
    int w = g->idx64 ? 8 : 4;
    x->rpb = (size_t)(g->nrows + 1) * (size_t)w;
    x->cib = (size_t)g->nnz * (size_t)w;
    x->vb = (size_t)g->nnz * sizeof(double);
    x->rp = xmalloc(x->rpb);
    x->ci = xmalloc(x->cib);
    x->v = xmalloc(x->vb);
    memcpy(x->rp, g->rowptr, x->rpb);
    if (g->nnz) {
        memcpy(x->ci, g->colind, x->cib);
        memcpy(x->v, g->val, x->vb);
    }
    x->a = *g;
    x->a.rowptr = x->rp;
    x->a.colind = x->ci;
    x->a.val = x->v;
    x->a.own = 0;
    x->row = -1;
    x->rpi = -1;
    x->kind = kind;
    x->want = RMC_ERR_FORMAT;
    int64_t m = g->nrows, nnz = g->nnz;
    /* rows with at least two entries / one entry */
    int64_t r2 = -1, r1 = -1;
    for (int64_t t = 0, i = rn(r, m); t < m; t++, i = (i + 1) % m) {
        int64_t len = gr->rp[i + 1] - gr->rp[i];
        if (len >= 2 && r2 < 0)
            r2 = i;
        if (len >= 1 && r1 < 0)
            r1 = i;
    }
    int idx64 = g->idx64;
    switch (kind) {
    case M_UNSORTED:
    case M_DUP: {
        if (r2 < 0)
            return 0;
        int64_t p = gr->rp[r2] + rn(r, gr->rp[r2 + 1] - gr->rp[r2] - 1);
        if (kind == M_UNSORTED) {
            set_idx(x->ci, p, gr->ci[p + 1], idx64);
            set_idx(x->ci, p + 1, gr->ci[p], idx64);
        } else {
            if (rn(r, 2))
                set_idx(x->ci, p + 1, gr->ci[p], idx64);
            else
                set_idx(x->ci, p, gr->ci[p + 1], idx64);
        }
        x->row = r2;
        break;
    }
    case M_COLHIGH:
    case M_COLNEG: {
        if (r1 < 0)
            return 0;
        int64_t p = gr->rp[r1] + rn(r, gr->rp[r1 + 1] - gr->rp[r1]);
        int64_t v;
        if (kind == M_COLHIGH) {
            const int64_t c[3] = {g->ncols, g->ncols + 1 + rn(r, 5),
                                  idx64 ? (1ll << 40) : INT32_MAX};
            v = c[rn(r, 3)];
        } else {
            const int64_t c[3] = {-1, -2 - rn(r, 5), idx64 ? INT64_MIN : INT32_MIN};
            v = c[rn(r, 3)];
        }
        set_idx(x->ci, p, v, idx64);
        x->row = r1;
        break;
    }
    case M_RP0:
        set_idx(x->rp, 0, rn(r, 2) ? -1 - rn(r, 3) : 1 + rn(r, 3), idx64);
        break;
    case M_RPEND:
        if (rn(r, 2) || nnz == 0)
            set_idx(x->rp, m, nnz + 1 + rn(r, 3), idx64);
        else
            set_idx(x->rp, m, nnz - 1 - rn(r, nnz), idx64);
        break;
    case M_RPDEC: {
        if (m < 2)
            return 0;
        int64_t i = 1 + rn(r, m - 1);
        set_idx(x->rp, i, gr->rp[i + 1] + 1 + rn(r, 3), idx64);
        x->rpi = i;
        break;
    }
    case M_RPWILD: {
        if (m < 2)
            return 0;
        int64_t i = 1 + rn(r, m - 1);
        const int64_t c[3] = {-5, idx64 ? INT64_MAX : INT32_MAX, idx64 ? INT64_MIN : INT32_MIN};
        set_idx(x->rp, i, c[rn(r, 3)], idx64);
        x->rpi = i;
        break;
    }
    case M_NNZNEG:
        x->a.nnz = -1 - rn(r, 3);
        x->want = RMC_ERR_ARG;
        break;
    case M_DIMNEG:
        if (rn(r, 2))
            x->a.nrows = -1;
        else
            x->a.ncols = -1 - rn(r, 3);
        x->want = RMC_ERR_ARG;
        break;
    case M_IDX64:
        x->a.idx64 = rn(r, 2) ? 2 : -1;
        x->want = RMC_ERR_ARG;
        break;
    case M_RPNULL:
        if (m < 1)
            return 0;
        x->a.rowptr = NULL;
        x->want = RMC_ERR_ARG;
        break;
    case M_CINULL:
    case M_VALNULL:
        if (nnz < 1)
            return 0;
        if (kind == M_CINULL)
            x->a.colind = NULL;
        else
            x->a.val = NULL;
        x->want = RMC_ERR_ARG;
        break;
    default: /* M_BIG32 */
        if (idx64)
            return 0;
        if (rn(r, 2))
            x->a.ncols = 3000000000ll;
        else
            x->a.nrows = 3000000000ll;
        x->want = RMC_ERR_TOO_BIG;
    }
    if (SAB == 1)
        x->want = RMC_OK; /* self-test: the expectation is wrong */
    x->snap = x->a;
    x->rp0 = xmalloc(x->rpb);
    x->ci0 = xmalloc(x->cib);
    x->v0 = xmalloc(x->vb);
    memcpy(x->rp0, x->rp, x->rpb);
    memcpy(x->ci0, x->ci, x->cib);
    memcpy(x->v0, x->v, x->vb);
    return 1;
}

/* The broken matrix as it was made (no call may change an input). */
static int mal_intact(const mal_t *x)
{
    return memcmp(&x->a, &x->snap, sizeof x->a) == 0 && memcmp(x->rp, x->rp0, x->rpb) == 0 &&
           memcmp(x->ci, x->ci0, x->cib) == 0 && memcmp(x->v, x->v0, x->vb) == 0;
}

/* A random valid m x n reference with some empty rows (small integers). */
static void rand_ref(uint64_t *r, int64_t m, int64_t n, int pct, ref_t *out)
{
    int64_t cap = m * n + 8, ne = 0;
    int64_t *ri = xmalloc((size_t)cap * 8), *cj = xmalloc((size_t)cap * 8);
    double *v = xmalloc((size_t)cap * sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        if (rn(r, 5) == 0)
            continue;
        for (int64_t j = 0; j < n; j++)
            if (rn(r, 100) < pct) {
                ri[ne] = i;
                cj[ne] = j;
                v[ne++] = (double)(rn(r, 9) - 4);
            }
    }
    ref_build(out, m, n, ne, ri, cj, v);
    free(ri);
    free(cj);
    free(v);
}

static long n_mal[M_N];

/* Every function that takes a CSR, given the broken x->a (of original shape m x n, valid g and
 * its reference gr). */
static void mal_calls(uint64_t *r, mal_t *x, const rmc_csr_t *g, const ref_t *gr, const char *dir)
{
    const rmc_csr_t *bad = &x->a;
    int64_t m = g->nrows, n = g->ncols;
    rmc_status_t want = x->want, st;
    rmc_csr_t out;
    char why[200];
#define EXPECT_ST(call, what)                                                                      \
    do {                                                                                           \
        rmc_last_error_clear();                                                                    \
        st = (call);                                                                               \
        if (st != want)                                                                            \
            FAIL("%s: %s -> %s (%s), want %s", mal_name[x->kind], what, rmc_status_string(st),     \
                 rmc_last_error(), rmc_status_string(want));                                       \
        if (!mal_intact(x))                                                                        \
            FAIL("%s: %s changed its input", mal_name[x->kind], what);                             \
    } while (0)
#define EXPECT_EMPTY(what)                                                                         \
    do {                                                                                           \
        if (!csr_is_empty(&out))                                                                   \
            FAIL("%s: %s left its output not empty", mal_name[x->kind], what);                     \
        if (out.own)                                                                               \
            rmc_csr_free(&out);                                                                    \
    } while (0)
    EXPECT_ST(rmc_csr_check(bad), "rmc_csr_check");
    csr_junk(&out);
    EXPECT_ST(rmc_csr_copy(&out, bad, (int)rn(r, 2)), "rmc_csr_copy");
    EXPECT_EMPTY("rmc_csr_copy");
    /* dense: the buffer unchanged */
    size_t dn = (size_t)(m * n) + 1;
    double *d = xmalloc(dn * sizeof(double));
    for (size_t i = 0; i < dn; i++)
        d[i] = 12345.0;
    EXPECT_ST(rmc_csr_to_dense(bad, d, n), "rmc_csr_to_dense");
    for (size_t i = 0; i < dn; i++)
        if (d[i] != 12345.0) {
            FAIL("%s: rmc_csr_to_dense wrote its output", mal_name[x->kind]);
            break;
        }
    /* slices: every row (the fault in it) */
    int64_t c0 = rn(r, n + 1), c1 = c0 + rn(r, n - c0 + 1);
    csr_junk(&out);
    EXPECT_ST(rmc_csr_slice(&out, bad, 0, bad->nrows, c0, c1), "rmc_csr_slice of every row");
    EXPECT_EMPTY("rmc_csr_slice");
    if (x->row >= 0 || x->rpi >= 0) { /* rows whose row pointers and columns are intact: fine */
        int64_t r0, r1;
        if (x->row >= 0)
            r0 = rn(r, 2) ? 0 : x->row + 1, r1 = r0 == 0 ? x->row : m;
        else
            r0 = rn(r, 2) ? 0 : x->rpi + 1, r1 = r0 == 0 ? x->rpi - 1 : m;
        ref_t rs;
        ref_slice(gr, r0, r1, c0, c1, &rs);
        csr_junk(&out);
        st = rmc_csr_slice(&out, bad, r0, r1, c0, c1);
        if (st != RMC_OK || !csr_vs_ref(&out, &rs, why, sizeof why))
            FAIL("%s (row %lld, rowptr %lld): rmc_csr_slice of rows [%lld, %lld) -> %s (%s)",
                 mal_name[x->kind], (long long)x->row, (long long)x->rpi, (long long)r0,
                 (long long)r1, rmc_status_string(st), st ? rmc_last_error() : why);
        if (st == RMC_OK)
            rmc_csr_free(&out);
        ref_free(&rs);
    }
    /* write_mm: the file as it was */
    char path[300];
    snprintf(path, sizeof path, "%s/keep.mtx", dir);
    assert_true(write_file(path, "keep\n", 5));
    EXPECT_ST(rmc_csr_write_mm(bad, path), "rmc_csr_write_mm");
    buf_t fb = {0};
    if (!read_file(path, &fb) || fb.n != 5 || memcmp(fb.p, "keep\n", 5) != 0)
        FAIL("%s: rmc_csr_write_mm changed the file", mal_name[x->kind]);
    free(fb.p);
    remove(path);
    /* spmm: C unchanged */
    int64_t wb = 1 + rn(r, 4);
    double *b = xmalloc((size_t)(n * wb + 1) * sizeof(double));
    double *c = xmalloc((size_t)(m * wb + 1) * sizeof(double));
    for (int64_t i = 0; i < n * wb; i++)
        b[i] = (double)(rn(r, 5) - 2);
    for (int64_t i = 0; i < m * wb; i++)
        c[i] = 777.0;
    EXPECT_ST(rmc_csr_spmm(1.0 + (double)rn(r, 3), bad, b, wb, wb, c, wb), "rmc_csr_spmm");
    for (int64_t i = 0; i < m * wb; i++)
        if (c[i] != 777.0) {
            FAIL("%s: rmc_csr_spmm changed C", mal_name[x->kind]);
            break;
        }
    /* spgemm as A and as B, sum as each summand, every accumulator */
    ref_t rb, ra;
    rmc_csr_t cb, ca;
    rand_ref(r, n, 1 + rn(r, 6), 30, &rb);
    rand_ref(r, 1 + rn(r, 6), m, 30, &ra);
    ref_to_csr(&rb, g->idx64, &cb);
    ref_to_csr(&ra, g->idx64, &ca);
    for (int kind = 0; kind <= RMC_SPA_AUTO; kind++) {
        double flops = 5.0;
        csr_junk(&out);
        EXPECT_ST(rmc_csr_spgemm(&out, bad, &cb, (rmc_spa_kind_t)kind, &flops),
                  "rmc_csr_spgemm (A)");
        EXPECT_EMPTY("rmc_csr_spgemm");
        csr_junk(&out);
        EXPECT_ST(rmc_csr_spgemm(&out, &ca, bad, (rmc_spa_kind_t)kind, &flops),
                  "rmc_csr_spgemm (B)");
        EXPECT_EMPTY("rmc_csr_spgemm");
        if (flops != 5.0)
            FAIL("%s: a failed rmc_csr_spgemm counted flops", mal_name[x->kind]);
        const rmc_csr_t *in[3] = {bad, g, g};
        int at = (int)rn(r, 3);
        in[0] = g;
        in[at] = bad;
        csr_junk(&out);
        EXPECT_ST(rmc_csr_sum(&out, in, 3, (rmc_spa_kind_t)kind), "rmc_csr_sum");
        EXPECT_EMPTY("rmc_csr_sum");
    }
    /* an accumulator given the broken row: refused, the row unchanged */
    if (x->row >= 0 && bad->idx64 == g->idx64) {
        rmc_status_t want_row =
            x->kind == M_COLHIGH || x->kind == M_COLNEG ? RMC_ERR_ARG : RMC_ERR_FORMAT;
        if (SAB == 1)
            want_row = RMC_OK;
        int64_t p = gr->rp[x->row], len = gr->rp[x->row + 1] - p;
        int w = g->idx64 ? 8 : 4;
        int64_t okrow = -1; /* another row, valid, to add first */
        for (int64_t i = 0; i < m; i++)
            if (i != x->row && gr->rp[i + 1] > gr->rp[i])
                okrow = i;
        for (int kind = 0; kind < RMC_SPA_AUTO + 1; kind++) {
            rmc_spa_h sp;
            assert_int_equal(rmc_spa_create((rmc_spa_kind_t)kind, n, &sp), RMC_OK);
            assert_int_equal(rmc_spa_begin(sp, 2 * max64(len, 1) + n), RMC_OK);
            int64_t ok0 = okrow >= 0 ? gr->rp[okrow] : 0,
                    oklen = okrow >= 0 ? gr->rp[okrow + 1] - ok0 : 0;
            if (oklen)
                assert_int_equal(rmc_spa_add_row(sp, 2.0, (char *)g->colind + ok0 * w, g->val + ok0,
                                                 oklen, g->idx64),
                                 RMC_OK);
            st = rmc_spa_add_row(sp, 1.0, (char *)bad->colind + p * w, bad->val + p, len,
                                 bad->idx64);
            if (st != want_row)
                FAIL("%s: rmc_spa_add_row (kind %d) of the broken row -> %s (%s), want %s",
                     mal_name[x->kind], kind, rmc_status_string(st), rmc_last_error(),
                     rmc_status_string(want_row));
            int64_t cap = 2 * max64(len, 1) + n, cnt = -1;
            void *oc = xmalloc((size_t)cap * 8);
            double *ov = xmalloc((size_t)cap * sizeof(double));
            st = rmc_spa_end(sp, oc, ov, &cnt, g->idx64);
            int same = st == RMC_OK && cnt == oklen;
            for (int64_t q = 0; same && q < oklen; q++)
                same = idx_get(oc, q, g->idx64) == gr->ci[ok0 + q] && ov[q] == 2.0 * gr->v[ok0 + q];
            if (!same && SAB != 1)
                FAIL("%s: after a refused rmc_spa_add_row (kind %d) the row is not the valid "
                     "one added before (%s, %lld entries, want %lld)",
                     mal_name[x->kind], kind, rmc_status_string(st), (long long)cnt,
                     (long long)oklen);
            free(oc);
            free(ov);
            rmc_spa_destroy(sp);
        }
        if (!mal_intact(x))
            FAIL("%s: rmc_spa_add_row changed its input", mal_name[x->kind]);
    }
    rmc_csr_free(&cb);
    rmc_csr_free(&ca);
    ref_free(&rb);
    ref_free(&ra);
    free(b);
    free(c);
    free(d);
#undef EXPECT_ST
#undef EXPECT_EMPTY
}

/* rmc_csr_from_coo: triplets in random order (duplicates summed or refused), bad triplets. */
static void coo_checks(uint64_t *r, const ref_t *gr, int idx64)
{
    int64_t ne = gr->nnz, m = gr->m, n = gr->n;
    int64_t *ri = xmalloc((size_t)(ne + 2) * 8), *cj = xmalloc((size_t)(ne + 2) * 8);
    double *v = xmalloc((size_t)(ne + 2) * sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = gr->rp[i]; q < gr->rp[i + 1]; q++)
            ri[q] = i, cj[q] = gr->ci[q], v[q] = gr->v[q];
    for (int64_t q = ne - 1; q > 0; q--) { /* shuffled */
        int64_t t = rn(r, q + 1), a = ri[q], b = cj[q];
        double c = v[q];
        ri[q] = ri[t], cj[q] = cj[t], v[q] = v[t];
        ri[t] = a, cj[t] = b, v[t] = c;
    }
    rmc_csr_t out;
    char why[200];
    csr_junk(&out);
    rmc_status_t st = rmc_csr_from_coo(&out, m, n, ne, ri, cj, v, 0, idx64);
    if (st != RMC_OK || !csr_vs_ref(&out, gr, why, sizeof why))
        FAIL("from_coo of the shuffled triplets -> %s (%s)", rmc_status_string(st),
             st ? rmc_last_error() : why);
    if (st == RMC_OK)
        rmc_csr_free(&out);
    if (ne == 0) {
        free(ri);
        free(cj);
        free(v);
        return;
    }
    /* a duplicate: summed (dup_sum 1) or refused */
    int64_t e = rn(r, ne);
    ri[ne] = ri[e], cj[ne] = cj[e], v[ne] = 3.0;
    ref_t want;
    ref_build(&want, m, n, ne + 1, ri, cj, v);
    csr_junk(&out);
    st = rmc_csr_from_coo(&out, m, n, ne + 1, ri, cj, v, 1, idx64);
    if (st != RMC_OK || !csr_vs_ref(&out, &want, why, sizeof why))
        FAIL("from_coo with a duplicate summed -> %s (%s)", rmc_status_string(st),
             st ? rmc_last_error() : why);
    if (st == RMC_OK)
        rmc_csr_free(&out);
    ref_free(&want);
    rmc_status_t sab = SAB == 1 ? RMC_OK : RMC_ERR_FORMAT;
    csr_junk(&out);
    st = rmc_csr_from_coo(&out, m, n, ne + 1, ri, cj, v, 0, idx64);
    if (st != sab || !csr_is_empty(&out))
        FAIL("from_coo with a duplicate refused -> %s (%s)", rmc_status_string(st),
             rmc_last_error());
    /* an index out of range; a negative count */
    int64_t save_r = ri[e], save_c = cj[e];
    const int64_t badv[4] = {-1, m, n, INT64_MAX};
    int which = (int)rn(r, 4);
    if (which == 2 || rn(r, 2))
        cj[e] = which == 0 ? -1 : which == 3 ? INT64_MAX : n;
    else
        ri[e] = badv[which];
    sab = SAB == 1 ? RMC_OK : RMC_ERR_ARG;
    csr_junk(&out);
    st = rmc_csr_from_coo(&out, m, n, ne, ri, cj, v, (int)rn(r, 2), idx64);
    if (st != sab || !csr_is_empty(&out))
        FAIL("from_coo with triplet %lld at (%lld, %lld) in %lld x %lld -> %s (%s)", (long long)e,
             (long long)ri[e], (long long)cj[e], (long long)m, (long long)n, rmc_status_string(st),
             rmc_last_error());
    ri[e] = save_r, cj[e] = save_c;
    csr_junk(&out);
    st = rmc_csr_from_coo(&out, m, n, -1 - rn(r, 3), ri, cj, v, 1, idx64);
    if (st != sab || !csr_is_empty(&out))
        FAIL("from_coo with a negative count -> %s", rmc_status_string(st));
    free(ri);
    free(cj);
    free(v);
}

/* ------------------------------------------------------------ distributions --- */

#define MAXB 40
typedef struct {
    int nb;
    int64_t st[MAXB + 1]; /* block b: [st[b], st[b + 1]) */
} split_t;

/* The tile size when every block but the last has it (the last no more): a regular split. */
static int64_t split_uniform(const split_t *s)
{
    int64_t t = s->st[1] - s->st[0];
    for (int b = 0; b + 1 < s->nb; b++)
        if (s->st[b + 1] - s->st[b] != t)
            return 0;
    return s->st[s->nb] - s->st[s->nb - 1] <= t ? t : 0;
}

static int split_eq(const split_t *a, const split_t *b)
{
    if (a->nb != b->nb)
        return 0;
    for (int i = 0; i <= a->nb; i++)
        if (a->st[i] != b->st[i])
            return 0;
    return 1;
}

/* A random split of L: regular tiles, or blocks of random sizes (at most MAXT either way). */
static void rand_split(uint64_t *s, int64_t L, split_t *sp)
{
    if (rn(s, 2)) {
        int64_t tmin = (L + MAXT - 1) / MAXT, t;
        switch (rn(s, 4)) {
        case 0:
            t = L;
            break;
        case 1:
            t = (L + np - 1) / np;
            break;
        case 2:
            t = tmin + rn(s, L - tmin + 1);
            break;
        default:
            t = tmin + rn(s, min64(8, L - tmin + 1));
        }
        if (t < tmin)
            t = tmin;
        sp->nb = (int)((L + t - 1) / t);
        for (int b = 0; b < sp->nb; b++)
            sp->st[b] = b * t;
    } else {
        int nb = 1 + (int)rn(s, min64(L, MAXT));
        char *cut = xcalloc((size_t)L + 1, 1);
        for (int c = 1; c < nb;) {
            int64_t x = 1 + rn(s, L - 1);
            if (!cut[x])
                cut[x] = 1, c++;
        }
        sp->nb = 0;
        for (int64_t x = 0; x < L; x++)
            if (x == 0 || cut[x])
                sp->st[sp->nb++] = x;
        free(cut);
    }
    sp->st[sp->nb] = L;
}

static void rand_pgrid(uint64_t *s, int g[2])
{
    g[0] = 1 + (int)rn(s, np);
    g[1] = 1 + (int)rn(s, np / g[0]);
}

/* The splits of a 2-D distribution's tile grid. */
static void dist_splits(rmc_dist_h d, split_t *sr, split_t *sc)
{
    int64_t nt[2], dims[2], lo[2], hi[2];
    assert_int_equal(rmc_dist_tile_grid(d, nt), RMC_OK);
    assert_int_equal(rmc_dist_dims(d, dims), RMC_OK);
    if (nt[0] > MAXB || nt[1] > MAXB)
        fprintf(stderr, "[rank %d] %s: a distribution of %lld x %lld has %lld x %lld tiles\n", me,
                where, (long long)dims[0], (long long)dims[1], (long long)nt[0], (long long)nt[1]);
    assert_true(nt[0] <= MAXB && nt[1] <= MAXB);
    sr->nb = (int)nt[0];
    sc->nb = (int)nt[1];
    for (int64_t i = 0; i < nt[0]; i++) {
        assert_int_equal(rmc_dist_tile(d, i * nt[1], lo, hi, NULL), RMC_OK);
        sr->st[i] = lo[0];
    }
    for (int64_t j = 0; j < nt[1]; j++) {
        assert_int_equal(rmc_dist_tile(d, j, lo, hi, NULL), RMC_OK);
        sc->st[j] = lo[1];
    }
    sr->st[nt[0]] = dims[0];
    sc->st[nt[1]] = dims[1];
}

/* Sometimes the distribution's processes on a random permutation of the ranks. */
static void maybe_permute(uint64_t *s, rmc_dist_h d, char *desc, size_t cap)
{
    if (np < 2 || rn(s, 4))
        return;
    int perm[64];
    for (int i = 0; i < np; i++)
        perm[i] = i;
    for (int i = np - 1; i > 0; i--) {
        int j = (int)rn(s, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    MPI_CHECK_OK(rmc_dist_set_ranks(d, perm, np));
    size_t l = strlen(desc);
    snprintf(desc + l, cap - l, "+perm");
}

enum { DK_REGULAR, DK_RR, DK_IRRGRID, DK_IRR };
static const char *const dk_name[] = {"regular", "round-robin", "irregular-grid", "irregular"};

/* A distribution of m x n with the given splits, of a random kind that can have them. */
static rmc_dist_h dist_from(uint64_t *s, int64_t m, int64_t n, const split_t *sr, const split_t *sc,
                            char *desc, size_t cap)
{
    int64_t tr = split_uniform(sr), tc = split_uniform(sc), dims[2] = {m, n};
    int cand[4], nc = 0;
    cand[nc++] = DK_IRRGRID;
    if (tr && tc) {
        cand[nc++] = DK_REGULAR;
        cand[nc++] = DK_RR;
    }
    if ((long)sr->nb * sc->nb <= np)
        cand[nc++] = DK_IRR;
    int kind = cand[rn(s, nc)], g[2];
    rmc_dist_h d = NULL;
    int64_t map[2 * MAXB];
    int nb[2] = {sr->nb, sc->nb};
    for (int b = 0; b < sr->nb; b++)
        map[b] = sr->st[b];
    for (int b = 0; b < sc->nb; b++)
        map[sr->nb + b] = sc->st[b];
    rand_pgrid(s, g);
    switch (kind) {
    case DK_REGULAR: {
        int64_t t[2] = {tr, tc};
        MPI_CHECK_OK(rmc_dist_regular(2, dims, t, rn(s, 3) ? g : NULL, &d));
        break;
    }
    case DK_RR: {
        int64_t t[2] = {tr, tc};
        MPI_CHECK_OK(rmc_dist_round_robin(2, dims, t, &d));
        break;
    }
    case DK_IRRGRID:
        MPI_CHECK_OK(rmc_dist_irregular_grid(2, dims, nb, map, g, &d));
        break;
    default:
        MPI_CHECK_OK(rmc_dist_irregular(2, dims, nb, map, &d));
    }
    snprintf(desc, cap, "%s %dx%d", dk_name[kind], sr->nb, sc->nb);
    maybe_permute(s, d, desc, cap);
    return d;
}

/* One of BCL's descriptors (rmc_dist_2d) with a random parameter (at most about MAXT tiles a
 * side). */
static rmc_dist_h dist_2d_rand(uint64_t *s, int64_t m, int64_t n, char *desc, size_t cap)
{
    static const char *const names[] = {"RECT", "ROW", "COLUMN", "SQUARE", "OPT"};
    rmc_block_t kind = (rmc_block_t)rn(s, 5);
    int64_t L = max64(m, n), param = 0;
    if (kind == RMC_BLOCK_ROW && rn(s, 2))
        param = (m + MAXT - 1) / MAXT + rn(s, m);
    else if (kind == RMC_BLOCK_COLUMN && rn(s, 2))
        param = (n + MAXT - 1) / MAXT + rn(s, n);
    else if ((kind == RMC_BLOCK_SQUARE || kind == RMC_BLOCK_OPT) && rn(s, 3))
        param = (L + MAXT - 1) / MAXT + rn(s, L);
    rmc_dist_h d = NULL;
    MPI_CHECK_OK(rmc_dist_2d(kind, m, n, param, &d));
    int64_t nt[2];
    MPI_CHECK_OK(rmc_dist_tile_grid(d, nt));
    if (nt[0] > 2 * MAXT || nt[1] > 2 * MAXT) {
        /* SQUARE's default tiles and OPT's are at most about a rank's block's shorter side: on a
         * skinny matrix (171 x 1: 171 tiles of 1 x 1) too many for this test's time */
        rmc_dist_free(d);
        param = (L + MAXT - 1) / MAXT;
        MPI_CHECK_OK(rmc_dist_2d(kind, m, n, param, &d));
        MPI_CHECK_OK(rmc_dist_tile_grid(d, nt));
        if (nt[0] > 2 * MAXT || nt[1] > 2 * MAXT) { /* OPT: never above that side */
            rmc_dist_free(d);
            kind = RMC_BLOCK_RECT;
            MPI_CHECK_OK(rmc_dist_2d(kind, m, n, param, &d));
        }
    }
    snprintf(desc, cap, "2d %s %lld", names[kind], (long long)param);
    maybe_permute(s, d, desc, cap);
    return d;
}

static rmc_dist_h rand_dist_any(uint64_t *s, int64_t m, int64_t n, char *desc, size_t cap)
{
    if (rn(s, 3) == 0)
        return dist_2d_rand(s, m, n, desc, cap);
    split_t sr, sc;
    rand_split(s, m, &sr);
    rand_split(s, n, &sc);
    return dist_from(s, m, n, &sr, &sc, desc, cap);
}

/* ------------------------------------------- filling and checking a sparse matrix --- */

static long n_fill[3], n_tiles;

/* Fills S (empty) with W: scatter from a random root, assemble of random row parts, or every
 * owner's tile_set and a renew; the input in either index width. */
static void fill_sparse(uint64_t *s, uint64_t *r, rmc_spmatrix_h S, const ref_t *W)
{
    int idx64 = rmc_spmatrix_idx64(S);
    rmc_dist_h d = rmc_spmatrix_dist(S);
    int method = (int)rn(s, 3);
    n_fill[method]++;
    if (method == 0) {
        int root = (int)rn(s, np), w = rn(s, 2) ? idx64 : 1 - idx64;
        rmc_csr_t a;
        rmc_csr_init(&a, w);
        if (me == root)
            ref_to_csr(W, w, &a);
        MPI_CHECK_OK(rmc_spmatrix_scatter(S, root, me == root ? &a : NULL));
        rmc_csr_free(&a);
    } else if (method == 1) {
        int64_t cut[65];
        int perm[64];
        cut[0] = 0;
        cut[np] = W->m;
        for (int i = 1; i < np; i++)
            cut[i] = rn(s, W->m + 1);
        for (int i = 1; i < np; i++) /* sorted */
            for (int j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
                int64_t t = cut[j];
                cut[j] = cut[j - 1];
                cut[j - 1] = t;
            }
        for (int i = 0; i < np; i++)
            perm[i] = i;
        for (int i = np - 1; i > 0; i--) {
            int j = (int)rn(s, i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int64_t r0 = cut[perm[me]], r1 = cut[perm[me] + 1];
        ref_t pr;
        rmc_csr_t pc;
        ref_slice(W, r0, r1, 0, W->n, &pr);
        ref_to_csr(&pr, (int)rn(r, 2), &pc);
        int null = r0 == r1 && rn(r, 2);
        MPI_CHECK_OK(rmc_spmatrix_assemble(S, null ? 0 : r0, null ? NULL : &pc));
        rmc_csr_free(&pc);
        ref_free(&pr);
    } else {
        int64_t nt = rmc_dist_ntiles(d), lo[2], hi[2];
        for (int64_t t = 0; t < nt; t++) {
            int owner;
            assert_int_equal(rmc_dist_tile(d, t, lo, hi, &owner), RMC_OK);
            if (owner != me)
                continue;
            ref_t tr;
            rmc_csr_t tc;
            ref_slice(W, lo[0], hi[0], lo[1], hi[1], &tr);
            ref_to_csr(&tr, (int)rn(r, 2), &tc);
            rmc_status_t st = rmc_spmatrix_tile_set(S, t, &tc);
            if (st != RMC_OK)
                FAIL("tile_set of tile %lld -> %s (%s)", (long long)t, rmc_status_string(st),
                     rmc_last_error());
            rmc_csr_free(&tc);
            ref_free(&tr);
        }
        MPI_CHECK_ALL(fails == 0);
        MPI_CHECK_OK(rmc_spmatrix_renew(S));
    }
}

/* S equals W: total nnz, gathered on a random root, every tile by tile_get_nb in random order
 * (waited for in another), tile_view, tile_nnz, random slices. Collective. */
static void verify_sparse(uint64_t *s, uint64_t *r, rmc_spmatrix_h S, const ref_t *W,
                          const char *what)
{
    char why[200];
    int64_t nnz = -1;
    MPI_CHECK_OK(rmc_spmatrix_nnz(S, &nnz));
    if (nnz != W->nnz)
        FAIL("%s: rmc_spmatrix_nnz %lld, want %lld", what, (long long)nnz, (long long)W->nnz);
    int root = (int)rn(s, np);
    rmc_csr_t g;
    rmc_csr_init(&g, 0);
    MPI_CHECK_OK(rmc_spmatrix_gather(S, root, me == root ? &g : NULL));
    if (me == root) {
        if (g.idx64 != rmc_spmatrix_idx64(S) || rmc_csr_check(&g) != RMC_OK)
            FAIL("%s: gathered matrix of width %d fails its check", what, g.idx64);
        else if (!csr_vs_ref(&g, W, why, sizeof why))
            FAIL("%s: gathered on %d: %s", what, root, why);
    }
    rmc_csr_free(&g);
    /* every tile, all gets in flight, in random order */
    rmc_dist_h d = rmc_spmatrix_dist(S);
    int64_t nt = rmc_dist_ntiles(d), lo[2], hi[2];
    rmc_csr_t *out = xcalloc((size_t)nt, sizeof *out);
    rmc_request_h *rq = xcalloc((size_t)nt, sizeof *rq);
    int64_t *ord = xmalloc((size_t)nt * 8);
    for (int64_t t = 0; t < nt; t++)
        ord[t] = t;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t t = nt - 1; t > 0; t--) {
            int64_t j = rn(r, t + 1), x = ord[t];
            ord[t] = ord[j];
            ord[j] = x;
        }
        for (int64_t q = 0; q < nt; q++) {
            int64_t t = ord[q];
            if (pass == 0) {
                rmc_status_t st = rmc_spmatrix_tile_get_nb(S, t, &out[t], &rq[t]);
                if (st != RMC_OK)
                    FAIL("%s: tile_get_nb of tile %lld -> %s (%s)", what, (long long)t,
                         rmc_status_string(st), rmc_last_error());
                continue;
            }
            rmc_status_t st = RMC_OK;
            if (rq[t] != RMC_REQUEST_NULL) {
                if (rn(r, 3) == 0) {
                    int done = 0;
                    while (st == RMC_OK && !done)
                        st = rmc_test(&rq[t], &done);
                } else {
                    st = rmc_wait(&rq[t]);
                }
            }
            int owner;
            assert_int_equal(rmc_dist_tile(d, t, lo, hi, &owner), RMC_OK);
            ref_t tr;
            ref_slice(W, lo[0], hi[0], lo[1], hi[1], &tr);
            n_tiles++;
            if (st != RMC_OK)
                FAIL("%s: tile %lld's request -> %s (%s)", what, (long long)t,
                     rmc_status_string(st), rmc_last_error());
            else if (out[t].idx64 != rmc_spmatrix_idx64(S) ||
                     !csr_vs_ref(&out[t], &tr, why, sizeof why))
                FAIL("%s: tile %lld (rows [%lld, %lld), columns [%lld, %lld), owner %d) by "
                     "tile_get_nb: %s",
                     what, (long long)t, (long long)lo[0], (long long)hi[0], (long long)lo[1],
                     (long long)hi[1], owner, why);
            if (rmc_spmatrix_tile_nnz(S, t) != tr.nnz)
                FAIL("%s: tile_nnz(%lld) = %lld, want %lld", what, (long long)t,
                     (long long)rmc_spmatrix_tile_nnz(S, t), (long long)tr.nnz);
            rmc_csr_t view;
            st = rmc_spmatrix_tile_view(S, t, &view);
            if (st == RMC_OK) {
                if (view.own || !csr_vs_ref(&view, &tr, why, sizeof why))
                    FAIL("%s: tile_view(%lld): own %d, %s", what, (long long)t, view.own, why);
            } else if (!(st == RMC_ERR_NOT_FOUND && owner != me)) {
                FAIL("%s: tile_view(%lld) of a tile of rank %d -> %s", what, (long long)t, owner,
                     rmc_status_string(st));
            }
            rmc_csr_free(&out[t]);
            ref_free(&tr);
        }
    }
    free(out);
    free(rq);
    free(ord);
    /* random slices (different on every rank) */
    for (int q = 0; q < 3; q++) {
        int64_t r0 = rn(r, W->m + 1), r1 = r0 + rn(r, W->m - r0 + 1);
        int64_t c0 = rn(r, W->n + 1), c1 = c0 + rn(r, W->n - c0 + 1);
        ref_t want;
        ref_slice(W, r0, r1, c0, c1, &want);
        rmc_csr_t got;
        csr_junk(&got);
        rmc_status_t st = rmc_spmatrix_slice(S, r0, r1, c0, c1, &got);
        if (st != RMC_OK || got.idx64 != rmc_spmatrix_idx64(S) ||
            !csr_vs_ref(&got, &want, why, sizeof why))
            FAIL("%s: slice [%lld, %lld) x [%lld, %lld) -> %s (%s)", what, (long long)r0,
                 (long long)r1, (long long)c0, (long long)c1, rmc_status_string(st),
                 st ? rmc_last_error() : why);
        if (st == RMC_OK)
            rmc_csr_free(&got);
        ref_free(&want);
    }
    MPI_CHECK_ALL(fails == 0);
}

/* ----------------------------------------------------- 2. malformed: the test --- */

/* A broken copy of g, of the given fault or (when it does not apply) of rowptr's end. */
static void mal_any(uint64_t *r, const rmc_csr_t *g, const ref_t *gr, int kind, mal_t *x)
{
    if (!mal_make(r, g, gr, kind, x)) {
        mal_free(x);
        assert_true(mal_make(r, g, gr, M_RPEND, x));
    }
}

/* One collective round: broken tiles to tile_set, a broken whole to scatter, a broken part to
 * assemble; the matrix unchanged after each. */
static void mal_dist_round(uint64_t *s, uint64_t *r, int round)
{
    char desc[120];
    int64_t m = 2 + rn(s, 30), n = 2 + rn(s, 30);
    int idx64 = (int)rn(s, 2), kind = (int)rn(s, M_N);
    ref_t W;
    rand_ref(s, m, n, 25, &W);
    rmc_dist_h d = rand_dist_any(s, m, n, desc, sizeof desc);
    snprintf(where, sizeof where, "malformed round %d (%lld x %lld, %s, idx64 %d, %s)", round,
             (long long)m, (long long)n, desc, idx64, mal_name[kind]);
    rmc_spmatrix_h S;
    MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &S));
    rmc_csr_t wc;
    ref_to_csr(&W, idx64, &wc);
    MPI_CHECK_OK(rmc_spmatrix_scatter(S, 0, me == 0 ? &wc : NULL));
    /* tile_set of a broken tile of this rank's */
    int64_t nown = 0, lo[2], hi[2];
    MPI_CHECK_OK(rmc_dist_owned(d, me, NULL, 0, &nown));
    if (nown > 0) {
        int64_t *own = xmalloc((size_t)nown * 8);
        assert_int_equal(rmc_dist_owned(d, me, own, nown, &nown), RMC_OK);
        int64_t t = own[rn(r, nown)];
        assert_int_equal(rmc_dist_tile(d, t, lo, hi, NULL), RMC_OK);
        ref_t tr;
        rmc_csr_t tc;
        ref_slice(&W, lo[0], hi[0], lo[1], hi[1], &tr);
        ref_to_csr(&tr, (int)rn(r, 2), &tc);
        mal_t x;
        mal_any(r, &tc, &tr, kind, &x);
        if (SAB == 3)
            x.want = RMC_OK; /* self-test of this part alone */
        rmc_last_error_clear();
        rmc_status_t st = rmc_spmatrix_tile_set(S, t, &x.a);
        if (st == RMC_OK || (x.want != RMC_ERR_ARG && st != x.want))
            FAIL("tile_set of tile %lld broken (%s) -> %s (%s), want %s", (long long)t,
                 mal_name[x.kind], rmc_status_string(st), rmc_last_error(),
                 rmc_status_string(x.want));
        if (!mal_intact(&x))
            FAIL("tile_set changed its input");
        mal_free(&x);
        rmc_csr_free(&tc);
        ref_free(&tr);
        free(own);
    }
    MPI_CHECK_ALL(fails == 0);
    MPI_CHECK_OK(rmc_spmatrix_renew(S));
    verify_sparse(s, r, S, &W, "after broken tile_sets");
    /* scatter of a broken whole: refused on every rank */
    int root = (int)rn(s, np);
    mal_t x;
    memset(&x, 0, sizeof x);
    if (me == root)
        mal_any(r, &wc, &W, kind, &x);
    rmc_last_error_clear();
    rmc_status_t st = rmc_spmatrix_scatter(S, root, me == root ? &x.a : NULL);
    if (st == RMC_OK || (me == root && x.want != RMC_ERR_ARG && st != x.want))
        FAIL("scatter of a broken matrix from %d -> %s (%s)", root, rmc_status_string(st),
             rmc_last_error());
    if (me == root && !mal_intact(&x))
        FAIL("scatter changed its input");
    mal_free(&x);
    MPI_CHECK_ALL(fails == 0);
    verify_sparse(s, r, S, &W, "after a broken scatter");
    /* assemble with one broken part: refused on every rank */
    int64_t cut[65];
    for (int i = 0; i <= np; i++)
        cut[i] = m * i / np;
    int culprit = (int)rn(s, np);
    while (cut[culprit + 1] == cut[culprit])
        culprit = (culprit + 1) % np;
    ref_t pr;
    rmc_csr_t pc;
    ref_slice(&W, cut[me], cut[me + 1], 0, n, &pr);
    ref_to_csr(&pr, (int)rn(r, 2), &pc);
    memset(&x, 0, sizeof x);
    if (me == culprit)
        mal_any(r, &pc, &pr, kind, &x);
    st = rmc_spmatrix_assemble(S, cut[me], me == culprit ? &x.a : &pc);
    if (st == RMC_OK || (me == culprit && x.want != RMC_ERR_ARG && st != x.want))
        FAIL("assemble with rank %d's part broken -> %s (%s)", culprit, rmc_status_string(st),
             rmc_last_error());
    if (me == culprit && !mal_intact(&x))
        FAIL("assemble changed its input");
    mal_free(&x);
    rmc_csr_free(&pc);
    ref_free(&pr);
    MPI_CHECK_ALL(fails == 0);
    verify_sparse(s, r, S, &W, "after a broken assemble");
    MPI_CHECK_OK(rmc_spmatrix_destroy(S));
    rmc_dist_free(d);
    rmc_csr_free(&wc);
    ref_free(&W);
}

static void test_malformed(void **state)
{
    (void)state;
    knobs();
    MPI_CHECK_ALL(np <= 64);
    memset(n_mal, 0, sizeof n_mal);
    if (me == 0)
        printf("fuzz_sparse malformed: seed %" PRIu64 " np %d rounds %d + %d collective%s\n", SEED,
               np, MALROUNDS, DISTMAL, SAB ? " SABOTAGE" : "");
    char dir[256];
    mm_paths(dir, sizeof dir);
    uint64_t r = SEED * 0xA0761D6478BD642Full + 0x77u * (uint64_t)(me + 1);
    for (int round = 0; round < MALROUNDS && !fails; round++) {
        int64_t m = 1 + rn(&r, 12), n = 1 + rn(&r, 12);
        int idx64 = (int)rn(&r, 2), kind = (int)rn(&r, M_N);
        ref_t gr;
        rand_ref(&r, m, n, 35, &gr);
        rmc_csr_t g;
        ref_to_csr(&gr, idx64, &g);
        snprintf(where, sizeof where, "malformed %d (%lld x %lld nnz %lld, idx64 %d, %s)", round,
                 (long long)m, (long long)n, (long long)gr.nnz, idx64, mal_name[kind]);
        coo_checks(&r, &gr, idx64);
        mal_t x;
        if (mal_make(&r, &g, &gr, kind, &x)) {
            n_mal[kind]++;
            mal_calls(&r, &x, &g, &gr, dir);
        }
        mal_free(&x);
        rmc_csr_free(&g);
        ref_free(&gr);
    }
    assert_int_equal(rmdir(dir), 0);
    if (TRACE) {
        fprintf(stderr, "[rank %d] malformed kinds:", me);
        for (int k = 0; k < M_N; k++)
            fprintf(stderr, " %s %ld", mal_name[k], n_mal[k]);
        fprintf(stderr, "\n");
    }
    MPI_CHECK_ALL(fails == 0);
    uint64_t s = SEED * 0x2545F4914F6CDD1Dull + 99, rl = r;
    for (int round = 0; round < DISTMAL; round++)
        mal_dist_round(&s, &rl, round);
    MPI_CHECK_ALL(fails == 0);
}

/* ======================================================= 3. distributed ops === */

static const rmc_gemm_algo_t algos[] = {RMC_GEMM_AUTO,         RMC_GEMM_STATIONARY_C,
                                        RMC_GEMM_STATIONARY_A, RMC_GEMM_STATIONARY_B,
                                        RMC_GEMM_STEAL_RANDOM, RMC_GEMM_STEAL_LOCAL};
#define NALGO 6
static const char *const spa_name[] = {"DENSE", "HASH", "HEAP", "KWAY", "AUTO"};
static long n_spmm, n_spgemm, n_refused;

static int64_t rand_dim(uint64_t *s)
{
    return rn(s, 2) ? 1 + rn(s, min64(MAXDIM, 20)) : 1 + rn(s, MAXDIM);
}

/* A random m x n reference: a density from empty to 40 %, sometimes bands of empty rows and
 * columns, values -4..4 (explicit zeros among them), duplicate triplets summed. */
static void rand_sparse(uint64_t *s, int64_t m, int64_t n, ref_t *out)
{
    static const int permille[] = {0, 0, 5, 20, 60, 150, 400};
    int pm = permille[rn(s, 7)];
    int64_t br0 = 0, br1 = 0, bc0 = 0, bc1 = 0;
    if (rn(s, 5) < 2) {
        br0 = rn(s, m + 1), br1 = br0 + rn(s, m - br0 + 1);
        bc0 = rn(s, n + 1), bc1 = bc0 + rn(s, n - bc0 + 1);
    }
    int64_t cap = 16, ne = 0;
    int64_t *ri = xmalloc((size_t)cap * 8), *cj = xmalloc((size_t)cap * 8);
    double *v = xmalloc((size_t)cap * sizeof(double));
    int64_t extra = pm == 0 && rn(s, 2) ? 1 + rn(s, 3) : 0; /* a few entries in an empty one */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int take = pm && (int)rn(s, 1000) < pm;
            if (!take && extra && rn(s, m * n) < extra)
                take = 1;
            if (!take || (i >= br0 && i < br1) || (j >= bc0 && j < bc1))
                continue;
            for (int dup = 0; dup < 1 + (rn(s, 30) == 0); dup++) {
                if (ne == cap) {
                    cap *= 2;
                    ri = realloc(ri, (size_t)cap * 8);
                    cj = realloc(cj, (size_t)cap * 8);
                    v = realloc(v, (size_t)cap * sizeof(double));
                    assert_true(ri && cj && v);
                }
                ri[ne] = i, cj[ne] = j, v[ne++] = (double)(rn(s, 9) - 4);
            }
        }
    ref_build(out, m, n, ne, ri, cj, v);
    /* rmc_csr_from_coo agrees (duplicates summed) */
    rmc_csr_t c;
    char why[200];
    csr_junk(&c);
    rmc_status_t st = rmc_csr_from_coo(&c, m, n, ne, ri, cj, v, 1, (int)rn(s, 2));
    if (st != RMC_OK || !csr_vs_ref(&c, out, why, sizeof why))
        FAIL("from_coo of %lld triplets -> %s (%s)", (long long)ne, rmc_status_string(st),
             st ? rmc_last_error() : why);
    if (st == RMC_OK)
        rmc_csr_free(&c);
    free(ri);
    free(cj);
    free(v);
}

/* SpMM C = alpha A B + beta C with dense B of random width on distributions lining up with A's
 * splits (or, g given, SUMMA's grid), every algorithm, exact. */
static void spmm_runs(uint64_t *s, rmc_spmatrix_h SA, const ref_t *A, const split_t *SR,
                      const split_t *SK, const int *g)
{
    int64_t m = A->m, k = A->n, w = 1 + rn(s, 40);
    split_t SW, bk, bw, cm, cw;
    char d1[80], d2[80];
    rmc_dist_h db, dc;
    if (g) {
        int64_t bd[2] = {k, w}, cd[2] = {m, w};
        MPI_CHECK_OK(rmc_dist_regular(2, bd, NULL, g, &db));
        MPI_CHECK_OK(rmc_dist_regular(2, cd, NULL, g, &dc));
        snprintf(d1, sizeof d1, "regular div %dx%d", g[0], g[1]);
        snprintf(d2, sizeof d2, "regular div %dx%d", g[0], g[1]);
    } else {
        rand_split(s, w, &SW);
        db = dist_from(s, k, w, SK, &SW, d1, sizeof d1);
        dc = dist_from(s, m, w, SR, &SW, d2, sizeof d2);
    }
    dist_splits(db, &bk, &bw);
    dist_splits(dc, &cm, &cw);
    int lined = split_eq(SK, &bk) && split_eq(SR, &cm) && split_eq(&bw, &cw);
    int64_t nt[2];
    int summa_ok = g != NULL;
    rmc_dist_h ds[3] = {rmc_spmatrix_dist(SA), db, dc};
    for (int q = 0; q < 3 && g; q++) {
        rmc_dist_tile_grid(ds[q], nt);
        summa_ok = summa_ok && nt[0] == g[0] && nt[1] == g[1];
    }
    rmc_matrix_h B, C;
    MPI_CHECK_OK(rmc_matrix_create(db, RMC_ELEM_F64, &B));
    MPI_CHECK_OK(rmc_matrix_create(dc, RMC_ELEM_F64, &C));
    double *bv = xmalloc((size_t)(k * w) * sizeof(double));
    double *c0 = xmalloc((size_t)(m * w) * sizeof(double));
    double *ref = xmalloc((size_t)(m * w) * sizeof(double));
    double *got = xmalloc((size_t)(m * w) * sizeof(double));
    double *ab = xcalloc((size_t)(m * w), sizeof(double));
    for (int64_t i = 0; i < k * w; i++)
        bv[i] = (double)(rn(s, 7) - 3);
    for (int64_t i = 0; i < m * w; i++)
        c0[i] = (double)(rn(s, 11) - 5);
    for (int64_t i = 0; i < m; i++) /* A B, exact: small integers */
        for (int64_t p = A->rp[i]; p < A->rp[i + 1]; p++)
            for (int64_t j = 0; j < w; j++)
                ab[i * w + j] += A->v[p] * bv[A->ci[p] * w + j];
    int64_t z[2] = {0, 0}, bh[2] = {k, w}, ch[2] = {m, w};
    int ok = 1;
    if (me == 0)
        ok = rmc_matrix_put(B, z, bh, bv, NULL) == RMC_OK;
    MPI_CHECK_ALL(ok);
    static const double alphas[] = {1, -1, 0.5, 2, 0}, betas[] = {0, 1, -0.5, 2};
    static const char *const upd[] = {"acc", "queue", "copies"};
    int nrun = NALGO + (g != NULL);
    for (int q = 0; q < nrun; q++) {
        rmc_gemm_algo_t al = q < NALGO ? algos[q] : RMC_GEMM_SUMMA;
        double alpha = alphas[rn(s, 5)], beta = betas[rn(s, 4)];
        const char *u = upd[rn(s, 3)];
        setenv("RMC_GEMM_UPDATE", u, 1);
        rmc_status_t want = al == RMC_GEMM_SUMMA ? (summa_ok ? RMC_OK : RMC_ERR_UNSUPPORTED)
                                                 : (lined ? RMC_OK : RMC_ERR_ARG);
        /* RMC_FUZZ_BETA0NAN=1: with beta 0, C starts as NaN (BLAS does not read C then) */
        int nanc = beta == 0 && env_int("RMC_FUZZ_BETA0NAN", 0);
        for (int64_t i = 0; nanc && i < m * w; i++)
            got[i] = NAN;
        if (me == 0)
            ok = rmc_matrix_put(C, z, ch, nanc ? got : c0, NULL) == RMC_OK;
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        rmc_gemm_stats_t st;
        memset(&st, 0, sizeof st);
        rmc_last_error_clear();
        double t0 = MPI_Wtime();
        rmc_status_t rs = rmc_spmatrix_spmm(alpha, SA, B, beta, C, al, &st);
        if (TRACE > 1)
            fprintf(stderr, "[rank %d] spmm %s update %s: %.3f s\n", me, rmc_gemm_algo_name(al), u,
                    MPI_Wtime() - t0);
        n_spmm++;
        n_refused += rs != RMC_OK;
        if (rs != want)
            FAIL("spmm %s (B %lld x %lld on %s, C on %s, update %s, alpha %g beta %g) -> %s (%s), "
                 "want %s",
                 rmc_gemm_algo_name(al), (long long)k, (long long)w, d1, d2, u, alpha, beta,
                 rmc_status_string(rs), rmc_last_error(), rmc_status_string(want));
        else if (rs == RMC_OK && al != RMC_GEMM_AUTO && st.algo != al)
            FAIL("spmm %s: the statistics say %s ran", rmc_gemm_algo_name(al),
                 rmc_gemm_algo_name(st.algo));
        MPI_CHECK_ALL(fails == 0);
        if (me == 0) {
            for (int64_t i = 0; i < m * w; i++)
                ref[i] = rs == RMC_OK ? alpha * ab[i] + (nanc ? 0 : beta * c0[i])
                         : nanc       ? NAN
                                      : c0[i];
            if (SAB == 1)
                ref[0] += 1;
            ok = rmc_matrix_get(C, z, ch, got, NULL) == RMC_OK;
            for (int64_t i = 0; ok && i < m * w; i++)
                if (!same_double(got[i] + 0.0, ref[i] + 0.0)) {
                    FAIL("spmm %s (update %s, alpha %g beta %g, B %lld wide on %s, C on %s): "
                         "C[%lld][%lld] = %.17g, want %.17g%s",
                         rmc_gemm_algo_name(al), u, alpha, beta, (long long)w, d1, d2,
                         (long long)(i / w), (long long)(i % w), got[i], ref[i],
                         rs == RMC_OK ? "" : " (unchanged)");
                    break;
                }
        }
        MPI_CHECK_ALL(ok && fails == 0);
    }
    unsetenv("RMC_GEMM_UPDATE");
    MPI_CHECK_OK(rmc_matrix_destroy(B));
    MPI_CHECK_OK(rmc_matrix_destroy(C));
    rmc_dist_free(db);
    rmc_dist_free(dc);
    free(bv);
    free(c0);
    free(ref);
    free(got);
    free(ab);
}

/* cur with the rectangle [r0, r1) x [c0, c1) replaced by tile (a tile_set in the model). */
static void ref_replace(ref_t *cur, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                        const ref_t *tile)
{
    int64_t ne = cur->nnz + tile->nnz, e = 0;
    int64_t *ri = xmalloc((size_t)ne * 8 + 8), *cj = xmalloc((size_t)ne * 8 + 8);
    double *v = xmalloc((size_t)ne * 8 + 8);
    for (int64_t i = 0; i < cur->m; i++)
        for (int64_t p = cur->rp[i]; p < cur->rp[i + 1]; p++)
            if (i < r0 || i >= r1 || cur->ci[p] < c0 || cur->ci[p] >= c1)
                ri[e] = i, cj[e] = cur->ci[p], v[e++] = cur->v[p];
    for (int64_t i = 0; i < tile->m; i++)
        for (int64_t p = tile->rp[i]; p < tile->rp[i + 1]; p++)
            ri[e] = r0 + i, cj[e] = c0 + tile->ci[p], v[e++] = tile->v[p];
    ref_t out;
    ref_build(&out, cur->m, cur->n, e, ri, cj, v);
    ref_free(cur);
    *cur = out;
    free(ri);
    free(cj);
    free(v);
}

static void ref_copy(ref_t *dst, const ref_t *src)
{
    ref_free(dst);
    ref_slice(src, 0, src->m, 0, src->n, dst);
}

/* SpGEMM C = A B on dc: every algorithm, every accumulator (five of the algorithms with one each,
 * in a random rotation); before some, tiles of C set and not renewed; gathered and compared with
 * the serial Gustavson product, exactly; a refused multiplication leaves C as it was. */
static void spgemm_runs(uint64_t *s, rmc_spmatrix_h SA, rmc_spmatrix_h SB, const ref_t *A,
                        const ref_t *B, rmc_dist_h dc, int lined, int summa, int summa_ok,
                        const char *what)
{
    ref_t P, E;
    ref_gemm(A, B, &P);
    if (SAB && P.nnz > 0)
        P.v[P.nnz - 1] += 1;
    else if (SAB)
        P.m++;
    E.m = A->m, E.n = B->n, E.nnz = 0;
    E.rp = xcalloc((size_t)E.m + 1, 8), E.ci = NULL, E.v = NULL;
    rmc_spmatrix_h C;
    MPI_CHECK_OK(rmc_spmatrix_create(dc, rmc_spmatrix_idx64(SA), &C));
    ref_t cur = {0}; /* C as gather must see it: every rank's tiles with its tile_sets */
    ref_copy(&cur, &E);
    int nrun = NALGO + (summa != 0), spa0 = (int)rn(s, 5);
    for (int q = 0; q < nrun; q++) {
        if (rn(s, 3) == 0) { /* tiles of C set (not renewed): the multiplication replaces them */
            int64_t nt = rmc_dist_ntiles(dc), lo[2], hi[2];
            for (int64_t t = 0; t < nt; t++) {
                if (rn(s, 4))
                    continue;
                int owner;
                assert_int_equal(rmc_dist_tile(dc, t, lo, hi, &owner), RMC_OK);
                ref_t gt;
                rand_ref(s, hi[0] - lo[0], hi[1] - lo[1], 30, &gt);
                if (owner == me) {
                    rmc_csr_t gc;
                    ref_to_csr(&gt, (int)rn(s, 2), &gc);
                    rmc_status_t st = rmc_spmatrix_tile_set(C, t, &gc);
                    if (st != RMC_OK)
                        FAIL("tile_set of C's tile %lld -> %s (%s)", (long long)t,
                             rmc_status_string(st), rmc_last_error());
                    rmc_csr_free(&gc);
                } else {
                    rn(s, 2);
                }
                ref_replace(&cur, lo[0], hi[0], lo[1], hi[1], &gt);
                ref_free(&gt);
            }
        }
        /* every algorithm; the first five with the five accumulators in turn, the others with
         * a random one */
        rmc_gemm_algo_t al = q < NALGO ? algos[q] : RMC_GEMM_SUMMA;
        rmc_spa_kind_t spa = (rmc_spa_kind_t)(q < 5 ? (spa0 + q) % 5 : rn(s, 5));
        rmc_status_t want = al == RMC_GEMM_SUMMA ? (summa_ok ? RMC_OK : RMC_ERR_UNSUPPORTED)
                                                 : (lined ? RMC_OK : RMC_ERR_ARG);
        rmc_gemm_stats_t st;
        memset(&st, 0, sizeof st);
        rmc_last_error_clear();
        double t0 = MPI_Wtime();
        rmc_status_t rs = rmc_spmatrix_spgemm(SA, SB, C, al, spa, &st);
        if (TRACE > 1)
            fprintf(stderr, "[rank %d] spgemm %s %s %s: %.3f s\n", me, what, rmc_gemm_algo_name(al),
                    spa_name[spa], MPI_Wtime() - t0);
        n_spgemm++;
        n_refused += rs != RMC_OK;
        if (rs != want)
            FAIL("spgemm %s %s %s -> %s (%s), want %s", what, rmc_gemm_algo_name(al), spa_name[spa],
                 rmc_status_string(rs), rmc_last_error(), rmc_status_string(want));
        else if (rs == RMC_OK && al != RMC_GEMM_AUTO && st.algo != al)
            FAIL("spgemm %s: the statistics say %s ran", rmc_gemm_algo_name(al),
                 rmc_gemm_algo_name(st.algo));
        MPI_CHECK_ALL(fails == 0);
        if (rs == RMC_OK)
            ref_copy(&cur, &P);
        int root = (int)rn(s, np);
        rmc_csr_t g;
        rmc_csr_init(&g, 0);
        MPI_CHECK_OK(rmc_spmatrix_gather(C, root, me == root ? &g : NULL));
        char why[200];
        if (me == root && !csr_vs_ref(&g, &cur, why, sizeof why))
            FAIL("spgemm %s %s %s%s: %s", what, rmc_gemm_algo_name(al), spa_name[spa],
                 rs == RMC_OK ? "" : " (refused: C unchanged)", why);
        rmc_csr_free(&g);
        int64_t nnz = -1;
        MPI_CHECK_OK(rmc_spmatrix_nnz(C, &nnz));
        if (nnz != cur.nnz)
            FAIL("spgemm %s %s %s: rmc_spmatrix_nnz %lld, want %lld", what, rmc_gemm_algo_name(al),
                 spa_name[spa], (long long)nnz, (long long)cur.nnz);
        MPI_CHECK_ALL(fails == 0);
    }
    MPI_CHECK_OK(rmc_spmatrix_destroy(C));
    ref_free(&P);
    ref_free(&E);
    ref_free(&cur);
}

/* The local kernels on the same data: rmc_csr_spgemm (every accumulator over the ranks and
 * cases), rmc_csr_spmm, rmc_csr_sum of three matrices. */
static void local_kernels(uint64_t *r, const ref_t *A, const ref_t *B, int idx64, int c)
{
    char why[200];
    rmc_csr_t a, b, out;
    ref_to_csr(A, idx64, &a);
    ref_to_csr(B, idx64, &b);
    ref_t P;
    ref_gemm(A, B, &P);
    rmc_spa_kind_t kind = (rmc_spa_kind_t)((me + c) % 5);
    double flops = 0;
    csr_junk(&out);
    rmc_status_t st = rmc_csr_spgemm(&out, &a, &b, kind, &flops);
    if (st != RMC_OK || out.idx64 != idx64 || !csr_vs_ref(&out, &P, why, sizeof why))
        FAIL("rmc_csr_spgemm %s -> %s (%s)", spa_name[kind], rmc_status_string(st),
             st ? rmc_last_error() : why);
    if (st == RMC_OK)
        rmc_csr_free(&out);
    /* spmm with a random dense B */
    int64_t w = 1 + rn(r, 9), m = A->m, k = A->n;
    double *bv = xmalloc((size_t)(k * w) * 8), *cv = xmalloc((size_t)(m * w) * 8);
    double *ref = xmalloc((size_t)(m * w) * 8);
    for (int64_t i = 0; i < k * w; i++)
        bv[i] = (double)(rn(r, 7) - 3);
    for (int64_t i = 0; i < m * w; i++)
        cv[i] = ref[i] = (double)(rn(r, 7) - 3);
    double alpha = (double)(rn(r, 5) - 2);
    if (alpha != 0)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = A->rp[i]; p < A->rp[i + 1]; p++)
                for (int64_t j = 0; j < w; j++)
                    ref[i * w + j] += alpha * A->v[p] * bv[A->ci[p] * w + j];
    st = rmc_csr_spmm(alpha, &a, bv, w, w, cv, w);
    for (int64_t i = 0; st == RMC_OK && i < m * w; i++)
        if (cv[i] != ref[i]) {
            FAIL("rmc_csr_spmm (alpha %g): C[%lld] = %g, want %g", alpha, (long long)i, cv[i],
                 ref[i]);
            break;
        }
    if (st != RMC_OK)
        FAIL("rmc_csr_spmm -> %s (%s)", rmc_status_string(st), rmc_last_error());
    /* sum of A and two more of its shape */
    ref_t X, Y, S;
    rand_ref(r, m, k, 20, &X);
    rand_ref(r, m, k, 5, &Y);
    int64_t ne = A->nnz + X.nnz + Y.nnz, e = 0;
    int64_t *ri = xmalloc((size_t)ne * 8 + 8), *cj = xmalloc((size_t)ne * 8 + 8);
    double *v = xmalloc((size_t)ne * 8 + 8);
    const ref_t *parts[3] = {A, &X, &Y};
    for (int q = 0; q < 3; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = parts[q]->rp[i]; p < parts[q]->rp[i + 1]; p++)
                ri[e] = i, cj[e] = parts[q]->ci[p], v[e++] = parts[q]->v[p];
    ref_build(&S, m, k, ne, ri, cj, v);
    rmc_csr_t x, y;
    ref_to_csr(&X, (int)rn(r, 2), &x);
    ref_to_csr(&Y, (int)rn(r, 2), &y);
    const rmc_csr_t *in[3] = {&a, &x, &y};
    kind = (rmc_spa_kind_t)rn(r, 5);
    csr_junk(&out);
    st = rmc_csr_sum(&out, in, 3, kind);
    if (st != RMC_OK || out.idx64 != idx64 || !csr_vs_ref(&out, &S, why, sizeof why))
        FAIL("rmc_csr_sum %s -> %s (%s)", spa_name[kind], rmc_status_string(st),
             st ? rmc_last_error() : why);
    if (st == RMC_OK)
        rmc_csr_free(&out);
    rmc_csr_free(&x);
    rmc_csr_free(&y);
    rmc_csr_free(&a);
    rmc_csr_free(&b);
    ref_free(&X);
    ref_free(&Y);
    ref_free(&S);
    ref_free(&P);
    free(ri);
    free(cj);
    free(v);
    free(bv);
    free(cv);
    free(ref);
}

static void dist_case(uint64_t *s, uint64_t *r, int c)
{
    int64_t m = rand_dim(s), k = rand_dim(s), n = rand_dim(s);
    int idx64 = (int)rn(s, 2), mode = (int)rn(s, 10), g[2] = {1, 1};
    int square = mode <= 2, summa = mode == 3 || mode == 4;
    split_t SR, SK, SN;
    char da_d[80], db_d[80], dc_d[80];
    rmc_dist_h da, db, dc;
    if (square) {
        k = m;
        rand_split(s, m, &SR);
        SK = SR;
        da = dist_from(s, m, m, &SR, &SR, da_d, sizeof da_d);
    } else if (summa) {
        int divs[64], nd = 0;
        for (int q = 1; q <= np; q++)
            if (np % q == 0)
                divs[nd++] = q;
        g[0] = divs[rn(s, nd)];
        g[1] = np / g[0];
        int64_t dims[2] = {m, k};
        MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, g, &da));
        snprintf(da_d, sizeof da_d, "regular div %dx%d", g[0], g[1]);
        dist_splits(da, &SR, &SK);
    } else if (mode <= 6) {
        da = dist_2d_rand(s, m, k, da_d, sizeof da_d);
        dist_splits(da, &SR, &SK);
    } else {
        rand_split(s, m, &SR);
        rand_split(s, k, &SK);
        da = dist_from(s, m, k, &SR, &SK, da_d, sizeof da_d);
    }
    snprintf(where, sizeof where, "case %d: A %lld x %lld on %s, n %lld, idx64 %d%s%s", c,
             (long long)m, (long long)k, da_d, (long long)n, idx64, square ? ", square" : "",
             summa ? ", SUMMA grid" : "");
    if (me == 0 && TRACE)
        printf("%s\n", where);
    ref_t A, B;
    rand_sparse(s, m, k, &A);
    rmc_spmatrix_h SA, SB;
    MPI_CHECK_OK(rmc_spmatrix_create(da, idx64, &SA));
    fill_sparse(s, r, SA, &A);
    verify_sparse(s, r, SA, &A, "A");
    spmm_runs(s, SA, &A, &SR, &SK, summa ? g : NULL);
    /* B and C sparse */
    if (summa) {
        int64_t bd[2] = {k, n}, cd[2] = {m, n};
        MPI_CHECK_OK(rmc_dist_regular(2, bd, NULL, g, &db));
        MPI_CHECK_OK(rmc_dist_regular(2, cd, NULL, g, &dc));
        snprintf(db_d, sizeof db_d, "regular div");
        snprintf(dc_d, sizeof dc_d, "regular div");
    } else {
        rand_split(s, n, &SN);
        db = dist_from(s, k, n, &SK, &SN, db_d, sizeof db_d);
        dc = dist_from(s, m, n, &SR, &SN, dc_d, sizeof dc_d);
    }
    split_t bk, bn, cm, cn;
    dist_splits(db, &bk, &bn);
    dist_splits(dc, &cm, &cn);
    int lined = split_eq(&SK, &bk) && split_eq(&SR, &cm) && split_eq(&bn, &cn);
    int summa_ok = summa;
    int64_t nt[2];
    rmc_dist_h ds[3] = {da, db, dc};
    for (int q = 0; q < 3 && summa; q++) {
        rmc_dist_tile_grid(ds[q], nt);
        summa_ok = summa_ok && nt[0] == g[0] && nt[1] == g[1];
    }
    rand_sparse(s, k, n, &B);
    MPI_CHECK_OK(rmc_spmatrix_create(db, idx64, &SB));
    fill_sparse(s, r, SB, &B);
    verify_sparse(s, r, SB, &B, "B");
    char what[300];
    snprintf(what, sizeof what, "A*B (B %lld x %lld on %s, C on %s%s)", (long long)k, (long long)n,
             db_d, dc_d, lined ? "" : ", grids not lined up");
    spgemm_runs(s, SA, SB, &A, &B, dc, lined, summa, summa_ok, what);
    if (square) {
        char d2[80];
        rmc_dist_h dc2 = dist_from(s, m, m, &SR, &SR, d2, sizeof d2);
        snprintf(what, sizeof what, "A*A (C on %s)", d2);
        spgemm_runs(s, SA, SA, &A, &A, dc2, 1, 0, 0, what);
        rmc_dist_free(dc2);
    }
    local_kernels(r, &A, &B, idx64, c);
    MPI_CHECK_ALL(fails == 0);
    MPI_CHECK_OK(rmc_spmatrix_destroy(SA));
    MPI_CHECK_OK(rmc_spmatrix_destroy(SB));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
    ref_free(&A);
    ref_free(&B);
}

static void test_dist_ops(void **state)
{
    (void)state;
    knobs();
    MPI_CHECK_ALL(np <= 64); /* (the permutations and cuts here) */
    n_spmm = n_spgemm = n_refused = n_tiles = 0;
    memset(n_fill, 0, sizeof n_fill);
    if (me == 0)
        printf("fuzz_sparse dist: seed %" PRIu64 " np %d cases %d maxdim %d%s\n", SEED, np, CASES,
               MAXDIM, SAB ? " SABOTAGE" : "");
    uint64_t s = SEED * 0xBF58476D1CE4E5B9ull + 3;
    uint64_t r = SEED * 0x94D049BB133111EBull + 0x55u * (uint64_t)(me + 1);
    for (int c = 0; c < CASES; c++) {
        double t0 = MPI_Wtime();
        dist_case(&s, &r, c);
        if (TRACE && me == 0)
            printf("case %d: %.3f s\n", c, MPI_Wtime() - t0);
    }
    if (TRACE)
        fprintf(stderr,
                "[rank %d] dist: spmm %ld spgemm %ld (refused as expected %ld), tiles read %ld, "
                "filled by scatter %ld assemble %ld tile_set %ld\n",
                me, n_spmm, n_spgemm, n_refused, n_tiles, n_fill[0], n_fill[1], n_fill[2]);
    MPI_CHECK_ALL(fails == 0);
}

MPITEST_MAIN("fuzz_sparse", cttest_setup, mpitest_teardown_rmc, test_mm_fuzz, test_malformed,
             test_dist_ops)
