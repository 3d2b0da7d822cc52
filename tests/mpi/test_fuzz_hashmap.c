/* A seeded randomized concurrency fuzz of the hash map (include/rmc/hashmap.h) and the key/value
 * store on it (include/rmc/kv.h). One map of int64 keys 0..NK-1 in small tables (few buckets per
 * rank: probe sequences of different owners' keys intertwine, tombstones pile up, tables fill and
 * inserts meet RMC_ERR_FULL), in phases separated by barriers:
 *   MIXED   key k is written only by rank k % np (insert, insert_nb, kv insert-new, kv replace,
 *           kv add, update with a function, erase; promise ANY or INSERT|FIND|ERASE; path chosen,
 *           RDMA or RPC forced, per-map default changed), every rank finds random keys (blocking,
 *           _nb, find_n, kv read) at the same time;
 *   INSERT  the same writers insert only (promise INSERT|FIND: tombstones reused), finds run too;
 *   FIND    finds only (RMC_PROMISE_FIND as well as ANY);
 *   LOCAL   each rank writes the keys it owns with RMC_PROMISE_LOCAL;
 *   BUFFER  the writers insert through a HashMapBuffer (sized so that everything fits), flush.
 * A value is enc(key, version) (a checksum, the key and a version): the writer knows its keys'
 * state exactly; a rank that reads another's key must see a value of that key written at a
 * version of this phase (or the one at its start) or RMC_ERR_NOT_FOUND, and never an older
 * version than it saw before (blocking finds). At every phase end every rank checks every key,
 * rmc_hashmap_count and rmc_hashmap_local_foreach against the union of the writers' models; a
 * collective resize (FULL exactly when some owner's entries do not fit) now and then.
 * Environment: RMC_FUZZ_SEED (default 12345), RMC_FUZZ_OPS (ops per rank per phase, 120),
 * RMC_FUZZ_PHASES (12), RMC_FUZZ_PHASEMASK (bit per phase kind, default all), RMC_FUZZ_OPMASK
 * (bit per writer op kind, default all), RMC_FUZZ_NK (keys, default 64 * np, <= 1024),
 * RMC_FUZZ_PER (initial buckets per rank, 64), RMC_FUZZ_READS (reads per write, 1); diagnostics:
 * RMC_FUZZ_TRACE=1 (phase kinds and times, outcome counts), RMC_FUZZ_SLOW=1 (ops slower than 0.5
 * s), RMC_FUZZ_WAITREADS=1 (complete this rank's _nb inserts before each read: no find overlaps the
 * rank's own outstanding insert; it was the work-around for a find_n hang seen with
 * RMC_NODE_SIZE=1 RMC_AMO=mpi, seed 12, which passes without it since the self-verifying buckets:
 * 29 Nov, 1000 runs of seeds 1-150 in five modes at np 2 and 3, 300 ops x 16 phases, no failure). */
#include "cttest.h"
#include <rmc/kv.h>
#include <inttypes.h>

static const rmc_type_t *i64 = &rmc_type_i64;

enum { PH_MIXED, PH_INSERT, PH_FIND, PH_LOCAL, PH_BUFFER, PH_N };
static const char *const ph_name[] = {"MIXED", "INSERT", "FIND", "LOCAL", "BUFFER"};
enum { W_INSERT, W_INSERT_NB, W_KV_INSERT, W_KV_UPDATE, W_KV_ADD, W_UPDATE, W_ERASE, W_N };
static const char *const w_name[] = {"insert", "insert_nb", "kv_insert", "kv_update",
                                     "kv_add", "update",    "erase"};

/* ------------------------------------------------------------------ randomness --- */
static unsigned rnd(uint64_t *s, unsigned n)
{
    return (unsigned)(mpitest_splitmix(s) % n);
}

/* ------------------------------------------------------------------ values --- */
static uint64_t chk32(int64_t k, int64_t ver)
{
    uint64_t x = (uint64_t)k * 0x100000001B3ull ^ (uint64_t)ver * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return x & 0xffffffffull;
}
static int64_t enc(int64_t k, int64_t ver)
{
    return (int64_t)((chk32(k, ver) << 32) | ((uint64_t)k << 22) | (uint64_t)ver);
}
/* 1 when v is a well-formed value; its key and version */
static int dec(int64_t v, int64_t *k, int64_t *ver)
{
    uint64_t u = (uint64_t)v;
    *k = (int64_t)((u >> 22) & 1023);
    *ver = (int64_t)(u & ((1u << 22) - 1));
    return (u >> 32) == chk32(*k, *ver);
}

/* ------------------------------------------------------------------ state --- */
typedef struct {
    int32_t present;
    int32_t pad;
    int64_t ver;  /* the value's version when present */
    int64_t next; /* next version to write (above every version ever written) */
} kstate_t;

static int NK, OPS, PHASES, READS;
static unsigned PHMASK, OPMASK;
static uint64_t SEED;
static kstate_t *model;   /* the global state at phase start (synced), then this rank's writes */
static kstate_t *start;   /* the state at phase start */
static int64_t *lastseen; /* per key: highest version this rank saw in this phase (-1) */
static int *owner;
static rmc_kv_h kv;
static rmc_hashmap_h h;
static int thread_mode;
static int fails;
static long n_full, n_write_ok, n_write_other, n_ff, n_fnf, n_rs_ok, n_rs_full, n_buf;
static int phase_no, op_no;
static const char *where = "";

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (fails++ < 30) {                                                                        \
            fprintf(stderr, "[rank %d] seed %" PRIu64 " phase %d (%s) op %d: ", me, SEED,          \
                    phase_no, where, op_no);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? (int)strtol(s, NULL, 0) : dflt;
}

/* checks a value read for key k by a rank that does not write k in this phase */
static void check_foreign(int64_t k, int64_t v, rmc_status_t st, int monotonic, const char *how)
{
    if (st == RMC_ERR_NOT_FOUND) {
        n_fnf++;
        return;
    }
    n_ff += st == RMC_OK;
    if (st != RMC_OK) {
        FAIL("%s key %" PRId64 ": status %s (%s)", how, k, rmc_status_string(st), rmc_last_error());
        return;
    }
    int64_t vk, ver;
    if (!dec(v, &vk, &ver) || vk != k) {
        FAIL("%s key %" PRId64 ": torn/foreign value 0x%" PRIx64 " (decodes key %" PRId64
             " ver %" PRId64 ")",
             how, k, (uint64_t)v, vk, ver);
        return;
    }
    const kstate_t *s = &start[k];
    int ok = (s->present && ver == s->ver) || (ver >= s->next && ver < s->next + 4 * OPS + 16);
    if (!ok)
        FAIL("%s key %" PRId64 ": version %" PRId64 " implausible (start: present %d ver %" PRId64
             " next %" PRId64 ")",
             how, k, ver, s->present, s->ver, s->next);
    if (monotonic && ver < lastseen[k])
        FAIL("%s key %" PRId64 ": version %" PRId64 " after this rank saw %" PRId64, how, k, ver,
             lastseen[k]);
    if (ver > lastseen[k])
        lastseen[k] = ver;
}

/* checks a read of key k against the exact state s */
static void check_exact(int64_t k, int64_t v, rmc_status_t st, const kstate_t *s, const char *how)
{
    if (s->present) {
        if (st != RMC_OK || v != enc(k, s->ver)) {
            int64_t vk = -1, ver = -1;
            if (st == RMC_OK)
                dec(v, &vk, &ver);
            FAIL("%s own/exact key %" PRId64 ": got %s value ver %" PRId64 " (key %" PRId64
                 "), want ver %" PRId64,
                 how, k, rmc_status_string(st), ver, vk, s->ver);
        }
    } else if (st != RMC_ERR_NOT_FOUND) {
        int64_t vk = -1, ver = -1;
        if (st == RMC_OK)
            dec(v, &vk, &ver);
        FAIL("%s own/exact key %" PRId64 ": got %s (ver %" PRId64 " key %" PRId64
             "), want NOT_FOUND",
             how, k, rmc_status_string(st), ver, vk);
    }
}

/* ------------------------------------------------------------------ pending nb --- */
typedef struct {
    rmc_request_h req;
    int kind; /* 0 insert, 1 find */
    int64_t key;
    int64_t val; /* insert: the value (version ver); find: the output */
    int64_t ver;
    int was_present;
    int exact; /* find: this rank writes the key (exact check) */
    int64_t *out;
} pend_t;
#define MAXPEND 8
static pend_t pend[MAXPEND];
static int npend;

static void pend_done(pend_t *p, rmc_status_t st)
{
    if (p->kind == 0) {
        kstate_t *s = &model[p->key];
        n_full += st == RMC_ERR_FULL;
        n_write_ok += st == RMC_OK;
        if (st == RMC_OK) {
            s->present = 1;
            s->ver = p->ver;
        } else if (st == RMC_ERR_FULL) {
            if (p->was_present)
                FAIL("insert_nb key %" PRId64 " (present) -> FULL", p->key);
        } else
            FAIL("insert_nb key %" PRId64 " -> %s (%s)", p->key, rmc_status_string(st),
                 rmc_last_error());
    } else {
        if (p->exact)
            check_exact(p->key, *p->out, st, &model[p->key], "find_nb");
        else
            check_foreign(p->key, *p->out, st, 0, "find_nb");
        free(p->out);
    }
}

static void pend_wait(int i)
{
    pend_t p = pend[i];
    rmc_status_t st = rmc_wait(&pend[i].req);
    pend[i] = pend[--npend];
    pend_done(&p, st);
}
static void pend_wait_all(void)
{
    while (npend)
        pend_wait(npend - 1);
}
/* completes this rank's outstanding operations on key k (their order is not defined) */
static void pend_wait_key(int64_t k)
{
    for (int i = npend - 1; i >= 0; i--)
        if (i < npend && pend[i].key == k)
            pend_wait(i);
}
/* Starts an _nb call's bookkeeping: st and req as the call left them. */
static void pend_add(pend_t *p, rmc_status_t st)
{
    if (p->req == RMC_REQUEST_NULL) {
        pend_done(p, st);
        return;
    }
    if (st != RMC_OK) {
        FAIL("nb call key %" PRId64 " returned %s with a request", p->key, rmc_status_string(st));
    }
    if (npend == MAXPEND)
        pend_wait(0);
    pend[npend] = *p;
    npend++;
}

/* ------------------------------------------------------------------ update fns --- */
typedef struct {
    int64_t key, want_old, new_ver;
    int called, bad;
} upd_t;
static rmc_status_t upd_fn(void *value, void *arg)
{
    upd_t *u = arg;
    int64_t v;
    memcpy(&v, value, 8);
    u->called++;
    if (v != u->want_old)
        u->bad = 1;
    v = enc(u->key, u->new_ver);
    memcpy(value, &v, 8);
    return RMC_OK;
}

/* ------------------------------------------------------------------ ops --- */
static unsigned pick_path(uint64_t *r, int allow_rpc)
{
    unsigned x = rnd(r, 4);
    if (x == 1)
        return RMC_HASHMAP_RDMA;
    if (x == 2 && allow_rpc && thread_mode)
        return RMC_HASHMAP_RPC;
    return 0;
}

/* one write of key k by this rank (its writer in this phase) */
static void do_write(uint64_t *r, int64_t k, int phase)
{
    pend_wait_key(k);
    kstate_t *s = &model[k];
    int w;
    unsigned prom;
    if (phase == PH_INSERT) {
        static const int ins[] = {W_INSERT, W_INSERT_NB, W_KV_INSERT};
        w = ins[rnd(r, 3)];
        prom = RMC_PROMISE_INSERT | RMC_PROMISE_FIND;
    } else {
        w = (int)rnd(r, W_N);
        if (phase == PH_LOCAL)
            prom = RMC_PROMISE_LOCAL;
        else
            prom = rnd(r, 2) ? 0 : RMC_PROMISE_INSERT | RMC_PROMISE_FIND | RMC_PROMISE_ERASE;
    }
    if (!(OPMASK & (1u << w)))
        return;
    where = w_name[w];
    unsigned path = phase == PH_LOCAL ? 0 : pick_path(r, w != W_UPDATE);
    unsigned pp = prom | path;
    int64_t nv = s->next, val = enc(k, nv);
    rmc_status_t st;
    switch (w) {
    case W_INSERT:
        st = rmc_hashmap_insert(h, &k, &val, pp);
        n_full += st == RMC_ERR_FULL;
        n_write_ok += st == RMC_OK;
        if (st == RMC_OK) {
            s->present = 1;
            s->ver = nv;
        } else if (!(st == RMC_ERR_FULL && !s->present))
            FAIL("insert key %" PRId64 " (present %d, prom 0x%x) -> %s (%s)", k, s->present, pp,
                 rmc_status_string(st), rmc_last_error());
        s->next++;
        break;
    case W_INSERT_NB: {
        pend_t p = {0};
        p.kind = 0;
        p.key = k;
        p.ver = nv;
        p.val = val;
        p.was_present = s->present;
        st = rmc_hashmap_insert_nb(h, &k, &val, pp, &p.req);
        val = -1; /* copied before the call returned */
        s->next++;
        pend_add(&p, st);
        break;
    }
    case W_KV_INSERT:
        st = rmc_kv_insert(kv, &k, &val, pp);
        n_full += st == RMC_ERR_FULL;
        n_write_ok += st == RMC_OK;
        if (s->present) {
            if (st != RMC_ERR_EXISTS)
                FAIL("kv_insert key %" PRId64 " (present) -> %s (%s)", k, rmc_status_string(st),
                     rmc_last_error());
        } else if (st == RMC_OK) {
            s->present = 1;
            s->ver = nv;
        } else if (st != RMC_ERR_FULL)
            FAIL("kv_insert key %" PRId64 " (absent) -> %s (%s)", k, rmc_status_string(st),
                 rmc_last_error());
        s->next++;
        break;
    case W_KV_UPDATE:
        st = rmc_kv_update(kv, &k, &val, pp);
        if (s->present) {
            if (st != RMC_OK)
                FAIL("kv_update key %" PRId64 " (present) -> %s (%s)", k, rmc_status_string(st),
                     rmc_last_error());
            else
                s->ver = nv;
        } else if (st != RMC_ERR_NOT_FOUND)
            FAIL("kv_update key %" PRId64 " (absent) -> %s", k, rmc_status_string(st));
        s->next++;
        break;
    case W_KV_ADD: {
        int64_t old = 12345, want = s->present ? enc(k, s->ver) : 0;
        int64_t delta = (int64_t)((uint64_t)val - (uint64_t)want);
        st = rmc_kv_add(kv, &k, delta, &old, pp);
        if (s->present) {
            if (st != RMC_OK || old != want)
                FAIL("kv_add key %" PRId64 " (present ver %" PRId64 ") -> %s old %s (%s)", k,
                     s->ver, rmc_status_string(st), old == want ? "ok" : "WRONG", rmc_last_error());
            if (st == RMC_OK)
                s->ver = nv;
        } else if (st != RMC_ERR_NOT_FOUND)
            FAIL("kv_add key %" PRId64 " (absent) -> %s", k, rmc_status_string(st));
        s->next++;
        break;
    }
    case W_UPDATE: {
        upd_t u = {k, s->present ? enc(k, s->ver) : 0, nv, 0, 0};
        if (path == RMC_HASHMAP_RPC) { /* not there for updates */
            st = rmc_hashmap_update(h, &k, upd_fn, &u, pp);
            if (st != RMC_ERR_UNSUPPORTED || u.called)
                FAIL("update forced RPC -> %s called %d", rmc_status_string(st), u.called);
            break;
        }
        st = rmc_hashmap_update(h, &k, upd_fn, &u, pp);
        if (s->present) {
            if (st != RMC_OK || u.bad || u.called != 1)
                FAIL("update key %" PRId64 " (present ver %" PRId64 ") -> %s called %d bad %d (%s)",
                     k, s->ver, rmc_status_string(st), u.called, u.bad, rmc_last_error());
            if (st == RMC_OK)
                s->ver = nv;
        } else if (st != RMC_ERR_NOT_FOUND || u.called)
            FAIL("update key %" PRId64 " (absent) -> %s called %d", k, rmc_status_string(st),
                 u.called);
        s->next++;
        break;
    }
    case W_ERASE:
        st = rmc_hashmap_erase(h, &k, pp);
        n_write_ok += st == RMC_OK;
        n_write_other += st != RMC_OK;
        if (s->present) {
            if (st != RMC_OK)
                FAIL("erase key %" PRId64 " (present) -> %s (%s)", k, rmc_status_string(st),
                     rmc_last_error());
            else
                s->present = 0;
        } else if (st != RMC_ERR_NOT_FOUND)
            FAIL("erase key %" PRId64 " (absent) -> %s", k, rmc_status_string(st));
        break;
    }
}

/* writer of key k in a phase */
static int writer_of(int64_t k, int phase)
{
    return phase == PH_LOCAL ? owner[k] : (int)(k % np);
}

/* one read of random keys by this rank */
static void do_read(uint64_t *r, int phase)
{
    if (getenv("RMC_FUZZ_WAITREADS")) /* diagnosis: no read overlaps this rank's own _nb insert */
        pend_wait_all();
    unsigned prom;
    if (phase == PH_FIND)
        prom = rnd(r, 3) ? RMC_PROMISE_FIND : 0;
    else if (phase == PH_INSERT)
        prom = RMC_PROMISE_INSERT | RMC_PROMISE_FIND;
    else if (phase == PH_LOCAL)
        prom = RMC_PROMISE_LOCAL;
    else
        prom = rnd(r, 2) ? 0 : RMC_PROMISE_INSERT | RMC_PROMISE_FIND | RMC_PROMISE_ERASE;
    unsigned path = phase == PH_LOCAL ? 0 : pick_path(r, 1);
    unsigned pp = prom | path;
    int64_t k = rnd(r, (unsigned)NK);
    if (phase == PH_LOCAL) { /* own keys only */
        int tries = 0;
        while (owner[k] != me && tries++ < 64)
            k = rnd(r, (unsigned)NK);
        if (owner[k] != me)
            return;
    }
    int mine = phase == PH_FIND || writer_of(k, phase) == me;
    if (mine)
        pend_wait_key(k);
    unsigned how = rnd(r, 4);
    int64_t v = -7;
    rmc_status_t st;
    if (how == 0 || phase == PH_LOCAL) {
        where = "find";
        st = rmc_hashmap_find(h, &k, &v, pp);
        if (mine)
            check_exact(k, v, st, &model[k], "find");
        else
            check_foreign(k, v, st, 1, "find");
    } else if (how == 1) {
        where = "kv_read";
        st = rmc_kv_read(kv, &k, &v, pp);
        if (mine)
            check_exact(k, v, st, &model[k], "kv_read");
        else
            check_foreign(k, v, st, 1, "kv_read");
    } else if (how == 2) {
        where = "find_nb";
        pend_t p = {0};
        p.kind = 1;
        p.key = k; /* the key stays valid in the pend slot? no: use a heap copy below */
        p.exact = mine;
        p.out = malloc(2 * sizeof(int64_t));
        p.out[0] = -7;
        p.out[1] = k; /* the key, valid until completion */
        st = rmc_hashmap_find_nb(h, &p.out[1], &p.out[0], pp, &p.req);
        pend_add(&p, st);
    } else {
        where = "find_n";
        int64_t keys[8], vals[8];
        rmc_status_t sts[8];
        unsigned n = 1 + rnd(r, 8);
        for (unsigned i = 0; i < n; i++) {
            keys[i] = rnd(r, (unsigned)NK);
            vals[i] = -7;
            if (phase != PH_FIND && writer_of(keys[i], phase) == me)
                pend_wait_key(keys[i]);
        }
        st = rmc_hashmap_find_n(h, n, keys, vals, sts, pp);
        if (st != RMC_OK) {
            FAIL("find_n n %u prom 0x%x -> %s (%s)", n, pp, rmc_status_string(st),
                 rmc_last_error());
            return;
        }
        for (unsigned i = 0; i < n; i++) {
            if (phase == PH_FIND || writer_of(keys[i], phase) == me)
                check_exact(keys[i], vals[i], sts[i], &model[keys[i]], "find_n");
            else
                check_foreign(keys[i], vals[i], sts[i], 0, "find_n");
        }
    }
}

/* ------------------------------------------------------------------ phase end --- */
static size_t per_now;

typedef struct {
    char *seen;
    int dup, bad;
    size_t n;
} visit_t;
static int visit(const void *key, const void *value, void *arg)
{
    visit_t *vt = arg;
    int64_t k = *(const int64_t *)key, v = *(const int64_t *)value;
    vt->n++;
    if (k < 0 || k >= NK) {
        FAIL("foreach: key %" PRId64 " out of range", k);
        vt->bad++;
        return 0;
    }
    if (vt->seen[k]++) {
        FAIL("foreach: key %" PRId64 " visited twice", k);
        vt->dup++;
    }
    if (owner[k] != me) {
        FAIL("foreach: key %" PRId64 " owned by %d visited on %d", k, owner[k], me);
        vt->bad++;
    }
    if (!model[k].present || v != enc(k, model[k].ver)) {
        int64_t vk = -1, ver = -1;
        dec(v, &vk, &ver);
        FAIL("foreach: key %" PRId64 " ver %" PRId64 " (key %" PRId64
             "), model present %d ver %" PRId64,
             k, ver, vk, model[k].present, model[k].ver);
        vt->bad++;
    }
    return 0;
}

/* merges the writers' models (after a barrier), every rank the same */
static void sync_model(int phase)
{
    kstate_t *all = malloc((size_t)np * (size_t)NK * sizeof *all);
    MPI_Request rq;
    MPI_Iallgather(model, NK * (int)sizeof *model, MPI_BYTE, all, NK * (int)sizeof *model, MPI_BYTE,
                   MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
    for (int k = 0; k < NK; k++)
        model[k] = all[(size_t)writer_of(k, phase) * (size_t)NK + (size_t)k];
    free(all);
}

static void phase_check(uint64_t *r)
{
    where = "check";
    /* every key, exactly */
    for (int64_t k = 0; k < NK; k++) {
        int64_t v = -7;
        unsigned pp = (rnd(r, 2) ? RMC_PROMISE_FIND : 0) | pick_path(r, 1);
        rmc_status_t st = rmc_hashmap_find(h, &k, &v, pp);
        check_exact(k, v, st, &model[k], "check find");
    }
    int64_t *keys = malloc((size_t)NK * 8), *vals = malloc((size_t)NK * 8);
    rmc_status_t *sts = malloc((size_t)NK * sizeof *sts);
    for (int i = 0; i < NK; i++)
        keys[i] = NK - 1 - i, vals[i] = -7;
    rmc_status_t st = rmc_hashmap_find_n(h, (size_t)NK, keys, vals, sts, 0);
    if (st != RMC_OK)
        FAIL("check find_n -> %s", rmc_status_string(st));
    else
        for (int i = 0; i < NK; i++)
            check_exact(keys[i], vals[i], sts[i], &model[keys[i]], "check find_n");
    free(keys);
    free(vals);
    free(sts);
    size_t want = 0, mine = 0;
    for (int k = 0; k < NK; k++)
        if (model[k].present) {
            want++;
            if (owner[k] == me)
                mine++;
        }
    MPI_CHECK_OK(rmc_barrier());
    size_t n = 0;
    st = rmc_hashmap_count(h, &n);
    if (st != RMC_OK || n != want)
        FAIL("count -> %s n %zu, want %zu", rmc_status_string(st), n, want);
    visit_t vt = {calloc((size_t)NK, 1), 0, 0, 0};
    int stopped = -1;
    st = rmc_hashmap_local_foreach(h, visit, &vt, &stopped);
    if (st != RMC_OK || stopped != 0)
        FAIL("local_foreach -> %s stopped %d", rmc_status_string(st), stopped);
    if (vt.n != mine)
        FAIL("local_foreach visited %zu entries, this rank owns %zu", vt.n, mine);
    for (int k = 0; k < NK; k++)
        if (owner[k] == me && model[k].present && !vt.seen[k])
            FAIL("local_foreach: key %d (ver %" PRId64 ") missing", k, model[k].ver);
    free(vt.seen);
}

/* the buckets each owner needs for the model's entries: max over owners */
static size_t max_owner_load(void)
{
    size_t *c = calloc((size_t)np, sizeof *c), mx = 0;
    for (int k = 0; k < NK; k++)
        if (model[k].present)
            c[owner[k]]++;
    for (int i = 0; i < np; i++)
        if (c[i] > mx)
            mx = c[i];
    free(c);
    return mx;
}

static void do_resize(uint64_t *shared)
{
    static const int mult[] = {16, 32, 64, 128};
    size_t cap = (size_t)mult[rnd(shared, 4)] * (size_t)np;
    size_t per = 1, share = (cap + (size_t)np - 1) / (size_t)np;
    while (per < share)
        per <<= 1;
    int want_full = max_owner_load() > per;
    where = "resize";
    rmc_status_t st = rmc_hashmap_resize(h, cap);
    n_rs_ok += st == RMC_OK;
    n_rs_full += st == RMC_ERR_FULL;
    if (want_full ? st != RMC_ERR_FULL : st != RMC_OK)
        FAIL("resize to %zu (per %zu, max load %zu) -> %s (%s)", cap, per, max_owner_load(),
             rmc_status_string(st), rmc_last_error());
    if (st == RMC_OK) {
        per_now = per;
        if (rmc_hashmap_capacity(h) != per * (size_t)np)
            FAIL("capacity %zu after resize to %zu", rmc_hashmap_capacity(h), cap);
    }
}

/* ------------------------------------------------------------------ phases --- */
static void run_buffer_phase(uint64_t *shared, uint64_t *r)
{
    /* the keys inserted: chosen with the shared generator, so that every rank knows what fits */
    char *ins = calloc((size_t)NK, 1);
    size_t *load = calloc((size_t)np, sizeof *load);
    for (int k = 0; k < NK; k++)
        if (model[k].present)
            load[owner[k]]++;
    for (int k = 0; k < NK; k++)
        if (rnd(shared, 2)) {
            if (model[k].present)
                ins[k] = 1;
            else if (load[owner[k]] < per_now) {
                ins[k] = 1;
                load[owner[k]]++;
            }
        }
    rmc_hashmap_buffer_h b;
    size_t batch = 1 + rnd(shared, 8);
    rmc_status_t st = rmc_hashmap_buffer_create(h, batch * (1 + rnd(shared, 4)), batch, &b);
    MPI_CHECK_ALL(st == RMC_OK);
    (void)r;
    for (int64_t k = me; k < NK; k += np) {
        if (!ins[k])
            continue;
        int times = 1 + (int)rnd(r, 2);
        for (int t = 0; t < times; t++) {
            int64_t val = enc(k, model[k].next);
            st = rmc_hashmap_buffer_insert(b, &k, &val);
            n_buf++;
            if (st != RMC_OK)
                FAIL("buffer_insert key %" PRId64 " -> %s (%s)", k, rmc_status_string(st),
                     rmc_last_error());
            model[k].present = 1;
            model[k].ver = model[k].next++;
        }
    }
    st = rmc_hashmap_buffer_flush(b);
    if (st != RMC_OK)
        FAIL("buffer_flush -> %s (%s)", rmc_status_string(st), rmc_last_error());
    MPI_CHECK_ALL(rmc_hashmap_buffer_destroy(b) == RMC_OK);
    free(ins);
    free(load);
}

static void run_phase(int phase, uint64_t *r)
{
    if (phase == PH_FIND) {
        for (op_no = 0; op_no < OPS * (READS + 1); op_no++)
            do_read(r, phase);
        pend_wait_all();
        return;
    }
    /* the keys this rank writes */
    int64_t *mykeys = malloc((size_t)NK * 8);
    int nmine = 0;
    for (int64_t k = 0; k < NK; k++)
        if (writer_of(k, phase) == me)
            mykeys[nmine++] = k;
    for (op_no = 0; op_no < OPS; op_no++) {
        double t0 = MPI_Wtime();
        int64_t wk = nmine ? mykeys[rnd(r, (unsigned)nmine)] : -1;
        if (nmine)
            do_write(r, wk, phase);
        double t1 = MPI_Wtime();
        for (int i = 0; i < READS; i++)
            do_read(r, phase);
        double t2 = MPI_Wtime();
        if (getenv("RMC_FUZZ_SLOW") && (t1 - t0 > 0.5 || t2 - t1 > 0.5))
            fprintf(stderr,
                    "[rank %d] phase %d op %d: write key %" PRId64 " (%s, owner %d) %.2f s, "
                    "read %.2f s (%s), npend %d\n",
                    me, phase_no, op_no, wk, where, wk >= 0 ? owner[wk] : -1, t1 - t0, t2 - t1,
                    where, npend);
        if (phase != PH_LOCAL && rnd(r, 64) == 0) {
            unsigned p = pick_path(r, 1);
            rmc_status_t st = rmc_hashmap_set_path(h, p);
            if (st != RMC_OK)
                FAIL("set_path 0x%x -> %s", p, rmc_status_string(st));
        }
    }
    pend_wait_all();
    rmc_hashmap_set_path(h, 0);
    free(mykeys);
}

static void test_fuzz(void **state)
{
    (void)state;
    SEED = (uint64_t)strtoull(
        getenv("RMC_FUZZ_SEED") && *getenv("RMC_FUZZ_SEED") ? getenv("RMC_FUZZ_SEED") : "12345",
        NULL, 0);
    OPS = env_int("RMC_FUZZ_OPS", 120);
    PHASES = env_int("RMC_FUZZ_PHASES", 12);
    READS = env_int("RMC_FUZZ_READS", 1);
    PHMASK = (unsigned)env_int("RMC_FUZZ_PHASEMASK", (1 << PH_N) - 1);
    OPMASK = (unsigned)env_int("RMC_FUZZ_OPMASK", (1 << W_N) - 1);
    NK = env_int("RMC_FUZZ_NK", 64 * np);
    if (NK > 1024)
        NK = 1024;
    int per0 = env_int("RMC_FUZZ_PER", 64);
    thread_mode = rmc_amo_mode() == RMC_AMO_MODE_THREAD;
    if (me == 0)
        printf("fuzz: seed %" PRIu64 " np %d keys %d ops %d phases %d per %d amo %s\n", SEED, np,
               NK, OPS, PHASES, per0, thread_mode ? "thread" : "mpi");
    model = calloc((size_t)NK, sizeof *model);
    start = calloc((size_t)NK, sizeof *start);
    lastseen = calloc((size_t)NK, sizeof *lastseen);
    owner = calloc((size_t)NK, sizeof *owner);
    for (int k = 0; k < NK; k++)
        model[k].next = 1;
    MPI_CHECK_OK(rmc_kv_create((size_t)per0 * (size_t)np, i64, i64, 0, &kv));
    h = rmc_kv_map(kv);
    per_now = rmc_hashmap_capacity(h) / (size_t)np;
    for (int64_t k = 0; k < NK; k++)
        owner[k] = rmc_hashmap_owner(h, &k);
    /* the RPC path outside thread mode */
    if (!thread_mode) {
        int64_t k = 0, v = enc(0, 0);
        MPI_CHECK_ALL(rmc_hashmap_set_path(h, RMC_HASHMAP_RPC) == RMC_ERR_UNSUPPORTED);
        MPI_CHECK_ALL(rmc_hashmap_find(h, &k, &v, RMC_HASHMAP_RPC) == RMC_ERR_UNSUPPORTED);
    }
    uint64_t shared = SEED * 0x2545F4914F6CDD1Dull + 1;
    uint64_t r = SEED ^ (0xD1B54A32D192ED03ull * (uint64_t)(me + 1));
    for (phase_no = 0; phase_no < PHASES; phase_no++) {
        int phase;
        do
            phase = (int)rnd(&shared, PH_N);
        while (!(PHMASK & (1u << phase)));
        if (me == 0 && getenv("RMC_FUZZ_TRACE"))
            printf("phase %d: %s (t %.2f)\n", phase_no, ph_name[phase], MPI_Wtime());
        memcpy(start, model, (size_t)NK * sizeof *model);
        for (int k = 0; k < NK; k++)
            lastseen[k] = -1;
        if (phase == PH_BUFFER)
            run_buffer_phase(&shared, &r);
        else
            run_phase(phase, &r);
        where = "barrier";
        MPI_CHECK_OK(rmc_barrier());
        sync_model(phase);
        phase_check(&r);
        MPI_CHECK_OK(rmc_barrier());
        if (rnd(&shared, 4) == 0)
            do_resize(&shared);
        if (!mpitest_all_(fails == 0, "no failure in the phase", __FILE__, __LINE__)) {
            if (me == 0)
                printf("fuzz: FAILED at phase %d (%s), seed %" PRIu64 "\n", phase_no,
                       ph_name[phase], SEED);
            break;
        }
    }
    if (getenv("RMC_FUZZ_TRACE"))
        fprintf(stderr,
                "[rank %d] inserts-ok %ld full %ld erase-notfound %ld foreign found %ld "
                "notfound %ld resize ok %ld full %ld buffered %ld\n",
                me, n_write_ok, n_full, n_write_other, n_ff, n_fnf, n_rs_ok, n_rs_full, n_buf);
    MPI_CHECK_ALL(fails == 0);
    MPI_CHECK_OK(rmc_kv_destroy(kv));
    free(model);
    free(start);
    free(lastseen);
    free(owner);
}

MPITEST_MAIN("fuzz_hashmap", cttest_setup, mpitest_teardown_rmc, test_fuzz)
