/* The containers' shared mechanisms: errors, handles, collectives (the segment and the layer
 * registration are in segment.c). */
#define _GNU_SOURCE
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rmc/env.h>
#include "ct.h"

/* ------------------------------------------------------------------------- errors --- */

rmc_status_t rmcc_not_up(const char *fn)
{
    if (!rmc_initialized())
        return rmcc_fail(RMC_ERR_NOT_INIT, fn, "RMC is not initialized");
    return rmcc_fail(RMC_ERR_NOT_INIT, fn, "the containers layer is not up (its rmc_init failed)");
}

/* ----------------------------------------------------------------------- handles --- */

rmc_status_t rmcc_obj_bad(const rmcc_obj_t *o, uint32_t magic, const char *what, const char *fn)
{
    RMCC_CHECK_UP(fn);
    if (!o)
        return rmcc_fail(RMC_ERR_HANDLE, fn, "NULL %s handle", what);
    if (o->magic != magic)
        return rmcc_fail(RMC_ERR_HANDLE, fn, "%p is %s", (const void *)o,
                         o->magic == RMCC_MAGIC_DEAD ? "a destroyed container"
                                                     : "not a live container of this kind");
    return RMC_OK;
}

rmc_status_t rmcc_obj_bad_arg(const rmcc_obj_t *o, uint32_t magic, const char *what,
                              const char *arg, const char *fn)
{
    RMCC_CHECK_UP(fn);
    if (!o)
        return rmcc_fail(RMC_ERR_HANDLE, fn, "%s: NULL %s handle", arg, what);
    if (o->magic != magic)
        return rmcc_fail(RMC_ERR_HANDLE, fn, "%s: %p is %s", arg, (const void *)o,
                         o->magic == RMCC_MAGIC_DEAD ? "a destroyed container"
                                                     : "not a live container of this kind");
    return RMC_OK;
}

void rmcc_obj_add(rmcc_obj_t *o, uint32_t magic, void (*release)(rmcc_obj_t *o))
{
    o->magic = magic;
    o->release = release;
    o->next = rmcc.objs;
    rmcc.objs = o;
}

void rmcc_obj_kill(rmcc_obj_t *o)
{
    if (o->release)
        o->release(o);
    o->release = NULL;
    o->magic = RMCC_MAGIC_DEAD;
}

/* Handles left at finalize: what they hold is freed, the handles themselves stay (dead) until the
 * process exits, so a handle kept across rmc_finalize and a new rmc_init is still told apart
 * (RMC_ERR_HANDLE) instead of being read after a free. */
static rmcc_obj_t *graveyard;

void rmcc_obj_free_all(void)
{
    while (rmcc.objs) {
        rmcc_obj_t *o = rmcc.objs;
        rmcc.objs = o->next;
        if (o->release)
            o->release(o);
        o->release = NULL;
        o->magic = RMCC_MAGIC_DEAD;
        o->next = graveyard;
        graveyard = o;
    }
}

__attribute__((destructor)) static void graveyard_free(void)
{
    while (graveyard) {
        rmcc_obj_t *o = graveyard;
        graveyard = o->next;
        free(o);
    }
}

/* ------------------------------------------------------------------- collectives --- */

rmc_status_t rmcc_bcast(void *buf, size_t bytes, int root, const char *fn)
{
    MPI_Request rq;
    int rc = MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, rmcc.comm, &rq);
    if (rc != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Ibcast failed (%d)", rc);
    return rmc_wait_mpi(&rq);
}

#define POISON ((int64_t)1 << 48) /* added to the arrival count by a rank that gave up */

double rmcc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Arrival: every rank adds one to a counter on rank 0 at each container collective and waits
 * until the counter shows every rank's arrival at this one. A rank that waits longer than
 * RMC_COLL_TIMEOUT gives up and poisons the counter, so that ranks arriving later fail too instead
 * of waiting in an MPI collective the others never enter. */
static rmc_status_t arrive(const char *fn)
{
    void *ctr = rmcc_addr(0, RMCC_CTL_ARRIVE);
    int64_t old, v;
    unsigned long long seq = ++rmcc.coll_seq;
    int64_t want = (int64_t)(seq * (unsigned long long)rmcc.nranks);
    rmc_status_t st = rmc_amo_fetch_add_i64(ctr, 1, &old, 0);
    if (st != RMC_OK)
        return st;
    v = old + 1;
    double timeout = atof(rmc_knob_value("RMC_COLL_TIMEOUT")), t0 = rmcc_now(), warned = 0;
    unsigned spins = 0;
    while (v < want) {
        if (v >= POISON / 2)
            break;
        double t = rmcc_now() - t0;
        if (timeout > 0 && t > timeout) {
            /* poison only a count still short of every rank: the last one may arrive meanwhile
             * and go on into the agreement, which then must not be left without this rank */
            int64_t seen = v;
            while ((st = rmc_amo_cas_i64(ctr, seen, seen + POISON, &old, 0)) == RMC_OK &&
                   old != seen && old < want && old < POISON / 2)
                seen = old;
            if (st == RMC_OK && old != seen) { /* everyone arrived, or another rank poisoned */
                v = old;
                continue;
            }
            rmcc.broken = 1;
            return rmcc_fail(RMC_ERR_STATE, fn,
                             "only %lld of %d ranks entered a container collective within %g s "
                             "(RMC_COLL_TIMEOUT): a collective called by a subset of the ranks; "
                             "no more container collectives on this rank",
                             (long long)(v - (want - rmcc.nranks)), rmcc.nranks, timeout);
        }
        if (timeout <= 0 && t > 60 && t - warned > 60) {
            warned = t;
            fprintf(stderr,
                    "rmc[%d]: %s has waited %.0f s for the other ranks (%lld of %d entered); "
                    "RMC_COLL_TIMEOUT sets a limit\n",
                    rmcc.rank, fn, t, (long long)(v - (want - rmcc.nranks)), rmcc.nranks);
        }
        rmc_wait_round(&spins);
        rmc_thread_pause(); /* other threads' container operations go on meanwhile */
        if (spins > 4096) { /* the others are busy elsewhere: stop asking rank 0 so often */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        if ((st = rmc_amo_load_i64(ctr, &v, 0)) != RMC_OK)
            return st;
    }
    if (v >= POISON / 2) {
        rmcc.broken = 1;
        return rmcc_fail(RMC_ERR_STATE, fn,
                         "another rank gave up waiting in a container collective (RMC_COLL_TIMEOUT)"
                         ": the ranks called collectives in different numbers");
    }
    return RMC_OK;
}

/* The arrival and the agreement of a collective; *diff = the first argument (1-based) the ranks
 * disagree on, 0 when they agree on all. */
static rmc_status_t coll_on(MPI_Comm comm, const char *fn, const uint64_t *args, int nargs,
                            rmc_status_t st, int *diff)
{
    *diff = 0;
    RMCC_CHECK_UP(fn);
    if (rmcc.broken)
        return rmcc_fail(RMC_ERR_STATE, fn,
                         "an earlier container collective was abandoned (RMC_COLL_TIMEOUT)");
    if (comm == MPI_COMM_NULL)
        comm = rmcc.comm;
    /* the arrival count is the whole job's: a collective over a subset has none */
    rmc_status_t a = comm == rmcc.comm ? arrive(fn) : RMC_OK;
    if (a != RMC_OK)
        return a;
    /* one reduction: the worst status, and the minimum of every value and of its complement (so
     * min(v) == max(v) shows that every rank has the same collective and the same arguments) */
    enum { MAXV = 9, OFF = 1 << 20 };
    uint64_t in[1 + 2 * MAXV], out[1 + 2 * MAXV], vals[MAXV];
    int n = 1 + (nargs < MAXV - 1 ? nargs : MAXV - 1);
    vals[0] = rmcc_hash_bytes(fn, strlen(fn), 0);
    for (int i = 1; i < MAXV; i++) /* every rank reduces MAXV values (unused ones 0): ranks in
                                     * different collectives must not give MPI different counts */
        vals[i] = i < n ? args[i - 1] : 0;
    in[0] = (uint64_t)((int64_t)st + OFF); /* statuses are small negatives: order kept */
    for (int i = 0; i < MAXV; i++) {
        in[1 + 2 * i] = vals[i];
        in[2 + 2 * i] = ~vals[i];
    }
    MPI_Request rq;
    int rc = MPI_Iallreduce(in, out, 1 + 2 * MAXV, MPI_UINT64_T, MPI_MIN, comm, &rq);
    if (rc != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce failed (%d)", rc);
    rmc_status_t s2 = rmc_wait_mpi(&rq);
    if (s2 != RMC_OK)
        return s2;
    if (out[1] != ~out[2])
        return rmcc_fail(RMC_ERR_STATE, fn,
                         "the ranks are in different container collectives (each rank must call "
                         "the same collectives in the same order)");
    rmc_status_t worst = (rmc_status_t)((int64_t)out[0] - OFF);
    if (worst != RMC_OK) /* a rank failed its own checks: that, not the arguments it left out */
        return st != RMC_OK ? st
                            : rmcc_fail(worst, fn, "another rank failed: %s (its rmc_last_error "
                                                   "says why)",
                                        rmc_status_string(worst));
    for (int i = 1; i < n; i++)
        if (out[1 + 2 * i] != ~out[2 + 2 * i]) {
            *diff = i;
            return rmcc_fail(RMC_ERR_ARG, fn, "the ranks passed different arguments (argument %d)",
                             i);
        }
    return RMC_OK;
}

static rmc_status_t coll(const char *fn, const uint64_t *args, int nargs, rmc_status_t st,
                         int *diff)
{
    return coll_on(rmcc.comm, fn, args, nargs, st, diff);
}

rmc_status_t rmcc_coll_begin_on(MPI_Comm comm, const char *fn, const uint64_t *args, int nargs,
                                rmc_status_t st)
{
    int diff;
    return coll_on(comm, fn, args, nargs, st, &diff);
}

rmc_status_t rmcc_coll_begin_named(MPI_Comm comm, const char *fn, const uint64_t *args,
                                   const char *const *names, int nargs, rmc_status_t st)
{
    int diff;
    st = coll_on(comm, fn, args, nargs, st, &diff);
    if (st == RMC_ERR_ARG && diff > 0 && diff <= nargs && names[diff - 1])
        return rmcc_fail(st, fn, "the ranks passed different %s (every rank must pass the same)",
                         names[diff - 1]);
    return st;
}

rmc_status_t rmcc_agree_on(MPI_Comm comm, rmc_status_t st)
{
    if (comm == MPI_COMM_NULL || comm == rmcc.comm)
        return rmcc_agree(st);
    int in = (int)st, out = (int)st;
    MPI_Request rq;
    if (MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm, &rq) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, "rmcc_agree_on", "MPI_Iallreduce failed");
    rmc_status_t w = rmc_wait_mpi(&rq);
    return w != RMC_OK ? w : (rmc_status_t)out;
}

rmc_status_t rmcc_barrier_on(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL || comm == rmcc.comm)
        return rmc_barrier();
    rmc_status_t st = rmc_fence_all();
    MPI_Request rq;
    if (MPI_Ibarrier(comm, &rq) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, "rmcc_barrier_on", "MPI_Ibarrier failed");
    rmc_status_t w = rmc_wait_mpi(&rq);
    return st != RMC_OK ? st : w;
}

rmc_status_t rmcc_coll_begin(const char *fn, const uint64_t *args, int nargs, rmc_status_t st)
{
    int diff;
    return coll(fn, args, nargs, st, &diff);
}

rmc_status_t rmcc_create_begin_types(const char *fn, const uint64_t *args, int nargs,
                                     const rmc_type_t *const *types, int ntypes, rmc_status_t st)
{
    uint64_t all[8];
    int n = nargs < 8 - ntypes ? nargs : 8 - ntypes, diff;
    for (int i = 0; i < n; i++)
        all[i] = args[i];
    for (int t = 0; t < ntypes; t++)
        all[n + t] = st == RMC_OK ? rmcc_type_digest(types[t]) : 0;
    st = coll(fn, all, n + ntypes, st, &diff);
    if (st == RMC_ERR_ARG && diff > n)
        return rmcc_fail(RMC_ERR_TYPE, fn, "the ranks gave different element types (%s here)",
                         types[diff - n - 1] ? types[diff - n - 1]->name : "none");
    return st;
}

rmc_status_t rmcc_create_begin(const char *fn, const uint64_t *args, int nargs,
                               const rmc_type_t *type, rmc_status_t st)
{
    return rmcc_create_begin_types(fn, args, nargs, &type, 1, st);
}

rmc_status_t rmcc_destroy_begin(const rmcc_obj_t *o, uint32_t magic, const char *what, uint64_t id,
                                rmc_status_t *barrier, const char *fn)
{
    rmc_status_t st = rmcc_obj_check(o, magic, what, fn);
    uint64_t arg = st == RMC_OK ? id : ~0ull;
    st = rmcc_coll_begin(fn, &arg, 1, st);
    if (st == RMC_OK)
        rmcc_quiesce(o);
    *barrier = st == RMC_OK ? rmc_barrier() : RMC_OK;
    return st;
}

void rmcc_quiesce(const rmcc_obj_t *o)
{
    unsigned spins = 0;
    while (o->pending)
        rmc_wait_round(&spins);
}

rmc_status_t rmcc_scratch(char **buf, size_t *cap, size_t bytes, const char *fn)
{
    if (bytes <= *cap)
        return RMC_OK;
    char *b = realloc(*buf, bytes);
    if (!b)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes of scratch", bytes);
    *buf = b;
    *cap = bytes;
    return RMC_OK;
}

/* FNV-1a over bytes, then a 64-bit finalizer (splitmix). */
uint64_t rmcc_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

rmc_status_t rmcc_exchange_parts_on(MPI_Comm comm, rmc_status_t st, uint64_t off, uint64_t *offs,
                                    const char *fn)
{
    if (comm == MPI_COMM_NULL)
        comm = rmcc.comm;
    int n, me = rmcc.rank;
    MPI_Comm_size(comm, &n);
    uint64_t mine[3] = {(uint64_t)(int64_t)st, off, (uint64_t)me};
    uint64_t *all = malloc(3 * sizeof(uint64_t) * (size_t)n);
    /* every rank has its buffer before any enters the allgather (one without would have skipped
     * it while the others waited in it) */
    rmc_status_t s2 = rmcc_agree_on(
        comm, all ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "%d ranks' part offsets", n));
    if (s2 != RMC_OK) {
        free(all);
        return s2;
    }
    MPI_Request rq;
    s2 = RMC_ERR_MPI;
    if (MPI_Iallgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, comm, &rq) == MPI_SUCCESS)
        s2 = rmc_wait_mpi(&rq);
    s2 = rmcc_agree_on(comm, s2 != RMC_OK ? rmcc_fail(s2, fn, "exchanging the parts' offsets") : s2);
    if (s2 == RMC_OK && st != RMC_OK)
        s2 = st; /* this rank's own failure: its message stays */
    for (int i = 0; s2 == RMC_OK && i < n; i++)
        if ((rmc_status_t)(int64_t)all[3 * i] != RMC_OK) {
            s2 = (rmc_status_t)(int64_t)all[3 * i];
            rmcc_fail(s2, fn, "rank %d could not set up its part: %s", (int)all[3 * i + 2],
                      rmc_status_string(s2));
        }
    for (int i = 0; s2 == RMC_OK && i < n; i++)
        offs[all[3 * i + 2]] = all[3 * i + 1];
    free(all);
    return s2;
}

rmc_status_t rmcc_exchange_parts(rmc_status_t st, uint64_t off, uint64_t *offs, const char *fn)
{
    return rmcc_exchange_parts_on(rmcc.comm, st, off, offs, fn);
}

rmc_status_t rmcc_rpc_serve(int origin, const void *payload, size_t len, void *reply,
                            size_t reply_cap, size_t *reply_len, void *arg)
{
    (void)origin;
    (void)arg;
    uint32_t family = 0;
    if (len >= 4)
        memcpy(&family, payload, 4);
    if (family == RMCC_RPC_HASHMAP)
        return rmcc_hashmap_serve(payload, len, reply, reply_cap, reply_len);
    if (family == RMCC_RPC_QUEUE)
        return rmcc_queue_serve(payload, len, reply, reply_cap, reply_len);
    return RMC_ERR_ARG;
}

rmc_status_t rmcc_parts_init(rmcc_parts_t *p, const char *fn)
{
    size_t nr = (size_t)rmcc.nranks;
    p->offs = calloc(nr, sizeof(uint64_t));
    p->tab = calloc(nr, sizeof(char *));
    p->ltab = calloc(nr, sizeof(char *));
    if (p->offs && p->tab && p->ltab)
        return RMC_OK;
    rmcc_parts_free(p);
    return rmcc_fail(RMC_ERR_NOMEM, fn, "a container's table of parts");
}

void rmcc_parts_free(rmcc_parts_t *p)
{
    free(p->offs);
    free(p->tab);
    free(p->ltab);
    p->offs = NULL;
    p->tab = p->ltab = NULL;
}

void rmcc_parts_map(rmcc_parts_t *p)
{
    for (int r = 0; r < rmcc.nranks; r++) {
        p->tab[r] = rmcc_addr(r, p->offs[r]);
        p->ltab[r] = rmcc.lbase[r] ? rmcc.lbase[r] + p->offs[r] : NULL;
    }
}

rmc_status_t rmcc_destroy_finish(rmcc_obj_t *o, rmc_status_t barrier, uint64_t own_off,
                                 const char *fn)
{
    rmc_status_t st = rmcc_free_off(own_off, fn);
    rmcc_obj_kill(o);
    return barrier != RMC_OK ? barrier : st;
}
