/* RMC status codes: 0 is success, every error is negative. One enum for the whole library
 * (comm, containers, compat layers); rmc_status_string gives its text and rmc_last_error the
 * details of the most recent failure (which call, which argument or MPI call, why). */
#ifndef RMC_STATUS_H
#define RMC_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, text): the one table of status codes (rmc_status_string reads it too). */
#define RMC_STATUS_TABLE(X)                                                                        \
    X(RMC_OK, 0, "success")                                                                        \
    X(RMC_ERR_NOT_INIT, -1,                                                                        \
      "RMC is not initialized (call rmc_init first, not after rmc_finalize)")                      \
    X(RMC_ERR_ALREADY_INIT, -2, "RMC is already initialized")                                      \
    X(RMC_ERR_ARG, -3, "invalid argument")                                                         \
    X(RMC_ERR_RANK, -4, "rank out of range")                                                       \
    X(RMC_ERR_NOT_REGION, -5, "address is not inside a live region of that rank")                  \
    X(RMC_ERR_BOUNDS, -6, "range crosses the end of its region")                                   \
    X(RMC_ERR_HANDLE, -7, "unknown, freed or invalid handle")                                      \
    X(RMC_ERR_ALIGN, -8, "address or size misaligned for the element type")                        \
    X(RMC_ERR_STRIDE, -9, "invalid strided or vector descriptor")                                  \
    X(RMC_ERR_TYPE, -10, "unknown datatype or operation")                                          \
    X(RMC_ERR_NOMEM, -11, "out of memory")                                                         \
    X(RMC_ERR_MPI, -12, "an MPI call failed (rmc_last_error names it)")                            \
    X(RMC_ERR_STATE, -13, "operation not valid in the current state")                              \
    X(RMC_ERR_NOT_FOUND, -14, "not found")                                                         \
    X(RMC_ERR_TOO_BIG, -15, "size or count beyond a limit")                                        \
    X(RMC_ERR_UNSUPPORTED, -16, "not supported in this build or mode")                             \
    X(RMC_ERR_INTERNAL, -17, "internal error")                                                     \
    X(RMC_ERR_FULL, -18, "container is full")                                                      \
    X(RMC_ERR_EMPTY, -19, "container is empty")                                                    \
    X(RMC_ERR_RETRY, -20, "not possible now: retry (e.g. a concurrent update won)")              \
    X(RMC_ERR_EXISTS, -21, "already present (e.g. a key another insert created first)")          \
    X(RMC_ERR_FORMAT, -22, "malformed input (a file, a matrix breaking its format's rules)")      \
    X(RMC_ERR_IO, -23, "a file could not be opened, read or written")

#define RMC_STATUS_ENUM_(name, value, text) name = value,
typedef enum rmc_status { RMC_STATUS_TABLE(RMC_STATUS_ENUM_) } rmc_status_t;
#undef RMC_STATUS_ENUM_

/* Human-readable, static string for a status code; never NULL. Local, no init needed. */
const char *rmc_status_string(rmc_status_t status);

/* Details of the most recent failure reported on the calling thread: the RMC function, the
 * argument or MPI call at fault and why (for RMC_ERR_MPI: the MPI function and the text of
 * MPI_Error_string), e.g. "rmc_put: MPI_Win_flush failed: Other MPI error". "" when nothing failed
 * on this thread since it started or since rmc_last_error_clear. The string is valid until the
 * next failure or clear on this thread. With RMC_VERBOSE=1 every such message is also printed on
 * stderr as "rmc[RANK]: MESSAGE". Failures that no call returns (an asynchronous failure of the
 * progress engine) are always printed on stderr. Local, no init needed. */
const char *rmc_last_error(void);
void rmc_last_error_clear(void);

/* For libraries built on RMC (its containers too): records a failure in the same channel,
 * "<where>: <formatted message>" (printed with RMC_VERBOSE=1), and returns st. With st RMC_OK
 * nothing is recorded (it is no failure). Local. */
#if defined(__GNUC__)
#define RMC_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define RMC_PRINTF_(f, a)
#endif
rmc_status_t rmc_error_set(rmc_status_t st, const char *where, const char *fmt, ...) RMC_PRINTF_(3, 4);
rmc_status_t rmc_error_vset(rmc_status_t st, const char *where, const char *fmt, va_list ap);
/* Prefixes the recorded message with "<where>: " unless it starts with it (a failure of a nested
 * call reported by an outer function); returns st. With st RMC_OK it changes nothing. */
rmc_status_t rmc_error_in(rmc_status_t st, const char *where);

/* MPI objects RMC holds right now (local, no init needed): communicators, windows, groups,
 * info objects and datatypes it created and has not freed. All zero after rmc_finalize and after a
 * failed rmc_init; a failed collective allocation leaves them as they were: a leak check. */
typedef struct rmc_resources {
    long comms, wins, groups, infos, types;
} rmc_resources_t;
void rmc_resources(rmc_resources_t *r);

#ifdef __cplusplus
}
#endif
#endif
