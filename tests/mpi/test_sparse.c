/* Distributed sparse matrices (rmc/sparse.h): scatter then gather gives back the input exactly
 * (R-MAT and Erdős–Rényi, both index widths, every kind of distribution, tiles left empty);
 * assembling row parts given in shuffled order equals the scatter of the whole; every tile read
 * (get, get_nb, view) equals the tile cut from the whole; tile_set is seen by its owner at once,
 * by the others after renew (the old tile until then); slices across tile boundaries; the total
 * nonzeros; the generators give the serial matrix whatever the number of ranks; Matrix Market
 * round trip and a malformed file failing on every rank with its line; 32-bit index overflow;
 * bad input fails on every rank alike and changes nothing. */
#include "cttest.h"
#include <rmc/csr.h>
#include <rmc/sparse.h>

#define RA 0.6
#define RB (0.4 / 3)

/* a == b: shape, structure and values (bit for bit), whatever their index widths. */
static int csr_eq(const rmc_csr_t *a, const rmc_csr_t *b)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols || a->nnz != b->nnz)
        return 0;
    for (int64_t i = 0; i <= a->nrows; i++)
        if ((a->rowptr ? rmc_csr_rowptr(a, i) : 0) != (b->rowptr ? rmc_csr_rowptr(b, i) : 0))
            return 0;
    for (int64_t k = 0; k < a->nnz; k++)
        if (rmc_csr_colind(a, k) != rmc_csr_colind(b, k) ||
            memcmp(&a->val[k], &b->val[k], sizeof(double)) != 0)
            return 0;
    return 1;
}

/* The test matrices (whole, on every rank): 0 R-MAT of scale 5 (32 x 32), 1 Erdős–Rényi 37 x 23
 * (p 0.15), 2 a sparser Erdős–Rényi 40 x 50 (p 0.02: many empty tiles). */
enum { NMAT = 3 };
static void make_whole(int which, int idx64, uint64_t seed, rmc_csr_t *a)
{
    rmc_csr_init(a, idx64);
    if (which == 0)
        assert_int_equal(rmc_csr_rmat(a, 5, 4, RA, RB, RB, seed, 0, 32, idx64), RMC_OK);
    else if (which == 1)
        assert_int_equal(rmc_csr_erdos_renyi(a, 37, 23, 0.15, seed, 0, 37, idx64), RMC_OK);
    else
        assert_int_equal(rmc_csr_erdos_renyi(a, 40, 50, 0.02, seed, 0, 40, idx64), RMC_OK);
}

/* Distributions for an m x n matrix: the BCL descriptors, irregular, round-robin, small
 * block-cyclic tiles (many of them empty for a sparse matrix). */
enum { NDIST = 8 };
static rmc_dist_h make_dist(int which, int64_t m, int64_t n)
{
    rmc_dist_h d = NULL;
    switch (which) {
    case 0:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_RECT, m, n, 0, &d), RMC_OK);
        break;
    case 1:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_ROW, m, n, 3, &d), RMC_OK); /* cyclic rows */
        break;
    case 2:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_COLUMN, m, n, 0, &d), RMC_OK);
        break;
    case 3:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_SQUARE, m, n, 6, &d), RMC_OK);
        break;
    case 4: { /* irregular: uneven blocks, as many as the ranks allow */
        int nb[2] = {np >= 2 ? 2 : 1, np >= 4 ? 2 : 1};
        int64_t dims[2] = {m, n}, map[4], c = 0;
        map[c++] = 0;
        if (nb[0] == 2)
            map[c++] = 3;
        map[c++] = 0;
        if (nb[1] == 2)
            map[c++] = n - 4;
        assert_int_equal(rmc_dist_irregular(2, dims, nb, map, &d), RMC_OK);
        break;
    }
    case 5: {
        int64_t dims[2] = {m, n}, blk[2] = {7, 5};
        assert_int_equal(rmc_dist_round_robin(2, dims, blk, &d), RMC_OK);
        break;
    }
    case 6: { /* block-cyclic, small tiles on the chosen grid */
        int64_t dims[2] = {m, n}, t[2] = {3, 4};
        assert_int_equal(rmc_dist_regular(2, dims, t, NULL, &d), RMC_OK);
        break;
    }
    default:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_OPT, m, n, 8, &d), RMC_OK);
    }
    return d;
}

/* Tile t of the whole matrix a, cut out locally. */
static void cut_tile(rmc_dist_h d, int64_t t, const rmc_csr_t *a, rmc_csr_t *out)
{
    int64_t lo[2], hi[2];
    assert_int_equal(rmc_dist_tile(d, t, lo, hi, NULL), RMC_OK);
    rmc_csr_init(out, a->idx64);
    assert_int_equal(rmc_csr_slice(out, a, lo[0], hi[0], lo[1], hi[1]), RMC_OK);
}

/* Every tile of s equals a's, through get, get_nb (all in flight at once) and view; tile_nnz. */
static int tiles_equal(rmc_spmatrix_h s, const rmc_csr_t *a)
{
    rmc_dist_h d = rmc_spmatrix_dist(s);
    int64_t nt = rmc_dist_ntiles(d);
    int ok = 1;
    rmc_csr_t *nb = calloc((size_t)nt, sizeof(rmc_csr_t));
    rmc_request_h *req = calloc((size_t)nt, sizeof(rmc_request_h));
    assert_non_null(nb);
    assert_non_null(req);
    for (int64_t t = 0; t < nt; t++)
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_get_nb(s, t, &nb[t], &req[t]) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_wait_all(req, (size_t)nt) == RMC_OK);
    for (int64_t t = 0; t < nt; t++) {
        rmc_csr_t want, got, view;
        int owner;
        cut_tile(d, t, a, &want);
        rmc_dist_tile(d, t, NULL, NULL, &owner);
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, t, &got) == RMC_OK);
        MPITEST_EXPECT(ok, got.idx64 == rmc_spmatrix_idx64(s) && got.own == 1);
        MPITEST_EXPECT(ok, csr_eq(&got, &want));
        MPITEST_EXPECT(ok, csr_eq(&nb[t], &want));
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_nnz(s, t) == want.nnz);
        rmc_status_t vs = rmc_spmatrix_tile_view(s, t, &view);
        MPITEST_EXPECT(ok, vs == RMC_OK || (vs == RMC_ERR_NOT_FOUND && owner != me));
        if (vs == RMC_OK)
            MPITEST_EXPECT(ok, view.own == 0 && csr_eq(&view, &want) && rmc_csr_check(&view) == 0);
        if (!ok)
            fprintf(stderr, "[rank %d] tile %lld\n", me, (long long)t);
        rmc_csr_free(&want);
        rmc_csr_free(&got);
        rmc_csr_free(&nb[t]);
        if (!ok)
            break;
    }
    for (int64_t t = 0; t < nt; t++)
        rmc_csr_free(&nb[t]);
    free(nb);
    free(req);
    return ok;
}

/* s gathered on root equals a (every rank agrees on the verdict). */
static void check_gather(rmc_spmatrix_h s, int root, const rmc_csr_t *a)
{
    rmc_csr_t g;
    rmc_csr_init(&g, 0);
    MPI_CHECK_OK(rmc_spmatrix_gather(s, root, me == root ? &g : NULL));
    int ok = 1;
    if (me == root) {
        MPITEST_EXPECT(ok, g.idx64 == rmc_spmatrix_idx64(s) && rmc_csr_check(&g) == RMC_OK);
        MPITEST_EXPECT(ok, csr_eq(&g, a));
    }
    MPI_CHECK_ALL(ok);
    rmc_csr_free(&g);
}

/* Scatter from a root, gather to another: the input exactly, for every distribution (each with
 * one of the matrices and index widths: every pair of them is met); the total nonzeros; every
 * tile. Also a 64-bit input into a 32-bit matrix, and scatters replacing everything. */
static void test_scatter_gather(void **st)
{
    (void)st;
    for (int k = 0; k < NDIST; k++) {
        int w = k % NMAT, idx64 = k % 2;
        rmc_csr_t a, a64;
        make_whole(w, idx64, 11 + (uint64_t)w, &a);
        rmc_dist_h d = make_dist(k, a.nrows, a.ncols);
        rmc_spmatrix_h s;
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s));
        rmc_dist_free(d); /* the matrix keeps its own copy */
        int root = (w + k) % np, root2 = (w + k + 1) % np;
        if (me == root && !idx64) { /* the input in the other width: converted */
            assert_int_equal(rmc_csr_copy(&a64, &a, 1), RMC_OK);
            MPI_CHECK_OK(rmc_spmatrix_scatter(s, root, &a64));
            rmc_csr_free(&a64);
        } else {
            MPI_CHECK_OK(rmc_spmatrix_scatter(s, root, me == root ? &a : NULL));
        }
        int64_t nnz = -1;
        MPI_CHECK_OK(rmc_spmatrix_nnz(s, &nnz));
        MPI_CHECK_ALL(nnz == a.nnz);
        check_gather(s, root2, &a);
        MPI_CHECK_ALL(tiles_equal(s, &a));
        if (k >= 2)
            goto done;
        /* a second scatter replaces everything (an empty matrix, then a again) */
        rmc_csr_t z;
        rmc_csr_init(&z, idx64);
        assert_int_equal(rmc_csr_alloc(&z, a.nrows, a.ncols, 0, idx64), RMC_OK);
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, root2, me == root2 ? &z : NULL));
        MPI_CHECK_OK(rmc_spmatrix_nnz(s, &nnz));
        MPI_CHECK_ALL(nnz == 0);
        check_gather(s, root, &z);
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, root, me == root ? &a : NULL));
        check_gather(s, root2, &a);
        rmc_csr_free(&z);
    done:
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        rmc_csr_free(&a);
    }
}

static uint64_t rnd(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* Row parts of uneven sizes (one rank without rows when there are 3 or more), dealt to the ranks
 * in a shuffled order: assembled, they equal the scatter of the whole. */
static void test_assemble(void **st)
{
    (void)st;
    for (int k = 0; k < NDIST; k += 2) {
        int w = (k / 2) % NMAT, idx64 = (k / 2) % 2;
        rmc_csr_t a;
        make_whole(w, idx64, 5 + (uint64_t)w, &a);
        /* cut points: np parts, part 1 empty when np >= 3 */
        int64_t cut[9], m = a.nrows;
        int perm[8];
        cut[0] = 0;
        for (int r = 1; r < np; r++)
            cut[r] = (r == 2 && np >= 3) ? cut[1] : m * r * r / (np * np);
        cut[np] = m;
        for (int r = 0; r < np; r++)
            perm[r] = r;
        uint64_t x = 77 + (uint64_t)k;
        for (int r = np - 1; r > 0; r--) {
            int j = (int)(rnd(&x) % (uint64_t)(r + 1)), t = perm[r];
            perm[r] = perm[j];
            perm[j] = t;
        }
        int mine = perm[me];
        rmc_csr_t part;
        rmc_csr_init(&part, 1 - idx64); /* the parts in the other width: converted */
        rmc_csr_t tmp;
        rmc_csr_init(&tmp, idx64);
        assert_int_equal(rmc_csr_slice(&tmp, &a, cut[mine], cut[mine + 1], 0, a.ncols), RMC_OK);
        assert_int_equal(rmc_csr_copy(&part, &tmp, 1 - idx64), RMC_OK);
        rmc_csr_free(&tmp);
        rmc_dist_h d = make_dist(k, a.nrows, a.ncols);
        rmc_spmatrix_h s, s2;
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s));
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s2));
        rmc_dist_free(d);
        MPI_CHECK_OK(rmc_spmatrix_assemble(s, cut[mine], &part));
        MPI_CHECK_OK(rmc_spmatrix_scatter(s2, 0, me == 0 ? &a : NULL));
        check_gather(s, np - 1, &a);
        MPI_CHECK_ALL(tiles_equal(s, &a));
        /* tile by tile, the two agree */
        int ok = 1;
        for (int64_t t = 0; t < rmc_dist_ntiles(rmc_spmatrix_dist(s)); t++) {
            rmc_csr_t x1, x2;
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, t, &x1) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s2, t, &x2) == RMC_OK);
            MPITEST_EXPECT(ok, csr_eq(&x1, &x2));
            rmc_csr_free(&x1);
            rmc_csr_free(&x2);
        }
        MPI_CHECK_ALL(ok);
        /* a rank giving NULL gives no rows */
        MPI_CHECK_OK(rmc_spmatrix_assemble(s, me == 0 ? 0 : 5, me == 0 ? &a : NULL));
        check_gather(s, 0, &a);
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        MPI_CHECK_OK(rmc_spmatrix_destroy(s2));
        rmc_csr_free(&part);
        rmc_csr_free(&a);
    }
}

/* Tile t of b with its values scaled by f (a changed tile of the same structure) or emptied. */
static void changed_tile(rmc_dist_h d, int64_t t, const rmc_csr_t *b, double f, rmc_csr_t *out)
{
    cut_tile(d, t, b, out);
    for (int64_t q = 0; q < out->nnz; q++)
        out->val[q] *= f;
}

/* tile_set: the owner sees the new tile at once, the others the old one until renew, then every
 * rank the new one; setting a tile twice before renew, and emptying tiles. */
static void test_set_renew(void **st)
{
    (void)st;
    for (int k = 1; k < NDIST; k += 2) {
        int idx64 = (k / 2) % 2;
        rmc_csr_t a, b;
        make_whole(1, idx64, 3, &a);
        make_whole(1, idx64, 4, &b); /* the new contents */
        rmc_dist_h d = make_dist(k, a.nrows, a.ncols);
        rmc_spmatrix_h s;
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s));
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL));
        int64_t nt = rmc_dist_ntiles(d);
        int ok = 1;
        /* own tiles: t % 3 == 0 set twice (b scaled by 3, then b), 1 emptied, 2 set to b */
        for (int64_t t = 0; t < nt; t++) {
            int owner;
            rmc_dist_tile(d, t, NULL, NULL, &owner);
            if (owner != me)
                continue;
            rmc_csr_t nt_;
            if (t % 3 == 0) {
                changed_tile(d, t, &b, 3.0, &nt_);
                MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, t, &nt_) == RMC_OK);
                rmc_csr_free(&nt_);
            }
            if (t % 3 == 1) {
                changed_tile(d, t, &b, 1.0, &nt_);
                int64_t rows = nt_.nrows, cols = nt_.ncols;
                rmc_csr_free(&nt_);
                assert_int_equal(rmc_csr_alloc(&nt_, rows, cols, 0, 1 - idx64), RMC_OK);
            } else {
                changed_tile(d, t, &b, 1.0, &nt_);
            }
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, t, &nt_) == RMC_OK);
            rmc_csr_t got;
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, t, &got) == RMC_OK);
            MPITEST_EXPECT(ok, csr_eq(&got, &nt_)); /* the owner: at once */
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_nnz(s, t) == nt_.nnz);
            rmc_csr_free(&got);
            rmc_csr_free(&nt_);
        }
        MPI_CHECK_ALL(ok);
        /* the others: the old tiles until renew */
        for (int64_t t = 0; t < nt; t++) {
            int owner;
            rmc_dist_tile(d, t, NULL, NULL, &owner);
            if (owner == me)
                continue;
            rmc_csr_t want, got;
            cut_tile(d, t, &a, &want);
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, t, &got) == RMC_OK);
            MPITEST_EXPECT(ok, csr_eq(&got, &want));
            rmc_csr_free(&want);
            rmc_csr_free(&got);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_spmatrix_renew(s));
        /* everyone: the new tiles */
        rmc_csr_t c; /* b with the tiles t % 3 == 1 emptied */
        rmc_csr_init(&c, idx64);
        {
            int64_t *ri = malloc(((size_t)b.nnz + 1) * sizeof(int64_t));
            int64_t *ci = malloc(((size_t)b.nnz + 1) * sizeof(int64_t));
            double *v = malloc(((size_t)b.nnz + 1) * sizeof(double));
            int64_t n = 0;
            for (int64_t i = 0; i < b.nrows; i++)
                for (int64_t q = rmc_csr_rowptr(&b, i); q < rmc_csr_rowptr(&b, i + 1); q++) {
                    int64_t idx[2] = {i, rmc_csr_colind(&b, q)}, t;
                    rmc_dist_locate(d, idx, &t, NULL);
                    if (t % 3 == 1)
                        continue;
                    ri[n] = i, ci[n] = idx[1], v[n++] = b.val[q];
                }
            assert_int_equal(rmc_csr_from_coo(&c, b.nrows, b.ncols, n, ri, ci, v, 0, idx64),
                             RMC_OK);
            free(ri);
            free(ci);
            free(v);
        }
        MPI_CHECK_ALL(tiles_equal(s, &c));
        check_gather(s, np - 1, &c);
        int64_t nnz;
        MPI_CHECK_OK(rmc_spmatrix_nnz(s, &nnz));
        MPI_CHECK_ALL(nnz == c.nnz);
        /* a renew without changes changes nothing */
        MPI_CHECK_OK(rmc_spmatrix_renew(s));
        MPI_CHECK_ALL(tiles_equal(s, &c));
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        rmc_dist_free(d);
        rmc_csr_free(&a);
        rmc_csr_free(&b);
        rmc_csr_free(&c);
    }
}

/* Slices of every kind (inside a tile, across tile boundaries, whole rows, the whole matrix,
 * empty) equal rmc_csr_slice of the whole. */
static void test_slice(void **st)
{
    (void)st;
    for (int k = 0; k < NDIST; k++) {
        int w = k % NMAT, idx64 = (k / 2) % 2;
        rmc_csr_t a;
        make_whole(w, idx64, 21, &a);
        rmc_dist_h d = make_dist(k, a.nrows, a.ncols);
        rmc_spmatrix_h s;
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s));
        rmc_dist_free(d);
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL));
        int64_t m = a.nrows, n = a.ncols;
        int64_t box[][4] = {{0, m, 0, n},         {1, m - 1, 2, n - 1}, {5, 6, 0, n},
                            {0, m, 3, 4},         {2, 2, 0, n},         {3, 9, 7, 7},
                            {m / 3, m, 0, n / 2}, {m - 1, m, n - 1, n}};
        uint64_t x = 991 + (uint64_t)(me * 7 + k);
        int ok = 1;
        for (int q = 0; q < 8 + 12; q++) {
            int64_t r0, r1, c0, c1;
            if (q < 8) {
                r0 = box[q][0], r1 = box[q][1], c0 = box[q][2], c1 = box[q][3];
            } else { /* random ones, different on every rank */
                r0 = (int64_t)(rnd(&x) % (uint64_t)(m + 1));
                r1 = r0 + (int64_t)(rnd(&x) % (uint64_t)(m - r0 + 1));
                c0 = (int64_t)(rnd(&x) % (uint64_t)(n + 1));
                c1 = c0 + (int64_t)(rnd(&x) % (uint64_t)(n - c0 + 1));
            }
            rmc_csr_t got, want;
            rmc_csr_init(&want, idx64);
            assert_int_equal(rmc_csr_slice(&want, &a, r0, r1, c0, c1), RMC_OK);
            MPITEST_EXPECT(ok, rmc_spmatrix_slice(s, r0, r1, c0, c1, &got) == RMC_OK);
            MPITEST_EXPECT(ok, got.idx64 == idx64 && rmc_csr_check(&got) == RMC_OK);
            MPITEST_EXPECT(ok, csr_eq(&got, &want));
            if (!ok)
                fprintf(stderr, "[rank %d] matrix %d dist %d slice [%lld,%lld)x[%lld,%lld)\n", me,
                        w, k, (long long)r0, (long long)r1, (long long)c0, (long long)c1);
            rmc_csr_free(&got);
            rmc_csr_free(&want);
            if (!ok)
                break;
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        rmc_csr_free(&a);
    }
}

/* The generators give the serial matrix (rmc_csr_rmat / _erdos_renyi of all rows) whatever the
 * number of ranks and the distribution. */
static void test_generators(void **st)
{
    (void)st;
    for (int k = 0; k < NDIST; k += 2) {
        int idx64 = (k / 2) % 2;
        rmc_csr_t want;
        rmc_csr_init(&want, idx64);
        assert_int_equal(rmc_csr_rmat(&want, 6, 8, RA, RB, RB, 42, 0, 64, idx64), RMC_OK);
        rmc_dist_h d = make_dist(k, 64, 64);
        rmc_spmatrix_h s;
        MPI_CHECK_OK(rmc_spmatrix_rmat(d, 6, 8, RA, RB, RB, 42, idx64, &s));
        MPI_CHECK_ALL(rmc_spmatrix_idx64(s) == idx64);
        check_gather(s, 0, &want);
        MPI_CHECK_ALL(tiles_equal(s, &want));
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        rmc_dist_free(d);
        rmc_csr_free(&want);

        rmc_csr_init(&want, idx64);
        assert_int_equal(rmc_csr_erdos_renyi(&want, 45, 31, 0.1, 7, 0, 45, idx64), RMC_OK);
        d = make_dist(k, 45, 31);
        MPI_CHECK_OK(rmc_spmatrix_erdos_renyi(d, 0.1, 7, idx64, &s));
        check_gather(s, np - 1, &want);
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        rmc_dist_free(d);
        rmc_csr_free(&want);
    }
    /* a distribution of the wrong shape; bad probabilities (refused by every rank) */
    rmc_dist_h d;
    rmc_spmatrix_h s = (rmc_spmatrix_h)1;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_RECT, 64, 32, 0, &d));
    MPI_CHECK_ALL(rmc_spmatrix_rmat(d, 6, 8, RA, RB, RB, 1, 0, &s) == RMC_ERR_ARG && !s);
    MPI_CHECK_ALL(rmc_spmatrix_erdos_renyi(d, 1.5, 1, 0, &s) != RMC_OK && !s);
    rmc_dist_free(d);
    int64_t dims[1] = {64};
    MPI_CHECK_OK(rmc_dist_regular(1, dims, NULL, NULL, &d));
    MPI_CHECK_ALL(rmc_spmatrix_erdos_renyi(d, 0.1, 1, 0, &s) == RMC_ERR_ARG && !s);
    rmc_dist_free(d);
}

/* A temporary file's name, the same on every rank (made by rank 0). */
static void temp_name(char *name, size_t cap)
{
    if (me == 0) {
        snprintf(name, cap, "/tmp/rmc_test_sparse_XXXXXX");
        int fd = mkstemp(name);
        assert_true(fd >= 0);
        close(fd);
    }
    MPI_Bcast(name, (int)cap, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Rank 0 replaces the file's content by `text` once no rank reads it any more; every rank sees it
 * on return. Collective. */
static void root_writes(const char *path, const char *text)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Matrix Market: write, read back (another distribution), equal; a malformed file and a missing
 * one fail on every rank with the reason. */
static void test_matrix_market(void **st)
{
    (void)st;
    char path[64];
    temp_name(path, sizeof(path));
    for (int w = 0; w < NMAT; w++) {
        int idx64 = w % 2;
        rmc_csr_t a;
        make_whole(w, idx64, 31, &a);
        rmc_dist_h d = make_dist(w + 4, a.nrows, a.ncols);
        rmc_spmatrix_h s, s2 = NULL;
        MPI_CHECK_OK(rmc_spmatrix_create(d, idx64, &s));
        rmc_dist_free(d);
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL));
        MPI_CHECK_OK(rmc_spmatrix_write_mm(s, path));
        MPI_CHECK_OK(rmc_spmatrix_read_mm(path, (rmc_block_t)(w % 5), 1 - idx64, &s2));
        MPI_CHECK_ALL(rmc_spmatrix_idx64(s2) == 1 - idx64);
        check_gather(s2, np - 1, &a);
        MPI_CHECK_ALL(tiles_equal(s2, &a));
        MPI_CHECK_OK(rmc_spmatrix_destroy(s));
        MPI_CHECK_OK(rmc_spmatrix_destroy(s2));
        rmc_csr_free(&a);
    }
    /* a malformed entry on line 5 */
    root_writes(path, "%%MatrixMarket matrix coordinate real general\n% comment\n3 3 3\n"
                      "1 1 1.0\n2 x 2.0\n3 3 3.0\n");
    rmc_spmatrix_h s = (rmc_spmatrix_h)1;
    rmc_last_error_clear();
    rmc_status_t rs = rmc_spmatrix_read_mm(path, RMC_BLOCK_RECT, 0, &s);
    const char *why = rmc_last_error();
    if (!strstr(why, "line 5") || !strstr(why, path))
        fprintf(stderr, "[rank %d] message: %s\n", me, why);
    MPI_CHECK_ALL(rs == RMC_ERR_FORMAT && s == NULL && strstr(why, "line 5") && strstr(why, path) &&
                  strstr(why, "rmc_spmatrix_read_mm"));
    /* a dimension too large for 32-bit indices */
    root_writes(path, "%%MatrixMarket matrix coordinate real general\n3 3000000000 1\n1 1 1.0\n");
    MPI_CHECK_ALL(rmc_spmatrix_read_mm(path, RMC_BLOCK_RECT, 0, &s) == RMC_ERR_TOO_BIG && !s);
    /* a valid 0 x 4 file has no distribution: refused naming the file (it was RMC_ERR_ARG from
     * rmc_dist_regular, 'dims[0] = 0', as if the caller's arguments were wrong) */
    root_writes(path, "%%MatrixMarket matrix coordinate real general\n0 4 0\n");
    rmc_last_error_clear();
    rs = rmc_spmatrix_read_mm(path, RMC_BLOCK_RECT, 0, &s);
    MPI_CHECK_ALL(rs == RMC_ERR_UNSUPPORTED && !s && strstr(rmc_last_error(), path) &&
                  strstr(rmc_last_error(), "0 x 4"));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    rmc_last_error_clear();
    rs = rmc_spmatrix_read_mm(path, RMC_BLOCK_RECT, 0, &s);
    why = rmc_last_error();
    MPI_CHECK_ALL(rs == RMC_ERR_IO && s == NULL && strstr(why, path));
    /* writing where no file can be */
    rmc_csr_t a;
    make_whole(1, 0, 1, &a);
    rmc_dist_h d = make_dist(0, a.nrows, a.ncols);
    MPI_CHECK_OK(rmc_spmatrix_create(d, 0, &s));
    rmc_dist_free(d);
    MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL));
    rmc_last_error_clear();
    rs = rmc_spmatrix_write_mm(s, "/nonexistent-dir/x.mtx");
    MPI_CHECK_ALL(rs == RMC_ERR_IO && strstr(rmc_last_error(), "/nonexistent-dir/x.mtx"));
    MPI_CHECK_OK(rmc_spmatrix_destroy(s));
    rmc_csr_free(&a);
}

/* 32-bit indices: a matrix whose columns overflow them is refused at creation, on every rank. */
static void test_overflow(void **st)
{
    (void)st;
    rmc_dist_h d;
    rmc_spmatrix_h s = (rmc_spmatrix_h)1;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 4, 3000000000ll, 0, &d));
    rmc_last_error_clear();
    MPI_CHECK_ALL(rmc_spmatrix_create(d, 0, &s) == RMC_ERR_TOO_BIG && s == NULL &&
                  strstr(rmc_last_error(), "32-bit"));
    MPI_CHECK_OK(rmc_spmatrix_create(d, 1, &s)); /* 64-bit: fine (and empty) */
    int64_t nnz = -1;
    MPI_CHECK_OK(rmc_spmatrix_nnz(s, &nnz));
    MPI_CHECK_ALL(nnz == 0);
    rmc_csr_t sl;
    MPI_CHECK_ALL(rmc_spmatrix_slice(s, 0, 4, 2999999990ll, 3000000000ll, &sl) == RMC_OK &&
                  sl.nnz == 0 && sl.nrows == 4 && sl.ncols == 10);
    rmc_csr_free(&sl);
    MPI_CHECK_OK(rmc_spmatrix_destroy(s));
    rmc_dist_free(d);
    /* R-MAT beyond 2^30 rows with 32-bit indices */
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_RECT, 1ll << 31, 1ll << 31, 0, &d));
    s = (rmc_spmatrix_h)1;
    MPI_CHECK_ALL(rmc_spmatrix_rmat(d, 31, 1, RA, RB, RB, 1, 0, &s) == RMC_ERR_TOO_BIG && !s);
    rmc_dist_free(d);
}

/* Bad input fails with a clear status, on every rank for collectives, and changes nothing. */
static void test_bad_input(void **st)
{
    (void)st;
    rmc_csr_t a;
    make_whole(1, 0, 9, &a);
    rmc_dist_h d = make_dist(6, a.nrows, a.ncols), d1;
    int64_t dims1[1] = {10};
    MPI_CHECK_OK(rmc_dist_regular(1, dims1, NULL, NULL, &d1));
    rmc_spmatrix_h s = (rmc_spmatrix_h)1, x = (rmc_spmatrix_h)1;
    /* create */
    MPI_CHECK_ALL(rmc_spmatrix_create(NULL, 0, &x) == RMC_ERR_HANDLE && !x);
    MPI_CHECK_ALL(rmc_spmatrix_create(d1, 0, &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_ALL(rmc_spmatrix_create(d, 2, &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_ALL(rmc_spmatrix_create(d, 0, me == np - 1 ? NULL : &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_ALL(rmc_spmatrix_create(d, me % 2, &x) == (np > 1 ? RMC_ERR_ARG : RMC_OK));
    if (np == 1)
        MPI_CHECK_OK(rmc_spmatrix_destroy(x));
    MPI_CHECK_ALL(np == 1 || x == NULL);
    rmc_dist_free(d1);
    MPI_CHECK_OK(rmc_spmatrix_create(d, 0, &s));
    MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL));
    int64_t nt = rmc_dist_ntiles(d), mine = -1, other = -1;
    for (int64_t t = 0; t < nt; t++) {
        int owner;
        rmc_dist_tile(d, t, NULL, NULL, &owner);
        if (owner == me && mine < 0 && rmc_spmatrix_tile_nnz(s, t) > 1)
            mine = t;
        if (owner != me && other < 0)
            other = t;
    }
    int ok = 1;
    rmc_csr_t tile, bad;
    rmc_request_h rq;
    /* local calls */
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, -1, &tile) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, nt, &tile) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_get(s, 0, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_get_nb(s, 0, &tile, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_get_nb(NULL, 0, &tile, &rq) == RMC_ERR_HANDLE &&
                           rq == RMC_REQUEST_NULL);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_view(s, nt, &tile) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_nnz(s, nt) == -1 && rmc_spmatrix_tile_nnz(NULL, 0) == -1);
    MPITEST_EXPECT(ok, rmc_spmatrix_idx64(NULL) == -1 && rmc_spmatrix_dist(NULL) == NULL);
    MPITEST_EXPECT(ok, rmc_spmatrix_slice(s, 0, a.nrows + 1, 0, 1, &tile) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_spmatrix_slice(s, 3, 2, 0, 1, &tile) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_spmatrix_slice(s, 0, 1, -1, 1, &tile) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_spmatrix_slice(s, 0, 1, 0, 1, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, nt, &a) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, other < 0 || rmc_spmatrix_tile_set(s, other, &a) == RMC_ERR_ARG);
    if (mine >= 0) {
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, mine, NULL) == RMC_ERR_ARG);
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, mine, &a) == RMC_ERR_FORMAT); /* shape */
        cut_tile(d, mine, &a, &bad);
        /* columns of the first row with two entries swapped: unsorted */
        int64_t r = 0;
        while (rmc_csr_rowptr(&bad, r + 1) - rmc_csr_rowptr(&bad, r) < 2 && r + 1 < bad.nrows)
            r++;
        int32_t *ci = bad.colind;
        int64_t p = rmc_csr_rowptr(&bad, r);
        if (rmc_csr_rowptr(&bad, r + 1) - p >= 2) {
            int32_t tmp = ci[p];
            ci[p] = ci[p + 1];
            ci[p + 1] = tmp;
            rmc_last_error_clear();
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, mine, &bad) == RMC_ERR_FORMAT &&
                                   strstr(rmc_last_error(), "unsorted"));
            ci[p + 1] = ci[p]; /* a duplicate */
            MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, mine, &bad) == RMC_ERR_FORMAT);
        }
        ((int32_t *)bad.rowptr)[bad.nrows] = (int32_t)bad.nnz + 1; /* rowptr's end */
        MPITEST_EXPECT(ok, rmc_spmatrix_tile_set(s, mine, &bad) == RMC_ERR_FORMAT);
        rmc_csr_free(&bad);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(tiles_equal(s, &a)); /* nothing changed */
    /* collectives: every rank fails alike */
    rmc_csr_t wrong;
    rmc_csr_init(&wrong, 0);
    assert_int_equal(rmc_csr_alloc(&wrong, a.nrows - 1, a.ncols, 0, 0), RMC_OK);
    MPI_CHECK_ALL(rmc_spmatrix_scatter(s, np, NULL) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_spmatrix_scatter(s, me, me == 0 ? &a : NULL) ==
                  (np > 1 ? RMC_ERR_ARG : RMC_OK)); /* different roots */
    rmc_last_error_clear();
    MPI_CHECK_ALL(rmc_spmatrix_scatter(s, 0, me == 0 ? &wrong : NULL) == RMC_ERR_ARG &&
                  (me == 0 || strstr(rmc_last_error(), "rank 0")));
    MPI_CHECK_ALL(rmc_spmatrix_scatter(s, 0, NULL) == RMC_ERR_ARG);
    if (me == 0)
        ((int32_t *)a.rowptr)[a.nrows] = (int32_t)a.nnz + 1;
    MPI_CHECK_ALL(rmc_spmatrix_scatter(s, 0, me == 0 ? &a : NULL) == RMC_ERR_FORMAT);
    if (me == 0)
        ((int32_t *)a.rowptr)[a.nrows] = (int32_t)a.nnz;
    /* assemble: overlapping parts, a part of the wrong width, rows outside */
    rmc_csr_t part;
    rmc_csr_init(&part, 0);
    assert_int_equal(rmc_csr_slice(&part, &a, 0, 5, 0, a.ncols), RMC_OK);
    MPI_CHECK_ALL(rmc_spmatrix_assemble(s, 2 * me, &part) == (np > 1 ? RMC_ERR_ARG : RMC_OK));
    if (np == 1)
        MPI_CHECK_OK(rmc_spmatrix_scatter(s, 0, &a));
    MPI_CHECK_ALL(rmc_spmatrix_assemble(s, me == 0 ? a.nrows - 4 : 0, me == 0 ? &part : NULL) ==
                  RMC_ERR_BOUNDS);
    rmc_csr_t narrow;
    rmc_csr_init(&narrow, 0);
    assert_int_equal(rmc_csr_slice(&narrow, &a, 0, 5, 0, a.ncols - 1), RMC_OK);
    MPI_CHECK_ALL(rmc_spmatrix_assemble(s, 0, me == np - 1 ? &narrow : NULL) == RMC_ERR_ARG);
    /* gather: no result on the root */
    MPI_CHECK_ALL(rmc_spmatrix_gather(s, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_gather(s, -1, &tile) == RMC_ERR_RANK);
    int64_t nnz;
    MPI_CHECK_ALL(rmc_spmatrix_nnz(s, me == 0 ? NULL : &nnz) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_write_mm(s, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_read_mm(NULL, RMC_BLOCK_RECT, 0, &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_ALL(tiles_equal(s, &a)); /* nothing changed */
    check_gather(s, 0, &a);
    /* after destroy */
    MPI_CHECK_OK(rmc_spmatrix_destroy(s));
    MPI_CHECK_ALL(rmc_spmatrix_tile_get(s, 0, &tile) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_spmatrix_renew(s) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_spmatrix_gather(s, 0, &tile) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_spmatrix_destroy(s) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_spmatrix_destroy(NULL) == RMC_ERR_HANDLE);
    rmc_csr_free(&wrong);
    rmc_csr_free(&part);
    rmc_csr_free(&narrow);
    rmc_csr_free(&a);
    rmc_dist_free(d);
}

MPITEST_MAIN("sparse", cttest_setup, mpitest_teardown_rmc, test_scatter_gather, test_assemble,
             test_set_renew, test_slice, test_generators, test_matrix_market, test_overflow,
             test_bad_input)
