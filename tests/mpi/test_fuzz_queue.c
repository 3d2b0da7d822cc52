/* Seeded randomized concurrency fuzz of the distributed queues (include/rmc/queue.h).
 *
 * 3 x np queues (each kind hosted on each rank), small random capacities, byte-copied or
 * serialized elements. The run is a sequence of phases separated by rmc_barrier; in each phase
 * every queue gets a mode (the same on every rank, from the shared seed) that says which
 * operations may run on it, as queue.h allows:
 *   MIXED    (CIRCULAR, CHECKSUM) every rank pushes and pops, promise ANY or PUSH|POP
 *   PUSH     every rank pushes only (promise PUSH, ANY or PUSH|POP)
 *   POP      every rank pops only (promise POP, ANY or PUSH|POP)
 *   LOCAL    the host alone, RMC_PROMISE_LOCAL pushes / pops / pop_upto / peek / discard
 *   SOLO     one rank alone (FAST: pushes or pops), statuses checked against an exact model
 *   IDLE     nothing
 * Operations: push, push_n, pop, pop_n, pop_upto, and the _nb forms kept outstanding and completed
 * later in random order (rmc_wait / rmc_test), paths chosen / RDMA / RPC (thread AMO mode),
 * occasionally a per-rank default path, n above the capacity (RMC_ERR_TOO_BIG). Between phases,
 * sometimes a resize or a migration (collective). After each phase: rmc_queue_size equals the sum
 * over ranks of elements pushed minus popped; in PUSH (POP) phases a push of n that said FULL
 * (a pop of n that said EMPTY) is consistent with the count at the end (counts only grow / shrink).
 * At the end the hosts drain their queues (LOCAL pop_upto) and the records of every push and pop
 * are gathered: every element pushed with RMC_OK popped exactly once, none popped that was not
 * pushed (FULL pushes included), none torn (checksum), each in the queue it was pushed to, and
 * FIFO: if push(a) happened before push(b) (same rank: a's completion before b's call, or an
 * earlier phase; or the same vector push) then pop(b) did not happen before pop(a) (same relation).
 *
 * Knobs: RMC_FUZZ_SEED (default 1), RMC_FUZZ_PHASES (60), RMC_FUZZ_OPS (ops per rank per phase,
 * 60), RMC_FUZZ_KINDS (bit mask of kinds, 7), RMC_FUZZ_TRACE=1 (every operation on stderr),
 * RMC_FUZZ_NOCOLL=1 (no resize / migrate), RMC_FUZZ_NONB=1 (no _nb forms),
 * RMC_FUZZ_MODES (bit mask of modes allowed, default all), RMC_FUZZ_SECS (time budget: no new
 * phase after 3 once this many seconds have passed, default 6), RMC_FUZZ_SELFTEST (see verify),
 * RMC_FUZZ_TIMING=1 (per-phase times).
 * The seed fixes the plan (modes, queues, each rank's choices), not the interleaving: outcomes
 * (FULL / EMPTY) depend on timing and steer later choices. */
#include "cttest.h"
#include <signal.h>
#include <rmc/progress.h>

typedef struct {
    uint32_t origin, seq;
    uint64_t salt;
    uint64_t ck;
} el_t;

static uint64_t el_ck(const el_t *e)
{
    return mpitest_mix64(((uint64_t)e->origin << 32 | e->seq) ^ mpitest_mix64(e->salt) ^
                         0x5eed5eedull);
}

/* a serialized type carrying the same 24 bytes (slots of 4 + 24 bytes, packing paths) */
static size_t fz_ser(const void *obj, void *buf, size_t cap)
{
    if (cap >= sizeof(el_t))
        memcpy(buf, obj, sizeof(el_t));
    return sizeof(el_t);
}
static rmc_status_t fz_deser(const void *buf, size_t len, void *obj)
{
    if (len != sizeof(el_t))
        return RMC_ERR_TYPE;
    memcpy(obj, buf, sizeof(el_t));
    return RMC_OK;
}
static const rmc_type_t t_fixed = RMC_TYPE_FIXED("fuzzel", sizeof(el_t));
static const rmc_type_t t_ser = {"fuzzser", sizeof(el_t), sizeof(el_t), fz_ser,
                                 fz_deser,  NULL,         NULL,         NULL};

static uint64_t rnd(uint64_t *s)
{
    return mpitest_xorshift(s);
}
static unsigned rn(uint64_t *s, unsigned n)
{
    return (unsigned)(rnd(s) % n);
}

enum { M_IDLE, M_MIXED, M_PUSH, M_POP, M_LOCAL, M_SOLO, M_SOLO_PUSH, M_SOLO_POP, M_N };
static const char *mname[M_N] = {"idle",  "mixed", "push",      "pop",
                                 "local", "solo",  "solo-push", "solo-pop"};
static const char *kname[3] = {"circular", "fast", "checksum"};

typedef struct {
    int32_t q, phase, op, idx, ok, pad;
    int64_t issue, done;
} pushrec_t;
typedef struct {
    el_t e;
    int32_t q, phase, op, idx, popper, pad;
    int64_t issue, done;
} poprec_t;

typedef struct {
    rmc_queue_h h;
    int kind, host, ser;
    size_t cap;
    int mode, solo;
    int64_t cnt; /* exact count at the phase's start (then the solo / local rank's model) */
    int64_t net; /* this rank: pushed - popped, since creation */
    int64_t minfull, minempty; /* this phase: smallest n of a push FULL / pop EMPTY */
} fq_t;

typedef struct {
    rmc_request_h r;
    int qi, push;
    size_t n;
    el_t *buf;
    uint32_t seq0;
    int64_t issue;
    int32_t op;
} pend_t;

static struct {
    uint64_t seed;
    int phases, ops, kinds, trace, nocoll, nonb, modes;
    int nq;
    fq_t *q;
    uint64_t rs; /* this rank's generator */
    int64_t clk;
    int32_t opn, phase;
    pushrec_t *push;
    size_t npush, cappush;
    poprec_t *pop;
    size_t npop, cappop;
    int ok;
    long nops, nfull, nempty, nnb, ncarried;
    const char *where;
} F;

static void on_alarm(int sig)
{
    (void)sig;
    fprintf(stderr, "[rank %d] fuzz: hung (seed %llu, phase %d, op %d, in %s)\n", mpitest_rank_,
            (unsigned long long)F.seed, F.phase, F.opn, F.where ? F.where : "?");
    _exit(3);
}

/* an allreduce that keeps RMC's progress going meanwhile (a peer's remote atomic in thread AMO
 * mode without a progress thread may need this rank) */
static void allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op)
{
    MPI_Request rq;
    MPI_Iallreduce(in, out, n, t, op, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
}

static long envl(const char *n, long d)
{
    const char *v = getenv(n);
    return v && *v ? strtol(v, NULL, 0) : d;
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "[rank %d] seed %llu phase %d op %d: ", me, (unsigned long long)F.seed,    \
                F.phase, F.opn);                                                                   \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        F.ok = 0;                                                                                  \
    } while (0)

static uint32_t new_push(int qi, int32_t op, int idx, el_t *e)
{
    if (F.npush == F.cappush) {
        F.cappush = F.cappush ? 2 * F.cappush : 1024;
        F.push = realloc(F.push, F.cappush * sizeof *F.push);
    }
    uint32_t s = (uint32_t)F.npush++;
    F.push[s] = (pushrec_t){
        .q = qi, .phase = F.phase, .op = op, .idx = idx, .ok = 0, .issue = F.clk, .done = -1};
    e->origin = (uint32_t)me;
    e->seq = s;
    e->salt = rnd(&F.rs);
    e->ck = el_ck(e);
    return s;
}

static void rec_pop(int qi, const el_t *e, int32_t op, int idx, int64_t issue)
{
    if (F.npop == F.cappop) {
        F.cappop = F.cappop ? 2 * F.cappop : 1024;
        F.pop = realloc(F.pop, F.cappop * sizeof *F.pop);
    }
    F.pop[F.npop++] = (poprec_t){.e = *e,
                                 .q = qi,
                                 .phase = F.phase,
                                 .op = op,
                                 .idx = idx,
                                 .popper = me,
                                 .issue = issue,
                                 .done = F.clk};
}

/* the end of a push of n elements (seq0 ..) or a pop into buf */
static void finish(int qi, int push, size_t n, el_t *buf, uint32_t seq0, int64_t issue, int32_t op,
                   rmc_status_t st, size_t got, const char *what)
{
    fq_t *q = &F.q[qi];
    F.clk++;
    if (F.trace)
        fprintf(stderr, "[r%d ph%d op%d] q%d(%s h%d cap%zu) %s n=%zu -> %s got=%zu\n", me, F.phase,
                op, qi, kname[q->kind], q->host, q->cap, what, n, rmc_status_string(st), got);
    if (push) {
        if (st == RMC_OK) {
            for (size_t i = 0; i < n; i++) {
                F.push[seq0 + i].ok = 1;
                F.push[seq0 + i].done = F.clk;
            }
            q->net += (int64_t)n;
        } else if (st == RMC_ERR_FULL) {
            F.nfull++;
            if ((int64_t)n < q->minfull)
                q->minfull = (int64_t)n;
        } else {
            FAIL("q%d (%s) %s of %zu: %s (%s)", qi, kname[q->kind], what, n, rmc_status_string(st),
                 rmc_last_error());
        }
    } else {
        if (st == RMC_OK) {
            for (size_t i = 0; i < got; i++)
                rec_pop(qi, &buf[i], op, (int)i, issue);
            q->net -= (int64_t)got;
        } else if (st == RMC_ERR_EMPTY) {
            F.nempty++;
            if ((int64_t)n < q->minempty)
                q->minempty = (int64_t)n;
        } else {
            FAIL("q%d (%s) %s of %zu: %s (%s)", qi, kname[q->kind], what, n, rmc_status_string(st),
                 rmc_last_error());
        }
    }
}

#define NPEND 6
static pend_t pend[NPEND];
static int npend;

static void complete_pend(int i, int by_test)
{
    pend_t *p = &pend[i];
    rmc_status_t st;
    F.where = by_test ? "rmc_test of an _nb op" : "rmc_wait of an _nb op";
    if (by_test) {
        int done = 0;
        unsigned spins = 0;
        do {
            st = rmc_test(&p->r, &done);
            if (!done)
                rmc_wait_round(&spins);
        } while (!done && st == RMC_OK);
    } else {
        st = rmc_wait(&p->r);
    }
    finish(p->qi, p->push, p->n, p->buf, p->seq0, p->issue, p->op, st,
           st == RMC_OK && !p->push ? p->n : 0, p->push ? "push_nb(waited)" : "pop_nb(waited)");
    free(p->buf);
    pend[i] = pend[--npend];
}

static void complete_all(void)
{
    while (npend)
        complete_pend((int)rn(&F.rs, (unsigned)npend), (int)rn(&F.rs, 2));
}

/* the promise of an operation in the queue's current mode, with a path */
static unsigned promise_for(fq_t *q, int push)
{
    unsigned p = 0;
    switch (q->mode) {
    case M_MIXED:
        p = rn(&F.rs, 2) ? 0 : RMC_PROMISE_PUSH | RMC_PROMISE_POP;
        break;
    case M_PUSH: {
        static const unsigned c[3] = {RMC_PROMISE_PUSH, 0, RMC_PROMISE_PUSH | RMC_PROMISE_POP};
        p = c[rn(&F.rs, 3)];
        break;
    }
    case M_POP: {
        static const unsigned c[3] = {RMC_PROMISE_POP, 0, RMC_PROMISE_PUSH | RMC_PROMISE_POP};
        p = c[rn(&F.rs, 3)];
        break;
    }
    case M_LOCAL:
        return RMC_PROMISE_LOCAL;
    case M_SOLO_PUSH:
        p = rn(&F.rs, 2) ? RMC_PROMISE_PUSH : 0;
        break;
    case M_SOLO_POP:
        p = rn(&F.rs, 2) ? RMC_PROMISE_POP : 0;
        break;
    default:
        p = 0;
    }
    (void)push;
    unsigned r = rn(&F.rs, 4);
    if (r == 1)
        p |= RMC_PATH_RDMA;
    else if (r == 2 && rmc_amo_mode() == RMC_AMO_MODE_THREAD)
        p |= RMC_PATH_RPC;
    return p;
}

/* One random operation on queue qi, allowed by its mode. exact: statuses checked against the
 * model (the operation runs alone on the queue), nb forms waited at once. */
static void one_op(int qi)
{
    fq_t *q = &F.q[qi];
    int exact =
        q->mode == M_LOCAL || q->mode == M_SOLO || q->mode == M_SOLO_PUSH || q->mode == M_SOLO_POP;
    int push;
    if (q->mode == M_PUSH || q->mode == M_SOLO_PUSH)
        push = 1;
    else if (q->mode == M_POP || q->mode == M_SOLO_POP)
        push = 0;
    else
        push = (int)rn(&F.rs, 2);
    unsigned promise = promise_for(q, push);
    int local = promise & RMC_PROMISE_LOCAL;
    int32_t op = F.opn++;
    F.nops++;
    /* n: mostly small, sometimes the capacity, rarely above it */
    size_t n;
    unsigned r = rn(&F.rs, 16);
    if (r < 9)
        n = 1;
    else if (r < 14)
        n = 1 + rn(&F.rs, (unsigned)q->cap);
    else if (r < 15)
        n = q->cap;
    else
        n = q->cap + 1;
    unsigned form = rn(&F.rs, 8); /* 0-3 blocking, 4 pop_upto / push, 5-7 _nb */
    if (F.nonb && form >= 5)
        form = rn(&F.rs, 5);
    if (local && form >= 5)
        form = rn(&F.rs, 5);
    /* the host's view */
    if (local && !q->ser && q->kind != RMC_QUEUE_CHECKSUM && rn(&F.rs, 5) == 0) {
        const void *r1, *r2;
        size_t n1, n2;
        F.where = "local_peek";
        rmc_status_t st = rmc_queue_local_peek(q->h, &r1, &n1, &r2, &n2);
        if (st != RMC_OK || (int64_t)(n1 + n2) != q->cnt) {
            FAIL("q%d local_peek: %s, %zu + %zu elements, model %lld", qi, rmc_status_string(st),
                 n1, n2, (long long)q->cnt);
            return;
        }
        size_t k = rn(&F.rs, (unsigned)(n1 + n2 + 1));
        el_t *tmp = malloc((n1 + n2 + 1) * sizeof(el_t));
        for (size_t i = 0; i < n1 + n2; i++)
            tmp[i] = i < n1 ? ((const el_t *)r1)[i] : ((const el_t *)r2)[i - n1];
        int64_t issue = ++F.clk;
        st = rmc_queue_local_discard(q->h, k);
        if (st != RMC_OK)
            FAIL("q%d local_discard(%zu of %zu): %s", qi, k, n1 + n2, rmc_status_string(st));
        else {
            finish(qi, 0, k, tmp, 0, issue, op, RMC_OK, k, "local_discard");
            q->cnt -= (int64_t)k;
        }
        free(tmp);
        return;
    }
    if (local && (q->ser || q->kind == RMC_QUEUE_CHECKSUM) && rn(&F.rs, 20) == 0) {
        const void *r1, *r2;
        size_t n1, n2;
        rmc_status_t st = rmc_queue_local_peek(q->h, &r1, &n1, &r2, &n2);
        if (st != RMC_ERR_TYPE)
            FAIL("q%d local_peek of a %s queue: %s, expected RMC_ERR_TYPE", qi,
                 q->ser ? "serialized" : "checksum", rmc_status_string(st));
        return;
    }
    el_t *buf = calloc(n + 1, sizeof(el_t));
    uint32_t seq0 = 0;
    if (push) {
        if (n <= q->cap)
            for (size_t i = 0; i < n; i++) {
                uint32_t s = new_push(qi, op, (int)i, &buf[i]);
                if (i == 0)
                    seq0 = s;
            }
        else
            for (size_t i = 0; i < n; i++)
                buf[i] = (el_t){.origin = 0xdead, .seq = 0xbeef};
    }
    int64_t issue = ++F.clk;
    rmc_status_t st;
    size_t got = 0;
    const char *what;
    if (form >= 5) { /* _nb */
        rmc_request_h rq = RMC_REQUEST_NULL;
        F.where = push ? "push_nb call" : "pop_nb call";
        if (push)
            st = n == 1 && rn(&F.rs, 2) ? rmc_queue_push_nb(q->h, buf, promise, &rq)
                                        : rmc_queue_push_n_nb(q->h, buf, n, promise, &rq);
        else
            st = n == 1 && rn(&F.rs, 2) ? rmc_queue_pop_nb(q->h, buf, promise, &rq)
                                        : rmc_queue_pop_n_nb(q->h, buf, n, promise, &rq);
        what = push ? "push_nb" : "pop_nb";
        F.nnb++;
        if (n > q->cap) {
            if (st != RMC_ERR_TOO_BIG)
                FAIL("q%d %s of %zu > cap %zu: %s, expected RMC_ERR_TOO_BIG", qi, what, n, q->cap,
                     rmc_status_string(st));
            if (rq)
                rmc_wait(&rq);
            free(buf);
            return;
        }
        if (st == RMC_OK && rq) {
            if (exact || npend == NPEND) {
                /* exact: wait now; else make room */
                if (exact) {
                    st = rmc_wait(&rq);
                } else {
                    complete_pend((int)rn(&F.rs, NPEND), (int)rn(&F.rs, 2));
                    goto keep;
                }
            } else {
            keep:
                pend[npend++] = (pend_t){.r = rq,
                                         .qi = qi,
                                         .push = push,
                                         .n = n,
                                         .buf = buf,
                                         .seq0 = seq0,
                                         .issue = issue,
                                         .op = op};
                if (F.trace)
                    fprintf(stderr, "[r%d ph%d op%d] q%d %s n=%zu outstanding\n", me, F.phase, op,
                            qi, what, n);
                return;
            }
        }
        got = st == RMC_OK && !push ? n : 0;
    } else if (push) {
        F.where = "push";
        if (n == 1 && form < 2) {
            st = rmc_queue_push(q->h, buf, promise);
            what = "push";
        } else {
            st = rmc_queue_push_n(q->h, buf, n, promise);
            what = "push_n";
        }
    } else if (form == 4) {
        F.where = "pop_upto";
        size_t max = n > q->cap ? q->cap + 2 : n;
        free(buf);
        buf = calloc(max + 1, sizeof(el_t));
        st = rmc_queue_pop_upto(q->h, buf, max, &got, promise);
        what = "pop_upto";
        if (st == RMC_OK && (got < 1 || got > max || got > q->cap))
            FAIL("q%d pop_upto(max %zu) got %zu", qi, max, got);
        if (exact) {
            int64_t want = q->cnt < (int64_t)max ? q->cnt : (int64_t)max;
            if (want > (int64_t)q->cap)
                want = (int64_t)q->cap;
            if (want == 0 ? st != RMC_ERR_EMPTY : st != RMC_OK || (int64_t)got != want)
                FAIL("q%d %s pop_upto(max %zu) alone, model %lld: %s, got %zu", qi, mname[q->mode],
                     max, (long long)q->cnt, rmc_status_string(st), got);
            if (st == RMC_OK)
                q->cnt -= (int64_t)got;
        }
        finish(qi, 0, 1, buf, 0, issue, op, st, got, what);
        free(buf);
        return;
    } else {
        F.where = "pop";
        if (n == 1 && form < 2) {
            st = rmc_queue_pop(q->h, buf, promise);
            what = "pop";
        } else {
            st = rmc_queue_pop_n(q->h, buf, n, promise);
            what = "pop_n";
        }
        got = st == RMC_OK ? n : 0;
    }
    if (n > q->cap) {
        if (st != RMC_ERR_TOO_BIG)
            FAIL("q%d %s of %zu > cap %zu: %s, expected RMC_ERR_TOO_BIG", qi, what, n, q->cap,
                 rmc_status_string(st));
        free(buf);
        return;
    }
    if (exact) {
        if (push) {
            rmc_status_t want = q->cnt + (int64_t)n <= (int64_t)q->cap ? RMC_OK : RMC_ERR_FULL;
            if (st != want)
                FAIL("q%d (%s) %s %s of %zu alone, model %lld of %zu: %s, expected %s", qi,
                     kname[q->kind], mname[q->mode], what, n, (long long)q->cnt, q->cap,
                     rmc_status_string(st), rmc_status_string(want));
            if (st == RMC_OK)
                q->cnt += (int64_t)n;
        } else {
            rmc_status_t want = q->cnt >= (int64_t)n ? RMC_OK : RMC_ERR_EMPTY;
            if (st != want)
                FAIL("q%d (%s) %s %s of %zu alone, model %lld: %s, expected %s", qi, kname[q->kind],
                     mname[q->mode], what, n, (long long)q->cnt, rmc_status_string(st),
                     rmc_status_string(want));
            if (st == RMC_OK)
                q->cnt -= (int64_t)n;
        }
    }
    finish(qi, push, n, buf, seq0, issue, op, st, got, what);
    free(buf);
}

static void plan_phase(uint64_t *ss)
{
    for (int i = 0; i < F.nq; i++) {
        fq_t *q = &F.q[i];
        unsigned r = rn(ss, 100);
        int m;
        if (q->kind == RMC_QUEUE_FAST)
            m = r < 5    ? M_IDLE
                : r < 40 ? M_PUSH
                : r < 75 ? M_POP
                : r < 85 ? M_LOCAL
                : r < 93 ? M_SOLO_PUSH
                         : M_SOLO_POP;
        else
            m = r < 5    ? M_IDLE
                : r < 45 ? M_MIXED
                : r < 60 ? M_PUSH
                : r < 75 ? M_POP
                : r < 85 ? M_LOCAL
                         : M_SOLO;
        if (!(F.modes & (1 << m)))
            m = M_IDLE;
        if (!(F.kinds & (1 << q->kind)))
            m = M_IDLE;
        q->mode = m;
        q->solo = m == M_LOCAL ? q->host : (int)rn(ss, (unsigned)np);
        q->minfull = q->minempty = INT64_MAX;
    }
}

static int active(const fq_t *q)
{
    switch (q->mode) {
    case M_IDLE:
        return 0;
    case M_LOCAL:
    case M_SOLO:
    case M_SOLO_PUSH:
    case M_SOLO_POP:
        return q->solo == me;
    default:
        return 1;
    }
}

/* the count of every queue (sum of net over ranks), checked against rmc_queue_size */
static void agree_counts(const char *when)
{
    int64_t *net = malloc(sizeof(int64_t) * (size_t)F.nq),
            *sum = malloc(sizeof(int64_t) * (size_t)F.nq);
    for (int i = 0; i < F.nq; i++)
        net[i] = F.q[i].net;
    F.where = "agree_counts";
    allreduce(net, sum, F.nq, MPI_INT64_T, MPI_SUM);
    for (int i = 0; i < F.nq; i++) {
        fq_t *q = &F.q[i];
        size_t sz = 0;
        rmc_status_t st = rmc_queue_size(q->h, &sz);
        if (st != RMC_OK || (int64_t)sz != sum[i] || sum[i] < 0 || sum[i] > (int64_t)q->cap)
            FAIL("%s: q%d (%s h%d cap %zu, mode %s): rmc_queue_size %s %zu, pushed - popped %lld",
                 when, i, kname[q->kind], q->host, q->cap, mname[q->mode], rmc_status_string(st),
                 sz, (long long)sum[i]);
        q->cnt = sum[i];
    }
    free(net);
    free(sum);
}

/* PUSH (POP) phases: counts only grew (shrank): a push of n said FULL => end + n > cap; a pop
 * of n said EMPTY => end < n */
static void check_monotone(void)
{
    int64_t *mf = malloc(sizeof(int64_t) * 2 * (size_t)F.nq),
            *all = malloc(sizeof(int64_t) * 2 * (size_t)F.nq);
    for (int i = 0; i < F.nq; i++) {
        mf[2 * i] = F.q[i].minfull;
        mf[2 * i + 1] = F.q[i].minempty;
    }
    F.where = "check_monotone";
    allreduce(mf, all, 2 * F.nq, MPI_INT64_T, MPI_MIN);
    for (int i = 0; i < F.nq; i++) {
        fq_t *q = &F.q[i];
        if (me != 0)
            break;
        if (q->mode == M_PUSH && all[2 * i] != INT64_MAX && q->cnt + all[2 * i] <= (int64_t)q->cap)
            FAIL("q%d (%s h%d cap %zu) push phase: a push of %lld said FULL, but %lld queued at "
                 "the end (spurious FULL)",
                 i, kname[q->kind], q->host, q->cap, (long long)all[2 * i], (long long)q->cnt);
        if (q->mode == M_POP && all[2 * i + 1] != INT64_MAX && q->cnt >= all[2 * i + 1])
            FAIL("q%d (%s h%d cap %zu) pop phase: a pop of %lld said EMPTY, but %lld queued at "
                 "the end (spurious EMPTY)",
                 i, kname[q->kind], q->host, q->cap, (long long)all[2 * i + 1], (long long)q->cnt);
    }
    free(mf);
    free(all);
}

static void collectives(uint64_t *ss)
{
    if (F.nocoll || rn(ss, 6) != 0)
        return;
    int i = (int)rn(ss, (unsigned)F.nq);
    fq_t *q = &F.q[i];
    if (rn(ss, 2)) {
        size_t nc = 1 + rn(ss, 7);
        F.where = "resize";
        rmc_status_t st = rmc_queue_resize(q->h, nc);
        rmc_status_t want = (int64_t)nc >= q->cnt ? RMC_OK : RMC_ERR_FULL;
        if (F.trace && me == 0)
            fprintf(stderr, "[ph%d] resize q%d %zu -> %zu (count %lld): %s\n", F.phase, i, q->cap,
                    nc, (long long)q->cnt, rmc_status_string(st));
        if (st != want)
            FAIL("q%d resize %zu -> %zu with %lld queued: %s, expected %s", i, q->cap, nc,
                 (long long)q->cnt, rmc_status_string(st), rmc_status_string(want));
        if (st == RMC_OK)
            q->cap = nc;
        if (rmc_queue_capacity(q->h) != q->cap)
            FAIL("q%d capacity %zu after resize, expected %zu", i, rmc_queue_capacity(q->h),
                 q->cap);
    } else {
        int nh = (int)rn(ss, (unsigned)np);
        F.where = "migrate";
        rmc_status_t st = rmc_queue_migrate(q->h, nh);
        if (F.trace && me == 0)
            fprintf(stderr, "[ph%d] migrate q%d %d -> %d: %s\n", F.phase, i, q->host, nh,
                    rmc_status_string(st));
        if (st != RMC_OK)
            FAIL("q%d migrate %d -> %d: %s", i, q->host, nh, rmc_status_string(st));
        else
            q->host = nh;
        if (rmc_queue_host(q->h) != q->host)
            FAIL("q%d host %d after migrate, expected %d", i, rmc_queue_host(q->h), q->host);
    }
}

/* happened-before of two records of one rank (ticks) or of different phases */
static int hb(int ra, int32_t pa, int64_t da, int rb, int32_t pb, int64_t ib)
{
    return pa < pb || (ra == rb && da < ib);
}

static void verify(void)
{
    int cnt[2] = {(int)(F.npush * sizeof(pushrec_t)), (int)(F.npop * sizeof(poprec_t))};
    int *counts = malloc(sizeof(int) * 2 * (size_t)np), *dp = malloc(sizeof(int) * (size_t)np),
        *dq = malloc(sizeof(int) * (size_t)np), *cp = malloc(sizeof(int) * (size_t)np),
        *cq = malloc(sizeof(int) * (size_t)np);
    MPI_CHECK_OK(rmc_barrier()); /* nobody needs a peer's progress after it */
    MPI_Allgather(cnt, 2, MPI_INT, counts, 2, MPI_INT, MPI_COMM_WORLD);
    int sp = 0, sq = 0;
    for (int r = 0; r < np; r++) {
        cp[r] = counts[2 * r];
        cq[r] = counts[2 * r + 1];
        dp[r] = sp;
        dq[r] = sq;
        sp += cp[r];
        sq += cq[r];
    }
    char *pushes = malloc((size_t)sp + 1), *pops = malloc((size_t)sq + 1);
    MPI_Allgatherv(F.push, cnt[0], MPI_BYTE, pushes, cp, dp, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Allgatherv(F.pop, cnt[1], MPI_BYTE, pops, cq, dq, MPI_BYTE, MPI_COMM_WORLD);
    if (me == 0) {
        size_t npops = (size_t)sq / sizeof(poprec_t);
        poprec_t *P = (poprec_t *)(void *)pops;
        long bad = 0, dup = 0, missing = 0, wrongq = 0, fifo = 0, pushedok = 0;
        /* RMC_FUZZ_SELFTEST: corrupt the records to see the checks fire (1: an element lost,
         * 2: two of one pusher's elements popped by one vector pop in swapped order, 3: torn) */
        long self = envl("RMC_FUZZ_SELFTEST", 0);
        if (self == 1 && npops)
            npops--;
        for (size_t i = 0; self == 2 && i + 1 < npops; i++)
            if (P[i].op == P[i + 1].op && P[i].popper == P[i + 1].popper &&
                P[i].e.origin == P[i + 1].e.origin) {
                el_t t = P[i].e;
                P[i].e = P[i + 1].e;
                P[i + 1].e = t;
                break;
            }
        if (self == 3 && npops)
            P[npops / 2].e.salt ^= 1;
        /* popped[r][seq]: index of the pop record + 1 */
        size_t **popped = calloc((size_t)np, sizeof(size_t *));
        for (int r = 0; r < np; r++)
            popped[r] = calloc((size_t)cp[r] / sizeof(pushrec_t) + 1, sizeof(size_t));
#define PUSHREC(r, s) (((pushrec_t *)(void *)(pushes + dp[r]))[s])
        for (size_t i = 0; i < npops; i++) {
            const el_t *e = &P[i].e;
            if (e->ck != el_ck(e) || e->origin >= (uint32_t)np ||
                e->seq >= (uint32_t)(cp[e->origin] / (int)sizeof(pushrec_t))) {
                if (bad++ < 10)
                    fprintf(stderr,
                            "fuzz: popped by rank %d from q%d (phase %d): torn or invented "
                            "element origin %u seq %u ck %s\n",
                            P[i].popper, P[i].q, P[i].phase, e->origin, e->seq,
                            e->ck == el_ck(e) ? "ok" : "BAD");
                continue;
            }
            pushrec_t *pr = &PUSHREC(e->origin, e->seq);
            if (!pr->ok) {
                if (bad++ < 10)
                    fprintf(stderr,
                            "fuzz: popped by rank %d from q%d (phase %d): element "
                            "(%u,%u) whose push (q%d phase %d) did not succeed\n",
                            P[i].popper, P[i].q, P[i].phase, e->origin, e->seq, pr->q, pr->phase);
            }
            if (pr->q != P[i].q && wrongq++ < 10)
                fprintf(stderr, "fuzz: element (%u,%u) pushed to q%d popped from q%d\n", e->origin,
                        e->seq, pr->q, P[i].q);
            size_t *slot = &popped[e->origin][e->seq];
            if (*slot) {
                if (dup++ < 10)
                    fprintf(stderr,
                            "fuzz: element (%u,%u) of q%d popped twice: by rank %d phase "
                            "%d op %d and rank %d phase %d op %d\n",
                            e->origin, e->seq, pr->q, P[*slot - 1].popper, P[*slot - 1].phase,
                            P[*slot - 1].op, P[i].popper, P[i].phase, P[i].op);
            } else {
                *slot = i + 1;
            }
        }
        for (int r = 0; r < np; r++) {
            size_t n = (size_t)cp[r] / sizeof(pushrec_t);
            for (size_t s = 0; s < n; s++) {
                pushrec_t *pr = &PUSHREC(r, s);
                pushedok += pr->ok;
                if (pr->ok && !popped[r][s] && missing++ < 10)
                    fprintf(stderr,
                            "fuzz: element (%d,%zu) pushed to q%d in phase %d op %d never "
                            "popped\n",
                            r, s, pr->q, pr->phase, pr->op);
            }
        }
        /* FIFO: pairs of elements of one queue (one pusher's: ticks; any two: phases) */
        for (int qi = 0; qi < F.nq; qi++) {
            size_t ne = 0, cap = 0;
            struct {
                int r;
                size_t s;
            } *E = NULL;
            for (int r = 0; r < np; r++) {
                size_t n = (size_t)cp[r] / sizeof(pushrec_t);
                for (size_t s2 = 0; s2 < n; s2++) {
                    pushrec_t *pr = &PUSHREC(r, s2);
                    if (!pr->ok || !popped[r][s2] || pr->q != qi)
                        continue;
                    if (ne == cap) {
                        cap = cap ? 2 * cap : 256;
                        E = realloc(E, cap * sizeof *E);
                    }
                    E[ne].r = r;
                    E[ne++].s = s2;
                }
            }
            for (size_t a = 0; a < ne; a++) {
                int ra = E[a].r;
                pushrec_t *A = &PUSHREC(ra, E[a].s);
                poprec_t *PA = &P[popped[ra][E[a].s] - 1];
                for (size_t b = 0; b < ne; b++) {
                    int rb = E[b].r;
                    if (a == b)
                        continue;
                    pushrec_t *B = &PUSHREC(rb, E[b].s);
                    poprec_t *PB = &P[popped[rb][E[b].s] - 1];
                    int push_ab = (ra == rb && A->op == B->op && A->idx < B->idx) ||
                                  hb(ra, A->phase, A->done, rb, B->phase, B->issue);
                    if (!push_ab)
                        continue;
                    int pop_ba =
                        (PA->popper == PB->popper && PA->op == PB->op && PB->idx < PA->idx &&
                         PA->phase == PB->phase) ||
                        hb(PB->popper, PB->phase, PB->done, PA->popper, PA->phase, PA->issue);
                    if (pop_ba && fifo++ < 10)
                        fprintf(stderr,
                                "fuzz: FIFO broken in q%d: (%d,%zu) pushed (phase %d op %d) "
                                "before (%d,%zu) (phase %d op %d), but popped after it: "
                                "(rank %d phase %d op %d) vs (rank %d phase %d op %d)\n",
                                qi, ra, E[a].s, A->phase, A->op, rb, E[b].s, B->phase, B->op,
                                PA->popper, PA->phase, PA->op, PB->popper, PB->phase, PB->op);
                }
            }
            free(E);
        }
#undef PUSHREC
        fprintf(stderr,
                "fuzz: seed %llu np %d: %ld elements pushed, %zu popped; bad %ld, dup %ld, "
                "missing %ld, wrong queue %ld, FIFO %ld\n",
                (unsigned long long)F.seed, np, pushedok, npops, bad, dup, missing, wrongq, fifo);
        if (bad || dup || missing || wrongq || fifo)
            F.ok = 0;
        for (int r = 0; r < np; r++)
            free(popped[r]);
        free(popped);
    }
    free(counts);
    free(dp);
    free(dq);
    free(cp);
    free(cq);
    free(pushes);
    free(pops);
}

static void test_fuzz_queue(void **s)
{
    (void)s;
    memset(&F, 0, sizeof F);
    F.seed = (uint64_t)envl("RMC_FUZZ_SEED", 1);
    F.phases = (int)envl("RMC_FUZZ_PHASES", 60);
    F.ops = (int)envl("RMC_FUZZ_OPS", 60);
    F.kinds = (int)envl("RMC_FUZZ_KINDS", 7);
    F.trace = (int)envl("RMC_FUZZ_TRACE", 0);
    F.nocoll = (int)envl("RMC_FUZZ_NOCOLL", 0);
    F.nonb = (int)envl("RMC_FUZZ_NONB", 0);
    F.modes = (int)envl("RMC_FUZZ_MODES", 0xff);
    double secs = (double)envl("RMC_FUZZ_SECS", 6);
    F.ok = 1;
    signal(SIGALRM, on_alarm);
    uint64_t ss = mpitest_mix64(F.seed) | 1; /* shared by every rank */
    F.rs = mpitest_mix64(F.seed * 1000003u + (uint64_t)me + 17) | 1;
    F.nq = 3 * np;
    F.q = calloc((size_t)F.nq, sizeof(fq_t));
    double t0 = MPI_Wtime();
    for (int i = 0; i < F.nq; i++) {
        fq_t *q = &F.q[i];
        q->kind = i % 3;
        q->host = (i / 3) % np;
        q->cap = 2 + rn(&ss, 5);
        q->ser = rn(&ss, 4) == 0;
        MPI_CHECK_OK(rmc_queue_create((rmc_queue_kind_t)q->kind, q->host, q->cap,
                                      q->ser ? &t_ser : &t_fixed, &q->h));
        /* sometimes a default path of this rank */
        unsigned r = rn(&F.rs, 6);
        if (r == 0)
            MPI_CHECK_OK(rmc_queue_set_path(q->h, RMC_PATH_RDMA));
        else if (r == 1 && rmc_amo_mode() == RMC_AMO_MODE_THREAD)
            MPI_CHECK_OK(rmc_queue_set_path(q->h, RMC_PATH_RPC));
        else
            MPI_CHECK_ALL(1);
    }
    MPI_CHECK_OK(rmc_barrier());
    int timing = (int)envl("RMC_FUZZ_TIMING", 0);
    if (timing && me == 0)
        fprintf(stderr, "fuzz: created in %.2f s\n", MPI_Wtime() - t0);
    for (F.phase = 0; F.phase < F.phases && F.ok; F.phase++) {
        alarm(30);
        plan_phase(&ss);
        if (F.trace && me == 0)
            for (int i = 0; i < F.nq; i++)
                fprintf(stderr, "[ph%d] q%d %s h%d cap%zu count %lld: %s (rank %d)\n", F.phase, i,
                        kname[F.q[i].kind], F.q[i].host, F.q[i].cap, (long long)F.q[i].cnt,
                        mname[F.q[i].mode], F.q[i].solo);
        int act[64], na = 0;
        for (int i = 0; i < F.nq; i++)
            if (active(&F.q[i]))
                act[na++] = i;
        for (int k = 0; na && k < F.ops; k++) {
            double ts = MPI_Wtime();
            int qi = act[rn(&F.rs, (unsigned)na)];
            one_op(qi);
            if (npend && rn(&F.rs, 3) == 0)
                complete_pend((int)rn(&F.rs, (unsigned)npend), (int)rn(&F.rs, 2));
            if (MPI_Wtime() - ts > 0.2) /* slow: the 0.5 s waits of queue.h? */
                fprintf(stderr, "[rank %d] fuzz: phase %d op %d on q%d (%s, %s) took %.2f s\n", me,
                        F.phase, F.opn - 1, qi, kname[F.q[qi].kind], mname[F.q[qi].mode],
                        MPI_Wtime() - ts);
        }
        /* _nb operations on MIXED (CIRCULAR, CHECKSUM) queues may stay untested through the
         * rmc_barrier that ends the phase (queue.h: RMC's waits advance them, a peer never
         * waits for them); FAST ones must complete before it, so do the others here */
        for (int i = 0; i < npend;)
            if (F.q[pend[i].qi].mode != M_MIXED || rn(&F.rs, 2))
                complete_pend(i, (int)rn(&F.rs, 2));
            else
                i++;
        F.where = "rmc_barrier (end of phase, _nb ops outstanding)";
        rmc_status_t st = rmc_barrier();
        if (st != RMC_OK)
            FAIL("rmc_barrier: %s", rmc_status_string(st));
        double tb = MPI_Wtime();
        F.ncarried += npend;
        complete_all();
        F.where = "rmc_barrier (end of phase)";
        st = rmc_barrier();
        if (st != RMC_OK)
            FAIL("rmc_barrier: %s", rmc_status_string(st));
        agree_counts("end of phase");
        check_monotone();
        double tc = MPI_Wtime();
        collectives(&ss);
        MPI_CHECK_ALL(F.ok);
        if (timing && me == 0)
            fprintf(stderr, "fuzz: phase %d: ops until %.2f, checks %.2f s, collectives %.2f s\n",
                    F.phase, tb - t0, tc - tb, MPI_Wtime() - tc);
        /* a time budget (a loaded machine): at least 3 phases, then stop after secs */
        int late = F.phase >= 2 && MPI_Wtime() - t0 > secs, stop = 0;
        allreduce(&late, &stop, 1, MPI_INT, MPI_MAX);
        if (stop) {
            F.phase++;
            break;
        }
    }
    /* drain: the hosts take everything out locally */
    alarm(30);
    F.phase++;
    int64_t issue = ++F.clk;
    for (int i = 0; i < F.nq; i++) {
        fq_t *q = &F.q[i];
        if (q->host != me)
            continue;
        el_t buf[16];
        size_t got;
        rmc_status_t st;
        F.where = "drain";
        while ((st = rmc_queue_pop_upto(q->h, buf, 16, &got, RMC_PROMISE_LOCAL)) == RMC_OK) {
            F.clk++;
            for (size_t j = 0; j < got; j++)
                rec_pop(i, &buf[j], F.opn, (int)j, issue);
            F.opn++;
            q->net -= (int64_t)got;
            issue = ++F.clk;
        }
        if (st != RMC_ERR_EMPTY)
            FAIL("drain q%d: %s", i, rmc_status_string(st));
    }
    MPI_CHECK_OK(rmc_barrier());
    agree_counts("after the drain");
    for (int i = 0; i < F.nq; i++)
        if (F.q[i].cnt != 0)
            FAIL("q%d: %lld left after the drain", i, (long long)F.q[i].cnt);
    alarm(0);
    verify();
    long tot[5] = {F.nops, F.nfull, F.nempty, F.nnb, F.ncarried}, sum[5];
    MPI_Reduce(tot, sum, 5, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        fprintf(stderr,
                "fuzz: seed %llu np %d amo %s: %d phases, %ld ops (%ld _nb, %ld through a "
                "barrier), %ld FULL, %ld EMPTY, %.2f s\n",
                (unsigned long long)F.seed, np,
                rmc_amo_mode() == RMC_AMO_MODE_THREAD ? "thread" : "mpi", F.phase, sum[0], sum[3],
                sum[4], sum[1], sum[2], MPI_Wtime() - t0);
    MPI_CHECK_ALL(F.ok);
    for (int i = 0; i < F.nq; i++)
        MPI_CHECK_OK(rmc_queue_destroy(F.q[i].h));
    free(F.q);
    free(F.push);
    free(F.pop);
}

MPITEST_MAIN("fuzz_queue", cttest_setup, mpitest_teardown_rmc, test_fuzz_queue)
