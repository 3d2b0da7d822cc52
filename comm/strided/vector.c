/* Vector (I/O vector) put/get/accumulate: sets of equal-size segments (ARMCI's armci_giov_t).
 *
 * Node-local targets: one copy (or locked accumulate) per segment. Other targets: a list of
 * contiguous MPI ops (zero-copy), or, when every remote segment lies in one region and the written
 * side has no overlapping segments, one MPI op with an hindexed datatype on both sides ("datatype")
 * or packed locally with an hindexed datatype on the target side ("pack"). */
#include "config.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "strided_rt.h"

/* Segments are chunks whose local side is scattered: the same measured thresholds as the strided
 * protocols with a non-dense local side (strided.c, auto_method). */
rmc_strided_method_t rmci_vector_auto(int kind, size_t seg, size_t nseg)
{
    if (kind != SK_ACC && (nseg <= 4 || seg >= 4096))
        return RMC_STRIDED_LIST;
    if (kind == SK_ACC && seg >= 4096 && nseg <= 256)
        return RMC_STRIDED_LIST;
    return RMC_STRIDED_PACK;
}

typedef struct span {
    uintptr_t off;
    size_t len;
} span_t;

static int span_cmp(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* 1 when some of the n spans overlap (sorts them). */
static int spans_overlap(span_t *s, size_t n)
{
    qsort(s, n, sizeof(*s), span_cmp);
    for (size_t i = 1; i < n; i++)
        if (s[i - 1].off + s[i - 1].len > s[i].off)
            return 1;
    return 0;
}

/* Local side / remote side of segment i of descriptor v. */
#define LOC(kind, v, i) ((char *)((kind) == SK_GET ? (v)->dst[i] : (v)->src[i]))
#define REM(kind, v, i) ((char *)((kind) == SK_GET ? (v)->src[i] : (v)->dst[i]))

/* Validates everything before anything moves. On success: total bytes / segments, and whether every
 * remote segment lies in one region (*one). */
static rmc_status_t validate(int kind, size_t al, size_t es, const rmc_iov_t *iov, int len,
                             int proc, size_t *total, size_t *nseg, struct rmc_region **one)
{
    size_t tb = 0, ns = 0;
    struct rmc_region *r0 = NULL;
    int same = 1;
    for (int j = 0; j < len; j++) {
        const rmc_iov_t *v = &iov[j];
        if (!v->src || !v->dst)
            return RMC_ERR_ARG;
        if (v->count < 1 || v->bytes < 1)
            return RMC_ERR_STRIDE;
        if (v->bytes % es)
            return RMC_ERR_ALIGN;
        if (v->bytes > (size_t)INT_MAX)
            return RMC_ERR_TOO_BIG;
        for (int i = 0; i < v->count; i++) {
            if (!v->src[i] || !v->dst[i])
                return RMC_ERR_ARG;
            if (((uintptr_t)v->src[i] % al) || ((uintptr_t)v->dst[i] % al))
                return RMC_ERR_ALIGN;
            rmci_target_t t = {0};
            rmc_status_t st = rmci_resolve(proc, REM(kind, v, i), v->bytes, &t);
            if (st != RMC_OK)
                return st;
            if (!r0)
                r0 = t.region;
            else if (t.region != r0)
                same = 0;
        }
        size_t b;
        if (__builtin_mul_overflow((size_t)v->count, v->bytes, &b) ||
            __builtin_add_overflow(tb, b, &tb))
            return RMC_ERR_TOO_BIG;
        ns += (size_t)v->count;
    }
    *total = tb;
    *nseg = ns;
    *one = same ? r0 : NULL;
    return RMC_OK;
}

static void local_vector(int kind, rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                         int len, int proc)
{
    size_t es = kind == SK_ACC ? rmci_acc_esize(type) : 1;
    atomic_uint *held = NULL;
    for (int j = 0; j < len; j++) {
        const rmc_iov_t *v = &iov[j];
        for (int i = 0; i < v->count; i++) {
            rmci_target_t t = {0};
            rmci_resolve(proc, REM(kind, v, i), v->bytes, &t); /* validated: cannot fail */
            if (kind == SK_PUT) {
                memcpy(t.local, v->src[i], v->bytes);
            } else if (kind == SK_GET) {
                memcpy(v->dst[i], t.local, v->bytes);
            } else {
                atomic_uint *l = rmci_acc_lockword(t.region, proc);
                if (l != held) {
                    if (held)
                        rmci_acc_unlock(held);
                    rmci_acc_lock(l);
                    held = l;
                }
                rmci_acc_kernel(type, scale, t.local, v->src[i], v->bytes / es);
            }
        }
    }
    if (held)
        rmci_acc_unlock(held);
    rmci.stats.local_ops++;
    rmci_strided.stats.local_ops++;
    if (kind == SK_ACC)
        rmci_strided.stats.lock_acc_ops++;
}

/* Remote list protocol: one op per segment; segments may lie in several regions. */
static rmc_status_t remote_list(int kind, rmc_acc_type_t type, const void *scale,
                                const rmc_iov_t *iov, int len, int proc, int mode,
                                rmc_request_h *req, size_t total, size_t nseg,
                                struct rmc_region *one)
{
    MPI_Datatype base = kind == SK_ACC ? rmci_acc_mpi_type(type) : MPI_BYTE;
    size_t es = kind == SK_ACC ? rmci_acc_esize(type) : 1;
    int scaled = kind == SK_ACC && !rmci_acc_scale_is_one(type, scale);
    int local_tgt = rmci.local_index[proc] >= 0; /* only for MPI accumulates */
    if (local_tgt || (mode == SM_REQ && !one))
        mode = SM_BLOCK; /* completed at once (then *req stays RMC_REQUEST_NULL) */
    rmci_nbctx_t *ctx = NULL;
    char *buf = NULL;
    if (scaled || mode == SM_REQ) {
        ctx = rmci_nbctx_new(scaled ? total : 0);
        if (!ctx)
            return RMC_ERR_NOMEM;
        buf = scaled ? rmci_nbctx_data(ctx) : NULL;
    }
    /* distinct regions touched */
    struct rmc_region *r1[8];
    struct rmc_region **regs = r1;
    size_t nreg = 0;
    if (!one && nseg > 8) {
        regs = malloc(nseg * sizeof(*regs));
        if (!regs) {
            free(ctx);
            return RMC_ERR_NOMEM;
        }
    }
    struct rmc_request *q = NULL;
    if (mode == SM_REQ && !(q = rmci_req_alloc())) {
        free(ctx);
        return RMC_ERR_NOMEM;
    }
    rmc_status_t st = RMC_OK;
    int rc = MPI_SUCCESS;
    char *p = buf;
    size_t issued = 0;
    for (int j = 0; j < len && rc == MPI_SUCCESS && st == RMC_OK; j++) {
        const rmc_iov_t *v = &iov[j];
        int n = (int)(v->bytes / es);
        for (int i = 0; i < v->count && rc == MPI_SUCCESS && st == RMC_OK; i++) {
            rmci_target_t t = {0};
            rmci_resolve(proc, REM(kind, v, i), v->bytes, &t);
            size_t k = 0;
            while (k < nreg && regs[k] != t.region)
                k++;
            if (k == nreg) {
                regs[nreg++] = t.region;
                st = rmci_order(t.region, proc, (unsigned)kind);
                if (st != RMC_OK)
                    break;
            }
            const char *o = LOC(kind, v, i);
            if (buf) {
                rmci_scale_kernel(type, scale, p, o, (size_t)n);
                o = p;
                p += v->bytes;
            }
            rc = rmci_issue1(kind, o, n, base, rmci_mrank(t.region, proc), t.disp, n, base,
                             t.region->win, NULL);
            if (rc == MPI_SUCCESS && ++issued % RMCI_LIST_BATCH == 0)
                rc = MPI_Win_flush_local(rmci_mrank(t.region, proc),
                                         t.region->win); /* bound ops in flight */
        }
    }
    rmci.stats.remote_ops++;
    rmci_strided.stats.list_ops++;
    if (kind == SK_ACC)
        rmci_strided.stats.mpi_acc_ops++;
    if (rc != MPI_SUCCESS || st != RMC_OK) {
        for (size_t k = 0; k < nreg; k++)
            MPI_Win_flush(rmci_mrank(regs[k], proc), regs[k]->win);
        if (q)
            rmci_req_release(q);
        free(ctx);
        if (regs != r1)
            free(regs);
        return st != RMC_OK ? st : RMC_ERR_MPI;
    }
    if (mode == SM_REQ) {
        ctx->win = one->win;
        ctx->rank = rmci_mrank(one, proc);
        q->nmpi = 0;
        q->cb_buf = ctx;
        q->on_complete = rmci_nb_flush_local;
        rmci_mark(one, proc, (unsigned)kind);
        *req = q;
        return RMC_OK;
    }
    for (size_t k = 0; k < nreg && st == RMC_OK; k++) {
        if (mode == SM_IMPLICIT && buf) {
            if (MPI_Win_flush_local(rmci_mrank(regs[k], proc), regs[k]->win) != MPI_SUCCESS)
                st = RMC_ERR_MPI;
            rmci_mark(regs[k], proc, (unsigned)kind);
        } else {
            st = rmci_strided_complete(kind, mode, regs[k], proc, local_tgt);
        }
    }
    free(ctx);
    if (regs != r1)
        free(regs);
    return st;
}

/* Remote datatype / pack protocols: every remote segment in region `r`, no overlap on the written
 * side (checked by the caller). */
static rmc_status_t remote_typed(int kind, rmc_acc_type_t type, const void *scale,
                                 const rmc_iov_t *iov, int len, int proc, int mode,
                                 rmc_request_h *req, size_t total, size_t nseg,
                                 struct rmc_region *r, rmc_strided_method_t m)
{
    MPI_Datatype base = kind == SK_ACC ? rmci_acc_mpi_type(type) : MPI_BYTE;
    size_t es = kind == SK_ACC ? rmci_acc_esize(type) : 1;
    if (kind != SK_ACC) {
        /* whole words when every segment allows it (MPI's datatype engine is faster on them) */
        uintptr_t bits = 0;
        for (int j = 0; j < len; j++) {
            bits |= iov[j].bytes;
            for (int i = 0; i < iov[j].count; i++)
                bits |= (uintptr_t)iov[j].src[i] | (uintptr_t)iov[j].dst[i];
        }
        es = rmci_word_size(0, bits | (uintptr_t)r->bases[proc]);
        base = rmci_word_type(es);
    }
    int scaled = kind == SK_ACC && !rmci_acc_scale_is_one(type, scale);
    int local_tgt = rmci.local_index[proc] >= 0;
    if (local_tgt)
        mode = SM_BLOCK;
    int need_buf = scaled || m == RMC_STRIDED_PACK;
    int unpack = kind == SK_GET && need_buf;
    size_t tpad = (total + 7) & ~(size_t)7; /* unpack table after the data, 8-byte aligned */
    size_t extra = unpack ? (tpad - total) + nseg * (sizeof(char *) + sizeof(size_t)) : 0;
    rmci_nbctx_t *ctx = NULL;
    char *buf = NULL;
    if (need_buf || mode == SM_REQ) {
        ctx = rmci_nbctx_new((need_buf ? total : 0) + extra);
        if (!ctx)
            return RMC_ERR_NOMEM;
        ctx->win = r->win;
        ctx->rank = rmci_mrank(r, proc);
        buf = need_buf ? rmci_nbctx_data(ctx) : NULL;
    }
    MPI_Aint *rd = malloc(nseg * sizeof(MPI_Aint));
    MPI_Aint *ld = need_buf ? NULL : malloc(nseg * sizeof(MPI_Aint));
    int *bl = malloc(nseg * sizeof(int));
    if (!rd || !bl || (!need_buf && !ld)) {
        free(rd);
        free(ld);
        free(bl);
        free(ctx);
        return RMC_ERR_NOMEM;
    }
    /* displacements relative to the lowest address of each side */
    MPI_Aint rmin = 0;
    uintptr_t lmin = UINTPTR_MAX;
    size_t s = 0;
    char *p = buf;
    char **segs = unpack ? (char **)(void *)(buf + tpad) : NULL;
    size_t *seglen = unpack ? (size_t *)(void *)(buf + tpad + nseg * sizeof(char *)) : NULL;
    for (int j = 0; j < len; j++) {
        const rmc_iov_t *v = &iov[j];
        for (int i = 0; i < v->count; i++, s++) {
            rmci_target_t t = {0};
            rmci_resolve(proc, REM(kind, v, i), v->bytes, &t);
            rd[s] = t.disp;
            if (s == 0 || t.disp < rmin)
                rmin = t.disp;
            bl[s] = (int)(v->bytes / es);
            const char *o = LOC(kind, v, i);
            if (ld) {
                ld[s] = (MPI_Aint)(uintptr_t)o;
                if ((uintptr_t)o < lmin)
                    lmin = (uintptr_t)o;
            }
            if (kind == SK_PUT && buf)
                memcpy(p, o, v->bytes);
            else if (kind == SK_ACC && buf)
                rmci_scale_kernel(type, scale, p, o, v->bytes / es);
            if (unpack) {
                segs[s] = (char *)o;
                seglen[s] = v->bytes;
            }
            p += v->bytes;
        }
    }
    for (size_t i = 0; i < nseg; i++) {
        rd[i] -= rmin;
        if (ld)
            ld[i] -= (MPI_Aint)lmin;
    }
    rmci.stats.remote_ops++;
    rmc_status_t st = rmci_order(r, proc, (unsigned)kind);
    struct rmc_request *q = NULL;
    if (st == RMC_OK && mode == SM_REQ && !(q = rmci_req_alloc()))
        st = RMC_ERR_NOMEM;
    /* Groups of segments of at most RMCI_DT_PIECE bytes, one typed op each (non-contiguous
     * transfers slow down beyond that on this MPICH, see strided.c). No request-based op with a
     * derived datatype (see strided.c): flush_local completes them. */
    size_t g0 = 0, off = 0;
    while (st == RMC_OK && g0 < nseg) {
        size_t g1 = g0, gb = 0;
        while (g1 < nseg && (g1 == g0 || gb + (size_t)bl[g1] * es <= RMCI_DT_PIECE))
            gb += (size_t)bl[g1++] * es;
        int n = (int)(g1 - g0);
        MPI_Datatype tt = MPI_DATATYPE_NULL, ot = MPI_DATATYPE_NULL;
        int rc = MPI_Type_create_hindexed(n, bl + g0, rd + g0, base, &tt);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&tt);
        if (rc == MPI_SUCCESS && ld) {
            rc = MPI_Type_create_hindexed(n, bl + g0, ld + g0, base, &ot);
            if (rc == MPI_SUCCESS)
                rc = MPI_Type_commit(&ot);
        }
        if (rc == MPI_SUCCESS) {
            if (buf)
                rc = rmci_issue1(kind, buf + off, (int)(gb / es), base, rmci_mrank(r, proc), rmin,
                                 1, tt, r->win, NULL);
            else
                rc = rmci_issue1(kind, (void *)lmin, 1, ot, rmci_mrank(r, proc), rmin, 1, tt,
                                 r->win, NULL);
        }
        if (tt != MPI_DATATYPE_NULL)
            MPI_Type_free(&tt);
        if (ot != MPI_DATATYPE_NULL)
            MPI_Type_free(&ot);
        if (rc != MPI_SUCCESS)
            st = RMC_ERR_MPI;
        off += gb;
        g0 = g1;
    }
    free(rd);
    free(ld);
    free(bl);
    if (m == RMC_STRIDED_PACK)
        rmci_strided.stats.pack_ops++;
    else
        rmci_strided.stats.datatype_ops++;
    if (kind == SK_ACC)
        rmci_strided.stats.mpi_acc_ops++;
    if (st != RMC_OK) {
        MPI_Win_flush(rmci_mrank(r, proc), r->win);
        if (q)
            rmci_req_release(q);
        free(ctx);
        return st;
    }
    if (mode == SM_REQ) {
        q->nmpi = 0;
        q->cb_buf = ctx;
        q->on_complete = rmci_nb_flush_local;
        if (unpack) {
            ctx->unpack = 2;
            ctx->segs = segs;
            ctx->seglen = seglen;
            ctx->nsegs = nseg;
            q->on_complete = rmci_nb_unpack;
        }
        rmci_mark(r, proc, (unsigned)kind);
        *req = q;
        return RMC_OK;
    }
    if (mode == SM_IMPLICIT && buf) {
        if (MPI_Win_flush_local(rmci_mrank(r, proc), r->win) != MPI_SUCCESS)
            st = RMC_ERR_MPI;
        else if (!unpack)
            rmci_mark(r, proc, (unsigned)kind);
    } else {
        st = rmci_strided_complete(kind, mode, r, proc, local_tgt);
    }
    if (st == RMC_OK && unpack) {
        const char *u = buf;
        for (size_t i = 0; i < nseg; i++) {
            memcpy(segs[i], u, seglen[i]);
            u += seglen[i];
        }
    }
    free(ctx);
    return st;
}

/* 1 when the written side (put/acc: remote, get: local) has overlapping segments. */
static int written_overlap(const rmc_iov_t *iov, int len, size_t nseg, int *nomem)
{
    span_t *sp = malloc(nseg * sizeof(*sp));
    if (!sp) {
        *nomem = 1;
        return 1;
    }
    size_t s = 0;
    for (int j = 0; j < len; j++)
        for (int i = 0; i < iov[j].count; i++, s++) {
            sp[s].off =
                (uintptr_t)iov[j].dst[i]; /* written side: remote for put/acc, local for get */
            sp[s].len = iov[j].bytes;
        }
    int ov = spans_overlap(sp, nseg);
    free(sp);
    return ov;
}

static rmc_status_t vfront(int kind, rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                           int len, int proc, int mode, rmc_request_h *req)
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
    if (!iov)
        return RMC_ERR_ARG;
    if (len < 1)
        return RMC_ERR_STRIDE;
    size_t total, nseg;
    struct rmc_region *one;
    rmc_status_t st = validate(kind, al, es, iov, len, proc, &total, &nseg, &one);
    if (st != RMC_OK)
        return st;
    rmc_strided_method_t m = rmci_strided_method();
    /* all remote segments of one call are equally node-local (same proc) */
    rmci_target_t t = {0};
    rmci_resolve(proc, REM(kind, iov, 0), iov[0].bytes, &t);
    int local = kind == SK_ACC ? !rmci_acc_use_mpi(t.region, proc) : t.local != NULL;
    if (local) {
        local_vector(kind, type, scale, iov, len, proc);
        return RMC_OK;
    }
    if (total > (size_t)INT_MAX || nseg > (size_t)INT_MAX)
        return RMC_ERR_TOO_BIG;
    if (m == RMC_STRIDED_AUTO)
        m = rmci_vector_auto(kind, total / nseg, nseg);
    if (m != RMC_STRIDED_LIST && one) {
        int nomem = 0;
        if (!written_overlap(iov, len, nseg, &nomem))
            return remote_typed(kind, type, scale, iov, len, proc, mode, req, total, nseg, one, m);
        if (nomem)
            return RMC_ERR_NOMEM;
    }
    return remote_list(kind, type, scale, iov, len, proc, mode, req, total, nseg, one);
}

#define MODE(req) ((req) ? SM_REQ : SM_IMPLICIT)

rmc_status_t rmc_put_vector(const rmc_iov_t *iov, int len, int proc)
{
    return vfront(SK_PUT, 0, NULL, iov, len, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_get_vector(const rmc_iov_t *iov, int len, int proc)
{
    return vfront(SK_GET, 0, NULL, iov, len, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_acc_vector(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov, int len,
                            int proc)
{
    return vfront(SK_ACC, type, scale, iov, len, proc, SM_BLOCK, NULL);
}

rmc_status_t rmc_put_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req)
{
    return vfront(SK_PUT, 0, NULL, iov, len, proc, MODE(req), req);
}

rmc_status_t rmc_get_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req)
{
    return vfront(SK_GET, 0, NULL, iov, len, proc, MODE(req), req);
}

rmc_status_t rmc_acc_vector_nb(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                               int len, int proc, rmc_request_h *req)
{
    return vfront(SK_ACC, type, scale, iov, len, proc, MODE(req), req);
}
