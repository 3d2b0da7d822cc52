/* hello_rmc: the smallest useful RMC program.
 * Every rank allocates a slice of a collective region, puts 1000 + its rank into its right
 * neighbour's slice, calls rmc_barrier (which completes the put) and reads its own slice back. Every call is checked:
 * a failure prints the call, its status and rmc_last_error() (which argument or MPI call, why).
 *   mpiexec.mpich -n 2 examples/hello_rmc */
#include <stdio.h>
#include <stdlib.h>
#include <rmc.h>

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
    CHECK(rmc_init(MPI_COMM_WORLD)); /* initializes MPI too, if needed */
    int me = rmc_rank(), n = rmc_nranks();
    void *bases[n];
    rmc_region_h region;
    CHECK(rmc_region_alloc(sizeof(long), bases, &region)); /* one long per rank */

    long value = 1000 + me;
    int right = (me + 1) % n;
    CHECK(rmc_put(&value, bases[right], sizeof value, right)); /* buffer reusable on return */
    CHECK(rmc_barrier());                                      /* every put complete and visible */

    long got = 0;
    CHECK(rmc_get(bases[me], &got, sizeof got, me));
    printf("rank %d of %d (node rank %d of %d, %s): received %ld from rank %d\n", me, n,
           rmc_node_rank(), rmc_node_size(),
           rmc_same_node(right) ? "neighbour is node-local" : "neighbour is remote", got,
           (me + n - 1) % n);

    CHECK(rmc_region_free(region));
    CHECK(rmc_finalize());
    return got == 1000 + (me + n - 1) % n ? 0 : 1;
}
