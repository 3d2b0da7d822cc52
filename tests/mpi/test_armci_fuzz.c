/* ARMCI API: seeded random differential test. Every rank runs a random sequence of contiguous,
 * strided and vector put / get / accumulate (blocking and non-blocking), fences, waits and
 * read-modify-writes on ARMCI_Malloc'd memory, writing only its own slot of each process's segment
 * (no races), and keeps a local shadow of what each of its slots must hold. Only what ARMCI
 * promises is checked: a blocking get returns the data of the caller's earlier blocking puts /
 * accumulates to that location (location consistency); non-blocking writes are waited and fenced
 * before the location is read again; non-blocking gets are checked once waited. At each phase end
 * (waits, WaitAll, AllFence or not, Barrier) every process checks its own segment by direct loads.
 *
 * Environment: ARMCI_FUZZ_SEED (default: a few fixed seeds), ARMCI_FUZZ_OPS (ops per phase),
 * ARMCI_FUZZ_PHASES, ARMCI_FUZZ_KINDS (bit mask of op kinds, for minimizing), ARMCI_FUZZ_TRACE=1
 * (print every op), ARMCI_FUZZ_STRICT=1 (fence before every read of a written target). */
#include "armcitest.h"
#include <complex.h>
#include <stdint.h>

/* ---- slot layout: regions of one element type each ---- */
enum { R_BYTE, R_INT, R_LNG, R_FLT, R_DBL, R_DCP, R_BIG, NREG };
typedef struct {
    int off, esz, n, acc; /* acc: ARMCI_ACC_* or -1 */
} region_t;
static region_t reg_[NREG] = {
    {0, 1, 1024, -1},
    {1024, 4, 64, ARMCI_ACC_INT},
    {1280, 8, 64, ARMCI_ACC_LNG},
    {1792, 4, 64, ARMCI_ACC_FLT},
    {2048, 8, 64, ARMCI_ACC_DBL},
    {2560, 16, 32, ARMCI_ACC_DCP},
    {3200, 1, 70000, -1}, /* large transfers */
};
#define RMW_OFF 3072 /* 8 ints, then 8 longs */
#define NRMW    8
#define SLOT    73200
#define MAXPEND 16

enum {
    K_PUT,
    K_GET,
    K_ACC,
    K_PUTS,
    K_GETS,
    K_ACCS,
    K_PUTV,
    K_GETV,
    K_ACCV,
    K_NBPUT,
    K_NBGET,
    K_NBPUTS,
    K_NBACCS,
    K_WAIT,
    K_WAITPROC,
    K_WAITALL,
    K_FENCE,
    K_ALLFENCE,
    K_RMW,
    NKIND
};
static const char *kname_[NKIND] = {"Put",     "Get",    "Acc",      "PutS", "GetS",
                                    "AccS",    "PutV",   "GetV",     "AccV", "NbPut",
                                    "NbGet",   "NbPutS", "NbAccS",   "Wait", "WaitProc",
                                    "WaitAll", "Fence",  "AllFence", "Rmw"};

static uint64_t rng_;
static unsigned rnd(unsigned n)
{
    return (unsigned)(mpitest_xorshift(&rng_) >> 33) % n;
}

static void **seg_;
static unsigned char (*shadow_)[SLOT]; /* shadow_[t]: my slot at t */
static int trace_, strict_;
static unsigned kinds_;
static int ok_;
static long seed_, phase_, opi_;

/* a pending non-blocking op */
typedef struct {
    int used, target, write, explicit_h, done_local;
    armci_hdl_t h;
    unsigned char *buf, *base; /* local buffer (source of writes, destination of gets) */
    unsigned char *expect;     /* gets: expected buffer contents */
    int buflen;
    unsigned char mask[SLOT]; /* bytes touched in the slot */
} pend_t;
static pend_t pend_[MAXPEND];

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "[rank %d] seed %ld phase %ld op %ld: ", me_, seed_, phase_, opi_);        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        ok_ = 0;                                                                                   \
    } while (0)

static unsigned char *remote(int t, int off)
{
    return (unsigned char *)seg_[t] + (size_t)me_ * SLOT + off;
}

/* ---- geometry: a strided patch inside a region, in elements ---- */
typedef struct {
    int levels, count[3], rst[2], lst[2]; /* counts: count[0] in elements here; strides elements */
    int rstart;                           /* element index of the remote start */
    int lext;                             /* local extent in elements */
} geom_t;

static int extent(const int *c, const int *st, int lv)
{
    int e = c[0];
    for (int i = 0; i < lv; i++)
        e += (c[i + 1] - 1) * st[i];
    return e;
}

static void pick_geom(const region_t *r, geom_t *g, int maxlevels)
{
    for (;;) {
        g->levels = (int)rnd((unsigned)maxlevels + 1);
        g->count[0] = 1 + (int)rnd(r->esz == 1 ? (r->n > 2000 ? 3000 : 24) : 6);
        g->count[1] = g->levels >= 1 ? 1 + (int)rnd(4) : 1;
        g->count[2] = g->levels >= 2 ? 1 + (int)rnd(3) : 1;
        for (int pass = 0; pass < 2; pass++) {
            int *st = pass ? g->lst : g->rst;
            if (g->levels == 2 && rnd(3) == 0) { /* not nested: level 2 stride the smaller */
                st[1] = g->count[0] + (int)rnd(4);
                st[0] = (g->count[2] - 1) * st[1] + g->count[0] + (int)rnd(4);
            } else {
                st[0] = g->count[0] + (int)rnd(4);
                st[1] = (g->count[1] - 1) * st[0] + g->count[0] + (int)rnd(4);
            }
        }
        int re = extent(g->count, g->rst, g->levels);
        g->lext = extent(g->count, g->lst, g->levels);
        if (re <= r->n) {
            g->rstart = (int)rnd((unsigned)(r->n - re + 1));
            return;
        }
    }
}

/* element offsets (in elements) of the patch: calls f(remote_el, local_el) per element */
#define FOR_PATCH(g, RE, LE, ...)                                                                  \
    for (int k2_ = 0; k2_ < (g)->count[2]; k2_++)                                                  \
        for (int k1_ = 0; k1_ < (g)->count[1]; k1_++)                                              \
            for (int k0_ = 0; k0_ < (g)->count[0]; k0_++) {                                        \
                int RE = (g)->rstart + k0_ + k1_ * (g)->rst[0] + k2_ * (g)->rst[1];                \
                int LE = k0_ + k1_ * (g)->lst[0] + k2_ * (g)->lst[1];                              \
                __VA_ARGS__                                                                        \
            }

/* a random small-integer value of the region's type */
static void rand_elem(const region_t *r, unsigned char *p)
{
    int v = (int)rnd(201) - 100;
    switch (r - reg_) {
    case R_BYTE:
        *p = (unsigned char)rnd(256);
        break;
    case R_INT: {
        int x = v;
        memcpy(p, &x, 4);
    } break;
    case R_LNG: {
        long x = v * 100000L;
        memcpy(p, &x, 8);
    } break;
    case R_FLT: {
        float x = (float)v;
        memcpy(p, &x, 4);
    } break;
    case R_DBL: {
        double x = v;
        memcpy(p, &x, 8);
    } break;
    case R_DCP: {
        double x[2] = {v, (double)((int)rnd(201) - 100)};
        memcpy(p, x, 16);
    } break;
    }
}

typedef union {
    int i;
    long l;
    float f;
    double d;
    double z[2];
} scale_t;

static void rand_scale(int acc, scale_t *s)
{
    int v = (int)rnd(7) - 3;
    switch (acc) {
    case ARMCI_ACC_INT:
        s->i = v;
        break;
    case ARMCI_ACC_LNG:
        s->l = v;
        break;
    case ARMCI_ACC_FLT:
        s->f = (float)v;
        break;
    case ARMCI_ACC_DBL:
        s->d = v;
        break;
    case ARMCI_ACC_DCP:
        s->z[0] = v;
        s->z[1] = (double)((int)rnd(5) - 2);
        break;
    }
}

/* dst += scale * src, one element */
static void acc_elem(int acc, const scale_t *s, unsigned char *dst, const unsigned char *src)
{
    switch (acc) {
    case ARMCI_ACC_INT: {
        int a, b;
        memcpy(&a, dst, 4);
        memcpy(&b, src, 4);
        a += s->i * b;
        memcpy(dst, &a, 4);
    } break;
    case ARMCI_ACC_LNG: {
        long a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a += s->l * b;
        memcpy(dst, &a, 8);
    } break;
    case ARMCI_ACC_FLT: {
        float a, b;
        memcpy(&a, dst, 4);
        memcpy(&b, src, 4);
        a += s->f * b;
        memcpy(dst, &a, 4);
    } break;
    case ARMCI_ACC_DBL: {
        double a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a += s->d * b;
        memcpy(dst, &a, 8);
    } break;
    case ARMCI_ACC_DCP: {
        double a[2], b[2];
        memcpy(a, dst, 16);
        memcpy(b, src, 16);
        a[0] += s->z[0] * b[0] - s->z[1] * b[1];
        a[1] += s->z[0] * b[1] + s->z[1] * b[0];
        memcpy(dst, a, 16);
    } break;
    }
}

static int npend(void)
{
    int n = 0;
    for (int i = 0; i < MAXPEND; i++)
        n += pend_[i].used;
    return n;
}

/* an op completed locally: gets are checked, write sources scribbled (reusable now) */
static void local_done(pend_t *p)
{
    if (p->done_local)
        return;
    p->done_local = 1;
    if (!p->write) {
        if (memcmp(p->buf, p->expect, (size_t)p->buflen) != 0) {
            int i = 0;
            while (p->buf[i] == p->expect[i])
                i++;
            FAIL("NbGet from %d: buffer byte %d is %02x, expected %02x", p->target, i, p->buf[i],
                 p->expect[i]);
        }
        free(p->base);
        free(p->expect);
        p->used = 0;
    } else {
        memset(p->buf, 0xEE, (size_t)p->buflen);
    }
}

static void release_write(pend_t *p)
{
    free(p->base);
    p->used = 0;
}

/* after ARMCI_Fence(t) (t < 0: all): locally complete writes to t are complete at t */
static void fenced(int t)
{
    for (int i = 0; i < MAXPEND; i++)
        if (pend_[i].used && pend_[i].write && pend_[i].done_local &&
            (t < 0 || pend_[i].target == t))
            release_write(&pend_[i]);
}

static void wait_one(pend_t *p)
{
    if (p->explicit_h)
        ARMCI_LOCAL_OK(ok_, ARMCI_Wait(&p->h));
    else
        ARMCI_LOCAL_OK(ok_, ARMCI_WaitProc(p->target));
    local_done(p);
}

/* every pending op to t is waited and fenced */
static void settle(int t)
{
    if (trace_)
        fprintf(stderr, "[rank %d]   settle %d\n", me_, t);
    for (int i = 0; i < MAXPEND; i++)
        if (pend_[i].used && pend_[i].target == t)
            wait_one(&pend_[i]);
    ARMCI_Fence(t);
    fenced(t);
}

/* before touching `mask` at t: writes must not meet pending gets or writes; reads must not meet
 * pending writes */
static void make_room(int t, const unsigned char *mask, int writing)
{
    for (int i = 0; i < MAXPEND; i++) {
        pend_t *p = &pend_[i];
        if (!p->used || p->target != t || (!writing && !p->write))
            continue;
        for (int b = 0; b < SLOT; b++)
            if (mask[b] && p->mask[b]) {
                settle(t);
                return;
            }
    }
}

static pend_t *new_pend(int t, int write, int buflen)
{
    if (npend() >= MAXPEND) {
        for (int i = 0; i < MAXPEND; i++)
            if (pend_[i].used)
                wait_one(&pend_[i]);
        ARMCI_AllFence();
        fenced(-1);
    }
    for (int i = 0; i < MAXPEND; i++)
        if (!pend_[i].used) {
            pend_t *p = &pend_[i];
            memset(p, 0, sizeof *p);
            p->used = 1;
            p->target = t;
            p->write = write;
            p->explicit_h = (int)rnd(3) != 0;
            ARMCI_INIT_HANDLE(&p->h);
            p->buflen = buflen;
            p->base = malloc((size_t)buflen + 8);
            p->buf = p->base + rnd(8); /* ARMCI puts no alignment on local buffers */
            return p;
        }
    abort();
}

static int written_[64]; /* targets written since their last fence (strict mode) */

static void before_read(int t, const unsigned char *mask)
{
    make_room(t, mask, 0);
    if (strict_ && written_[t]) {
        ARMCI_Fence(t);
        fenced(t);
        written_[t] = 0;
    }
}

/* ---- one random op ---- */
static void one_op(void)
{
    int kind;
    do
        kind = (int)rnd(NKIND);
    while (!(kinds_ & (1u << kind)));
    int t = (int)rnd((unsigned)np_);
    int ri = (int)rnd(NREG);
    if (kind == K_ACC || kind == K_ACCS || kind == K_ACCV || kind == K_NBACCS)
        ri = 1 + (int)rnd(R_DCP);
    const region_t *r = &reg_[ri];
    unsigned char mask[SLOT];
    if (trace_)
        fprintf(stderr, "[rank %d] op %ld: %s t=%d region=%d\n", me_, opi_, kname_[kind], t, ri);

    switch (kind) {
    case K_WAIT: {
        int i = (int)rnd(MAXPEND);
        if (pend_[i].used && pend_[i].explicit_h && !pend_[i].done_local) {
            ARMCI_LOCAL_OK(ok_, ARMCI_Wait(&pend_[i].h));
            local_done(&pend_[i]);
        }
        return;
    }
    case K_WAITPROC:
        ARMCI_LOCAL_OK(ok_, ARMCI_WaitProc(t));
        for (int i = 0; i < MAXPEND; i++)
            if (pend_[i].used && !pend_[i].explicit_h && pend_[i].target == t)
                local_done(&pend_[i]);
        return;
    case K_WAITALL:
        ARMCI_LOCAL_OK(ok_, ARMCI_WaitAll());
        for (int i = 0; i < MAXPEND; i++)
            if (pend_[i].used && !pend_[i].explicit_h)
                local_done(&pend_[i]);
        return;
    case K_FENCE:
        ARMCI_Fence(t);
        fenced(t);
        written_[t] = 0;
        return;
    case K_ALLFENCE:
        ARMCI_AllFence();
        fenced(-1);
        memset(written_, 0, sizeof written_);
        return;
    case K_RMW: {
        int w = (int)rnd(NRMW), op = (int)rnd(4), val = (int)rnd(2001) - 1000;
        int islong = op == ARMCI_FETCH_AND_ADD_LONG || op == ARMCI_SWAP_LONG;
        int off = RMW_OFF + (islong ? NRMW * 4 + w * 8 : w * 4);
        unsigned char *sh = shadow_[t] + off;
        if (!islong) {
            int old, loc = val, nv;
            memcpy(&old, sh, 4);
            ARMCI_LOCAL_OK(ok_, ARMCI_Rmw(op, &loc, remote(t, off), val, t));
            if (loc != old)
                FAIL("Rmw %d on %d word %d returned %d, expected %d", op, t, w, loc, old);
            nv = op == ARMCI_SWAP ? val : old + val;
            memcpy(sh, &nv, 4);
        } else {
            long old, loc = val * 1000003L, nv, sw = loc;
            memcpy(&old, sh, 8);
            ARMCI_LOCAL_OK(ok_, ARMCI_Rmw(op, &loc, remote(t, off), val, t));
            if (loc != old)
                FAIL("Rmw %d on %d long %d returned %ld, expected %ld", op, t, w, loc, old);
            nv = op == ARMCI_SWAP_LONG ? sw : old + val;
            memcpy(sh, &nv, 8);
        }
        return;
    }
    default:
        break;
    }

    int e = r->esz;
    int writing = !(kind == K_GET || kind == K_GETS || kind == K_GETV || kind == K_NBGET);
    int isacc = kind == K_ACC || kind == K_ACCS || kind == K_ACCV || kind == K_NBACCS;
    scale_t sc;
    if (isacc)
        rand_scale(r->acc, &sc);

    if (kind == K_PUTV || kind == K_GETV || kind == K_ACCV) {
        /* 1..3 descriptors, disjoint element chunks */
        int nd = 1 + (int)rnd(3);
        armci_giov_t iov[3];
        void *ptrs[3][2][4];
        unsigned char *lbase = malloc((size_t)r->n * e * 4 + 64), *lbuf = lbase + rnd(8);
        unsigned char *used = calloc((size_t)r->n, 1);
        int lpos = 0, nseg = 0;
        struct {
            int rel, lb, len;
        } segs[12];
        memset(mask, 0, SLOT);
        for (int d = 0; d < nd; d++) {
            int k = 1 + (int)rnd(e == 1 ? (r->n > 2000 ? 2000 : 16) : 4), len = 1 + (int)rnd(4),
                m = 0;
            for (int s = 0; s < len; s++) {
                for (int tries = 0; tries < 20; tries++) {
                    int st = (int)rnd((unsigned)(r->n - k + 1)), clash = 0;
                    for (int x = 0; x < k; x++)
                        clash |= used[st + x];
                    if (clash)
                        continue;
                    memset(used + st, 1, (size_t)k);
                    segs[nseg].rel = st;
                    segs[nseg].lb = lpos;
                    segs[nseg].len = k;
                    unsigned char *rp = remote(t, r->off + st * e), *lp = lbuf + (size_t)lpos * e;
                    ptrs[d][0][m] = writing ? (void *)lp : (void *)rp;
                    ptrs[d][1][m] = writing ? (void *)rp : (void *)lp;
                    memset(mask + r->off + st * e, 1, (size_t)k * e);
                    lpos += k + (int)rnd(3);
                    nseg++;
                    m++;
                    break;
                }
            }
            if (m == 0) { /* could not place: fall back to one element not used */
                nd = d;
                break;
            }
            iov[d].src_ptr_array = ptrs[d][0];
            iov[d].dst_ptr_array = ptrs[d][1];
            iov[d].bytes = k * e;
            iov[d].ptr_array_len = m;
        }
        free(used);
        if (nd == 0) {
            free(lbase);
            return;
        }
        if (writing) {
            make_room(t, mask, 1);
            written_[t] = 1;
            for (int s = 0; s < nseg; s++)
                for (int x = 0; x < segs[s].len; x++)
                    rand_elem(r, lbuf + (size_t)(segs[s].lb + x) * e);
            if (kind == K_PUTV)
                ARMCI_LOCAL_OK(ok_, ARMCI_PutV(iov, nd, t));
            else
                ARMCI_LOCAL_OK(ok_, ARMCI_AccV(r->acc, &sc, iov, nd, t));
            for (int s = 0; s < nseg; s++)
                for (int x = 0; x < segs[s].len; x++) {
                    unsigned char *sh = shadow_[t] + r->off + (segs[s].rel + x) * e;
                    unsigned char *src = lbuf + (size_t)(segs[s].lb + x) * e;
                    if (isacc)
                        acc_elem(r->acc, &sc, sh, src);
                    else
                        memcpy(sh, src, (size_t)e);
                }
        } else {
            before_read(t, mask);
            memset(lbuf, 0xA5, (size_t)lpos * e);
            ARMCI_LOCAL_OK(ok_, ARMCI_GetV(iov, nd, t));
            for (int s = 0; s < nseg; s++)
                if (memcmp(lbuf + (size_t)segs[s].lb * e, shadow_[t] + r->off + segs[s].rel * e,
                           (size_t)segs[s].len * e) != 0)
                    FAIL("GetV from %d region %d elems %d+%d differ from shadow", t, ri,
                         segs[s].rel, segs[s].len);
        }
        free(lbase);
        return;
    }

    /* contiguous and strided */
    geom_t g;
    int strided =
        kind == K_PUTS || kind == K_GETS || kind == K_ACCS || kind == K_NBPUTS || kind == K_NBACCS;
    pick_geom(r, &g, strided ? 2 : 0);
    if (!strided)
        g.levels = 0, g.count[1] = g.count[2] = 1;
    if (!strided && rnd(4) == 0) { /* longer contiguous transfers too */
        g.count[0] = 1 + (int)rnd((unsigned)r->n);
        g.rstart = (int)rnd((unsigned)(r->n - g.count[0] + 1));
        g.lext = g.count[0];
    }
    int lbytes = g.lext * e;
    memset(mask, 0, SLOT);
    FOR_PATCH(&g, re, le, {
        (void)le;
        memset(mask + r->off + re * e, 1, (size_t)e);
    })
    int cnt[3] = {g.count[0] * e, g.count[1], g.count[2]};
    int rst[2] = {g.rst[0] * e, g.rst[1] * e}, lst[2] = {g.lst[0] * e, g.lst[1] * e};
    unsigned char *rp = remote(t, r->off + g.rstart * e);
    int nb = kind >= K_NBPUT && kind <= K_NBACCS;
    if (trace_)
        fprintf(stderr, "[rank %d]   start %d levels %d count %d,%d,%d rst %d,%d lst %d,%d\n", me_,
                g.rstart, g.levels, cnt[0], cnt[1], cnt[2], rst[0], rst[1], lst[0], lst[1]);

    if (writing) {
        make_room(t, mask, 1);
        written_[t] = 1;
        pend_t *p = nb ? new_pend(t, 1, lbytes) : NULL;
        unsigned char *lbase = nb ? NULL : malloc((size_t)lbytes + 8);
        unsigned char *lbuf = nb ? p->buf : lbase + rnd(8);
        memset(lbuf, 0x5A, (size_t)lbytes);
        FOR_PATCH(&g, re, le, {
            (void)re;
            rand_elem(r, lbuf + (size_t)le * e);
        })
        armci_hdl_t *h = nb && p->explicit_h ? &p->h : NULL;
        switch (kind) {
        case K_PUT:
            ARMCI_LOCAL_OK(ok_, ARMCI_Put(lbuf, rp, cnt[0], t));
            break;
        case K_ACC:
            ARMCI_LOCAL_OK(ok_, ARMCI_Acc(r->acc, &sc, lbuf, rp, cnt[0], t));
            break;
        case K_PUTS:
            ARMCI_LOCAL_OK(ok_, ARMCI_PutS(lbuf, lst, rp, rst, cnt, g.levels, t));
            break;
        case K_ACCS:
            ARMCI_LOCAL_OK(ok_, ARMCI_AccS(r->acc, &sc, lbuf, lst, rp, rst, cnt, g.levels, t));
            break;
        case K_NBPUT:
            ARMCI_LOCAL_OK(ok_, ARMCI_NbPut(lbuf, rp, cnt[0], t, h));
            break;
        case K_NBPUTS:
            ARMCI_LOCAL_OK(ok_, ARMCI_NbPutS(lbuf, lst, rp, rst, cnt, g.levels, t, h));
            break;
        case K_NBACCS:
            ARMCI_LOCAL_OK(ok_, ARMCI_NbAccS(r->acc, &sc, lbuf, lst, rp, rst, cnt, g.levels, t, h));
            break;
        }
        FOR_PATCH(&g, re, le, {
            unsigned char *sh = shadow_[t] + r->off + re * e;
            if (isacc)
                acc_elem(r->acc, &sc, sh, lbuf + (size_t)le * e);
            else
                memcpy(sh, lbuf + (size_t)le * e, (size_t)e);
        })
        if (nb) {
            memcpy(p->mask, mask, SLOT);
        } else {
            memset(lbuf, 0xEE, (size_t)lbytes); /* source reusable on return */
            free(lbase);
        }
    } else {
        before_read(t, mask);
        pend_t *p = nb ? new_pend(t, 0, lbytes) : NULL;
        unsigned char *lbase = nb ? NULL : malloc((size_t)lbytes + 8);
        unsigned char *lbuf = nb ? p->buf : lbase + rnd(8);
        unsigned char *exp = malloc((size_t)lbytes);
        memset(lbuf, 0xA5, (size_t)lbytes);
        memset(exp, 0xA5, (size_t)lbytes);
        FOR_PATCH(&g, re, le,
                  { memcpy(exp + (size_t)le * e, shadow_[t] + r->off + re * e, (size_t)e); })
        switch (kind) {
        case K_GET:
            ARMCI_LOCAL_OK(ok_, ARMCI_Get(rp, lbuf, cnt[0], t));
            break;
        case K_GETS:
            ARMCI_LOCAL_OK(ok_, ARMCI_GetS(rp, rst, lbuf, lst, cnt, g.levels, t));
            break;
        case K_NBGET:
            ARMCI_LOCAL_OK(ok_, ARMCI_NbGet(rp, lbuf, cnt[0], t, p->explicit_h ? &p->h : NULL));
            break;
        }
        if (nb) {
            p->expect = exp;
            memcpy(p->mask, mask, SLOT);
        } else {
            if (memcmp(lbuf, exp, (size_t)lbytes) != 0) {
                int i = 0;
                while (lbuf[i] == exp[i])
                    i++;
                FAIL("%s from %d region %d start %d: local byte %d is %02x, expected %02x",
                     kname_[kind], t, ri, g.rstart, i, lbuf[i], exp[i]);
            }
            free(lbase);
            free(exp);
        }
    }
}

static void phase_end(void)
{
    for (int i = 0; i < MAXPEND; i++)
        if (pend_[i].used)
            wait_one(&pend_[i]);
    ARMCI_WaitAll();
    if (rnd(2)) /* else ARMCI_Barrier alone completes every rank's operations */
        ARMCI_AllFence();
    fenced(-1);
    memset(written_, 0, sizeof written_);
    ARMCI_Barrier();
    /* shadow_[t] goes to t: what slot me of t's segment must hold */
    unsigned char *want = malloc((size_t)np_ * SLOT);
    MPI_Alltoall(shadow_, SLOT, MPI_BYTE, want, SLOT, MPI_BYTE, MPI_COMM_WORLD);
    ARMCI_Access_begin(seg_[me_]);
    const unsigned char *m = seg_[me_];
    for (int s = 0; s < np_; s++)
        for (int i = 0; i < SLOT; i++)
            if (m[(size_t)s * SLOT + i] != want[(size_t)s * SLOT + i]) {
                FAIL("phase end: my segment, slot of %d, byte %d is %02x, expected %02x", s, i,
                     m[(size_t)s * SLOT + i], want[(size_t)s * SLOT + i]);
                break;
            }
    ARMCI_Access_end(seg_[me_]);
    free(want);
    ARMCI_Barrier();
}

static long envl(const char *n, long d)
{
    const char *v = getenv(n);
    return v && *v ? strtol(v, NULL, 0) : d;
}

static void run_seed(long seed, long phases, long ops)
{
    seed_ = seed;
    rng_ = 0x9E3779B97F4A7C15ull * (uint64_t)(seed + 1) + 7919u * (uint64_t)(me_ + 1);
    for (int i = 0; i < 10; i++)
        rnd(2);
    seg_ = armcitest_malloc((armci_size_t)np_ * SLOT);
    shadow_ = calloc((size_t)np_, SLOT);
    ARMCI_Access_begin(seg_[me_]);
    memset(seg_[me_], 0, (size_t)np_ * SLOT);
    ARMCI_Access_end(seg_[me_]);
    ARMCI_Barrier();
    for (phase_ = 0; phase_ < phases; phase_++) {
        for (opi_ = 0; opi_ < ops; opi_++)
            one_op();
        opi_ = -1;
        phase_end();
        ARMCI_CHECK_ALL(ok_);
    }
    free(shadow_);
    armcitest_free(seg_);
}

static void test_fuzz(void **state)
{
    (void)state;
    trace_ = (int)envl("ARMCI_FUZZ_TRACE", 0);
    strict_ = (int)envl("ARMCI_FUZZ_STRICT", 0);
    kinds_ = (unsigned)envl("ARMCI_FUZZ_KINDS", (1L << NKIND) - 1);
    long phases = envl("ARMCI_FUZZ_PHASES", 3), ops = envl("ARMCI_FUZZ_OPS", 150);
    ok_ = 1;
    assert_true(np_ <= 64);
    if (getenv("ARMCI_FUZZ_SEED")) {
        run_seed(envl("ARMCI_FUZZ_SEED", 1), phases, ops);
    } else {
        static const long seeds[] = {1, 12345};
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
            run_seed(seeds[i], phases, ops);
    }
}

ARMCITEST_MAIN("armci_fuzz", test_fuzz)
