/* ga-compat: whole-array and patch arithmetic (GA_Zero, GA_Fill, scale, add, copy, dot products,
 * element-wise operations, norms, median, select, step bounds, randomize).
 *
 * Every operation is driven by one array (the destination, or the first operand of a reduction):
 * each rank walks the blocks of the driver it owns, cut to the patch, and works on them in place.
 * An operand's matching piece is used in place when it lies inside one block this rank can address
 * (the same distribution: always), else fetched one-sidedly into a temporary. Patches conform as
 * GA's do: the same shape once dimensions of extent 1 are dropped; a transposed operand ('T')
 * walks its two remaining dimensions in reverse order. Collective operations start with a sync of
 * the driver's group; the ones that write end with one, reductions with a gop over the group. */
#include <complex.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

/* The "infinity" of GA_Step_max / GA_Step_bound_info per type: GA 5.8.2's (probed). Where no
 * element of b is negative (the step is unbounded) GA_Step_max returns it for every type here;
 * GA 5.8.2's returns 0 ("cannot move") on C_INT / C_LONG arrays for some a (probed: a = 1,
 * b = 2 everywhere; a = 4 gives the infinity). */
#define INF_I32 2147483647
#define INF_I64 LONG_MAX
#define INF_F32 1.0e37f
#define INF_F64 1.0e307

typedef union scal {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    float complex c32;
    double complex c64;
    char raw[16];
} scal_t;

enum {
    OP_FILL,
    OP_SCALE,
    OP_ADDC,
    OP_ABS,
    OP_RECIP,
    OP_RAND, /* driver only */
    OP_COPY,
    OP_ADD,
    OP_MUL,
    OP_DIV,
    OP_MAX,
    OP_MIN,
    OP_MEDIAN, /* write the driver */
    OP_DOT,
    OP_NORM1,
    OP_NORMI,
    OP_SELMAX,
    OP_SELMIN,
    OP_STEPMAX,
    OP_SBI /* reductions */
};

typedef struct kctx {
    int op;
    int nd, inner; /* driver dimensions; the dimension rows run along */
    const char *fn;
    const char *name; /* driver's name, for messages */
    scal_t s1, s2;    /* scalars: value / alpha, beta */
    int64_t iacc;     /* integer dots */
    double dacc;      /* real dots, vector norms */
    double complex zacc;
    double *vec;               /* 2-D norms: column (inner) or row sums */
    int vdim;                  /* 2-D norms: the dimension summed along (1: columns, 0: rows) */
    int64_t ddims[GA_MAX_DIM]; /* driver dims (select: linear index) */
    int have;                  /* select / step: a candidate was found */
    scal_t best;               /* select value; step min */
    int64_t lin;               /* select index */
    scal_t bmax;               /* step_bound_info: max */
    int vzero;                 /* step_bound_info: some vv == 0 */
    uint64_t rng;
    const void *val; /* user-defined types: the fill value (esz bytes) */
    size_t esz;
} kctx_t;

/* ------------------------------------------------------------------------ kernels --- */

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rnd_unit(uint64_t *s)
{
    return (double)(rnd_next(s) >> 11) * 0x1.0p-53; /* [0, 1) */
}

static GAI_NORETURN void zero_div(kctx_t *k)
{
    gai_error(k->fn, "array '%s': zero divisor", k->name);
}

/* Per-type pieces: KEY orders (reals by value, complex by magnitude), MAG the absolute value. */
#define KEY_R(x) (x)
#define KEY_C(x) cabs(x)
#define ABS_I(x) ((x) < 0 ? -(x) : (x))
#define ABS_F(x) fabs(x)
#define ABS_C(x) cabs(x)
#define ISCPL_R  0
#define ISCPL_C  1

/* One row of n elements: p[0] the driver (strides s[0]), p[1..3] the operands; idx the driver
 * index of the row's first element. */
#define ROW_FN(T, F, KEY, ABS, ISCPL, INTDIV, INF)                                                 \
    static void row_##F(kctx_t *k, int64_t n, char *const p[4], const int64_t s[4],                \
                        const int64_t idx[])                                                       \
    {                                                                                              \
        T *c = (T *)p[0], *a = (T *)p[1], *b = (T *)p[2], *d = (T *)p[3];                          \
        const int64_t sc = s[0], sa = s[1], sb = s[2], sd = s[3];                                  \
        switch (k->op) {                                                                           \
        case OP_FILL: {                                                                            \
            T v = k->s1.F;                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] = v;                                                                     \
            break;                                                                                 \
        }                                                                                          \
        case OP_SCALE: {                                                                           \
            T v = k->s1.F;                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] *= v;                                                                    \
            break;                                                                                 \
        }                                                                                          \
        case OP_ADDC: {                                                                            \
            T v = k->s1.F;                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] += v;                                                                    \
            break;                                                                                 \
        }                                                                                          \
        case OP_ABS:                                                                               \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] = (T)ABS(c[i * sc]);                                                     \
            break;                                                                                 \
        case OP_RECIP:                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                      \
                if (c[i * sc] == 0)                                                                \
                    zero_div(k);                                                                   \
                c[i * sc] = (T)1 / c[i * sc];                                                      \
            }                                                                                      \
            break;                                                                                 \
        case OP_RAND: {                                                                            \
            T v = k->s1.F;                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] = (T)(v * rnd_unit(&k->rng));                                            \
            break;                                                                                 \
        }                                                                                          \
        case OP_COPY:                                                                              \
            if (sc == 1 && sa == 1)                                                                \
                memcpy(c, a, sizeof(T) * (size_t)n);                                               \
            else                                                                                   \
                for (int64_t i = 0; i < n; i++)                                                    \
                    c[i * sc] = a[i * sa];                                                         \
            break;                                                                                 \
        case OP_ADD: {                                                                             \
            T al = k->s1.F, be = k->s2.F;                                                          \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] = al * a[i * sa] + be * b[i * sb];                                       \
            break;                                                                                 \
        }                                                                                          \
        case OP_MUL:                                                                               \
            for (int64_t i = 0; i < n; i++)                                                        \
                c[i * sc] = a[i * sa] * b[i * sb];                                                 \
            break;                                                                                 \
        case OP_DIV:                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                if (b[i * sb] == 0)                                                                \
                    zero_div(k);                                                                   \
                c[i * sc] = a[i * sa] / b[i * sb];                                                 \
            }                                                                                      \
            break;                                                                                 \
        case OP_MAX: /* GA: b unless a is larger (complex: in magnitude) */                        \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i * sa], y = b[i * sb];                                                    \
                c[i * sc] = KEY(x) > KEY(y) ? x : y;                                               \
            }                                                                                      \
            break;                                                                                 \
        case OP_MIN:                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i * sa], y = b[i * sb];                                                    \
                c[i * sc] = KEY(x) < KEY(y) ? x : y;                                               \
            }                                                                                      \
            break;                                                                                 \
        case OP_MEDIAN: /* GA 5.8.2's choice among keys that tie (complex: magnitudes; probed) */  \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i * sa], y = b[i * sb], z = d[i * sd];                                     \
                if (KEY(x) > KEY(y))                                                               \
                    c[i * sc] = KEY(y) > KEY(z) ? y : KEY(x) < KEY(z) ? x : z;                     \
                else if (KEY(x) < KEY(y))                                                          \
                    c[i * sc] = KEY(y) < KEY(z) ? y : KEY(x) > KEY(z) ? x : z;                     \
                else                                                                               \
                    c[i * sc] = x;                                                                 \
            }                                                                                      \
            break;                                                                                 \
        case OP_DOT:                                                                               \
            row_dot_##F(k, n, c, sc, a, sa);                                                       \
            break;                                                                                 \
        case OP_NORM1:                                                                             \
        case OP_NORMI:                                                                             \
            if (k->vec && k->inner == k->vdim) {                                                   \
                double *v = k->vec + idx[k->vdim];                                                 \
                for (int64_t i = 0; i < n; i++)                                                    \
                    v[i] += (double)ABS(c[i * sc]);                                                \
            } else if (k->vec) {                                                                   \
                double r = 0;                                                                      \
                for (int64_t i = 0; i < n; i++)                                                    \
                    r += (double)ABS(c[i * sc]);                                                   \
                k->vec[idx[k->vdim]] += r;                                                         \
            } else if (k->op == OP_NORM1) {                                                        \
                double r = 0;                                                                      \
                for (int64_t i = 0; i < n; i++)                                                    \
                    r += (double)ABS(c[i * sc]);                                                   \
                k->dacc += r;                                                                      \
            } else {                                                                               \
                double r = k->dacc;                                                                \
                for (int64_t i = 0; i < n; i++)                                                    \
                    if ((double)ABS(c[i * sc]) > r)                                                \
                        r = (double)ABS(c[i * sc]);                                                \
                k->dacc = r;                                                                       \
            }                                                                                      \
            break;                                                                                 \
        case OP_SELMAX:                                                                            \
        case OP_SELMIN: {                                                                          \
            int mx = k->op == OP_SELMAX;                                                           \
            int64_t bi = 0;                                                                        \
            T bv = c[0];                                                                           \
            for (int64_t i = 1; i < n; i++) {                                                      \
                T x = c[i * sc];                                                                   \
                if (mx ? KEY(x) > KEY(bv) : KEY(x) < KEY(bv))                                      \
                    bv = x, bi = i;                                                                \
            }                                                                                      \
            int64_t lin = 0;                                                                       \
            for (int dd = 0; dd < k->nd; dd++)                                                     \
                lin = lin * k->ddims[dd] + idx[dd] + (dd == k->inner ? bi : 0);                    \
            /* rows arrive in no global order: the lowest index among equals */                    \
            T cur = k->best.F;                                                                     \
            int better = mx ? KEY(bv) > KEY(cur) : KEY(bv) < KEY(cur);                             \
            int worse = mx ? KEY(bv) < KEY(cur) : KEY(bv) > KEY(cur);                              \
            if (!k->have || better || (!worse && lin < k->lin))                                    \
                k->best.F = bv, k->lin = lin, k->have = 1;                                         \
            break;                                                                                 \
        }                                                                                          \
        case OP_STEPMAX:                                                                           \
            step_##F(k, n, c, sc, a, sa);                                                          \
            break;                                                                                 \
        case OP_SBI:                                                                               \
            sbi_##F(k, n, c, sc, a, sa, b, sb, d, sd);                                             \
            break;                                                                                 \
        }                                                                                          \
        (void)INF;                                                                                 \
    }

/* dot products (GA's: no conjugation), 4 accumulators on contiguous rows */
#define DOT_REAL(T, F, ACC, AT)                                                                    \
    static void row_dot_##F(kctx_t *k, int64_t n, const T *x, int64_t sx, const T *y, int64_t sy)  \
    {                                                                                              \
        AT s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                         \
        int64_t i = 0;                                                                             \
        if (sx == 1 && sy == 1) {                                                                  \
            for (; i + 4 <= n; i += 4) {                                                           \
                s0 += (AT)x[i] * y[i];                                                             \
                s1 += (AT)x[i + 1] * y[i + 1];                                                     \
                s2 += (AT)x[i + 2] * y[i + 2];                                                     \
                s3 += (AT)x[i + 3] * y[i + 3];                                                     \
            }                                                                                      \
        }                                                                                          \
        for (; i < n; i++)                                                                         \
            s0 += (AT)x[i * sx] * y[i * sy];                                                       \
        k->ACC += (s0 + s1) + (s2 + s3);                                                           \
    }
DOT_REAL(int32_t, i32, iacc, int64_t)
DOT_REAL(int64_t, i64, iacc, int64_t)
DOT_REAL(float, f32, dacc, double)
DOT_REAL(double, f64, dacc, double)
DOT_REAL(float complex, c32, zacc, double complex)
DOT_REAL(double complex, c64, zacc, double complex)

/* GA_Step_max: the largest t with a + t b >= 0 (a must be >= 0): min over b < 0 of -a / b. */
#define STEP_REAL(T, F)                                                                            \
    static void step_##F(kctx_t *k, int64_t n, const T *x, int64_t sx, const T *y, int64_t sy)     \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T a = x[i * sx], b = y[i * sy];                                                        \
            if (a < 0)                                                                             \
                gai_error(k->fn, "array '%s' has a negative element", k->name);                    \
            if (b < 0) {                                                                           \
                T t = -a / b;                                                                      \
                if (t < k->best.F)                                                                 \
                    k->best.F = t;                                                                 \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* GA_Step_bound_info: per element the step to the bound vv heads for; min and max */          \
    static void sbi_##F(kctx_t *k, int64_t n, const T *x, int64_t sx, const T *v, int64_t sv,      \
                        const T *l, int64_t sl, const T *u, int64_t su)                            \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T xx = x[i * sx], vv = v[i * sv], ll = l[i * sl], uu = u[i * su], t;                   \
            if (uu < xx)                                                                           \
                gai_error(k->fn, "the upper bound is below xx (array '%s')", k->name);             \
            if (ll > xx)                                                                           \
                gai_error(k->fn, "the lower bound is above xx (array '%s')", k->name);             \
            if (vv > 0)                                                                            \
                t = (uu - xx) / vv;                                                                \
            else if (vv < 0)                                                                       \
                t = (ll - xx) / vv;                                                                \
            else {                                                                                 \
                k->vzero = 1;                                                                      \
                continue;                                                                          \
            }                                                                                      \
            if (t < k->best.F)                                                                     \
                k->best.F = t;                                                                     \
            if (t > k->bmax.F)                                                                     \
                k->bmax.F = t;                                                                     \
        }                                                                                          \
    }
STEP_REAL(int32_t, i32)
STEP_REAL(int64_t, i64)
STEP_REAL(float, f32)
STEP_REAL(double, f64)
#define STEP_NONE(T, F)                                                                            \
    static void step_##F(kctx_t *k, int64_t n, const T *x, int64_t sx, const T *y, int64_t sy)     \
    {                                                                                              \
        (void)k, (void)n, (void)x, (void)sx, (void)y, (void)sy;                                    \
    }                                                                                              \
    static void sbi_##F(kctx_t *k, int64_t n, const T *x, int64_t sx, const T *v, int64_t sv,      \
                        const T *l, int64_t sl, const T *u, int64_t su)                            \
    {                                                                                              \
        (void)k, (void)n, (void)x, (void)sx, (void)v, (void)sv, (void)l, (void)sl, (void)u;        \
        (void)su;                                                                                  \
    }
STEP_NONE(float complex, c32) /* refused before the walk */
STEP_NONE(double complex, c64)

ROW_FN(int32_t, i32, KEY_R, ABS_I, ISCPL_R, 1, INF_I32)
ROW_FN(int64_t, i64, KEY_R, ABS_I, ISCPL_R, 1, INF_I64)
ROW_FN(float, f32, KEY_R, ABS_F, ISCPL_R, 0, INF_F32)
ROW_FN(double, f64, KEY_R, ABS_F, ISCPL_R, 0, INF_F64)
ROW_FN(float complex, c32, KEY_C, ABS_C, ISCPL_C, 0, 0)
ROW_FN(double complex, c64, KEY_C, ABS_C, ISCPL_C, 0, 0)

typedef void (*row_fn_t)(kctx_t *, int64_t, char *const[4], const int64_t[4], const int64_t[]);

/* A row of user-defined (opaque) elements: only fills and copies (walk refuses the rest). */
static void row_bytes(kctx_t *k, int64_t n, char *const p[4], const int64_t s[4],
                      const int64_t idx[])
{
    (void)idx;
    size_t es = k->esz;
    for (int64_t i = 0; i < n; i++)
        memcpy(p[0] + (size_t)(i * s[0]) * es,
               k->op == OP_FILL ? (const char *)k->val : p[1] + (size_t)(i * s[1]) * es, es);
}

static row_fn_t row_of(rmc_elem_t e)
{
    switch (e) {
    case RMC_ELEM_I32:
        return row_i32;
    case RMC_ELEM_I64:
        return row_i64;
    case RMC_ELEM_F32:
        return row_f32;
    case RMC_ELEM_F64:
        return row_f64;
    case RMC_ELEM_C32:
        return row_c32;
    default:
        return row_c64;
    }
}

/* ------------------------------------------------------------------------ patches --- */

typedef struct patch {
    gai_array_t *a;
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM]; /* half-open */
    int empty;
    int map[GA_MAX_DIM]; /* operands: driver dimension -> own dimension (-1: none) */
    int reshape;         /* operands: another shape, matched in row-major order (conform) */
} patch_t;

static void patch_whole(patch_t *p, int g, const char *fn)
{
    p->a = gai_array(g, fn);
    for (int d = 0; d < p->a->ndim; d++)
        p->l[d] = 0, p->h[d] = p->a->dims[d];
    p->empty = 0;
}

static void patch_64(patch_t *p, int g, const int64_t lo[], const int64_t hi[], const char *fn)
{
    p->a = gai_array(g, fn);
    p->empty = !gai_patch_i64(p->a, lo, hi, p->l, p->h, fn);
}

static void patch_32(patch_t *p, int g, const int lo[], const int hi[], const char *fn)
{
    p->a = gai_array(g, fn);
    p->empty = !gai_patch_int(p->a, lo, hi, p->l, p->h, fn);
}

/* Operand o conforms to driver c (same shape without extent-1 dimensions; trans: the two left in
 * reverse order); sets o->map. Types must agree. As in GA, untransposed patches of other shapes
 * with as many elements match element by element in row-major order (o->reshape). */
static void conform(const patch_t *c, patch_t *o, int trans, const char *fn)
{
    if (o->a->type != c->a->type)
        gai_error(fn, "arrays '%s' and '%s' have different types (%s, %s)", c->a->name, o->a->name,
                  gai_type_name(c->a->type), gai_type_name(o->a->type));
    int cd[GA_MAX_DIM], od[GA_MAX_DIM], nc = 0, no = 0;
    for (int d = 0; d < c->a->ndim; d++)
        if (c->h[d] - c->l[d] > 1)
            cd[nc++] = d;
    for (int d = 0; d < o->a->ndim; d++)
        if (o->h[d] - o->l[d] > 1)
            od[no++] = d;
    if (trans && nc > 2)
        gai_error(fn, "a transposed patch of '%s' has %d dimensions (at most 2)", o->a->name, nc);
    int ok = nc == no;
    for (int k = 0; ok && k < nc; k++) {
        int j = trans ? nc - 1 - k : k;
        ok = c->h[cd[k]] - c->l[cd[k]] == o->h[od[j]] - o->l[od[j]];
    }
    o->reshape = 0;
    if (!ok && !trans && !c->empty && !o->empty &&
        gai_patch_count(c->a->ndim, c->l, c->h) == gai_patch_count(o->a->ndim, o->l, o->h)) {
        o->reshape = 1;
        return;
    }
    if (!ok || c->empty != o->empty)
        gai_error(fn,
                  "the patches of '%s' and '%s' do not conform%s (%lld and %lld elements)",
                  c->a->name, o->a->name, trans ? " (transposed)" : "",
                  c->empty ? 0LL : (long long)gai_patch_count(c->a->ndim, c->l, c->h),
                  o->empty ? 0LL : (long long)gai_patch_count(o->a->ndim, o->l, o->h));
    for (int d = 0; d < GA_MAX_DIM; d++)
        o->map[d] = -1;
    for (int k = 0; k < nc; k++)
        o->map[cd[k]] = od[trans ? nc - 1 - k : k];
}

/* Element strides of a row-major block with leading dimensions ld (ndim - 1 entries). */
static void strides_of(int nd, const int64_t ld[], int64_t st[])
{
    st[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--)
        st[d] = st[d + 1] * ld[d];
}

/* A reshaped operand's elements matching driver region [rl, rh) (the same positions in the two
 * patches' row-major orders), fetched into *tmp laid out as the region (dense, row-major); st[]
 * gets its strides. One transfer per run along the operand's last dimension. */
static char *reshaped_piece(const patch_t *c, const patch_t *o, const int64_t rl[],
                            const int64_t rh[], int64_t st[], void **tmp, const char *fn)
{
    gai_array_t *a = o->a;
    int cn = c->a->ndim, on = a->ndim;
    int64_t cst[GA_MAX_DIM], oext[GA_MAX_DIM], idx[GA_MAX_DIM], n = gai_patch_count(cn, rl, rh);
    if (!(*tmp = malloc((size_t)n * a->esz)))
        gai_error(fn, "out of memory (%lld elements of '%s')", (long long)n, a->name);
    st[cn - 1] = cst[cn - 1] = 1; /* the region's strides, and the driver patch's */
    for (int d = cn - 2; d >= 0; d--) {
        st[d] = st[d + 1] * (rh[d + 1] - rl[d + 1]);
        cst[d] = cst[d + 1] * (c->h[d + 1] - c->l[d + 1]);
    }
    for (int d = 0; d < on; d++)
        oext[d] = o->h[d] - o->l[d];
    memcpy(idx, rl, sizeof(int64_t) * (size_t)cn);
    char *out = *tmp;
    int64_t len = rh[cn - 1] - rl[cn - 1];
    for (;;) { /* each row of the region: a range of row-major positions in the patches */
        int64_t at = 0;
        for (int d = 0; d < cn; d++)
            at += (idx[d] - c->l[d]) * cst[d];
        for (int64_t done = 0; done < len;) {
            int64_t r = at + done, pl[GA_MAX_DIM], ph[GA_MAX_DIM], ld[GA_MAX_DIM];
            for (int d = on - 1; d >= 0; d--) {
                pl[d] = o->l[d] + r % oext[d];
                ph[d] = pl[d] + 1;
                r /= oext[d];
            }
            int64_t run = o->h[on - 1] - pl[on - 1];
            if (run > len - done)
                run = len - done;
            ph[on - 1] = pl[on - 1] + run;
            for (int d = 0; d + 1 < on; d++)
                ld[d] = ph[d + 1] - pl[d + 1];
            gai_xfer(a, 'g', pl, ph, out, ld, NULL, NULL, fn);
            out += (size_t)run * a->esz;
            done += run;
        }
        int d = cn - 2;
        while (d >= 0 && ++idx[d] == rh[d])
            idx[d] = rl[d], d--;
        if (d < 0)
            break;
    }
    return *tmp;
}

/* The operand's piece matching driver region [rl, rh): in place or fetched into *tmp. Returns its
 * first element; st[] gets its strides along the driver's dimensions. */
static char *operand_piece(const patch_t *c, const patch_t *o, const int64_t rl[],
                           const int64_t rh[], int64_t st[], void **tmp, const char *fn)
{
    if (o->reshape)
        return reshaped_piece(c, o, rl, rh, st, tmp, fn);
    gai_array_t *a = o->a;
    int nd = a->ndim;
    int64_t ol[GA_MAX_DIM], oh[GA_MAX_DIM], ost[GA_MAX_DIM], ld[GA_MAX_DIM];
    for (int d = 0; d < nd; d++)
        ol[d] = o->l[d], oh[d] = o->l[d] + 1;
    for (int e = 0; e < c->a->ndim; e++)
        if (o->map[e] >= 0) {
            int d = o->map[e];
            ol[d] = o->l[d] + rl[e] - c->l[e];
            oh[d] = o->l[d] + rh[e] - c->l[e];
        }
    char *base = NULL;
    int same_place = a == c->a; /* the driver's own region: in place; elsewhere: a copy */
    for (int d = 0; same_place && d < nd; d++)
        same_place = ol[d] == rl[d] && oh[d] == rh[d];
    int64_t t, tl[GA_MAX_DIM], th[GA_MAX_DIM];
    int owner;
    if ((a != c->a || same_place) && rmc_dist_locate(a->dist, ol, &t, &owner) == RMC_OK &&
        rmc_dist_tile(a->dist, t, tl, th, NULL) == RMC_OK) {
        int inside = 1;
        for (int d = 0; d < nd; d++)
            inside &= oh[d] <= th[d];
        if (inside && (base = gai_block_ptr(a, t, ld))) {
            strides_of(nd, ld, ost);
            for (int d = 0; d < nd; d++)
                base += (ol[d] - tl[d]) * ost[d] * (int64_t)a->esz;
        }
    }
    if (!base) {
        int64_t n = gai_patch_count(nd, ol, oh);
        if (!(*tmp = malloc((size_t)n * a->esz)))
            gai_error(fn, "out of memory (%lld elements of '%s')", (long long)n, a->name);
        for (int d = 0; d + 1 < nd; d++)
            ld[d] = oh[d + 1] - ol[d + 1];
        gai_xfer(a, 'g', ol, oh, *tmp, ld, NULL, NULL, fn);
        strides_of(nd, ld, ost);
        base = *tmp;
    }
    for (int e = 0; e < c->a->ndim; e++)
        st[e] = o->map[e] >= 0 ? ost[o->map[e]] : 0;
    return base;
}

/* Each rank's part of the driver patch c (the blocks it owns), with up to 3 operands. */
static void walk(kctx_t *k, const patch_t *c, int nops, const patch_t *ops, const char *fn)
{
    gai_array_t *a = c->a;
    int nd = a->ndim;
    k->nd = nd;
    k->fn = fn;
    k->name = a->name;
    memcpy(k->ddims, a->dims, sizeof(int64_t) * (size_t)nd);
    if (c->empty)
        return;
    int64_t nt = 0;
    gai_check(rmc_dist_owned(a->dist, gai.me, NULL, 0, &nt), fn, "rmc_dist_owned");
    if (nt == 0)
        return;
    int64_t tbuf[64], *tiles = nt <= 64 ? tbuf : malloc(sizeof(int64_t) * (size_t)nt);
    if (!tiles)
        gai_error(fn, "out of memory");
    gai_check(rmc_dist_owned(a->dist, gai.me, tiles, nt, &nt), fn, "rmc_dist_owned");
    row_fn_t row = row_of(a->elem);
    if (a->elem == RMC_ELEM_OPAQUE) { /* user-defined type: bytes are filled or copied, no more */
        if (k->op != OP_FILL && k->op != OP_COPY)
            gai_numeric(a, fn);
        row = row_bytes;
        k->esz = a->esz;
    }
    for (int64_t ti = 0; ti < nt; ti++) {
        int64_t tl[GA_MAX_DIM], th[GA_MAX_DIM], rl[GA_MAX_DIM], rh[GA_MAX_DIM];
        rmc_dist_tile(a->dist, tiles[ti], tl, th, NULL);
        int empty = 0;
        for (int d = 0; d < nd; d++) {
            rl[d] = tl[d] > c->l[d] ? tl[d] : c->l[d];
            rh[d] = th[d] < c->h[d] ? th[d] : c->h[d];
            empty |= rh[d] <= rl[d];
        }
        if (empty)
            continue;
        int64_t ld[GA_MAX_DIM], st[4][GA_MAX_DIM];
        char *p[4] = {NULL, NULL, NULL, NULL};
        void *tmp[4] = {NULL, NULL, NULL, NULL};
        char *base = gai_block_ptr(a, tiles[ti], ld);
        if (!base)
            gai_error(fn, "array '%s': own block %lld is not addressable", a->name,
                      (long long)tiles[ti]);
        strides_of(nd, ld, st[0]);
        for (int d = 0; d < nd; d++)
            base += (rl[d] - tl[d]) * st[0][d] * (int64_t)a->esz;
        p[0] = base;
        for (int i = 0; i < nops; i++)
            p[i + 1] = operand_piece(c, &ops[i], rl, rh, st[i + 1], &tmp[i + 1], fn);
        for (int i = nops + 1; i < 4; i++)
            memset(st[i], 0, sizeof st[i]);
        /* rows along the last dimension longer than 1 (else the last) */
        int inner = nd - 1;
        while (inner > 0 && rh[inner] - rl[inner] == 1)
            inner--;
        k->inner = inner;
        int64_t idx[GA_MAX_DIM], s[4], n = rh[inner] - rl[inner];
        for (int i = 0; i < 4; i++)
            s[i] = st[i][inner];
        memcpy(idx, rl, sizeof(int64_t) * (size_t)nd);
        for (;;) {
            char *q[4];
            for (int i = 0; i < 4; i++) {
                q[i] = p[i];
                if (!q[i])
                    continue;
                for (int d = 0; d < nd; d++)
                    q[i] += (idx[d] - rl[d]) * st[i][d] * (int64_t)a->esz;
            }
            row(k, n, q, s, idx);
            int d = nd - 1;
            for (; d >= 0; d--) {
                if (d == inner)
                    continue;
                if (++idx[d] < rh[d])
                    break;
                idx[d] = rl[d];
            }
            if (d < 0)
                break;
        }
        for (int i = 0; i < 4; i++)
            free(tmp[i]);
    }
    if (tiles != tbuf)
        free(tiles);
}

static void sync_of(const patch_t *c, const char *fn)
{
    gai_sync_group(c->a->pgroup, fn);
}

/* value of the array's type from *v (NULL refused) */
static void scal_in(scal_t *s, const gai_array_t *a, const void *v, const char *what,
                    const char *fn)
{
    gai_numeric(a, fn); /* (a user-defined type's value is no scalar: unary fills take it) */
    if (!v)
        gai_error(fn, "array '%s': NULL %s", a->name, what);
    memset(s, 0, sizeof *s);
    memcpy(s->raw, v, a->esz);
}

/* ---------------------------------------------------------- driver-only operations --- */

static void unary(int op, patch_t *c, const void *v, const char *what, const char *fn)
{
    kctx_t k = {.op = op};
    if (c->a->elem == RMC_ELEM_OPAQUE && op == OP_FILL) { /* a user-defined type's value */
        if (!v)
            gai_error(fn, "array '%s': NULL %s", c->a->name, what);
        k.val = v;
    } else if (what) {
        scal_in(&k.s1, c->a, v, what, fn);
    }
    if (op == OP_RAND) {
        static uint64_t calls;
        k.rng =
            0x243f6a8885a308d3ull ^ ((uint64_t)gai.me << 40) ^ (++calls * 0x9e3779b97f4a7c15ull);
    }
    sync_of(c, fn);
    walk(&k, c, 0, NULL, fn);
    sync_of(c, fn);
}

/* Collective. Patch [lo, hi] times *alpha (the array's type). */
void NGA_Scale_patch(int g_a, int lo[], int hi[], void *alpha)
{
    patch_t c;
    patch_32(&c, g_a, lo, hi, "NGA_Scale_patch");
    unary(OP_SCALE, &c, alpha, "alpha", "NGA_Scale_patch");
}

void NGA_Scale_patch64(int g_a, int64_t lo[], int64_t hi[], void *alpha)
{
    patch_t c;
    patch_64(&c, g_a, lo, hi, "NGA_Scale_patch64");
    unary(OP_SCALE, &c, alpha, "alpha", "NGA_Scale_patch64");
}

/* Collective. Every element times *value. */
void GA_Scale(int g_a, void *value)
{
    patch_t c;
    patch_whole(&c, g_a, "GA_Scale");
    unary(OP_SCALE, &c, value, "value", "GA_Scale");
}

/* Collective. Patch set to *val. */
void NGA_Fill_patch(int g_a, int lo[], int hi[], void *val)
{
    patch_t c;
    patch_32(&c, g_a, lo, hi, "NGA_Fill_patch");
    unary(OP_FILL, &c, val, "value", "NGA_Fill_patch");
}

void NGA_Fill_patch64(int g_a, int64_t lo[], int64_t hi[], void *val)
{
    patch_t c;
    patch_64(&c, g_a, lo, hi, "NGA_Fill_patch64");
    unary(OP_FILL, &c, val, "value", "NGA_Fill_patch64");
}

/* Collective. Patch set to 0. */
/* A zero element of a's type (16 bytes of zeros cover the numeric types; a user-defined type's
 * may be larger): zero16 or a heap block the caller frees. */
static void *zero_elem(const gai_array_t *a, char zero16[16], const char *fn)
{
    memset(zero16, 0, 16);
    if (a->esz <= 16)
        return zero16;
    void *z = calloc(1, a->esz);
    if (!z)
        gai_error(fn, "out of memory (%zu bytes)", a->esz);
    return z;
}

void NGA_Zero_patch(int g_a, int lo[], int hi[])
{
    patch_t c;
    char z16[16];
    patch_32(&c, g_a, lo, hi, "NGA_Zero_patch");
    void *zero = zero_elem(c.a, z16, "NGA_Zero_patch");
    unary(OP_FILL, &c, zero, "value", "NGA_Zero_patch");
    if (zero != z16)
        free(zero);
}

void NGA_Zero_patch64(int g_a, int64_t lo[], int64_t hi[])
{
    patch_t c;
    char z16[16];
    patch_64(&c, g_a, lo, hi, "NGA_Zero_patch64");
    void *zero = zero_elem(c.a, z16, "NGA_Zero_patch64");
    unary(OP_FILL, &c, zero, "value", "NGA_Zero_patch64");
    if (zero != z16)
        free(zero);
}

/* Collective. Every element (patch) replaced by its absolute value (complex: |z| + 0i). */
void GA_Abs_value(int g_a)
{
    patch_t c;
    patch_whole(&c, g_a, "GA_Abs_value");
    unary(OP_ABS, &c, NULL, NULL, "GA_Abs_value");
}

void GA_Abs_value_patch(int g_a, int *lo, int *hi)
{
    patch_t c;
    patch_32(&c, g_a, lo, hi, "GA_Abs_value_patch");
    unary(OP_ABS, &c, NULL, NULL, "GA_Abs_value_patch");
}

void GA_Abs_value_patch64(int g_a, int64_t *lo, int64_t *hi)
{
    patch_t c;
    patch_64(&c, g_a, lo, hi, "GA_Abs_value_patch64");
    unary(OP_ABS, &c, NULL, NULL, "GA_Abs_value_patch64");
}

/* Collective. *alpha added to every element (patch). */
void GA_Add_constant(int g_a, void *alpha)
{
    patch_t c;
    patch_whole(&c, g_a, "GA_Add_constant");
    unary(OP_ADDC, &c, alpha, "alpha", "GA_Add_constant");
}

void GA_Add_constant_patch(int g, int *lo, int *hi, void *alpha)
{
    patch_t c;
    patch_32(&c, g, lo, hi, "GA_Add_constant_patch");
    unary(OP_ADDC, &c, alpha, "alpha", "GA_Add_constant_patch");
}

void GA_Add_constant_patch64(int g, int64_t *lo, int64_t *hi, void *alpha)
{
    patch_t c;
    patch_64(&c, g, lo, hi, "GA_Add_constant_patch64");
    unary(OP_ADDC, &c, alpha, "alpha", "GA_Add_constant_patch64");
}

/* Collective. Every element (patch) replaced by 1 / x (integers: integer division; a zero
 * element aborts as in GA). */
void GA_Recip(int g_a)
{
    patch_t c;
    patch_whole(&c, g_a, "GA_Recip");
    unary(OP_RECIP, &c, NULL, NULL, "GA_Recip");
}

void GA_Recip_patch(int g_a, int *lo, int *hi)
{
    patch_t c;
    patch_32(&c, g_a, lo, hi, "GA_Recip_patch");
    unary(OP_RECIP, &c, NULL, NULL, "GA_Recip_patch");
}

void GA_Recip_patch64(int g_a, int64_t *lo, int64_t *hi)
{
    patch_t c;
    patch_64(&c, g_a, lo, hi, "GA_Recip_patch64");
    unary(OP_RECIP, &c, NULL, NULL, "GA_Recip_patch64");
}

/* Collective. Every element set to *value times a uniform random number in [0, 1) (integers
 * truncated; complex: the complex value scaled). Each rank draws from its own stream. */
void GA_Randomize(int g_a, void *value)
{
    patch_t c;
    patch_whole(&c, g_a, "GA_Randomize");
    unary(OP_RAND, &c, value, "value", "GA_Randomize");
}

void NGA_Randomize(int g_a, void *value)
{
    GA_Randomize(g_a, value);
}

/* ------------------------------------------------------ operations with operands --- */

/* Collective. Operands in the driver's own memory other than element for element: a patch of the
 * driver's array (or of an overlay laid out like it) that overlaps the driver's otherwise (another
 * region of it, or transposed), or an array overlaid on it with another layout (GA_Overlay, either
 * way: its elements sit where other elements of the driver are). Each rank writes its blocks while
 * the others may still read them, so such an operand is read from a snapshot, a temporary copy of
 * its patch (a duplicate of its array; *snap its handle, 0 when none was needed), as if every
 * element were read before any is written (GA 5.8.2 computes NGA_Add_patch so, and refuses such a
 * NGA_Copy_patch). */
static void unalias(const patch_t *c, int nops, patch_t *ops, int snap[], const char *fn)
{
    int nd = c->a->ndim;
    for (int i = 0; i < nops; i++) {
        patch_t *o = &ops[i];
        snap[i] = 0;
        if (o->empty || c->empty || gai_memory_of(o->a, fn) != gai_memory_of(c->a, fn))
            continue;
        /* the same array, or one laid out as it is over the same memory (an overlay of its type's
         * size and distribution): an element of both patches' index is at one address */
        if (o->a == c->a || (o->a->esz == c->a->esz && rmc_dist_same(o->a->dist, c->a->dist))) {
            int same = !o->reshape, meet = 1;
            for (int d = 0; d < nd; d++) {
                same &= o->l[d] == c->l[d] && o->h[d] == c->h[d] &&
                        (o->map[d] == d || c->h[d] - c->l[d] == 1);
                meet &= o->l[d] < c->h[d] && c->l[d] < o->h[d];
            }
            if (same || !meet)
                continue;
        }
        int g = GA_Duplicate(o->a->handle, "ga-compat snapshot");
        if (!g)
            gai_error(fn,
                      "array '%s': an operand shares its memory, and the memory limit refuses "
                      "the temporary copy of the operand it needs",
                      c->a->name);
        int64_t hi[GA_MAX_DIM];
        for (int d = 0; d < o->a->ndim; d++)
            hi[d] = o->h[d] - 1;
        NGA_Copy_patch64('N', o->a->handle, o->l, hi, g, o->l, hi);
        o->a = gai_array(g, fn);
        snap[i] = g;
    }
}
static void unalias_end(int nops, const int snap[])
{
    for (int i = 0; i < nops; i++)
        if (snap[i])
            GA_Destroy(snap[i]);
}

/* c = op(operands), each rank on its part of c. */
static void binary(int op, patch_t *c, int nops, patch_t *ops, int trans, const char *fn)
{
    kctx_t k = {.op = op};
    int snap[3];
    for (int i = 0; i < nops; i++)
        conform(c, &ops[i], trans, fn);
    unalias(c, nops, ops, snap, fn);
    sync_of(c, fn);
    walk(&k, c, nops, ops, fn);
    sync_of(c, fn);
    unalias_end(nops, snap);
}

/* Collective. c = alpha a + beta b (whole arrays / patches of conforming shapes). */
static void add_op(void *alpha, patch_t *pa, void *beta, patch_t *pb, patch_t *pc, const char *fn)
{
    kctx_t k = {.op = OP_ADD};
    patch_t ops[2] = {*pa, *pb};
    scal_in(&k.s1, pc->a, alpha, "alpha", fn);
    scal_in(&k.s2, pc->a, beta, "beta", fn);
    conform(pc, &ops[0], 0, fn);
    conform(pc, &ops[1], 0, fn);
    int snap[2];
    unalias(pc, 2, ops, snap, fn);
    sync_of(pc, fn);
    walk(&k, pc, 2, ops, fn);
    sync_of(pc, fn);
    unalias_end(2, snap);
}

void GA_Add(void *alpha, int g_a, void *beta, int g_b, int g_c)
{
    patch_t a, b, c;
    patch_whole(&a, g_a, "GA_Add");
    patch_whole(&b, g_b, "GA_Add");
    patch_whole(&c, g_c, "GA_Add");
    add_op(alpha, &a, beta, &b, &c, "GA_Add");
}

void NGA_Add_patch(void *alpha, int g_a, int alo[], int ahi[], void *beta, int g_b, int blo[],
                   int bhi[], int g_c, int clo[], int chi[])
{
    const char *fn = "NGA_Add_patch";
    patch_t a, b, c;
    patch_32(&a, g_a, alo, ahi, fn);
    patch_32(&b, g_b, blo, bhi, fn);
    patch_32(&c, g_c, clo, chi, fn);
    add_op(alpha, &a, beta, &b, &c, fn);
}

void NGA_Add_patch64(void *alpha, int g_a, int64_t alo[], int64_t ahi[], void *beta, int g_b,
                     int64_t blo[], int64_t bhi[], int g_c, int64_t clo[], int64_t chi[])
{
    const char *fn = "NGA_Add_patch64";
    patch_t a, b, c;
    patch_64(&a, g_a, alo, ahi, fn);
    patch_64(&b, g_b, blo, bhi, fn);
    patch_64(&c, g_c, clo, chi, fn);
    add_op(alpha, &a, beta, &b, &c, fn);
}

/* Collective. b = a: same type and shape, any distributions. */
void GA_Copy(int g_a, int g_b)
{
    const char *fn = "GA_Copy";
    patch_t a, b;
    patch_whole(&a, g_a, fn);
    patch_whole(&b, g_b, fn);
    if (a.a == b.a)
        gai_error(fn, "array '%s' copied onto itself", a.a->name);
    if (a.a->ndim != b.a->ndim || memcmp(a.a->dims, b.a->dims, sizeof(int64_t) * (size_t)a.a->ndim))
        gai_error(fn, "arrays '%s' and '%s' have different shapes", a.a->name, b.a->name);
    binary(OP_COPY, &b, 1, &a, 0, fn);
}

static int trans_of(char t, const char *fn)
{
    if (t == 'N' || t == 'n')
        return 0;
    if (t == 'T' || t == 't')
        return 1;
    gai_error(fn, "trans '%c' (expected 'N' or 'T')", t);
}

/* Collective. Patch of b = patch of a ('T': transposed, 2-D). */
void NGA_Copy_patch(char trans, int g_a, int alo[], int ahi[], int g_b, int blo[], int bhi[])
{
    const char *fn = "NGA_Copy_patch";
    patch_t a, b;
    patch_32(&a, g_a, alo, ahi, fn);
    patch_32(&b, g_b, blo, bhi, fn);
    binary(OP_COPY, &b, 1, &a, trans_of(trans, fn), fn);
}

void NGA_Copy_patch64(char trans, int g_a, int64_t alo[], int64_t ahi[], int g_b, int64_t blo[],
                      int64_t bhi[])
{
    const char *fn = "NGA_Copy_patch64";
    patch_t a, b;
    patch_64(&a, g_a, alo, ahi, fn);
    patch_64(&b, g_b, blo, bhi, fn);
    binary(OP_COPY, &b, 1, &a, trans_of(trans, fn), fn);
}

/* Element-wise c = a op b (multiply, divide: a zero divisor aborts; maximum / minimum: complex by
 * magnitude, b on ties). Collective. */
#define ELEM_FNS(NAME, OP)                                                                         \
    void GA_Elem_##NAME(int g_a, int g_b, int g_c)                                                 \
    {                                                                                              \
        const char *fn = "GA_Elem_" #NAME;                                                         \
        patch_t ops[2], c;                                                                         \
        patch_whole(&ops[0], g_a, fn);                                                             \
        patch_whole(&ops[1], g_b, fn);                                                             \
        patch_whole(&c, g_c, fn);                                                                  \
        binary(OP, &c, 2, ops, 0, fn);                                                             \
    }                                                                                              \
    void GA_Elem_##NAME##_patch(int g_a, int *alo, int *ahi, int g_b, int *blo, int *bhi, int g_c, \
                                int *clo, int *chi)                                                \
    {                                                                                              \
        const char *fn = "GA_Elem_" #NAME "_patch";                                                \
        patch_t ops[2], c;                                                                         \
        patch_32(&ops[0], g_a, alo, ahi, fn);                                                      \
        patch_32(&ops[1], g_b, blo, bhi, fn);                                                      \
        patch_32(&c, g_c, clo, chi, fn);                                                           \
        binary(OP, &c, 2, ops, 0, fn);                                                             \
    }                                                                                              \
    void GA_Elem_##NAME##_patch64(int g_a, int64_t *alo, int64_t *ahi, int g_b, int64_t *blo,      \
                                  int64_t *bhi, int g_c, int64_t *clo, int64_t *chi)               \
    {                                                                                              \
        const char *fn = "GA_Elem_" #NAME "_patch64";                                              \
        patch_t ops[2], c;                                                                         \
        patch_64(&ops[0], g_a, alo, ahi, fn);                                                      \
        patch_64(&ops[1], g_b, blo, bhi, fn);                                                      \
        patch_64(&c, g_c, clo, chi, fn);                                                           \
        binary(OP, &c, 2, ops, 0, fn);                                                             \
    }
ELEM_FNS(multiply, OP_MUL)
ELEM_FNS(divide, OP_DIV)
ELEM_FNS(maximum, OP_MAX)
ELEM_FNS(minimum, OP_MIN)

/* Collective. m = element-wise median of a, b, c (complex: by magnitude). Among elements whose
 * keys tie, GA 5.8.2's pick: a when |a| = |b|; else c when |c| ties with |a| or |b|. */
void GA_Median(int g_a, int g_b, int g_c, int g_m)
{
    const char *fn = "GA_Median";
    patch_t ops[3], m;
    patch_whole(&ops[0], g_a, fn);
    patch_whole(&ops[1], g_b, fn);
    patch_whole(&ops[2], g_c, fn);
    patch_whole(&m, g_m, fn);
    binary(OP_MEDIAN, &m, 3, ops, 0, fn);
}

void GA_Median_patch(int g_a, int *alo, int *ahi, int g_b, int *blo, int *bhi, int g_c, int *clo,
                     int *chi, int g_m, int *mlo, int *mhi)
{
    const char *fn = "GA_Median_patch";
    patch_t ops[3], m;
    patch_32(&ops[0], g_a, alo, ahi, fn);
    patch_32(&ops[1], g_b, blo, bhi, fn);
    patch_32(&ops[2], g_c, clo, chi, fn);
    patch_32(&m, g_m, mlo, mhi, fn);
    binary(OP_MEDIAN, &m, 3, ops, 0, fn);
}

void GA_Median_patch64(int g_a, int64_t *alo, int64_t *ahi, int g_b, int64_t *blo, int64_t *bhi,
                       int g_c, int64_t *clo, int64_t *chi, int g_m, int64_t *mlo, int64_t *mhi)
{
    const char *fn = "GA_Median_patch64";
    patch_t ops[3], m;
    patch_64(&ops[0], g_a, alo, ahi, fn);
    patch_64(&ops[1], g_b, blo, bhi, fn);
    patch_64(&ops[2], g_c, clo, chi, fn);
    patch_64(&m, g_m, mlo, mhi, fn);
    binary(OP_MEDIAN, &m, 3, ops, 0, fn);
}

/* ------------------------------------------------------------------- reductions --- */

/* Reductions over several arrays combine over one process group: all on the same one (GA 5.8.2:
 * "Both arrays must be defined on same group"; a dot of arrays on different groups would hang or
 * sum across the groups). */
static void same_group(const patch_t *a, const patch_t *b, const char *fn)
{
    gai_same_group(fn, a->a, b->a);
}

/* sum a .* op(b) over a's patch (transposed when t_a != t_b) into *out (the type's value). */
static void dot(patch_t *a, char ta, patch_t *b, char tb, int type, void *out, const char *fn)
{
    if (a->a->type != type)
        gai_error(fn, "array '%s' is %s, not %s", a->a->name, gai_type_name(a->a->type),
                  gai_type_name(type));
    same_group(a, b, fn);
    int trans = trans_of(ta, fn) != trans_of(tb, fn);
    conform(a, b, trans, fn);
    kctx_t k = {.op = OP_DOT};
    sync_of(a, fn);
    walk(&k, a, 1, b, fn);
    switch (type) {
    case C_INT:
    case C_LONG:
    case C_LONGLONG:
        gai_gop(a->a->pgroup, C_LONGLONG, &k.iacc, 1, "+", fn);
        if (type == C_INT)
            *(int *)out = (int)k.iacc;
        else
            memcpy(out, &k.iacc, sizeof k.iacc);
        break;
    case C_FLOAT:
    case C_DBL:
        gai_gop(a->a->pgroup, C_DBL, &k.dacc, 1, "+", fn);
        if (type == C_FLOAT)
            *(float *)out = (float)k.dacc;
        else
            *(double *)out = k.dacc;
        break;
    default:
        gai_gop(a->a->pgroup, C_DCPL, &k.zacc, 1, "+", fn);
        if (type == C_SCPL) {
            float complex z = (float complex)k.zacc;
            memcpy(out, &z, sizeof z);
        } else
            memcpy(out, &k.zacc, sizeof k.zacc);
    }
}

static void dot_whole(int g_a, int g_b, int type, void *out, const char *fn)
{
    patch_t a, b;
    patch_whole(&a, g_a, fn);
    patch_whole(&b, g_b, fn);
    if (a.a->ndim != b.a->ndim || memcmp(a.a->dims, b.a->dims, sizeof(int64_t) * (size_t)a.a->ndim))
        gai_error(fn, "arrays '%s' and '%s' have different shapes", a.a->name, b.a->name);
    dot(&a, 'N', &b, 'N', type, out, fn);
}

/* Collective. Dot products sum_i a_i b_i (complex: not conjugated, as GA), over the group. */
#define DOT_FNS(RT, NAME, PNAME, TYPE)                                                             \
    RT NAME(int g_a, int g_b)                                                                      \
    {                                                                                              \
        RT r;                                                                                      \
        dot_whole(g_a, g_b, TYPE, &r, #NAME);                                                      \
        return r;                                                                                  \
    }                                                                                              \
    RT PNAME(int g_a, char t_a, int alo[], int ahi[], int g_b, char t_b, int blo[], int bhi[])     \
    {                                                                                              \
        patch_t a, b;                                                                              \
        patch_32(&a, g_a, alo, ahi, #PNAME);                                                       \
        patch_32(&b, g_b, blo, bhi, #PNAME);                                                       \
        RT r;                                                                                      \
        dot(&a, t_a, &b, t_b, TYPE, &r, #PNAME);                                                   \
        return r;                                                                                  \
    }                                                                                              \
    RT PNAME##64(int g_a, char t_a, int64_t alo[], int64_t ahi[], int g_b, char t_b,               \
                 int64_t blo[], int64_t bhi[])                                                     \
    {                                                                                              \
        patch_t a, b;                                                                              \
        patch_64(&a, g_a, alo, ahi, #PNAME "64");                                                  \
        patch_64(&b, g_b, blo, bhi, #PNAME "64");                                                  \
        RT r;                                                                                      \
        dot(&a, t_a, &b, t_b, TYPE, &r, #PNAME "64");                                              \
        return r;                                                                                  \
    }
DOT_FNS(double, GA_Ddot, NGA_Ddot_patch, C_DBL)
DOT_FNS(int, GA_Idot, NGA_Idot_patch, C_INT)
DOT_FNS(long, GA_Ldot, NGA_Ldot_patch, C_LONG)
DOT_FNS(long long, GA_Lldot, NGA_Lldot_patch, C_LONGLONG)
DOT_FNS(float, GA_Fdot, NGA_Fdot_patch, C_FLOAT)
DOT_FNS(SingleComplex, GA_Cdot, NGA_Cdot_patch, C_SCPL)
DOT_FNS(DoubleComplex, GA_Zdot, NGA_Zdot_patch, C_DCPL)

/* 1-D: sum |a_i| (norm1) or max |a_i| (infinity); 2-D: the largest column sum of |a_ij| (norm1)
 * or row sum (infinity). Collective. */
static void norm(int g_a, double *nm, int op, const char *fn)
{
    patch_t a;
    patch_whole(&a, g_a, fn);
    if (!nm)
        gai_error(fn, "array '%s': NULL result", a.a->name);
    if (a.a->ndim > 2)
        gai_error(fn, "array '%s' has %d dimensions (norms of vectors and matrices only)",
                  a.a->name, a.a->ndim);
    kctx_t k = {.op = op};
    int64_t nv = 0;
    if (a.a->ndim == 2) {
        k.vdim = op == OP_NORM1; /* norm1: column sums, indexed by column */
        nv = a.a->dims[k.vdim];
        if (!(k.vec = calloc((size_t)nv, sizeof(double))))
            gai_error(fn, "out of memory");
    }
    sync_of(&a, fn);
    walk(&k, &a, 0, NULL, fn);
    if (k.vec) {
        if (nv > INT_MAX)
            gai_error(fn, "array '%s': %lld sums", a.a->name, (long long)nv);
        gai_gop(a.a->pgroup, C_DBL, k.vec, (int)nv, "+", fn);
        double m = 0;
        for (int64_t i = 0; i < nv; i++)
            m = k.vec[i] > m ? k.vec[i] : m;
        free(k.vec);
        *nm = m;
    } else {
        gai_gop(a.a->pgroup, C_DBL, &k.dacc, 1, op == OP_NORM1 ? "+" : "max", fn);
        *nm = k.dacc;
    }
}

void GA_Norm1(int g_a, double *nm)
{
    norm(g_a, nm, OP_NORM1, "GA_Norm1");
}

void GA_Norm_infinity(int g_a, double *nm)
{
    norm(g_a, nm, OP_NORMI, "GA_Norm_infinity");
}

/* is x better than y (select's order: reals by value, complex by magnitude)? */
static int sel_better(rmc_elem_t e, int mx, const scal_t *x, const scal_t *y)
{
    double a, b;
    switch (e) {
    case RMC_ELEM_I32:
        return mx ? x->i32 > y->i32 : x->i32 < y->i32;
    case RMC_ELEM_I64:
        return mx ? x->i64 > y->i64 : x->i64 < y->i64;
    case RMC_ELEM_F32:
        a = x->f32, b = y->f32;
        break;
    case RMC_ELEM_F64:
        a = x->f64, b = y->f64;
        break;
    case RMC_ELEM_C32:
        a = cabs(x->c32), b = cabs(y->c32);
        break;
    default:
        a = cabs(x->c64), b = cabs(y->c64);
    }
    return mx ? a > b : a < b;
}

/* Collective. The largest ("max") or smallest ("min") element (complex: by magnitude) and its
 * subscripts; the lowest index among equals. */
static void select_elem(int g_a, const char *op, void *val, int64_t idx[], const char *fn)
{
    patch_t a;
    patch_whole(&a, g_a, fn);
    if (!op || !val)
        gai_error(fn, "array '%s': NULL op or value", a.a->name);
    int mx;
    if (!strcmp(op, "max"))
        mx = 1;
    else if (!strcmp(op, "min"))
        mx = 0;
    else
        gai_error(fn, "op '%s' (expected \"max\" or \"min\")", op);
    kctx_t k = {.op = mx ? OP_SELMAX : OP_SELMIN};
    sync_of(&a, fn);
    walk(&k, &a, 0, NULL, fn);
    struct {
        scal_t v;
        int64_t lin;
        int64_t have;
    } mine = {k.best, k.lin, k.have}, *all;
    gai_group_t *g = gai_group(a.a->pgroup, fn);
    if (!(all = malloc(sizeof *all * (size_t)g->size)))
        gai_error(fn, "out of memory");
    MPI_Request rq;
    MPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, g->comm,
                   &rq);
    gai_check(rmc_wait_mpi(&rq), fn, "gathering the candidates"); /* (serving AMs meanwhile) */
    int b = -1;
    for (int r = 0; r < g->size; r++) {
        if (!all[r].have)
            continue;
        if (b < 0 || sel_better(a.a->elem, mx, &all[r].v, &all[b].v) ||
            (!sel_better(a.a->elem, mx, &all[b].v, &all[r].v) && all[r].lin < all[b].lin))
            b = r;
    }
    if (b < 0)
        gai_error(fn, "array '%s': no element found", a.a->name);
    memcpy(val, all[b].v.raw, a.a->esz);
    int64_t lin = all[b].lin;
    for (int d = a.a->ndim - 1; d >= 0; d--)
        idx[d] = lin % a.a->dims[d], lin /= a.a->dims[d];
    free(all);
}

void NGA_Select_elem(int g_a, char *op, void *val, int *index)
{
    int64_t idx[GA_MAX_DIM];
    if (!index)
        gai_error("NGA_Select_elem", "NULL index");
    select_elem(g_a, op, val, idx, "NGA_Select_elem");
    gai_array_t *a = gai_array(g_a, "NGA_Select_elem");
    for (int d = 0; d < a->ndim; d++)
        index[d] = (int)idx[d];
}

void NGA_Select_elem64(int g_a, char *op, void *val, int64_t *index)
{
    if (!index)
        gai_error("NGA_Select_elem64", "NULL index");
    select_elem(g_a, op, val, index, "NGA_Select_elem64");
}

/* the type's "infinity" (GA's) and its negation in s */
static void inf_of(const gai_array_t *a, scal_t *s, int neg, const char *fn)
{
    memset(s, 0, sizeof *s);
    switch (a->elem) {
    case RMC_ELEM_I32:
        s->i32 = neg ? -INF_I32 : INF_I32;
        break;
    case RMC_ELEM_I64:
        s->i64 = neg ? -INF_I64 : INF_I64;
        break;
    case RMC_ELEM_F32:
        s->f32 = neg ? -INF_F32 : INF_F32;
        break;
    case RMC_ELEM_F64:
        s->f64 = neg ? -INF_F64 : INF_F64;
        break;
    default:
        gai_error(fn, "array '%s' is complex (real types only)", a->name);
    }
}

/* Collective. The largest t with a + t b >= 0 (a >= 0 required) into *step (the array's type;
 * GA's infinity when no element of b is negative). */
static void step_max(patch_t *a, patch_t *b, void *step, const char *fn)
{
    if (!step)
        gai_error(fn, "array '%s': NULL step", a->a->name);
    same_group(a, b, fn);
    conform(a, b, 0, fn);
    kctx_t k = {.op = OP_STEPMAX};
    inf_of(a->a, &k.best, 0, fn);
    sync_of(a, fn);
    walk(&k, a, 1, b, fn);
    gai_gop(a->a->pgroup, a->a->type, k.best.raw, 1, "min", fn);
    memcpy(step, k.best.raw, a->a->esz);
}

void GA_Step_max(int g_a, int g_b, void *step)
{
    patch_t a, b;
    patch_whole(&a, g_a, "GA_Step_max");
    patch_whole(&b, g_b, "GA_Step_max");
    step_max(&a, &b, step, "GA_Step_max");
}

void GA_Step_max_patch(int g_a, int *alo, int *ahi, int g_b, int *blo, int *bhi, void *step)
{
    patch_t a, b;
    patch_32(&a, g_a, alo, ahi, "GA_Step_max_patch");
    patch_32(&b, g_b, blo, bhi, "GA_Step_max_patch");
    step_max(&a, &b, step, "GA_Step_max_patch");
}

void GA_Step_max_patch64(int g_a, int64_t alo[], int64_t ahi[], int g_b, int64_t blo[],
                         int64_t bhi[], void *step)
{
    patch_t a, b;
    patch_64(&a, g_a, alo, ahi, "GA_Step_max_patch64");
    patch_64(&b, g_b, blo, bhi, "GA_Step_max_patch64");
    step_max(&a, &b, step, "GA_Step_max_patch64");
}

/* Collective. For each element the step t along vv at which xx + t vv reaches the bound it heads
 * for (xxuu for vv > 0, xxll for vv < 0; ll <= xx <= uu required): boundmin and wolfemin = the
 * smallest, boundmax the largest (GA's infinity when some vv is 0); all three GA's infinity when vv
 * is 0 everywhere (no component moves: no bound), as GA 5.8.2. Results of the arrays' type. */
static void step_bound(patch_t *x, patch_t *ops, void *bmin, void *wmin, void *bmax, const char *fn)
{
    if (!bmin || !wmin || !bmax)
        gai_error(fn, "array '%s': NULL result", x->a->name);
    for (int i = 0; i < 3; i++) {
        same_group(x, &ops[i], fn);
        conform(x, &ops[i], 0, fn);
    }
    kctx_t k = {.op = OP_SBI};
    scal_t inf, ninf;
    inf_of(x->a, &inf, 0, fn);
    inf_of(x->a, &ninf, 1, fn);
    k.best = inf;
    k.bmax = ninf;
    sync_of(x, fn);
    walk(&k, x, 3, ops, fn);
    int64_t vz = k.vzero;
    gai_gop(x->a->pgroup, x->a->type, k.best.raw, 1, "min", fn);
    gai_gop(x->a->pgroup, x->a->type, k.bmax.raw, 1, "max", fn);
    gai_gop(x->a->pgroup, C_LONGLONG, &vz, 1, "max", fn);
    size_t es = x->a->esz;
    memcpy(wmin, k.best.raw, es);
    memcpy(bmin, k.best.raw, es);
    memcpy(bmax, vz ? inf.raw : k.bmax.raw, es);
}

void GA_Step_bound_info(int g_xx, int g_vv, int g_xxll, int g_xxuu, void *boundmin, void *wolfemin,
                        void *boundmax)
{
    const char *fn = "GA_Step_bound_info";
    patch_t x, ops[3];
    patch_whole(&x, g_xx, fn);
    patch_whole(&ops[0], g_vv, fn);
    patch_whole(&ops[1], g_xxll, fn);
    patch_whole(&ops[2], g_xxuu, fn);
    step_bound(&x, ops, boundmin, wolfemin, boundmax, fn);
}

void GA_Step_bound_info_patch(int g_xx, int *xxlo, int *xxhi, int g_vv, int *vvlo, int *vvhi,
                              int g_xxll, int *xxlllo, int *xxllhi, int g_xxuu, int *xxuulo,
                              int *xxuuhi, void *boundmin, void *wolfemin, void *boundmax)
{
    const char *fn = "GA_Step_bound_info_patch";
    patch_t x, ops[3];
    patch_32(&x, g_xx, xxlo, xxhi, fn);
    patch_32(&ops[0], g_vv, vvlo, vvhi, fn);
    patch_32(&ops[1], g_xxll, xxlllo, xxllhi, fn);
    patch_32(&ops[2], g_xxuu, xxuulo, xxuuhi, fn);
    step_bound(&x, ops, boundmin, wolfemin, boundmax, fn);
}

void GA_Step_bound_info_patch64(int g_xx, int64_t xxlo[], int64_t xxhi[], int g_vv, int64_t vvlo[],
                                int64_t vvhi[], int g_xxll, int64_t xxlllo[], int64_t xxllhi[],
                                int64_t g_xxuu, int64_t xxuulo[], int64_t xxuuhi[], void *boundmin,
                                void *wolfemin, void *boundmax)
{
    const char *fn = "GA_Step_bound_info_patch64";
    patch_t x, ops[3];
    patch_64(&x, g_xx, xxlo, xxhi, fn);
    patch_64(&ops[0], g_vv, vvlo, vvhi, fn);
    patch_64(&ops[1], g_xxll, xxlllo, xxllhi, fn);
    patch_64(&ops[2], (int)g_xxuu, xxuulo, xxuuhi, fn);
    step_bound(&x, ops, boundmin, wolfemin, boundmax, fn);
}

/* ------------------------------------------------------------------ fill and zero --- */

/* Collective. Every element set to *value (one element of the array's type); the ghost cells of
 * an array with ghosts too (as GA 5.8.2's: what an update would bring them). */
void GA_Fill(int g_a, void *value)
{
    const char *fn = "GA_Fill";
    gai_array_t *a = gai_array(g_a, fn);
    if (!value)
        gai_error(fn, "array '%s': NULL value", a->name);
    gai_sync_group(a->pgroup, fn);
    gai_check(rmc_matrix_fill(a->m, value), fn, "rmc_matrix_fill");
}

void NGA_Fill(int g_a, void *value)
{
    GA_Fill(g_a, value);
}

/* Collective. Every element set to 0; the ghost cells of an array with ghosts keep their values
 * (as GA 5.8.2's, and as GA_Scale and the other whole-array operations keep them). */
void GA_Zero(int g_a)
{
    const char *fn = "GA_Zero";
    gai_array_t *a = gai_array(g_a, fn);
    char z16[16];
    void *zero = zero_elem(a, z16, fn);
    if (a->has_ghosts) { /* the padded storage holds the ghost cells: the owned blocks alone */
        patch_t c;
        patch_whole(&c, g_a, fn);
        unary(OP_FILL, &c, zero, "value", fn);
    } else {
        GA_Fill(g_a, zero);
    }
    if (zero != z16)
        free(zero);
}

void NGA_Zero(int g_a)
{
    GA_Zero(g_a);
}
