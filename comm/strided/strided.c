/* Strided put/get/accumulate (ARMCI-style descriptors), 2-D and contiguous accumulate.
 *
 * Node-local targets: direct strided copies (accumulate: under the target's lock word when the
 * whole job is one node, see rmci_acc_use_mpi). Other targets: one of three protocols on the
 * region's RMA window (seed 004 section III.C.2, equation 9: a list of zero-copy chunk transfers
 * costs o per chunk, so small chunks favour one typed transfer):
 *   datatype  one MPI op with derived datatypes (nested hvectors) on both sides;
 *   list      one contiguous MPI op per chunk, zero-copy, completed by one flush;
 *   pack      local pack into a contiguous buffer, one MPI op with a datatype on the target side
 *             only (get: into a contiguous buffer, then local unpack).
 * Accumulates with a scale != 1 through MPI first scale into a contiguous temporary (MPI has no
 * scaled accumulate), which then travels as with "pack" (or as a list of chunks). */
#include "config.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "strided_rt.h"

rmci_strided_state_t rmci_strided;

/* ------------------------------------------------------------------ method / knob --- */

static const char *const method_names[] = {"auto", "datatype", "list", "pack"};

const char *rmc_strided_method_name(rmc_strided_method_t m)
{
    return (unsigned)m < 4 ? method_names[m] : "?";
}

static void tc_clear(void);
static void stage_release(void);
static void stage_forget(struct rmc_region *r);

static void strided_finalize(void)
{
    stage_release(); /* windows are still alive: the finalize hooks run before regions are freed */
    memset(&rmci_strided, 0, sizeof(rmci_strided));
    tc_clear();
    if (rmci_region_free_hook == stage_forget)
        rmci_region_free_hook = NULL;
}

rmc_strided_method_t rmci_strided_method(void)
{
    if (RMCI_UNLIKELY(!rmci_strided.loaded || !rmci_strided.hooked)) {
        if (!rmci_strided.loaded) {
            const char *v = rmc_knob_value("RMC_STRIDED_METHOD");
            rmc_strided_method_t m = RMC_STRIDED_AUTO;
            int ok = 0;
            for (int i = 0; v && i < 4; i++)
                if (strcasecmp(v, method_names[i]) == 0) {
                    m = (rmc_strided_method_t)i;
                    ok = 1;
                }
            if (!ok && v && rmci.rank == 0)
                fprintf(
                    stderr,
                    "rmc: RMC_STRIDED_METHOD=%s unknown (auto|datatype|list|pack); using auto\n",
                    v);
            rmci_strided.method = m;
            rmci_strided.loaded = 1;
        }
        if (rmci.initialized) {
            /* state (method, counters, datatype cache) lives until rmc_finalize */
            rmci_at_finalize(strided_finalize);
            rmci_region_free_hook = stage_forget;
            rmci_strided.hooked = 1;
        }
    }
    return rmci_strided.method;
}

rmc_status_t rmc_strided_set_method(rmc_strided_method_t m)
{
    if ((unsigned)m > RMC_STRIDED_PACK)
        return RMC_ERR_ARG;
    rmci_strided_method(); /* load (and register the reset hook) first */
    rmci_strided.method = m;
    return RMC_OK;
}

rmc_strided_method_t rmc_strided_get_method(void)
{
    return rmci_strided_method();
}

rmc_status_t rmc_strided_stats(rmc_strided_stats_t *s)
{
    RMCI_CHECK_INIT();
    if (!s)
        return RMC_ERR_ARG;
    rmci_strided_method();
    *s = rmci_strided.stats;
    return RMC_OK;
}

MPI_Datatype rmci_acc_mpi_type(rmc_acc_type_t t)
{
    switch (t) {
    case RMC_ACC_INT32:
        return MPI_INT32_T;
    case RMC_ACC_INT64:
        return MPI_INT64_T;
    case RMC_ACC_FLOAT:
        return MPI_FLOAT;
    case RMC_ACC_DOUBLE:
        return MPI_DOUBLE;
    case RMC_ACC_COMPLEX_FLOAT:
        return MPI_C_FLOAT_COMPLEX;
    case RMC_ACC_COMPLEX_DOUBLE:
        return MPI_C_DOUBLE_COMPLEX;
    }
    return MPI_DATATYPE_NULL;
}

/* Automatic protocol choice for a remote patch of nchunks (>= 2) chunks of l0 bytes whose local
 * side is dense (one contiguous block) or not. Measured on this machine with RMC_NODE_SIZE=1
 * (bench/bench_strided protocol sweep; MPICH 4.0.2 ch4:ucx, same-host UCX transports):
 *  - list: each chunk is one RDMA-style op of cost o (seed 004 eq. 9, T = o.m/l0 + m.G); it reaches
 *    5-9 GB/s for chunks of 4 KiB and more, but only ~0.02-0.5 GB/s for chunks below 256 B;
 *  - datatype / pack (8- or 4-byte element types, 16 KiB pieces): active-message transfers at
 *    4-5 GB/s (get/put) and 1-4.5 GB/s (accumulate, rising with l0), nearly independent of l0;
 *  - with a dense local side "datatype" is "pack" without the copy; with a scattered local side
 *    packing locally beats MPI's origin datatype by up to 1.5x for chunks up to 256 B.
 * So: get/put use the list from 4 KiB chunks (at 4 KiB list and typed are within 5%, list
 * ahead on a quiet machine) and for at most 4 chunks; accumulates from 4 KiB chunks when there are
 * at most 256; everything else is typed. */
static rmc_strided_method_t auto_method(int kind, size_t l0, size_t nchunks, int ldense)
{
    if (kind != SK_ACC) {
        if (nchunks <= 4 || l0 >= 4096)
            return RMC_STRIDED_LIST;
    } else if (l0 >= 4096 && nchunks <= 256) {
        return RMC_STRIDED_LIST;
    }
    return ldense ? RMC_STRIDED_DATATYPE : RMC_STRIDED_PACK;
}

static rmc_strided_method_t choose(int kind, size_t l0, size_t nchunks, int ldense)
{
    rmc_strided_method_t m = rmci_strided_method();
    return m != RMC_STRIDED_AUTO ? m : auto_method(kind, l0, nchunks, ldense);
}

/* ------------------------------------------------------------------- nb helpers --- */

rmci_nbctx_t *rmci_nbctx_new(size_t data)
{
    rmci_nbctx_t *c = malloc(RMCI_NBCTX_DATA + data);
    if (c)
        memset(c, 0, sizeof(*c));
    return c;
}

rmc_status_t rmci_nb_flush_local(struct rmc_request *q)
{
    rmci_nbctx_t *c = q->cb_buf;
    RMCI_MPI(MPI_Win_flush_local(c->rank, c->win));
    return RMC_OK;
}

rmc_status_t rmci_nb_unpack(struct rmc_request *q)
{
    rmci_nbctx_t *c = q->cb_buf;
    RMCI_MPI(MPI_Win_flush_local(c->rank, c->win));
    if (c->unpack == 1) {
        rmci_sunpack(c->dst, rmci_nbctx_data(c), &c->d);
    } else if (c->unpack == 2) {
        const char *p = rmci_nbctx_data(c);
        for (size_t i = 0; i < c->nsegs; i++) {
            memcpy(c->segs[i], p, c->seglen[i]);
            p += c->seglen[i];
        }
    }
    return RMC_OK;
}

rmc_status_t rmci_strided_complete(int kind, int mode, struct rmc_region *r, int rank,
                                   int local_target)
{
    /* An MPI accumulate to a node-local target is completed at once: the node-local get/put paths
     * of the comm core do not consult the conflict status. */
    if (kind == SK_PUT && mode == SM_BLOCK) {
        rmci.stats.flushes++;
        RMCI_MPI(MPI_Win_flush(rmci_mrank(r, rank), r->win));
        r->cs[rank] &= (uint8_t)~RMCI_CS_PENDING;
        return RMC_OK;
    }
    if (kind == SK_ACC && local_target) {
        rmci.stats.flushes++;
        RMCI_MPI(MPI_Win_flush(rmci_mrank(r, rank), r->win));
        r->cs[rank] &= (uint8_t)~RMCI_CS_PENDING;
        return RMC_OK;
    }
    if (mode == SM_BLOCK) {
        RMCI_MPI(MPI_Win_flush_local(rmci_mrank(r, rank), r->win));
        if (kind == SK_ACC)
            rmci_mark(r, rank, RMCI_CS_ACC);
        return RMC_OK;
    }
    rmci_mark(r, rank, (unsigned)kind);
    return RMC_OK;
}

/* ------------------------------------------------------------------ MPI helpers --- */

/* Nested hvectors over `nbase` elements of `base` per chunk, strides `str`. */
static int make_type(const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base, int nbase,
                     MPI_Datatype *out)
{
    MPI_Datatype prev, t;
    int rc = MPI_Type_contiguous(nbase, base, &prev);
    for (int k = 1; rc == MPI_SUCCESS && k <= d->levels; k++) {
        rc = MPI_Type_create_hvector((int)d->cnt[k], 1, (MPI_Aint)str[k - 1], prev, &t);
        MPI_Type_free(&prev);
        prev = t;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&prev);
    if (rc == MPI_SUCCESS)
        *out = prev;
    return rc;
}

/* Cache of committed strided datatypes (creating and committing nested hvectors costs several
 * microseconds, as much as moving a small patch). Keyed by base type, chunk elements, counts and
 * strides; least recently used entry evicted. A type freed while an operation still uses it stays
 * valid for that operation (MPI_Type_free semantics). */
#define TC_SIZE 32
typedef struct tc_ent {
    MPI_Datatype type; /* MPI_DATATYPE_NULL: empty */
    MPI_Datatype base;
    int nbase, levels;
    size_t cnt[RMCI_SL_MAX + 1];
    size_t str[RMCI_SL_MAX];
    unsigned long long used;
} tc_ent_t;
static tc_ent_t tcache[TC_SIZE];
static unsigned long long tc_clock;
static int tc_ready;

static void tc_clear(void)
{
    for (int i = 0; i < TC_SIZE; i++)
        if (tc_ready && tcache[i].type != MPI_DATATYPE_NULL)
            MPI_Type_free(&tcache[i].type);
    for (int i = 0; i < TC_SIZE; i++)
        tcache[i].type = MPI_DATATYPE_NULL;
    tc_ready = 1;
    tc_clock = 0;
}

static int cached_type(const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base, int nbase,
                       MPI_Datatype *out)
{
    if (!tc_ready)
        tc_clear();
    int victim = 0;
    for (int i = 0; i < TC_SIZE; i++) {
        tc_ent_t *e = &tcache[i];
        if (e->type == MPI_DATATYPE_NULL) {
            victim = i;
            continue;
        }
        if (e->used < tcache[victim].used && tcache[victim].type != MPI_DATATYPE_NULL)
            victim = i;
        if (e->levels != d->levels || e->nbase != nbase || e->base != base)
            continue;
        int k = 1;
        while (k <= d->levels && e->cnt[k] == d->cnt[k] && e->str[k - 1] == str[k - 1])
            k++;
        if (k > d->levels) {
            e->used = ++tc_clock;
            *out = e->type;
            return MPI_SUCCESS;
        }
    }
    MPI_Datatype t;
    int rc = make_type(d, str, base, nbase, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    tc_ent_t *e = &tcache[victim];
    if (e->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&e->type);
    e->type = t;
    e->base = base;
    e->nbase = nbase;
    e->levels = d->levels;
    for (int k = 1; k <= d->levels; k++) {
        e->cnt[k] = d->cnt[k];
        e->str[k - 1] = str[k - 1];
    }
    e->used = ++tc_clock;
    *out = t;
    return MPI_SUCCESS;
}

/* 1 when strides `str` are the packed (dense) layout of d: that side is one contiguous block. */
static int side_dense(const rmci_sdesc_t *d, const size_t *str)
{
    size_t s = d->l0;
    for (int k = 1; k <= d->levels; k++) {
        if (str[k - 1] != s)
            return 0;
        s *= d->cnt[k];
    }
    return 1;
}

/* One piece: local side at loff (contiguous when `packed`, else shaped by lstr), remote side at
 * disp (shaped by rstr), with the shape of `p`. */
static int issue_piece(int kind, const rmci_sdesc_t *p, const size_t *lstr, const size_t *rstr,
                       char *local, int packed, MPI_Datatype base, size_t es, int proc,
                       MPI_Aint disp, MPI_Win win)
{
    int nbase = (int)(p->l0 / es), ntot = (int)(p->bytes / es);
    if (p->levels == 0)
        return rmci_issue1(kind, local, nbase, base, proc, disp, nbase, base, win, NULL);
    MPI_Datatype tt, ot;
    int rc = cached_type(p, rstr, base, nbase, &tt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (packed || side_dense(p, lstr))
        return rmci_issue1(kind, local, ntot, base, proc, disp, 1, tt, win, NULL);
    rc = cached_type(p, lstr, base, nbase, &ot);
    if (rc != MPI_SUCCESS)
        return rc;
    return rmci_issue1(kind, local, 1, ot, proc, disp, 1, tt, win, NULL);
}

/* Datatype / pack protocols: the target side is a (cached) nested hvector; the origin side is the
 * packed buffer (packed = 1), the user's buffer as one block when it is dense, or a cached
 * datatype. Split along the levels into pieces of at most RMCI_DT_PIECE bytes. */
static int issue_typed(int kind, const rmci_sdesc_t *d, const size_t *lstr, const size_t *rstr,
                       char *local, int packed, MPI_Datatype base, size_t es, int proc,
                       MPI_Aint disp, MPI_Win win)
{
    /* k: highest level whose whole blocks fit in a piece (blk bytes each) */
    int k = 0;
    size_t blk = d->l0;
    while (k < d->levels && blk * d->cnt[k + 1] <= RMCI_DT_PIECE)
        blk *= d->cnt[++k];
    if (k == d->levels)
        return issue_piece(kind, d, lstr, rstr, local, packed, base, es, proc, disp, win);
    /* pieces: g level-k blocks along level k+1 (the last group of a row may be shorter) */
    size_t c1 = d->cnt[k + 1];
    size_t g = RMCI_DT_PIECE / blk;
    if (g < 1)
        g = 1;
    rmci_sdesc_t p = *d;
    size_t lk = k < d->levels ? lstr[k] : 0, rk = rstr[k];
    size_t idx[RMCI_SL_MAX + 1] = {0};
    size_t lo = 0, ro = 0, po = 0; /* outer offsets: local, remote, packed */
    int rc = MPI_SUCCESS;
    for (;;) {
        for (size_t j = 0; j < c1 && rc == MPI_SUCCESS; j += g) {
            size_t n = c1 - j < g ? c1 - j : g;
            p.levels = n > 1 ? k + 1 : k;
            p.cnt[k + 1] = n;
            p.nchunks = (blk / d->l0) * n;
            p.bytes = blk * n;
            char *l = packed ? local + po : local + lo + j * lk;
            rc = issue_piece(kind, &p, lstr, rstr, l, packed, base, es, proc,
                             disp + (MPI_Aint)(ro + j * rk), win);
            po += blk * n;
        }
        if (rc != MPI_SUCCESS)
            return rc;
        int q = k + 2;
        for (; q <= d->levels; q++) {
            if (++idx[q] < d->cnt[q]) {
                lo += lstr[q - 1];
                ro += rstr[q - 1];
                break;
            }
            lo -= lstr[q - 1] * (d->cnt[q] - 1);
            ro -= rstr[q - 1] * (d->cnt[q] - 1);
            idx[q] = 0;
        }
        if (q > d->levels)
            return MPI_SUCCESS;
    }
}

/* OR of all strides (for alignment tests). */
static uintptr_t stride_bits(const rmci_sdesc_t *d)
{
    uintptr_t b = 0;
    for (int k = 0; k < d->levels; k++)
        b |= d->ss[k] | d->ds[k];
    return b;
}

/* ------------------------------------------------------------ staged accumulates --- */

/* A blocking accumulate only owes its caller a reusable source buffer (completion at the target
 * comes with a fence or a conflicting operation, as for every accumulate). Small remote ones are
 * therefore copied (scaled) into a staging area and the MPI_Accumulate is issued from there: the
 * call returns without waiting for MPI's local completion, which on MPICH 4.0.2 (ch4:ucx) costs a
 * round trip to the target (~0.9 us). The pair is marked as having an accumulate outstanding, so
 * the conflict rules order later operations exactly as for a non-blocking accumulate; accumulates
 * commute with each other, so a stream of them needs no ordering at all.
 * The area is recycled (stage_drain: MPI_Win_flush_local of every (window, target) used since the
 * last drain) when it is full, after RMCI_STAGE_OPS operations or when RMCI_STAGE_PAIRS distinct
 * pairs were used; a region that is freed is first dropped from the pairs (MPI_Win_unlock_all of
 * its window completes its operations), and rmc_finalize drains. Main thread only, as all of
 * comm/strided. */
#define RMCI_STAGE_MAX   (16u << 10)  /* largest staged accumulate, bytes */
#define RMCI_STAGE_BYTES (256u << 10) /* staging area */
#define RMCI_STAGE_OPS   256          /* operations between two drains */
#define RMCI_STAGE_PAIRS 16           /* distinct (region, target) pairs between two drains */

static struct {
    char *mem;
    size_t used;
    int nops, npairs;
    struct {
        struct rmc_region *r;
        int rank;
    } pair[RMCI_STAGE_PAIRS];
} stage;

/* Completes (locally) everything issued from the area and empties it. MPI errors are not
 * reported: the same pairs are flushed by the next fence, which reports them. */
static void stage_drain(void)
{
    for (int i = 0; i < stage.npairs; i++)
        MPI_Win_flush_local(rmci_mrank(stage.pair[i].r, stage.pair[i].rank), stage.pair[i].r->win);
    if (stage.nops)
        rmci_strided.stats.stage_drains++;
    stage.used = 0;
    stage.nops = 0;
    stage.npairs = 0;
}

static void stage_release(void)
{
    stage_drain();
    free(stage.mem);
    stage.mem = NULL;
}

static void stage_forget(struct rmc_region *r)
{
    int o = 0;
    for (int i = 0; i < stage.npairs; i++)
        if (stage.pair[i].r != r)
            stage.pair[o++] = stage.pair[i];
    stage.npairs = o;
}

/* Room for `bytes` (16-byte aligned) to be sent to (r, rank), draining first when needed; NULL
 * when the area cannot be allocated (the caller takes the unstaged path). */
static char *stage_alloc(struct rmc_region *r, int rank, size_t bytes)
{
    if (RMCI_UNLIKELY(!stage.mem)) {
        stage.mem = malloc(RMCI_STAGE_BYTES);
        if (!stage.mem)
            return NULL;
    }
    size_t need = (bytes + 15) & ~(size_t)15;
    int known = 0;
    for (int i = stage.npairs - 1; i >= 0 && !known; i--)
        known = stage.pair[i].r == r && stage.pair[i].rank == rank;
    if (stage.used + need > RMCI_STAGE_BYTES || stage.nops >= RMCI_STAGE_OPS ||
        (!known && stage.npairs == RMCI_STAGE_PAIRS)) {
        stage_drain();
        known = 0;
    }
    if (!known) {
        stage.pair[stage.npairs].r = r;
        stage.pair[stage.npairs].rank = rank;
        stage.npairs++;
    }
    char *p = stage.mem + stage.used;
    stage.used += need;
    stage.nops++;
    return p;
}

/* The staged form of a blocking contiguous accumulate to a target that is not node-local (the
 * caller ordered it already). Returns RMCI_STAGE_DECLINED when it cannot stage. */
#define RMCI_STAGE_DECLINED ((rmc_status_t)1)
static rmc_status_t staged_acc(rmc_acc_type_t type, const void *scale, int scaled, const char *src,
                               const rmci_sdesc_t *d, const rmci_target_t *t, int proc,
                               MPI_Datatype base, size_t es)
{
    struct rmc_region *r = t->region;
    char *buf = stage_alloc(r, proc, d->bytes);
    if (!buf)
        return RMCI_STAGE_DECLINED;
    if (scaled)
        rmci_spack_scaled(type, scale, buf, src, d);
    else
        memcpy(buf, src, d->bytes);
    int n = (int)(d->bytes / es);
    RMCI_MPI(MPI_Accumulate(buf, n, base, rmci_mrank(r, proc), t->disp, n, base, MPI_SUM, r->win));
    rmci_mark(r, proc, SK_ACC);
    rmci_strided.stats.contig_ops++;
    rmci_strided.stats.mpi_acc_ops++;
    rmci_strided.stats.staged_acc_ops++;
    return RMC_OK;
}

/* ----------------------------------------------------------------- remote path --- */

static rmc_status_t remote_strided(int kind, rmc_acc_type_t type, const void *scale,
                                   const char *src, char *dst, const rmci_sdesc_t *d,
                                   const rmci_target_t *t, int proc, int mode, rmc_request_h *req)
{
    struct rmc_region *r = t->region;
    MPI_Win win = r->win;
    int mr = rmci_mrank(r, proc);     /* proc's rank in the region's window */
    int local_tgt = t->local != NULL; /* only possible for MPI accumulates */
    const size_t *lstr = kind == SK_GET ? d->ds : d->ss;
    const size_t *rstr = kind == SK_GET ? d->ss : d->ds;
    char *lptr = kind == SK_GET ? dst : (char *)src;
    MPI_Datatype base = MPI_BYTE;
    size_t es = 1;
    if (kind == SK_ACC) {
        base = rmci_acc_mpi_type(type);
        es = rmci_acc_esize(type);
    } else if (d->levels > 0) {
        /* MPI's datatype engine (yaksa) moves 8- or 4-byte elements 2x faster than bytes */
        es = rmci_word_size(d->l0, (uintptr_t)lptr | (uintptr_t)t->disp | stride_bits(d));
        base = rmci_word_type(es);
    }
    int scaled = kind == SK_ACC && !rmci_acc_scale_is_one(type, scale);
    rmc_strided_method_t m = d->levels == 0 ? RMC_STRIDED_AUTO /* contiguous */
                                            : choose(kind, d->l0, d->nchunks, side_dense(d, lstr));
    if (local_tgt && mode != SM_BLOCK)
        mode = SM_BLOCK; /* completed at once anyway (rmci_strided_complete) */

    rmci.stats.remote_ops++;
    rmc_status_t st = rmci_order(r, proc, (unsigned)kind);
    if (st != RMC_OK)
        return st;
    if (kind == SK_ACC && mode == SM_BLOCK && !local_tgt && d->levels == 0 &&
        d->bytes <= RMCI_STAGE_MAX) {
        st = staged_acc(type, scale, scaled, src, d, t, proc, base, es);
        if (st != RMCI_STAGE_DECLINED)
            return st;
    }

    int need_buf = scaled || m == RMC_STRIDED_PACK;
    /* MPICH 4.0.2 (ch4:ucx) completes MPI_Rput/Rget/Raccumulate with a non-contiguous target
     * datatype before the data moved: request-based MPI ops are used for contiguous transfers only;
     * every other request is completed by MPI_Win_flush_local in its on_complete. */
    /* Contiguous accumulates travel as active messages too: pieces pipeline better than one. */
    int acc_pieces = kind == SK_ACC && d->levels == 0 && d->l0 > RMCI_DT_PIECE;
    int need_ctx = need_buf || (mode == SM_REQ && (d->levels > 0 || acc_pieces));
    rmci_nbctx_t *ctx = NULL;
    char *buf = NULL;
    if (need_ctx) {
        ctx = rmci_nbctx_new(need_buf ? d->bytes : 0);
        if (!ctx)
            return RMC_ERR_NOMEM;
        ctx->win = win;
        ctx->rank = mr;
        if (need_buf) {
            buf = rmci_nbctx_data(ctx);
            if (kind == SK_PUT)
                rmci_spack(buf, src, d);
            else if (kind == SK_ACC)
                rmci_spack_scaled(type, scale, buf, src, d);
        }
    }
    struct rmc_request *q = NULL;
    if (mode == SM_REQ) {
        q = rmci_req_alloc();
        if (!q) {
            free(ctx);
            return RMC_ERR_NOMEM;
        }
    }
    MPI_Request *rq = (q && d->levels == 0 && !acc_pieces) ? &q->mpi[0] : NULL;
    int nbase = (int)(d->l0 / es);
    int rc = MPI_SUCCESS;

    if (acc_pieces) {
        rmci_strided.stats.contig_ops++;
        const char *o = buf ? buf : lptr;
        for (size_t off = 0; off < d->l0 && rc == MPI_SUCCESS; off += RMCI_DT_PIECE) {
            int n = (int)((d->l0 - off < RMCI_DT_PIECE ? d->l0 - off : RMCI_DT_PIECE) / es);
            rc = rmci_issue1(kind, o + off, n, base, mr, t->disp + (MPI_Aint)off, n, base, win,
                             NULL);
        }
    } else if (d->levels == 0) {
        rmci_strided.stats.contig_ops++;
        rc = rmci_issue1(kind, buf ? buf : lptr, nbase, base, mr, t->disp, nbase, base, win, rq);
    } else if (m == RMC_STRIDED_LIST) {
        rmci_strided.stats.list_ops++;
        rmci_siter_t it;
        rmci_siter_init(&it);
        for (size_t c = 0; c < d->nchunks && rc == MPI_SUCCESS; c++) {
            size_t lo = kind == SK_GET ? it.dof : it.so;
            size_t ro = kind == SK_GET ? it.so : it.dof;
            const char *o = buf ? buf + c * d->l0 : lptr + lo;
            rc = rmci_issue1(kind, o, nbase, base, mr, t->disp + (MPI_Aint)ro, nbase, base, win,
                             NULL);
            /* bound the operations in flight: beyond ~1000 the transport slows down sharply */
            if (rc == MPI_SUCCESS && (c + 1) % RMCI_LIST_BATCH == 0 && c + 1 < d->nchunks)
                rc = MPI_Win_flush_local(mr, win);
            rmci_siter_next(&it, d);
        }
    } else {
        if (m == RMC_STRIDED_PACK)
            rmci_strided.stats.pack_ops++;
        else
            rmci_strided.stats.datatype_ops++;
        rc = issue_typed(kind, d, lstr, rstr, buf ? buf : lptr, buf != NULL, base, es, mr, t->disp,
                         win);
    }
    if (kind == SK_ACC)
        rmci_strided.stats.mpi_acc_ops++;
    if (rc != MPI_SUCCESS) {
        /* Whatever was issued must not outlive the buffers: complete it, then report. */
        MPI_Win_flush(mr, win);
        if (q) {
            if (rq && *rq != MPI_REQUEST_NULL)
                MPI_Wait(rq, MPI_STATUS_IGNORE);
            rmci_req_release(q);
        }
        free(ctx);
        return RMC_ERR_MPI;
    }

    if (mode == SM_REQ) {
        q->nmpi = rq ? 1 : 0;
        q->cb_buf = ctx;
        if (!rq)
            q->on_complete = rmci_nb_flush_local;
        if (kind == SK_GET && buf) {
            ctx->unpack = 1;
            ctx->d = *d;
            ctx->dst = dst;
            q->on_complete = rmci_nb_unpack;
        }
        rmci_mark(r, proc, (unsigned)kind);
        *req = q;
        return RMC_OK;
    }
    if (mode == SM_IMPLICIT && buf) {
        /* The temporary cannot outlive this call: complete locally now. */
        if (MPI_Win_flush_local(mr, win) != MPI_SUCCESS) {
            free(ctx);
            return RMC_ERR_MPI;
        }
        if (kind == SK_GET) {
            rmci_sunpack(dst, buf, d);
            free(ctx);
            return RMC_OK; /* complete */
        }
        free(ctx);
        rmci_mark(r, proc, (unsigned)kind);
        return RMC_OK;
    }
    st = rmci_strided_complete(kind, mode, r, proc, local_tgt);
    if (st == RMC_OK && kind == SK_GET && buf && mode == SM_BLOCK)
        rmci_sunpack(dst, buf, d);
    free(ctx);
    return st;
}

/* --------------------------------------------------------------------- common --- */

static rmc_status_t run(int kind, rmc_acc_type_t type, const void *scale, const void *src,
                        void *dst, const rmci_sdesc_t *d, int proc, int mode, rmc_request_h *req)
{
    if (kind == SK_ACC) {
        size_t al = rmci_acc_align(type);
        if (((uintptr_t)src % al) || ((uintptr_t)dst % al))
            return RMC_ERR_ALIGN;
    }
    const void *remote = kind == SK_GET ? src : dst;
    size_t ext = kind == SK_GET ? d->sext : d->dext;
    rmci_target_t t;
    rmc_status_t st = rmci_resolve(proc, remote, ext, &t);
    if (st != RMC_OK)
        return st;
    rmci_strided_method();
    struct rmc_region *r = t.region;
    if (kind == SK_ACC) {
        if (!rmci_acc_use_mpi(r, proc)) {
            atomic_uint *l = rmci_acc_lockword(r, proc);
            rmci_acc_lock(l);
            rmci_sacc(type, scale, t.local, src, d);
            rmci_acc_unlock(l);
            rmci.stats.local_ops++;
            rmci_strided.stats.local_ops++;
            rmci_strided.stats.lock_acc_ops++;
            return RMC_OK;
        }
    } else if (t.local) {
        if (kind == SK_PUT)
            rmci_scopy(t.local, d->ds, src, d->ss, d);
        else
            rmci_scopy(dst, d->ds, t.local, d->ss, d);
        rmci.stats.local_ops++;
        rmci_strided.stats.local_ops++;
        return RMC_OK;
    }
    if (d->bytes > (size_t)INT_MAX)
        return RMC_ERR_TOO_BIG; /* MPI counts are int */
    return remote_strided(kind, type, scale, src, dst, d, &t, proc, mode, req);
}

static rmc_status_t front(int kind, rmc_acc_type_t type, const void *scale, const void *src,
                          const int *sstr, void *dst, const int *dstr, const int *count, int levels,
                          int proc, int mode, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT();
    RMCI_POLL();
    RMCI_CHECK_RANK(proc);
    size_t es = 1, al = 1;
    if (kind == SK_ACC) {
        es = rmci_acc_esize(type);
        if (!es)
            return RMC_ERR_TYPE;
        al = rmci_acc_align(type);
    }
    if (!src || !dst)
        return RMC_ERR_ARG;
    rmci_sdesc_t d;
    rmc_status_t st = rmci_sdesc_build(&d, sstr, dstr, count, levels, al, es);
    if (st != RMC_OK)
        return st;
    return run(kind, type, scale, src, dst, &d, proc, mode, req);
}

#define MODE(req) ((req) ? SM_REQ : SM_IMPLICIT)

rmc_status_t rmc_put_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc)
{
    return front(SK_PUT, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_get_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc)
{
    return front(SK_GET, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_acc_strided(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                             const int src_stride_arr[], void *dst_ptr, const int dst_stride_arr[],
                             const int count[], int stride_levels, int proc)
{
    return front(SK_ACC, type, scale, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_put_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    return front(SK_PUT, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, MODE(req), req);
}

rmc_status_t rmc_get_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    return front(SK_GET, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, MODE(req), req);
}

rmc_status_t rmc_acc_strided_nb(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                                const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    return front(SK_ACC, type, scale, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, MODE(req), req);
}

/* ------------------------------------------------------------------------ 2-D --- */

static rmc_status_t front2d(int kind, rmc_acc_type_t type, const void *scale, const void *src,
                            size_t src_ld, void *dst, size_t dst_ld, size_t rows, size_t row_bytes,
                            int proc, int mode, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT();
    if (rows > INT_MAX || row_bytes > INT_MAX ||
        (rows > 1 && (src_ld > INT_MAX || dst_ld > INT_MAX)))
        return RMC_ERR_TOO_BIG;
    int count[2] = {(int)row_bytes, (int)rows};
    int ss[1] = {rows > 1 ? (int)src_ld : 0}, ds[1] = {rows > 1 ? (int)dst_ld : 0};
    return front(kind, type, scale, src, ss, dst, ds, count, 1, proc, mode, req);
}

rmc_status_t rmc_put_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc)
{
    return front2d(SK_PUT, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, SM_BLOCK,
                   NULL);
}

rmc_status_t rmc_get_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc)
{
    return front2d(SK_GET, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, SM_BLOCK,
                   NULL);
}

rmc_status_t rmc_acc_2d(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                        void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc)
{
    return front2d(SK_ACC, type, scale, src, src_ld, dst, dst_ld, rows, row_bytes, proc, SM_BLOCK,
                   NULL);
}

rmc_status_t rmc_put_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req)
{
    return front2d(SK_PUT, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, MODE(req),
                   req);
}

rmc_status_t rmc_get_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req)
{
    return front2d(SK_GET, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, MODE(req),
                   req);
}

rmc_status_t rmc_acc_2d_nb(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                           void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc,
                           rmc_request_h *req)
{
    return front2d(SK_ACC, type, scale, src, src_ld, dst, dst_ld, rows, row_bytes, proc, MODE(req),
                   req);
}

/* ------------------------------------------------------------ contiguous acc --- */

static rmc_status_t acc_contig(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                               size_t bytes, int proc, int mode, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT();
    RMCI_POLL();
    RMCI_CHECK_RANK(proc);
    size_t es = rmci_acc_esize(type);
    if (!es)
        return RMC_ERR_TYPE;
    if (bytes == 0)
        return RMC_OK;
    if (!src || !dst)
        return RMC_ERR_ARG;
    if (bytes % es)
        return RMC_ERR_ALIGN;
    rmci_sdesc_t d;
    memset(&d, 0, sizeof d);
    d.levels = 0;
    d.l0 = d.cnt[0] = d.bytes = d.sext = d.dext = bytes;
    d.nchunks = 1;
    return run(SK_ACC, type, scale, src, dst, &d, proc, mode, req);
}

rmc_status_t rmc_acc(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                     size_t bytes, int proc)
{
    return acc_contig(type, scale, src, dst, bytes, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_acc_nb(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                        size_t bytes, int proc, rmc_request_h *req)
{
    return acc_contig(type, scale, src, dst, bytes, proc, MODE(req), req);
}
