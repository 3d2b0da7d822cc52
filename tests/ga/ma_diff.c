/* One MA scenario printed as values, built twice: against ga-compat's MA (ma_diff_rmc) and
 * against GA 5.8.2's own (ma_diff_ga, Debian's libga-mpich.a); tests/ga/ma-diff.sh runs both and
 * compares their output (stdout and stderr together, in order), which must be identical once
 * addresses and base-array indices (the lines MA_summarize_allocated_blocks and
 * MA_verify_allocator_stuff print) are masked. Every return value, memhandle, inquiry, error
 * message, trace line and the call counts of MA_print_stats take part.
 *
 * Left out on purpose, because the two MAs differ there by design (ga-compat/ma.c's header): the
 * memhandle iterator (GA's is not implemented), MA_inquire_stack once the stack has grown below
 * the partition (GA's wraps around), NULL output pointers (GA dereferences them). And
 * MT_C_LDCPL, the one 32-byte type: where its grid falls in the arena depends on the arena's
 * address modulo 32, which GA leaves to malloc (16-aligned), so GA itself gives either of two
 * layouts from run to run (ga-compat's arena is 32-aligned).
 *
 * Fatal errors terminate the process, so each runs in a child: the parent prints how the child
 * ended. No MPI: MA needs none. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "macdecls.h"

#define P(expr) printf("%s = %ld\n", #expr, (long)(expr))

/* every type but MT_C_LDCPL (see above) */
static const Integer types[] = {
    MT_C_CHAR, MT_C_INT, MT_C_LONGINT, MT_C_FLOAT, MT_C_DBL, MT_C_LDBL, MT_C_SCPL, MT_C_DCPL,
    MT_F_BYTE, MT_F_INT, MT_F_LOG,     MT_F_REAL,  MT_F_DBL, MT_F_SCPL, MT_F_DCPL, MT_C_LONGLONG};
#define NTYPES (sizeof types / sizeof types[0])

/* The seven inquiries for one type; `stack` 0 leaves out MA_inquire_stack (see above). */
static void inquire(Integer t, int stack)
{
    printf("inquire %ld: avail %ld heap %ld hcs %ld hnp %ld scs %ld snp %ld", (long)t,
           (long)MA_inquire_avail(t), (long)MA_inquire_heap(t),
           (long)MA_inquire_heap_check_stack(t), (long)MA_inquire_heap_no_partition(t),
           (long)MA_inquire_stack_check_heap(t), (long)MA_inquire_stack_no_partition(t));
    if (stack)
        printf(" stack %ld", (long)MA_inquire_stack(t));
    printf("\n");
}

static void inquire_some(int stack)
{
    inquire(MT_C_CHAR, stack);
    inquire(MT_C_INT, stack);
    inquire(MT_C_DBL, stack);
    inquire(MT_C_DCPL, stack);
}

/* A block's pointer and index agree with the base array (the values themselves are addresses). */
static void where(Integer h, Integer type)
{
    void *p = NULL;
    MA_AccessIndex i = -1;
    Boolean okp = MA_get_pointer(h, &p), oki = MA_get_index(h, &i);
    long size = MA_sizeof(type, 1, MT_C_CHAR);
    int agree = okp && oki && (char *)p == MA_get_mbase(type) + i * size;
    printf("block %ld: pointer %ld index %ld agree %d aligned %d\n", (long)h, (long)okp, (long)oki,
           agree, okp && (uintptr_t)p % (uintptr_t)size == 0);
}

/* Runs fn in a child and prints how it ended. */
static void child(const char *what, void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        fflush(stdout);
        _exit(42);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child %s: %s %d\n", what, WIFEXITED(st) ? "exit" : "signal",
           WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
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

#ifdef MA_DIFF_GA
/* GA 5.8.2 declares ma_set_error_callback without defining it: ga-compat's meaning, for GA. */
void ma_set_error_callback(void)
{
    MA_set_error_callback(NULL);
}
#endif

static void on_error(const char *msg, int code)
{
    printf("callback: '%s' %d\n", msg, code);
}

static void fatal_sizeof_type(void)
{
    P(MA_sizeof(999, 1, MT_C_CHAR));
}
static void fatal_sizeof_nelem(void)
{
    P(MA_sizeof(MT_C_INT, -3, MT_C_CHAR));
}
static void fatal_sizeof_type2(void)
{
    P(MA_sizeof(MT_C_INT, 3, 12));
}
static void fatal_overhead(void)
{
    P(MA_sizeof_overhead(MT_BASE - 1));
}
static void fatal_mbase(void)
{
    P(MA_get_mbase(MT_LAST + 1) == NULL);
}
static void fatal_inquire(void)
{
    P(MA_init(MT_C_DBL, 100, 100));
    P(MA_inquire_heap(0));
}
static void fatal_with_callback(void)
{
    MA_set_error_callback((void (*)())on_error);
    P(MA_sizeof_overhead(5));
    P(MA_inquire_avail(7));
    ma_set_error_callback(); /* back to exit(1) */
    P(MA_sizeof_overhead(5));
}
static void hard_fail(void)
{
    Integer a, b;
    P(MA_init(MT_C_INT, 100, 100));
    P(MA_push_stack(MT_C_INT, 4, "a", &a));
    P(MA_push_stack(MT_C_INT, 4, "b", &b));
    P(MA_set_hard_fail(MA_TRUE));
    P(MA_pop_stack(a));
}
static void hard_fail_callback(void)
{
    MA_set_error_callback((void (*)())on_error);
    P(MA_set_hard_fail(MA_TRUE));
    P(MA_set_error_print(MA_FALSE));
    P(MA_set_numalign(-2));
}
static void init_defaults(void)
{
    P(MA_init(MT_C_INT, -1, -5));
    inquire_some(1);
}
static void init_char_zero(void)
{
    P(MA_init(MT_C_CHAR, 0, 0));
    inquire_some(1);
    Integer h;
    P(MA_push_stack(MT_C_CHAR, 0, "empty", &h));
    P(MA_push_stack(MT_C_CHAR, 1, "one", &h));
    inquire_some(0);
}
static void init_dcpl(void)
{
    P(MA_init(MT_C_DCPL, 10, 3));
    inquire_some(1);
    Integer h;
    P(MA_allocate_heap(MT_C_DCPL, 3, "fits", &h));
    P(MA_allocate_heap(MT_C_CHAR, 1, "more", &h));
    inquire_some(1);
}
static void init_too_large(void)
{
    P(MA_init(MT_C_DBL, (Integer)1 << 50, 10));
    P(MA_initialized());
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    Integer h = -7, h2 = -7, h3 = -7, h4 = -7, s1 = -7, s2 = -7, s3 = -7, v = -7;
    MA_AccessIndex ix = 0;
    void *p = NULL;

    printf("--- before MA_init\n");
    P(MA_initialized());
    for (size_t i = 0; i < NTYPES; i++)
        printf("type %ld: sizeof %ld overhead %ld in dbl %ld\n", (long)types[i],
               (long)MA_sizeof(types[i], 1, MT_C_CHAR), (long)MA_sizeof_overhead(types[i]),
               (long)MA_sizeof(types[i], 7, MT_C_DBL));
    P(MA_sizeof(MT_C_DBL, 0, MT_C_INT));
    P(MA_sizeof(MT_C_CHAR, 13, MT_C_LDCPL));
    P(MA_inquire_avail(MT_C_INT));
    P(MA_inquire_stack_no_partition(MT_C_INT));
    P(MA_push_stack(MT_C_INT, 3, "early", &h));
    P(MA_push_get(MT_C_INT, 3, "early", &h, &ix));
    P(MA_allocate_heap(MT_C_INT, 3, "early", &h));
    P(MA_alloc_get(MT_C_INT, 3, "early", &h, &ix));
    P(MA_get_pointer(0, &p));
    P(MA_free_heap(3));
    P(MA_pop_stack(0));
    P(MA_chop_stack(-1));
    P(MA_verify_allocator_stuff());
    P(MA_set_numalign(31));
    P(MA_set_numalign(-1));
    P(MA_get_numalign(&v));
    P(v);
    P(MA_set_error_print(MA_FALSE));
    P(MA_set_numalign(99)); /* silent */
    P(MA_set_error_print(MA_TRUE));
    P(MA_set_hard_fail(MA_FALSE));
    P(MA_set_auto_verify(MA_FALSE));
    P(MA_init(MT_BASE - 1, 10, 10));
    P(MA_init(MT_LAST + 1, 10, 10));
    P(MA_initialized());
    MA_summarize_allocated_blocks();

    printf("--- children\n");
    child("init defaults", init_defaults);
    child("init char 0 0", init_char_zero);
    child("init dcpl", init_dcpl);
    child("init too large", init_too_large);
    child("fatal MA_sizeof type", fatal_sizeof_type);
    child("fatal MA_sizeof nelem", fatal_sizeof_nelem);
    child("fatal MA_sizeof type2", fatal_sizeof_type2);
    child("fatal MA_sizeof_overhead", fatal_overhead);
    child("fatal MA_get_mbase", fatal_mbase);
    child("fatal MA_inquire_heap", fatal_inquire);
    child("fatal with callback", fatal_with_callback);
    child("hard fail", hard_fail);
    child("hard fail with callback", hard_fail_callback);

    printf("--- MA_init\n");
    P(MA_init(MT_C_DBL, 1000, 1000));
    P(MA_init(MT_C_DBL, 1000, 1000));
    P(MA_initialized());
    inquire_some(1);
    for (size_t i = 0; i < NTYPES; i++)
        inquire(types[i], 1);

    printf("--- stack\n");
    P(MA_push_get(MT_C_DBL, 10, "s1", &s1, &ix));
    P(s1);
    where(s1, MT_C_DBL);
    inquire_some(1);
    P(MA_push_stack(MT_C_CHAR, 13, "s2 with a name longer than thirty-one characters", &s2));
    P(s2);
    where(s2, MT_C_CHAR);
    P(MA_push_stack(MT_C_DCPL, 3, "s3", &s3));
    where(s3, MT_C_DCPL);
    inquire_some(1);
    P(MA_pop_stack(s1)); /* not the top */
    P(MA_pop_stack(s2)); /* not the top */
    P(MA_free_heap(s3)); /* not in the heap */
    P(MA_pop_stack(s3));
    P(MA_pop_stack(s3)); /* freed */
    P(MA_get_pointer(s3, &p));
    P(MA_pop_stack(s2));
    P(MA_pop_stack(s1));
    P(MA_pop_stack(s1));
    inquire_some(1);
    P(MA_push_stack(MT_C_INT, -1, "neg", &h));
    P(MA_push_stack(MT_BASE + 17, 1, "type", &h));
    P(MA_push_stack(MT_C_INT, 100000, "too large", &h));
    P(MA_push_stack(MT_C_DBL, 2000, "too large", &h));
    P(MA_push_stack(MT_C_DBL, 1000, "exactly the nominal stack", &h));
    P(h);
    inquire_some(0); /* the stack is below the partition */
    P(MA_pop_stack(h));
    /* chop: three blocks, chop the middle one */
    P(MA_push_stack(MT_C_INT, 5, "c1", &s1));
    P(MA_push_stack(MT_C_INT, 6, "c2", &s2));
    P(MA_push_stack(MT_C_INT, 7, "c3", &s3));
    inquire_some(1);
    P(MA_chop_stack(s2));
    P(MA_get_pointer(s3, &p));
    P(MA_get_pointer(s2, &p));
    where(s1, MT_C_INT);
    inquire_some(1);
    P(MA_chop_stack(s1));
    P(MA_chop_stack(s1));
    inquire_some(1);

    printf("--- heap\n");
    P(MA_alloc_get(MT_C_INT, 7, "h1", &h, &ix));
    P(h);
    where(h, MT_C_INT);
    P(MA_allocate_heap(MT_C_CHAR, 300, "h2", &h2));
    P(MA_allocate_heap(MT_C_DBL, 20, "h3", &h3));
    P(MA_allocate_heap(MT_C_SCPL, 5, "h4", &h4));
    where(h2, MT_C_CHAR);
    where(h3, MT_C_DBL);
    where(h4, MT_C_SCPL);
    inquire_some(1);
    P(MA_free_heap(h2)); /* a hole below h3 */
    inquire_some(1);
    P(MA_pop_stack(h3)); /* not in the stack */
    P(MA_chop_stack(h3));
    P(MA_free_heap(h2)); /* twice */
    P(MA_free_heap(123456));
    P(MA_free_heap(-3));
    P(MA_allocate_heap(MT_C_INT, 10, "in the hole", &h2)); /* first fit, split */
    where(h2, MT_C_INT);
    inquire_some(1);
    P(MA_allocate_heap(MT_C_CHAR, 100, "rest of the hole", &s1));
    inquire_some(1);
    P(MA_free_heap_piece(h3, 15)); /* split: the tail comes free */
    inquire_some(1);
    P(MA_free_heap_piece(h4, 1)); /* too small to split */
    inquire_some(1);
    P(MA_free_heap_piece(h4, -1));
    P(MA_free_heap_piece(h4, 4)); /* all of it: freed */
    P(MA_get_pointer(h4, &p));
    inquire_some(1);
    P(MA_allocate_heap(MT_C_INT, -1, "neg", &v));
    P(MA_allocate_heap(999, 1, "type", &v));
    P(MA_allocate_heap(MT_C_DBL, 2200, "too large", &v));
    P(MA_allocate_heap(MT_C_DBL, 1500, "past the partition", &v));
    inquire_some(0);
    P(MA_push_stack(MT_C_DBL, 400, "no room", &s2));
    P(MA_free_heap(v));
    inquire_some(1);
    /* the stack past the partition */
    P(MA_push_stack(MT_C_DBL, 1200, "deep", &s2));
    inquire_some(0);
    P(MA_allocate_heap(MT_C_DBL, 100, "squeezed", &v));
    P(MA_pop_stack(s2));
    P(MA_free_heap(s1));
    P(MA_free_heap(h2));
    P(MA_free_heap(h));
    inquire_some(1);
    P(MA_free_heap(h3));
    inquire_some(1);

    printf("--- handles round-robin\n");
    for (int i = 0; i < 40; i++) {
        P(MA_push_stack(MT_C_INT, 1, "rr", &h));
        printf("handle %ld\n", (long)h);
        P(MA_pop_stack(h));
    }
    Integer many[70];
    for (int i = 0; i < 70; i++)
        if (!MA_allocate_heap(MT_C_CHAR, i, "many", &many[i]))
            printf("allocate %d failed\n", i);
    for (int i = 0; i < 70; i++)
        printf("%ld%c", (long)many[i], i % 10 == 9 ? '\n' : ' ');
    inquire_some(1);
    for (int i = 0; i < 70; i += 2)
        P(MA_free_heap(many[i]));
    inquire_some(1);
    P(MA_alloc_get(MT_C_CHAR, 40, "refill", &h, &ix));
    P(h);
    for (int i = 1; i < 70; i += 2)
        P(MA_free_heap(many[i]));
    P(MA_free_heap(h));
    inquire_some(1);

    printf("--- numalign\n");
    P(MA_set_numalign(6));
    P(MA_get_numalign(&v));
    P(v);
    for (size_t i = 0; i < NTYPES; i++) {
        P(MA_allocate_heap(types[i], 3, "aligned", &h));
        P(MA_get_pointer(h, &p));
        printf("heap type %ld on 64: %d\n", (long)types[i], (int)((uintptr_t)p % 64 == 0));
        P(MA_push_stack(types[i], 3, "aligned", &s1));
        P(MA_get_pointer(s1, &p));
        printf("stack type %ld on 64: %d\n", (long)types[i], (int)((uintptr_t)p % 64 == 0));
        /* (no inquiries here: with numalign they depend on the arena's address modulo 64) */
        P(MA_pop_stack(s1));
        P(MA_free_heap(h));
    }
    P(MA_set_numalign(0));

    printf("--- trace\n");
    MA_trace(MA_TRUE);
    P(MA_push_stack(MT_C_INT, 3, "traced", &s1));
    P(MA_allocate_heap(MT_C_INT, 30, "traced heap", &h));
    P(MA_free_heap_piece(h, 20));
    P(MA_free_heap_piece(h, 20));
    P(MA_pop_stack(s1));
    P(MA_push_stack(MT_C_INT, -2, "traced bad", &s1));
    P(MA_chop_stack(s1)); /* s1 was popped */
    MA_trace(MA_FALSE);

    printf("--- corruption\n");
    P(MA_push_stack(MT_C_INT, 4, "victim", &s1));
    P(MA_allocate_heap(MT_C_DBL, 4, "heap victim", &h));
    P(MA_get_pointer(s1, &p));
    int *ip = p;
    int saved = ip[4];
    ip[4] = 12345; /* one past the end: the trailing guard */
    P(MA_get_pointer(s1, &p));
    P(MA_get_index(s1, &ix));
    P(MA_pop_stack(s1));
    P(MA_verify_allocator_stuff());
    P(MA_set_error_print(MA_FALSE));
    P(MA_verify_allocator_stuff()); /* its table prints anyway */
    P(MA_set_error_print(MA_TRUE));
    ip[4] = saved;
    P(MA_verify_allocator_stuff());
    P(MA_get_pointer(h, &p));
    double *dp = p;
    double dsaved = dp[-1];
    ((unsigned char *)dp)[-1] ^= 0xff; /* the leading guard */
    P(MA_free_heap(h));
    P(MA_verify_allocator_stuff());
    P(MA_set_auto_verify(MA_TRUE));
    P(MA_inquire_avail(MT_C_INT));
    P(MA_push_stack(MT_C_INT, 1, "refused", &s2));
    dp[-1] = dsaved;
    P(MA_push_stack(MT_C_INT, 1, "accepted", &s2));
    P(MA_set_auto_verify(MA_FALSE));
    /* the descriptor's checksum (the 8 bytes before the leading guard of an int block) */
    P(MA_get_pointer(s2, &p));
    unsigned char *cp = (unsigned char *)p - 8;
    cp[0] ^= 1;
    P(MA_pop_stack(s2));
    P(MA_verify_allocator_stuff());
    cp[0] ^= 1;
    P(MA_pop_stack(s2));
    P(MA_pop_stack(s1));
    P(MA_free_heap(h));

    printf("--- summary\n");
    P(MA_allocate_heap(MT_C_LONGINT, 9, "left on the heap", &h));
    P(MA_push_stack(MT_F_DCPL, 2, "left on the stack", &s1));
    P(MA_push_stack(MT_C_LONGLONG, 1, NULL, &s2));
    MA_summarize_allocated_blocks();
    MA_print_stats(MA_FALSE);
    MA_print_stats(MA_TRUE);
    return 0;
}
