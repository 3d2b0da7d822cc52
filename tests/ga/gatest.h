/* The differential test harness of ga-compat. Every test in tests/ga is one C source built twice:
 * against ga-compat (gat_X) and against Debian's Global Arrays 5.8.2 on ARMCI-MPI (gat_X_peer,
 * compiled with -DGAT_PEER); tests/ga/ga-diff.sh runs both at the same rank count and compares
 * their standard output line by line. So a test prints, from rank 0, the values its GA calls
 * produced (checksums, elements, distributions), never addresses or timings; lines starting with
 * '#' are comments (not compared). Each check against the test's own serial reference prints
 * "ok NAME" or "FAIL NAME" (agreed over all ranks first, so a failing rank never leaves the
 * others waiting); a FAIL fails the run in either build.
 * Where GA 5.8.2 itself is wrong, the test says so with GAT_CHECK_GABUG: in the peer build a
 * failure there prints the same "ok NAME" plus a comment "# GA bug: ...", so the difference is
 * named in the log instead of failing the comparison. */
#ifndef GATEST_H
#define GATEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <ga.h>
#include <macdecls.h>

static int gat_me, gat_np, gat_failed;
static double gat_t0; /* gat_section's clock */

/* MPI (thread multiple, as RMC wants it), GA, and MA for GA's temporaries (the peer needs it). */
static inline void gat_init(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    GA_Initialize();
    if (!MA_initialized())
        MA_init(C_DBL, 1 << 22, 1 << 22);
    gat_me = GA_Nodeid();
    gat_np = GA_Nnodes();
    gat_t0 = MPI_Wtime();
}

/* Rank 0 prints one compared line. */
static inline void gat_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void gat_out(const char *fmt, ...)
{
    if (gat_me != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* Rank 0 prints, as a comment (not compared), the seconds since gat_init or the last section:
 * where a run's time goes. */
static inline void gat_section(const char *name)
{
    double t = MPI_Wtime();
    gat_out("# [TIME] %s %.2f s", name, t - gat_t0);
    gat_t0 = t;
}

/* Every rank passes its verdict; all agree (logical and) before rank 0 prints. Returns it. */
static inline int gat_check(int ok, const char *name)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all)
        gat_failed = 1;
    gat_out("%s %s", all ? "ok" : "FAIL", name);
    return all;
}

/* A check of a case only ga-compat runs (GA 5.8.2 cannot, or its result differs by design): its
 * line is a comment, not compared; a failure still fails the run. Every rank passes its verdict. */
static inline int gat_check_own(int ok, const char *name)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    gat_out("# %s %s", all ? "ok" : "FAIL", name);
    if (!all) {
        gat_failed = 1;
        gat_out("FAIL %s", name);
    }
    return all;
}

/* A check GA 5.8.2 is known to fail (bug says how): in the peer build a failure is named, not
 * counted. */
static inline int gat_check_gabug(int ok, const char *name, const char *bug)
{
#ifdef GAT_PEER
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    gat_out("ok %s", name);
    if (!all)
        gat_out("# GA bug: %s: %s", name, bug);
    return 1;
#else
    (void)bug;
    return gat_check(ok, name);
#endif
}

/* |a - b| within a relative tolerance (values computed in different orders). */
static inline int gat_close(double a, double b, double rel)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= rel * (m > 1 ? m : 1);
}

/* The seven GA array types, their names and element sizes. */
#define GAT_NT 7
static const int gat_types[GAT_NT]
    __attribute__((unused)) = {C_INT, C_LONG, C_LONGLONG, C_FLOAT, C_DBL, C_SCPL, C_DCPL};
static const char *gat_tname[GAT_NT]
    __attribute__((unused)) = {"int", "long", "longlong", "float", "double", "scpl", "dcpl"};
static inline size_t gat_tsize(int t)
{
    return t == C_INT || t == C_FLOAT ? 4 : t == C_DCPL ? 16 : 8;
}
static inline int gat_cplx(int t)
{
    return t == C_SCPL || t == C_DCPL;
}

/* One element of type t at p from / to (re, im) (im ignored / 0 for the real types). */
static inline void gat_setc(int t, void *p, double re, double im)
{
    switch (t) {
    case C_INT:
        *(int *)p = (int)re;
        break;
    case C_LONG:
        *(long *)p = (long)re;
        break;
    case C_LONGLONG:
        *(long long *)p = (long long)re;
        break;
    case C_FLOAT:
        *(float *)p = (float)re;
        break;
    case C_DBL:
        *(double *)p = re;
        break;
    case C_SCPL:
        ((float *)p)[0] = (float)re, ((float *)p)[1] = (float)im;
        break;
    default:
        ((double *)p)[0] = re, ((double *)p)[1] = im;
    }
}
static inline void gat_getc(int t, const void *p, double *re, double *im)
{
    *im = 0;
    switch (t) {
    case C_INT:
        *re = *(const int *)p;
        break;
    case C_LONG:
        *re = (double)*(const long *)p;
        break;
    case C_LONGLONG:
        *re = (double)*(const long long *)p;
        break;
    case C_FLOAT:
        *re = *(const float *)p;
        break;
    case C_DBL:
        *re = *(const double *)p;
        break;
    case C_SCPL:
        *re = ((const float *)p)[0], *im = ((const float *)p)[1];
        break;
    default:
        *re = ((const double *)p)[0], *im = ((const double *)p)[1];
    }
}

/* A value printed so both builds print the same text: rounded to 10 significant digits. */
#define GAT_G "%.10g"

static inline int gat_finish(void)
{
    GA_Sync();
    GA_Terminate();
    MPI_Finalize();
    return gat_failed ? 1 : 0;
}

#endif
