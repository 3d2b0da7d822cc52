/* GA's default blocking (gai_ddb, ga_impl.h): the distribution Global Arrays 5.8.2 gives an array
 * created with NGA_Create / NGA_Create64 (or GA_Allocate after GA_Set_chunk), reproduced exactly.
 *
 * GA works in Fortran order: its dimension d is the C dimension ndim - 1 - d, so below D[d] and
 * c[d] are the C dims and chunk reversed (c all 0 when chunk is NULL: GA_Set_data's default; the
 * raw values matter, 0 and -1 differ). nproc is the array's group size (GA_Set_restricted: the
 * number of restricted processes). GA's allocation (pnga_allocate in base.c, with ddb_h2 of
 * decomp.c) then does:
 *
 * 1. Minimum blocks b[d] for the decomposition: when c[0] != 0 (the C chunk's LAST entry),
 *    b[d] = min(c[d], D[d]) for every d; when c[0] == 0 the whole chunk is ignored here and
 *    b[d] = -1. Then b[d] = 1 wherever D[d] == 1. (So chunk {5, 0} in C leaves the decomposition
 *    unconstrained while {5, -1} constrains dimension 0; step 3 uses the 5 either way.)
 *
 * 2. ddb_h2(ndim, D, nproc, threshold 0.0, bias 0, b, pe):
 *    - b[d] <= 0 becomes 1; t[d] = ceil(D[d] / b[d]) is the extent in chunks (t <= 0: t = 1,
 *      b = D).
 *    - the prime factors of nproc, with multiplicity, are handed out LARGEST FIRST, pe[] starting
 *      at 1. Factor p goes to the dimension whose t[j] mod (pe[j] * p), relative to t[j], is
 *      smallest: r(j) = (t[j] % (pe[j] * p)) / t[j] in double, or 1.1 when t[j] < pe[j] * p (the
 *      dimension cannot take the factor). The candidates are scanned starting at dimension s and
 *      going s, s+1, ..., ndim-1, 0, ..., s-1; only a strictly smaller r replaces the best, so
 *      ties go to the first one scanned. s starts at 0 and advances by one (mod ndim) after every
 *      factor, whichever dimension took it. (A factor nobody can take still goes to the first
 *      dimension scanned: pe may exceed t.)
 *    - the quality product of (t - t % pe) / t is compared with the threshold 0.0 (never less:
 *      GA's exhaustive ddb_ex search is not reached), and the block size is returned in chunks:
 *      B[d] = ceil(t[d] / pe[d]).
 *
 * 3. Block starts (GA's map, here 0-based), per dimension d with n = pe[d], B = B[d]: with
 *    m = min(c[d], D[d]) when c[d] > 1 (even if step 1 ignored the chunk) and m = 1 otherwise,
 *    pcut = ceil(D[d] / m) - (B - 1) * n. Block i (i = 0, 1, ... while i < n and the running
 *    start x < D[d]) starts at x and holds (i < pcut ? B : B - 1) * m elements. The number of
 *    blocks of d is the number of starts made (GA shrinks pe[d] to it), so a dimension smaller
 *    than its share of the process grid gets fewer blocks and some processes own nothing.
 *    With m == 1 this is the balanced split: the first D mod n blocks (or all) one larger.
 *
 * Block k of the grid (dimension 0 varying fastest in GA's order, i.e. the C LAST dimension
 * fastest) belongs to process k; processes k >= prod(nblock) own nothing. The output is in C order:
 * nblock[i] and map's i-th run are GA's dimension ndim - 1 - i.
 *
 * Evidence: the steps were read from the disassembly of Debian's libga-mpich.a (5.8.2-1: GA's
 * source is not on the machine). ddb_h2 below matched the library's own ddb_h2 (decomp.o, called
 * directly) on 4.2 million inputs: every 1-D and 2-D shape up to 70 and 3-D up to 16 for nproc
 * 1 .. 130, and 3 million random ones (1 .. 7 dimensions, extents to 10^7, chunks -1 / 0 / > 0,
 * nproc to 4096). The whole of gai_ddb matched NGA_Create / GA_Nblock / NGA_Distribution
 * (tests/ga/ddb_probe.c) in 7,398 cases run for real (mpiexec -n 1 .. 8; 9 .. 13, 16, 17, 24 and
 * 32 with fewer shapes) and 70,104 emulated ones (nproc 1 .. 64, 96, 100, 128, 210, 256;
 * byte-identical to the real runs where both ran). A sample is the table of
 * tests/unit/test_ga_ddb.c. */
#include "ga_impl.h"

#define DDB_UNCUT 1.1 /* ddb_h2's ratio for a dimension too short to take a factor */

/* decomp.c's ddb_h2 with threshold 0.0 and bias 0: the process grid pe[] and the block sizes in
 * chunks blk[] (in: minimum blocks, <= 0: none; out: ceil(t / pe)). GA's order (Fortran). */
static void ddb_h2(int ndim, const int64_t dims[], int64_t nproc, int64_t blk[], int64_t pe[])
{
    int64_t t[GA_MAX_DIM] = {0};
    for (int d = 0; d < ndim; d++) {
        if (blk[d] <= 0)
            blk[d] = 1;
        t[d] = (dims[d] + blk[d] - 1) / blk[d];
        if (t[d] <= 0) {
            t[d] = 1;
            blk[d] = dims[d];
        }
        pe[d] = 1;
    }
    /* prime factors of nproc, ascending, with multiplicity */
    int64_t primes[64];
    int nprime = 0;
    int64_t rest = nproc;
    for (int64_t f = 2; rest > 1 && f <= rest; f++)
        while (rest % f == 0) {
            primes[nprime++] = f;
            rest /= f;
        }
    int start = 0;
    for (int k = nprime - 1; k >= 0; k--) {
        int64_t p = primes[k];
        int best = start;
        double rbest = 0;
        for (int m = 0; m < ndim; m++) {
            int j = (start + m) % ndim;
            int64_t q = pe[j] * p;
            double r = t[j] >= q ? (double)(t[j] % q) / (double)t[j] : DDB_UNCUT;
            if (m == 0 || r < rbest) {
                best = j;
                rbest = r;
            }
        }
        pe[best] *= p;
        start = (start + 1) % ndim;
    }
    for (int d = 0; d < ndim; d++)
        blk[d] = (t[d] + pe[d] - 1) / pe[d];
}

void gai_ddb(int ndim, const int64_t dims[], const int64_t chunk[], int nproc, int nblock[],
             int64_t map[])
{
    int64_t D[GA_MAX_DIM] = {0}, c[GA_MAX_DIM] = {0}, blk[GA_MAX_DIM] = {0}, pe[GA_MAX_DIM] = {0};
    for (int d = 0; d < ndim; d++) {
        D[d] = dims[ndim - 1 - d];
        c[d] = chunk ? chunk[ndim - 1 - d] : 0;
    }
    for (int d = 0; d < ndim; d++) {
        blk[d] = c[0] != 0 ? (c[d] < D[d] ? c[d] : D[d]) : -1;
        if (D[d] == 1)
            blk[d] = 1;
    }
    ddb_h2(ndim, D, nproc, blk, pe);
    /* the block starts; C dimension i (GA's ndim - 1 - i) after those of C dimensions 0 .. i-1 */
    int64_t *mp = map;
    for (int i = 0; i < ndim; i++) {
        int d = ndim - 1 - i;
        int64_t m = c[d] > 1 ? (c[d] < D[d] ? c[d] : D[d]) : 1;
        int64_t pcut = (D[d] - 1) / m + 1 - (blk[d] - 1) * pe[d];
        int64_t x = 0;
        int n = 0;
        for (int64_t p = 0; p < pe[d] && x < D[d]; p++) {
            mp[n++] = x;
            x += (p < pcut ? blk[d] : blk[d] - 1) * m;
        }
        nblock[i] = n;
        mp += n;
    }
}
