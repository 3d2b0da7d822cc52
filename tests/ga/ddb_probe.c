/* The probe behind the table of tests/unit/test_ga_ddb.c: asks the real Global Arrays (Debian's
 * libglobalarrays-dev 5.8.2) which default distribution NGA_Create gives a set of shapes and
 * chunks, and prints one table row per case. Not built by the project (it links Debian's GA, not
 * ga-compat). Build and run:
 *
 *   mpicc.mpich -std=gnu11 -O2 tests/ga/ddb_probe.c -o /tmp/ddb_probe \
 *       /usr/lib/x86_64-linux-gnu/libga-mpich.a /usr/lib/x86_64-linux-gnu/libarmci-mpich.a \
 *       -lscalapack-mpich -llapack -lblas -lgfortran -lm -lpthread
 *   export ARMCI_USE_WIN_ALLOCATE=0
 *   for p in 1 2 3 4 5 6; do mpiexec.mpich -n $p /tmp/ddb_probe full; done > rows
 *   for p in 7 8; do mpiexec.mpich -n $p /tmp/ddb_probe quick; done >> rows
 *   for p in 9 10 11 12 13 16 17 24 32; do mpiexec.mpich -n $p /tmp/ddb_probe tiny; done >> rows
 *   for p in $(seq 1 64); do mpiexec.mpich -n 1 /tmp/ddb_probe full $p; done > emulated
 *
 * argv[1] picks the cases: `full` (every fixed shape with ten chunk variants, and 80 random
 * shapes), `quick` (every other fixed shape, 20 random ones) or `tiny` (every fourth fixed shape,
 * chunk NULL and all -1): processes beyond the machine's cores run oversubscribed, slowly.
 *
 * argv[2] = N, in a one-process run, emulates N processes: GA computes every rank's distribution
 * from its process count alone, so the probe sets GA's internal GAnproc to N around each
 * NGA_Create (and gives GA's scratch map mapALL, which GA_Initialize sized for the real count,
 * room for N) and queries NGA_Distribution of the N virtual processes; only rank 0's block is
 * allocated. Its rows were byte-identical to those of real runs at every count both were run at.
 *
 * Every row is `{np, ndim, {dims}, chunk kind, {chunk}, {nblock}, {block starts}},` in C order:
 * chunk kind 0 is NGA_Create(..., NULL), 1 passes the chunk shown; nblock is GA_Nblock; the starts
 * are dimension 0's nblock[0] 0-based block starts, then dimension 1's, and so on. They are read
 * from NGA_Distribution of every process, and the probe checks that each process's [lo, hi] is
 * the block of its grid coordinates (the C last dimension varying fastest), that processes past
 * prod(nblock) own nothing, and that GA_Nblock agrees; a row that fails a check is printed as
 * `BAD ...` with every process's block instead. Rank 0 prints; the shapes are fixed below (a
 * seeded generator adds the random ones), so the rows are reproducible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "ga.h"
#include "macdecls.h"

#define MAXD     7
#define MAXCASES 4096

typedef struct pcase {
    int ndim;
    int dims[MAXD];
    int kind; /* 0: chunk NULL, 1: chunk[] */
    int chunk[MAXD];
} pcase_t;

static pcase_t cases[MAXCASES];
static int ncases;
static int np, me;
/* GA internals for the emulated process count (see the header) */
extern long GAnproc;
extern long *mapALL;
static long emulate;

static long volume(int ndim, const int *dims)
{
    long v = 1;
    for (int i = 0; i < ndim; i++)
        v *= dims[i];
    return v;
}

static void add(int ndim, const int *dims, int kind, const int *chunk)
{
    if (ncases == MAXCASES)
        return;
    pcase_t *c = &cases[ncases++];
    c->ndim = ndim;
    c->kind = kind;
    for (int i = 0; i < ndim; i++) {
        c->dims[i] = dims[i];
        c->chunk[i] = kind ? chunk[i] : 0;
    }
}

/* the chunk variants of one shape: NULL, all -1, all 0, small / half / oversized chunks, a chunk on
 * one dimension only (ending in -1, which GA honours, or in 0, which makes GA ignore the chunk in
 * its decomposition) */
static void add_variants(int ndim, const int *dims, int many)
{
    int ch[MAXD];
    add(ndim, dims, 0, NULL);
    for (int i = 0; i < ndim; i++)
        ch[i] = -1;
    add(ndim, dims, 1, ch);
    if (!many)
        return;
    for (int i = 0; i < ndim; i++)
        ch[i] = 0;
    add(ndim, dims, 1, ch);
    for (int i = 0; i < ndim; i++)
        ch[i] = 3;
    add(ndim, dims, 1, ch);
    for (int i = 0; i < ndim; i++)
        ch[i] = dims[i] / 2 > 0 ? dims[i] / 2 : 1;
    add(ndim, dims, 1, ch);
    for (int i = 0; i < ndim; i++)
        ch[i] = dims[i] + 4;
    add(ndim, dims, 1, ch);
    for (int i = 0; i < ndim; i++)
        ch[i] = i == 0 ? (dims[0] + 1) / 2 : -1;
    add(ndim, dims, 1, ch);
    if (ndim > 1) {
        for (int i = 0; i < ndim; i++)
            ch[i] = i == 0 ? (dims[0] + 2) / 3 : 0;
        add(ndim, dims, 1, ch);
        for (int i = 0; i < ndim; i++)
            ch[i] = i == ndim - 1 ? 2 : -1;
        add(ndim, dims, 1, ch);
        for (int i = 0; i < ndim; i++)
            ch[i] = i % 2 ? 5 : 0;
        add(ndim, dims, 1, ch);
    }
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* quick: every other fixed shape; tiny (for many oversubscribed processes): every fourth fixed
 * shape with a NULL and an all -1 chunk, no random shapes */
static void build(int quick, int tiny)
{
    static const int s1[][1] = {{1},  {2},  {3},  {5},  {7},   {8},    {10},   {13},    {16},
                                {17}, {31}, {64}, {97}, {100}, {1000}, {1024}, {12345}, {1000003}};
    static const int s2[][2] = {{1, 1},     {1, 10},    {10, 1},      {2, 3},     {3, 2},
                                {4, 4},     {5, 7},     {7, 5},       {10, 10},   {16, 16},
                                {17, 13},   {100, 3},   {3, 100},     {100, 100}, {1000, 10},
                                {10, 1000}, {128, 256}, {256, 128},   {97, 89},   {1, 1000},
                                {1000, 1},  {6, 35},    {35, 6},      {2, 2},     {1, 7},
                                {12, 18},   {30, 42},   {1500, 1200}, {11, 1},    {640, 480}};
    static const int s3[][3] = {{1, 1, 1},    {2, 2, 2},   {3, 4, 5},     {5, 4, 3},
                                {10, 10, 10}, {7, 11, 13}, {100, 1, 100}, {1, 100, 100},
                                {64, 64, 64}, {2, 50, 3},  {20, 30, 40},  {1, 1, 100},
                                {100, 1, 1},  {9, 9, 9},   {6, 10, 15},   {2, 3, 1000}};
    static const int s4[][4] = {{2, 2, 2, 2}, {3, 4, 5, 6}, {10, 10, 10, 10}, {1, 5, 1, 5},
                                {8, 8, 8, 8}, {1, 1, 1, 1}, {20, 1, 30, 2},   {7, 6, 5, 4}};
    static const int s5[][5] = {
        {2, 3, 4, 5, 6}, {5, 5, 5, 5, 5}, {1, 1, 1, 1, 17}, {12, 2, 2, 2, 12}};
    static const int s6[][6] = {{1, 2, 3, 4, 5, 6}, {4, 4, 4, 4, 4, 4}, {3, 1, 2, 1, 3, 1}};
    static const int s7[][7] = {{2, 2, 2, 2, 2, 2, 2},
                                {3, 1, 4, 1, 5, 9, 2},
                                {10, 9, 8, 7, 6, 5, 4},
                                {1, 1, 1, 1, 1, 1, 1}};
#define ADDALL(s, nd, many)                                                                        \
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)                                          \
        if (tiny ? i % 4 == 0 : !quick || i % 2 == 0)                                              \
            add_variants(nd, s[i], many && !tiny);
    ADDALL(s1, 1, 1)
    ADDALL(s2, 2, 1)
    ADDALL(s3, 3, 1)
    ADDALL(s4, 4, 1)
    ADDALL(s5, 5, 1)
    ADDALL(s6, 6, 1)
    ADDALL(s7, 7, 1)
    /* random shapes (bounded volume), NULL and all -1 chunks, plus a random chunk */
    for (int r = 0; r < (tiny ? 0 : quick ? 20 : 80); r++) {
        int nd = 1 + (int)rnd(7), dims[MAXD], ch[MAXD];
        do {
            for (int i = 0; i < nd; i++) {
                unsigned k = rnd(4);
                dims[i] = 1 + (int)(k == 0   ? rnd(4)
                                    : k == 1 ? rnd(20)
                                    : k == 2 ? rnd(200)
                                             : rnd(5000));
            }
        } while (volume(nd, dims) > 4000000);
        add_variants(nd, dims, 0);
        for (int i = 0; i < nd; i++) {
            unsigned k = rnd(4);
            ch[i] = k == 0 ? -1 : k == 1 ? 0 : 1 + (int)rnd((unsigned)dims[i] + 3);
        }
        add(nd, dims, 1, ch);
    }
}

static int prow(char *buf, size_t n, const int *v, int k)
{
    int w = snprintf(buf, n, "{");
    for (int i = 0; i < k; i++)
        w += snprintf(buf + w, n - (size_t)w, "%s%d", i ? ", " : "", v[i]);
    w += snprintf(buf + w, n - (size_t)w, "}");
    return w;
}

static void probe(const pcase_t *c)
{
    long real = GAnproc;
    if (emulate)
        GAnproc = emulate;
    int g =
        NGA_Create(C_INT, c->ndim, (int *)c->dims, "ddb_probe", c->kind ? (int *)c->chunk : NULL);
    if (!g)
        GA_Error("NGA_Create failed", 0);
    if (me == 0) {
        int nd = c->ndim, nb[MAXD], lo[MAXD], hi[MAXD];
        static int los[4096][MAXD], his[4096][MAXD];
        GA_Nblock(g, nb);
        for (int p = 0; p < np; p++) {
            NGA_Distribution(g, p, lo, hi);
            memcpy(los[p], lo, sizeof lo);
            memcpy(his[p], hi, sizeof hi);
        }
        /* the starts per dimension: the lo of the processes along that axis of the grid */
        int starts[MAXD][4096], nbr = 1, bad = 0, stride[MAXD];
        for (int i = nd - 1; i >= 0; i--) {
            stride[i] = nbr;
            nbr *= nb[i];
        }
        if (nbr > np)
            bad = 1;
        for (int i = 0; i < nd && !bad; i++)
            for (int k = 0; k < nb[i]; k++)
                starts[i][k] = los[k * stride[i]][i];
        for (int p = 0; p < np && !bad; p++)
            for (int i = 0; i < nd; i++) {
                if (p >= nbr) {
                    if (his[p][i] >= los[p][i] && his[p][i] >= 0)
                        bad = 1; /* a process past the grid owns something */
                    continue;
                }
                int k = p / stride[i] % nb[i];
                int elo = starts[i][k], ehi = k + 1 < nb[i] ? starts[i][k + 1] - 1 : c->dims[i] - 1;
                if (los[p][i] != elo || his[p][i] != ehi || ehi < elo)
                    bad = 1;
            }
        char buf[1 << 16];
        int w = snprintf(buf, sizeof buf, "%s{%d, %d, ", bad ? "BAD " : "    ", np, nd);
        w += prow(buf + w, sizeof buf - (size_t)w, c->dims, nd);
        w += snprintf(buf + w, sizeof buf - (size_t)w, ", %d, ", c->kind);
        w += prow(buf + w, sizeof buf - (size_t)w, c->chunk, nd);
        w += snprintf(buf + w, sizeof buf - (size_t)w, ", ");
        w += prow(buf + w, sizeof buf - (size_t)w, nb, nd);
        w += snprintf(buf + w, sizeof buf - (size_t)w, ", {");
        int first = 1;
        for (int i = 0; i < nd && !bad; i++)
            for (int k = 0; k < nb[i]; k++) {
                w += snprintf(buf + w, sizeof buf - (size_t)w, "%s%d", first ? "" : ", ",
                              starts[i][k]);
                first = 0;
            }
        if (bad)
            for (int p = 0; p < np && p < 64; p++) {
                w += snprintf(buf + w, sizeof buf - (size_t)w, " p%d:", p);
                for (int i = 0; i < nd; i++)
                    w += snprintf(buf + w, sizeof buf - (size_t)w, "%s%d-%d", i ? "," : "",
                                  los[p][i], his[p][i]);
            }
        printf("%s}},\n", buf);
        fflush(stdout);
    }
    GAnproc = real;
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    GA_Initialize();
    MA_init(C_INT, 1000, 1000);
    me = GA_Nodeid();
    np = GA_Nnodes();
    if (argc > 2 && np == 1) {
        emulate = atol(argv[2]);
        np = (int)emulate;
        free(mapALL); /* GA_Initialize sized it (nproc + 6 entries) for the real count */
        mapALL = malloc(sizeof(long) * (size_t)(emulate + 64));
    }
    const char *mode = argc > 1 ? argv[1] : "full";
    build(strcmp(mode, "quick") == 0, strcmp(mode, "tiny") == 0);
    for (int i = 0; i < ncases; i++)
        probe(&cases[i]);
    GA_Terminate();
    MPI_Finalize();
    return 0;
}
