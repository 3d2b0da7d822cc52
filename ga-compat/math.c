/* ga-compat: whole-array and patch arithmetic (GA_Zero, GA_Fill, ...): each rank works on the
 * blocks it owns, in place, then the group synchronizes. */
#include <string.h>
#include "ga_impl.h"

/* Collective. Every element set to *value (one element of the array's type). */
void GA_Fill(int g_a, void *value)
{
    const char *fn = "GA_Fill";
    gai_array_t *a = gai_array(g_a, fn);
    if (!value)
        gai_error(fn, "array '%s': NULL value", a->name);
    gai_sync_group(a->pgroup, fn);
    gai_check(rmc_matrix_fill(a->m, value), fn, "rmc_matrix_fill");
}

void NGA_Fill(int g_a, void *value)
{
    GA_Fill(g_a, value);
}

/* Collective. Every element set to 0. */
void GA_Zero(int g_a)
{
    char zero[16];
    memset(zero, 0, sizeof zero);
    GA_Fill(g_a, zero);
}

void NGA_Zero(int g_a)
{
    GA_Zero(g_a);
}
