/* A seeded random test of the dense distributed matrices and their multiplication
 * (include/rmc/matrix.h). Two tests:
 *
 * data   A sequence of epochs, each a matrix of random shape (1 to 7 dimensions, some of extent 1)
 *        and element type (I32, I64, F32, F64, C32, C64, opaque records of 1..24 bytes) on a random
 *        distribution (regular block-cyclic with chosen or default tiles and process grids, tiles
 *        larger than the matrix, ragged edges; irregular split points with blocks of one element;
 *        irregular tiles over a process grid; round-robin; the 2-D block descriptors; sometimes
 *        placed on chosen ranks with rmc_dist_set_ranks), then 1-3 phases on it separated by
 *        barriers, sometimes after an rmc_matrix_fill. Each phase cuts the array into boxes at
 *        random points (independent of the tiles) and gives each box a role, the same on every
 *        rank: read-only, accumulate (every rank adds into it at once), or written by one rank;
 *        some whole tiles are written in place by their owner (rmc_matrix_tile_local). Each rank
 *        then runs random operations on what its role allows: patch put / acc (alpha, NULL or
 *        not) / get, blocking and _nb (kept outstanding, completed later in random order by
 *        rmc_wait or rmc_test), with and without leading dimensions wider than the patch, empty
 *        patches; element get / put; tile get / put (+_nb); stores and loads through the tile's
 *        address; calls that must fail (bounds, lo > hi, ld too small, buffer strides past 64
 *        bits or a row stride of 2 GiB moved as one: RMC_ERR_TOO_BIG, acc on opaque, a bad tile
 *        number) and move nothing; distributions and placements that must be refused (a
 *        dimension <= 0, more processes than ranks, split points not increasing or past the end,
 *        ndim out of range, a rank twice or outside the job, fewer ranks than processes).
 * Accumulated data is integer-valued (also complex), so every sum is exact in every type. A rank's
 * reads of its own elements rely on comm's ordering (matrix.h: "Completion and ordering are
 * comm's"; comm.h: one origin's operations to overlapping locations are observed in issue order,
 * outstanding or not, accumulates of one type commuting with each other): a get issued after the
 * rank's own put_nb of the same elements must see it, a get_nb issued before a later put must not.
 * Every get (also mid-phase) is checked against a shadow of the whole array, and the bytes of the
 *        caller's buffer outside the patch must be untouched. At each phase end the ranks merge
 *        their shadows (the writer's for written boxes, the sum of every rank's contributions for
 *        accumulated ones) and every rank checks the whole array (one get), random patches with
 *        random leading dimensions, random tiles and elements, its own tiles in place, and random
 *        tiles in place (on this node: read there; elsewhere RMC_ERR_NOT_FOUND and NULL). At
 *        some epoch ends an overlay (rmc_matrix_create_overlay) of the same element type on
 *        another distribution: refused on every rank (RMC_ERR_TOO_BIG) when a rank's part does
 *        not fit in the parent's, else its elements are the parent's at the same byte offset of
 *        each rank's part (tiles stored in tile order without gaps, matrices.md), and writes
 *        through it show in the parent.
 *
 * gemm   Random products C = alpha op(A) op(B) + beta C, m, n, k in 1..RMC_FUZZ_GMAX, F32, F64,
 *        C32, C64, 'N', 'T' and 'C' (complex), small integer alpha and beta (0 too, over a C
 *        holding NaN), A, B and C each on its own random 2-D distribution (the sliced multiply),
 *        every algorithm (AUTO, stationary C / A / B, both stealing variants, SUMMA; the latter on
 *        distributions it can run, and on random ones where it must either run or refuse with
 *        RMC_ERR_UNSUPPORTED on every rank, changing nothing), every RMC_GEMM_UPDATE path;
 *        rmc_matrix_gemm_patch on random sub-patches of larger matrices; matrices of a subset of
 *        the ranks (rmc_matrix_create_comm: two subsets multiplying at once). The data are small
 *        integers, so the serial triple-loop reference is exact in every type (float too) and
 *        every element of C (outside the patch as well), A and B is compared exactly. Bad input
 *        the header says is rejected (mismatched dimensions or patch shapes, patches outside the
 *        matrix or reversed, mixed or integer types, C aliasing A or an overlay of A, a bad trans
 *        character) fails
 *        with the same status on every rank and changes none of A, B, C.
 *
 * SUMMA refuses transposed operands and patches (RMC_ERR_UNSUPPORTED, which matrix.h does not
 * say): its runnable cases are 'N', 'N' on whole matrices. Lowercase 'n', 't', 'c' are accepted.
 *
 * Not covered here (hand-written tests do it): the statistics' time split and AUTO's exact
 * choice (test_gemm.c), the error messages' wording, subset matrices' data movement and
 * collectives on destroyed handles (test_matrix.c), sparse matrices (test_spmul.c).
 *
 * Environment: RMC_FUZZ_SEED (default 4242), RMC_FUZZ_PHASES (data phases, 10; 6 above 2 ranks),
 * RMC_FUZZ_OPS (ops per rank per phase, 40), RMC_FUZZ_MAXEL (elements of a data matrix at most,
 * 3000), RMC_FUZZ_TMAX (its tiles at most, 200), RMC_FUZZ_GEMMS (products, 14; 8 above 2 ranks),
 * RMC_FUZZ_GMAX (largest m, n, k, 48; up to about 150), RMC_FUZZ_BADS (bad-input products, 4),
 * RMC_FUZZ_CAUTIOUS=1 (complete this rank's outstanding operations on overlapping elements before
 * each operation: no reliance on issue order), RMC_FUZZ_TRACE=1 (epochs, phases, products on
 * stdout), RMC_FUZZ_SABOTAGE (bit 1: corrupt the data shadow after phase 1; bit 2: corrupt one
 * element of the first product's reference; the test must then fail). */
#include "cttest.h"
#include <complex.h>
#include <inttypes.h>
#include <math.h>
#include <rmc/matrix.h>

#define MD RMC_MATRIX_MAX_DIM
typedef double complex val_t;

static uint64_t SEED;
static int OPS, PHASES, MAXEL, TMAX, GEMMS, GMAX, BADS, CAUTIOUS, TRACE, SABOTAGE;
static long fails;
static int phase_no = -1;
static const char *where = "";

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (fails++ < 20) {                                                                        \
            fprintf(stderr, "[rank %d] seed %" PRIu64 " phase %d (%s): ", me, SEED, phase_no,      \
                    where);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* a call that must return `want` on this rank */
#define EXPECT_ST(call, want)                                                                      \
    do {                                                                                           \
        rmc_status_t st_ = (call);                                                                 \
        if (st_ != (want))                                                                         \
            FAIL("%s -> %s (%s), want %s", #call, rmc_status_string(st_), rmc_last_error(),        \
                 rmc_status_string(want));                                                         \
    } while (0)

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? (int)strtol(s, NULL, 0) : dflt;
}

/* ------------------------------------------------------------------ randomness --- */
static uint64_t rnd(uint64_t *s, uint64_t n)
{
    return n ? mpitest_splitmix(s) % n : 0;
}
/* uniform in [lo, hi] */
static int64_t rr(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)rnd(s, (uint64_t)(hi - lo + 1));
}
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------------ elements --- */
static int is_cplx(rmc_elem_t e)
{
    return e == RMC_ELEM_C32 || e == RMC_ELEM_C64;
}
/* a random value of type e: a small integer (both parts for complex); opaque: a record number */
static val_t rval(uint64_t *s, rmc_elem_t e, int mag)
{
    if (e == RMC_ELEM_OPAQUE)
        return (double)rr(s, 0, 1000000);
    double re = (double)rr(s, -mag, mag);
    return is_cplx(e) ? re + I * (double)rr(s, -mag, mag) : re;
}
/* v stored as one element of type e (esz bytes) at dst; opaque: bytes derived from v's record
 * number */
static void enc(rmc_elem_t e, size_t esz, void *dst, val_t v)
{
    switch (e) {
    case RMC_ELEM_I32: {
        int32_t x = (int32_t)creal(v);
        memcpy(dst, &x, 4);
        break;
    }
    case RMC_ELEM_I64: {
        int64_t x = (int64_t)creal(v);
        memcpy(dst, &x, 8);
        break;
    }
    case RMC_ELEM_F32: {
        float x = (float)creal(v);
        memcpy(dst, &x, 4);
        break;
    }
    case RMC_ELEM_F64: {
        double x = creal(v);
        memcpy(dst, &x, 8);
        break;
    }
    case RMC_ELEM_C32: {
        float x[2] = {(float)creal(v), (float)cimag(v)};
        memcpy(dst, x, 8);
        break;
    }
    case RMC_ELEM_C64: {
        double x[2] = {creal(v), cimag(v)};
        memcpy(dst, x, 16);
        break;
    }
    default: {
        uint64_t h = mix64((uint64_t)(int64_t)creal(v) * 0x9E3779B97F4A7C15ull + 17);
        for (size_t i = 0; i < esz; i++)
            ((unsigned char *)dst)[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)i;
    }
    }
}
/* the element at src as a value (numeric types) */
static val_t dec(rmc_elem_t e, const void *src)
{
    switch (e) {
    case RMC_ELEM_I32: {
        int32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    case RMC_ELEM_I64: {
        int64_t x;
        memcpy(&x, src, 8);
        return (double)x;
    }
    case RMC_ELEM_F32: {
        float x;
        memcpy(&x, src, 4);
        return x;
    }
    case RMC_ELEM_F64: {
        double x;
        memcpy(&x, src, 8);
        return x;
    }
    case RMC_ELEM_C32: {
        float x[2];
        memcpy(x, src, 8);
        return x[0] + I * x[1];
    }
    case RMC_ELEM_C64: {
        double x[2];
        memcpy(x, src, 16);
        return x[0] + I * x[1];
    }
    default:
        return NAN;
    }
}
static int feq(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}
/* the element at got holds want (exactly; NaN equals NaN) */
static int el_eq(rmc_elem_t e, size_t esz, const void *got, val_t want)
{
    if (e == RMC_ELEM_OPAQUE) {
        unsigned char b[32];
        enc(e, esz, b, want);
        return !memcmp(got, b, esz);
    }
    val_t g = dec(e, got);
    return feq(creal(g), creal(want)) && feq(cimag(g), cimag(want));
}
static const char *ename(rmc_elem_t e)
{
    static const char *const n[] = {"?", "i32", "i64", "f32", "f64", "c32", "c64", "opaque"};
    return (unsigned)e < 8 ? n[e] : "?";
}

/* ------------------------------------------------------------------ distributions --- */
/* a random process grid of nd dimensions whose product is at most nproc */
static void rand_pgrid(uint64_t *s, int nd, int nproc, int pg[])
{
    for (int d = 0; d < nd; d++)
        pg[d] = 1;
    int rem = (int)rr(s, 1, nproc);
    while (rem > 1) {
        int f = 2;
        while (rem % f)
            f++;
        pg[rnd(s, (uint64_t)nd)] *= f;
        rem /= f;
    }
}
/* log-uniform in [1, hi]: small tiles as often as large ones */
static int64_t logu(uint64_t *s, int64_t hi)
{
    double u = (double)rnd(s, 1u << 20) / (double)(1u << 20);
    int64_t x = (int64_t)exp(u * log((double)hi + 1));
    return x < 1 ? 1 : x > hi ? hi : x;
}
/* nb - 1 distinct sorted split points in 1..n-1 after 0 (nb <= n), adjacent ones sometimes */
static void rand_starts(uint64_t *s, int64_t n, int nb, int64_t *out)
{
    out[0] = 0;
    int k = 1;
    while (k < nb) {
        int64_t p = rr(s, 1, n - 1);
        if (rnd(s, 3) == 0 && k > 1 && out[k - 1] + 1 < n)
            p = out[k - 1] + 1; /* a block of one element */
        int dup = 0;
        for (int i = 0; i < k; i++)
            dup |= out[i] == p;
        if (dup)
            continue;
        out[k++] = p;
        for (int i = k - 1; i > 1 && out[i] < out[i - 1]; i--) { /* keep sorted */
            int64_t t = out[i];
            out[i] = out[i - 1];
            out[i - 1] = t;
        }
    }
}

/* A random distribution of dims[0..nd-1] with at most tmax tiles (else a coarser one), the same
 * on every rank for the same *s. sub: place it on these nsub ranks (a subset matrix; only kinds
 * whose grid fits them); else on all ranks or, sometimes, on chosen ones. desc: what it is. */
static rmc_dist_h gen_dist(uint64_t *s, int nd, const int64_t dims[], const int *sub, int nsub,
                           int64_t tmax, char *desc, size_t dlen)
{
    int nproc = sub ? nsub : np;
    for (int attempt = 0; attempt < 24; attempt++) {
        rmc_dist_h d = NULL;
        rmc_status_t st;
        /* regular and round-robin twice as often as the others */
        static const int kinds[] = {0, 3, 1, 2, 0, 3, 4};
        int kind = attempt >= 16 ? 0 : kinds[rnd(s, nd == 2 && !sub ? 7 : 6)];
        int pg[MD], nb[MD];
        int64_t tile[MD], map[MD * 64];
        int off = 0;
        const char *kn = "?";
        int many = rnd(s, 3) == 0; /* small tiles in every dimension */
        switch (kind) {
        case 0: /* regular */
            kn = "regular";
            rand_pgrid(s, nd, nproc, pg);
            for (int d = 0; d < nd; d++) {
                int r = (int)rnd(s, 10);
                tile[d] = r < 2 || attempt >= 16 ? 0
                          : r == 2               ? dims[d] + rr(s, 0, 4) /* larger than it */
                          : r == 3               ? 1
                          : r == 4 || many       ? logu(s, dims[d])
                                                 : rr(s, 1, dims[d]);
            }
            st = rmc_dist_regular(nd, dims, rnd(s, 4) ? tile : NULL, rnd(s, 4) || sub ? pg : NULL,
                                  &d);
            break;
        case 1: /* irregular: the block grid is the process grid */
            kn = "irregular";
            rand_pgrid(s, nd, nproc, nb);
            for (int d = 0; d < nd; d++) {
                if (nb[d] > dims[d])
                    nb[d] = (int)dims[d];
                rand_starts(s, dims[d], nb[d], map + off);
                off += nb[d];
            }
            st = rmc_dist_irregular(nd, dims, nb, map, &d);
            break;
        case 2: /* irregular tiles over a process grid */
            kn = "irregular_grid";
            rand_pgrid(s, nd, nproc, pg);
            for (int d = 0; d < nd; d++) {
                nb[d] = (int)rr(s, 1, dims[d] < 6 ? dims[d] : 6);
                rand_starts(s, dims[d], nb[d], map + off);
                off += nb[d];
            }
            st = rmc_dist_irregular_grid(nd, dims, nb, map, pg, &d);
            break;
        case 3: /* round-robin */
            kn = "round_robin";
            for (int d = 0; d < nd; d++)
                tile[d] = many ? logu(s, dims[d]) : rr(s, 1, dims[d] + 2);
            st = rmc_dist_round_robin(nd, dims, tile, &d);
            break;
        default: { /* the 2-D block descriptors */
            static const char *const bn[] = {"2d-rect", "2d-row", "2d-column", "2d-square",
                                             "2d-opt"};
            int b = (int)rnd(s, 5);
            kn = bn[b];
            int64_t param =
                rnd(s, 3) == 0 ? 0 : rr(s, 1, (dims[0] > dims[1] ? dims[0] : dims[1]) + 2);
            st = rmc_dist_2d((rmc_block_t)b, dims[0], dims[1], param, &d);
        }
        }
        if (st != RMC_OK) {
            FAIL("%s distribution -> %s (%s)", kn, rmc_status_string(st), rmc_last_error());
            continue;
        }
        if (rmc_dist_ntiles(d) > tmax) {
            rmc_dist_free(d);
            continue;
        }
        /* placement */
        int pgr[MD], pc = 1;
        rmc_dist_proc_grid(d, pgr);
        for (int k = 0; k < nd; k++)
            pc *= pgr[k];
        if (kind == 3)
            pc = 1;
        int placed = 0;
        if (sub || rnd(s, 10) < 3) {
            int perm[256], pool = sub ? nsub : np;
            for (int i = 0; i < pool; i++)
                perm[i] = sub ? sub[i] : i;
            for (int i = pool - 1; i > 0; i--) {
                int j = (int)rnd(s, (uint64_t)i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            int n = pc + (int)rnd(s, (uint64_t)(pool - pc + 1));
            if (sub && kind == 3 && rnd(s, 2))
                n = pool;
            st = rmc_dist_set_ranks(d, perm, n);
            if (st != RMC_OK)
                FAIL("set_ranks n %d (grid %d) -> %s (%s)", n, pc, rmc_status_string(st),
                     rmc_last_error());
            placed = n;
        }
        if (desc) {
            int64_t tg[MD];
            rmc_dist_tile_grid(d, tg);
            int w = snprintf(desc, dlen, "%s tiles", kn);
            for (int k = 0; k < nd && w > 0 && (size_t)w < dlen; k++)
                w += snprintf(desc + w, dlen - (size_t)w, "%s%" PRId64, k ? "x" : " ", tg[k]);
            if (w > 0 && (size_t)w < dlen && placed)
                snprintf(desc + w, dlen - (size_t)w, " on %d chosen ranks", placed);
        }
        return d;
    }
    return NULL;
}

/* ------------------------------------------------------------------ patches --- */
/* The elements of patch [lo, hi) of an array of nd dimensions dims: their row-major indices
 * (lis) and offsets in a buffer with leading dimensions ld (NULL: the patch's shape), in elements
 * (bos). Returns the count. *bufel: the buffer's size in elements. */
static int64_t patch_list(int nd, const int64_t dims[], const int64_t lo[], const int64_t hi[],
                          const int64_t *ld, int64_t *lis, int64_t *bos, int64_t *bufel)
{
    int64_t es[MD], bs[MD], idx[MD], n = 1;
    es[nd - 1] = 1;
    bs[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) {
        es[d] = es[d + 1] * dims[d + 1];
        bs[d] = bs[d + 1] * (ld ? ld[d] : hi[d + 1] - lo[d + 1]);
    }
    for (int d = 0; d < nd; d++) {
        n *= hi[d] - lo[d];
        idx[d] = lo[d];
    }
    if (bufel)
        *bufel = n ? (hi[0] - lo[0]) * bs[0] : 0;
    if (!n)
        return 0;
    int64_t c = 0;
    for (;;) {
        int64_t li = 0, bo = 0;
        for (int d = 0; d < nd; d++) {
            li += idx[d] * es[d];
            bo += (idx[d] - lo[d]) * bs[d];
        }
        if (lis)
            lis[c] = li;
        if (bos)
            bos[c] = bo;
        c++;
        int d = nd - 1;
        while (d >= 0 && ++idx[d] == hi[d]) {
            idx[d] = lo[d];
            d--;
        }
        if (d < 0)
            break;
    }
    return c;
}
static int overlap(int nd, const int64_t alo[], const int64_t ahi[], const int64_t blo[],
                   const int64_t bhi[])
{
    for (int d = 0; d < nd; d++)
        if (ahi[d] <= blo[d] || bhi[d] <= alo[d])
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ the data test --- */
enum { W_RO = -1, W_ACC = -2, W_LOCAL = -3 };
enum { ROLE_MINE, ROLE_ACC, ROLE_READ };

static struct {
    rmc_matrix_h m;
    rmc_elem_t e;
    size_t esz;
    int nd;
    int64_t dims[MD], es[MD], n, ntiles;
    val_t *shadow; /* the agreed contents at the phase start */
    val_t *cur;    /* the shadow plus this rank's writes in the phase */
    val_t *accd;   /* this rank's contributions to the accumulated boxes */
    int *wmap;     /* per element: the writing rank, W_RO, W_ACC or W_LOCAL */
    int *eowner;   /* per element: its tile's owner */
    int64_t *etile;
    int64_t cuts[MD][8];
    int ncut[MD];
    int64_t *el[3]; /* this rank's elements per role */
    int64_t nel[3];
    int64_t *tmine, *tread, *tlocal; /* tiles: all mine, all readable, mine in place */
    int64_t ntmine, ntread, ntlocal;
    int64_t *lis, *bos; /* scratch, n each */
} M;

static int readable(int64_t li)
{
    int w = M.wmap[li];
    return w == W_RO || w == me || (w == W_LOCAL && M.eowner[li] == me);
}
static int role_ok(int role, int64_t li)
{
    return role == ROLE_MINE  ? M.wmap[li] == me
           : role == ROLE_ACC ? M.wmap[li] == W_ACC
                              : readable(li);
}
static void idx_of(int64_t li, int64_t idx[])
{
    for (int d = 0; d < M.nd; d++) {
        idx[d] = li / M.es[d];
        li %= M.es[d];
    }
}

/* a random patch of elements of one role containing a random one of them (0: none) */
static int pick_patch(uint64_t *r, int role, int64_t lo[], int64_t hi[])
{
    if (!M.nel[role])
        return 0;
    int64_t li = M.el[role][rnd(r, (uint64_t)M.nel[role])], idx[MD];
    idx_of(li, idx);
    for (int tries = 0; tries < 3; tries++) {
        for (int d = 0; d < M.nd; d++) { /* within idx's box, or anywhere (then checked) */
            int64_t clo = 0, chi = M.dims[d];
            if (tries < 2)
                for (int c = 0; c < M.ncut[d]; c++) {
                    if (M.cuts[d][c] <= idx[d])
                        clo = M.cuts[d][c];
                    else if (M.cuts[d][c] < chi)
                        chi = M.cuts[d][c];
                }
            int full = rnd(r, 3) == 0;
            lo[d] = full ? clo : rr(r, clo, idx[d]);
            hi[d] = full ? chi : rr(r, idx[d] + 1, chi);
        }
        int64_t c = patch_list(M.nd, M.dims, lo, hi, NULL, M.lis, NULL, NULL), ok = 1;
        for (int64_t i = 0; i < c && ok; i++)
            ok = role_ok(role, M.lis[i]);
        if (ok)
            return 1;
    }
    for (int d = 0; d < M.nd; d++)
        lo[d] = idx[d], hi[d] = idx[d] + 1;
    return 1;
}

/* a buffer for patch [lo, hi): random leading dimensions (or NULL), filled with 0xA5 */
typedef struct {
    int64_t lo[MD], hi[MD], ld[MD];
    int hasld;
    char *buf;
    int64_t bufel, cnt;
    int64_t *lis, *bos;
} pbuf_t;
static void pbuf_make(uint64_t *r, pbuf_t *p, const int64_t lo[], const int64_t hi[])
{
    memcpy(p->lo, lo, sizeof p->lo);
    memcpy(p->hi, hi, sizeof p->hi);
    p->hasld = M.nd > 1 && rnd(r, 2);
    for (int d = 0; d + 1 < M.nd; d++)
        p->ld[d] = hi[d + 1] - lo[d + 1] + (p->hasld ? rr(r, 0, 3) : 0);
    p->cnt = patch_list(M.nd, M.dims, lo, hi, p->hasld ? p->ld : NULL, NULL, NULL, &p->bufel);
    p->lis = malloc(((size_t)p->cnt + 1) * sizeof(int64_t));
    p->bos = malloc(((size_t)p->cnt + 1) * sizeof(int64_t));
    patch_list(M.nd, M.dims, lo, hi, p->hasld ? p->ld : NULL, p->lis, p->bos, NULL);
    p->buf = malloc((size_t)p->bufel * M.esz + 1);
    memset(p->buf, 0xA5, (size_t)p->bufel * M.esz + 1);
}
static void pbuf_free(pbuf_t *p)
{
    free(p->buf);
    free(p->lis);
    free(p->bos);
    p->buf = NULL;
    p->lis = p->bos = NULL;
}
/* checks a buffer a get filled against want[] (per patch element, in patch order), and that the
 * bytes outside the patch kept 0xA5 */
static void pbuf_check(pbuf_t *p, const val_t *want, const char *how)
{
    int bad = 0;
    for (int64_t i = 0; i < p->cnt; i++) {
        char *at = p->buf + (size_t)p->bos[i] * M.esz;
        if (!el_eq(M.e, M.esz, at, want[i])) {
            if (bad++ < 3) {
                int64_t idx[MD];
                idx_of(p->lis[i], idx);
                val_t g = dec(M.e, at); /* (opaque: NaN, the bytes differ) */
                FAIL("%s: element %" PRId64 " (idx0 %" PRId64 " tile %" PRId64
                     " owner %d role %d) got %g%+gi want %g%+gi (%s)",
                     how, p->lis[i], idx[0], M.etile[p->lis[i]], M.eowner[p->lis[i]],
                     M.wmap[p->lis[i]], creal(g), cimag(g), creal(want[i]), cimag(want[i]),
                     ename(M.e));
            }
        }
        memset(at, 0xA5, M.esz);
    }
    for (int64_t i = 0; i < p->bufel * (int64_t)M.esz + 1; i++)
        if ((unsigned char)p->buf[i] != 0xA5) {
            FAIL("%s: byte %" PRId64 " of the buffer outside the patch written", how, i);
            break;
        }
}
static val_t *snapshot(const pbuf_t *p)
{
    val_t *w = malloc(((size_t)p->cnt + 1) * sizeof(val_t));
    for (int64_t i = 0; i < p->cnt; i++)
        w[i] = M.cur[p->lis[i]];
    return w;
}

/* outstanding _nb operations */
typedef struct {
    rmc_request_h req;
    int get; /* 1: check the buffer against want on completion */
    int acc; /* an accumulate into the shared boxes */
    pbuf_t p;
    val_t *want;
    const char *how;
} pend_t;
#define MAXPEND 16
static pend_t pend[MAXPEND];
static int npend;

static void pend_finish(int i, rmc_status_t st)
{
    pend_t p = pend[i];
    pend[i] = pend[--npend];
    if (st != RMC_OK)
        FAIL("completing %s -> %s (%s)", p.how, rmc_status_string(st), rmc_last_error());
    else if (p.get)
        pbuf_check(&p.p, p.want, p.how);
    pbuf_free(&p.p);
    free(p.want);
}
/* completes pending operation i with rmc_wait, or rmc_test until done */
static void pend_complete(uint64_t *r, int i)
{
    rmc_status_t st;
    if (rnd(r, 2)) {
        st = rmc_wait(&pend[i].req);
    } else {
        int done = 0;
        long spins = 0;
        do {
            st = rmc_test(&pend[i].req, &done);
            if (++spins > 100000000L) {
                FAIL("rmc_test never completed %s", pend[i].how);
                st = rmc_wait(&pend[i].req);
                break;
            }
        } while (st == RMC_OK && !done);
    }
    if (pend[i].req != RMC_REQUEST_NULL)
        FAIL("%s: request not NULL after completion", pend[i].how);
    pend_finish(i, st);
}
static void pend_all(uint64_t *r)
{
    while (npend)
        pend_complete(r, (int)rnd(r, (uint64_t)npend));
}
/* RMC_FUZZ_CAUTIOUS: completes this rank's outstanding operations overlapping [lo, hi) */
static long n_raw, n_war, n_waw; /* operations issued over this rank's outstanding ones */
static void pend_overlap(uint64_t *r, const int64_t lo[], const int64_t hi[], int acc, int get)
{
    for (int i = 0; i < npend && !CAUTIOUS; i++)
        if (overlap(M.nd, lo, hi, pend[i].p.lo, pend[i].p.hi)) {
            n_raw += get && !pend[i].get;
            n_war += !get && pend[i].get;
            n_waw += !get && !pend[i].get;
        }
    if (!CAUTIOUS)
        return;
    for (int i = npend - 1; i >= 0; i--)
        if (i < npend && !(acc && pend[i].acc) && overlap(M.nd, lo, hi, pend[i].p.lo, pend[i].p.hi))
            pend_complete(r, i);
}
/* records an _nb call: st and req as it left them */
static void pend_add(uint64_t *r, rmc_status_t st, rmc_request_h req, int get, int acc, pbuf_t *p,
                     val_t *want, const char *how)
{
    if (st != RMC_OK) {
        FAIL("%s -> %s (%s)", how, rmc_status_string(st), rmc_last_error());
        if (req != RMC_REQUEST_NULL)
            rmc_wait(&req);
        pbuf_free(p);
        free(want);
        return;
    }
    if (npend == MAXPEND)
        pend_complete(r, (int)rnd(r, MAXPEND));
    pend[npend++] = (pend_t){req, get, acc, *p, want, how};
    if (req == RMC_REQUEST_NULL)
        pend_finish(npend - 1, RMC_OK);
}

/* values for a put / acc of patch p: the buffer filled; vals[i] the values */
static void fill_vals(uint64_t *r, pbuf_t *p, val_t *vals, int mag)
{
    for (int64_t i = 0; i < p->cnt; i++) {
        vals[i] = rval(r, M.e, mag);
        enc(M.e, M.esz, p->buf + (size_t)p->bos[i] * M.esz, vals[i]);
    }
}

enum {
    OP_PUT,
    OP_ACC_MINE,
    OP_ACC_SHARED,
    OP_GET,
    OP_ELEM_PUT,
    OP_ELEM_GET,
    OP_TILE_PUT,
    OP_TILE_GET,
    OP_LOCAL,
    OP_COMPLETE,
    OP_BAD,
    OP_N
};
static const int op_weight[OP_N] = {16, 8, 16, 18, 6, 6, 6, 6, 6, 4, 2};
static long op_count[OP_N];

static void tile_box(int64_t t, int64_t lo[], int64_t hi[])
{
    int owner;
    rmc_dist_tile(rmc_matrix_dist(M.m), t, lo, hi, &owner);
}

static void do_op(uint64_t *r)
{
    int tot = 0, op = 0;
    for (int k = 0; k < OP_N; k++)
        tot += op_weight[k];
    int w = (int)rnd(r, (uint64_t)tot);
    while (w >= op_weight[op]) {
        w -= op_weight[op];
        op++;
    }
    int numeric = M.e != RMC_ELEM_OPAQUE;
    int64_t lo[MD], hi[MD];
    rmc_status_t st;
    rmc_request_h req = RMC_REQUEST_NULL;
    op_count[op]++;
    switch (op) {
    case OP_PUT:
    case OP_ACC_MINE:
    case OP_ACC_SHARED: {
        int shared = op == OP_ACC_SHARED, acc = op != OP_PUT;
        if (acc && !numeric)
            return;
        if (!pick_patch(r, shared ? ROLE_ACC : ROLE_MINE, lo, hi))
            return;
        if (rnd(r, 20) == 0) { /* an empty patch: moves nothing */
            int d = (int)rnd(r, (uint64_t)M.nd);
            hi[d] = lo[d];
        }
        pend_overlap(r, lo, hi, shared, 0);
        pbuf_t p;
        pbuf_make(r, &p, lo, hi);
        val_t *vals = malloc(((size_t)p.cnt + 1) * sizeof(val_t));
        fill_vals(r, &p, vals, acc ? 4 : 9);
        val_t alpha = 1;
        unsigned char ab[16];
        const void *ap = NULL;
        if (acc && rnd(r, 4)) {
            alpha = rval(r, M.e, 2);
            enc(M.e, M.esz, ab, alpha);
            ap = ab;
        }
        const int64_t *ld = p.hasld ? p.ld : NULL;
        int nb = (int)rnd(r, 2);
        where = acc ? (shared ? "acc shared" : "acc mine") : "put";
        if (!acc)
            st = nb ? rmc_matrix_put_nb(M.m, lo, hi, p.buf, ld, &req)
                    : rmc_matrix_put(M.m, lo, hi, p.buf, ld);
        else
            st = nb ? rmc_matrix_acc_nb(M.m, lo, hi, p.buf, ld, ap, &req)
                    : rmc_matrix_acc(M.m, lo, hi, p.buf, ld, ap);
        if (st == RMC_OK)
            for (int64_t i = 0; i < p.cnt; i++) {
                int64_t li = p.lis[i];
                if (!acc)
                    M.cur[li] = vals[i];
                else if (shared)
                    M.accd[li] += alpha * vals[i];
                else
                    M.cur[li] += alpha * vals[i];
            }
        free(vals);
        if (nb)
            pend_add(r, st, req, 0, shared, &p, NULL,
                     acc ? (shared ? "acc_nb shared" : "acc_nb mine") : "put_nb");
        else {
            if (st != RMC_OK)
                FAIL("%s -> %s (%s)", where, rmc_status_string(st), rmc_last_error());
            pbuf_free(&p);
        }
        break;
    }
    case OP_GET: {
        if (!pick_patch(r, ROLE_READ, lo, hi))
            return;
        pend_overlap(r, lo, hi, 0, 1);
        pbuf_t p;
        pbuf_make(r, &p, lo, hi);
        val_t *want = snapshot(&p);
        const int64_t *ld = p.hasld ? p.ld : NULL;
        where = "get";
        if (rnd(r, 2)) {
            st = rmc_matrix_get_nb(M.m, lo, hi, p.buf, ld, &req);
            pend_add(r, st, req, 1, 0, &p, want, "get_nb");
        } else {
            st = rmc_matrix_get(M.m, lo, hi, p.buf, ld);
            if (st != RMC_OK)
                FAIL("get -> %s (%s)", rmc_status_string(st), rmc_last_error());
            else
                pbuf_check(&p, want, "get");
            pbuf_free(&p);
            free(want);
        }
        break;
    }
    case OP_ELEM_PUT:
    case OP_ELEM_GET: {
        int put = op == OP_ELEM_PUT;
        int role = put ? ROLE_MINE : ROLE_READ;
        if (!M.nel[role])
            return;
        int64_t li = M.el[role][rnd(r, (uint64_t)M.nel[role])];
        idx_of(li, lo);
        for (int d = 0; d < M.nd; d++)
            hi[d] = lo[d] + 1;
        pend_overlap(r, lo, hi, 0, !put);
        unsigned char b[32];
        memset(b, 0xA5, sizeof b);
        where = put ? "elem_put" : "elem_get";
        if (put) {
            val_t v = rval(r, M.e, 9);
            enc(M.e, M.esz, b, v);
            EXPECT_ST(rmc_matrix_elem_put(M.m, lo, b), RMC_OK);
            M.cur[li] = v;
        } else {
            st = rmc_matrix_elem_get(M.m, lo, b);
            if (st != RMC_OK)
                FAIL("elem_get -> %s (%s)", rmc_status_string(st), rmc_last_error());
            else if (!el_eq(M.e, M.esz, b, M.cur[li]) || b[M.esz] != 0xA5)
                FAIL("elem_get element %" PRId64 " (role %d, owner %d): wrong value", li,
                     M.wmap[li], M.eowner[li]);
        }
        break;
    }
    case OP_TILE_PUT:
    case OP_TILE_GET: {
        int put = op == OP_TILE_PUT;
        int64_t nt = put ? M.ntmine : M.ntread;
        if (!nt)
            return;
        int64_t t = (put ? M.tmine : M.tread)[rnd(r, (uint64_t)nt)];
        tile_box(t, lo, hi);
        pend_overlap(r, lo, hi, 0, !put);
        pbuf_t p;
        memset(&p, 0, sizeof p);
        memcpy(p.lo, lo, sizeof lo);
        memcpy(p.hi, hi, sizeof hi);
        p.cnt = patch_list(M.nd, M.dims, lo, hi, NULL, NULL, NULL, &p.bufel);
        p.lis = malloc((size_t)p.cnt * sizeof(int64_t));
        p.bos = malloc((size_t)p.cnt * sizeof(int64_t));
        patch_list(M.nd, M.dims, lo, hi, NULL, p.lis, p.bos, NULL);
        p.buf = malloc((size_t)p.bufel * M.esz + 1);
        memset(p.buf, 0xA5, (size_t)p.bufel * M.esz + 1);
        int nb = (int)rnd(r, 2);
        where = put ? "tile_put" : "tile_get";
        if (put) {
            val_t *vals = malloc((size_t)p.cnt * sizeof(val_t));
            fill_vals(r, &p, vals, 9);
            st = nb ? rmc_matrix_tile_put_nb(M.m, t, p.buf, &req)
                    : rmc_matrix_tile_put(M.m, t, p.buf);
            if (st == RMC_OK)
                for (int64_t i = 0; i < p.cnt; i++)
                    M.cur[p.lis[i]] = vals[i];
            free(vals);
            if (nb)
                pend_add(r, st, req, 0, 0, &p, NULL, "tile_put_nb");
            else {
                if (st != RMC_OK)
                    FAIL("tile_put %" PRId64 " -> %s (%s)", t, rmc_status_string(st),
                         rmc_last_error());
                pbuf_free(&p);
            }
        } else {
            val_t *want = snapshot(&p);
            if (nb) {
                st = rmc_matrix_tile_get_nb(M.m, t, p.buf, &req);
                pend_add(r, st, req, 1, 0, &p, want, "tile_get_nb");
            } else {
                st = rmc_matrix_tile_get(M.m, t, p.buf);
                if (st != RMC_OK)
                    FAIL("tile_get %" PRId64 " -> %s (%s)", t, rmc_status_string(st),
                         rmc_last_error());
                else
                    pbuf_check(&p, want, "tile_get");
                pbuf_free(&p);
                free(want);
            }
        }
        break;
    }
    case OP_LOCAL: { /* stores (and loads) through the address of a tile this rank owns */
        if (!M.ntlocal)
            return;
        int64_t t = M.tlocal[rnd(r, (uint64_t)M.ntlocal)];
        void *base = NULL;
        where = "tile_local";
        st = rmc_matrix_tile_local(M.m, t, &base);
        if (st != RMC_OK || !base) {
            FAIL("tile_local of own tile %" PRId64 " -> %s %p", t, rmc_status_string(st), base);
            return;
        }
        tile_box(t, lo, hi);
        int64_t c = patch_list(M.nd, M.dims, lo, hi, NULL, M.lis, M.bos, NULL);
        int64_t nw = rnd(r, 2) ? c : rr(r, 1, c < 8 ? c : 8);
        for (int64_t k = 0; k < nw; k++) {
            int64_t i = nw == c ? k : (int64_t)rnd(r, (uint64_t)c);
            val_t v = rval(r, M.e, 9);
            enc(M.e, M.esz, (char *)base + (size_t)M.bos[i] * M.esz, v);
            M.cur[M.lis[i]] = v;
        }
        for (int k = 0; k < 4; k++) {
            int64_t i = (int64_t)rnd(r, (uint64_t)c);
            if (!el_eq(M.e, M.esz, (char *)base + (size_t)M.bos[i] * M.esz, M.cur[M.lis[i]]))
                FAIL("tile_local %" PRId64 ": element %" PRId64 " read in place differs", t,
                     M.lis[i]);
        }
        break;
    }
    case OP_COMPLETE:
        if (npend)
            pend_complete(r, (int)rnd(r, (uint64_t)npend));
        break;
    default: { /* calls that must fail and move nothing (over elements nobody else writes) */
        unsigned char b[128 * 32];
        memset(b, 0x3C, sizeof b);
        int64_t idx[MD], lo2[MD], hi2[MD], ld[MD];
        for (int d = 0; d < M.nd; d++) {
            lo2[d] = 0;
            hi2[d] = M.dims[d] < 2 ? M.dims[d] : 2;
            ld[d] = 2;
        }
        int k = (int)rnd(r, 8), dd = (int)rnd(r, (uint64_t)M.nd);
        where = "bad input";
        switch (k) {
        case 0: /* a patch past the end */
            hi2[dd] = M.dims[dd] + 1;
            lo2[dd] = hi2[dd] - 2 < 0 ? 0 : hi2[dd] - 2;
            EXPECT_ST(rmc_matrix_put(M.m, lo2, hi2, b, NULL), RMC_ERR_BOUNDS);
            break;
        case 1: /* lo > hi */
            lo2[dd] = 1;
            hi2[dd] = 0;
            EXPECT_ST(rmc_matrix_put(M.m, lo2, hi2, b, NULL), RMC_ERR_ARG);
            break;
        case 2: /* ld smaller than the patch */
            if (M.nd < 2 || hi2[M.nd - 1] < 2)
                return;
            ld[M.nd - 2] = 1;
            EXPECT_ST(rmc_matrix_put(M.m, lo2, hi2, b, ld), RMC_ERR_ARG);
            break;
        case 3: /* an element outside */
            idx_of(0, idx);
            idx[dd] = rnd(r, 2) ? M.dims[dd] : -1;
            EXPECT_ST(rmc_matrix_elem_put(M.m, idx, b), RMC_ERR_BOUNDS);
            break;
        case 6: /* buffer strides that overflow 64 bits */
            if (M.nd < 2)
                return;
            ld[0] = INT64_MAX / 3;
            EXPECT_ST(rmc_matrix_get(M.m, lo2, hi2, b, ld), RMC_ERR_TOO_BIG);
            break;
        case 7: /* a stride of 2 GiB or more between rows moved as one (two rows of one tile;
                 * rows in different tiles move apart, and the buffer must then be that large) */
            if (M.nd != 2 || hi2[0] < 2 || M.etile[0] != M.etile[M.dims[1]])
                return;
            ld[0] = ((int64_t)1 << 31) / (int64_t)M.esz + 1;
            EXPECT_ST(rmc_matrix_get(M.m, lo2, hi2, b, ld), RMC_ERR_TOO_BIG);
            break;
        case 4: /* a tile that does not exist */
            st = rmc_matrix_tile_put(M.m, rnd(r, 2) ? M.ntiles : -1, b);
            if (st == RMC_OK)
                FAIL("tile_put of a tile that does not exist -> RMC_OK");
            break;
        default: /* accumulates of opaque elements */
            if (!numeric)
                EXPECT_ST(rmc_matrix_acc(M.m, lo2, hi2, b, NULL, NULL), RMC_ERR_TYPE);
        }
    }
    }
}

/* ------------------------------------------------------------------ epochs and phases --- */
/* a random shape of nd dimensions with at most maxel elements, some extents 1 */
static void rand_shape(uint64_t *s, int nd, int64_t maxel, int64_t dims[])
{
    int64_t cap = (int64_t)(pow((double)maxel, 1.0 / nd) * 1.5) + 1, n = 1;
    for (int d = 0; d < nd; d++) {
        dims[d] = rnd(s, 7) == 0 ? 1 : rr(s, 1, cap);
        n *= dims[d];
    }
    while (n > maxel) {
        int big = 0;
        for (int d = 1; d < nd; d++)
            if (dims[d] > dims[big])
                big = d;
        n /= dims[big];
        dims[big] = (dims[big] + 1) / 2;
        n *= dims[big];
    }
}

static void bad_dists(uint64_t *s);
static void epoch_begin(uint64_t *s)
{
    bad_dists(s);
    int x = (int)rnd(s, 20);
    M.nd = x < 4 ? 1 : x < 11 ? 2 : x < 15 ? 3 : (int)rr(s, 4, MD);
    rand_shape(s, M.nd, MAXEL, M.dims);
    M.e = (rmc_elem_t)rr(s, RMC_ELEM_I32, RMC_ELEM_OPAQUE);
    M.esz = M.e == RMC_ELEM_OPAQUE ? (size_t)rr(s, 1, 24) : rmc_elem_size(M.e);
    char desc[160];
    rmc_dist_h d = gen_dist(s, M.nd, M.dims, NULL, 0, TMAX, desc, sizeof desc);
    MPI_CHECK_ALL(d != NULL);
    rmc_status_t st = M.e == RMC_ELEM_OPAQUE
                          ? rmc_matrix_create_opaque(MPI_COMM_NULL, d, M.esz, &M.m)
                          : rmc_matrix_create(d, M.e, &M.m);
    if (st != RMC_OK)
        fprintf(stderr, "[rank %d] create %s on %s -> %s (%s)\n", me, ename(M.e), desc,
                rmc_status_string(st), rmc_last_error());
    MPI_CHECK_ALL(st == RMC_OK);
    rmc_dist_free(d);
    if (rmc_matrix_elem_size(M.m) != M.esz || rmc_matrix_elem(M.m) != M.e)
        FAIL("elem size %zu type %d, want %zu %d", rmc_matrix_elem_size(M.m), rmc_matrix_elem(M.m),
             M.esz, M.e);
    M.n = 1;
    for (int k = M.nd - 1; k >= 0; k--) {
        M.es[k] = M.n;
        M.n *= M.dims[k];
    }
    M.ntiles = rmc_dist_ntiles(rmc_matrix_dist(M.m));
    if (TRACE && me == 0) {
        printf("epoch at phase %d: %s %zu B, dims", phase_no, ename(M.e), M.esz);
        for (int k = 0; k < M.nd; k++)
            printf("%s%" PRId64, k ? "x" : " ", M.dims[k]);
        printf(", %s\n", desc);
    }
    size_t n = (size_t)M.n;
    M.shadow = calloc(n, sizeof(val_t));
    M.cur = calloc(n, sizeof(val_t));
    M.accd = calloc(n, sizeof(val_t));
    M.wmap = calloc(n, sizeof(int));
    M.eowner = calloc(n, sizeof(int));
    M.etile = calloc(n, sizeof(int64_t));
    for (int k = 0; k < 3; k++)
        M.el[k] = calloc(n, sizeof(int64_t));
    M.tmine = calloc((size_t)M.ntiles, sizeof(int64_t));
    M.tread = calloc((size_t)M.ntiles, sizeof(int64_t));
    M.tlocal = calloc((size_t)M.ntiles, sizeof(int64_t));
    M.lis = calloc(n, sizeof(int64_t));
    M.bos = calloc(n, sizeof(int64_t));
    for (int64_t li = 0; li < M.n; li++) {
        int64_t idx[MD];
        idx_of(li, idx);
        if (rmc_dist_locate(rmc_matrix_dist(M.m), idx, &M.etile[li], &M.eowner[li]) != RMC_OK)
            FAIL("locate element %" PRId64, li);
    }
    if (M.e == RMC_ELEM_OPAQUE) /* zero bytes are no record's encoding: start from a fill */
        for (int64_t li = 0; li < M.n; li++)
            M.shadow[li] = -1;
}

static void epoch_end(void)
{
    MPI_CHECK_OK(rmc_matrix_destroy(M.m));
    free(M.shadow);
    free(M.cur);
    free(M.accd);
    free(M.wmap);
    free(M.eowner);
    free(M.etile);
    for (int k = 0; k < 3; k++)
        free(M.el[k]);
    free(M.tmine);
    free(M.tread);
    free(M.tlocal);
    free(M.lis);
    free(M.bos);
}

/* the roles of this phase (the same on every rank from *s), this rank's lists */
static void phase_begin(uint64_t *s)
{
    where = "phase begin";
    if (M.e == RMC_ELEM_OPAQUE && M.shadow[0] == -1 ? 1 : rnd(s, 4) == 0) {
        val_t v = rval(s, M.e, 9);
        unsigned char b[32];
        enc(M.e, M.esz, b, v);
        MPI_CHECK_OK(rmc_matrix_fill(M.m, b));
        for (int64_t li = 0; li < M.n; li++)
            M.shadow[li] = v;
    }
    int64_t ncell = 1, cs[MD];
    for (int d = M.nd - 1; d >= 0; d--) {
        int64_t want = rnd(s, 4);
        if (want > M.dims[d] - 1)
            want = M.dims[d] - 1;
        int64_t st[8];
        if (want)
            rand_starts(s, M.dims[d], (int)want + 1, st);
        M.ncut[d] = (int)want;
        for (int c = 0; c < want; c++)
            M.cuts[d][c] = st[c + 1];
        cs[d] = ncell;
        ncell *= want + 1;
    }
    int *cell = malloc((size_t)ncell * sizeof(int));
    int numeric = M.e != RMC_ELEM_OPAQUE;
    for (int64_t c = 0; c < ncell; c++) {
        int x = (int)rnd(s, 100);
        cell[c] = x < 20 ? W_RO : x < 45 ? (numeric ? W_ACC : W_RO) : (int)rnd(s, (uint64_t)np);
    }
    for (int64_t li = 0; li < M.n; li++) {
        int64_t idx[MD], c = 0;
        idx_of(li, idx);
        for (int d = 0; d < M.nd; d++) {
            int64_t k = 0;
            while (k < M.ncut[d] && M.cuts[d][k] <= idx[d])
                k++;
            c += k * cs[d];
        }
        M.wmap[li] = cell[c];
    }
    free(cell);
    char *loc = calloc((size_t)M.ntiles, 1);
    for (int64_t t = 0; t < M.ntiles; t++)
        loc[t] = rnd(s, 100) < 15;
    for (int64_t li = 0; li < M.n; li++)
        if (loc[M.etile[li]])
            M.wmap[li] = W_LOCAL;
    for (int k = 0; k < 3; k++)
        M.nel[k] = 0;
    for (int64_t li = 0; li < M.n; li++)
        for (int k = 0; k < 3; k++)
            if (role_ok(k, li))
                M.el[k][M.nel[k]++] = li;
    /* the tiles: all this rank's, all readable, in place */
    char *allmine = malloc((size_t)M.ntiles), *allread = malloc((size_t)M.ntiles);
    memset(allmine, 1, (size_t)M.ntiles);
    memset(allread, 1, (size_t)M.ntiles);
    for (int64_t li = 0; li < M.n; li++) {
        allmine[M.etile[li]] &= M.wmap[li] == me;
        allread[M.etile[li]] &= readable(li);
    }
    M.ntmine = M.ntread = M.ntlocal = 0;
    for (int64_t t = 0; t < M.ntiles; t++) {
        int64_t lo[MD], hi[MD];
        int owner;
        rmc_dist_tile(rmc_matrix_dist(M.m), t, lo, hi, &owner);
        if (allmine[t])
            M.tmine[M.ntmine++] = t;
        if (allread[t])
            M.tread[M.ntread++] = t;
        if (loc[t] && owner == me)
            M.tlocal[M.ntlocal++] = t;
    }
    free(allmine);
    free(allread);
    free(loc);
    memcpy(M.cur, M.shadow, (size_t)M.n * sizeof(val_t));
    memset(M.accd, 0, (size_t)M.n * sizeof(val_t));
}

/* a get of [lo, hi) checked against the shadow */
static void check_get(uint64_t *r, const int64_t lo[], const int64_t hi[], const char *how)
{
    pbuf_t p;
    pbuf_make(r, &p, lo, hi);
    val_t *want = snapshot(&p);
    rmc_status_t st = rmc_matrix_get(M.m, lo, hi, p.buf, p.hasld ? p.ld : NULL);
    if (st != RMC_OK)
        FAIL("%s -> %s (%s)", how, rmc_status_string(st), rmc_last_error());
    else
        pbuf_check(&p, want, how);
    pbuf_free(&p);
    free(want);
}

/* merges the ranks' writes into the shadow, every rank checks everything */
static void phase_end(uint64_t *r)
{
    where = "phase end";
    pend_all(r);
    MPI_CHECK_OK(rmc_barrier());
    size_t n = (size_t)M.n;
    val_t *all = malloc(n * (size_t)np * sizeof(val_t)), *sum = malloc(n * sizeof(val_t));
    MPI_Request rq;
    MPI_Iallgather(M.cur, (int)(n * 2), MPI_DOUBLE, all, (int)(n * 2), MPI_DOUBLE, MPI_COMM_WORLD,
                   &rq);
    mpitest_wait_(&rq);
    MPI_Iallreduce(M.accd, sum, (int)(n * 2), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
    for (size_t li = 0; li < n; li++) {
        int w = M.wmap[li];
        if (w >= 0)
            M.shadow[li] = all[(size_t)w * n + li];
        else if (w == W_LOCAL)
            M.shadow[li] = all[(size_t)M.eowner[li] * n + li];
        else if (w == W_ACC)
            M.shadow[li] += sum[li];
    }
    free(all);
    free(sum);
    if ((SABOTAGE & 1) && phase_no == 1)
        M.shadow[n / 2] += 1; /* the same element on every rank */
    memcpy(M.cur, M.shadow, n * sizeof(val_t));
    for (int d = 0; d < M.nd; d++)
        M.ncut[d] = 0;
    where = "check";
    int64_t lo[MD], hi[MD];
    for (int d = 0; d < M.nd; d++)
        lo[d] = 0, hi[d] = M.dims[d];
    check_get(r, lo, hi, "check whole");
    for (int k = 0; k < 4; k++) { /* random patches anywhere: across tiles and owners */
        for (int d = 0; d < M.nd; d++) {
            lo[d] = rr(r, 0, M.dims[d] - 1);
            hi[d] = rr(r, lo[d] + 1, M.dims[d]);
        }
        check_get(r, lo, hi, "check patch");
    }
    for (int k = 0; k < 3; k++) { /* tiles */
        int64_t t = (int64_t)rnd(r, (uint64_t)M.ntiles);
        tile_box(t, lo, hi);
        int64_t c = patch_list(M.nd, M.dims, lo, hi, NULL, M.lis, M.bos, NULL);
        char *b = malloc((size_t)c * M.esz);
        rmc_status_t st = rmc_matrix_tile_get(M.m, t, b);
        if (st != RMC_OK)
            FAIL("check tile_get %" PRId64 " -> %s", t, rmc_status_string(st));
        else
            for (int64_t i = 0; i < c; i++)
                if (!el_eq(M.e, M.esz, b + (size_t)M.bos[i] * M.esz, M.shadow[M.lis[i]])) {
                    FAIL("check tile_get %" PRId64 ": element %" PRId64 " differs", t, M.lis[i]);
                    break;
                }
        free(b);
    }
    for (int k = 0; k < 5; k++) {
        int64_t li = (int64_t)rnd(r, (uint64_t)M.n), idx[MD];
        unsigned char b[32];
        idx_of(li, idx);
        if (rmc_matrix_elem_get(M.m, idx, b) != RMC_OK || !el_eq(M.e, M.esz, b, M.shadow[li]))
            FAIL("check elem_get %" PRId64 " differs", li);
    }
    /* this rank's tiles in place */
    int64_t nown = 0;
    rmc_dist_h d = rmc_matrix_dist(M.m);
    rmc_dist_owned(d, me, NULL, 0, &nown);
    int64_t *own = malloc(((size_t)nown + 1) * sizeof(int64_t));
    rmc_dist_owned(d, me, own, nown, &nown);
    for (int64_t k = 0; k < nown; k++) {
        void *base = NULL;
        if (rmc_matrix_tile_local(M.m, own[k], &base) != RMC_OK || !base) {
            FAIL("tile_local of own tile %" PRId64 " failed", own[k]);
            continue;
        }
        tile_box(own[k], lo, hi);
        int64_t c = patch_list(M.nd, M.dims, lo, hi, NULL, M.lis, M.bos, NULL);
        for (int64_t i = 0; i < c; i++)
            if (!el_eq(M.e, M.esz, (char *)base + (size_t)M.bos[i] * M.esz, M.shadow[M.lis[i]])) {
                FAIL("check in place: tile %" PRId64 " element %" PRId64 " differs", own[k],
                     M.lis[i]);
                break;
            }
    }
    free(own);
    /* random tiles in place: on this node (read there), or RMC_ERR_NOT_FOUND and NULL */
    for (int k = 0; k < 4; k++) {
        int64_t t = (int64_t)rnd(r, (uint64_t)M.ntiles);
        int owner;
        rmc_dist_tile(d, t, lo, hi, &owner);
        void *base = (void *)&own;
        rmc_status_t st = rmc_matrix_tile_local(M.m, t, &base);
        if (rmc_same_node(owner) != 1) {
            if (st != RMC_ERR_NOT_FOUND || base)
                FAIL("tile_local of tile %" PRId64 " of rank %d on another node -> %s %p", t, owner,
                     rmc_status_string(st), base);
            continue;
        }
        if (st != RMC_OK || !base) {
            FAIL("tile_local of tile %" PRId64 " of rank %d on this node -> %s", t, owner,
                 rmc_status_string(st));
            continue;
        }
        int64_t c = patch_list(M.nd, M.dims, lo, hi, NULL, M.lis, M.bos, NULL);
        for (int64_t i = 0; i < c; i++)
            if (!el_eq(M.e, M.esz, (char *)base + (size_t)M.bos[i] * M.esz, M.shadow[M.lis[i]])) {
                FAIL("check in place: rank %d's tile %" PRId64 " element %" PRId64 " differs",
                     owner, t, M.lis[i]);
                break;
            }
    }
    MPI_CHECK_OK(rmc_barrier());
}

/* Distributions and placements the header says are refused (local calls). */
static void bad_dists(uint64_t *s)
{
    where = "bad distributions";
    rmc_dist_h d = NULL;
    int64_t dims[3] = {rr(s, 2, 9), rr(s, 2, 9), rr(s, 2, 9)}, tile[3] = {2, 2, 2};
    int pg[3] = {1, 1, 1}, nb[3] = {2, 1, 1};
    int64_t map[4] = {0, 1, 0, 0};
    switch (rnd(s, 7)) {
    case 0: /* a dimension of 0 */
        dims[rnd(s, 3)] = rnd(s, 2) ? 0 : -1;
        EXPECT_ST(rmc_dist_regular(3, dims, tile, NULL, &d), RMC_ERR_ARG);
        break;
    case 1: /* more processes than ranks */
        pg[rnd(s, 3)] = np + 1;
        EXPECT_ST(rmc_dist_regular(3, dims, NULL, pg, &d), RMC_ERR_ARG);
        break;
    case 2: /* split points not increasing: an empty block */
        map[1] = 0;
        EXPECT_ST(rmc_dist_irregular(3, dims, nb, map, &d), RMC_ERR_ARG);
        break;
    case 3: /* a split point past the end */
        map[1] = dims[0];
        EXPECT_ST(rmc_dist_irregular(3, dims, nb, map, &d), RMC_ERR_ARG);
        break;
    case 4: /* ndim out of range */
        EXPECT_ST(rmc_dist_round_robin(rnd(s, 2) ? 0 : MD + 1, dims, tile, &d), RMC_ERR_ARG);
        break;
    default: { /* placements: a rank twice, a rank outside, fewer ranks than processes */
        int k = (int)rnd(s, 3), ranks[3] = {0, 0, 0};
        pg[0] = np > 1 ? 2 : 1;
        EXPECT_ST(rmc_dist_regular(3, dims, NULL, pg, &d), RMC_OK);
        if (!d)
            return;
        if (k == 0 && np > 1) {
            EXPECT_ST(rmc_dist_set_ranks(d, ranks, 2), RMC_ERR_ARG);
        } else if (k == 1) {
            ranks[0] = rnd(s, 2) ? np : -1;
            ranks[1] = 0;
            rmc_status_t st = rmc_dist_set_ranks(d, ranks, pg[0]);
            if (st != RMC_ERR_RANK && st != RMC_ERR_ARG)
                FAIL("set_ranks with rank %d -> %s", ranks[0], rmc_status_string(st));
        } else if (np > 1) {
            EXPECT_ST(rmc_dist_set_ranks(d, ranks, 1), RMC_ERR_ARG);
        }
        /* refused placements leave the distribution as it was */
        int64_t t = rmc_dist_ntiles(d);
        for (int64_t i = 0; i < t; i++) {
            int64_t tc[3];
            int owner = -1;
            rmc_dist_tile_coords(d, i, tc);
            rmc_dist_tile(d, i, NULL, NULL, &owner);
            if (owner != (pg[0] > 1 ? (int)tc[0] : 0))
                FAIL("tile %" PRId64 " on rank %d after refused set_ranks", i, owner);
        }
        rmc_dist_free(d);
        return;
    }
    }
    if (d)
        FAIL("a refused distribution was returned");
}

/* The offset of each element of distribution d in its owner's part, in elements (tiles in tile
 * order without gaps); parts[o]: rank o's part. */
static void layout(rmc_dist_h d, int nd, const int64_t dims[], int64_t *off, int64_t *parts)
{
    for (int o = 0; o < np; o++)
        parts[o] = 0;
    int64_t nt = rmc_dist_ntiles(d), lo[MD], hi[MD], es[MD], idx[MD];
    es[nd - 1] = 1;
    for (int k = nd - 2; k >= 0; k--)
        es[k] = es[k + 1] * dims[k + 1];
    for (int64_t t = 0; t < nt; t++) {
        int o;
        rmc_dist_tile(d, t, lo, hi, &o);
        for (int k = 0; k < nd; k++)
            idx[k] = lo[k];
        for (;;) {
            int64_t li = 0;
            for (int k = 0; k < nd; k++)
                li += idx[k] * es[k];
            off[li] = parts[o]++;
            int k = nd - 1;
            while (k >= 0 && ++idx[k] == hi[k]) {
                idx[k] = lo[k];
                k--;
            }
            if (k < 0)
                break;
        }
    }
}

/* An overlay of the same element type on another distribution: its elements are the parent's at
 * the same offset of each rank's part; writes through it show in the parent. */
static void overlay_step(uint64_t *s)
{
    where = "overlay";
    int nd = (int)rr(s, 1, 3);
    int64_t dims[MD];
    rand_shape(s, nd, M.n + M.n / 4 + 1, dims);
    rmc_dist_h d = gen_dist(s, nd, dims, NULL, 0, TMAX, NULL, 0);
    MPI_CHECK_ALL(d != NULL);
    int64_t n2 = 1;
    for (int k = 0; k < nd; k++)
        n2 *= dims[k];
    int64_t *poff = malloc((size_t)M.n * sizeof(int64_t)), *ooff = malloc((size_t)n2 * 8);
    int64_t *pparts = calloc((size_t)np, 8), *oparts = calloc((size_t)np, 8);
    int64_t *pstart = calloc((size_t)np + 1, 8), *byoff = malloc((size_t)M.n * 8);
    int *oown = malloc((size_t)n2 * sizeof(int));
    layout(rmc_matrix_dist(M.m), M.nd, M.dims, poff, pparts);
    layout(d, nd, dims, ooff, oparts);
    int fits = 1;
    for (int o = 0; o < np; o++) {
        fits &= oparts[o] <= pparts[o];
        pstart[o + 1] = pstart[o] + pparts[o];
    }
    for (int64_t li = 0; li < M.n; li++)
        byoff[pstart[M.eowner[li]] + poff[li]] = li;
    rmc_matrix_h ov = NULL;
    rmc_status_t st = rmc_matrix_create_overlay(M.m, d, M.e, M.esz, &ov);
    if (TRACE && me == 0)
        printf("overlay: %" PRId64 " elements, fits %d -> %s\n", n2, fits, rmc_status_string(st));
    if (!fits) {
        if (st != RMC_ERR_TOO_BIG || ov)
            FAIL("overlay whose part does not fit -> %s (%s)", rmc_status_string(st),
                 rmc_last_error());
    } else if (st != RMC_OK)
        FAIL("overlay -> %s (%s)", rmc_status_string(st), rmc_last_error());
    MPI_CHECK_ALL(fails == 0);
    if (fits) {
        int64_t *map = malloc((size_t)n2 * 8), lo[MD], hi[MD], es[MD], idx[MD];
        es[nd - 1] = 1;
        for (int k = nd - 2; k >= 0; k--)
            es[k] = es[k + 1] * dims[k + 1];
        for (int64_t q = 0; q < n2; q++) { /* overlay element q is parent element map[q] */
            int64_t t, x = q;
            int o;
            for (int k = 0; k < nd; k++) {
                idx[k] = x / es[k];
                x %= es[k];
            }
            rmc_dist_locate(d, idx, &t, &o);
            oown[q] = o;
            map[q] = byoff[pstart[o] + ooff[q]];
        }
        char *b = malloc((size_t)n2 * M.esz);
        for (int k = 0; k < nd; k++)
            lo[k] = 0, hi[k] = dims[k];
        st = rmc_matrix_get(ov, lo, hi, b, NULL);
        if (st != RMC_OK)
            FAIL("overlay get -> %s", rmc_status_string(st));
        else
            for (int64_t q = 0; q < n2; q++)
                if (!el_eq(M.e, M.esz, b + (size_t)q * M.esz, M.shadow[map[q]])) {
                    FAIL("overlay element %" PRId64 " (rank %d) is not parent element %" PRId64, q,
                         oown[q], map[q]);
                    break;
                }
        free(b);
        MPI_CHECK_OK(rmc_barrier());
        for (int64_t q = 0; q < n2; q++) { /* writes through the overlay, writer q's hash */
            if (rnd(s, 3))
                continue;
            int w = (int)(mix64((uint64_t)q ^ SEED) % (uint64_t)np);
            val_t v = rval(s, M.e, 9);
            if (w == me) {
                unsigned char eb[32];
                int64_t x = q;
                for (int k = 0; k < nd; k++) {
                    idx[k] = x / es[k];
                    x %= es[k];
                }
                enc(M.e, M.esz, eb, v);
                EXPECT_ST(rmc_matrix_elem_put(ov, idx, eb), RMC_OK);
            }
            M.shadow[map[q]] = v;
        }
        MPI_CHECK_OK(rmc_barrier());
        memcpy(M.cur, M.shadow, (size_t)M.n * sizeof(val_t));
        uint64_t r2 = SEED + (uint64_t)me;
        for (int k = 0; k < M.nd; k++)
            lo[k] = 0, hi[k] = M.dims[k];
        check_get(&r2, lo, hi, "parent after overlay writes");
        MPI_CHECK_OK(rmc_matrix_destroy(ov));
        free(map);
    }
    rmc_dist_free(d);
    free(poff);
    free(ooff);
    free(pparts);
    free(oparts);
    free(pstart);
    free(byoff);
    free(oown);
}

static void read_knobs(void)
{
    const char *sd = getenv("RMC_FUZZ_SEED");
    SEED = (uint64_t)strtoull(sd && *sd ? sd : "4242", NULL, 0);
    OPS = env_int("RMC_FUZZ_OPS", 40);
    PHASES = env_int("RMC_FUZZ_PHASES", np <= 2 ? 10 : 6);
    MAXEL = env_int("RMC_FUZZ_MAXEL", 3000);
    TMAX = env_int("RMC_FUZZ_TMAX", 200);
    GEMMS = env_int("RMC_FUZZ_GEMMS", np <= 2 ? 14 : 8);
    GMAX = env_int("RMC_FUZZ_GMAX", 48);
    BADS = env_int("RMC_FUZZ_BADS", 4);
    CAUTIOUS = env_int("RMC_FUZZ_CAUTIOUS", 0);
    TRACE = env_int("RMC_FUZZ_TRACE", 0);
    SABOTAGE = env_int("RMC_FUZZ_SABOTAGE", 0);
    if (MAXEL < 1)
        MAXEL = 1;
    if (GMAX < 1)
        GMAX = 1;
}

static void test_data(void **state)
{
    (void)state;
    read_knobs();
    fails = 0;
    if (me == 0)
        printf("fuzz_matrix data: seed %" PRIu64 " np %d phases %d ops %d maxel %d%s\n", SEED, np,
               PHASES, OPS, MAXEL, CAUTIOUS ? " cautious" : "");
    uint64_t shared = SEED * 0x2545F4914F6CDD1Dull + 1;
    uint64_t r = SEED ^ (0xD1B54A32D192ED03ull * (uint64_t)(me + 1));
    phase_no = 0;
    int failed = 0;
    while (phase_no < PHASES && !failed) {
        epoch_begin(&shared);
        int nph = 1 + (int)rnd(&shared, 3);
        for (int k = 0; k < nph && phase_no < PHASES && !failed; k++) {
            double t0 = MPI_Wtime();
            phase_begin(&shared);
            where = "ops";
            for (int i = 0; i < OPS; i++)
                do_op(&r);
            phase_end(&r);
            if (TRACE && me == 0)
                printf("phase %d: %.3f s\n", phase_no, MPI_Wtime() - t0);
            failed = !mpitest_all_(fails == 0, "no failure in the phase", __FILE__, __LINE__);
            if (failed && me == 0)
                printf("fuzz_matrix: FAILED at phase %d, seed %" PRIu64 "\n", phase_no, SEED);
            phase_no++;
        }
        if (!failed && rnd(&shared, 2))
            overlay_step(&shared);
        failed |= !mpitest_all_(fails == 0, "no failure in the overlay", __FILE__, __LINE__);
        epoch_end();
    }
    if (TRACE) {
        fprintf(stderr, "[rank %d] ops:", me);
        for (int k = 0; k < OP_N; k++)
            fprintf(stderr, " %ld", op_count[k]);
        fprintf(stderr,
                "; over own outstanding: read after write %ld, write after read %ld, "
                "write after write %ld\n",
                n_raw, n_war, n_waw);
    }
    MPI_CHECK_ALL(fails == 0);
}

/* ------------------------------------------------------------------ the gemm test --- */
typedef struct {
    rmc_matrix_h h;
    rmc_elem_t e;
    int64_t r, c;
    val_t *v;
    char desc[160];
} gm_t;

/* A 2-D r x c matrix of type e on a random distribution (SUMMA's kind when summa; on the ranks
 * subr[0..nsub-1] of sub when sub is not MPI_COMM_NULL), small integers (NaN in [nlo, nhi) when
 * nhi), written by one random rank; the caller makes them visible (a barrier). */
static void gm_make(gm_t *g, uint64_t *s, rmc_elem_t e, int64_t r, int64_t c, int summa,
                    MPI_Comm sub, const int *subr, int nsub, const int64_t *nlo, const int64_t *nhi)
{
    int64_t dims[2] = {r, c};
    rmc_dist_h d = NULL;
    g->e = e;
    g->r = r;
    g->c = c;
    if (summa) {
        int pg[2];
        int64_t sq[2] = {1, 1};
        rmc_dist_pgrid(2, sq, np, pg);
        EXPECT_ST(rmc_dist_regular(2, dims, NULL, pg, &d), RMC_OK);
        snprintf(g->desc, sizeof g->desc, "summa grid %dx%d", pg[0], pg[1]);
    } else
        d = gen_dist(s, 2, dims, sub == MPI_COMM_NULL ? NULL : subr, nsub, 36, g->desc,
                     sizeof g->desc);
    rmc_status_t st = d ? (sub == MPI_COMM_NULL ? rmc_matrix_create(d, e, &g->h)
                                                : rmc_matrix_create_comm(sub, d, e, &g->h))
                        : RMC_ERR_ARG;
    if (st != RMC_OK)
        FAIL("gemm operand %s on %s -> %s (%s)", ename(e), g->desc, rmc_status_string(st),
             rmc_last_error());
    rmc_dist_free(d);
    g->v = malloc((size_t)(r * c) * sizeof(val_t));
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            val_t v = rval(s, e, 3);
            if (nhi && i >= nlo[0] && i < nhi[0] && j >= nlo[1] && j < nhi[1])
                v = NAN;
            g->v[i * c + j] = v;
        }
    int w = sub == MPI_COMM_NULL ? (int)rnd(s, (uint64_t)np) : subr[rnd(s, (uint64_t)nsub)];
    if (w == me && st == RMC_OK) {
        size_t esz = rmc_elem_size(e);
        char *b = malloc((size_t)(r * c) * esz);
        for (int64_t i = 0; i < r * c; i++)
            enc(e, esz, b + (size_t)i * esz, g->v[i]);
        int64_t lo[2] = {0, 0};
        EXPECT_ST(rmc_matrix_put(g->h, lo, dims, b, NULL), RMC_OK);
        free(b);
    }
}
/* every element of g as its shadow says */
static int gm_check(const gm_t *g, const char *what)
{
    size_t esz = rmc_elem_size(g->e);
    char *b = malloc((size_t)(g->r * g->c) * esz);
    int64_t lo[2] = {0, 0}, hi[2] = {g->r, g->c};
    int bad = 0;
    rmc_status_t st = rmc_matrix_get(g->h, lo, hi, b, NULL);
    if (st != RMC_OK) {
        FAIL("%s: get -> %s (%s)", what, rmc_status_string(st), rmc_last_error());
        bad = 1;
    } else
        for (int64_t i = 0; i < g->r * g->c; i++)
            if (!el_eq(g->e, esz, b + (size_t)i * esz, g->v[i])) {
                val_t x = dec(g->e, b + (size_t)i * esz);
                if (bad++ < 3)
                    FAIL("%s: element (%" PRId64 ", %" PRId64 ") of %" PRId64 "x%" PRId64
                         " is %g%+gi, want %g%+gi",
                         what, i / g->c, i % g->c, g->r, g->c, creal(x), cimag(x), creal(g->v[i]),
                         cimag(g->v[i]));
            }
    free(b);
    return bad == 0;
}
static void gm_free(gm_t *g)
{
    if (g->h)
        EXPECT_ST(rmc_matrix_destroy(g->h), RMC_OK);
    free(g->v);
    g->h = NULL;
    g->v = NULL;
}

/* the reference: C[clo, chi) = alpha op(A[alo..]) op(B[blo..]) + beta C (beta 0: C not read) */
static void gemm_ref(char ta, char tb, val_t alpha, const gm_t *A, const int64_t alo[],
                     const gm_t *B, const int64_t blo[], val_t beta, gm_t *C, const int64_t clo[],
                     const int64_t chi[], int64_t k)
{
    for (int64_t i = 0; i < chi[0] - clo[0]; i++)
        for (int64_t j = 0; j < chi[1] - clo[1]; j++) {
            val_t sum = 0;
            for (int64_t l = 0; l < k; l++) {
                val_t a = ta == 'N' ? A->v[(alo[0] + i) * A->c + alo[1] + l]
                                    : A->v[(alo[0] + l) * A->c + alo[1] + i];
                val_t b = tb == 'N' ? B->v[(blo[0] + l) * B->c + blo[1] + j]
                                    : B->v[(blo[0] + j) * B->c + blo[1] + l];
                if (ta == 'C')
                    a = conj(a);
                if (tb == 'C')
                    b = conj(b);
                sum += a * b;
            }
            val_t *c = &C->v[(clo[0] + i) * C->c + clo[1] + j];
            *c = alpha * sum + (beta == 0 ? 0 : beta * *c);
        }
}

/* the least extent >= x whose default tiles (ceil(x / p)) are exactly p, and q */
static int64_t tiles_on(int64_t x, int p, int q)
{
    for (;; x++) {
        int64_t tp = (x + p - 1) / p, tq = (x + q - 1) / q;
        if ((x + tp - 1) / tp == p && (x + tq - 1) / tq == q)
            return x;
    }
}

static const char *const upd_name[] = {NULL, "acc", "queue", "copies"};

/* The same status on every rank of the world (sub == MPI_COMM_NULL) */
static int same_everywhere(rmc_status_t st)
{
    int v[2] = {(int)st, -(int)st}, mx[2];
    MPI_Request rq;
    MPI_Iallreduce(v, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
    return mx[0] == -mx[1];
}

/* One random product; on a subset (sub, subr, nsub) when sub is not MPI_COMM_NULL (*s is then
 * that subset's generator). */
static void gemm_case(uint64_t *s, int no, MPI_Comm sub, const int *subr, int nsub)
{
    int subset = sub != MPI_COMM_NULL;
    rmc_elem_t e = (rmc_elem_t)rr(s, RMC_ELEM_F32, RMC_ELEM_C64);
    int cx = is_cplx(e);
    char ta = "NTC"[rnd(s, cx ? 3 : 2)], tb = "NTC"[rnd(s, cx ? 3 : 2)];
    int64_t m = rnd(s, 10) ? rr(s, 1, GMAX) : 1, n = rnd(s, 10) ? rr(s, 1, GMAX) : 1,
            k = rnd(s, 10) ? rr(s, 1, GMAX) : 1;
    static const rmc_gemm_algo_t algos[] = {
        RMC_GEMM_AUTO,         RMC_GEMM_STATIONARY_C, RMC_GEMM_STATIONARY_A, RMC_GEMM_STATIONARY_B,
        RMC_GEMM_STEAL_RANDOM, RMC_GEMM_STEAL_LOCAL,  RMC_GEMM_SUMMA};
    rmc_gemm_algo_t algo = algos[rnd(s, 7)];
    /* SUMMA's kind: one tile per process on one grid, operands not transposed (it refuses them,
     * which matrix.h does not say) and at least a row and a column of tiles per process */
    int summa = !subset && algo == RMC_GEMM_SUMMA && rnd(s, 2);
    if (summa) {
        int pg[2];
        int64_t sq[2] = {1, 1};
        rmc_dist_pgrid(2, sq, np, pg);
        ta = tb = 'N';
        m = tiles_on(m, pg[0], 1);
        n = tiles_on(n, pg[1], 1);
        k = tiles_on(k, pg[0], pg[1]);
    }
    int patch = !summa && rnd(s, 3) == 0;
    int upd = (int)rnd(s, 4);
    val_t alpha = rval(s, e, 2), beta = rnd(s, 4) ? rval(s, e, 2) : 0;
    /* the patch shapes, the matrices around them */
    int64_t as[2] = {ta == 'N' ? m : k, ta == 'N' ? k : m};
    int64_t bs[2] = {tb == 'N' ? k : n, tb == 'N' ? n : k}, cs[2] = {m, n};
    int64_t alo[2], blo[2], clo[2], chi[2], ahi[2], bhi[2], ad[2], bd[2], cd[2];
    for (int d = 0; d < 2; d++) {
        alo[d] = patch ? rr(s, 0, 4) : 0;
        blo[d] = patch ? rr(s, 0, 4) : 0;
        clo[d] = patch ? rr(s, 0, 4) : 0;
        ahi[d] = alo[d] + as[d];
        bhi[d] = blo[d] + bs[d];
        chi[d] = clo[d] + cs[d];
        ad[d] = ahi[d] + (patch ? rr(s, 0, 4) : 0);
        bd[d] = bhi[d] + (patch ? rr(s, 0, 4) : 0);
        cd[d] = chi[d] + (patch ? rr(s, 0, 4) : 0);
    }
    int nanfill = beta == 0 ? (int)rnd(s, 2) : 0;
    gm_t A = {0}, B = {0}, C = {0};
    where = "gemm operands";
    gm_make(&A, s, e, ad[0], ad[1], summa, sub, subr, nsub, NULL, NULL);
    gm_make(&B, s, e, bd[0], bd[1], summa, sub, subr, nsub, NULL, NULL);
    gm_make(&C, s, e, cd[0], cd[1], summa, sub, subr, nsub, clo, nanfill ? chi : NULL);
    if (TRACE && (subset ? subr[0] == me : me == 0))
        printf("gemm %d%s: %s %c%c m %" PRId64 " n %" PRId64 " k %" PRId64
               " %s%s update %s alpha %g%+gi beta %g%+gi%s\n  A %s\n  B %s\n  C %s\n",
               no, subset ? " (subset)" : "", ename(e), ta, tb, m, n, k, rmc_gemm_algo_name(algo),
               patch ? " patch" : "", upd ? upd_name[upd] : "-", creal(alpha), cimag(alpha),
               creal(beta), cimag(beta), nanfill ? " C NaN" : "", A.desc, B.desc, C.desc);
    MPI_CHECK_OK(rmc_barrier()); /* (every rank: the other subset makes its matrices too) */
    size_t esz = rmc_elem_size(e);
    unsigned char ab[16], bb[16];
    enc(e, esz, ab, alpha);
    enc(e, esz, bb, beta);
    if (upd)
        setenv("RMC_GEMM_UPDATE", upd_name[upd], 1);
    rmc_gemm_stats_t stats;
    memset(&stats, 0, sizeof stats);
    where = "gemm";
    double t0 = MPI_Wtime();
    rmc_status_t st = patch ? rmc_matrix_gemm_patch(ta, tb, ab, A.h, alo, ahi, B.h, blo, bhi, bb,
                                                    C.h, clo, chi, algo, &stats)
                            : rmc_matrix_gemm(ta, tb, ab, A.h, B.h, bb, C.h, algo, &stats);
    double t1 = MPI_Wtime();
    unsetenv("RMC_GEMM_UPDATE");
    if (!subset && !same_everywhere(st))
        FAIL("gemm %d: the ranks' statuses differ (this rank %s)", no, rmc_status_string(st));
    int refused = !subset && algo == RMC_GEMM_SUMMA && !summa && st == RMC_ERR_UNSUPPORTED;
    if (st != RMC_OK && !refused)
        FAIL("gemm %d (%s %c%c %s) -> %s (%s)", no, ename(e), ta, tb, rmc_gemm_algo_name(algo),
             rmc_status_string(st), rmc_last_error());
    if (st == RMC_OK) {
        rmc_gemm_algo_t want = subset ? RMC_GEMM_STATIONARY_C : algo;
        if (want == RMC_GEMM_AUTO
                ? stats.algo < RMC_GEMM_STATIONARY_C || stats.algo > RMC_GEMM_STATIONARY_B
                : stats.algo != want)
            FAIL("gemm %d: stats say %s, asked %s%s", no, rmc_gemm_algo_name(stats.algo),
                 rmc_gemm_algo_name(algo), subset ? " (subset)" : "");
        gemm_ref(ta, tb, alpha, &A, alo, &B, blo, beta, &C, clo, chi, k);
        if ((SABOTAGE & 2) && no == 0)
            C.v[0] += 1;
    }
    if (TRACE && (subset ? subr[0] == me : me == 0))
        printf("  -> %s%s %.4f s\n", rmc_status_string(st),
               st == RMC_OK ? rmc_gemm_algo_name(stats.algo) : "", t1 - t0);
    where = "gemm check";
    char what[64];
    snprintf(what, sizeof what, "gemm %d C", no);
    gm_check(&C, what);
    snprintf(what, sizeof what, "gemm %d A", no);
    gm_check(&A, what);
    snprintf(what, sizeof what, "gemm %d B", no);
    gm_check(&B, what);
    MPI_CHECK_OK(rmc_barrier());
    gm_free(&A); /* (collective over the subset for a subset's) */
    gm_free(&B);
    gm_free(&C);
}

/* One product the header says is refused: the same status on every rank, nothing changed. */
static void gemm_bad(uint64_t *s, int no)
{
    int kind = (int)rnd(s, 10);
    rmc_elem_t e = (rmc_elem_t)rr(s, RMC_ELEM_F32, RMC_ELEM_C64), eb = e;
    int64_t m = rr(s, 1, 12), n = rr(s, 1, 12), k = rr(s, 1, 12);
    int64_t ad[2] = {m, k}, bd[2] = {k, n}, cd[2] = {m, n};
    rmc_status_t want = RMC_ERR_ARG;
    char ta = 'N';
    const char *what = "?";
    switch (kind) {
    case 0:
        what = "k mismatch";
        bd[0] = k + 1;
        break;
    case 1:
        what = "C shape";
        cd[rnd(s, 2)] += 1;
        break;
    case 2:
        what = "patch shapes";
        break;
    case 3:
        what = "patch outside";
        want = RMC_ERR_BOUNDS;
        break;
    case 4:
        what = "reversed patch";
        break;
    case 5:
        what = "mixed types";
        eb = e == RMC_ELEM_F64 ? RMC_ELEM_F32 : RMC_ELEM_F64;
        want = RMC_ERR_TYPE;
        break;
    case 6:
        what = "integer type";
        e = eb = rnd(s, 2) ? RMC_ELEM_I32 : RMC_ELEM_I64;
        want = RMC_ERR_TYPE;
        break;
    case 7:
        what = "C is A";
        n = k = m;
        ad[1] = bd[0] = bd[1] = cd[1] = m;
        break;
    case 8:
        what = "C an overlay of A";
        n = k = m;
        ad[1] = bd[0] = bd[1] = cd[1] = m;
        break;
    default:
        what = "bad trans";
        ta = "XHZ"[rnd(s, 3)]; /* (lowercase n, t, c are accepted) */
    }
    gm_t A = {0}, B = {0}, C = {0};
    where = "bad gemm operands";
    gm_make(&A, s, e, ad[0], ad[1], 0, MPI_COMM_NULL, NULL, 0, NULL, NULL);
    gm_make(&B, s, eb, bd[0], bd[1], 0, MPI_COMM_NULL, NULL, 0, NULL, NULL);
    gm_make(&C, s, e, cd[0], cd[1], 0, MPI_COMM_NULL, NULL, 0, NULL, NULL);
    MPI_CHECK_OK(rmc_barrier());
    unsigned char ab[16], bb[16];
    enc(e, rmc_elem_size(e), ab, 1);
    enc(e, rmc_elem_size(e), bb, 2); /* beta 2: a scaled C would show */
    rmc_status_t st;
    where = "bad gemm";
    int64_t lo[2] = {0, 0}, ahi[2] = {m, k}, bhi[2] = {k, n}, chi[2] = {m, n};
    if (kind == 2) {
        chi[rnd(s, 2)] -= 1; /* one row or column short (possibly empty) */
        st = rmc_matrix_gemm_patch('N', 'N', ab, A.h, lo, ahi, B.h, lo, bhi, bb, C.h, lo, chi,
                                   RMC_GEMM_AUTO, NULL);
    } else if (kind == 3) {
        int64_t *h[3] = {ahi, bhi, chi};
        h[rnd(s, 3)][rnd(s, 2)] += 1;
        if (ahi[1] != bhi[0]) /* keep the shapes agreeing: only the bounds are wrong */
            ahi[1] = bhi[0] = ahi[1] > bhi[0] ? ahi[1] : bhi[0];
        if (ahi[0] != chi[0])
            ahi[0] = chi[0] = ahi[0] > chi[0] ? ahi[0] : chi[0];
        if (bhi[1] != chi[1])
            bhi[1] = chi[1] = bhi[1] > chi[1] ? bhi[1] : chi[1];
        st = rmc_matrix_gemm_patch('N', 'N', ab, A.h, lo, ahi, B.h, lo, bhi, bb, C.h, lo, chi,
                                   RMC_GEMM_AUTO, NULL);
    } else if (kind == 4) {
        int64_t rlo[2] = {ahi[0], 0}, rhi[2] = {0, ahi[1]};
        st = rmc_matrix_gemm_patch('N', 'N', ab, A.h, rlo, rhi, B.h, lo, bhi, bb, C.h, lo, chi,
                                   RMC_GEMM_AUTO, NULL);
    } else if (kind == 7) {
        st = rmc_matrix_gemm('N', 'N', ab, A.h, B.h, bb, A.h, RMC_GEMM_AUTO, NULL);
    } else if (kind == 8) {
        rmc_matrix_h ov = NULL;
        EXPECT_ST(rmc_matrix_create_overlay(A.h, rmc_matrix_dist(A.h), e, 0, &ov), RMC_OK);
        st = rmc_matrix_gemm('N', 'N', ab, A.h, B.h, bb, ov, (rmc_gemm_algo_t)rnd(s, 6), NULL);
        if (ov)
            EXPECT_ST(rmc_matrix_destroy(ov), RMC_OK);
    } else {
        st = rmc_matrix_gemm(ta, 'N', ab, A.h, B.h, bb, C.h,
                             (rmc_gemm_algo_t)rnd(s, RMC_GEMM_SUMMA), NULL);
    }
    if (TRACE && me == 0)
        printf("bad gemm %d: %s (%s) -> %s\n", no, what, ename(e), rmc_status_string(st));
    if (!same_everywhere(st))
        FAIL("bad gemm %d (%s): the ranks' statuses differ (this rank %s)", no, what,
             rmc_status_string(st));
    if (st != want)
        FAIL("bad gemm %d (%s, %s): -> %s (%s), want %s", no, what, ename(e), rmc_status_string(st),
             rmc_last_error(), rmc_status_string(want));
    where = "bad gemm check";
    gm_check(&A, "bad gemm A");
    gm_check(&B, "bad gemm B");
    gm_check(&C, "bad gemm C");
    MPI_CHECK_OK(rmc_barrier());
    gm_free(&A);
    gm_free(&B);
    gm_free(&C);
}

static void test_gemm(void **state)
{
    (void)state;
    read_knobs();
    fails = 0;
    phase_no = -1;
    if (me == 0)
        printf("fuzz_matrix gemm: seed %" PRIu64 " np %d products %d gmax %d bad %d\n", SEED, np,
               GEMMS, GMAX, BADS);
    uint64_t shared = SEED * 0x9E3779B97F4A7C15ull + 7;
    for (int g = 0; g < GEMMS + BADS; g++) {
        int bad = g >= GEMMS;
        if (bad)
            gemm_bad(&shared, g);
        else if (np >= 2 && rnd(&shared, 5) == 0) { /* two subsets at once */
            int split = (int)rr(&shared, 1, np - 1), color = me >= split;
            uint64_t ss = mix64(mpitest_splitmix(&shared) + (uint64_t)color);
            int subr[256], nsub = 0;
            for (int i = 0; i < np; i++)
                if ((i >= split) == color)
                    subr[nsub++] = i;
            MPI_Comm sub;
            MPI_Comm_split(MPI_COMM_WORLD, color, me, &sub);
            gemm_case(&ss, g, sub, subr, nsub);
            MPI_Comm_free(&sub);
        } else
            gemm_case(&shared, g, MPI_COMM_NULL, NULL, 0);
        if (!mpitest_all_(fails == 0, "no failure in the product", __FILE__, __LINE__)) {
            if (me == 0)
                printf("fuzz_matrix: FAILED at product %d, seed %" PRIu64 "\n", g, SEED);
            break;
        }
    }
    MPI_CHECK_ALL(fails == 0);
}

MPITEST_MAIN("fuzz_matrix", cttest_setup, mpitest_teardown_rmc, test_data, test_gemm)
