/* ga-compat: GA's user-defined element types and field access. NGA_Register_type gives a type id
 * (from 1017, as GA 5.8.2) for elements of n opaque bytes: arrays of it live on opaque matrices
 * (rmc_matrix_create_opaque) and support what moves or sets bytes (creation, put / get, their
 * non-blocking, strided and periodic forms, scatter / gather, access, GA_Zero, GA_Fill, GA_Copy,
 * the patch copies, the distribution queries); arithmetic on them aborts naming the call (as it
 * must: the bytes mean nothing to GA). The field calls work on every array: bytes [foff, foff +
 * fsize) of each element of a patch (e.g. the real or imaginary parts of a complex array) to or
 * from a buffer of fsize-byte fields with leading dimensions ld (in fields), moved one-sidedly as
 * one strided transfer per block the patch touches; a put changes only those bytes. */
#include <stdlib.h>
#include <string.h>
#include <rmc/strided.h>
#include "ga_impl.h"

/* Local (every process registers the same types in the same order, as in GA). A new element type
 * of `bytes` bytes (1 .. RMC_ELEM_OPAQUE_MAX); returns its id. */
int NGA_Register_type(size_t bytes)
{
    const char *fn = "NGA_Register_type";
    gai_up(fn);
    if (bytes == 0 || bytes > RMC_ELEM_OPAQUE_MAX)
        gai_error(fn, "element size %zu (1 .. %d bytes)", bytes, RMC_ELEM_OPAQUE_MAX);
    for (int i = 0; i < GAI_NUTYPES; i++)
        if (!gai.utype_size[i]) {
            gai.utype_size[i] = bytes;
            return GAI_UTYPE0 + i;
        }
    gai_error(fn, "%d user-defined types are registered already (the most ga-compat keeps)",
              GAI_NUTYPES);
}

/* Local. Frees a registered type's id (arrays of it keep working); 0 on success. */
int NGA_Deregister_type(int type)
{
    const char *fn = "NGA_Deregister_type";
    gai_up(fn);
    int i = type - GAI_UTYPE0;
    if (i < 0 || i >= GAI_NUTYPES || !gai.utype_size[i])
        gai_error(fn, "type %d is not a registered user-defined type", type);
    gai.utype_size[i] = 0;
    return 0;
}

/* Dimension d's cut points of [l, h) at the array's block boundaries (through a point that has
 * the other coordinates of l). */
static int64_t cuts(gai_array_t *a, int d, const int64_t l[], const int64_t h[], int64_t *out,
                    const char *fn)
{
    int64_t n = 0, p[GA_MAX_DIM];
    memcpy(p, l, sizeof(int64_t) * (size_t)a->ndim);
    for (int64_t x = l[d]; x < h[d];) {
        int64_t t, lo[GA_MAX_DIM], hi[GA_MAX_DIM];
        p[d] = x;
        gai_check(rmc_dist_locate(a->dist, p, &t, NULL), fn, "rmc_dist_locate");
        rmc_dist_tile(a->dist, t, lo, hi, NULL);
        out[n++] = x;
        x = hi[d] < h[d] ? hi[d] : h[d];
    }
    out[n] = h[d];
    return n;
}

static void field_op(int g_a, int op, const int *lo, const int *hi, int foff, int fsize, void *buf,
                     const int *ld, ga_nbhdl_t *nb, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    int nd = a->ndim;
    if (!lo || !hi || !buf || (nd > 1 && !ld))
        gai_error(fn, "array '%s': NULL lo, hi, buf or ld", a->name);
    if (foff < 0 || fsize < 1 || (size_t)foff + (size_t)fsize > a->esz)
        gai_error(fn, "array '%s': field [%d, %d + %d) outside its %zu-byte elements", a->name,
                  foff, foff, fsize, a->esz);
    if (nb)
        *nb = 0;
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], bld[GA_MAX_DIM];
    if (!gai_patch_int(a, lo, hi, l, h, fn))
        return;
    for (int d = 0; d + 1 < nd; d++) {
        bld[d] = ld[d];
        if (bld[d] < h[d + 1] - l[d + 1])
            gai_error(fn, "array '%s': ld[%d] = %d below the patch's extent %lld", a->name, d,
                      ld[d], (long long)(h[d + 1] - l[d + 1]));
    }
    gai_reqs_t q = {0}; /* the non-blocking forms' requests */
    /* the pieces: the cartesian product of each dimension's cuts */
    int64_t *cut[GA_MAX_DIM], nc[GA_MAX_DIM], c[GA_MAX_DIM] = {0};
    for (int d = 0; d < nd; d++) {
        if (!(cut[d] = malloc(sizeof(int64_t) * (size_t)(h[d] - l[d] + 1))))
            gai_error(fn, "out of memory");
        nc[d] = cuts(a, d, l, h, cut[d], fn);
    }
    for (;;) {
        int64_t pl[GA_MAX_DIM], ph[GA_MAX_DIM], t, boff = 0;
        for (int d = 0; d < nd; d++) {
            pl[d] = cut[d][c[d]];
            ph[d] = cut[d][c[d] + 1];
            boff = d == 0 ? pl[0] - l[0] : boff * bld[d - 1] + (pl[d] - l[d]);
        }
        int rank;
        void *addr;
        gai_elem_addr(a, pl, &rank, &addr, fn);
        /* the block's storage extents (padded for ghost arrays) */
        int64_t slo[GA_MAX_DIM], shi[GA_MAX_DIM];
        gai_check(rmc_dist_locate(a->dist, pl, &t, NULL), fn, "rmc_dist_locate");
        rmc_dist_tile(rmc_matrix_dist(a->m), t, slo, shi, NULL);
        /* levels: bytes of a field, then the dimensions from the last */
        int count[GA_MAX_DIM + 1], rs[GA_MAX_DIM], ls[GA_MAX_DIM];
        int64_t rstr = (int64_t)a->esz, lstr = fsize;
        count[0] = fsize;
        for (int k = 0; k < nd; k++) {
            int d = nd - 1 - k;
            count[k + 1] = (int)(ph[d] - pl[d]);
            rs[k] = (int)rstr;
            ls[k] = (int)lstr;
            rstr *= shi[d] - slo[d];
            lstr *= d > 0 ? bld[d - 1] : 1;
        }
        char *rp = (char *)addr + foff, *lp = (char *)buf + boff * fsize;
        rmc_status_t st;
        if (nb) {
            rmc_request_h *r = gai_reqs_add(&q, fn);
            st = op == 'g' ? rmc_get_strided_nb(rp, rs, lp, ls, count, nd, rank, r)
                           : rmc_put_strided_nb(lp, ls, rp, rs, count, nd, rank, r);
        } else {
            st = op == 'g' ? rmc_get_strided(rp, rs, lp, ls, count, nd, rank)
                           : rmc_put_strided(lp, ls, rp, rs, count, nd, rank);
        }
        if (st != RMC_OK)
            gai_reqs_wait(&q, fn); /* what is in flight, before the abort */
        gai_check(st, fn, "moving the fields of a block");
        int d = nd - 1;
        while (d >= 0 && ++c[d] == nc[d])
            c[d] = 0, d--;
        if (d < 0)
            break;
    }
    for (int d = 0; d < nd; d++)
        free(cut[d]);
    if (nb)
        *nb = gai_reqs_handle(&q, fn);
}

/* Local, blocking: field [foff, foff + fsize) of every element of patch [lo, hi] into buf. */
void NGA_Get_field(int g_a, int *lo, int *hi, int foff, int fsize, void *buf, int *ld)
{
    field_op(g_a, 'g', lo, hi, foff, fsize, buf, ld, NULL, "NGA_Get_field");
}

/* Local, non-blocking: NGA_Get_field, complete when NGA_NbWait(nbhandle) returns or NGA_NbTest
 * says 1 (or at the next GA_Sync / GA_Fence); buf must not be used before. */
void NGA_Nbget_field(int g_a, int *lo, int *hi, int foff, int fsize, void *buf, int *ld,
                     ga_nbhdl_t *nbhandle)
{
    if (!nbhandle)
        gai_error("NGA_Nbget_field", "NULL handle");
    field_op(g_a, 'g', lo, hi, foff, fsize, buf, ld, nbhandle, "NGA_Nbget_field");
}

/* Local, blocking (buf reusable on return; visible to others after a sync or fence): the fields
 * of the patch's elements from buf, their other bytes untouched. */
void NGA_Put_field(int g_a, int *lo, int *hi, int foff, int fsize, void *buf, int *ld)
{
    field_op(g_a, 'p', lo, hi, foff, fsize, buf, ld, NULL, "NGA_Put_field");
}

/* Local, non-blocking: NGA_Put_field; buf must stay untouched until NGA_NbWait(nbhandle) returns
 * or NGA_NbTest says 1. */
void NGA_Nbput_field(int g_a, int *lo, int *hi, int foff, int fsize, void *buf, int *ld,
                     ga_nbhdl_t *nbhandle)
{
    if (!nbhandle)
        gai_error("NGA_Nbput_field", "NULL handle");
    field_op(g_a, 'p', lo, hi, foff, fsize, buf, ld, nbhandle, "NGA_Nbput_field");
}
