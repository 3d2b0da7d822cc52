/* RMC status codes: 0 is success, every error is negative. */
#ifndef RMC_STATUS_H
#define RMC_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rmc_status {
    RMC_OK = 0,
    RMC_ERR_NOT_INIT = -1,      /* called before rmc_init or after rmc_finalize */
    RMC_ERR_ALREADY_INIT = -2,  /* rmc_init called twice */
    RMC_ERR_ARG = -3,           /* an argument is invalid (NULL, negative, bad flag) */
    RMC_ERR_RANK = -4,          /* rank outside [0, nranks) */
    RMC_ERR_NOT_REGION = -5,    /* remote address lies in no live region of that rank */
    RMC_ERR_BOUNDS = -6,        /* range starts in a region but crosses its end */
    RMC_ERR_HANDLE = -7,        /* unknown, freed or foreign handle (region, request, mutex) */
    RMC_ERR_ALIGN = -8,         /* address or size misaligned for the element type */
    RMC_ERR_STRIDE = -9,        /* bad strided / vector descriptor */
    RMC_ERR_TYPE = -10,         /* unknown datatype or operation */
    RMC_ERR_NOMEM = -11,        /* out of memory */
    RMC_ERR_MPI = -12,          /* an MPI call failed */
    RMC_ERR_STATE = -13,        /* operation not valid now (e.g. unlock of a mutex not held) */
    RMC_ERR_NOT_FOUND = -14,    /* lookup failed (handler id, registration) */
    RMC_ERR_TOO_BIG = -15,      /* payload or count beyond a limit */
    RMC_ERR_UNSUPPORTED = -16,  /* feature not available in this build / mode */
    RMC_ERR_INTERNAL = -17      /* bug: please report */
} rmc_status_t;

/* Human-readable, static string for a status code; never NULL. */
const char *rmc_status_string(rmc_status_t status);

#ifdef __cplusplus
}
#endif
#endif
