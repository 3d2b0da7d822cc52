/* SCF mini-app: an NWChem-style self-consistent-field Fock build on Global Arrays (seed 004
 * §IV.C, Figure 10). One source, built three ways (apps/Makefile.inc): apps/scf/scf on ga-compat,
 * apps/scf/scf_ga on Debian's GA 5.8.2 over ARMCI-MPI (run with ARMCI_USE_WIN_ALLOCATE=0) and
 * apps/scf/scf_ga_rmc on the same GA over RMC's libarmci.
 *
 * Each iteration builds the Fock matrix F from the density D (n x n doubles, GA's default
 * distribution) in (I, J) tasks of b x b blocks handed out by a shared counter (NGA_Read_inc on a
 * one-element C_INT array, rank 0's): a task gets the screened D patch (blocks K = I-1..I+1,
 * L = J-1..J+1, one NGA_Get), contracts it with synthetic integrals and NGA_Accs the block
 *   F_IJ = H_IJ + sum_{K,L screened} S_IK D_KL S_LJ,     s(p, q) = 0.5 / (1 + (p - q)^2),
 * (the exchange-like (ik|jl) = s(i,k) s(j,l) with integral screening beyond neighbouring blocks;
 * h(i, j) = -1 / (1 + |i - j|)). Then E = GA_Ddot(D, F) (the iteration's energy), |F|^2 =
 * GA_Ddot(F, F) and a damped density update by GA_Dgemm: D <- (1 - lambda) D + lambda n/|F|^2 F
 * F^T.
 *
 * --check computes the same iterations serially on rank 0 (every F block by the same arithmetic,
 * so F agrees to rounding; E and D through other summation orders) and compares F, D and E after
 * every iteration: relative error <= 1e-10 of the largest element / |E|. Built with -DSCF_TEST the
 * program runs a small checked case with no arguments (the tests), and with -DSCF_NO_MAIN it is
 * only scf_run (apps/scf/scf.h) for the GA benchmark. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <ga.h>
#include <macdecls.h>
#include "scf.h"

#if defined(SCF_ON_GACOMPAT)
#define SCF_IMPL "ga-compat"
#elif defined(SCF_ON_RMC_ARMCI)
#define SCF_IMPL "GA 5.8.2 on RMC's libarmci"
#else
#define SCF_IMPL "GA 5.8.2 on ARMCI-MPI"
#endif

#define SCF_TOL 1e-10

static double s_int(int p, int q)
{
    double d = (double)(p - q);
    return 0.5 / (1.0 + d * d);
}

static double h_core(int i, int j)
{
    return -1.0 / (1.0 + fabs((double)(i - j)));
}

static double d_init(int i, int j)
{
    return 1.0 / (1.0 + fabs((double)(i - j))) + 0.001 * (double)((i + j) % 7);
}

/* The screened ranges of a task (I, J): rows [*k0, *k1) of D for I, columns [*l0, *l1) for J. */
static void screen(int n, int b, int I, int J, int *k0, int *k1, int *l0, int *l1)
{
    *k0 = (I > 0 ? I - 1 : 0) * b;
    *k1 = (I + 2) * b < n ? (I + 2) * b : n;
    *l0 = (J > 0 ? J - 1 : 0) * b;
    *l1 = (J + 2) * b < n ? (J + 2) * b : n;
}

/* Computes block F_IJ (fb, ld = b) from the screened D patch dp (ld = ldp) into fb; w is scratch
 * of b x 3b. The same arithmetic for the parallel tasks and the serial reference. */
static void fock_block(int n, int b, int I, int J, const double *dp, int ldp, double *w, double *fb)
{
    int k0, k1, l0, l1;
    screen(n, b, I, J, &k0, &k1, &l0, &l1);
    int i0 = I * b, i1 = i0 + b < n ? i0 + b : n, j0 = J * b, j1 = j0 + b < n ? j0 + b : n;
    int nl = l1 - l0;
    for (int i = i0; i < i1; i++) {
        double *wr = w + (size_t)(i - i0) * (size_t)nl;
        for (int l = 0; l < nl; l++)
            wr[l] = 0.0;
        for (int k = k0; k < k1; k++) {
            double sik = s_int(i, k);
            const double *dr = dp + (size_t)(k - k0) * (size_t)ldp;
            for (int l = 0; l < nl; l++)
                wr[l] += sik * dr[l];
        }
        for (int j = j0; j < j1; j++) {
            double f = h_core(i, j);
            for (int l = 0; l < nl; l++)
                f += wr[l] * s_int(l0 + l, j);
            fb[(size_t)(i - i0) * (size_t)b + (size_t)(j - j0)] = f;
        }
    }
}

/* Serial reference state (rank 0, --check). */
typedef struct ref {
    double *d, *f, *tmp, *w, *fb;
} ref_t;

/* One serial iteration: F from D by blocks, E, then the density update. Returns E. */
static double ref_iter(const scf_params_t *p, ref_t *s)
{
    int n = p->n, b = p->b, nb = (n + b - 1) / b;
    for (int I = 0; I < nb; I++)
        for (int J = 0; J < nb; J++) {
            int k0, k1, l0, l1;
            screen(n, b, I, J, &k0, &k1, &l0, &l1);
            fock_block(n, b, I, J, s->d + (size_t)k0 * (size_t)n + (size_t)l0, n, s->w, s->fb);
            int i0 = I * b, j0 = J * b;
            for (int i = i0; i < i0 + b && i < n; i++)
                for (int j = j0; j < j0 + b && j < n; j++)
                    s->f[(size_t)i * (size_t)n + (size_t)j] =
                        s->fb[(size_t)(i - i0) * (size_t)b + (size_t)(j - j0)];
        }
    double e = 0.0, f2 = 0.0;
    for (size_t x = 0; x < (size_t)n * (size_t)n; x++) {
        e += s->d[x] * s->f[x];
        f2 += s->f[x] * s->f[x];
    }
    double alpha = p->lambda * (double)n / f2, beta = 1.0 - p->lambda;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int k = 0; k < n; k++)
                acc += s->f[(size_t)i * (size_t)n + (size_t)k] *
                       s->f[(size_t)j * (size_t)n + (size_t)k];
            s->tmp[(size_t)i * (size_t)n + (size_t)j] =
                beta * s->d[(size_t)i * (size_t)n + (size_t)j] + alpha * acc;
        }
    memcpy(s->d, s->tmp, sizeof(double) * (size_t)n * (size_t)n);
    return e;
}

/* Largest |got - want| over the matrix, relative to its largest |want|. */
static double rel_err(const double *got, const double *want, size_t len)
{
    double m = 0.0, e = 0.0;
    for (size_t x = 0; x < len; x++) {
        m = fmax(m, fabs(want[x]));
        e = fmax(e, fabs(got[x] - want[x]));
    }
    return m > 0.0 ? e / m : e;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        GA_Error("scf: out of memory", (int)(n >> 20));
    return p;
}

int scf_run(const scf_params_t *p, scf_result_t *r)
{
    int n = p->n, b = p->b, nb = (n + b - 1) / b, me = GA_Nodeid();
    memset(r, 0, sizeof(*r));
    if (n < 1 || b < 1 || p->iters < 1 || p->iters > SCF_MAX_ITERS)
        GA_Error("scf: bad parameters (n >= 1, b >= 1, 1 <= iters <= 64)", p->iters);
    int dims[2] = {n, n}, one = 1, zero = 0;
    int g_d = NGA_Create(C_DBL, 2, dims, "density", NULL);
    int g_f = NGA_Create(C_DBL, 2, dims, "fock", NULL);
    int g_cnt = NGA_Create(C_INT, 1, &one, "task counter", NULL);
    if (!g_d || !g_f || !g_cnt)
        GA_Error("scf: NGA_Create failed", 0);

    /* D's initial values: each rank puts its own block */
    int lo[2], hi[2];
    NGA_Distribution(g_d, me, lo, hi);
    if (lo[0] >= 0 && hi[0] >= lo[0] && hi[1] >= lo[1]) {
        int ld = hi[1] - lo[1] + 1;
        double *blk = xmalloc(sizeof(double) * (size_t)(hi[0] - lo[0] + 1) * (size_t)ld);
        for (int i = lo[0]; i <= hi[0]; i++)
            for (int j = lo[1]; j <= hi[1]; j++)
                blk[(size_t)(i - lo[0]) * (size_t)ld + (size_t)(j - lo[1])] = d_init(i, j);
        NGA_Put(g_d, lo, hi, blk, &ld);
        free(blk);
    }
    GA_Sync();

    size_t p3 = (size_t)(3 * b) * (size_t)(3 * b);
    double *dp = xmalloc(sizeof(double) * p3), *w = xmalloc(sizeof(double) * p3);
    double *fb = xmalloc(sizeof(double) * (size_t)b * (size_t)b);
    ref_t s = {0};
    double *got = NULL;
    if (p->check && me == 0) {
        size_t nn = (size_t)n * (size_t)n;
        s.d = xmalloc(sizeof(double) * nn);
        s.f = xmalloc(sizeof(double) * nn);
        s.tmp = xmalloc(sizeof(double) * nn);
        s.w = xmalloc(sizeof(double) * p3);
        s.fb = xmalloc(sizeof(double) * (size_t)b * (size_t)b);
        got = xmalloc(sizeof(double) * nn);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                s.d[(size_t)i * (size_t)n + (size_t)j] = d_init(i, j);
    }

    long ntasks = (long)nb * nb;
    for (int it = 0; it < p->iters; it++) {
        GA_Sync();
        double t0 = MPI_Wtime();
        GA_Zero(g_f);
        GA_Zero(g_cnt);
        /* Fock build: tasks from the shared counter */
        for (long t = NGA_Read_inc(g_cnt, &zero, 1); t < ntasks;
             t = NGA_Read_inc(g_cnt, &zero, 1)) {
            int I = (int)(t / nb), J = (int)(t % nb), k0, k1, l0, l1;
            screen(n, b, I, J, &k0, &k1, &l0, &l1);
            int plo[2] = {k0, l0}, phi[2] = {k1 - 1, l1 - 1}, ldp = l1 - l0;
            NGA_Get(g_d, plo, phi, dp, &ldp);
            fock_block(n, b, I, J, dp, ldp, w, fb);
            int flo[2] = {I * b, J * b};
            int fhi[2] = {(I + 1) * b < n ? (I + 1) * b - 1 : n - 1,
                          (J + 1) * b < n ? (J + 1) * b - 1 : n - 1};
            double alpha = 1.0;
            NGA_Acc(g_f, flo, fhi, fb, &b, &alpha);
            r->tasks++;
        }
        GA_Sync();
        double e = GA_Ddot(g_d, g_f), f2 = GA_Ddot(g_f, g_f);
        r->energy[it] = e;
        if (p->check && me == 0) {
            int glo[2] = {0, 0}, ghi[2] = {n - 1, n - 1};
            NGA_Get(g_f, glo, ghi, got, &n);
            double e_ref = ref_iter(p, &s); /* s.f is this iteration's F, s.d the next D */
            r->err_f = fmax(r->err_f, rel_err(got, s.f, (size_t)n * (size_t)n));
            r->err_e = fmax(r->err_e, fabs(e - e_ref) / fmax(fabs(e_ref), 1e-300));
        }
        /* density update: D <- (1 - lambda) D + lambda n / |F|^2 F F^T */
        GA_Dgemm('N', 'T', n, n, n, p->lambda * (double)n / f2, g_f, g_f, 1.0 - p->lambda, g_d);
        GA_Sync();
        r->seconds[it] = MPI_Wtime() - t0;
        if (p->check && me == 0) {
            int glo[2] = {0, 0}, ghi[2] = {n - 1, n - 1};
            NGA_Get(g_d, glo, ghi, got, &n);
            r->err_d = fmax(r->err_d, rel_err(got, s.d, (size_t)n * (size_t)n));
        }
    }
    if (p->check) {
        int bad = me == 0 && !(r->err_f <= SCF_TOL && r->err_d <= SCF_TOL && r->err_e <= SCF_TOL);
        MPI_Allreduce(&bad, &r->failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    free(s.d);
    free(s.f);
    free(s.tmp);
    free(s.w);
    free(s.fb);
    free(got);
    free(dp);
    free(w);
    free(fb);
    GA_Destroy(g_cnt);
    GA_Destroy(g_f);
    GA_Destroy(g_d);
    return r->failed;
}

#ifndef SCF_NO_MAIN
#ifndef SCF_TEST
static void usage(const char *prog)
{
    printf("usage: %s [--n N] [--block B] [--iters K] [--lambda L] [--check]\n"
           "  NWChem-style SCF Fock build on Global Arrays (%s); defaults: --n 256 --block 32\n"
           "  --iters 5 --lambda 0.5; --check compares with a serial reference on rank 0\n",
           prog, SCF_IMPL);
}
#endif

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    GA_Initialize();
    if (!MA_initialized() && !MA_init(C_DBL, 1 << 20, 1 << 22))
        GA_Error("scf: MA_init failed", 0);
    int me = GA_Nodeid();
    scf_params_t p = {.n = 256, .b = 32, .iters = 5, .check = 0, .lambda = 0.5};
#ifdef SCF_TEST
    (void)argc;
    (void)argv;
    p = (scf_params_t){.n = 50, .b = 7, .iters = 3, .check = 1, .lambda = 0.5};
#else
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "--check"))
            p.check = 1;
        else if (!strcmp(argv[a], "--n") && v)
            p.n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--block") && v)
            p.b = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--iters") && v)
            p.iters = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--lambda") && v)
            p.lambda = atof(argv[++a]);
        else {
            if (me == 0)
                usage(argv[0]);
            GA_Terminate();
            MPI_Finalize();
            return strcmp(argv[a], "--help") != 0;
        }
    }
#endif
    if (me == 0)
        printf("# scf on %s: n %d, block %d, %d iterations, %d ranks, lambda %g\n", SCF_IMPL, p.n,
               p.b, p.iters, GA_Nnodes(), p.lambda);
    scf_result_t r;
    int failed = scf_run(&p, &r);
    long tasks = r.tasks;
    for (int it = 0; it < p.iters; it++)
        if (me == 0)
            printf("iter %d: energy %.8g\n# iter %d: %.3f ms\n", it + 1, r.energy[it], it + 1,
                   r.seconds[it] * 1e3);
    for (int q = 0; q < GA_Nnodes(); q++) {
        long t = q == me ? tasks : 0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0)
            printf("# rank %d: %ld tasks\n", q, t);
    }
    if (p.check && me == 0) {
        printf("# largest relative errors: F %.2e, D %.2e, energy %.2e (tolerance %.0e)\n", r.err_f,
               r.err_d, r.err_e, SCF_TOL);
        printf("%s: F, D and the energies %s the serial reference\n", failed ? "FAIL" : "check",
               failed ? "differ from" : "match");
    }
    GA_Terminate();
    MPI_Finalize();
    return failed;
}
#endif
