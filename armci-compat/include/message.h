/* ARMCI message API (armci_msg_*) on RMC: MPI collectives and point-to-point messages on ARMCI's
 * world communicator, with the names, types and constants of ARMCI-MPI 0.3's message.h.
 *
 * Scopes: SCOPE_ALL   every process;
 *         SCOPE_NODE  the processes of the caller's SMP domain (its, possibly emulated, node);
 *         SCOPE_MASTERS the same as SCOPE_ALL (as in ARMCI-MPI: every process calls).
 * Reductions (gop) take the operations "+", "*", "max", "min", "absmax", "absmin" (every type),
 * bitwise "or" / "bor" / "|" and "band" / "&" (integer types) and logical "land" / "&&" and
 * "lor" / "||" (every type: 1 or 0, floating types included); names match exactly. absmax / absmin
 * yield absolute values. The result replaces x on
 * every participating process. An unknown operation or type is an ARMCI error (message, abort).
 * Roots of broadcasts are absolute ranks (also in the group variants, as in ARMCI-MPI).
 * The group variants with a scope (armci_msg_group_bcast_scope, armci_msg_group_gop_scope) take
 * SCOPE_NODE as the group's members in the caller's SMP domain (the root of a broadcast must be
 * one of them).
 */
#ifndef HAVE_ARMCI_MSG_H
#define HAVE_ARMCI_MSG_H

#include <armci.h>

#ifdef __cplusplus
extern "C" {
#endif

enum armci_scope_e { SCOPE_ALL, SCOPE_NODE, SCOPE_MASTERS };

enum armci_type_e { ARMCI_INT, ARMCI_LONG, ARMCI_LONG_LONG, ARMCI_FLOAT, ARMCI_DOUBLE };

/* ----------------------------------------------------------------------- utility --- */

int  armci_msg_me(void);
int  armci_msg_nproc(void);

void armci_msg_abort(int code);
double armci_timer(void);

/* --------------------------------------------------------------------- send/recv --- */
/* Blocking messages of `len` bytes on ARMCI's world communicator. rcv: *msglen (may be NULL)
 * receives the size; rcvany returns the sender. */

void armci_msg_snd(int tag, void *buffer, int len, int to);
void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from);
int  armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen);

/* ------------------------------------------------------------------ collectives --- */

void armci_msg_barrier(void);
void armci_msg_group_barrier(ARMCI_Group *group);
/* Binary tree over the processes of `scope` rooted at its first process: -1 where there is none. */
void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right);

void armci_msg_bcast(void *buffer, int len, int root);
void armci_msg_bcast_scope(int scope, void *buffer, int len, int root);
void armci_msg_brdcst(void *buffer, int len, int root);
void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root, ARMCI_Group *group);

/* Reduction of x[0..n-1] of `type` (enum armci_type_e); the result is delivered everywhere. */
void armci_msg_reduce(void *x, int n, char *op, int type);
void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type);

/* Select: among the processes with contribute != 0, the one whose first element of `type` in x is
 * the largest ("max") / smallest ("min") broadcasts its n bytes of x to every process. */
void armci_msg_sel(void *x, int n, char *op, int type, int contribute);
void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type, int contribute);

/* ptr_ar[armci_msg_me()] holds the caller's address; on return ptr_ar[0..n-1] holds everyone's. */
void armci_exchange_address(void *ptr_ar[], int n);

/* Node ("cluster") scope: among the processes of the caller's SMP domain, root = its first one. */
void armci_msg_clus_brdcst(void *buf, int len);
void armci_msg_clus_igop(int *x, int n, char *op);
void armci_msg_clus_fgop(float *x, int n, char *op);
void armci_msg_clus_lgop(long *x, int n, char *op);
void armci_msg_clus_llgop(long long *x, int n, char *op);
void armci_msg_clus_dgop(double *x, int n, char *op);

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group);
/* Declared for compatibility; not provided (as in ARMCI-MPI). */
void armci_grp_clus_brdcst(void *buf, int len, int grp_master, int grp_clus_nproc,
                           ARMCI_Group *mastergroup);

/* ----------------------------------------------------------- global operations --- */

void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type);
void armci_msg_igop(int *x, int n, char *op);
void armci_msg_lgop(long *x, int n, char *op);
void armci_msg_llgop(long long *x, int n, char *op);
void armci_msg_fgop(float *x, int n, char *op);
void armci_msg_dgop(double *x, int n, char *op);

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type, ARMCI_Group *group);
void armci_msg_group_igop(int *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_lgop(long *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_llgop(long long *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_fgop(float *x, int n, char *op, ARMCI_Group *group);
void armci_msg_group_dgop(double *x, int n, char *op, ARMCI_Group *group);

#ifdef __cplusplus
}
#endif
#endif /* HAVE_ARMCI_MSG_H */
