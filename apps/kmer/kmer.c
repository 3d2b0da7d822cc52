/* k-mer counting (seed 000 §8.2, seed 001 §6.3) on RMC's Bloom filter and hash map, beside an
 * MPI_Alltoallv reference and checked against a serial count of the same input.
 *
 * Input (apps/dna.h, shared with contig generation), the same on every run with the same options:
 * a random genome of G bases (one seed, the same on every rank), and on every rank R reads of L
 * bases taken from random positions of it (seeded per rank) with each base replaced by another at
 * the error rate E (sequencing errors: most erroneous k-mers occur once). A k-mer is k <= 32
 * consecutive bases (2 bits each) in its canonical form, the smaller of it and its reverse
 * complement. The result is every k-mer that occurs at least twice in all reads, with its exact
 * count (singletons, mostly errors, dropped).
 *
 *   RMC    pass 1: each rank counts its own k-mers locally (sort) and sends each distinct one with
 *          its count to its owner through a HashMapBuffer; the owner's filter
 *          (rmc_hashmap_buffer_admit) lets a k-mer some rank holds twice or more into the map at
 *          once (count 0), and one held once when the owner's blocked Bloom filter had seen it
 *          before (its second holder); one already in the map keeps its 0 (a combining function
 *          that changes nothing), so every k-mer seen twice anywhere is in the map, and a
 *          singleton only as a false positive; flush. With --remote-filter (and in the test too)
 *          the filter is RMC's distributed blocked Bloom filter instead: a k-mer held once is
 *          inserted into it first by its holder (one remote fetch-or, which says whether it was
 *          there) and buffered only when the filter had seen it. Pass 2: each rank adds each
 *          of its distinct k-mers' counts to its entry: batched to the owners through a
 *          HashMapBuffer whose owners add instead of replacing (rmc_hashmap_buffer_combine;
 *          absent: a singleton everywhere, dropped), or (--updates, and in the test too) one
 *          rmc_hashmap_update per distinct k-mer (atomic under the bucket's lock). The result: the
 *          map's entries with a count >= 2.
 *   MPI    every k-mer to its owner (a hash), MPI_Alltoall of the counts + MPI_Alltoallv, then
 *          each owner sorts and counts: the same result.
 * Verification (every run): both results have the same number of k-mers, total count and 64-bit
 * mix-sum of (k-mer, count); with -DKMER_TEST (tests/mpi/test_kmer) also, entry by entry, against
 * a serial count on rank 0 that shares nothing with the code it checks but the input: every rank's
 * reads as text, each k-mer and its reverse complement as strings, the canonical one the smaller by
 * strcmp, sorted and counted; and first on a few reads whose counts the test gives.
 *
 * One source, two programs (apps/Makefile.inc): bench/bench_kmer (tables: ns per k-mer of each
 * pass and of the whole count, k-mers per second; options --genome G --reads R --len L --k K
 * --err E --updates --remote-filter and the common ones) and tests/mpi/test_kmer (small verified
 * runs).
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

typedef struct kpair {
    uint64_t kmer;
    int64_t count;
} kpair_t;

typedef struct kmer {
    int me, np, err;
    int updates; /* pass 2 through rmc_hashmap_update (else a combining HashMapBuffer) */
    int remote;  /* pass 1's filter: RMC's distributed Bloom filter (else the owners' own) */
    dna_cfg_t c;
    uint64_t *mine; /* this rank's k-mers (canonical), as read */
    size_t nmine;
    /* the test's known-answer input instead of a random one: nfixed reads of c.len bases as text
     * (ACGT), read i on rank i % np (c.reads: this rank's number of them) */
    const char *const *fixed;
    size_t nfixed;
} kmer_t;

static int ok_st(kmer_t *x, rmc_status_t st, const char *what)
{
    return dna_ok("kmer", x->me, &x->err, st, what);
}

/* ---------------------------------------------------------------------------- input --- */

/* The genome (the same everywhere), this rank's reads with errors (apps/dna.h), and their
 * canonical k-mers. */
static void make_input(kmer_t *x)
{
    const dna_cfg_t *c = &x->c;
    unsigned char *g = dna_genome(c->genome), *reads;
    if (x->fixed) { /* the test's reads, as bases 0..3 */
        reads = bench_alloc(dna_mul(c->reads, c->len, "the reads' bases") + 1);
        static const char bases[] = "ACGT";
        for (size_t i = (size_t)x->me, r = 0; i < x->nfixed; i += (size_t)x->np, r++)
            for (size_t j = 0; j < c->len; j++)
                reads[r * c->len + j] = (unsigned char)(strchr(bases, x->fixed[i][j]) - bases);
    } else
        reads = dna_reads(c, g, x->me);
    size_t per = c->len - (size_t)c->k + 1;
    x->mine = bench_alloc(dna_mul(dna_mul(c->reads, per, "k-mers"), sizeof(uint64_t), "k-mers"));
    x->nmine = 0;
    uint64_t mask = dna_mask(c->k);
    for (size_t r = 0; r < c->reads; r++) {
        const unsigned char *read = reads + r * c->len;
        uint64_t v = 0;
        for (size_t i = 0; i < c->len; i++) {
            v = ((v << 2) | read[i]) & mask;
            if (i + 1 >= (size_t)c->k)
                x->mine[x->nmine++] = dna_canon(v, c->k);
        }
    }
    free(reads);
    free(g);
}

/* Sorts v[0..n) (k-mers of k bases) and counts it: distinct values with their counts into out
 * (returns how many), keeping those with a count >= min. */
static size_t count_sorted(uint64_t *v, size_t n, kpair_t *out, int64_t min, int k)
{
    dna_sort_kmers(v, n, sizeof(uint64_t), k);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j] == v[i])
            j++;
        if ((int64_t)(j - i) >= min)
            out[m++] = (kpair_t){v[i], (int64_t)(j - i)};
        i = j;
    }
    return m;
}

static dna_sums_t sums_of(const kpair_t *p, size_t n)
{
    dna_sums_t s = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        s.n++;
        s.total += (uint64_t)p[i].count;
        s.mix += dna_mix(p[i].kmer ^ dna_mix((uint64_t)p[i].count));
    }
    return s;
}

/* ------------------------------------------------------------------------------ RMC --- */

typedef struct collect {
    kpair_t *p;
    size_t n, cap;
} collect_t;

static int keep(const void *key, const void *value, void *arg)
{
    collect_t *c = arg;
    int64_t v;
    memcpy(&v, value, 8);
    if (v < 2)
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->p = realloc(c->p, c->cap * sizeof(kpair_t));
        if (!c->p)
            return 1;
    }
    memcpy(&c->p[c->n].kmer, key, 8);
    c->p[c->n++].count = v;
    return 0;
}

static rmc_status_t add_count(void *value, void *arg)
{
    *(int64_t *)value += *(const int64_t *)arg;
    return RMC_OK;
}

/* The RMC count: ns per k-mer of pass 1 and pass 2 (max over ranks) in t[0], t[1]; the result of
 * this rank (its entries with count >= 2) in *res. */
static void count_rmc(kmer_t *x, double *t, collect_t *res)
{
    size_t total = 0, n = x->nmine;
    MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    rmc_bloom_h f = NULL;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    dna_ofilter_t of = {0};
    /* room: every genome k-mer (both strands fold into one) and the filter's false positives */
    size_t cap = 2 * (x->c.genome + total / 50) + 1024;
    if ((x->remote && !ok_st(x, rmc_bloom_create(RMC_BLOOM_BLOCKED, total, 0.01, &rmc_type_u64, &f),
                             "rmc_bloom_create")) ||
        !ok_st(x, rmc_hashmap_create(cap, &rmc_type_u64, &rmc_type_i64, &h),
               "rmc_hashmap_create") ||
        !ok_st(x, rmc_hashmap_buffer_create(h, 1 << 16, 512, &b), "rmc_hashmap_buffer_create"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (!x->remote) /* (the count is the map's value) */
        ok_st(x, dna_ofilter_attach(&of, b, total, x->np, sizeof(int64_t), 1),
              "dna_ofilter_attach");
    ok_st(x, rmc_barrier(), "rmc_barrier");
    uint64_t t0 = bench_now_ns();
    uint64_t *v = bench_alloc((n ? n : 1) * sizeof(uint64_t));
    kpair_t *loc = bench_alloc((n ? n : 1) * sizeof(kpair_t));
    memcpy(v, x->mine, n * sizeof(uint64_t));
    /* this rank's distinct k-mers and their counts */
    size_t m = count_sorted(v, n, loc, 1, x->c.k);
    int64_t zero = 0;
    for (size_t i = 0; i < m && !x->err; i++) {
        if (!x->remote) { /* the owner decides (dna_ofilter_admit) */
            ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &loc[i].count),
                  "rmc_hashmap_buffer_insert");
            continue;
        }
        int was = 1; /* seen twice here: in the map without asking the filter */
        if (loc[i].count == 1)
            ok_st(x, rmc_bloom_insert(f, &loc[i].kmer, &was, 0), "rmc_bloom_insert");
        if (was)
            ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &zero),
                  "rmc_hashmap_buffer_insert");
    }
    ok_st(x, rmc_hashmap_buffer_flush(b), "rmc_hashmap_buffer_flush");
    if (!x->remote)
        ok_st(x, dna_ofilter_detach(&of, b), "dna_ofilter_detach");
    uint64_t t1 = bench_now_ns();
    if (x->updates) { /* one atomic update per distinct k-mer */
        for (size_t i = 0; i < m && !x->err; i++) {
            rmc_status_t st = rmc_hashmap_update(h, &loc[i].kmer, add_count, &loc[i].count, 0);
            if (st != RMC_ERR_NOT_FOUND)
                ok_st(x, st, "rmc_hashmap_update");
        }
        ok_st(x, rmc_barrier(), "rmc_barrier");
    } else { /* the counts batched to their owners, who add them (absent: a singleton, dropped) */
        ok_st(x, rmc_hashmap_buffer_combine(b, add_count, 1), "rmc_hashmap_buffer_combine");
        for (size_t i = 0; i < m && !x->err; i++)
            ok_st(x, rmc_hashmap_buffer_insert(b, &loc[i].kmer, &loc[i].count),
                  "rmc_hashmap_buffer_insert");
        ok_st(x, rmc_hashmap_buffer_flush(b), "rmc_hashmap_buffer_flush");
    }
    uint64_t t2 = bench_now_ns();
    double mine[2] = {(double)(t1 - t0) / (double)(total ? total : 1) * x->np,
                      (double)(t2 - t1) / (double)(total ? total : 1) * x->np};
    MPI_Allreduce(mine, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    res->n = 0;
    ok_st(x, rmc_hashmap_local_foreach(h, keep, res, NULL), "rmc_hashmap_local_foreach");
    ok_st(x, rmc_hashmap_buffer_destroy(b), "rmc_hashmap_buffer_destroy");
    ok_st(x, rmc_hashmap_destroy(h), "rmc_hashmap_destroy");
    if (f)
        ok_st(x, rmc_bloom_destroy(f), "rmc_bloom_destroy");
    free(v);
    free(loc);
}

/* ------------------------------------------------------------------------------ MPI --- */

/* The MPI reference: ns per k-mer (max over ranks) in *t; this rank's result in *res. */
static void count_mpi(kmer_t *x, double *t, collect_t *res)
{
    int np = x->np;
    size_t n = x->nmine, total = 0;
    MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    int *sc = calloc((size_t)np, sizeof(int)), *rc = calloc((size_t)np, sizeof(int));
    uint64_t *send = bench_alloc((n ? n : 1) * sizeof(uint64_t));
    void *in = NULL;
    size_t cap = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = bench_now_ns();
    dna_group(x->mine, n, sizeof(uint64_t), np, sc, send, NULL);
    size_t nin = dna_alltoallv(send, sc, sizeof(uint64_t), np, rc, 0, &in, &cap);
    if (res->cap < nin + 1) {
        res->cap = nin + 1;
        res->p = realloc(res->p, res->cap * sizeof(kpair_t));
    }
    res->n = count_sorted(in, nin, res->p, 2, x->c.k);
    uint64_t t1 = bench_now_ns();
    double mine = (double)(t1 - t0) / (double)(total ? total : 1) * np;
    MPI_Allreduce(&mine, t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(sc);
    free(rc);
    free(send);
    free(in);
}

/* ----------------------------------------------------------------------- checking --- */

/* The serial reference, independent of the code it checks: every k-mer of every read taken as
 * text, its reverse complement written out as text, the canonical one the smaller by strcmp, and
 * the strings sorted and counted. */
typedef struct kstr {
    char s[33];
    int64_t count;
} kstr_t;

static int cmp_kstr(const void *a, const void *b)
{
    return strcmp(((const kstr_t *)a)->s, ((const kstr_t *)b)->s);
}

static char complement(char b)
{
    return b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : 'A';
}

/* Every rank's reads as text, back to back (len characters each), in *n reads. */
static char *all_reads_text(const kmer_t *x, size_t *n)
{
    const dna_cfg_t *c = &x->c;
    if (x->fixed) {
        char *t = bench_alloc(x->nfixed * c->len + 1);
        for (size_t i = 0; i < x->nfixed; i++)
            memcpy(t + i * c->len, x->fixed[i], c->len);
        *n = x->nfixed;
        return t;
    }
    unsigned char *g = dna_genome(c->genome);
    char *t = bench_alloc(dna_mul(dna_mul(c->reads, c->len, "reads"), (size_t)x->np, "reads"));
    for (int r = 0; r < x->np; r++) {
        unsigned char *reads = dna_reads(c, g, r);
        for (size_t i = 0; i < c->reads * c->len; i++)
            t[(size_t)r * c->reads * c->len + i] = "ACGT"[reads[i]];
        free(reads);
    }
    free(g);
    *n = c->reads * (size_t)x->np;
    return t;
}

/* The k-mers occurring twice or more in n reads of len characters (text), with their counts,
 * sorted by strcmp; returns how many. */
static size_t serial_count(const char *text, size_t n, size_t len, int k, kstr_t **out)
{
    size_t per = len - (size_t)k + 1, m = 0;
    kstr_t *all = bench_alloc(dna_mul(n * per, sizeof(kstr_t), "serial k-mers") + 1);
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < per; i++) {
            char f[33], rc[33];
            memcpy(f, text + r * len + i, (size_t)k);
            f[k] = 0;
            for (int j = 0; j < k; j++)
                rc[j] = complement(f[k - 1 - j]);
            rc[k] = 0;
            strcpy(all[m++].s, strcmp(f, rc) <= 0 ? f : rc);
        }
    qsort(all, m, sizeof(kstr_t), cmp_kstr);
    size_t d = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j < m && !strcmp(all[j].s, all[i].s))
            j++;
        if (j - i >= 2) {
            all[d] = all[i];
            all[d++].count = (int64_t)(j - i);
        }
        i = j;
    }
    *out = all;
    return d;
}

/* 1 when the two sorted lists are equal; else reports the first difference as `what`. */
static int same_kstr(const char *what, const kstr_t *want, size_t nw, const kstr_t *got, size_t ng)
{
    for (size_t i = 0; i < nw || i < ng; i++)
        if (i >= nw || i >= ng || strcmp(want[i].s, got[i].s) || want[i].count != got[i].count) {
            fprintf(stderr,
                    "kmer: %s: %zu k-mers occur twice or more, found %zu; entry %zu: %s x %" PRId64
                    ", found %s x %" PRId64 "\n",
                    what, nw, ng, i, i < nw ? want[i].s : "(none)", i < nw ? want[i].count : 0,
                    i < ng ? got[i].s : "(none)", i < ng ? got[i].count : 0);
            return 0;
        }
    return 1;
}

/* Rank 0 counts every rank's reads itself (serial_count) and compares with the gathered result,
 * entry by entry, and with `known` (nknown entries, sorted) when given. Agreed. */
static int check_serial(kmer_t *x, const collect_t *res, const kstr_t *known, size_t nknown)
{
    int np = x->np, ok = 1;
    int rn = (int)res->n * 2;
    int *rcnt = calloc((size_t)np, sizeof(int)), *rdsp = calloc((size_t)np, sizeof(int));
    MPI_Gather(&rn, 1, MPI_INT, rcnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t rall = 0;
    for (int r = 0; x->me == 0 && r < np; r++) {
        rdsp[r] = (int)rall;
        rall += (size_t)rcnt[r];
    }
    kpair_t *got = x->me == 0 ? bench_alloc((rall ? rall : 2) * sizeof(uint64_t)) : NULL;
    MPI_Gatherv(res->p, rn, MPI_UINT64_T, got, rcnt, rdsp, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (x->me == 0) {
        size_t n, g = rall / 2, k = (size_t)x->c.k;
        char *text = all_reads_text(x, &n);
        kstr_t *want, *gs = bench_alloc((g ? g : 1) * sizeof(kstr_t));
        size_t m = serial_count(text, n, x->c.len, x->c.k, &want);
        for (size_t i = 0; i < g; i++) { /* RMC's k-mers as text: first base in the top bits */
            for (size_t j = 0; j < k; j++)
                gs[i].s[j] = "ACGT"[(got[i].kmer >> (2 * (k - 1 - j))) & 3];
            gs[i].s[k] = 0;
            gs[i].count = got[i].count;
        }
        qsort(gs, g, sizeof(kstr_t), cmp_kstr);
        ok = same_kstr("serial count against RMC", want, m, gs, g);
        if (known)
            ok &= same_kstr("known answer against the serial count", known, nknown, want, m) &&
                  same_kstr("known answer against RMC", known, nknown, gs, g);
        free(text);
        free(want);
        free(gs);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(got);
    free(rcnt);
    free(rdsp);
    return ok;
}

/* One run of both counts on x's input: times (ns per k-mer: RMC pass 1, pass 2, MPI) in t[0..2];
 * 1 when both agree (and, with serial, match the serial count). */
static int run(kmer_t *x, double *t, int serial, const kstr_t *known, size_t nknown)
{
    collect_t r = {0}, m = {0};
    count_rmc(x, t, &r);
    count_mpi(x, &t[2], &m);
    dna_sums_t a = dna_global(sums_of(r.p, r.n)), b = dna_global(sums_of(m.p, m.n));
    int ok =
        dna_same("kmer", x->me, "RMC against MPI_Alltoallv (k-mers, occurrences)", a, b) && !x->err;
    if (serial)
        ok &= check_serial(x, &r, known, nknown);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    free(r.p);
    free(m.p);
    return ok;
}

static void setup(kmer_t *x)
{
    free(x->mine);
    make_input(x);
}

#ifdef KMER_TEST
/* ----------------------------------------------------------------------------- test --- */

/* The test's variants: the owners' filter with pass 2 by a combining buffer, then by updates; the
 * distributed Bloom filter with the combining buffer. */
static void variant(kmer_t *x, int var)
{
    x->updates = var == 1;
    x->remote = var == 2;
}
static const char *variant_name(const kmer_t *x)
{
    return x->remote    ? "distributed Bloom filter, pass 2 by combining buffer"
           : x->updates ? "owners' filter, pass 2 by updates"
                        : "owners' filter, pass 2 by combining buffer";
}

int main(void)
{
    kmer_t x = {0};
    dna_test_start("test_kmer", &x.me, &x.np);
    /* genome, reads per rank, read length, k, error rate: errors (singletons), k = 32 (the whole
     * word), a small genome (many repeats), no errors; beyond 2 ranks (more ranks than cores:
     * every remote operation waits for a descheduled target) a quarter of the reads */
    const dna_cfg_t cfgs[] = {
        {20000, 300, 100, 31, 0.01, 0}, {5000, 200, 80, 32, 0.02, 0}, {300, 100, 50, 15, 0.0, 0}};
    int ok = 1;
    /* A known answer first: reads of 8 bases, k = 5, their canonical k-mers counted by hand. A read
     * twice, a read and its reverse complement (TTTTTCCC, GGGAAAAA: the same 4 k-mers), k-mers
     * that are each other's reverse complement within a read (ACGTA / TACGT, CGTAC / GTACG, AACCG
     * / CGGTT, ACCGG / CCGGT), one twice within a read (CATCA) and singletons (ATCAT, GATGA). */
    static const char *const known_reads[] = {"ACGTACGT", "TTTTTCCC", "ACGTACGT",
                                              "GGGAAAAA", "AACCGGTT", "CATCATCA"};
    static const kstr_t known[] = {{"AAAAA", 2}, {"AACCG", 2}, {"ACCGG", 2},
                                   {"ACGTA", 4}, {"CATCA", 2}, {"CGTAC", 4},
                                   {"GAAAA", 2}, {"GGAAA", 2}, {"GGGAA", 2}};
    x.fixed = known_reads;
    x.nfixed = sizeof known_reads / sizeof *known_reads;
    x.c = (dna_cfg_t){64, 0, 8, 5, 0.0, 0};
    for (size_t i = (size_t)x.me; i < x.nfixed; i += (size_t)x.np)
        x.c.reads++;
    setup(&x);
    for (int var = 0; var < 3; var++) {
        double t[3];
        variant(&x, var);
        int r = run(&x, t, 1, known, sizeof known / sizeof *known);
        if (x.me == 0)
            printf("test_kmer: known answer (%zu reads of 8, k 5), %s: %s\n", x.nfixed,
                   variant_name(&x), r ? "ok" : "FAILED");
        ok &= r;
    }
    x.fixed = NULL;
    x.nfixed = 0;
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        x.c = cfgs[i];
        if (x.np > 2)
            x.c.reads /= 4;
        setup(&x);
        for (int var = 0; var < 3; var++) {
            double t[3];
            variant(&x, var);
            int r = run(&x, t, 1, NULL, 0);
            if (x.me == 0)
                printf("test_kmer: genome %zu, %zu reads of %zu per rank, k %d, errors %.2f, "
                       "%s: %s\n",
                       x.c.genome, x.c.reads, x.c.len, x.c.k, x.c.err, variant_name(&x),
                       r ? "ok" : "FAILED");
            ok &= r;
        }
    }
    free(x.mine);
    return dna_test_end("test_kmer", x.me, x.np, ok);
}

#else
/* ------------------------------------------------------------------------ benchmark --- */

/* Takes --updates, --remote-filter and the input's options (dna_parse; arg: the kmer_t) out of
 * argv. 0, or 1 after a usage error (message on rank 0). */
static int parse_own(int *argc, char **argv, void *arg)
{
    kmer_t *x = arg;
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--updates"))
            x->updates = 1;
        else if (!strcmp(argv[i], "--remote-filter"))
            x->remote = 1;
        else
            argv[kept++] = argv[i];
    }
    *argc = kept;
    /* per genome base: its byte; per k-mer occurrence: the k-mer (x->mine) */
    return dna_parse(argc, argv, "bench_kmer", &x->c, 0, 1, sizeof(uint64_t));
}

int main(int argc, char **argv)
{
    kmer_t x = {0};
    x.c = (dna_cfg_t){1000000, 40000, 100, 31, 0.01, 0};
    bench_opts_t o;
    int rc = dna_bench_start(&argc, &argv, "bench_kmer", &x.c, &o, &x.me, &x.np, parse_own, &x);
    if (rc)
        return rc > 0;
    setup(&x);
    char peers[512];
    snprintf(peers, sizeof(peers),
             "RMC %s: local count, %s, HashMapBuffer (pass 1), %s (pass 2); AMO mode %s | "
             "MPI: MPI_Alltoall + MPI_Alltoallv to "
             "the owners, local sort and count | input: genome %zu, %zu reads of %zu per rank, "
             "k %d, errors %.3f",
             rmc_version(),
             x.remote ? "distributed Bloom filter for local singletons"
                      : "the owners' Bloom filters (rmc_hashmap_buffer_admit)",
             x.updates ? "rmc_hashmap_update" : "a combining HashMapBuffer",
             rmc_amo_mode() == RMC_AMO_MODE_THREAD ? "thread" : "mpi", x.c.genome, x.c.reads,
             x.c.len, x.c.k, x.c.err);
    bench_header(&o, "k-mer counting: every k-mer seen twice or more, with its count", peers);
    double s[3][BENCH_MAX_REPS];
    for (int r = -1; r < o.reps; r++) {
        double t[3];
        if (!run(&x, t, 0, NULL, 0))
            bench_fail("the counts of RMC and MPI_Alltoallv differ");
        for (int k = 0; r >= 0 && k < 3; k++)
            s[k][r] = t[k];
    }
    char title[200];
    snprintf(title, sizeof(title),
             "ns per k-mer (all ranks' k-mers / ranks; slowest rank), "
             "median of %d reps",
             o.reps);
    bench_table_t *t = bench_table_new("kmer", "phase", title);
    int c_rmc = bench_table_col(t, "RMC", "ns");
    int c_mpi = bench_table_col(t, "MPI_Alltoallv", "ns");
    bench_table_ratio(t, "MPI/RMC", c_mpi, c_rmc, BENCH_RATIO_X);
    double p1 = bench_median(s[0], (size_t)o.reps), p2 = bench_median(s[1], (size_t)o.reps);
    double m = bench_median(s[2], (size_t)o.reps);
    int r1 = bench_table_row(t, "pass 1: local count, filter, buffered inserts", NAN);
    bench_table_set(t, r1, c_rmc, p1);
    int r2 = bench_table_row(t, x.updates ? "pass 2: updates" : "pass 2: combining buffer", NAN);
    bench_table_set(t, r2, c_rmc, p2);
    double sum[BENCH_MAX_REPS];
    for (int r = 0; r < o.reps; r++)
        sum[r] = s[0][r] + s[1][r];
    int r3 = bench_table_row(t, "whole count", NAN);
    bench_table_set(t, r3, c_rmc, bench_median(sum, (size_t)o.reps));
    bench_table_set(t, r3, c_mpi, m);
    bench_table_plot(t, 0, 0, "ns per k-mer");
    bench_table_note(t, "k-mers per second per rank: RMC %.2f M, MPI %.2f M (whole count)",
                     1e3 / bench_median(sum, (size_t)o.reps), 1e3 / m);
    bench_table_note(t, "verified every repetition: RMC's and MPI's results agree (k-mers, "
                        "total count, mix-sum); tests/mpi/test_kmer checks against a serial count");
    bench_finish(&o, &t, 1);
    ok_st(&x, rmc_finalize(), "rmc_finalize");
    free(x.mine);
    MPI_Finalize();
    return 0;
}
#endif
