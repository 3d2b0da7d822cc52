/* bench_taskcounter: NWChem-style dynamic load balancing (seed 004, §IV.C). N tasks of random work
 * (50..500 us, fixed per task id) are claimed by every rank through a shared counter on rank 0
 * (fetch-and-add); rank 0 computes tasks too, so it is a busy target. Reported: time to finish all
 * tasks against the ideal (total work / ranks), the mean fetch-and-add latency, and the tasks done
 * by rank 0.
 *
 * Rows (RMC re-initialized per row): RMC in each AMO mode with and without the progress thread,
 * ARMCI-MPI's ARMCI_Rmw (ARMCI_USE_WIN_ALLOCATE=0), plain MPI_Fetch_and_op (MPI_Win_allocate).
 * Every run checks that each task was claimed exactly once (the claimed ids are gathered on rank
 * 0); a mismatch aborts the benchmark. --iters N sets the number of tasks (default 2000).
 */
#define _GNU_SOURCE
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#ifdef HAVE_ARMCI_MPI
#include <armci.h>
#endif
#include "bench_util.h"

enum { C_RMC_MPI, C_RMC_MPI_T, C_RMC_THR, C_RMC_THR_T, C_ARMCI, C_MPI, NCONF };
static const char *conf_name[NCONF] = {"RMC mpi",    "RMC mpi + thread",
                                       "RMC thread", "RMC thread + thread",
                                       "ARMCI_Rmw",  "MPI_Fetch_and_op"};

typedef struct ctx {
    int rank, np, multiple, conf;
    rmc_region_h reg;
    void **rb, **ab;
    MPI_Win win;
    int64_t *wbase;
} ctx_t;

static long work_ns(long task)
{
    uint64_t x = (uint64_t)task * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (50 + (long)(x % 451)) * 1000;
}

static void spin_ns(long ns)
{
    uint64_t t0 = bench_now_ns();
    volatile double x = 1.0;
    while ((long)(bench_now_ns() - t0) < ns)
        for (int i = 0; i < 50; i++)
            x = x * 1.0000001 + 1e-9;
}

static int64_t claim(ctx_t *c)
{
    int64_t got = -1;
    if (c->conf == C_ARMCI) {
#ifdef HAVE_ARMCI_MPI
        long v = 0;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &v, c->ab[0], 1, 0);
        got = v;
#endif
    } else if (c->conf == C_MPI) {
        int64_t one = 1;
        MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, c->win);
        MPI_Win_flush(0, c->win);
    } else {
        rmc_status_t st = rmc_amo_fetch_add_i64(c->rb[0], 1, &got, 0);
        if (st != RMC_OK)
            bench_fail("rmc_amo_fetch_add_i64: %s", rmc_status_string(st));
    }
    return got;
}

static void barrier(ctx_t *c)
{
    if (c->conf == C_ARMCI) {
#ifdef HAVE_ARMCI_MPI
        ARMCI_Barrier();
#endif
    } else if (c->conf == C_MPI) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        rmc_barrier();
    }
}

/* Resets the counter to 0 (collective). */
static void reset(ctx_t *c)
{
    barrier(c);
    if (c->rank == 0) {
        if (c->conf == C_ARMCI)
            *(long *)c->ab[0] = 0;
        else if (c->conf == C_MPI)
            c->wbase[0] = 0;
        else
            *(int64_t *)c->rb[0] = 0;
    }
    barrier(c);
}

static int conf_setup(ctx_t *c, int conf)
{
    c->conf = conf;
    if (conf == C_ARMCI) {
#ifdef HAVE_ARMCI_MPI
        c->ab = calloc((size_t)c->np, sizeof(void *));
        if (ARMCI_Malloc(c->ab, 64) != 0)
            bench_fail("ARMCI_Malloc failed");
        return 1;
#else
        return 0;
#endif
    }
    if (conf == C_MPI) {
        MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->wbase, &c->win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, c->win);
        return 1;
    }
    int thr = conf == C_RMC_MPI_T || conf == C_RMC_THR_T;
    if (thr && !c->multiple)
        return 0;
    setenv("RMC_AMO", conf == C_RMC_MPI || conf == C_RMC_MPI_T ? "mpi" : "thread", 1);
    setenv("RMC_PROGRESS_THREAD", thr ? "1" : "0", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    if (st != RMC_OK)
        bench_fail("rmc_init (%s): %s", conf_name[conf], rmc_status_string(st));
    c->rb = calloc((size_t)c->np, sizeof(void *));
    st = rmc_region_alloc(64, c->rb, &c->reg);
    if (st != RMC_OK)
        bench_fail("rmc_region_alloc: %s", rmc_status_string(st));
    return 1;
}

static void conf_teardown(ctx_t *c)
{
    if (c->conf == C_ARMCI) {
#ifdef HAVE_ARMCI_MPI
        ARMCI_Free(c->ab[c->rank]);
        free(c->ab);
#endif
    } else if (c->conf == C_MPI) {
        MPI_Win_unlock_all(c->win);
        MPI_Win_free(&c->win);
    } else {
        rmc_region_free(c->reg);
        free(c->rb);
        rmc_finalize();
    }
}

typedef struct result {
    double ms, fadd_us, rank0_tasks;
} result_t;

/* One run: every rank claims and computes until the counter passes ntasks. */
static result_t run(ctx_t *c, long ntasks, long *ids)
{
    reset(c);
    long mine = 0, nclaims = 0;
    uint64_t fadd_ns = 0;
    uint64_t t0 = bench_now_ns();
    for (;;) {
        uint64_t a = bench_now_ns();
        int64_t t = claim(c);
        fadd_ns += bench_now_ns() - a;
        nclaims++;
        if (t < 0 || t >= ntasks)
            break;
        ids[mine++] = (long)t;
        spin_ns(work_ns(t));
    }
    double my_ms = (double)(bench_now_ns() - t0) / 1e6;
    barrier(c);
    /* exactly once: gather the claimed ids */
    int cnt = (int)mine, *counts = NULL, *displs = NULL;
    long *all = NULL;
    if (c->rank == 0) {
        counts = malloc((size_t)c->np * sizeof(int));
        displs = malloc((size_t)c->np * sizeof(int));
        all = malloc((size_t)ntasks * sizeof(long) + sizeof(long));
    }
    MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (c->rank == 0) {
        long tot = 0;
        for (int r = 0; r < c->np; r++) {
            displs[r] = (int)tot;
            tot += counts[r];
        }
        if (tot != ntasks)
            bench_fail("%s: %ld tasks claimed, expected %ld", conf_name[c->conf], tot, ntasks);
    }
    MPI_Gatherv(ids, cnt, MPI_LONG, all, counts, displs, MPI_LONG, 0, MPI_COMM_WORLD);
    result_t r = {0, 0, 0};
    if (c->rank == 0) {
        char *seen = calloc((size_t)ntasks, 1);
        for (long i = 0; i < ntasks; i++) {
            if (all[i] < 0 || all[i] >= ntasks || seen[all[i]])
                bench_fail("%s: task %ld claimed twice or out of range", conf_name[c->conf],
                           all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        r.rank0_tasks = (double)mine;
    }
    free(all);
    free(counts);
    free(displs);
    double v[2] = {my_ms, (double)fadd_ns / 1e3 / (double)nclaims}, mx[2];
    MPI_Reduce(&v[0], &mx[0], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&v[1], &mx[1], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    r.ms = mx[0];
    r.fadd_us = mx[1] / c->np;
    MPI_Bcast(&r, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return r;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_taskcounter", 8, 8, &o);
    if (prc)
        return prc > 0;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    if (bench_mpi_start(&argc, &argv, "bench_taskcounter", &c.rank, &c.np, &c.multiple))
        return 1;
#ifdef HAVE_ARMCI_MPI
    if (ARMCI_Init() != 0)
        bench_fail("ARMCI_Init failed");
#endif
    long ntasks = bench_iters(&o, 2000);
    double total_ms = 0;
    for (long t = 0; t < ntasks; t++)
        total_ms += (double)work_ns(t) / 1e6;
    double ideal = total_ms / c.np;

    char peers[768];
    snprintf(peers, sizeof(peers),
             "RMC %s per AMO mode with/without progress thread | ARMCI-MPI 0.3.1%s | MPI: "
             "MPI_Win_allocate + lock_all, MPI_Fetch_and_op + flush. %ld tasks of 50..500 us "
             "(total %.1f ms of work), counter on rank 0, every rank computes",
             rmc_version(),
#ifdef HAVE_ARMCI_MPI
             " ARMCI_Rmw(FETCH_AND_ADD_LONG), ARMCI_USE_WIN_ALLOCATE=0",
#else
             ": not found at configure time, row empty",
#endif
             ntasks, total_ms);
    bench_header(&o, "task counter: dynamic load balancing through a shared counter", peers);

    bench_table_t *t = bench_table_new("taskcounter", "configuration",
                                       "time to finish all tasks (median of reps) vs ideal");
    int c_ms = bench_table_col(t, "time", "ms");
    int c_ideal = bench_table_col(t, "ideal", "ms");
    bench_table_ratio(t, "efficiency", c_ideal, c_ms, BENCH_RATIO_PCT);
    int c_lat = bench_table_col(t, "fadd mean", "us");
    int c_r0 = bench_table_col(t, "tasks rank 0", "");
    long *ids = malloc((size_t)ntasks * sizeof(long) + sizeof(long));
    for (int k = 0; k < NCONF; k++) {
        int row = bench_table_row(t, conf_name[k], NAN);
        if (!conf_setup(&c, k))
            continue;
        double ms[BENCH_MAX_REPS], lat[BENCH_MAX_REPS], r0[BENCH_MAX_REPS];
        for (int r = 0; r < o.reps; r++) {
            result_t res = run(&c, ntasks, ids);
            ms[r] = res.ms;
            lat[r] = res.fadd_us;
            r0[r] = res.rank0_tasks;
        }
        conf_teardown(&c);
        bench_table_set(t, row, c_ms, bench_median(ms, (size_t)o.reps));
        bench_table_set(t, row, c_ideal, ideal);
        bench_table_set(t, row, c_lat, bench_median(lat, (size_t)o.reps));
        bench_table_set(t, row, c_r0, bench_median(r0, (size_t)o.reps));
    }
    free(ids);
    bench_table_note(t,
                     "ideal = total work / %d ranks; fadd mean = mean claim latency over all "
                     "ranks",
                     c.np);
    bench_table_t *tabs[1] = {t};
    bench_finish(&o, tabs, 1);
#ifdef HAVE_ARMCI_MPI
    ARMCI_Finalize();
#endif
    MPI_Finalize();
    return 0;
}
