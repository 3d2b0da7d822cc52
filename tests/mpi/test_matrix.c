/* Distributions and dense distributed matrices (rmc/matrix.h): every kind of distribution covers
 * its array exactly once with tiles whose owners agree with locate; patches of every shape (across
 * tiles, edge tiles, 1-D to 4-D, leading dimensions wider than the patch, empty) read back what was
 * written, for every element type; accumulates from every rank at once sum exactly; tiles and
 * elements; the non-blocking forms; bad input changes nothing and fails on every rank alike. */
#include "cttest.h"
#include <rmc/matrix.h>

/* The value of element idx (row-major linear index li) in the pattern of salt s. */
static double val(int64_t li, int s)
{
    return (double)((li * 7919 + s * 104729) % 1000003) - 500000.0;
}

/* Distributions the data tests run on (freed by the caller): 2-D of every kind, then 1-D, 3-D and
 * 4-D. */
enum { NDISTS = 11 };
static rmc_dist_h make_dist(int which)
{
    rmc_dist_h d = NULL;
    int64_t d2[2] = {37, 23}, t2[2] = {5, 7};
    switch (which) {
    case 0:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_RECT, 37, 23, 0, &d), RMC_OK);
        break;
    case 1:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_ROW, 37, 23, 4, &d), RMC_OK); /* cyclic rows */
        break;
    case 2:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_COLUMN, 37, 23, 0, &d), RMC_OK);
        break;
    case 3:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_SQUARE, 37, 23, 6, &d), RMC_OK);
        break;
    case 4:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_OPT, 37, 23, 8, &d), RMC_OK);
        break;
    case 5: { /* irregular: as many blocks as ranks allow, uneven */
        int nb[2] = {np >= 2 ? 2 : 1, np >= 4 ? 2 : 1};
        int64_t map[4] = {0, 3, 0, 20};
        int64_t mp[4];
        int c = 0;
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < nb[k]; b++)
                mp[c++] = map[2 * k + b];
        assert_int_equal(rmc_dist_irregular(2, d2, nb, mp, &d), RMC_OK);
        break;
    }
    case 6:
        assert_int_equal(rmc_dist_round_robin(2, d2, t2, &d), RMC_OK);
        break;
    case 10: { /* irregular tiles (4 x 3 of them) cyclic over a process grid of the ranks */
        int nb[2] = {4, 3}, pg[2] = {np >= 2 ? 2 : 1, np >= 4 ? 2 : 1};
        int64_t mp[7] = {0, 5, 6, 30, 0, 1, 12};
        assert_int_equal(rmc_dist_irregular_grid(2, d2, nb, mp, pg, &d), RMC_OK);
        for (int64_t t = 0; t < 12; t++) { /* tile (t0, t1) on grid process (t0 % p0, t1 % p1) */
            int64_t tc[2];
            int owner;
            assert_int_equal(rmc_dist_tile_coords(d, t, tc), RMC_OK);
            assert_int_equal(rmc_dist_tile(d, t, NULL, NULL, &owner), RMC_OK);
            assert_int_equal(owner, (int)((tc[0] % pg[0]) * pg[1] + tc[1] % pg[1]));
        }
        break;
    }
    case 7: {
        int64_t d1[1] = {1001}, t1[1] = {97};
        assert_int_equal(rmc_dist_regular(1, d1, t1, NULL, &d), RMC_OK);
        break;
    }
    case 8: {
        int64_t d3[3] = {9, 6, 11}, t3[3] = {4, 0, 5};
        assert_int_equal(rmc_dist_regular(3, d3, t3, NULL, &d), RMC_OK);
        break;
    }
    default: {
        int64_t d4[4] = {3, 5, 4, 6}, t4[4] = {2, 2, 3, 4};
        assert_int_equal(rmc_dist_round_robin(4, d4, t4, &d), RMC_OK);
    }
    }
    return d;
}

/* Every element lies in exactly one tile, the one locate names, with the same owner; the owned
 * lists partition the tiles. */
static void test_dist_cover(void **s)
{
    (void)s;
    for (int w = 0; w < NDISTS; w++) {
        rmc_dist_h d = make_dist(w);
        int n = rmc_dist_ndim(d), ok = 1;
        int64_t dims[RMC_MATRIX_MAX_DIM], total = 1;
        assert_int_equal(rmc_dist_dims(d, dims), RMC_OK);
        for (int k = 0; k < n; k++)
            total *= dims[k];
        int64_t nt = rmc_dist_ntiles(d), covered = 0;
        for (int64_t t = 0; t < nt; t++) {
            int64_t lo[RMC_MATRIX_MAX_DIM], hi[RMC_MATRIX_MAX_DIM], tc[RMC_MATRIX_MAX_DIM], sz = 1;
            int owner;
            MPITEST_EXPECT(ok, rmc_dist_tile(d, t, lo, hi, &owner) == RMC_OK);
            MPITEST_EXPECT(ok, owner >= 0 && owner < np);
            MPITEST_EXPECT(ok, rmc_dist_tile_coords(d, t, tc) == RMC_OK &&
                                   rmc_dist_tile_index(d, tc) == t);
            for (int k = 0; k < n; k++)
                sz *= hi[k] - lo[k];
            MPITEST_EXPECT(ok, sz > 0);
            covered += sz;
            /* the corners locate to this tile */
            int64_t idx[RMC_MATRIX_MAX_DIM], lt;
            int lo_owner;
            for (int k = 0; k < n; k++)
                idx[k] = hi[k] - 1;
            MPITEST_EXPECT(ok, rmc_dist_locate(d, lo, &lt, &lo_owner) == RMC_OK && lt == t &&
                                   lo_owner == owner);
            MPITEST_EXPECT(ok, rmc_dist_locate(d, idx, &lt, NULL) == RMC_OK && lt == t);
        }
        MPITEST_EXPECT(ok, covered == total);
        int64_t sum = 0;
        for (int r = 0; r < np; r++) {
            int64_t c = -1;
            MPITEST_EXPECT(ok, rmc_dist_owned(d, r, NULL, 0, &c) == RMC_OK);
            sum += c;
        }
        MPITEST_EXPECT(ok, sum == nt);
        if (!ok)
            fprintf(stderr, "[rank %d] distribution %d\n", me, w);
        MPI_CHECK_ALL(ok);
        rmc_dist_free(d);
    }
    /* the chosen grids: products of the ranks, longer dimensions cut more */
    int g[3];
    int64_t dd[3] = {1000, 10, 10};
    MPI_CHECK_ALL(rmc_dist_pgrid(3, dd, 12, g) == RMC_OK && g[0] * g[1] * g[2] == 12 &&
                  g[0] >= g[1] && g[0] >= g[2]);
    int64_t sq[2] = {100, 100};
    MPI_CHECK_ALL(rmc_dist_pgrid(2, sq, 4, g) == RMC_OK && g[0] == 2 && g[1] == 2);
}

/* The pattern of salt s over the whole array, written by rank 0 (one put of everything), read
 * back in random patches by every rank. Element types F64 and I32 (converted from the pattern). */
static void fill_expect(rmc_elem_t e, void *buf, int64_t i, double v)
{
    if (e == RMC_ELEM_F64)
        ((double *)buf)[i] = v;
    else if (e == RMC_ELEM_I32)
        ((int32_t *)buf)[i] = (int32_t)v;
    else if (e == RMC_ELEM_C64)
        ((double *)buf)[2 * i] = v, ((double *)buf)[2 * i + 1] = -v;
    else
        ((int64_t *)buf)[i] = (int64_t)v;
}

static uint64_t rnd(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void patches(rmc_elem_t e)
{
    for (int w = 0; w < NDISTS; w++) {
        rmc_dist_h d = make_dist(w);
        rmc_matrix_h m;
        MPI_CHECK_OK(rmc_matrix_create(d, e, &m));
        int n = rmc_dist_ndim(d), ok = 1;
        size_t es = rmc_elem_size(e);
        int64_t dims[RMC_MATRIX_MAX_DIM], total = 1, zero[RMC_MATRIX_MAX_DIM] = {0};
        rmc_dist_dims(d, dims);
        for (int k = 0; k < n; k++)
            total *= dims[k];
        int64_t room = 1; /* the widest buffer: every extent + 3 */
        for (int k = 0; k < n; k++)
            room *= dims[k] + 3;
        char *all = malloc((size_t)total * es), *got = malloc((size_t)room * es);
        for (int64_t i = 0; i < total; i++)
            fill_expect(e, all, i, val(i, w));
        if (me == 0)
            MPITEST_EXPECT(ok, rmc_matrix_put(m, zero, dims, all, NULL) == RMC_OK);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        uint64_t x = 77 + (uint64_t)me * 1000 + (uint64_t)w;
        for (int rep = 0; rep < 12; rep++) {
            int64_t lo[RMC_MATRIX_MAX_DIM], hi[RMC_MATRIX_MAX_DIM], ld[RMC_MATRIX_MAX_DIM];
            for (int k = 0; k < n; k++) {
                lo[k] = (int64_t)(rnd(&x) % (uint64_t)dims[k]);
                hi[k] = lo[k] + 1 + (int64_t)(rnd(&x) % (uint64_t)(dims[k] - lo[k]));
                ld[k] = hi[k] - lo[k] + (rep & 1 ? 3 : 0); /* wider buffers on odd reps */
            }
            memset(got, 0x5a, (size_t)room * es);
            if (rep % 3 == 2) {
                rmc_request_h r;
                MPITEST_EXPECT(ok, rmc_matrix_get_nb(m, lo, hi, got, n > 1 ? ld + 1 : NULL, &r) ==
                                       RMC_OK);
                MPITEST_EXPECT(ok, rmc_wait(&r) == RMC_OK);
            } else {
                MPITEST_EXPECT(ok, rmc_matrix_get(m, lo, hi, got, n > 1 ? ld + 1 : NULL) == RMC_OK);
            }
            /* compare element by element */
            int64_t idx[RMC_MATRIX_MAX_DIM];
            memcpy(idx, lo, sizeof(int64_t) * (size_t)n);
            for (;;) {
                int64_t li = 0, bi = 0;
                for (int k = 0; k < n; k++) {
                    li = li * dims[k] + idx[k];
                    bi = bi * ld[k] + (idx[k] - lo[k]);
                }
                if (memcmp(got + (size_t)bi * es, all + (size_t)li * es, es)) {
                    ok = 0;
                    break;
                }
                int k = n - 1;
                for (; k >= 0; k--) {
                    if (++idx[k] < hi[k])
                        break;
                    idx[k] = lo[k];
                }
                if (k < 0)
                    break;
            }
        }
        if (!ok)
            fprintf(stderr, "[rank %d] distribution %d, type %d: a patch read back wrong\n", me, w,
                    (int)e);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        /* accumulate: every rank adds (rank + 1) * pattern to the same patch; then 2-D and up
         * check one element of each corner */
        if (e == RMC_ELEM_F64 || e == RMC_ELEM_I32) {
            int64_t lo[RMC_MATRIX_MAX_DIM], hi[RMC_MATRIX_MAX_DIM];
            for (int k = 0; k < n; k++) {
                lo[k] = dims[k] / 4;
                hi[k] = dims[k] - dims[k] / 5;
            }
            int64_t cnt = 1;
            for (int k = 0; k < n; k++)
                cnt *= hi[k] - lo[k];
            char *src = malloc((size_t)cnt * es);
            for (int64_t i = 0; i < cnt; i++)
                fill_expect(e, src, i, (double)(i % 13));
            double sc = me + 1;
            int32_t isc = me + 1;
            rmc_request_h r;
            if (me % 2)
                MPITEST_EXPECT(ok, rmc_matrix_acc_nb(m, lo, hi, src, NULL,
                                                     e == RMC_ELEM_F64 ? (void *)&sc : (void *)&isc,
                                                     &r) == RMC_OK &&
                                       rmc_wait(&r) == RMC_OK);
            else
                MPITEST_EXPECT(ok, rmc_matrix_acc(m, lo, hi, src, NULL,
                                                  e == RMC_ELEM_F64 ? (void *)&sc : (void *)&isc) ==
                                       RMC_OK);
            MPI_CHECK_OK(rmc_barrier());
            memset(got, 0, (size_t)cnt * es);
            MPITEST_EXPECT(ok, rmc_matrix_get(m, lo, hi, got, NULL) == RMC_OK);
            double f = (double)np * (np + 1) / 2; /* sum of the scales */
            int64_t idx[RMC_MATRIX_MAX_DIM];
            memcpy(idx, lo, sizeof(int64_t) * (size_t)n);
            for (int64_t i = 0; i < cnt && ok; i++) {
                int64_t li = 0, rem = i;
                for (int k = n - 1; k >= 0; k--) {
                    idx[k] = lo[k] + rem % (hi[k] - lo[k]);
                    rem /= hi[k] - lo[k];
                }
                for (int k = 0; k < n; k++)
                    li = li * dims[k] + idx[k];
                double want = val(li, w), add = f * (double)(i % 13);
                if (e == RMC_ELEM_F64)
                    ok = ((double *)(void *)got)[i] == want + add;
                else
                    ok = ((int32_t *)(void *)got)[i] == (int32_t)want + (int32_t)add;
            }
            if (!ok)
                fprintf(stderr, "[rank %d] distribution %d: accumulates do not sum\n", me, w);
            free(src);
        }
        MPI_CHECK_ALL(ok);
        free(all);
        free(got);
        MPI_CHECK_OK(rmc_matrix_destroy(m));
        rmc_dist_free(d);
    }
}

static void test_patches_f64(void **s)
{
    (void)s;
    patches(RMC_ELEM_F64);
}
static void test_patches_i32(void **s)
{
    (void)s;
    patches(RMC_ELEM_I32);
}
static void test_patches_c64(void **s)
{
    (void)s;
    patches(RMC_ELEM_C64);
}

/* Tiles and elements: each rank writes its own tiles in place, everyone reads every tile (nb
 * too), elements one by one; fill sets everything. */
static void test_tiles_elements(void **s)
{
    (void)s;
    rmc_dist_h d;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_OPT, 40, 30, 7, &d));
    rmc_matrix_h m;
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_I64, &m));
    rmc_dist_free(d); /* the matrix keeps its own copy */
    d = rmc_matrix_dist(m);
    int ok = 1;
    int64_t nt = rmc_dist_ntiles(d);
    for (int64_t t = 0; t < nt; t++) {
        int64_t lo[2], hi[2];
        int owner;
        rmc_dist_tile(d, t, lo, hi, &owner);
        void *p = NULL;
        rmc_status_t st = rmc_matrix_tile_local(m, t, &p);
        rmc_gptr_t g = rmc_matrix_tile_gptr(m, t);
        MPITEST_EXPECT(ok, g.rank == owner);
        if (owner != me) {
            MPITEST_EXPECT(ok, (st == RMC_OK) == (rmc_same_node(owner) == 1));
            continue;
        }
        MPITEST_EXPECT(ok, st == RMC_OK && p && rmc_gptr_local(g) == p);
        int64_t *e = p;
        for (int64_t i = lo[0]; i < hi[0]; i++)
            for (int64_t j = lo[1]; j < hi[1]; j++)
                *e++ = i * 1000 + j;
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    int64_t buf[64];
    for (int64_t t = 0; t < nt; t++) {
        int64_t lo[2], hi[2];
        rmc_dist_tile(d, t, lo, hi, NULL);
        rmc_request_h r = RMC_REQUEST_NULL;
        if (t % 2)
            MPITEST_EXPECT(ok, rmc_matrix_tile_get_nb(m, t, buf, &r) == RMC_OK &&
                                   rmc_wait(&r) == RMC_OK);
        else
            MPITEST_EXPECT(ok, rmc_matrix_tile_get(m, t, buf) == RMC_OK);
        int64_t *e = buf;
        for (int64_t i = lo[0]; i < hi[0]; i++)
            for (int64_t j = lo[1]; j < hi[1]; j++)
                MPITEST_EXPECT(ok, *e++ == i * 1000 + j);
    }
    int64_t idx[2] = {39, 29}, v = -1;
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, idx, &v) == RMC_OK && v == 39029);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    if (me == np - 1) { /* a tile put, then an element put, read back by everyone */
        for (int i = 0; i < 64; i++)
            buf[i] = -i;
        MPITEST_EXPECT(ok, rmc_matrix_tile_put(m, 0, buf) == RMC_OK);
        int64_t w = 4242, at[2] = {39, 0};
        MPITEST_EXPECT(ok, rmc_matrix_elem_put(m, at, &w) == RMC_OK);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    int64_t at0[2] = {0, 1}, at1[2] = {39, 0};
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, at0, &v) == RMC_OK && v == -1);
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, at1, &v) == RMC_OK && v == 4242);
    MPI_CHECK_ALL(ok);
    int64_t seven = 7;
    MPI_CHECK_OK(rmc_matrix_fill(m, &seven));
    int64_t lo[2] = {0, 0}, hi[2] = {40, 30}, *all = malloc(40 * 30 * sizeof(int64_t));
    MPITEST_EXPECT(ok, rmc_matrix_get(m, lo, hi, all, NULL) == RMC_OK);
    for (int i = 0; i < 40 * 30; i++)
        MPITEST_EXPECT(ok, all[i] == 7);
    free(all);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_matrix_destroy(m));
}

/* A matrix on a subset of the ranks (rmc_matrix_create_comm): the odd ranks hold it in reverse
 * order (rmc_dist_set_ranks), only they create, fill, write, read and destroy it; a distribution with a tile outside the subset and MPI_COMM_NULL are refused. A matrix of all ranks created in between keeps working. */
static void test_subset(void **s)
{
    (void)s;
    MPI_Comm world, sub;
    MPI_CHECK_OK(rmc_comm(&world));
    int odd = me % 2 == 1 || np == 1, nsub = np == 1 ? 1 : np / 2;
    MPI_Comm_split(world, odd ? 0 : MPI_UNDEFINED, np - me, &sub);
    int *ranks = malloc(sizeof(int) * (size_t)nsub);
    for (int i = 0; i < nsub; i++) /* the odd ranks, highest first */
        ranks[i] = np == 1 ? 0 : (np % 2 ? np - 2 : np - 1) - 2 * i;
    int64_t dims[2] = {13, 8};
    int pg[2] = {nsub, 1};
    rmc_dist_h d;
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, pg, &d));
    int ok = 1;
    MPITEST_EXPECT(ok, rmc_dist_set_ranks(d, ranks, nsub - 1 > 0 ? nsub - 1 : -1) == RMC_ERR_ARG);
    int bad[2] = {0, 0};
    MPITEST_EXPECT(ok, np < 2 || rmc_dist_set_ranks(d, bad, 2) != RMC_OK);
    MPITEST_EXPECT(ok, rmc_dist_set_ranks(d, ranks, nsub) == RMC_OK);
    int owner = -1;
    int64_t last[2] = {12, 7}, t;
    MPITEST_EXPECT(ok, rmc_dist_locate(d, last, &t, &owner) == RMC_OK && owner == ranks[nsub - 1]);
    MPI_CHECK_ALL(ok);
    rmc_matrix_h m = NULL, all = NULL;
    if (odd) {
        MPITEST_EXPECT(ok, rmc_matrix_create_comm(sub, d, RMC_ELEM_F64, &m) == RMC_OK && m);
        double v = 2.5;
        MPITEST_EXPECT(ok, rmc_matrix_fill(m, &v) == RMC_OK);
    }
    MPI_CHECK_ALL(ok);
    /* a matrix of all ranks in between: the job-wide numbering still agrees */
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_I32, &all));
    /* the members (only they hold the handle) each write a row and read the whole back */
    if (odd) {
        double row[8], got[13 * 8];
        for (int j = 0; j < 8; j++)
            row[j] = me * 10 + j;
        int64_t lo[2] = {me % 13, 0}, hi[2] = {me % 13 + 1, 8};
        MPITEST_EXPECT(ok, rmc_matrix_put(m, lo, hi, row, NULL) == RMC_OK);
        MPI_Barrier(sub);
        MPITEST_EXPECT(ok, rmc_fence_all() == RMC_OK);
        MPI_Barrier(sub);
        int64_t alo[2] = {0, 0};
        MPITEST_EXPECT(ok, rmc_matrix_get(m, alo, dims, got, NULL) == RMC_OK);
        for (int i = 0; i < 13; i++) {
            int writer = -1;
            for (int r = 1; r < np || (np == 1 && r == 1); r += 2)
                if ((np == 1 ? 0 : r) % 13 == i)
                    writer = np == 1 ? 0 : r;
            for (int j = 0; j < 8; j++)
                MPITEST_EXPECT(ok, got[i * 8 + j] == (writer >= 0 ? writer * 10 + j : 2.5));
        }
    }
    MPI_CHECK_ALL(ok);
    /* a tile outside the communicator: refused on every member alike */
    rmc_dist_h d2;
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, pg, &d2));
    if (odd && np > 1) {
        rmc_matrix_h x = NULL; /* identity placement: tile 0 on rank 0, not a member */
        MPITEST_EXPECT(ok, rmc_matrix_create_comm(sub, d2, RMC_ELEM_F64, &x) == RMC_ERR_ARG && !x);
    }
    rmc_matrix_h y = (rmc_matrix_h)1;
    MPITEST_EXPECT(ok, rmc_matrix_create_comm(MPI_COMM_NULL, d, RMC_ELEM_F64, &y) == RMC_ERR_ARG &&
                           y == NULL);
    rmc_dist_free(d2);
    MPI_CHECK_ALL(ok);
    if (odd) {
        MPITEST_EXPECT(ok, rmc_matrix_destroy(m) == RMC_OK);
        MPI_Comm_free(&sub);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_matrix_destroy(all));
    rmc_dist_free(d);
    free(ranks);
}

/* Bad input: refused with the status the header names, nothing changed, every rank alike for the
 * collectives. */
static void test_bad_input(void **s)
{
    (void)s;
    rmc_dist_h d = NULL, x = NULL;
    int64_t dims[2] = {10, 10}, neg[2] = {10, 0}, t[2] = {0, 0};
    int pg_big[2] = {np, 2}, nb[2] = {1, 2};
    int64_t map_bad[3] = {0, 0, 0},
            map_first[3] = {1, 0, 5}; /* dimension 1 not increasing; dimension 0 not from 0 */
    int ok = 1;
    MPITEST_EXPECT(ok, rmc_dist_regular(0, dims, NULL, NULL, &x) == RMC_ERR_ARG && !x);
    MPITEST_EXPECT(ok, rmc_dist_regular(8, dims, NULL, NULL, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_regular(2, neg, NULL, NULL, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_regular(2, dims, NULL, pg_big, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_regular(2, dims, NULL, NULL, NULL) == RMC_ERR_ARG);
    t[0] = -1;
    MPITEST_EXPECT(ok, rmc_dist_regular(2, dims, t, NULL, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, np < 2 || rmc_dist_irregular(2, dims, nb, map_bad, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, np < 2 || rmc_dist_irregular(2, dims, nb, map_first, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_round_robin(2, dims, t, &x) == RMC_ERR_ARG);
    { /* irregular tiles over a grid: NULL grid, a grid larger than the ranks, a zero entry */
        int nb4[2] = {3, 1}, pg_over[2] = {np + 1, 1}, pg_zero[2] = {0, 1};
        int64_t m4[4] = {0, 2, 4, 0};
        MPITEST_EXPECT(ok, rmc_dist_irregular_grid(2, dims, nb4, m4, NULL, &x) == RMC_ERR_ARG);
        MPITEST_EXPECT(ok, rmc_dist_irregular_grid(2, dims, nb4, m4, pg_over, &x) == RMC_ERR_ARG);
        MPITEST_EXPECT(ok, rmc_dist_irregular_grid(2, dims, nb4, m4, pg_zero, &x) == RMC_ERR_ARG);
    }
    MPITEST_EXPECT(ok, rmc_dist_2d((rmc_block_t)9, 10, 10, 0, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_2d(RMC_BLOCK_ROW, 10, 10, -1, &x) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_ndim(NULL) == 0 && rmc_dist_ntiles(NULL) == 0);
    int64_t huge[2] = {INT64_MAX / 2, 3};
    MPITEST_EXPECT(ok, rmc_dist_regular(2, huge, NULL, NULL, &x) == RMC_ERR_TOO_BIG);
    MPI_CHECK_ALL(ok);
    { /* every tile fits, a rank's part of 2^65 bytes does not: refused (its offsets wrapped) */
        int64_t big[2] = {(int64_t)1 << 31, (int64_t)1 << 31}, tile[2] = {(int64_t)1 << 20, 0};
        tile[1] = big[1];
        rmc_dist_h dh;
        rmc_matrix_h mh = NULL;
        MPI_CHECK_OK(rmc_dist_regular(2, big, tile, NULL, &dh));
        rmc_status_t cst = rmc_matrix_create(dh, RMC_ELEM_F64, &mh);
        MPI_CHECK_ALL(cst == RMC_ERR_TOO_BIG && !mh);
        rmc_dist_free(dh);
    }
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_RECT, 10, 10, 0, &d));
    int64_t idx[2] = {10, 0}, tt;
    MPITEST_EXPECT(ok, rmc_dist_locate(d, idx, &tt, NULL) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_dist_tile(d, rmc_dist_ntiles(d), NULL, NULL, NULL) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_dist_owned(d, np, NULL, 0, &tt) == RMC_ERR_RANK);
    MPITEST_EXPECT(ok, rmc_dist_owned(d, 0, NULL, 3, &tt) == RMC_ERR_ARG);
    int pg[2];
    int64_t tcs[2] = {99, 0}, dd[2] = {4, 4};
    MPITEST_EXPECT(ok, rmc_dist_pgrid(2, dd, 0, pg) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_pgrid(0, dd, 2, pg) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_pgrid(2, dd, 2, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_tile_index(d, tcs) == -1);
    MPITEST_EXPECT(ok, rmc_dist_tile_coords(d, -1, tcs) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_dist_dims(d, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_dist_proc_grid(NULL, pg) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_dist_same(d, NULL) == 0 && rmc_dist_same(d, d) == 1);
    rmc_matrix_h m = NULL, y = NULL;
    MPI_CHECK_ALL(rmc_matrix_create(d, (rmc_elem_t)9, &y) == RMC_ERR_ARG && !y);
    MPI_CHECK_ALL(rmc_matrix_create(NULL, RMC_ELEM_F64, &y) == RMC_ERR_HANDLE);
    /* ranks disagree on the type: every rank fails */
    MPI_CHECK_ALL(rmc_matrix_create(d, me ? RMC_ELEM_F64 : RMC_ELEM_F32, &y) ==
                      (np > 1 ? RMC_ERR_ARG : RMC_OK) &&
                  (np > 1 ? y == NULL : 1));
    if (np == 1)
        MPI_CHECK_OK(rmc_matrix_destroy(y));
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_F64, &m));
    double buf[200] = {0};
    int64_t lo[2] = {0, 0}, hi[2] = {11, 2}, rev_lo[2] = {5, 0}, rev_hi[2] = {4, 2}, ld[1] = {1};
    MPITEST_EXPECT(ok, rmc_matrix_get(m, lo, hi, buf, NULL) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_matrix_get(m, rev_lo, rev_hi, buf, NULL) == RMC_ERR_ARG);
    hi[0] = 3;
    MPITEST_EXPECT(ok, rmc_matrix_put(m, lo, hi, buf, ld) == RMC_ERR_ARG); /* ld 1 < 2 */
    MPITEST_EXPECT(ok, rmc_matrix_put(m, lo, hi, NULL, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_matrix_get_nb(m, lo, hi, buf, NULL, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_matrix_tile_get(m, -1, buf) == RMC_ERR_BOUNDS);
    void *lp = buf;
    rmc_request_h rq = RMC_REQUEST_NULL;
    MPITEST_EXPECT(ok, rmc_matrix_tile_local(m, rmc_dist_ntiles(d), &lp) == RMC_ERR_BOUNDS &&
                           lp == NULL);
    MPITEST_EXPECT(ok, rmc_matrix_tile_local(m, 0, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_gptr_is_null(rmc_matrix_tile_gptr(m, -1)) &&
                           strstr(rmc_last_error(), "rmc_matrix_tile_gptr: tile -1"));
    MPITEST_EXPECT(ok, rmc_matrix_tile_put_nb(m, 0, buf, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_matrix_tile_get_nb(m, -5, buf, &rq) == RMC_ERR_BOUNDS && !rq);
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, NULL, buf) == RMC_ERR_ARG);
    int64_t far[2] = {INT64_MAX, 0}, below[2] = {0, -1}; /* (INT64_MAX + 1 would overflow) */
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, far, buf) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_matrix_elem_put(m, below, buf) == RMC_ERR_BOUNDS);
    MPITEST_EXPECT(ok, rmc_matrix_acc(m, lo, hi, buf, ld, NULL) == RMC_ERR_ARG); /* ld 1 < 2 */
    hi[0] = 0; /* empty: nothing moves, fine */
    MPITEST_EXPECT(ok, rmc_matrix_get(m, lo, hi, buf, NULL) == RMC_OK);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(rmc_matrix_fill(m, NULL) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_matrix_destroy(m));
    MPI_CHECK_ALL(rmc_matrix_get(m, lo, hi, buf, NULL) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_matrix_destroy(m) == RMC_ERR_HANDLE);
    rmc_dist_free(d);
}

/* Every rank's block starts on a cache line whatever the segment's allocator handed out before it
 * (rmc_alloc's blocks are 16-byte aligned): 1-4 allocations of 16 bytes shift the next one by 16
 * bytes each. */
static void test_block_alignment(void **s)
{
    (void)s;
    rmc_dist_h d;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 64, 8, 0, &d));
    rmc_gptr_t pad[4];
    int ok = 1;
    for (int k = 0; k < 4; k++) {
        MPI_CHECK_OK(rmc_alloc(16, &pad[k]));
        rmc_matrix_h m;
        MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_F64, &m));
        for (int64_t t = 0; t < rmc_dist_ntiles(d); t++) {
            void *p = NULL;
            int owner;
            rmc_dist_tile(d, t, NULL, NULL, &owner);
            if (owner != me)
                continue;
            MPITEST_EXPECT(ok, rmc_matrix_tile_local(m, t, &p) == RMC_OK && p &&
                                   ((uintptr_t)p & 63) == 0);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_matrix_destroy(m));
    }
    for (int k = 0; k < 4; k++)
        MPI_CHECK_OK(rmc_free(pad[k]));
    rmc_dist_free(d);
}

/* Opaque elements (rmc_matrix_create_opaque): 20-byte records put by every rank into its rows,
 * read back by all, filled; accumulates and multiplications refused; bad sizes refused. */
static void test_opaque(void **s)
{
    (void)s;
    rmc_dist_h d;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 4 * np, 5, 0, &d));
    rmc_matrix_h m, x = NULL;
    MPI_CHECK_OK(rmc_matrix_create_opaque(MPI_COMM_NULL, d, 20, &m));
    int ok = 1;
    MPITEST_EXPECT(ok, rmc_matrix_elem(m) == RMC_ELEM_OPAQUE && rmc_matrix_elem_size(m) == 20);
    char rec[4][5][20], back[4 * 64][5][20];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            for (int b = 0; b < 20; b++)
                rec[i][j][b] = (char)(me * 31 + i * 7 + j * 3 + b);
    int64_t lo[2] = {4 * me, 0}, hi[2] = {4 * me + 4, 5};
    MPITEST_EXPECT(ok, rmc_matrix_put(m, lo, hi, rec, NULL) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_matrix_acc(m, lo, hi, rec, NULL, NULL) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    int64_t all_lo[2] = {0, 0}, all_hi[2] = {4 * np, 5};
    MPITEST_EXPECT(ok, np > 64 || rmc_matrix_get(m, all_lo, all_hi, back, NULL) == RMC_OK);
    for (int r = 0; r < np && r < 64; r++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                for (int b = 0; b < 20; b++)
                    MPITEST_EXPECT(ok, back[4 * r + i][j][b] == (char)(r * 31 + i * 7 + j * 3 + b));
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    char v[20];
    memset(v, 0x5a, sizeof v);
    MPI_CHECK_OK(rmc_matrix_fill(m, v));
    int64_t at[2] = {4 * np - 1, 4};
    char e[20];
    MPITEST_EXPECT(ok, rmc_matrix_elem_get(m, at, e) == RMC_OK && !memcmp(e, v, 20));
    double one = 1;
    MPITEST_EXPECT(ok,
                   rmc_matrix_gemm('N', 'N', &one, m, m, &one, m, RMC_GEMM_AUTO, NULL) != RMC_OK);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(rmc_matrix_create_opaque(MPI_COMM_NULL, d, 0, &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_ALL(rmc_matrix_create_opaque(MPI_COMM_NULL, d, RMC_ELEM_OPAQUE_MAX + 1, &x) ==
                      RMC_ERR_ARG &&
                  !x);
    MPI_CHECK_ALL(rmc_matrix_create(d, RMC_ELEM_OPAQUE, &x) == RMC_ERR_ARG && !x);
    MPI_CHECK_OK(rmc_matrix_destroy(m));
    rmc_dist_free(d);
}

/* RMC_BLOCK_OPT and RMC_BLOCK_SQUARE (param 0) give every rank tiles, square matrices and long
 * thin ones alike (a square process grid and the longer block side left half the ranks, or all but
 * one, without any: 1024^2 at 2 ranks was one tile). */
static void test_dist_balance(void **s)
{
    (void)s;
    static const int64_t shapes[][2] = {{5000, 40}, {7, 4096}, {8192, 100},  {1024, 1024},
                                        {1, 17},    {100, 3},  {4096, 4096}, {37, 23},
                                        {4, 4},     {5, 7},    {9, 9},       {6, 64}};
    int ok = 1;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int kind = RMC_BLOCK_SQUARE; kind <= RMC_BLOCK_OPT; kind++) {
            rmc_dist_h d;
            MPI_CHECK_OK(rmc_dist_2d((rmc_block_t)kind, shapes[i][0], shapes[i][1], 0, &d));
            for (int r = 0; r < np; r++) {
                int64_t k = 0;
                MPITEST_EXPECT(ok, rmc_dist_owned(d, r, NULL, 0, &k) == RMC_OK && k >= 1);
            }
            rmc_dist_free(d);
        }
    MPI_CHECK_ALL(ok);
}

/* An overlay (rmc_matrix_create_overlay): an I32 matrix in an F64 parent's memory; a value put
 * through the overlay is the parent's bytes; a part larger than the parent's is refused on every
 * rank; destroying the overlay leaves the parent working. */
static void test_overlay(void **s)
{
    (void)s;
    rmc_dist_h dp, dc, dbig;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 2 * np, 4, 0, &dp)); /* 8 doubles per rank */
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 2 * np, 8, 0, &dc)); /* 16 ints per rank */
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 2 * np, 64, 0, &dbig));
    rmc_matrix_h p, c, x = NULL;
    MPI_CHECK_OK(rmc_matrix_create(dp, RMC_ELEM_F64, &p));
    MPI_CHECK_OK(rmc_matrix_create_overlay(p, dc, RMC_ELEM_I32, 0, &c));
    int ok = 1;
    int32_t v[2][8];
    for (int j = 0; j < 8; j++)
        v[0][j] = me * 100 + j, v[1][j] = -(me * 100 + j);
    int64_t lo[2] = {2 * me, 0}, hi[2] = {2 * me + 2, 8};
    MPITEST_EXPECT(ok, rmc_matrix_put(c, lo, hi, v, NULL) == RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    double back[2][4];
    int64_t plo[2] = {2 * ((me + 1) % np), 0}, phi[2] = {plo[0] + 2, 4};
    MPITEST_EXPECT(ok, rmc_matrix_get(p, plo, phi, back, NULL) == RMC_OK);
    int32_t w[2][8], o = (me + 1) % np;
    memcpy(w, back, sizeof w);
    for (int j = 0; j < 8; j++)
        MPITEST_EXPECT(ok, w[0][j] == o * 100 + j && w[1][j] == -(o * 100 + j));
    MPI_CHECK_ALL(ok);
    /* every rank's part is too big: each names its own sizes (not another rank's failure) */
    MPI_CHECK_ALL(rmc_matrix_create_overlay(p, dbig, RMC_ELEM_F64, 0, &x) == RMC_ERR_TOO_BIG &&
                  !x && strstr(rmc_last_error(), "this rank's part needs"));
    /* C sharing memory with an operand (an overlay of it) is refused like C = A */
    rmc_matrix_h a2, c2 = NULL;
    rmc_dist_h dsq;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_ROW, 2 * np, 2 * np, 0, &dsq));
    MPI_CHECK_OK(rmc_matrix_create(dsq, RMC_ELEM_F64, &a2));
    MPI_CHECK_OK(rmc_matrix_create_overlay(a2, dsq, RMC_ELEM_F64, 0, &c2));
    double al = 1, be = 0;
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &al, a2, a2, &be, c2, RMC_GEMM_AUTO, NULL) ==
                      RMC_ERR_ARG &&
                  strstr(rmc_last_error(), "shares this rank's memory with A"));
    MPI_CHECK_OK(rmc_matrix_destroy(c2));
    MPI_CHECK_OK(rmc_matrix_destroy(a2));
    rmc_dist_free(dsq);
    MPI_CHECK_OK(rmc_matrix_destroy(c));
    double one = 1.5;
    MPI_CHECK_OK(rmc_matrix_fill(p, &one));
    int64_t at[2] = {0, 3};
    double e = 0;
    MPI_CHECK_ALL(rmc_matrix_elem_get(p, at, &e) == RMC_OK && e == 1.5);
    MPI_CHECK_OK(rmc_matrix_destroy(p));
    rmc_dist_free(dp);
    rmc_dist_free(dc);
    rmc_dist_free(dbig);
}

MPITEST_MAIN("matrix", cttest_setup, mpitest_teardown_rmc, test_dist_cover, test_patches_f64,
             test_patches_i32, test_patches_c64, test_tiles_elements, test_subset, test_bad_input,
             test_block_alignment, test_opaque, test_overlay, test_dist_balance)
