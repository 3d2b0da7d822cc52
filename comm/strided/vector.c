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

typedef struct span {
    uintptr_t off; /* written address */
    size_t len;
    const void *src; /* the segment's other side */
} span_t;

/* Sorts s[0, n) by address, stably (equal addresses keep their list order): a radix sort over the
 * bits in which the addresses differ, 11 at a time (a list within one region part of a few MiB:
 * two passes); insertion sort for short lists. tmp: room for n spans. */
static void spans_sort(span_t *s, span_t *tmp, size_t n)
{
    enum { BITS = 11, NB = 1 << BITS };
    if (n < 64) {
        for (size_t i = 1; i < n; i++) {
            span_t x = s[i];
            size_t j = i;
            for (; j > 0 && s[j - 1].off > x.off; j--)
                s[j] = s[j - 1];
            s[j] = x;
        }
        return;
    }
    uintptr_t lo = s[0].off, hi = lo;
    for (size_t i = 1; i < n; i++) {
        lo = s[i].off < lo ? s[i].off : lo;
        hi = s[i].off > hi ? s[i].off : hi;
    }
    size_t cnt[NB];
    span_t *from = s, *to = tmp;
    for (int sh = 0; sh < (int)(8 * sizeof(uintptr_t)) && ((hi - lo) >> sh); sh += BITS) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[((from[i].off - lo) >> sh) & (NB - 1)]++;
        size_t sum = 0;
        for (int b = 0; b < NB; b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            to[cnt[((from[i].off - lo) >> sh) & (NB - 1)]++] = from[i];
        span_t *t = from;
        from = to;
        to = t;
    }
    if (from != s)
        memcpy(s, from, n * sizeof(*s));
}

/* Local side / remote side of segment i of descriptor v. */
#define LOC(kind, v, i) ((char *)((kind) == SK_GET ? (v)->dst[i] : (v)->src[i]))
#define REM(kind, v, i) ((char *)((kind) == SK_GET ? (v)->src[i] : (v)->dst[i]))

/* What a pass over the segments learns for the remote paths (validate's pass; vscan_list for a
 * list RMC built itself), so that they do not read a long list's address arrays again for each: */
typedef struct vscan {
    int wsorted;    /* written addresses (dst[]) ascending, no two segments overlapping */
    int ldense;     /* the local side is one block in segment order */
    int onesize;    /* every segment has the first one's size */
    size_t bytes0;  /* the first segment's size */
    uintptr_t bits; /* OR of every address and segment length (the widest word that fits all) */
    uintptr_t wend; /* (during the pass) end of the last written segment */
    char *lnext;    /* (during the pass) where the local side continues; NULL before the first */
} vscan_t;

static void vscan_init(vscan_t *sc)
{
    *sc = (vscan_t){.wsorted = 1, .ldense = 1, .onesize = 1};
}

/* The next segment of the pass: src / dst as in rmc_iov_t, loc its local side. */
static inline void vscan_add(vscan_t *sc, const void *src, const void *dst, const char *loc,
                             size_t bytes)
{
    uintptr_t wa = (uintptr_t)dst;
    if (!sc->lnext) /* the first segment */
        sc->bytes0 = bytes;
    sc->onesize &= bytes == sc->bytes0;
    sc->wsorted &= wa >= sc->wend;
    sc->wend = wa + bytes;
    sc->ldense &= !sc->lnext || loc == sc->lnext;
    sc->lnext = (char *)loc + bytes;
    sc->bits |= (uintptr_t)src | wa | bytes;
}

static void vscan_list(int kind, const rmc_iov_t *iov, int len, vscan_t *sc)
{
    vscan_init(sc);
    for (int j = 0; j < len; j++)
        for (int i = 0; i < iov[j].count; i++)
            vscan_add(sc, iov[j].src[i], iov[j].dst[i], LOC(kind, &iov[j], i), iov[j].bytes);
}

/* Validates everything before anything moves. On success: total bytes / segments, whether every
 * remote segment lies in one region (*one), (node-local targets) whether the hull of the bytes
 * read meets the hull of the bytes written in this process's address space (*rw_meet), and *sc. */
static rmc_status_t validate(int kind, size_t al, size_t es, const rmc_iov_t *iov, int len,
                             int proc, size_t *total, size_t *nseg, rmci_region_t **one,
                             int *rw_meet, vscan_t *sc, char *why, size_t whylen)
{
    size_t tb = 0, ns = 0;
    uintptr_t rlo = UINTPTR_MAX, rhi = 0, wlo = UINTPTR_MAX, whi = 0;
    /* al is a power of two (1 or an element size): a mask, not a division per segment */
    const uintptr_t am = al - 1;
    rmci_region_t *r0 = NULL;
    int same = 1;
    vscan_init(sc);
    for (int j = 0; j < len; j++) {
        const rmc_iov_t *v = &iov[j];
        if (!v->src || !v->dst)
            return rmci_why_set(RMC_ERR_ARG, why, whylen, "iov[%d].%s is NULL", j,
                                v->src ? "dst" : "src");
        if (v->count < 1 || v->bytes < 1)
            return rmci_why_set(RMC_ERR_STRIDE, why, whylen,
                                "iov[%d] has count %d, bytes %zu (both at least 1)", j, v->count,
                                v->bytes);
        if (v->bytes % es)
            return rmci_why_set(RMC_ERR_ALIGN, why, whylen,
                                "iov[%d].bytes = %zu is not a multiple of the element size %zu", j,
                                v->bytes, es);
        if (v->bytes > (size_t)INT_MAX)
            return rmci_why_set(RMC_ERR_TOO_BIG, why, whylen,
                                "iov[%d].bytes = %zu (limit 2^31 - 1 per segment)", j, v->bytes);
        for (int i = 0; i < v->count; i++) {
            if (!v->src[i] || !v->dst[i])
                return rmci_why_set(RMC_ERR_ARG, why, whylen, "iov[%d].%s[%d] is NULL", j,
                                    v->src[i] ? "dst" : "src", i);
            if (((uintptr_t)v->src[i] | (uintptr_t)v->dst[i]) & am)
                return rmci_why_set(RMC_ERR_ALIGN, why, whylen,
                                    "iov[%d].%s[%d] = %p is not aligned to %zu bytes", j,
                                    ((uintptr_t)v->src[i] & am) ? "src" : "dst", i,
                                    ((uintptr_t)v->src[i] & am) ? v->src[i] : v->dst[i], al);
            vscan_add(sc, v->src[i], v->dst[i], LOC(kind, v, i), v->bytes);
            rmci_target_t t = {0};
            rmc_status_t st = rmci_resolve(proc, REM(kind, v, i), v->bytes, &t);
            if (st != RMC_OK)
                return rmci_why_set(
                    st, why, whylen, "iov[%d].%s[%d] = %p (%zu bytes) %s of rank %d", j,
                    kind == SK_GET ? "src" : "dst", i, (void *)REM(kind, v, i), v->bytes,
                    st == RMC_ERR_BOUNDS ? "runs past the end of its region" : "is not in a region",
                    proc);
            if (!r0)
                r0 = t.region;
            else if (t.region != r0)
                same = 0;
            if (t.local) {
                uintptr_t r = (uintptr_t)(kind == SK_GET ? t.local : v->src[i]);
                uintptr_t w = (uintptr_t)(kind == SK_GET ? v->dst[i] : t.local);
                rlo = r < rlo ? r : rlo;
                rhi = r + v->bytes > rhi ? r + v->bytes : rhi;
                wlo = w < wlo ? w : wlo;
                whi = w + v->bytes > whi ? w + v->bytes : whi;
            }
        }
        size_t b;
        if (__builtin_mul_overflow((size_t)v->count, v->bytes, &b) ||
            __builtin_add_overflow(tb, b, &tb))
            return rmci_why_set(RMC_ERR_TOO_BIG, why, whylen,
                                "the byte count overflows size_t at iov[%d]", j);
        ns += (size_t)v->count;
    }
    *total = tb;
    *nseg = ns;
    *one = same ? r0 : NULL;
    *rw_meet = rlo < whi && wlo < rhi;
    return RMC_OK;
}

/* Node-local target: one copy (or locked accumulate) per segment. When the hull of the bytes read
 * and the hull of the bytes written intersect (a rank's vector operation within its own memory),
 * the read side is first copied to a temporary, so that every segment moves what was there before
 * the call, as through MPI. */
static rmc_status_t local_vector(int kind, rmc_acc_type_t type, const void *scale,
                                 const rmc_iov_t *iov, int len, int proc, size_t total, int rw_meet,
                                 const char *fn)
{
    size_t es = kind == SK_ACC ? rmci_acc_esize(type) : 1;
    char *tmp = NULL;
    if (rw_meet) {
        if (!(tmp = malloc(total ? total : 1)))
            return rmci_fail(RMC_ERR_NOMEM, fn,
                             "%zu bytes to copy the read side of a vector "
                             "operation whose read and written bytes overlap",
                             total);
        size_t off = 0;
        for (int j = 0; j < len; j++)
            for (int i = 0; i < iov[j].count; i++, off += iov[j].bytes) {
                rmci_target_t t = {0};
                rmci_resolve(proc, REM(kind, &iov[j], i), iov[j].bytes, &t);
                memcpy(tmp + off, kind == SK_GET ? t.local : iov[j].src[i], iov[j].bytes);
            }
    }
    atomic_uint *held = NULL;
    size_t off = 0;
    for (int j = 0; j < len; j++) {
        const rmc_iov_t *v = &iov[j];
        for (int i = 0; i < v->count; i++, off += v->bytes) {
            rmci_target_t t = {0};
            rmci_resolve(proc, REM(kind, v, i), v->bytes, &t); /* validated: cannot fail */
            if (kind == SK_PUT) {
                memcpy(t.local, tmp ? tmp + off : v->src[i], v->bytes);
            } else if (kind == SK_GET) {
                memcpy(v->dst[i], tmp ? tmp + off : t.local, v->bytes);
            } else {
                atomic_uint *l = rmci_acc_lockword(t.region, proc);
                if (l != held) {
                    if (held)
                        rmci_acc_unlock(held);
                    rmci_acc_lock(l);
                    held = l;
                }
                rmci_acc_kernel(type, scale, t.local, tmp ? tmp + off : v->src[i], v->bytes / es);
            }
        }
    }
    if (held)
        rmci_acc_unlock(held);
    free(tmp);
    RMCI_STAT(local_ops, 1);
    RMCI_SSTAT(local_ops);
    if (kind == SK_ACC)
        RMCI_SSTAT(lock_acc_ops);
    return RMC_OK;
}

/* Remote list protocol: one op per segment; segments may lie in several regions. The regions a
 * call touched, with the hull of its bytes in each: */
typedef struct vreg {
    rmci_region_t *r;
    rmci_range_t range;
} vreg_t;

typedef struct vlist {
    int kind, proc;
    rmc_acc_type_t type;
    const void *scale;
    MPI_Datatype base;
    size_t es;
    char *buf;    /* scaled copies (accumulate with a scale != 1), or NULL */
    vreg_t *regs; /* [nseg] at most */
    size_t nreg;
    size_t issued;
} vlist_t;

/* Adds seg to r's hull (r is added at its first segment). */
static void vlist_region(vlist_t *v, rmci_region_t *r, rmci_range_t seg)
{
    for (size_t k = 0; k < v->nreg; k++)
        if (v->regs[k].r == r) {
            vreg_t *e = &v->regs[k];
            e->range.lo = seg.lo < e->range.lo ? seg.lo : e->range.lo;
            e->range.hi = seg.hi > e->range.hi ? seg.hi : e->range.hi;
            return;
        }
    v->regs[v->nreg++] = (vreg_t){r, seg};
}

/* One segment: ordered after conflicting outstanding operations, issued. Returns an MPI code
 * (RMC errors of the ordering come in *st). */
static int vlist_segment(vlist_t *v, const rmc_iov_t *e, int i, char **p, rmc_status_t *st)
{
    rmci_target_t t = {0};
    rmci_resolve(v->proc, REM(v->kind, e, i), e->bytes, &t); /* validated */
    rmci_range_t seg = rmci_range(t.disp, e->bytes);
    *st = rmci_order(t.region, v->proc, rmci_skind(v->kind, v->type), seg);
    if (*st != RMC_OK)
        return MPI_SUCCESS;
    vlist_region(v, t.region, seg);
    int n = (int)(e->bytes / v->es);
    const char *o = LOC(v->kind, e, i);
    if (v->buf) {
        rmci_scale_kernel(v->type, v->scale, *p, o, (size_t)n);
        o = *p;
        *p += e->bytes;
    }
    int mr = rmci_region_mrank(t.region, v->proc);
    MPI_Win win = rmci_region_win(t.region);
    int rc = rmci_issue1(v->kind, o, n, v->base, mr, t.disp, n, v->base, win, NULL);
    if (rc == MPI_SUCCESS && ++v->issued % RMCI_LIST_BATCH == 0)
        rc = RMCI_MPI_RC(MPI_Win_flush_local, (mr, win)); /* bound the operations in flight */
    return rc;
}

static rmc_status_t vlist_issue(vlist_t *v, const rmc_iov_t *iov, int len)
{
    rmc_status_t st = RMC_OK;
    int rc = MPI_SUCCESS;
    char *p = v->buf;
    for (int j = 0; j < len && rc == MPI_SUCCESS && st == RMC_OK; j++)
        for (int i = 0; i < iov[j].count && rc == MPI_SUCCESS && st == RMC_OK; i++)
            rc = vlist_segment(v, &iov[j], i, &p, &st);
    if (rc != MPI_SUCCESS)
        st = rmci_mpi_fail(rmci_issue1_name(v->kind), "vector transfer", rc);
    if (st != RMC_OK) /* whatever was issued must not outlive the buffers */
        for (size_t k = 0; k < v->nreg; k++)
            rmci_flush(v->regs[k].r, v->proc);
    return st;
}

static rmc_status_t remote_list(int kind, rmc_acc_type_t type, const void *scale,
                                const rmc_iov_t *iov, int len, int proc, rmci_mode_t mode,
                                rmc_request_h *req, size_t total, size_t nseg, rmci_region_t *one)
{
    vlist_t v = {.kind = kind, .proc = proc, .type = type, .scale = scale};
    v.base = kind == SK_ACC ? rmci_acc_mpi_type(type) : MPI_BYTE;
    v.es = kind == SK_ACC ? rmci_acc_esize(type) : 1;
    int scaled = kind == SK_ACC && !rmci_acc_scale_is_one(type, scale);
    int local_tgt = RMCI.local_index[proc] >= 0; /* only for MPI accumulates */
    if (local_tgt || (mode == RMCI_NB_REQUEST && !one))
        mode = RMCI_BLOCKING; /* completed at once (then *req stays RMC_REQUEST_NULL) */
    rmci_nbctx_t *ctx = NULL;
    if (scaled || mode == RMCI_NB_REQUEST)
        ctx = rmci_nbctx_new(scaled ? total : 0, one, proc);
    v.buf = ctx && scaled ? rmci_nbctx_data(ctx) : NULL;
    v.regs = rmci_malloc((one ? 1 : nseg) * sizeof(*v.regs));
    struct rmc_request *q = mode == RMCI_NB_REQUEST ? rmci_req_alloc() : NULL;
    rmc_status_t st = RMC_OK;
    if (((scaled || mode == RMCI_NB_REQUEST) && !ctx) || !v.regs || (mode == RMCI_NB_REQUEST && !q))
        st = rmci_fail(RMC_ERR_NOMEM, "vector transfer", "state of %zu segments", nseg);
    if (st == RMC_OK)
        st = vlist_issue(&v, iov, len);
    RMCI_STAT(remote_ops, 1);
    RMCI_SSTAT(list_ops);
    if (kind == SK_ACC)
        RMCI_SSTAT(mpi_acc_ops);
    if (st == RMC_OK && mode == RMCI_NB_REQUEST) {
        q->cb_buf = ctx;
        q->on_complete = rmci_nb_flush_local;
        q->win = ctx->win;
        /* a failing fall-back flush is reported with the request handed out (waitable) */
        st = rmci_mark_req(one, proc, rmci_skind(kind, type), v.regs[0].range, q);
        *req = q;
        free(v.regs);
        return st;
    }
    for (size_t k = 0; k < v.nreg && st == RMC_OK; k++) {
        vreg_t *e = &v.regs[k];
        if (mode == RMCI_NB_IMPLICIT && v.buf) /* the scaled copies cannot outlive the call */
            st = rmci_strided_complete_temp(rmci_skind(kind, type), e->r, proc, e->range);
        else
            st = rmci_strided_complete(rmci_skind(kind, type), mode, e->r, proc, e->range,
                                       local_tgt);
    }
    if (q)
        rmci_req_release(q);
    free(ctx);
    free(v.regs);
    return st;
}

/* The datatype / pack protocols of a vector: every remote segment in one region, no overlap on
 * the written side (checked by the caller). State of one call: */
typedef struct vtyped {
    int kind;
    rmc_acc_type_t type;
    const void *scale;
    const rmc_iov_t *iov;
    int len, proc;
    size_t total, nseg;
    rmci_region_t *r;
    MPI_Datatype base;
    size_t es;
    int need_buf, unpack;
    int ldense; /* the local side is one block in segment order (starting at lbase) */
    int blk;    /* elements of every segment when all have the same size, else 0 (then bl) */
    char *lbase;
    rmci_nbctx_t *ctx;
    char *buf;   /* packed data (in ctx), or NULL */
    char **segs; /* get with buffer: where each segment goes (in ctx) */
    size_t *seglen;
    MPI_Aint *rd, *ld; /* remote / local displacements from rmin / lmin (ld: NULL when dense) */
    int *bl;           /* elements per segment (NULL when blk) */
    MPI_Aint rmin;
    uintptr_t lmin;
    rmci_range_t range; /* remote bytes touched */
} vtyped_t;

/* Element type on the wire: the accumulate type, or whole words when every segment allows it (MPI's
 * datatype engine is faster on them). Also finds whether the local side is dense (a scatter's
 * values, a gather's result buffer: sent from or received into place, no packing and no origin
 * datatype) and whether all segments have one size (an hindexed_block type: MPICH handles it
 * ~1.6x faster than hindexed for single elements). */
static void vtyped_base(vtyped_t *v, const vscan_t *sc)
{
    void *rbase = NULL;
    rmc_region_base(v->r, v->proc, &rbase, NULL);
    uintptr_t bits = (uintptr_t)rbase;
    v->lbase = LOC(v->kind, &v->iov[0], 0);
    bits |= sc->bits;
    if (v->kind == SK_ACC) {
        v->base = rmci_acc_mpi_type(v->type);
        v->es = rmci_acc_esize(v->type);
    } else {
        v->es = rmci_word_size(0, bits);
        v->base = rmci_word_type(v->es);
    }
    v->ldense = sc->ldense;
    size_t blk = v->iov[0].bytes / v->es;
    v->blk = sc->onesize && blk <= (size_t)INT_MAX ? (int)blk : 0;
}

/* Context, packed buffer (+ unpack table after the data, 8-byte aligned) and displacement arrays.
 */
static rmc_status_t vtyped_alloc(vtyped_t *v, rmci_mode_t mode)
{
    size_t tpad = (v->total + 7) & ~(size_t)7;
    size_t extra = v->unpack ? (tpad - v->total) + v->nseg * (sizeof(char *) + sizeof(size_t)) : 0;
    if (v->need_buf || mode == RMCI_NB_REQUEST) {
        v->ctx = rmci_nbctx_new((v->need_buf ? v->total : 0) + extra, v->r, v->proc);
        if (v->ctx && v->need_buf)
            v->buf = rmci_nbctx_data(v->ctx);
    }
    if (v->unpack && v->buf) {
        v->segs = (char **)(void *)(v->buf + tpad);
        v->seglen = (size_t *)(void *)(v->buf + tpad + v->nseg * sizeof(char *));
    }
    int need_ld = !v->need_buf && !v->ldense;
    v->rd = rmci_malloc(v->nseg * sizeof(MPI_Aint));
    v->ld = need_ld ? rmci_malloc(v->nseg * sizeof(MPI_Aint)) : NULL;
    v->bl = v->blk ? NULL : rmci_malloc(v->nseg * sizeof(int));
    if ((!v->ctx && (v->need_buf || mode == RMCI_NB_REQUEST)) || !v->rd || (!v->blk && !v->bl) ||
        (need_ld && !v->ld))
        return rmci_fail(RMC_ERR_NOMEM, "vector transfer", "state of %zu segments", v->nseg);
    return RMC_OK;
}

static void vtyped_free_arrays(vtyped_t *v)
{
    free(v->rd);
    free(v->ld);
    free(v->bl);
    v->rd = v->ld = NULL;
    v->bl = NULL;
}

/* Displacements relative to the lowest address of each side; packs (scales) the data. */
static void vtyped_layout(vtyped_t *v)
{
    size_t s = 0;
    char *p = v->buf;
    MPI_Aint rmax = 0;
    v->lmin = UINTPTR_MAX;
    /* every remote segment lies in v->r's part of v->proc (validated): one translation entry, so a
     * displacement is the address plus one offset */
    rmci_target_t t0 = {0};
    const char *a0 = REM(v->kind, &v->iov[0], 0);
    rmci_resolve(v->proc, a0, v->iov[0].bytes, &t0);
    const MPI_Aint delta = t0.disp - (MPI_Aint)(uintptr_t)a0;
    for (int j = 0; j < v->len; j++) {
        const rmc_iov_t *e = &v->iov[j];
        for (int i = 0; i < e->count; i++, s++) {
            MPI_Aint d = (MPI_Aint)(uintptr_t)REM(v->kind, e, i) + delta;
            v->rd[s] = d;
            if (s == 0 || d < v->rmin)
                v->rmin = d;
            if (d + (MPI_Aint)e->bytes > rmax)
                rmax = d + (MPI_Aint)e->bytes;
            if (v->bl)
                v->bl[s] = (int)(e->bytes / v->es);
            const char *o = LOC(v->kind, e, i);
            if (v->ld) {
                v->ld[s] = (MPI_Aint)(uintptr_t)o;
                if ((uintptr_t)o < v->lmin)
                    v->lmin = (uintptr_t)o;
            }
            if (v->kind == SK_PUT && p && e->bytes == 8) /* single elements: no call */
                memcpy(p, o, 8);
            else if (v->kind == SK_PUT && p)
                memcpy(p, o, e->bytes);
            else if (v->kind == SK_ACC && p)
                rmci_scale_kernel(v->type, v->scale, p, o, e->bytes / v->es);
            if (v->segs) {
                v->segs[s] = (char *)o;
                v->seglen[s] = e->bytes;
            }
            p = p ? p + e->bytes : NULL;
        }
    }
    for (size_t i = 0; i < v->nseg; i++) {
        v->rd[i] -= v->rmin;
        if (v->ld)
            v->ld[i] -= (MPI_Aint)v->lmin;
    }
    v->range = (rmci_range_t){v->rmin, rmax};
}

/* An hindexed type of segments [g0, g0 + n) at displacements d (hindexed_block when they have one
 * size). */
static int vtyped_type(const vtyped_t *v, size_t g0, int n, const MPI_Aint *d, MPI_Datatype *t,
                       const char **what)
{
    *what = v->blk ? "MPI_Type_create_hindexed_block" : "MPI_Type_create_hindexed";
    int rc = v->blk ? RMCI_MPI_RC(MPI_Type_create_hindexed_block, (n, v->blk, d + g0, v->base, t))
                    : RMCI_MPI_RC(MPI_Type_create_hindexed, (n, v->bl + g0, d + g0, v->base, t));
    if (rc == MPI_SUCCESS) {
        rmci_res_count(RMCI_RES_TYPE, 1);
        *what = "MPI_Type_commit";
        rc = RMCI_MPI_RC(MPI_Type_commit, (t));
    }
    return rc;
}

/* One group of segments [g0, g1) of gb bytes (at offset off of the packed data or of the dense
 * local side) as one typed op. *what: the MPI call a failure came from. */
static int vtyped_group(const vtyped_t *v, size_t g0, size_t g1, size_t gb, size_t off,
                        const char **what)
{
    int n = (int)(g1 - g0);
    MPI_Datatype tt = MPI_DATATYPE_NULL, ot = MPI_DATATYPE_NULL;
    int rc = vtyped_type(v, g0, n, v->rd, &tt, what);
    if (rc == MPI_SUCCESS && v->ld)
        rc = vtyped_type(v, g0, n, v->ld, &ot, what);
    if (rc == MPI_SUCCESS)
        *what = rmci_issue1_name(v->kind);
    int mr = rmci_region_mrank(v->r, v->proc);
    MPI_Win win = rmci_region_win(v->r);
    char *flat = v->buf ? v->buf : v->ld ? NULL : v->lbase; /* the local side as one block */
    if (rc == MPI_SUCCESS && flat)
        rc = rmci_issue1(v->kind, flat + off, (int)(gb / v->es), v->base, mr, v->rmin, 1, tt, win,
                         NULL);
    else if (rc == MPI_SUCCESS)
        rc = rmci_issue1(v->kind, (void *)v->lmin, 1, ot, mr, v->rmin, 1, tt, win, NULL);
    rmci_type_free(&tt);
    rmci_type_free(&ot);
    return rc;
}

/* Groups of segments of at most RMCI_DT_PIECE bytes, one typed op each (non-contiguous transfers
 * slow down beyond that on this MPICH, see strided_rt.h). No request-based op with a derived
 * datatype (see strided.c): flush_local completes them. */
static rmc_status_t vtyped_issue(const vtyped_t *v)
{
    size_t g0 = 0, off = 0;
    while (g0 < v->nseg) {
        size_t g1 = g0, gb = 0;
        if (v->blk) { /* one size: the group's length directly */
            size_t sb = (size_t)v->blk * v->es, k = RMCI_DT_PIECE / sb;
            g1 = g0 + (k < 1 ? 1 : k < v->nseg - g0 ? k : v->nseg - g0);
            gb = (g1 - g0) * sb;
        } else {
            while (g1 < v->nseg && (g1 == g0 || gb + (size_t)v->bl[g1] * v->es <= RMCI_DT_PIECE))
                gb += (size_t)v->bl[g1++] * v->es;
        }
        const char *what = NULL;
        int rc = vtyped_group(v, g0, g1, gb, off, &what);
        if (rc != MPI_SUCCESS)
            return rmci_mpi_fail(what, "vector transfer", rc);
        off += gb;
        g0 = g1;
    }
    return RMC_OK;
}

static void vtyped_unpack(const vtyped_t *v)
{
    const char *u = v->buf;
    for (size_t i = 0; i < v->nseg; i++) {
        memcpy(v->segs[i], u, v->seglen[i]);
        u += v->seglen[i];
    }
}

/* Completion by mode; owns the context. */
static rmc_status_t vtyped_complete(vtyped_t *v, rmci_mode_t mode, struct rmc_request *q,
                                    rmc_request_h *req, int local_tgt)
{
    rmc_status_t st;
    if (mode == RMCI_NB_REQUEST) {
        q->nmpi = 0;
        q->cb_buf = v->ctx;
        q->on_complete = rmci_nb_flush_local;
        q->win = v->ctx->win;
        if (v->unpack) {
            v->ctx->unpack = 2;
            v->ctx->segs = v->segs;
            v->ctx->seglen = v->seglen;
            v->ctx->nsegs = v->nseg;
            q->on_complete = rmci_nb_unpack;
        }
        rmc_status_t st = rmci_mark_req(v->r, v->proc, rmci_skind(v->kind, v->type), v->range, q);
        *req = q; /* handed out (waitable) also when the fall-back flush failed */
        return st;
    }
    if (mode == RMCI_NB_IMPLICIT && v->buf) /* with a buffer, unpack <=> a get */
        st = rmci_strided_complete_temp(rmci_skind(v->kind, v->type), v->r, v->proc, v->range);
    else
        st = rmci_strided_complete(rmci_skind(v->kind, v->type), mode, v->r, v->proc, v->range,
                                   local_tgt);
    if (st == RMC_OK && v->unpack)
        vtyped_unpack(v);
    free(v->ctx);
    return st;
}

/* sc: the scan of iov (validate's, or vscan_list's). */
static rmc_status_t remote_typed(int kind, rmc_acc_type_t type, const void *scale,
                                 const rmc_iov_t *iov, int len, int proc, rmci_mode_t mode,
                                 rmc_request_h *req, size_t total, size_t nseg, rmci_region_t *r,
                                 rmc_strided_method_t m, const vscan_t *sc)
{
    vtyped_t v = {.kind = kind,
                  .type = type,
                  .scale = scale,
                  .iov = iov,
                  .len = len,
                  .proc = proc,
                  .total = total,
                  .nseg = nseg,
                  .r = r};
    int local_tgt = RMCI.local_index[proc] >= 0;
    if (local_tgt)
        mode = RMCI_BLOCKING;
    vtyped_base(&v, sc);
    /* a dense local side is its own packed form (a scaled accumulate still needs the copy) */
    v.need_buf = (kind == SK_ACC && !rmci_acc_scale_is_one(type, scale)) ||
                 (m == RMC_STRIDED_PACK && !v.ldense);
    v.unpack = kind == SK_GET && v.need_buf;
    rmc_status_t st = vtyped_alloc(&v, mode);
    struct rmc_request *q = NULL;
    if (st == RMC_OK) {
        vtyped_layout(&v);
        RMCI_STAT(remote_ops, 1);
        st = rmci_order(r, proc, rmci_skind(kind, type), v.range);
    }
    if (st == RMC_OK && mode == RMCI_NB_REQUEST && !(q = rmci_req_alloc()))
        st = rmci_fail(RMC_ERR_NOMEM, "vector transfer", "no memory for a request");
    if (st == RMC_OK) {
        st = vtyped_issue(&v);
        if (st != RMC_OK)
            rmci_flush(r, proc); /* whatever was issued must not outlive the buffers */
    }
    vtyped_free_arrays(&v);
    if (m == RMC_STRIDED_PACK)
        RMCI_SSTAT(pack_ops);
    else
        RMCI_SSTAT(datatype_ops);
    if (kind == SK_ACC)
        RMCI_SSTAT(mpi_acc_ops);
    if (st != RMC_OK) {
        if (q)
            rmci_req_release(q);
        free(v.ctx);
        return st;
    }
    return vtyped_complete(&v, mode, q, req, local_tgt);
}

/* Whether the written side (put/acc: remote, get: local) has overlapping segments: 0 no, 1 yes,
 * 2 only exact repeats (segments at one address with one length) when `dups` asks for them: then
 * *dups holds every segment sorted by address, repeats in list order (the caller frees it). A list
 * in ascending address order (ga-compat's scatters, most patch lists: sc->wsorted, the scan of
 * iov) needs nothing more; any other is copied and sorted. */
static int written_overlap(const rmc_iov_t *iov, int len, size_t nseg, const vscan_t *sc,
                           int *nomem, span_t **dups)
{
    if (sc->wsorted)
        return 0;
    span_t *sp = rmci_malloc(2 * nseg * sizeof(*sp));
    if (!sp) {
        *nomem = 1;
        return 1;
    }
    size_t s = 0;
    for (int j = 0; j < len; j++)
        for (int i = 0; i < iov[j].count; i++, s++)
            sp[s] = (span_t){(uintptr_t)iov[j].dst[i], iov[j].bytes, iov[j].src[i]};
    spans_sort(sp, sp + nseg, nseg);
    int ov = 0, exact = 1;
    for (size_t i = 1; i < nseg; i++)
        if (sp[i - 1].off + sp[i - 1].len > sp[i].off) {
            ov = 1;
            exact &= sp[i - 1].off == sp[i].off && sp[i - 1].len == sp[i].len;
        }
    if (ov && exact && dups) {
        *dups = sp;
        return 2;
    }
    free(sp);
    return ov;
}

/* A put or accumulate whose only overlaps are repeated segments (a GA scatter's repeated
 * subscripts through ARMCI_PutV / ARMCI_AccV), typed instead of one MPI operation per segment.
 * A put sends each address once, from its last segment in list order: which write of a repeated
 * address lands is undefined for a vector put (strided.h), and the last is what a node-local target
 * keeps. An accumulate goes in rounds, the k-th segment of every address in round k (each round
 * one ascending list without repeats), so every segment is still added on its own, in an order MPI
 * leaves open as it does for the list protocol; more than RMCI_ACC_ROUNDS rounds: *done = 0 and
 * nothing moved. A request-based accumulate completes locally before returning (*req stays
 * RMC_REQUEST_NULL). sp: written_overlap's sorted spans, all of `bytes` bytes. */
#define RMCI_ACC_ROUNDS 8
static rmc_status_t remote_repeats(int kind, rmc_acc_type_t type, const void *scale,
                                   const span_t *sp, size_t nseg, size_t bytes, int proc,
                                   rmci_mode_t mode, rmc_request_h *req, rmci_region_t *one,
                                   rmc_strided_method_t m, int *done);

static rmc_status_t remote_vector(int kind, rmc_acc_type_t type, const void *scale,
                                  const rmc_iov_t *iov, int len, int proc, rmci_mode_t mode,
                                  rmc_request_h *req, size_t total, size_t nseg, rmci_region_t *one,
                                  const vscan_t *sc);
static rmc_status_t remote_copied(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                                  int len, int proc, size_t total, size_t nseg, rmci_region_t *one);

static rmc_status_t vfront(int kind, rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                           int len, int proc, rmci_mode_t mode, rmc_request_h *req, const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT(fn);
    RMCI_POLL();
    RMCI_CHECK_RANK(fn, proc);
    size_t es = 1, al = 1;
    if (kind == SK_ACC) {
        es = rmci_acc_esize(type);
        if (!es)
            return rmci_fail(RMC_ERR_TYPE, fn, "unknown accumulate type %d", (int)type);
        al = rmci_acc_align(type);
    }
    if (!iov)
        return rmci_fail(RMC_ERR_ARG, fn, "NULL descriptor array");
    if (len < 1)
        return rmci_fail(RMC_ERR_STRIDE, fn, "%d descriptors (at least 1)", len);
    size_t total = 0, nseg = 0;
    rmci_region_t *one = NULL;
    int rw_meet = 0;
    vscan_t sc;
    char why[160];
    rmc_status_t st =
        validate(kind, al, es, iov, len, proc, &total, &nseg, &one, &rw_meet, &sc, why, sizeof why);
    if (st != RMC_OK)
        return rmci_fail(st, fn, "bad vector descriptor for rank %d (%s): %s", proc,
                         rmc_status_string(st), why);
    /* all remote segments of one call are equally node-local (same proc) */
    rmci_target_t t = {0};
    rmci_resolve(proc, REM(kind, iov, 0), iov[0].bytes, &t);
    int local = kind == SK_ACC ? !rmci_acc_use_mpi(t.region, proc) : t.local != NULL;
    if (local) {
        st = local_vector(kind, type, scale, iov, len, proc, total, rw_meet, fn);
        if (st == RMC_OK)
            rmci_strided_count(kind, total);
        return st;
    }
    if (total > (size_t)INT_MAX || nseg > (size_t)INT_MAX)
        return rmci_fail(RMC_ERR_TOO_BIG, fn, "%zu bytes in %zu segments (limit 2^31)", total,
                         nseg);
    if (kind == SK_ACC && rw_meet)
        st = remote_copied(type, scale, iov, len, proc, total, nseg, one);
    else
        st = remote_vector(kind, type, scale, iov, len, proc, mode, req, total, nseg, one, &sc);
    if (st == RMC_OK)
        rmci_strided_count(kind, total);
    return st == RMC_OK ? st : rmci_in(st, fn);
}

/* The MPI paths of a vector operation: the list protocol, or one datatype / packed transfer when
 * every remote segment is in one region and no two written segments overlap. */
static rmc_status_t remote_vector(int kind, rmc_acc_type_t type, const void *scale,
                                  const rmc_iov_t *iov, int len, int proc, rmci_mode_t mode,
                                  rmc_request_h *req, size_t total, size_t nseg, rmci_region_t *one,
                                  const vscan_t *sc)
{
    rmc_strided_method_t m = rmci_strided_method();
    if (m == RMC_STRIDED_AUTO)
        m = rmci_vector_auto(kind, total / nseg, nseg);
    if (m != RMC_STRIDED_LIST && one) {
        int nomem = 0;
        span_t *sp = NULL;
        int ov =
            written_overlap(iov, len, nseg, sc, &nomem, kind != SK_GET && sc->onesize ? &sp : NULL);
        if (!ov)
            return remote_typed(kind, type, scale, iov, len, proc, mode, req, total, nseg, one, m,
                                sc);
        if (ov == 2) {
            int done = 1;
            rmc_status_t st = remote_repeats(kind, type, scale, sp, nseg, iov[0].bytes, proc, mode,
                                             req, one, m, &done);
            free(sp);
            if (done)
                return st;
        }
        if (nomem)
            return rmci_fail(RMC_ERR_NOMEM, "vector transfer", "overlap check of %zu segments",
                             nseg);
    }
    return remote_list(kind, type, scale, iov, len, proc, mode, req, total, nseg, one);
}

static rmc_status_t remote_repeats(int kind, rmc_acc_type_t type, const void *scale,
                                   const span_t *sp, size_t nseg, size_t bytes, int proc,
                                   rmci_mode_t mode, rmc_request_h *req, rmci_region_t *one,
                                   rmc_strided_method_t m, int *done)
{
    /* round of each segment: its occurrence among its address's segments (puts: one round) */
    size_t cnt[RMCI_ACC_ROUNDS] = {0}, nr = 1;
    unsigned char *round = kind == SK_ACC ? rmci_malloc(nseg) : NULL;
    if (kind == SK_ACC && !round)
        return rmci_fail(RMC_ERR_NOMEM, "vector transfer",
                         "the %zu segments of an accumulate with repeated destinations", nseg);
    for (size_t i = 0, k = 0; kind == SK_ACC && i < nseg; i++) {
        k = i > 0 && sp[i - 1].off == sp[i].off ? k + 1 : 0;
        if (k >= RMCI_ACC_ROUNDS) {
            free(round);
            *done = 0; /* an address repeated that often: the list protocol */
            return RMC_OK;
        }
        round[i] = (unsigned char)k;
        cnt[k]++;
        nr = k + 1 > nr ? k + 1 : nr;
    }
    void **src = rmci_malloc(2 * nseg * sizeof(void *));
    if (!src) {
        free(round);
        return rmci_fail(RMC_ERR_NOMEM, "vector transfer",
                         "the %zu segments of a vector with repeated destinations", nseg);
    }
    void **dst = src + nseg;
    size_t at[RMCI_ACC_ROUNDS] = {0};
    for (size_t k = 1; k < nr; k++)
        at[k] = at[k - 1] + cnt[k - 1];
    for (size_t i = 0; i < nseg; i++) {
        size_t k = 0;
        if (round)
            k = round[i];
        else if (i + 1 < nseg && sp[i + 1].off == sp[i].off)
            continue; /* a put: a later segment writes this address */
        src[at[k]] = (void *)(uintptr_t)sp[i].src;
        dst[at[k]++] = (void *)sp[i].off;
    }
    if (kind == SK_ACC && mode == RMCI_NB_REQUEST)
        mode = RMCI_BLOCKING;
    rmc_status_t st = RMC_OK;
    for (size_t k = 0, b = 0; k < nr && st == RMC_OK; k++) {
        size_t n = at[k] - b;
        rmc_iov_t u = {.src = src + b, .dst = dst + b, .count = (int)n, .bytes = bytes};
        vscan_t usc;
        vscan_list(kind, &u, 1, &usc);
        st = remote_typed(kind, type, scale, &u, 1, proc, mode, req, n * bytes, n, one, m, &usc);
        b = at[k];
    }
    free(src);
    free(round);
    return st;
}

/* An accumulate through MPI into this process's own memory whose source overlaps what it writes:
 * its MPI operations (segments, chunks) each read the source when applied, so the source is
 * copied first and every segment adds what was there before the call (as local_vector does).
 * Blocking: node-local targets complete at once on the MPI paths too. */
static rmc_status_t remote_copied(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                                  int len, int proc, size_t total, size_t nseg, rmci_region_t *one)
{
    char *tmp = malloc(total);
    void **src = malloc(nseg * sizeof(*src));
    rmc_iov_t *civ = malloc((size_t)len * sizeof(*civ));
    rmc_status_t st = RMC_OK;
    if (!tmp || !src || !civ) {
        st = rmci_fail(RMC_ERR_NOMEM, "vector transfer",
                       "%zu bytes to copy a source that overlaps the destination first", total);
    } else {
        size_t off = 0, k = 0;
        for (int j = 0; j < len; j++) {
            civ[j] = iov[j];
            civ[j].src = &src[k];
            for (int i = 0; i < iov[j].count; i++, k++, off += iov[j].bytes) {
                memcpy(tmp + off, iov[j].src[i], iov[j].bytes);
                src[k] = tmp + off;
            }
        }
        vscan_t csc;
        vscan_list(SK_ACC, civ, len, &csc);
        st = remote_vector(SK_ACC, type, scale, civ, len, proc, RMCI_BLOCKING, NULL, total, nseg,
                           one, &csc);
    }
    free(civ);
    free(src);
    free(tmp);
    return st;
}

rmc_status_t rmc_put_vector(const rmc_iov_t *iov, int len, int proc)
{
    RMCI_SERIAL();
    return vfront(SK_PUT, 0, NULL, iov, len, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_get_vector(const rmc_iov_t *iov, int len, int proc)
{
    RMCI_SERIAL();
    return vfront(SK_GET, 0, NULL, iov, len, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_acc_vector(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov, int len,
                            int proc)
{
    RMCI_SERIAL();
    return vfront(SK_ACC, type, scale, iov, len, proc, RMCI_BLOCKING, NULL, __func__);
}

rmc_status_t rmc_put_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return vfront(SK_PUT, 0, NULL, iov, len, proc, RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_get_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return vfront(SK_GET, 0, NULL, iov, len, proc, RMCI_NB_MODE(req), req, __func__);
}

rmc_status_t rmc_acc_vector_nb(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                               int len, int proc, rmc_request_h *req)
{
    RMCI_SERIAL();
    return vfront(SK_ACC, type, scale, iov, len, proc, RMCI_NB_MODE(req), req, __func__);
}
