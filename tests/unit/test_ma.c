/* ga-compat's MA (macdecls.h) in one process: sizes and overheads, MA_init's variants, the stack's
 * LIFO rules, the heap's first fit, splitting and coalescing, inquiries (exact figures of GA 5.8.2
 * and, for every type, "what it says fits, fits; one more does not"), indices and pointers,
 * numalign, guard-word and checksum corruption, the error messages and return values of bad
 * input, hard failure and the error callback, trace, statistics, the summary and the memhandle
 * iterator.
 *
 * MA has one arena per process and no way back to uninitialized: the tests run in order, those
 * before test_init on an uninitialized MA; tests that need a fresh MA, or that end the process (a
 * fatal error, hard failure), run in a forked child. Each test in the parent leaves the arena
 * empty. Messages are read back by capturing stderr / stdout. The exact figures are GA 5.8.2's
 * (tests/ga/ma_diff.c compares the two MAs on a longer scenario). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "macdecls.h"
#include "../cmocka_main.h"

static const Integer all_types[] = {MT_C_CHAR, MT_C_INT,     MT_C_LONGINT, MT_C_FLOAT, MT_C_DBL,
                                    MT_C_LDBL, MT_C_SCPL,    MT_C_DCPL,    MT_C_LDCPL, MT_F_BYTE,
                                    MT_F_INT,  MT_F_LOG,     MT_F_REAL,    MT_F_DBL,   MT_F_SCPL,
                                    MT_F_DCPL, MT_C_LONGLONG};
static const long all_sizes[] = {1, 4, 8, 4, 8, 16, 8, 16, 32, 1, 8, 8, 4, 8, 8, 16, 8};
#define NTYPES (sizeof all_types / sizeof all_types[0])

/* ------------------------------------------------------------------------ capture --- */
/* Captures nest (stdout around a call whose stderr is captured too): one level per capture. */
#define CAP_LEVELS 2
static struct {
    char buf[1 << 17];
    FILE *file;
    int fd, saved;
} cap[CAP_LEVELS];
static int cap_depth;

/* From now on file descriptor fd (1 or 2) goes to a temporary file. */
static void cap_begin(int fd)
{
    assert_true(cap_depth < CAP_LEVELS);
    fflush(stdout);
    fflush(stderr);
    cap[cap_depth].file = tmpfile();
    assert_non_null(cap[cap_depth].file);
    cap[cap_depth].fd = fd;
    cap[cap_depth].saved = dup(fd);
    assert_true(cap[cap_depth].saved >= 0);
    assert_true(dup2(fileno(cap[cap_depth].file), fd) >= 0);
    cap_depth++;
}

/* What went to the descriptor of the innermost capture since its cap_begin (valid until the
 * next capture at the same depth). */
static const char *cap_end(void)
{
    fflush(stdout);
    fflush(stderr);
    cap_depth--;
    dup2(cap[cap_depth].saved, cap[cap_depth].fd);
    close(cap[cap_depth].saved);
    rewind(cap[cap_depth].file);
    size_t n = fread(cap[cap_depth].buf, 1, sizeof cap[cap_depth].buf - 1, cap[cap_depth].file);
    cap[cap_depth].buf[n] = '\0';
    fclose(cap[cap_depth].file);
    return cap[cap_depth].buf;
}

#ifdef __SANITIZE_ADDRESS__
/* MA_init's "could not allocate" case asks malloc for petabytes: under ASan, malloc must fail
 * as it does without it rather than end the process. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

#define assert_has(hay, needle)                                                                    \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!strstr(h_, n_))                                                                       \
            fail_msg("expected \"%s\" in:\n%s", n_, h_);                                           \
    } while (0)

/* Runs `call` (an expression) with stderr captured; the expression's value goes to `res`. */
#define ERR_OF(res, call)                                                                          \
    do {                                                                                           \
        cap_begin(2);                                                                              \
        res = (call);                                                                              \
        err = cap_end();                                                                           \
    } while (0)

/* ------------------------------------------------------------------------ children --- */
/* In a child: a failed check prints itself and exits with 100. */
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "child check failed, line %d: %s\n", __LINE__, #c);                    \
            return 100;                                                                            \
        }                                                                                          \
    } while (0)

/* Runs fn in a child (its return value is the exit code) with stderr captured into *err; returns
 * the child's wait status. */
static int in_child(int (*fn)(void), const char **err)
{
    cap_begin(2);
    pid_t pid = fork();
    if (pid == 0) {
        int r = fn();
        fflush(stdout);
        fflush(stderr);
        _exit(r);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    *err = cap_end();
    return st;
}

static void assert_child_exit(int st, int code, const char *err)
{
    if (!WIFEXITED(st))
        fail_msg("child did not exit (status %d); stderr:\n%s", st, err);
    if (WEXITSTATUS(st) != code)
        fail_msg("child exit %d, expected %d; stderr:\n%s", WEXITSTATUS(st), code, err);
}

/* ------------------------------------------------------------------------- helpers --- */
typedef struct {
    long avail, heap, hcs, hnp, stack, scs, snp;
} inq_t;

static inq_t inquire(Integer t)
{
    inq_t q = {MA_inquire_avail(t),
               MA_inquire_heap(t),
               MA_inquire_heap_check_stack(t),
               MA_inquire_heap_no_partition(t),
               MA_inquire_stack(t),
               MA_inquire_stack_check_heap(t),
               MA_inquire_stack_no_partition(t)};
    return q;
}

static void assert_inq(Integer t, long avail, long heap, long hcs, long hnp, long stack, long scs,
                       long snp)
{
    inq_t q = inquire(t);
    if (q.avail != avail || q.heap != heap || q.hcs != hcs || q.hnp != hnp || q.stack != stack ||
        q.scs != scs || q.snp != snp)
        fail_msg("type %ld: inquire avail %ld heap %ld hcs %ld hnp %ld stack %ld scs %ld snp %ld, "
                 "expected %ld %ld %ld %ld %ld %ld %ld",
                 (long)t, q.avail, q.heap, q.hcs, q.hnp, q.stack, q.scs, q.snp, avail, heap, hcs,
                 hnp, stack, scs, snp);
}

/* The arena of MA_init(MT_C_DBL, 1000, 1000) with nothing allocated (GA 5.8.2's figures). */
static void assert_empty_arena(void)
{
    assert_inq(MT_C_CHAR, 16120, 8016, 8016, 16120, 8016, 8016, 16120);
    assert_inq(MT_C_INT, 4030, 2004, 2004, 4030, 2004, 2004, 4030);
    assert_inq(MT_C_DBL, 2014, 1001, 1001, 2014, 1001, 1001, 2014);
    assert_inq(MT_C_DCPL, 1006, 500, 500, 1006, 500, 500, 1006);
}

static char *ptr_of(Integer h)
{
    void *p = NULL;
    assert_true(MA_get_pointer(h, &p));
    return p;
}

/* A line "\t\t<count>  <call>" of MA_print_stats(MA_TRUE). */
static unsigned long calls_of(const char *call)
{
    cap_begin(1);
    MA_print_stats(MA_TRUE);
    const char *out = cap_end();
    char key[64];
    snprintf(key, sizeof key, "  %s\n", call);
    const char *at = strstr(out, key);
    assert_non_null(at);
    const char *line = at;
    while (line > out && line[-1] != '\t')
        line--;
    return strtoul(line, NULL, 10);
}

/* ------------------------------------------------------------------ before MA_init --- */
static void test_sizes(void **s)
{
    (void)s;
    assert_false(MA_initialized());
    for (size_t i = 0; i < NTYPES; i++) {
        Integer t = all_types[i];
        long size = all_sizes[i];
        assert_int_equal(MA_sizeof(t, 1, MT_C_CHAR), size);
        assert_int_equal(MA_sizeof(MT_C_CHAR, size, t), 1);
        assert_int_equal(MA_sizeof(MT_C_CHAR, size + 1, t), 2); /* rounded up */
        assert_int_equal(MA_sizeof(t, 0, MT_C_DBL), 0);
        assert_int_equal(MA_sizeof_overhead(t), (126 + size - 1) / size);
        /* the base arrays, before MA_init too */
        assert_non_null(MA_get_mbase(t));
    }
    assert_int_equal(MA_sizeof(MT_C_DBL, 7, MT_C_INT), 14);
    assert_int_equal(MA_sizeof(MT_C_CHAR, 13, MT_C_LDCPL), 1);
    assert_int_equal(MA_sizeof(MT_C_LDCPL, 3, MT_C_SCPL), 12);
    assert_ptr_equal(MA_get_mbase(MT_C_CHAR), ma_cb_char);
    assert_ptr_equal(MA_get_mbase(MT_C_INT), (char *)ma_cb_int);
    assert_ptr_equal(MA_get_mbase(MT_C_LONGINT), (char *)ma_cb_long);
    assert_ptr_equal(MA_get_mbase(MT_C_LONGLONG), (char *)ma_cb_longlong);
    assert_ptr_equal(MA_get_mbase(MT_C_FLOAT), (char *)ma_cb_float);
    assert_ptr_equal(MA_get_mbase(MT_C_DBL), (char *)ma_cb_dbl);
    assert_ptr_equal(MA_get_mbase(MT_C_LDBL), (char *)ma_cb_ldbl);
    assert_ptr_equal(MA_get_mbase(MT_C_SCPL), (char *)ma_cb_scpl);
    assert_ptr_equal(MA_get_mbase(MT_C_DCPL), (char *)ma_cb_dcpl);
    assert_ptr_equal(MA_get_mbase(MT_C_LDCPL), (char *)ma_cb_ldcpl);
    /* the Fortran types share the C arrays of their element type */
    assert_ptr_equal(MA_get_mbase(MT_F_INT), (char *)ma_cb_long);
    assert_ptr_equal(MA_get_mbase(MT_F_DBL), (char *)ma_cb_dbl);
    assert_ptr_equal(MA_get_mbase(MT_F_BYTE), ma_cb_char);
}

static void test_uninitialized(void **s)
{
    (void)s;
    const char *err;
    long r;
    Integer h = -5;
    MA_AccessIndex ix = -5;
    void *p = NULL;
    ERR_OF(r, MA_inquire_avail(MT_C_INT));
    assert_int_equal(r, 0);
    assert_string_equal(err, "MA error: MA_inquire_avail: MA not yet initialized\n");
    ERR_OF(r, MA_inquire_heap(MT_C_INT) + MA_inquire_heap_check_stack(MT_C_INT) +
                  MA_inquire_heap_no_partition(MT_C_INT) + MA_inquire_stack(MT_C_INT) +
                  MA_inquire_stack_check_heap(MT_C_INT) + MA_inquire_stack_no_partition(MT_C_INT));
    assert_int_equal(r, 0);
    assert_has(err, "MA error: MA_inquire_heap_no_partition: MA not yet initialized\n");
    assert_has(err, "MA error: MA_inquire_stack_check_heap: MA not yet initialized\n");
    ERR_OF(r, MA_push_stack(MT_C_INT, 3, "early", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_push_stack: block 'early', MA not yet initialized\n");
    ERR_OF(r, MA_push_get(MT_C_INT, 3, "early", &h, &ix));
    assert_int_equal(r, MA_FALSE);
    ERR_OF(r, MA_allocate_heap(MT_C_INT, 3, "early", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_allocate_heap: block 'early', MA not yet initialized\n");
    ERR_OF(r, MA_alloc_get(MT_C_INT, 3, "early", &h, &ix));
    assert_int_equal(r, MA_FALSE);
    assert_int_equal(h, -5);
    assert_int_equal(ix, -5);
    ERR_OF(r, MA_get_pointer(0, &p));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_get_pointer: handle 0 is not valid\n");
    ERR_OF(r, MA_free_heap(3));
    assert_string_equal(err, "MA error: MA_free_heap: handle 3 is not valid\n");
    ERR_OF(r, MA_pop_stack(0) + MA_chop_stack(0) + MA_get_index(0, &ix) + MA_free_heap_piece(0, 1));
    assert_int_equal(r, 0);
    assert_has(err, "MA error: MA_chop_stack: handle 0 is not valid\n");
    assert_has(err, "MA error: MA_get_index: handle 0 is not valid\n");
    assert_true(MA_verify_allocator_stuff());
    cap_begin(1);
    MA_summarize_allocated_blocks();
    assert_string_equal(cap_end(), "MA_summarize_allocated_blocks: starting scan ...\n"
                                   "MA_summarize_allocated_blocks: scan completed: 0 heap "
                                   "blocks, 0 stack blocks\n");
    assert_false(MA_initialized());
}

/* ------------------------------------------------------ MA_init variants (children) --- */
static int child_defaults(void)
{
    CHECK(MA_init(MT_C_INT, -1, -7));
    CHECK(MA_initialized());
    /* 524288 bytes each; one block costs 88 bytes more than its elements */
    CHECK(MA_inquire_heap(MT_C_CHAR) == 524288 - 88);
    CHECK(MA_inquire_stack(MT_C_CHAR) == 524288 - 88);
    CHECK(MA_inquire_avail(MT_C_CHAR) == 2 * 524288 - 88);
    CHECK(MA_inquire_avail(MT_C_DBL) == (2 * 524288 - 92) / 8); /* 4 bytes to reach the grid */
    return 0;
}

static int child_sized(void)
{
    /* each part: nelem * size + size + 94 rounded up to 8 bytes */
    CHECK(MA_init(MT_C_INT, 50, 10));
    long heap = (10 * 4 + 4 + 94 + 7) / 8 * 8, stack = (50 * 4 + 4 + 94 + 7) / 8 * 8;
    CHECK(MA_inquire_heap(MT_C_CHAR) == heap - 88);
    CHECK(MA_inquire_stack(MT_C_CHAR) == stack - 88);
    CHECK(MA_inquire_avail(MT_C_CHAR) == heap + stack - 88);
    /* the nominal sizes hold their blocks */
    Integer h, s;
    CHECK(MA_allocate_heap(MT_C_INT, 10, "nominal heap", &h));
    CHECK(MA_push_stack(MT_C_INT, 50, "nominal stack", &s));
    CHECK(MA_inquire_heap(MT_C_INT) == 0);
    return 0;
}

static int child_zero(void)
{
    CHECK(MA_init(MT_C_CHAR, 0, 0));
    CHECK(MA_inquire_avail(MT_C_CHAR) == 104);
    Integer a, b;
    CHECK(MA_push_stack(MT_C_CHAR, 0, "empty", &a));
    CHECK(MA_push_stack(MT_C_CHAR, 1, "one", &b));
    CHECK(MA_inquire_avail(MT_C_CHAR) == 0);
    return 0;
}

static int child_twice(void)
{
    CHECK(MA_init(MT_C_DBL, 10, 10));
    CHECK(!MA_init(MT_C_DBL, 10, 10));
    CHECK(MA_initialized());
    return 0;
}

static int child_bad_init(void)
{
    CHECK(!MA_init(MT_BASE - 1, 10, 10));
    CHECK(!MA_init(MT_LAST + 1, 10, 10));
    CHECK(!MA_init(MT_C_DBL, (Integer)1 << 50, 10)); /* 8 PiB */
    CHECK(!MA_init(MT_C_DBL, 10, (Integer)1 << 61)); /* overflows */
    CHECK(!MA_initialized());
    CHECK(MA_init(MT_C_DBL, 10, 10)); /* failures leave MA uninitialized */
    return 0;
}

static void test_init_variants(void **s)
{
    (void)s;
    const char *err;
    int st = in_child(child_defaults, &err);
    assert_child_exit(st, 0, err);
    st = in_child(child_sized, &err);
    assert_child_exit(st, 0, err);
    st = in_child(child_zero, &err);
    assert_child_exit(st, 0, err);
    st = in_child(child_twice, &err);
    assert_child_exit(st, 0, err);
    assert_string_equal(err, "MA error: MA_init: MA already initialized\n");
    st = in_child(child_bad_init, &err);
    assert_child_exit(st, 0, err);
    assert_has(err, "MA error: MA_init: invalid datatype: 999\n");
    assert_has(err, "MA error: MA_init: invalid datatype: 1017\n");
    assert_has(err, "MA error: MA_init: could not allocate 9007199254741280 bytes\n");
    assert_has(err, "MA error: MA_init: heap of 2305843009213693952 elements of double is too "
                    "large\n");
}

/* ---------------------------------------------- fatal errors, hard failure, callback --- */
static int child_sizeof_type(void)
{
    (void)MA_sizeof(999, 1, MT_C_CHAR);
    return 0;
}
static int child_sizeof_nelem(void)
{
    (void)MA_sizeof(MT_C_INT, -3, MT_C_CHAR);
    return 0;
}
static int child_sizeof_type2(void)
{
    (void)MA_sizeof(MT_C_INT, 3, 12);
    return 0;
}
static int child_overhead(void)
{
    (void)MA_sizeof_overhead(MT_BASE - 1);
    return 0;
}
static int child_mbase(void)
{
    (void)MA_get_mbase(MT_LAST + 1);
    return 0;
}
static int child_inquire(void)
{
    CHECK(MA_init(MT_C_DBL, 10, 10));
    (void)MA_inquire_stack_check_heap(-4);
    return 0;
}

static int cb_calls;
static char cb_msg[64];
static long cb_code = -1;
static void on_error(const char *msg, int code)
{
    cb_calls++;
    snprintf(cb_msg, sizeof cb_msg, "%s", msg);
    cb_code = code;
}

static int child_callback(void)
{
    MA_set_error_callback((void (*)())on_error);
    /* a fatal error calls it; when it returns, so does the call (with 0) */
    CHECK(MA_sizeof_overhead(5) == 0);
    CHECK(cb_calls == 1 && strcmp(cb_msg, "MA aborting") == 0 && cb_code == 0);
    CHECK(MA_get_mbase(-1) == NULL);
    CHECK(cb_calls == 2);
    /* a non-fatal one does not */
    CHECK(!MA_set_numalign(77));
    CHECK(cb_calls == 2);
    /* hard failure makes it terminating */
    CHECK(MA_set_hard_fail(MA_TRUE) == MA_FALSE);
    CHECK(!MA_set_numalign(77));
    CHECK(cb_calls == 3);
    CHECK(MA_set_hard_fail(MA_FALSE) == MA_TRUE);
    /* ma_set_error_callback: back to exit(1) */
    ma_set_error_callback();
    (void)MA_sizeof(MT_C_INT, -1, MT_C_INT);
    return 0; /* not reached */
}

static int child_hard_fail(void)
{
    Integer a, b;
    CHECK(MA_init(MT_C_INT, 100, 100));
    CHECK(MA_push_stack(MT_C_INT, 4, "a", &a));
    CHECK(MA_push_stack(MT_C_INT, 4, "b", &b));
    CHECK(MA_set_error_print(MA_FALSE) == MA_TRUE); /* hard failure prints anyway */
    CHECK(MA_set_hard_fail(MA_TRUE) == MA_FALSE);
    (void)MA_pop_stack(a);
    return 0; /* not reached */
}

static void test_fatal(void **s)
{
    (void)s;
    const char *err;
    int st = in_child(child_sizeof_type, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_sizeof: invalid datatype: 999\n");
    st = in_child(child_sizeof_nelem, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_sizeof: invalid nelem: -3\n");
    st = in_child(child_sizeof_type2, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_sizeof: invalid datatype: 12\n");
    st = in_child(child_overhead, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_sizeof_overhead: invalid datatype: 999\n");
    st = in_child(child_mbase, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_get_mbase: invalid datatype: 1017\n");
    st = in_child(child_inquire, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA fatal error: MA_inquire_stack_check_heap: invalid datatype: -4\n");
    st = in_child(child_callback, &err);
    assert_child_exit(st, 1, err);
    assert_has(err, "MA fatal error: MA_sizeof_overhead: invalid datatype: 5\n");
    assert_has(err, "MA error: MA_set_numalign: invalid alignment: 77\n");
    assert_has(err, "MA hard failure: MA_set_numalign: invalid alignment: 77\n");
    assert_has(err, "MA fatal error: MA_sizeof: invalid nelem: -1\n");
    st = in_child(child_hard_fail, &err);
    assert_child_exit(st, 1, err);
    assert_string_equal(err, "MA hard failure: MA_pop_stack: memhandle 0 (name: 'a') not top of "
                             "stack\n");
}

/* ------------------------------------------------------------------ the one arena --- */
static void test_init(void **s)
{
    (void)s;
    assert_true(MA_init(MT_C_DBL, 1000, 1000));
    assert_true(MA_initialized());
    assert_empty_arena();
    const char *err;
    long r;
    ERR_OF(r, MA_init(MT_C_DBL, 1000, 1000));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_init: MA already initialized\n");
    assert_empty_arena(); /* unchanged */
}

/* For every type: what an inquiry says fits, fits, and one element more does not. */
static void test_inquire_fits(void **s)
{
    (void)s;
    Boolean print = MA_set_error_print(MA_FALSE);
    for (size_t i = 0; i < NTYPES; i++) {
        Integer t = all_types[i], h;
        long n = MA_inquire_stack_no_partition(t);
        assert_true(n > 0);
        assert_int_equal(MA_inquire_avail(t), n);
        assert_false(MA_push_stack(t, n + 1, "one more", &h));
        assert_true(MA_push_stack(t, n, "all", &h));
        assert_int_equal(MA_inquire_avail(MT_C_CHAR), 0);
        assert_true(MA_pop_stack(h));
        n = MA_inquire_heap_no_partition(t);
        assert_false(MA_allocate_heap(t, n + 1, "one more", &h));
        assert_true(MA_allocate_heap(t, n, "all", &h));
        assert_int_equal(MA_inquire_avail(MT_C_CHAR), 0);
        assert_true(MA_free_heap(h));
        /* the partitioned inquiries: a block that large stays on its side */
        n = MA_inquire_heap(t);
        assert_true(MA_allocate_heap(t, n, "heap side", &h));
        assert_int_equal(MA_inquire_heap(t), 0);
        assert_int_equal(MA_inquire_stack(t), MA_inquire_stack_check_heap(t));
        assert_true(MA_free_heap(h));
        n = MA_inquire_stack(t);
        assert_true(MA_push_stack(t, n, "stack side", &h));
        assert_int_equal(MA_inquire_stack(t), 0);
        assert_int_equal(MA_inquire_heap(t), MA_inquire_heap_check_stack(t));
        assert_true(MA_pop_stack(h));
    }
    MA_set_error_print(print);
    assert_empty_arena();
}

static void test_stack(void **s)
{
    (void)s;
    const char *err;
    long r;
    Integer a, b, c, d;
    MA_AccessIndex ia;
    assert_true(MA_push_get(MT_C_DBL, 10, "a", &a, &ia));
    assert_ptr_equal(ptr_of(a), (char *)&ma_cb_dbl[ia]);
    /* GA's figures: 10 doubles cost 176 bytes */
    assert_inq(MT_C_CHAR, 15944, 8016, 8016, 15944, 7840, 7840, 15944);
    assert_true(MA_push_stack(MT_C_INT, 5, "b", &b));
    assert_true(MA_push_stack(MT_C_CHAR, 3, "c", &c));
    /* the stack grows down: each block below the previous one, none overlapping */
    char *pa = ptr_of(a), *pb = ptr_of(b), *pc = ptr_of(c);
    assert_true(pb + 5 * sizeof(int) <= pa);
    assert_true(pc + 3 <= pb);
    memset(pa, 0x11, 10 * sizeof(double));
    memset(pb, 0x22, 5 * sizeof(int));
    memset(pc, 0x33, 3);
    assert_true(MA_verify_allocator_stuff());
    /* LIFO: only the top pops */
    char want[160];
    ERR_OF(r, MA_pop_stack(a));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want,
             "MA error: MA_pop_stack: memhandle %ld (name: 'a') not top of stack\n", (long)a);
    assert_string_equal(err, want);
    ERR_OF(r, MA_pop_stack(b));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "(name: 'b') not top of stack");
    ERR_OF(r, MA_free_heap(c));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want, "MA error: MA_free_heap: memhandle %ld (name: 'c') not in heap\n",
             (long)c);
    assert_string_equal(err, want);
    ERR_OF(r, MA_free_heap_piece(c, 1));
    assert_has(err, "MA error: MA_free_heap_piece: memhandle ");
    assert_has(err, " (name: 'c') not in heap\n");
    assert_true(MA_pop_stack(c));
    ERR_OF(r, MA_pop_stack(c));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want, "MA error: MA_pop_stack: handle %ld already deallocated\n",
             (long)c);
    assert_string_equal(err, want);
    ERR_OF(r, MA_get_pointer(c, &pc));
    snprintf(want, sizeof want, "MA error: MA_get_pointer: handle %ld already deallocated\n",
             (long)c);
    assert_string_equal(err, want);
    assert_int_equal(pa[0], 0x11); /* untouched */
    assert_true(MA_pop_stack(b));
    assert_true(MA_pop_stack(a));
    assert_empty_arena();

    /* chop: the block and every one pushed after it */
    assert_true(MA_push_stack(MT_C_INT, 5, "c1", &a));
    assert_true(MA_push_stack(MT_C_INT, 6, "c2", &b));
    assert_true(MA_push_stack(MT_C_INT, 7, "c3", &c));
    assert_true(MA_push_stack(MT_C_INT, 8, "c4", &d));
    assert_true(MA_chop_stack(b));
    ERR_OF(r, MA_get_pointer(d, &pc) + MA_get_pointer(c, &pc) + MA_get_pointer(b, &pc));
    assert_int_equal(r, 0);
    assert_has(err, "already deallocated");
    assert_true(MA_get_pointer(a, &pc));
    assert_inq(MT_C_CHAR, 16008, 8016, 8016, 16008, 7904, 7904, 16008); /* c1 alone: 112 bytes */
    ERR_OF(r, MA_chop_stack(c));
    assert_int_equal(r, MA_FALSE);
    Integer hh;
    assert_true(MA_allocate_heap(MT_C_INT, 1, "heap", &hh));
    ERR_OF(r, MA_chop_stack(hh));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want,
             "MA error: MA_chop_stack: memhandle %ld (name: 'heap') not in stack\n", (long)hh);
    assert_string_equal(err, want);
    ERR_OF(r, MA_pop_stack(hh));
    snprintf(want, sizeof want,
             "MA error: MA_pop_stack: memhandle %ld (name: 'heap') not in stack\n", (long)hh);
    assert_string_equal(err, want);
    assert_true(MA_free_heap(hh));
    assert_true(MA_chop_stack(a));
    assert_empty_arena();
}

static void test_heap(void **s)
{
    (void)s;
    const char *err;
    long r;
    Integer a, b, c, fill, in_hole, rest, x;
    MA_AccessIndex ix;
    Integer sdbl;
    /* GA's figures: 10 doubles on the stack, then 7 ints (120 bytes) on the heap */
    assert_true(MA_push_get(MT_C_DBL, 10, "s", &sdbl, &ix));
    assert_true(MA_alloc_get(MT_C_INT, 7, "h", &x, &ix));
    assert_ptr_equal(ptr_of(x), (char *)&ma_cb_int[ix]);
    assert_inq(MT_C_CHAR, 15824, 7896, 7896, 15824, 7840, 7840, 15824);
    assert_true(MA_free_heap(x));
    assert_true(MA_pop_stack(sdbl));
    assert_empty_arena();

    /* a hole: a, b, c, then the heap filled up to the partition; b freed */
    assert_true(MA_allocate_heap(MT_C_CHAR, 100, "a", &a));
    assert_true(MA_allocate_heap(MT_C_CHAR, 300, "b", &b));
    assert_true(MA_allocate_heap(MT_C_CHAR, 100, "c", &c));
    assert_true(ptr_of(a) < ptr_of(b) && ptr_of(b) < ptr_of(c)); /* the heap grows up */
    assert_true(MA_allocate_heap(MT_C_CHAR, MA_inquire_heap(MT_C_CHAR), "fill", &fill));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 0);
    assert_true(MA_free_heap(b));
    /* b's 392 bytes are free: a char block of 304 fits there (88 bytes overhead) */
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 304);
    assert_int_equal(MA_inquire_heap(MT_C_INT), 76);
    ERR_OF(r, MA_free_heap(b));
    assert_int_equal(r, MA_FALSE);
    char want[96];
    snprintf(want, sizeof want, "MA error: MA_free_heap: handle %ld already deallocated\n",
             (long)b);
    assert_string_equal(err, want);
    /* first fit: 10 ints (128 bytes) go into the hole, whose 264-byte tail stays free */
    assert_true(MA_allocate_heap(MT_C_INT, 10, "in hole", &in_hole));
    assert_true(ptr_of(a) < ptr_of(in_hole) && ptr_of(in_hole) < ptr_of(c));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 176);
    assert_true(MA_allocate_heap(MT_C_CHAR, 176, "rest", &rest));
    assert_true(ptr_of(rest) < ptr_of(c));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 0);
    /* coalescing: in_hole and rest freed merge back into one 392-byte fragment */
    assert_true(MA_free_heap(in_hole));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 40);
    assert_true(MA_free_heap(rest));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 304);
    /* ... and with a's block once a goes too */
    assert_true(MA_free_heap(a));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 304 + 192);
    /* freeing the highest blocks lowers the heap top; fragments above it vanish */
    assert_true(MA_free_heap(fill));
    assert_true(MA_free_heap(c));
    assert_empty_arena();

    /* free_heap_piece: 30 ints (208 bytes); freeing 20 leaves 128 needed: 80 bytes are too few to
     * split off, so the block keeps its size; freeing 8 more leaves 96: 112 bytes come free */
    assert_true(MA_allocate_heap(MT_C_INT, 30, "piece", &a));
    assert_true(MA_allocate_heap(MT_C_INT, 1, "above", &b));
    int *pa = (int *)ptr_of(a);
    for (int i = 0; i < 30; i++)
        pa[i] = i;
    assert_true(MA_free_heap_piece(a, 20));
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 8016 - 208 - 96);
    assert_true(MA_free_heap_piece(a, 8));
    assert_ptr_equal(ptr_of(a), (char *)pa); /* same client space, same contents */
    assert_int_equal(pa[0], 0);
    assert_int_equal(pa[1], 1);
    assert_true(MA_verify_allocator_stuff());
    assert_int_equal(MA_inquire_heap(MT_C_CHAR), 8016 - 208 - 96); /* the gap is still larger */
    cap_begin(1);
    MA_summarize_allocated_blocks();
    const char *out = cap_end();
    const char *piece = strstr(out, "heap block 'piece', handle");
    assert_non_null(piece);
    assert_has(piece, ":\n\ttype of elements:\t\tint\n\tnumber of elements:\t\t2\n");
    /* piece's record (the next block's follows it) */
    const char *bytes = strstr(piece, "\ttotal number of bytes:\t\t");
    assert_non_null(bytes);
    assert_int_equal(strtol(bytes + strlen("\ttotal number of bytes:\t\t"), NULL, 10), 96);
    cap_begin(1);
    MA_print_stats(MA_FALSE);
    out = cap_end();
    assert_has(out, "\tcurrent total bytes\t\t       192\t         0\n"); /* 96 + 96 */
    ERR_OF(r, MA_free_heap_piece(a, -1));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA error: MA_free_heap_piece: block 'piece', invalid nelem: -1\n");
    assert_true(MA_free_heap_piece(a, 5)); /* more than it has: freed */
    ERR_OF(r, MA_get_pointer(a, &pa));
    assert_has(err, "already deallocated");
    assert_true(MA_free_heap(b));
    assert_empty_arena();
}

static void test_bad_input(void **s)
{
    (void)s;
    const char *err;
    long r;
    Integer h = -9;
    MA_AccessIndex ix;
    ERR_OF(r, MA_push_stack(MT_C_INT, -1, "neg", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_push_stack: block 'neg', invalid nelem: -1\n");
    ERR_OF(r, MA_push_stack(MT_BASE + 17, 1, "type", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_push_stack: block 'type', invalid datatype: 1017\n");
    ERR_OF(r, MA_allocate_heap(999, 1, "type", &h));
    assert_string_equal(err, "MA error: MA_allocate_heap: block 'type', invalid datatype: 999\n");
    ERR_OF(r, MA_allocate_heap(MT_C_INT, -4, "neg", &h));
    assert_string_equal(err, "MA error: MA_allocate_heap: block 'neg', invalid nelem: -4\n");
    /* too large: GA's byte counts */
    ERR_OF(r, MA_push_stack(MT_C_INT, 100000, "too large", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_push_stack: block 'too large', not enough space to "
                             "allocate 400088 bytes\n");
    ERR_OF(r, MA_allocate_heap(MT_C_DBL, 2200, "too large", &h));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_allocate_heap: block 'too large', not enough space to "
                             "allocate 17696 bytes\n");
    ERR_OF(r, MA_push_get(MT_C_LONGLONG, (Integer)1 << 62, "huge", &h, &ix));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA error: MA_push_stack: block 'huge', not enough space to allocate");
    ERR_OF(r, MA_alloc_get(MT_C_LDCPL, (Integer)1 << 60, "huge", &h, &ix));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA error: MA_allocate_heap: block 'huge', not enough space to allocate");
    ERR_OF(r, MA_push_stack(MT_C_INT, 1, NULL, &h) && MA_pop_stack(h));
    assert_int_equal(r, MA_TRUE);
    /* handles */
    ERR_OF(r, MA_free_heap(123456));
    assert_string_equal(err, "MA error: MA_free_heap: handle 123456 is not valid\n");
    ERR_OF(r, MA_get_index(-3, &ix));
    assert_string_equal(err, "MA error: MA_get_index: handle -3 is not valid\n");
    /* NULL outputs (GA would crash) */
    ERR_OF(r, MA_push_stack(MT_C_INT, 1, "nohandle", NULL));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_push_stack: block 'nohandle', memhandle is NULL\n");
    ERR_OF(r, MA_allocate_heap(MT_C_INT, 1, "nohandle", NULL));
    assert_string_equal(err, "MA error: MA_allocate_heap: block 'nohandle', memhandle is NULL\n");
    assert_true(MA_push_stack(MT_C_INT, 1, "x", &h));
    ERR_OF(r, MA_get_pointer(h, NULL));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA error: MA_get_pointer: pointer is NULL (memhandle ");
    ERR_OF(r, MA_get_index(h, NULL));
    assert_has(err, "MA error: MA_get_index: index is NULL (memhandle ");
    ERR_OF(r, MA_get_numalign(NULL));
    assert_string_equal(err, "MA error: MA_get_numalign: value is NULL\n");
    assert_true(MA_pop_stack(h));
    /* settings */
    ERR_OF(r, MA_set_numalign(31));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_set_numalign: invalid alignment: 31\n");
    ERR_OF(r, MA_set_numalign(-1));
    assert_string_equal(err, "MA error: MA_set_numalign: invalid alignment: -1\n");
    /* error printing off: the same failures, silent */
    assert_int_equal(MA_set_error_print(MA_FALSE), MA_TRUE);
    ERR_OF(r, MA_set_numalign(-1) + MA_free_heap(99));
    assert_int_equal(r, 0);
    assert_string_equal(err, "");
    assert_int_equal(MA_set_error_print(MA_TRUE), MA_FALSE);
    assert_int_equal(MA_set_hard_fail(MA_FALSE), MA_FALSE);
    assert_empty_arena();
}

static void test_index_pointer(void **s)
{
    (void)s;
    Integer hs[NTYPES], hh[NTYPES];
    for (size_t i = 0; i < NTYPES; i++) {
        Integer t = all_types[i];
        long size = all_sizes[i];
        MA_AccessIndex is, ih, again;
        assert_true(MA_push_get(t, 3, "stack", &hs[i], &is));
        assert_true(MA_alloc_get(t, 5, "heap", &hh[i], &ih));
        char *ps = ptr_of(hs[i]), *ph = ptr_of(hh[i]);
        /* &base[index] is the block */
        assert_ptr_equal(MA_get_mbase(t) + is * size, ps);
        assert_ptr_equal(MA_get_mbase(t) + ih * size, ph);
        assert_true(MA_get_index(hs[i], &again));
        assert_int_equal(again, is);
        /* aligned for the type (its size, up to the arena's 32) */
        assert_int_equal((uintptr_t)ps % (uintptr_t)(size < 16 ? size : 16), 0);
        assert_int_equal((uintptr_t)ph % (uintptr_t)(size < 16 ? size : 16), 0);
        memset(ps, 0xa5, (size_t)(3 * size));
        memset(ph, 0x5a, (size_t)(5 * size));
    }
    assert_true(MA_verify_allocator_stuff());
    assert_ptr_equal(&ma_cb_int[0] + 0, (int *)MA_get_mbase(MT_C_INT));
    for (size_t i = NTYPES; i-- > 0;) {
        assert_true(MA_pop_stack(hs[i]));
        assert_true(MA_free_heap(hh[i]));
    }
    assert_empty_arena();
}

static void test_numalign(void **s)
{
    (void)s;
    Integer v = -1;
    assert_true(MA_get_numalign(&v));
    assert_int_equal(v, 0);
    assert_true(MA_set_numalign(6));
    assert_true(MA_get_numalign(&v));
    assert_int_equal(v, 6);
    for (size_t i = 0; i < NTYPES; i++) {
        Integer h, st;
        assert_true(MA_allocate_heap(all_types[i], 3, "aligned", &h));
        assert_true(MA_push_stack(all_types[i], 3, "aligned", &st));
        assert_int_equal((uintptr_t)ptr_of(h) % 64, 0);
        assert_int_equal((uintptr_t)ptr_of(st) % 64, 0);
        MA_AccessIndex ix;
        assert_true(MA_get_index(h, &ix)); /* still exact */
        assert_ptr_equal(MA_get_mbase(all_types[i]) + ix * all_sizes[i], ptr_of(h));
        assert_true(MA_pop_stack(st));
        assert_true(MA_free_heap(h));
    }
    assert_true(MA_set_numalign(0));
    assert_empty_arena();
}

static void test_corruption(void **s)
{
    (void)s;
    const char *err, *out;
    long r;
    Integer st, hp;
    assert_true(MA_push_stack(MT_C_INT, 4, "victim", &st));
    assert_true(MA_allocate_heap(MT_C_DBL, 4, "heap victim", &hp));
    int *ip = (int *)ptr_of(st);
    int saved = ip[4];
    ip[4] = 12345; /* one past the end: the trailing guard */
    ERR_OF(r, MA_get_pointer(st, &ip));
    assert_int_equal(r, MA_FALSE);
    char want[128];
    snprintf(want, sizeof want,
             "MA error: MA_get_pointer: invalid guard(s) for memhandle %ld (name: 'victim')\n",
             (long)st);
    assert_string_equal(err, want);
    ERR_OF(r, MA_pop_stack(st));
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA_pop_stack: invalid guard(s)");
    /* the scan names the block and what is wrong; the counts go to stderr */
    cap_begin(1);
    ERR_OF(r, MA_verify_allocator_stuff());
    out = cap_end();
    assert_int_equal(r, MA_FALSE);
    assert_has(out, "MA_verify_allocator_stuff: starting scan ...\n");
    snprintf(want, sizeof want, "stack block 'victim', handle %ld, address 0x", (long)st);
    assert_has(out, want);
    assert_has(out, ":\n\tcurrent right signature 12345 != proper right signature 1431655765\n");
    assert_has(out, "MA_verify_allocator_stuff: scan completed\n");
    assert_has(err, "MA error: MA_verify_allocator_stuff: \n");
    assert_has(err, "\tright signature errors\t   0\t    1\n");
    assert_has(err, "\ttotal bad blocks\t   0\t    1\n");
    assert_has(err, "\ttotal blocks\t\t   1\t    1");
    /* printed even with error printing off */
    MA_set_error_print(MA_FALSE);
    cap_begin(1);
    ERR_OF(r, MA_verify_allocator_stuff());
    cap_end();
    MA_set_error_print(MA_TRUE);
    assert_has(err, "right signature errors");
    ip[4] = saved;
    assert_true(MA_verify_allocator_stuff());

    /* the leading guard of a heap block */
    unsigned char *dp = (unsigned char *)ptr_of(hp);
    dp[-1] ^= 0xff;
    ERR_OF(r, MA_free_heap(hp));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want,
             "MA error: MA_free_heap: invalid guard(s) for memhandle %ld (name: 'heap victim')\n",
             (long)hp);
    assert_string_equal(err, want);
    cap_begin(1);
    ERR_OF(r, MA_verify_allocator_stuff());
    out = cap_end();
    assert_has(out, "heap block 'heap victim'");
    assert_has(out, "current left signature ");
    assert_has(out, " != proper left signature 2863311530\n");
    assert_has(err, "\tleft signature errors\t   1\t    0\n");
    /* auto-verify: every call fails while something is corrupt */
    assert_int_equal(MA_set_auto_verify(MA_TRUE), MA_FALSE);
    Integer x;
    cap_begin(1);
    ERR_OF(r, MA_push_stack(MT_C_INT, 1, "refused", &x));
    cap_end();
    assert_int_equal(r, MA_FALSE);
    assert_has(err, "MA_verify_allocator_stuff");
    dp[-1] ^= 0xff;
    assert_true(MA_push_stack(MT_C_INT, 1, "accepted", &x));
    assert_true(MA_pop_stack(x));
    assert_int_equal(MA_set_auto_verify(MA_FALSE), MA_TRUE);

    /* the descriptor's checksum: the 8 bytes before an int block's leading guard */
    unsigned char *cp = (unsigned char *)ptr_of(st) - 8;
    cp[0] ^= 1;
    ERR_OF(r, MA_get_index(st, &x));
    assert_int_equal(r, MA_FALSE);
    snprintf(want, sizeof want,
             "MA error: MA_get_index: invalid checksum for memhandle %ld (name: 'victim')\n",
             (long)st);
    assert_string_equal(err, want);
    cap_begin(1);
    ERR_OF(r, MA_verify_allocator_stuff());
    out = cap_end();
    assert_has(out, "stack block 'victim'");
    assert_has(out, "current checksum ");
    assert_has(err, "\tchecksum errors\t\t   0\t    1\n");
    cp[0] ^= 1;
    assert_true(MA_verify_allocator_stuff());
    assert_true(MA_pop_stack(st));
    assert_true(MA_free_heap(hp));
    assert_empty_arena();
}

static void test_trace_stats_summary(void **s)
{
    (void)s;
    Integer a, b, c;
    unsigned long pushes = calls_of("MA_push_stack"), inits = calls_of("MA_init");
    MA_trace(MA_TRUE);
    cap_begin(1);
    assert_true(MA_push_stack(MT_C_INT, 3, "traced", &a));
    assert_true(MA_allocate_heap(MT_C_INT, 30, "traced heap", &b));
    assert_true(MA_free_heap_piece(b, 20));
    assert_true(MA_free_heap(b));
    assert_true(MA_pop_stack(a));
    const char *out = cap_end();
    MA_trace(MA_FALSE);
    assert_string_equal(out, "MA: pushing 'traced' (3)\n"
                             "MA: allocating 'traced heap' (30)\n"
                             "MA: freeing 20 elements of 'traced heap'\n"
                             "MA: freeing 'traced heap'\n"
                             "MA: popping 'traced'\n");
    assert_int_equal(calls_of("MA_push_stack"), pushes + 1);
    assert_int_equal(calls_of("MA_init"), inits);

    assert_true(MA_allocate_heap(MT_C_LONGINT, 9, "left on the heap", &a));
    assert_true(MA_push_stack(MT_F_DCPL, 2, "a name longer than thirty-one characters", &b));
    assert_true(MA_push_stack(MT_C_LONGLONG, 1, NULL, &c));
    cap_begin(1);
    MA_summarize_allocated_blocks();
    out = cap_end();
    char want[256];
    snprintf(want, sizeof want, "heap block 'left on the heap', handle %ld, address 0x", (long)a);
    assert_has(out, want);
    assert_has(out, ":\n\ttype of elements:\t\tlong int\n\tnumber of elements:\t\t9\n");
    snprintf(want, sizeof want, "stack block 'a name longer than thirty-one c', handle %ld",
             (long)b);
    assert_has(out, want);
    assert_has(out, "\ttype of elements:\t\tdouble precision complex\n");
    snprintf(want, sizeof want, "stack block '', handle %ld", (long)c);
    assert_has(out, want);
    assert_has(out, "\ttype of elements:\t\tlong long\n");
    assert_has(out, "MA_summarize_allocated_blocks: scan completed: 1 heap block, 2 stack "
                    "blocks\n");
    /* the stack's newest block first */
    assert_true(strstr(out, "stack block ''") < strstr(out, "stack block 'a name"));
    cap_begin(1);
    MA_print_stats(MA_FALSE);
    out = cap_end();
    assert_has(out, "MA usage statistics:\n\n\tallocation statistics:\n");
    assert_has(out, "\tcurrent number of blocks\t         1\t         2\n");
    assert_has(out, "\tcurrent total bytes\t\t       168\t       240\n");
    assert_null(strstr(out, "calls per routine"));
    assert_true(MA_pop_stack(c));
    assert_true(MA_pop_stack(b));
    assert_true(MA_free_heap(a));
    cap_begin(1);
    MA_print_stats(MA_TRUE);
    out = cap_end();
    assert_has(out, "\tcurrent number of blocks\t         0\t         0\n");
    assert_has(out, "\n\tcalls per routine:\n");
    assert_has(out, "  MA_verify_allocator_stuff\n");
    assert_empty_arena();
}

static int cmp_handle(const void *x, const void *y)
{
    Integer a = *(const Integer *)x, b = *(const Integer *)y;
    return (a > b) - (a < b);
}

static void test_iterator(void **s)
{
    (void)s;
    const char *err;
    long r;
    Integer h[5], it, mh;
    int heap[5] = {1, 0, 1, 0, 1};
    assert_true(MA_allocate_heap(MT_C_INT, 1, "h0", &h[0]));
    assert_true(MA_push_stack(MT_C_INT, 2, "s1", &h[1]));
    assert_true(MA_allocate_heap(MT_C_DBL, 3, "h2", &h[2]));
    assert_true(MA_push_stack(MT_C_CHAR, 4, "s3", &h[3]));
    assert_true(MA_allocate_heap(MT_C_INT, 5, "h4", &h[4]));
    Integer sorted[5];
    memcpy(sorted, h, sizeof h);
    qsort(sorted, 5, sizeof sorted[0], cmp_handle);
    /* every block once, in memhandle order */
    assert_true(MA_init_memhandle_iterator(&it));
    Integer seen[8], n = 0;
    while (n < 8 && MA_get_next_memhandle(&it, &mh))
        seen[n++] = mh;
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(seen[i], sorted[i]);
    /* at the end it stays at the end, silently */
    ERR_OF(r, MA_get_next_memhandle(&it, &mh));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "");
    /* freeing during an iteration: the freed block is not visited */
    assert_true(MA_init_memhandle_iterator(&it));
    assert_true(MA_get_next_memhandle(&it, &mh));
    assert_int_equal(mh, sorted[0]);
    int k = 0;
    while (h[k] != sorted[2])
        k++;
    if (heap[k])
        assert_true(MA_free_heap(h[k]));
    else
        assert_true(MA_chop_stack(h[k])); /* may take the block pushed after it too */
    n = 0;
    while (n < 8 && MA_get_next_memhandle(&it, &mh))
        seen[n++] = mh;
    assert_true(n >= 2);
    assert_int_equal(seen[0], sorted[1]);
    for (int i = 0; i < n; i++) {
        assert_int_not_equal(seen[i], sorted[2]);
        void *p;
        assert_true(MA_get_pointer(seen[i], &p)); /* only live blocks */
    }
    /* two iterations at once */
    Integer i1, i2, m1, m2;
    assert_true(MA_init_memhandle_iterator(&i1));
    assert_true(MA_init_memhandle_iterator(&i2));
    assert_true(MA_get_next_memhandle(&i1, &m1));
    assert_true(MA_get_next_memhandle(&i1, &m1));
    assert_true(MA_get_next_memhandle(&i2, &m2));
    assert_int_equal(m1, sorted[1]);
    assert_int_equal(m2, sorted[0]);
    /* bad input */
    it = -2;
    ERR_OF(r, MA_get_next_memhandle(&it, &mh));
    assert_int_equal(r, MA_FALSE);
    assert_string_equal(err, "MA error: MA_get_next_memhandle: invalid iterator -2 (not from "
                             "MA_init_memhandle_iterator)\n");
    ERR_OF(r, MA_get_next_memhandle(NULL, &mh));
    assert_string_equal(err, "MA error: MA_get_next_memhandle: ithandle is NULL\n");
    ERR_OF(r, MA_get_next_memhandle(&i1, NULL));
    assert_string_equal(err, "MA error: MA_get_next_memhandle: memhandle is NULL\n");
    ERR_OF(r, MA_init_memhandle_iterator(NULL));
    assert_string_equal(err, "MA error: MA_init_memhandle_iterator: ithandle is NULL\n");
    /* free what is left, found by the iterator itself */
    assert_true(MA_init_memhandle_iterator(&it));
    n = 0;
    while (n < 8 && MA_get_next_memhandle(&it, &mh))
        seen[n++] = mh;
    for (int i = n; i-- > 0;) {
        int j = 0;
        while (h[j] != seen[i])
            j++;
        if (heap[j])
            assert_true(MA_free_heap(seen[i]));
    }
    assert_true(MA_chop_stack(h[1]));
    /* nothing allocated: nothing visited */
    assert_true(MA_init_memhandle_iterator(&it));
    assert_false(MA_get_next_memhandle(&it, &mh));
    assert_empty_arena();
}

/* Memhandles: taken round-robin from a table that starts with 32 slots and doubles (GA's), so
 * a freed handle comes back only after a full round. */
static void test_handles(void **s)
{
    (void)s;
    Integer prev, h, many[70];
    assert_true(MA_push_stack(MT_C_INT, 1, "rr", &prev));
    assert_true(MA_pop_stack(prev));
    int wraps = 0;
    for (int i = 1; i < 140; i++) {
        assert_true(MA_push_stack(MT_C_INT, 1, "rr", &h));
        if (h != prev + 1) {
            assert_int_equal(h, 0);
            assert_true(prev + 1 == 32 || prev + 1 == 64 || prev + 1 == 128);
            wraps++;
        }
        prev = h;
        assert_true(MA_pop_stack(h));
    }
    assert_true(wraps >= 1);
    for (int i = 0; i < 70; i++)
        assert_true(MA_allocate_heap(MT_C_CHAR, i, "many", &many[i]));
    for (int i = 0; i < 70; i++)
        for (int j = 0; j < i; j++)
            assert_int_not_equal(many[i], many[j]);
    assert_true(MA_verify_allocator_stuff());
    for (int i = 0; i < 70; i += 2)
        assert_true(MA_free_heap(many[i]));
    for (int i = 1; i < 70; i += 2)
        assert_true(MA_free_heap(many[i]));
    assert_empty_arena();
}

UNITTEST_MAIN("ga-compat MA", test_sizes, test_uninitialized, test_init_variants, test_fatal,
              test_init, test_inquire_fits, test_stack, test_heap, test_bad_input,
              test_index_pointer, test_numalign, test_corruption, test_trace_stats_summary,
              test_iterator, test_handles)
