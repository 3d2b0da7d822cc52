/* The containers layer's registration with comm, and the segment: a reserved region per rank
 * (rmc_region_reserve), committed as its heap grows. */
#define _GNU_SOURCE
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rmc/env.h>
#include <rmc/layer.h>
#include <rmc/progress.h>
#include "ct.h"

rmcc_state_t rmcc = {.comm = MPI_COMM_NULL};

static const rmc_knob_t knob_size = {
    "RMC_SEGMENT_SIZE", "64M",
    "bytes of each rank's container segment committed at rmc_init (K/M/G/T suffixes)"};
static const rmc_knob_t knob_reserve = {
    "RMC_SEGMENT_RESERVE", "auto",
    "address space of each rank's container segment, up to which it grows (K/M/G/T; auto: this "
    "machine's memory / the ranks on it)"};
static const rmc_knob_t knob_timeout = {
    "RMC_COLL_TIMEOUT", "0",
    "seconds a container collective waits for every rank to enter it before failing with "
    "RMC_ERR_STATE (0: wait forever, with a message every 60 s)"};

/* A size with an optional K/M/G/T suffix; 0 when unreadable, negative (strtoull takes "-1"), or
 * beyond what a segment can hold. */
static size_t parse_size(const char *v)
{
    if (!v || !*v || strchr(v, '-'))
        return 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned sh = 0;
    switch (*end) {
    case 'k':
    case 'K':
        sh = 10;
        break;
    case 'm':
    case 'M':
        sh = 20;
        break;
    case 'g':
    case 'G':
        sh = 30;
        break;
    case 't':
    case 'T':
        sh = 40;
        break;
    default:
        break;
    }
    if (sh)
        end++;
    if (*end || (sh && x > (~0ull >> sh)) || (x << sh) > ((size_t)1 << 52))
        return 0; /* (2^52: far above any machine's memory; first + 4095 cannot wrap) */
    return (size_t)(x << sh);
}

/* ------------------------------------------------------------------------ segment --- */

static rmc_status_t commit_cb(void *ctx, size_t off, size_t len)
{
    (void)ctx;
    return rmc_region_commit(rmcc.seg, rmcc.lbase[rmcc.rank] + off, len);
}

static rmc_status_t reserve_size(size_t committed, size_t *reserve)
{
    const char *v = rmc_knob_value("RMC_SEGMENT_RESERVE");
    if (v && strcmp(v, "auto") != 0) {
        *reserve = parse_size(v);
        if (!*reserve)
            return rmcc_fail(RMC_ERR_ARG, "rmc_init", "RMC_SEGMENT_RESERVE=%s is not a size", v);
    } else {
        rmc_topology_t t; /* the ranks of this machine share its memory */
        rmc_status_t st = rmc_topology(&t);
        if (st != RMC_OK)
            return st;
        int n = t.machine_ranks;
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        size_t phys = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)1 << 32;
        *reserve = phys / (size_t)(n > 0 ? n : 1);
    }
    *reserve &= ~(((size_t)2 << 20) - 1);
    if (*reserve < committed + RMCC_HEAP_START)
        *reserve = committed + RMCC_HEAP_START;
    return RMC_OK;
}

static rmc_status_t seg_tables(void)
{
    size_t n = (size_t)rmcc.nranks;
    rmcc.bases = calloc(n, sizeof(*rmcc.bases));
    rmcc.lbase = calloc(n, sizeof(*rmcc.lbase));
    rmcc.sizes = calloc(n, sizeof(*rmcc.sizes));
    if (!rmcc.bases || !rmcc.lbase || !rmcc.sizes)
        return rmcc_fail(RMC_ERR_NOMEM, "rmc_init", "containers: segment tables");
    return RMC_OK;
}

static void seg_release(void)
{
    if (rmcc.seg && rmc_initialized())
        rmc_region_free(rmcc.seg);
    rmcc.seg = NULL;
    free(rmcc.bases);
    free(rmcc.lbase);
    free(rmcc.sizes);
    rmcc.bases = NULL;
    rmcc.lbase = NULL;
    rmcc.sizes = NULL;
    if (rmcc.comm != MPI_COMM_NULL)
        MPI_Comm_free(&rmcc.comm);
    rmcc.comm = MPI_COMM_NULL;
}

/* The segment: reserve, learn every rank's base and size and the node-local mappings, commit the
 * first RMC_SEGMENT_SIZE bytes, start the heap. Collective, agreed; releases what it took. */
static rmc_status_t seg_create(void)
{
    const char *fn = "rmc_init";
    const char *v = rmc_knob_value("RMC_SEGMENT_SIZE");
    size_t first = parse_size(v), reserve = 0;
    rmc_status_t st =
        first ? RMC_OK : rmcc_fail(RMC_ERR_ARG, fn, "RMC_SEGMENT_SIZE=%s is not a size", v);
    first = (first + 4095) & ~(size_t)4095;
    if (st == RMC_OK)
        st = reserve_size(first + RMCC_HEAP_START, &reserve);
    if (st == RMC_OK)
        st = seg_tables();
    st = rmcc_agree(st);
    if (st == RMC_OK)
        st = rmc_region_reserve(reserve, (void **)rmcc.bases, &rmcc.seg);
    if (st != RMC_OK)
        return st; /* agreed by the allocation */
    unsigned long long mine = reserve;
    MPI_Request rq;
    if (MPI_Iallgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, rmcc.sizes, 1, MPI_UNSIGNED_LONG_LONG,
                       rmcc.comm, &rq) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, fn, "containers: MPI_Iallgather failed");
    else
        st = rmc_wait_mpi(&rq);
    for (int r = 0; st == RMC_OK && r < rmcc.nranks; r++)
        st = rmc_region_local(rmcc.seg, r, (void **)&rmcc.lbase[r]);
    size_t commit = first + RMCC_HEAP_START < reserve ? first + RMCC_HEAP_START : reserve;
    if (st == RMC_OK)
        st = rmc_region_commit(rmcc.seg, rmcc.lbase[rmcc.rank], commit);
    if (st == RMC_OK)
        rmcc_heap_init(&rmcc.heap, rmcc.lbase[rmcc.rank], RMCC_HEAP_START, commit, reserve,
                       commit_cb, NULL);
    return rmcc_agree(st);
}

/* ------------------------------------------------------------------------ the layer --- */

static rmc_status_t layer_init(void *arg)
{
    (void)arg;
    memset(&rmcc, 0, sizeof(rmcc));
    rmcc.comm = MPI_COMM_NULL;
    rmcc.rank = rmc_rank();
    rmcc.nranks = rmc_nranks();
    pthread_mutex_init(&rmcc.lock, NULL);
    MPI_Comm c;
    MPI_Request rq;
    rmc_status_t st = rmc_comm(&c);
    if (st == RMC_OK && MPI_Comm_idup(c, &rmcc.comm, &rq) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, "rmc_init", "containers: MPI_Comm_idup failed");
    else if (st == RMC_OK)
        st = rmc_wait_mpi(&rq);
    st = rmc_agree(st);
    if (st == RMC_OK)
        st = seg_create();
    if (st == RMC_OK)
        st = rmc_am_register_layer(rmcc_rpc_serve, NULL, &rmcc.rpc_id);
    if (st != RMC_OK) {
        seg_release();
        pthread_mutex_destroy(&rmcc.lock);
        return st;
    }
    rmcc.up = 1;
    return RMC_OK;
}

static void layer_finalize(void *arg)
{
    (void)arg;
    rmcc.up = 0;
    rmc_am_unregister_layer(rmcc.rpc_id);
    rmcc_obj_free_all();
    rmcc_gemm_release();
    seg_release();
    pthread_mutex_destroy(&rmcc.lock);
}

static const rmc_layer_t layer = {
    .name = "containers", .init = layer_init, .finalize = layer_finalize};

__attribute__((constructor)) static void containers_register(void)
{
    rmc_knob_register(&knob_size);
    rmc_knob_register(&knob_reserve);
    rmc_knob_register(&knob_timeout);
    rmc_status_t st = rmc_layer_register(&layer);
    if (st != RMC_OK)
        fprintf(stderr, "rmc: the containers layer could not register: %s\n", rmc_last_error());
}

/* ------------------------------------------------------------------------ allocation --- */

rmc_status_t rmcc_alloc_off(size_t bytes, uint64_t *off, const char *fn)
{
    size_t o = 0;
    pthread_mutex_lock(&rmcc.lock);
    rmc_status_t st = rmcc_heap_alloc(&rmcc.heap, bytes, &o);
    pthread_mutex_unlock(&rmcc.lock);
    if (st == RMC_ERR_TOO_BIG)
        return rmcc_fail(st, fn,
                         "%zu bytes: more than this rank's whole segment can hold (%zu bytes "
                         "reserved, %zu of them for allocations: RMC_SEGMENT_RESERVE)",
                         bytes, rmcc.heap.limit, rmcc.heap.limit - rmcc.heap.start);
    if (st != RMC_OK)
        return rmcc_fail(st, fn,
                         "%zu bytes: this rank's segment is full (%zu of %zu bytes reserved in use,"
                         " %zu committed; RMC_SEGMENT_RESERVE, or the machine's shared memory)",
                         bytes, rmcc.heap.in_use, rmcc.heap.limit, rmcc.heap.committed);
    *off = o;
    return RMC_OK;
}

static rmc_status_t free_status(rmc_status_t st, uint64_t off, const char *fn)
{
    if (st == RMC_ERR_STATE)
        return rmcc_fail(st, fn, "offset %llu was freed already (double free)",
                         (unsigned long long)off);
    return rmcc_fail(st, fn, "offset %llu is not the start of an allocation of this rank",
                     (unsigned long long)off);
}

rmc_status_t rmcc_free_off(uint64_t off, const char *fn)
{
    pthread_mutex_lock(&rmcc.lock);
    rmc_status_t st = rmcc_heap_free(&rmcc.heap, (size_t)off);
    pthread_mutex_unlock(&rmcc.lock);
    return st == RMC_OK ? st : free_status(st, off, fn);
}

rmc_status_t rmc_alloc(size_t bytes, rmc_gptr_t *g)
{
    const char *fn = __func__;
    if (g)
        *g = RMC_GPTR_NULL;
    RMCC_CHECK_UP(fn);
    if (!g)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL result pointer");
    if (bytes == 0)
        return rmcc_fail(RMC_ERR_ARG, fn, "0 bytes");
    uint64_t off;
    rmc_status_t st = rmcc_alloc_off(bytes, &off, fn);
    if (st == RMC_OK)
        *g = (rmc_gptr_t){rmcc.rank, 0, off};
    return st;
}

/* g is this rank's: RMC_OK, else RMC_ERR_ARG with why. */
static rmc_status_t own(rmc_gptr_t g, const char *fn)
{
    if (rmc_gptr_is_null(g))
        return rmcc_fail(RMC_ERR_ARG, fn, "null global pointer");
    if (g.zero_ != 0) /* (as every other call taking a global pointer: gptr.h) */
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "invalid global pointer: its reserved field zero_ is %u, not 0 (not a "
                         "pointer RMC made, or one overwritten)",
                         (unsigned)g.zero_);
    if (g.rank != rmcc.rank)
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "global pointer of rank %d: only the owner frees its memory (this is rank "
                         "%d)",
                         (int)g.rank, rmcc.rank);
    return RMC_OK;
}

rmc_status_t rmc_free(rmc_gptr_t g)
{
    RMCC_CHECK_UP(__func__);
    rmc_status_t st = own(g, __func__);
    return st == RMC_OK ? rmcc_free_off(g.off, __func__) : st;
}

rmc_status_t rmc_alloc_size(rmc_gptr_t g, size_t *bytes)
{
    RMCC_CHECK_UP(__func__);
    if (!bytes)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    rmc_status_t st = own(g, __func__);
    if (st != RMC_OK)
        return st;
    pthread_mutex_lock(&rmcc.lock);
    st = rmcc_heap_usable(&rmcc.heap, (size_t)g.off, bytes);
    pthread_mutex_unlock(&rmcc.lock);
    return st == RMC_OK ? st : free_status(st, g.off, __func__);
}

rmc_status_t rmc_segment_info(rmc_segment_info_t *info)
{
    RMCC_CHECK_UP(__func__);
    if (!info)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    pthread_mutex_lock(&rmcc.lock);
    info->reserved = rmcc.heap.limit;
    info->committed = rmcc.heap.committed;
    info->in_use = rmcc.heap.in_use;
    info->peak = rmcc.heap.peak;
    info->allocs = rmcc.heap.allocs;
    info->frees = rmcc.heap.frees;
    info->grows = rmcc.heap.grows;
    pthread_mutex_unlock(&rmcc.lock);
    return RMC_OK;
}
