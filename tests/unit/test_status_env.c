/* Unit tests of status strings, the RMC_* knob registry and rmc_version (no MPI calls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include <rmc.h>

static void test_status_strings(void **state)
{
    (void)state;
    const char *unknown = rmc_status_string((rmc_status_t)-1000);
    assert_non_null(unknown);
    assert_true(strlen(unknown) > 0);
    /* codes are 0, -1, -2, ... without gaps; every one up to RMC_ERR_INTERNAL at least (more may
     * be added later) has its own string */
    int ncodes = 0;
    while (ncodes < 1000 && strcmp(rmc_status_string((rmc_status_t)(-ncodes)), unknown) != 0)
        ncodes++;
    assert_true(ncodes >= -(int)RMC_ERR_INTERNAL + 1);
    const char **seen = calloc((size_t)ncodes, sizeof(*seen));
    assert_non_null(seen);
    for (int i = 0; i < ncodes; i++) {
        rmc_status_t c = (rmc_status_t)(-i);
        const char *s = rmc_status_string(c);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        for (int j = 0; j < i; j++)
            if (strcmp(s, seen[j]) == 0)
                fail_msg("codes %d and %d share the string \"%s\"", -j, (int)c, s);
        seen[i] = s;
        /* the same static string every time */
        assert_ptr_equal(s, rmc_status_string(c));
    }
    free(seen);
    assert_string_equal(rmc_status_string(RMC_OK), "success");
    /* codes outside the enum: one "unknown" string, never NULL */
    const rmc_status_t bad[] = {
        (rmc_status_t)1,    (rmc_status_t)(-ncodes), (rmc_status_t)(-ncodes - 1),
        (rmc_status_t)-999, (rmc_status_t)INT32_MIN, (rmc_status_t)INT32_MAX};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_string_equal(rmc_status_string(bad[i]), unknown);
    assert_non_null(strstr(unknown, "unknown"));
}

static void test_knob_registry(void **state)
{
    (void)state;
    size_t n = rmc_knob_count();
    assert_true(n >= 1);
    int have_node_size = 0;
    for (size_t i = 0; i < n; i++) {
        const rmc_knob_t *k = rmc_knob_get(i);
        assert_non_null(k);
        assert_non_null(k->name);
        assert_non_null(k->defval);
        assert_non_null(k->help);
        assert_true(strncmp(k->name, "RMC_", 4) == 0);
        assert_true(strlen(k->name) > 4);
        assert_true(strlen(k->help) > 0);
        for (size_t j = 0; j < i; j++)
            if (strcmp(rmc_knob_get(j)->name, k->name) == 0)
                fail_msg("knob %s registered twice", k->name);
        if (strcmp(k->name, "RMC_NODE_SIZE") == 0) {
            have_node_size = 1;
            assert_string_equal(k->defval, "0");
        }
        /* same entry every time */
        assert_ptr_equal(k, rmc_knob_get(i));
    }
    assert_true(have_node_size);
    assert_null(rmc_knob_get(n));
    assert_null(rmc_knob_get(n + 1));
    assert_null(rmc_knob_get(SIZE_MAX));
}

static void test_knob_values(void **state)
{
    (void)state;
    size_t n = rmc_knob_count();
    for (size_t i = 0; i < n; i++) {
        const rmc_knob_t *k = rmc_knob_get(i);
        /* save whatever the environment has, test default and override, restore */
        const char *env = getenv(k->name);
        char *saved = env ? strdup(env) : NULL;
        assert_int_equal(unsetenv(k->name), 0);
        const char *v = rmc_knob_value(k->name);
        assert_non_null(v);
        assert_string_equal(v, k->defval);
        assert_int_equal(setenv(k->name, "12345-test-value", 1), 0);
        v = rmc_knob_value(k->name);
        assert_non_null(v);
        assert_string_equal(v, "12345-test-value");
        assert_int_equal(setenv(k->name, "7", 1), 0);
        assert_string_equal(rmc_knob_value(k->name), "7");
        assert_int_equal(unsetenv(k->name), 0);
        assert_string_equal(rmc_knob_value(k->name), k->defval);
        if (saved) {
            setenv(k->name, saved, 1);
            free(saved);
        }
    }
    /* names that are not registered: NULL, even when set in the environment */
    assert_null(rmc_knob_value("RMC_NO_SUCH_KNOB"));
    assert_int_equal(setenv("RMC_NO_SUCH_KNOB", "1", 1), 0);
    assert_null(rmc_knob_value("RMC_NO_SUCH_KNOB"));
    unsetenv("RMC_NO_SUCH_KNOB");
    assert_null(rmc_knob_value(""));
    assert_null(rmc_knob_value("rmc_node_size")); /* names are case-sensitive */
    assert_null(rmc_knob_value("RMC_NODE_SIZ"));  /* no prefix matches */
    assert_null(rmc_knob_value("RMC_NODE_SIZE_"));
    assert_null(rmc_knob_value(NULL));
}

static void test_version(void **state)
{
    (void)state;
    const char *v = rmc_version();
    assert_non_null(v);
    unsigned a, b, c;
    char tail;
    assert_int_equal(sscanf(v, "%u.%u.%u%c", &a, &b, &c, &tail), 3);
}

/* Everything that needs rmc_init says so without it (this program never initializes MPI). */
static void test_not_init(void **state)
{
    (void)state;
    assert_int_equal(rmc_initialized(), 0);
    assert_int_equal(rmc_rank(), -1);
    assert_int_equal(rmc_nranks(), -1);
    assert_int_equal(rmc_node_rank(), -1);
    assert_int_equal(rmc_node_size(), -1);
    assert_int_equal(rmc_node_count(), -1);
    assert_int_equal(rmc_same_node(0), -1);
    assert_int_equal(rmc_region_count(), 0);
    rmc_topology_t t;
    assert_int_equal(rmc_topology(&t), RMC_ERR_NOT_INIT);
    rmc_comm_stats_t s;
    assert_int_equal(rmc_comm_stats(&s), RMC_ERR_NOT_INIT);
    char buf[8] = {0};
    assert_int_equal(rmc_put(buf, buf, 8, 0), RMC_ERR_NOT_INIT);
    assert_int_equal(rmc_get(buf, buf, 8, 0), RMC_ERR_NOT_INIT);
    assert_int_equal(rmc_fence_all(), RMC_ERR_NOT_INIT);
    assert_int_equal(rmc_finalize(), RMC_ERR_NOT_INIT);
}

UNITTEST_MAIN("status_env", test_status_strings, test_knob_registry, test_knob_values, test_version,
              test_not_init)
