/* Benchmark infrastructure (see bench_util.h). */
#include "config.h"
#include "bench_util.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#include <rmc.h>

/* ---------------------------------------------------------------------- timing --- */

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double stackbuf[BENCH_MAX_REPS];
    double *w = n <= BENCH_MAX_REPS ? stackbuf : malloc(n * sizeof(*w));
    if (!w)
        bench_fail("out of memory");
    memcpy(w, v, n * sizeof(*w));
    qsort(w, n, sizeof(*w), cmp_double);
    double m = (n & 1) ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
    if (w != stackbuf)
        free(w);
    return m;
}

double bench_min(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double bench_max(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* ---------------------------------------------------------------------- output --- */

static int is_root(void)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank == 0;
}

void bench_printf(const char *fmt, ...)
{
    if (!is_root())
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

int bench_mpi_start(int *argc, char ***argv, const char *prog, int *rank, int *nranks,
                    int *multiple)
{
    setenv("ARMCI_USE_WIN_ALLOCATE", "0", 1); /* before ARMCI_Init; see bench_util.h */
    int provided = MPI_THREAD_SINGLE, me = 0, np = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (rank)
        *rank = me;
    if (nranks)
        *nranks = np;
    if (multiple)
        *multiple = provided == MPI_THREAD_MULTIPLE;
    if (np < 2) {
        if (me == 0)
            fprintf(stderr, "%s needs 2 ranks: mpiexec.mpich -n 2 %s\n", prog, (*argv)[0]);
        MPI_Finalize();
        return 1;
    }
    return 0;
}

void bench_fail(const char *fmt, ...)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fflush(stdout);
    fprintf(stderr, "bench FAIL (rank %d): ", rank);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void bench_fail_status(int status, const char *what)
{
    bench_fail("%s: %s (%s)", what, rmc_status_string((rmc_status_t)status), rmc_last_error());
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p)
        bench_fail("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        bench_fail("out of memory");
    return p;
}

/* ------------------------------------------------------------------ command line --- */

int bench_parse_size(const char *s, size_t *out)
{
    if (!s || !*s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    if (shift && v > (~0ull >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

char *bench_size_label(size_t b, char *buf)
{
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        snprintf(buf, 24, "%zuG", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, 24, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, 24, "%zuK", b >> 10);
    else
        snprintf(buf, 24, "%zu", b);
    return buf;
}

static void usage(FILE *f, const char *prog, size_t def_min, size_t def_max)
{
    char a[24], b[24];
    fprintf(
        f,
        "usage: mpiexec.mpich -n 2 %s [options]\n"
        "  --reps N        repetitions per measurement, median reported (default 7; --quick 3)\n"
        "  --iters N       iterations per repetition (default: per benchmark and size)\n"
        "  --quick         CI-sized run: 3 reps, 1/4 of the iterations, sizes up to 1M\n"
        "  --sizes MIN:MAX[:F]  message sizes MIN, MIN*F, ... MAX bytes (K/M/G suffixes;\n"
        "                  F default 2; default sizes %s:%s)\n"
        "  --csv FILE      write all results as long-format CSV (default: $RMC_BENCH_CSV/"
        "%s.<mode>.csv\n"
        "                  when RMC_BENCH_CSV names a directory)\n"
        "  --png FILE      plot with gnuplot into FILE (script FILE minus .png plus .gp)\n"
        "  --verbose       extra diagnostics\n"
        "Node mode: RMC_NODE_SIZE=1 makes every peer remote (MPI RMA); unset = real nodes.\n",
        prog, bench_size_label(def_min, a), bench_size_label(def_max, b), prog);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int bench_parse(int argc, char **argv, const char *prog, size_t def_min, size_t def_max,
                bench_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->prog = prog;
    o->reps = 0;
    o->min_size = def_min;
    o->max_size = def_max;
    o->size_factor = 2;
    int sizes_given = 0;
    long v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *arg = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (is_root())
                usage(stdout, prog, def_min, def_max);
            return -1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o->verbose = 1;
        } else if (!strcmp(a, "--reps")) {
            if (parse_long(arg, 1, BENCH_MAX_REPS, &v))
                goto bad;
            o->reps = (int)v;
            i++;
        } else if (!strcmp(a, "--iters")) {
            if (parse_long(arg, 1, 1000000000L, &v))
                goto bad;
            o->iters = v;
            i++;
        } else if (!strcmp(a, "--csv")) {
            if (!arg)
                goto bad;
            o->csv = arg;
            i++;
        } else if (!strcmp(a, "--png")) {
            if (!arg)
                goto bad;
            o->png = arg;
            i++;
        } else if (!strcmp(a, "--sizes")) {
            char buf[128];
            if (!arg || strlen(arg) >= sizeof(buf))
                goto bad;
            strcpy(buf, arg);
            char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c1)
                goto bad;
            *c1 = 0;
            if (c2) {
                *c2 = 0;
                if (parse_long(c2 + 1, 2, 1024, &v))
                    goto bad;
                o->size_factor = (size_t)v;
            }
            if (bench_parse_size(buf, &o->min_size) || bench_parse_size(c1 + 1, &o->max_size) ||
                o->min_size == 0 || o->min_size > o->max_size)
                goto bad;
            sizes_given = 1;
            i++;
        } else {
            goto bad;
        }
        continue;
    bad:
        if (is_root()) {
            fprintf(stderr, "%s: bad option or value: %s%s%s\n", prog, a, arg ? " " : "",
                    arg ? arg : "");
            usage(stderr, prog, def_min, def_max);
        }
        return 1;
    }
    o->reps_given = o->reps != 0;
    if (o->reps == 0)
        o->reps = o->quick ? 3 : 7;
    if (o->quick && !sizes_given && o->max_size > (1u << 20))
        o->max_size = 1u << 20;
    if (o->min_size > o->max_size)
        o->min_size = o->max_size;
    return 0;
}

size_t bench_next_size(const bench_opts_t *o, size_t n)
{
    size_t f = o->size_factor >= 2 ? o->size_factor : 2;
    if (n == 0 || n > o->max_size / f)
        return 0;
    return n * f;
}

long bench_iters(const bench_opts_t *o, long def)
{
    if (o->iters > 0)
        return o->iters;
    long n = o->quick ? def / 4 : def;
    return n < 1 ? 1 : n;
}

long bench_iters_for_size(const bench_opts_t *o, size_t size, size_t budget, long min_it,
                          long max_it)
{
    if (o->iters > 0)
        return o->iters;
    long n = size ? (long)(budget / size) : max_it;
    if (n > max_it)
        n = max_it;
    if (n < min_it)
        n = min_it;
    if (o->quick)
        n /= 4;
    return n < 1 ? 1 : n;
}

/* ------------------------------------------------------------------------ header --- */

const char *bench_node_mode(void)
{
    static char buf[32];
    const char *e = getenv("RMC_NODE_SIZE");
    long k = e && *e ? strtol(e, NULL, 10) : 0;
    if (k <= 0)
        return "real";
    snprintf(buf, sizeof(buf), "node%ld", k);
    return buf;
}

static int world_size(void)
{
    int init = 0, fin = 0, n = 1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* (bench_util.h) Rank 0's node's first two ranks ping one cache line; a waiting side yields after
 * 10^5 spins (ranks sharing a processor), and the probe stops after 20 ms. */
double bench_core_round_trip_ns(void)
{
    int wr, nr, nsz;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wr, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &nsz);
    _Atomic long *line = NULL;
    MPI_Win win;
    MPI_Aint sz = nr == 0 && nsz > 1 ? 128 : 0;
    double rtt = -1;
    if (MPI_Win_allocate_shared(sz, 1, MPI_INFO_NULL, node, &line, &win) != MPI_SUCCESS) {
        MPI_Comm_free(&node);
        return -1;
    }
    if (nsz > 1 && nr < 2) {
        MPI_Aint qsz;
        int du;
        MPI_Win_shared_query(win, 0, &qsz, &du, &line);
        if (nr == 0)
            atomic_store(line, 0);
    }
    MPI_Barrier(node);
    if (nsz > 1 && nr == 0) {
        uint64_t t0 = bench_now_ns(), t = t0;
        long i = 0;
        for (; t - t0 < 20000000 && i < 20000; i++) {
            atomic_store(line, 2 * i + 1);
            for (long spin = 0; atomic_load(line) != 2 * i + 2; spin++)
                if (spin > 100000)
                    sched_yield();
            if ((i & 255) == 0)
                t = bench_now_ns();
        }
        rtt = (double)(bench_now_ns() - t0) / (double)i;
        atomic_store(line, -1);
    } else if (nsz > 1 && nr == 1) {
        for (long v, spin = 0; (v = atomic_load(line)) != -1; spin++) {
            if (v & 1) {
                atomic_store(line, v + 1);
                spin = 0;
            } else if (spin > 100000)
                sched_yield();
        }
    }
    MPI_Barrier(node);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    return rtt;
}

double bench_mpi_rma_passive_us(void)
{
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    static long cell; /* rank 1's exposed word */
    MPI_Win win;
    if (ws < 2 ||
        MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) != MPI_SUCCESS)
        return -1;
    double us = -1;
    long got = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (wr == 0) {
        uint64_t t0 = bench_now_ns();
        MPI_Get(&got, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
        MPI_Win_flush(1, win);
        us = (double)(bench_now_ns() - t0) * 1e-3;
    } else if (wr == 1) {
        volatile unsigned long x = 0; /* compute, no MPI call */
        for (uint64_t t0 = bench_now_ns(); bench_now_ns() - t0 < 5000000;)
            x = x + 1;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    return us;
}

void bench_header(bench_opts_t *o, const char *title, const char *peers)
{
    const char *dir = getenv("RMC_BENCH_CSV");
    if (!o->csv && dir && *dir) {
        struct stat sb;
        if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            snprintf(o->csv_buf, sizeof(o->csv_buf), "%s/%s.%s.csv", dir, o->prog,
                     bench_node_mode());
            o->csv = o->csv_buf;
        } else if (is_root()) {
            fprintf(stderr, "%s: RMC_BENCH_CSV=%s is not a directory; no CSV written\n", o->prog,
                    dir);
        }
    }
    double rtt = bench_core_round_trip_ns(), rma = bench_mpi_rma_passive_us();
    if (!is_root())
        return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = 0;
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);
    printf("# %s: %s\n", o->prog, title);
    printf("# MPI: %s\n", lib);
    const char *e = getenv("RMC_NODE_SIZE");
    if (rmc_initialized()) {
        rmc_topology_t t;
        rmc_topology(&t);
        printf("# ranks %d on %s (%d cores, %d PUs) | node mode: %s | RMC sees %d node(s) of %d "
               "rank(s)%s\n",
               t.nranks, host, t.hw_cores, t.hw_pus,
               t.emulated ? "emulated (RMC_NODE_SIZE set)" : "real (RMC_NODE_SIZE unset)",
               t.node_count, t.node_size,
               t.emulated == 1   ? ": every peer remote, MPI RMA"
               : t.node_size > 1 ? ": node-local peers by loads/stores"
                                 : "");
        if (t.emulated)
            printf("#   RMC_NODE_SIZE=%s\n", e ? e : "?");
    } else {
        printf("# ranks %d on %s | node mode: %s%s\n", world_size(), host,
               e && *e ? "RMC_NODE_SIZE=" : "real", e && *e ? e : "");
    }
    if (rtt > 0)
        printf("# machine state: one cache line's round trip between two cores %.0f ns (shared "
               "memory; ~100 fast, ~400 slow on this project's VMs, docs/benchmarks.md)\n",
               rtt);
    if (rma >= 0)
        printf("# MPI RMA: an 8-byte MPI_Get + flush to a rank computing outside MPI for 5 ms took "
               "%.0f us (%s)\n",
               rma,
               rma > 2500 ? "the target's MPI calls serve it: RMA is not one-sided here"
                          : "direct RMA, one-sided");
    printf("# repetitions: %d per measurement, median reported%s\n", o->reps,
           o->quick ? " (--quick: reduced iterations)" : "");
    if (peers && *peers)
        printf("# peers: %s\n", peers);
    printf("\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------------- table --- */

typedef struct bcol {
    char *name, *unit;
    int ratio; /* 1 = ratio column */
    int num, den, fmt;
} bcol_t;

typedef struct brow {
    char *label;
    double x;
    double *v; /* [cap_cols] measured values */
} brow_t;

typedef struct btarget {
    int col;
    double min, lo, hi;
    char *text;
} btarget_t;

struct bench_table {
    char *name, *row_label, *title;
    bcol_t *cols;
    int ncols, cap_cols;
    brow_t *rows;
    int nrows, cap_rows;
    btarget_t *targets;
    int ntargets;
    char **notes;
    int nnotes;
    int logx, logy;
    char *ylabel;
};

bench_table_t *bench_table_new(const char *name, const char *row_label, const char *title)
{
    bench_table_t *t = xcalloc(1, sizeof(*t));
    t->name = xstrdup(name);
    t->row_label = xstrdup(row_label ? row_label : "");
    t->title = xstrdup(title ? title : name);
    t->cap_cols = 16;
    t->cols = xcalloc((size_t)t->cap_cols, sizeof(*t->cols));
    return t;
}

void bench_table_free(bench_table_t *t)
{
    if (!t)
        return;
    for (int c = 0; c < t->ncols; c++) {
        free(t->cols[c].name);
        free(t->cols[c].unit);
    }
    for (int r = 0; r < t->nrows; r++) {
        free(t->rows[r].label);
        free(t->rows[r].v);
    }
    for (int i = 0; i < t->ntargets; i++)
        free(t->targets[i].text);
    for (int i = 0; i < t->nnotes; i++)
        free(t->notes[i]);
    free(t->targets);
    free(t->notes);
    free(t->cols);
    free(t->rows);
    free(t->name);
    free(t->row_label);
    free(t->title);
    free(t->ylabel);
    free(t);
}

static int add_col(bench_table_t *t, const char *name, const char *unit)
{
    if (t->ncols == t->cap_cols) {
        /* rows store one value per column slot: grow every row too */
        int cap = 2 * t->cap_cols;
        bcol_t *c = realloc(t->cols, (size_t)cap * sizeof(*c));
        if (!c)
            bench_fail("out of memory");
        memset(c + t->cap_cols, 0, (size_t)(cap - t->cap_cols) * sizeof(*c));
        t->cols = c;
        for (int r = 0; r < t->nrows; r++) {
            double *v = realloc(t->rows[r].v, (size_t)cap * sizeof(*v));
            if (!v)
                bench_fail("out of memory");
            for (int i = t->cap_cols; i < cap; i++)
                v[i] = NAN;
            t->rows[r].v = v;
        }
        t->cap_cols = cap;
    }
    bcol_t *c = &t->cols[t->ncols];
    c->name = xstrdup(name);
    c->unit = xstrdup(unit ? unit : "");
    return t->ncols++;
}

int bench_table_col(bench_table_t *t, const char *name, const char *unit)
{
    return add_col(t, name, unit);
}

int bench_table_ratio(bench_table_t *t, const char *name, int num, int den, int fmt)
{
    if (num < 0 || num >= t->ncols || den < 0 || den >= t->ncols)
        bench_fail("bench_table_ratio(%s): bad column index", name);
    int c = add_col(t, name, fmt == BENCH_RATIO_PCT ? "%" : "x");
    t->cols[c].ratio = 1;
    t->cols[c].num = num;
    t->cols[c].den = den;
    t->cols[c].fmt = fmt;
    return c;
}

int bench_table_target(bench_table_t *t, int col, double min_value, double x_lo, double x_hi,
                       const char *text)
{
    if (col < 0 || col >= t->ncols)
        bench_fail("bench_table_target: bad column index %d", col);
    btarget_t *g = realloc(t->targets, (size_t)(t->ntargets + 1) * sizeof(*g));
    if (!g)
        bench_fail("out of memory");
    t->targets = g;
    g[t->ntargets] = (btarget_t){col, min_value, x_lo, x_hi, xstrdup(text)};
    return ++t->ntargets;
}

int bench_table_row(bench_table_t *t, const char *label, double x)
{
    if (t->nrows == t->cap_rows) {
        int cap = t->cap_rows ? 2 * t->cap_rows : 32;
        brow_t *r = realloc(t->rows, (size_t)cap * sizeof(*r));
        if (!r)
            bench_fail("out of memory");
        t->rows = r;
        t->cap_rows = cap;
    }
    brow_t *r = &t->rows[t->nrows];
    r->label = xstrdup(label);
    r->x = x;
    r->v = xcalloc((size_t)t->cap_cols, sizeof(double));
    for (int i = 0; i < t->cap_cols; i++)
        r->v[i] = NAN;
    return t->nrows++;
}

void bench_table_set(bench_table_t *t, int row, int col, double value)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols || t->cols[col].ratio)
        bench_fail("bench_table_set(%s): bad row %d / column %d", t->name, row, col);
    t->rows[row].v[col] = value;
}

double bench_table_get(const bench_table_t *t, int row, int col)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        return NAN;
    const bcol_t *c = &t->cols[col];
    if (!c->ratio)
        return t->rows[row].v[col];
    double n = bench_table_get(t, row, c->num), d = bench_table_get(t, row, c->den);
    if (isnan(n) || isnan(d) || d == 0)
        return NAN;
    double q = n / d;
    return c->fmt == BENCH_RATIO_PCT ? 100.0 * q : q;
}

void bench_table_plot(bench_table_t *t, int logx, int logy, const char *ylabel)
{
    t->logx = logx;
    t->logy = logy;
    free(t->ylabel);
    t->ylabel = ylabel ? xstrdup(ylabel) : NULL;
}

void bench_table_note(bench_table_t *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **n = realloc(t->notes, (size_t)(t->nnotes + 1) * sizeof(*n));
    if (!n)
        bench_fail("out of memory");
    t->notes = n;
    n[t->nnotes++] = xstrdup(buf);
}

static int target_applies(const btarget_t *g, double x)
{
    if (!isnan(g->lo) && (isnan(x) || x < g->lo))
        return 0;
    if (!isnan(g->hi) && (isnan(x) || x > g->hi))
        return 0;
    return 1;
}

/* 1 when (row, col) misses one of its targets. */
static int cell_missed(const bench_table_t *t, int row, int col)
{
    for (int i = 0; i < t->ntargets; i++) {
        const btarget_t *g = &t->targets[i];
        if (g->col != col || !target_applies(g, t->rows[row].x))
            continue;
        double v = bench_table_get(t, row, col);
        if (isnan(v) || v < g->min)
            return 1;
    }
    return 0;
}

int bench_table_misses(const bench_table_t *t)
{
    int m = 0;
    for (int r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++)
            m += cell_missed(t, r, c);
    return m;
}

static void fmt_value(const bcol_t *c, double v, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "-");
    } else if (c->ratio) {
        if (c->fmt == BENCH_RATIO_PCT)
            snprintf(buf, n, v < 9.95 ? "%.1f%%" : "%.0f%%", v);
        else
            snprintf(buf, n, v >= 100 ? "%.0fx" : "%.2fx", v);
    } else {
        double a = fabs(v);
        if (a == 0)
            snprintf(buf, n, "0");
        else if (a < 0.01)
            snprintf(buf, n, "%.4f", v);
        else if (a < 10)
            snprintf(buf, n, "%.3f", v);
        else if (a < 1000)
            snprintf(buf, n, "%.2f", v);
        else
            snprintf(buf, n, "%.0f", v);
    }
}

void bench_table_print(const bench_table_t *t, FILE *f)
{
    enum { W = 48 };
    int *w = xcalloc((size_t)t->ncols + 1, sizeof(int));
    char head[W];
    /* widths */
    w[0] = (int)strlen(t->row_label);
    for (int r = 0; r < t->nrows; r++) {
        int l = (int)strlen(t->rows[r].label);
        if (l > w[0])
            w[0] = l;
    }
    for (int c = 0; c < t->ncols; c++) {
        const bcol_t *col = &t->cols[c];
        if (col->ratio)
            snprintf(head, sizeof(head), "%s", col->name);
        else
            snprintf(head, sizeof(head), "%s [%s]", col->name, col->unit);
        w[c + 1] = (int)strlen(head);
        for (int r = 0; r < t->nrows; r++) {
            char b[W];
            fmt_value(col, bench_table_get(t, r, c), b, sizeof(b));
            int l = (int)strlen(b) + (col->ratio ? 2 : 1); /* room for a miss marker (+digit) */
            if (l > w[c + 1])
                w[c + 1] = l;
        }
    }
    fprintf(f, "%s\n", t->title);
    fprintf(f, "%-*s", w[0], t->row_label);
    for (int c = 0; c < t->ncols; c++) {
        const bcol_t *col = &t->cols[c];
        if (col->ratio)
            snprintf(head, sizeof(head), "%s", col->name);
        else
            snprintf(head, sizeof(head), "%s [%s]", col->name, col->unit);
        fprintf(f, "  %*s", w[c + 1], head);
    }
    fprintf(f, "\n");
    int total = w[0];
    for (int c = 0; c < t->ncols; c++)
        total += 2 + w[c + 1];
    for (int i = 0; i < total; i++)
        fputc('-', f);
    fputc('\n', f);
    for (int r = 0; r < t->nrows; r++) {
        fprintf(f, "%-*s", w[0], t->rows[r].label);
        for (int c = 0; c < t->ncols; c++) {
            char b[W + 2];
            double v = bench_table_get(t, r, c);
            fmt_value(&t->cols[c], v, b, W);
            if (cell_missed(t, r, c)) {
                /* a miss by less than the printed precision ("1.00x!") gets more digits */
                if (t->cols[c].ratio && t->cols[c].fmt == BENCH_RATIO_X && !isnan(v) && v < 100)
                    snprintf(b, W, "%.3fx", v);
                strcat(b, "!");
            } else if (t->cols[c].ratio)
                strcat(b, " ");
            fprintf(f, "  %*s", w[c + 1], b);
        }
        fprintf(f, "\n");
    }
    for (int i = 0; i < t->ntargets; i++) {
        const btarget_t *g = &t->targets[i];
        int miss = 0;
        for (int r = 0; r < t->nrows; r++)
            miss += cell_missed(t, r, g->col) && target_applies(g, t->rows[r].x);
        fprintf(f, "  target: %s -> %s\n", g->text, miss ? "MISSED (cells marked !)" : "met");
    }
    for (int i = 0; i < t->nnotes; i++)
        fprintf(f, "  note: %s\n", t->notes[i]);
    fprintf(f, "\n");
    fflush(f);
    free(w);
}

/* CSV field with quotes when needed. */
static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static void write_csv(const bench_opts_t *o, bench_table_t **ts, int n)
{
    FILE *f = fopen(o->csv, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->prog, o->csv, strerror(errno));
        return;
    }
    fprintf(f, "bench,mode,ranks,table,row,x,column,unit,value\n");
    const char *mode = bench_node_mode();
    int np = world_size();
    for (int i = 0; i < n; i++) {
        bench_table_t *t = ts[i];
        for (int r = 0; r < t->nrows; r++)
            for (int c = 0; c < t->ncols; c++) {
                double v = bench_table_get(t, r, c);
                if (isnan(v))
                    continue;
                csv_field(f, o->prog);
                fprintf(f, ",%s,%d,", mode, np);
                csv_field(f, t->name);
                fputc(',', f);
                csv_field(f, t->rows[r].label);
                if (isnan(t->rows[r].x))
                    fprintf(f, ",,");
                else
                    fprintf(f, ",%.17g,", t->rows[r].x);
                csv_field(f, t->cols[c].name);
                fputc(',', f);
                csv_field(f, t->cols[c].unit);
                fprintf(f, ",%.6g\n", v);
            }
    }
    fclose(f);
    printf("# CSV written to %s\n", o->csv);
}

/* gnuplot-safe string: drop quotes / backslashes. */
static void gp_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s != '"' && *s != '\\')
            fputc(*s, f);
    fputc('"', f);
}

static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *p = xstrdup(path), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(p, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char full[4096];
        snprintf(full, sizeof(full), "%s/gnuplot", d);
        found = access(full, X_OK) == 0;
    }
    free(p);
    return found;
}

static void write_png(const bench_opts_t *o, bench_table_t **ts, int n)
{
    char gp[1024];
    size_t l = strlen(o->png);
    if (l > 4 && !strcmp(o->png + l - 4, ".png"))
        snprintf(gp, sizeof(gp), "%.*s.gp", (int)(l - 4), o->png);
    else
        snprintf(gp, sizeof(gp), "%s.gp", o->png);
    FILE *f = fopen(gp, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->prog, gp, strerror(errno));
        return;
    }
    int panels = 0;
    for (int i = 0; i < n; i++)
        panels += ts[i]->nrows > 0;
    fprintf(f, "# generated by %s (bench_util); render with: gnuplot %s\n", o->prog, gp);
    fprintf(f, "set terminal pngcairo size 900,%d noenhanced font ',10'\n", 60 + 380 * panels);
    fprintf(f, "set output ");
    gp_str(f, o->png);
    fprintf(f, "\nset datafile missing '-'\nset key outside right top\nset grid\n");
    /* inline data blocks: label x v0 v1 ... (measured columns only) */
    for (int i = 0; i < n; i++) {
        bench_table_t *t = ts[i];
        fprintf(f, "$T%d << EOD\n", i);
        for (int r = 0; r < t->nrows; r++) {
            fprintf(f, "\"%s\" %.17g", t->rows[r].label,
                    isnan(t->rows[r].x) ? (double)r : t->rows[r].x);
            for (int c = 0; c < t->ncols; c++) {
                if (t->cols[c].ratio)
                    continue;
                double v = t->rows[r].v[c];
                if (isnan(v))
                    fprintf(f, " -");
                else
                    fprintf(f, " %.9g", v);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "EOD\n");
    }
    char mt[512];
    snprintf(mt, sizeof(mt), "%s (%s, %d ranks)", o->prog, bench_node_mode(), world_size());
    fprintf(f, "set multiplot layout %d,1 title ", panels > 0 ? panels : 1);
    gp_str(f, mt);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        bench_table_t *t = ts[i];
        if (t->nrows == 0)
            continue;
        int categorical = 0;
        for (int r = 0; r < t->nrows; r++)
            categorical |= isnan(t->rows[r].x);
        fprintf(f, "reset\nset grid\nset key outside right top\nset datafile missing '-'\n");
        fprintf(f, "set title ");
        gp_str(f, t->title);
        fprintf(f, "\nset xlabel ");
        gp_str(f, t->row_label);
        const char *yl = t->ylabel;
        int first = -1;
        for (int c = 0; c < t->ncols && first < 0; c++)
            if (!t->cols[c].ratio)
                first = c;
        fprintf(f, "\nset ylabel ");
        gp_str(f, yl ? yl : first >= 0 ? t->cols[first].unit : "");
        fprintf(f, "\n");
        if (categorical) {
            fprintf(f, "set style data histograms\nset style histogram clustered gap 1\n"
                       "set style fill solid 0.8 border -1\nset yrange [0:*]\n");
            if (t->logy)
                fprintf(f, "set logscale y\nset yrange [*:*]\n");
            size_t longest = 0; /* long row names overlap: slant them */
            for (int r = 0; r < t->nrows; r++)
                if (strlen(t->rows[r].label) > longest)
                    longest = strlen(t->rows[r].label);
            if (longest * (size_t)t->nrows > 90)
                fprintf(f, "set xtics rotate by -30 left font ',8'\nset bmargin 10\nunset xlabel\n");
        } else {
            if (t->logx)
                fprintf(f, "set logscale x 2\nset format x '%%.0b%%B'\n");
            if (t->logy)
                fprintf(f, "set logscale y\n");
        }
        fprintf(f, "plot ");
        int k = 0, field = 3;
        for (int c = 0; c < t->ncols; c++) {
            if (t->cols[c].ratio)
                continue;
            if (k++)
                fprintf(f, ", \\\n     ");
            if (categorical)
                fprintf(f, "$T%d using %d:xtic(1) title ", i, field);
            else
                fprintf(f, "$T%d using 2:%d with linespoints lw 2 title ", i, field);
            gp_str(f, t->cols[c].name);
            field++;
        }
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
    fclose(f);
    if (!have_gnuplot()) {
        printf("# gnuplot not installed: plot script left in %s\n", gp);
        return;
    }
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>&1", gp);
    int rc = system(cmd);
    if (rc != 0) {
        /* pngcairo may be missing (gnuplot-nox builds differ): retry with the plain png terminal */
        char cmd2[2400];
        snprintf(cmd2, sizeof(cmd2),
                 "sed -i 's/^set terminal pngcairo/set terminal png/' '%s' && gnuplot '%s' 2>&1",
                 gp, gp);
        rc = system(cmd2);
    }
    if (rc == 0)
        printf("# plot written to %s (script %s)\n", o->png, gp);
    else
        printf("# gnuplot failed (status %d); script left in %s\n", rc, gp);
}

int bench_finish(const bench_opts_t *o, bench_table_t **tables, int ntables)
{
    int misses = 0;
    if (is_root()) {
        for (int i = 0; i < ntables; i++) {
            bench_table_print(tables[i], stdout);
            misses += bench_table_misses(tables[i]);
        }
        if (o->csv)
            write_csv(o, tables, ntables);
        if (o->png)
            write_png(o, tables, ntables);
        fflush(stdout);
    }
    for (int i = 0; i < ntables; i++)
        bench_table_free(tables[i]);
    return misses;
}

void *bench_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n ? n : 1))
        bench_fail("out of memory (%zu bytes)", n);
    memset(p, 0, n);
    return p;
}
