/* The layer registry (include/rmc/layer.h): the only way the core reaches code built on it. */
#include "config.h"
#include <string.h>
#include "core.h"

#define RMCI_MAX_LAYERS 32

typedef struct layer_slot {
    const rmc_layer_t *d;
    int up;         /* init succeeded in this rmc_init cycle */
    int persistent; /* registered before rmc_init: survives rmc_finalize */
} layer_slot_t;

static layer_slot_t layers[RMCI_MAX_LAYERS];
static int nlayers;

/* Layers with a poll callback that are up, in registration order (rebuilt on every change). */
static const rmc_layer_t *pollers[RMCI_MAX_LAYERS];
static int npollers;

static void rebuild_pollers(void)
{
    npollers = 0;
    for (int i = 0; i < nlayers; i++)
        if (layers[i].up && layers[i].d->poll)
            pollers[npollers++] = layers[i].d;
}

static int find(const rmc_layer_t *d)
{
    for (int i = 0; i < nlayers; i++)
        if (layers[i].d == d)
            return i;
    return -1;
}

static void remove_at(int i)
{
    memmove(&layers[i], &layers[i + 1], (size_t)(nlayers - i - 1) * sizeof(layers[0]));
    nlayers--;
}

/* Collective init of slot i for fn (rmc_init, or rmc_layer_register after it); on failure the
 * layer's init has cleaned up after itself. */
static rmc_status_t init_one(int i, const char *fn)
{
    const rmc_layer_t *d = layers[i].d;
    unsigned long nerr = rmci_error_count();
    rmc_status_t st = d->init ? d->init(d->arg) : RMC_OK;
    if (st != RMC_OK) {
        /* the layer's own message when it recorded one during its init (an older one would name
         * an unrelated failure); its agreed failures ("failed on another rank") record none */
        if (rmci_error_count() != nerr)
            rmci_in(st, fn);
        else
            rmci_fail(st, fn, "layer '%s' failed to initialize: %s", d->name,
                      rmc_status_string(st));
    }
    /* init returns an agreed status (layer.h); check it: a layer up on some ranks only cannot be
     * finalized (that is collective), so it is dropped and the contract breach reported */
    rmc_status_t all = rmci_agree(rmci_info_.comm, st, fn);
    if (st == RMC_OK && all != RMC_OK)
        rmci_fail(RMC_ERR_INTERNAL, fn,
                  "layer '%s' initialized here but failed elsewhere: its init must agree", d->name);
    layers[i].up = all == RMC_OK;
    rebuild_pollers();
    return all;
}

rmc_status_t rmci_layers_init(void)
{
    for (int i = 0; i < nlayers; i++) {
        if (layers[i].up) /* registered (and initialized) by an earlier layer's init */
            continue;
        rmc_status_t st = init_one(i, "rmc_init");
        if (st != RMC_OK) {
            rmci_layers_finalize();
            return st;
        }
    }
    return RMC_OK;
}

void rmci_layers_finalize(void)
{
    for (int i = nlayers - 1; i >= 0; i--) {
        if (!layers[i].up)
            continue;
        /* it keeps polling while it finalizes (its waits must serve its peers) */
        if (layers[i].d->finalize)
            layers[i].d->finalize(layers[i].d->arg);
        layers[i].up = 0;
        rebuild_pollers();
    }
}

void rmci_layers_end(void)
{
    for (int i = nlayers - 1; i >= 0; i--)
        if (!layers[i].persistent)
            remove_at(i);
    rebuild_pollers();
}

rmc_status_t rmc_layer_register(const rmc_layer_t *d)
{
    RMCI_SERIAL();
    int init = rmci_info_.initialized;
    rmc_status_t st = RMC_OK;
    if (!d || !d->name)
        st = rmci_fail(RMC_ERR_ARG, __func__, "NULL layer or layer name");
    else if (find(d) >= 0)
        st = rmci_fail(RMC_ERR_STATE, __func__, "layer '%s' is already registered", d->name);
    else if (nlayers == RMCI_MAX_LAYERS)
        st = rmci_fail(RMC_ERR_TOO_BIG, __func__, "more than %d layers", RMCI_MAX_LAYERS);
    if (init)
        st = rmci_agree(rmci_info_.comm, st, __func__);
    if (st != RMC_OK)
        return st;
    int i = nlayers++;
    layers[i] = (layer_slot_t){.d = d, .up = 0, .persistent = !init};
    if (!init)
        return RMC_OK;
    st = init_one(i, __func__);
    if (st != RMC_OK)
        remove_at(i);
    return st;
}

rmc_status_t rmc_layer_unregister(const rmc_layer_t *d)
{
    RMCI_SERIAL();
    int i = d ? find(d) : -1;
    if (i < 0)
        return rmci_fail(RMC_ERR_NOT_FOUND, __func__, "layer %p is not registered", (void *)d);
    if (layers[i].up) {
        if (d->finalize)
            d->finalize(d->arg);
        layers[i].up = 0;
        rebuild_pollers();
    }
    remove_at(i);
    return RMC_OK;
}

rmc_status_t rmci_layers_region_created(struct rmc_region *r)
{
    rmc_status_t st = RMC_OK;
    int i = 0;
    for (; i < nlayers && st == RMC_OK; i++)
        if (layers[i].up && layers[i].d->region_created)
            st = layers[i].d->region_created(r, layers[i].d->arg);
    if (st != RMC_OK) /* the layers that learned the region forget it again */
        for (int k = i - 2; k >= 0; k--)
            if (layers[k].up && layers[k].d->region_freed)
                layers[k].d->region_freed(r, layers[k].d->arg);
    return st;
}

void rmci_layers_region_freed(struct rmc_region *r)
{
    for (int i = nlayers - 1; i >= 0; i--)
        if (layers[i].up && layers[i].d->region_freed)
            layers[i].d->region_freed(r, layers[i].d->arg);
}

rmc_status_t rmci_layers_unmapped(int is_put, const void *remote, void *local, size_t bytes,
                                  int rank)
{
    for (int i = 0; i < nlayers; i++)
        if (layers[i].up && layers[i].d->unmapped) {
            rmc_status_t st =
                layers[i].d->unmapped(is_put, remote, local, bytes, rank, layers[i].d->arg);
            if (st != RMC_ERR_NOT_REGION)
                return st;
        }
    return RMC_ERR_NOT_REGION;
}

/* ------------------------------------------------------------------------ polls --- */

__thread int rmci_poll_countdown_ __attribute__((tls_model("initial-exec"))) =
    RMCI_POLL_INTERVAL * RMCI_POLL_CALL;
/* Pollers at indices below this may run: while pollers[i] runs it is i, so the waits inside a
 * layer's poll keep the layers beneath it polling (an atomic or active message it waits for needs
 * this rank to serve its peers' messages meanwhile: without that, two ranks whose polls waited for
 * each other hung), and no poll is re-entered or runs inside a poll of a layer below it. */
static int poll_floor = RMCI_MAX_LAYERS;

/* Every up layer's poll that may run here (a handler never starts a poll of its own). */
static void poll_layers(int full)
{
    if (rmci_in_handler_) /* its countdown stays 0: no fast path skips the entry checks */
        return;
    rmci_poll_countdown_ = RMCI_POLL_INTERVAL * RMCI_POLL_CALL;
    int floor = poll_floor;
    for (int i = 0; i < npollers && i < floor; i++) {
        poll_floor = i;
        pollers[i]->poll(full, pollers[i]->arg);
    }
    poll_floor = floor;
}

void rmci_poll_now(void)
{
    poll_layers(0);
}

void rmci_poll_full(void)
{
    poll_layers(1);
}
