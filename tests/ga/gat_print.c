/* ga-compat's printing, compared byte for byte with GA 5.8.2: GA_Print, GA_Print_file,
 * NGA_Print_patch (pretty and plain) and GA_Print_patch of every type on 1-4 dimensions, rows that
 * wrap into column blocks, values on both sides of GA's fixed / exponent switch, regular,
 * irregular and block-cyclic arrays; GA_Print_distribution; GA_Summarize; GA_Print_stats' table
 * (its counts are ga-compat's own, printed as comments). Output every process makes (stats,
 * summaries) is captured, and rank 0's is printed. */
#include <unistd.h>
#include "gatest.h"

static const int types[GAT_NT] = {C_INT, C_LONG, C_LONGLONG, C_FLOAT, C_DBL, C_SCPL, C_DCPL};

/* element i of a test array of type t (seed s): negative and positive, doubles and complex
 * crossing 1e5 (GA switches to %e at 100000) */
static void setv(int t, void *p, long i, int s)
{
    double v = (double)((i * 7 + s) % 23) * 0.25 - 2.5;
    double big = (double)((i * 5 + s) % 11) * 25000.0 - 60000.0 + v;
    switch (t) {
    case C_INT:
        *(int *)p = (int)(i * 3 + s) - 20;
        break;
    case C_LONG:
        *(long *)p = (i * 100003L + s) * (i % 2 ? -1 : 1) * 100000L;
        break;
    case C_LONGLONG:
        *(long long *)p = (long long)i * 7 - 30 + s;
        break;
    case C_FLOAT:
        *(float *)p = (float)(v * 4.5);
        break;
    case C_DBL:
        *(double *)p = big;
        break;
    case C_SCPL:
        ((float *)p)[0] = (float)big, ((float *)p)[1] = (float)(v - big / 2);
        break;
    default:
        ((double *)p)[0] = v, ((double *)p)[1] = big * 1.5;
    }
}

/* rank 0 fills the whole array; then a sync */
static void fill(int g, int s)
{
    int t, nd, dims[GA_MAX_DIM];
    NGA_Inquire(g, &t, &nd, dims);
    if (gat_me == 0) {
        int lo[GA_MAX_DIM], hi[GA_MAX_DIM], ld[GA_MAX_DIM];
        long n = 1;
        for (int d = 0; d < nd; d++)
            lo[d] = 0, hi[d] = dims[d] - 1, n *= dims[d];
        for (int d = 1; d < nd; d++)
            ld[d - 1] = dims[d];
        char *buf = malloc((size_t)n * gat_tsize(t));
        for (long i = 0; i < n; i++)
            setv(t, buf + (size_t)i * gat_tsize(t), i, s);
        NGA_Put(g, lo, hi, buf, ld);
        free(buf);
    }
    GA_Sync();
}

/* ------------------------------------------------------------------- capturing --- */
static int cap_fd = -1;
static FILE *cap_file;

static void capture_begin(void)
{
    fflush(stdout);
    cap_file = tmpfile();
    cap_fd = dup(1);
    dup2(fileno(cap_file), 1);
}

/* mode 'c': rank 0's lines compared; '#': as comments; 's': GA_Print_stats (the counts are
 * ga-compat's own: comments). Returns the number of lines. */
static int capture_end(int mode)
{
    fflush(stdout);
    dup2(cap_fd, 1);
    close(cap_fd);
    rewind(cap_file);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, cap_file)) {
        n++;
        if (gat_me != 0)
            continue;
        int comment = mode == '#' ||
                      (mode == 's' && (!strncmp(line, "calls:", 6) || !strncmp(line, "bytes", 5) ||
                                       !strncmp(line, "number of", 9) || !strncmp(line, "Max", 3)));
        printf("%s%s", comment ? "# " : "", line);
    }
    fflush(stdout);
    fclose(cap_file);
    return n;
}

/* ------------------------------------------------------------------------ tests --- */

/* every type, 1-4 dimensions: whole arrays and patches that span blocks, pretty and plain */
static void types_nd(void)
{
    for (int k = 0; k < GAT_NT; k++) {
        int t = types[k];
        int d1[1] = {7}, d2[2] = {9, 14}, d3[3] = {3, 4, 5}, d4[4] = {2, 2, 3, 3};
        int g1 = NGA_Create(t, 1, d1, "vec", NULL);
        int g2 = NGA_Create(t, 2, d2, "mat", NULL);
        int g3 = NGA_Create(t, 3, d3, "cube", NULL);
        int g4 = NGA_Create(t, 4, d4, "four d", NULL);
        fill(g1, k), fill(g2, k + 1), fill(g3, k + 2), fill(g4, k + 3);
        gat_out("# type %d", t);
        GA_Print(g1);
        GA_Print(g2);
        GA_Print(g3);
        GA_Print(g4);
        GA_Print_file(stdout, g2);
        int l1[1] = {2}, h1[1] = {5};
        NGA_Print_patch(g1, l1, h1, 0);
        NGA_Print_patch(g1, l1, h1, 1);
        int l2[2] = {1, 2}, h2[2] = {7, 12};
        NGA_Print_patch(g2, l2, h2, 1);
        NGA_Print_patch(g2, l2, h2, 0);
        int l3[3] = {1, 0, 2}, h3[3] = {2, 3, 4};
        NGA_Print_patch(g3, l3, h3, 1);
        NGA_Print_patch(g3, l3, h3, 0);
        int64_t l4[4] = {1, 0, 1, 0}, h4[4] = {1, 1, 2, 2};
        NGA_Print_patch64(g4, l4, h4, 1);
        NGA_Print_patch64(g4, l4, h4, 0);
        /* GA_Print_patch: GA 5.8.2's is right only for jlo = jhi = 0 */
        GA_Print_patch(g2, 3, 6, 0, 0, 1);
        GA_Print_patch(g2, 0, 8, 0, 0, 0);
#ifdef GAT_PEER
        int pl[2] = {2, 4}, ph[2] = {5, 13};
        NGA_Print_patch(g2, pl, ph, 1);
        NGA_Print_patch(g2, pl, ph, 0);
        gat_out("# GA bug: GA_Print_patch(g, 2, 5, 4, 13): GA 5.8.2 prints the column range as "
                "[jhi+1:1] and aborts; printed with NGA_Print_patch instead");
#else
        GA_Print_patch(g2, 2, 5, 4, 13, 1);
        GA_Print_patch(g2, 2, 5, 4, 13, 0);
#endif
        GA_Destroy(g1);
        GA_Destroy(g2);
        GA_Destroy(g3);
        GA_Destroy(g4);
    }
}

/* GA_Print_distribution of a 2-D block-cyclic array: GA 5.8.2 reuses its process loop's
 * variable for the dimensions (process 0 only, or an endless loop at 4 processes), so the peer
 * prints the reference built from GA_Get_block_info; ga-compat's text must equal it. */
static void cyclic_distribution(int g, int t)
{
    static const char *tn[] = {"integer",       "long",   "long long",
                               "float",         "double", "float (single) complex",
                               "double complex"};
    int k = 0;
    while (types[k] != t)
        k++;
    int nb[2], bd[2], dims[2], nd, ty;
    NGA_Inquire(g, &ty, &nd, dims);
    GA_Get_block_info(g, nb, bd);
    char name[64] = "";
    char *nm = GA_Inquire_name(g);
    snprintf(name, sizeof name, "%s", nm);
    char *ref = malloc(65536);
    int r =
        snprintf(ref, 65536,
                 "Array Handle=%d Name:'%s' Data Type:%s\nArray Dimensions:%dx%d\n\nDistribution "
                 "is block-cyclic\n\nTotal of %d blocks on %d processors\n",
                 g, name, tn[k], dims[0], dims[1], nb[0] * nb[1], gat_np);
    for (int p = 0; p < gat_np; p++) {
        r += snprintf(ref + r, 65536 - (size_t)r, "Distribution on process %d\n", p);
        for (int b = p; b < nb[0] * nb[1]; b += gat_np) {
            int i = b / nb[1], j = b % nb[1];
            int hi0 = (i + 1) * bd[0] - 1, hi1 = (j + 1) * bd[1] - 1;
            r += snprintf(ref + r, 65536 - (size_t)r,
                          "  Block=%d\t corresponds to array section: [%d:%d,%d:%d] \n", b,
                          i * bd[0], hi0 < dims[0] ? hi0 : dims[0] - 1, j * bd[1],
                          hi1 < dims[1] ? hi1 : dims[1] - 1);
        }
    }
#ifdef GAT_PEER
    if (gat_me == 0) {
        fputs(ref, stdout);
        fflush(stdout);
    }
    gat_out("ok block-cyclic distribution");
    gat_out("# GA bug: GA_Print_distribution of a block-cyclic array reuses the process loop's "
            "variable (process 0 only, or an endless loop at 4 processes): reference printed");
#else
    capture_begin();
    GA_Print_distribution(g);
    fflush(stdout);
    fflush(cap_file);
    rewind(cap_file);
    char *got = calloc(1, 65536);
    size_t n = fread(got, 1, 65535, cap_file);
    got[n] = 0;
    fseek(cap_file, 0, SEEK_END);
    capture_end('c');
    gat_check(gat_me != 0 || !strcmp(got, ref), "block-cyclic distribution");
    free(got);
#endif
    free(ref);
}

/* irregular and block-cyclic arrays: their prints and distributions */
static void distributions(void)
{
    int dims[2] = {10, 7};
    int map[8], nb[2], m = 0; /* 2 x 2 blocks, or np x 1 */
    int rows[3] = {0, 3, 7};
    nb[0] = gat_np >= 4 ? 2 : gat_np < 3 ? gat_np : 3;
    nb[1] = gat_np >= 4 ? 2 : 1;
    for (int i = 0; i < nb[0]; i++)
        map[m++] = rows[i];
    map[m++] = 0;
    if (nb[1] == 2)
        map[m++] = 5;
    for (int k = 0; k < GAT_NT; k += 2) {
        int t = types[k];
        int gi = NGA_Create_irreg(t, 2, dims, "irregular", nb, map);
        fill(gi, k);
        GA_Print(gi);
        GA_Print_distribution(gi);
        int gb = GA_Create_handle();
        GA_Set_data(gb, 2, dims, t);
        int bs[2] = {3, 2};
        GA_Set_block_cyclic(gb, bs);
        GA_Set_array_name(gb, "cyclic");
        GA_Allocate(gb);
        fill(gb, k + 1);
        GA_Print(gb);
        int lo[2] = {2, 1}, hi[2] = {8, 5};
        NGA_Print_patch(gb, lo, hi, 0);
        cyclic_distribution(gb, t);
        int gr = NGA_Create(t, 2, dims, "regular", NULL);
        GA_Print_distribution(gr);
        int one[1] = {1};
        int gt = NGA_Create(t, 1, one, "tiny", NULL); /* processes that own nothing */
        GA_Print_distribution(gt);
        capture_begin();
        GA_Summarize(0);
        GA_Summarize(1);
        capture_end('c');
        /* ScaLAPACK-style: GA 5.8.2's GA_Print_distribution crashes on them */
        int gs = GA_Create_handle();
        GA_Set_data(gs, 2, dims, t);
        int pg[2] = {1, gat_np};
        GA_Set_block_cyclic_proc_grid(gs, bs, pg);
        GA_Set_array_name(gs, "scalapack");
        GA_Allocate(gs);
        fill(gs, k + 2);
        GA_Print(gs);
#ifndef GAT_PEER
        capture_begin();
        GA_Print_distribution(gs);
        int n = capture_end('#');
        gat_check(gat_me != 0 || n == 9 + gat_np + 16, "scalapack dist");
#else
        gat_out("ok scalapack dist");
        gat_out("# GA bug: GA_Print_distribution segfaults on ScaLAPACK-style arrays");
#endif
        GA_Destroy(gr); /* a hole: GA numbers the arrays alive */
        capture_begin();
        GA_Summarize(1);
        capture_end('c');
        GA_Destroy(gs);
        GA_Destroy(gt);
        GA_Destroy(gb);
        GA_Destroy(gi);
    }
    capture_begin();
    GA_Summarize(1);
    capture_end('c');
}

/* GA_Print's text for a small int array, checked against the expected text */
static void exact_text(void)
{
    int d[1] = {3};
    int g = NGA_Create(C_INT, 1, d, "ex", NULL);
    int v = -4;
    GA_Fill(g, &v);
    capture_begin();
    GA_Print(g);
    fflush(stdout);
    char want[256];
    snprintf(want, sizeof want,
             "\n global array: ex[1:3],  handle: %d \n   1         -4\n   2         -4\n   3    "
             "     -4\n",
             g);
    char got[256] = {0};
    fflush(cap_file);
    rewind(cap_file);
    size_t r = fread(got, 1, sizeof got - 1, cap_file);
    got[r] = 0;
    fseek(cap_file, 0, SEEK_END);
    capture_end('#');
    gat_check(gat_me != 0 || !strcmp(got, want), "GA_Print text");
    GA_Destroy(g);
}

static void stats(void)
{
    capture_begin();
    GA_Print_stats();
    int n = capture_end('s');
    gat_check(gat_me != 0 || n == 10, "GA_Print_stats lines");
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    capture_begin();
    GA_Summarize(1); /* nothing alive */
    capture_end('c');
    exact_text();
    types_nd();
    distributions();
    stats();
    return gat_finish();
}
