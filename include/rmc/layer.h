/* RMC layer registry: how code built on comm hooks into its life cycle.
 *
 * comm's core knows the code above it (its own sub-layers strided, amo and progress; containers;
 * any library built on RMC) only through descriptors registered here. Core calls every registered
 * layer, in registration order (finalize in reverse), at these events:
 *   init            rmc_init (or registration, when RMC is already initialized)
 *   finalize        rmc_finalize (or rmc_layer_unregister)
 *   region_created  a region became usable on this rank (rmc_region_alloc, rmc_region_alloc_comm)
 *   region_freed    a region is being freed by rmc_region_free (not the regions rmc_finalize frees
 *                   after the layers' finalize: a layer releases its state of those in finalize)
 *   poll            RMC is called (every few calls) or waits (every round of a waiting loop)
 *   unmapped        an rmc_put / rmc_get names a remote address that lies in no region
 * Any number of layers may register; every callback is optional (NULL). RMC's own sub-layers
 * register before main() runs, so they come first: progress, amo, strided.
 */
#ifndef RMC_LAYER_H
#define RMC_LAYER_H

#include <stddef.h>
#include <rmc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_region *rmc_region_h;

typedef struct rmc_layer {
    const char *name; /* for messages; must not be NULL */

    /* Collective over RMC's communicator. Must return the same status on every rank (end with
     * rmc_agree) and, on failure, have released what it took; every rank's rmc_init (or
     * rmc_layer_register) then fails and the layers initialized before it are finalized. */
    rmc_status_t (*init)(void *arg);

    /* Collective. Releases what init took. Runs while every region is still alive (rmc_finalize
     * frees leftover regions afterwards) and MPI is usable. */
    void (*finalize)(void *arg);

    /* Runs on every member of a new region, after it is usable locally and before the allocation's
     * final agreement: when any member returns from the allocation, every member's layers know the
     * region. An error here fails the allocation on every member (nothing is created). */
    rmc_status_t (*region_created)(rmc_region_h region, void *arg);

    /* Runs on every member of a region being freed, after every member has entered the free (no
     * member issues operations on it any more) and before its memory and windows are released. */
    void (*region_freed)(rmc_region_h region, void *arg);

    /* Progress. full == 0: called from RMC calls every few calls (keep it cheap); full == 1:
     * called in every round of a waiting loop of RMC (collectives, blocking waits, rmc_progress):
     * serve everything that is pending. Never re-entered; runs on the thread inside RMC (with
     * rmc_thread_safe, whichever thread holds RMC's lock). It may communicate through RMC: while
     * it waits, the polls of the layers registered before it (comm's progress and amo layers come
     * first) keep running, so this rank goes on serving its peers' active messages; its own poll
     * and those of layers registered after it do not run until it returns. */
    void (*poll)(int full, void *arg);

    /* An rmc_put (is_put = 1: local -> remote) or rmc_get (is_put = 0: remote -> local) of `bytes`
     * at `remote` on `rank`, an address in no region of that rank. Return RMC_ERR_NOT_REGION to
     * decline (the next layer is asked; when every layer declines, the call fails with it); any
     * other status is the call's: the transfer must then be complete at the target. */
    rmc_status_t (*unmapped)(int is_put, const void *remote, void *local, size_t bytes, int rank,
                             void *arg);

    void *arg; /* passed to every callback */
} rmc_layer_t;

/* Registers `layer` (the descriptor must stay valid while registered). Before rmc_init: local,
 * the layer stays registered across rmc_init / rmc_finalize cycles. While RMC is initialized:
 * collective, `layer->init` runs at once on every rank (its status agreed), and the registration
 * ends at rmc_finalize (or rmc_layer_unregister). Errors: RMC_ERR_ARG (NULL layer or name),
 * RMC_ERR_STATE (already registered; agreed), RMC_ERR_TOO_BIG (more than 32 layers), or what
 * `init` returned (the layer is then not registered). */
rmc_status_t rmc_layer_register(const rmc_layer_t *layer);

/* Collective while RMC is initialized (runs `layer->finalize`), local otherwise. Errors:
 * RMC_ERR_NOT_FOUND (not registered). */
rmc_status_t rmc_layer_unregister(const rmc_layer_t *layer);

#ifdef __cplusplus
}
#endif
#endif
