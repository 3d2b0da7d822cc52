/* Staged blocking accumulates. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "strided_rt.h"

/* ------------------------------------------------------------ staged accumulates --- */

/* A blocking accumulate only owes its caller a reusable source buffer (completion at the target
 * comes with a fence or a conflicting operation, as for every accumulate). Small remote ones are
 * therefore copied (scaled) into a staging area and the MPI_Accumulate is issued from there: the
 * call returns without waiting for MPI's local completion, which on MPICH 4.0.2 (ch4:ucx) costs a
 * round trip to the target (~0.9 us). The pair is marked as having an accumulate outstanding, so
 * the conflict rules order later operations exactly as for a non-blocking accumulate; accumulates
 * commute with each other, so a stream of them needs no ordering at all.
 * The area is recycled (stage_drain: MPI_Win_flush_local of every (window, target) used since the
 * last drain) when it is full, after RMCI_STAGE_OPS operations or when RMCI_STAGE_PAIRS distinct
 * pairs were used; a region that is freed is first dropped from the pairs (MPI_Win_unlock_all of
 * its window completes its operations), and rmc_finalize drains. Main thread only, as all of
 * comm/strided. */
#define RMCI_STAGE_BYTES (256u << 10) /* staging area */
#define RMCI_STAGE_OPS   256          /* operations between two drains */
#define RMCI_STAGE_PAIRS 16           /* distinct (region, target) pairs between two drains */

static struct {
    char *mem;
    size_t used;
    int nops, npairs;
    struct {
        rmci_region_t *r;
        int rank;
    } pair[RMCI_STAGE_PAIRS];
} stage;

/* Completes (locally) everything issued from the area and empties it. MPI errors are not
 * reported: the same pairs are flushed by the next fence, which reports them. */
static void stage_drain(void)
{
    for (int i = 0; i < stage.npairs; i++)
        (void)RMCI_MPI_ST(MPI_Win_flush_local,
                          (rmci_region_mrank(stage.pair[i].r, stage.pair[i].rank),
                           rmci_region_win(stage.pair[i].r)));
    if (stage.nops)
        RMCI_SSTAT(stage_drains);
    stage.used = 0;
    stage.nops = 0;
    stage.npairs = 0;
}

void rmci_stage_release(void)
{
    stage_drain();
    free(stage.mem);
    stage.mem = NULL;
}

void rmci_stage_forget(rmci_region_t *r)
{
    int o = 0;
    for (int i = 0; i < stage.npairs; i++)
        if (stage.pair[i].r != r)
            stage.pair[o++] = stage.pair[i];
    stage.npairs = o;
}

/* Room for `bytes` (16-byte aligned) to be sent to (r, rank), draining first when needed; NULL
 * when the area cannot be allocated (the caller takes the unstaged path). */
static char *stage_alloc(rmci_region_t *r, int rank, size_t bytes)
{
    if (RMCI_UNLIKELY(!stage.mem)) {
        stage.mem = rmci_malloc(RMCI_STAGE_BYTES);
        if (!stage.mem)
            return NULL;
    }
    size_t need = (bytes + 15) & ~(size_t)15;
    int known = 0;
    for (int i = stage.npairs - 1; i >= 0 && !known; i--)
        known = stage.pair[i].r == r && stage.pair[i].rank == rank;
    if (stage.used + need > RMCI_STAGE_BYTES || stage.nops >= RMCI_STAGE_OPS ||
        (!known && stage.npairs == RMCI_STAGE_PAIRS)) {
        stage_drain();
        known = 0;
    }
    if (!known) {
        stage.pair[stage.npairs].r = r;
        stage.pair[stage.npairs].rank = rank;
        stage.npairs++;
    }
    char *p = stage.mem + stage.used;
    stage.used += need;
    stage.nops++;
    return p;
}

/* Returns RMCI_STAGE_DECLINED when it cannot stage. */
rmc_status_t rmci_stage_acc(rmc_acc_type_t type, const void *scale, int scaled, const char *src,
                            const rmci_sdesc_t *d, const rmci_target_t *t, int proc,
                            MPI_Datatype base, size_t es)
{
    rmci_region_t *r = t->region;
    char *buf = stage_alloc(r, proc, d->bytes);
    if (!buf)
        return RMCI_STAGE_DECLINED;
    if (scaled)
        rmci_spack_scaled(type, scale, buf, src, d);
    else
        memcpy(buf, src, d->bytes);
    int n = (int)(d->bytes / es);
    RMCI_MPI(MPI_Accumulate, (buf, n, base, rmci_region_mrank(r, proc), t->disp, n, base, MPI_SUM,
                              rmci_region_win(r)));
    RMCI_SSTAT(contig_ops);
    RMCI_SSTAT(mpi_acc_ops);
    RMCI_SSTAT(staged_acc_ops);
    return rmci_mark(r, proc, rmci_acc_kind((unsigned)type), rmci_range(t->disp, d->bytes));
}
