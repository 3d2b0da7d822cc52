/* hello_containers: RMC's containers in a plain MPI program.
 * Every rank pushes a greeting (a string) to a queue hosted by rank 0 and its square into a
 * block-distributed array; rank 0 pops the greetings, everyone reads the array back, and each
 * rank allocates global memory that its right neighbour writes into.
 *   mpicc.mpich hello_containers.c $(pkg-config --cflags --libs rmc)
 *   mpiexec.mpich -n 2 examples/hello_containers */
#include <stdio.h>
#include <stdlib.h>
#include <rmc/containers.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        rmc_status_t st_ = (call);                                                                 \
        if (st_ != RMC_OK) {                                                                       \
            fprintf(stderr, "%s: %s (%s)\n", #call, rmc_status_string(st_), rmc_last_error());     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(void)
{
    CHECK(rmc_init(MPI_COMM_WORLD)); /* the containers' segment is set up here too */
    int me = rmc_rank(), n = rmc_nranks(), bad = 0;

    /* a queue of strings of up to 64 bytes, hosted by rank 0, room for one per rank */
    static const rmc_type_t text = RMC_TYPE_STRING(64);
    rmc_queue_h q;
    CHECK(rmc_queue_create(RMC_QUEUE_CIRCULAR, 0, (size_t)n, &text, &q));
    char greeting[64], *g = greeting;
    snprintf(greeting, sizeof greeting, "hello from rank %d", me);
    CHECK(rmc_queue_push(q, &g, RMC_PROMISE_PUSH)); /* only pushes run now */

    /* an array of n int64, one element per rank */
    rmc_array_h a;
    CHECK(rmc_array_create((size_t)n, &rmc_type_i64, RMC_ARRAY_BLOCK, &a));
    int64_t sq = (int64_t)me * me;
    CHECK(rmc_array_put(a, (size_t)me, &sq));

    /* global memory: allocated by its owner, no collective; the pointer is a plain value */
    rmc_gptr_t mine, from_left;
    CHECK(rmc_alloc(sizeof(int64_t), &mine));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, left, 0, &from_left, sizeof from_left, MPI_BYTE,
                 right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int64_t v = 100 + me;
    CHECK(rmc_gptr_put(from_left, &v, sizeof v)); /* into the right neighbour's allocation */

    CHECK(rmc_barrier()); /* every push and put is complete and visible */

    if (me == 0)
        for (int i = 0; i < n; i++) {
            char *s = NULL;
            CHECK(rmc_queue_pop(q, &s, RMC_PROMISE_LOCAL)); /* the host, nothing concurrent */
            printf("rank 0 popped \"%s\"\n", s);
            rmc_type_release(&text, &s);
        }
    int64_t all[n];
    CHECK(rmc_array_get_range(a, 0, (size_t)n, all));
    for (int i = 0; i < n; i++)
        bad |= all[i] != (int64_t)i * i;
    int64_t got = *(int64_t *)rmc_gptr_local(mine); /* this rank's own memory */
    bad |= got != 100 + left;
    printf("rank %d: array ok: %s, rank %d wrote %lld into my allocation\n", me, bad ? "no" : "yes",
           left, (long long)got);

    CHECK(rmc_barrier());
    CHECK(rmc_free(mine));
    CHECK(rmc_array_destroy(a));
    CHECK(rmc_queue_destroy(q));
    CHECK(rmc_finalize());
    return bad;
}
