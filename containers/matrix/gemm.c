/* Distributed dense multiplication C = alpha op(A) op(B) + beta C (include/rmc/matrix.h; seed 001
 * §7.3-7.6, Algs 2-8 with the errata corrected).
 *
 * The work grid. The patch of C is cut at C's tile boundaries and at op(A)'s row / op(B)'s column
 * boundaries (I and J), the k range at op(A)'s column and op(B)'s row boundaries (K). So every
 * block product op(A)[I, K] op(B)[K, J] reads one tile of A and one of B and updates one tile of C,
 * whatever the three distributions (the "slicing" multiply: nothing is redistributed). A block is
 * used in place when its tile is on this node (zero copy, BLAS reads the owner's memory), else it
 * is fetched with one strided get into a buffer.
 *
 * Stationary C (Algs 3/4): the owner of C[I, J] computes it, k blocks starting at (i + j) mod nk
 * (ranks spread their requests over the owners), the next block pair fetched while this one is
 * multiplied (two buffer sets), long multiplies cut into column panels between which the fetches
 * in flight are tested (MPI progress when the transfer needs it). Alg 4's multiply sits outside
 * its `if` here (the seed's listing skips the last block).
 * Stationary A / B (Algs 5, 7): the owner of op(A)[I, K] (op(B)[K, J]) computes its products with
 * every J (I) and sends each to C's owner: by atomic accumulate into C (RMC_GEMM_UPDATE=acc, the
 * default: one one-sided operation, comm's accumulates are element-wise atomic), through the
 * owner's update queue (=queue, the seed's Alg 5: the product stays in the producer's segment, a
 * CHECKSUM queue carries {where, which block}, the owner pulls and adds it while it works and at
 * the end), or by a put into copy k of K zeroed copies of C that the owners add up at the end
 * (=copies, Alg 7, whose `put_tile(i, k, ...)` is put_tile(i, j, ...) here: block [I, J] of copy
 * k).
 * Work stealing (Alg 8): stationary A whose (I, K) units hand out their J products one at a time
 * through a fetch-and-add on a reservation counter (on the unit's owner); a rank that finished its
 * own units steals from the others': every J of every unit is taken exactly once (Alg 8 reads `j`
 * where it means its reservation my_j, and visits only M of the M x K units; both corrected).
 * SUMMA (Alg 2): the bulk-synchronous reference with MPI row / column communicators and
 * broadcasts, for regular distributions of one tile per process on one grid. */
#include "config.h"
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include <rmc/queue.h>
#include <rmc/env.h>
#include "gemm_impl.h"

static const rmc_knob_t knob_threads = {
    "RMC_BLAS_THREADS", "1",
    "threads of OpenBLAS in the matrices' multiplies (set when a multiplication starts; one per "
    "rank keeps ranks sharing cores from oversubscribing them)"};
static const rmc_knob_t knob_update = {
    "RMC_GEMM_UPDATE", "acc",
    "how stationary-A/B multiplications send partial C blocks: acc (atomic remote accumulate), "
    "queue (the owner's update queue, seed 001 Alg 5) or copies (K partial copies of C, Alg 7)"};

__attribute__((constructor)) static void gemm_register(void)
{
    rmc_knob_register(&knob_threads);
    rmc_knob_register(&knob_update);
}

#define now rmcc_now

const char *rmc_gemm_algo_name(rmc_gemm_algo_t a)
{
    static const char *const names[] = {"auto",         "stationary-c", "stationary-a",
                                        "stationary-b", "steal-random", "steal-local",
                                        "summa"};
    return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

/* ---------------------------------------------------------------------- the arena --- */

/* The block buffers of multiplications, kept from one to the next (multiplications are collective
 * and run one at a time). Fresh memory for every call cost the first transfers into it dearly:
 * 4 gets of 16 MiB with RMC_NODE_SIZE=1 took 262 ms into new pages, 6-7 ms into pages MPI had seen
 * (page faults and the transport's memory registration). SUMMA's two panel buffers are kept
 * likewise (panel() grows them as needed): allocated and freed by every call, a 256 x 256 SUMMA
 * spent a fifth of its time in malloc and free under AddressSanitizer, and panels above glibc's
 * mmap threshold came as fresh pages every time. Freed at rmc_finalize. */
static struct {
    char *p;
    size_t cap;
    char *panel[2]; /* SUMMA: A's and B's panels */
    size_t panel_cap[2];
} arena;

/* A buffer of at least `bytes` from the arena (valid until the next call). */
static char *arena_get(size_t bytes, const char *fn)
{
    if (bytes <= arena.cap)
        return arena.p;
    size_t cap = arena.cap ? arena.cap : (size_t)1 << 20;
    while (cap < bytes)
        cap *= 2;
    char *p = malloc(cap);
    if (!p) {
        rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for blocks", cap);
        return NULL;
    }
    free(arena.p);
    arena.p = p;
    arena.cap = cap;
    return p;
}

void rmcc_gemm_release(void)
{
    free(arena.p);
    for (int x = 0; x < 2; x++)
        free(arena.panel[x]);
    memset(&arena, 0, sizeof(arena));
}

/* ------------------------------------------------------------------------ the grid --- */

/* The breakpoints of one dimension of the work grid (gemm_impl.h). */
rmc_status_t rmcc_make_cuts(cuts_t *c, int64_t len, const tiling_t *t, int nt, const char *fn)
{
    size_t cap = 2;
    for (int i = 0; i < nt; i++)
        cap += (size_t)t[i].d->nt[t[i].dim];
    c->at = malloc(cap * sizeof(int64_t));
    if (!c->at)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "the work grid");
    int64_t pos = 0;
    c->n = 0;
    c->at[0] = 0;
    while (pos < len) { /* the next boundary of any tiling after pos */
        int64_t next = len;
        for (int i = 0; i < nt; i++) {
            const struct rmc_dist *d = t[i].d;
            int64_t g = t[i].off + pos, tc = rmcc_tile_of(d, t[i].dim, g);
            int64_t h = rmcc_tile_hi(d, t[i].dim, tc) - t[i].off;
            if (h < next)
                next = h;
        }
        c->at[++c->n] = pos = next;
    }
    return RMC_OK;
}

/* X's box for op(X)[i0, i1) x [j0, j1) (relative to the operand's patch), its tile, and whether it
 * is node-local (*lp: its first element in place, *ld its tile's row length). */
static int64_t box_of(const operand_t *o, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                      int64_t lo[2], int64_t hi[2])
{
    if (!o->trans) {
        lo[0] = o->r0 + i0, hi[0] = o->r0 + i1, lo[1] = o->c0 + j0, hi[1] = o->c0 + j1;
    } else {
        lo[0] = o->c0 + j0, hi[0] = o->c0 + j1, lo[1] = o->r0 + i0, hi[1] = o->r0 + i1;
    }
    const struct rmc_dist *d = o->d;
    int64_t tc[2] = {rmcc_tile_of(d, 0, lo[0]), rmcc_tile_of(d, 1, lo[1])};
    return tc[0] * d->nt[1] + tc[1];
}

/* Makes op(X)[i0, i1) x [j0, j1) available: in place when node-local, else fetched (nb) into buf
 * (its bytes and the time to issue the fetch counted in *ss: bytes, comm wait). */
static rmc_status_t block_start(const operand_t *o, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                char *buf, blk_t *b, rmc_gemm_stats_t *ss, const char *fn)
{
    int64_t lo[2], hi[2];
    int64_t t = box_of(o, i0, i1, j0, j1, lo, hi);
    const struct rmc_dist *d = o->d;
    b->r = RMC_REQUEST_NULL;
    b->sp = o->s != NULL;
    b->own_csr = 0;
    if (o->s) { /* a sparse tile (the grids line up: the block is the tile) */
        (void)buf;
        if (rmc_spmatrix_tile_view(o->s, t, &b->csr) == RMC_OK)
            return RMC_OK;
        int64_t rows, cols;
        rmcc_sptile_shape(o->s, t, &rows, &cols);
        ss->bytes += (double)rmcc_spblock_bytes(rows, o->s->dir[t].nnz, o->s->idx64);
        b->own_csr = 1;
        double t0 = rmcc_now();
        rmc_status_t st = rmc_spmatrix_tile_get_nb(o->s, t, &b->csr, &b->r);
        ss->comm_wait += rmcc_now() - t0;
        return st;
    }
    char *l = rmcc_tile_laddr(o->m, t);
    if (l) {
        int64_t tc0 = t / d->nt[1], tc1 = t % d->nt[1];
        int64_t tl0 = rmcc_tile_lo(d, 0, tc0), tl1 = rmcc_tile_lo(d, 1, tc1);
        b->ld = rmcc_tile_hi(d, 1, tc1) - tl1;
        b->p = l + ((lo[0] - tl0) * b->ld + (lo[1] - tl1)) * (int64_t)o->m->esz;
        return RMC_OK;
    }
    b->ld = hi[1] - lo[1];
    b->p = buf;
    ss->bytes += (double)((hi[0] - lo[0]) * b->ld) * (double)o->m->esz;
    double t0 = rmcc_now();
    rmc_status_t st = rmcc_matrix_patch(o->m, 0, lo, hi, buf, NULL, NULL, &b->r, fn);
    ss->comm_wait += rmcc_now() - t0;
    return st;
}

/* Releases what a block holds (a fetched sparse tile). */
static void block_release(blk_t *b)
{
    if (b->own_csr) {
        rmc_csr_free(&b->csr);
        b->own_csr = 0;
    }
}

/* ----------------------------------------------------------------------------- BLAS --- */

static void blas(rmc_elem_t e, int ta, int tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                 int64_t ldc)
{
    enum CBLAS_TRANSPOSE A = ta == 0 ? CblasNoTrans : ta == 1 ? CblasTrans : CblasConjTrans;
    enum CBLAS_TRANSPOSE B = tb == 0 ? CblasNoTrans : tb == 1 ? CblasTrans : CblasConjTrans;
    blasint M = (blasint)m, N = (blasint)n, K = (blasint)k;
    switch (e) {
    case RMC_ELEM_F32:
        cblas_sgemm(CblasRowMajor, A, B, M, N, K, *(const float *)alpha, a, (blasint)lda, b,
                    (blasint)ldb, *(const float *)beta, c, (blasint)ldc);
        break;
    case RMC_ELEM_F64:
        cblas_dgemm(CblasRowMajor, A, B, M, N, K, *(const double *)alpha, a, (blasint)lda, b,
                    (blasint)ldb, *(const double *)beta, c, (blasint)ldc);
        break;
    case RMC_ELEM_C32:
        cblas_cgemm(CblasRowMajor, A, B, M, N, K, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
                    (blasint)ldc);
        break;
    default:
        cblas_zgemm(CblasRowMajor, A, B, M, N, K, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
                    (blasint)ldc);
    }
}

/* C[m x n] (ldc) *= beta, beta = 0: set to 0 (C is not read, as BLAS does). */
static void scale_block(rmc_elem_t e, char *c, int64_t m, int64_t n, int64_t ldc, const void *beta)
{
    size_t es = rmc_elem_size(e);
    for (int64_t i = 0; i < m; i++) {
        char *row = c + (size_t)(i * ldc) * es;
        switch (e) {
        case RMC_ELEM_F32: {
            float b = *(const float *)beta, *r = (float *)(void *)row;
            for (int64_t j = 0; j < n; j++)
                r[j] = b == 0 ? 0 : r[j] * b;
            break;
        }
        case RMC_ELEM_F64: {
            double b = *(const double *)beta, *r = (double *)(void *)row;
            for (int64_t j = 0; j < n; j++)
                r[j] = b == 0 ? 0 : r[j] * b;
            break;
        }
        case RMC_ELEM_C32: {
            float complex b = *(const float complex *)beta, *r = (float complex *)(void *)row;
            for (int64_t j = 0; j < n; j++)
                r[j] = b == 0 ? 0 : r[j] * b;
            break;
        }
        default: {
            double complex b = *(const double complex *)beta, *r = (double complex *)(void *)row;
            for (int64_t j = 0; j < n; j++)
                r[j] = b == 0 ? 0 : r[j] * b;
        }
        }
    }
}

/* ------------------------------------------------------------------------ the call --- */

/* C's block [I, J]: in place (this rank owns it) with its leading dimension. */
static char *c_block(gemm_t *g, int64_t i, int64_t j, int64_t *ldc)
{
    int64_t lo[2], hi[2];
    int64_t t = box_of(&g->co, g->ci.at[i], g->ci.at[i + 1], g->cj.at[j], g->cj.at[j + 1], lo, hi);
    const struct rmc_dist *d = g->c->d;
    int64_t tc0 = t / d->nt[1], tc1 = t % d->nt[1];
    int64_t tl0 = rmcc_tile_lo(d, 0, tc0), tl1 = rmcc_tile_lo(d, 1, tc1);
    *ldc = rmcc_tile_hi(d, 1, tc1) - tl1;
    char *l = rmcc_tile_laddr(g->c, t);
    return l ? l + ((lo[0] - tl0) * *ldc + (lo[1] - tl1)) * (int64_t)g->es : NULL;
}

/* C's tile holding block [I, J], and its owner. */
static int64_t c_tile(const gemm_t *g, int64_t i, int64_t j)
{
    int64_t lo[2], hi[2];
    return box_of(&g->co, g->ci.at[i], g->ci.at[i + 1], g->cj.at[j], g->cj.at[j + 1], lo, hi);
}
static int c_owner(const gemm_t *g, int64_t i, int64_t j)
{
    return g->co.towner[c_tile(g, i, j)];
}
static int op_owner(const operand_t *o, const cuts_t *r, int64_t i, const cuts_t *c, int64_t j)
{
    int64_t lo[2], hi[2];
    return o->towner[box_of(o, r->at[i], r->at[i + 1], c->at[j], c->at[j + 1], lo, hi)];
}

/* Waits for a block's fetch (comm wait time). */
static rmc_status_t block_wait(gemm_t *g, blk_t *b)
{
    if (!b->r)
        return RMC_OK;
    double t0 = now();
    rmc_status_t s = rmc_wait(&b->r);
    g->st.comm_wait += now() - t0;
    return s;
}

/* Collective steps: waiting for the other ranks, counted as imbalance. */
static rmc_status_t agree_timed(gemm_t *g, rmc_status_t st)
{
    double t0 = now();
    st = rmcc_agree(st);
    g->st.imbalance += now() - t0;
    return st;
}
static rmc_status_t barrier_timed(gemm_t *g)
{
    double t0 = now();
    rmc_status_t st = rmc_barrier();
    g->st.imbalance += now() - t0;
    return st;
}

/* dst (m x n, ldd) += alpha op(A) op(B) for one block product, cut into column panels between
 * which the fetches in flight (pend[0..np-1]) are tested. */
static rmc_status_t multiply(gemm_t *g, int64_t m, int64_t n, int64_t k, const blk_t *a,
                             const blk_t *b, char *dst, int64_t ldd, const void *beta,
                             rmc_request_h *pend, int np)
{
    if (a->sp) { /* SpMM: dst = beta dst + alpha A B */
        double t0 = now();
        if (memcmp(beta, g->one, g->es))
            scale_block(g->e, dst, m, n, ldd, beta);
        rmc_status_t st =
            rmc_csr_spmm(*(const double *)g->alpha, &a->csr, (const double *)(const void *)b->p,
                         b->ld, n, (double *)(void *)dst, ldd);
        g->st.compute += now() - t0;
        g->st.flops += 2.0 * (double)a->csr.nnz * (double)n;
        (void)k, (void)pend, (void)np;
        return rmc_error_in(st, g->fn);
    }
    int ta = g->a.trans ? (g->a.conj ? 2 : 1) : 0, tb = g->b.trans ? (g->b.conj ? 2 : 1) : 0;
    /* with remote ranks, transfers to and from this rank may need its MPI progress (MPICH with
     * UCX completes a large one-sided transfer only when the target calls MPI): long multiplies
     * are cut into column panels, with a round of progress between them */
    int64_t w = n;
    if (g->poll) { /* up to 8 panels of at least 512 columns: narrower ones cost BLAS more (each
                    * call packs A again) than the transfers they would let progress */
        int64_t panels = n / 512 < 8 ? n / 512 : 8;
        w = panels > 1 ? (n + panels - 1) / panels : n;
    }
    double t0 = now();
    for (int64_t j0 = 0; j0 < n; j0 += w) {
        int64_t nj = n - j0 < w ? n - j0 : w;
        const char *bp = b->p + (size_t)(tb ? j0 * b->ld : j0) * g->es;
        blas(g->e, ta, tb, m, nj, k, g->alpha, a->p, a->ld, bp, b->ld, beta,
             dst + (size_t)j0 * g->es, ldd);
        for (int i = 0; j0 + w < n && i < np; i++) {
            int fin;
            if (pend[i]) {
                rmc_status_t s = rmc_test(&pend[i], &fin);
                if (s != RMC_OK)
                    return s;
            }
        }
        if (j0 + w < n && g->poll)
            rmc_progress();
    }
    g->st.compute += now() - t0;
    g->st.flops += (g->e >= RMC_ELEM_C32 ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
    return RMC_OK;
}

/* SpGEMM's local product: *out = A B (alpha applied when it is not 1). */
static rmc_status_t multiply_sp(gemm_t *g, const blk_t *a, const blk_t *b, rmc_csr_t *out)
{
    double t0 = now(), flops = 0;
    rmc_status_t st = rmc_csr_spgemm(out, &a->csr, &b->csr, g->spa, &flops);
    double alpha = *(const double *)g->alpha;
    for (int64_t q = 0; st == RMC_OK && alpha != 1 && q < out->nnz; q++)
        out->val[q] *= alpha;
    g->st.compute += now() - t0;
    g->st.flops += flops;
    return rmc_error_in(st, g->fn);
}

/* Sparse C: a partial product of C tile t (this rank's) kept for the final sum (taken over). */
static rmc_status_t partial_add(gemm_t *g, int64_t t, rmc_csr_t *p)
{
    if (g->npart[t] == g->cappart[t]) {
        int cap = g->cappart[t] ? 2 * g->cappart[t] : 4;
        rmc_csr_t *v = realloc(g->part[t], (size_t)cap * sizeof(*v));
        if (!v) {
            rmc_csr_free(p);
            return rmcc_fail(RMC_ERR_NOMEM, g->fn, "partial products of C tile %lld", (long long)t);
        }
        g->part[t] = v;
        g->cappart[t] = cap;
    }
    g->part[t][g->npart[t]++] = *p;
    memset(p, 0, sizeof(*p)); /* taken over */
    rmc_csr_init(p, g->cs->idx64);
    return RMC_OK;
}

/* Sparse C: every tile of this rank summed from its partial products (none: empty) and set. */
static rmc_status_t partials_finish(gemm_t *g)
{
    const struct rmc_dist *d = g->cs->d;
    rmc_status_t st = RMC_OK;
    for (int64_t t = 0; t < d->ntiles; t++) {
        if (g->co.towner[t] != rmcc.rank) {
            continue;
        }
        double t0 = now();
        rmc_csr_t sum;
        rmc_csr_init(&sum, g->cs->idx64);
        int64_t rows, cols;
        rmcc_sptile_shape(g->cs, t, &rows, &cols);
        const rmc_csr_t **in = malloc(((size_t)g->npart[t] + 1) * sizeof(*in));
        if (!in && st == RMC_OK)
            st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "the sum of C tile %lld", (long long)t);
        for (int q = 0; in && q < g->npart[t]; q++)
            in[q] = &g->part[t][q];
        if (st == RMC_OK && g->npart[t] == 0)
            st = rmc_csr_alloc(&sum, rows, cols, 0, g->cs->idx64);
        else if (st == RMC_OK && g->npart[t] > 1)
            st = rmc_csr_sum(&sum, (const rmc_csr_t *const *)in, g->npart[t], g->spa);
        if (st == RMC_OK) /* (a single partial is the tile) */
            st = rmc_spmatrix_tile_set(g->cs, t, g->npart[t] == 1 ? &g->part[t][0] : &sum);
        rmc_csr_free(&sum);
        free(in);
        g->st.accumulate += now() - t0;
    }
    return st;
}

/* ----------------------------------------------------------------- stationary C --- */

static rmc_status_t stationary_c_sparse(gemm_t *g);

#define ROUND_BYTES                                                                                \
    ((size_t)256 << 20) /* blocks fetched per round (stationary C, remote ranks)                   \
                         */

/* Bytes of op(X)[i0, i1) x [j0, j1) a fetch moves (0 when its tile is on this node), and of
 * them the buffer a dense block needs (*buf; a sparse tile brings its own arrays). */
static size_t fetch_bytes(const operand_t *o, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                          size_t es, size_t *buf)
{
    int64_t lo[2], hi[2], t = box_of(o, i0, i1, j0, j1, lo, hi);
    *buf = 0;
    if (rmc_same_node(o->towner[t]) == 1)
        return 0;
    if (o->s) {
        int64_t rows, cols;
        rmcc_sptile_shape(o->s, t, &rows, &cols);
        return rmcc_spblock_bytes(rows, o->s->dir[t].nnz, o->s->idx64);
    }
    return *buf = (size_t)((hi[0] - lo[0]) * (hi[1] - lo[1])) * es;
}

/* Stationary C with ranks on other nodes. One-sided transfers there complete only when their
 * target calls MPI, and a rank in a long BLAS call does not: fetching the next block while
 * multiplying this one left a 64 MiB block waiting 0.7 s at 4096^2 with RMC_NODE_SIZE=1. So the
 * sequence goes in rounds of up to ROUND_BYTES of remote blocks: every rank starts its round's
 * fetches, serves the others' until its own have arrived and every rank's have (a barrier in the
 * background, all the while serving), then multiplies the round with nothing in flight. The
 * number of rounds is agreed (a rank with fewer joins the others' with nothing to fetch). */
static rmc_status_t stationary_c_rounds(gemm_t *g, int64_t (*w)[3], int64_t nseq, rmc_status_t st0)
{
    size_t *need = malloc((size_t)(nseq + 1) * 3 * sizeof(size_t)); /* total, A's, B's buffer */
    int64_t *first = malloc((size_t)(nseq + 2) * sizeof(int64_t));  /* each round's first step */
    blk_t *A = calloc((size_t)(2 * nseq + 2), sizeof(blk_t)), *B = A + nseq + 1;
    rmc_status_t st = st0 != RMC_OK        ? st0
                      : need && first && A ? RMC_OK
                                           : rmcc_fail(RMC_ERR_NOMEM, g->fn, "the rounds");
    long nr = 0;
    for (int64_t q = 0; st == RMC_OK && q < nseq; q++) {
        int64_t i = w[q][0], j = w[q][1], kk = w[q][2];
        size_t *nb = need + nseq + 1 + 2 * q;
        need[q] = fetch_bytes(&g->a, g->ci.at[i], g->ci.at[i + 1], g->ck.at[kk], g->ck.at[kk + 1],
                              g->es, &nb[0]) +
                  fetch_bytes(&g->b, g->ck.at[kk], g->ck.at[kk + 1], g->cj.at[j], g->cj.at[j + 1],
                              g->es, &nb[1]);
    }
    size_t in = 0;
    for (int64_t q = 0; st == RMC_OK && q < nseq; q++) { /* greedy rounds */
        if (q == 0 || in + need[q] > ROUND_BYTES) {
            first[nr++] = q;
            in = 0;
        }
        in += need[q];
    }
    if (st == RMC_OK)
        first[nr] = nseq;
    long all = 0;
    double t1 = now(); /* (collective: waiting for the others) */
    st = rmcc_agree(st);
    if (st == RMC_OK && MPI_Allreduce(&nr, &all, 1, MPI_LONG, MPI_MAX, rmcc.comm) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Allreduce of the rounds");
    st = rmcc_agree(st);
    g->st.imbalance += now() - t1;
    for (long r = 0; st == RMC_OK && r < all; r++) {
        int64_t q0 = r < nr ? first[r] : nseq, q1 = r < nr ? first[r + 1] : nseq;
        size_t total = 0, at = 0;
        for (int64_t q = q0; q < q1; q++)
            total += need[nseq + 1 + 2 * q] + need[nseq + 2 + 2 * q];
        char *base = arena_get(total + 64, g->fn);
        if (!base)
            st = RMC_ERR_NOMEM;
        for (int64_t q = q0; st == RMC_OK && q < q1; q++) { /* this round's fetches */
            int64_t i = w[q][0], j = w[q][1], kk = w[q][2];
            size_t na = need[nseq + 1 + 2 * q], nb = need[nseq + 2 + 2 * q];
            char *bq = base + at;
            at += na + nb;
            if (st == RMC_OK)
                st = block_start(&g->a, g->ci.at[i], g->ci.at[i + 1], g->ck.at[kk],
                                 g->ck.at[kk + 1], bq, &A[q], &g->st, g->fn);
            if (st == RMC_OK)
                st = block_start(&g->b, g->ck.at[kk], g->ck.at[kk + 1], g->cj.at[j],
                                 g->cj.at[j + 1], bq + na, &B[q], &g->st, g->fn);
        }
        /* serve and wait: this rank's fetches, then every rank's (a background barrier) */
        double t0 = now();
        MPI_Request ib = MPI_REQUEST_NULL;
        int mine = st != RMC_OK, done = 0;
        while (!done) {
            if (!mine) {
                mine = 1;
                for (int64_t q = q0; q < q1; q++)
                    for (int x = 0; x < 2; x++) {
                        blk_t *b = x ? &B[q] : &A[q];
                        int fin = 1;
                        rmc_status_t ts = b->r ? rmc_test(&b->r, &fin) : RMC_OK;
                        if (ts != RMC_OK && st == RMC_OK)
                            st = rmc_error_in(ts, g->fn); /* (a failed request is released) */
                        mine &= fin || ts != RMC_OK;
                    }
            }
            if (mine && ib == MPI_REQUEST_NULL && MPI_Ibarrier(rmcc.comm, &ib) != MPI_SUCCESS) {
                st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Ibarrier of a round");
                break;
            }
            if (ib != MPI_REQUEST_NULL && MPI_Test(&ib, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Test of a round");
                break;
            }
            if (!done)
                rmc_progress();
        }
        g->st.comm_wait += now() - t0;
        st = agree_timed(g, st);
        for (int64_t q = q0; st == RMC_OK && q < q1; q++) { /* the round's products */
            int64_t i = w[q][0], j = w[q][1], kk = w[q][2], ldc;
            char *cp = c_block(g, i, j, &ldc);
            const void *beta = kk == (i + j) % g->ck.n ? g->beta : g->one;
            st = multiply(g, g->ci.at[i + 1] - g->ci.at[i], g->cj.at[j + 1] - g->cj.at[j],
                          g->ck.at[kk + 1] - g->ck.at[kk], &A[q], &B[q], cp, ldc, beta, NULL, 0);
        }
        st = agree_timed(g, st); /* a rank that failed stops every rank at this round */
        for (int64_t q = q0; q < q1; q++) {
            for (int x = 0; x < 2; x++) {
                blk_t *b = x ? &B[q] : &A[q];
                if (b->r)
                    rmc_wait(&b->r);
                block_release(b);
            }
        }
    }
    free(need);
    free(first);
    free(A);
    return st;
}

static rmc_status_t stationary_c(gemm_t *g)
{
    if (g->cs)
        return stationary_c_sparse(g);
    /* this rank's C blocks, each with its k blocks from the offset i + j: one sequence of block
     * products, fetched one ahead */
    int64_t nk = g->ck.n, nw = 0;
    for (int64_t i = 0; i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            nw += c_owner(g, i, j) == rmcc.rank;
    rmc_status_t st = RMC_OK;
    if ((nw == 0 && !g->poll) || nk == 0) /* (the rounds are collective: every rank joins) */
        return RMC_OK;
    int64_t(*w)[3] = malloc((size_t)(nw * nk + 1) * sizeof(*w)); /* i, j, k block */
    if (g->poll) /* rounds (below): a failure here is agreed in them, every rank joins them */
        st = w ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, g->fn, "the sequence of block products");
    char *bufs = g->poll || !w ? NULL : arena_get(2 * (g->bufA + g->bufB), g->fn);
    if (!g->poll && (!bufs || !w)) {
        free(w);
        return rmcc_fail(RMC_ERR_NOMEM, g->fn, "buffers for blocks of A and B");
    }
    int64_t nseq = 0;
    for (int64_t i = 0; w && i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            if (c_owner(g, i, j) == rmcc.rank)
                for (int64_t s = 0; s < nk; s++) {
                    w[nseq][0] = i;
                    w[nseq][1] = j;
                    w[nseq++][2] = (s + i + j) % nk;
                }
    if (g->poll) { /* remote ranks: rounds of fetches, then products */
        st = stationary_c_rounds(g, w, nseq, st);
        free(w);
        return st;
    }
    blk_t A[2] = {{0}}, B[2] = {{0}};
    rmc_status_t sa;
    char *ab[2] = {bufs, bufs + g->bufA + g->bufB}, *bb[2] = {ab[0] + g->bufA, ab[1] + g->bufA};
#define START(x, s)                                                                                \
    ((sa = block_start(&g->a, g->ci.at[w[s][0]], g->ci.at[w[s][0] + 1], g->ck.at[w[s][2]],         \
                       g->ck.at[w[s][2] + 1], ab[x], &A[x], &g->st, g->fn)) == RMC_OK              \
         ? block_start(&g->b, g->ck.at[w[s][2]], g->ck.at[w[s][2] + 1], g->cj.at[w[s][1]],         \
                       g->cj.at[w[s][1] + 1], bb[x], &B[x], &g->st, g->fn)                         \
         : sa)
    st = START(0, 0);
    for (int64_t s = 0; st == RMC_OK && s < nseq; s++) {
        int x = (int)(s & 1);
        if (s + 1 < nseq && (st = START(1 - x, s + 1)) != RMC_OK)
            break;
        if ((st = block_wait(g, &A[x])) != RMC_OK || (st = block_wait(g, &B[x])) != RMC_OK)
            break;
        int64_t i = w[s][0], j = w[s][1], kk = w[s][2], ldc; /* (dense C: sparse is above) */
        char *cp = c_block(g, i, j, &ldc);
        rmc_request_h pend[2] = {s + 1 < nseq ? A[1 - x].r : RMC_REQUEST_NULL,
                                 s + 1 < nseq ? B[1 - x].r : RMC_REQUEST_NULL};
        /* C's beta is applied by the first product of each block (no pass over C) */
        const void *beta = kk == (i + j) % nk ? g->beta : g->one;
        st = multiply(g, g->ci.at[i + 1] - g->ci.at[i], g->cj.at[j + 1] - g->cj.at[j],
                      g->ck.at[kk + 1] - g->ck.at[kk], &A[x], &B[x], cp, ldc, beta, pend, 2);
        if (s + 1 < nseq) { /* the tests may have completed them */
            A[1 - x].r = pend[0];
            B[1 - x].r = pend[1];
        }
        block_release(&A[x]);
        block_release(&B[x]);
    }
#undef START
    for (int x = 0; x < 2; x++) { /* after a failure: nothing in flight stays */
        if (A[x].r)
            rmc_wait(&A[x].r);
        if (B[x].r)
            rmc_wait(&B[x].r);
        block_release(&A[x]);
        block_release(&B[x]);
    }
    free(w);
    return st;
}

/* Stationary C for SpGEMM: each of this rank's C tiles computed whole, with one accumulator over
 * all its k blocks (a fused Gustavson: no partial products to store and sum), the blocks of the
 * next C tile fetched while this one is computed. */
static rmc_status_t stationary_c_sparse(gemm_t *g)
{
    int64_t nk = g->ck.n, nw = 0;
    for (int64_t i = 0; i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            nw += c_owner(g, i, j) == rmcc.rank;
    if (nw == 0 || nk == 0)
        return RMC_OK;
    int64_t(*w)[2] = malloc((size_t)nw * sizeof(*w));
    blk_t *bl = calloc(4 * (size_t)nk, sizeof(blk_t)); /* two sets of nk A and nk B blocks */
    const rmc_csr_t **pa = malloc(2 * (size_t)nk * sizeof(*pa));
    if (!w || !bl || !pa) {
        free(w);
        free(bl);
        free(pa);
        return rmcc_fail(RMC_ERR_NOMEM, g->fn, "the blocks of a C tile");
    }
    const rmc_csr_t **pb = pa + nk;
    int64_t n = 0;
    for (int64_t i = 0; i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            if (c_owner(g, i, j) == rmcc.rank) {
                w[n][0] = i;
                w[n++][1] = j;
            }
    rmc_status_t st = RMC_OK;
    /* set x of tile s: A blocks bl[2x nk ..], B blocks after them; k from the offset i + j */
#define SET(x) (bl + (size_t)(x)*2 * (size_t)nk)
    for (int64_t s = 0; st == RMC_OK && s <= n; s++) {
        if (s < n) { /* start tile s's blocks */
            blk_t *b = SET(s & 1);
            int64_t i = w[s][0], j = w[s][1];
            for (int64_t q = 0; st == RMC_OK && q < nk; q++) {
                int64_t kk = (q + i + j) % nk;
                st = block_start(&g->a, g->ci.at[i], g->ci.at[i + 1], g->ck.at[kk],
                                 g->ck.at[kk + 1], NULL, &b[q], &g->st, g->fn);
                if (st == RMC_OK)
                    st = block_start(&g->b, g->ck.at[kk], g->ck.at[kk + 1], g->cj.at[j],
                                     g->cj.at[j + 1], NULL, &b[nk + q], &g->st, g->fn);
            }
        }
        if (st != RMC_OK || s == 0)
            continue;
        blk_t *b = SET((s - 1) & 1); /* compute tile s - 1 */
        for (int64_t q = 0; st == RMC_OK && q < 2 * nk; q++)
            st = block_wait(g, &b[q]);
        for (int64_t q = 0; q < nk; q++) {
            pa[q] = &b[q].csr;
            pb[q] = &b[nk + q].csr;
        }
        int64_t i = w[s - 1][0], j = w[s - 1][1], t = c_tile(g, i, j), rows, cols;
        rmcc_sptile_shape(g->cs, t, &rows, &cols);
        rmc_csr_t c;
        rmc_csr_init(&c, g->cs->idx64);
        double t0 = now(), flops = 0;
        if (st == RMC_OK)
            st = rmcc_spgemm_fused(pa, pb, (int)nk, *(const double *)g->alpha, g->spa, g->cs->idx64,
                                   rows, cols, &c, &flops, g->fn);
        g->st.compute += now() - t0;
        g->st.flops += flops;
        if (st == RMC_OK)
            st = partial_add(g, t, &c);
        rmc_csr_free(&c);
        for (int64_t q = 0; q < 2 * nk; q++) { /* (after a failed wait some may be in flight) */
            if (b[q].r)
                rmc_wait(&b[q].r);
            block_release(&b[q]);
        }
    }
    for (int64_t q = 0; q < 4 * nk; q++) { /* after a failure: nothing in flight stays */
        if (bl[q].r)
            rmc_wait(&bl[q].r);
        block_release(&bl[q]);
    }
#undef SET
    free(w);
    free(bl);
    free(pa);
    return st;
}

/* ------------------------------------------------------------- partial C updates --- */

/* An update of the queue method: a product in the producer's segment, for C block [i, j]; the
 * consumer adds 1 at `ack` (the producer's) when it has read it. */
typedef struct upd {
    rmc_gptr_t p, ack;
    int64_t i, j, nnz; /* nnz: a sparse product's nonzeros (its block: rmcc_spblock_bytes) */
} upd_t;
static const rmc_type_t upd_type = RMC_TYPE_FIXED("rmc-gemm-update", sizeof(upd_t));

#define NSLOT 4 /* products a producer has in flight (queue method) */

/* How partial C blocks travel (stationary A / B, stealing). */
typedef struct updater {
    int queue;              /* 0: atomic accumulate into C; 1: update queues */
    int copies;             /* K partial copies of C, one per k block (seed 001 Alg 7) */
    struct rmc_matrix **cp; /* [ck.n] the copies (on C's distribution) */
    rmc_queue_h *q;         /* [nranks] each rank's queue (queue method) */
    char *buf[NSLOT];       /* products: local buffers (acc) or segment blocks (queue) */
    rmc_gptr_t slot[NSLOT]; /* queue: the blocks' global pointers */
    rmc_gptr_t ack;         /* queue: NSLOT acknowledgement counters (int64) */
    rmc_request_h r[NSLOT]; /* acc: the accumulate in flight from each buffer */
    int64_t sent[NSLOT];    /* queue: updates sent from each slot, acknowledged: *ack[s] */
    int next;
    char *pull; /* queue: where a popped product is read */
    size_t pullcap;
    int sparse;         /* sparse C: products are CSR blocks, one segment allocation each, */
    rmc_gptr_t *blocks; /* freed at the end (after every owner has read them) */
    size_t nblocks, capblocks;
} updater_t;

/* Sparse C: pulls the product block of update d into a CSR of its own. */
static rmc_status_t pull_sparse(gemm_t *g, updater_t *u, const upd_t *d, rmc_csr_t *p)
{
    int64_t rows, cols, t = c_tile(g, d->i, d->j);
    rmcc_sptile_shape(g->cs, t, &rows, &cols);
    int w64 = g->cs->idx64;
    size_t bytes = rmcc_spblock_bytes(rows, d->nnz, w64), w = w64 ? 8 : 4;
    rmc_status_t st = rmcc_scratch(&u->pull, &u->pullcap, bytes, g->fn);
    if (st == RMC_OK)
        st = rmc_gptr_get(u->pull, d->p, bytes);
    if (st == RMC_OK)
        st = rmc_csr_alloc(p, rows, cols, d->nnz, w64);
    if (st != RMC_OK)
        return st;
    void *rp, *ci;
    double *v;
    rmcc_spblock_arrays(u->pull, rows, d->nnz, w64, &rp, &ci, &v);
    memcpy(p->rowptr, rp, (size_t)(rows + 1) * w);
    memcpy(p->colind, ci, (size_t)d->nnz * w);
    memcpy(p->val, v, (size_t)d->nnz * 8);
    if (rmc_same_node(d->p.rank) != 1) /* (the consumer counts it: a node-local one is 0) */
        g->st.bytes += (double)bytes;
    return RMC_OK;
}

/* dst (mi x nj, ldd) += src (lds). */
static void add_block(const gemm_t *g, char *dst, int64_t ldd, const char *src, int64_t lds,
                      int64_t mi, int64_t nj)
{
    for (int64_t r = 0; r < mi; r++) {
        char *cr = dst + (size_t)(r * ldd) * g->es;
        const char *pr = src + (size_t)(r * lds) * g->es;
        switch (g->e) {
        case RMC_ELEM_F32:
            cblas_saxpy((blasint)nj, 1.0f, (const float *)(const void *)pr, 1, (float *)(void *)cr,
                        1);
            break;
        case RMC_ELEM_F64:
            cblas_daxpy((blasint)nj, 1.0, (const double *)(const void *)pr, 1, (double *)(void *)cr,
                        1);
            break;
        case RMC_ELEM_C32:
            cblas_caxpy((blasint)nj, g->one, pr, 1, cr, 1);
            break;
        default:
            cblas_zaxpy((blasint)nj, g->one, pr, 1, cr, 1);
        }
    }
}

/* Drains this rank's update queue: pulls each product there now and adds it to the C block it
 * names (*left: the updates still to come). Counts accumulate time when there was something to
 * pull (finding the queue empty is waiting: the callers count it as theirs). */
static rmc_status_t drain(gemm_t *g, updater_t *u, int64_t *left)
{
    if (!u->queue || !u->q || !u->q[rmcc.rank])
        return RMC_OK;
    double t0 = now();
    rmc_status_t st = RMC_OK;
    int got = 0;
    for (;; got = 1) {
        upd_t d;
        st = rmc_queue_pop(u->q[rmcc.rank], &d, 0);
        if (st == RMC_ERR_EMPTY) {
            st = RMC_OK;
            break;
        }
        if (st != RMC_OK)
            break;
        if (u->sparse) { /* a partial CSR block of one of this rank's tiles, kept for the sum */
            rmc_csr_t p;
            rmc_csr_init(&p, g->cs->idx64);
            if ((st = pull_sparse(g, u, &d, &p)) != RMC_OK ||
                (st = partial_add(g, c_tile(g, d.i, d.j), &p)) != RMC_OK)
                break;
            --*left;
            continue;
        }
        int64_t ldc, mi = g->ci.at[d.i + 1] - g->ci.at[d.i], nj = g->cj.at[d.j + 1] - g->cj.at[d.j];
        char *cp = c_block(g, d.i, d.j, &ldc);
        size_t bytes = (size_t)(mi * nj) * g->es;
        rmc_status_t gs = rmc_gptr_get(u->pull, d.p, bytes);
        int64_t old; /* acknowledged even when the read failed: its producer waits for it */
        rmc_status_t as = rmc_gptr_fetch_add_i64(d.ack, 1, &old);
        if ((st = gs != RMC_OK ? gs : as) != RMC_OK)
            break;
        if (rmc_same_node(d.p.rank) != 1) /* (the consumer counts it: a node-local one is 0) */
            g->st.bytes += (double)bytes;
        add_block(g, cp, ldc, u->pull, nj, mi, nj); /* (alpha was applied by the producer) */
        --*left;
    }
    if (got || st != RMC_OK)
        g->st.accumulate += now() - t0;
    return st;
}

/* A free product buffer: its previous update complete (acc) or acknowledged (queue); the queue
 * method drains this rank's queue while it waits (another producer may wait for us). */
static rmc_status_t upd_slot(gemm_t *g, updater_t *u, int64_t *left, char **buf)
{
    int s = u->next;
    u->next = (s + 1) % NSLOT;
    rmc_status_t st = RMC_OK;
    double t0 = now(), acc0 = g->st.accumulate; /* (drain counts its own time) */
    if (!u->queue) {
        if (u->r[s])
            st = rmc_wait(&u->r[s]);
    } else {
        for (;;) {
            int64_t acked;
            if ((st = rmc_gptr_load_i64(rmc_gptr_add(u->ack, 8 * s), &acked)) != RMC_OK)
                break;
            if (acked == u->sent[s])
                break;
            if ((st = drain(g, u, left)) != RMC_OK)
                break;
            rmc_progress();
        }
    }
    g->st.comm_wait += now() - t0 - (g->st.accumulate - acc0);
    *buf = u->buf[s];
    return st;
}

/* Pushes update d to its C block's owner; a full queue: this rank drains its own meanwhile (the
 * owner may wait for us). */
static rmc_status_t push_update(gemm_t *g, updater_t *u, const upd_t *d, int64_t *left)
{
    int owner = c_owner(g, d->i, d->j);
    double t0 = now(), acc0 = g->st.accumulate; /* (drain counts its own time) */
    rmc_status_t st;
    while ((st = rmc_queue_push(u->q[owner], d, 0)) == RMC_ERR_FULL) {
        if ((st = drain(g, u, left)) != RMC_OK)
            break;
        rmc_progress();
    }
    g->st.comm_wait += now() - t0 - (g->st.accumulate - acc0);
    return st;
}

/* Sends the product in the buffer last given by upd_slot to C block [i, j] (the time to issue
 * it: comm wait). Bytes: the accumulate or put sent to a C owner on another node (the queue
 * method's consumer counts the block it pulls: only a descriptor goes out here). */
static rmc_status_t upd_send(gemm_t *g, updater_t *u, int64_t i, int64_t j, int64_t kk,
                             int64_t *left)
{
    int s = (u->next + NSLOT - 1) % NSLOT;
    int64_t mi = g->ci.at[i + 1] - g->ci.at[i], nj = g->cj.at[j + 1] - g->cj.at[j];
    if (!u->queue) { /* into C (atomic accumulate), or into copy kk (a plain put) */
        int64_t lo[2] = {g->c0[0] + g->ci.at[i], g->c0[1] + g->cj.at[j]};
        int64_t hi[2] = {g->c0[0] + g->ci.at[i + 1], g->c0[1] + g->cj.at[j + 1]};
        if (rmc_same_node(c_owner(g, i, j)) != 1) /* (the copies are on C's distribution) */
            g->st.bytes += (double)(mi * nj) * (double)g->es;
        double t0 = now();
        rmc_status_t st = rmcc_matrix_patch(u->copies ? u->cp[kk] : g->c, u->copies ? 1 : 2, lo, hi,
                                            u->buf[s], NULL, NULL, &u->r[s], g->fn);
        g->st.comm_wait += now() - t0;
        return st;
    }
    upd_t d = {u->slot[s], rmc_gptr_add(u->ack, 8 * s), i, j, 0};
    u->sent[s]++;
    return push_update(g, u, &d, left);
}

/* Sparse C: sends product p of C block [i, j] (a copy in this rank's segment, freed at the end) to
 * its owner's queue. */
static rmc_status_t upd_send_sp(gemm_t *g, updater_t *u, int64_t i, int64_t j, const rmc_csr_t *p,
                                int64_t *left)
{
    size_t bytes = rmcc_spblock_bytes(p->nrows, p->nnz, p->idx64), w = p->idx64 ? 8 : 4;
    if (u->nblocks == u->capblocks) {
        size_t cap = u->capblocks ? 2 * u->capblocks : 16;
        rmc_gptr_t *v = realloc(u->blocks, cap * sizeof(*v));
        if (!v)
            return rmcc_fail(RMC_ERR_NOMEM, g->fn, "the list of partial products");
        u->blocks = v;
        u->capblocks = cap;
    }
    rmc_gptr_t blk;
    rmc_status_t st = rmc_alloc(bytes, &blk);
    if (st != RMC_OK)
        return st;
    u->blocks[u->nblocks++] = blk;
    void *rp, *ci;
    double *v;
    rmcc_spblock_arrays(rmc_gptr_local(blk), p->nrows, p->nnz, p->idx64, &rp, &ci, &v);
    memcpy(rp, p->rowptr, (size_t)(p->nrows + 1) * w);
    memcpy(ci, p->colind, (size_t)p->nnz * w);
    memcpy(v, p->val, (size_t)p->nnz * 8); /* (bytes: counted by the owner that pulls it) */
    upd_t d = {blk, RMC_GPTR_NULL, i, j, p->nnz};
    return push_update(g, u, &d, left);
}

/* Collective: sets up the update path (the queue method's queues and segment blocks). */
static rmc_status_t upd_init(gemm_t *g, updater_t *u)
{
    memset(u, 0, sizeof(*u));
    u->ack = RMC_GPTR_NULL;
    for (int s = 0; s < NSLOT; s++)
        u->slot[s] = RMC_GPTR_NULL;
    const char *v = rmc_knob_value("RMC_GEMM_UPDATE");
    u->sparse = g->cs != NULL;
    u->queue = u->sparse || (v && !strcmp(v, "queue"));
    u->copies = !u->sparse && v && !strcmp(v, "copies");
    int bad = v && *v && strcmp(v, "acc") && strcmp(v, "queue") && strcmp(v, "copies");
    /* one method on every rank (the knob is read per rank): else acc everywhere and an error */
    int code = bad ? 3 : u->queue + 2 * u->copies;
    int m[2] = {code, -code}, r[2] = {0, 0};
    if (MPI_Allreduce(m, r, 2, MPI_INT, MPI_MIN, rmcc.comm) != MPI_SUCCESS || r[0] != -r[1] ||
        bad) {
        u->queue = u->copies = 0;
        for (int s = 0; s < NSLOT; s++)
            u->buf[s] = NULL;
        if (bad)
            return rmcc_agree(
                rmcc_fail(RMC_ERR_ARG, g->fn, "RMC_GEMM_UPDATE=%s: acc, queue or copies", v));
        return rmcc_agree(rmcc_fail(RMC_ERR_ARG, g->fn,
                                    "RMC_GEMM_UPDATE differs between the "
                                    "ranks (or could not be agreed)"));
    }
    size_t bytes; /* the largest C block */
    int64_t mi = 0, nj = 0;
    for (int64_t i = 0; i < g->ci.n; i++)
        if (g->ci.at[i + 1] - g->ci.at[i] > mi)
            mi = g->ci.at[i + 1] - g->ci.at[i];
    for (int64_t j = 0; j < g->cj.n; j++)
        if (g->cj.at[j + 1] - g->cj.at[j] > nj)
            nj = g->cj.at[j + 1] - g->cj.at[j];
    bytes = u->sparse ? 64 : (size_t)(mi * nj) * g->es; /* sparse: the pull buffer grows */
    rmc_status_t st = RMC_OK;
    if (!u->queue) {
        for (int s = 0; s < NSLOT && st == RMC_OK; s++)
            if (!(u->buf[s] = malloc(bytes ? bytes : 1)))
                st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "product buffers");
        if (u->copies && st == RMC_OK && !(u->cp = calloc((size_t)g->ck.n, sizeof(*u->cp))))
            st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "the copies of C");
        st = rmcc_agree(st);
        for (int64_t kk = 0; u->copies && st == RMC_OK && kk < g->ck.n; kk++)
            st = rmc_matrix_create(g->c->d, g->e, &u->cp[kk]); /* collective, zeroed */
        return st;
    }
    u->q = calloc((size_t)rmcc.nranks, sizeof(rmc_queue_h));
    u->pull = malloc(bytes ? bytes : 1);
    u->pullcap = bytes ? bytes : 1;
    st = u->q && u->pull ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, g->fn, "update queues");
    for (int s = 0; s < NSLOT && st == RMC_OK && !u->sparse; s++)
        if ((st = rmc_alloc(bytes ? bytes : 8, &u->slot[s])) == RMC_OK)
            u->buf[s] = rmc_gptr_local(u->slot[s]);
    if (st == RMC_OK && !u->sparse)
        st = rmc_alloc(8 * NSLOT, &u->ack);
    st = rmcc_agree(st);
    for (int r = 0; st == RMC_OK && r < rmcc.nranks; r++) /* collective: every rank, each */
        st = rmc_queue_create(RMC_QUEUE_CHECKSUM, r, 64, &upd_type, &u->q[r]);
    return st;
}

/* Collective: every update delivered (the queue method's owners drain what is theirs), then the
 * path torn down. left: the updates this rank still has to receive. */
static rmc_status_t upd_finish(gemm_t *g, updater_t *u, rmc_status_t st, int64_t left)
{
    if (!u->queue) {
        double t0 = now(); /* this rank's sends complete: comm wait */
        for (int s = 0; s < NSLOT; s++) {
            if (u->r[s]) {
                rmc_status_t s2 = rmc_wait(&u->r[s]);
                if (st == RMC_OK)
                    st = s2;
            }
            free(u->buf[s]);
        }
        if (!u->copies) {
            g->st.comm_wait += now() - t0;
            return st;
        }
        /* every copy complete, then each owner adds the copies' blocks of its C tiles */
        rmc_status_t f = rmc_fence_all();
        g->st.comm_wait += now() - t0;
        t0 = now();
        rmc_status_t b = rmc_barrier();
        st = rmcc_agree(st != RMC_OK ? st : f != RMC_OK ? f : b);
        g->st.imbalance += now() - t0;
        for (int64_t kk = 0; st == RMC_OK && kk < g->ck.n; kk++)
            if (!u->cp || !u->cp[kk])
                st = RMC_ERR_INTERNAL; /* (cannot happen: creation failed everywhere first) */
        t0 = now();
        for (int64_t i = 0; st == RMC_OK && i < g->ci.n; i++)
            for (int64_t j = 0; j < g->cj.n; j++) {
                if (c_owner(g, i, j) != rmcc.rank)
                    continue;
                int64_t ldc, t = c_tile(g, i, j);
                char *cp = c_block(g, i, j, &ldc);
                size_t off = (size_t)(cp - rmcc_tile_laddr(g->c, t)); /* the block in its tile */
                for (int64_t kk = 0; kk < g->ck.n; kk++)
                    add_block(g, cp, ldc, rmcc_tile_laddr(u->cp[kk], t) + off, ldc,
                              g->ci.at[i + 1] - g->ci.at[i], g->cj.at[j + 1] - g->cj.at[j]);
            }
        g->st.accumulate += now() - t0;
        t0 = now(); /* (collective: waiting for the others) */
        for (int64_t kk = 0; u->cp && kk < g->ck.n; kk++)
            if (u->cp[kk]) {
                rmc_status_t d = rmc_matrix_destroy(u->cp[kk]);
                if (st == RMC_OK)
                    st = d;
            }
        free(u->cp);
        g->st.imbalance += now() - t0;
        return st;
    }
    /* every rank pulls its updates until all ranks have finished pushing theirs (a barrier in
     * the background: a failed rank ends it too, nobody waits for updates that never come), then
     * what is left. Imbalance: all of it but the pulling and adding (accumulate, counted by drain)
     */
    double t0 = now(), acc0 = g->st.accumulate;
    MPI_Request rq;
    int done = 0;
    if (MPI_Ibarrier(rmcc.comm, &rq) != MPI_SUCCESS) {
        rq = MPI_REQUEST_NULL;
        done = 1;
        st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Ibarrier ending the updates");
    }
    while (!done) {
        rmc_status_t s2 = drain(g, u, &left);
        if (st == RMC_OK)
            st = s2;
        if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            done = 1;
        if (!done)
            rmc_progress();
    }
    rmc_status_t s3 = drain(g, u, &left);
    if (st == RMC_OK)
        st = s3;
    if (st == RMC_OK && left != 0)
        st = rmcc_fail(RMC_ERR_INTERNAL, g->fn, "%lld partial C blocks never arrived",
                       (long long)left);
    rmc_status_t b = rmc_barrier(); /* every product read: the blocks may go */
    if (st == RMC_OK)
        st = b;
    for (int r = 0; u->q && r < rmcc.nranks; r++)
        if (u->q[r])
            rmc_queue_destroy(u->q[r]);
    for (int s = 0; s < NSLOT; s++)
        if (!rmc_gptr_is_null(u->slot[s]))
            rmc_free(u->slot[s]);
    if (!rmc_gptr_is_null(u->ack))
        rmc_free(u->ack);
    for (size_t i = 0; i < u->nblocks; i++)
        rmc_free(u->blocks[i]);
    free(u->blocks);
    free(u->q);
    free(u->pull);
    g->st.imbalance += now() - t0 - (g->st.accumulate - acc0);
    return st;
}

/* The updates this rank receives: C blocks it owns times the k blocks. */
static int64_t updates_to_me(gemm_t *g)
{
    int64_t n = 0;
    for (int64_t i = 0; i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            n += c_owner(g, i, j) == rmcc.rank;
    return n * g->ck.n;
}

/* One block product of unit (i, kk) x j into a product buffer, sent to C's owner. A: the op(A)
 * block (ready), B: the op(B) block (ready). */
static rmc_status_t product(gemm_t *g, updater_t *u, int64_t i, int64_t j, int64_t kk,
                            const blk_t *A, const blk_t *B, rmc_request_h *pend, int np,
                            int64_t *left)
{
    if (g->cs) {
        rmc_csr_t p;
        rmc_csr_init(&p, g->cs->idx64);
        rmc_status_t st = multiply_sp(g, A, B, &p);
        if (st == RMC_OK)
            st = upd_send_sp(g, u, i, j, &p, left);
        rmc_csr_free(&p);
        return st;
    }
    char *pb;
    rmc_status_t st = upd_slot(g, u, left, &pb);
    if (st != RMC_OK)
        return st;
    int64_t mi = g->ci.at[i + 1] - g->ci.at[i], nj = g->cj.at[j + 1] - g->cj.at[j];
    if ((st = multiply(g, mi, nj, g->ck.at[kk + 1] - g->ck.at[kk], A, B, pb, nj, g->zero, pend,
                       np)) != RMC_OK)
        return st;
    return upd_send(g, u, i, j, kk, left);
}

/* ----------------------------------------------------------- stationary A and B --- */

/* Stationary A (which 0) or B (1): this rank's blocks of op(A)[i, kk] (op(B)[kk, j]) times every
 * op(B)[kk, j] (op(A)[i, kk]), the moving blocks fetched one ahead. */
static rmc_status_t stationary_ab(gemm_t *g, int which, updater_t *u, int64_t *left)
{
    const cuts_t *outer = which ? &g->cj : &g->ci, *moving = which ? &g->ci : &g->cj;
    const operand_t *so = which ? &g->b : &g->a, *mo = which ? &g->a : &g->b;
    size_t per = g->bufA + g->bufB; /* each buffer holds a block of either */
    char *buf = arena_get(3 * per, g->fn);
    if (!buf)
        return RMC_ERR_NOMEM;
    char *sbuf = buf, *mbuf[2] = {buf + per, buf + 2 * per};
    rmc_status_t st = RMC_OK;
    for (int64_t o = 0; st == RMC_OK && o < outer->n; o++)
        for (int64_t kk = 0; st == RMC_OK && kk < g->ck.n; kk++) {
            int own = which ? op_owner(&g->b, &g->ck, kk, &g->cj, o) == rmcc.rank
                            : op_owner(&g->a, &g->ci, o, &g->ck, kk) == rmcc.rank;
            if (!own)
                continue;
            blk_t S = {0}, M[2] = {{0}};
            int64_t k0 = g->ck.at[kk], k1 = g->ck.at[kk + 1];
            st = which ? block_start(so, k0, k1, outer->at[o], outer->at[o + 1], sbuf, &S, &g->st,
                                     g->fn)
                       : block_start(so, outer->at[o], outer->at[o + 1], k0, k1, sbuf, &S, &g->st,
                                     g->fn);
            if (st == RMC_OK)
                st = block_wait(g, &S); /* in place: it is this rank's */
            int64_t nm = moving->n, start = (o + kk) % (nm ? nm : 1);
#define MSTART(x, s)                                                                               \
    (which ? block_start(mo, moving->at[(s + start) % nm], moving->at[(s + start) % nm + 1], k0,   \
                         k1, mbuf[x], &M[x], &g->st, g->fn)                                        \
           : block_start(mo, k0, k1, moving->at[(s + start) % nm],                                 \
                         moving->at[(s + start) % nm + 1], mbuf[x], &M[x], &g->st, g->fn))
            if (st == RMC_OK && nm)
                st = MSTART(0, 0);
            for (int64_t s = 0; st == RMC_OK && s < nm; s++) {
                int x = (int)(s & 1);
                if (s + 1 < nm && (st = MSTART(1 - x, s + 1)) != RMC_OK)
                    break;
                if ((st = block_wait(g, &M[x])) != RMC_OK)
                    break;
                int64_t m = (s + start) % nm;
                rmc_request_h pend[1] = {s + 1 < nm ? M[1 - x].r : RMC_REQUEST_NULL};
                st = which ? product(g, u, m, o, kk, &M[x], &S, pend, 1, left)
                           : product(g, u, o, m, kk, &S, &M[x], pend, 1, left);
                if (s + 1 < nm)
                    M[1 - x].r = pend[0];
                block_release(&M[x]);
            }
#undef MSTART
            for (int x = 0; x < 2; x++) {
                if (M[x].r)
                    rmc_wait(&M[x].r);
                block_release(&M[x]);
            }
            if (S.r)
                rmc_wait(&S.r);
            block_release(&S);
            if (st == RMC_OK)
                st = drain(g, u, left);
        }
    return st;
}

/* -------------------------------------------------------------------- stealing --- */

/* Work stealing on stationary A (Alg 8, corrected): unit (i, kk)'s column products are reserved
 * one at a time by a fetch-and-add on the unit's counter (on the unit's owner). Each rank first
 * works on its own units, then on the others': in random order, or (local) those whose blocks it
 * holds first. */
static rmc_status_t stealing(gemm_t *g, int local, updater_t *u, int64_t *left, rmc_gptr_t *ctrp)
{
    int64_t nu = g->ci.n * g->ck.n, nj = g->cj.n;
    rmc_status_t st = RMC_OK;
    rmc_gptr_t ctr = RMC_GPTR_NULL;
    uint64_t *base = calloc((size_t)rmcc.nranks, sizeof(uint64_t));
    int64_t *order = malloc((size_t)(nu ? nu : 1) * sizeof(int64_t));
    double *score = malloc((size_t)(nu ? nu : 1) * sizeof(double));
    char *buf = arena_get(2 * g->bufA + 2 * g->bufB, g->fn);
    if (!base || !order || !score || !buf)
        st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "the reservation grid");
    if (st == RMC_OK && (st = rmc_alloc(8 * (size_t)(nu ? nu : 1), &ctr)) == RMC_OK)
        base[rmcc.rank] = ctr.off;
    double t0 = now(); /* (collective: waiting for the others) */
    st = rmcc_agree(st);
    if (st == RMC_OK && MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, 1, MPI_UINT64_T,
                                      rmcc.comm) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Allgather of the reservation grid");
    st = rmcc_agree(st);
    if (st == RMC_OK)
        st = rmcc_agree(rmc_barrier()); /* the counters are zero everywhere before any use */
    g->st.imbalance += now() - t0;
    /* the order: own units, then the others (random or by locality), unit u = i * nk + kk */
    int64_t n = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(rmcc.rank + 1);
    for (int64_t v = 0; st == RMC_OK && v < nu; v++) {
        int64_t i = v / g->ck.n, kk = v % g->ck.n;
        int own = op_owner(&g->a, &g->ci, i, &g->ck, kk) == rmcc.rank;
        double sc = own ? 1e9 : 0;
        if (!own && local) { /* blocks it holds: A's in place, C's and B's of the products */
            int64_t lo[2], hi[2];
            int64_t at =
                box_of(&g->a, g->ci.at[i], g->ci.at[i + 1], g->ck.at[kk], g->ck.at[kk + 1], lo, hi);
            sc += rmc_same_node(g->a.towner[at]) == 1 ? 1e6 : 0;
            for (int64_t j = 0; j < nj; j++)
                sc += (c_owner(g, i, j) == rmcc.rank) +
                      (op_owner(&g->b, &g->ck, kk, &g->cj, j) == rmcc.rank);
        }
        seed = rmcc_mix64(seed + (uint64_t)v);
        score[v] = sc + (double)(seed >> 11) * 0x1.0p-53; /* ties: random */
        order[n++] = v;
    }
    for (int64_t a = 1; a < n; a++) { /* by score, descending (insertion: few units) */
        int64_t v = order[a], b = a;
        while (b > 0 && score[order[b - 1]] < score[v]) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
    char *sbuf = buf, *mbuf = buf + g->bufA;
    for (int64_t q = 0; st == RMC_OK && q < n; q++) {
        int64_t v = order[q], i = v / g->ck.n, kk = v % g->ck.n;
        int owner = op_owner(&g->a, &g->ci, i, &g->ck, kk);
        rmc_gptr_t c = {.rank = owner, .off = base[owner] + 8 * (uint64_t)v};
        int64_t j;
        double t1 = now(); /* reservations: comm wait */
        st = rmc_gptr_fetch_add_i64(c, 1, &j);
        g->st.comm_wait += now() - t1;
        if (st != RMC_OK || j >= nj)
            continue;
        blk_t S = {0}, M = {0};
        st = block_start(&g->a, g->ci.at[i], g->ci.at[i + 1], g->ck.at[kk], g->ck.at[kk + 1], sbuf,
                         &S, &g->st, g->fn);
        if (st == RMC_OK)
            st = block_wait(g, &S);
        while (st == RMC_OK && j < nj) {
            if (owner != rmcc.rank)
                g->st.tiles_stolen++;
            st = block_start(&g->b, g->ck.at[kk], g->ck.at[kk + 1], g->cj.at[j], g->cj.at[j + 1],
                             mbuf, &M, &g->st, g->fn);
            if (st == RMC_OK)
                st = block_wait(g, &M);
            if (st == RMC_OK)
                st = product(g, u, i, j, kk, &S, &M, NULL, 0, left);
            if (M.r)
                rmc_wait(&M.r);
            block_release(&M);
            if (st == RMC_OK) {
                t1 = now();
                st = rmc_gptr_fetch_add_i64(c, 1, &j);
                g->st.comm_wait += now() - t1;
            }
        }
        if (S.r)
            rmc_wait(&S.r);
        block_release(&S);
        if (st == RMC_OK)
            st = drain(g, u, left);
    }
    *ctrp = ctr; /* freed by the caller after the updates' barrier: nobody reserves any more */
    free(base);
    free(order);
    free(score);
    return st;
}

/* ------------------------------------------------------------------------ SUMMA --- */

/* Rank r's coordinates in a row-major process grid. */
static void grid_coords(const struct rmc_dist *d, int r, int *pr, int *pc)
{
    *pr = r / d->pgrid[1];
    *pc = r % d->pgrid[1];
}

/* SUMMA's requirements: whole matrices, no transposes, regular distributions of one tile per
 * process on one grid, A's rows split as C's, B's columns as C's (A's columns and B's rows may be
 * split differently: the k panels are cut at both). */
static rmc_status_t summa_check(const gemm_t *g)
{
    const struct rmc_dist *a = g->a.d, *b = g->b.d, *c = g->co.d;
    const char *why = NULL;
    char tiles[160];
    if (g->a.trans || g->b.trans)
        why = "transposed operands";
    else if (g->c0[0] || g->c0[1] || g->a.r0 || g->a.c0 || g->b.r0 || g->b.c0 ||
             g->m != c->dims[0] || g->n != c->dims[1] || g->k != a->dims[1])
        why = "patches";
    else if (a->kind != RMC_DIST_REGULAR || b->kind != RMC_DIST_REGULAR ||
             c->kind != RMC_DIST_REGULAR)
        why = "irregular or round-robin distributions";
    else if (a->nmap || b->nmap || c->nmap)
        why = "distributions placed on chosen ranks (rmc_dist_set_ranks)";
    else {
        const struct rmc_dist *x[3] = {a, b, c};
        for (int q = 0; !why && q < 3; q++)
            for (int k = 0; !why && k < 2; k++)
                if (x[q]->nt[k] != x[q]->pgrid[k]) {
                    snprintf(tiles, sizeof tiles,
                             "%c's dimension %d in %lld tiles on %d processes (%s than one tile "
                             "per process)",
                             "ABC"[q], k, (long long)x[q] -> nt[k], x[q] -> pgrid[k],
                             x[q] -> nt[k] < x[q] -> pgrid[k] ? "fewer" : "more");
                    why = tiles;
                }
    }
    if (why)
        ;
    else if (a->pgrid[0] != c->pgrid[0] || a->pgrid[1] != c->pgrid[1] ||
             b->pgrid[0] != c->pgrid[0] || b->pgrid[1] != c->pgrid[1])
        why = "different process grids";
    else if (a->tile[0] != c->tile[0] || b->tile[1] != c->tile[1])
        why = "tiles that do not line up (A's rows split as C's, B's columns as C's)";
    return why ? rmcc_fail(RMC_ERR_UNSUPPORTED, g->fn,
                           "SUMMA needs one tile per process on one "
                           "regular grid for A, B and C: not %s",
                           why)
               : RMC_OK;
}

/* One SUMMA panel broadcast in `comm` from `root`: op(X)[i0, i1) x [k0, k1) (a sparse operand:
 * the tile, whole). The root reads it (in place when it can), packs it into buf (grown as needed)
 * and every rank ends with *b describing buf (dense: rows of k1 - k0 or of i1 - i0 ...). */
static rmc_status_t panel(gemm_t *g, const operand_t *o, int64_t r0, int64_t r1, int64_t c0,
                          int64_t c1, int root, int me, MPI_Comm comm, char **buf, size_t *cap,
                          blk_t *b)
{
    rmc_status_t st = RMC_OK;
    blk_t src = {0};
    int64_t nnz = 0, rows = r1 - r0, cols = c1 - c0;
    rmc_csr_t cut; /* a sparse panel that is part of its tile: that part */
    rmc_csr_init(&cut, o->s ? o->s->idx64 : 0);
    if (me == root) {
        st = block_start(o, r0, r1, c0, c1, *buf, &src, &g->st, g->fn);
        if (st == RMC_OK && src.r)
            st = rmc_wait(&src.r);
        if (st == RMC_OK && o->s && (src.csr.nrows != rows || src.csr.ncols != cols)) {
            const struct rmc_dist *d = o->d;
            int64_t tr = rmcc_tile_lo(d, 0, rmcc_tile_of(d, 0, r0));
            int64_t tc = rmcc_tile_lo(d, 1, rmcc_tile_of(d, 1, c0));
            st = rmc_csr_slice(&cut, &src.csr, r0 - tr, r1 - tr, c0 - tc, c1 - tc);
            if (st == RMC_OK) {
                block_release(&src);
                src.csr = cut; /* (freed below) */
                src.own_csr = 1;
                rmc_csr_init(&cut, o->s->idx64);
            }
        }
        nnz = o->s ? src.csr.nnz : 0;
    }
    /* the root's outcome and the panel's size, then whether every rank can take it: a failure
     * anywhere stops the panel on every rank of the communicator, before any data moves */
    int64_t hdr[2] = {(int64_t)st, nnz};
    if (MPI_Bcast(hdr, 2, MPI_INT64_T, root, comm) != MPI_SUCCESS) {
        block_release(&src);
        return rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Bcast of a SUMMA panel's size");
    }
    st = (rmc_status_t)hdr[0];
    nnz = hdr[1];
    int w64 = o->s ? o->s->idx64 : 0;
    size_t w = w64 ? 8 : 4;
    size_t bytes = o->s ? rmcc_spblock_bytes(rows, nnz, w64) : (size_t)(rows * cols) * g->es;
    if (st == RMC_OK && bytes > INT32_MAX)
        st = rmcc_fail(RMC_ERR_TOO_BIG, g->fn, "a SUMMA panel of %zu bytes", bytes);
    if (st == RMC_OK)
        st = rmcc_scratch(buf, cap, bytes + 8, g->fn);
    int bad = st != RMC_OK, any = bad;
    if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        any = 1, st = st != RMC_OK ? st : rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Allreduce of a panel");
    if (any) {
        block_release(&src);
        return st != RMC_OK ? st
                            : rmcc_fail(RMC_ERR_STATE, g->fn,
                                        "another rank could not take "
                                        "a SUMMA panel");
    }
    if (me == root) { /* pack */
        if (o->s) {
            void *rp, *ci;
            double *v;
            rmcc_spblock_arrays(*buf, rows, nnz, w64, &rp, &ci, &v);
            memcpy(rp, src.csr.rowptr, (size_t)(rows + 1) * w);
            memcpy(ci, src.csr.colind, (size_t)nnz * w);
            memcpy(v, src.csr.val, (size_t)nnz * 8);
        } else if (src.p != *buf) {
            for (int64_t r = 0; r < rows; r++)
                memmove(*buf + (size_t)(r * cols) * g->es, src.p + (size_t)(r * src.ld) * g->es,
                        (size_t)cols * g->es);
        }
    }
    block_release(&src);
    if (MPI_Bcast(*buf, (int)bytes, MPI_BYTE, root, comm) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Bcast of a SUMMA panel");
    if (me != root)
        g->st.bytes += (double)bytes;
    memset(b, 0, sizeof(*b));
    if (o->s) {
        b->sp = 1;
        b->csr.nrows = rows;
        b->csr.ncols = cols;
        b->csr.nnz = nnz;
        b->csr.idx64 = w64;
        rmcc_spblock_arrays(*buf, rows, nnz, w64, &b->csr.rowptr, &b->csr.colind, &b->csr.val);
    } else {
        b->p = *buf;
        b->ld = cols;
    }
    return st;
}

/* Bulk-synchronous SUMMA (Alg 2): for each k block, its A column of tiles is broadcast along the
 * process rows and its B row along the process columns, then every rank multiplies into its C
 * tile. MPI only (row and column communicators). */
static rmc_status_t summa(gemm_t *g)
{
    const struct rmc_dist *c = g->co.d;
    int pr, pc;
    rmc_status_t st = RMC_OK;
    MPI_Comm row = MPI_COMM_NULL, col = MPI_COMM_NULL;
    int in = rmcc.rank < c->pgrid[0] * c->pgrid[1];
    grid_coords(c, in ? rmcc.rank : 0, &pr, &pc);
    double t0 = now();
    if (MPI_Comm_split(rmcc.comm, in ? pr : MPI_UNDEFINED, pc, &row) != MPI_SUCCESS ||
        MPI_Comm_split(rmcc.comm, in ? pc : MPI_UNDEFINED, pr, &col) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Comm_split of SUMMA's row / column communicators");
    st = rmcc_agree(st);
    g->st.imbalance += now() - t0; /* (collective: waiting for the others) */
    int64_t i0 = rmcc_tile_lo(c, 0, pr), i1 = rmcc_tile_hi(c, 0, pr);
    int64_t j0 = rmcc_tile_lo(c, 1, pc), j1 = rmcc_tile_hi(c, 1, pc);
    for (int64_t kk = 0; st == RMC_OK && kk < g->ck.n; kk++) {
        int64_t k0 = g->ck.at[kk], k1 = g->ck.at[kk + 1];
        if (!in) { /* outside the grid: only the two agreements of each step */
            if ((st = agree_timed(g, st)) == RMC_OK)
                st = agree_timed(g, st);
            continue;
        }
        int acol = (int)rmcc_tile_of(g->a.d, 1, k0), brow = (int)rmcc_tile_of(g->b.d, 0, k0);
        blk_t pa, pb;
        double t0 = now(), w0 = g->st.comm_wait; /* (block_start inside counts its issue) */
        /* both panels on every rank (each agrees within its communicator), then all ranks */
        rmc_status_t sa = panel(g, &g->a, i0, i1, k0, k1, acol, pc, row, &arena.panel[0],
                                &arena.panel_cap[0], &pa);
        rmc_status_t sb = panel(g, &g->b, k0, k1, j0, j1, brow, pr, col, &arena.panel[1],
                                &arena.panel_cap[1], &pb);
        if ((st = rmcc_agree(sa != RMC_OK ? sa : sb)) != RMC_OK)
            break;
        g->st.comm_wait = w0 + (now() - t0);
        if (g->cs) {
            rmc_csr_t p;
            rmc_csr_init(&p, g->cs->idx64);
            st = multiply_sp(g, &pa, &pb, &p);
            if (st == RMC_OK)
                st = partial_add(g, c_tile(g, pr, pc), &p);
        } else {
            int64_t ldc;
            char *cp = c_block(g, pr, pc, &ldc);
            st = multiply(g, i1 - i0, j1 - j0, k1 - k0, &pa, &pb, cp, ldc,
                          kk == 0 ? g->beta : g->one, NULL, 0);
        }
        st = agree_timed(g, st);
    }
    if (row != MPI_COMM_NULL)
        MPI_Comm_free(&row);
    if (col != MPI_COMM_NULL)
        MPI_Comm_free(&col);
    return st;
}

/* ---------------------------------------------------------------------- the entry --- */

/* C blocks this rank owns, times beta (the algorithms that only add into C; dense C). */
static void scale_mine(gemm_t *g)
{
    for (int64_t i = 0; g->c && i < g->ci.n; i++)
        for (int64_t j = 0; j < g->cj.n; j++)
            if (c_owner(g, i, j) == rmcc.rank) {
                int64_t ldc;
                char *cp = c_block(g, i, j, &ldc);
                scale_block(g->e, cp, g->ci.at[i + 1] - g->ci.at[i], g->cj.at[j + 1] - g->cj.at[j],
                            ldc, g->beta);
            }
}

/* The operand for op(X)[lo, hi) of dense matrix m with trans t; checks. */
static rmc_status_t operand(operand_t *o, struct rmc_matrix *m, char t, const int64_t lo[2],
                            const int64_t hi[2], int64_t *rows, int64_t *cols, const char *what,
                            const char *fn)
{
    rmc_status_t st = rmcc_matrix_check_arg(m, what, fn);
    if (st != RMC_OK)
        return st;
    if (m->d->ndim != 2)
        return rmcc_fail(RMC_ERR_ARG, fn, "%s has %d dimensions (a matrix has 2)", what,
                         m->d->ndim);
    if (t != 'N' && t != 'n' && t != 'T' && t != 't' && t != 'C' && t != 'c')
        return rmcc_fail(RMC_ERR_ARG, fn, "trans%s '%c' (N, T or C)", what, t);
    for (int k = 0; k < 2; k++)
        if (lo[k] < 0 || hi[k] > m->d->dims[k] || lo[k] > hi[k])
            return rmcc_fail(lo[k] > hi[k] ? RMC_ERR_ARG : RMC_ERR_BOUNDS, fn,
                             "%s's patch: dimension %d [%lld, %lld) outside "
                             "[0, %lld) or reversed",
                             what, k, (long long)lo[k], (long long)hi[k], (long long)m->d->dims[k]);
    memset(o, 0, sizeof(*o));
    o->m = m;
    o->d = m->d;
    o->towner = m->towner;
    o->trans = t != 'N' && t != 'n';
    o->conj = (t == 'C' || t == 'c') && m->elem >= RMC_ELEM_C32;
    o->r0 = o->trans ? lo[1] : lo[0];
    o->c0 = o->trans ? lo[0] : lo[1];
    *rows = o->trans ? hi[1] - lo[1] : hi[0] - lo[0];
    *cols = o->trans ? hi[0] - lo[0] : hi[1] - lo[1];
    return RMC_OK;
}

void rmcc_blas_threads(void)
{
#ifdef HAVE_OPENBLAS
    int n = atoi(rmc_knob_value("RMC_BLAS_THREADS"));
    openblas_set_num_threads(n >= 1 ? n : 1);
#endif
}

/* The largest block of op(X) over the cuts (bytes). */
static size_t max_block(const cuts_t *r, const cuts_t *c, size_t es)
{
    int64_t a = 0, b = 0;
    for (int64_t i = 0; i < r->n; i++)
        a = r->at[i + 1] - r->at[i] > a ? r->at[i + 1] - r->at[i] : a;
    for (int64_t j = 0; j < c->n; j++)
        b = c->at[j + 1] - c->at[j] > b ? c->at[j + 1] - c->at[j] : b;
    return (size_t)(a * b) * es;
}

rmc_gemm_algo_t rmcc_gemm_choose(double bytes_a, double bytes_b, double bytes_c)
{
    double vc = bytes_a + bytes_b, va = bytes_b + bytes_c, vb = bytes_a + bytes_c;
    return vc <= va && vc <= vb ? RMC_GEMM_STATIONARY_C
           : va <= vb           ? RMC_GEMM_STATIONARY_A
                                : RMC_GEMM_STATIONARY_B;
}

/* RMC_GEMM_AUTO on dense C: the stationary variant that moves the least data between nodes, from
 * the work grid and the tile owners (every rank has both): each rank sums what it would fetch or
 * send in each variant, counted as the statistics' bytes are (a block on this rank's node: 0),
 * over the blocks it would own (O(blocks^3 / p)), and the three sums are added up over the ranks
 * (exact integers: the same choice everywhere). Ties: C, then A, then B. */
static rmc_status_t choose_moving_least(gemm_t *g, rmc_gemm_algo_t *algo)
{
    int64_t v[3] = {0, 0, 0}, all[3] = {0, 0, 0}; /* stationary C, A, B */
    size_t buf, es = g->es;
    const cuts_t *ci = &g->ci, *cj = &g->cj, *ck = &g->ck;
#define FA(i, kk)                                                                                  \
    (int64_t) fetch_bytes(&g->a, ci->at[i], ci->at[i + 1], ck->at[kk], ck->at[kk + 1], es, &buf)
#define FB(kk, j)                                                                                  \
    (int64_t) fetch_bytes(&g->b, ck->at[kk], ck->at[kk + 1], cj->at[j], cj->at[j + 1], es, &buf)
#define SC(i, j)                                                                                   \
    (rmc_same_node(c_owner(g, i, j)) == 1                                                          \
         ? 0                                                                                       \
         : (ci->at[i + 1] - ci->at[i]) * (cj->at[j + 1] - cj->at[j]) * (int64_t)es)
    for (int64_t i = 0; i < ci->n; i++)
        for (int64_t j = 0; j < cj->n; j++)
            if (c_owner(g, i, j) == rmcc.rank)
                for (int64_t kk = 0; kk < ck->n; kk++)
                    v[0] += FA(i, kk) + FB(kk, j);
    for (int64_t i = 0; i < ci->n; i++)
        for (int64_t kk = 0; kk < ck->n; kk++)
            if (op_owner(&g->a, ci, i, ck, kk) == rmcc.rank)
                for (int64_t j = 0; j < cj->n; j++)
                    v[1] += FB(kk, j) + SC(i, j);
    for (int64_t kk = 0; kk < ck->n; kk++)
        for (int64_t j = 0; j < cj->n; j++)
            if (op_owner(&g->b, ck, kk, cj, j) == rmcc.rank)
                for (int64_t i = 0; i < ci->n; i++)
                    v[2] += FA(i, kk) + SC(i, j);
#undef FA
#undef FB
#undef SC
    *algo = RMC_GEMM_STATIONARY_C;
    if (MPI_Allreduce(v, all, 3, MPI_INT64_T, MPI_SUM, rmcc.comm) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, g->fn, "MPI_Allreduce of RMC_GEMM_AUTO's volumes");
    *algo = all[0] <= all[1] && all[0] <= all[2] ? RMC_GEMM_STATIONARY_C
            : all[1] <= all[2]                   ? RMC_GEMM_STATIONARY_A
                                                 : RMC_GEMM_STATIONARY_B;
    return RMC_OK;
}

/* The work grid of g (its operands and C set): cuts at every tiling's boundaries. */
static rmc_status_t work_grid(gemm_t *g)
{
    tiling_t ti[2] = {{g->co.d, 0, g->c0[0]}, {g->a.d, g->a.trans ? 1 : 0, g->a.r0}};
    tiling_t tj[2] = {{g->co.d, 1, g->c0[1]}, {g->b.d, g->b.trans ? 0 : 1, g->b.c0}};
    tiling_t tk[2] = {{g->a.d, g->a.trans ? 0 : 1, g->a.c0}, {g->b.d, g->b.trans ? 1 : 0, g->b.r0}};
    rmc_status_t st = rmcc_make_cuts(&g->ci, g->m, ti, 2, g->fn);
    if (st == RMC_OK)
        st = rmcc_make_cuts(&g->cj, g->n, tj, 2, g->fn);
    if (st == RMC_OK)
        st = rmcc_make_cuts(&g->ck, g->k, tk, 2, g->fn);
    /* dense blocks' buffers (a sparse block is a tile of its own: no buffer) */
    g->bufA = (g->a.s ? 0 : max_block(&g->ci, &g->ck, g->es)) + 64;
    g->bufB = (g->b.s ? 0 : max_block(&g->ck, &g->cj, g->es)) + 64;
    return st;
}

rmc_status_t rmcc_gemm_run(gemm_t *g, rmc_gemm_algo_t algo)
{
    double t_start = now();
    rmcc_blas_threads();
    for (int r = 0; r < rmcc.nranks; r++) /* some rank is reached through MPI */
        g->poll |= rmc_same_node(r) != 1;
    rmc_status_t st = work_grid(g);
    if (algo == RMC_GEMM_AUTO) { /* (dense C; collective: every rank, the grid made or not) */
        double t0 = now();
        rmc_status_t s2 = choose_moving_least(g, &algo);
        g->st.imbalance += now() - t0;
        st = st != RMC_OK ? st : s2;
    }
    g->st.algo = algo;
    if (st == RMC_OK && algo == RMC_GEMM_SUMMA)
        st = summa_check(g);
    if (st == RMC_OK && g->cs) { /* the partial products of this rank's C tiles */
        size_t nt = (size_t)g->cs->d->ntiles;
        g->part = calloc(nt, sizeof(*g->part));
        g->npart = calloc(nt, sizeof(int));
        g->cappart = calloc(nt, sizeof(int));
        if (!g->part || !g->npart || !g->cappart)
            st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "the partial products' lists");
    }
    st = agree_timed(g, st);
    int started = st == RMC_OK; /* (agreed) C may change: a sparse C is renewed at the end */
    int64_t left = 0;
    if (st == RMC_OK && g->m > 0 && g->n > 0) {
        if (g->k == 0) {
            double t0 = now();
            scale_mine(g);
            g->st.compute += now() - t0;
        } else if (algo == RMC_GEMM_STATIONARY_C) {
            st = stationary_c(g);
        } else if (algo == RMC_GEMM_SUMMA) {
            st = summa(g);
        } else {
            /* the update path first (it may fail: then C is left as it was), its outcome agreed:
             * finished on every rank */
            updater_t u;
            double t0 = now(); /* (collective setup: waiting for the others) */
            st = upd_init(g, &u);
            g->st.imbalance += now() - t0;
            started = st == RMC_OK; /* (upd_init agrees) */
            if (st == RMC_OK) {
                t0 = now();
                scale_mine(g);
                g->st.compute += now() - t0;
                st = agree_timed(g, barrier_timed(g)); /* C scaled everywhere before updates */
            }
            left = updates_to_me(g);
            rmc_gptr_t ctr = RMC_GPTR_NULL; /* stealing's reservation counters */
            int ab = algo == RMC_GEMM_STATIONARY_A || algo == RMC_GEMM_STATIONARY_B;
            if (st == RMC_OK && ab)
                st = stationary_ab(g, algo == RMC_GEMM_STATIONARY_B, &u, &left);
            else if (st == RMC_OK)
                st = stealing(g, algo == RMC_GEMM_STEAL_LOCAL, &u, &left, &ctr);
            /* no waiting between the work and the drain: an owner must keep pulling its
             * updates until every one has arrived (a producer may wait for its ack) */
            st = upd_finish(g, &u, st, left);
            rmc_status_t b = barrier_timed(g); /* nobody reserves any more */
            if (st == RMC_OK)
                st = b;
            if (!rmc_gptr_is_null(ctr))
                rmc_free(ctr);
        }
    }
    /* sparse C: every tile summed from its partial products and set */
    if (g->cs && g->part) {
        if (st == RMC_OK)
            st = partials_finish(g);
        for (int64_t t = 0; t < g->cs->d->ntiles; t++) {
            for (int q = 0; q < g->npart[t]; q++)
                rmc_csr_free(&g->part[t][q]);
            free(g->part[t]);
        }
    }
    free(g->part);
    free(g->npart);
    free(g->cappart);
    g->part = NULL;
    /* the end: every rank's blocks complete and visible (updates fenced), waiting counted as
     * imbalance */
    double t_end = now();
    rmc_status_t f = rmc_fence_all();
    if (st == RMC_OK)
        st = f;
    rmc_status_t bar = rmc_barrier();
    g->st.imbalance += now() - t_end;
    st = agree_timed(g, st != RMC_OK ? st : bar);
    if (g->cs && started) { /* publish the tiles set (on failure during the work C is undefined:
                             * its tiles may be mixed; refused before it, C is as it was) */
        rmc_status_t r = rmc_spmatrix_renew(g->cs);
        if (st == RMC_OK)
            st = r;
    }
    free(g->ci.at);
    free(g->cj.at);
    free(g->ck.at);
    g->st.total = now() - t_start;
    return st;
}

/* Do x and y live on the same ranks: both on all, or on congruent communicators? */
static int same_ranks(const struct rmc_matrix *x, const struct rmc_matrix *y)
{
    if (x->comm == MPI_COMM_NULL || y->comm == MPI_COMM_NULL)
        return x->comm == y->comm;
    int r = MPI_UNEQUAL;
    MPI_Comm_compare(x->comm, y->comm, &r);
    return r == MPI_IDENT || r == MPI_CONGRUENT;
}

/* Bytes of X's box [lo, hi) in tiles whose owner is on another node (the statistics' bytes: the
 * part on this rank's node is read by loads). */
static double box_remote_bytes(const operand_t *o, const int64_t lo[2], const int64_t hi[2])
{
    const struct rmc_dist *d = o->d;
    double b = 0;
    if (lo[0] >= hi[0] || lo[1] >= hi[1])
        return 0;
    for (int64_t t0 = rmcc_tile_of(d, 0, lo[0]); t0 < d->nt[0] && rmcc_tile_lo(d, 0, t0) < hi[0];
         t0++) {
        int64_t r0 = rmcc_tile_lo(d, 0, t0), r1 = rmcc_tile_hi(d, 0, t0);
        int64_t nr = (r1 < hi[0] ? r1 : hi[0]) - (r0 > lo[0] ? r0 : lo[0]);
        for (int64_t t1 = rmcc_tile_of(d, 1, lo[1]);
             t1 < d->nt[1] && rmcc_tile_lo(d, 1, t1) < hi[1]; t1++) {
            int64_t c0 = rmcc_tile_lo(d, 1, t1), c1 = rmcc_tile_hi(d, 1, t1);
            int64_t nc = (c1 < hi[1] ? c1 : hi[1]) - (c0 > lo[1] ? c0 : lo[1]);
            if (rmc_same_node(o->towner[t0 * d->nt[1] + t1]) != 1)
                b += (double)(nr * nc) * (double)o->m->esz;
        }
    }
    return b;
}

/* op(X)[r, r + nr) x [q, q + nq) of operand o, as X stores it, into buf (*ld: its row length);
 * the bytes from other nodes added to *bytes. */
static rmc_status_t op_panel(const operand_t *o, int64_t r, int64_t nr, int64_t q, int64_t nq,
                             char *buf, int64_t *ld, double *bytes, const char *fn)
{
    int64_t lo[2], hi[2];
    if (!o->trans) {
        lo[0] = o->r0 + r, lo[1] = o->c0 + q, hi[0] = lo[0] + nr, hi[1] = lo[1] + nq, *ld = nq;
    } else {
        lo[0] = o->c0 + q, lo[1] = o->r0 + r, hi[0] = lo[0] + nq, hi[1] = lo[1] + nr, *ld = nr;
    }
    *bytes += box_remote_bytes(o, lo, hi);
    return rmcc_matrix_patch(o->m, 0, lo, hi, buf, ld, NULL, NULL, fn);
}

/* A run of C's rows (or columns) that this rank's tiles cover, and where its panel lies. */
typedef struct sub_run {
    int64_t lo, len; /* in C's patch coordinates */
    size_t at;       /* byte offset of its panel in the panel buffer */
    int64_t ld;      /* the panel's leading dimension (op_panel's) */
} sub_run_t;

/* One of this rank's tiles of C, clipped to the patch. */
typedef struct sub_tile {
    int64_t r, m, q, n; /* its rows (first, count) and columns, in C's patch coordinates */
    char *cp;           /* its element (r, q) here */
    int64_t ldc;        /* the tile's row length */
    int64_t ra, rb;     /* the row run and the column run holding it */
} sub_tile_t;

static int sub_cmp(const void *x, const void *y)
{
    int64_t a = ((const sub_run_t *)x)->lo, b = ((const sub_run_t *)y)->lo;
    return (a > b) - (a < b);
}

/* The runs (disjoint, sorted, adjacent ones merged) covering the tiles' rows (cols == 0) or
 * columns, into runs (nt entries at most); returns their number. */
static int64_t sub_runs(const sub_tile_t *t, int64_t nt, int cols, sub_run_t *runs)
{
    for (int64_t i = 0; i < nt; i++)
        runs[i] = (sub_run_t){cols ? t[i].q : t[i].r, cols ? t[i].n : t[i].m, 0, 0};
    qsort(runs, (size_t)nt, sizeof(*runs), sub_cmp);
    int64_t m = 0;
    for (int64_t i = 0; i < nt; i++) {
        if (m && runs[i].lo <= runs[m - 1].lo + runs[m - 1].len) {
            int64_t e = runs[i].lo + runs[i].len, pe = runs[m - 1].lo + runs[m - 1].len;
            runs[m - 1].len = (e > pe ? e : pe) - runs[m - 1].lo;
        } else
            runs[m++] = runs[i];
    }
    return m;
}

/* The index of the run holding x (runs sorted, one of them holds it). */
static int64_t sub_find(const sub_run_t *runs, int64_t n, int64_t x)
{
    int64_t a = 0, b = n;
    while (b - a > 1) {
        int64_t mid = (a + b) / 2;
        if (runs[mid].lo <= x)
            a = mid;
        else
            b = mid;
    }
    return a;
}

/* Matrices of a subset of the ranks (rmc_matrix_create_comm: GA's process groups). The engine's
 * rounds and work grid are the whole job's; here each member computes the part of C's patch it
 * owns (owner computes: stationary C), SUB_KB columns of the inner dimension at a time: for each
 * such chunk it fetches one-sidedly the panels of op(A) for the rows and of op(B) for the columns
 * its tiles cover, each run of adjacent rows (columns) as one patch transfer, then multiplies tile
 * by tile out of them. (Fetched per tile, a grid of small tiles (GA's block-cyclic arrays) read
 * each panel once for every tile of its row or column.) Collective over the matrices' communicator
 * `comm`; C is complete on every member at the end. */
#define SUB_KB    512
#define SUB_PANEL ((size_t)64 << 20) /* panel bytes per chunk above which chunks get thinner */
static rmc_status_t gemm_subset(gemm_t *g, MPI_Comm comm)
{
    rmcc_blas_threads();
    g->st.algo = RMC_GEMM_STATIONARY_C;
    struct rmc_matrix *c = g->c;
    struct rmc_dist *d = c->d;
    size_t es = g->es;
    int ta = g->a.trans ? 1 + g->a.conj : 0, tb = g->b.trans ? 1 + g->b.conj : 0;
    rmc_status_t st = RMC_OK;
    int64_t nt = 0;
    sub_tile_t *tl = malloc(sizeof(sub_tile_t) * (size_t)(d->ntiles + 1));
    sub_run_t *rr = malloc(sizeof(sub_run_t) * (size_t)(2 * d->ntiles + 2)), *cr = NULL;
    char *pa = NULL, *pb = NULL;
    if (!tl || !rr) {
        st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "%lld tiles' lists", (long long)d->ntiles);
        goto out;
    }
    for (int64_t t = 0; t < d->ntiles; t++) { /* this rank's tiles, clipped to the patch */
        if (c->towner[t] != rmcc.rank)
            continue;
        int64_t lo[2], hi[2];
        rmc_dist_tile(d, t, lo, hi, NULL);
        int64_t r0 = lo[0] > g->c0[0] ? lo[0] : g->c0[0];
        int64_t r1 = hi[0] < g->c0[0] + g->m ? hi[0] : g->c0[0] + g->m;
        int64_t q0 = lo[1] > g->c0[1] ? lo[1] : g->c0[1];
        int64_t q1 = hi[1] < g->c0[1] + g->n ? hi[1] : g->c0[1] + g->n;
        if (r0 >= r1 || q0 >= q1)
            continue;
        sub_tile_t *x = &tl[nt++];
        x->r = r0 - g->c0[0], x->m = r1 - r0, x->q = q0 - g->c0[1], x->n = q1 - q0;
        x->ldc = hi[1] - lo[1];
        x->cp = rmcc_tile_laddr(c, t) + (size_t)((r0 - lo[0]) * x->ldc + (q0 - lo[1])) * es;
    }
    if (nt == 0)
        goto out;
    cr = rr + nt + 1;
    int64_t nrr = sub_runs(tl, nt, 0, rr), ncr = sub_runs(tl, nt, 1, cr), rows = 0, cols = 0;
    for (int64_t i = 0; i < nrr; i++)
        rows += rr[i].len;
    for (int64_t i = 0; i < ncr; i++)
        cols += cr[i].len;
    for (int64_t i = 0; i < nt; i++)
        tl[i].ra = sub_find(rr, nrr, tl[i].r), tl[i].rb = sub_find(cr, ncr, tl[i].q);
    int64_t kb = g->k < SUB_KB ? g->k : SUB_KB;
    while (kb > 16 && (size_t)((rows + cols) * kb) * es > SUB_PANEL)
        kb /= 2;
    if (g->k && (!(pa = malloc((size_t)(rows * kb) * es)) ||
                 !(pb = malloc((size_t)(cols * kb) * es)))) {
        st = rmcc_fail(RMC_ERR_NOMEM, g->fn, "%zu bytes of panels",
                       (size_t)((rows + cols) * kb) * es);
        goto out;
    }
    for (int64_t k0 = 0; st == RMC_OK && k0 < g->k; k0 += kb) {
        int64_t kk = g->k - k0 < kb ? g->k - k0 : kb;
        double t0 = now();
        size_t at = 0;
        for (int64_t i = 0; st == RMC_OK && i < nrr; at += (size_t)(rr[i].len * kk) * es, i++) {
            rr[i].at = at;
            st = op_panel(&g->a, rr[i].lo, rr[i].len, k0, kk, pa + at, &rr[i].ld, &g->st.bytes,
                          g->fn);
        }
        at = 0;
        for (int64_t i = 0; st == RMC_OK && i < ncr; at += (size_t)(cr[i].len * kk) * es, i++) {
            cr[i].at = at;
            st = op_panel(&g->b, k0, kk, cr[i].lo, cr[i].len, pb + at, &cr[i].ld, &g->st.bytes,
                          g->fn);
        }
        g->st.comm_wait += now() - t0;
        t0 = now();
        for (int64_t i = 0; st == RMC_OK && i < nt; i++) {
            const sub_tile_t *x = &tl[i];
            const sub_run_t *ra = &rr[x->ra], *rb = &cr[x->rb];
            int64_t da = x->r - ra->lo, db = x->q - rb->lo; /* the tile's place in its runs */
            /* op(A)'s rows: panel rows (ld kk), or columns of the transposed panel (ld len) */
            const char *ap = pa + ra->at + (size_t)(ta ? da : da * ra->ld) * es;
            const char *bp = pb + rb->at + (size_t)(tb ? db * rb->ld : db) * es;
            blas(g->e, ta, tb, x->m, x->n, kk, g->alpha, ap, ra->ld, bp, rb->ld,
                 k0 ? g->one : g->beta, x->cp, x->ldc);
            g->st.flops += (g->e >= RMC_ELEM_C32 ? 8.0 : 2.0) * (double)(x->m * x->n) * (double)kk;
        }
        g->st.compute += now() - t0;
    }
    for (int64_t i = 0; g->k == 0 && i < nt; i++) /* C = beta C */
        scale_block(g->e, tl[i].cp, tl[i].m, tl[i].n, tl[i].ldc, g->beta);
out:
    free(pa);
    free(pb);
    free(tl);
    free(rr);
    double t0 = now();
    rmc_status_t bar = rmcc_barrier_on(comm); /* every member's part of C is complete */
    st = rmcc_agree_on(comm, st != RMC_OK ? st : bar);
    g->st.imbalance += now() - t0;
    return st;
}

/* Are m's tiles small (fewer than SMALL_TILE rows or columns on average, and more tiles than
 * ranks)? The same answer on every rank (the distribution is). On such grids (GA's block-cyclic
 * arrays with small blocks) the engine's algorithms below, which move and multiply tile by tile,
 * lose to gemm_subset's panels shared by every tile of a row or column (1024², 2 ranks, blocks of
 * 32: 70 against 44 ms real, 119 against 40 ms with RMC_NODE_SIZE=1; blocks of 64 and 128: a tie),
 * so RMC_GEMM_AUTO takes that path there. */
#define SMALL_TILE 48
static int small_tiles(const struct rmc_matrix *m)
{
    int64_t nt[2], dims[2];
    if (rmc_dist_tile_grid(m->d, nt) != RMC_OK || rmc_dist_dims(m->d, dims) != RMC_OK)
        return 0;
    return nt[0] * nt[1] > rmcc.nranks &&
           (dims[0] < SMALL_TILE * nt[0] || dims[1] < SMALL_TILE * nt[1]);
}

/* 1 of the type in g->one, 0 in g->zero. */
static void set_one(gemm_t *g)
{
    memset(g->one, 0, sizeof(g->one));
    memset(g->zero, 0, sizeof(g->zero));
    if (g->e == RMC_ELEM_F32 || g->e == RMC_ELEM_C32)
        *(float *)(void *)g->one = 1;
    else
        *(double *)(void *)g->one = 1;
}

rmc_status_t rmc_matrix_gemm_patch(char transa, char transb, const void *alpha, rmc_matrix_h a,
                                   const int64_t alo[2], const int64_t ahi[2], rmc_matrix_h b,
                                   const int64_t blo[2], const int64_t bhi[2], const void *beta,
                                   rmc_matrix_h c, const int64_t clo[2], const int64_t chi[2],
                                   rmc_gemm_algo_t algo, rmc_gemm_stats_t *stats)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    double t_start = now();
    RMCC_CHECK_UP(fn);
    gemm_t g;
    memset(&g, 0, sizeof(g));
    g.fn = fn;
    rmc_status_t st = RMC_OK;
    int64_t ar = 0, ac = 0, br = 0, bc = 0, cr = 0, cc = 0;
    if (!alpha || !beta || !alo || !ahi || !blo || !bhi || !clo || !chi)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL %s",
                       !alpha  ? "alpha"
                       : !beta ? "beta"
                       : !alo  ? "alo"
                       : !ahi  ? "ahi"
                       : !blo  ? "blo"
                       : !bhi  ? "bhi"
                       : !clo  ? "clo"
                               : "chi");
    else if ((st = operand(&g.a, a, transa, alo, ahi, &ar, &ac, "A", fn)) != RMC_OK ||
             (st = operand(&g.b, b, transb, blo, bhi, &br, &bc, "B", fn)) != RMC_OK)
        ;
    else
        st = operand(&g.co, c, 'N', clo, chi, &cr, &cc, "C", fn);
    if (st == RMC_OK) {
        if (a->elem != c->elem || b->elem != c->elem)
            st = rmcc_fail(RMC_ERR_TYPE, fn, "A, B and C of different element types (%d, %d, %d)",
                           (int)a->elem, (int)b->elem, (int)c->elem);
        else if (c->elem != RMC_ELEM_F32 && c->elem != RMC_ELEM_F64 && c->elem != RMC_ELEM_C32 &&
                 c->elem != RMC_ELEM_C64)
            st = rmcc_fail(RMC_ERR_TYPE, fn,
                           "element type %d: multiplication needs F32, F64, C32 "
                           "or C64",
                           (int)c->elem);
        else if (ar != cr || bc != cc || ac != br)
            st = rmcc_fail(RMC_ERR_ARG, fn,
                           "dimensions: op(A) is %lld x %lld, op(B) %lld x %lld, C %lld x %lld",
                           (long long)ar, (long long)ac, (long long)br, (long long)bc,
                           (long long)cr, (long long)cc);
        else if ((unsigned)algo > RMC_GEMM_SUMMA)
            st = rmcc_fail(RMC_ERR_ARG, fn, "algorithm %d", (int)algo);
        else if (a == c || b == c)
            st = rmcc_fail(RMC_ERR_ARG, fn, "C is also %s (it would change while it is read)",
                           a == c ? "A" : "B");
        else if (rmcc_matrix_shares_memory(a, c) || rmcc_matrix_shares_memory(b, c))
            st = rmcc_fail(RMC_ERR_ARG, fn,
                           "C shares this rank's memory with %s (an overlay: it would change "
                           "while it is read)",
                           rmcc_matrix_shares_memory(a, c) ? "A" : "B");
        else if (!same_ranks(a, c) || !same_ranks(b, c))
            st = rmcc_fail(RMC_ERR_ARG, fn,
                           "%s and C live on different ranks (each of all ranks, or created on "
                           "congruent communicators)",
                           same_ranks(a, c) ? "B" : "A");
    }
    /* matrices of a subset of the ranks: a collective of their communicator */
    MPI_Comm comm;
    rmc_status_t alone = rmcc_matrix_comm(c, fn, &comm);
    if (alone != RMC_OK)
        return alone;
    /* every argument agreed: the 12 patch bounds and the scalars' bytes through two hashes (ranks
     * with different patches would wait for tiles the others never send) */
    uint64_t hb = 0, hs = 0;
    if (st == RMC_OK) {
        int64_t bounds[12] = {alo[0], alo[1], ahi[0], ahi[1], blo[0], blo[1],
                              bhi[0], bhi[1], clo[0], clo[1], chi[0], chi[1]};
        hb = rmcc_hash_bytes(bounds, sizeof bounds, 0x6a09e667u);
        hs = rmcc_hash_bytes(alpha, c->esz, rmcc_hash_bytes(beta, c->esz, 0xbb67ae85u));
    }
    uint64_t args[8] = {st == RMC_OK ? a->id : ~0ull,
                        st == RMC_OK ? b->id : 0,
                        st == RMC_OK ? c->id : 0,
                        (uint64_t)(unsigned char)transa,
                        (uint64_t)(unsigned char)transb,
                        (uint64_t)algo,
                        hb,
                        hs};
    double tc = now(); /* (collective: waiting for the others) */
    if ((st = rmcc_coll_begin_on(comm, fn, args, 8, st)) != RMC_OK)
        return st;
    g.st.imbalance = now() - tc;
    g.e = c->elem;
    g.es = c->esz;
    g.alpha = alpha;
    g.beta = beta;
    set_one(&g);
    g.c = c;
    g.c0[0] = clo[0];
    g.c0[1] = clo[1];
    g.m = cr;
    g.n = cc;
    g.k = ac;
    if (comm != MPI_COMM_NULL) {
        st = gemm_subset(&g, comm);
        g.st.total = now() - t_start;
        if (stats)
            *stats = g.st;
        return st;
    }
    if (algo == RMC_GEMM_AUTO && small_tiles(a) + small_tiles(b) + small_tiles(c)) {
        st = gemm_subset(&g, MPI_COMM_NULL); /* the panel path: see small_tiles */
        g.st.total = now() - t_start;
        if (stats)
            *stats = g.st;
        return st;
    }
    st = rmcc_gemm_run(&g, algo); /* (AUTO: the variant moving the least data, chosen there) */
    g.st.total = now() - t_start;
    if (stats)
        *stats = g.st;
    return st;
}

rmc_status_t rmc_matrix_gemm(char transa, char transb, const void *alpha, rmc_matrix_h a,
                             rmc_matrix_h b, const void *beta, rmc_matrix_h c, rmc_gemm_algo_t algo,
                             rmc_gemm_stats_t *stats)
{
    const char *fn = __func__;
    rmc_status_t st = RMC_OK;
    RMCC_CHECK_UP(fn);
    if ((st = rmcc_matrix_check_arg(a, "A", fn)) != RMC_OK ||
        (st = rmcc_matrix_check_arg(b, "B", fn)) != RMC_OK ||
        (st = rmcc_matrix_check_arg(c, "C", fn)) != RMC_OK)
        ;
    else if (a->d->ndim != 2 || b->d->ndim != 2 || c->d->ndim != 2)
        st = rmcc_fail(RMC_ERR_ARG, fn, "A, B and C must have 2 dimensions");
    int64_t z[2] = {0, 0};
    if (st != RMC_OK) { /* agreed with the others, which may be in the patch form's collective:
                         * C's communicator, as there */
        uint64_t args[8] = {~0ull};
        MPI_Comm comm;
        rmc_status_t alone = rmcc_matrix_comm(c, fn, &comm);
        return alone != RMC_OK ? alone
                               : rmcc_coll_begin_on(comm, "rmc_matrix_gemm_patch", args, 8, st);
    }
    return rmc_error_in(rmc_matrix_gemm_patch(transa, transb, alpha, a, z, a->d->dims, b, z,
                                              b->d->dims, beta, c, z, c->d->dims, algo, stats),
                        fn);
}
