/* The datatype and pack protocols of remote strided transfers: the target side is a (cached)
 * nested hvector; the origin side is a packed buffer, the user's buffer as one block when it is
 * dense, or a cached datatype. A patch is cut along its levels into pieces of at most
 * RMCI_DT_PIECE bytes (strided_rt.h). */
#include "config.h"
#include "strided_rt.h"

/* 1 when strides `str` are the packed (dense) layout of d: that side is one contiguous block. */
int rmci_side_dense(const rmci_sdesc_t *d, const size_t *str)
{
    size_t s = d->l0;
    for (int k = 1; k <= d->levels; k++) {
        if (str[k - 1] != s)
            return 0;
        s *= d->cnt[k];
    }
    return 1;
}

/* One piece: local side at loff (contiguous when `packed`, else shaped by lstr), remote side at
 * disp (shaped by rstr), with the shape of `p`. */
static int issue_piece(int kind, const rmci_sdesc_t *p, const size_t *lstr, const size_t *rstr,
                       char *local, int packed, MPI_Datatype base, size_t es, int proc,
                       MPI_Aint disp, MPI_Win win)
{
    int nbase = (int)(p->l0 / es), ntot = (int)(p->bytes / es);
    if (p->levels == 0)
        return rmci_issue1(kind, local, nbase, base, proc, disp, nbase, base, win, NULL);
    MPI_Datatype tt, ot;
    int rc = rmci_dt_cached(p, rstr, base, nbase, &tt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (packed || rmci_side_dense(p, lstr))
        return rmci_issue1(kind, local, ntot, base, proc, disp, 1, tt, win, NULL);
    rc = rmci_dt_cached(p, lstr, base, nbase, &ot);
    if (rc != MPI_SUCCESS)
        return rc;
    return rmci_issue1(kind, local, 1, ot, proc, disp, 1, tt, win, NULL);
}

/* Datatype / pack protocols: the target side is a (cached) nested hvector; the origin side is the
 * packed buffer (packed = 1), the user's buffer as one block when it is dense, or a cached
 * datatype. Split along the levels into pieces of at most RMCI_DT_PIECE bytes. */
int rmci_issue_typed(int kind, const rmci_sdesc_t *d, const size_t *lstr, const size_t *rstr,
                     char *local, int packed, MPI_Datatype base, size_t es, int proc, MPI_Aint disp,
                     MPI_Win win)
{
    /* k: highest level whose whole blocks fit in a piece (blk bytes each) */
    int k = 0;
    size_t blk = d->l0;
    while (k < d->levels && blk * d->cnt[k + 1] <= RMCI_DT_PIECE)
        blk *= d->cnt[++k];
    if (k == d->levels)
        return issue_piece(kind, d, lstr, rstr, local, packed, base, es, proc, disp, win);
    /* pieces: g level-k blocks along level k+1 (the last group of a row may be shorter) */
    size_t c1 = d->cnt[k + 1];
    size_t g = RMCI_DT_PIECE / blk;
    if (g < 1)
        g = 1;
    rmci_sdesc_t p = *d;
    size_t lk = k < d->levels ? lstr[k] : 0, rk = rstr[k];
    rmci_odo_t o; /* outer levels k+2..L: a = local offset, b = remote offset */
    rmci_odo_init(&o);
    size_t po = 0; /* packed offset */
    do {
        for (size_t j = 0; j < c1; j += g) {
            size_t n = c1 - j < g ? c1 - j : g;
            p.levels = n > 1 ? k + 1 : k;
            p.cnt[k + 1] = n;
            p.nchunks = (blk / d->l0) * n;
            p.bytes = blk * n;
            char *l = packed ? local + po : local + o.a + j * lk;
            int rc = issue_piece(kind, &p, lstr, rstr, l, packed, base, es, proc,
                                 disp + (MPI_Aint)(o.b + j * rk), win);
            if (rc != MPI_SUCCESS)
                return rc;
            po += blk * n;
        }
    } while (rmci_odo_next(&o, d, k + 2, lstr, rstr));
    return MPI_SUCCESS;
}
