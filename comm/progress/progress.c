/* The progress layer's life cycle (a layer of the core's registry): knobs, init / finalize of the
 * active-message engine, the progress thread and registration, and its polls. */
#define _GNU_SOURCE
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "am_impl.h"

rmc_progress_stats_t rmci_pstats;

int rmc_progress_thread_active(void)
{
    if (!RMCI.initialized || !am.up)
        return -1;
    return am.thread_on;
}

int rmci_progress_thread_everywhere(void)
{
    return am.up && am.thread_all;
}

/* Knobs, validated before the first collective so every rank agrees on a failure. Returns the
 * thread wish (0, 1, 2 = auto). */
static rmc_status_t read_knobs(int *want)
{
    *want = rmci_env_tri("RMC_PROGRESS_THREAD");
    long maxp = rmci_env_long("RMC_AM_MAX_PAYLOAD");
    long boff = rmci_env_long("RMC_PROGRESS_BACKOFF_US");
    long cache = rmci_env_long("RMC_REGION_CACHE");
    am.max_payload = maxp >= 256 && maxp <= (64L << 20) ? (size_t)maxp : 256;
    am.backoff_max_ns = boff * 1000;
    if (*want < 0)
        return rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_PROGRESS_THREAD=%s (1, 0 or auto)",
                         rmc_knob_value("RMC_PROGRESS_THREAD"));
    if (maxp < 256 || maxp > (64L << 20))
        return rmci_fail(RMC_ERR_ARG, "rmc_init",
                         "RMC_AM_MAX_PAYLOAD=%s: not an integer in [256, 64 MiB] (bytes)",
                         rmc_knob_value("RMC_AM_MAX_PAYLOAD"));
    if (boff < 1 || boff > 1000000)
        return rmci_fail(RMC_ERR_ARG, "rmc_init",
                         "RMC_PROGRESS_BACKOFF_US=%s: not an integer in [1, 10^6] (microseconds)",
                         rmc_knob_value("RMC_PROGRESS_BACKOFF_US"));
    if (cache < 1 || cache > (1L << 20))
        return rmci_fail(RMC_ERR_ARG, "rmc_init",
                         "RMC_REGION_CACHE=%s: not an integer in [1, 2^20]",
                         rmc_knob_value("RMC_REGION_CACHE"));
    return RMC_OK;
}

/* Releases everything init took (what was not taken is NULL / zero). Collective only through the
 * receive's cancellation, which is local. */
static void teardown(void)
{
    am_thread_stop();
    if (am.rreq != MPI_REQUEST_NULL) {
        (void)RMCI_MPI_ST(MPI_Cancel, (&am.rreq));
        (void)RMCI_MPI_ST(MPI_Wait, (&am.rreq, MPI_STATUS_IGNORE));
    }
    am_serve_deferred();
    am_srv_drain(&am.srv_main);
    am_srv_drain(&am.srv_thr);
    rmci_reg_shutdown();
    rmci_comm_free(&am.comm);
    free(am.rbuf);
    pthread_mutex_destroy(&am.hlock);
    pthread_mutex_destroy(&am.dlock);
    pthread_mutex_destroy(&am.plock);
    memset(&am, 0, sizeof(am));
    am.rreq = MPI_REQUEST_NULL;
    am.comm = MPI_COMM_NULL;
}

/* The engine: communicator, receive buffer, the first posted receive. Local after the dup. */
static rmc_status_t engine_setup(void)
{
    rmc_status_t st = rmci_comm_dup(RMCI.comm, &am.comm, "rmc_init");
    if (st != RMC_OK)
        return st;
    int *ub = NULL, flag = 0;
    st = RMCI_MPI_ST(MPI_Comm_get_attr, (am.comm, MPI_TAG_UB, &ub, &flag));
    am.tag_span = (flag && ub && *ub > 1000) ? *ub - AM_TAG_FIRST_REPLY : 30000;
    am.rbuf_size = (int)(sizeof(am_hdr_t) + am.max_payload);
    am.rbuf = rmci_malloc((size_t)am.rbuf_size);
    if (st == RMC_OK && !am.rbuf)
        st = rmci_fail(RMC_ERR_NOMEM, "rmc_init", "%d bytes of AM receive buffer", am.rbuf_size);
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Irecv, (am.rbuf, am.rbuf_size, MPI_BYTE, MPI_ANY_SOURCE, AM_TAG_REQ,
                                     am.comm, &am.rreq));
    return st;
}

static rmc_status_t progress_init(void *arg)
{
    (void)arg;
    memset(&am, 0, sizeof(am));
    memset(&rmci_pstats, 0, sizeof(rmci_pstats));
    pthread_mutex_init(&am.hlock, NULL);
    pthread_mutex_init(&am.dlock, NULL);
    pthread_mutex_init(&am.plock, NULL);
    am.rreq = MPI_REQUEST_NULL;
    am.comm = MPI_COMM_NULL;
    int want = 0, provided = MPI_THREAD_SINGLE;
    rmc_status_t st = read_knobs(&want);
    rmci_keep(&st, RMCI_MPI_ST(MPI_Query_thread, (&provided)));
    int multiple = provided == MPI_THREAD_MULTIPLE;
    if (st == RMC_OK && want == 1 && !multiple)
        st = rmci_fail(RMC_ERR_UNSUPPORTED, "rmc_init",
                       "RMC_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE");
    /* one agreement on the status and on the payload limit: a request's receive is posted for
     * this rank's limit, so a larger one from a peer would be truncated there. Every rank sees the
     * same minimum and maximum, so every rank fails alike when they differ. */
    long long lim[2] = {(long long)am.max_payload, -(long long)am.max_payload};
    st = rmci_agree_vals(RMCI.comm, st, lim, 2, "rmc_init");
    if (st == RMC_OK && lim[0] != -lim[1])
        st = rmci_fail(RMC_ERR_ARG, "rmc_init",
                       "RMC_AM_MAX_PAYLOAD is not the same on every rank (%lld to %lld bytes)",
                       lim[0], -lim[1]);
    int spin = 0, pu = -1;
    if (st == RMC_OK)
        pu = am_choose_pu(&spin, &st); /* collective, agreed */
    if (st == RMC_OK)
        st = engine_setup();
    /* auto: a thread only with a processing unit of its own. Sharing the rank's core, the thread
     * takes MPICH's global lock on every poll and measured 2x slower RMA for everyone
     * (docs/benchmarks.md). Every rank learns whether every rank runs one (AMO mode). */
    int on = st == RMC_OK && multiple && (want == 1 || (want == 2 && pu >= 0));
    long long v = on;
    st = rmci_agree_vals(RMCI.comm, st, &v, 1, "rmc_init");
    am.thread_all = (int)v;
    if (st == RMC_OK) {
        am.up = 1;
        st = rmci_reg_init();
    }
    if (st == RMC_OK && on)
        st = am_thread_start(pu, spin);
    st = rmci_agree(RMCI.comm, st, "rmc_init");
    if (st != RMC_OK)
        teardown();
    return st;
}

static void progress_finalize(void *arg)
{
    (void)arg;
    if (!am.up)
        return;
    /* 1. complete this rank's outstanding requests (non-blocking ones never waited included) */
    am_complete_all();
    /* 2. every rank is done sending: serve until all are */
    rmci_attentive_barrier(am.comm, "rmc_finalize");
    /* 3. stop the poller, release */
    teardown();
}

/* Cheap poll (every few comm calls): the requests that arrived, deferred ones. */
static void progress_poll(int full, void *arg)
{
    (void)arg;
    if (!am.up || am_is_thread)
        return;
    am_poll_main();
    if (full) /* the ops still waiting for their replies (an answered one leaves the list) */
        for (am_op_t *op = am.open, *next; op; op = next) {
            next = op->onext;
            am_op_progress(op);
        }
}

static const rmc_layer_t progress_layer = {
    .name = "progress",
    .init = progress_init,
    .finalize = progress_finalize,
    .poll = progress_poll,
    .unmapped = rmci_reg_unmapped,
};

/* Registered before main(): the first of comm's sub-layers (amo and strided come after it). */
__attribute__((constructor(201))) static void progress_register(void)
{
    rmc_layer_register(&progress_layer);
}
