/* ARMCI extensions (ARMCIX_*) on RMC, with the names and types of ARMCI-MPI 0.3's armcix.h. */
#ifndef _ARMCIX_H_
#define _ARMCIX_H_

#include <stdint.h>
#include <armci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ groups --- */

/* Collective over `parent`: MPI_Comm_split / MPI_Comm_dup semantics. Return 0. */
int ARMCIX_Group_split(ARMCI_Group *parent, int color, int key, ARMCI_Group *new_group);
int ARMCIX_Group_dup(ARMCI_Group *parent, ARMCI_Group *new_group);

/* ---------------------------------------------------------------- mutex handles --- */
/* Independent batches of mutexes (so libraries can have their own). The structure is ARMCI-MPI's;
 * on RMC only my_count, max_count and grp are meaningful (windows and bases are NULL). The group
 * must contain every process of ARMCI's world group. */

struct armcix_mutex_hdl_s {
    int         my_count;
    int         max_count;
    ARMCI_Group grp;
    MPI_Win    *windows;
    uint8_t   **bases;
};

typedef struct armcix_mutex_hdl_s *armcix_mutex_hdl_t;

armcix_mutex_hdl_t ARMCIX_Create_mutexes_hdl(int count, ARMCI_Group *pgroup);
int  ARMCIX_Destroy_mutexes_hdl(armcix_mutex_hdl_t hdl);
/* In Lock / Trylock / Unlock, `proc` is an absolute rank (ARMCI_GROUP_WORLD, as in ARMCI-MPI), not
 * a rank of the handle's group; a process outside the group is an ARMCI error. */
void ARMCIX_Lock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);
/* 0 when the mutex was acquired, nonzero when it is held (by another process or thread, or by the
 * calling thread). */
int  ARMCIX_Trylock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);
void ARMCIX_Unlock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc);

/* Serves incoming requests (RMC's progress engine). */
void ARMCIX_Progress(void);

#ifdef __cplusplus
}
#endif
#endif /* _ARMCIX_H_ */
