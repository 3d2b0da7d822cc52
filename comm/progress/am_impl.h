/* Private state of the progress layer, shared by its files: the active-message engine (am.c), the
 * progress thread (thread.c), the layer's life cycle and polls (progress.c) and registration
 * (register.c). Only comm/progress includes it. */
#ifndef RMCI_AM_IMPL_H
#define RMCI_AM_IMPL_H

#include <pthread.h>
#include "progress_internal.h"

#define AM_TAG_REQ         1
#define AM_TAG_FIRST_REPLY 2
#define AM_INTERNAL_IDS    16 /* internal handler ids above RMC_AM_ID_MAX */
#define AM_ID_SHUTDOWN     (RMC_AM_ID_MAX + 1 + AM_INTERNAL_IDS) /* progress thread stop (self) */
#define AM_NIDS            (AM_ID_SHUTDOWN + 1)

/* Wire header of a request, and of a reply. */
typedef struct am_hdr {
    uint32_t id;
    int32_t rtag;
    uint32_t len;
    uint32_t reply_cap;
} am_hdr_t;

typedef struct am_rep {
    int32_t status;
    uint32_t len;
    uint64_t pad; /* a failure's reason (am_why_t) | (uint64_t)(uint32_t)its value << 32 */
} am_rep_t;

/* Why a request failed at the target: the origin words its message from it (op_deliver). */
typedef enum am_why {
    AM_WHY_HANDLER,   /* the handler returned the status (an error of its own) */
    AM_WHY_NONE,      /* no handler under the id */
    AM_WHY_BIG,       /* the handler's reply (value: its length) exceeds the reply capacity */
    AM_WHY_POSITIVE,  /* the handler returned a positive status (value) */
    AM_WHY_MALFORMED, /* the request's header does not match its size or the limits */
    AM_WHY_NOMEM      /* no memory for the reply at the target */
} am_why_t;

/* An outstanding request of this rank (origin side). One allocation: struct, send buffer, reply
 * buffer. */
typedef struct am_op {
    struct am_op *next, *prev;
    MPI_Request req[2]; /* 0: request send, 1: reply receive */
    MPI_Request greq;   /* generalized request (non-blocking form) */
    struct am_op *onext, *oprev; /* am.open while the reply has not arrived */
    int done, has_greq;
    int rank;       /* the target */
    int id;         /* the handler id */
    const char *fn; /* the public function for the messages of a failure (NULL: "active message") */
    int mpi_failed; /* MPI_Testall failed: the result is RMC_ERR_MPI and the op is never freed
                     * (its buffers may still be in use by MPI) */
    char *sbuf, *rbuf;
    size_t rcap;
    /* completion of the public non-blocking form */
    void *reply;
    size_t reply_cap;
    size_t *reply_len;
    /* completion of internal non-blocking forms */
    rmci_am_finish_t fin;
    void *fin_ptr;
    uint64_t fin_data;
} am_op_t;

/* Reply sends in flight of one serving context (thread or main). */
typedef struct am_srv {
    MPI_Request *reqs;
    void **bufs;
    int n, cap;
} am_srv_t;

typedef struct am_deferred {
    struct am_deferred *next;
    int src;
    int cnt;
    char buf[];
} am_deferred_t;

typedef struct am_handler {
    rmc_am_handler_t fn;
    void *arg;
    int layer; /* an internal id handed to a layer (rmc_am_register_layer): rmc_am_send takes it */
} am_handler_t;

typedef struct am_state {
    int up;
    MPI_Comm comm;
    int tag_span; /* reply tags are AM_TAG_FIRST_REPLY + [0, tag_span) */
    uint32_t seq;
    size_t max_payload;
    int rbuf_size;
    char *rbuf; /* posted request receive */
    MPI_Request rreq;
    int repost_failures; /* consecutive failed re-posts of the request receive */
    /* thread */
    int thread_on, thread_spin, thread_pu, thread_all;
    long backoff_max_ns;
    pthread_t thr;
    am_srv_t srv_main, srv_thr;
    /* the posted request receive (rbuf/rreq) is used by whoever holds plock: the thread, or the
     * main thread inside RMC calls (which then serves at once instead of waiting for the thread) */
    pthread_mutex_t plock;
    /* handlers */
    pthread_mutex_t hlock;
    am_handler_t handlers[AM_NIDS];
    /* deferred requests (thread -> main) */
    pthread_mutex_t dlock;
    am_deferred_t *dhead, *dtail;
    int ndeferred; /* atomic */
    /* origin side */
    am_op_t *ops;             /* outstanding (and non-blocking not yet waited) */
    am_op_t *open;            /* those of ops whose reply has not arrived (rmci_am_quiet) */
    unsigned long main_polls; /* main-thread polls (written by main only, read by the thread) */
} am_state_t;

extern am_state_t am;
extern __thread int am_is_thread;

/* am.c */
int am_poll_incoming(am_srv_t *s); /* serve arrived requests; -1: shutdown message */
void am_serve_deferred(void);
void am_main_incoming(void); /* main thread: serve unless the thread is at it */
void am_poll_main(void);     /* full poll of the main thread */
int am_op_progress(am_op_t *op);
void am_op_unlink(am_op_t *op);
void am_srv_reap(am_srv_t *s);
void am_srv_drain(am_srv_t *s);
void am_complete_all(void); /* finalize: this rank's outstanding requests */

/* thread.c */
int am_choose_pu(int *spin, rmc_status_t *st); /* collective */
rmc_status_t am_thread_start(int pu, int spin);
void am_thread_stop(void);

/* register.c */
rmc_status_t rmci_reg_init(void);
void rmci_reg_shutdown(void);
rmc_status_t rmci_reg_unmapped(int is_put, const void *remote, void *local, size_t bytes, int rank,
                               void *arg);

#endif
