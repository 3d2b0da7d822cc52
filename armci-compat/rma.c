/* ARMCI on RMC: one-sided operations (contiguous, strided, vector, values), their non-blocking
 * forms, completion (Wait / Test / WaitProc / WaitAll) and synchronization (Fence / AllFence /
 * Barrier).
 *
 * Mapping (comm's mechanisms, no re-implementation):
 *   Put / Get / Acc          rmc_put / rmc_get / rmc_acc
 *   PutS / GetS / AccS       rmc_put_strided / rmc_get_strided / rmc_acc_strided (same descriptor)
 *   PutV / GetV / AccV       rmc_put_vector / rmc_get_vector / rmc_acc_vector
 *   Nb*                      the _nb forms: with a handle their requests are recorded on it (nb.c),
 *                            with a NULL handle they are implicit (req NULL), completed by a fence
 *   Fence / AllFence         rmc_fence / rmc_fence_all (after the handles' requests to the target)
 *   Barrier                  rmc_barrier
 * ARMCI's completion semantics are RMC's: blocking put / acc return when the source may be reused,
 * a get when the data has arrived; location consistency for the origin; Fence completes at the
 * target. Zero-size transfers (size 0, a count of 0, empty vectors) do nothing, as in ARMCI.
 */
#include "config.h"
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

/* Records an issued non-blocking operation (so `proc` was valid): its request on the handle, or
 * (NULL handle) that an implicit operation to `proc` is outstanding. */
static inline void nb_issued(armci_hdl_t *h, rmc_request_h req, int proc)
{
    RMCA_SERIAL();
    if (h) {
        if (req != RMC_REQUEST_NULL)
            rmca_nb_add(h, req, proc);
    } else {
        RMCA_REQUIRE_INIT("ARMCI non-blocking operation");
        rmca.impl_pending[proc] = 1;
        rmca.any_impl = 1;
    }
}

static inline void nb_check(const char *fn, int proc)
{
    RMCA_REQUIRE_INIT(fn);
    if (RMCA_UNLIKELY(proc < 0 || proc >= rmca.nranks))
        rmca_error("%s: process %d out of range [0, %d)", fn, proc, rmca.nranks);
}

static void clear_implicit(void)
{
    if (rmca.any_impl) {
        memset(rmca.impl_pending, 0, (size_t)rmca.nranks);
        rmca.any_impl = 0;
    }
}

/* --------------------------------------------------------------------- contiguous --- */

static inline int bad_size(const char *fn, int size)
{
    if (RMCA_UNLIKELY(size < 0))
        rmca_error("%s: negative size (%d bytes)", fn, size);
    return size == 0;
}

int PARMCI_Put(void *src, void *dst, int size, int proc)
{
    if (bad_size("ARMCI_Put", size))
        return 0;
    RMCA_CHECK(rmc_put(src, dst, (size_t)size, proc),
               "ARMCI_Put(src=%p, dst=%p, %d bytes, proc %d)", src, dst, size, proc);
    return 0;
}

int PARMCI_Get(void *src, void *dst, int size, int proc)
{
    if (bad_size("ARMCI_Get", size))
        return 0;
    RMCA_CHECK(rmc_get(src, dst, (size_t)size, proc),
               "ARMCI_Get(src=%p, dst=%p, %d bytes, proc %d)", src, dst, size, proc);
    return 0;
}

/* ------------------------------------------------- what RMC's calls refuse --- */

/* ARMCI takes descriptors and buffers that RMC's strided and vector calls refuse: strides that do
 * not nest (smaller than the level below: chunks that overlap or are transposed), zero or negative
 * strides, more than RMC_STRIDE_LEVELS_MAX levels (RMC_ERR_STRIDE), and accumulate sources at
 * addresses not aligned to the element type (RMC_ERR_ALIGN). Those operations go here, blocking
 * (a non-blocking ARMCI call may complete early): the chunks as vector segments (RMC's vector
 * calls take any set of them), an accumulate's sources first copied into an aligned buffer. An
 * accumulate's target must still be aligned (RMC_ERR_ALIGN). */
enum { OP_PUT, OP_GET, OP_ACC };

static int retry_by_chunks(int op, rmc_status_t st)
{
    return st == RMC_ERR_STRIDE || (op == OP_ACC && st == RMC_ERR_ALIGN);
}

/* The vector operation v[0..len), an accumulate's source segments copied to an aligned buffer. */
static rmc_status_t vector_aligned(int op, rmc_acc_type_t t, const void *scale, const rmc_iov_t *v,
                                   int len, int proc)
{
    if (op == OP_PUT)
        return rmc_put_vector(v, len, proc);
    if (op == OP_GET)
        return rmc_get_vector(v, len, proc);
    size_t segs = 0, bytes = 0;
    for (int i = 0; i < len; i++)
        segs += (size_t)v[i].count, bytes += (size_t)v[i].count * v[i].bytes;
    rmc_iov_t *w = malloc(sizeof(rmc_iov_t) * (size_t)len);
    void **src = malloc(sizeof(void *) * (segs ? segs : 1));
    char *copy = malloc(bytes ? bytes : 1), *at = copy; /* malloc: aligned for every type */
    rmc_status_t st = RMC_ERR_NOMEM;
    if (w && src && copy) {
        void **sp = src;
        for (int i = 0; i < len; i++) {
            w[i] = v[i];
            w[i].src = sp;
            for (int k = 0; k < v[i].count; k++, at += v[i].bytes)
                *sp++ = memcpy(at, v[i].src[k], v[i].bytes);
        }
        st = rmc_acc_vector(t, scale, w, len, proc);
    }
    free(w);
    free(src);
    free(copy);
    return st;
}

/* A strided operation as vector segments: one per chunk (count[0] bytes), every level walked
 * with its stride (any sign or size). */
static rmc_status_t strided_by_chunks(int op, rmc_acc_type_t t, const void *scale, void *src,
                                      const int *ss, void *dst, const int *ds, const int *count,
                                      int levels, int proc)
{
    size_t n = 1;
    for (int l = 1; l <= levels; l++)
        if (__builtin_mul_overflow(n, (size_t)count[l], &n) || n > (size_t)INT_MAX)
            return RMC_ERR_TOO_BIG;
    void **sp = malloc(sizeof(void *) * n), **dp = malloc(sizeof(void *) * n);
    int *idx = calloc((size_t)levels + 1, sizeof(int));
    rmc_status_t st = RMC_ERR_NOMEM;
    if (sp && dp && idx) {
        for (size_t c = 0; c < n; c++) {
            ptrdiff_t so = 0, dof = 0;
            for (int l = 1; l <= levels; l++)
                so += (ptrdiff_t)idx[l] * ss[l - 1], dof += (ptrdiff_t)idx[l] * ds[l - 1];
            sp[c] = (char *)src + so;
            dp[c] = (char *)dst + dof;
            for (int l = 1; l <= levels && ++idx[l] == count[l]; l++)
                idx[l] = 0;
        }
        rmc_iov_t v = {sp, dp, (int)n, (size_t)count[0]};
        st = vector_aligned(op, t, scale, &v, 1, proc);
    }
    free(sp);
    free(dp);
    free(idx);
    return st;
}

/* A strided operation: RMC's call (blocking, or non-blocking with req as ARMCI's handle says),
 * else by chunks. */
static rmc_status_t strided_op(int op, rmc_acc_type_t t, const void *scale, void *src, int *ss,
                               void *dst, int *ds, int *count, int levels, int proc, int blocking,
                               rmc_request_h *req)
{
    rmc_status_t st = RMC_ERR_STRIDE;
    if (levels <= RMC_STRIDE_LEVELS_MAX) {
        if (blocking)
            st = op == OP_PUT   ? rmc_put_strided(src, ss, dst, ds, count, levels, proc)
                 : op == OP_GET ? rmc_get_strided(src, ss, dst, ds, count, levels, proc)
                                : rmc_acc_strided(t, scale, src, ss, dst, ds, count, levels, proc);
        else
            st = op == OP_PUT ? rmc_put_strided_nb(src, ss, dst, ds, count, levels, proc, req)
                 : op == OP_GET
                     ? rmc_get_strided_nb(src, ss, dst, ds, count, levels, proc, req)
                     : rmc_acc_strided_nb(t, scale, src, ss, dst, ds, count, levels, proc, req);
    }
    if (retry_by_chunks(op, st))
        st = strided_by_chunks(op, t, scale, src, ss, dst, ds, count, levels, proc);
    return st;
}

/* A contiguous accumulate whose source is not aligned: from an aligned copy. */
static rmc_status_t acc_op(rmc_acc_type_t t, void *scale, void *src, void *dst, size_t bytes,
                           int proc, int blocking, rmc_request_h *req)
{
    rmc_status_t st = blocking ? rmc_acc(t, scale, src, dst, bytes, proc)
                               : rmc_acc_nb(t, scale, src, dst, bytes, proc, req);
    if (st == RMC_ERR_ALIGN) {
        void *s1[1] = {src}, *d1[1] = {dst};
        rmc_iov_t v = {s1, d1, 1, bytes};
        st = vector_aligned(OP_ACC, t, scale, &v, 1, proc);
    }
    return st;
}

int PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_Acc");
    if (bad_size("ARMCI_Acc", bytes))
        return 0;
    RMCA_CHECK(acc_op(t, scale, src, dst, (size_t)bytes, proc, 1, NULL),
               "ARMCI_Acc(type %d, dst=%p, %d bytes, proc %d)", datatype, dst, bytes, proc);
    return 0;
}

int PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    if (bad_size("ARMCI_NbPut", bytes))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(rmc_put_nb(src, dst, (size_t)bytes, proc, hdl ? &r : NULL),
               "ARMCI_NbPut(src=%p, dst=%p, %d bytes, proc %d)", src, dst, bytes, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    if (bad_size("ARMCI_NbGet", bytes))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(rmc_get_nb(src, dst, (size_t)bytes, proc, hdl ? &r : NULL),
               "ARMCI_NbGet(src=%p, dst=%p, %d bytes, proc %d)", src, dst, bytes, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_NbAcc");
    if (bad_size("ARMCI_NbAcc", bytes))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(acc_op(t, scale, src, dst, (size_t)bytes, proc, 0, hdl ? &r : NULL),
               "ARMCI_NbAcc(type %d, dst=%p, %d bytes, proc %d)", datatype, dst, bytes, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

/* ------------------------------------------------------------------------ strided --- */

static int no_strides[RMC_STRIDE_LEVELS_MAX];

/* Returns 1 when the patch is empty (a count of 0: nothing to do). Substitutes stride arrays for
 * NULL ones of a 0-level (contiguous) descriptor. RMC validates everything else. */
static inline int strided_empty(const char *fn, int **ss, int **ds, const int *count, int levels)
{
    if (RMCA_UNLIKELY(!count || levels < 0))
        rmca_error("%s: invalid stride descriptor (count %p, %d levels)", fn, (void *)count,
                   levels);
    if (levels == 0) {
        if (!*ss)
            *ss = no_strides;
        if (!*ds)
            *ds = no_strides;
    }
    int empty = 0;
    for (int i = 0; i <= levels; i++) {
        if (count[i] < 0)
            rmca_error("%s: count[%d] = %d", fn, i, count[i]);
        empty |= count[i] == 0;
    }
    return empty;
}

#define STRIDED_MSG(fn) fn "(src=%p, dst=%p, count[0]=%d, %d levels, proc %d)"

int PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc)
{
    if (strided_empty("ARMCI_PutS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    RMCA_CHECK(strided_op(OP_PUT, 0, NULL, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 1, NULL),
               STRIDED_MSG("ARMCI_PutS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    return 0;
}

int PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc)
{
    if (strided_empty("ARMCI_GetS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    RMCA_CHECK(strided_op(OP_GET, 0, NULL, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 1, NULL),
               STRIDED_MSG("ARMCI_GetS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    return 0;
}

int PARMCI_AccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels, int proc)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_AccS");
    if (strided_empty("ARMCI_AccS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    RMCA_CHECK(strided_op(OP_ACC, t, scale, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 1, NULL),
               STRIDED_MSG("ARMCI_AccS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    return 0;
}

int PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    if (strided_empty("ARMCI_NbPutS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(strided_op(OP_PUT, 0, NULL, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 0, hdl ? &r : NULL),
               STRIDED_MSG("ARMCI_NbPutS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    if (strided_empty("ARMCI_NbGetS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(strided_op(OP_GET, 0, NULL, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 0, hdl ? &r : NULL),
               STRIDED_MSG("ARMCI_NbGetS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbAccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_NbAccS");
    if (strided_empty("ARMCI_NbAccS", &src_stride_ar, &dst_stride_ar, count, stride_levels))
        return 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    RMCA_CHECK(strided_op(OP_ACC, t, scale, src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count,
                          stride_levels, proc, 0, hdl ? &r : NULL),
               STRIDED_MSG("ARMCI_NbAccS"), src_ptr, dst_ptr, count[0], stride_levels, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc)
{
    PARMCI_Put(src, dst, size, proc);
    PARMCI_Fence(proc);
    PARMCI_Put(&value, flag, (int)sizeof(int), proc);
    PARMCI_Fence(proc);
    return 0;
}

int PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                     int count[], int stride_levels, int *flag, int value, int proc)
{
    PARMCI_PutS(src_ptr, src_stride_ar, dst_ptr, dst_stride_ar, count, stride_levels, proc);
    PARMCI_Fence(proc);
    PARMCI_Put(&value, flag, (int)sizeof(int), proc);
    PARMCI_Fence(proc);
    return 0;
}

/* Local strided pack / unpack. */
static void strided_copy(char *strided, int levels, const int *stride, const int *count, char *buf,
                         int pack)
{
    const char *fn = pack ? "armci_write_strided" : "armci_read_strided";
    if (levels < 0 || !count || (levels > 0 && !stride))
        rmca_error("%s: invalid stride descriptor (%d levels, count %p, stride %p)", fn, levels,
                   (const void *)count, (const void *)stride);
    for (int i = 0; i <= levels; i++)
        if (count[i] <= 0)
            return;
    /* any number of levels, as the remote strided calls (strided_by_chunks) */
    int *idx = calloc((size_t)levels + 1, sizeof(int));
    if (!idx)
        rmca_error("%s: out of memory (%d levels)", fn, levels);
    size_t chunk = (size_t)count[0];
    for (;;) {
        size_t off = 0;
        for (int l = 1; l <= levels; l++)
            off += (size_t)idx[l] * (size_t)stride[l - 1];
        if (pack)
            memcpy(buf, strided + off, chunk);
        else
            memcpy(strided + off, buf, chunk);
        buf += chunk;
        int l = 1;
        while (l <= levels && ++idx[l] == count[l])
            idx[l++] = 0;
        if (l > levels)
            break;
    }
    free(idx);
}

void armci_write_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf)
{
    strided_copy(ptr, stride_levels, stride_arr, count, buf, 1);
}

void armci_read_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf)
{
    strided_copy(ptr, stride_levels, stride_arr, count, buf, 0);
}

/* ------------------------------------------------------------------------- vector --- */

#define IOV_STACK 16
typedef struct iovbuf {
    rmc_iov_t *v;
    int n;
    rmc_iov_t stack[IOV_STACK];
} iovbuf_t;

/* ARMCI's giov array to RMC's, dropping empty descriptors. Returns the number kept. */
static int iov_conv(const char *fn, const armci_giov_t *iov, int len, iovbuf_t *b)
{
    if (len < 0 || (len > 0 && !iov))
        rmca_error("%s: invalid I/O vector (%p, %d descriptors)", fn, (const void *)iov, len);
    b->v = len <= IOV_STACK ? b->stack : malloc((size_t)len * sizeof(rmc_iov_t));
    if (!b->v)
        rmca_error("%s: out of memory", fn);
    int n = 0;
    for (int i = 0; i < len; i++) {
        if (iov[i].ptr_array_len < 0 || iov[i].bytes < 0)
            rmca_error("%s: descriptor %d has %d segments of %d bytes", fn, i, iov[i].ptr_array_len,
                       iov[i].bytes);
        if (iov[i].ptr_array_len == 0 || iov[i].bytes == 0)
            continue;
        if (!iov[i].src_ptr_array || !iov[i].dst_ptr_array)
            rmca_error("%s: descriptor %d has a NULL address array", fn, i);
        b->v[n].src = iov[i].src_ptr_array;
        b->v[n].dst = iov[i].dst_ptr_array;
        b->v[n].count = iov[i].ptr_array_len;
        b->v[n].bytes = (size_t)iov[i].bytes;
        n++;
    }
    b->n = n;
    return n;
}

static void iov_done(iovbuf_t *b)
{
    if (b->v != b->stack)
        free(b->v);
}

#define VEC_MSG(fn) fn "(%d descriptors, proc %d)"

int PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc)
{
    iovbuf_t b;
    if (iov_conv("ARMCI_PutV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_status_t st = rmc_put_vector(b.v, b.n, proc);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_PutV"), iov_len, proc);
    return 0;
}

int PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc)
{
    iovbuf_t b;
    if (iov_conv("ARMCI_GetV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_status_t st = rmc_get_vector(b.v, b.n, proc);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_GetV"), iov_len, proc);
    return 0;
}

int PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_AccV");
    iovbuf_t b;
    if (iov_conv("ARMCI_AccV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_status_t st = rmc_acc_vector(t, scale, b.v, b.n, proc);
    if (st == RMC_ERR_ALIGN)
        st = vector_aligned(OP_ACC, t, scale, b.v, b.n, proc);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_AccV"), iov_len, proc);
    return 0;
}

int PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl)
{
    iovbuf_t b;
    if (iov_conv("ARMCI_NbPutV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    rmc_status_t st = rmc_put_vector_nb(b.v, b.n, proc, hdl ? &r : NULL);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_NbPutV"), iov_len, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl)
{
    iovbuf_t b;
    if (iov_conv("ARMCI_NbGetV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    rmc_status_t st = rmc_get_vector_nb(b.v, b.n, proc, hdl ? &r : NULL);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_NbGetV"), iov_len, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

int PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *hdl)
{
    rmc_acc_type_t t = rmca_acc_type(datatype, "ARMCI_NbAccV");
    iovbuf_t b;
    if (iov_conv("ARMCI_NbAccV", iov, iov_len, &b) == 0)
        return iov_done(&b), 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    rmc_status_t st = rmc_acc_vector_nb(t, scale, b.v, b.n, proc, hdl ? &r : NULL);
    if (st == RMC_ERR_ALIGN)
        st = vector_aligned(OP_ACC, t, scale, b.v, b.n, proc);
    iov_done(&b);
    RMCA_CHECK(st, VEC_MSG("ARMCI_NbAccV"), iov_len, proc);
    nb_issued(hdl, r, proc);
    return 0;
}

/* ------------------------------------------------------------------------- values --- */

int PARMCI_PutValueInt(int src, void *dst, int proc)
{
    return PARMCI_Put(&src, dst, (int)sizeof(src), proc);
}
int PARMCI_PutValueLong(long src, void *dst, int proc)
{
    return PARMCI_Put(&src, dst, (int)sizeof(src), proc);
}
int PARMCI_PutValueFloat(float src, void *dst, int proc)
{
    return PARMCI_Put(&src, dst, (int)sizeof(src), proc);
}
int PARMCI_PutValueDouble(double src, void *dst, int proc)
{
    return PARMCI_Put(&src, dst, (int)sizeof(src), proc);
}

/* The source is an argument (gone on return), so the value is put before returning: the handle
 * has nothing left to complete (and is left as it is). */
#define NB_VALUE(Name, T)                                                                          \
    int PARMCI_NbPutValue##Name(T src, void *dst, int proc, armci_hdl_t *hdl)                      \
    {                                                                                              \
        (void)hdl;                                                                                 \
        return PARMCI_Put(&src, dst, (int)sizeof(src), proc);                                      \
    }
NB_VALUE(Int, int)
NB_VALUE(Long, long)
NB_VALUE(Float, float)
NB_VALUE(Double, double)

int PARMCI_GetValueInt(void *src, int proc)
{
    int v;
    PARMCI_Get(src, &v, (int)sizeof(v), proc);
    return v;
}
long PARMCI_GetValueLong(void *src, int proc)
{
    long v;
    PARMCI_Get(src, &v, (int)sizeof(v), proc);
    return v;
}
float PARMCI_GetValueFloat(void *src, int proc)
{
    float v;
    PARMCI_Get(src, &v, (int)sizeof(v), proc);
    return v;
}
double PARMCI_GetValueDouble(void *src, int proc)
{
    double v;
    PARMCI_Get(src, &v, (int)sizeof(v), proc);
    return v;
}

/* ----------------------------------------------------------------- completion --- */

/* A handle names its table entry (nb.c): -1, no entry. */
void ARMCI_INIT_HANDLE(armci_hdl_t *hdl)
{
    if (!hdl)
        return;
    hdl->target = -1;
    hdl->aggregate = 0;
}

/* Bit 0 of `aggregate` is the flag; the other bits are the entry's generation (nb.c). */
void ARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle)
{
    if (handle)
        handle->aggregate |= 1;
}

void ARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle)
{
    if (handle)
        handle->aggregate &= ~1;
}

int PARMCI_Wait(armci_hdl_t *hdl)
{
    return hdl ? rmca_nb_wait(hdl) : 0;
}

int PARMCI_Test(armci_hdl_t *hdl)
{
    return hdl ? rmca_nb_test(hdl) : 0;
}

int PARMCI_WaitProc(int proc)
{
    RMCA_SERIAL();
    nb_check("ARMCI_WaitProc", proc);
    rmca_nb_wait_proc(proc);
    if (rmca.impl_pending[proc]) {
        RMCA_CHECK(rmc_fence(proc), "ARMCI_WaitProc(%d)", proc);
        rmca.impl_pending[proc] = 0;
    }
    return 0;
}

int PARMCI_WaitAll(void)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_WaitAll");
    rmca_nb_wait_proc(-1);
    if (rmca.any_impl) {
        RMCA_CHECK(rmc_fence_all(), "ARMCI_WaitAll");
        clear_implicit();
    }
    return 0;
}

void PARMCI_Fence(int proc)
{
    RMCA_SERIAL();
    nb_check("ARMCI_Fence", proc);
    rmca_nb_wait_proc(proc);
    RMCA_CHECK(rmc_fence(proc), "ARMCI_Fence(%d)", proc);
    rmca.impl_pending[proc] = 0;
}

void PARMCI_AllFence(void)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_AllFence");
    rmca_nb_wait_proc(-1);
    RMCA_CHECK(rmc_fence_all(), "ARMCI_AllFence");
    clear_implicit();
}

void PARMCI_Barrier(void)
{
    RMCA_REQUIRE_INIT("ARMCI_Barrier");
    rmca_nb_wait_proc(-1);
    {
        /* cleared before the barrier's fence: an implicit operation another thread issues
         * meanwhile keeps its flag (or is covered by the fence) */
        RMCA_SERIAL();
        clear_implicit();
    }
    RMCA_CHECK(rmc_barrier(), "ARMCI_Barrier"); /* outside libarmci's lock: may wait for threads */
}

RMCA_ALIAS(Put);
RMCA_ALIAS(Get);
RMCA_ALIAS(Acc);
RMCA_ALIAS(NbPut);
RMCA_ALIAS(NbGet);
RMCA_ALIAS(NbAcc);
RMCA_ALIAS(PutS);
RMCA_ALIAS(GetS);
RMCA_ALIAS(AccS);
RMCA_ALIAS(NbPutS);
RMCA_ALIAS(NbGetS);
RMCA_ALIAS(NbAccS);
RMCA_ALIAS(Put_flag);
RMCA_ALIAS(PutS_flag);
RMCA_ALIAS(PutV);
RMCA_ALIAS(GetV);
RMCA_ALIAS(AccV);
RMCA_ALIAS(NbPutV);
RMCA_ALIAS(NbGetV);
RMCA_ALIAS(NbAccV);
RMCA_ALIAS(PutValueInt);
RMCA_ALIAS(PutValueLong);
RMCA_ALIAS(PutValueFloat);
RMCA_ALIAS(PutValueDouble);
RMCA_ALIAS(NbPutValueInt);
RMCA_ALIAS(NbPutValueLong);
RMCA_ALIAS(NbPutValueFloat);
RMCA_ALIAS(NbPutValueDouble);
RMCA_ALIAS(GetValueInt);
RMCA_ALIAS(GetValueLong);
RMCA_ALIAS(GetValueFloat);
RMCA_ALIAS(GetValueDouble);
RMCA_ALIAS(Wait);
RMCA_ALIAS(Test);
RMCA_ALIAS(WaitProc);
RMCA_ALIAS(WaitAll);
RMCA_ALIAS(Fence);
RMCA_ALIAS(AllFence);
RMCA_ALIAS(Barrier);
