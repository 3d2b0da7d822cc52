/* ga-compat: GA's printing functions (GA_Print, _patch, _file, _distribution, _stats,
 * GA_Summarize), byte for byte in GA 5.8.2's formats. GA prints in Fortran's view: dimensions in
 * reverse order, indices 1-based, the first index running fastest; a 2-D pretty print shows rows
 * of the last C dimension and columns of the first, in blocks of 6 columns (3 for single
 * complex). Process 0 fetches the patch and prints; the calls are collective (synced at both
 * ends) over the array's group except GA_Print_stats and GA_Summarize, which every process calls
 * on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

long gai_ncreate, gai_ndestroy;

/* ---------------------------------------------------------------- element values --- */

/* Element k of buf, a type-t buffer, as GA's pretty print shows it (leading space). */
static void pretty_value(FILE *f, int t, const void *buf, int64_t k)
{
    switch (t) {
    case C_INT:
        fprintf(f, " %8d", ((const int *)buf)[k]);
        break;
    case C_LONG:
        fprintf(f, " %8ld", ((const long *)buf)[k]);
        break;
    case C_LONGLONG:
        fprintf(f, " %8lld", ((const long long *)buf)[k]);
        break;
    case C_FLOAT:
        fprintf(f, " %11.5f", (double)((const float *)buf)[k]);
        break;
    case C_DBL: {
        double v = ((const double *)buf)[k];
        fprintf(f, v < 100000.0 ? " %11.5f" : " %.5e", v); /* GA's test: signed, not |v| */
        break;
    }
    case C_SCPL:
    case C_DCPL: {
        double re, im;
        if (t == C_SCPL)
            re = ((const float *)buf)[2 * k], im = ((const float *)buf)[2 * k + 1];
        else
            re = ((const double *)buf)[2 * k], im = ((const double *)buf)[2 * k + 1];
        fprintf(f, re < 100000.0 && im < 100000.0 ? " %11.5f,%11.5f" : " %.5e,%.5e", re, im);
        break;
    }
    }
}

/* Element k as GA's plain (pretty = 0) print shows it, after "name(i,j". */
static void plain_value(FILE *f, int t, const void *buf, int64_t k)
{
    switch (t) {
    case C_INT:
        fprintf(f, ") = %d\n", ((const int *)buf)[k]);
        break;
    case C_LONG:
        fprintf(f, ") = %ld\n", ((const long *)buf)[k]);
        break;
    case C_LONGLONG:
        fprintf(f, ") = %lld\n", ((const long long *)buf)[k]);
        break;
    case C_FLOAT:
        fprintf(f, ") = %f\n", (double)((const float *)buf)[k]);
        break;
    case C_DBL: {
        double v = ((const double *)buf)[k];
        fprintf(f, v < 100000.0 ? ") = %f\n" : ") = %e\n", v);
        break;
    }
    case C_SCPL:
    case C_DCPL: {
        double re, im;
        if (t == C_SCPL)
            re = ((const float *)buf)[2 * k], im = ((const float *)buf)[2 * k + 1];
        else
            re = ((const double *)buf)[2 * k], im = ((const double *)buf)[2 * k + 1];
        fprintf(f, re < 100000.0 && im < 100000.0 ? ") = (%f,%f)\n" : ") = (%e,%e)\n", re, im);
        break;
    }
    }
}

/* ------------------------------------------------------------------- patch print --- */

/* One 2-D slice of the patch in GA's pretty format: rows r (Fortran dimension 0, C dimension
 * nd-1) from rlo to rhi, columns c (C dimension 0) from clo to chi (1-based); element (r, c) is
 * buf[off + (c - clo) * cstride + (r - rlo)]. */
static void print_2d(FILE *f, int t, const void *buf, int64_t off, int64_t rlo, int64_t rhi,
                     int64_t clo, int64_t chi, int64_t cstride)
{
    int per = t == C_SCPL ? 3 : 6;
    for (int64_t j = clo; j <= chi; j += per) {
        int64_t jmax = j + per - 1 < chi ? j + per - 1 : chi;
        fprintf(f, "\n");
        const char *pre, *num, *dash;
        switch (t) {
        case C_DBL:
            pre = "   ", num = "%10ld  ", dash = " -----------";
            break;
        case C_SCPL:
        case C_DCPL:
            pre = "", num = "%22ld  ", dash = " -----------------------";
            break;
        default:
            pre = "     ", num = "%7ld  ", dash = " --------";
        }
        fputs(pre, f);
        for (int64_t jj = j; jj <= jmax; jj++)
            fprintf(f, num, (long)jj);
        fprintf(f, "\n      ");
        for (int64_t jj = j; jj <= jmax; jj++)
            fputs(dash, f);
        fprintf(f, "\n");
        for (int64_t i = rlo; i <= rhi; i++) {
            fprintf(f, "%4ld  ", (long)i);
            for (int64_t jj = j; jj <= jmax; jj++)
                pretty_value(f, t, buf, off + (jj - clo) * cstride + (i - rlo));
            fprintf(f, "\n");
        }
        fflush(f);
    }
}

/* Collective over the array's group: [lo, hi] (C order, 0-based inclusive) printed by process 0
 * to f, pretty or plain. */
static void print_patch(FILE *f, int g, const int64_t lo[], const int64_t hi[], int pretty,
                        const char *fn)
{
    gai_array_t *a = gai_array(g, fn);
    gai_numeric(a, fn);
    if (!f)
        gai_error(fn, "NULL file");
    gai_sync_group(a->pgroup, fn);
    int nd = a->ndim, t = a->type;
    for (int d = 0; d < nd; d++)
        if (lo[d] < 0 || lo[d] > hi[d] || hi[d] >= a->dims[d])
            gai_error(fn, "g_a indices out of range: dimension %d [%lld, %lld] of [0, %lld)", d,
                      (long long)lo[d], (long long)hi[d], (long long)a->dims[d]);
    if (gai_group(a->pgroup, fn)->me == 0) {
        int64_t ext[GA_MAX_DIM] = {0}, n = 1, ld[GA_MAX_DIM];
        for (int d = 0; d < nd; d++)
            ext[d] = hi[d] - lo[d] + 1, n *= ext[d];
        for (int d = 1; d < nd; d++)
            ld[d - 1] = ext[d];
        void *buf = malloc((size_t)n * a->esz);
        if (!buf)
            gai_error(fn, "out of memory for a patch of %lld elements", (long long)n);
        int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
        for (int d = 0; d < nd; d++)
            l[d] = lo[d], h[d] = hi[d] + 1;
        gai_xfer(a, 'g', l, h, buf, ld, NULL, NULL, fn);
        /* Fortran view: F dimension k is C dimension nd-1-k, 1-based */
        int64_t flo[GA_MAX_DIM], fhi[GA_MAX_DIM];
        for (int k = 0; k < nd; k++)
            flo[k] = lo[nd - 1 - k] + 1, fhi[k] = hi[nd - 1 - k] + 1;
        fprintf(f, "\n global array: %s[", a->name);
        for (int k = 0; k < nd; k++)
            fprintf(f, k < nd - 1 ? "%ld:%ld," : "%ld:%ld", (long)flo[k], (long)fhi[k]);
        fprintf(f, "],  handle: %d \n", g);
        if (!pretty) {
            /* C row-major order is Fortran's first-index-fastest */
            int64_t idx[GA_MAX_DIM];
            for (int k = 0; k < nd; k++)
                idx[k] = flo[k];
            for (int64_t e = 0; e < n; e++) {
                fprintf(f, "%s(", a->name);
                for (int k = 0; k < nd; k++)
                    fprintf(f, k < nd - 1 ? "%ld," : "%ld", (long)idx[k]);
                plain_value(f, t, buf, e);
                for (int k = 0; k < nd && ++idx[k] > fhi[k]; k++)
                    idx[k] = flo[k];
            }
            fflush(f);
        } else if (nd == 1) {
            for (int64_t i = 0; i < n; i++) {
                fprintf(f, "%4ld  ", (long)(flo[0] + i));
                pretty_value(f, t, buf, i);
                fprintf(f, "\n");
            }
            fflush(f);
        } else {
            /* slices over F dimensions 2.. (the first fastest); a slice is ext[nd-1] * ext[nd-2]
             * consecutive elements */
            int64_t slice = ext[nd - 1] * ext[nd - 2], nslice = n / slice;
            int64_t idx[GA_MAX_DIM];
            for (int k = 2; k < nd; k++)
                idx[k] = flo[k];
            for (int64_t s = 0; s < nslice; s++) {
                if (nd > 2) {
                    fprintf(f, "\n -- patch: %s[%ld:%ld,%ld:%ld", a->name, (long)flo[0],
                            (long)fhi[0], (long)flo[1], (long)fhi[1]);
                    for (int k = 2; k < nd; k++)
                        fprintf(f, ",%ld", (long)idx[k]);
                    fprintf(f, "]\n");
                }
                print_2d(f, t, buf, s * slice, flo[0], fhi[0], flo[1], fhi[1], ext[nd - 1]);
                for (int k = 2; k < nd && ++idx[k] > fhi[k]; k++)
                    idx[k] = flo[k];
            }
        }
        free(buf);
    }
    gai_sync_group(a->pgroup, fn);
}

/* Collective: the whole array, pretty, on stdout. */
void GA_Print(int g_a)
{
    GA_Print_file(stdout, g_a);
}

/* Collective: the whole array, pretty, on file. */
void GA_Print_file(FILE *file, int g_a)
{
    const char *fn = "GA_Print_file";
    gai_array_t *a = gai_array(g_a, fn);
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        lo[d] = 0, hi[d] = a->dims[d] - 1;
    print_patch(file, g_a, lo, hi, 1, fn);
}

/* Collective: rows [ilo, ihi] and columns [jlo, jhi] (0-based) of a 2-D array. (GA 5.8.2's own
 * GA_Print_patch garbles the column range and aborts unless jlo = jhi = 0.) */
void GA_Print_patch(int g_a, int ilo, int ihi, int jlo, int jhi, int pretty)
{
    const char *fn = "GA_Print_patch";
    gai_array_t *a = gai_array(g_a, fn);
    if (a->ndim != 2)
        gai_error(fn, "array '%s' has %d dimensions (2 expected)", a->name, a->ndim);
    int64_t lo[2] = {ilo, jlo}, hi[2] = {ihi, jhi};
    print_patch(stdout, g_a, lo, hi, pretty, fn);
}

/* Collective: the patch [lo, hi] on stdout. */
void NGA_Print_patch(int g_a, int lo[], int hi[], int pretty)
{
    const char *fn = "NGA_Print_patch";
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi)
        gai_error(fn, "NULL lo or hi");
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        l[d] = lo[d], h[d] = hi[d];
    print_patch(stdout, g_a, l, h, pretty, fn);
}

void NGA_Print_patch64(int g_a, int64_t lo[], int64_t hi[], int pretty)
{
    const char *fn = "NGA_Print_patch64";
    gai_array(g_a, fn);
    if (!lo || !hi)
        gai_error(fn, "NULL lo or hi");
    print_patch(stdout, g_a, lo, hi, pretty, fn);
}

/* ------------------------------------------------------------------ distribution --- */

static const char *dist_type_name(int t)
{
    switch (t) {
    case C_INT:
        return "integer";
    case C_LONG:
        return "long";
    case C_LONGLONG:
        return "long long";
    case C_FLOAT:
        return "float";
    case C_DBL:
        return "double";
    case C_SCPL:
        return "float (single) complex";
    default:
        return "double complex";
    }
}

/* "[l0:h0,l1:h1] " in C order, 0-based inclusive. */
static void print_section(FILE *f, int nd, const int64_t lo[], const int64_t hi[])
{
    fprintf(f, "[");
    for (int d = 0; d < nd; d++)
        fprintf(f, d < nd - 1 ? "%ld:%ld," : "%ld:%ld", (long)lo[d], (long)hi[d]);
    fprintf(f, "] \n");
}

/* Collective: process 0 prints who owns what: each process's block, or each process's blocks of
 * a block-cyclic array (GA 5.8.2 reuses its process loop's variable there: it prints process 0
 * only, or loops forever at 4 processes; on ScaLAPACK-style arrays it crashes, so their block
 * lines are ga-compat's). */
void GA_Print_distribution(int g_a)
{
    const char *fn = "GA_Print_distribution";
    gai_array_t *a = gai_array(g_a, fn);
    gai_sync_group(a->pgroup, fn);
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (g->me == 0) {
        int nd = a->ndim;
        printf("Array Handle=%d Name:'%s' ", g_a, a->name);
        printf("Data Type:%s\n", dist_type_name(a->type));
        printf("Array Dimensions:");
        for (int d = 0; d < nd; d++)
            printf(d < nd - 1 ? "%ldx" : "%ld\n", (long)a->dims[d]);
        int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
        if (a->dkind == GAI_D_DEFAULT || a->dkind == GAI_D_IRREG) {
            for (int p = 0; p < g->size; p++) {
                NGA_Distribution64(g_a, p, lo, hi);
                printf("Process=%d\t owns array section: ", p);
                print_section(stdout, nd, lo, hi);
            }
        } else {
            if (a->dkind == GAI_D_BLOCK_CYCLIC) {
                printf("\nDistribution is block-cyclic\n");
                printf("\nTotal of %ld blocks on %ld processors\n", (long)a->nblocks,
                       (long)g->size);
            } else {
                printf("\nDistribution is %s\n", a->dkind == GAI_D_TILED_IRREG ? "Tiled Irregular"
                                                 : a->tiled                    ? "Tiled"
                                                                               : "ScaLAPACK");
                printf("\nNumber of blocks in each dimension: [");
                for (int d = 0; d < nd; d++)
                    printf(d < nd - 1 ? "%ld," : "%ld]\n", (long)a->block_grid[d]);
                printf("\nProcessor grid dimensions: [");
                for (int d = 0; d < nd; d++)
                    printf(d < nd - 1 ? "%ld," : "%ld]\n", (long)a->pgrid[d]);
                printf("\n");
            }
            for (int p = 0; p < g->size; p++) {
                printf("Distribution on process %ld\n", (long)p);
                for (int64_t t = 0; t < a->nblocks; t++) {
                    int owner;
                    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], tc[GA_MAX_DIM];
                    gai_check(rmc_dist_tile(a->dist, t, l, h, &owner), fn, "rmc_dist_tile");
                    if (owner != g->ranks[p])
                        continue;
                    gai_check(rmc_dist_tile_coords(a->dist, t, tc), fn, "rmc_dist_tile_coords");
                    int64_t b = 0; /* GA numbers blocks in C order */
                    for (int d = 0; d < nd; d++) {
                        b = b * a->block_grid[d] + tc[d];
                        lo[d] = l[d], hi[d] = h[d] - 1;
                    }
                    if (a->dkind == GAI_D_BLOCK_CYCLIC) {
                        printf("  Block=%d\t corresponds to array section: ", (int)b);
                    } else {
                        printf(" idx: %ld Block=[", (long)b);
                        for (int d = 0; d < nd; d++)
                            printf(d < nd - 1 ? "%ld," : "%ld]", (long)tc[d]);
                        printf("\t corresponds to array section: ");
                    }
                    print_section(stdout, nd, lo, hi);
                }
            }
        }
        fflush(stdout);
    }
    gai_sync_group(a->pgroup, fn);
}

/* ---------------------------------------------------------------------- summaries --- */

/* Local (every process prints): GA's operation counts of this process. create / destroy count
 * the arrays this process created and destroyed; bytes are those of put / get / acc requests
 * (ga-compat does not split them into local and remote, so both rows show the total; scatter and
 * gather bytes are not counted: 0). */
void GA_Print_stats(void)
{
    gai_up("GA_Print_stats");
    printf("\n                         GA Statistics for process %4d\n", gai.me);
    printf("                         ------------------------------\n\n");
    printf("       create   destroy   get      put      acc     scatter   gather  read&inc\n");
    long calls[8] = {gai_ncreate, gai_ndestroy, gai.nget,    gai.nput,
                     gai.nacc,    gai.nscatter, gai.ngather, gai.nrdi};
    printf("calls: ");
    for (int i = 0; i < 8; i++)
        printf("%4ld     ", calls[i]);
    printf("\n");
    printf("number of processes/call %.2e %.2e %.2e %.2e %.2e\n", 0.0, 0.0, 0.0, 0.0, 0.0);
    double rdi = (double)gai.nrdi * (double)sizeof(long);
    printf("bytes total:             %.2e %.2e %.2e %.2e %.2e %.2e\n", gai.bget, gai.bput, gai.bacc,
           0.0, 0.0, rdi);
    printf("bytes remote:            %.2e %.2e %.2e %.2e %.2e %.2e\n", gai.bget, gai.bput, gai.bacc,
           0.0, 0.0, rdi);
    printf("Max memory consumed for GA by this process: %ld bytes\n", (long)gai.mem_used);
    fflush(stdout);
}

static const char *summary_type_name(int t)
{
    switch (t) {
    case C_INT:
        return "integer ";
    case C_LONG:
        return "long ";
    case C_LONGLONG:
        return "long long"; /* (GA's: no space before the name) */
    case C_FLOAT:
        return "float ";
    case C_DBL:
        return "double precision ";
    case C_SCPL:
        return "float (single) complex ";
    default:
        return "double complex ";
    }
}

/* Local (every process prints): the arrays alive, Fortran's view; verbose adds each process's
 * block (its first one for block-cyclic arrays). */
void GA_Summarize(int verbose)
{
    gai_up("GA_Summarize");
    printf(" Summary of allocated global arrays\n");
    printf("-----------------------------------\n");
    int any = 0; /* GA numbers the arrays alive from 0 */
    for (int i = 0; i < gai.narrays; i++) {
        gai_array_t *a = gai.arrays[i];
        if (!a || !a->live || !a->allocated || a->getmem) /* (GA_Getmem blocks: no array in GA) */
            continue;
        int nd = a->ndim;
        printf("  array %d => %s%s(", any++, summary_type_name(a->type), a->name);
        for (int k = 0; k < nd; k++)
            printf(k < nd - 1 ? "%ld," : "%ld", (long)a->dims[nd - 1 - k]);
        printf("),  handle: %d \n", a->handle);
        if (!verbose)
            continue;
        gai_group_t *g = gai_group(a->pgroup, "GA_Summarize");
        for (int p = 0; p < g->size; p++) {
            int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
            NGA_Distribution64(a->handle, p, lo, hi);
            printf("    (");
            for (int k = 0; k < nd; k++)
                printf(k < nd - 1 ? "%ld:%ld," : "%ld:%ld", (long)lo[nd - 1 - k] + 1,
                       (long)hi[nd - 1 - k] + 1);
            printf(") -> %d \n", p);
        }
    }
    if (!any)
        printf("  No active global arrays\n");
    printf("\n\n");
    fflush(stdout);
}
