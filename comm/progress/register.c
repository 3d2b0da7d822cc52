/* Dynamic registration: memory exposed with rmc_register is served by the target through active
 * messages (seed 004 eq. 8 fall-back protocol). The origin caches descriptors of peers'
 * registrations (regcache.c, LFU) so that later accesses name the registration by id; the target
 * checks every access against its live registrations under a lock, so a stale descriptor or an
 * unregistered address never touches memory (RMC_ERR_NOT_REGION), and rmc_deregister returns only
 * after any access in progress. */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "am_impl.h"
#include "regcache.h"

typedef struct reg {
    uintptr_t lo, hi;
    uint64_t id;
} reg_t;

static struct {
    int up;
    pthread_mutex_t lock; /* guards v/n (the progress thread reads them) */
    reg_t *v;             /* sorted by lo, non-overlapping */
    size_t n, cap;
    uint64_t next_id;
    rmci_regcache_t cache; /* descriptors of peers' registrations (main thread only) */
    int id_get, id_put;    /* internal AM ids */
} rg;

/* Wire formats. */
typedef struct {
    uint64_t addr, len, id; /* id 0: find by address */
    uint64_t total;         /* bytes the whole transfer covers from addr (>= len): checked first, so
                             * an out-of-bounds transfer changes nothing */
} xfer_req_t;

typedef struct {
    uint64_t lo, hi, id;
} xfer_rep_t;

/* Index of the registration containing addr, or -1. Caller holds the lock. */
static long find_reg(uintptr_t addr)
{
    size_t lo = 0, hi = rg.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (addr < rg.v[mid].lo)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == 0)
        return -1;
    const reg_t *r = &rg.v[lo - 1];
    return (addr >= r->lo && addr < r->hi) ? (long)(lo - 1) : -1;
}

/* Checks [addr, addr+len) against the registrations (id != 0: must be that registration). Caller
 * holds the lock. */
static rmc_status_t check_range(uintptr_t addr, size_t len, uint64_t id, const reg_t **out)
{
    long i = find_reg(addr);
    if (i < 0 || (id && rg.v[i].id != id))
        return RMC_ERR_NOT_REGION;
    if (len > rg.v[i].hi - addr)
        return RMC_ERR_BOUNDS;
    *out = &rg.v[i];
    return RMC_OK;
}

/* ---------------------------------------------------------------------- target side --- */

/* Target side of a fall-back get (arg NULL) or put (arg non-NULL): checks the request, then
 * copies under the lock. The reply starts with the registration's descriptor (the origin caches
 * it); a get's data follows. */
static rmc_status_t h_xfer(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)origin;
    int is_put = arg != NULL;
    xfer_req_t q;
    if (len < sizeof(q) || cap < sizeof(xfer_rep_t))
        return RMC_ERR_ARG;
    memcpy(&q, payload, sizeof(q));
    if (q.total < q.len || (is_put ? q.len != len - sizeof(q) : len != sizeof(q)))
        return RMC_ERR_ARG;
    if (!is_put && q.len > cap - sizeof(xfer_rep_t))
        return RMC_ERR_TOO_BIG;
    pthread_mutex_lock(&rg.lock);
    const reg_t *r;
    rmc_status_t st = check_range((uintptr_t)q.addr, (size_t)q.total, q.id, &r);
    if (st == RMC_OK) {
        xfer_rep_t d = {r->lo, r->hi, r->id};
        memcpy(reply, &d, sizeof(d));
        *rlen = sizeof(d);
        if (is_put) {
            memcpy((void *)(uintptr_t)q.addr, (const char *)payload + sizeof(q), (size_t)q.len);
            __atomic_thread_fence(__ATOMIC_RELEASE);
        } else {
            memcpy((char *)reply + sizeof(d), (const void *)(uintptr_t)q.addr, (size_t)q.len);
            *rlen += (size_t)q.len;
        }
        RMCI_PSTAT_ADD(fallback_ops, 1);
    }
    pthread_mutex_unlock(&rg.lock);
    return st;
}

/* Runs fn on a checked range under the lock (the AMO layer's atomics on registered memory). */
rmc_status_t rmci_reg_access(uintptr_t addr, size_t len, void (*fn)(void *p, void *ctx), void *ctx)
{
    if (!rg.up)
        return RMC_ERR_NOT_REGION;
    pthread_mutex_lock(&rg.lock);
    const reg_t *r;
    rmc_status_t st = check_range(addr, len, 0, &r);
    if (st == RMC_OK)
        fn((void *)addr, ctx);
    pthread_mutex_unlock(&rg.lock);
    return st;
}

/* ----------------------------------------------------------------------- origin side --- */

/* One chunk to/from a peer. id 0: by address (learns the descriptor into *d). */
static rmc_status_t xfer_chunk(int kind, uintptr_t raddr, char *local, size_t n, size_t total,
                               int rank, uint64_t id, xfer_rep_t *d, char *scratch)
{
    xfer_req_t q = {(uint64_t)raddr, (uint64_t)n, id, (uint64_t)total};
    size_t rlen = 0;
    rmc_status_t st;
    if (kind == RMCI_CS_WRITE) {
        st = rmci_am_call(rank, rg.id_put, &q, sizeof(q), local, n, d, sizeof(*d), &rlen);
        if (st == RMC_OK && rlen != sizeof(*d))
            st = RMC_ERR_INTERNAL;
    } else {
        st = rmci_am_call(rank, rg.id_get, &q, sizeof(q), NULL, 0, scratch, sizeof(*d) + n, &rlen);
        if (st == RMC_OK && rlen != sizeof(*d) + n)
            st = RMC_ERR_INTERNAL;
        if (st == RMC_OK) {
            memcpy(d, scratch, sizeof(*d));
            memcpy(local, scratch + sizeof(*d), n);
        }
    }
    return st;
}

/* Finisher of a pipelined chunk (rmci_am_call_nb): get, ptr = where the chunk's data goes; put,
 * ptr NULL. n = the chunk's bytes. */
static rmc_status_t xfer_fin(rmc_status_t st, const void *reply, size_t len, void *ptr, uint64_t n)
{
    if (st != RMC_OK)
        return st;
    if (!ptr)
        return len == sizeof(xfer_rep_t) ? RMC_OK : RMC_ERR_INTERNAL;
    if (len != sizeof(xfer_rep_t) + n)
        return RMC_ERR_INTERNAL;
    memcpy(ptr, (const char *)reply + sizeof(xfer_rep_t), (size_t)n);
    return RMC_OK;
}

/* Chunks of a transfer in flight at once after the first (which validates the whole range and
 * learns the descriptor): the target's handler runs while the next chunk travels. Measured with
 * RMC_NODE_SIZE=1, 1 MiB in 64 KiB chunks, target idle in rmc_barrier: one at a time get/put 289 /
 * 271 us, two 198 / 163 us, four 352 / 203 us (gets then slow down: the replies pile up as
 * unexpected rendezvous messages). */
#define XFER_WINDOW 2

/* The chunks of [done, bytes) with a known descriptor id, XFER_WINDOW at a time. Completes every
 * chunk it issued before returning. */
static rmc_status_t xfer_pipelined(int kind, uintptr_t addr, char *local, size_t bytes, size_t done,
                                   size_t chunk, int rank, uint64_t id)
{
    rmc_request_h win[XFER_WINDOW];
    int head = 0, inflight = 0;
    rmc_status_t st = RMC_OK;
    while (st == RMC_OK && done < bytes) {
        if (inflight == XFER_WINDOW) {
            st = rmc_wait(&win[head]);
            head = (head + 1) % XFER_WINDOW;
            inflight--;
            if (st != RMC_OK)
                break;
        }
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        xfer_req_t q = {(uint64_t)(addr + done), (uint64_t)n, id, (uint64_t)(bytes - done)};
        rmc_request_h *slot = &win[(head + inflight) % XFER_WINDOW];
        if (kind == RMCI_CS_WRITE)
            st = rmci_am_call_nb(rank, rg.id_put, &q, sizeof(q), local + done, n,
                                 sizeof(xfer_rep_t), xfer_fin, NULL, (uint64_t)n, slot);
        else
            st = rmci_am_call_nb(rank, rg.id_get, &q, sizeof(q), NULL, 0, sizeof(xfer_rep_t) + n,
                                 xfer_fin, local + done, (uint64_t)n, slot);
        if (st == RMC_OK)
            inflight++;
        done += n;
    }
    while (inflight) {
        rmc_status_t s2 = rmc_wait(&win[head]);
        if (st == RMC_OK)
            st = s2;
        head = (head + 1) % XFER_WINDOW;
        inflight--;
    }
    return st;
}

/* A transfer to this rank's own registered memory: a copy under the lock. */
static rmc_status_t self_xfer(int kind, uintptr_t addr, void *local, size_t bytes)
{
    pthread_mutex_lock(&rg.lock);
    const reg_t *r;
    rmc_status_t st = check_range(addr, bytes, 0, &r);
    if (st == RMC_OK) {
        if (kind == RMCI_CS_WRITE)
            memmove((void *)addr, local, bytes);
        else
            memmove(local, (const void *)addr, bytes);
    }
    pthread_mutex_unlock(&rg.lock);
    return st;
}

/* The cached registration id covering [addr, addr+bytes) of `rank`, or 0 (ask the target). */
static uint64_t cached_id(int rank, uintptr_t addr, size_t bytes)
{
    rmci_rc_ent_t *e = rmci_rc_find(&rg.cache, rank, addr);
    if (e && bytes <= e->hi - addr) {
        RMCI_PSTAT_ADD(cache_hits, 1);
        return e->id;
    }
    if (e) /* the cached range is too short: maybe stale, ask the target */
        rmci_rc_remove(&rg.cache, rank, addr);
    RMCI_PSTAT_ADD(cache_misses, 1);
    return 0;
}

/* Learns the descriptor a reply carried; returns its id (0 when it cannot be cached). */
static uint64_t learn(int rank, const xfer_rep_t *d)
{
    unsigned long long ev = rg.cache.evictions;
    uint64_t id =
        rmci_rc_insert(&rg.cache, rank, (uintptr_t)d->lo, (uintptr_t)d->hi, d->id) ? d->id : 0;
    RMCI_PSTAT_ADD(cache_evictions, rg.cache.evictions - ev);
    return id;
}

rmc_status_t rmci_reg_unmapped(int is_put, const void *remote, void *local, size_t bytes, int rank,
                               void *arg)
{
    (void)arg;
    int kind = is_put ? RMCI_CS_WRITE : RMCI_CS_READ;
    if (!rg.up)
        return RMC_ERR_NOT_REGION;
    uintptr_t addr = (uintptr_t)remote;
    if (rank == RMCI.rank)
        return self_xfer(kind, addr, local, bytes);
    size_t chunk = rmci_am_max_payload() - sizeof(xfer_req_t); /* request and reply fit */
    char *scratch = NULL;
    if (!is_put && !(scratch = rmci_malloc(sizeof(xfer_rep_t) + (bytes < chunk ? bytes : chunk))))
        return rmci_fail(RMC_ERR_NOMEM, "rmc_get", "registered-memory transfer buffer");
    uint64_t id = cached_id(rank, addr, bytes);
    rmc_status_t st = RMC_OK;
    size_t done = 0;
    int retried = 0;
    while (done < bytes) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        xfer_rep_t d;
        st = xfer_chunk(kind, addr + done, (char *)local + done, n, bytes - done, rank, id, &d,
                        scratch);
        if (st == RMC_ERR_NOT_REGION && id != 0 && !retried) {
            /* stale descriptor: the peer deregistered (and maybe re-registered) the range */
            rmci_rc_remove(&rg.cache, rank, addr);
            RMCI_PSTAT_ADD(cache_stale, 1);
            id = 0;
            retried = 1;
            continue;
        }
        if (st != RMC_OK)
            break;
        if (id == 0)
            id = learn(rank, &d);
        done += n;
        if (id != 0 && done < bytes) { /* the range is valid and named: pipeline the rest */
            st = xfer_pipelined(kind, addr, (char *)local, bytes, done, chunk, rank, id);
            break;
        }
    }
    free(scratch);
    return st;
}

/* ------------------------------------------------------------------------- public API --- */

rmc_status_t rmc_register(void *ptr, size_t len)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!rg.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, __func__, "the progress layer is not up");
    RMCI_POLL();
    if (!ptr || len == 0)
        return rmci_fail(RMC_ERR_ARG, __func__, "empty range (%p, %zu bytes)", ptr, len);
    uintptr_t lo = (uintptr_t)ptr;
    if (len > UINTPTR_MAX - lo)
        return rmci_fail(RMC_ERR_ARG, __func__, "range (%p, %zu bytes) wraps around", ptr, len);
    uintptr_t hi = lo + len;
    if (rmci_local_overlaps_region(lo, len))
        return rmci_fail(RMC_ERR_STATE, __func__, "[%p, +%zu) overlaps a region", ptr, len);
    pthread_mutex_lock(&rg.lock);
    rmc_status_t st = RMC_OK;
    size_t at = 0;
    while (at < rg.n && rg.v[at].lo < lo)
        at++;
    if ((at > 0 && rg.v[at - 1].hi > lo) || (at < rg.n && rg.v[at].lo < hi))
        st = rmci_fail(RMC_ERR_STATE, __func__, "[%p, +%zu) overlaps a registration", ptr, len);
    if (st == RMC_OK && rg.n == rg.cap) {
        size_t cap = rg.cap ? 2 * rg.cap : 16;
        reg_t *v = rmci_realloc(rg.v, cap * sizeof(*v));
        if (!v) {
            st = rmci_fail(RMC_ERR_NOMEM, __func__, "registration table of %zu entries", cap);
        } else {
            rg.v = v;
            rg.cap = cap;
        }
    }
    if (st == RMC_OK) {
        memmove(&rg.v[at + 1], &rg.v[at], (rg.n - at) * sizeof(*rg.v));
        rg.v[at].lo = lo;
        rg.v[at].hi = hi;
        rg.v[at].id = ++rg.next_id;
        rg.n++;
    }
    pthread_mutex_unlock(&rg.lock);
    return st;
}

rmc_status_t rmc_deregister(void *ptr)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!rg.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, __func__, "the progress layer is not up");
    RMCI_POLL();
    pthread_mutex_lock(&rg.lock);
    long i = ptr ? find_reg((uintptr_t)ptr) : -1;
    rmc_status_t st = RMC_OK;
    if (i >= 0 && rg.v[i].lo == (uintptr_t)ptr) {
        memmove(&rg.v[i], &rg.v[i + 1], (rg.n - (size_t)i - 1) * sizeof(*rg.v));
        rg.n--;
    } else {
        st = rmci_fail(RMC_ERR_NOT_FOUND, __func__, "no registration starts at %p", ptr);
    }
    pthread_mutex_unlock(&rg.lock);
    return st;
}

rmc_status_t rmci_reg_init(void)
{
    memset(&rg, 0, sizeof(rg));
    long cap = rmci_env_long("RMC_REGION_CACHE"); /* validated by the layer's init */
    if (rmci_rc_init(&rg.cache, (size_t)(cap < 1 ? 1 : cap)) != 0)
        return rmci_fail(RMC_ERR_NOMEM, "rmc_init", "registration cache of %ld entries", cap);
    pthread_mutex_init(&rg.lock, NULL);
    static int put_tag; /* any non-NULL argument marks the put handler */
    rmc_status_t st = rmci_am_add_internal(h_xfer, NULL, &rg.id_get);
    if (st == RMC_OK)
        st = rmci_am_add_internal(h_xfer, &put_tag, &rg.id_put);
    rg.up = 1;
    if (st != RMC_OK)
        rmci_reg_shutdown();
    return st;
}

void rmci_reg_shutdown(void)
{
    if (!rg.up)
        return;
    rmci_am_remove_internal(rg.id_get);
    rmci_am_remove_internal(rg.id_put);
    rmci_rc_destroy(&rg.cache);
    pthread_mutex_destroy(&rg.lock);
    free(rg.v);
    memset(&rg, 0, sizeof(rg));
}
