/* The RMC_* knob registry: every environment variable RMC reads is listed here. */
#include <stdlib.h>
#include <string.h>
#include "rmci.h"

static const rmc_knob_t knobs[] = {
    {"RMC_NODE_SIZE", "0",
     "emulate nodes of k consecutive ranks within a real node (0 = real nodes, 1 = every peer remote)"},
};

size_t rmc_knob_count(void)
{
    return sizeof(knobs) / sizeof(knobs[0]);
}

const rmc_knob_t *rmc_knob_get(size_t i)
{
    return i < rmc_knob_count() ? &knobs[i] : NULL;
}

const char *rmc_knob_value(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < rmc_knob_count(); i++)
        if (strcmp(knobs[i].name, name) == 0) {
            const char *v = getenv(name);
            return (v && *v) ? v : knobs[i].defval;
        }
    return NULL;
}

long rmci_env_long(const char *name)
{
    const char *v = rmc_knob_value(name);
    return v ? strtol(v, NULL, 0) : 0;
}
