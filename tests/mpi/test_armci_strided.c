/* ARMCI API: multi-dimensional strided put / get / accumulate (0 to 6 stride levels) verified byte
 * for byte against a reference computed here, every accumulate type (contiguous, strided, vector;
 * all ranks accumulating into the same location), vector put / get, and the local strided pack /
 * unpack helpers. Written against armci.h / message.h only. */
#include <complex.h>
#include "armcitest.h"

#define NEXT(r) (((r) + 1) % np_)
#define SLOT    (160 * 1024) /* bytes of each origin's private slot at every target */

typedef struct desc {
    int levels;
    int count[8];
    int sstr[7], dstr[7], gstr[7]; /* local source, remote, local get-back layouts */
} desc_t;

/* Strides of a layout: level l blocks are separated by (extent of level l-1 block) + pad[l]. */
static void layout(desc_t *d, int *str, const int *pad)
{
    for (int l = 0; l < d->levels; l++) {
        int below = l == 0 ? d->count[0] : str[l - 1] * d->count[l];
        str[l] = below + pad[l];
    }
}

static size_t extent(const desc_t *d, const int *str)
{
    size_t e = (size_t)d->count[0];
    for (int l = 1; l <= d->levels; l++)
        e += (size_t)(d->count[l] - 1) * (size_t)str[l - 1];
    return e;
}

/* Reference: calls fn(chunk index, offset in layout str) for every chunk, in ARMCI order. */
static void chunks(const desc_t *d, const int *str, void (*fn)(size_t k, size_t off, void *arg),
                   void *arg)
{
    size_t total = 1;
    for (int l = 1; l <= d->levels; l++)
        total *= (size_t)d->count[l];
    for (size_t k = 0; k < total; k++) {
        size_t rest = k, off = 0;
        for (int l = 1; l <= d->levels; l++) {
            off += (rest % (size_t)d->count[l]) * (size_t)str[l - 1];
            rest /= (size_t)d->count[l];
        }
        fn(k, off, arg);
    }
}

typedef struct cp {
    unsigned char *to;
    const unsigned char *from;
    const int *to_str, *from_str;
    const desc_t *d;
} cp_t;

/* copies chunk k from layout from_str to layout to_str */
static void copy_chunk(size_t k, size_t off_to, void *arg)
{
    cp_t *c = arg;
    size_t rest = k, off_from = 0;
    for (int l = 1; l <= c->d->levels; l++) {
        off_from += (rest % (size_t)c->d->count[l]) * (size_t)c->from_str[l - 1];
        rest /= (size_t)c->d->count[l];
    }
    memcpy(c->to + off_to, c->from + off_from, (size_t)c->d->count[0]);
}

static const desc_t *make_cases(int *n)
{
    static desc_t cases[] = {
        {.levels = 0, .count = {100}},
        {.levels = 1, .count = {5, 7}},
        {.levels = 2, .count = {24, 3, 4}},
        {.levels = 3, .count = {8, 2, 3, 4}},
        {.levels = 4, .count = {16, 2, 2, 3, 2}},
        {.levels = 6, .count = {8, 2, 2, 2, 2, 2, 2}},
        {.levels = 1, .count = {4096, 16}},
        {.levels = 2, .count = {1, 9, 5}},
        {.levels = 2, .count = {64, 1, 7}}, /* a count of 1 inside */
    };
    static int done;
    if (!done) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            static const int sp[7] = {3, 0, 5, 1, 0, 2, 4}, dp[7] = {11, 7, 0, 3, 9, 1, 0},
                             gp[7] = {0, 13, 2, 0, 6, 0, 3};
            layout(&cases[i], cases[i].sstr, sp);
            layout(&cases[i], cases[i].dstr, dp);
            layout(&cases[i], cases[i].gstr, gp);
        }
        done = 1;
    }
    *n = (int)(sizeof(cases) / sizeof(cases[0]));
    return cases;
}

/* PutS to every target then GetS back in a third layout; the whole remote slot is compared with a
 * mirror (so bytes outside the patch must be untouched), the get-back buffer likewise. */
static void test_puts_gets(void **state)
{
    (void)state;
    void **b = armcitest_malloc((armci_size_t)np_ * SLOT);
    unsigned char *src = malloc(SLOT), *mirror = malloc(SLOT), *whole = malloc(SLOT),
                  *back = malloc(SLOT), *expect = malloc(SLOT);
    int ncase;
    const desc_t *cases = make_cases(&ncase);
    int ok = 1;
    for (int ci = 0; ci < ncase; ci++) {
        const desc_t *d = &cases[ci];
        for (int t = 0; t < np_; t++) {
            unsigned char *slot = (unsigned char *)b[t] + (size_t)me_ * SLOT;
            size_t doff = 13; /* remote patch starts unaligned inside the slot */
            for (size_t i = 0; i < SLOT; i++)
                mirror[i] = armcitest_pat(t, i, 1000u + (unsigned)ci);
            ARMCI_CHECK_OK(ARMCI_Put(mirror, slot, SLOT, t));
            for (size_t i = 0; i < SLOT; i++)
                src[i] = armcitest_pat(me_, i, 2000u + (unsigned)ci);
            ARMCI_CHECK_OK(ARMCI_PutS(src, (int *)d->sstr, slot + doff, (int *)d->dstr,
                                      (int *)d->count, d->levels, t));
            cp_t c = {mirror + doff, src, d->dstr, d->sstr, d};
            chunks(d, d->dstr, copy_chunk, &c);
            memset(whole, 0, SLOT);
            ARMCI_CHECK_OK(ARMCI_Get(slot, whole, SLOT, t));
            ok &= memcmp(whole, mirror, SLOT) == 0;
            /* get the patch back into another layout */
            memset(back, 0xee, SLOT);
            memset(expect, 0xee, SLOT);
            ARMCI_CHECK_OK(ARMCI_GetS(slot + doff, (int *)d->dstr, back, (int *)d->gstr,
                                      (int *)d->count, d->levels, t));
            cp_t e = {expect, mirror + doff, d->gstr, d->dstr, d};
            chunks(d, d->gstr, copy_chunk, &e);
            ok &= memcmp(back, expect, extent(d, d->gstr) + 64) == 0;
            if (!ok) {
                fprintf(stderr, "[rank %d] case %d (levels %d) target %d wrong\n", me_, ci,
                        d->levels, t);
                break;
            }
        }
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(src);
    free(mirror);
    free(whole);
    free(back);
    free(expect);
    armcitest_free(b);
}

/* ---------------------------------------------------------------- accumulate --- */

typedef struct acct {
    int type;
    size_t size;
    const char *name;
} acct_t;

static const acct_t acc_types[] = {
    {ARMCI_ACC_INT, sizeof(int), "int"},
    {ARMCI_ACC_LNG, sizeof(long), "long"},
    {ARMCI_ACC_FLT, sizeof(float), "float"},
    {ARMCI_ACC_DBL, sizeof(double), "double"},
    {ARMCI_ACC_CPL, 2 * sizeof(float), "complex"},
    {ARMCI_ACC_DCP, 2 * sizeof(double), "double complex"},
};

/* Element i of origin r's contribution, as small integers (exact in every type). */
static double contrib(int r, size_t i, int part)
{
    return (double)(((int)(i % 13) - 6) * (r + 1) + part * 3);
}

/* the scale used by origin r: int / real; complex (re, im) */
static double scale_re(int r)
{
    return (double)(r % 3 + 1);
}
static double scale_im(int r)
{
    return (double)(r % 2 ? -1 : 2);
}

static void fill(const acct_t *t, void *buf, size_t n, int r, double base)
{
    for (size_t i = 0; i < n; i++) {
        double re = contrib(r, i, 0) + base, im = contrib(r, i, 1) + base;
        switch (t->type) {
        case ARMCI_ACC_INT:
            ((int *)buf)[i] = (int)re;
            break;
        case ARMCI_ACC_LNG:
            ((long *)buf)[i] = (long)re * 1000000007L;
            break;
        case ARMCI_ACC_FLT:
            ((float *)buf)[i] = (float)re;
            break;
        case ARMCI_ACC_DBL:
            ((double *)buf)[i] = re;
            break;
        case ARMCI_ACC_CPL:
            ((float *)buf)[2 * i] = (float)re, ((float *)buf)[2 * i + 1] = (float)im;
            break;
        default:
            ((double *)buf)[2 * i] = re, ((double *)buf)[2 * i + 1] = im;
            break;
        }
    }
}

static void set_scale(const acct_t *t, void *s, int r)
{
    switch (t->type) {
    case ARMCI_ACC_INT:
        *(int *)s = (int)scale_re(r);
        break;
    case ARMCI_ACC_LNG:
        *(long *)s = (long)scale_re(r);
        break;
    case ARMCI_ACC_FLT:
        *(float *)s = (float)scale_re(r);
        break;
    case ARMCI_ACC_DBL:
        *(double *)s = scale_re(r);
        break;
    case ARMCI_ACC_CPL:
        ((float *)s)[0] = (float)scale_re(r), ((float *)s)[1] = (float)scale_im(r);
        break;
    default:
        ((double *)s)[0] = scale_re(r), ((double *)s)[1] = scale_im(r);
        break;
    }
}

/* Checks the element at `elem` (element index i of the patch): initial value base (complex: base +
 * base i) plus, for every origin r in [0, np), scale(r) * contrib(r, i); exact comparison. */
static int check_at(const acct_t *t, const void *elem, size_t i, int np, double base)
{
    double re = base, im = base;
    for (int r = 0; r < np; r++) {
        double xr = contrib(r, i, 0), xi = contrib(r, i, 1);
        if (t->type == ARMCI_ACC_CPL || t->type == ARMCI_ACC_DCP) {
            re += scale_re(r) * xr - scale_im(r) * xi;
            im += scale_re(r) * xi + scale_im(r) * xr;
        } else {
            re += scale_re(r) * xr;
        }
    }
    switch (t->type) {
    case ARMCI_ACC_INT:
        return *(const int *)elem == (int)re;
    case ARMCI_ACC_LNG:
        return *(const long *)elem == (long)re * 1000000007L;
    case ARMCI_ACC_FLT:
        return *(const float *)elem == (float)re;
    case ARMCI_ACC_DBL:
        return *(const double *)elem == re;
    case ARMCI_ACC_CPL:
        return ((const float *)elem)[0] == (float)re && ((const float *)elem)[1] == (float)im;
    default:
        return ((const double *)elem)[0] == re && ((const double *)elem)[1] == im;
    }
}

/* Every rank accumulates into the same array at every target: contiguous ARMCI_Acc, per type. */
static void test_acc_all_types(void **state)
{
    (void)state;
    enum { N = 300 };
    void **b = armcitest_malloc((armci_size_t)N * 16);
    unsigned char *buf = malloc(N * 16), *init = malloc(N * 16);
    for (size_t k = 0; k < sizeof(acc_types) / sizeof(acc_types[0]); k++) {
        const acct_t *t = &acc_types[k];
        /* the owner sets the initial value 5 everywhere (for complex: 5 + 5i) */
        for (size_t i = 0; i < N; i++)
            switch (t->type) {
            case ARMCI_ACC_INT:
                ((int *)init)[i] = 5;
                break;
            case ARMCI_ACC_LNG:
                ((long *)init)[i] = 5L * 1000000007L;
                break;
            case ARMCI_ACC_FLT:
                ((float *)init)[i] = 5;
                break;
            case ARMCI_ACC_DBL:
                ((double *)init)[i] = 5;
                break;
            case ARMCI_ACC_CPL:
                ((float *)init)[2 * i] = ((float *)init)[2 * i + 1] = 5;
                break;
            default:
                ((double *)init)[2 * i] = ((double *)init)[2 * i + 1] = 5;
                break;
            }
        ARMCI_CHECK_OK(ARMCI_Put(init, b[me_], (int)(N * t->size), me_));
        ARMCI_Barrier();
        unsigned char scale[16];
        set_scale(t, scale, me_);
        fill(t, buf, N, me_, 0);
        for (int d = 0; d < np_; d++) {
            int tgt = (me_ + d) % np_;
            ARMCI_CHECK_OK(ARMCI_Acc(t->type, scale, buf, b[tgt], (int)(N * t->size), tgt));
        }
        ARMCI_Barrier();
        ARMCI_CHECK_OK(ARMCI_Get(b[NEXT(me_)], buf, (int)(N * t->size), NEXT(me_)));
        int ok = 1;
        for (size_t i = 0; i < N; i++)
            ok &= check_at(t, buf + i * t->size, i, np_, 5);
        if (!ok)
            fprintf(stderr, "[rank %d] ARMCI_Acc %s wrong\n", me_, t->name);
        ARMCI_CHECK_ALL(ok);
        ARMCI_Barrier();
    }
    free(buf);
    free(init);
    armcitest_free(b);
}

/* Strided accumulate per type: every rank adds a 2-level patch into the same remote patch. */
static void test_accs_all_types(void **state)
{
    (void)state;
    enum { ROWS = 6, COLS = 10, PLANES = 3 }; /* elements per chunk, chunks, planes */
    for (size_t k = 0; k < sizeof(acc_types) / sizeof(acc_types[0]); k++) {
        const acct_t *t = &acc_types[k];
        int es = (int)t->size;
        /* remote layout: rows of (COLS + 2) elements, planes of (ROWS + 1) rows; local: packed */
        int dstr[2] = {(COLS + 2) * es, (COLS + 2) * es * (ROWS + 1)};
        int sstr[2] = {COLS * es, COLS * es * ROWS};
        int count[3] = {COLS * es, ROWS, PLANES};
        size_t rem_elems = (size_t)(COLS + 2) * (ROWS + 1) * PLANES;
        void **b = armcitest_malloc((armci_size_t)(rem_elems * t->size));
        unsigned char *init = calloc(rem_elems, t->size),
                      *src = malloc((size_t)COLS * ROWS * PLANES * t->size),
                      *got = malloc(rem_elems * t->size);
        ARMCI_CHECK_OK(ARMCI_Put(init, b[me_], (int)(rem_elems * t->size), me_)); /* zeros */
        ARMCI_Barrier();
        fill(t, src, (size_t)COLS * ROWS * PLANES, me_, 0);
        unsigned char scale[16];
        set_scale(t, scale, me_);
        for (int d = 0; d < np_; d++) {
            int tgt = (me_ + d) % np_;
            ARMCI_CHECK_OK(ARMCI_AccS(t->type, scale, src, sstr, b[tgt], dstr, count, 2, tgt));
        }
        ARMCI_Barrier();
        ARMCI_CHECK_OK(ARMCI_Get(b[NEXT(me_)], got, (int)(rem_elems * t->size), NEXT(me_)));
        /* element (p, r, c) of the patch = local element index (p * ROWS + r) * COLS + c; padding
         * elements stay 0 */
        int ok = 1;
        for (int p = 0; p < PLANES; p++)
            for (int r = 0; r <= ROWS; r++)
                for (int c = 0; c < COLS + 2; c++) {
                    size_t ri = ((size_t)p * (ROWS + 1) + (size_t)r) * (COLS + 2) + (size_t)c;
                    if (r < ROWS && c < COLS) {
                        size_t li = ((size_t)p * ROWS + (size_t)r) * COLS + (size_t)c;
                        ok &= check_at(t, got + ri * t->size, li, np_, 0);
                    } else {
                        for (size_t z = 0; z < t->size; z++)
                            ok &= got[ri * t->size + z] == 0;
                    }
                }
        if (!ok)
            fprintf(stderr, "[rank %d] ARMCI_AccS %s wrong\n", me_, t->name);
        ARMCI_CHECK_ALL(ok);
        ARMCI_Barrier();
        free(init);
        free(src);
        free(got);
        armcitest_free(b);
    }
}

/* Vector accumulate per type: segments scattered in the remote array (every other element block),
 * from scattered local sources, every rank into the same places. */
static void test_accv_all_types(void **state)
{
    (void)state;
    enum { SEG = 4, NSEG = 12 }; /* elements per segment, segments (two descriptors of 6) */
    for (size_t k = 0; k < sizeof(acc_types) / sizeof(acc_types[0]); k++) {
        const acct_t *t = &acc_types[k];
        size_t es = t->size, rem_elems = (size_t)NSEG * SEG * 2;
        void **b = armcitest_malloc((armci_size_t)(rem_elems * es));
        unsigned char *zero = calloc(rem_elems, es), *src = malloc((size_t)NSEG * SEG * es * 3),
                      *got = malloc(rem_elems * es);
        ARMCI_CHECK_OK(ARMCI_Put(zero, b[me_], (int)(rem_elems * es), me_));
        ARMCI_Barrier();
        /* local source segment s lives at element 3*SEG*s .. (strided with gaps); its data are the
         * contributions of elements s*SEG .. s*SEG+SEG-1 */
        unsigned char *packed = malloc((size_t)NSEG * SEG * es);
        fill(t, packed, (size_t)NSEG * SEG, me_, 0);
        memset(src, 0x55, (size_t)NSEG * SEG * es * 3);
        for (int s = 0; s < NSEG; s++)
            memcpy(src + (size_t)3 * SEG * s * es, packed + (size_t)s * SEG * es, SEG * es);
        unsigned char scale[16];
        set_scale(t, scale, me_);
        for (int d = 0; d < np_; d++) {
            int tgt = (me_ + d) % np_;
            void *sp[NSEG], *dp[NSEG];
            for (int s = 0; s < NSEG; s++) {
                sp[s] = src + (size_t)3 * SEG * s * es;
                dp[s] = (unsigned char *)b[tgt] + (size_t)2 * SEG * s * es; /* gaps between */
            }
            armci_giov_t iov[2] = {{sp, dp, (int)(SEG * es), NSEG / 2},
                                   {sp + NSEG / 2, dp + NSEG / 2, (int)(SEG * es), NSEG / 2}};
            ARMCI_CHECK_OK(ARMCI_AccV(t->type, scale, iov, 2, tgt));
        }
        ARMCI_Barrier();
        ARMCI_CHECK_OK(ARMCI_Get(b[NEXT(me_)], got, (int)(rem_elems * es), NEXT(me_)));
        int ok = 1;
        for (int s = 0; s < NSEG; s++) {
            for (int e = 0; e < SEG; e++)
                ok &= check_at(t, got + ((size_t)2 * SEG * s + (size_t)e) * es,
                               (size_t)s * SEG + (size_t)e, np_, 0);
            for (size_t z = 0; z < SEG * es; z++)
                ok &= got[(size_t)(2 * s + 1) * SEG * es + z] == 0; /* gaps untouched */
        }
        if (!ok)
            fprintf(stderr, "[rank %d] ARMCI_AccV %s wrong\n", me_, t->name);
        ARMCI_CHECK_ALL(ok);
        ARMCI_Barrier();
        free(packed);
        free(zero);
        free(src);
        free(got);
        armcitest_free(b);
    }
}

/* Accumulate with strides that are not multiples of a whole patch row, scale NULL-free, into
 * self: double 3-level patch, reference computed locally. */
static void test_accs_reference(void **state)
{
    (void)state;
    int ncase;
    const desc_t *cases = make_cases(&ncase);
    void **b = armcitest_malloc((armci_size_t)np_ * SLOT);
    double *mirror = malloc(SLOT), *src = malloc(SLOT), *whole = malloc(SLOT);
    int ok = 1;
    for (int ci = 0; ci < ncase && ok; ci++) {
        desc_t d = cases[ci];
        /* make it a double patch: chunk and strides in multiples of 8 bytes */
        d.count[0] = (d.count[0] + 7) / 8 * 8;
        static const int sp[7] = {8, 0, 16, 8, 0, 8, 24}, dp[7] = {24, 8, 0, 16, 8, 8, 0};
        layout(&d, d.sstr, sp);
        layout(&d, d.dstr, dp);
        if (extent(&d, d.dstr) + 64 > SLOT || extent(&d, d.sstr) > SLOT)
            continue;
        int t = NEXT(me_);
        unsigned char *slot = (unsigned char *)b[t] + (size_t)me_ * SLOT;
        size_t nd = SLOT / sizeof(double);
        for (size_t i = 0; i < nd; i++) {
            mirror[i] = (double)(i % 1000);
            src[i] = (double)((i * 7) % 31) - 15.0;
        }
        ARMCI_CHECK_OK(ARMCI_Put(mirror, slot, SLOT, t));
        double scale = -3.0;
        ARMCI_CHECK_OK(ARMCI_AccS(ARMCI_ACC_DBL, &scale, src, d.sstr, slot + 16, d.dstr, d.count,
                                  d.levels, t));
        /* reference */
        size_t total = 1;
        for (int l = 1; l <= d.levels; l++)
            total *= (size_t)d.count[l];
        for (size_t k = 0; k < total; k++) {
            size_t rest = k, so = 0, dof = 0;
            for (int l = 1; l <= d.levels; l++) {
                size_t ix = rest % (size_t)d.count[l];
                so += ix * (size_t)d.sstr[l - 1];
                dof += ix * (size_t)d.dstr[l - 1];
                rest /= (size_t)d.count[l];
            }
            for (int e = 0; e < d.count[0] / 8; e++)
                mirror[(16 + dof) / 8 + (size_t)e] += scale * src[so / 8 + (size_t)e];
        }
        ARMCI_CHECK_OK(ARMCI_Get(slot, whole, SLOT, t));
        ok &= memcmp(whole, mirror, SLOT) == 0;
        if (!ok)
            fprintf(stderr, "[rank %d] AccS case %d wrong\n", me_, ci);
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(mirror);
    free(src);
    free(whole);
    armcitest_free(b);
}

/* ---------------------------------------------------------------------- vector --- */

/* PutV of several descriptors with different segment sizes to scattered remote places, then GetV
 * into a different local arrangement; the remote slot is compared with a mirror. */
static void test_putv_getv(void **state)
{
    (void)state;
    enum { NS = 9 };
    void **b = armcitest_malloc((armci_size_t)np_ * 8192);
    unsigned char *src = malloc(8192), *mirror = malloc(8192), *whole = malloc(8192),
                  *back = malloc(8192);
    static const int bytes[3] = {1, 17, 256};
    int ok = 1;
    for (int t = 0; t < np_; t++) {
        unsigned char *slot = (unsigned char *)b[t] + (size_t)me_ * 8192;
        for (int i = 0; i < 8192; i++) {
            mirror[i] = armcitest_pat(t, (size_t)i, 31u);
            src[i] = armcitest_pat(me_, (size_t)i, 32u);
        }
        ARMCI_CHECK_OK(ARMCI_Put(mirror, slot, 8192, t));
        void *sp[3][NS], *dp[3][NS], *gp[3][NS];
        armci_giov_t put[3], get[3];
        size_t roff = 0, loff = 0, goff = 0;
        for (int k = 0; k < 3; k++) {
            for (int s = 0; s < NS; s++) {
                /* remote segments in reverse order with gaps, local ones forward */
                sp[k][s] = src + loff;
                dp[k][s] = slot + 8000 - roff - (size_t)bytes[k];
                gp[k][s] = back + goff;
                memcpy(mirror + 8000 - roff - (size_t)bytes[k], src + loff, (size_t)bytes[k]);
                loff += (size_t)bytes[k] + 3;
                roff += (size_t)bytes[k] + 5;
                goff += (size_t)bytes[k];
            }
            put[k] = (armci_giov_t){sp[k], dp[k], bytes[k], NS};
            get[k] = (armci_giov_t){dp[k], gp[k], bytes[k], NS};
        }
        ARMCI_CHECK_OK(ARMCI_PutV(put, 3, t));
        ARMCI_CHECK_OK(ARMCI_Get(slot, whole, 8192, t));
        ok &= memcmp(whole, mirror, 8192) == 0;
        memset(back, 0, 8192);
        ARMCI_CHECK_OK(ARMCI_GetV(get, 3, t));
        goff = 0;
        loff = 0;
        for (int k = 0; k < 3; k++)
            for (int s = 0; s < NS; s++) {
                ok &= memcmp(back + goff, src + loff, (size_t)bytes[k]) == 0;
                goff += (size_t)bytes[k];
                loff += (size_t)bytes[k] + 3;
            }
        ok &= back[goff] == 0;
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(src);
    free(mirror);
    free(whole);
    free(back);
    armcitest_free(b);
}

/* ------------------------------------------------------------------ pack/unpack --- */

static void test_local_strided_copy(void **state)
{
    (void)state;
    unsigned char arr[4096], buf[4096], arr2[4096];
    for (int i = 0; i < 4096; i++)
        arr[i] = (unsigned char)(i * 13 + 1);
    int stride[2] = {40, 400}, count[3] = {7, 9, 3};
    memset(buf, 0, sizeof(buf));
    armci_write_strided(arr, 2, stride, count, (char *)buf); /* pack */
    int ok = 1;
    size_t k = 0;
    for (int p = 0; p < 3; p++)
        for (int r = 0; r < 9; r++)
            for (int c = 0; c < 7; c++)
                ok &= buf[k++] == arr[p * 400 + r * 40 + c];
    memset(arr2, 0xcc, sizeof(arr2));
    armci_read_strided(arr2, 2, stride, count, (char *)buf); /* unpack */
    for (int i = 0; i < 4096; i++) {
        int p = i / 400, r = (i % 400) / 40, c = i % 40;
        int in = p < 3 && r < 9 && c < 7;
        ok &= arr2[i] == (in ? arr[i] : 0xcc);
    }
    ARMCI_CHECK_ALL(ok);
}

/* Local pack / unpack of 8 and 9 stride levels (any number, as the remote strided calls take):
 * count 2 on every level above chunks of 3 bytes, strides doubling from 4. */
static void test_local_strided_deep(void **state)
{
    (void)state;
    enum { MAXL = 9, SPAN = 4 << MAXL };
    unsigned char *arr = malloc(SPAN), *arr2 = malloc(SPAN), *buf = malloc(3 << MAXL);
    for (int i = 0; i < SPAN; i++)
        arr[i] = (unsigned char)(i * 7 + 3);
    int ok = 1;
    for (int levels = 8; levels <= MAXL; levels++) {
        int stride[MAXL], count[MAXL + 1];
        count[0] = 3;
        for (int l = 1; l <= levels; l++) {
            count[l] = 2;
            stride[l - 1] = 4 << (l - 1);
        }
        int nchunks = 1 << levels;
        memset(buf, 0, (size_t)3 << MAXL);
        armci_write_strided(arr, levels, stride, count, (char *)buf); /* pack */
        /* chunk c starts at 4 * c (bit l-1 of c is the index on level l) */
        for (int c = 0; c < nchunks; c++)
            for (int j = 0; j < 3; j++)
                ok &= buf[3 * c + j] == arr[4 * c + j];
        memset(arr2, 0xcc, SPAN);
        armci_read_strided(arr2, levels, stride, count, (char *)buf); /* unpack */
        for (int i = 0; i < SPAN; i++) {
            int in = i < 4 * nchunks && i % 4 < 3;
            ok &= arr2[i] == (in ? arr[i] : 0xcc);
        }
        if (!ok)
            fprintf(stderr, "[rank %d] %d-level pack / unpack wrong\n", me_, levels);
    }
    ARMCI_CHECK_ALL(ok);
    free(arr);
    free(arr2);
    free(buf);
}

/* Descriptors ARMCI takes that do not nest (RMC's strided engine refuses them; libarmci sends their
 * chunks as vector segments) and accumulate sources at unaligned addresses (copied to an aligned
 * buffer): a put that transposes a 4 x 4 block of doubles, the get that transposes it back, an
 * accumulate with a zero remote stride (4 rows summed into one), a stride of -1 on a level of
 * count 1, 8 stride levels, and contiguous, strided and vector accumulates from an odd address.
 * Each rank works on its next rank's slot, checked against values computed here. */
static void test_non_nesting(void **state)
{
    (void)state;
    void **b = armcitest_malloc(4096);
    int t = NEXT(me_), ok = 1;
    double *rem = (double *)b[t], m[16], x[16], one = 1.0;
    for (int i = 0; i < 16; i++)
        m[i] = 100 * me_ + i;
    /* transposing put: chunk = one double, level 1 along a row (src +8, dst +32), level 2 down */
    int cnt[3] = {8, 4, 4}, sst[2] = {8, 32}, dst2[2] = {32, 8};
    ARMCI_CHECK_OK(ARMCI_PutS(m, sst, rem, dst2, cnt, 2, t));
    ARMCI_Fence(t);
    ARMCI_CHECK_OK(ARMCI_Get(rem, x, 16 * 8, t));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            ok &= x[j * 4 + i] == m[i * 4 + j];
    /* the transposing get restores the original */
    double y[16];
    ARMCI_CHECK_OK(ARMCI_GetS(rem, dst2, y, sst, cnt, 2, t));
    ok &= !memcmp(y, m, sizeof m);
    /* accumulate with remote stride 0: the 4 rows of m into one row */
    double z[4] = {0, 0, 0, 0};
    ARMCI_CHECK_OK(ARMCI_Put(z, rem + 16, 32, t));
    ARMCI_Fence(t);
    int acnt[2] = {32, 4}, ass[1] = {32}, ads[1] = {0};
    ARMCI_CHECK_OK(ARMCI_AccS(ARMCI_ACC_DBL, &one, m, ass, rem + 16, ads, acnt, 1, t));
    ARMCI_Fence(t);
    ARMCI_CHECK_OK(ARMCI_Get(rem + 16, z, 32, t));
    for (int j = 0; j < 4; j++)
        ok &= z[j] == m[j] + m[4 + j] + m[8 + j] + m[12 + j];
    /* a stride of -1 on a level of count 1 (never used) */
    int ncnt[3] = {16, 1, 2}, nss[2] = {-1, 64}, nds[2] = {-1, 16};
    ARMCI_CHECK_OK(ARMCI_PutS(m, nss, rem + 32, nds, ncnt, 2, t));
    ARMCI_Fence(t);
    ARMCI_CHECK_OK(ARMCI_Get(rem + 32, x, 32, t));
    ok &= x[0] == m[0] && x[1] == m[1] && x[2] == m[8] && x[3] == m[9];
    /* 8 levels of count 2 (2^8 chunks of 8 bytes, every level contiguous over the one below) */
    double big[256], back[256];
    int c9[9], s8[8];
    c9[0] = 8;
    for (int l = 1; l <= 8; l++)
        c9[l] = 2, s8[l - 1] = 8 << (l - 1);
    for (int i = 0; i < 256; i++)
        big[i] = me_ + i * 0.5;
    ARMCI_CHECK_OK(ARMCI_PutS(big, s8, rem + 64, s8, c9, 8, t));
    ARMCI_Fence(t);
    ARMCI_CHECK_OK(ARMCI_Get(rem + 64, back, 256 * 8, t));
    ok &= !memcmp(big, back, sizeof big);
    /* accumulates from an odd local address: contiguous, strided, vector */
    char raw[8 * 17];
    memcpy(raw + 1, m, 8 * 16);
    double w[16];
    for (int i = 0; i < 16; i++)
        w[i] = 1;
    ARMCI_CHECK_OK(ARMCI_Put(w, rem + 320, 16 * 8, t));
    ARMCI_Fence(t);
    /* scaled (2, 3, 4): a scale dropped on the unaligned path shows */
    double s2 = 2, s3 = 3, s4 = 4;
    ARMCI_CHECK_OK(ARMCI_Acc(ARMCI_ACC_DBL, &s2, raw + 1, rem + 320, 4 * 8, t)); /* m[0..3] */
    int ucnt[2] = {32, 2}, ustr[1] = {32};                                       /* m[4..11] */
    ARMCI_CHECK_OK(ARMCI_AccS(ARMCI_ACC_DBL, &s3, raw + 1 + 32, ustr, rem + 324, ustr, ucnt, 1, t));
    void *vs[1] = {raw + 1 + 96}, *vd[1] = {rem + 332};
    armci_giov_t v = {.src_ptr_array = vs, .dst_ptr_array = vd, .bytes = 32,
                      .ptr_array_len = 1};
    ARMCI_CHECK_OK(ARMCI_AccV(ARMCI_ACC_DBL, &s4, &v, 1, t));
    ARMCI_Fence(t);
    ARMCI_CHECK_OK(ARMCI_Get(rem + 320, w, 16 * 8, t));
    for (int i = 0; i < 16; i++)
        ok &= w[i] == 1 + (i < 4 ? 2 : i < 12 ? 3 : 4) * m[i];
    /* within this rank's own allocation, source and target overlapping: every chunk moves what
     * was there before the call (3 rows of 4 shifted right by 1, rows 5 apart; then
     * m[1..4] += m[0..3]) */
    double *own = (double *)b[me_] + 400, want[16]; /* a part no other rank writes */
    for (int i = 0; i < 16; i++)
        own[i] = want[i] = i;
    int ocnt[2] = {4 * 8, 3}, ostr[1] = {5 * 8};
    ARMCI_CHECK_OK(ARMCI_PutS(own, ostr, own + 1, ostr, ocnt, 1, me_));
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 4; j++)
            want[5 * r + 1 + j] = 5 * r + j;
    ARMCI_Fence(me_);
    ok &= !memcmp(own, want, sizeof want);
    for (int i = 0; i < 6; i++)
        own[i] = i;
    ARMCI_CHECK_OK(ARMCI_Acc(ARMCI_ACC_DBL, &one, own, own + 1, 4 * 8, me_));
    ARMCI_Fence(me_);
    ok &= own[0] == 0 && own[1] == 1 && own[2] == 3 && own[3] == 5 && own[4] == 7 && own[5] == 5;
    /* the same through vectors: segments own[0..2], own[4..6] put to own[1..3], own[5..7]; then
     * accumulated the same way (the hull of the read bytes meets the hull of the written ones) */
    for (int i = 0; i < 8; i++)
        own[i] = i;
    void *os[2] = {own, own + 4}, *od[2] = {own + 1, own + 5};
    armci_giov_t ov = {
        .src_ptr_array = os, .dst_ptr_array = od, .bytes = 3 * 8, .ptr_array_len = 2};
    ARMCI_CHECK_OK(ARMCI_PutV(&ov, 1, me_));
    ARMCI_Fence(me_);
    static const double pv[8] = {0, 0, 1, 2, 4, 4, 5, 6};
    ok &= !memcmp(own, pv, sizeof pv);
    for (int i = 0; i < 8; i++)
        own[i] = i;
    ARMCI_CHECK_OK(ARMCI_AccV(ARMCI_ACC_DBL, &one, &ov, 1, me_));
    ARMCI_Fence(me_);
    static const double av[8] = {0, 1, 3, 5, 4, 9, 11, 13};
    ok &= !memcmp(own, av, sizeof av);
    /* a get within the own allocation: own[1..3] into own[0..2] */
    for (int i = 0; i < 8; i++)
        own[i] = i;
    void *gs[1] = {own + 1}, *gd[1] = {own};
    armci_giov_t gv = {
        .src_ptr_array = gs, .dst_ptr_array = gd, .bytes = 3 * 8, .ptr_array_len = 1};
    ARMCI_CHECK_OK(ARMCI_GetV(&gv, 1, me_));
    static const double g1[8] = {1, 2, 3, 3, 4, 5, 6, 7};
    ok &= !memcmp(own, g1, sizeof g1);
    if (!ok)
        fprintf(stderr,
                "[rank %d] non-nesting descriptors / unaligned or overlapping operations wrong\n",
                me_);
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    armcitest_free(b);
}

ARMCITEST_MAIN("armci_strided", test_puts_gets, test_acc_all_types, test_accs_all_types,
               test_accv_all_types, test_accs_reference, test_putv_getv, test_local_strided_copy,
               test_local_strided_deep, test_non_nesting)
