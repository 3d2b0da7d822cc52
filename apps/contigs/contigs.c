/* Contig generation (Meraculous; seed 000 §8.2, seed 001 §6.3) on RMC's hash map, beside an
 * MPI-only reference and checked against a serial assembly of the same reads.
 *
 * Input (apps/dna.h, as k-mer counting): a random genome of G bases and, on every rank, R reads of
 * L bases drawn from it with errors at rate E. k is odd (<= 31), so no k-mer is its own reverse
 * complement; a random genome of these sizes has no repeated k-mer (the runs count them), so its
 * contigs are well defined.
 *
 * The graph (Meraculous' "UU graph"; every part below uses these rules):
 *  - an occurrence: a k-mer of a read in canonical form (the smaller of it and its reverse
 *    complement) with the base before and the base after it in the read (none at a read's end),
 *    in the canonical orientation (read reverse-complemented, they swap and are complemented);
 *  - per k-mer: its count and, per side, a count of each base seen there;
 *  - a side's extension: the one base seen at least min_ext times if exactly one is; 'X' (an end)
 *    if none is, 'F' (a fork) if several are;
 *  - UU k-mer: count >= min_count and a unique extension on both sides; only those are in the
 *    graph. The k-mer -> (left, right) extension map holds them;
 *  - an edge: an oriented UU k-mer K with right extension r leads to N = K[1..k) r when N's
 *    canonical form is a UU k-mer other than K's and N's left extension (in N's orientation) is
 *    K's first base: the same condition seen from N, so each side of a k-mer has at most one edge;
 *  - so the graph is disjoint paths and cycles, each a contig: its first k-mer, then one base per
 *    further k-mer. A cycle starts at its smallest k-mer, canonical orientation, going right. Two
 *    contigs are the same when their strings are equal or reverse complements: each is kept as the
 *    smaller of the two.
 *
 *   RMC    k-mer analysis, as k-mer counting (apps/kmer/kmer.c): each rank sorts its occurrences
 *          (radix sort) into (k-mer, count, extension counts); pass 1 sends each distinct k-mer
 *          with its count to its owner through a HashMapBuffer, and the owner's filter lets one
 *          that a rank holds twice into the map at once, one held once when its own blocked
 *          Bloom filter had seen it (with --remote-filter, and in the test's third input: the
 *          holder asks RMC's distributed Bloom filter first; min_count 1: every k-mer, no
 *          filter); pass 2 adds every rank's counts and extension counts through a
 *          combining HashMapBuffer. Extension map: each rank scans the entries it owns
 *          (rmc_hashmap_local_foreach) and puts its UU k-mers into a second map, k-mer -> (left,
 *          right) bases; with the same key type a key has the same owner there, so these are
 *          RMC_PROMISE_LOCAL inserts (plain stores).
 *          Walk: from every UU k-mer it owns each rank walks right and left at once (a step on
 *          each side per round of lookups), finding the next k-mers in the extension map: only
 *          finds run, so RMC_PROMISE_FIND (one read a probe, no atomic), the lookups of `batch`
 *          walks at once through rmc_hashmap_find_n (their reads overlap).
 *          Duplicates: a walk gives up when it meets a k-mer smaller than its seed, so only the
 *          walk from a contig's smallest k-mer finishes, and it emits the contig: each contig once,
 *          without a lock or a mark, the same set every run, cycles included. The price: a walk
 *          from a random k-mer of a contig of n goes ~ln n steps to a smaller one, ~ln n finds per
 *          k-mer (the runs print lookups per UU k-mer). Marking k-mers used (seed 000's locking,
 *          rmc_hashmap_update) costs an update (3A + 2R + W) per k-mer instead of a read, and two
 *          walks that meet split a contig, to be joined afterwards; walking only from contig ends
 *          costs two finds per k-mer to find the ends, walks every contig from both of them, and
 *          misses cycles.
 *   MPI    analysis: each rank's (k-mer, counts) records to their owners (a hash) by MPI_Alltoall +
 *          MPI_Alltoallv; owners merge them and keep their UU k-mers in a sorted array. Walk: the
 *          same walks, all at once, in rounds (bulk-synchronous request and reply): each round an
 *          MPI_Alltoall of the counts (which also says whether any rank still walks), an
 *          MPI_Alltoallv of every walk's next k-mers to their owners and one of the answers back.
 *          As many rounds as the longest walk has steps on its longer side (the walk of the
 *          longest contig from its smallest k-mer): up to that contig's length.
 * Verification (every run): RMC's and MPI's contig sets agree (contigs, bases, mix-sum of the
 * strings); with -DCONTIGS_TEST (tests/mpi/test_contigs) both also equal, string by string, a
 * reference assembly on rank 0 that shares nothing with them but the input (every rank's reads as
 * text; k-mers, reverse complements, extensions and the graph's edges built as strings in a hash
 * table of its own; unique paths walked into contigs; every UU k-mer in exactly one contig); the
 * test also checks the contigs against the genome (error-free reads of a linear genome: exactly
 * the contigs the reads' places on it imply; a circular genome: the whole circle).
 *
 * One source, two programs (apps/Makefile.inc): bench/bench_contigs (tables: ns per k-mer of the
 * analysis, ns per UU k-mer of the walk, contigs per second; options --genome G --reads R --len L
 * --k K --err E --min-count C --min-ext X --batch W --remote-filter and the common ones) and
 * tests/mpi/test_contigs.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#include <rmc/containers.h>
#include "bench_util.h"
#include "dna.h"

enum { NONE = 4 };             /* no base: a read's end */
enum { EXT_X = 4, EXT_F = 5 }; /* a side without an extension, with several */
enum { ABSENT = 0xff };        /* uu_t.l of an answer: no such UU k-mer */

/* A k-mer's count and how often each base was seen before it (ext[0]) and after it (ext[1]),
 * canonical orientation. Extension counts stop at 65535 (enough for any min_ext). */
typedef struct kext {
    uint32_t count;
    uint16_t ext[2][4];
} kext_t;

typedef struct kent {
    uint64_t kmer;
    kext_t v;
} kent_t;

/* One occurrence: canonical k-mer, bases before (l) and after (r) it, NONE at a read's end. */
typedef struct occ {
    uint64_t kmer;
    uint8_t l, r;
} occ_t;

/* A UU k-mer's extensions (the value of the extension map). */
typedef struct uu {
    uint8_t l, r;
} uu_t;

typedef struct uent {
    uint64_t kmer;
    uu_t e;
} uent_t;

typedef struct bases {
    uint8_t *b;
    size_t n, cap;
} bases_t;

/* Contigs as text ("ACGT...", canonical: the smaller of a contig and its reverse complement). */
typedef struct cset {
    char **s;
    size_t n, cap;
} cset_t;

typedef struct ctg {
    int me, np, err;
    dna_cfg_t c;
    int min_count, min_ext, batch;
    int remote; /* pass 1's filter: RMC's distributed Bloom filter (else the owners' own) */
    uint64_t mask;
    occ_t *occ; /* this rank's occurrences, as read */
    size_t nocc;
} ctg_t;

/* What one assembly found (this rank's part): the contigs, UU k-mers, lookups of the walk. */
typedef struct result {
    cset_t set;
    uint64_t uu, looks;
} result_t;

static int ok_st(ctg_t *x, rmc_status_t st, const char *what)
{
    return dna_ok("contigs", x->me, &x->err, st, what);
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        bench_fail("out of memory (%zu bytes)", n);
    return p;
}

static void grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        bench_fail("out of memory (%zu bytes)", c * size);
    *p = q;
    *cap = c;
}

static void push_base(bases_t *b, uint8_t v)
{
    grow((void **)&b->b, &b->cap, b->n + 1, 1);
    b->b[b->n++] = v;
}

static void cset_add(cset_t *c, char *s)
{
    grow((void **)&c->s, &c->cap, c->n + 1, sizeof(char *));
    c->s[c->n++] = s;
}

static void cset_free(cset_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->s[i]);
    free(c->s);
    *c = (cset_t){0};
}

/* ---------------------------------------------------------------------------- input --- */

/* This rank's occurrences, from its reads (apps/dna.h). */
static void make_input(ctg_t *x, const unsigned char *reads, size_t nreads)
{
    const dna_cfg_t *c = &x->c;
    int k = c->k;
    size_t per = c->len - (size_t)k + 1;
    free(x->occ);
    x->occ = xalloc(dna_mul(dna_mul(nreads, per, "occurrences"), sizeof(occ_t), "occurrences"));
    x->nocc = 0;
    for (size_t r = 0; r < nreads; r++) {
        const unsigned char *read = reads + r * c->len;
        uint64_t v = 0, rc = 0;
        for (size_t i = 0; i < c->len; i++) {
            v = ((v << 2) | read[i]) & x->mask;
            rc = (rc >> 2) | ((uint64_t)(3 - read[i]) << (2 * (k - 1)));
            if (i + 1 < (size_t)k)
                continue;
            size_t at = i + 1 - (size_t)k; /* the k-mer's first base */
            uint8_t l = at > 0 ? read[at - 1] : NONE, rt = i + 1 < c->len ? read[i + 1] : NONE;
            occ_t *o = &x->occ[x->nocc++];
            if (v < rc)
                *o = (occ_t){v, l, rt};
            else /* read as its reverse complement: the sides swap and are complemented */
                *o = (occ_t){rc, rt == NONE ? NONE : (uint8_t)(3 - rt),
                             l == NONE ? NONE : (uint8_t)(3 - l)};
        }
    }
}

static void setup(ctg_t *x)
{
    x->mask = dna_mask(x->c.k);
    unsigned char *g = dna_genome(x->c.genome), *reads = dna_reads(&x->c, g, x->me);
    make_input(x, reads, x->c.reads);
    free(reads);
    free(g);
}

/* --------------------------------------------------------------------------- k-mers --- */

/* o += in (combining function of the maps and the merges). */
static rmc_status_t kext_add(void *value, void *arg)
{
    kext_t *o = value;
    const kext_t *in = arg;
    o->count += in->count;
    for (int s = 0; s < 2; s++)
        for (int b = 0; b < 4; b++) {
            uint32_t v = (uint32_t)o->ext[s][b] + in->ext[s][b];
            o->ext[s][b] = (uint16_t)(v > 65535 ? 65535 : v);
        }
    return RMC_OK;
}

/* Sorts o[0..n) and writes each distinct k-mer with its counts into out; returns how many. */
static size_t aggregate(const ctg_t *x, occ_t *o, size_t n, kent_t *out)
{
    dna_sort_kmers(o, n, sizeof(occ_t), x->c.k);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!m || out[m - 1].kmer != o[i].kmer)
            out[m++] = (kent_t){o[i].kmer, {0, {{0}}}};
        kext_t one = {1, {{0}}};
        if (o[i].l != NONE)
            one.ext[0][o[i].l] = 1;
        if (o[i].r != NONE)
            one.ext[1][o[i].r] = 1;
        kext_add(&out[m - 1].v, &one);
    }
    return m;
}

/* Merges runs of one k-mer in sorted e[0..n) in place (adding their counts); returns how many. */
static size_t merge_sorted(kent_t *e, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && e[m - 1].kmer == e[i].kmer)
            kext_add(&e[m - 1].v, &e[i].v);
        else
            e[m++] = e[i];
    }
    return m;
}

/* A side's extension from its base counts: the base, EXT_X or EXT_F. */
static int side_ext(const uint16_t e[4], int min_ext)
{
    int got = EXT_X;
    for (int b = 0; b < 4; b++)
        if (e[b] >= min_ext)
            got = got == EXT_X ? b : EXT_F;
    return got;
}

/* 1 (and *u) when v makes its k-mer a UU k-mer. */
static int uu_of(const ctg_t *x, const kext_t *v, uu_t *u)
{
    if (v->count < (uint32_t)x->min_count)
        return 0;
    int l = side_ext(v->ext[0], x->min_ext), r = side_ext(v->ext[1], x->min_ext);
    if (l > 3 || r > 3)
        return 0;
    *u = (uu_t){(uint8_t)l, (uint8_t)r};
    return 1;
}

/* The UU entries of sorted e[0..n) into u (sorted too); returns how many. */
static size_t uu_filter(const ctg_t *x, const kent_t *e, size_t n, uent_t *u)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (uu_of(x, &e[i].v, &u[m].e))
            u[m++].kmer = e[i].kmer;
    return m;
}

/* The index of key in sorted u[0..n), or -1. */
static long uu_find(const uent_t *u, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid].kmer < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && u[lo].kmer == key ? (long)lo : -1;
}

/* ----------------------------------------------------------------------------- walks --- */

/* A walk from a seed goes both ways at once, a step on each side per lookup round (so the longest
 * walk, the critical path, takes the longer side's steps, not both sides'). Side 0 goes right from
 * the seed, side 1 left: right from the seed's reverse complement. A side's tip is the oriented
 * k-mer it reached, with its canonical form and its extensions in its orientation. */
typedef struct side {
    uint64_t tip, tipc;
    uu_t e;
    int on;      /* still going */
    bases_t add; /* the bases it added */
} side_t;

typedef struct walk {
    uint64_t seed;
    int cycle;   /* side 0 came back to the seed: the contig is a cycle, side 0's bases all of it */
    int aborted; /* it met a smaller k-mer, whose own walk emits the contig */
    side_t s[2];
} walk_t;

static uu_t flip(uu_t e)
{
    return (uu_t){(uint8_t)(3 - e.r), (uint8_t)(3 - e.l)};
}

static void walk_start(walk_t *w, const ctg_t *x, uint64_t seed, uu_t e)
{
    w->seed = seed;
    w->cycle = w->aborted = 0;
    w->s[0].tip = seed;
    w->s[0].e = e;
    w->s[1].tip = dna_revcomp(seed, x->c.k);
    w->s[1].e = flip(e);
    for (int j = 0; j < 2; j++) {
        w->s[j].tipc = seed;
        w->s[j].on = 1;
        w->s[j].add.n = 0;
    }
}

static int walk_live(const walk_t *w)
{
    return w->s[0].on || w->s[1].on;
}

/* The oriented k-mer after a side's tip; its canonical form (what the walk looks up) in *key. */
static uint64_t walk_next(const side_t *s, const ctg_t *x, uint64_t *key)
{
    uint64_t n = ((s->tip << 2) | s->e.r) & x->mask;
    *key = dna_canon(n, x->c.k);
    return n;
}

/* Moves side j of w by the answer for its next k-mer (found: a UU k-mer with extensions ce,
 * canonical orientation): on, or the side ends, or the walk aborts. When no side is on the walk is
 * over: its contig is whole unless it aborted. */
static void walk_step(walk_t *w, int j, const ctg_t *x, int found, uu_t ce)
{
    int k = x->c.k;
    side_t *s = &w->s[j];
    if (!s->on)
        return; /* ended (or aborted) by an earlier answer of this round */
    uint64_t key, n = walk_next(s, x, &key);
    uu_t ne = n == key ? ce : flip(ce);
    int joined = found && key != s->tipc && ne.l == (s->tip >> (2 * (k - 1)));
    if (joined && key < w->seed) {
        w->aborted = 1;
        w->s[0].on = w->s[1].on = 0;
    } else if (joined && key == w->seed) { /* around a cycle, back at its smallest k-mer */
        s->on = 0;
        if (j == 0) { /* side 1 went round the other way: its bases are not needed */
            w->cycle = 1;
            w->s[1].on = 0;
        }
    } else if (!joined) {
        s->on = 0;
    } else {
        push_base(&s->add, s->e.r);
        s->tip = n;
        s->tipc = key;
        s->e = ne;
    }
}

/* The contig w walked, as canonical text, into out. */
static void emit(const ctg_t *x, const walk_t *w, cset_t *out)
{
    int k = x->c.k;
    const bases_t *right = &w->s[0].add, *left = &w->s[1].add;
    size_t n1 = w->cycle ? 0 : left->n, n0 = right->n, len = n1 + (size_t)k + n0;
    uint8_t *b = xalloc(len);
    for (size_t i = 0; i < n1; i++) /* the left side, walked reverse-complemented */
        b[i] = (uint8_t)(3 - left->b[n1 - 1 - i]);
    for (int j = 0; j < k; j++)
        b[n1 + (size_t)j] = (uint8_t)((w->seed >> (2 * (k - 1 - j))) & 3);
    memcpy(b + n1 + (size_t)k, right->b, n0);
    int rev = 0; /* is the reverse complement smaller? */
    for (size_t i = 0; i < len; i++) {
        uint8_t f = b[i], r = (uint8_t)(3 - b[len - 1 - i]);
        if (f != r) {
            rev = r < f;
            break;
        }
    }
    char *s = xalloc(len + 1);
    for (size_t i = 0; i < len; i++)
        s[i] = "ACGT"[rev ? 3 - b[len - 1 - i] : b[i]];
    s[len] = 0;
    free(b);
    cset_add(out, s);
}

static void walks_free(walk_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(w[i].s[0].add.b);
        free(w[i].s[1].add.b);
    }
    free(w);
}

/* The slowest rank's ns per unit: ns this rank took over `all` units of every rank shared by the
 * ranks. Collective. */
static double slowest(const ctg_t *x, uint64_t ns, size_t all)
{
    double mine = (double)ns / ((double)(all ? all : 1) / x->np), max;
    MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

/* ------------------------------------------------------------------------------ RMC --- */

typedef struct collect {
    const ctg_t *x;
    uent_t *u;
    size_t n, cap;
} collect_t;

static int keep_uu(const void *key, const void *value, void *arg)
{
    collect_t *c = arg;
    kext_t v;
    uu_t e;
    memcpy(&v, value, sizeof v);
    if (!uu_of(c->x, &v, &e))
        return 0;
    grow((void **)&c->u, &c->cap, c->n + 1, sizeof(uent_t));
    memcpy(&c->u[c->n].kmer, key, sizeof(uint64_t));
    c->u[c->n++].e = e;
    return 0;
}

static const rmc_type_t type_kext = RMC_TYPE_FIXED("contigs_kext", sizeof(kext_t));
static const rmc_type_t type_uu = RMC_TYPE_FIXED("contigs_uu", sizeof(uu_t));

/* The RMC k-mer analysis: ns per occurrence of pass 1, pass 2 and the extension map (max over
 * ranks) in t[0..2]; the extension map in *em (NULL after an error), this rank's UU k-mers (the
 * walks' seeds) in *seeds. */
static void analyse_rmc(ctg_t *x, double *t, rmc_hashmap_h *em, collect_t *seeds)
{
    size_t total = 0, n = x->nocc;
    MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    int filter = x->min_count >= 2; /* else every k-mer counts, singletons too */
    int remote = filter && x->remote, owners = filter && !x->remote;
    rmc_bloom_h f = NULL;
    dna_ofilter_t of = {0};
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    *em = NULL;
    /* room: every genome k-mer and the filter's false positives (or every k-mer) */
    size_t cap = 2 * (x->c.genome + (filter ? total / 50 : total)) + 1024;
    if ((remote && !ok_st(x, rmc_bloom_create(RMC_BLOOM_BLOCKED, total, 0.01, &rmc_type_u64, &f),
                          "rmc_bloom_create")) ||
        !ok_st(x, rmc_hashmap_create(cap, &rmc_type_u64, &type_kext, &h), "rmc_hashmap_create") ||
        !ok_st(x, rmc_hashmap_buffer_create(h, 1 << 16, 512, &b), "rmc_hashmap_buffer_create"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (owners) /* (kext_t starts with its uint32_t count) */
        ok_st(x, dna_ofilter_attach(&of, b, total, x->np, sizeof(kext_t), 0), "dna_ofilter_attach");
    ok_st(x, rmc_barrier(), "rmc_barrier");
    uint64_t t0 = bench_now_ns();
    occ_t *v = xalloc(n * sizeof(occ_t));
    kent_t *loc = xalloc(n * sizeof(kent_t));
    memcpy(v, x->occ, n * sizeof(occ_t));
    size_t m = aggregate(x, v, n, loc); /* this rank's distinct k-mers and their counts */
    kext_t zero = {0, {{0}}};
    for (size_t i = 0; i < m && !x->err; i++) {
        if (owners) { /* the owner decides (dna_ofilter_admit) */
            ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &loc[i].v),
                  "rmc_hashmap_buffer_insert");
            continue;
        }
        int was = 1; /* held twice here (or no filter): into the map without asking the filter */
        if (remote && loc[i].v.count == 1)
            ok_st(x, rmc_bloom_insert(f, &loc[i].kmer, &was, 0), "rmc_bloom_insert");
        if (was)
            ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &zero),
                  "rmc_hashmap_buffer_insert");
    }
    ok_st(x, rmc_hashmap_buffer_flush(b), "rmc_hashmap_buffer_flush");
    if (owners)
        ok_st(x, dna_ofilter_detach(&of, b), "dna_ofilter_detach");
    uint64_t t1 = bench_now_ns();
    /* the counts batched to their owners, who add them (absent: a singleton, dropped) */
    ok_st(x, rmc_hashmap_buffer_combine(b, kext_add, 1), "rmc_hashmap_buffer_combine");
    for (size_t i = 0; i < m && !x->err; i++)
        ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &loc[i].v),
              "rmc_hashmap_buffer_insert");
    ok_st(x, rmc_hashmap_buffer_flush(b), "rmc_hashmap_buffer_flush");
    uint64_t t2 = bench_now_ns();
    seeds->x = x;
    seeds->n = 0;
    ok_st(x, rmc_hashmap_local_foreach(h, keep_uu, seeds, NULL), "rmc_hashmap_local_foreach");
    size_t nuu = 0;
    MPI_Allreduce(&seeds->n, &nuu, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    uint64_t t3 = bench_now_ns(); /* (the extension map's creation is not timed, as the others) */
    int made = ok_st(x, rmc_hashmap_create(2 * nuu + 1024, &rmc_type_u64, &type_uu, em),
                     "rmc_hashmap_create");
    uint64_t t4 = bench_now_ns();
    for (size_t i = 0; made && i < seeds->n && !x->err; i++) /* its own keys: plain stores */
        ok_st(x, rmc_hashmap_insert(*em, &seeds->u[i].kmer, &seeds->u[i].e, RMC_PROMISE_LOCAL),
              "rmc_hashmap_insert (local)");
    ok_st(x, rmc_barrier(), "rmc_barrier");
    uint64_t t5 = bench_now_ns();
    t[0] = slowest(x, t1 - t0, total);
    t[1] = slowest(x, t2 - t1, total);
    t[2] = slowest(x, t3 - t2 + t5 - t4, total);
    ok_st(x, rmc_hashmap_buffer_destroy(b), "rmc_hashmap_buffer_destroy");
    ok_st(x, rmc_hashmap_destroy(h), "rmc_hashmap_destroy");
    if (f)
        ok_st(x, rmc_bloom_destroy(f), "rmc_bloom_destroy");
    if (!made)
        *em = NULL;
    free(v);
    free(loc);
}

/* The RMC walk from every seed, `batch` walks at a time, their lookups (one per side that is on)
 * through rmc_hashmap_find_n: ns per UU k-mer (max over ranks) in *t, the contigs into r. */
static void walk_rmc(ctg_t *x, rmc_hashmap_h em, const collect_t *seeds, double *t, result_t *r)
{
    size_t W = (size_t)x->batch, ns = seeds->n, next = 0, nuu = 0;
    MPI_Allreduce(&ns, &nuu, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    walk_t *w = calloc(W, sizeof(walk_t));
    char *live = calloc(W, 1);
    uint64_t *keys = xalloc(2 * W * sizeof(uint64_t));
    uu_t *vals = xalloc(2 * W * sizeof(uu_t));
    rmc_status_t *sts = xalloc(2 * W * sizeof(rmc_status_t));
    size_t *who = xalloc(2 * W * sizeof(size_t));
    if (!w || !live)
        bench_fail("out of memory for %zu walks", W);
    ok_st(x, rmc_barrier(), "rmc_barrier");
    uint64_t t0 = bench_now_ns();
    while (em && !x->err) {
        size_t n = 0;
        for (size_t i = 0; i < W; i++) {
            if (!live[i] && next < ns) {
                walk_start(&w[i], x, seeds->u[next].kmer, seeds->u[next].e);
                next++;
                live[i] = 1;
            }
            for (int j = 0; live[i] && j < 2; j++)
                if (w[i].s[j].on) {
                    walk_next(&w[i].s[j], x, &keys[n]);
                    who[n++] = 2 * i + (size_t)j;
                }
        }
        if (!n)
            break;
        if (!ok_st(x, rmc_hashmap_find_n(em, n, keys, vals, sts, RMC_PROMISE_FIND),
                   "rmc_hashmap_find_n"))
            break;
        r->looks += n;
        for (size_t q = 0; q < n; q++)
            walk_step(&w[who[q] / 2], (int)(who[q] % 2), x, sts[q] == RMC_OK, vals[q]);
        for (size_t i = 0; i < W; i++)
            if (live[i] && !walk_live(&w[i])) {
                if (!w[i].aborted)
                    emit(x, &w[i], &r->set);
                live[i] = 0;
            }
    }
    *t = slowest(x, bench_now_ns() - t0, nuu);
    r->uu = ns;
    walks_free(w, W);
    free(live);
    free(keys);
    free(vals);
    free(sts);
    free(who);
}

/* ------------------------------------------------------------------------------ MPI --- */

/* The MPI analysis: ns per occurrence (max over ranks) in *t; this rank's UU k-mers (those it
 * owns), sorted, in *u (*nu of them). */
static void analyse_mpi(ctg_t *x, double *t, uent_t **u, size_t *nu)
{
    int np = x->np;
    size_t n = x->nocc, total = 0;
    MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    int *sc = xalloc((size_t)np * sizeof(int)), *rc = xalloc((size_t)np * sizeof(int));
    occ_t *v = xalloc(n * sizeof(occ_t));
    kent_t *loc = xalloc(n * sizeof(kent_t)), *send = xalloc(n * sizeof(kent_t));
    void *in = NULL;
    size_t cap = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = bench_now_ns();
    memcpy(v, x->occ, n * sizeof(occ_t));
    size_t m = aggregate(x, v, n, loc);
    dna_group(loc, m, sizeof(kent_t), np, sc, send, NULL);
    size_t nin = dna_alltoallv(send, sc, sizeof(kent_t), np, rc, 0, &in, &cap);
    dna_sort_kmers(in, nin, sizeof(kent_t), x->c.k);
    nin = merge_sorted(in, nin);
    *u = xalloc(nin * sizeof(uent_t));
    *nu = uu_filter(x, in, nin, *u);
    *t = slowest(x, bench_now_ns() - t0, total);
    free(sc);
    free(rc);
    free(v);
    free(loc);
    free(send);
    free(in);
}

/* The MPI walk: every walk at once, a round of requests and answers per step. ns per UU k-mer
 * (max over ranks) in *t, the contigs into r. */
static void walk_mpi(ctg_t *x, const uent_t *u, size_t nu, double *t, result_t *r)
{
    int np = x->np;
    size_t all = 0;
    MPI_Allreduce(&nu, &all, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    walk_t *w = calloc(nu ? nu : 1, sizeof(walk_t));
    size_t *act = xalloc(nu * sizeof(size_t)), *who = xalloc(2 * nu * sizeof(size_t));
    size_t *where = xalloc(2 * nu * sizeof(size_t));
    uint64_t *keys = xalloc(2 * nu * sizeof(uint64_t)), *send = xalloc(2 * nu * sizeof(uint64_t));
    int *sc = xalloc((size_t)np * sizeof(int)), *rc = xalloc((size_t)np * sizeof(int));
    int *out2 = xalloc(2 * (size_t)np * sizeof(int)), *in2 = xalloc(2 * (size_t)np * sizeof(int));
    uu_t *ans = NULL;
    void *req = NULL, *back = NULL;
    size_t rcap = 0, bcap = 0, acap = 0, nact = nu;
    if (!w)
        bench_fail("out of memory for %zu walks", nu);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < nu; i++) {
        walk_start(&w[i], x, u[i].kmer, u[i].e);
        act[i] = i;
    }
    for (;;) {
        size_t n = 0;
        for (size_t a = 0; a < nact; a++)
            for (int j = 0; j < 2; j++)
                if (w[act[a]].s[j].on) {
                    walk_next(&w[act[a]].s[j], x, &keys[n]);
                    who[n++] = 2 * act[a] + (size_t)j;
                }
        dna_group(keys, n, sizeof(uint64_t), np, sc, send, where);
        /* to every rank: how many requests it gets, and whether this rank still walks (so the
         * round's counts also say when every walk is over) */
        for (int q = 0; q < np; q++) {
            out2[2 * q] = sc[q];
            out2[2 * q + 1] = nact > 0;
        }
        bench_mck(MPI_Alltoall(out2, 2, MPI_INT, in2, 2, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
        int any = 0;
        for (int q = 0; q < np; q++) {
            rc[q] = in2[2 * q];
            any |= in2[2 * q + 1];
        }
        if (!any)
            break;
        size_t nin = dna_alltoallv(send, sc, sizeof(uint64_t), np, rc, 1, &req, &rcap);
        grow((void **)&ans, &acap, nin, sizeof(uu_t));
        for (size_t i = 0; i < nin; i++) { /* answer in the order asked */
            long at = uu_find(u, nu, ((const uint64_t *)req)[i]);
            ans[i] = at < 0 ? (uu_t){ABSENT, 0} : u[at].e;
        }
        dna_alltoallv(ans, rc, sizeof(uu_t), np, sc, 1, &back, &bcap);
        r->looks += n;
        for (size_t q = 0; q < n; q++) {
            uu_t a = ((const uu_t *)back)[where[q]];
            walk_step(&w[who[q] / 2], (int)(who[q] % 2), x, a.l != ABSENT, a);
        }
        size_t keep = 0;
        for (size_t a = 0; a < nact; a++) {
            walk_t *wk = &w[act[a]];
            if (walk_live(wk))
                act[keep++] = act[a];
            else if (!wk->aborted)
                emit(x, wk, &r->set);
        }
        nact = keep;
    }
    *t = slowest(x, bench_now_ns() - t0, all);
    r->uu = nu;
    walks_free(w, nu);
    free(act);
    free(who);
    free(where);
    free(keys);
    free(send);
    free(sc);
    free(rc);
    free(out2);
    free(in2);
    free(ans);
    free(req);
    free(back);
}

/* ----------------------------------------------------------------------- checking --- */

static dna_sums_t sums_of(const cset_t *c)
{
    dna_sums_t s = {0, 0, 0};
    for (size_t i = 0; i < c->n; i++) {
        size_t len = strlen(c->s[i]);
        uint64_t h = len;
        for (size_t j = 0; j < len; j++)
            h = dna_mix(h ^ (uint64_t)(unsigned char)c->s[i][j]);
        s.n++;
        s.total += len;
        s.mix += h;
    }
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every rank's contigs, sorted, on rank 0 (elsewhere an empty set). Collective. */
static cset_t gather_set(const ctg_t *x, const cset_t *c)
{
    size_t bytes = 0;
    for (size_t i = 0; i < c->n; i++)
        bytes += strlen(c->s[i]) + 1;
    if (bytes > INT_MAX)
        bench_fail("contigs: %zu bytes of contigs on one rank", bytes);
    char *mine = xalloc(bytes), *p = mine;
    for (size_t i = 0; i < c->n; i++) {
        size_t l = strlen(c->s[i]) + 1;
        memcpy(p, c->s[i], l);
        p += l;
    }
    int nb = (int)bytes, *cnt = xalloc((size_t)x->np * sizeof(int));
    int *dsp = xalloc((size_t)x->np * sizeof(int));
    MPI_Gather(&nb, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t all = 0;
    for (int r = 0; x->me == 0 && r < x->np; r++) {
        if (all + (size_t)cnt[r] > INT_MAX)
            bench_fail("contigs: more than 2 GiB of contigs");
        dsp[r] = (int)all;
        all += (size_t)cnt[r];
    }
    char *buf = x->me == 0 ? xalloc(all) : NULL;
    MPI_Gatherv(mine, nb, MPI_CHAR, buf, cnt, dsp, MPI_CHAR, 0, MPI_COMM_WORLD);
    cset_t out = {0};
    for (size_t at = 0; x->me == 0 && at < all; at += strlen(buf + at) + 1) {
        char *s = strdup(buf + at);
        if (!s)
            bench_fail("out of memory");
        cset_add(&out, s);
    }
    if (out.n)
        qsort(out.s, out.n, sizeof(char *), cmp_str);
    free(mine);
    free(cnt);
    free(dsp);
    free(buf);
    return out;
}

/* What the contigs say about the genome (rank 0). */
typedef struct gstats {
    size_t contigs, bases, longest, n50;
    size_t repeats;   /* genome k-mers (canonical) that occur more than once */
    size_t on_genome; /* contigs that are a stretch of the genome, either strand */
    double coverage;  /* genome k-mer positions whose k-mer is in a contig */
} gstats_t;

typedef struct gpos {
    uint64_t kmer; /* canonical */
    uint32_t pos;
    uint32_t fwd; /* the genome reads the canonical form there (else its reverse complement) */
} gpos_t;

static int cmp_gpos(const void *a, const void *b)
{
    return dna_cmp_u64(&((const gpos_t *)a)->kmer, &((const gpos_t *)b)->kmer);
}

static int cmp_size_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x > y ? -1 : x < y;
}

static uint8_t base_of(char ch)
{
    return (uint8_t)(ch == 'A' ? 0 : ch == 'C' ? 1 : ch == 'G' ? 2 : 3);
}

/* Is contig s (len >= k) the genome's bases from pos (fwd) or their reverse complement ending at
 * pos + k (wrapping around a circular genome)? */
static int on_genome(const ctg_t *x, const unsigned char *g, const char *s, size_t len,
                     const gpos_t *at)
{
    size_t G = x->c.genome, k = (size_t)x->c.k;
    if (len > G + k - 1 || (!x->c.circular && (at->fwd ? at->pos + len > G : at->pos + k < len)))
        return 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t want =
            at->fwd ? g[(at->pos + i) % G] : (uint8_t)(3 - g[(at->pos + k - 1 - i + G) % G]);
        if (base_of(s[i]) != want)
            return 0;
    }
    return 1;
}

/* Rank 0: the contigs' sizes and how they lie on the genome. */
static gstats_t genome_stats(const ctg_t *x, const cset_t *c)
{
    gstats_t st = {0};
    size_t G = x->c.genome, k = (size_t)x->c.k, ng = x->c.circular ? G : G - k + 1;
    unsigned char *g = dna_genome(G);
    gpos_t *gp = xalloc(ng * sizeof(gpos_t));
    uint64_t v = 0;
    for (size_t i = 0; i < ng + k - 1; i++) { /* k-mers of the genome (around, if circular) */
        v = ((v << 2) | g[i % G]) & x->mask;
        if (i + 1 >= k) {
            uint64_t cn = dna_canon(v, (int)k);
            gp[i + 1 - k] = (gpos_t){cn, (uint32_t)(i + 1 - k), cn == v};
        }
    }
    qsort(gp, ng, sizeof(gpos_t), cmp_gpos);
    for (size_t i = 1; i < ng; i++)
        st.repeats += gp[i].kmer == gp[i - 1].kmer;
    size_t *lens = xalloc(c->n * sizeof(size_t)), nk = 0;
    for (size_t i = 0; i < c->n; i++) {
        lens[i] = strlen(c->s[i]);
        st.bases += lens[i];
        nk += lens[i] - k + 1;
    }
    uint64_t *ck = xalloc(nk * sizeof(uint64_t)); /* every contig k-mer, canonical */
    size_t m = 0;
    for (size_t i = 0; i < c->n; i++) {
        v = 0;
        for (size_t j = 0; j < lens[i]; j++) {
            v = ((v << 2) | base_of(c->s[i][j])) & x->mask;
            if (j + 1 >= k)
                ck[m++] = dna_canon(v, (int)k);
        }
        uint64_t first = 0; /* the contig's first k-mer, as it reads */
        for (size_t j = 0; j < k; j++)
            first = (first << 2) | base_of(c->s[i][j]);
        gpos_t key = {dna_canon(first, (int)k), 0, 0};
        const gpos_t *at = bsearch(&key, gp, ng, sizeof(gpos_t), cmp_gpos);
        if (at) {
            gpos_t as = *at; /* orient the hit as the contig reads */
            as.fwd = (first == key.kmer) == (at->fwd != 0);
            st.on_genome += on_genome(x, g, c->s[i], lens[i], &as);
        }
    }
    qsort(ck, nk, sizeof(uint64_t), dna_cmp_u64);
    size_t covered = 0;
    for (size_t i = 0; i < ng; i++)
        covered += bsearch(&gp[i].kmer, ck, nk, sizeof(uint64_t), dna_cmp_u64) != NULL;
    st.coverage = ng ? (double)covered / (double)ng : 0;
    st.contigs = c->n;
    qsort(lens, c->n, sizeof(size_t), cmp_size_desc);
    size_t acc = 0;
    for (size_t i = 0; i < c->n && !st.n50; i++)
        if ((acc += lens[i]) * 2 >= st.bases)
            st.n50 = lens[i];
    st.longest = c->n ? lens[0] : 0;
    free(g);
    free(gp);
    free(lens);
    free(ck);
    return st;
}

/* One run of both assemblies on x's input: times in t[0..5] (RMC pass 1, pass 2, extension map:
 * ns per occurrence; RMC walk: ns per UU k-mer; MPI analysis; MPI walk), this rank's part of each
 * result in *rr and *mr (the caller frees their sets). 1 when RMC and MPI agree (contig sums, UU
 * k-mers, lookups). Agreed. */
static int run(ctg_t *x, double *t, result_t *rr, result_t *mr)
{
    rmc_hashmap_h em;
    collect_t seeds = {0};
    analyse_rmc(x, t, &em, &seeds);
    walk_rmc(x, em, &seeds, &t[3], rr);
    if (em)
        ok_st(x, rmc_hashmap_destroy(em), "rmc_hashmap_destroy");
    free(seeds.u);
    uent_t *u;
    size_t nu;
    analyse_mpi(x, &t[4], &u, &nu);
    walk_mpi(x, u, nu, &t[5], mr);
    free(u);
    dna_sums_t a = dna_global(sums_of(&rr->set)), b = dna_global(sums_of(&mr->set));
    int ok = dna_same("contigs", x->me, "RMC against MPI (contigs, bases)", a, b) && !x->err;
    uint64_t cnt[4] = {rr->uu, mr->uu, rr->looks, mr->looks}, g[4];
    MPI_Allreduce(cnt, g, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (g[0] != g[1] || g[2] != g[3]) { /* the same walks: the same UU k-mers and lookups */
        if (x->me == 0)
            fprintf(stderr,
                    "contigs: RMC has %" PRIu64 " UU k-mers and looked up %" PRIu64 ", MPI %" PRIu64
                    " and %" PRIu64 "\n",
                    g[0], g[2], g[1], g[3]);
        ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

#ifdef CONTIGS_TEST
/* ----------------------------------------------------------------------------- test --- */

/* Rank 0: 1 when sorted sets a and b are equal; else says where they first differ. */
static int same_sets(const char *what, const cset_t *a, const cset_t *b)
{
    if (a->n != b->n) {
        fprintf(stderr, "contigs: %s: %zu contigs against %zu\n", what, a->n, b->n);
        return 0;
    }
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->s[i], b->s[i])) {
            fprintf(stderr, "contigs: %s: contig %zu: %.60s%s against %.60s%s\n", what, i, a->s[i],
                    strlen(a->s[i]) > 60 ? "..." : "", b->s[i], strlen(b->s[i]) > 60 ? "..." : "");
            return 0;
        }
    return 1;
}

/* The serial reference assembly (rank 0), sharing nothing with the assemblies it checks but the
 * input: the reads as text, every k-mer of a read and its reverse complement as strings (the
 * canonical one the smaller by strcmp; read reverse-complemented, the bases around it swap sides
 * and are complemented), counted in a hash table of its own keyed by the string; its UU k-mers'
 * edges found by building the neighbour's string; unique paths walked into contigs (a cycle from
 * its smallest k-mer, canonical orientation, rightwards); each contig or its reverse complement,
 * whichever is smaller, sorted. */
typedef struct sk {
    char s[32];         /* the canonical k-mer ("" : an empty slot) */
    uint32_t count;     /* occurrences */
    uint32_t ext[2][4]; /* bases seen before (0) and after (1) it, canonical orientation */
    char l, r;          /* its extensions when it is a UU k-mer (else 0) */
    int used;           /* in a contig */
} sk_t;

typedef struct stab {
    sk_t *e;
    size_t cap; /* a power of two */
    int k;
} stab_t;

static const char *ACGT = "ACGT";

static char comp_ch(char b)
{
    return b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : 'A';
}

static void revcomp_str(const char *s, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = comp_ch(s[n - 1 - i]);
    out[n] = 0;
}

/* Adds the contig c of n bases (taken over) or its reverse complement, whichever is smaller, to
 * the set; returns the string added. */
static char *cset_add_canonical(cset_t *out, char *c, size_t n)
{
    char *rc = xalloc(n + 1);
    revcomp_str(c, n, rc);
    if (strcmp(rc, c) < 0) {
        char *t = c;
        c = rc;
        rc = t;
    }
    free(rc);
    cset_add(out, c);
    return c;
}

/* The entry of k-mer s (k characters), created when `make`; NULL when absent. */
static sk_t *stab_at(stab_t *t, const char *s, int make)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; i < t->k; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    for (size_t i = (size_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->e[i].s[0]) {
            if (!make)
                return NULL;
            memcpy(t->e[i].s, s, (size_t)t->k);
            return &t->e[i];
        }
        if (!memcmp(t->e[i].s, s, (size_t)t->k))
            return &t->e[i];
    }
}

/* The oriented k-mer s's entry if it is a UU k-mer, with its extensions as s reads (*l, *r). */
static sk_t *stab_uu(stab_t *t, const char *s, char *l, char *r)
{
    char rc[33];
    revcomp_str(s, (size_t)t->k, rc);
    int fwd = strcmp(s, rc) < 0;
    sk_t *e = stab_at(t, fwd ? s : rc, 0);
    if (!e || !e->l)
        return NULL;
    *l = fwd ? e->l : comp_ch(e->r);
    *r = fwd ? e->r : comp_ch(e->l);
    return e;
}

/* The k-mer after oriented tip (k characters, right extension tr) into next (with its extensions),
 * when the graph has that edge: next = tip[1..k) tr is a UU k-mer other than tip's, whose left
 * extension is tip's first base. Its entry, else NULL. */
static sk_t *stab_next(stab_t *t, const sk_t *tipe, const char *tip, char tr, char *next, char *nl,
                       char *nr)
{
    int k = t->k;
    memcpy(next, tip + 1, (size_t)k - 1);
    next[k - 1] = tr;
    next[k] = 0;
    sk_t *n = stab_uu(t, next, nl, nr);
    return n && n != tipe && *nl == tip[0] ? n : NULL;
}

/* The contigs of the reads (text: n reads of len characters) into out, sorted; 0 (and a message)
 * when a UU k-mer is in no contig or in two. */
static int reference_assembly(const ctg_t *x, const char *text, size_t n, cset_t *out)
{
    int k = x->c.k;
    size_t len = x->c.len, per = len - (size_t)k + 1, cap = 64;
    while (cap < 2 * n * per)
        cap *= 2;
    stab_t t = {calloc(cap, sizeof(sk_t)), cap, k};
    if (!t.e)
        bench_fail("out of memory (%zu bytes)", cap * sizeof(sk_t));
    for (size_t r = 0; r < n; r++) /* every occurrence */
        for (size_t i = 0; i < per; i++) {
            const char *f = text + r * len + i;
            char fs[33], rc[33];
            memcpy(fs, f, (size_t)k);
            fs[k] = 0;
            revcomp_str(fs, (size_t)k, rc);
            char l = i > 0 ? f[-1] : 0, rt = i + (size_t)k < len ? f[k] : 0;
            int fwd = strcmp(fs, rc) < 0;
            sk_t *e = stab_at(&t, fwd ? fs : rc, 1);
            char before = fwd ? l : rt ? comp_ch(rt) : 0, after = fwd ? rt : l ? comp_ch(l) : 0;
            e->count++;
            if (before)
                e->ext[0][strchr(ACGT, before) - ACGT]++;
            if (after)
                e->ext[1][strchr(ACGT, after) - ACGT]++;
        }
    size_t nuu = 0;
    for (size_t i = 0; i < cap; i++) { /* the UU k-mers */
        sk_t *e = &t.e[i];
        if (!e->s[0] || e->count < (uint32_t)x->min_count)
            continue;
        char side[2] = {0, 0};
        for (int s = 0; s < 2; s++) {
            int seen = 0;
            for (int b = 0; b < 4; b++)
                if (e->ext[s][b] >= (uint32_t)x->min_ext) {
                    side[s] = ACGT[b];
                    seen++;
                }
            if (seen != 1)
                side[s] = 0;
        }
        if (side[0] && side[1]) {
            e->l = side[0];
            e->r = side[1];
            nuu++;
        }
    }
    int ok = 1;
    size_t inside = 0;
    char *buf = xalloc(nuu + (size_t)k + 1), *left = xalloc(nuu + 1);
    for (size_t i = 0; ok && i < cap; i++) {
        sk_t *start = &t.e[i];
        if (!start->l || start->used)
            continue;
        /* the path through start: right from it, then right from its reverse complement (its left
         * side); back at start going right, it is a cycle */
        char tip[33], nx[33], tr = start->r, nl, nr;
        size_t nb = 0, nleft = 0;
        int cycle = 0;
        memcpy(tip, start->s, (size_t)k + 1);
        for (sk_t *e = start, *ne; (ne = stab_next(&t, e, tip, tr, nx, &nl, &nr));) {
            if (ne == start) {
                cycle = 1;
                break;
            }
            if (nb == nuu)
                break; /* (a malformed graph: reported below) */
            buf[nb++] = nx[k - 1];
            memcpy(tip, nx, (size_t)k + 1);
            e = ne, tr = nr;
        }
        if (cycle) { /* again from its smallest k-mer, canonical orientation */
            sk_t *min = start;
            memcpy(tip, start->s, (size_t)k + 1);
            tr = start->r;
            for (sk_t *e = start, *ne; (ne = stab_next(&t, e, tip, tr, nx, &nl, &nr)) != start;) {
                if (!ne || nb-- == 0)
                    break; /* (not the cycle it seemed: reported below) */
                if (strcmp(ne->s, min->s) < 0)
                    min = ne;
                memcpy(tip, nx, (size_t)k + 1);
                e = ne, tr = nr;
            }
            start = min;
            nb = 0;
            memcpy(tip, start->s, (size_t)k + 1);
            tr = start->r;
            for (sk_t *e = start, *ne; (ne = stab_next(&t, e, tip, tr, nx, &nl, &nr)) != start;) {
                if (!ne || nb == nuu)
                    break; /* (not the cycle it seemed: reported below) */
                buf[nb++] = nx[k - 1];
                memcpy(tip, nx, (size_t)k + 1);
                e = ne, tr = nr;
            }
        } else {
            revcomp_str(start->s, (size_t)k, tip);
            tr = comp_ch(start->l);
            for (sk_t *e = start, *ne; (ne = stab_next(&t, e, tip, tr, nx, &nl, &nr));) {
                if (ne == start || nleft + nb >= nuu)
                    break; /* (malformed: reported below) */
                left[nleft++] = nx[k - 1];
                memcpy(tip, nx, (size_t)k + 1);
                e = ne, tr = nr;
            }
        }
        /* the contig: the left side's bases reverse-complemented, start, the right side's */
        size_t clen = nleft + (size_t)k + nb;
        char *c = xalloc(clen + 1);
        for (size_t j = 0; j < nleft; j++)
            c[j] = comp_ch(left[nleft - 1 - j]);
        memcpy(c + nleft, start->s, (size_t)k);
        memcpy(c + nleft + k, buf, nb);
        c[clen] = 0;
        c = cset_add_canonical(out, c, clen);
        for (size_t j = 0; j + (size_t)k <= clen; j++) { /* its k-mers: UU, in no other contig */
            char kl, kr, km[33];
            memcpy(km, c + j, (size_t)k);
            km[k] = 0;
            sk_t *e = stab_uu(&t, km, &kl, &kr);
            if (!e || e->used) {
                fprintf(stderr, "contigs: reference contig %zu: k-mer at %zu %s\n", out->n - 1, j,
                        !e ? "is no UU k-mer" : "is in another contig");
                ok = 0;
                break;
            }
            e->used = 1;
            inside++;
        }
    }
    if (ok && inside != nuu) {
        fprintf(stderr, "contigs: reference: %zu UU k-mers, %zu in contigs\n", nuu, inside);
        ok = 0;
    }
    if (out->n)
        qsort(out->s, out->n, sizeof(char *), cmp_str);
    free(buf);
    free(left);
    free(t.e);
    return ok;
}

/* Every rank's reads as text (dna_reads on rank 0 for each rank), in *n reads of len characters. */
static char *all_reads_text(const ctg_t *x, size_t *n)
{
    const dna_cfg_t *c = &x->c;
    unsigned char *g = dna_genome(c->genome);
    size_t per = c->reads * c->len;
    char *t = xalloc(dna_mul(per, (size_t)x->np, "reads") + 1);
    for (int r = 0; r < x->np; r++) {
        unsigned char *reads = dna_reads(c, g, r);
        for (size_t i = 0; i < per; i++)
            t[(size_t)r * per + i] = ACGT[reads[i]];
        free(reads);
    }
    free(g);
    *n = c->reads * (size_t)x->np;
    return t;
}

/* Error-free reads of a linear genome: the contigs the genome implies, into out (sorted). Each read
 * is found in the genome (it occurs once: no k-mer repeats); a genome k-mer at p is a UU k-mer when
 * one read holds it with the base before (p - 1) and one with the base after (p + k); the
 * contigs are the maximal runs of such positions, p .. q giving the genome's bases p .. q + k. */
static void genome_contigs(const ctg_t *x, const char *text, size_t n, cset_t *out)
{
    size_t G = x->c.genome, k = (size_t)x->c.k, len = x->c.len;
    unsigned char *g = dna_genome(G);
    char *gs = xalloc(G + 1), *read = xalloc(len + 1);
    for (size_t i = 0; i < G; i++)
        gs[i] = ACGT[g[i]];
    gs[G] = 0;
    /* lext[p]: some read holds bases p - 1 .. p + k - 1; rext[p]: p .. p + k */
    char *lext = calloc(G + 1, 1), *rext = calloc(G + 1, 1);
    if (!lext || !rext)
        bench_fail("out of memory");
    for (size_t r = 0; r < n; r++) {
        memcpy(read, text + r * len, len);
        read[len] = 0;
        const char *at = strstr(gs, read);
        if (!at)
            bench_fail("contigs: an error-free read is not in the genome");
        size_t a = (size_t)(at - gs);
        for (size_t p = a + 1; p + k <= a + len; p++)
            lext[p] = 1;
        for (size_t p = a; p + k + 1 <= a + len; p++)
            rext[p] = 1;
    }
    for (size_t p = 0; p + k <= G;) {
        if (!(lext[p] && rext[p])) {
            p++;
            continue;
        }
        size_t q = p;
        while (q + 1 + k <= G && lext[q + 1] && rext[q + 1])
            q++;
        size_t clen = q - p + k;
        char *c = xalloc(clen + 1);
        memcpy(c, gs + p, clen);
        c[clen] = 0;
        cset_add_canonical(out, c, clen);
        p = q + 1;
    }
    if (out->n)
        qsort(out->s, out->n, sizeof(char *), cmp_str);
    free(g);
    free(gs);
    free(read);
    free(lext);
    free(rext);
}

/* Rank 0 assembles every rank's reads itself (reference_assembly) and compares RMC's and MPI's
 * contigs with it, and with what the input promises (error-free reads: contigs on the genome; of a
 * linear genome with every k-mer kept, exactly the contigs its reads' places imply; a circular
 * genome covered everywhere: one contig, the whole circle). Agreed. */
static int check_serial(ctg_t *x, const result_t *rr, const result_t *mr, gstats_t *st)
{
    int ok = 1;
    cset_t a = gather_set(x, &rr->set), b = gather_set(x, &mr->set), want = {0}, implied = {0};
    if (x->me == 0) {
        size_t n;
        char *text = all_reads_text(x, &n);
        ok = reference_assembly(x, text, n, &want);
        ok = ok && same_sets("RMC against the reference assembly", &a, &want);
        ok = ok && same_sets("MPI against the reference assembly", &b, &want);
        *st = genome_stats(x, &a);
        if (st->repeats) {
            fprintf(stderr, "contigs: the genome repeats %zu k-mers\n", st->repeats);
            ok = 0;
        }
        if (x->c.err == 0 && st->on_genome != st->contigs) {
            fprintf(stderr,
                    "contigs: error-free reads, but %zu of %zu contigs are off the genome\n",
                    st->contigs - st->on_genome, st->contigs);
            ok = 0;
        }
        if (x->c.err == 0 && !x->c.circular && x->min_count == 1 && x->min_ext == 1 && ok) {
            genome_contigs(x, text, n, &implied);
            size_t longest = 0;
            for (size_t i = 0; i < implied.n; i++)
                if (strlen(implied.s[i]) > longest)
                    longest = strlen(implied.s[i]);
            if (implied.n != st->contigs || longest != st->longest) {
                fprintf(stderr,
                        "contigs: the genome and the reads' places imply %zu contigs, longest "
                        "%zu; RMC found %zu, longest %zu\n",
                        implied.n, longest, st->contigs, st->longest);
                ok = 0;
            }
            ok = ok && same_sets("RMC against the contigs the genome implies", &a, &implied);
        }
        if (x->c.circular && (st->contigs != 1 || st->longest != x->c.genome + x->c.k - 1)) {
            fprintf(stderr, "contigs: a circular genome of %zu gave %zu contigs, longest %zu\n",
                    x->c.genome, st->contigs, st->longest);
            ok = 0;
        }
        free(text);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    cset_free(&a);
    cset_free(&b);
    cset_free(&want);
    cset_free(&implied);
    return ok;
}

/* Rank 0: the options refuse k = 33, an even k, reads shorter than k, trailing text, a negative
 * count and an input whose size overflows; and take good ones out of argv. */
static int bad_options(void)
{
    char *a1[] = {"test_contigs", "--k", "33"}, *a2[] = {"test_contigs", "--k", "32"};
    char *a3[] = {"test_contigs", "--len", "20", "--k", "21"};
    char *a4[] = {"test_contigs", "--k", "21", "--reps", "3"};
    char *a5[] = {"test_contigs", "--genome", "20000abc"},
         *a6[] = {"test_contigs", "--reads", "-1"};
    char *a7[] = {"test_contigs", "--reads", "2305843009213693952", "--len", "64"};
    int n1 = 3, n2 = 3, n3 = 5, n4 = 5, n5 = 3, n6 = 3, n7 = 5;
    size_t pb = 1 + sizeof(gpos_t), po = sizeof(occ_t);
    dna_cfg_t c = {1000, 10, 100, 31, 0.01, 0};
    fprintf(stderr, "test_contigs: bad options (six messages expected):\n");
    int ok = dna_parse(&n1, a1, "test_contigs", &c, 1, pb, po) == 1;
    ok &= dna_parse(&n2, a2, "test_contigs", &c, 1, pb, po) == 1;
    c.k = 31;
    ok &= dna_parse(&n3, a3, "test_contigs", &c, 1, pb, po) == 1;
    c.len = 100;
    ok &= dna_parse(&n4, a4, "test_contigs", &c, 1, pb, po) == 0 && c.k == 21 && n4 == 3 &&
          !strcmp(a4[1], "--reps");
    ok &= dna_parse(&n5, a5, "test_contigs", &c, 1, pb, po) == 1 && c.genome == 1000;
    ok &= dna_parse(&n6, a6, "test_contigs", &c, 1, pb, po) == 1 && c.reads == 10;
    c.len = 64;
    ok &= dna_parse(&n7, a7, "test_contigs", &c, 1, pb, po) == 1;
    if (!ok)
        fprintf(stderr, "test_contigs: the options did not refuse bad input as they should\n");
    return ok;
}

int main(void)
{
    ctg_t x = {0};
    dna_test_start("test_contigs", &x.me, &x.np);
    int ok = x.me == 0 ? bad_options() : 1;
    /* input, min_count, min_ext, walks at once: errors (forks, short contigs); error-free reads
     * with every k-mer kept (contigs lie on the genome); small k, more errors, one walk at a time;
     * a circular genome (one cycle: no contig ends). The reads per rank shrink with more ranks,
     * so every rank count assembles as much; beyond 2 ranks (more ranks than cores: each MPI
     * walk round waits for descheduled ranks, ~10 ms) a quarter of the genome and of the reads,
     * so the longest contig, which sets the MPI walk's rounds, is shorter too. */
    const struct {
        dna_cfg_t c;
        int min_count, min_ext, batch;
    } cfgs[] = {{{20000, 400, 100, 31, 0.01, 0}, 2, 2, 64},
                {{1200, 36, 80, 21, 0.0, 0}, 1, 1, 64},
                {{6000, 200, 60, 17, 0.02, 0}, 2, 1, 1},
                {{150, 30, 40, 15, 0.0, 1}, 1, 1, 16}};
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        x.c = cfgs[i].c;
        x.c.reads = x.c.reads * 2 / (size_t)x.np / (x.np > 2 ? 4 : 1);
        x.c.genome /= x.np > 2 ? 4 : 1;
        x.min_count = cfgs[i].min_count;
        x.min_ext = cfgs[i].min_ext;
        x.batch = cfgs[i].batch;
        x.remote = i == 2; /* the distributed Bloom filter once */
        setup(&x);
        double t[6];
        result_t rr = {0}, mr = {0};
        gstats_t st = {0};
        int r = run(&x, t, &rr, &mr);
        r = check_serial(&x, &rr, &mr, &st) && r;
        if (x.me == 0)
            printf("test_contigs: genome %zu%s, %zu reads of %zu per rank, k %d, errors %.2f, "
                   "min count %d, min ext %d, %d walks at once: %zu contigs, %zu bases, longest "
                   "%zu, N50 %zu, %.1f%% of the genome, %zu on it: %s\n",
                   x.c.genome, x.c.circular ? " (circular)" : "", x.c.reads, x.c.len, x.c.k,
                   x.c.err, x.min_count, x.min_ext, x.batch, st.contigs, st.bases, st.longest,
                   st.n50, 100 * st.coverage, st.on_genome, r ? "ok" : "FAILED");
        ok &= r;
        cset_free(&rr.set);
        cset_free(&mr.set);
    }
    free(x.occ);
    return dna_test_end("test_contigs", x.me, x.np, ok);
}

#else
/* ------------------------------------------------------------------------ benchmark --- */

/* Takes --min-count C (1..INT_MAX), --min-ext X (1..65535: extension counts stop there), --batch W
 * (1..INT_MAX walks at once, as many as fit in this node's memory) and the input's options
 * (dna_parse: k odd; and a genome of at most 2^32 - 1 bases, as genome_stats' positions are 32-bit)
 * out of argv into the ctg_t arg. 0, or 1 after a usage error (message on rank 0, dna_bad). */
static int parse_own(int *argc, char **argv, void *arg)
{
    ctg_t *x = arg;
    /* a walk's room in walk_rmc: the walk, its live flag, its two sides' keys, values, statuses
     * and places */
    size_t per_walk = sizeof(walk_t) + 1 +
                      2 * (sizeof(uint64_t) + sizeof(uu_t) + sizeof(rmc_status_t) + sizeof(size_t));
    size_t walks = dna_memory() / per_walk;
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--remote-filter")) {
            x->remote = 1;
            continue;
        }
        int *to = !strcmp(a, "--min-count") ? &x->min_count
                  : !strcmp(a, "--min-ext") ? &x->min_ext
                  : !strcmp(a, "--batch")   ? &x->batch
                                            : NULL;
        if (!to) {
            argv[kept++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc)
            return dna_bad("bench_contigs", "%s (it needs a value)", a);
        unsigned long long n = 0, hi = INT_MAX;
        const char *why = "";
        if (to == &x->min_ext) {
            hi = 65535;
            why = "; extension counts stop at 65535";
        } else if (to == &x->batch && walks < hi) {
            hi = walks;
            why = "; the walks must fit in memory";
        }
        if (dna_parse_num("bench_contigs", a, argv[++i], 1, hi, why, &n))
            return 1;
        *to = (int)n;
    }
    *argc = kept;
    /* per genome base: its byte and rank 0's genome_stats position; per k-mer occurrence: x->occ */
    if (dna_parse(argc, argv, "bench_contigs", &x->c, 1, 1 + sizeof(gpos_t), sizeof(occ_t)))
        return 1;
    if (x->c.genome > UINT32_MAX)
        return dna_bad("bench_contigs",
                       "--genome %zu (need at most %" PRIu32 " bases: positions are 32-bit)",
                       x->c.genome, UINT32_MAX);
    return 0;
}

/* A table "<what> (all ranks' / ranks; slowest rank), median of <reps> reps" with the columns RMC
 * and MPI (indices in *rmc, *mpi) and their ratio. */
static bench_table_t *new_table(const char *name, const char *what, int reps, int *rmc, int *mpi)
{
    char title[200];
    snprintf(title, sizeof(title), "%s (all ranks' / ranks; slowest rank), median of %d reps", what,
             reps);
    bench_table_t *t = bench_table_new(name, "phase", title);
    *rmc = bench_table_col(t, "RMC", "ns");
    *mpi = bench_table_col(t, "MPI", "ns");
    bench_table_ratio(t, "MPI/RMC", *mpi, *rmc, BENCH_RATIO_X);
    return t;
}

int main(int argc, char **argv)
{
    ctg_t x = {0};
    x.c = (dna_cfg_t){1000000, 40000, 100, 31, 0.01, 0};
    x.min_count = x.min_ext = 2;
    x.batch = 256;
    bench_opts_t o;
    int rc = dna_bench_start(&argc, &argv, "bench_contigs", &x.c, &o, &x.me, &x.np, parse_own, &x);
    if (rc)
        return rc > 0;
    setup(&x);
    char peers[640];
    snprintf(peers, sizeof(peers),
             "RMC %s: k-mer analysis as bench_kmer (%s, HashMapBuffer, combining "
             "buffer), extension map by owner-local inserts, walks through rmc_hashmap_find_n "
             "(find-only, %d at once); AMO mode %s | MPI: MPI_Alltoallv to the owners, "
             "then the walks in rounds of MPI_Alltoallv requests and answers | input: genome "
             "%zu, %zu reads of %zu per rank, k %d, errors %.3f, min count %d, min ext %d",
             rmc_version(), x.remote ? "distributed Bloom filter" : "the owners' Bloom filters",
             x.batch, rmc_amo_mode() == RMC_AMO_MODE_THREAD ? "thread" : "mpi", x.c.genome,
             x.c.reads, x.c.len, x.c.k, x.c.err, x.min_count, x.min_ext);
    bench_header(&o, "contig generation: k-mer analysis and de Bruijn graph walk", peers);
    double s[6][BENCH_MAX_REPS];
    result_t keep = {0};
    uint64_t g[3] = {0};
    for (int r = -1; r < o.reps; r++) {
        double t[6];
        result_t rr = {0}, mr = {0};
        if (!run(&x, t, &rr, &mr))
            bench_fail("the contigs of RMC and MPI differ");
        for (int k = 0; r >= 0 && k < 6; k++)
            s[k][r] = t[k];
        uint64_t c[3] = {rr.uu, rr.looks, rr.set.n};
        MPI_Allreduce(c, g, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        cset_free(&keep.set);
        keep = rr;
        cset_free(&mr.set);
    }
    cset_t all = gather_set(&x, &keep.set);
    gstats_t st = x.me == 0 ? genome_stats(&x, &all) : (gstats_t){0};
    size_t reps = (size_t)o.reps;
    double p1 = bench_median(s[0], reps), p2 = bench_median(s[1], reps);
    double pe = bench_median(s[2], reps), wr = bench_median(s[3], reps);
    double am = bench_median(s[4], reps), wm = bench_median(s[5], reps);
    double whole[BENCH_MAX_REPS];
    for (size_t r = 0; r < reps; r++)
        whole[r] = s[0][r] + s[1][r] + s[2][r];
    double ar = bench_median(whole, reps);
    int ca, cm, wa, wb;
    bench_table_t *ta =
        new_table("analysis", "k-mer analysis, ns per k-mer occurrence", o.reps, &ca, &cm);
    bench_table_set(ta, bench_table_row(ta, "pass 1: local count, filter, buffered inserts", NAN),
                    ca, p1);
    bench_table_set(ta, bench_table_row(ta, "pass 2: counts, extensions (combining buffer)", NAN),
                    ca, p2);
    bench_table_set(ta, bench_table_row(ta, "extension map: UU k-mers, owner-local inserts", NAN),
                    ca, pe);
    int rw = bench_table_row(ta, "whole analysis", NAN);
    bench_table_set(ta, rw, ca, ar);
    bench_table_set(ta, rw, cm, am);
    bench_table_plot(ta, 0, 0, "ns per k-mer occurrence");
    bench_table_note(ta, "k-mer occurrences per second per rank: RMC %.2f M, MPI %.2f M", 1e3 / ar,
                     1e3 / am);
    bench_table_t *tw = new_table("walk", "walk, ns per UU k-mer", o.reps, &wa, &wb);
    int rwk = bench_table_row(tw, "walk (find-only finds / request rounds)", NAN);
    bench_table_set(tw, rwk, wa, wr);
    bench_table_set(tw, rwk, wb, wm);
    bench_table_plot(tw, 0, 0, "ns per UU k-mer");
    /* the walks' time: ns per UU k-mer times UU k-mers per rank (no UU k-mers: no contigs, 0) */
    double uu = (double)g[0], per_rank_uu = uu / x.np;
    double cps_rmc = g[2] ? (double)g[2] / (wr * 1e-9 * per_rank_uu) : 0;
    double cps_mpi = g[2] ? (double)g[2] / (wm * 1e-9 * per_rank_uu) : 0;
    bench_table_note(tw,
                     "%" PRIu64 " UU k-mers, %.2f lookups per UU k-mer (both walk alike); "
                     "contigs per second: RMC %.0f, MPI %.0f",
                     g[0], (double)g[1] / (uu ? uu : 1), cps_rmc, cps_mpi);
    bench_table_note(tw,
                     "contigs: %zu, %zu bases, longest %zu, N50 %zu; %.1f%% of the genome's "
                     "k-mers in a contig, %zu contigs on the genome; genome k-mers repeated: %zu",
                     st.contigs, st.bases, st.longest, st.n50, 100 * st.coverage, st.on_genome,
                     st.repeats);
    bench_table_note(tw, "verified every repetition: RMC's and MPI's contigs agree (contigs, "
                         "bases, mix-sum); tests/mpi/test_contigs checks against a serial "
                         "assembly");
    bench_finish(&o, (bench_table_t *[]){ta, tw}, 2);
    cset_free(&all);
    cset_free(&keep.set);
    ok_st(&x, rmc_finalize(), "rmc_finalize");
    free(x.occ);
    MPI_Finalize();
    return 0;
}
#endif
