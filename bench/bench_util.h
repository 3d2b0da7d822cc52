/* Shared benchmark infrastructure: timer, repetition statistics, command line, header line, and a
 * result table printed as aligned text (rank 0), written as CSV and plotted with gnuplot.
 *
 * Typical use (see bench/bench_contig.c):
 *
 *     bench_opts_t o;
 *     int rc = bench_parse(argc, argv, "bench_x", 8, 4 << 20, &o);   // before or after MPI_Init
 *     if (rc != 0) return rc < 0;                                     // --help (0) / bad usage (1)
 *     ... MPI_Init_thread, rmc_init ...
 *     bench_header(&o, "contiguous put/get", "ARMCI-MPI 0.3.1 (ARMCI_USE_WIN_ALLOCATE=0), MPI");
 *     bench_table_t *t = bench_table_new("latency", "op", "8-byte latency, us (median of 7)");
 *     int c_rmc = bench_table_col(t, "RMC", "us");
 *     int c_mpi = bench_table_col(t, "MPI", "us");
 *     bench_table_ratio(t, "RMC/MPI speedup", c_mpi, c_rmc, BENCH_RATIO_X);   // MPI / RMC
 *     int row = bench_table_row(t, "put", NAN);
 *     double s[BENCH_MAX_REPS];
 *     for (int r = 0; r < o.reps; r++) { uint64_t t0 = bench_now_ns(); ...; s[r] = ...; }
 *     bench_table_set(t, row, c_rmc, bench_median(s, o.reps));
 *     bench_finish(&o, (bench_table_t *[]){t}, 1);   // print + CSV + PNG on rank 0, frees tables
 *
 * Everything here is local (no communication); printing / files happen only on MPI_COMM_WORLD
 * rank 0 (rank 0 is also assumed when MPI is not initialized). The functions abort with a
 * message on allocation failure: a benchmark has nothing sensible to do then.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- timing --- */

/* Monotonic time in nanoseconds (clock_gettime(CLOCK_MONOTONIC)). */
uint64_t bench_now_ns(void);

/* Largest repetition count accepted by --reps (so callers can use fixed arrays). */
#define BENCH_MAX_REPS 101

/* Median of v[0..n-1] (v is not modified; n <= BENCH_MAX_REPS is not required). NAN when n == 0.
 * Even n: mean of the two middle values. */
double bench_median(const double *v, size_t n);
/* Minimum / maximum of v[0..n-1]; NAN when n == 0. */
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);

/* ------------------------------------------------------------------ command line --- */

typedef struct bench_opts {
    const char *prog; /* benchmark name (for default file names and messages) */
    int reps;         /* repetitions per measurement; the median is reported (default 7, quick 3) */
    int reps_given;   /* --reps was on the command line (a benchmark may lower only the default) */
    long iters;       /* --iters N: iterations per repetition, 0 = the benchmark's own default */
    int quick;        /* --quick: CI-sized run (fewer reps and iterations, sizes capped at 1 MiB
                       * unless --sizes is given) */
    const char *csv;  /* --csv FILE, else $RMC_BENCH_CSV/<prog>.<mode>.csv when that env var
                       * names a directory, else NULL (resolved by bench_header) */
    const char *png;  /* --png FILE or NULL */
    size_t min_size;  /* --sizes MIN:MAX[:FACTOR] (bytes; suffixes K, M, G = 2^10, 2^20, 2^30) */
    size_t max_size;
    size_t size_factor; /* FACTOR of --sizes (default 2): iterate with bench_next_size */
    int verbose;        /* --verbose: benchmarks may print extra diagnostics */
    char csv_buf[512];  /* storage for a derived csv path */
} bench_opts_t;

/* Parses the common options:
 *   --reps N  --iters N  --quick  --csv FILE  --png FILE  --sizes MIN:MAX[:FACTOR]  --verbose
 * --help def_min/def_max: default size range. Unknown options are an error. Call on every rank (it
 * does no communication and may be called before MPI_Init). Returns 0 to run, 1 after a usage error
 * (message on stderr), -1 after --help (usage on stdout): callers then exit with status rc > 0. */
int bench_parse(int argc, char **argv, const char *prog, size_t def_min, size_t def_max,
                bench_opts_t *o);

/* Iterations for one repetition: --iters if given, else `def` (divided by 4 with --quick), at
 * least 1. */
long bench_iters(const bench_opts_t *o, long def);

/* Iterations for one repetition moving `size` bytes per iteration: about `budget` bytes per
 * repetition, between `min_it` and `max_it` (--iters overrides; --quick divides by 4). */
long bench_iters_for_size(const bench_opts_t *o, size_t size, size_t budget, long min_it,
                          long max_it);

/* Message sizes: for (size_t n = o.min_size; n; n = bench_next_size(&o, n)) visits MIN, MIN*FACTOR,
 * ... up to MAX (inclusive); returns 0 after the last one. */
size_t bench_next_size(const bench_opts_t *o, size_t n);

/* Parses "64", "4K", "1M", "2G" into bytes. Returns 0 on success, -1 on bad input. */
int bench_parse_size(const char *s, size_t *out);

/* Writes a short size label ("8", "64K", "4M", "1536") into buf (>= BENCH_LABEL_LEN bytes);
 * returns buf. */
#define BENCH_LABEL_LEN 24
char *bench_size_label(size_t bytes, char *buf);

/* ------------------------------------------------------------------------ header --- */

/* Node mode string of this run: "real" (RMC_NODE_SIZE unset or 0) or "node<k>". */
const char *bench_node_mode(void);

/* Prints (rank 0) the header: benchmark title, MPI library, ranks, node mode (RMC_NODE_SIZE and
 * the topology RMC sees when RMC is initialized), repetitions, and `peers` (free text describing
 * the peer libraries and their configuration), and the machine's state (one cache line's round
 * trip between two cores of rank 0's node). Also resolves o->csv from $RMC_BENCH_CSV. Collective
 * (every rank calls it). Call after MPI (and preferably RMC) initialization. */
void bench_header(bench_opts_t *o, const char *title, const char *peers);

/* The machine's state: one cache line's round trip between the first two ranks of the node of
 * world rank 0 (shared memory, spinning), in ns; -1 when that node has one rank. Collective over
 * MPI_COMM_WORLD; at most ~20 ms. On this project's virtual machines it is bimodal over minutes
 * (~100 against ~400 ns: the host's placement of the two virtual CPUs), and every operation between
 * two ranks, MPI's or RMC's, moves with it (docs/benchmarks.md, Machine): a run that prints it says
 * which state it was measured in. bench_header prints it. */
double bench_core_round_trip_ns(void);

/* Whether MPI's RMA is one-sided here: world rank 0's 8-byte MPI_Get + MPI_Win_flush (an
 * MPI_Win_create window, lock_all) to rank 1 while rank 1 computes outside MPI for 5 ms, in µs on
 * rank 0 (-1 elsewhere, or with one rank). ~5000: the target's MPI calls serve the get (this
 * project's MPICH 4.0.2 ch4:ucx does so for MPI_Win_create and MPI_Win_allocate windows alike: an
 * MPI operation's cost in RMC_NODE_SIZE=1 runs includes the target's attention); far below: direct
 * RMA. Collective over MPI_COMM_WORLD, ~5 ms. bench_header prints it. */
double bench_mpi_rma_passive_us(void);

/* Starts MPI for a benchmark of `prog` that needs 2 ranks: sets ARMCI_USE_WIN_ALLOCATE=0 for the
 * ARMCI-MPI peer (its default MPI_Win_allocate windows return wrong data on MPICH 4.0.2, see
 * docs/benchmarks.md; harmless without it), MPI_Init_thread(MPI_THREAD_MULTIPLE), and stores the
 * rank, size and whether MPI_THREAD_MULTIPLE was provided (any pointer may be NULL). Returns 0, or
 * 1 after a message and MPI_Finalize when there are fewer than 2 ranks (main returns it). */
int bench_mpi_start(int *argc, char ***argv, const char *prog, int *rank, int *nranks,
                    int *multiple);

/* printf on rank 0 only (flushes). */
void bench_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* n bytes, page aligned and zeroed; fails the benchmark when out of memory. */
void *bench_alloc(size_t n);

/* Prints "bench FAIL: ..." to stderr (any rank) and calls MPI_Abort (exit(2) without MPI). Use it
 * when a correctness check fails, so a benchmark never reports speed for wrong results. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* splitmix64: the next of a seeded sequence of well-mixed 64-bit values (state advances). */
static inline uint64_t bench_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* bench_fail for a failed RMC call: "what: <status text> (<rmc_last_error>)". status is an
 * rmc_status_t (an int here: this header needs no RMC header). */
void bench_fail_status(int status, const char *what) __attribute__((noreturn, cold));
/* Checks of a call's result: an RMC status (bench_fail_status unless RMC_OK) and an MPI return
 * code (bench_fail unless MPI_SUCCESS, which is 0). */
static inline void bench_ck(int status, const char *what)
{
    if (__builtin_expect(status != 0, 0))
        bench_fail_status(status, what);
}
static inline void bench_mck(int rc, const char *what)
{
    if (__builtin_expect(rc != 0, 0))
        bench_fail("%s failed (MPI error %d)", what, rc);
}

/* ------------------------------------------------------------------------- table --- */

typedef struct bench_table bench_table_t;

/* New empty table. name: short identifier used in CSV and file names ("latency", "bw_put");
 * row_label: heading of the label column ("size", "op"); title: one line printed above it. */
bench_table_t *bench_table_new(const char *name, const char *row_label, const char *title);
void bench_table_free(bench_table_t *t);

/* Adds a measured column; returns its index. unit is printed in the heading ("us", "GB/s"). */
int bench_table_col(bench_table_t *t, const char *name, const char *unit);

/* Ratio column: value(num) / value(den) per row, computed when printed. Returns its index (ratio
 * columns share the index space of measured ones and can be targets of bench_table_target). */
enum {
    BENCH_RATIO_X = 0,  /* printed as "2.35x" */
    BENCH_RATIO_PCT = 1 /* printed as "87%" (ratio * 100) */
};
int bench_table_ratio(bench_table_t *t, const char *name, int num, int den, int fmt);

/* Declares a target for column `col`: rows whose x lies in [x_lo, x_hi] (NAN bounds = all rows)
 * should have value >= min_value. Misses are marked with '!' in the text table and listed below
 * it; the target is stated under the table. Returns the number of targets on the table. */
int bench_table_target(bench_table_t *t, int col, double min_value, double x_lo, double x_hi,
                       const char *text);

/* Adds a row; x is its numeric position for plots (e.g. the size in bytes) or NAN for categorical
 * rows (plotted as bar groups). Returns the row index. */
int bench_table_row(bench_table_t *t, const char *label, double x);

/* Stores a measured value (NAN = not measured, printed "-"). */
void bench_table_set(bench_table_t *t, int row, int col, double value);
/* Value of a measured or ratio column (ratios computed); NAN when missing. */
double bench_table_get(const bench_table_t *t, int row, int col);

/* Plot settings: log-scale axes and the y-axis label (default: unit of the first column). */
void bench_table_plot(bench_table_t *t, int logx, int logy, const char *ylabel);

/* Free-text note printed under the table (may be called several times). */
void bench_table_note(bench_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Number of target misses on the table (after all values are set). */
int bench_table_misses(const bench_table_t *t);

/* Prints the table as aligned text on rank 0 (no files). */
void bench_table_print(const bench_table_t *t, FILE *f);

/* Rank 0: prints every table, writes o->csv (one long-format CSV for all tables: columns
 * bench,mode,ranks,table,row,x,column,unit,value) and, with o->png, a gnuplot script
 * <png minus .png>.gp with the data inline, rendered to o->png (one panel per table) when gnuplot
 * is installed. Frees the tables (all ranks). Returns the total number of target misses (rank 0;
 * 0 elsewhere). */
int bench_finish(const bench_opts_t *o, bench_table_t **tables, int ntables);

#ifdef __cplusplus
}
#endif
#endif
