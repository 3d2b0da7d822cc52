/* A seeded randomized concurrency fuzz of the containers' foundation: the segment allocator and
 * global pointers (include/rmc/gptr.h), distributed arrays (array.h), Bloom filters (bloom.h) and
 * the key/value store's concurrent inserts, atomic adds and counters (kv.h). Four tests, each a
 * sequence of phases separated by barriers, every rank active at once; the seed fixes the plan
 * (sizes, types, kinds, paths, each rank's choices), not the interleaving.
 *
 *   alloc  Every rank allocates (1 B .. 64 KiB, log-uniform) and frees in random order, writes a
 *          pattern into each live block (local stores, rmc_gptr_put in pieces, _nb with a request
 *          or implicit), and at each phase start hands a few of its blocks to other ranks, which
 *          write their own pattern into them (gptr puts or, node-local, stores) and read it back.
 *          Checked: zeroed, 16-byte aligned, rmc_alloc_size >= asked, no two live blocks (headers
 *          included) overlap, no pattern disturbed (own blocks during the phase; at its end the
 *          owner checks what its peers wrote, every rank reads a sample of every other rank's
 *          blocks); rmc_free's refusals as gptr.h documents: a foreign pointer, an interior one,
 *          null, a nonzero reserved field (RMC_ERR_ARG), a free right after a free (RMC_ERR_STATE),
 *          stale pointers (RMC_ERR_STATE or RMC_ERR_ARG), each leaving the segment's counters as
 *          they were; rmc_segment_info's allocs / frees / in_use against this rank's own count;
 *          gptr atomics (fetch-add, CAS increments, fetch-or from every rank on every rank's
 *          counter words) exact at each phase end; and now and then every rank fills its segment
 *          (RMC_SEGMENT_RESERVE, 32M unless set) until RMC_ERR_NOMEM (*g null, nothing changed),
 *          halving the size down to 64 B, a neighbour writes into the last chunk (grown memory),
 *          and everything is freed (in_use as before). Aligned allocation is not offered (every
 *          block is 16-byte aligned): not exercised.
 *   array  Random n and element type (int32, int64, double, byte-copied 3 / 12 / 40 bytes, strings
 *          of up to 24), hosted by a random rank or block-distributed. Each phase splits the array
 *          into runs, each written by one rank (or by none); ranks put single elements and ranges
 *          (blocking and _nb; serialized elements scribbled over right after an _nb call, which
 *          serializes them) and get random ranges (blocking, _nb) at once: their own elements
 *          exactly, unwritten ones exactly, others' as a value of this phase (elements of 4 and 8
 *          bytes whole, others byte by byte: a mix is allowed; strings are not read while another
 *          rank writes them). At the phase end every rank reads everything against the merged
 *          shadow, and checks rmc_array_local, rmc_array_owner and the bounds errors.
 *   bloom  Each phase a filter of a random kind, n (log-uniform, up to 400; 200 beyond 2 ranks)
 *          and rate (1e-3 .. 0.3; from 1e-4 when n <= 100), int64 or string keys. Every rank
 *          inserts a shared set of keys (all at once) and its own ones (blocking and _nb, promise
 *          INSERT, INSERT|FIND or ANY with finds of its own keys meanwhile). Checked: an insert of
 *          a key already inserted says "present"; in a blocked filter at most one rank is told
 *          "absent" for a shared key; after a barrier every rank finds every key (blocking, _nb,
 *          then LOCAL: RMC_OK where it owns the bits, else RMC_ERR_ARG); the false positives over
 *          keys never inserted, summed over the ranks, within the theory's mean (rmc_bloom_info's
 *          fp_expected, at most the target) + 4 standard deviations (the queries' binomial and a
 *          filter's own, simulated) + 2; rmc_bloom_info consistent with rmc_bloom_fp_theory.
 *   kv     A store (int64 or uint64 values; default path chosen, RDMA or RPC; recreated now and
 *          then), and per phase: every rank inserts the same new keys at once and a few of its
 *          own (per call: path chosen, RDMA or RPC): exactly one RMC_OK per key, the winner's
 *          value stored; counters: entries and inserts grow by the keys, exists by the refusals;
 *          then every rank inserts them all again (all RMC_ERR_EXISTS, nothing changed), which
 *          must count as many collisions as the first pass (no erases: the buckets a key's probe
 *          passes are fixed once it is in); then every rank adds random positive deltas to
 *          overlapping keys (a few hot ones) and reads them: per key, the old values returned to
 *          every rank's adds form one chain from the start value (each old = the previous old +
 *          its delta), every read is a state of that chain and a rank's reads never go back, the
 *          final value is the exact sum (read by every rank; local_foreach on the owners: every
 *          owned entry exactly once, and stopping when told); adds of absent keys
 *          RMC_ERR_NOT_FOUND; adds and reads change no counter. In MPI AMO mode RPC is refused.
 *
 * Environment: RMC_FUZZ_SEED (default 1), RMC_FUZZ_OPS (ops per rank per phase, 150),
 * RMC_FUZZ_PHASES (phases per test, 4), RMC_TEST_ONLY (cmocka filter: test_alloc, test_array,
 * test_bloom, test_kv), RMC_FUZZ_TRACE=1 (per-phase lines), RMC_FUZZ_ALARM (seconds a phase may
 * take before the run is declared hung, 120), RMC_FUZZ_SABOTAGE=1..4 (self-test: corrupt the
 * reference of test 1 alloc, 2 array, 3 bloom, 4 kv; that test must fail), RMC_FUZZ_NOZERO=1 (skip
 * the frees with a nonzero reserved field zero_: rmc_free and rmc_alloc_size took such pointers as
 * valid, see the check in a_bad_free). */
#include "cttest.h"
#include <inttypes.h>
#include <math.h>
#include <signal.h>

/* ------------------------------------------------------------------ common --- */
static uint64_t SEED;
static int OPS, PHASES, SABOTAGE, TRACE, ALARM, NOZERO;
static int fails, phase_no, thread_mode;
static const char *test_name = "", *where = "";

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (fails++ < 30) {                                                                        \
            fprintf(stderr, "[rank %d] seed %" PRIu64 " %s phase %d (%s): ", me, SEED, test_name,  \
                    phase_no, where);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* a failing status: where, what, the library's message */
#define FAIL_ST(st, ...)                                                                           \
    do {                                                                                           \
        char m_[200];                                                                              \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                      \
        FAIL("%s -> %s (%s)", m_, rmc_status_string(st), rmc_last_error());                        \
    } while (0)

static void on_alarm(int sig)
{
    (void)sig;
    fprintf(stderr, "[rank %d] fuzz_containers: hung (seed %" PRIu64 ", %s phase %d, in %s)\n",
            mpitest_rank_, SEED, test_name, phase_no, where);
    _exit(3);
}

static long envl(const char *n, long d)
{
    const char *v = getenv(n);
    return v && *v ? strtol(v, NULL, 0) : d;
}

static unsigned rn(uint64_t *s, size_t n)
{
    return n ? (unsigned)(mpitest_splitmix(s) % n) : 0;
}
/* log-uniform in [lo, hi] */
static size_t rlog(uint64_t *s, size_t lo, size_t hi)
{
    double a = log((double)lo), b = log((double)hi + 1);
    double u = (double)(mpitest_splitmix(s) >> 11) / 9007199254740992.0;
    size_t v = (size_t)exp(a + (b - a) * u);
    return v < lo ? lo : v > hi ? hi : v;
}
/* MPI collectives that keep RMC's progress going (a peer may need this rank to serve an RPC) */
static void allgather(const void *in, void *out, int bytes)
{
    MPI_Request rq;
    MPI_Iallgather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
}
static void allreduce_ll(const long long *in, long long *out, int n, MPI_Op op)
{
    MPI_Request rq;
    MPI_Iallreduce(in, out, n, MPI_LONG_LONG, op, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
}
static void barrier(void)
{
    const char *w = where;
    where = "rmc_barrier";
    rmc_status_t st = rmc_barrier();
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_barrier");
    where = w;
}
/* every rank's verdict so far; rank 0 says where it stopped */
static int agree(void)
{
    int ok = mpitest_all_(fails == 0, "no failure in the phase", __FILE__, __LINE__);
    if (!ok && me == 0)
        printf("fuzz_containers: %s FAILED at phase %d, seed %" PRIu64 "\n", test_name, phase_no,
               SEED);
    return ok;
}
static void begin(const char *name)
{
    test_name = name;
    fails = 0;
    phase_no = 0;
    where = "setup";
    thread_mode = rmc_amo_mode() == RMC_AMO_MODE_THREAD;
    if (me == 0)
        printf("fuzz_containers %s: seed %" PRIu64 " np %d ops %d phases %d amo %s%s\n", name, SEED,
               np, OPS, PHASES, thread_mode ? "thread" : "mpi", SABOTAGE ? " SABOTAGE" : "");
}
/* a per-call path: chosen, RDMA, or (thread AMO mode) RPC */
static unsigned pick_path(uint64_t *r)
{
    unsigned x = rn(r, 3);
    return x == 1 ? RMC_PATH_RDMA : x == 2 && thread_mode ? RMC_PATH_RPC : 0;
}

/* Pattern bytes: byte i of the pattern `key` (word i / 8 of a mixed stream). pfill writes bytes
 * [from, from + n) of it to dst[0..n); pcheck returns the first index that differs, or -1. */
static void pfill(unsigned char *dst, uint64_t key, size_t from, size_t n)
{
    uint64_t w = 0;
    size_t cur = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t p = from + i;
        if (p / 8 != cur) {
            cur = p / 8;
            w = mpitest_mix64(key + (uint64_t)cur * 0x9E3779B97F4A7C15ull);
        }
        dst[i] = (unsigned char)(w >> (8 * (p % 8)));
    }
}
static long pcheck(const unsigned char *src, uint64_t key, size_t from, size_t n)
{
    uint64_t w = 0;
    size_t cur = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t p = from + i;
        if (p / 8 != cur) {
            cur = p / 8;
            w = mpitest_mix64(key + (uint64_t)cur * 0x9E3779B97F4A7C15ull);
        }
        if (src[i] != (unsigned char)(w >> (8 * (p % 8))))
            return (long)i;
    }
    return -1;
}
static void setup_phase_alarm(void)
{
    alarm((unsigned)ALARM);
}

/* ================================================================== alloc === */
enum { MAXLIVE = 160, MAXASG = 4, MAXREM = 64, MAXSTALE = 32, MAXAP = 8, MAXIMPL = 16 };
typedef struct {
    rmc_gptr_t g;
    size_t size, usable;
    uint64_t salt;
    int writer;   /* whose pattern it holds */
    int assigned; /* handed to `writer` for this phase: the owner does not touch it */
    int dirty;    /* written by this rank through RMA since its last fence */
} blk_t;
typedef struct { /* exchanged */
    rmc_gptr_t g;
    uint64_t size, salt;
    int32_t target, writer;
} pub_t;
typedef struct {
    rmc_gptr_t g;
    size_t size;
    uint64_t salt;
    int written, dirty;
} rem_t;
typedef struct {
    rmc_request_h r;
    unsigned char *buf;
} apend_t;

static struct {
    blk_t live[MAXLIVE];
    int nlive;
    rem_t rem[MAXREM];
    int nrem;
    rmc_gptr_t stale[MAXSTALE];
    int nstale;
    apend_t pend[MAXAP];
    int npend;
    unsigned char *impl[MAXIMPL]; /* buffers of _nb puts with implicit handles */
    int nimpl;
    long allocs, frees; /* this rank's successful calls */
    long n_state_stale, n_arg_stale, n_nomem, n_exhaust;
    rmc_segment_info_t base;
    rmc_gptr_t *ctr; /* every rank's counter block: [0] fetch-add sum, [1] CAS count, [2] OR */
    long long *add_sent, *cas_sent, *or_sent;
} A;

static uint64_t bkey(int writer, uint64_t salt)
{
    return mpitest_mix64(salt ^ ((uint64_t)(unsigned)writer << 48) ^
                         (SEED * 0x2545F4914F6CDD1Dull));
}

static void a_flush(void)
{
    const char *w = where;
    where = "rmc_wait of a gptr put_nb";
    for (int i = 0; i < A.npend; i++) {
        rmc_status_t st = rmc_wait(&A.pend[i].r);
        if (st != RMC_OK)
            FAIL_ST(st, "rmc_wait(gptr put_nb)");
        free(A.pend[i].buf);
    }
    A.npend = 0;
    where = w;
}
static void a_impl_free(void) /* after a fence or barrier */
{
    for (int i = 0; i < A.nimpl; i++)
        free(A.impl[i]);
    A.nimpl = 0;
}
static void a_fence(void)
{
    a_flush();
    rmc_status_t st = rmc_fence_all();
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_fence_all");
    a_impl_free();
    for (int i = 0; i < A.nlive; i++)
        A.live[i].dirty = 0;
    for (int i = 0; i < A.nrem; i++)
        A.rem[i].dirty = 0;
}

/* writes the pattern `key` into [0, size) of g: stores (node-local), or puts in 1-3 pieces:
 * blocking, _nb with a request, _nb with an implicit handle. Returns 1 when it went through RMA. */
static int a_write(rmc_gptr_t g, size_t size, uint64_t key, uint64_t *r)
{
    unsigned char *loc = rmc_gptr_local(g);
    unsigned how = rn(r, 4);
    if (how == 0 && loc) {
        pfill(loc, key, 0, size);
        return 0;
    }
    int pieces = 1 + (int)rn(r, 3);
    size_t off = 0;
    for (int p = 0; p < pieces && off < size; p++) {
        size_t len = p == pieces - 1 ? size - off : 1 + rn(r, size - off);
        unsigned char *buf = malloc(len);
        pfill(buf, key, off, len);
        rmc_gptr_t d = rmc_gptr_add(g, (ptrdiff_t)off);
        rmc_status_t st;
        unsigned nb = rn(r, 4);
        if (nb < 2) {
            st = rmc_gptr_put(d, buf, len);
            if (st != RMC_OK)
                FAIL_ST(st, "rmc_gptr_put(rank %d off %" PRIu64 ", %zu)", d.rank, d.off, len);
            free(buf);
        } else if (nb == 2 || A.nimpl == MAXIMPL) {
            rmc_request_h rq = RMC_REQUEST_NULL;
            st = rmc_gptr_put_nb(d, buf, len, &rq);
            if (st != RMC_OK)
                FAIL_ST(st, "rmc_gptr_put_nb(rank %d off %" PRIu64 ", %zu)", d.rank, d.off, len);
            if (rq == RMC_REQUEST_NULL) {
                free(buf);
            } else {
                if (A.npend == MAXAP)
                    a_flush();
                A.pend[A.npend++] = (apend_t){rq, buf};
            }
        } else {
            st = rmc_gptr_put_nb(d, buf, len, NULL);
            if (st != RMC_OK)
                FAIL_ST(st, "rmc_gptr_put_nb(implicit, rank %d off %" PRIu64 ", %zu)", d.rank,
                        d.off, len);
            A.impl[A.nimpl++] = buf;
        }
        off += len;
    }
    return 1;
}

/* checks that g's [0, size) holds the pattern `key`: through the local address (allow_local and
 * node-local) or gets (whole, in pieces, _nb) */
static void a_verify(rmc_gptr_t g, size_t size, uint64_t key, uint64_t *r, int allow_local,
                     const char *what)
{
    unsigned char *loc = rmc_gptr_local(g);
    long bad;
    if (allow_local && loc && rn(r, 2)) {
        bad = pcheck(loc, key, 0, size);
    } else {
        unsigned char *buf = malloc(size);
        memset(buf, 0xEE, size);
        unsigned how = rn(r, 3);
        rmc_status_t st = RMC_OK;
        if (how == 0) {
            st = rmc_gptr_get(buf, g, size);
        } else if (how == 1) {
            size_t half = size / 2;
            st = rmc_gptr_get(buf, g, half ? half : size);
            if (st == RMC_OK && half)
                st = rmc_gptr_get(buf + half, rmc_gptr_add(g, (ptrdiff_t)half), size - half);
        } else {
            rmc_request_h rq = RMC_REQUEST_NULL;
            st = rmc_gptr_get_nb(buf, g, size, &rq);
            if (st == RMC_OK)
                st = rmc_wait(&rq);
        }
        if (st != RMC_OK) {
            FAIL_ST(st, "%s: get of rank %d's block off %" PRIu64 " (%zu bytes)", what, g.rank,
                    g.off, size);
            free(buf);
            return;
        }
        bad = pcheck(buf, key, 0, size);
        free(buf);
    }
    if (bad >= 0)
        FAIL("%s: rank %d's block off %" PRIu64 " (%zu bytes): pattern broken at byte %ld", what,
             g.rank, g.off, size, bad);
}

static int a_overlaps(uint64_t off, size_t usable, int skip)
{
    for (int i = 0; i < A.nlive; i++) {
        if (i == skip)
            continue;
        uint64_t lo = A.live[i].g.off - 16, hi = A.live[i].g.off + A.live[i].usable;
        if (off - 16 < hi && lo < off + usable)
            return i;
    }
    return -1;
}

static rmc_segment_info_t a_info(void)
{
    rmc_segment_info_t si;
    memset(&si, 0, sizeof si);
    rmc_status_t st = rmc_segment_info(&si);
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_segment_info");
    return si;
}
static int a_same(const rmc_segment_info_t *a, const rmc_segment_info_t *b)
{
    return a->allocs == b->allocs && a->frees == b->frees && a->in_use == b->in_use;
}

static void a_alloc(uint64_t *r)
{
    where = "alloc";
    if (A.nlive == MAXLIVE)
        return;
    size_t size = rlog(r, 1, 65536);
    rmc_gptr_t g = {7, 7, 7};
    rmc_status_t st = rmc_alloc(size, &g);
    if (st != RMC_OK) {
        FAIL_ST(st, "rmc_alloc(%zu) with %d live", size, A.nlive);
        return;
    }
    A.allocs++;
    size_t usable = 0;
    unsigned char *loc = rmc_gptr_local(g);
    if (g.rank != me || g.zero_ != 0 || g.off % 16 || !loc || (uintptr_t)loc % 16)
        FAIL("rmc_alloc(%zu): pointer {%d, %u, %" PRIu64 "} local %p", size, g.rank, g.zero_, g.off,
             (void *)loc);
    if ((st = rmc_alloc_size(g, &usable)) != RMC_OK || usable < size)
        FAIL("rmc_alloc_size of a %zu-byte block: %s, %zu", size, rmc_status_string(st), usable);
    if (usable < size)
        usable = size;
    int o = a_overlaps(g.off, usable, -1);
    if (o >= 0)
        FAIL("block off %" PRIu64 " (+%zu) overlaps live block off %" PRIu64 " (+%zu)", g.off,
             usable, A.live[o].g.off, A.live[o].usable);
    if (loc)
        for (size_t i = 0; i < size; i++)
            if (loc[i]) {
                FAIL("rmc_alloc(%zu) off %" PRIu64 ": byte %zu is 0x%02x, not zero", size, g.off, i,
                     loc[i]);
                break;
            }
    blk_t *b = &A.live[A.nlive++];
    *b = (blk_t){g, size, usable, mpitest_splitmix(r), me, 0, 0};
    b->dirty = a_write(g, size, bkey(me, b->salt), r);
}

/* a random block of this rank that it may touch (not handed out), or -1 */
static int a_pick(uint64_t *r)
{
    for (int t = 0; t < 8 && A.nlive; t++) {
        int i = (int)rn(r, (size_t)A.nlive);
        if (!A.live[i].assigned)
            return i;
    }
    return -1;
}

static void a_check_own(int i, uint64_t *r, const char *what)
{
    blk_t *b = &A.live[i];
    if (b->dirty)
        a_fence();
    a_verify(b->g, b->size, bkey(b->writer, b->salt), r, 1, what);
}

static void a_free(uint64_t *r)
{
    int i = a_pick(r);
    if (i < 0)
        return;
    where = "free";
    a_flush();
    a_check_own(i, r, "before free");
    blk_t b = A.live[i];
    rmc_status_t st = rmc_free(b.g);
    if (st != RMC_OK) {
        FAIL_ST(st, "rmc_free(off %" PRIu64 ")", b.g.off);
        return;
    }
    A.frees++;
    A.live[i] = A.live[--A.nlive];
    if (rn(r, 3) == 0) { /* at once again: a double free, nothing changes */
        rmc_segment_info_t s0 = a_info(), s1;
        size_t sz = 0;
        if ((st = rmc_free(b.g)) != RMC_ERR_STATE || !strstr(rmc_last_error(), "double free"))
            FAIL("double free of off %" PRIu64 " -> %s (%s), want RMC_ERR_STATE \"double free\"",
                 b.g.off, rmc_status_string(st), rmc_last_error());
        if ((st = rmc_alloc_size(b.g, &sz)) != RMC_ERR_STATE)
            FAIL("rmc_alloc_size of a freed block -> %s, want RMC_ERR_STATE",
                 rmc_status_string(st));
        s1 = a_info();
        if (!a_same(&s0, &s1))
            FAIL("a refused double free changed the segment's counters");
    }
    if (A.nstale < MAXSTALE)
        A.stale[A.nstale++] = b.g;
    else
        A.stale[rn(r, MAXSTALE)] = b.g;
}

static void a_bad_free(uint64_t *r)
{
    where = "bad free";
    rmc_segment_info_t s0 = a_info(), s1;
    rmc_status_t st;
    unsigned k = rn(r, 5);
    if (k == 0 && np > 1) { /* another rank's pointer */
        rmc_gptr_t g = A.nrem ? A.rem[rn(r, (size_t)A.nrem)].g : A.ctr[(me + 1) % np];
        if ((st = rmc_free(g)) != RMC_ERR_ARG || !strstr(rmc_last_error(), "only the owner"))
            FAIL("free of rank %d's pointer -> %s (%s), want RMC_ERR_ARG \"only the owner\"",
                 g.rank, rmc_status_string(st), rmc_last_error());
    } else if (k == 1) { /* not a block's start */
        int i = a_pick(r);
        if (i < 0 || A.live[i].usable < 32)
            return;
        size_t d = 16 * (1 + rn(r, A.live[i].usable / 16 - 1));
        if ((st = rmc_free(rmc_gptr_add(A.live[i].g, (ptrdiff_t)d))) != RMC_ERR_ARG)
            FAIL("free of block off %" PRIu64 " + %zu -> %s, want RMC_ERR_ARG", A.live[i].g.off, d,
                 rmc_status_string(st));
    } else if (k == 2) { /* null; a nonzero reserved field (not a pointer RMC made) */
        int i = a_pick(r);
        if ((st = rmc_free(RMC_GPTR_NULL)) != RMC_ERR_ARG)
            FAIL("free of the null pointer -> %s", rmc_status_string(st));
        if (i >= 0 && !NOZERO) {
            rmc_gptr_t g = A.live[i].g;
            size_t sz = 0;
            g.zero_ = 1 + rn(r, 1000);
            if ((st = rmc_alloc_size(g, &sz)) != RMC_ERR_ARG)
                FAIL("rmc_alloc_size of block off %" PRIu64 " with zero_ = %u -> %s, want "
                     "RMC_ERR_ARG",
                     g.off, g.zero_, rmc_status_string(st));
            if ((st = rmc_free(g)) != RMC_ERR_ARG)
                FAIL("free of block off %" PRIu64 " with zero_ = %u -> %s, want RMC_ERR_ARG "
                     "(gptr.h: every call taking a global pointer refuses it)",
                     g.off, g.zero_, rmc_status_string(st));
            if (st == RMC_OK) { /* it was freed: forget it (its pattern is gone) */
                A.frees++;
                A.live[i] = A.live[--A.nlive];
                return;
            }
        }
    } else if (A.nstale) { /* freed earlier; unless its offset is live again */
        rmc_gptr_t g = A.stale[rn(r, (size_t)A.nstale)];
        for (int i = 0; i < A.nlive; i++)
            if (A.live[i].g.off == g.off)
                return;
        st = rmc_free(g);
        A.n_state_stale += st == RMC_ERR_STATE;
        A.n_arg_stale += st == RMC_ERR_ARG;
        if (st != RMC_ERR_STATE && st != RMC_ERR_ARG)
            FAIL("free of a stale pointer off %" PRIu64 " -> %s", g.off, rmc_status_string(st));
    } else {
        return;
    }
    s1 = a_info();
    if (!a_same(&s0, &s1))
        FAIL("a refused free changed the segment (allocs %llu -> %llu, frees %llu -> %llu, in_use "
             "%zu -> %zu)",
             s0.allocs, s1.allocs, s0.frees, s1.frees, s0.in_use, s1.in_use);
}

/* an allocation that cannot fit: RMC_ERR_NOMEM or RMC_ERR_TOO_BIG, *g null, nothing changed */
static void a_nomem_probe(void)
{
    where = "nomem probe";
    rmc_segment_info_t s0 = a_info(), s1;
    size_t want = s0.reserved - s0.in_use / 2;
    rmc_gptr_t g = {3, 0, 3};
    rmc_status_t st = rmc_alloc(want, &g);
    s1 = a_info();
    if ((st != RMC_ERR_NOMEM && st != RMC_ERR_TOO_BIG) || !rmc_gptr_is_null(g) || !a_same(&s0, &s1))
        FAIL("rmc_alloc(%zu) of a %zu-byte reservation with %zu in use -> %s, null %d, same %d",
             want, s0.reserved, s0.in_use, rmc_status_string(st), rmc_gptr_is_null(g),
             a_same(&s0, &s1));
    if (st == RMC_OK)
        rmc_free(g);
}

static void a_remote_write(uint64_t *r)
{
    if (!A.nrem)
        return;
    where = "remote write";
    rem_t *x = &A.rem[rn(r, (size_t)A.nrem)];
    if (x->dirty) /* its earlier puts land first (no two writes of one place in flight) */
        a_fence();
    x->dirty = a_write(x->g, x->size, bkey(me, x->salt), r);
    x->written = 1;
}
static void a_remote_read(uint64_t *r)
{
    if (!A.nrem)
        return;
    where = "remote read";
    rem_t *x = &A.rem[rn(r, (size_t)A.nrem)];
    if (!x->written)
        return;
    /* no wait: rmc_get sees every earlier put of this origin (comm.h), _nb ones in flight too */
    a_verify(x->g, x->size, bkey(me, x->salt), r, 0, "remote readback");
}

static void a_atomics(uint64_t *r)
{
    where = "gptr atomics";
    int t = (int)rn(r, (size_t)np);
    rmc_gptr_t c = A.ctr[t];
    rmc_status_t st;
    unsigned k = rn(r, 3);
    if (k == 0) {
        int64_t d = 1 + rn(r, 1000), old = -1;
        if ((st = rmc_gptr_fetch_add_i64(c, d, &old)) != RMC_OK || old < 0)
            FAIL_ST(st, "rmc_gptr_fetch_add_i64 at rank %d (old %" PRId64 ")", t, old);
        else
            A.add_sent[t] += d;
    } else if (k == 1) {
        rmc_gptr_t w = rmc_gptr_add(c, 8);
        int64_t cur = -1, old = -1;
        if ((st = rmc_gptr_load_i64(w, &cur)) != RMC_OK) {
            FAIL_ST(st, "rmc_gptr_load_i64 at rank %d", t);
            return;
        }
        for (int tries = 0; tries < 10000; tries++) {
            if ((st = rmc_gptr_cas_i64(w, cur, cur + 1, &old)) != RMC_OK) {
                FAIL_ST(st, "rmc_gptr_cas_i64 at rank %d", t);
                return;
            }
            if (old == cur) {
                A.cas_sent[t]++;
                return;
            }
            if (old < cur)
                FAIL("CAS counter at rank %d went back: %" PRId64 " after %" PRId64, t, old, cur);
            cur = old;
        }
        FAIL("CAS increment at rank %d never succeeded", t);
    } else {
        uint64_t bits = 1ull << rn(r, 64), old = 0;
        if ((st = rmc_gptr_fetch_or_u64(rmc_gptr_add(c, 16), bits, &old)) != RMC_OK)
            FAIL_ST(st, "rmc_gptr_fetch_or_u64 at rank %d", t);
        else
            A.or_sent[t] |= (long long)bits;
    }
}

static void a_misc(uint64_t *r)
{
    int i = a_pick(r);
    if (i < 0)
        return;
    where = "gptr misc";
    blk_t *b = &A.live[i];
    rmc_gptr_t g2;
    void *addr = NULL;
    unsigned char *loc = rmc_gptr_local(b->g);
    rmc_status_t st = rmc_gptr_from_local(loc + 16, &g2);
    if (st != RMC_OK || !rmc_gptr_eq(g2, rmc_gptr_add(b->g, 16)) || rmc_gptr_diff(g2, b->g) != 16)
        FAIL("rmc_gptr_from_local of block off %" PRIu64 " + 16 -> %s", b->g.off,
             rmc_status_string(st));
    if ((st = rmc_gptr_addr(b->g, &addr)) != RMC_OK || !addr)
        FAIL_ST(st, "rmc_gptr_addr(own block)");
    if (rmc_gptr_is_local(b->g) != 1)
        FAIL("rmc_gptr_is_local(own block) != 1");
    /* a rewrite with a fresh pattern, after the block's earlier puts */
    if (b->dirty)
        a_fence();
    b->salt = mpitest_splitmix(r);
    b->writer = me;
    b->dirty |= a_write(b->g, b->size, bkey(me, b->salt), r);
}

/* every rank fills its segment until RMC_ERR_NOMEM; a neighbour writes the last chunk */
static void a_exhaust(uint64_t *r)
{
    where = "exhaust";
    rmc_segment_info_t s0 = a_info();
    enum { MAXCH = 4096 };
    rmc_gptr_t *ch = malloc(MAXCH * sizeof *ch);
    size_t *chsz = malloc(MAXCH * sizeof *chsz), size = (size_t)4 << 20;
    int n = 0, saw = 0;
    rmc_gptr_t last = RMC_GPTR_NULL;
    size_t lastsz = 0;
    while (size >= 64 && n < MAXCH) {
        rmc_gptr_t g = {5, 0, 5};
        size_t s = size - rn(r, size / 4);
        rmc_segment_info_t b0 = a_info();
        rmc_status_t st = rmc_alloc(s, &g);
        if (st == RMC_OK) {
            unsigned char *p = rmc_gptr_local(g);
            if (!p || p[0] || p[s - 1])
                FAIL("chunk of %zu at off %" PRIu64 " not zeroed", s, g.off);
            else
                p[0] = p[s - 1] = 0x5A;
            chsz[n] = s;
            ch[n++] = g;
            if (g.off > last.off || rmc_gptr_is_null(last))
                last = g, lastsz = s;
        } else if (st == RMC_ERR_NOMEM) {
            rmc_segment_info_t b1 = a_info();
            if (!rmc_gptr_is_null(g) || !a_same(&b0, &b1))
                FAIL("RMC_ERR_NOMEM for %zu left a pointer or changed the segment", s);
            if (!saw && !strstr(rmc_last_error(), "RMC_SEGMENT_RESERVE"))
                FAIL("RMC_ERR_NOMEM for %zu does not name RMC_SEGMENT_RESERVE: %s", s,
                     rmc_last_error());
            saw++;
            A.n_nomem++;
            size /= 2;
        } else {
            FAIL_ST(st, "rmc_alloc(%zu) while filling the segment", s);
            break;
        }
    }
    rmc_segment_info_t s1 = a_info();
    if (!saw || s1.in_use + ((size_t)1 << 20) < s1.reserved)
        FAIL("filled the segment with %d chunks: NOMEM %d times, in_use %zu of %zu", n, saw,
             s1.in_use, s1.reserved);
    A.allocs += n;
    A.n_exhaust++;
    /* the neighbour's last chunk (deep in grown memory): its head and tail */
    rmc_gptr_t mine[2] = {last, {(int32_t)lastsz, 0, 0}},
               *all = malloc(2 * (size_t)np * sizeof *all);
    barrier();
    allgather(mine, all, (int)sizeof mine);
    int right = (me + 1) % np;
    rmc_gptr_t rg = all[2 * right];
    size_t rsz = (size_t)all[2 * right + 1].rank;
    uint64_t key = bkey(me, 0xE4A05700u + (uint64_t)phase_no);
    unsigned char buf[64];
    if (!rmc_gptr_is_null(rg) && rsz >= 128) {
        pfill(buf, key, 0, 64);
        rmc_status_t st = rmc_gptr_put(rg, buf, 64);
        if (st == RMC_OK)
            st = rmc_gptr_put(rmc_gptr_add(rg, (ptrdiff_t)(rsz - 64)), buf, 64);
        if (st != RMC_OK)
            FAIL_ST(st, "put into rank %d's last chunk", right);
    }
    barrier();
    int left = (me + np - 1) % np;
    if (!rmc_gptr_is_null(last) && lastsz >= 128) {
        unsigned char *p = rmc_gptr_local(last);
        uint64_t lk = bkey(left, 0xE4A05700u + (uint64_t)phase_no);
        if (pcheck(p, lk, 0, 64) >= 0 || pcheck(p + lastsz - 64, lk, 0, 64) >= 0)
            FAIL("rank %d's writes into the last chunk (off %" PRIu64 ", %zu bytes) are not there",
                 left, last.off, lastsz);
    }
    barrier();
    for (int i = 0; i < A.nlive; i++)
        if (!A.live[i].assigned)
            a_check_own(i, r, "after filling the segment");
    for (int i = n - 1; i > 0; i--) { /* free in random order */
        int j = (int)rn(r, (size_t)i + 1);
        rmc_gptr_t t = ch[i];
        ch[i] = ch[j];
        ch[j] = t;
    }
    for (int i = 0; i < n; i++) {
        rmc_status_t st = rmc_free(ch[i]);
        if (st != RMC_OK)
            FAIL_ST(st, "free of chunk %d", i);
    }
    A.frees += n;
    rmc_segment_info_t s2 = a_info();
    if (s2.in_use != s0.in_use)
        FAIL("in_use %zu after freeing the chunks, %zu before", s2.in_use, s0.in_use);
    if (TRACE)
        fprintf(stderr, "[rank %d] exhaust: %d chunks, %d NOMEM, in_use %zu of %zu, grows %llu\n",
                me, n, saw, s1.in_use, s1.reserved, s1.grows);
    free(ch);
    free(chsz);
    free(all);
}

/* phase end: the owners check their peers' writes, every rank a sample of every rank's blocks */
static void a_phase_end(uint64_t *r)
{
    where = "phase end";
    for (int i = 0; i < A.nrem; i++)
        if (!A.rem[i].written) {
            A.rem[i].dirty = a_write(A.rem[i].g, A.rem[i].size, bkey(me, A.rem[i].salt), r);
            A.rem[i].written = 1;
        }
    a_flush();
    barrier(); /* completes every put, implicit ones too */
    a_impl_free();
    for (int i = 0; i < A.nlive; i++)
        A.live[i].dirty = 0;
    if (SABOTAGE == 1 && A.nlive)
        A.live[A.nlive / 2].salt ^= 1;
    where = "phase end: own blocks";
    for (int i = 0; i < A.nlive; i++) {
        a_verify(A.live[i].g, A.live[i].size, bkey(A.live[i].writer, A.live[i].salt), r, 1,
                 A.live[i].assigned ? "block written by a peer" : "own block");
        A.live[i].assigned = 0;
        int o = a_overlaps(A.live[i].g.off, A.live[i].usable, i);
        if (o >= 0)
            FAIL("live blocks off %" PRIu64 " and %" PRIu64 " overlap", A.live[i].g.off,
                 A.live[o].g.off);
    }
    A.nrem = 0;
    /* the segment's counters: this rank's calls exactly */
    rmc_segment_info_t si = a_info();
    size_t asked = 0;
    for (int i = 0; i < A.nlive; i++)
        asked += A.live[i].size;
    if ((long)(si.allocs - A.base.allocs) != A.allocs ||
        (long)(si.frees - A.base.frees) != A.frees || si.in_use < A.base.in_use + asked ||
        si.peak < si.in_use || si.committed > si.reserved)
        FAIL("segment info: allocs +%llu (made %ld), frees +%llu (made %ld), in_use %zu (base %zu "
             "+ %zu asked), peak %zu",
             si.allocs - A.base.allocs, A.allocs, si.frees - A.base.frees, A.frees, si.in_use,
             A.base.in_use, asked, si.peak);
    /* every rank's blocks, read by every rank (a sample) */
    where = "phase end: others' blocks";
    pub_t *pub = calloc(MAXLIVE, sizeof *pub), *all = malloc((size_t)np * MAXLIVE * sizeof *all);
    for (int i = 0; i < A.nlive; i++)
        pub[i] = (pub_t){A.live[i].g, A.live[i].size, A.live[i].salt, -1, A.live[i].writer};
    for (int i = A.nlive; i < MAXLIVE; i++)
        pub[i].g = RMC_GPTR_NULL;
    allgather(pub, all, MAXLIVE * (int)sizeof *pub);
    for (int q = 0; q < np; q++) {
        if (q == me)
            continue;
        for (int t = 0; t < 12; t++) {
            pub_t *p = &all[(size_t)q * MAXLIVE + rn(r, MAXLIVE)];
            if (!rmc_gptr_is_null(p->g))
                a_verify(p->g, p->size, bkey(p->writer, p->salt), r, 1, "a peer's block");
        }
    }
    /* the counter words */
    where = "phase end: gptr atomics";
    long long *sum = malloc(3 * (size_t)np * sizeof *sum),
              *in = malloc(3 * (size_t)np * sizeof *in);
    for (int t = 0; t < np; t++)
        in[t] = A.add_sent[t], in[np + t] = A.cas_sent[t];
    allreduce_ll(in, sum, 2 * np, MPI_SUM);
    allreduce_ll(A.or_sent, sum + 2 * np, np, MPI_BOR);
    int64_t w[3] = {-1, -1, -1}, l0 = -1;
    rmc_status_t st = rmc_gptr_get(w, A.ctr[me], sizeof w);
    if (st == RMC_OK)
        st = rmc_gptr_load_i64(A.ctr[me], &l0);
    if (st != RMC_OK || w[0] != sum[me] || l0 != sum[me] || w[1] != sum[np + me] ||
        w[2] != sum[2 * np + me])
        FAIL("counter words %s: add %" PRId64 " (load %" PRId64 ", want %lld), CAS %" PRId64
             " (want %lld), OR 0x%" PRIx64 " (want 0x%llx)",
             rmc_status_string(st), w[0], l0, sum[me], w[1], sum[np + me], (uint64_t)w[2],
             sum[2 * np + me]);
    barrier();
    free(sum);
    free(in);
    free(pub);
    free(all);
}

/* phase start: hand a few of this rank's blocks to other ranks */
static void a_assign(uint64_t *r)
{
    where = "assign";
    pub_t mine[MAXASG], *all = malloc((size_t)np * MAXASG * sizeof *all);
    int na = np > 1 ? (int)rn(r, MAXASG + 1) : 0;
    for (int k = 0; k < MAXASG; k++)
        mine[k] = (pub_t){RMC_GPTR_NULL, 0, 0, -1, -1};
    for (int k = 0; k < na; k++) {
        int i = a_pick(r);
        if (i < 0)
            break;
        blk_t *b = &A.live[i];
        b->assigned = 1;
        b->writer = (me + 1 + (int)rn(r, (size_t)np - 1)) % np;
        b->salt = mpitest_splitmix(r);
        mine[k] = (pub_t){b->g, b->size, b->salt, b->writer, b->writer};
    }
    allgather(mine, all, (int)sizeof mine);
    A.nrem = 0;
    for (int i = 0; i < np * MAXASG; i++)
        if (all[i].target == me && A.nrem < MAXREM)
            A.rem[A.nrem++] = (rem_t){all[i].g, all[i].size, all[i].salt, 0, 0};
    free(all);
}

static void test_alloc(void **state)
{
    (void)state;
    begin("alloc");
    memset(&A, 0, sizeof A);
    A.base = a_info();
    A.ctr = calloc((size_t)np, sizeof *A.ctr);
    A.add_sent = calloc((size_t)np, sizeof(long long));
    A.cas_sent = calloc((size_t)np, sizeof(long long));
    A.or_sent = calloc((size_t)np, sizeof(long long));
    rmc_gptr_t c;
    MPI_CHECK_OK(rmc_alloc(64, &c));
    A.allocs++;
    allgather(&c, A.ctr, (int)sizeof c);
    uint64_t shared = mpitest_mix64(SEED ^ 0xA110C),
             r = mpitest_mix64(SEED * 1000003u + (uint64_t)me + 1);
    for (int i = 0; i < 24; i++)
        a_alloc(&r);
    int big = A.base.reserved <= ((size_t)256 << 20);
    for (phase_no = 0; phase_no < PHASES; phase_no++) {
        setup_phase_alarm();
        barrier();
        a_assign(&r);
        for (int op = 0; op < OPS; op++) {
            unsigned x = rn(&r, 100);
            if (x < 30)
                a_alloc(&r);
            else if (x < 50)
                a_free(&r);
            else if (x < 58) {
                int i = a_pick(&r);
                if (i >= 0) {
                    where = "verify own";
                    a_check_own(i, &r, "own block");
                }
            } else if (x < 63)
                a_misc(&r);
            else if (x < 78)
                a_remote_write(&r);
            else if (x < 84)
                a_remote_read(&r);
            else if (x < 90)
                a_bad_free(&r);
            else if (x < 98)
                a_atomics(&r);
            else
                a_nomem_probe();
        }
        a_phase_end(&r);
        if (big && (phase_no == 1 || rn(&shared, 4) == 0))
            a_exhaust(&r);
        if (TRACE && me == 0)
            printf("alloc phase %d: %d live, t %.2f\n", phase_no, A.nlive, MPI_Wtime());
        if (!agree())
            break;
    }
    alarm(0);
    if (TRACE)
        fprintf(stderr,
                "[rank %d] alloc: %ld allocs, %ld frees, stale frees STATE %ld ARG %ld, NOMEM %ld, "
                "fills %ld\n",
                me, A.allocs, A.frees, A.n_state_stale, A.n_arg_stale, A.n_nomem, A.n_exhaust);
    MPI_CHECK_ALL(fails == 0);
    barrier();
    int ok = 1;
    for (int i = 0; i < A.nlive; i++)
        MPITEST_EXPECT(ok, rmc_free(A.live[i].g) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_free(c) == RMC_OK);
    MPI_CHECK_ALL(ok);
    free(A.ctr);
    free(A.add_sent);
    free(A.cas_sent);
    free(A.or_sent);
}

/* ================================================================== array === */
static const rmc_type_t t_fix3 = RMC_TYPE_FIXED("fuzz3", 3), t_fix12 = RMC_TYPE_FIXED("fuzz12", 12),
                        t_fix40 = RMC_TYPE_FIXED("fuzz40", 40), t_str = RMC_TYPE_STRING(24);
static const rmc_type_t *const atypes[] = {&rmc_type_i32, &rmc_type_i64, &rmc_type_f64, &t_fix3,
                                           &t_fix12,      &t_fix40,      &t_str};
enum { NATYPES = 7, VSTRIDE = 64, STRCAP = 32, MAXAPEND = 8 };

static struct {
    rmc_array_h a;
    const rmc_type_t *t;
    int isstr, host;
    size_t n, esz;
    uint32_t *ver;       /* the version of every element (this rank's writes during a phase) */
    uint32_t *start;     /* at the phase's start (synced) */
    int *wr;             /* writer of each element in this phase (-1: nobody) */
    unsigned char *cnt;  /* this rank's writes of each element in this phase */
    unsigned char *busy; /* an _nb operation of this rank covers the element */
    size_t *runs;        /* this rank's runs: first, length pairs */
    int nruns;
    long n_put, n_get, n_nb, n_plaus;
} R;

typedef struct {
    rmc_request_h r;
    int get;
    size_t first, n;
    void *buf;
    char *strs;
    int *mode; /* get: per element 0 exact (version in want), 1 plausible */
    uint32_t *want;
} arpend_t;
static arpend_t arp[MAXAPEND];
static int narp;

/* element i at version v (0: zero / the empty string); strings point into sbuf (STRCAP) */
static void aval(size_t i, uint32_t v, void *out, char *sbuf)
{
    uint64_t key =
        mpitest_mix64((uint64_t)i * 0x100000001B3ull ^ ((uint64_t)v << 32) ^ SEED ^ 0xA77A);
    if (R.isstr) {
        size_t len = v ? key % 25 : 0;
        for (size_t k = 0; k < len; k++)
            sbuf[k] = (char)('a' + mpitest_mix64(key + k) % 26);
        sbuf[len] = 0;
        *(char **)out = sbuf;
    } else if (!v) {
        memset(out, 0, R.esz);
    } else {
        pfill(out, key, 0, R.esz);
    }
}
static int aeq(const void *a, const void *b)
{
    return R.isstr ? strcmp(*(char *const *)a, *(char *const *)b) == 0 : !memcmp(a, b, R.esz);
}
/* a value of element i that another rank may be writing in this phase: the start's or one of
 * this phase's versions; elements of 4 or 8 bytes whole, others byte by byte */
static int aplausible(size_t i, const void *got)
{
    unsigned char cand[VSTRIDE][40];
    int nc = 0;
    char sb[STRCAP];
    aval(i, R.start[i], cand[nc++], sb);
    for (uint32_t k = 1; k < VSTRIDE; k++)
        aval(i, (uint32_t)(phase_no + 1) * VSTRIDE + k, cand[nc++], sb);
    const unsigned char *g = got;
    if (R.esz == 4 || R.esz == 8) {
        for (int c = 0; c < nc; c++)
            if (!memcmp(cand[c], g, R.esz))
                return 1;
        return 0;
    }
    for (size_t b = 0; b < R.esz; b++) {
        int ok = 0;
        for (int c = 0; c < nc && !ok; c++)
            ok = cand[c][b] == g[b];
        if (!ok)
            return 0;
    }
    return 1;
}
static uint32_t acur(size_t i) /* the version this rank expects exactly */
{
    return R.wr[i] == me ? R.ver[i] : R.start[i];
}
static void acheck(size_t i, const void *got, int mode, uint32_t want, const char *how)
{
    char sb[STRCAP];
    unsigned char exp[40];
    if (mode == 1) {
        R.n_plaus++;
        if (!aplausible(i, got))
            FAIL("%s: element %zu (%s, writer %d) holds a value of no version of this phase", how,
                 i, R.t->name, R.wr[i]);
        return;
    }
    aval(i, want, exp, sb);
    if (!aeq(exp, got)) {
        if (R.isstr)
            FAIL("%s: element %zu is \"%s\", want \"%s\" (version %u, writer %d)", how, i,
                 *(char *const *)got, *(char **)exp, want, R.wr[i]);
        else
            FAIL("%s: element %zu (%s) differs from version %u (writer %d, this rank %s)", how, i,
                 R.t->name, want, R.wr[i], R.wr[i] == me ? "writes it" : "reads it");
    }
}
static void *abuf(size_t n, char **strs)
{
    void *b = calloc(n ? n : 1, R.esz);
    *strs = R.isstr ? calloc(n ? n : 1, STRCAP) : NULL;
    return b;
}
static void arelease(void *buf, size_t n)
{
    for (size_t k = 0; R.isstr && k < n; k++)
        rmc_type_release(R.t, (char *)buf + k * R.esz);
}

static void ap_done(int k)
{
    arpend_t *p = &arp[k];
    const char *w = where;
    where = p->get ? "wait array get_nb" : "wait array put_nb";
    rmc_status_t st = rmc_wait(&p->r);
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_wait(array %s_nb [%zu, +%zu))", p->get ? "get" : "put", p->first, p->n);
    else if (p->get)
        for (size_t j = 0; j < p->n; j++)
            acheck(p->first + j, (char *)p->buf + j * R.esz, p->mode[j], p->want[j], "get_nb");
    if (p->get && st == RMC_OK)
        arelease(p->buf, p->n);
    for (size_t j = 0; j < p->n; j++)
        R.busy[p->first + j]--;
    free(p->buf);
    free(p->strs);
    free(p->mode);
    free(p->want);
    arp[k] = arp[--narp];
    where = w;
}
static void ap_flush(void)
{
    while (narp)
        ap_done(narp - 1);
}
static void ap_clear(size_t first, size_t n) /* no _nb op of this rank covers the range */
{
    for (size_t j = 0; j < n; j++)
        if (R.busy[first + j]) {
            ap_flush();
            return;
        }
}

static void a_put(uint64_t *r)
{
    if (!R.nruns)
        return;
    int k = (int)rn(r, (size_t)R.nruns);
    size_t f0 = R.runs[2 * k], l0 = R.runs[2 * k + 1];
    size_t n = rn(r, 3) ? 1 : 1 + rn(r, l0 < 64 ? l0 : 64);
    size_t first = f0 + rn(r, l0 - n + 1);
    for (size_t j = 0; j < n; j++)
        if (R.cnt[first + j] >= VSTRIDE - 1)
            return; /* this element's versions of the phase are used up */
    ap_clear(first, n);
    char *strs;
    void *buf = abuf(n, &strs);
    for (size_t j = 0; j < n; j++) {
        size_t i = first + j;
        R.ver[i] = (uint32_t)(phase_no + 1) * VSTRIDE + ++R.cnt[i];
        aval(i, R.ver[i], (char *)buf + j * R.esz, strs ? strs + j * STRCAP : NULL);
    }
    int nb = rn(r, 3) == 0;
    rmc_status_t st;
    R.n_put++;
    if (!nb) {
        where = "array put";
        st = n == 1 && rn(r, 2) ? rmc_array_put(R.a, first, buf)
                                : rmc_array_put_range(R.a, first, n, buf);
        if (st != RMC_OK)
            FAIL_ST(st, "array put [%zu, +%zu)", first, n);
        free(buf);
        free(strs);
        return;
    }
    where = "array put_nb";
    R.n_nb++;
    rmc_request_h rq = RMC_REQUEST_NULL;
    st = n == 1 && rn(r, 2) ? rmc_array_put_nb(R.a, first, buf, &rq)
                            : rmc_array_put_range_nb(R.a, first, n, buf, &rq);
    if (st != RMC_OK)
        FAIL_ST(st, "array put_nb [%zu, +%zu)", first, n);
    if (R.isstr) { /* serialized during the call: the caller's strings are free at once */
        memset(strs, 'X', n * STRCAP - 1);
        free(strs);
        strs = NULL;
        memset(buf, 0, n * R.esz);
    }
    if (rq == RMC_REQUEST_NULL) {
        free(buf);
        free(strs);
        return;
    }
    if (narp == MAXAPEND)
        ap_done(0);
    arp[narp++] = (arpend_t){rq, 0, first, n, buf, strs, NULL, NULL};
    for (size_t j = 0; j < n; j++)
        R.busy[first + j]++;
}

static void a_get(uint64_t *r)
{
    size_t n = rn(r, 3) ? 1 + rn(r, 8) : 1 + rn(r, R.n < 200 ? R.n : 200);
    if (n > R.n)
        n = R.n;
    size_t first = rn(r, R.n - n + 1);
    if (R.isstr) { /* no string element another rank writes meanwhile */
        size_t j = 0;
        while (j < n && !(R.wr[first + j] >= 0 && R.wr[first + j] != me))
            j++;
        if (!j)
            return;
        n = j;
    }
    ap_clear(first, n);
    char *strs;
    void *buf = abuf(n, &strs);
    free(strs);
    int *mode = malloc(n * sizeof *mode);
    uint32_t *want = malloc(n * sizeof *want);
    for (size_t j = 0; j < n; j++) {
        size_t i = first + j;
        mode[j] = R.wr[i] >= 0 && R.wr[i] != me;
        want[j] = acur(i);
    }
    R.n_get++;
    rmc_status_t st;
    if (rn(r, 3)) {
        where = "array get";
        st = n == 1 && rn(r, 2) ? rmc_array_get(R.a, first, buf)
                                : rmc_array_get_range(R.a, first, n, buf);
        if (st != RMC_OK)
            FAIL_ST(st, "array get [%zu, +%zu)", first, n);
        else {
            for (size_t j = 0; j < n; j++)
                acheck(first + j, (char *)buf + j * R.esz, mode[j], want[j], "get");
            arelease(buf, n);
        }
        free(buf);
        free(mode);
        free(want);
        return;
    }
    where = "array get_nb";
    R.n_nb++;
    rmc_request_h rq = RMC_REQUEST_NULL;
    st = n == 1 && rn(r, 2) ? rmc_array_get_nb(R.a, first, buf, &rq)
                            : rmc_array_get_range_nb(R.a, first, n, buf, &rq);
    if (st != RMC_OK) {
        FAIL_ST(st, "array get_nb [%zu, +%zu)", first, n);
        rq = RMC_REQUEST_NULL;
    }
    if (narp == MAXAPEND)
        ap_done(0);
    arp[narp++] = (arpend_t){rq, st == RMC_OK, first, n, buf, NULL, mode, want};
    for (size_t j = 0; j < n; j++)
        R.busy[first + j]++;
}

static void ar_create(uint64_t *shared)
{
    where = "array create";
    if (R.a) {
        MPI_CHECK_OK(rmc_array_destroy(R.a));
        free(R.ver);
        free(R.start);
        free(R.wr);
        free(R.cnt);
        free(R.busy);
        free(R.runs);
    }
    R.t = atypes[rn(shared, NATYPES)];
    R.isstr = R.t == &t_str;
    R.esz = R.t->size;
    R.n = rlog(shared, 1, np > 2 ? 600 : 1500);
    R.host = rn(shared, 3) ? RMC_ARRAY_BLOCK : (int)rn(shared, (size_t)np);
    MPI_CHECK_OK(rmc_array_create(R.n, R.t, R.host, &R.a));
    R.ver = calloc(R.n, sizeof *R.ver);
    R.start = calloc(R.n, sizeof *R.start);
    R.wr = calloc(R.n, sizeof *R.wr);
    R.cnt = calloc(R.n, 1);
    R.busy = calloc(R.n, 1);
    R.runs = malloc(2 * R.n * sizeof *R.runs);
    if (TRACE && me == 0)
        printf("array phase %d: new array of %zu %s, host %d\n", phase_no, R.n, R.t->name, R.host);
}

/* reads everything back (random chunks, blocking and _nb) and checks the local part */
static void ar_check_all(uint64_t *r)
{
    where = "array phase end";
    size_t first = 0;
    while (first < R.n) {
        size_t n = 1 + rn(r, R.n - first < 300 ? R.n - first : 300);
        char *strs;
        void *buf = abuf(n, &strs);
        free(strs);
        rmc_status_t st;
        if (rn(r, 2)) {
            st = rmc_array_get_range(R.a, first, n, buf);
        } else {
            rmc_request_h rq = RMC_REQUEST_NULL;
            st = rmc_array_get_range_nb(R.a, first, n, buf, &rq);
            if (st == RMC_OK)
                st = rmc_wait(&rq);
        }
        if (st != RMC_OK)
            FAIL_ST(st, "final get [%zu, +%zu)", first, n);
        else {
            for (size_t j = 0; j < n; j++)
                acheck(first + j, (char *)buf + j * R.esz, 0, R.ver[first + j], "final get");
            arelease(buf, n);
        }
        free(buf);
        first += n;
    }
    /* ownership and the local part */
    size_t blk = (R.n + (size_t)np - 1) / (size_t)np, lf = 7, lc = 7;
    void *slots = NULL;
    rmc_status_t st = rmc_array_local(R.a, &lf, &lc, &slots);
    size_t wf = R.host >= 0 ? 0 : ((size_t)me * blk < R.n ? (size_t)me * blk : R.n);
    size_t wc = R.host >= 0 ? (R.host == me ? R.n : 0)
                            : ((size_t)me * blk < R.n ? (R.n - wf < blk ? R.n - wf : blk) : 0);
    if (st != RMC_OK || lc != wc || (lc && lf != wf) || (lc && !slots))
        FAIL("rmc_array_local: %s first %zu count %zu, want %zu %zu", rmc_status_string(st), lf, lc,
             wf, wc);
    else if (!R.isstr)
        for (size_t j = 0; j < lc; j++)
            acheck(lf + j, (char *)slots + j * R.esz, 0, R.ver[lf + j], "local slot");
    for (int t = 0; t < 16; t++) {
        size_t i = rn(r, R.n);
        int want = R.host >= 0 ? R.host : (int)(i / blk);
        if (rmc_array_owner(R.a, i) != want)
            FAIL("rmc_array_owner(%zu) = %d, want %d", i, rmc_array_owner(R.a, i), want);
    }
    if (rmc_array_owner(R.a, R.n) != -1 || rmc_array_size(R.a) != R.n)
        FAIL("rmc_array_owner(n) %d, size %zu of %zu", rmc_array_owner(R.a, R.n),
             rmc_array_size(R.a), R.n);
    /* bounds: nothing read or written */
    unsigned char e[64];
    const char *empty = "";
    memset(e, 0, sizeof e);
    if (R.isstr)
        memcpy(e, &empty, sizeof empty);
    if ((st = rmc_array_get(R.a, R.n, e)) != RMC_ERR_BOUNDS ||
        (st = rmc_array_get_range(R.a, R.n - 1, 2, e)) != RMC_ERR_BOUNDS ||
        (st = rmc_array_put_range(R.a, R.n, 1, e)) != RMC_ERR_BOUNDS)
        FAIL("an access beyond the array -> %s, want RMC_ERR_BOUNDS", rmc_status_string(st));
    if ((st = rmc_array_get_range(R.a, 0, 0, e)) != RMC_ERR_ARG ||
        (st = rmc_array_put(R.a, 0, NULL)) != RMC_ERR_ARG)
        FAIL("an empty range / NULL element -> %s, want RMC_ERR_ARG", rmc_status_string(st));
}

static void test_array(void **state)
{
    (void)state;
    begin("array");
    memset(&R, 0, sizeof R);
    narp = 0;
    uint64_t shared = mpitest_mix64(SEED ^ 0xA77A7),
             r = mpitest_mix64(SEED * 1000033u + (uint64_t)me + 7);
    for (phase_no = 0; phase_no < PHASES; phase_no++) {
        setup_phase_alarm();
        if (!R.a || rn(&shared, 3) == 0)
            ar_create(&shared);
        /* the plan: runs, each written by one rank or by none */
        memcpy(R.start, R.ver, R.n * sizeof *R.ver);
        memset(R.cnt, 0, R.n);
        R.nruns = 0;
        size_t maxrun = R.n / (2 * (size_t)np) + 1;
        for (size_t i = 0; i < R.n;) {
            size_t len = 1 + rn(&shared, maxrun);
            if (len > R.n - i)
                len = R.n - i;
            int w = (int)rn(&shared, (size_t)np + 1) - 1;
            for (size_t j = 0; j < len; j++)
                R.wr[i + j] = w;
            if (w == me) {
                R.runs[2 * R.nruns] = i;
                R.runs[2 * R.nruns++ + 1] = len;
            }
            i += len;
        }
        barrier();
        for (int op = 0; op < OPS; op++) {
            unsigned x = rn(&r, 100);
            if (x < 45)
                a_put(&r);
            else if (x < 92)
                a_get(&r);
            else if (narp)
                ap_done((int)rn(&r, (size_t)narp));
        }
        ap_flush();
        barrier();
        /* merge the writers' versions */
        where = "array sync";
        uint32_t *all = malloc((size_t)np * R.n * sizeof *all);
        allgather(R.ver, all, (int)(R.n * sizeof *R.ver));
        for (size_t i = 0; i < R.n; i++)
            R.ver[i] = R.wr[i] >= 0 ? all[(size_t)R.wr[i] * R.n + i] : R.start[i];
        free(all);
        if (SABOTAGE == 2)
            R.ver[R.n / 2] ^= 1;
        ar_check_all(&r);
        barrier();
        if (!agree())
            break;
    }
    alarm(0);
    if (TRACE)
        fprintf(stderr, "[rank %d] array: %ld puts, %ld gets, %ld _nb, %ld plausibility checks\n",
                me, R.n_put, R.n_get, R.n_nb, R.n_plaus);
    MPI_CHECK_ALL(fails == 0);
    MPI_CHECK_OK(rmc_array_destroy(R.a));
    free(R.ver);
    free(R.start);
    free(R.wr);
    free(R.cnt);
    free(R.busy);
    free(R.runs);
}

/* ================================================================== bloom === */
static const rmc_type_t t_bkey = RMC_TYPE_STRING(20);
enum { MAXBPEND = 16, BKEYCAP = 24 };

static struct {
    rmc_bloom_h b;
    rmc_bloom_kind_t kind;
    int isstr;
    uint64_t salt;
    long n_ins, n_find, n_fp, n_q, n_local_ok, n_local_arg, n_nb;
} B;

typedef struct {
    int64_t i;
    char s[BKEYCAP];
    char *p;
    int res; /* an _nb operation's answer: here, where it stays put until completion */
} bkey_t;

/* the key of id (int64 or string); ids below 2^40 are inserted, above are never */
static void bk_make(uint64_t id, bkey_t *k)
{
    uint64_t x = mpitest_mix64(id * 0x9E3779B97F4A7C15ull ^ B.salt);
    k->i = (int64_t)x;
    snprintf(k->s, sizeof k->s, "%" PRIx64 ":%" PRIx64, id, x & 0xffffff);
    k->p = k->s;
}
static const void *bk_ptr(const bkey_t *k)
{
    return B.isstr ? (const void *)&k->p : (const void *)&k->i;
}

typedef struct {
    rmc_request_h r;
    bkey_t *k;
    int check; /* 0 none, 1 the answer must be 1 */
    int64_t id;
    int *first; /* where an insert's first answer goes (absent flag), or NULL */
} bpend_t;
static bpend_t bpq[MAXBPEND];
static int nbpq;

static void bp_done(int k)
{
    bpend_t *p = &bpq[k];
    rmc_status_t st = rmc_wait(&p->r);
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_wait(bloom _nb) key %" PRId64, p->id);
    else if (p->k->res != 0 && p->k->res != 1)
        FAIL("bloom _nb key %" PRId64 ": answer %d", p->id, p->k->res);
    else {
        if (p->check && p->k->res != 1)
            FAIL("bloom _nb key %" PRId64 ": %s says absent (a false negative)", p->id,
                 p->first ? "insert" : "find");
        if (p->first)
            *p->first = p->k->res == 0;
    }
    free(p->k);
    bpq[k] = bpq[--nbpq];
}
static void bp_flush(void)
{
    while (nbpq)
        bp_done(nbpq - 1);
}

/* an insert (check: must say present) or a find (check: must say present), blocking or _nb */
static void b_op(int insert, uint64_t id, unsigned promise, int check, int *first, uint64_t *r)
{
    bkey_t *k = malloc(sizeof *k);
    bk_make(id, k);
    int nb = rn(r, 3) == 0 && !(promise & RMC_PROMISE_LOCAL);
    rmc_status_t st;
    if (nb) {
        if (nbpq == MAXBPEND)
            bp_done((int)rn(r, MAXBPEND));
        bpend_t *p = &bpq[nbpq];
        *p = (bpend_t){RMC_REQUEST_NULL, k, check, (int64_t)id, first};
        k->res = -1;
        st = insert ? rmc_bloom_insert_nb(B.b, bk_ptr(k), &k->res, promise, &p->r)
                    : rmc_bloom_find_nb(B.b, bk_ptr(k), &k->res, promise, &p->r);
        B.n_nb++;
        if (st != RMC_OK) {
            FAIL_ST(st, "bloom %s_nb key %" PRIu64, insert ? "insert" : "find", id);
            free(k);
            return;
        }
        nbpq++;
        if (p->r == RMC_REQUEST_NULL)
            bp_done(nbpq - 1);
        return;
    }
    int res = -1;
    st = insert ? rmc_bloom_insert(B.b, bk_ptr(k), &res, promise)
                : rmc_bloom_find(B.b, bk_ptr(k), &res, promise);
    if (promise & RMC_PROMISE_LOCAL) {
        if (st == RMC_ERR_ARG) {
            B.n_local_arg++;
            free(k);
            return;
        }
        B.n_local_ok += st == RMC_OK;
    }
    if (st != RMC_OK)
        FAIL_ST(st, "bloom %s key %" PRIu64 " promise 0x%x", insert ? "insert" : "find", id,
                promise);
    else if (res != 0 && res != 1)
        FAIL("bloom %s key %" PRIu64 ": answer %d", insert ? "insert" : "find", id, res);
    else {
        if (check && res != 1)
            FAIL("bloom %s of key %" PRIu64 " (inserted) says absent: %s",
                 insert ? "insert" : "find", id,
                 insert ? "a second insert not told present" : "a false negative");
        if (first)
            *first = res == 0;
    }
    free(k);
}

/* The standard deviation of a filter's false-positive rate over filters of this sizing under
 * uniform hashing, simulated: standard, k n throws into m bits and a rate of (set / m)^k;
 * blocked, each key a block and k bits in it, the rate the blocks' mean of (set / 64)^k. */
static double bloom_rate_sd(const rmc_bloom_info_t *in, uint64_t *r)
{
    enum { SIMS = 48 };
    size_t m = in->bits, words = (m + 63) / 64;
    uint64_t *w = malloc(words * sizeof *w);
    double s1 = 0, s2 = 0;
    for (int t = 0; t < SIMS; t++) {
        memset(w, 0, words * sizeof *w);
        for (size_t i = 0; i < in->n; i++) {
            size_t blk = in->kind == RMC_BLOOM_BLOCKED ? rn(r, words) : 0;
            for (unsigned j = 0; j < in->k; j++) {
                size_t b = in->kind == RMC_BLOOM_BLOCKED ? blk * 64 + rn(r, 64) : rn(r, m);
                w[b / 64] |= 1ull << (b % 64);
            }
        }
        double rate = 0;
        if (in->kind == RMC_BLOOM_BLOCKED) {
            for (size_t b = 0; b < words; b++)
                rate += pow(__builtin_popcountll(w[b]) / 64.0, in->k);
            rate /= (double)words;
        } else {
            size_t set = 0;
            for (size_t b = 0; b < words; b++)
                set += (size_t)__builtin_popcountll(w[b]);
            rate = pow((double)set / (double)m, in->k);
        }
        s1 += rate;
        s2 += rate * rate;
    }
    free(w);
    double mean = s1 / SIMS, var = s2 / SIMS - mean * mean;
    return var > 0 ? sqrt(var * SIMS / (SIMS - 1)) : 0;
}

static void test_bloom(void **state)
{
    (void)state;
    begin("bloom");
    memset(&B, 0, sizeof B);
    nbpq = 0;
    uint64_t shared = mpitest_mix64(SEED ^ 0xB100B),
             r = mpitest_mix64(SEED * 1000081u + (uint64_t)me + 3);
    for (phase_no = 0; phase_no < PHASES; phase_no++) {
        setup_phase_alarm();
        where = "bloom create";
        B.kind = rn(&shared, 2) ? RMC_BLOOM_BLOCKED : RMC_BLOOM_STANDARD;
        B.isstr = rn(&shared, 3) == 0;
        B.salt = mpitest_splitmix(&shared);
        size_t n = rlog(&shared, 1, np > 2 ? 200 : 400);
        double lo = n > 100 ? 1e-3 : 1e-4, u = (double)(mpitest_splitmix(&shared) >> 11) / 0x1p53;
        double p = exp(log(lo) + (log(0.3) - log(lo)) * u);
        size_t ns = rn(&shared, n / 4 + 1); /* ids [0, ns) every rank inserts */
        int pure = rn(&shared, 2);          /* inserts only, or finds meanwhile */
        MPI_CHECK_OK(rmc_bloom_create(B.kind, n, p, B.isstr ? &t_bkey : &rmc_type_i64, &B.b));
        rmc_bloom_info_t in;
        rmc_status_t st = rmc_bloom_info(B.b, &in);
        if (st != RMC_OK || in.kind != B.kind || in.n != n || in.fp_target != p ||
            !(in.fp_expected <= p) || in.k < 1 || in.bits < 1 ||
            fabs(rmc_bloom_fp_theory(B.kind, n, in.bits, in.k) - in.fp_expected) > 1e-12)
            FAIL("rmc_bloom_info: %s kind %d n %zu target %g expected %g bits %zu k %u (asked "
                 "%s n %zu p %g)",
                 rmc_status_string(st), (int)in.kind, in.n, in.fp_target, in.fp_expected, in.bits,
                 in.k, B.kind ? "standard" : "blocked", n, p);
        if (TRACE && me == 0)
            printf("bloom phase %d: %s, %s keys, n %zu (%zu shared), p %g: bits %zu k %u, "
                   "expected %g%s\n",
                   phase_no, B.kind ? "standard" : "blocked", B.isstr ? "string" : "int64", n, ns,
                   p, in.bits, in.k, in.fp_expected, pure ? ", inserts only" : "");
        /* inserts: the shared ids and this rank's own (id % np == me beyond ns), in random order */
        where = "bloom inserts";
        barrier();
        uint64_t *ids = malloc((n + 1) * sizeof *ids);
        size_t nm = 0;
        for (size_t i = 0; i < n; i++)
            if (i < ns || i % (size_t)np == (size_t)me)
                ids[nm++] = i;
        for (size_t i = nm; i > 1; i--) {
            size_t j = rn(&r, i);
            uint64_t t = ids[i - 1];
            ids[i - 1] = ids[j];
            ids[j] = t;
        }
        int *absent = calloc(ns + 1, sizeof *absent);
        size_t done = 0; /* ids[0, done) were inserted and completed */
        for (size_t k = 0; k < nm; k++) {
            unsigned prom =
                pure ? RMC_PROMISE_INSERT : (rn(&r, 2) ? 0 : RMC_PROMISE_INSERT | RMC_PROMISE_FIND);
            uint64_t id = ids[k];
            B.n_ins++;
            b_op(1, id, prom, 0, id < ns ? &absent[id] : NULL, &r);
            if (rn(&r, 4) == 0) { /* an insert again of one this rank completed: present */
                bp_flush();
                done = k + 1;
                b_op(1, ids[rn(&r, done)], prom, 1, NULL, &r);
            }
            if (!pure && rn(&r, 3) == 0 && done) /* a find of a completed one */
                b_op(0, ids[rn(&r, done)], prom, 1, NULL, &r);
        }
        bp_flush();
        barrier();
        /* at most one rank told "absent" for a shared key (blocked: the fetch-or's answer) */
        long long *ab = malloc((ns + 1) * sizeof *ab), *abs = malloc((ns + 1) * sizeof *abs);
        for (size_t i = 0; i < ns; i++)
            ab[i] = absent[i];
        allreduce_ll(ab, abs, (int)ns, MPI_SUM);
        long zero = 0;
        for (size_t i = 0; i < ns; i++) {
            zero += abs[i] == 0;
            if (B.kind == RMC_BLOOM_BLOCKED && abs[i] > 1)
                FAIL("blocked filter: %lld ranks told \"absent\" inserting shared key %zu", abs[i],
                     i);
        }
        /* every key, found by every rank: blocking and _nb, then LOCAL where this rank owns it */
        where = "bloom finds";
        for (size_t i = 0; i < n; i++) {
            B.n_find++;
            b_op(0, i, rn(&r, 2) ? RMC_PROMISE_FIND : 0, 1, NULL, &r);
        }
        if (SABOTAGE == 3)
            for (uint64_t i = 0; i < 40; i++) /* never inserted, checked as if it were */
                b_op(0, ((uint64_t)1 << 41) + i, RMC_PROMISE_FIND, 1, NULL, &r);
        bp_flush();
        barrier();
        where = "bloom LOCAL finds";
        for (size_t i = rn(&r, 4); i < n; i += 1 + rn(&r, 4))
            b_op(0, i, RMC_PROMISE_LOCAL, 1, NULL, &r);
        barrier();
        /* false positives over keys never inserted (ids from 2^40 on, disjoint per rank) */
        where = "bloom false positives";
        long q = np > 2 ? 300 : 800, fp = 0;
        for (long i = 0; i < q; i++) {
            bkey_t k;
            bk_make(((uint64_t)1 << 40) + (uint64_t)me * (uint64_t)q + (uint64_t)i, &k);
            int res = -1;
            st = rmc_bloom_find(B.b, bk_ptr(&k), &res, RMC_PROMISE_FIND);
            if (st != RMC_OK || (res != 0 && res != 1)) {
                FAIL_ST(st, "bloom find of a key never inserted (answer %d)", res);
                break;
            }
            fp += res;
        }
        long long l[2] = {fp, q}, s[2];
        allreduce_ll(l, s, 2, MPI_SUM);
        /* the queries' binomial spread and the filter's own: a filter's rate is its bits' (a small
         * filter's varies much: n 10 in 65 bits, k 4: 6.5% measured for 4.7% expected) */
        uint64_t sr =
            mpitest_mix64(SEED + (uint64_t)phase_no * 0x51u); /* the same bound everywhere */
        double sd = bloom_rate_sd(&in, &sr), qn = (double)s[1], pe = in.fp_expected;
        double mean = qn * pe, bound = mean + 4 * sqrt(mean * (1 - pe) + qn * qn * sd * sd) + 2;
        B.n_fp += (long)s[0];
        B.n_q += (long)s[1];
        if ((double)s[0] > bound)
            FAIL("%s filter n %zu p %g (bits %zu k %u): %lld false positives in %lld queries, "
                 "bound %.1f (expected rate %g, a filter's sd %g, measured %g)",
                 B.kind ? "standard" : "blocked", n, p, in.bits, in.k, s[0], s[1], bound,
                 in.fp_expected, sd, (double)s[0] / (double)s[1]);
        if (TRACE && me == 0)
            printf("  fp %lld / %lld (%.4g, expected %.4g), shared keys no rank saw absent: %ld\n",
                   s[0], s[1], (double)s[0] / (double)s[1], in.fp_expected, zero);
        barrier();
        where = "bloom destroy";
        MPI_CHECK_OK(rmc_bloom_destroy(B.b));
        free(ids);
        free(absent);
        free(ab);
        free(abs);
        if (!agree())
            break;
    }
    alarm(0);
    if (TRACE)
        fprintf(stderr,
                "[rank %d] bloom: %ld inserts, %ld finds (%ld _nb), LOCAL ok %ld refused %ld\n", me,
                B.n_ins, B.n_find, B.n_nb, B.n_local_ok, B.n_local_arg);
    MPI_CHECK_ALL(fails == 0);
}

/* ===================================================================== kv === */
enum { KVMAXKEYS = 768 };
static struct {
    rmc_kv_h kv;
    int u64;
    unsigned path;
    size_t cap;
    int64_t *key;  /* id -> key */
    uint64_t *val; /* the model's value of every present id */
    int nkeys;     /* ids [0, nkeys) are present */
    int *owner;
    rmc_kv_counters_t c;
    long n_ins, n_exists, n_add, n_read, n_nf;
} V;

typedef struct {
    int32_t id, rank;
    uint64_t old, delta;
} addrec_t;
typedef struct {
    int32_t id, rank, seq, pad;
    uint64_t v;
} readrec_t;

static uint64_t kv_winval(int id, int rank)
{
    return mpitest_mix64((uint64_t)id * 0x100000001B3ull ^ (uint64_t)rank * 77 ^ SEED ^ 0x4B56);
}
static rmc_kv_counters_t kv_counters(void)
{
    rmc_kv_counters_t c;
    memset(&c, 0, sizeof c);
    rmc_status_t st = rmc_kv_counters(V.kv, &c);
    if (st != RMC_OK)
        FAIL_ST(st, "rmc_kv_counters");
    return c;
}

static void kv_create(uint64_t *shared)
{
    where = "kv create";
    if (V.kv)
        MPI_CHECK_OK(rmc_kv_destroy(V.kv));
    V.u64 = (int)rn(shared, 2);
    unsigned x = rn(shared, 3);
    V.path = x == 1 ? RMC_HASHMAP_RDMA : x == 2 && thread_mode ? RMC_HASHMAP_RPC : 0;
    V.cap = (size_t)4 * KVMAXKEYS;
    MPI_CHECK_OK(
        rmc_kv_create(V.cap, &rmc_type_i64, V.u64 ? &rmc_type_u64 : &rmc_type_i64, V.path, &V.kv));
    V.nkeys = 0;
    V.key = realloc(V.key, KVMAXKEYS * sizeof *V.key);
    V.val = realloc(V.val, KVMAXKEYS * sizeof *V.val);
    V.owner = realloc(V.owner, KVMAXKEYS * sizeof *V.owner);
    uint64_t salt = mpitest_splitmix(shared);
    for (int i = 0; i < KVMAXKEYS; i++) {
        V.key[i] = (int64_t)mpitest_mix64((uint64_t)i ^ salt);
        V.owner[i] = rmc_hashmap_owner(rmc_kv_map(V.kv), &V.key[i]);
    }
    V.c = kv_counters();
    if (V.c.entries || V.c.inserts || V.c.exists || V.c.collisions)
        FAIL("a new store's counters: %llu %llu %llu %llu", V.c.entries, V.c.inserts, V.c.exists,
             V.c.collisions);
    if (TRACE && me == 0)
        printf("kv phase %d: new store, %s values, path 0x%x\n", phase_no, V.u64 ? "u64" : "i64",
               V.path);
}

/* every rank inserts ids [lo, lo + ns) and its own in [lo + ns, hi) (id % np == me); twice */
static void kv_race(int lo, int ns, int hi, uint64_t *r)
{
    where = "kv insert race";
    int cnt = hi - lo, *order = malloc((size_t)cnt * sizeof *order), nm = 0;
    for (int id = lo; id < hi; id++)
        if (id < lo + ns || id % np == me)
            order[nm++] = id;
    for (int i = nm; i > 1; i--) {
        int j = (int)rn(r, (size_t)i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    unsigned prom_kind = rn(r, 3);
    unsigned prom = prom_kind == 0   ? 0
                    : prom_kind == 1 ? RMC_PROMISE_INSERT
                                     : RMC_PROMISE_INSERT | RMC_PROMISE_FIND;
    char *won = calloc((size_t)cnt, 1);
    for (int k = 0; k < nm; k++) {
        int id = order[k];
        uint64_t v = kv_winval(id, me);
        rmc_status_t st = rmc_kv_insert(V.kv, &V.key[id], &v, prom | pick_path(r));
        V.n_ins++;
        if (st == RMC_OK)
            won[id - lo] = 1;
        else if (st == RMC_ERR_EXISTS && id < lo + ns)
            V.n_exists++;
        else
            FAIL_ST(st, "kv insert of %s key %d", id < lo + ns ? "shared" : "own", id);
    }
    barrier();
    char *all = malloc((size_t)np * (size_t)cnt);
    allgather(won, all, cnt);
    int nsh = ns, nown = cnt - ns;
    for (int id = lo; id < hi; id++) {
        int winners = 0, w = -1;
        for (int q = 0; q < np; q++)
            if (all[(size_t)q * (size_t)cnt + (size_t)(id - lo)])
                winners++, w = q;
        if (winners != 1)
            FAIL("kv key %d inserted by %s: %d inserts returned RMC_OK", id,
                 id < lo + ns ? "every rank" : "one rank", winners);
        V.val[id] = kv_winval(id, w < 0 ? 0 : w);
    }
    V.nkeys = hi;
    rmc_kv_counters_t c1 = kv_counters();
    unsigned long long d1 = c1.collisions - V.c.collisions;
    if (c1.entries != V.c.entries + (unsigned long long)cnt ||
        c1.inserts != V.c.inserts + (unsigned long long)cnt ||
        c1.exists != V.c.exists + (unsigned long long)nsh * (unsigned long long)(np - 1) ||
        c1.collisions < V.c.collisions)
        FAIL("kv counters after inserting %d keys (%d by every rank): entries %llu -> %llu, "
             "inserts %llu -> %llu, exists %llu -> %llu, collisions %llu -> %llu",
             cnt, nsh, V.c.entries, c1.entries, V.c.inserts, c1.inserts, V.c.exists, c1.exists,
             V.c.collisions, c1.collisions);
    V.c = c1;
    /* again: all refused, nothing changed, the same collisions */
    where = "kv insert again";
    for (int k = 0; k < nm; k++) {
        int id = order[(k + 1) % nm];
        uint64_t v = ~kv_winval(id, me);
        rmc_status_t st = rmc_kv_insert(V.kv, &V.key[id], &v, prom | pick_path(r));
        if (st != RMC_ERR_EXISTS)
            FAIL_ST(st, "kv insert of present key %d", id);
    }
    barrier();
    rmc_kv_counters_t c2 = kv_counters();
    unsigned long long d2 = c2.collisions - V.c.collisions;
    if (c2.entries != V.c.entries || c2.inserts != V.c.inserts ||
        c2.exists != V.c.exists + (unsigned long long)(nsh * np + nown) || d2 != d1)
        FAIL("kv counters after inserting the %d keys again: entries %llu -> %llu, inserts %llu "
             "-> %llu, exists %llu -> %llu (want +%d), collisions +%llu (first pass +%llu)",
             cnt, V.c.entries, c2.entries, V.c.inserts, c2.inserts, V.c.exists, c2.exists,
             nsh * np + nown, d2, d1);
    V.c = c2;
    if (TRACE && me == 0)
        printf("  inserted %d keys (%d by every rank): collisions +%llu, again +%llu\n", cnt, nsh,
               d1, d2);
    free(order);
    free(won);
    free(all);
}

static int cmp_add(const void *a, const void *b)
{
    const addrec_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->old < y->old ? -1 : x->old > y->old; /* offsets from the start (see kv_verify) */
}

/* per key: the adds' old values form one chain from the start value; reads are its states */
static void kv_verify(addrec_t *adds, int nadds, readrec_t *reads, int nreads, const uint64_t *v0,
                      uint64_t *final)
{
    /* old as an offset from the start value: the chain is increasing in it (positive deltas,
     * sums far below 2^64) */
    for (int i = 0; i < nadds; i++)
        adds[i].old -= v0[adds[i].id];
    qsort(adds, (size_t)nadds, sizeof *adds, cmp_add);
    int nk = V.nkeys;
    uint64_t *sum = calloc((size_t)nk, sizeof *sum);
    for (int i = 0; i < nadds;) {
        int id = adds[i].id, j = i;
        uint64_t cur = 0;
        int chain = id % 5 != 0; /* the others' adds pass old = NULL */
        while (j < nadds && adds[j].id == id) {
            if (chain && adds[j].old != cur) {
                FAIL("kv key %d: an add (rank %d, delta %" PRIu64
                     ") returned old = start + %" PRIu64 ", but the adds before it sum to %" PRIu64
                     " (not one atomic chain)",
                     id, adds[j].rank, adds[j].delta, adds[j].old, cur);
                chain = 0;
            }
            cur += adds[j].delta;
            j++;
        }
        sum[id] = cur;
        i = j;
    }
    /* reads: a chain state (chain keys), at most the total, and never back for one reader */
    for (int i = 0; i < nreads; i++) {
        readrec_t *x = &reads[i];
        uint64_t off = x->v - v0[x->id];
        if (off > sum[x->id]) {
            FAIL("kv key %d: rank %d read start + %" PRIu64 ", beyond the sum of all adds %" PRIu64,
                 x->id, x->rank, off, sum[x->id]);
            continue;
        }
        if (x->id % 5 != 0) { /* a state of the chain: start + the deltas of a prefix */
            int found = off == 0;
            uint64_t cur = 0;
            for (int j = 0; j < nadds && !found; j++)
                if (adds[j].id == x->id) {
                    cur += adds[j].delta;
                    found = cur == off;
                }
            if (!found)
                FAIL("kv key %d: rank %d read start + %" PRIu64 ", no state of the add chain",
                     x->id, x->rank, off);
        }
        for (int j = i + 1; j < nreads; j++) /* the next read of this key by this rank */
            if (reads[j].rank == x->rank && reads[j].id == x->id) {
                if (reads[j].v - v0[x->id] < off)
                    FAIL("kv key %d: rank %d read start + %" PRIu64 " after start + %" PRIu64,
                         x->id, x->rank, reads[j].v - v0[x->id], off);
                break;
            }
    }
    for (int id = 0; id < nk; id++)
        final[id] = v0[id] + sum[id];
    free(sum);
}

typedef struct {
    char *seen;
    int n, bad, stop_at;
} kvisit_t;
static int kv_visit(const void *key, const void *value, void *arg)
{
    kvisit_t *t = arg;
    int64_t k;
    uint64_t v;
    memcpy(&k, key, 8);
    memcpy(&v, value, 8);
    t->n++;
    int id = -1;
    for (int i = 0; i < V.nkeys && id < 0; i++)
        if (V.key[i] == k)
            id = i;
    if (id < 0) {
        FAIL("kv local_foreach: a key not in the store: %" PRId64, k);
        t->bad++;
    } else {
        if (t->seen[id]++)
            FAIL("kv local_foreach: key %d visited twice", id);
        if (V.owner[id] != me)
            FAIL("kv local_foreach: key %d of rank %d visited here", id, V.owner[id]);
        if (v != V.val[id])
            FAIL("kv local_foreach: key %d holds %" PRIu64 ", model %" PRIu64, id, v, V.val[id]);
    }
    return t->stop_at && t->n == t->stop_at ? 7 : 0;
}

static void kv_adds(uint64_t *shared, uint64_t *r)
{
    where = "kv adds";
    int hot[4];
    for (int i = 0; i < 4; i++)
        hot[i] = (int)rn(shared, (size_t)V.nkeys);
    addrec_t *adds = malloc((size_t)OPS * sizeof *adds);
    readrec_t *reads = malloc((size_t)OPS * sizeof *reads);
    int na = 0, nr = 0;
    barrier();
    for (int op = 0; op < OPS; op++) {
        int id = rn(r, 2) ? hot[rn(r, 4)] : (int)rn(r, (size_t)V.nkeys);
        unsigned x = rn(r, 100),
                 flags = pick_path(r) | (rn(r, 2) ? 0 : RMC_PROMISE_FIND | RMC_PROMISE_ERASE);
        rmc_status_t st;
        if (x < 65) {
            uint64_t delta = rn(r, 4) ? 1 + rn(r, 1u << 20) : 1 + (mpitest_splitmix(r) >> 24);
            int64_t old = 0x5EED;
            int blind = id % 5 == 0;
            st = rmc_kv_add(V.kv, &V.key[id], (int64_t)delta, blind ? NULL : &old, flags);
            V.n_add++;
            if (st != RMC_OK)
                FAIL_ST(st, "kv add to key %d", id);
            else
                adds[na++] = (addrec_t){id, me, blind ? 0 : (uint64_t)old, delta};
        } else if (x < 95) {
            uint64_t v = 0;
            st = rmc_kv_read(V.kv, &V.key[id], &v, flags);
            V.n_read++;
            if (st != RMC_OK)
                FAIL_ST(st, "kv read of key %d", id);
            else
                reads[nr] = (readrec_t){id, me, nr, 0, v}, nr++;
        } else { /* a key that is not there */
            int64_t k = (int64_t)mpitest_mix64((uint64_t)op ^ 0xABCDull ^ ((uint64_t)me << 50)) | 1;
            int64_t old = 0;
            st = rmc_kv_add(V.kv, &k, 5, &old, flags);
            V.n_nf++;
            if (st != RMC_ERR_NOT_FOUND)
                FAIL_ST(st, "kv add to an absent key");
        }
    }
    barrier();
    rmc_kv_counters_t c = kv_counters();
    if (memcmp(&c, &V.c, sizeof c))
        FAIL("kv counters changed by adds and reads: entries %llu -> %llu, inserts %llu -> %llu, "
             "exists %llu -> %llu, collisions %llu -> %llu",
             V.c.entries, c.entries, V.c.inserts, c.inserts, V.c.exists, c.exists, V.c.collisions,
             c.collisions);
    /* every rank's records, checked by every rank (fixed-size exchange) */
    where = "kv verify";
    int cnt[2] = {na, nr}, *cnts = malloc(2 * (size_t)np * sizeof *cnts);
    allgather(cnt, cnts, (int)sizeof cnt);
    addrec_t *aa = malloc((size_t)np * (size_t)OPS * sizeof *aa);
    readrec_t *ra = malloc((size_t)np * (size_t)OPS * sizeof *ra);
    allgather(adds, aa, OPS * (int)sizeof *adds);
    allgather(reads, ra, OPS * (int)sizeof *reads);
    int ta = 0, tr = 0;
    for (int q = 0; q < np; q++) {
        memmove(aa + ta, aa + (size_t)q * (size_t)OPS, (size_t)cnts[2 * q] * sizeof *aa);
        ta += cnts[2 * q];
        memmove(ra + tr, ra + (size_t)q * (size_t)OPS, (size_t)cnts[2 * q + 1] * sizeof *ra);
        tr += cnts[2 * q + 1];
    }
    uint64_t *fin = malloc((size_t)V.nkeys * sizeof *fin);
    kv_verify(aa, ta, ra, tr, V.val, fin);
    memcpy(V.val, fin, (size_t)V.nkeys * sizeof *fin);
    if (SABOTAGE == 4)
        V.val[hot[0]] += 1;
    free(fin);
    free(aa);
    free(ra);
    free(cnts);
    free(adds);
    free(reads);
}

/* every key read by every rank; the owners' local iteration */
static void kv_check_all(uint64_t *r)
{
    where = "kv check";
    for (int id = 0; id < V.nkeys; id++) {
        uint64_t v = 0;
        rmc_status_t st = rmc_kv_read(V.kv, &V.key[id], &v, pick_path(r));
        if (st != RMC_OK || v != V.val[id])
            FAIL("kv read of key %d: %s, %" PRIu64 " (model %" PRIu64 ")", id,
                 rmc_status_string(st), v, V.val[id]);
    }
    barrier();
    int mine = 0;
    for (int id = 0; id < V.nkeys; id++)
        mine += V.owner[id] == me;
    kvisit_t t = {calloc((size_t)V.nkeys, 1), 0, 0, 0};
    int stopped = -1;
    rmc_status_t st = rmc_kv_local_foreach(V.kv, kv_visit, &t, &stopped);
    if (st != RMC_OK || stopped != 0 || t.n != mine)
        FAIL("kv local_foreach: %s, stopped %d, %d entries visited, this rank owns %d",
             rmc_status_string(st), stopped, t.n, mine);
    for (int id = 0; id < V.nkeys; id++)
        if (V.owner[id] == me && !t.seen[id])
            FAIL("kv local_foreach: key %d (owned here) not visited", id);
    if (mine > 1) { /* stopping after some */
        memset(t.seen, 0, (size_t)V.nkeys);
        t.n = 0;
        t.stop_at = 1 + (int)rn(r, (size_t)mine);
        st = rmc_kv_local_foreach(V.kv, kv_visit, &t, &stopped);
        if (st != RMC_OK || stopped != 7 || t.n != t.stop_at)
            FAIL("kv local_foreach told to stop at %d: %s, stopped %d, %d visited", t.stop_at,
                 rmc_status_string(st), stopped, t.n);
    }
    free(t.seen);
    barrier();
    rmc_kv_counters_t c = kv_counters();
    if (c.entries != (unsigned long long)V.nkeys)
        FAIL("kv counters: %llu entries, %d keys", c.entries, V.nkeys);
}

static void test_kv(void **state)
{
    (void)state;
    begin("kv");
    memset(&V, 0, sizeof V);
    uint64_t shared = mpitest_mix64(SEED ^ 0x4B5A),
             r = mpitest_mix64(SEED * 1000099u + (uint64_t)me + 11);
    if (!thread_mode) { /* no RPC path in MPI AMO mode */
        rmc_kv_h bad = NULL;
        MPI_CHECK_ALL(rmc_kv_create(64, &rmc_type_i64, &rmc_type_i64, RMC_HASHMAP_RPC, &bad) ==
                          RMC_ERR_UNSUPPORTED &&
                      bad == NULL);
    }
    for (phase_no = 0; phase_no < PHASES; phase_no++) {
        setup_phase_alarm();
        int ns = 4 + (int)rn(&shared, np > 2 ? 12 : 28), nown = (int)rn(&shared, 8) * np;
        if (!V.kv || rn(&shared, 3) == 0 || V.nkeys + ns + nown > KVMAXKEYS)
            kv_create(&shared);
        if (!thread_mode && phase_no == 0) {
            int64_t k = 1;
            rmc_status_t st = rmc_kv_add(V.kv, &k, 1, NULL, RMC_HASHMAP_RPC);
            if (st != RMC_ERR_UNSUPPORTED)
                FAIL("kv add forced RPC in MPI AMO mode -> %s", rmc_status_string(st));
        }
        kv_race(V.nkeys, ns, V.nkeys + ns + nown, &r);
        kv_check_all(&r);
        kv_adds(&shared, &r);
        kv_check_all(&r);
        if (TRACE && me == 0)
            printf("kv phase %d: %d keys, t %.2f\n", phase_no, V.nkeys, MPI_Wtime());
        if (!agree())
            break;
    }
    alarm(0);
    if (TRACE)
        fprintf(stderr,
                "[rank %d] kv: %ld inserts (%ld refused), %ld adds, %ld reads, %ld absent\n", me,
                V.n_ins, V.n_exists, V.n_add, V.n_read, V.n_nf);
    MPI_CHECK_ALL(fails == 0);
    MPI_CHECK_OK(rmc_kv_destroy(V.kv));
    free(V.key);
    free(V.val);
    free(V.owner);
}

/* ----------------------------------------------------------------- setup --- */
static int setup(void **state)
{
    (void)state;
    /* a small reservation, so that filling the segment is quick (unless the run sets one) */
    setenv("RMC_SEGMENT_SIZE", "2M", 0);
    setenv("RMC_SEGMENT_RESERVE", "32M", 0);
    SEED = (uint64_t)strtoull(
        getenv("RMC_FUZZ_SEED") && *getenv("RMC_FUZZ_SEED") ? getenv("RMC_FUZZ_SEED") : "1", NULL,
        0);
    OPS = (int)envl("RMC_FUZZ_OPS", 150);
    PHASES = (int)envl("RMC_FUZZ_PHASES", 4);
    SABOTAGE = (int)envl("RMC_FUZZ_SABOTAGE", 0);
    TRACE = (int)envl("RMC_FUZZ_TRACE", 0);
    ALARM = (int)envl("RMC_FUZZ_ALARM", 120);
    NOZERO = (int)envl("RMC_FUZZ_NOZERO", 0);
    if (OPS < 1)
        OPS = 1;
    signal(SIGALRM, on_alarm);
    return cttest_setup_env(NULL);
}

MPITEST_MAIN("fuzz_containers", setup, mpitest_teardown_rmc, test_alloc, test_array, test_bloom,
             test_kv)
