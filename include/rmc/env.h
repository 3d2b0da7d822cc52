/* RMC environment knobs: every RMC_* variable is in one registry (name, default, help). */
#ifndef RMC_ENV_H
#define RMC_ENV_H

#include <stddef.h>
#include <rmc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_knob {
    const char *name;   /* e.g. "RMC_NODE_SIZE" */
    const char *defval; /* default value as text */
    const char *help;   /* one-line description */
} rmc_knob_t;

/* Number of registered knobs and the i-th one (NULL when out of range). Local, no init needed. */
size_t rmc_knob_count(void);
const rmc_knob_t *rmc_knob_get(size_t i);

/* Current value of a registered knob: the environment's value if set, else the default. Returns NULL
 * for a name that is not registered. */
const char *rmc_knob_value(const char *name);

/* Adds a knob of a layer built on RMC to the registry (rmc_info lists it; rmc_knob_value reads it).
 * The descriptor must stay valid. Local, no init needed, not thread-safe: call it at start-up (e.g.
 * from a library constructor). Registering the same descriptor again is a no-op. Errors:
 * RMC_ERR_ARG (NULL descriptor or field, a name not starting with RMC_), RMC_ERR_STATE (another
 * knob has that name), RMC_ERR_TOO_BIG (more than 64 registered knobs). */
rmc_status_t rmc_knob_register(const rmc_knob_t *knob);

#ifdef __cplusplus
}
#endif
#endif
