/* Strided descriptors and kernels without MPI: validation, normalization, strided copy, pack /
 * unpack, typed (scaled) accumulate, all against a naive reference built from the raw descriptor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include "../../comm/strided/strided_impl.h"
#include "../mpi/test_strided_util.h"

static void test_validation(void **state)
{
    (void)state;
    rmci_sdesc_t d;
    int c2[3] = {8, 4, 2}, s2[2] = {16, 64}, t2[2] = {8, 32};
    assert_int_equal(rmci_sdesc_build(&d, s2, t2, c2, 2, 1, 1), RMC_OK);
    assert_int_equal(rmci_sdesc_build(&d, s2, t2, c2, -1, 1, 1), RMC_ERR_STRIDE);
    assert_int_equal(rmci_sdesc_build(&d, s2, t2, c2, 8, 1, 1), RMC_ERR_STRIDE);
    assert_int_equal(rmci_sdesc_build(&d, s2, t2, NULL, 2, 1, 1), RMC_ERR_ARG);
    assert_int_equal(rmci_sdesc_build(&d, NULL, t2, c2, 2, 1, 1), RMC_ERR_ARG);
    assert_int_equal(rmci_sdesc_build(&d, s2, NULL, c2, 2, 1, 1), RMC_ERR_ARG);
    /* levels 0: strides may be NULL */
    assert_int_equal(rmci_sdesc_build(&d, NULL, NULL, c2, 0, 1, 1), RMC_OK);
    assert_int_equal(d.bytes, 8);
    for (int k = 0; k < 3; k++) {
        int c[3] = {8, 4, 2};
        c[k] = 0;
        assert_int_equal(rmci_sdesc_build(&d, s2, t2, c, 2, 1, 1), RMC_ERR_STRIDE);
        c[k] = -3;
        assert_int_equal(rmci_sdesc_build(&d, s2, t2, c, 2, 1, 1), RMC_ERR_STRIDE);
    }
    int neg[2] = {16, -64};
    assert_int_equal(rmci_sdesc_build(&d, neg, t2, c2, 2, 1, 1), RMC_ERR_STRIDE);
    assert_int_equal(rmci_sdesc_build(&d, s2, neg, c2, 2, 1, 1), RMC_ERR_STRIDE);
    /* stride smaller than the chunk / the block below */
    int small0[2] = {7, 64};
    assert_int_equal(rmci_sdesc_build(&d, small0, t2, c2, 2, 1, 1), RMC_ERR_STRIDE);
    int small1[2] = {16, 55}; /* block below spans 3*16+8 = 56 */
    assert_int_equal(rmci_sdesc_build(&d, small1, t2, c2, 2, 1, 1), RMC_ERR_STRIDE);
    int ok1[2] = {16, 56};
    assert_int_equal(rmci_sdesc_build(&d, ok1, t2, c2, 2, 1, 1), RMC_OK);
    /* an unused stride (count above it is 1) may be anything non-negative */
    int c1[3] = {32, 1, 3}, s1[2] = {0, 40};
    assert_int_equal(rmci_sdesc_build(&d, s1, s1, c1, 2, 1, 1), RMC_OK);
    assert_int_equal(d.levels, 1);
    assert_int_equal(d.cnt[1], 3);
    assert_int_equal(d.ss[0], 40);
    /* accumulate alignment: count[0] multiple of esize, used strides multiple of align */
    int ca[2] = {12, 3}, sa[1] = {16};
    assert_int_equal(rmci_sdesc_build(&d, sa, sa, ca, 1, 8, 8), RMC_ERR_ALIGN);
    int cb[2] = {16, 3}, sb[1] = {20};
    assert_int_equal(rmci_sdesc_build(&d, sb, sa, cb, 1, 8, 8), RMC_ERR_ALIGN);
    assert_int_equal(rmci_sdesc_build(&d, sa, sb, cb, 1, 8, 8), RMC_ERR_ALIGN);
    assert_int_equal(rmci_sdesc_build(&d, sb, sb, cb, 1, 4, 8), RMC_OK); /* complex float */
}

/* The reason names the argument, its level or side, and the value. */
static void test_validation_why(void **state)
{
    (void)state;
    rmci_sdesc_t d;
    char why[160];
    int c2[3] = {8, 4, 2}, s2[2] = {16, 64}, t2[2] = {8, 32};
    struct {
        const int *s, *t, *c;
        int levels;
        size_t al, es;
        rmc_status_t st;
        const char *why;
    } cases[] = {
        {s2, t2, c2, 9, 1, 1, RMC_ERR_STRIDE, "stride_levels = 9 (0..7)"},
        {s2, t2, NULL, 2, 1, 1, RMC_ERR_ARG, "count is NULL"},
        {s2, NULL, c2, 2, 1, 1, RMC_ERR_ARG, "dst_stride_arr is NULL with 2 levels"},
        {s2, t2, (int[]){8, 0, 2}, 2, 1, 1, RMC_ERR_STRIDE, "count[1] = 0 (at least 1)"},
        {(int[]){16, -64}, t2, c2, 2, 1, 1, RMC_ERR_STRIDE, "src_stride_arr[1] = -64 is negative"},
        {s2, (int[]){8, 31}, c2, 2, 1, 1, RMC_ERR_STRIDE,
         "dst_stride_arr[1] = 31 is below the 32 bytes a block of level 2 spans"},
        {(int[]){20}, (int[]){16}, (int[]){16, 3}, 1, 8, 8, RMC_ERR_ALIGN,
         "src_stride_arr[0] = 20 is not a multiple of the element alignment 8"},
        {(int[]){16}, (int[]){16}, (int[]){12, 3}, 1, 8, 8, RMC_ERR_ALIGN,
         "count[0] = 12 bytes is not a multiple of the element size 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        why[0] = 0;
        assert_int_equal(rmci_sdesc_check(&d, cases[i].s, cases[i].t, cases[i].c, cases[i].levels,
                                          cases[i].al, cases[i].es, why, sizeof why),
                         cases[i].st);
        assert_string_equal(why, cases[i].why);
    }
    /* no room for the reason: the status alone */
    assert_int_equal(rmci_sdesc_check(&d, s2, t2, c2, 9, 1, 1, NULL, 0), RMC_ERR_STRIDE);
}

static void test_normalize(void **state)
{
    (void)state;
    rmci_sdesc_t d;
    /* fully contiguous on both sides -> one chunk */
    int c[3] = {16, 4, 3}, s[2] = {16, 64};
    assert_int_equal(rmci_sdesc_build(&d, s, s, c, 2, 1, 1), RMC_OK);
    assert_int_equal(d.levels, 0);
    assert_int_equal(d.l0, 192);
    assert_int_equal(d.nchunks, 1);
    /* contiguous on one side only -> no merge */
    int t[2] = {32, 160};
    assert_int_equal(rmci_sdesc_build(&d, s, t, c, 2, 1, 1), RMC_OK);
    assert_int_equal(d.levels, 2);
    assert_int_equal(d.nchunks, 12);
    assert_int_equal(d.bytes, 192);
    assert_int_equal(d.sext, 192);
    assert_int_equal(d.dext, 2 * 160 + 3 * 32 + 16);
    /* upper level continues the one below on both sides -> merged */
    int u[2] = {32, 128};
    assert_int_equal(rmci_sdesc_build(&d, u, u, c, 2, 1, 1), RMC_OK);
    assert_int_equal(d.levels, 1);
    assert_int_equal(d.cnt[1], 12);
    assert_int_equal(d.ss[0], 32);
    /* 7 levels of count 1 -> a single chunk */
    int c7[8] = {24, 1, 1, 1, 1, 1, 1, 1}, z7[7] = {0};
    assert_int_equal(rmci_sdesc_build(&d, z7, z7, c7, 7, 1, 1), RMC_OK);
    assert_int_equal(d.levels, 0);
    assert_int_equal(d.bytes, 24);
}

/* Random descriptors: scopy / pack / unpack against the naive reference; bytes outside the patch
 * stay untouched. */
static void test_copy_random(void **state)
{
    (void)state;
    enum { BUF = 1 << 16 };
    char *src = malloc(BUF), *dst = malloc(BUF), *ref = malloc(BUF), *pk = malloc(BUF);
    char *pk2 = malloc(BUF);
    assert_non_null(src && dst && ref && pk && pk2);
    trng_t r;
    trng_seed(&r, 42);
    for (int it = 0; it < 400; it++) {
        int levels = it % 8;
        tdesc_t td;
        size_t al = (size_t)1 << trng_range(&r, 0, 3);
        assert_int_equal(tdesc_random(&r, levels, al, al, BUF, &td), 0);
        for (size_t i = 0; i < BUF; i++) {
            src[i] = (char)trng_next(&r);
            dst[i] = ref[i] = (char)(i * 7);
        }
        rmci_sdesc_t d;
        assert_int_equal(rmci_sdesc_build(&d, td.sstr, td.dstr, td.count, levels, 1, 1), RMC_OK);
        assert_int_equal(d.bytes, td.bytes);
        assert_int_equal(d.sext, td.sext);
        assert_int_equal(d.dext, td.dext);
        rmci_scopy(dst, d.ds, src, d.ss, &d);
        tref_copy(ref, src, &td);
        assert_memory_equal(dst, ref, BUF);
        /* pack then unpack reproduces the same destination */
        rmci_spack(pk, src, &d);
        tdesc_t dense = td;
        for (int k = 0; k < levels; k++)
            dense.dstr[k] = 0;
        size_t sz = (size_t)td.count[0];
        for (int k = 1; k <= levels; k++) {
            dense.dstr[k - 1] = td.count[k] > 1 ? (int)sz : 0;
            sz *= (size_t)td.count[k];
        }
        memset(pk2, 0, BUF);
        tref_copy(pk2, src, &dense);
        assert_memory_equal(pk, pk2, td.bytes);
        for (size_t i = 0; i < BUF; i++)
            dst[i] = (char)(i * 7);
        rmci_sunpack(dst, pk, &d);
        assert_memory_equal(dst, ref, BUF);
    }
    free(src);
    free(dst);
    free(ref);
    free(pk);
    free(pk2);
}

static void test_acc_kernels(void **state)
{
    (void)state;
    enum { BUF = 1 << 15 };
    char *src = aligned_alloc(64, BUF), *dst = aligned_alloc(64, BUF),
         *ref = aligned_alloc(64, BUF);
    char *pk = aligned_alloc(64, BUF), *pref = aligned_alloc(64, BUF);
    assert_non_null(src && dst && ref && pk && pref);
    trng_t r;
    trng_seed(&r, 7);
    for (int ti = 0; ti < TACC_NTYPES; ti++) {
        rmc_acc_type_t t = tacc_types[ti];
        size_t es = rmc_acc_type_size(t), al = tacc_align(t);
        assert_int_equal(rmci_acc_esize(t), es);
        assert_int_equal(rmci_acc_align(t), al);
        for (int which = 0; which < 2; which++) {
            const void *scale = tscale(t, which);
            assert_int_equal(rmci_acc_scale_is_one(t, scale), which == 0);
            for (int it = 0; it < 60; it++) {
                int levels = it % 8;
                tdesc_t td;
                assert_int_equal(tdesc_random(&r, levels, es, al, BUF, &td), 0);
                tfill_values(t, src, BUF, &r);
                tfill_values(t, dst, BUF, &r);
                memcpy(ref, dst, BUF);
                rmci_sdesc_t d;
                assert_int_equal(rmci_sdesc_build(&d, td.sstr, td.dstr, td.count, levels, al, es),
                                 RMC_OK);
                rmci_sacc(t, scale, dst, src, &d);
                tref_acc(t, scale, ref, src, &td);
                assert_memory_equal(dst, ref, BUF);
                /* scaled pack == scale * packed source (reference: acc into zeros) */
                rmci_spack_scaled(t, scale, pk, src, &d);
                memset(pref, 0, BUF);
                tdesc_t dense = td;
                size_t sz = (size_t)td.count[0];
                for (int k = 1; k <= levels; k++) {
                    dense.dstr[k - 1] = td.count[k] > 1 ? (int)sz : 0;
                    sz *= (size_t)td.count[k];
                }
                tref_acc(t, scale, pref, src, &dense);
                assert_true(values_equal(t, pk, pref, td.bytes));
            }
            /* contiguous kernels, odd lengths */
            for (size_t n = 0; n < 70; n += 3) {
                tfill_values(t, src, n * es, &r);
                tfill_values(t, dst, n * es, &r);
                memcpy(ref, dst, n * es);
                rmci_acc_kernel(t, which ? scale : NULL, dst, src, n);
                for (size_t i = 0; i < n; i++)
                    tref_acc_elem(t, which ? scale : NULL, ref + i * es, src + i * es);
                assert_true(values_equal(t, dst, ref, n * es));
                rmci_scale_kernel(t, scale, pk, src, n);
                memset(pref, 0, n * es);
                for (size_t i = 0; i < n; i++)
                    tref_acc_elem(t, scale, pref + i * es, src + i * es);
                assert_true(values_equal(t, pk, pref, n * es));
            }
        }
    }
    /* integer wrap-around is defined (unsigned arithmetic) */
    int32_t a = INT32_MAX, b = 1;
    rmci_acc_kernel(RMC_ACC_INT32, NULL, &a, &b, 1);
    assert_int_equal(a, INT32_MIN);
    assert_int_equal(rmc_acc_type_size((rmc_acc_type_t)0), 0);
    assert_int_equal(rmc_acc_type_size((rmc_acc_type_t)99), 0);
    free(src);
    free(dst);
    free(ref);
    free(pk);
    free(pref);
}

UNITTEST_MAIN("strided (no MPI)", test_validation, test_validation_why, test_normalize,
              test_copy_random, test_acc_kernels)
