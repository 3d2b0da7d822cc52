/* ga-compat: matrix operations. Diagonal operations, row / column scaling, transpose and
 * symmetrize on 2-D arrays; the 1-D operations pack / unpack, scan_add / scan_copy and
 * patch_enum; GEMM (GA_Dgemm ... GA_Cgemm, GA_Matmul_patch, NGA_Matmul_patch) on RMC's
 * multiplication engine (rmc_matrix_gemm / _patch, RMC_GEMM_AUTO) directly on the arrays'
 * matrices, on every rank or a group's (arrays with ghosts go through a temporary without ghosts).
 *
 * Each rank works on the blocks it owns, in place (gai_block_ptr), fetching or storing the other
 * operand's matching part with the patch path (gai_xfer); every call is collective over the
 * array's group and starts and ends with a sync, as GA's do. The 1-D operations agree per-block
 * summaries (counts, scan carries) with one reduction over the group. */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

/* ------------------------------------------------------------------ elements --- */

void gai_elem_add(int t, void *d, const void *s)
{
    switch (t) {
    case C_INT:
        *(int32_t *)d += *(const int32_t *)s;
        break;
    case C_LONG:
    case C_LONGLONG:
        *(int64_t *)d += *(const int64_t *)s;
        break;
    case C_FLOAT:
        *(float *)d += *(const float *)s;
        break;
    case C_DBL:
        *(double *)d += *(const double *)s;
        break;
    case C_SCPL:
        ((float *)d)[0] += ((const float *)s)[0], ((float *)d)[1] += ((const float *)s)[1];
        break;
    default:
        ((double *)d)[0] += ((const double *)s)[0], ((double *)d)[1] += ((const double *)s)[1];
    }
}

/* d *= s (complex product for complex types) */
static void e_mul(int t, void *d, const void *s)
{
    switch (t) {
    case C_INT:
        *(int32_t *)d *= *(const int32_t *)s;
        break;
    case C_LONG:
    case C_LONGLONG:
        *(int64_t *)d *= *(const int64_t *)s;
        break;
    case C_FLOAT:
        *(float *)d *= *(const float *)s;
        break;
    case C_DBL:
        *(double *)d *= *(const double *)s;
        break;
    case C_SCPL: {
        float *x = d;
        const float *y = s;
        float re = x[0] * y[0] - x[1] * y[1], im = x[0] * y[1] + x[1] * y[0];
        x[0] = re, x[1] = im;
        break;
    }
    default: {
        double *x = d;
        const double *y = s;
        double re = x[0] * y[0] - x[1] * y[1], im = x[0] * y[1] + x[1] * y[0];
        x[0] = re, x[1] = im;
    }
    }
}

/* d = start + k * inc */
static void e_enum(int t, void *d, const void *start, const void *inc, int64_t k)
{
    switch (t) {
    case C_INT:
        *(int32_t *)d = (int32_t)(*(const int32_t *)start + k * *(const int32_t *)inc);
        break;
    case C_LONG:
    case C_LONGLONG:
        *(int64_t *)d = *(const int64_t *)start + k * *(const int64_t *)inc;
        break;
    case C_FLOAT:
        *(float *)d = *(const float *)start + (float)k * *(const float *)inc;
        break;
    case C_DBL:
        *(double *)d = *(const double *)start + (double)k * *(const double *)inc;
        break;
    case C_SCPL:
        for (int i = 0; i < 2; i++)
            ((float *)d)[i] = ((const float *)start)[i] + (float)k * ((const float *)inc)[i];
        break;
    default:
        for (int i = 0; i < 2; i++)
            ((double *)d)[i] = ((const double *)start)[i] + (double)k * ((const double *)inc)[i];
    }
}

/* d = (d + s) / 2, floating-point types */
static void e_halfsum(int t, void *d, const void *s)
{
    int n = t == C_SCPL || t == C_DCPL ? 2 : 1;
    for (int i = 0; i < n; i++)
        if (t == C_FLOAT || t == C_SCPL)
            ((float *)d)[i] = (((float *)d)[i] + ((const float *)s)[i]) * 0.5f;
        else
            ((double *)d)[i] = (((double *)d)[i] + ((const double *)s)[i]) * 0.5;
}

static int e_nonzero(int t, const void *p)
{
    switch (t) {
    case C_INT:
        return *(const int32_t *)p != 0;
    case C_LONG:
    case C_LONGLONG:
        return *(const int64_t *)p != 0;
    case C_FLOAT:
        return *(const float *)p != 0;
    case C_DBL:
        return *(const double *)p != 0;
    case C_SCPL:
        return ((const float *)p)[0] != 0 || ((const float *)p)[1] != 0;
    default:
        return ((const double *)p)[0] != 0 || ((const double *)p)[1] != 0;
    }
}

/* ------------------------------------------------------------------ blocks --- */

/* The logical blocks this rank owns (malloc'd, *n of them). */
static int64_t *owned(gai_array_t *a, int64_t *n, const char *fn)
{
    gai_check(rmc_dist_owned(a->dist, rmc_rank(), NULL, 0, n), fn, "rmc_dist_owned");
    int64_t *t = malloc(sizeof(int64_t) * (size_t)(*n > 0 ? *n : 1));
    if (!t)
        gai_error(fn, "out of memory");
    gai_check(rmc_dist_owned(a->dist, rmc_rank(), t, *n, n), fn, "rmc_dist_owned");
    return t;
}

/* In-place pointer to owned block t ([lo, hi)) and its row stride ld (2-D) in elements. */
static char *block(gai_array_t *a, int64_t t, int64_t lo[], int64_t hi[], int64_t *ld,
                   const char *fn)
{
    int64_t l[GA_MAX_DIM];
    rmc_dist_tile(a->dist, t, lo, hi, NULL);
    char *p = gai_block_ptr(a, t, l);
    if (!p)
        gai_error(fn, "array '%s': block %lld is not addressable here", a->name, (long long)t);
    if (ld)
        *ld = a->ndim > 1 ? l[0] : 1;
    return p;
}

static void *xmalloc(size_t n, const char *fn)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        gai_error(fn, "out of memory (%zu bytes)", n);
    return p;
}

static void need_2d(gai_array_t *a, const char *fn)
{
    if (a->ndim != 2)
        gai_error(fn, "array '%s' has %d dimensions: a 2-D array is needed", a->name, a->ndim);
}

static void same_type(gai_array_t *a, gai_array_t *b, const char *fn)
{
    if (a->type != b->type)
        gai_error(fn, "arrays '%s' (%s) and '%s' (%s) do not have the same type", a->name,
                  gai_type_name(a->type), b->name, gai_type_name(b->type));
}

/* ------------------------------------------------------------ diagonal ops --- */

enum { D_GET, D_SET, D_ADD, D_SHIFT, D_ZERO, D_ROWS, D_COLS };

/* Collective. A temporary array like x (its handle), with x's data when `data`: for an operation
 * in which x and `other` share memory (GA_Overlay), so x is read (or written) through its own
 * copy. Aborts naming both when the memory limit refuses it. */
static int shared_copy(gai_array_t *x, gai_array_t *other, int data, const char *fn)
{
    int t = GA_Duplicate(x->handle, "ga-compat temporary copy");
    if (!t)
        gai_error(fn,
                  "arrays '%s' and '%s' share memory, and the memory limit refuses the temporary "
                  "copy of '%s' that needs",
                  x->name, other->name, x->name);
    if (data)
        GA_Copy(x->handle, t);
    return t;
}

/* The diagonal operations and the row / column scalings: each rank on its own blocks of A,
 * reading or writing the matching range of v. */
static void diag_op(int g_a, int g_v, const void *c, int op, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn), *v = NULL;
    gai_numeric(a, fn);
    need_2d(a, fn);
    int64_t len = a->dims[0] < a->dims[1] ? a->dims[0] : a->dims[1];
    if (op == D_ROWS)
        len = a->dims[0];
    else if (op == D_COLS)
        len = a->dims[1];
    if (op != D_SHIFT && op != D_ZERO) {
        v = gai_array(g_v, fn);
        same_type(a, v, fn);
        if (v->ndim != 1 || v->dims[0] != len)
            gai_error(fn, "the vector '%s' must be 1-D of %lld elements (%s of '%s', %lld x %lld)",
                      v->name, (long long)len,
                      op == D_ROWS   ? "its rows"
                      : op == D_COLS ? "its columns"
                                     : "the diagonal",
                      a->name, (long long)a->dims[0], (long long)a->dims[1]);
    }
    if (op == D_SHIFT && !c)
        gai_error(fn, "array '%s': NULL constant", a->name);
    if (v && gai_memory_of(v, fn) == gai_memory_of(a, fn)) {
        /* the vector overlays the matrix (GA_Overlay): read it from / write it through a copy of
         * its own, as if every element were read before any is written */
        int t = shared_copy(v, a, op != D_GET, fn);
        diag_op(g_a, t, c, op, fn);
        if (op == D_GET)
            GA_Copy(t, g_v);
        GA_Destroy(t);
        return;
    }
    gai_sync_group(a->pgroup, fn);
    size_t es = a->esz;
    int64_t nt, *tiles = owned(a, &nt, fn);
    char *buf = NULL;
    size_t cap = 0;
    for (int64_t i = 0; i < nt; i++) {
        int64_t lo[2], hi[2], ld;
        char *p = block(a, tiles[i], lo, hi, &ld, fn);
        /* the range of v this block meets: diagonal [d0, d1), rows or columns */
        int64_t d0, d1;
        if (op == D_ROWS)
            d0 = lo[0], d1 = hi[0];
        else if (op == D_COLS)
            d0 = lo[1], d1 = hi[1];
        else
            d0 = lo[0] > lo[1] ? lo[0] : lo[1], d1 = hi[0] < hi[1] ? hi[0] : hi[1];
        if (d1 <= d0)
            continue;
        size_t need = (size_t)(d1 - d0) * es;
        if (need > cap) {
            free(buf);
            buf = xmalloc(cap = need, fn);
        }
        if (v && op != D_GET)
            gai_xfer(v, 'g', &d0, &d1, buf, NULL, NULL, NULL, fn);
        if (op == D_ROWS || op == D_COLS) {
            for (int64_t r = lo[0]; r < hi[0]; r++)
                for (int64_t s = lo[1]; s < hi[1]; s++)
                    e_mul(a->type, p + ((r - lo[0]) * ld + (s - lo[1])) * (int64_t)es,
                          buf + ((op == D_ROWS ? r : s) - d0) * (int64_t)es);
            continue;
        }
        for (int64_t d = d0; d < d1; d++) {
            char *e = p + ((d - lo[0]) * ld + (d - lo[1])) * (int64_t)es;
            char *x = buf + (d - d0) * (int64_t)es;
            switch (op) {
            case D_GET:
                memcpy(x, e, es);
                break;
            case D_SET:
                memcpy(e, x, es);
                break;
            case D_ADD:
                gai_elem_add(a->type, e, x);
                break;
            case D_SHIFT:
                gai_elem_add(a->type, e, c);
                break;
            default:
                memset(e, 0, es);
            }
        }
        if (op == D_GET)
            gai_xfer(v, 'p', &d0, &d1, buf, NULL, NULL, NULL, fn);
    }
    free(buf);
    free(tiles);
    gai_sync_group(a->pgroup, fn);
}

/* Collective. v = diag(A) (v of min(m, n) elements). */
void GA_Get_diag(int g_a, int g_v)
{
    diag_op(g_a, g_v, NULL, D_GET, "GA_Get_diag");
}

/* Collective. diag(A) = v. */
void GA_Set_diagonal(int g_a, int g_v)
{
    diag_op(g_a, g_v, NULL, D_SET, "GA_Set_diagonal");
}

/* Collective. diag(A) += v. */
void GA_Add_diagonal(int g_a, int g_v)
{
    diag_op(g_a, g_v, NULL, D_ADD, "GA_Add_diagonal");
}

/* Collective. diag(A) += *c (one element of A's type). */
void GA_Shift_diagonal(int g_a, void *c)
{
    diag_op(g_a, 0, c, D_SHIFT, "GA_Shift_diagonal");
}

/* Collective. diag(A) = 0 (only the diagonal: GA 5.8.2 also zeroes elements before it in each
 * local block). */
void GA_Zero_diagonal(int g_a)
{
    diag_op(g_a, 0, NULL, D_ZERO, "GA_Zero_diagonal");
}

/* Collective. Row i of A scaled by v[i] (v of m elements). */
void GA_Scale_rows(int g_a, int g_v)
{
    diag_op(g_a, g_v, NULL, D_ROWS, "GA_Scale_rows");
}

/* Collective. Column j of A scaled by v[j] (v of n elements). */
void GA_Scale_cols(int g_a, int g_v)
{
    diag_op(g_a, g_v, NULL, D_COLS, "GA_Scale_cols");
}

/* ------------------------------------------------------ transpose, symmetrize --- */

/* Collective. B = A^T (A m x n, B n x m, one type): each rank fills its blocks of B from the
 * matching patch of A. */
/* dst[x][y] = src[y][x] for x < r, y < c (row lengths ldd, lds elements of es bytes), in 32 x 32
 * tiles (both sides stay in cache) with fixed-size element moves. */
#define TR_TILE 32
#define TR_LOOP(T)                                                                                 \
    for (int64_t x0 = 0; x0 < r; x0 += TR_TILE)                                                    \
        for (int64_t y0 = 0; y0 < c; y0 += TR_TILE) {                                              \
            int64_t x1 = x0 + TR_TILE < r ? x0 + TR_TILE : r;                                      \
            int64_t y1 = y0 + TR_TILE < c ? y0 + TR_TILE : c;                                      \
            for (int64_t x = x0; x < x1; x++)                                                      \
                for (int64_t y = y0; y < y1; y++)                                                  \
                    memcpy((char *)dst + (x * ldd + y) * (int64_t)sizeof(T),                       \
                           (const char *)src + (y * lds + x) * (int64_t)sizeof(T), sizeof(T));     \
        }
typedef struct {
    double re, im;
} tr16_t;
static void transpose_copy(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t r,
                           int64_t c, size_t es)
{
    switch (es) {
    case 4:
        TR_LOOP(uint32_t);
        break;
    case 8:
        TR_LOOP(uint64_t);
        break;
    default:
        TR_LOOP(tr16_t);
    }
}

/* For each block tiles[0..nt-1] of distribution d (2-D, rows r x columns c), the transposed patch
 * of A (c x r, row-major) that block needs, all fetched non-blocking into one buffer and waited for
 * at once (one round trip's wait, not one per block: a block-cyclic array has many small blocks).
 * Block i's patch starts at byte (*offsp)[i]; empty blocks take no room. The caller frees both. */
static char *fetch_transposed(gai_array_t *a, rmc_dist_h d, const int64_t *tiles, int64_t nt,
                              size_t **offsp, const char *fn)
{
    size_t total = 0, *offs = *offsp = xmalloc(sizeof(size_t) * (size_t)(nt > 0 ? nt : 1), fn);
    for (int64_t i = 0; i < nt; i++) {
        int64_t lo[2], hi[2];
        rmc_dist_tile(d, tiles[i], lo, hi, NULL);
        offs[i] = total;
        if (hi[0] > lo[0] && hi[1] > lo[1])
            total += (size_t)((hi[0] - lo[0]) * (hi[1] - lo[1])) * a->esz;
    }
    char *buf = xmalloc(total, fn);
    rmc_request_h *reqs = xmalloc(sizeof(*reqs) * (size_t)(nt > 0 ? nt : 1), fn);
    for (int64_t i = 0; i < nt; i++) {
        int64_t lo[2], hi[2];
        rmc_dist_tile(d, tiles[i], lo, hi, NULL);
        reqs[i] = RMC_REQUEST_NULL;
        if (hi[0] <= lo[0] || hi[1] <= lo[1])
            continue;
        int64_t al[2] = {lo[1], lo[0]}, ah[2] = {hi[1], hi[0]}, ald = hi[0] - lo[0];
        gai_xfer(a, 'g', al, ah, buf + offs[i], &ald, NULL, &reqs[i], fn);
    }
    gai_check(rmc_wait_all(reqs, (size_t)nt), fn, "completing the gets of the transposed patches");
    free(reqs);
    return buf;
}

void GA_Transpose(int g_a, int g_b)
{
    const char *fn = "GA_Transpose";
    gai_array_t *a = gai_array(g_a, fn), *b = gai_array(g_b, fn);
    gai_numeric(a, fn);
    need_2d(a, fn);
    need_2d(b, fn);
    same_type(a, b, fn);
    if (g_a == g_b)
        gai_error(fn, "array '%s': A and B must be different arrays", a->name);
    if (b->dims[0] != a->dims[1] || b->dims[1] != a->dims[0])
        gai_error(fn, "'%s' is %lld x %lld: its transpose does not fit '%s' (%lld x %lld)", a->name,
                  (long long)a->dims[0], (long long)a->dims[1], b->name, (long long)b->dims[0],
                  (long long)b->dims[1]);
    int snap = 0; /* B overlaid on A or A on B: read A from a copy while B is written */
    if (gai_memory_of(a, fn) == gai_memory_of(b, fn)) {
        snap = shared_copy(a, b, 1, fn);
        a = gai_array(snap, fn);
    }
    gai_sync_group(a->pgroup, fn);
    size_t es = a->esz;
    int64_t nt, *tiles = owned(b, &nt, fn);
    size_t *offs;
    char *buf = fetch_transposed(a, b->dist, tiles, nt, &offs, fn);
    for (int64_t i = 0; i < nt; i++) {
        int64_t lo[2], hi[2], ld;
        char *p = block(b, tiles[i], lo, hi, &ld, fn);
        int64_t r = hi[0] - lo[0], c = hi[1] - lo[1];
        if (r <= 0 || c <= 0)
            continue;
        transpose_copy(p, ld, buf + offs[i], r, r, c, es);
    }
    free(offs);
    free(buf);
    free(tiles);
    gai_sync_group(a->pgroup, fn);
    if (snap)
        GA_Destroy(snap);
}

/* Collective. A = (A + A^T) / 2 for a square floating-point array: every rank fetches A^T's part
 * for its blocks, the group syncs, then each rank updates its blocks. */
void GA_Symmetrize(int g_a)
{
    const char *fn = "GA_Symmetrize";
    gai_array_t *a = gai_array(g_a, fn);
    gai_numeric(a, fn);
    need_2d(a, fn);
    if (a->dims[0] != a->dims[1])
        gai_error(fn, "array '%s' is %lld x %lld: only a square array can be symmetrized", a->name,
                  (long long)a->dims[0], (long long)a->dims[1]);
    if (a->type != C_FLOAT && a->type != C_DBL && a->type != C_SCPL && a->type != C_DCPL)
        gai_error(fn, "array '%s' of type %s: (A + A^T) / 2 needs a floating-point type", a->name,
                  gai_type_name(a->type));
    gai_sync_group(a->pgroup, fn);
    size_t es = a->esz;
    int64_t nt, *tiles = owned(a, &nt, fn);
    size_t *offs;
    char *buf = fetch_transposed(a, a->dist, tiles, nt, &offs, fn);
    gai_sync_group(a->pgroup, fn);
    for (int64_t i = 0; i < nt; i++) {
        int64_t lo[2], hi[2], ld;
        char *p = block(a, tiles[i], lo, hi, &ld, fn);
        int64_t r = hi[0] - lo[0], c = hi[1] - lo[1];
        if (r <= 0 || c <= 0)
            continue;
        const char *q = buf + offs[i];
        for (int64_t x = 0; x < r; x++)
            for (int64_t y = 0; y < c; y++)
                e_halfsum(a->type, p + (x * ld + y) * (int64_t)es, q + (y * r + x) * (int64_t)es);
    }
    free(offs);
    free(buf);
    free(tiles);
    gai_sync_group(a->pgroup, fn);
}

/* --------------------------------------------------------- 1-D operations --- */

static void need_1d(gai_array_t *a, const char *fn)
{
    if (a->ndim != 1)
        gai_error(fn, "array '%s' has %d dimensions: a 1-D array is needed", a->name, a->ndim);
}

static void range_in(gai_array_t *a, int64_t lo, int64_t hi, const char *fn)
{
    if (lo < 0 || hi >= a->dims[0])
        gai_error(fn, "array '%s': range [%lld:%lld] is outside [0:%lld]", a->name, (long long)lo,
                  (long long)hi, (long long)a->dims[0] - 1);
}

/* The driving array's (the mask's) owned blocks clipped to [lo, hi + 1): per block its range. */
typedef struct seg {
    int64_t t, s, e; /* block number, [s, e) */
    char *p;         /* the mask's elements in place */
} seg_t;

static seg_t *segments(gai_array_t *m, int64_t lo, int64_t hi, int64_t *n, const char *fn)
{
    int64_t nt, *tiles = owned(m, &nt, fn);
    seg_t *sg = xmalloc(sizeof(seg_t) * (size_t)(nt > 0 ? nt : 1), fn);
    int64_t k = 0;
    for (int64_t i = 0; i < nt; i++) {
        int64_t bl, bh;
        char *p = block(m, tiles[i], &bl, &bh, NULL, fn);
        int64_t s = bl > lo ? bl : lo, e = bh < hi + 1 ? bh : hi + 1;
        if (e <= s)
            continue;
        sg[k].t = tiles[i], sg[k].s = s, sg[k].e = e;
        sg[k].p = p + (s - bl) * (int64_t)m->esz;
        k++;
    }
    free(tiles);
    *n = k;
    return sg;
}

/* Pack (unpack = 0): dest[0 ..] = src[i] where mask[i] != 0, i in [lo, hi]; unpack: dest[i] =
 * src[0 ..] where mask[i] != 0. The number of selected elements in *icount. */
static int64_t pack(int g_src, int g_dst, int g_mask, int64_t lo, int64_t hi, int unpack,
                    const char *fn)
{
    gai_array_t *s = gai_array(g_src, fn), *d = gai_array(g_dst, fn), *m = gai_array(g_mask, fn);
    gai_numeric(s, fn);
    gai_numeric(d, fn);
    need_1d(s, fn);
    need_1d(d, fn);
    need_1d(m, fn);
    same_type(s, d, fn);
    gai_array_t *big = unpack ? d : s;
    if (hi >= lo) {
        range_in(big, lo, hi, fn);
        range_in(m, lo, hi, fn);
    }
    gai_sync_group(m->pgroup, fn);
    int64_t nb = m->nblocks, n = 0;
    int64_t *cnt = xmalloc(sizeof(int64_t) * (size_t)nb, fn);
    memset(cnt, 0, sizeof(int64_t) * (size_t)nb);
    seg_t *sg = hi >= lo ? segments(m, lo, hi, &n, fn) : xmalloc(sizeof(seg_t), fn);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = sg[i].s; j < sg[i].e; j++)
            cnt[sg[i].t] += e_nonzero(m->type, sg[i].p + (j - sg[i].s) * (int64_t)m->esz);
    gai_gop(m->pgroup, C_LONGLONG, cnt, (int)nb, "+", fn);
    int64_t total = 0;
    for (int64_t t = 0; t < nb; t++) { /* cnt becomes each block's offset */
        int64_t c = cnt[t];
        cnt[t] = total;
        total += c;
    }
    gai_array_t *small = unpack ? s : d;
    if (total > small->dims[0])
        gai_error(fn, "%lld elements are selected but '%s' has only %lld", (long long)total,
                  small->name, (long long)small->dims[0]);
    size_t es = s->esz;
    for (int64_t i = 0; i < n; i++) {
        int64_t len = sg[i].e - sg[i].s, off = cnt[sg[i].t], k = 0;
        char *bb = xmalloc((size_t)len * es, fn), *sb = xmalloc((size_t)len * es, fn);
        for (int64_t j = 0; j < len; j++)
            k += e_nonzero(m->type, sg[i].p + j * (int64_t)m->esz);
        int64_t sl = off, sh = off + k, bl = sg[i].s, bh = sg[i].e;
        gai_xfer(big, 'g', &bl, &bh, bb, NULL, NULL, NULL, fn);
        if (unpack && k)
            gai_xfer(small, 'g', &sl, &sh, sb, NULL, NULL, NULL, fn);
        for (int64_t j = 0, q = 0; j < len; j++)
            if (e_nonzero(m->type, sg[i].p + j * (int64_t)m->esz)) {
                if (unpack)
                    memcpy(bb + j * (int64_t)es, sb + q * (int64_t)es, es);
                else
                    memcpy(sb + q * (int64_t)es, bb + j * (int64_t)es, es);
                q++;
            }
        if (unpack)
            gai_xfer(big, 'p', &bl, &bh, bb, NULL, NULL, NULL, fn);
        else if (k)
            gai_xfer(small, 'p', &sl, &sh, sb, NULL, NULL, NULL, fn);
        free(bb);
        free(sb);
    }
    free(sg);
    free(cnt);
    gai_sync_group(m->pgroup, fn);
    return total;
}

/* Collective. dest[0 .. *icount-1] = the elements of src[lo..hi] where mask (1-D, any type) is
 * nonzero, in order. */
void GA_Pack64(int g_src, int g_dest, int g_mask, int64_t lo, int64_t hi, int64_t *icount)
{
    int64_t n = pack(g_src, g_dest, g_mask, lo, hi, 0, "GA_Pack");
    if (icount)
        *icount = n;
}

void GA_Pack(int g_src, int g_dest, int g_mask, int lo, int hi, int *icount)
{
    int64_t n = pack(g_src, g_dest, g_mask, lo, hi, 0, "GA_Pack");
    if (icount)
        *icount = (int)n;
}

/* Collective. The elements of dest[lo..hi] where mask is nonzero get src[0], src[1], ... in
 * order (the others are unchanged); their number in *icount. */
void GA_Unpack64(int g_src, int g_dest, int g_mask, int64_t lo, int64_t hi, int64_t *icount)
{
    int64_t n = pack(g_src, g_dest, g_mask, lo, hi, 1, "GA_Unpack");
    if (icount)
        *icount = n;
}

void GA_Unpack(int g_src, int g_dest, int g_mask, int lo, int hi, int *icount)
{
    int64_t n = pack(g_src, g_dest, g_mask, lo, hi, 1, "GA_Unpack");
    if (icount)
        *icount = (int)n;
}

/* Segmented scans over [lo, hi], segments starting where sbit is nonzero. copy: each element
 * gets the source value at its segment's start (0 before the first start, as GA). add: running
 * sums restarting at each start, inclusive (excl 0) or exclusive (excl 1: a start gets 0);
 * elements before the first start are left unchanged (as GA). Per block of sbit: whether it
 * holds a start and the carry it passes on, agreed by one reduction. */
static void scan(int g_a, int g_b, int g_sbit, int64_t lo, int64_t hi, int copy, int excl,
                 const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn), *b = gai_array(g_b, fn), *m = gai_array(g_sbit, fn);
    gai_numeric(a, fn);
    gai_numeric(b, fn);
    need_1d(a, fn);
    need_1d(b, fn);
    need_1d(m, fn);
    same_type(a, b, fn);
    if (hi < lo) {
        gai_sync_group(m->pgroup, fn);
        return;
    }
    range_in(a, lo, hi, fn);
    range_in(b, lo, hi, fn);
    range_in(m, lo, hi, fn);
    gai_sync_group(m->pgroup, fn);
    size_t es = a->esz;
    int64_t nb = m->nblocks, n;
    int64_t *has = xmalloc(sizeof(int64_t) * (size_t)nb, fn);
    char *carry = xmalloc((size_t)nb * es, fn);
    memset(has, 0, sizeof(int64_t) * (size_t)nb);
    memset(carry, 0, (size_t)nb * es);
    seg_t *sg = segments(m, lo, hi, &n, fn);
    char **src = xmalloc(sizeof(char *) * (size_t)(n > 0 ? n : 1), fn);
    for (int64_t i = 0; i < n; i++) {
        int64_t len = sg[i].e - sg[i].s, s = sg[i].s, e = sg[i].e;
        src[i] = xmalloc((size_t)len * es, fn);
        gai_xfer(a, 'g', &s, &e, src[i], NULL, NULL, NULL, fn);
        char *c = carry + sg[i].t * (int64_t)es;
        for (int64_t j = 0; j < len; j++) {
            char *x = src[i] + j * (int64_t)es;
            if (e_nonzero(m->type, sg[i].p + j * (int64_t)m->esz)) {
                has[sg[i].t] = 1;
                memcpy(c, x, es);
            } else if (!copy) {
                gai_elem_add(a->type, c, x);
            }
        }
    }
    gai_gop(m->pgroup, C_LONGLONG, has, (int)nb, "+", fn);
    gai_gop(m->pgroup, a->type, carry, (int)nb, "+", fn);
    /* carry into each block: started[t], in[t] */
    int64_t *started = xmalloc(sizeof(int64_t) * (size_t)nb, fn);
    char *in = xmalloc((size_t)nb * es, fn), run[16];
    int st = 0;
    memset(run, 0, sizeof run);
    for (int64_t t = 0; t < nb; t++) {
        started[t] = st;
        memcpy(in + t * (int64_t)es, run, es);
        if (has[t])
            memcpy(run, carry + t * (int64_t)es, es), st = 1;
        else if (!copy && st)
            gai_elem_add(a->type, run, carry + t * (int64_t)es);
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t len = sg[i].e - sg[i].s, first = -1;
        int on = (int)started[sg[i].t];
        memcpy(run, in + sg[i].t * (int64_t)es, es);
        char *out = xmalloc((size_t)len * es, fn);
        for (int64_t j = 0; j < len; j++) {
            char *x = src[i] + j * (int64_t)es, *o = out + j * (int64_t)es;
            int bit = e_nonzero(m->type, sg[i].p + j * (int64_t)m->esz);
            if (bit) {
                on = 1;
                if (copy || !excl)
                    memcpy(run, x, es), memcpy(o, run, es);
                else
                    memset(o, 0, es), memcpy(run, x, es);
            } else if (!on) {
                memset(o, 0, es); /* copy: 0 before the first start; add: not stored */
                continue;
            } else if (copy) {
                memcpy(o, run, es);
            } else if (!excl) {
                gai_elem_add(a->type, run, x), memcpy(o, run, es);
            } else {
                memcpy(o, run, es), gai_elem_add(a->type, run, x);
            }
            if (first < 0)
                first = j;
        }
        int64_t s = copy ? sg[i].s : sg[i].s + first, e = sg[i].e;
        if (copy || first >= 0)
            gai_xfer(b, 'p', &s, &e, out + (s - sg[i].s) * (int64_t)es, NULL, NULL, NULL, fn);
        free(out);
        free(src[i]);
    }
    free(src);
    free(sg);
    free(started);
    free(in);
    free(has);
    free(carry);
    gai_sync_group(m->pgroup, fn);
}

/* Collective. b[i] = the running sum of a over [lo, hi], restarting where sbit is nonzero;
 * excl 1: the sum of the elements before i in its segment. */
void GA_Scan_add64(int g_a, int g_b, int g_sbit, int64_t lo, int64_t hi, int excl)
{
    scan(g_a, g_b, g_sbit, lo, hi, 0, excl, "GA_Scan_add");
}

void GA_Scan_add(int g_a, int g_b, int g_sbit, int lo, int hi, int excl)
{
    scan(g_a, g_b, g_sbit, lo, hi, 0, excl, "GA_Scan_add");
}

/* Collective. b[i] = a at the last j <= i in [lo, hi] where sbit[j] is nonzero (0 when none). */
void GA_Scan_copy64(int g_a, int g_b, int g_sbit, int64_t lo, int64_t hi)
{
    scan(g_a, g_b, g_sbit, lo, hi, 1, 0, "GA_Scan_copy");
}

void GA_Scan_copy(int g_a, int g_b, int g_sbit, int lo, int hi)
{
    scan(g_a, g_b, g_sbit, lo, hi, 1, 0, "GA_Scan_copy");
}

/* Collective. a[i] = *start + (i - lo) * *inc for i in [lo, hi] (1-D array). */
void GA_Patch_enum64(int g_a, int64_t lo, int64_t hi, void *start, void *inc)
{
    const char *fn = "GA_Patch_enum";
    gai_array_t *a = gai_array(g_a, fn);
    gai_numeric(a, fn);
    need_1d(a, fn);
    if (!start || !inc)
        gai_error(fn, "array '%s': NULL start or inc", a->name);
    if (hi >= lo)
        range_in(a, lo, hi, fn);
    gai_sync_group(a->pgroup, fn);
    int64_t n = 0;
    seg_t *sg = hi >= lo ? segments(a, lo, hi, &n, fn) : xmalloc(sizeof(seg_t), fn);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = sg[i].s; j < sg[i].e; j++)
            e_enum(a->type, sg[i].p + (j - sg[i].s) * (int64_t)a->esz, start, inc, j - lo);
    free(sg);
    gai_sync_group(a->pgroup, fn);
}

void GA_Patch_enum(int g_a, int lo, int hi, void *start, void *inc)
{
    GA_Patch_enum64(g_a, lo, hi, start, inc);
}

/* ------------------------------------------------------ merge mirrored patch --- */

/* Collective. Merges the copies of a patch of a mirrored array into a distributed array. GA
 * refuses a non-mirrored g_a; ga-compat's mirrored arrays keep a single copy, so the merge is the
 * patch's copy. */
static void merge_patch(int g_a, const int64_t alo[], const int64_t ahi[], int g_b,
                        const int64_t blo[], const int64_t bhi[], const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn), *b = gai_array(g_b, fn);
    gai_numeric(a, fn);
    gai_numeric(b, fn);
    if (!a->mirrored)
        gai_error(fn, "Handle to a non-mirrored array passed ('%s')", a->name);
    same_type(a, b, fn);
    int64_t al[GA_MAX_DIM], ah[GA_MAX_DIM], bl[GA_MAX_DIM], bh[GA_MAX_DIM];
    int ea = gai_patch_i64(a, alo, ahi, al, ah, fn), eb = gai_patch_i64(b, blo, bhi, bl, bh, fn);
    if (ea != eb || (ea && !gai_conforming(a->ndim, al, ah, b->ndim, bl, bh)))
        gai_error(fn, "patches of '%s' and '%s' do not conform", a->name, b->name);
    gai_sync_group(b->pgroup, fn);
    if (ea) { /* rank 0 of the group moves the patch: a's and b's element orders agree */
        gai_group_t *g = gai_group(b->pgroup, fn);
        if (g->me == 0) {
            int64_t cnt = gai_patch_count(a->ndim, al, ah);
            char *buf = xmalloc((size_t)cnt * a->esz, fn);
            int64_t lda[GA_MAX_DIM], ldb[GA_MAX_DIM];
            for (int d = 0; d + 1 < a->ndim; d++)
                lda[d] = ah[d + 1] - al[d + 1];
            for (int d = 0; d + 1 < b->ndim; d++)
                ldb[d] = bh[d + 1] - bl[d + 1];
            gai_xfer(a, 'g', al, ah, buf, lda, NULL, NULL, fn);
            gai_xfer(b, 'p', bl, bh, buf, ldb, NULL, NULL, fn);
            free(buf);
        }
    }
    gai_sync_group(b->pgroup, fn);
}

void NGA_Merge_distr_patch64(int g_a, int64_t alo[], int64_t ahi[], int g_b, int64_t blo[],
                             int64_t bhi[])
{
    merge_patch(g_a, alo, ahi, g_b, blo, bhi, "NGA_Merge_distr_patch64");
}

void NGA_Merge_distr_patch(int g_a, int alo[], int ahi[], int g_b, int blo[], int bhi[])
{
    const char *fn = "NGA_Merge_distr_patch";
    gai_array_t *a = gai_array(g_a, fn), *b = gai_array(g_b, fn);
    gai_numeric(a, fn);
    gai_numeric(b, fn);
    if (!alo || !ahi || !blo || !bhi)
        gai_error(fn, "NULL patch bounds");
    int64_t al[GA_MAX_DIM], ah[GA_MAX_DIM], bl[GA_MAX_DIM], bh[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        al[d] = alo[d], ah[d] = ahi[d];
    for (int d = 0; d < b->ndim; d++)
        bl[d] = blo[d], bh[d] = bhi[d];
    merge_patch(g_a, al, ah, g_b, bl, bh, fn);
}

/* ------------------------------------------------------------------- GEMM --- */

/* The matrix the engine multiplies for array a: a->m itself, or for an array with ghosts a
 * temporary on the same distribution without them (filled from a when in is set). */
static rmc_matrix_h gemm_matrix(gai_array_t *a, int in, const char *fn)
{
    if (!a->has_ghosts)
        return a->m;
    rmc_matrix_h t;
    MPI_Comm comm = gai_group_comm(a->pgroup, fn);
    gai_check(comm != MPI_COMM_NULL ? rmc_matrix_create_comm(comm, a->dist, a->elem, &t)
                                    : rmc_matrix_create(a->dist, a->elem, &t),
              fn, "a temporary without ghosts");
    if (in) {
        int64_t nt, *tiles = owned(a, &nt, fn);
        for (int64_t i = 0; i < nt; i++) {
            int64_t lo[2], hi[2], ld;
            char *p = block(a, tiles[i], lo, hi, &ld, fn), *q;
            gai_check(rmc_matrix_tile_local(t, tiles[i], (void **)&q), fn, "rmc_matrix_tile_local");
            int64_t r = hi[0] - lo[0], c = hi[1] - lo[1];
            for (int64_t x = 0; x < r; x++)
                memcpy(q + x * c * (int64_t)a->esz, p + x * ld * (int64_t)a->esz,
                       (size_t)c * a->esz);
        }
        free(tiles);
        gai_sync_group(a->pgroup, fn); /* filled everywhere before anyone reads it */
    }
    return t;
}

/* Back from the temporary of gemm_matrix into a ghost array's blocks (out set), then freed. */
static void gemm_release(gai_array_t *a, rmc_matrix_h t, int out, const char *fn)
{
    if (t == a->m)
        return;
    if (out) {
        int64_t nt, *tiles = owned(a, &nt, fn);
        for (int64_t i = 0; i < nt; i++) {
            int64_t lo[2], hi[2], ld;
            char *p = block(a, tiles[i], lo, hi, &ld, fn), *q;
            gai_check(rmc_matrix_tile_local(t, tiles[i], (void **)&q), fn, "rmc_matrix_tile_local");
            int64_t r = hi[0] - lo[0], c = hi[1] - lo[1];
            for (int64_t x = 0; x < r; x++)
                memcpy(p + x * ld * (int64_t)a->esz, q + x * c * (int64_t)a->esz,
                       (size_t)c * a->esz);
        }
        free(tiles);
    }
    gai_check(rmc_matrix_destroy(t), fn, "freeing the temporary");
}

static char trans_char(char t, int type, const char *fn)
{
    switch (t) {
    case 'n':
    case 'N':
        return 'N';
    case 't':
    case 'T':
        return 'T';
    case 'c':
    case 'C':
        return type == C_SCPL || type == C_DCPL ? 'C' : 'T';
    default:
        gai_error(fn, "transpose flag '%c' is not N, T or C", t);
    }
}

static int float_type(int t)
{
    return t == C_FLOAT || t == C_DBL || t == C_SCPL || t == C_DCPL;
}

/* Collective. An operand patch [lo, hi) of C's own array, copied into a new array of the patch's
 * shape (a dimension of extent 0 becomes 1, the patch stays empty): the multiplication reads the
 * copy while it writes C, as if every element were read before any is written (GA 5.8.2 computes
 * disjoint patches of one array so; overlapping ones, or C = A in GA_Dgemm, come out wrong
 * there). Returns the copy's handle; lo and hi become its patch. */
static int operand_copy(gai_array_t *x, int64_t lo[2], int64_t hi[2], const char *fn)
{
    int64_t ext[2], last[2], tlo[2] = {0, 0}, thi[2];
    for (int d = 0; d < 2; d++) {
        ext[d] = hi[d] - lo[d] > 0 ? hi[d] - lo[d] : 1;
        last[d] = hi[d] - 1;
        thi[d] = hi[d] - lo[d] - 1;
    }
    int g = NGA_Create_config64(x->type, 2, ext, "ga-compat matmul operand", NULL, x->pgroup);
    if (!g)
        gai_error(fn,
                  "array '%s' is both an operand and the result, and the memory limit refuses "
                  "the temporary copy of the operand's patch",
                  x->name);
    if (hi[0] > lo[0] && hi[1] > lo[1])
        NGA_Copy_patch64('N', x->handle, lo, last, g, tlo, thi);
    hi[0] -= lo[0], hi[1] -= lo[1];
    lo[0] = lo[1] = 0;
    return g;
}

/* C[clo, chi) = alpha op(A[alo, ahi)) op(B[blo, bhi)) + beta C[clo, chi), patches of the stored
 * arrays (half-open); whole = the patches are the whole arrays. An operand in C's own memory (the
 * same array, or one of them overlaid on the other) is read from a copy of its patch
 * (operand_copy). */
static void matmul(char ta, char tb, const void *alpha, const void *beta, int g_a,
                   const int64_t alo[2], const int64_t ahi[2], int g_b, const int64_t blo[2],
                   const int64_t bhi[2], int g_c, const int64_t clo[2], const int64_t chi[2],
                   int type, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn), *b = gai_array(g_b, fn), *c = gai_array(g_c, fn);
    need_2d(a, fn);
    need_2d(b, fn);
    need_2d(c, fn);
    same_type(a, b, fn);
    same_type(a, c, fn);
    if (!float_type(a->type))
        gai_error(fn, "arrays of type %s: multiplication needs float, double or complex",
                  gai_type_name(a->type));
    if (type && a->type != type)
        gai_error(fn, "arrays of type %s given to a %s multiplication", gai_type_name(a->type),
                  gai_type_name(type));
    if (!alpha || !beta)
        gai_error(fn, "NULL alpha or beta");
    ta = trans_char(ta, a->type, fn);
    tb = trans_char(tb, a->type, fn);
    const gai_array_t *arr[3] = {a, b, c};
    const int64_t *pl[3] = {alo, blo, clo}, *ph[3] = {ahi, bhi, chi};
    int whole = 1;
    for (int x = 0; x < 3; x++)
        for (int d = 0; d < 2; d++) {
            if (pl[x][d] < 0 || ph[x][d] > arr[x]->dims[d] || pl[x][d] > ph[x][d])
                gai_error(fn, "array '%s': patch [%lld:%lld] in dimension %d is outside [0:%lld]",
                          arr[x]->name, (long long)pl[x][d], (long long)ph[x][d] - 1, d,
                          (long long)arr[x]->dims[d] - 1);
            whole &= pl[x][d] == 0 && ph[x][d] == arr[x]->dims[d];
        }
    int64_t m = chi[0] - clo[0], n = chi[1] - clo[1];
    int64_t am = ta == 'N' ? ahi[0] - alo[0] : ahi[1] - alo[1];
    int64_t ak = ta == 'N' ? ahi[1] - alo[1] : ahi[0] - alo[0];
    int64_t bk = tb == 'N' ? bhi[0] - blo[0] : bhi[1] - blo[1];
    int64_t bn = tb == 'N' ? bhi[1] - blo[1] : bhi[0] - blo[0];
    if (am != m || bn != n || ak != bk)
        gai_error(fn,
                  "op(A) is %lld x %lld, op(B) %lld x %lld, C %lld x %lld: they do not "
                  "multiply",
                  (long long)am, (long long)ak, (long long)bk, (long long)bn, (long long)m,
                  (long long)n);
    if (a->pgroup != c->pgroup || b->pgroup != c->pgroup)
        gai_error(fn, "arrays '%s', '%s' and '%s' are on process groups %d, %d and %d: all must be "
                      "on the same group",
                  a->name, b->name, c->name, a->pgroup, b->pgroup, c->pgroup);
    int copy[2] = {0, 0};
    int64_t al[2] = {alo[0], alo[1]}, ah[2] = {ahi[0], ahi[1]};
    int64_t bl[2] = {blo[0], blo[1]}, bh[2] = {bhi[0], bhi[1]};
    gai_array_t *cm = gai_memory_of(c, fn);
    int a_in_c = gai_memory_of(a, fn) == cm, b_in_c = gai_memory_of(b, fn) == cm;
    if (m > 0 && n > 0 && (a_in_c || b_in_c)) {
        if (a_in_c) {
            copy[0] = operand_copy(a, al, ah, fn);
            a = gai_array(copy[0], fn);
        }
        if (b_in_c) {
            copy[1] = operand_copy(b, bl, bh, fn);
            b = gai_array(copy[1], fn);
        }
        whole = 0;
    }
    gai_sync_group(c->pgroup, fn);
    if (m > 0 && n > 0) {
        rmc_matrix_h ma = gemm_matrix(a, 1, fn), mb = gemm_matrix(b, 1, fn);
        rmc_matrix_h mc = gemm_matrix(c, 1, fn);
        rmc_status_t st;
        if (whole)
            st = rmc_matrix_gemm(ta, tb, alpha, ma, mb, beta, mc, RMC_GEMM_AUTO, NULL);
        else
            st = rmc_matrix_gemm_patch(ta, tb, alpha, ma, al, ah, mb, bl, bh, beta, mc, clo, chi,
                                       RMC_GEMM_AUTO, NULL);
        gai_check(st, fn, "the multiplication");
        gemm_release(a, ma, 0, fn);
        gemm_release(b, mb, 0, fn);
        gemm_release(c, mc, 1, fn);
    }
    gai_sync_group(c->pgroup, fn);
    for (int x = 0; x < 2; x++)
        if (copy[x])
            GA_Destroy(copy[x]);
}

/* C = alpha op(A) op(B) + beta C on the leading m x k, k x n, m x n parts (GA_Dgemm's
 * convention: arrays as the C API presents them, op(A) m x k, op(B) k x n). */
static void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha, int g_a,
                 int g_b, const void *beta, int g_c, int type, const char *fn)
{
    if (m < 0 || n < 0 || k < 0)
        gai_error(fn, "negative size m %lld n %lld k %lld", (long long)m, (long long)n,
                  (long long)k);
    gai_array_t *a = gai_array(g_a, fn);
    char t1 = trans_char(ta, a->type, fn), t2 = trans_char(tb, a->type, fn);
    int64_t al[2] = {0, 0}, ah[2] = {t1 == 'N' ? m : k, t1 == 'N' ? k : m};
    int64_t bl[2] = {0, 0}, bh[2] = {t2 == 'N' ? k : n, t2 == 'N' ? n : k};
    int64_t cl[2] = {0, 0}, ch[2] = {m, n};
    matmul(ta, tb, alpha, beta, g_a, al, ah, g_b, bl, bh, g_c, cl, ch, type, fn);
}

/* Collective. C = alpha op(A) op(B) + beta C (ta, tb 'N', 'T' or 'C'; C m x n, op(A) m x k,
 * op(B) k x n, the arrays' leading parts); complete on return. */
void GA_Dgemm64(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, int g_a, int g_b,
                double beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_DBL, "GA_Dgemm");
}

void GA_Dgemm(char ta, char tb, int m, int n, int k, double alpha, int g_a, int g_b, double beta,
              int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_DBL, "GA_Dgemm");
}

void GA_Sgemm64(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, int g_a, int g_b,
                float beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_FLOAT, "GA_Sgemm");
}

void GA_Sgemm(char ta, char tb, int m, int n, int k, float alpha, int g_a, int g_b, float beta,
              int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_FLOAT, "GA_Sgemm");
}

void GA_Zgemm64(char ta, char tb, int64_t m, int64_t n, int64_t k, DoubleComplex alpha, int g_a,
                int g_b, DoubleComplex beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_DCPL, "GA_Zgemm");
}

void GA_Zgemm(char ta, char tb, int m, int n, int k, DoubleComplex alpha, int g_a, int g_b,
              DoubleComplex beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_DCPL, "GA_Zgemm");
}

void GA_Cgemm64(char ta, char tb, int64_t m, int64_t n, int64_t k, SingleComplex alpha, int g_a,
                int g_b, SingleComplex beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_SCPL, "GA_Cgemm");
}

void GA_Cgemm(char ta, char tb, int m, int n, int k, SingleComplex alpha, int g_a, int g_b,
              SingleComplex beta, int g_c)
{
    gemm(ta, tb, m, n, k, &alpha, g_a, g_b, &beta, g_c, C_SCPL, "GA_Cgemm");
}

/* A stored patch from the bounds of op(X)'s patch (inclusive, GA's): transposed for 'T' / 'C'. */
static void op_patch(char t, const int64_t lo[2], const int64_t hi[2], int64_t l[2], int64_t h[2])
{
    int tr = t != 'N' && t != 'n';
    l[0] = lo[tr], h[0] = hi[tr] + 1;
    l[1] = lo[!tr], h[1] = hi[!tr] + 1;
}

/* An operand of NGA_Matmul_patch on an array of other than 2 dimensions: its patch [lo, hi]
 * (inclusive; for A and B in op(X)'s indices, as for 2-D arrays) has at most two dimensions longer
 * than 1, which are its matrix (with fewer, the next dimensions: see below). The stored patch is
 * copied into a temporary 2-D array (f->g; C's too, which beta scales) and *l, *h become its whole
 * extent; C's is copied back, and each freed, by flat_end. */
typedef struct flat {
    int g;                                  /* the temporary (0: the array is used as it is) */
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM]; /* the stored patch, inclusive */
} flat_t;

static void flat_begin(flat_t *f, int g_x, char t, const int64_t lo[], const int64_t hi[],
                       int64_t l[2], int64_t h[2], const char *fn)
{
    gai_array_t *x = gai_array(g_x, fn);
    f->g = 0;
    if (x->ndim == 2) {
        op_patch(t, lo, hi, l, h);
        return;
    }
    int p[GA_MAX_DIM] = {0, 0}, np = 0;
    for (int d = 0; d < x->ndim; d++)
        if (hi[d] > lo[d])
            p[np++] = d;
    if (np > 2)
        gai_error(fn, "array '%s': the patch has %d dimensions longer than 1 (a matrix has 2)",
                  x->name, np);
    /* fewer than two: the matrix's other dimension is the next one (the one before for the
     * last; the last two for none), as GA 5.8.2 reads such a patch; a transposed operand's
     * bounds then swap between the two, as for 2-D arrays */
    if (np == 1 && x->ndim > 1)
        p[1] = p[0] + 1 < x->ndim ? p[0] + 1 : p[0], p[0] = p[1] > p[0] ? p[0] : p[0] - 1, np = 2;
    else if (np == 0 && x->ndim > 1)
        p[0] = x->ndim - 2, p[1] = x->ndim - 1, np = 2;
    int64_t ql[2] = {0, 0}, qh[2] = {0, 0}, sl[2], sh[2];
    if (np == 2)
        ql[0] = lo[p[0]], qh[0] = hi[p[0]], ql[1] = lo[p[1]], qh[1] = hi[p[1]];
    else /* a 1-D array: a row (its range stays; a transpose turns the temporary only) */
        ql[1] = lo[0], qh[1] = hi[0];
    op_patch(t, ql, qh, sl, sh); /* the stored matrix, half-open */
    for (int d = 0; d < x->ndim; d++)
        f->lo[d] = lo[d], f->hi[d] = hi[d];
    for (int k = 0; np == 2 && k < 2; k++)
        f->lo[p[k]] = sl[k], f->hi[p[k]] = sh[k] - 1;
    int64_t dims[2] = {sh[0] - sl[0], sh[1] - sl[1]}, zl[2] = {0, 0}, zh[2];
    zh[0] = dims[0] - 1, zh[1] = dims[1] - 1;
    f->g = NGA_Create_config64(x->type, 2, dims, "ga-compat matmul operand", NULL, x->pgroup);
    if (!f->g)
        gai_error(fn, "array '%s': the memory limit refuses a temporary copy of its patch",
                  x->name);
    NGA_Copy_patch64('N', g_x, f->lo, f->hi, f->g, zl, zh);
    l[0] = l[1] = 0;
    h[0] = dims[0], h[1] = dims[1];
}

static void flat_end(flat_t *f, int g_x, int back)
{
    if (!f->g)
        return;
    if (back) {
        int64_t zl[2] = {0, 0}, zh[2];
        gai_array_t *t = gai_array(f->g, "NGA_Matmul_patch");
        zh[0] = t->dims[0] - 1, zh[1] = t->dims[1] - 1;
        NGA_Copy_patch64('N', f->g, zl, zh, g_x, f->lo, f->hi);
    }
    GA_Destroy(f->g);
}

/* Collective. C[clo:chi] = alpha op(A)[alo:ahi] op(B)[blo:bhi] + beta C[clo:chi]: the A and B
 * patches are given in op(A)'s and op(B)'s indices (as GA documents: AA = op(A)); alpha, beta of
 * the arrays' type. Arrays of other than 2 dimensions: patches with at most two dimensions longer
 * than 1 (flat_begin), multiplied through temporary 2-D copies. */
void NGA_Matmul_patch64(char transa, char transb, void *alpha, void *beta, int g_a, int64_t alo[],
                        int64_t ahi[], int g_b, int64_t blo[], int64_t bhi[], int g_c,
                        int64_t clo[], int64_t chi[])
{
    const char *fn = "NGA_Matmul_patch";
    if (!alo || !ahi || !blo || !bhi || !clo || !chi)
        gai_error(fn, "NULL patch bounds");
    int64_t al[2], ah[2], bl[2], bh[2], cl[2], ch[2];
    flat_t fa, fb, fc;
    flat_begin(&fa, g_a, transa, alo, ahi, al, ah, fn);
    flat_begin(&fb, g_b, transb, blo, bhi, bl, bh, fn);
    flat_begin(&fc, g_c, 'N', clo, chi, cl, ch, fn);
    matmul(transa, transb, alpha, beta, fa.g ? fa.g : g_a, al, ah, fb.g ? fb.g : g_b, bl, bh,
           fc.g ? fc.g : g_c, cl, ch, 0, fn);
    flat_end(&fa, g_a, 0);
    flat_end(&fb, g_b, 0);
    flat_end(&fc, g_c, 1);
}

void NGA_Matmul_patch(char transa, char transb, void *alpha, void *beta, int g_a, int alo[],
                      int ahi[], int g_b, int blo[], int bhi[], int g_c, int clo[], int chi[])
{
    const char *fn = "NGA_Matmul_patch";
    if (!alo || !ahi || !blo || !bhi || !clo || !chi)
        gai_error(fn, "NULL patch bounds");
    int64_t b64[6][GA_MAX_DIM];
    const int *in[6] = {alo, ahi, blo, bhi, clo, chi};
    int nd[3] = {gai_array(g_a, fn)->ndim, gai_array(g_b, fn)->ndim, gai_array(g_c, fn)->ndim};
    for (int x = 0; x < 6; x++)
        for (int d = 0; d < nd[x / 2]; d++)
            b64[x][d] = in[x][d];
    NGA_Matmul_patch64(transa, transb, alpha, beta, g_a, b64[0], b64[1], g_b, b64[2], b64[3], g_c,
                       b64[4], b64[5]);
}

/* Collective. GA's 2-D form in Fortran's view: i indexes the columns and j the rows of the arrays
 * as C sees them, and C(i, j) = alpha sum op(A)(i, l) op(B)(l, j), the A and B ranges in op's
 * indices. In C's view: C[cj][ci] = alpha op(B)[bj][bi] op(A)[aj][ai] + beta C. */
void GA_Matmul_patch64(char transa, char transb, void *alpha, void *beta, int g_a, int64_t ailo,
                       int64_t aihi, int64_t ajlo, int64_t ajhi, int g_b, int64_t bilo,
                       int64_t bihi, int64_t bjlo, int64_t bjhi, int g_c, int64_t cilo,
                       int64_t cihi, int64_t cjlo, int64_t cjhi)
{
    const char *fn = "GA_Matmul_patch";
    /* stored patch of X in C's view: rows j, columns i ('N'); rows i, columns j (transposed) */
    int ta = transa != 'N' && transa != 'n', tb = transb != 'N' && transb != 'n';
    int64_t al[2] = {ta ? ailo : ajlo, ta ? ajlo : ailo},
            ah[2] = {ta ? aihi + 1 : ajhi + 1, ta ? ajhi + 1 : aihi + 1};
    int64_t bl[2] = {tb ? bilo : bjlo, tb ? bjlo : bilo},
            bh[2] = {tb ? bihi + 1 : bjhi + 1, tb ? bjhi + 1 : bihi + 1};
    int64_t cl[2] = {cjlo, cilo}, ch[2] = {cjhi + 1, cihi + 1};
    matmul(transb, transa, alpha, beta, g_b, bl, bh, g_a, al, ah, g_c, cl, ch, 0, fn);
}

void GA_Matmul_patch(char transa, char transb, void *alpha, void *beta, int g_a, int ailo, int aihi,
                     int ajlo, int ajhi, int g_b, int bilo, int bihi, int bjlo, int bjhi, int g_c,
                     int cilo, int cihi, int cjlo, int cjhi)
{
    GA_Matmul_patch64(transa, transb, alpha, beta, g_a, ailo, aihi, ajlo, ajhi, g_b, bilo, bihi,
                      bjlo, bjhi, g_c, cilo, cihi, cjlo, cjhi);
}
