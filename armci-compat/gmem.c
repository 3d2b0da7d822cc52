/* ARMCI on RMC: memory of ARMCI_Malloc_group on a proper subgroup.
 *
 * RMC regions are collective over all of RMC's ranks, so an allocation on a subgroup cannot be a
 * region. Until comm offers regions on a sub-communicator (proposed: rmc_region_alloc_comm), such
 * an allocation is an MPI window over (a duplicate of) the group's communicator, locked once
 * (MPI_Win_lock_all). Every operation on it is completed at the target before it returns
 * (MPI_Win_flush), so ordering, ARMCI_Fence and the non-blocking forms need nothing more;
 * accumulate and read-modify-write are MPI accumulate operations, atomic with each other per
 * element.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

rmc_status_t rmca_gmem_create(rmca_alloc_t *a, size_t bytes, ARMCI_Group *group)
{
    int n = rmca.nranks;
    a->abs_to_win = malloc((size_t)n * sizeof(int));
    void *base = NULL;
    int ok = a->abs_to_win != NULL;
    if (ok && bytes) {
        ok = posix_memalign(&base, 64, bytes) == 0;
        if (ok)
            memset(base, 0, bytes);
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, group->comm);
    if (!all) {
        free(base);
        return RMC_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++)
        a->abs_to_win[i] = group->abs_to_grp[i];
    if (MPI_Comm_dup(group->comm, &a->comm) != MPI_SUCCESS) {
        free(base);
        return RMC_ERR_MPI;
    }
    struct {
        unsigned long long base, size;
    } me = {(unsigned long long)(uintptr_t)base, bytes};
    unsigned long long *v = malloc((size_t)group->size * 2 * sizeof(*v));
    if (!v)
        rmca_error("ARMCI_Malloc_group: out of memory");
    MPI_Allgather(&me, 2, MPI_UNSIGNED_LONG_LONG, v, 2, MPI_UNSIGNED_LONG_LONG, a->comm);
    for (int g = 0; g < group->size; g++) {
        int abs = group->grp_to_abs[g];
        a->abs_bases[abs] = (void *)(uintptr_t)v[2 * g];
        a->abs_sizes[abs] = (size_t)v[2 * g + 1];
    }
    free(v);
    a->mine = base;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc = MPI_Win_create(base, (MPI_Aint)bytes, 1, info, a->comm, &a->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return RMC_ERR_MPI;
    MPI_Win_set_errhandler(a->win, MPI_ERRORS_RETURN);
    if (MPI_Win_lock_all(MPI_MODE_NOCHECK, a->win) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    return RMC_OK;
}

rmc_status_t rmca_gmem_destroy(rmca_alloc_t *a)
{
    rmc_status_t st = RMC_OK;
    if (MPI_Win_unlock_all(a->win) != MPI_SUCCESS)
        st = RMC_ERR_MPI;
    MPI_Barrier(a->comm); /* every member's operations are complete before memory goes away */
    if (MPI_Win_free(&a->win) != MPI_SUCCESS)
        st = RMC_ERR_MPI;
    MPI_Comm_free(&a->comm);
    free(a->mine);
    a->mine = NULL;
    return st;
}

/* Window rank and displacement of [addr, addr+n) on `proc`; RMC-style status on failure. */
static rmc_status_t locate(rmca_alloc_t *a, int proc, const void *addr, size_t n, int *wr,
                           MPI_Aint *disp)
{
    if (proc < 0 || proc >= rmca.nranks)
        return RMC_ERR_RANK;
    *wr = a->abs_to_win[proc];
    uintptr_t lo = (uintptr_t)a->abs_bases[proc], p = (uintptr_t)addr;
    if (*wr < 0 || !lo || p < lo || p >= lo + a->abs_sizes[proc])
        return RMC_ERR_NOT_REGION;
    if (n > a->abs_sizes[proc] - (p - lo))
        return RMC_ERR_BOUNDS;
    *disp = (MPI_Aint)(p - lo);
    return RMC_OK;
}

#define GM_MPI(call)                                                                               \
    do {                                                                                           \
        if ((call) != MPI_SUCCESS)                                                                 \
            return RMC_ERR_MPI;                                                                    \
    } while (0)

/* Unflushed forms (strided / vector issue many, flush once). */
static rmc_status_t put_nf(rmca_alloc_t *a, const void *src, void *dst, size_t n, int proc)
{
    int wr;
    MPI_Aint d;
    rmc_status_t st = locate(a, proc, dst, n, &wr, &d);
    if (st != RMC_OK)
        return st;
    if (n > (size_t)0x7fffffff)
        return RMC_ERR_TOO_BIG;
    GM_MPI(MPI_Put(src, (int)n, MPI_BYTE, wr, d, (int)n, MPI_BYTE, a->win));
    return RMC_OK;
}

static rmc_status_t get_nf(rmca_alloc_t *a, const void *src, void *dst, size_t n, int proc)
{
    int wr;
    MPI_Aint d;
    rmc_status_t st = locate(a, proc, src, n, &wr, &d);
    if (st != RMC_OK)
        return st;
    if (n > (size_t)0x7fffffff)
        return RMC_ERR_TOO_BIG;
    GM_MPI(MPI_Get(dst, (int)n, MPI_BYTE, wr, d, (int)n, MPI_BYTE, a->win));
    return RMC_OK;
}

/* MPI element type and count per element (complex: two reals, added component-wise). */
static MPI_Datatype acc_mpi_type(rmc_acc_type_t t, size_t *real_size, int *reals)
{
    *reals = 1;
    switch (t) {
    case RMC_ACC_INT32:
        *real_size = 4;
        return MPI_INT32_T;
    case RMC_ACC_INT64:
        *real_size = 8;
        return MPI_INT64_T;
    case RMC_ACC_FLOAT:
        *real_size = 4;
        return MPI_FLOAT;
    case RMC_ACC_DOUBLE:
        *real_size = 8;
        return MPI_DOUBLE;
    case RMC_ACC_COMPLEX_FLOAT:
        *real_size = 4;
        *reals = 2;
        return MPI_FLOAT;
    case RMC_ACC_COMPLEX_DOUBLE:
        *real_size = 8;
        *reals = 2;
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

/* out[i] = scale * src[i] for n bytes of type t (scale NULL: copy). */
static void scale_into(rmc_acc_type_t t, const void *scale, const void *src, void *out, size_t n)
{
    if (!scale) {
        memcpy(out, src, n);
        return;
    }
    switch (t) {
    case RMC_ACC_INT32: {
        int32_t s = *(const int32_t *)scale;
        for (size_t i = 0; i < n / 4; i++) {
            int32_t v;
            memcpy(&v, (const char *)src + 4 * i, 4);
            v = (int32_t)((uint32_t)v * (uint32_t)s);
            memcpy((char *)out + 4 * i, &v, 4);
        }
        break;
    }
    case RMC_ACC_INT64: {
        int64_t s = *(const int64_t *)scale;
        for (size_t i = 0; i < n / 8; i++) {
            int64_t v;
            memcpy(&v, (const char *)src + 8 * i, 8);
            v = (int64_t)((uint64_t)v * (uint64_t)s);
            memcpy((char *)out + 8 * i, &v, 8);
        }
        break;
    }
    case RMC_ACC_FLOAT: {
        float s = *(const float *)scale;
        for (size_t i = 0; i < n / 4; i++)
            ((float *)out)[i] = s * ((const float *)src)[i];
        break;
    }
    case RMC_ACC_DOUBLE: {
        double s = *(const double *)scale;
        for (size_t i = 0; i < n / 8; i++)
            ((double *)out)[i] = s * ((const double *)src)[i];
        break;
    }
    case RMC_ACC_COMPLEX_FLOAT: {
        const float *s = scale;
        const float *x = src;
        float *o = out;
        for (size_t i = 0; i < n / 8; i++) {
            float re = x[2 * i], im = x[2 * i + 1];
            o[2 * i] = s[0] * re - s[1] * im;
            o[2 * i + 1] = s[0] * im + s[1] * re;
        }
        break;
    }
    case RMC_ACC_COMPLEX_DOUBLE: {
        const double *s = scale;
        const double *x = src;
        double *o = out;
        for (size_t i = 0; i < n / 16; i++) {
            double re = x[2 * i], im = x[2 * i + 1];
            o[2 * i] = s[0] * re - s[1] * im;
            o[2 * i + 1] = s[0] * im + s[1] * re;
        }
        break;
    }
    }
}

static rmc_status_t acc_nf(rmca_alloc_t *a, rmc_acc_type_t t, const void *scale, const void *src,
                           void *dst, size_t n, int proc, void **tmp_keep)
{
    size_t rs, es;
    int reals;
    MPI_Datatype mt = acc_mpi_type(t, &rs, &reals);
    if (mt == MPI_DATATYPE_NULL)
        return RMC_ERR_TYPE;
    es = rs * (size_t)reals;
    if (n % es || (uintptr_t)dst % rs)
        return RMC_ERR_ALIGN;
    int wr;
    MPI_Aint d;
    rmc_status_t st = locate(a, proc, dst, n, &wr, &d);
    if (st != RMC_OK)
        return st;
    if (n / rs > (size_t)0x7fffffff)
        return RMC_ERR_TOO_BIG;
    void *buf = malloc(n);
    if (!buf)
        return RMC_ERR_NOMEM;
    scale_into(t, scale, src, buf, n);
    int rc = MPI_Accumulate(buf, (int)(n / rs), mt, wr, d, (int)(n / rs), mt, MPI_SUM, a->win);
    /* the buffer must live until the flush */
    *tmp_keep = buf;
    return rc == MPI_SUCCESS ? RMC_OK : RMC_ERR_MPI;
}

static rmc_status_t flush(rmca_alloc_t *a, int proc)
{
    GM_MPI(MPI_Win_flush(a->abs_to_win[proc], a->win));
    return RMC_OK;
}

rmc_status_t rmca_gmem_put(rmca_alloc_t *a, const void *src, void *dst, size_t n, int proc)
{
    rmc_status_t st = put_nf(a, src, dst, n, proc);
    return st == RMC_OK ? flush(a, proc) : st;
}

rmc_status_t rmca_gmem_get(rmca_alloc_t *a, const void *src, void *dst, size_t n, int proc)
{
    rmc_status_t st = get_nf(a, src, dst, n, proc);
    return st == RMC_OK ? flush(a, proc) : st;
}

rmc_status_t rmca_gmem_acc(rmca_alloc_t *a, rmc_acc_type_t t, const void *scale, const void *src,
                           void *dst, size_t n, int proc)
{
    void *tmp = NULL;
    rmc_status_t st = acc_nf(a, t, scale, src, dst, n, proc, &tmp);
    if (st == RMC_OK)
        st = flush(a, proc);
    free(tmp);
    return st;
}

/* Visits every chunk of a strided patch (ARMCI descriptor; validated by the caller). */
rmc_status_t rmca_gmem_strided(rmca_alloc_t *a, int kind, rmc_acc_type_t t, const void *scale,
                               void *src, const int *src_stride, void *dst, const int *dst_stride,
                               const int *count, int levels, int proc)
{
    if (levels < 0 || levels > RMC_STRIDE_LEVELS_MAX || count[0] <= 0)
        return RMC_ERR_STRIDE;
    for (int l = 1; l <= levels; l++)
        if (count[l] <= 0 || src_stride[l - 1] < 0 || dst_stride[l - 1] < 0)
            return RMC_ERR_STRIDE;
    int idx[RMC_STRIDE_LEVELS_MAX + 1] = {0};
    size_t chunk = (size_t)count[0];
    rmc_status_t st = RMC_OK;
    void **keep = NULL;
    size_t nkeep = 0, capkeep = 0;
    for (;;) {
        size_t so = 0, doff = 0;
        for (int l = 1; l <= levels; l++) {
            so += (size_t)idx[l] * (size_t)src_stride[l - 1];
            doff += (size_t)idx[l] * (size_t)dst_stride[l - 1];
        }
        char *s = (char *)src + so, *d = (char *)dst + doff;
        if (kind == 0) {
            st = put_nf(a, s, d, chunk, proc);
        } else if (kind == 1) {
            st = get_nf(a, s, d, chunk, proc);
        } else {
            void *tmp = NULL;
            st = acc_nf(a, t, scale, s, d, chunk, proc, &tmp);
            if (tmp) {
                if (nkeep == capkeep) {
                    capkeep = capkeep ? 2 * capkeep : 16;
                    void **k2 = realloc(keep, capkeep * sizeof(void *));
                    if (!k2) {
                        free(tmp);
                        st = RMC_ERR_NOMEM;
                        break;
                    }
                    keep = k2;
                }
                keep[nkeep++] = tmp;
            }
        }
        if (st != RMC_OK)
            break;
        int l = 1;
        while (l <= levels && ++idx[l] == count[l])
            idx[l++] = 0;
        if (l > levels)
            break;
    }
    rmc_status_t fs = flush(a, proc);
    for (size_t i = 0; i < nkeep; i++)
        free(keep[i]);
    free(keep);
    return st != RMC_OK ? st : fs;
}

rmc_status_t rmca_gmem_rmw(rmca_alloc_t *a, int op, void *ploc, void *prem, int value, int proc)
{
    int is_long = op == ARMCI_FETCH_AND_ADD_LONG || op == ARMCI_SWAP_LONG;
    size_t n = is_long ? sizeof(long) : sizeof(int);
    int wr;
    MPI_Aint d;
    rmc_status_t st = locate(a, proc, prem, n, &wr, &d);
    if (st != RMC_OK)
        return st;
    if ((uintptr_t)prem % n)
        return RMC_ERR_ALIGN;
    long lv = 0, lres = 0;
    int iv = 0, ires = 0;
    int add = op == ARMCI_FETCH_AND_ADD || op == ARMCI_FETCH_AND_ADD_LONG;
    if (is_long)
        lv = add ? (long)value : *(long *)ploc;
    else
        iv = add ? value : *(int *)ploc;
    GM_MPI(MPI_Fetch_and_op(is_long ? (void *)&lv : (void *)&iv,
                            is_long ? (void *)&lres : (void *)&ires, is_long ? MPI_LONG : MPI_INT,
                            wr, d, add ? MPI_SUM : MPI_REPLACE, a->win));
    GM_MPI(MPI_Win_flush(wr, a->win));
    if (is_long)
        *(long *)ploc = lres;
    else
        *(int *)ploc = ires;
    return RMC_OK;
}

void rmca_gmem_sync_all(void)
{
    for (rmca_alloc_t *a = rmca.allocs; a; a = a->next)
        if (a->kind == RMCA_GMEM)
            MPI_Win_sync(a->win);
}
