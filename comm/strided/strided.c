/* Strided put/get/accumulate (ARMCI-style descriptors), 2-D and contiguous accumulate.
 *
 * Node-local targets: direct strided copies (accumulate: under the target's lock word when the
 * whole job is one node, see rmci_acc_use_mpi). Other targets: one of three protocols on the
 * region's RMA window (seed 004 section III.C.2, equation 9: a list of zero-copy chunk transfers
 * costs o per chunk, so small chunks favour one typed transfer):
 *   datatype  one MPI op with derived datatypes (nested hvectors) on both sides (typed.c);
 *   list      one contiguous MPI op per chunk, zero-copy, completed by one flush;
 *   pack      local pack into a contiguous buffer, one MPI op with a datatype on the target side
 *             only (get: into a contiguous buffer, then local unpack) (typed.c).
 * Accumulates with a scale != 1 through MPI first scale into a contiguous temporary (MPI has no
 * scaled accumulate), which then travels as with "pack" (or as a list of chunks). Small blocking
 * remote accumulates are staged (stage.c). */
#include "config.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "strided_rt.h"

/* ------------------------------------------------------------------- nb helpers --- */

rmci_nbctx_t *rmci_nbctx_new(size_t data, const rmci_region_t *r, int rank)
{
    rmci_nbctx_t *c = rmci_malloc(RMCI_NBCTX_DATA + data);
    if (c) {
        memset(c, 0, sizeof(*c));
        c->win = r ? rmci_region_win(r) : MPI_WIN_NULL;
        c->rank = r ? rmci_region_mrank(r, rank) : -1;
    }
    return c;
}

/* Local completion of a request's transfer from or into its context's buffer. When it fails the
 * transfer must not outlive that buffer (rmci_req_release frees it): it is completed at the target
 * instead, and if that fails too the buffer is never freed. */
static rmc_status_t nb_local(struct rmc_request *q)
{
    rmci_nbctx_t *c = q->cb_buf;
    int rc = RMCI_MPI_RC(MPI_Win_flush_local, (c->rank, c->win));
    if (rc == MPI_SUCCESS)
        return RMC_OK;
    if (RMCI_MPI_RC(MPI_Win_flush, (c->rank, c->win)) != MPI_SUCCESS)
        q->cb_buf = NULL;
    return rmci_mpi_fail("MPI_Win_flush_local", "the transfer's completion", rc);
}

rmc_status_t rmci_nb_flush_local(struct rmc_request *q)
{
    return nb_local(q);
}

rmc_status_t rmci_nb_unpack(struct rmc_request *q)
{
    rmc_status_t st = nb_local(q);
    if (st != RMC_OK)
        return st;
    rmci_nbctx_t *c = q->cb_buf;
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

rmc_status_t rmci_strided_complete_temp(unsigned ck, rmci_region_t *r, int rank, rmci_range_t range)
{
    int rc = RMCI_MPI_RC(MPI_Win_flush_local, (rmci_region_mrank(r, rank), rmci_region_win(r)));
    if (rc != MPI_SUCCESS)
        return rmci_local_failed(r, rank, ck, range, rc, __func__);
    return ck == SK_GET ? RMC_OK : rmci_mark(r, rank, ck, range);
}

/* The element types' numbers are the conflict tags rmc_amo_add_i32 / _i64 use (rmci.h). */
_Static_assert(RMC_ACC_INT32 == RMCI_ACC_TAG_INT32 && RMC_ACC_INT64 == RMCI_ACC_TAG_INT64,
               "accumulate type numbers");

/* OR of all strides (for alignment tests). */
static uintptr_t stride_bits(const rmci_sdesc_t *d)
{
    uintptr_t b = 0;
    for (int k = 0; k < d->levels; k++)
        b |= d->ss[k] | d->ds[k];
    return b;
}

/* ----------------------------------------------------------------- remote path --- */

/* One remote strided transfer: the call's arguments and what follows from them. */
typedef struct xfer {
    int kind;
    rmc_acc_type_t type;
    unsigned ck; /* the conflict kind (rmci_skind) */
    const void *scale;
    const char *src;
    char *dst;
    const rmci_sdesc_t *d;
    const rmci_target_t *t;
    int proc;
    rmci_mode_t mode;
    rmci_region_t *r;
    MPI_Win win;
    int mr;                    /* proc's rank in the region's window */
    int local_tgt;             /* node-local target (only for MPI accumulates) */
    const size_t *lstr, *rstr; /* strides of the local / remote side */
    char *lptr;                /* local side */
    MPI_Datatype base;         /* element type on the wire */
    size_t es;                 /* its size */
    int scaled;                /* accumulate with a scale != 1 */
    int pieces;                /* contiguous accumulate above `piece` bytes: sent in pieces */
    size_t piece;
    rmc_strided_method_t m; /* protocol (contiguous patches: AUTO) */
    rmci_range_t range;     /* remote bytes touched (extent of the patch) */
} xfer_t;

static void xfer_setup(xfer_t *x)
{
    const rmci_sdesc_t *d = x->d;
    x->r = x->t->region;
    x->win = rmci_region_win(x->r);
    x->mr = rmci_region_mrank(x->r, x->proc);
    x->local_tgt = x->t->local != NULL;
    x->lstr = x->kind == SK_GET ? d->ds : d->ss;
    x->rstr = x->kind == SK_GET ? d->ss : d->ds;
    x->lptr = x->kind == SK_GET ? x->dst : (char *)x->src;
    x->ck = rmci_skind(x->kind, x->type);
    x->base = MPI_BYTE;
    x->es = 1;
    if (x->kind == SK_ACC) {
        x->base = rmci_acc_mpi_type(x->type);
        x->es = rmci_acc_esize(x->type);
    } else if (d->levels > 0) {
        /* MPI's datatype engine (yaksa) moves 8- or 4-byte elements 2x faster than bytes */
        x->es = rmci_word_size(d->l0, (uintptr_t)x->lptr | (uintptr_t)x->t->disp | stride_bits(d));
        x->base = rmci_word_type(x->es);
    }
    x->scaled = x->kind == SK_ACC && !rmci_acc_scale_is_one(x->type, x->scale);
    x->m = d->levels == 0
               ? RMC_STRIDED_AUTO
               : rmci_strided_choose(x->kind, d->l0, d->nchunks, rmci_side_dense(d, x->lstr));
    /* Contiguous accumulates travel as MPI's active messages too. Without RMC_MALLOC_TUNE each
     * large one costs the target fresh pages for its temporary, and 16 KiB pieces pipeline
     * better than one; with it one operation is best up to RMCI_ACC_PIECE_BIG (measured at
     * RMC_NODE_SIZE=1: 1 MiB in 0.2 ms as one, 0.55 ms as 16 KiB pieces; equal up to 256 KiB). */
    x->piece = RMCI.malloc_tuned ? RMCI_ACC_PIECE_BIG : RMCI_DT_PIECE;
    x->pieces = x->kind == SK_ACC && d->levels == 0 && d->l0 > x->piece;
    x->range = rmci_range(x->t->disp, x->kind == SK_GET ? d->sext : d->dext);
    if (x->local_tgt)
        x->mode = RMCI_BLOCKING; /* completed at once anyway (rmci_strided_complete) */
}

/* The list protocol: one contiguous op per chunk. */
static int issue_list(const xfer_t *x, const char *buf)
{
    const rmci_sdesc_t *d = x->d;
    int nbase = (int)(d->l0 / x->es), rc = MPI_SUCCESS;
    rmci_odo_t o; /* a: local offset, b: remote offset */
    rmci_odo_init(&o);
    for (size_t c = 0; c < d->nchunks && rc == MPI_SUCCESS; c++) {
        const char *l = buf ? buf + c * d->l0 : x->lptr + o.a;
        rc = rmci_issue1(x->kind, l, nbase, x->base, x->mr, x->t->disp + (MPI_Aint)o.b, nbase,
                         x->base, x->win, NULL);
        /* bound the operations in flight: beyond ~1000 the transport slows down sharply */
        if (rc == MPI_SUCCESS && (c + 1) % RMCI_LIST_BATCH == 0 && c + 1 < d->nchunks)
            rc = RMCI_MPI_RC(MPI_Win_flush_local, (x->mr, x->win));
        rmci_odo_next(&o, d, 1, x->lstr, x->rstr);
    }
    return rc;
}

/* Issues the transfer by its protocol from the local side or `buf` (packed / scaled data); rq: a
 * request-based op (contiguous only). Returns an MPI code. */
static int xfer_issue(const xfer_t *x, const char *buf, MPI_Request *rq)
{
    const rmci_sdesc_t *d = x->d;
    const char *o = buf ? buf : x->lptr;
    if (x->pieces) {
        RMCI_SSTAT(contig_ops);
        int rc = MPI_SUCCESS;
        for (size_t off = 0; off < d->l0 && rc == MPI_SUCCESS; off += x->piece) {
            int n = (int)((d->l0 - off < x->piece ? d->l0 - off : x->piece) / x->es);
            rc = rmci_issue1(x->kind, o + off, n, x->base, x->mr, x->t->disp + (MPI_Aint)off, n,
                             x->base, x->win, NULL);
        }
        return rc;
    }
    if (d->levels == 0) {
        RMCI_SSTAT(contig_ops);
        int n = (int)(d->l0 / x->es);
        return rmci_issue1(x->kind, o, n, x->base, x->mr, x->t->disp, n, x->base, x->win, rq);
    }
    if (x->m == RMC_STRIDED_LIST) {
        RMCI_SSTAT(list_ops);
        return issue_list(x, buf);
    }
    if (x->m == RMC_STRIDED_PACK)
        RMCI_SSTAT(pack_ops);
    else
        RMCI_SSTAT(datatype_ops);
    return rmci_issue_typed(x->kind, d, x->lstr, x->rstr, (char *)o, buf != NULL, x->base, x->es,
                            x->mr, x->t->disp, x->win);
}

/* Completion by mode once issued; owns ctx (the packed buffer lives in it). */
static rmc_status_t xfer_complete(const xfer_t *x, rmci_nbctx_t *ctx, char *buf,
                                  struct rmc_request *q, MPI_Request *rq, rmc_request_h *req)
{
    if (x->mode == RMCI_NB_REQUEST) {
        q->nmpi = rq ? 1 : 0;
        q->cb_buf = ctx;
        if (!rq)
            q->on_complete = rmci_nb_flush_local;
        if (x->kind == SK_GET && buf) {
            ctx->unpack = 1;
            ctx->d = *x->d;
            ctx->dst = x->dst;
            q->on_complete = rmci_nb_unpack;
        }
        if (q->on_complete)
            q->win = ctx->win;
        *req = q; /* handed out (waitable) also when the fall-back flush fails */
        return rmci_mark_req(x->r, x->proc, x->ck, x->range, q);
    }
    rmc_status_t st;
    if (x->mode == RMCI_NB_IMPLICIT && buf)
        st = rmci_strided_complete_temp(x->ck, x->r, x->proc, x->range);
    else
        st = rmci_strided_complete(x->ck, x->mode, x->r, x->proc, x->range, x->local_tgt);
    if (st == RMC_OK && x->kind == SK_GET && buf)
        rmci_sunpack(x->dst, buf, x->d);
    free(ctx);
    return st;
}

/* The general remote path (kept out of line: the plan's fast path stays a small frame). */
static __attribute__((noinline)) rmc_status_t remote_strided(xfer_t *x, rmc_request_h *req)
{
    xfer_setup(x);
    const rmci_sdesc_t *d = x->d;
    RMCI_STAT(remote_ops, 1);
    rmc_status_t st = rmci_order(x->r, x->proc, x->ck, x->range);
    if (st != RMC_OK)
        return st;
    if (x->kind == SK_ACC && x->mode == RMCI_BLOCKING && !x->local_tgt && d->levels == 0 &&
        d->bytes <= RMCI_STAGE_MAX) {
        st = rmci_stage_acc(x->type, x->scale, x->scaled, x->src, d, x->t, x->proc, x->base, x->es);
        if (st != RMCI_STAGE_DECLINED)
            return st;
    }
    /* MPICH 4.0.2 (ch4:ucx) completes MPI_Rput/Rget/Raccumulate with a non-contiguous target
     * datatype before the data moved: request-based MPI ops are used for contiguous transfers only;
     * every other request is completed by MPI_Win_flush_local in its on_complete. */
    /* an accumulate into this process's own memory from a source overlapping it goes as several
     * MPI operations (pieces, chunks), each reading the source when applied: packed first, every
     * part adds what the source held before the call (as local_strided does) */
    int self_overlap =
        x->kind == SK_ACC && x->local_tgt && rmci_overlap(x->src, d->sext, x->t->local, d->dext);
    int need_buf = x->scaled || x->m == RMC_STRIDED_PACK || self_overlap;
    int need_ctx = need_buf || (x->mode == RMCI_NB_REQUEST && (d->levels > 0 || x->pieces));
    rmci_nbctx_t *ctx = need_ctx ? rmci_nbctx_new(need_buf ? d->bytes : 0, x->r, x->proc) : NULL;
    struct rmc_request *q = x->mode == RMCI_NB_REQUEST ? rmci_req_alloc() : NULL;
    if ((need_ctx && !ctx) || (x->mode == RMCI_NB_REQUEST && !q)) {
        free(ctx);
        if (q)
            rmci_req_release(q);
        return rmci_fail(RMC_ERR_NOMEM, "strided", "%zu bytes of transfer state", d->bytes);
    }
    char *buf = need_buf ? rmci_nbctx_data(ctx) : NULL;
    if (buf && x->kind == SK_PUT)
        rmci_spack(buf, x->src, d);
    else if (buf && x->kind == SK_ACC)
        rmci_spack_scaled(x->type, x->scale, buf, x->src, d);
    MPI_Request *rq = (q && d->levels == 0 && !x->pieces) ? &q->mpi[0] : NULL;
    int rc = xfer_issue(x, buf, rq);
    if (x->kind == SK_ACC)
        RMCI_SSTAT(mpi_acc_ops);
    if (rc != MPI_SUCCESS) {
        /* whatever was issued must not outlive the buffers: complete it, then report */
        st = rmci_mpi_fail(rmci_issue1_name(x->kind), "strided transfer", rc);
        rmci_flush(x->r, x->proc);
        if (q) {
            if (rq && *rq != MPI_REQUEST_NULL)
                (void)RMCI_MPI_ST(MPI_Wait, (rq, MPI_STATUS_IGNORE));
            rmci_req_release(q);
        }
        free(ctx);
        return st;
    }
    return xfer_complete(x, ctx, buf, q, rq, req);
}

/* ----------------------------------------------------------------- shape plans --- */

/* A plan: what a strided call derives from its shape arguments, kept for the last shape of each
 * operation kind (applications move the same patch shape again and again: GA's NGA_Get/Put/Acc of
 * a block). Deriving it (validation, normalization, protocol choice, datatype lookup) costs ~800
 * instructions, 0.1-0.15 us of the ~2 us a small remote patch takes. Holds the validated,
 * normalized descriptor and, when a remote patch of this shape travels as one typed MPI op, that
 * op's types. Process-wide like the datatype cache (dtcache.c). */
typedef struct plan {
    int valid, levels;
    rmc_acc_type_t type;
    int count[RMCI_SL_MAX + 1], sstr[RMCI_SL_MAX], dstr[RMCI_SL_MAX];
    rmci_sdesc_t d;
    /* the one-op form, derived on first remote use while rmci_strided_epoch is `epoch` */
    int planned;
    unsigned long epoch;
    int one;        /* 1: one MPI op, origin `on` x base (local side dense), target tt */
    uintptr_t bits; /* l0 | every stride: with the pointers they give the word size */
    size_t es;      /* word / element size of base */
    MPI_Datatype base, tt;
    int on;
} plan_t;
static plan_t plans[3]; /* index: kind >> 1 (SK_PUT 1, SK_ACC 2, SK_GET 4) */

/* The plan of kind for these arguments, NULL when the last shape differs (or the arguments are
 * not even readable: the descriptor build reports why). */
static inline __attribute__((always_inline)) plan_t *plan_find(int kind, rmc_acc_type_t type,
                                                               const int *sstr, const int *dstr,
                                                               const int *count, int levels)
{
    plan_t *p = &plans[kind >> 1];
    if (!p->valid || p->levels != levels || p->type != type || !count ||
        (levels > 0 && (!sstr || !dstr)))
        return NULL;
    for (int k = 0; k <= levels; k++)
        if (count[k] != p->count[k])
            return NULL;
    for (int k = 0; k < levels; k++)
        if (sstr[k] != p->sstr[k] || dstr[k] != p->dstr[k])
            return NULL;
    return p;
}

/* Validates and normalizes the descriptor and records it as kind's plan (*out). */
static __attribute__((noinline)) rmc_status_t plan_build(int kind, rmc_acc_type_t type,
                                                         const int *sstr, const int *dstr,
                                                         const int *count, int levels, size_t al,
                                                         size_t es, plan_t **out, const char *fn)
{
    rmci_sdesc_t d;
    char why[160];
    rmc_status_t st = rmci_sdesc_check(&d, sstr, dstr, count, levels, al, es, why, sizeof why);
    if (st != RMC_OK)
        return rmci_fail(st, fn, "bad descriptor (%s): %s", rmc_status_string(st), why);
    plan_t *p = &plans[kind >> 1];
    p->valid = 1;
    p->planned = 0;
    p->levels = levels;
    p->type = type;
    for (int k = 0; k <= levels; k++)
        p->count[k] = count[k];
    for (int k = 0; k < levels; k++) {
        p->sstr[k] = sstr[k];
        p->dstr[k] = dstr[k];
    }
    p->d = d;
    *out = p;
    return RMC_OK;
}

/* Derives the one-op form: a patch whose local side is dense, at most one piece and sent by the
 * datatype protocol. The word size assumes aligned pointers; calls whose pointers give another
 * take the general path. */
static void plan_one(plan_t *p, int kind)
{
    const rmci_sdesc_t *d = &p->d;
    const size_t *lstr = kind == SK_GET ? d->ds : d->ss, *rstr = kind == SK_GET ? d->ss : d->ds;
    p->planned = 1;
    p->one = 0;
    if (d->levels == 0 || d->bytes > RMCI_DT_PIECE || !rmci_side_dense(d, lstr) ||
        rmci_strided_choose(kind, d->l0, d->nchunks, 1) != RMC_STRIDED_DATATYPE) {
        p->epoch = rmci_strided_epoch;
        return;
    }
    p->bits = d->l0 | stride_bits(d);
    if (kind == SK_ACC) {
        p->base = rmci_acc_mpi_type(p->type);
        p->es = rmci_acc_esize(p->type);
    } else {
        p->es = rmci_word_size(d->l0, p->bits);
        p->base = rmci_word_type(p->es);
    }
    p->on = (int)(d->bytes / p->es);
    p->one = rmci_dt_cached(d, rstr, p->base, (int)(d->l0 / p->es), &p->tt) == MPI_SUCCESS;
    p->epoch = rmci_strided_epoch; /* after the lookup: an eviction it made changed the epoch */
}

/* A blocking remote patch of plan p as one typed MPI op. RMCI_STAGE_DECLINED when the plan has no
 * one-op form for these pointers or this scale (the general path serves the call). */
static inline __attribute__((always_inline)) rmc_status_t
remote_one(plan_t *p, int kind, const void *scale, const char *lptr, const rmci_target_t *t,
           int proc)
{
    if (!p->planned || p->epoch != rmci_strided_epoch)
        plan_one(p, kind);
    if (!p->one)
        return RMCI_STAGE_DECLINED;
    if (kind == SK_ACC ? !rmci_acc_scale_is_one(p->type, scale)
                       : rmci_word_size(p->bits, (uintptr_t)lptr | (uintptr_t)t->disp) != p->es)
        return RMCI_STAGE_DECLINED;
    rmci_region_t *r = t->region;
    rmci_range_t range = rmci_range(t->disp, kind == SK_GET ? p->d.sext : p->d.dext);
    RMCI_STAT(remote_ops, 1);
    unsigned ck = rmci_skind(kind, p->type);
    rmc_status_t st = rmci_order(r, proc, ck, range);
    if (st != RMC_OK)
        return st;
    RMCI_SSTAT(datatype_ops);
    if (kind == SK_ACC)
        RMCI_SSTAT(mpi_acc_ops);
    int rc = rmci_issue1(kind, lptr, p->on, p->base, rmci_region_mrank(r, proc), t->disp, 1, p->tt,
                         rmci_region_win(r), NULL);
    if (rc != MPI_SUCCESS) {
        st = rmci_mpi_fail(rmci_issue1_name(kind), "strided transfer", rc);
        rmci_flush(r, proc); /* whatever was issued must not outlive the call */
        return st;
    }
    return rmci_strided_complete(ck, RMCI_BLOCKING, r, proc, range, 0);
}

/* --------------------------------------------------------------------- common --- */

static __attribute__((noinline)) rmc_status_t remote_general(int kind, rmc_acc_type_t type,
                                                             const void *scale, const void *src,
                                                             void *dst, const rmci_sdesc_t *d,
                                                             const rmci_target_t *t, int proc,
                                                             rmci_mode_t mode, rmc_request_h *req)
{
    xfer_t x = {.kind = kind, .type = type, .scale = scale, .src = src, .dst = dst, .d = d};
    x.t = t;
    x.proc = proc;
    x.mode = mode;
    return remote_strided(&x, req);
}

/* Node-local target: direct copies, or the locked accumulate. Returns 1 when it served the call,
 * -1 when the copy of an overlapping read side could not be allocated (nothing moved). */
static int local_strided(int kind, rmc_acc_type_t type, const void *scale, const char *src,
                         char *dst, const rmci_sdesc_t *d, const rmci_target_t *t, int proc)
{
    if (kind == SK_ACC ? rmci_acc_use_mpi(t->region, proc) : !t->local)
        return 0;
    /* the side read and the side written in one range of this process's memory (a rank's
     * operation on its own allocation): the read side is copied first, so that every chunk moves
     * what was there before the call, as through MPI */
    const char *rd = kind == SK_GET ? t->local : src;
    char *wr = kind == SK_GET ? dst : t->local, *tmp = NULL;
    if (rmci_overlap(rd, d->sext, wr, d->dext)) {
        if (!(tmp = malloc(d->sext)))
            return -1;
        memcpy(tmp, rd, d->sext);
        rd = tmp;
    }
    if (kind == SK_ACC) {
        atomic_uint *l = rmci_acc_lockword(t->region, proc);
        rmci_acc_lock(l);
        rmci_sacc(type, scale, wr, rd, d);
        rmci_acc_unlock(l);
        RMCI_SSTAT(lock_acc_ops);
    } else {
        rmci_scopy(wr, d->ds, rd, d->ss, d);
    }
    free(tmp);
    RMCI_STAT(local_ops, 1);
    RMCI_SSTAT(local_ops);
    return 1;
}

static inline __attribute__((always_inline)) rmc_status_t run(int kind, rmc_acc_type_t type,
                                                              const void *scale, const void *src,
                                                              void *dst, const rmci_sdesc_t *d,
                                                              plan_t *p, int proc, rmci_mode_t mode,
                                                              rmc_request_h *req, const char *fn)
{
    if (kind == SK_ACC) {
        size_t al = rmci_acc_align(type);
        if (((uintptr_t)src | (uintptr_t)dst) & (al - 1)) /* al is a power of two */
            return rmci_fail(RMC_ERR_ALIGN, fn, "src %p / dst %p not %zu-byte aligned", src, dst,
                             al);
    }
    const void *remote = kind == SK_GET ? src : dst;
    size_t ext = kind == SK_GET ? d->sext : d->dext;
    rmci_target_t t;
    rmc_status_t st = rmci_resolve(proc, remote, ext, &t);
    if (st != RMC_OK)
        return rmci_fail(st, fn, "remote patch [%p, +%zu) on rank %d: %s", remote, ext, proc,
                         st == RMC_ERR_BOUNDS ? "crosses the end of its region" : "in no region");
    int lr = local_strided(kind, type, scale, src, dst, d, &t, proc);
    if (lr > 0)
        return RMC_OK;
    if (lr < 0)
        return rmci_fail(RMC_ERR_NOMEM, fn,
                         "%zu bytes to copy a source that overlaps the destination first", d->sext);
    /* MPI counts are int: a contiguous accumulate goes in pieces (xfer_issue), as any size does
     * to a node-local target, other patches in one operation */
    if (d->bytes > (size_t)INT_MAX && !(kind == SK_ACC && d->levels == 0))
        return rmci_fail(RMC_ERR_TOO_BIG, fn, "%zu bytes in one remote patch (limit 2 GiB)",
                         d->bytes);
    if (p && mode == RMCI_BLOCKING && !t.local) {
        st = remote_one(p, kind, scale, kind == SK_GET ? dst : src, &t, proc);
        if (st != RMCI_STAGE_DECLINED)
            return st == RMC_OK ? st : rmci_in(st, fn);
    }
    st = remote_general(kind, type, scale, src, dst, d, &t, proc, mode, req);
    return st == RMC_OK ? st : rmci_in(st, fn);
}

/* Entry checks shared by every strided / 2-D / contiguous-accumulate function. */
static inline __attribute__((always_inline)) rmc_status_t entry(int kind, rmc_acc_type_t type,
                                                                int proc, rmc_request_h *req,
                                                                size_t *es, size_t *al,
                                                                const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT(fn);
    RMCI_POLL();
    RMCI_CHECK_RANK(fn, proc);
    *es = *al = 1;
    if (kind == SK_ACC) {
        *es = rmci_acc_esize(type);
        if (!*es)
            return rmci_fail(RMC_ERR_TYPE, fn, "unknown accumulate type %d", (int)type);
        *al = rmci_acc_align(type);
    }
    return RMC_OK;
}

/* Inlined into every entry point: the operation kind is then a constant on the hot path. */
static inline __attribute__((always_inline)) rmc_status_t
front(int kind, rmc_acc_type_t type, const void *scale, const void *src, const int *sstr, void *dst,
      const int *dstr, const int *count, int levels, int proc, rmci_mode_t mode, rmc_request_h *req,
      const char *fn)
{
    size_t es = 1, al = 1;
    rmc_status_t st = entry(kind, type, proc, req, &es, &al, fn);
    if (st != RMC_OK)
        return st;
    if (!src || !dst)
        return rmci_fail(RMC_ERR_ARG, fn, "NULL %s pointer", !src ? "source" : "destination");
    plan_t *p = plan_find(kind, type, sstr, dstr, count, levels);
    if (!p && (st = plan_build(kind, type, sstr, dstr, count, levels, al, es, &p, fn)) != RMC_OK)
        return st;
    st = run(kind, type, scale, src, dst, &p->d, p, proc, mode, req, fn);
    if (st == RMC_OK)
        rmci_strided_count(kind, p->d.bytes);
    return st;
}

rmc_status_t rmc_put_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc)
{
    RMCI_SERIAL();
    return front(SK_PUT, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_get_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc)
{
    RMCI_SERIAL();
    return front(SK_GET, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_acc_strided(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                             const int src_stride_arr[], void *dst_ptr, const int dst_stride_arr[],
                             const int count[], int stride_levels, int proc)
{
    RMCI_SERIAL();
    return front(SK_ACC, type, scale, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_put_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return front(SK_PUT, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_get_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return front(SK_GET, 0, NULL, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_acc_strided_nb(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                                const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return front(SK_ACC, type, scale, src_ptr, src_stride_arr, dst_ptr, dst_stride_arr, count,
                 stride_levels, proc, RMCI_NB_MODE(req), req, __func__);
}

/* ------------------------------------------------------------------------ 2-D --- */

static rmc_status_t front2d(int kind, rmc_acc_type_t type, const void *scale, const void *src,
                            size_t src_ld, void *dst, size_t dst_ld, size_t rows, size_t row_bytes,
                            int proc, rmci_mode_t mode, rmc_request_h *req, const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT(fn);
    if (rows > INT_MAX || row_bytes > INT_MAX ||
        (rows > 1 && (src_ld > INT_MAX || dst_ld > INT_MAX)))
        return rmci_fail(RMC_ERR_TOO_BIG, fn, "rows, row bytes or leading dimensions above 2^31");
    int count[2] = {(int)row_bytes, (int)rows};
    int ss[1] = {rows > 1 ? (int)src_ld : 0}, ds[1] = {rows > 1 ? (int)dst_ld : 0};
    return front(kind, type, scale, src, ss, dst, ds, count, 1, proc, mode, req, fn);
}

rmc_status_t rmc_put_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc)
{
    RMCI_SERIAL();
    return front2d(SK_PUT, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, RMCI_BLOCKING,
                   NULL, __func__);
}

rmc_status_t rmc_get_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc)
{
    RMCI_SERIAL();
    return front2d(SK_GET, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc, RMCI_BLOCKING,
                   NULL, __func__);
}

rmc_status_t rmc_acc_2d(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                        void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc)
{
    RMCI_SERIAL();
    return front2d(SK_ACC, type, scale, src, src_ld, dst, dst_ld, rows, row_bytes, proc,
                   RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_put_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return front2d(SK_PUT, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc,
                   RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_get_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return front2d(SK_GET, 0, NULL, src, src_ld, dst, dst_ld, rows, row_bytes, proc,
                   RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_acc_2d_nb(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                           void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc,
                           rmc_request_h *req)
{
    RMCI_SERIAL();
    return front2d(SK_ACC, type, scale, src, src_ld, dst, dst_ld, rows, row_bytes, proc,
                   RMCI_NB_MODE(req), req, __func__);
}

/* ------------------------------------------------------------ contiguous acc --- */

static rmc_status_t acc_contig(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                               size_t bytes, int proc, rmci_mode_t mode, rmc_request_h *req,
                               const char *fn)
{
    size_t es = 1, al = 1;
    rmc_status_t st = entry(SK_ACC, type, proc, req, &es, &al, fn);
    if (st == RMC_OK && bytes == 0)
        rmci_strided_count(SK_ACC, 0); /* a call that succeeded, as rmc_put of 0 bytes */
    if (st != RMC_OK || bytes == 0)
        return st;
    if (!src || !dst)
        return rmci_fail(RMC_ERR_ARG, fn, "NULL %s pointer", !src ? "source" : "destination");
    if (bytes & (es - 1)) /* element sizes are powers of two */
        return rmci_fail(RMC_ERR_ALIGN, fn, "%zu bytes is not a multiple of the %zu-byte element",
                         bytes, es);
    rmci_sdesc_t d;
    memset(&d, 0, sizeof d);
    d.levels = 0;
    d.l0 = d.cnt[0] = d.bytes = d.sext = d.dext = bytes;
    d.nchunks = 1;
    st = run(SK_ACC, type, scale, src, dst, &d, NULL, proc, mode, req, fn);
    if (st == RMC_OK)
        rmci_strided_count(SK_ACC, bytes);
    return st;
}

rmc_status_t rmc_acc(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                     size_t bytes, int proc)
{
    RMCI_SERIAL();
    return acc_contig(type, scale, src, dst, bytes, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_acc_nb(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                        size_t bytes, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return acc_contig(type, scale, src, dst, bytes, proc, RMCI_NB_MODE(req), req, __func__);
}
