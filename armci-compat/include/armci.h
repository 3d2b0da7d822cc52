/* ARMCI API on RMC (libarmci from RMC's armci-compat).
 *
 * Declares the same names, types and constants as ARMCI-MPI 0.3's armci.h, so programs written for
 * ARMCI-MPI (and Global Arrays built --with-armci=PREFIX) compile unchanged against it. Every
 * operation is a thin mapping onto RMC's comm layer (regions, contiguous / strided / vector RMA,
 * accumulate, atomics, mutexes, fences); see docs/armci.md for the mapping and the semantics.
 *
 * Semantics (as ARMCI specifies them):
 *  - Ranks given to one-sided operations are absolute ranks (ARMCI_GROUP_WORLD, the communicator
 *    given at initialization). Ranks inside group calls are ranks of that group.
 *  - Location consistency: an origin's operations to one location are performed in issue order for
 *    that origin (a get after a put or accumulate sees them, without a fence).
 *  - Blocking put / accumulate return when the source buffer may be reused; ARMCI_Fence(proc)
 *    completes them at proc (then every rank sees them); ARMCI_AllFence does so for all targets;
 *    ARMCI_Barrier completes every rank's operations and synchronizes.
 *  - Blocking get returns when the data has arrived.
 *  - Non-blocking operations complete locally in ARMCI_Wait / ARMCI_Test (when it returns 0) /
 *    ARMCI_WaitProc / ARMCI_WaitAll (NULL handle: "implicit" handle, completed by WaitProc,
 *    WaitAll, Fence, AllFence, Barrier).
 *  - Bad input (an address outside every allocation, a bad stride descriptor, an unknown type ...)
 *    is reported as ARMCI-MPI does: "[rank] ARMCI Error: <message>" on stderr, then MPI_Abort.
 */
#ifndef _ARMCI_H_
#define _ARMCI_H_

#include <mpi.h>

/* API level of ARMCI-MPI this header is compatible with (ARMCI-MPI 0.3 defines it as 3). */
#define ARMCI_MPI 3
/* Identifies this implementation: ARMCI on RMC. */
#define ARMCI_RMC 1

#ifdef __cplusplus
extern "C" {
#endif

/* Accumulate element types: int, long, float, double, complex float, complex double. */
enum ARMCI_Acc_e {
    ARMCI_ACC_INT,
    ARMCI_ACC_LNG,
    ARMCI_ACC_FLT,
    ARMCI_ACC_DBL,
    ARMCI_ACC_CPL,
    ARMCI_ACC_DCP
};

typedef long armci_size_t;
#define ARMCII_MPI_SIZE_T MPI_LONG

/* ------------------------------------------------------------------- lifecycle --- */

/* Collective over MPI_COMM_WORLD (ARMCI_Init_thread_comm, ARMCI_Init_mpi_comm: over `comm`, which
 * becomes ARMCI's world: absolute ranks, groups, ARMCI_Malloc and armci_msg_* are relative to it;
 * processes outside it do not call and do not take part). MPI must be initialized. ARMCI_Init and
 * ARMCI_Init_mpi_comm run at the thread level MPI provides. Calls nest: only the last ARMCI_Finalize
 * finalizes. Return 0. */
int   ARMCI_Init(void);
int   ARMCI_Init_args(int *argc, char ***argv);
int   ARMCI_Init_thread(int armci_requested);
int   ARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
int   ARMCI_Init_mpi_comm(MPI_Comm comm);
int   ARMCI_Initialized(void);

/* Collective. Completes every operation, frees what is still allocated; MPI stays initialized. */
int   ARMCI_Finalize(void);
void  ARMCI_Cleanup(void);

/* Prints "[rank] ARMCI Error: msg" on stderr and aborts every process (MPI_Abort with `code`). */
void  ARMCI_Error(const char *msg, int code);

/* ----------------------------------------------------------------------- memory --- */

/* Collective. Allocates `size` bytes on the calling rank (sizes may differ, 0 gives NULL) and fills
 * base_ptrs[0..nproc-1] with every rank's address. Memory is zero-filled. Returns 0. */
int   ARMCI_Malloc(void **base_ptrs, armci_size_t size);
/* Collective. Frees the allocation whose local address is ptr (NULL on ranks that gave size 0). */
int   ARMCI_Free(void *ptr);

/* Local memory suitable as the local side of any operation. */
void *ARMCI_Malloc_local(armci_size_t size);
int   ARMCI_Free_local(void *ptr);

/* --------------------------------------------------------------- synchronization --- */

void  ARMCI_Barrier(void);
void  ARMCI_Fence(int proc);
void  ARMCI_AllFence(void);

/* Bracket direct load/store access to the calling rank's own part of an allocation. */
void  ARMCI_Access_begin(void *ptr);
void  ARMCI_Access_end(void *ptr);

void  ARMCI_Copy(void *src, void *dst, int size);

/* ------------------------------------------------------------- contiguous RMA --- */

int   ARMCI_Get(void *src, void *dst, int size, int target);
int   ARMCI_Put(void *src, void *dst, int size, int target);
/* dst[i] += (*scale) * src[i] for the type `datatype` (enum ARMCI_Acc_e), atomically per element
 * with respect to other accumulates. */
int   ARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc);

/* ----------------------------------------------------------------------- strided --- */
/* count[0] = bytes of a contiguous chunk, count[1..levels] = blocks per level; strides in bytes. */

int   ARMCI_PutS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                 void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc);
int   ARMCI_GetS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                 void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc);
int   ARMCI_AccS(int datatype, void *scale,
                 void *src_ptr, int src_stride_ar[/*stride_levels*/],
                 void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                 int count[/*stride_levels+1*/], int stride_levels, int proc);

/* Put, then (after the data is complete at proc) store `value` into the int at `flag` on proc. */
int   ARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc);
int   ARMCI_PutS_flag(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                      void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                      int count[/*stride_levels+1*/], int stride_levels,
                      int *flag, int value, int proc);

/* ----------------------------------------------------------------- non-blocking --- */

/* ARMCI-MPI's layout; the contents are libarmci's: the first operation on a handle writes into it
 * the table entry holding its requests (`target`: the entry's index, -1 after ARMCI_INIT_HANDLE;
 * `aggregate`: the entry's generation, bit 0 the flag ARMCI_SET_AGGREGATE_HANDLE sets). A copy of a
 * handle (or the handle moved in memory) waits for the same operations; once they are complete
 * every copy is complete. A handle need not go through ARMCI_INIT_HANDLE; ARMCI_INIT_HANDLE on a
 * handle with outstanding operations forgets them (fences, ARMCI_WaitProc / ARMCI_WaitAll and
 * barriers still complete them). */
typedef struct armci_hdl_s {
    int target;
    int aggregate;
} armci_hdl_t;

void  ARMCI_INIT_HANDLE(armci_hdl_t *hdl);
void  ARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle);
void  ARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle);

int   ARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int   ARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int   ARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                  armci_hdl_t *hdl);

/* Wait: completes every operation issued on the handle. Test: 0 when they are complete (the handle
 * is then released), nonzero when some are still in flight. WaitProc / WaitAll: every operation to
 * proc / to anyone, implicit-handle ones included. Return 0. */
int   ARMCI_Wait(armci_hdl_t *hdl);
int   ARMCI_Test(armci_hdl_t *hdl);
int   ARMCI_WaitProc(int proc);
int   ARMCI_WaitAll(void);

int   ARMCI_NbPutS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                   void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                   int count[/*stride_levels+1*/], int stride_levels, int proc, armci_hdl_t *hdl);
int   ARMCI_NbGetS(void *src_ptr, int src_stride_ar[/*stride_levels*/],
                   void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                   int count[/*stride_levels+1*/], int stride_levels, int proc, armci_hdl_t *hdl);
int   ARMCI_NbAccS(int datatype, void *scale,
                   void *src_ptr, int src_stride_ar[/*stride_levels*/],
                   void *dst_ptr, int dst_stride_ar[/*stride_levels*/],
                   int count[/*stride_levels+1*/], int stride_levels, int proc, armci_hdl_t *hdl);

/* Pack / unpack a strided patch of local memory to / from a contiguous buffer. */
void armci_write_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf);
void armci_read_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf);

/* ------------------------------------------------------------------------ vector --- */

/* Generalized I/O vector: ptr_array_len segments of `bytes` bytes, src_ptr_array[i] to
 * dst_ptr_array[i]. */
typedef struct {
    void **src_ptr_array;
    void **dst_ptr_array;
    int    bytes;
    int    ptr_array_len;
} armci_giov_t;

int ARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc);

int ARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int ARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int ARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                 armci_hdl_t *handle);

/* ------------------------------------------------------------------------ values --- */

int ARMCI_PutValueInt(int src, void *dst, int proc);
int ARMCI_PutValueLong(long src, void *dst, int proc);
int ARMCI_PutValueFloat(float src, void *dst, int proc);
int ARMCI_PutValueDouble(double src, void *dst, int proc);

int ARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueDouble(double src, void *dst, int proc, armci_hdl_t *hdl);

int    ARMCI_GetValueInt(void *src, int proc);
long   ARMCI_GetValueLong(void *src, int proc);
float  ARMCI_GetValueFloat(void *src, int proc);
double ARMCI_GetValueDouble(void *src, int proc);

/* ----------------------------------------------------------------------- mutexes --- */

/* Collective: every rank hosts `count` mutexes (one set at a time). */
int   ARMCI_Create_mutexes(int count);
int   ARMCI_Destroy_mutexes(void);
void  ARMCI_Lock(int mutex, int proc);
void  ARMCI_Unlock(int mutex, int proc);

/* -------------------------------------------------------------- read-modify-write --- */

enum ARMCI_Rmw_e {
    ARMCI_FETCH_AND_ADD,      /* int:  *ploc = *prem; *prem += value */
    ARMCI_FETCH_AND_ADD_LONG, /* long: *ploc = *prem; *prem += value */
    ARMCI_SWAP,               /* int:  exchange *ploc and *prem */
    ARMCI_SWAP_LONG           /* long: exchange *ploc and *prem */
};

int ARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

/* ------------------------------------------------------------------------ groups --- */

typedef struct {
    MPI_Comm  comm;                /* the group's communicator (MPI_COMM_NULL on non-members) */
    MPI_Comm  noncoll_pgroup_comm; /* here: the members in the caller's SMP domain (SCOPE_NODE) */
    int      *grp_to_abs;          /* [size] absolute rank of each group rank */
    int      *abs_to_grp;          /* [world size] group rank of each absolute rank, -1 if none */
    int       rank;                /* calling rank's group rank (-1 on non-members) */
    int       size;                /* number of members (0 on non-members) */
} ARMCI_Group;

/* Collective over the default group (create) / the parent group (create_child); pid_list holds
 * ranks of that parent group. */
void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out);
void ARMCI_Group_create_child(int grp_size, int *pid_list, ARMCI_Group *group_out,
                              ARMCI_Group *group_parent);
void ARMCI_Group_free(ARMCI_Group *group);

int  ARMCI_Group_rank(ARMCI_Group *group, int *rank);
void ARMCI_Group_size(ARMCI_Group *group, int *size);

void ARMCI_Group_set_default(ARMCI_Group *group);
void ARMCI_Group_get_default(ARMCI_Group *group_out);
void ARMCI_Group_get_world(ARMCI_Group *group_out);

int ARMCI_Absolute_id(ARMCI_Group *group, int group_rank);

/* Collective over `group`; ptr_arr[0..group size-1] is indexed by group rank. */
int ARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group);
int ARMCI_Free_group(void *ptr, ARMCI_Group *group);

/* ------------------------------------------------------------------ message API --- */

#ifdef __cplusplus
}
#endif

#include <message.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- topology --- */
/* The SMP domain of a rank is its (possibly emulated, RMC_NODE_SIZE) node. A negative domain id is
 * the caller's own domain and a negative process id the caller (as GA's ARMCI); ids past the end
 * are errors (abort with a message). */

enum armci_domain_e { ARMCI_DOMAIN_SMP };

typedef int armci_domain_t;

int armci_domain_nprocs(armci_domain_t domain, int id);
int armci_domain_id(armci_domain_t domain, int glob_proc_id);
int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id);
int armci_domain_my_id(armci_domain_t domain);
int armci_domain_count(armci_domain_t domain);
int armci_domain_same_id(armci_domain_t domain, int proc);

int ARMCI_Same_node(int proc);

/* ------------------------------------------------------------------ odds and ends --- */

int  ARMCI_Uses_shm(void);
void ARMCI_Set_shm_limit(unsigned long shmemlimit);
int  ARMCI_Uses_shm_grp(ARMCI_Group *group);

/* --------------------------------------------------- PARMCI: profiling interface --- */
/* Every ARMCI_X below is a weak alias of PARMCI_X, so a profiling library can define ARMCI_X and
 * call PARMCI_X. */

int     PARMCI_Init(void);
int     PARMCI_Init_args(int *argc, char ***argv);
int     PARMCI_Init_thread(int armci_requested);
int     PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
int     PARMCI_Init_mpi_comm(MPI_Comm comm);
int     PARMCI_Initialized(void);
int     PARMCI_Finalize(void);

int     PARMCI_Malloc(void **base_ptrs, armci_size_t size);
int     PARMCI_Free(void *ptr);
void   *PARMCI_Malloc_local(armci_size_t size);
int     PARMCI_Free_local(void *ptr);

void    PARMCI_Barrier(void);
void    PARMCI_Fence(int proc);
void    PARMCI_AllFence(void);
void    PARMCI_Access_begin(void *ptr);
void    PARMCI_Access_end(void *ptr);

int     PARMCI_Get(void *src, void *dst, int size, int target);
int     PARMCI_Put(void *src, void *dst, int size, int target);
int     PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc);

int     PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                    int count[], int stride_levels, int proc);
int     PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                    int count[], int stride_levels, int proc);
int     PARMCI_AccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[],
                    void *dst_ptr, int dst_stride_ar[], int count[], int stride_levels, int proc);
int     PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc);
int     PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                         int count[], int stride_levels, int *flag, int value, int proc);

int     PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int     PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int     PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc);

int     PARMCI_Wait(armci_hdl_t *hdl);
int     PARMCI_Test(armci_hdl_t *hdl);
int     PARMCI_WaitProc(int proc);
int     PARMCI_WaitAll(void);

int     PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int     PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int     PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                     armci_hdl_t *hdl);
int     PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                      int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int     PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                      int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int     PARMCI_NbAccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[],
                      void *dst_ptr, int dst_stride_ar[], int count[], int stride_levels, int proc,
                      armci_hdl_t *hdl);
int     PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int     PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int     PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                      armci_hdl_t *handle);

int     PARMCI_PutValueInt(int src, void *dst, int proc);
int     PARMCI_PutValueLong(long src, void *dst, int proc);
int     PARMCI_PutValueFloat(float src, void *dst, int proc);
int     PARMCI_PutValueDouble(double src, void *dst, int proc);
int     PARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int     PARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int     PARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int     PARMCI_NbPutValueDouble(double src, void *dst, int proc, armci_hdl_t *hdl);

int     PARMCI_GetValueInt(void *src, int proc);
long    PARMCI_GetValueLong(void *src, int proc);
float   PARMCI_GetValueFloat(void *src, int proc);
double  PARMCI_GetValueDouble(void *src, int proc);

int     PARMCI_Create_mutexes(int count);
int     PARMCI_Destroy_mutexes(void);
void    PARMCI_Lock(int mutex, int proc);
void    PARMCI_Unlock(int mutex, int proc);
int     PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

void    parmci_msg_barrier(void);
void    parmci_msg_group_barrier(ARMCI_Group *group);

/* Memory-device variants (SICM in ARMCI-MPI): the device name is ignored here. */
int ARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device);
int ARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                              const char *device);
int ARMCI_Free_memdev(void *ptr);

int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device);
int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                               const char *device);
int PARMCI_Free_memdev(void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* _ARMCI_H_ */
