/* Random sparse matrices (include/rmc/csr.h): R-MAT and Erdős–Rényi, deterministic from a seed and
 * independent of the row range asked for. Randomness is counter-based: draw j of a stream is
 * splitmix64's j-th output from the stream's key, and a stream's key is a hash of (seed, what it
 * is for, which edge or row). So any edge or row is generated alone, in any order, by any rank. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "csr_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

#define GOLDEN   0x9e3779b97f4a7c15ull
#define DOM_RMAT 0x524d4154ull /* "RMAT": one stream per edge */
#define DOM_ER   0x45524452ull /* "ERDR": one stream per row */

/* splitmix64's finalizer */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The key of stream `i` of a domain under a seed. */
static inline uint64_t stream_key(uint64_t seed, uint64_t dom, uint64_t i)
{
    return mix64(mix64(seed ^ mix64(dom)) + (i + 1) * GOLDEN);
}

/* Draw j of a stream (splitmix64's j-th output). */
static inline uint64_t draw(uint64_t key, uint64_t j)
{
    return mix64(key + (j + 1) * GOLDEN);
}

/* Uniform in [0, 1) and in (0, 1], 53 bits. */
static inline double unit(uint64_t x)
{
    return (double)(x >> 11) * 0x1p-53;
}
static inline double unit_pos(uint64_t x)
{
    return (double)((x >> 11) + 1) * 0x1p-53;
}

/* ------------------------------------------------------------------------ R-MAT --- */

/* Edge e: at level l (of scale) the row's bit is 1 with probability c + d; the column's bit, given
 * the row's, is 1 with probability b / (a + b) (row bit 0) or d / (c + d) (row bit 1): the quadrant
 * probabilities a, b, c, d of the recursive descent, factored so that the row is known first and
 * an edge whose row leaves [r0, r1) is dropped as soon as its row range does. Draws 0..scale-1 are
 * the row's bits, scale..2 scale-1 the column's, 2 scale the value. Returns 0 when dropped. */
static int rmat_edge(uint64_t key, int scale, double a, double b, double c, int64_t r0, int64_t r1,
                     int64_t *row, int64_t *col, double *val)
{
    double ab = a + b, cd = 1.0 - ab;
    int64_t lo = 0, j = 0;
    for (int l = 0; l < scale; l++) {
        int64_t half = (int64_t)1 << (scale - 1 - l);
        if (unit(draw(key, (uint64_t)l)) >= ab)
            lo += half;
        if (lo >= r1 || lo + half <= r0) /* the rows left, [lo, lo + half), miss the range */
            return 0;
    }
    for (int l = 0; l < scale; l++) {
        int top = !((lo >> (scale - 1 - l)) & 1);
        double u = unit(draw(key, (uint64_t)(scale + l)));
        if (top ? u * ab >= a : u * cd >= c)
            j |= (int64_t)1 << (scale - 1 - l);
    }
    *row = lo;
    *col = j;
    *val = unit_pos(draw(key, (uint64_t)(2 * scale)));
    return 1;
}

/* Growing triplet arrays. */
typedef struct {
    int64_t n, cap, *row, *col;
    double *val;
} trip_t;

static int trip_push(trip_t *t, int64_t i, int64_t j, double v)
{
    if (t->n == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 4096;
        int64_t *r = realloc(t->row, (size_t)cap * sizeof(int64_t));
        if (r)
            t->row = r;
        int64_t *c = r ? realloc(t->col, (size_t)cap * sizeof(int64_t)) : NULL;
        if (c)
            t->col = c;
        double *v2 = c ? realloc(t->val, (size_t)cap * sizeof(double)) : NULL;
        if (!v2)
            return -1;
        t->val = v2;
        t->cap = cap;
    }
    t->row[t->n] = i;
    t->col[t->n] = j;
    t->val[t->n++] = v;
    return 0;
}

static rmc_status_t check_prob(double x, const char *name, const char *fn)
{
    if (!(x >= 0.0 && x <= 1.0))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s = %g is not a probability in [0, 1]", name, x);
    return RMC_OK;
}

rmc_status_t rmc_csr_rmat(rmc_csr_t *out, int scale, int edge_factor, double a, double b, double c,
                          uint64_t seed, int64_t r0, int64_t r1, int idx64)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_out_begin(out, idx64, fn);
    if (!st)
        st = check_prob(a, "a", fn);
    if (!st)
        st = check_prob(b, "b", fn);
    if (!st)
        st = check_prob(c, "c", fn);
    if (st)
        return st;
    if (a + b + c > 1.0 + 1e-12)
        return rmc_error_set(RMC_ERR_ARG, fn, "a + b + c = %g > 1 (d = 1 - a - b - c)", a + b + c);
    if (scale < 0 || scale > 62)
        return rmc_error_set(RMC_ERR_ARG, fn, "scale %d outside [0, 62]", scale);
    if (edge_factor < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "edge_factor %d < 0", edge_factor);
    int64_t n = (int64_t)1 << scale;
    if (!rmcc_fits(n, idx64))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             "scale %d: 2^%d rows do not fit 32-bit indices (scale <= 30): use "
                             "idx64 = 1",
                             scale, scale);
    if (edge_factor > 0 && n > INT64_MAX / edge_factor)
        return rmc_error_set(RMC_ERR_TOO_BIG, fn, "edge_factor %d * 2^%d edges overflow 64 bits",
                             edge_factor, scale);
    if (r0 < 0 || r1 < r0 || r1 > n)
        return rmc_error_set(RMC_ERR_ARG, fn, "rows [" I64 ", " I64 ") not within [0, " I64 "]",
                             LL(r0), LL(r1), LL(n));
    int64_t edges = n * edge_factor;
    trip_t t = {0};
    for (int64_t e = 0; e < edges && r0 < r1; e++) {
        int64_t i, j;
        double v;
        if (rmat_edge(stream_key(seed, DOM_RMAT, (uint64_t)e), scale, a, b, c, r0, r1, &i, &j,
                      &v) &&
            trip_push(&t, i - r0, j, v)) {
            st = rmc_error_set(RMC_ERR_NOMEM, fn, "no memory for " I64 " edges", LL(t.n + 1));
            goto out;
        }
    }
    st = rmcc_csr_build(out, r1 - r0, n, t.n, t.row, t.col, t.val, 1, idx64, fn);
out:
    free(t.row);
    free(t.col);
    free(t.val);
    return st;
}

/* ---------------------------------------------------------------- Erdős–Rényi --- */

/* Row i of G(n, p): the gaps between its nonzeros are geometric (floor(log u / log(1 - p)) for u
 * uniform in (0, 1]), so the cost is O(1 + nonzeros). Writes the columns and values (when cols is
 * not NULL) and returns their number. */
static int64_t er_row(uint64_t seed, int64_t i, int64_t ncols, double p, void *cols, double *vals,
                      int idx64)
{
    if (p <= 0.0 || ncols == 0)
        return 0;
    uint64_t key = stream_key(seed, DOM_ER, (uint64_t)i), j = 0;
    double lq = p < 1.0 ? log1p(-p) : 0.0;
    int64_t col = -1, w = 0;
    for (;;) {
        if (p < 1.0) {
            double s = floor(log(unit_pos(draw(key, j++))) / lq);
            if (!(s < (double)(ncols - 1 - col)))
                break;
            col += (int64_t)s + 1;
        } else if (++col >= ncols) {
            break;
        }
        double v = unit_pos(draw(key, j++));
        if (cols) {
            rmcc_idx_set(cols, w, col, idx64);
            vals[w] = v;
        }
        w++;
    }
    return w;
}

rmc_status_t rmc_csr_erdos_renyi(rmc_csr_t *out, int64_t nrows, int64_t ncols, double p,
                                 uint64_t seed, int64_t r0, int64_t r1, int idx64)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_out_begin(out, idx64, fn);
    if (!st)
        st = check_prob(p, "p", fn);
    if (st)
        return st;
    if (nrows < 0 || ncols < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "negative size " I64 " x " I64, LL(nrows), LL(ncols));
    if (r0 < 0 || r1 < r0 || r1 > nrows)
        return rmc_error_set(RMC_ERR_ARG, fn, "rows [" I64 ", " I64 ") not within [0, " I64 "]",
                             LL(r0), LL(r1), LL(nrows));
    if (!rmcc_fits(nrows, idx64) || !rmcc_fits(ncols, idx64))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             "a " I64 " x " I64 " matrix does not fit 32-bit indices (at most %d): "
                             "use idx64 = 1",
                             LL(nrows), LL(ncols), INT32_MAX);
    /* count each row, then generate it again into its place */
    int64_t m = r1 - r0, nnz = 0;
    int64_t *cnt = rmcc_malloc_n(m, sizeof(int64_t));
    if (!cnt)
        return rmc_error_set(RMC_ERR_NOMEM, fn, "no memory for " I64 " rows", LL(m));
    for (int64_t i = 0; i < m; i++) {
        cnt[i] = er_row(seed, r0 + i, ncols, p, NULL, NULL, idx64);
        nnz += cnt[i];
    }
    if (!rmcc_fits(nnz, idx64)) {
        free(cnt);
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             I64 " nonzeros do not fit 32-bit indices (at most %d): use idx64 = 1",
                             LL(nnz), INT32_MAX);
    }
    if ((st = rmcc_csr_alloc(out, m, ncols, nnz, idx64, fn))) {
        free(cnt);
        return st;
    }
    int64_t w = 0;
    for (int64_t i = 0; i < m; i++) {
        er_row(seed, r0 + i, ncols, p, rmcc_idx_at(out->colind, w, idx64), out->val + w, idx64);
        w += cnt[i];
        rmcc_idx_set(out->rowptr, i + 1, w, idx64);
    }
    free(cnt);
    return RMC_OK;
}
