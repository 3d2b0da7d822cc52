/* Seeded randomized consistency fuzz of the comm layer (location consistency, completion).
 *
 * Every rank is an origin. In every target's part of two regions (A: rmc_region_alloc, B:
 * rmc_region_reserve) each origin owns a slot of SLOT bytes, so origins never race. Each origin
 * runs a seeded random sequence of operations on its own slots on every target (self included):
 * contiguous put / get / accumulate, strided (1-3 levels, random strides, random protocol),
 * 2-D, vector (segments in both regions), atomics, each blocking, non-blocking with a request
 * (waited later, out of order, with rmc_wait, rmc_wait_all or rmc_test loops) or with an implicit
 * handle (completed by rmc_fence / rmc_fence_all / rmc_barrier), and fences. A shadow holds what
 * each slot must contain in ISSUE ORDER (comm.h / strided.h: operations of one origin to
 * overlapping locations of one target are observed in issue order by that origin; amo.h: atomics
 * ordered after earlier puts / gets and before later ones). Gets (and fetched values) are checked
 * against the shadow as of their issue, when their completion makes their data defined. At every
 * phase end (rmc_barrier) each target compares its part with the shadows of every origin, by
 * loads.
 *
 * Slot layout: [0, IZ) bytes of any kind (random bytes, int64 / int32 accumulates, atomics: int32
 * and int64 additions of the same bytes, which do not commute, without a fence between them);
 * [IZ, SLOT) doubles only (every value a small integer: double accumulates are exact).
 *
 * Rules the harness keeps (what the headers demand of callers): a non-blocking source is not
 * touched until completion (each operation owns its buffers); at most one outstanding atomic per
 * word (non-blocking atomics are not ordered with each other, amo.h); put / get vector
 * destinations do not overlap.
 *
 * Environment: RMC_FUZZ_SEED (default 12345), RMC_FUZZ_OPS (ops per origin, default 3000),
 * RMC_FUZZ_PHASES (default 4), RMC_FUZZ_TRACE=1 (print each executed op), RMC_FUZZ_ORIGIN=o and
 * RMC_FUZZ_KEEP=file (only origin o runs, only the op indices listed in the file: minimization),
 * RMC_FUZZ_RECYCLE=0 (never free and re-create region B at even phase ends, which is otherwise
 * done with requests on it still live), RMC_FUZZ_WEAK=1 (before an operation, wait for every
 * outstanding request-based operation of the same target: only what the weakest reading of
 * comm.h promises), RMC_FUZZ_AMO_UNORDERED=1 (probe: skip the one-outstanding-atomic-per-word
 * rule), RMC_FUZZ_SABOTAGE=i (self-test: corrupt the shadow after op i; the run must fail).
 * Also mixed in: bursts of small scattered writes to one pair (more ranges than the conflict
 * tracking records), and blocking operations whose local side is this rank's own region memory. */
#include "mpitest.h"
#include <math.h>
#include <rmc/strided.h>
#include <rmc/amo.h>

#define SLOT 6144
#define IZ   4096 /* [0, IZ): bytes; [IZ, SLOT): doubles */
#define NREG 2

static int me, n;
static void **bases[NREG];
static rmc_region_h regs[NREG];
static unsigned char *shadow; /* [NREG][n][SLOT]: my slots on every target */
static int trace, weak, recycle;
static int amo_unordered; /* RMC_FUZZ_AMO_UNORDERED=1: do not wait for an outstanding atomic on the
                           * word before the next (beyond what amo.h promises: probes the
                           * implementation's ordering) */
static int sabotage = -1; /* RMC_FUZZ_SABOTAGE=i: corrupt the shadow after op i (self-test) */

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    for (int r = 0; r < NREG; r++) {
        bases[r] = calloc((size_t)n, sizeof(void *));
        if (!bases[r])
            return -1;
    }
    if (rmc_region_alloc((size_t)n * SLOT, bases[0], &regs[0]) != RMC_OK ||
        rmc_region_reserve((size_t)n * SLOT, bases[1], &regs[1]) != RMC_OK)
        return -1;
    void *p;
    if (rmc_region_local(regs[1], me, &p) != RMC_OK ||
        rmc_region_commit(regs[1], p, (size_t)n * SLOT) != RMC_OK)
        return -1;
    shadow = calloc((size_t)NREG * (size_t)n, SLOT);
    return shadow ? 0 : -1;
}

static int teardown(void **state)
{
    int bad = 0;
    for (int r = NREG - 1; r >= 0; r--) {
        bad |= rmc_region_free(regs[r]) != RMC_OK;
        free(bases[r]);
    }
    free(shadow);
    return mpitest_teardown_rmc(state) || bad ? -1 : 0;
}

static char *slot(int reg, int t)
{
    return (char *)bases[reg][t] + (size_t)me * SLOT;
}
static unsigned char *shd(int reg, int t)
{
    return shadow + ((size_t)reg * (size_t)n + (size_t)t) * SLOT;
}

/* ------------------------------------------------------------------------- random --- */

static uint64_t rng;
static uint64_t rnd(void)
{
    return mpitest_splitmix(&rng);
}
static size_t rn(size_t k) /* [0, k) */
{
    return k ? (size_t)(rnd() % k) : 0;
}
static uint64_t hash2(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* --------------------------------------------------------------------------- ops --- */

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
    K_AMO,
    K_WAIT,
    K_WAITALL,
    K_TEST,
    K_FENCE,
    K_FENCEALL,
    K_NKINDS
};
static const char *kname[] = {"put",   "get",     "acc",   "put_s", "get_s",
                              "acc_s", "put_v",   "get_v", "acc_v", "amo",
                              "wait",  "waitall", "test",  "fence", "fence_all"};
enum { M_BLOCK, M_REQ, M_IMPL };
static const char *mname[] = {"blocking", "nb-req", "nb-implicit"};
enum { A_FADD, A_CAS, A_SWAP, A_ADD, A_FXOR, A_LOAD, A_FADD32, A_CAS32, A_NAMO };
static const char *aname[] = {"fetch_add_i64", "cas_i64",  "swap_i64",      "add_i64",
                              "fetch_xor_u64", "load_i64", "fetch_add_i32", "cas_i32"};

#define MAXSEG  8
#define MAXDESC 3

typedef struct op {
    int kind, mode, tgt, reg;
    int dbl;         /* double zone (D) */
    int accty;       /* RMC_ACC_INT64 / INT32 / DOUBLE */
    int64_t iscale;  /* accumulate scale (0: NULL, i.e. 1) */
    int use2d;       /* strided through the 2-D call */
    int method;      /* strided / vector protocol */
    size_t off, len; /* contiguous (remote offset in slot) */
    int levels, count[3], rstr[2], lstr[2];
    int ndesc, nseg[MAXDESC], segreg[MAXDESC][MAXSEG];
    size_t segb[MAXDESC], segoff[MAXDESC][MAXSEG], segloc[MAXDESC][MAXSEG];
    int amo;
    int64_t aval, acmp;
    int cmp_hit; /* CAS: compare with the current value */
    int lreg;    /* >= 0: blocking op whose local buffer is my own slot of region
                  * lreg on myself, at loff (region memory as the local side) */
    size_t loff;
    int ref[8], nref; /* wait / waitall / test: indices of ops */
    uint64_t seed;
} op_t;

static op_t *ops;
static int nops;

/* extent of a strided patch given strides */
static size_t sext(const int *count, const int *str, int levels)
{
    size_t e = (size_t)count[0];
    for (int k = 0; k < levels; k++)
        e += (size_t)str[k] * (size_t)(count[k + 1] - 1);
    return e;
}

/* Random strides for count (al: alignment of strides): valid (>= extent below when count > 1). */
static void gen_strides(int *str, const int *count, int levels, size_t al, size_t slack)
{
    for (int k = 0; k < levels; k++) {
        size_t below = sext(count, str, k);
        if (count[k + 1] == 1 && rn(4) == 0) {
            str[k] = (int)(al * rn(below / al + 1)); /* any stride is valid for one block */
            continue;
        }
        size_t s = below + rn(slack + 1);
        s = (s + al - 1) / al * al;
        str[k] = (int)s;
    }
}

static size_t pick_len(size_t max)
{
    size_t l;
    switch (rn(4)) {
    case 0:
        l = 1 + rn(16);
        break;
    case 1:
        l = 1 + rn(128);
        break;
    case 2:
        l = 1 + rn(1024);
        break;
    default:
        l = 1 + rn(max);
        break;
    }
    return l > max ? max : l;
}

static size_t hot_off[8];
static size_t pick_off(size_t zone_lo, size_t zone_hi, size_t len, size_t al)
{
    size_t span = zone_hi - zone_lo - len; /* len <= zone size */
    size_t o;
    if (rn(2)) { /* near a recent offset: overlap often */
        long h = (long)hot_off[rn(8)] + (long)rn(64) - (long)rn(64);
        if (h < (long)zone_lo)
            h = (long)zone_lo;
        if (h > (long)(zone_lo + span))
            h = (long)(zone_lo + span);
        o = (size_t)h;
    } else {
        o = zone_lo + rn(span + 1);
    }
    o = o / al * al;
    if (o < zone_lo)
        o += al;
    hot_off[rn(8)] = o;
    return o;
}

static int pending_gen[65536], npending_gen; /* op indices with a request (generation view) */

static void gen_strided(op_t *o)
{
    int acc = o->kind == K_ACCS;
    o->dbl = (acc && rn(2)) || rn(4) == 0;
    size_t al = 1;
    if (acc)
        o->accty = o->dbl ? RMC_ACC_DOUBLE : (rn(3) == 0 ? RMC_ACC_INT32 : RMC_ACC_INT64);
    if (o->dbl && o->kind != K_GETS)
        al = 8;
    else if (acc)
        al = rmc_acc_type_size((rmc_acc_type_t)o->accty);
    size_t zlo = o->dbl ? IZ : 0, zhi = o->dbl ? SLOT : IZ;
    o->use2d = rn(5) == 0;
    o->levels = o->use2d ? 1 : (int)rn(4); /* 0..3 -> 0..2 levels (3 capped) */
    if (o->levels > 2)
        o->levels = 2;
    for (;;) {
        o->count[0] = (int)(al * (1 + rn(64 / al + 1)));
        if (rn(6) == 0)
            o->count[0] = (int)(al * (1 + rn(400 / al)));
        for (int k = 1; k <= o->levels; k++)
            o->count[k] = 1 + (int)rn(k == 1 ? 8 : 4);
        gen_strides(o->rstr, o->count, o->levels, al, 48);
        gen_strides(o->lstr, o->count, o->levels, al, 48);
        if (o->use2d && o->count[1] == 1)
            o->rstr[0] = o->lstr[0] = o->count[0]; /* (2-D: ld ignored for one row) */
        size_t e = sext(o->count, o->rstr, o->levels);
        if (e <= zhi - zlo) {
            o->off = pick_off(zlo, zhi, e, al);
            break;
        }
    }
    if (o->kind == K_ACCS)
        o->iscale = rn(3) ? (int64_t)rn(4) : 0;
    o->method = (int)rn(4);
}

static int seg_overlap(size_t a, size_t al_, size_t b, size_t bl)
{
    return a < b + bl && b < a + al_;
}

static void gen_vector(op_t *o)
{
    int acc = o->kind == K_ACCV;
    o->dbl = (acc && rn(2)) || rn(4) == 0;
    if (acc)
        o->accty = o->dbl ? RMC_ACC_DOUBLE : (rn(3) == 0 ? RMC_ACC_INT32 : RMC_ACC_INT64);
    size_t al = (o->dbl && o->kind != K_GETV) ? 8
                : acc                         ? rmc_acc_type_size((rmc_acc_type_t)o->accty)
                                              : 1;
    size_t zlo = o->dbl ? IZ : 0, zhi = o->dbl ? SLOT : IZ;
    o->ndesc = 1 + (int)rn(MAXDESC);
    size_t loc = 0;
    for (int j = 0; j < o->ndesc; j++) {
        o->segb[j] = al * (1 + rn(96 / al));
        o->nseg[j] = 1 + (int)rn(MAXSEG);
        for (int i = 0; i < o->nseg[j]; i++) {
            int tries = 0;
        again:
            o->segreg[j][i] = (int)rn(NREG);
            o->segoff[j][i] = pick_off(zlo, zhi, o->segb[j], al);
            if (o->kind == K_PUTV) { /* written (remote) side: no overlap */
                for (int jj = 0; jj <= j; jj++)
                    for (int ii = 0; ii < (jj == j ? i : o->nseg[jj]); ii++)
                        if (o->segreg[jj][ii] == o->segreg[j][i] &&
                            seg_overlap(o->segoff[jj][ii], o->segb[jj], o->segoff[j][i],
                                        o->segb[j])) {
                            if (++tries < 50)
                                goto again;
                            o->nseg[j] = i; /* give up: fewer segments */
                            if (o->nseg[j] == 0) {
                                o->nseg[j] = 1; /* first segment never conflicts with itself */
                                i = 0;
                            }
                            goto next_desc;
                        }
            }
            /* local side: disjoint, in a shuffled-ish order with gaps */
            loc = (loc + al - 1) / al * al;
            o->segloc[j][i] = loc;
            loc += o->segb[j] + rn(8) * al;
        }
    next_desc:;
    }
    if (acc)
        o->iscale = rn(3) ? (int64_t)rn(4) : 0;
    o->method = (int)rn(4);
}

static void generate(uint64_t seed, int nop)
{
    rng = hash2(seed, (uint64_t)me);
    ops = calloc((size_t)nop, sizeof(op_t));
    nops = nop;
    npending_gen = 0;
    static const int weights[K_NKINDS] = {14, 12, 8, 6, 5, 4, 3, 3, 3, 12, 8, 2, 3, 2, 1};
    int wsum = 0;
    for (int k = 0; k < K_NKINDS; k++)
        wsum += weights[k];
    for (int i = 0; i < nop; i++) {
        op_t *o = &ops[i];
        o->seed = rnd();
        int w = (int)rn((size_t)wsum), k = 0;
        while (w >= weights[k])
            w -= weights[k++];
        if ((k == K_WAIT || k == K_WAITALL || k == K_TEST) && npending_gen == 0)
            k = K_PUT;
        /* bursts: many small scattered writes to one (region, target), more outstanding ranges
         * than the conflict tracking records, with small gets of some of them in between */
        static int burst_left, burst_tgt, burst_reg, nbo;
        static size_t burst_off[32];
        if (!burst_left && rn(40) == 0) {
            burst_left = 8 + (int)rn(17);
            burst_tgt = (int)rn((size_t)n);
            burst_reg = (int)rn(NREG);
            nbo = 0;
        }
        int in_burst = burst_left > 0;
        if (in_burst) {
            burst_left--;
            size_t r = rn(10);
            k = r < 4 ? K_PUT : r < 6 ? K_ACC : r < 9 ? K_GET : K_AMO;
        }
        o->kind = k;
        o->tgt = (int)rn((size_t)n);
        o->reg = (int)rn(NREG);
        int r = (int)rn(10);
        o->mode = r < 5 ? M_BLOCK : r < 8 ? M_REQ : M_IMPL;
        switch (k) {
        case K_PUT:
        case K_GET:
            o->dbl = rn(4) == 0;
            if (o->dbl && k == K_PUT) {
                o->len = 8 * (1 + rn((SLOT - IZ) / 8 / (rn(3) ? 8 : 1)));
                o->off = pick_off(IZ, SLOT, o->len, 8);
            } else {
                size_t zlo = o->dbl ? IZ : 0, zhi = o->dbl ? SLOT : IZ;
                o->len = pick_len(zhi - zlo);
                o->off = pick_off(zlo, zhi, o->len, 1);
            }
            break;
        case K_ACC:
            o->dbl = rn(2);
            o->accty = o->dbl ? RMC_ACC_DOUBLE : (rn(3) == 0 ? RMC_ACC_INT32 : RMC_ACC_INT64);
            {
                size_t es = rmc_acc_type_size((rmc_acc_type_t)o->accty);
                size_t zlo = o->dbl ? IZ : 0, zhi = o->dbl ? SLOT : IZ;
                o->len = es * (1 + rn(pick_len(zhi - zlo) / es + 1));
                if (o->len > zhi - zlo)
                    o->len = zhi - zlo;
                o->off = pick_off(zlo, zhi, o->len, es);
            }
            o->iscale = rn(3) ? (int64_t)rn(4) : 0;
            break;
        case K_PUTS:
        case K_GETS:
        case K_ACCS:
            gen_strided(o);
            break;
        case K_PUTV:
        case K_GETV:
        case K_ACCV:
            gen_vector(o);
            break;
        case K_AMO:
            o->amo = (int)rn(A_NAMO);
            o->mode = rn(2) ? M_BLOCK : M_REQ;
            {
                size_t w = (o->amo == A_FADD32 || o->amo == A_CAS32) ? 4 : 8;
                o->off = pick_off(0, IZ, w, w);
            }
            o->aval = (int64_t)(rn(3) ? rn(1000) : rnd());
            o->cmp_hit = rn(3) != 0;
            o->acmp = (int64_t)rnd();
            break;
        case K_WAIT:
        case K_TEST: {
            size_t p = rn((size_t)npending_gen);
            o->ref[0] = pending_gen[p];
            o->nref = 1;
            pending_gen[p] = pending_gen[--npending_gen];
            break;
        }
        case K_WAITALL:
            o->nref = 0;
            while (npending_gen && o->nref < 1 + (int)rn(8)) {
                size_t p = rn((size_t)npending_gen);
                o->ref[o->nref++] = pending_gen[p];
                pending_gen[p] = pending_gen[--npending_gen];
            }
            break;
        default:
            break;
        }
        if (in_burst) {
            o->tgt = burst_tgt;
            o->reg = burst_reg;
            if (k == K_PUT || k == K_GET || k == K_ACC) {
                o->dbl = 0;
                size_t es = 1;
                if (k == K_ACC) {
                    o->accty = rn(2) ? RMC_ACC_INT64 : RMC_ACC_INT32;
                    es = rmc_acc_type_size((rmc_acc_type_t)o->accty);
                }
                o->len = es * (1 + rn(k == K_PUT ? 24 : 3));
                if (k == K_GET && nbo && rn(4)) {
                    size_t b = burst_off[rn((size_t)nbo)];
                    o->off = b > 4 ? b - rn(5) : b;
                    o->len = 1 + rn(32);
                    if (o->off + o->len > IZ)
                        o->len = IZ - o->off;
                } else {
                    o->off = es * rn((IZ - o->len) / es + 1);
                    if (nbo < 32)
                        burst_off[nbo++] = o->off;
                }
            }
        }
        o->lreg = -1;
        if (o->mode == M_BLOCK && (k <= K_ACC || (k >= K_PUTS && k <= K_ACCS)) && rn(4) == 0) {
            int get = k == K_GET || k == K_GETS;
            size_t lext = k <= K_ACC ? o->len : sext(o->count, o->lstr, o->levels);
            size_t al = 1;
            if (k == K_ACC || k == K_ACCS)
                al = rmc_acc_type_size((rmc_acc_type_t)o->accty);
            else if (o->dbl && !get)
                al = 8;
            /* a put / accumulate reads its zone's kind of data; a get writes bytes: I zone */
            size_t zlo = (o->dbl && !get) ? IZ : 0, zhi = (o->dbl && !get) ? SLOT : IZ;
            if (lext <= zhi - zlo) {
                o->lreg = (int)rn(NREG);
                o->loff = pick_off(zlo, zhi, lext, al);
            }
        }
        if (k <= K_AMO && o->mode == M_REQ && npending_gen < 65536)
            pending_gen[npending_gen++] = i;
    }
}

/* ----------------------------------------------------------------------- data --- */

/* Source data of op i: random bytes, or in the double zone small integer doubles. */
static void fill_src(const op_t *o, unsigned char *p, size_t len, int dbl)
{
    if (dbl) {
        for (size_t j = 0; j + 8 <= len; j += 8) {
            double v = (double)((int)(hash2(o->seed, j) % 129) - 64);
            memcpy(p + j, &v, 8);
        }
    } else {
        for (size_t j = 0; j < len; j++)
            p[j] = (unsigned char)hash2(o->seed, j);
    }
}

/* Applies one accumulate element to the shadow. */
static void acc_elem(int type, int64_t iscale, unsigned char *dst, const unsigned char *src)
{
    int64_t s = iscale ? iscale : 1;
    if (type == RMC_ACC_INT64) {
        uint64_t a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a += (uint64_t)s * b;
        memcpy(dst, &a, 8);
    } else if (type == RMC_ACC_INT32) {
        uint32_t a, b;
        memcpy(&a, dst, 4);
        memcpy(&b, src, 4);
        a += (uint32_t)s * b;
        memcpy(dst, &a, 4);
    } else {
        double a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a += (double)s * b;
        memcpy(dst, &a, 8);
    }
}

static void scale_arg(const op_t *o, void *buf, const void **scale)
{
    if (!o->iscale) {
        *scale = NULL;
        return;
    }
    if (o->accty == RMC_ACC_INT64) {
        int64_t v = o->iscale;
        memcpy(buf, &v, 8);
    } else if (o->accty == RMC_ACC_INT32) {
        int32_t v = (int32_t)o->iscale;
        memcpy(buf, &v, 4);
    } else {
        double v = (double)o->iscale;
        memcpy(buf, &v, 8);
    }
    *scale = buf;
}

/* ------------------------------------------------------------------ execution --- */

/* What completion of an operation must do: check a get's buffer, free buffers. */
typedef struct comp {
    int op;
    int tgt;
    unsigned char *buf, *exp; /* get: received buffer and expected contents (n bytes) */
    size_t nb;
    unsigned char *src; /* source buffer to scribble and free */
    size_t srclen;
    int64_t *fetched; /* atomic */
    int64_t fexp;
    int fw;       /* fetched width (0: none) */
    int word_reg; /* atomic word (for the one-outstanding rule) */
    size_t word_off;
    void *extra; /* iov arrays */
    rmc_request_h h;
    int live; /* request outstanding */
} comp_t;

static comp_t *comps;   /* [nops] */
static int *implicit_l; /* op indices completed by fences */
static int nimplicit;
static int failures;
static int first_fail_op = -1;

static void describe(int i, char *b, size_t bl);

static void fail_op(int i, const char *what)
{
    char d[512];
    describe(i, d, sizeof d);
    fprintf(stderr, "[rank %d] FUZZ FAIL op %d: %s -- %s\n", me, i, what, d);
    failures++;
    if (first_fail_op < 0)
        first_fail_op = i;
}

static void complete(int i)
{
    comp_t *c = &comps[i];
    if (c->exp && memcmp(c->buf, c->exp, c->nb) != 0) {
        size_t j = 0;
        while (c->buf[j] == c->exp[j])
            j++;
        size_t nd = 0, last = j;
        for (size_t k = j; k < c->nb; k++)
            if (c->buf[k] != c->exp[k]) {
                nd++;
                last = k;
            }
        char m[256];
        snprintf(
            m, sizeof m,
            "data mismatch: %zu of %zu local bytes differ, first at local %zu (got 0x%02x want "
            "0x%02x), last at %zu",
            nd, c->nb, j, c->buf[j], c->exp[j], last);
        fail_op(i, m);
    }
    if (c->fw) {
        int64_t got = *c->fetched;
        if (c->fw == 4) {
            int32_t g32;
            memcpy(&g32, c->fetched, 4);
            got = (int64_t)(uint32_t)g32;
        }
        if (got != c->fexp) {
            char m[128];
            snprintf(m, sizeof m, "fetched 0x%llx, want 0x%llx", (unsigned long long)got,
                     (unsigned long long)c->fexp);
            fail_op(i, m);
        }
    }
    if (c->src)
        memset(c->src, 0xA5, c->srclen); /* a late read of the source would show */
    free(c->buf);
    free(c->exp);
    free(c->src);
    free(c->fetched);
    free(c->extra);
    c->buf = c->exp = c->src = NULL;
    c->fetched = NULL;
    c->extra = NULL;
    c->fw = 0;
    c->live = 0;
}

static void check_st(int i, rmc_status_t st, const char *call)
{
    if (st != RMC_OK) {
        char m[256];
        snprintf(m, sizeof m, "%s -> %s (%s)", call, rmc_status_string(st), rmc_last_error());
        fail_op(i, m);
    }
}

static void wait_one(int i, int how)
{
    comp_t *c = &comps[i];
    if (!c->live)
        return;
    if (how == 1) { /* rmc_test loop */
        int done = 0;
        for (int k = 0; !done && k < 100000; k++) {
            rmc_status_t st = rmc_test(&c->h, &done);
            if (st != RMC_OK) {
                check_st(i, st, "rmc_test");
                done = 1;
            }
        }
        if (!done)
            check_st(i, rmc_wait(&c->h), "rmc_wait after test");
    } else {
        check_st(i, rmc_wait(&c->h), "rmc_wait");
    }
    if (c->h != RMC_REQUEST_NULL)
        fail_op(i, "request not NULL after completion");
    complete(i);
}

/* completes the implicit operations to target t (-1: all) after a fence */
static void implicit_done(int t)
{
    int o = 0;
    for (int k = 0; k < nimplicit; k++) {
        int i = implicit_l[k];
        if (t < 0 || comps[i].tgt == t)
            complete(i);
        else
            implicit_l[o++] = i;
    }
    nimplicit = o;
}

/* Registers an issued operation's completion by mode and request. */
static void issued(int i, int mode, rmc_request_h h, rmc_status_t st)
{
    comp_t *c = &comps[i];
    if (st != RMC_OK) {
        complete(i);
        return;
    }
    if (mode == M_BLOCK || (mode == M_REQ && h == RMC_REQUEST_NULL)) {
        complete(i);
    } else if (mode == M_REQ) {
        c->h = h;
        c->live = 1;
    } else {
        implicit_l[nimplicit++] = i;
        c->live = 0;
    }
}

/* Waits for outstanding request operations to target t (weak mode) and, for atomics, for the
 * outstanding atomic on the same word. */
static void before_op(int i)
{
    op_t *o = &ops[i];
    if (weak) {
        for (int k = 0; k < i; k++)
            if (comps[k].live && ops[k].kind <= K_AMO && ops[k].tgt == o->tgt)
                wait_one(k, 0);
        (void)rmc_fence_all();
        implicit_done(-1);
    }
    if (o->kind == K_AMO && !amo_unordered)
        for (int k = 0; k < i; k++)
            if (comps[k].live && ops[k].kind == K_AMO && ops[k].tgt == o->tgt &&
                ops[k].reg == o->reg && (ops[k].off / 8) == (o->off / 8))
                wait_one(k, 0);
}

static int kept(int i);

/* chunk iteration of a strided patch */
#define FOR_CHUNKS(o, ro, lo)                                                                      \
    for (int i2_ = 0; i2_ < ((o)->levels >= 2 ? (o)->count[2] : 1); i2_++)                         \
        for (int i1_ = 0; i1_ < ((o)->levels >= 1 ? (o)->count[1] : 1); i1_++)                     \
            for (size_t ro = (size_t)i1_ * (size_t)((o)->levels >= 1 ? (o)->rstr[0] : 0) +         \
                             (size_t)i2_ * (size_t)((o)->levels >= 2 ? (o)->rstr[1] : 0),          \
                        lo = (size_t)i1_ * (size_t)((o)->levels >= 1 ? (o)->lstr[0] : 0) +         \
                             (size_t)i2_ * (size_t)((o)->levels >= 2 ? (o)->lstr[1] : 0),          \
                        once_ = 1;                                                                 \
                 once_; once_ = 0)

/* A blocking contiguous / strided operation whose local side is my own slot of region lreg on
 * myself (plain memory RMC may also reach): its source is what the shadow says is there; a get
 * writes there (checked by loads, then the shadow of that slot follows). */
static void exec_inreg(int i)
{
    op_t *o = &ops[i];
    comp_t *c = &comps[i];
    c->tgt = o->tgt;
    int strided = o->kind >= K_PUTS;
    if (strided)
        rmc_strided_method_set((rmc_strided_method_t)o->method);
    int kind = strided ? o->kind - K_PUTS : o->kind; /* 0 put, 1 get, 2 acc */
    op_t cc = *o;                                    /* contiguous as a 0-level patch */
    if (!strided) {
        cc.levels = 0;
        cc.count[0] = (int)o->len;
    }
    size_t lext = sext(cc.count, cc.lstr, cc.levels);
    unsigned char *lsh = shd(o->lreg, me) + o->loff;
    unsigned char *l = (unsigned char *)slot(o->lreg, me) + o->loff;
    unsigned char *rsh = shd(o->reg, o->tgt) + o->off;
    char *rem = slot(o->reg, o->tgt) + o->off;
    size_t rext = sext(cc.count, cc.rstr, cc.levels);
    unsigned char *lsnap = malloc(lext), *rsnap = malloc(rext);
    memcpy(lsnap, lsh, lext);
    memcpy(rsnap, rsh, rext);
    size_t rows = cc.levels >= 1 ? (size_t)cc.count[1] : 1;
    rmc_status_t st;
    if (kind == 1) {
        unsigned char *exp = malloc(lext);
        memcpy(exp, lsnap, lext);
        FOR_CHUNKS(&cc, ro, lo) memcpy(exp + lo, rsnap + ro, (size_t)cc.count[0]);
        if (!strided)
            st = rmc_get(rem, l, o->len, o->tgt);
        else if (o->use2d)
            st = rmc_get_2d(rem, (size_t)o->rstr[0], l, (size_t)o->lstr[0], rows,
                            (size_t)o->count[0], o->tgt);
        else
            st = rmc_get_strided(rem, o->rstr, l, o->lstr, o->count, o->levels, o->tgt);
        c->nb = lext;
        c->buf = malloc(lext);
        memcpy(c->buf, l, lext); /* what the loads see now */
        c->exp = malloc(lext);
        memcpy(c->exp, exp, lext);
        memcpy(lsh, exp, lext);
        free(exp);
    } else if (kind == 0) {
        FOR_CHUNKS(&cc, ro, lo) memcpy(rsh + ro, lsnap + lo, (size_t)cc.count[0]);
        if (!strided)
            st = rmc_put(l, rem, o->len, o->tgt);
        else if (o->use2d)
            st = rmc_put_2d(l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0], rows,
                            (size_t)o->count[0], o->tgt);
        else
            st = rmc_put_strided(l, o->lstr, rem, o->rstr, o->count, o->levels, o->tgt);
    } else {
        size_t es = rmc_acc_type_size((rmc_acc_type_t)o->accty);
        FOR_CHUNKS(&cc, ro, lo)
        for (size_t j = 0; j < (size_t)cc.count[0]; j += es)
            acc_elem(o->accty, o->iscale, rsh + ro + j, lsnap + lo + j);
        unsigned char sb[8];
        const void *scale;
        scale_arg(o, sb, &scale);
        rmc_acc_type_t ty = (rmc_acc_type_t)o->accty;
        if (!strided)
            st = rmc_acc(ty, scale, l, rem, o->len, o->tgt);
        else if (o->use2d)
            st = rmc_acc_2d(ty, scale, l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0], rows,
                            (size_t)o->count[0], o->tgt);
        else
            st = rmc_acc_strided(ty, scale, l, o->lstr, rem, o->rstr, o->count, o->levels, o->tgt);
    }
    free(lsnap);
    free(rsnap);
    check_st(i, st, kname[o->kind]);
    issued(i, M_BLOCK, RMC_REQUEST_NULL, st);
}

static void exec_contig(int i)
{
    op_t *o = &ops[i];
    if (o->lreg >= 0) {
        exec_inreg(i);
        return;
    }
    comp_t *c = &comps[i];
    c->tgt = o->tgt;
    unsigned char *sh = shd(o->reg, o->tgt) + o->off;
    char *rem = slot(o->reg, o->tgt) + o->off;
    rmc_request_h h = RMC_REQUEST_NULL, *hp = o->mode == M_IMPL ? NULL : &h;
    rmc_status_t st;
    if (o->kind == K_PUT || o->kind == K_ACC) {
        c->src = malloc(o->len);
        c->srclen = o->len;
        fill_src(o, c->src, o->len, o->dbl);
        if (o->kind == K_PUT) {
            memcpy(sh, c->src, o->len);
            st = o->mode == M_BLOCK ? rmc_put(c->src, rem, o->len, o->tgt)
                                    : rmc_put_nb(c->src, rem, o->len, o->tgt, hp);
        } else {
            size_t es = rmc_acc_type_size((rmc_acc_type_t)o->accty);
            for (size_t j = 0; j < o->len; j += es)
                acc_elem(o->accty, o->iscale, sh + j, c->src + j);
            unsigned char sb[8];
            const void *scale;
            scale_arg(o, sb, &scale);
            st = o->mode == M_BLOCK
                     ? rmc_acc((rmc_acc_type_t)o->accty, scale, c->src, rem, o->len, o->tgt)
                     : rmc_acc_nb((rmc_acc_type_t)o->accty, scale, c->src, rem, o->len, o->tgt, hp);
        }
        if (o->mode == M_BLOCK) /* reusable at once */
            memset(c->src, 0x5A, o->len);
    } else {
        c->nb = o->len + 16;
        c->buf = malloc(c->nb);
        c->exp = malloc(c->nb);
        memset(c->buf, 0xEE, c->nb);
        memset(c->exp, 0xEE, c->nb);
        memcpy(c->exp + 8, sh, o->len);
        st = o->mode == M_BLOCK ? rmc_get(rem, c->buf + 8, o->len, o->tgt)
                                : rmc_get_nb(rem, c->buf + 8, o->len, o->tgt, hp);
    }
    check_st(i, st, kname[o->kind]);
    issued(i, o->mode, h, st);
}

static void exec_strided(int i)
{
    op_t *o = &ops[i];
    if (o->lreg >= 0) {
        exec_inreg(i);
        return;
    }
    comp_t *c = &comps[i];
    c->tgt = o->tgt;
    rmc_strided_method_set((rmc_strided_method_t)o->method);
    unsigned char *sh = shd(o->reg, o->tgt) + o->off;
    char *rem = slot(o->reg, o->tgt) + o->off;
    size_t lext = sext(o->count, o->lstr, o->levels);
    size_t lb = lext + 16;
    rmc_request_h h = RMC_REQUEST_NULL, *hp = o->mode == M_IMPL ? NULL : &h;
    rmc_status_t st;
    int nb = o->mode != M_BLOCK;
    size_t rows = o->levels >= 1 ? (size_t)o->count[1] : 1;
    if (o->kind == K_GETS) {
        c->nb = lb;
        c->buf = aligned_alloc(16, (lb + 15) / 16 * 16);
        c->exp = malloc(lb);
        memset(c->buf, 0xEE, lb);
        memset(c->exp, 0xEE, lb);
        FOR_CHUNKS(o, ro, lo) memcpy(c->exp + 8 + lo, sh + ro, (size_t)o->count[0]);
        unsigned char *l = c->buf + 8;
        if (o->use2d)
            st = nb ? rmc_get_2d_nb(rem, (size_t)o->rstr[0], l, (size_t)o->lstr[0], rows,
                                    (size_t)o->count[0], o->tgt, hp)
                    : rmc_get_2d(rem, (size_t)o->rstr[0], l, (size_t)o->lstr[0], rows,
                                 (size_t)o->count[0], o->tgt);
        else
            st = nb ? rmc_get_strided_nb(rem, o->rstr, l, o->lstr, o->count, o->levels, o->tgt, hp)
                    : rmc_get_strided(rem, o->rstr, l, o->lstr, o->count, o->levels, o->tgt);
    } else {
        c->srclen = lb;
        c->src = aligned_alloc(16, (lb + 15) / 16 * 16);
        /* the whole local extent holds source-like data; only the patch may travel */
        fill_src(o, c->src, lb, o->dbl);
        unsigned char *l = c->src + 8;
        if (o->kind == K_PUTS) {
            FOR_CHUNKS(o, ro, lo) memcpy(sh + ro, l + lo, (size_t)o->count[0]);
            if (o->use2d)
                st = nb ? rmc_put_2d_nb(l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0], rows,
                                        (size_t)o->count[0], o->tgt, hp)
                        : rmc_put_2d(l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0], rows,
                                     (size_t)o->count[0], o->tgt);
            else
                st = nb ? rmc_put_strided_nb(l, o->lstr, rem, o->rstr, o->count, o->levels, o->tgt,
                                             hp)
                        : rmc_put_strided(l, o->lstr, rem, o->rstr, o->count, o->levels, o->tgt);
        } else {
            size_t es = rmc_acc_type_size((rmc_acc_type_t)o->accty);
            FOR_CHUNKS(o, ro, lo)
            for (size_t j = 0; j < (size_t)o->count[0]; j += es)
                acc_elem(o->accty, o->iscale, sh + ro + j, l + lo + j);
            unsigned char sb[8];
            const void *scale;
            scale_arg(o, sb, &scale);
            rmc_acc_type_t ty = (rmc_acc_type_t)o->accty;
            if (o->use2d)
                st = nb ? rmc_acc_2d_nb(ty, scale, l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0],
                                        rows, (size_t)o->count[0], o->tgt, hp)
                        : rmc_acc_2d(ty, scale, l, (size_t)o->lstr[0], rem, (size_t)o->rstr[0],
                                     rows, (size_t)o->count[0], o->tgt);
            else
                st = nb ? rmc_acc_strided_nb(ty, scale, l, o->lstr, rem, o->rstr, o->count,
                                             o->levels, o->tgt, hp)
                        : rmc_acc_strided(ty, scale, l, o->lstr, rem, o->rstr, o->count, o->levels,
                                          o->tgt);
        }
        if (!nb)
            memset(c->src, 0x5A, lb);
    }
    check_st(i, st, kname[o->kind]);
    issued(i, o->mode, h, st);
}

static void exec_vector(int i)
{
    op_t *o = &ops[i];
    comp_t *c = &comps[i];
    c->tgt = o->tgt;
    rmc_strided_method_set((rmc_strided_method_t)o->method);
    size_t lb = 16;
    for (int j = 0; j < o->ndesc; j++)
        for (int s = 0; s < o->nseg[j]; s++)
            if (o->segloc[j][s] + o->segb[j] + 16 > lb)
                lb = o->segloc[j][s] + o->segb[j] + 16;
    /* iov arrays in one block */
    size_t ptrs = 0;
    for (int j = 0; j < o->ndesc; j++)
        ptrs += 2 * (size_t)o->nseg[j];
    rmc_iov_t *iov = malloc(sizeof(rmc_iov_t) * MAXDESC + ptrs * sizeof(void *));
    void **pp = (void **)(iov + MAXDESC);
    c->extra = iov;
    unsigned char *l;
    if (o->kind == K_GETV) {
        c->nb = lb;
        c->buf = aligned_alloc(16, (lb + 15) / 16 * 16);
        c->exp = malloc(lb);
        memset(c->buf, 0xEE, lb);
        memset(c->exp, 0xEE, lb);
        l = c->buf + 8;
    } else {
        c->srclen = lb;
        c->src = aligned_alloc(16, (lb + 15) / 16 * 16);
        fill_src(o, c->src, lb, o->dbl);
        l = c->src + 8;
    }
    size_t es = o->kind == K_ACCV ? rmc_acc_type_size((rmc_acc_type_t)o->accty) : 1;
    for (int j = 0; j < o->ndesc; j++) {
        iov[j].count = o->nseg[j];
        iov[j].bytes = o->segb[j];
        iov[j].src = pp;
        pp += o->nseg[j];
        iov[j].dst = pp;
        pp += o->nseg[j];
        for (int s = 0; s < o->nseg[j]; s++) {
            char *rem = slot(o->segreg[j][s], o->tgt) + o->segoff[j][s];
            unsigned char *sh = shd(o->segreg[j][s], o->tgt) + o->segoff[j][s];
            unsigned char *lp = l + o->segloc[j][s];
            if (o->kind == K_GETV) {
                iov[j].src[s] = rem;
                iov[j].dst[s] = lp;
                memcpy(c->exp + 8 + o->segloc[j][s], sh, o->segb[j]);
            } else {
                iov[j].src[s] = lp;
                iov[j].dst[s] = rem;
                if (o->kind == K_PUTV)
                    memcpy(sh, lp, o->segb[j]);
                else
                    for (size_t b = 0; b < o->segb[j]; b += es)
                        acc_elem(o->accty, o->iscale, sh + b, lp + b);
            }
        }
    }
    rmc_request_h h = RMC_REQUEST_NULL, *hp = o->mode == M_IMPL ? NULL : &h;
    int nb = o->mode != M_BLOCK;
    rmc_status_t st;
    if (o->kind == K_PUTV)
        st = nb ? rmc_put_vector_nb(iov, o->ndesc, o->tgt, hp)
                : rmc_put_vector(iov, o->ndesc, o->tgt);
    else if (o->kind == K_GETV)
        st = nb ? rmc_get_vector_nb(iov, o->ndesc, o->tgt, hp)
                : rmc_get_vector(iov, o->ndesc, o->tgt);
    else {
        unsigned char sb[8];
        const void *scale;
        scale_arg(o, sb, &scale);
        rmc_acc_type_t ty = (rmc_acc_type_t)o->accty;
        st = nb ? rmc_acc_vector_nb(ty, scale, iov, o->ndesc, o->tgt, hp)
                : rmc_acc_vector(ty, scale, iov, o->ndesc, o->tgt);
    }
    if (!nb && c->src)
        memset(c->src, 0x5A, lb);
    check_st(i, st, kname[o->kind]);
    issued(i, o->mode, h, st);
}

static void exec_amo(int i)
{
    op_t *o = &ops[i];
    comp_t *c = &comps[i];
    c->tgt = o->tgt;
    unsigned char *sh = shd(o->reg, o->tgt) + o->off;
    char *rem = slot(o->reg, o->tgt) + o->off;
    int w = (o->amo == A_FADD32 || o->amo == A_CAS32) ? 4 : 8;
    c->fetched = malloc(8);
    *c->fetched = 0x7777777777777777ll;
    c->fw = w;
    int64_t old;
    uint32_t old32 = 0;
    if (w == 8)
        memcpy(&old, sh, 8);
    else {
        memcpy(&old32, sh, 4);
        old = (int64_t)old32;
    }
    c->fexp = old;
    uint64_t nv = (uint64_t)old;
    int64_t cmp = o->cmp_hit ? old : o->acmp;
    rmc_request_h h = RMC_REQUEST_NULL;
    int nb = o->mode == M_REQ;
    rmc_status_t st;
    int64_t *f = c->fetched;
    switch (o->amo) {
    case A_FADD:
        nv = (uint64_t)old + (uint64_t)o->aval;
        st = nb ? rmc_amo_fetch_add_i64_nb(rem, o->aval, f, o->tgt, &h)
                : rmc_amo_fetch_add_i64(rem, o->aval, f, o->tgt);
        break;
    case A_CAS:
        if (old == cmp)
            nv = (uint64_t)o->aval;
        st = nb ? rmc_amo_cas_i64_nb(rem, cmp, o->aval, f, o->tgt, &h)
                : rmc_amo_cas_i64(rem, cmp, o->aval, f, o->tgt);
        break;
    case A_SWAP:
        nv = (uint64_t)o->aval;
        st = nb ? rmc_amo_swap_i64_nb(rem, o->aval, f, o->tgt, &h)
                : rmc_amo_swap_i64(rem, o->aval, f, o->tgt);
        break;
    case A_ADD:
        nv = (uint64_t)old + (uint64_t)o->aval;
        c->fw = 0;
        st = nb ? rmc_amo_add_i64_nb(rem, o->aval, o->tgt, &h)
                : rmc_amo_add_i64(rem, o->aval, o->tgt);
        break;
    case A_FXOR:
        nv = (uint64_t)old ^ (uint64_t)o->aval;
        st = nb ? rmc_amo_fetch_xor_u64_nb(rem, (uint64_t)o->aval, (uint64_t *)f, o->tgt, &h)
                : rmc_amo_fetch_xor_u64(rem, (uint64_t)o->aval, (uint64_t *)f, o->tgt);
        break;
    case A_LOAD:
        st = rmc_amo_load_i64(rem, f, o->tgt); /* blocking only */
        o->mode = M_BLOCK;
        nb = 0;
        break;
    case A_FADD32:
        nv = (uint32_t)(old32 + (uint32_t)o->aval);
        st = nb ? rmc_amo_fetch_add_i32_nb(rem, (int32_t)o->aval, (int32_t *)f, o->tgt, &h)
                : rmc_amo_fetch_add_i32(rem, (int32_t)o->aval, (int32_t *)f, o->tgt);
        break;
    default: { /* A_CAS32 */
        int32_t c32 = o->cmp_hit ? (int32_t)old32 : (int32_t)o->acmp;
        if ((int32_t)old32 == c32)
            nv = (uint32_t)o->aval;
        st = nb ? rmc_amo_cas_i32_nb(rem, c32, (int32_t)o->aval, (int32_t *)f, o->tgt, &h)
                : rmc_amo_cas_i32(rem, c32, (int32_t)o->aval, (int32_t *)f, o->tgt);
        break;
    }
    }
    if (w == 8)
        memcpy(sh, &nv, 8);
    else {
        uint32_t v = (uint32_t)nv;
        memcpy(sh, &v, 4);
    }
    check_st(i, st, aname[o->amo]);
    issued(i, nb ? M_REQ : M_BLOCK, h, st);
}

static void exec(int i)
{
    op_t *o = &ops[i];
    if (trace) {
        char d[512];
        describe(i, d, sizeof d);
        fprintf(stderr, "[rank %d] op %d: %s\n", me, i, d);
    }
    if (o->kind <= K_AMO)
        before_op(i);
    switch (o->kind) {
    case K_PUT:
    case K_GET:
    case K_ACC:
        exec_contig(i);
        break;
    case K_PUTS:
    case K_GETS:
    case K_ACCS:
        exec_strided(i);
        break;
    case K_PUTV:
    case K_GETV:
    case K_ACCV:
        exec_vector(i);
        break;
    case K_AMO:
        exec_amo(i);
        break;
    case K_WAIT:
        wait_one(o->ref[0], 0);
        break;
    case K_TEST:
        wait_one(o->ref[0], 1);
        break;
    case K_WAITALL: {
        rmc_request_h hs[8];
        int idx[8], m = 0;
        for (int k = 0; k < o->nref; k++)
            if (comps[o->ref[k]].live) {
                idx[m] = o->ref[k];
                hs[m++] = comps[o->ref[k]].h;
            }
        check_st(i, rmc_wait_all(hs, (size_t)m), "rmc_wait_all");
        for (int k = 0; k < m; k++) {
            if (hs[k] != RMC_REQUEST_NULL)
                fail_op(idx[k], "request not NULL after rmc_wait_all");
            comps[idx[k]].h = RMC_REQUEST_NULL;
            complete(idx[k]);
        }
        break;
    }
    case K_FENCE:
        check_st(i, rmc_fence(o->tgt), "rmc_fence");
        implicit_done(o->tgt);
        break;
    case K_FENCEALL:
        check_st(i, rmc_fence_all(), "rmc_fence_all");
        implicit_done(-1);
        break;
    }
}

static void describe(int i, char *b, size_t bl)
{
    op_t *o = &ops[i];
    int w = 0;
#define P(...) (w += snprintf(b + w, (size_t)w < bl ? bl - (size_t)w : 0, __VA_ARGS__))
    P("%s", kname[o->kind]);
    if (o->kind <= K_AMO)
        P(" %s tgt %d reg %c", o->kind == K_AMO ? aname[o->amo] : mname[o->mode], o->tgt,
          'A' + o->reg);
    if (o->kind == K_AMO)
        P(" %s off %zu val %lld%s", mname[o->mode], o->off, (long long)o->aval,
          (o->amo == A_CAS || o->amo == A_CAS32) ? (o->cmp_hit ? " cmp=current" : " cmp=random")
                                                 : "");
    if (o->kind <= K_ACC)
        P(" off %zu len %zu%s", o->off, o->len, o->dbl ? " (doubles)" : "");
    if (o->kind == K_ACC || o->kind == K_ACCS || o->kind == K_ACCV)
        P(" type %s scale %lld",
          o->accty == RMC_ACC_INT64   ? "int64"
          : o->accty == RMC_ACC_INT32 ? "int32"
                                      : "double",
          (long long)(o->iscale ? o->iscale : 1));
    if (o->kind >= K_PUTS && o->kind <= K_ACCS) {
        P(" %s method %d off %zu count {%d", o->use2d ? "2d" : "strided", o->method, o->off,
          o->count[0]);
        for (int k = 1; k <= o->levels; k++)
            P(",%d", o->count[k]);
        P("} rstr {");
        for (int k = 0; k < o->levels; k++)
            P("%s%d", k ? "," : "", o->rstr[k]);
        P("} lstr {");
        for (int k = 0; k < o->levels; k++)
            P("%s%d", k ? "," : "", o->lstr[k]);
        P("} ext %zu", sext(o->count, o->rstr, o->levels));
    }
    if (o->kind >= K_PUTV && o->kind <= K_ACCV) {
        P(" method %d", o->method);
        for (int j = 0; j < o->ndesc; j++) {
            P(" [%zuB:", o->segb[j]);
            for (int s = 0; s < o->nseg[j]; s++)
                P(" %c%zu", 'A' + o->segreg[j][s], o->segoff[j][s]);
            P("]");
        }
    }
    if (o->kind == K_WAIT || o->kind == K_TEST || o->kind == K_WAITALL) {
        P(" ops");
        for (int k = 0; k < o->nref; k++)
            P(" %d", o->ref[k]);
    }
    if (o->kind == K_FENCE)
        P(" tgt %d", o->tgt);
    if (o->kind <= K_ACCS && o->lreg >= 0)
        P(" LOCAL SIDE in my slot of region %c on me at %zu", 'A' + o->lreg, o->loff);
#undef P
}

/* ------------------------------------------------------------------- minimization --- */

static unsigned char *keep; /* NULL: every op */
static int only_origin = -1;

static int kept(int i)
{
    if (only_origin >= 0 && me != only_origin)
        return 0;
    return !keep || keep[i];
}

static void load_keep(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return;
    }
    keep = calloc((size_t)nops, 1);
    int a, b;
    char line[64];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%d-%d", &a, &b) == 2) {
            for (int i = a; i <= b && i < nops; i++)
                if (i >= 0)
                    keep[i] = 1;
        } else if (sscanf(line, "%d", &a) == 1 && a >= 0 && a < nops) {
            keep[a] = 1;
        }
    }
    fclose(f);
}

/* ------------------------------------------------------------------------- phase --- */

/* After rmc_barrier: every target compares its part with every origin's shadows, by loads. */
static int check_parts(const char *when, int nreg)
{
    int ok = 1;
    size_t per = (size_t)NREG * SLOT;
    unsigned char *out = malloc((size_t)n * per), *in = malloc((size_t)n * per);
    for (int t = 0; t < n; t++)
        for (int r = 0; r < NREG; r++)
            memcpy(out + (size_t)t * per + (size_t)r * SLOT, shd(r, t), SLOT);
    MPI_Alltoall(out, (int)per, MPI_BYTE, in, (int)per, MPI_BYTE, MPI_COMM_WORLD);
    for (int o = 0; o < n; o++)
        for (int r = 0; r < nreg; r++) {
            const unsigned char *mine = (unsigned char *)bases[r][me] + (size_t)o * SLOT;
            const unsigned char *want = in + (size_t)o * per + (size_t)r * SLOT;
            if (memcmp(mine, want, SLOT) != 0) {
                size_t j = 0, nd = 0, last = 0;
                while (mine[j] == want[j])
                    j++;
                for (size_t k = j; k < SLOT; k++)
                    if (mine[k] != want[k]) {
                        nd++;
                        last = k;
                    }
                fprintf(stderr,
                        "[rank %d] FUZZ FAIL %s: region %c slot of origin %d: %zu bytes differ, "
                        "first at %zu (have 0x%02x want 0x%02x), last at %zu\n",
                        me, when, 'A' + r, o, nd, j, mine[j], want[j], last);
                ok = 0;
            }
        }
    free(out);
    free(in);
    return ok;
}

static void test_fuzz(void **state)
{
    (void)state;
    const char *e = getenv("RMC_FUZZ_SEED");
    uint64_t seed = e && *e ? strtoull(e, NULL, 0) : 12345;
    e = getenv("RMC_FUZZ_OPS");
    int nop = e && *e ? atoi(e) : 3000;
    e = getenv("RMC_FUZZ_PHASES");
    int phases = e && *e ? atoi(e) : 4;
    e = getenv("RMC_FUZZ_TRACE");
    trace = e && *e == '1';
    e = getenv("RMC_FUZZ_WEAK");
    weak = e && *e == '1';
    e = getenv("RMC_FUZZ_RECYCLE");
    recycle = !(e && *e == '0');
    e = getenv("RMC_FUZZ_AMO_UNORDERED");
    amo_unordered = e && *e == '1';
    e = getenv("RMC_FUZZ_SABOTAGE");
    sabotage = e && *e ? atoi(e) : -1;
    e = getenv("RMC_FUZZ_ORIGIN");
    only_origin = e && *e ? atoi(e) : -1;
    if (nop < 1)
        nop = 1;
    if (phases < 1)
        phases = 1;
    generate(seed, nop);
    e = getenv("RMC_FUZZ_KEEP");
    if (e && *e)
        load_keep(e);
    comps = calloc((size_t)nop, sizeof(comp_t));
    implicit_l = calloc((size_t)nop, sizeof(int));
    nimplicit = 0;
    failures = 0;
    if (me == 0)
        printf("[ FUZZ     ] seed %llu, %d ops per origin, %d ranks, %d phases, amo %s, node size "
               "%d%s\n",
               (unsigned long long)seed, nop, n, phases,
               rmc_amo_mode() == RMC_AMO_MODE_MPI ? "mpi" : "thread", rmc_node_size(),
               weak ? ", weak" : "");
    int ok = 1;
    for (int ph = 0; ph < phases; ph++) {
        int lo = (int)((long)nop * ph / phases), hi = (int)((long)nop * (ph + 1) / phases);
        for (int i = lo; i < hi; i++)
            if (kept(i)) {
                exec(i);
                if (i == sabotage && ops[i].kind <= K_AMO)
                    shd(ops[i].reg, ops[i].tgt)[ops[i].off] ^= 0x10;
            }
        /* at the last phase: the origin reads every slot back before any fence */
        if (ph == phases - 1 && (only_origin < 0 || me == only_origin)) {
            if (weak) {
                for (int i = 0; i < nop; i++)
                    if (comps[i].live)
                        wait_one(i, 0);
                (void)rmc_fence_all();
                implicit_done(-1);
            }
            unsigned char *b = malloc(SLOT);
            for (int t = 0; t < n; t++)
                for (int r = 0; r < NREG; r++) {
                    memset(b, 0xEE, SLOT);
                    if (rmc_get(slot(r, t), b, SLOT, t) != RMC_OK || memcmp(b, shd(r, t), SLOT)) {
                        fprintf(stderr,
                                "[rank %d] FUZZ FAIL final get (no fence) of region %c on %d\n", me,
                                'A' + r, t);
                        failures++;
                    }
                }
            free(b);
        }
        /* phase end: (every other phase) region B is freed with requests on it still live, then
         * a barrier completes everything (requests stay live: waited after it); B is created
         * again, zero-filled, after the check */
        int cycle = recycle && ph < phases - 1 && (ph & 1) == 0;
        if (cycle && rmc_region_free(regs[1]) != RMC_OK) {
            fprintf(stderr, "[rank %d] rmc_region_free(B) failed: %s\n", me, rmc_last_error());
            ok = 0;
        }
        rmc_status_t st = rmc_barrier();
        if (st != RMC_OK) {
            fprintf(stderr, "[rank %d] rmc_barrier -> %s\n", me, rmc_status_string(st));
            ok = 0;
        }
        implicit_done(-1);
        char when[64];
        snprintf(when, sizeof when, "end of phase %d (ops < %d)", ph, hi);
        ok &= check_parts(when, cycle ? 1 : NREG);
        if (cycle) {
            memset(shd(1, 0), 0, (size_t)n * SLOT);
            void *p = NULL;
            if (rmc_region_reserve((size_t)n * SLOT, bases[1], &regs[1]) != RMC_OK ||
                rmc_region_local(regs[1], me, &p) != RMC_OK ||
                rmc_region_commit(regs[1], p, (size_t)n * SLOT) != RMC_OK) {
                fprintf(stderr, "[rank %d] re-creating region B failed\n", me);
                ok = 0;
                break;
            }
        }
        ok &= rmc_barrier() == RMC_OK;
    }
    /* requests never waited: waited now (a request may be waited after the barrier) */
    for (int i = 0; i < nop; i++)
        if (comps[i].live)
            wait_one(i, (int)(i & 1));
    ok &= rmc_fence_all() == RMC_OK;
    ok &= rmc_barrier() == RMC_OK;
    ok &= check_parts("final", NREG);
    if (failures) {
        fprintf(stderr, "[rank %d] FUZZ: %d failures, first at op %d (seed %llu)\n", me, failures,
                first_fail_op, (unsigned long long)seed);
        ok = 0;
    }
    rmc_comm_stats_t cs;
    rmc_strided_stats_t ss;
    if (rmc_comm_stats(&cs) == RMC_OK && rmc_strided_stats(&ss) == RMC_OK)
        printf("[ FUZZ     ] rank 0: %llu remote ops, %llu local, %llu flushes (%llu conflict); "
               "strided: datatype %llu list %llu pack %llu contig %llu staged-acc %llu\n",
               cs.remote_ops, cs.local_ops, cs.flushes, cs.conflict_flushes, ss.datatype_ops,
               ss.list_ops, ss.pack_ops, ss.contig_ops, ss.staged_acc_ops);
    free(keep);
    keep = NULL;
    free(comps);
    free(implicit_l);
    free(ops);
    rmc_strided_method_set(RMC_STRIDED_AUTO);
    MPI_CHECK_ALL(ok);
}

MPITEST_MAIN("fuzz_consistency", setup, teardown, test_fuzz)
