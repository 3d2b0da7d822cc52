/* What the genome mini-apps (apps/kmer: k-mer counting, apps/contigs: contig generation; seed 000
 * §8.2) share: their input, a random genome and reads drawn from it with sequencing errors (the
 * same on every run with the same options); 2-bit k-mers and reverse complements; the options that
 * choose the input; and the pieces beside RMC both use: status reports, result sums, and the
 * MPI_Alltoallv to the owners of their MPI references.
 *
 * Bases are 0..3 (A, C, G, T: the complement of b is 3 - b, and numeric order of k-mers of one
 * length is lexicographic order). A k-mer is k <= 32 bases in a uint64_t, the first base highest.
 * Everything here is static inline: each app compiles what it uses.
 */
#ifndef APPS_DNA_H
#define APPS_DNA_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>
#include <rmc.h>
#include "bench_util.h"

/* The input: a genome of `genome` bases; on every rank `reads` reads of `len` bases each, from
 * random places of it (of the circle it closes with circular: reads may wrap around its end), each
 * base replaced by another at rate err; k-mers of k bases. */
typedef struct dna_cfg {
    size_t genome, reads, len;
    int k;
    double err;
    int circular;
} dna_cfg_t;

/* A well-mixed 64-bit hash of x (one splitmix64 step). */
static inline uint64_t dna_mix(uint64_t x)
{
    uint64_t s = x;
    return bench_splitmix64(&s);
}

/* The low 2k bits: a k-mer's room in a uint64_t. */
static inline uint64_t dna_mask(int k)
{
    return k == 32 ? ~0ull : (1ull << (2 * k)) - 1;
}

/* The reverse complement of k-mer v: complement every base (3 - b is ~b in 2 bits), reverse the
 * order of the 32 2-bit bases of the word (swap neighbours, then pairs, then the bytes), and
 * shift the k of them back down. */
static inline uint64_t dna_revcomp(uint64_t v, int k)
{
    v = ~v;
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(v) >> (64 - 2 * k);
}

/* The canonical form: the smaller of v and its reverse complement. */
static inline uint64_t dna_canon(uint64_t v, int k)
{
    uint64_t rc = dna_revcomp(v, k);
    return v < rc ? v : rc;
}

/* The genome: n random bases, the same on every rank and run (bench_alloc: release with free). */
static inline unsigned char *dna_genome(size_t n)
{
    unsigned char *g = bench_alloc(n);
    uint64_t s = 0x5eed;
    for (size_t i = 0; i < n; i++)
        g[i] = (unsigned char)(bench_splitmix64(&s) & 3);
    return g;
}

/* a * b, or (bench_fail) a message naming `what` when the product does not fit in a size_t. */
static inline size_t dna_mul(size_t a, size_t b, const char *what)
{
    size_t p;
    if (__builtin_mul_overflow(a, b, &p))
        bench_fail("%s: %zu x %zu overflows size_t", what, a, b);
    return p;
}

/* Rank me's reads of genome g: c->reads reads of c->len bases back to back (seeded per rank). */
static inline unsigned char *dna_reads(const dna_cfg_t *c, const unsigned char *g, int me)
{
    unsigned char *out = bench_alloc(dna_mul(c->reads, c->len, "the reads' bases"));
    uint64_t rs = 0xabcdef + (uint64_t)me * 1000003u;
    uint64_t thresh = (uint64_t)(c->err * 18446744073709551615.0);
    size_t places = c->circular ? c->genome : c->genome - c->len + 1;
    for (size_t r = 0; r < c->reads; r++) {
        unsigned char *read = out + r * c->len;
        size_t at = (size_t)(bench_splitmix64(&rs) % places);
        for (size_t i = 0; i < c->len; i++) {
            unsigned char b = g[(at + i) % c->genome];
            if (c->err > 0 && bench_splitmix64(&rs) < thresh)
                b = (unsigned char)((b + 1 + bench_splitmix64(&rs) % 3) & 3); /* another base */
            read[i] = b;
        }
    }
    return out;
}

static inline int dna_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 1 when st is RMC_OK; else reports "app[rank]: what: status (rmc_last_error)", sets *err and
 * returns 0. */
static inline int dna_ok(const char *app, int me, int *err, rmc_status_t st, const char *what)
{
    if (st == RMC_OK)
        return 1;
    fprintf(stderr, "%s[%d]: %s: %s (%s)\n", app, me, what, rmc_status_string(st),
            rmc_last_error());
    *err = 1;
    return 0;
}

/* ------------------------------------------------------------------------ options --- */

/* Rank 0 of MPI_COMM_WORLD (every process before MPI_Init or after MPI_Finalize) prints
 * "prog: bad option or value: <fmt ...>" and a newline on stderr. Returns 1 (a usage error). */
static inline int dna_bad(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int dna_bad(const char *prog, const char *fmt, ...)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return 1;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: bad option or value: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

/* Parses v, the value of option opt, as a whole decimal number (digits only: no sign, space,
 * suffix or trailing text) in lo..hi into *out. 0; or 1 after dna_bad names opt, v and the range
 * (followed by the text why: "" or, say, ", and odd"), *out unchanged. */
static inline int dna_parse_num(const char *prog, const char *opt, const char *v,
                                unsigned long long lo, unsigned long long hi, const char *why,
                                unsigned long long *out)
{
    char *end = NULL;
    unsigned long long n = 0;
    if (*v >= '0' && *v <= '9') {
        errno = 0;
        n = strtoull(v, &end, 10);
    }
    if (!end || *end || errno == ERANGE || n < lo || n > hi)
        return dna_bad(prog, "%s %s (need a whole number %llu..%llu%s)", opt, v, lo, hi, why);
    *out = n;
    return 0;
}

/* Parses v, the value of option opt, as a rate 0 <= r < 1 (a decimal number, "0.01", "1e-3", no
 * sign or trailing text) into *out. 0; or 1 after dna_bad names opt and v, *out unchanged. */
static inline int dna_parse_rate(const char *prog, const char *opt, const char *v, double *out)
{
    char *end = NULL;
    double r = 0;
    if ((*v >= '0' && *v <= '9') || *v == '.')
        r = strtod(v, &end);
    if (!end || end == v || *end || !(r >= 0 && r < 1))
        return dna_bad(prog, "%s %s (need a number 0 <= E < 1)", opt, v);
    *out = r;
    return 0;
}

/* The bytes of physical memory of this node (sysconf), SIZE_MAX when unknown: no input that needs
 * more on one rank can be allocated. */
static inline size_t dna_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (unsigned long)pages > SIZE_MAX / (unsigned long)page)
        return SIZE_MAX;
    return (size_t)pages * (size_t)page;
}

/* Takes --genome G --reads R --len L --k K --err E out of argv (the rest stays, in order, for the
 * app's own options and bench_parse) into c, and checks c: G, R, L whole numbers >= 1; 1 <= k <= 32
 * (odd_k: k odd, so at most 31: an even k has k-mers that are their own reverse complement),
 * k <= len, len <= genome (unless circular), 0 <= err < 1; and the input one rank holds,
 * G * per_base + R * L + R * (L - k + 1) * per_occ bytes (the app's bytes per genome base and per
 * k-mer occurrence of its reads), must fit in a size_t and in this node's memory (dna_memory).
 * 0; or 1 after a message on rank 0 (dna_bad) naming the options and their values. */
static inline int dna_parse(int *argc, char **argv, const char *prog, dna_cfg_t *c, int odd_k,
                            size_t per_base, size_t per_occ)
{
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        int known = !strcmp(a, "--genome") || !strcmp(a, "--reads") || !strcmp(a, "--len") ||
                    !strcmp(a, "--k") || !strcmp(a, "--err");
        if (!known) {
            argv[kept++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc)
            return dna_bad(prog, "%s (it needs a value)", a);
        const char *v = argv[++i];
        unsigned long long n = 0;
        if (!strcmp(a, "--err")) {
            if (dna_parse_rate(prog, a, v, &c->err))
                return 1;
        } else if (!strcmp(a, "--k")) {
            if (dna_parse_num(prog, a, v, 1, odd_k ? 31 : 32,
                              odd_k ? ", and odd" : "; a k-mer is one 64-bit word", &n))
                return 1;
            c->k = (int)n;
        } else {
            size_t *to = !strcmp(a, "--genome")  ? &c->genome
                         : !strcmp(a, "--reads") ? &c->reads
                                                 : &c->len;
            if (dna_parse_num(prog, a, v, 1, SIZE_MAX, "", &n))
                return 1;
            *to = (size_t)n;
        }
    }
    *argc = kept;
    if (c->k < 1 || c->k > 32 || (odd_k && c->k % 2 == 0))
        return dna_bad(prog, "--k %d (need %s)", c->k,
                       odd_k ? "an odd k <= 31 (an even k has k-mers that are their own reverse "
                               "complement, which have no orientation)"
                             : "1 <= k <= 32 (a k-mer is one 64-bit word)");
    if (c->len < (size_t)c->k)
        return dna_bad(prog, "--k %d --len %zu (need k <= len)", c->k, c->len);
    if (!c->genome || !c->reads)
        return dna_bad(prog, "--genome %zu --reads %zu (need both >= 1)", c->genome, c->reads);
    if (c->genome < c->len && !c->circular)
        return dna_bad(prog, "--len %zu --genome %zu (need len <= genome)", c->len, c->genome);
    if (!(c->err >= 0 && c->err < 1))
        return dna_bad(prog, "--err %g (need 0 <= err < 1)", c->err);
    size_t g, r, o, need, mem = dna_memory();
    if (__builtin_mul_overflow(c->genome, per_base, &g) ||
        __builtin_mul_overflow(c->reads, c->len, &r) ||
        __builtin_mul_overflow(c->reads, c->len - (size_t)c->k + 1, &o) ||
        __builtin_mul_overflow(o, per_occ, &o) || __builtin_add_overflow(g, r, &need) ||
        __builtin_add_overflow(need, o, &need))
        return dna_bad(prog,
                       "--genome %zu --reads %zu --len %zu (one rank's input needs more than "
                       "%zu bytes)",
                       c->genome, c->reads, c->len, (size_t)SIZE_MAX);
    if (need > mem)
        return dna_bad(prog,
                       "--genome %zu --reads %zu --len %zu (one rank's input needs %zu bytes, "
                       "more than this node's %zu bytes of memory)",
                       c->genome, c->reads, c->len, need, mem);
    return 0;
}

/* An app's own options: takes them out of argv (*argc updated) and then the input's with
 * dna_parse; 0, or 1 after a usage error reported on rank 0 (dna_bad). */
typedef int (*dna_own_opts_t)(int *argc, char **argv, void *arg);

/* The start of a genome app's benchmark: MPI first (MPI_Init_thread, MPI_THREAD_MULTIPLE; this
 * rank and the ranks), so that only rank 0 reports a bad option; then the app's own options and
 * the input's (own(argc, *argv, arg)), the common ones (bench_parse; --quick takes a quarter of
 * the reads, never fewer than one), at least 2 ranks, and RMC (rmc_init; a failure aborts).
 * Returns 0 to run; else every rank has finalized MPI and main returns rc > 0: 0 after --help, 1
 * after a usage error (message on rank 0) or with fewer than 2 ranks. */
static inline int dna_bench_start(int *argc, char ***argv, const char *prog, dna_cfg_t *c,
                                  bench_opts_t *o, int *me, int *np, dna_own_opts_t own, void *arg)
{
    int provided, err = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, np);
    int rc = own(argc, *argv, arg);
    if (!rc)
        rc = bench_parse(*argc, *argv, prog, 8, 8, o);
    /* every rank has the same arguments, so the same verdict; agreed all the same, so that no rank
     * runs alone: a usage error (2) over --help (1) over running (0) */
    int mine = rc > 0 ? 2 : rc < 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all) {
        MPI_Finalize();
        return all == 2 ? 1 : -1;
    }
    if (o->quick)
        c->reads = c->reads / 4 ? c->reads / 4 : 1;
    if (*np < 2) {
        if (*me == 0)
            fprintf(stderr, "%s needs 2 ranks: mpiexec.mpich -n 2 %s\n", prog, (*argv)[0]);
        MPI_Finalize();
        return 1;
    }
    if (!dna_ok(prog, *me, &err, rmc_init(MPI_COMM_WORLD), "rmc_init"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    return 0;
}

/* The start and the end of a genome app's test. Start: MPI (MPI_THREAD_MULTIPLE), this rank and
 * the ranks, rmc_init (a failure aborts). End: rmc_finalize (a failure fails the test), the verdict
 * agreed by every rank and printed by rank 0 ("prog: N ranks: PASS"), MPI_Finalize; returns main's
 * exit status. */
static inline void dna_test_start(const char *prog, int *me, int *np)
{
    int provided, err = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, np);
    if (!dna_ok(prog, *me, &err, rmc_init(MPI_COMM_WORLD), "rmc_init"))
        MPI_Abort(MPI_COMM_WORLD, 1);
}

static inline int dna_test_end(const char *prog, int me, int np, int ok)
{
    int err = 0;
    ok &= dna_ok(prog, me, &err, rmc_finalize(), "rmc_finalize");
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %d ranks: %s\n", prog, np, ok ? "PASS" : "FAIL");
    MPI_Finalize();
    return ok ? 0 : 1;
}

/* ---------------------------------------------------------------------- results --- */

/* A result in three numbers, equal when two results agree (entries, their total, 64-bit sum of
 * a mix of each entry). */
typedef struct dna_sums {
    uint64_t n, total, mix;
} dna_sums_t;

/* The sums over every rank. Collective. */
static inline dna_sums_t dna_global(dna_sums_t s)
{
    dna_sums_t g;
    MPI_Allreduce(&s, &g, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return g;
}

/* 1 when a and b agree; else rank 0 says how they differ ("app: what: ... against ..."). */
static inline int dna_same(const char *app, int me, const char *what, dna_sums_t a, dna_sums_t b)
{
    if (a.n == b.n && a.total == b.total && a.mix == b.mix)
        return 1;
    if (me == 0)
        fprintf(stderr,
                "%s: %s: %" PRIu64 " entries, total %" PRIu64 ", mix %016" PRIx64
                " against %" PRIu64 ", %" PRIu64 ", %016" PRIx64 "\n",
                app, what, a.n, a.total, a.mix, b.n, b.total, b.mix);
    return 0;
}

/* --------------------------------------------------------- the owners' filter --- */

/* Pass 1 of k-mer counting and of the contigs' analysis through the owners' filters: each rank
 * sends every distinct k-mer once through a HashMapBuffer, its value starting with the sender's
 * count; the owner (rmc_hashmap_buffer_admit) lets one a sender holds twice or more in at once,
 * one held once when its own blocked Bloom filter had seen it (one 64-bit block per k-mer, 6 bits
 * in it, 10-20 bits per k-mer the owner can be sent: its share of all occurrences, rounded up to a
 * power of two of blocks), both with zeros for value (pass 2 adds the counts); a k-mer already in
 * the map keeps its zeros. */
typedef struct dna_ofilter {
    uint64_t *blk;
    uint64_t mask; /* blocks - 1 (a power of two) */
    size_t vsize;  /* the map's value bytes */
    int wide;      /* the sender's count: an int64_t (1) or a uint32_t (0) at the value's start */
} dna_ofilter_t;

/* 1 when kmer was (probably) seen before; records it. */
static inline int dna_ofilter_seen(dna_ofilter_t *f, uint64_t kmer)
{
    uint64_t h = dna_mix(kmer ^ 0x6a09e667f3bcc909ull), bits = dna_mix(h), m = 0;
    for (int i = 0; i < 6; i++, bits >>= 6)
        m |= 1ull << (bits & 63);
    uint64_t *b = &f->blk[h & f->mask];
    int was = (*b & m) == m;
    *b |= m;
    return was;
}

/* The owner's filter (rmc_hashmap_buffer_admit; arg: the dna_ofilter_t). */
static inline int dna_ofilter_admit(const void *key, void *value, void *arg)
{
    dna_ofilter_t *f = arg;
    int64_t c;
    uint64_t k;
    if (f->wide) {
        memcpy(&c, value, 8);
    } else {
        uint32_t c32;
        memcpy(&c32, value, 4);
        c = c32;
    }
    memset(value, 0, f->vsize);
    memcpy(&k, key, 8);
    return c >= 2 || dna_ofilter_seen(f, k);
}

/* A combining function that keeps the stored value (the incoming one was its sender's count). */
static inline rmc_status_t dna_keep_value(void *value, void *arg)
{
    (void)value;
    (void)arg;
    return RMC_OK;
}

/* Before pass 1: this rank's filter, allocated and its pages touched (as a Bloom filter's region
 * is at its creation), made b's (with dna_keep_value) for `total` occurrences over np ranks. */
static inline rmc_status_t dna_ofilter_attach(dna_ofilter_t *f, rmc_hashmap_buffer_h b,
                                              size_t total, int np, size_t vsize, int wide)
{
    size_t blocks = 1;
    while (blocks * 64 < 10 * (total / (size_t)np + 1))
        blocks *= 2;
    f->blk = bench_alloc(blocks * sizeof(uint64_t));
    memset(f->blk, 0, blocks * sizeof(uint64_t));
    f->mask = blocks - 1;
    f->vsize = vsize;
    f->wide = wide;
    rmc_status_t st = rmc_hashmap_buffer_admit(b, dna_ofilter_admit, f);
    return st == RMC_OK ? rmc_hashmap_buffer_combine(b, dna_keep_value, 0) : st;
}

/* After pass 1's flush: b without the filter and the combining function; the filter freed. */
static inline rmc_status_t dna_ofilter_detach(dna_ofilter_t *f, rmc_hashmap_buffer_h b)
{
    free(f->blk);
    f->blk = NULL;
    rmc_status_t st = rmc_hashmap_buffer_admit(b, NULL, NULL);
    return st == RMC_OK ? rmc_hashmap_buffer_combine(b, NULL, 0) : st;
}

/* Sorts n records of `size` (>= 8) bytes by the uint64_t k-mer (k of 1..32 bases: 2k bits) each
 * starts with: a radix sort (least significant 16 bits first, stable), through a scratch copy of
 * the records. Both assemblies sort their occurrences and the MPI owners their records, k-mer
 * counting its k-mers, this way (qsort took several times longer). */
static inline void dna_sort_kmers(void *a, size_t n, size_t size, int k)
{
    if (size < sizeof(uint64_t) || k < 1 || k > 32)
        bench_fail("dna_sort_kmers: records of %zu bytes, k = %d (>= 8 bytes, k 1..32)", size, k);
    char *src = a, *dst = malloc(n ? dna_mul(n, size, "the records to sort") : 1), *scratch = dst;
    size_t *at = malloc(65536 * sizeof(size_t));
    if (!dst || !at)
        bench_fail("out of memory sorting %zu records of %zu bytes", n, size);
    for (int sh = 0; sh < 2 * k; sh += 16) {
        memset(at, 0, 65536 * sizeof(size_t));
        for (size_t i = 0; i < n; i++) {
            uint64_t key;
            memcpy(&key, src + i * size, sizeof key);
            at[(key >> sh) & 0xffff]++;
        }
        for (size_t d = 0, sum = 0; d < 65536; d++) { /* counts -> first places */
            size_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t key;
            memcpy(&key, src + i * size, sizeof key);
            memcpy(dst + at[(key >> sh) & 0xffff]++ * size, src + i * size, size);
        }
        char *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * size);
    free(scratch);
    free(at);
}

/* ------------------------------------------------------------- MPI to the owners --- */

/* The MPI references' owner of a k-mer: a hash of it, spread evenly over np ranks. */
static inline int dna_owner(uint64_t kmer, int np)
{
    return (int)((dna_mix(kmer) >> 32) * (uint64_t)np >> 32);
}

/* Copies n records of `size` bytes, each starting with its uint64_t k-mer, from in to out grouped
 * by the k-mer's owner (rank order; within a rank in input order): sc[r] = how many go to rank r
 * and, with where, where[i] = record i's place in out. */
static inline void dna_group(const void *in, size_t n, size_t size, int np, int *sc, void *out,
                             size_t *where)
{
    int *own = malloc((n ? n : 1) * sizeof(int));
    size_t *at = calloc((size_t)np, sizeof(size_t));
    if (!own || !at)
        bench_fail("out of memory grouping %zu records", n);
    memset(sc, 0, (size_t)np * sizeof(int));
    for (size_t i = 0; i < n; i++) {
        uint64_t kmer;
        memcpy(&kmer, (const char *)in + i * size, sizeof kmer);
        own[i] = dna_owner(kmer, np);
        sc[own[i]]++;
    }
    for (int r = 1; r < np; r++)
        at[r] = at[r - 1] + (size_t)sc[r - 1];
    for (size_t i = 0; i < n; i++) {
        size_t p = at[own[i]]++;
        memcpy((char *)out + p * size, (const char *)in + i * size, size);
        if (where)
            where[i] = p;
    }
    free(own);
    free(at);
}

/* MPI_Alltoallv of records of `size` bytes grouped by destination, sc[r] of them to rank r. What
 * comes from rank r, rc[r] records (known: given, as when answering an exchange; else exchanged
 * first by MPI_Alltoall and stored in rc), lands grouped by source in *buf (grown as needed, *cap
 * bytes; free it). Returns the number of records received. Collective. */
static inline size_t dna_alltoallv(const void *send, const int *sc, size_t size, int np, int *rc,
                                   int known, void **buf, size_t *cap)
{
    int *bsc = malloc((size_t)np * 4 * sizeof(int));
    if (!bsc)
        bench_fail("out of memory for %d ranks' counts", np);
    int *bsd = bsc + np, *brc = bsc + 2 * np, *brd = bsc + 3 * np;
    if (!known)
        bench_mck(MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
    size_t out = 0, in = 0;
    for (int r = 0; r < np; r++) {
        if ((out + (size_t)sc[r]) * size > INT_MAX || (in + (size_t)rc[r]) * size > INT_MAX)
            bench_fail("more than 2 GiB in one MPI_Alltoallv");
        bsc[r] = (int)((size_t)sc[r] * size);
        bsd[r] = (int)(out * size);
        brc[r] = (int)((size_t)rc[r] * size);
        brd[r] = (int)(in * size);
        out += (size_t)sc[r];
        in += (size_t)rc[r];
    }
    if (in * size > *cap || !*buf) {
        free(*buf);
        *cap = in * size > 64 ? in * size : 64;
        if (!(*buf = malloc(*cap)))
            bench_fail("out of memory (%zu bytes)", *cap);
    }
    bench_mck(MPI_Alltoallv(send, bsc, bsd, MPI_BYTE, *buf, brc, brd, MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Alltoallv");
    free(bsc);
    return in;
}

#endif
