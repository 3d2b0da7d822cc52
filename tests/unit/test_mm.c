/* Matrix Market input and output (rmc/csr.h): exact round trips, every supported header variant
 * against its expected matrix, and malformed or unreadable files, each with its status and a
 * message naming the path and the line. One process, no MPI; files in a fresh temporary folder. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include "csr_util.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rmc_test_mm.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* dir/name with len bytes of text; returns the path (static until the next call). */
static const char *file_n(const char *name, const char *text, size_t len)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

static const char *file(const char *name, const char *text)
{
    return file_n(name, text, strlen(text));
}

/* ------------------------------------------------------------------ round trips --- */

static void test_roundtrip(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/rt.mtx", dir);
    const double special[] = {0.0,  -0.0,     1e300,       -1e-300,  4.9406564584124654e-324,
                              M_PI, -1.0 / 3, 0.1,         INFINITY, -INFINITY,
                              NAN,  1e22,     123456789.0, -2.5e-17};
    for (int w = 0; w < 2; w++) {
        rmc_csr_t a, b, c;
        tu_random(&a, 60, 45, 0.15, 0.2, 900 + (uint64_t)w, w, 0);
        for (int64_t k = 0; k < a.nnz && k < 14; k++)
            a.val[k * 3 % a.nnz] = special[k];
        assert_int_equal(rmc_csr_write_mm(&a, path), RMC_OK);
        assert_int_equal(rmc_csr_read_mm(&b, path, w), RMC_OK);
        assert_int_equal(rmc_csr_read_mm(&c, path, !w), RMC_OK);
        assert_int_equal(b.idx64, w);
        assert_int_equal(c.idx64, !w);
        tu_assert_same(&a, &b); /* bit for bit: -0, subnormals, infinities, NaN */
        tu_assert_same(&a, &c);
        rmc_csr_free(&a);
        rmc_csr_free(&b);
        rmc_csr_free(&c);
        /* the file starts with the banner */
        FILE *f = fopen(path, "r");
        char line[128];
        assert_non_null(fgets(line, sizeof line, f));
        fclose(f);
        assert_string_equal(line, "%%MatrixMarket matrix coordinate real general\n");
    }
    /* empty shapes */
    const int64_t shapes[][2] = {{0, 0}, {3, 0}, {0, 5}, {4, 4}};
    for (int t = 0; t < 4; t++) {
        rmc_csr_t a, b;
        assert_int_equal(
            rmc_csr_from_coo(&a, shapes[t][0], shapes[t][1], 0, NULL, NULL, NULL, 1, t & 1),
            RMC_OK);
        assert_int_equal(rmc_csr_write_mm(&a, path), RMC_OK);
        assert_int_equal(rmc_csr_read_mm(&b, path, t & 1), RMC_OK);
        tu_assert_same(&a, &b);
        rmc_csr_free(&a);
        rmc_csr_free(&b);
    }
    rmc_csr_t e, b;
    rmc_csr_init(&e, 0); /* rmc_csr_init's matrix writes as 0 x 0 */
    assert_int_equal(rmc_csr_write_mm(&e, path), RMC_OK);
    assert_int_equal(rmc_csr_read_mm(&b, path, 0), RMC_OK);
    assert_true(b.nrows == 0 && b.ncols == 0 && b.nnz == 0);
    rmc_csr_free(&b);
}

/* ----------------------------------------------------------------- the variants --- */

typedef struct {
    int64_t i, j;
    double v;
} ent_t;

/* Reads text and compares with the expected entries (in row-major order) exactly. */
static void expect(const char *text, int64_t m, int64_t n, const ent_t *e, int64_t ne)
{
    for (int w = 0; w < 2; w++) {
        rmc_csr_t a;
        const char *path = file("v.mtx", text);
        if (rmc_csr_read_mm(&a, path, w) != RMC_OK)
            fail_msg("%s\n-> %s", text, rmc_last_error());
        assert_int_equal(rmc_csr_check(&a), RMC_OK);
        assert_int_equal(a.nrows, m);
        assert_int_equal(a.ncols, n);
        assert_int_equal(a.nnz, ne);
        for (int64_t i = 0, k = 0; i < m; i++)
            for (int64_t p = rmc_csr_rowptr(&a, i); p < rmc_csr_rowptr(&a, i + 1); p++, k++) {
                assert_int_equal(i, e[k].i);
                assert_int_equal(rmc_csr_colind(&a, p), e[k].j);
                assert_memory_equal(&a.val[p], &e[k].v, sizeof(double));
            }
        rmc_csr_free(&a);
    }
}

static void test_variants(void **state)
{
    (void)state;
    /* real general: comments, blank lines, a duplicate summed, an explicit zero kept */
    const ent_t g[] = {{0, 0, 1.75}, {1, 1, 0.0}, {2, 3, -2e3}};
    expect("%%MatrixMarket matrix coordinate real general\n% a comment\n\n%another\n3 4 4\n"
           "1 1 1.5\n3 4 -2e3\n\n2 2 0\n% between entries\n1 1 0.25\n",
           3, 4, g, 3);
    /* case-insensitive words, CRLF, tabs, leading and trailing blanks */
    const ent_t crlf[] = {{1, 2, 7}};
    expect("%%MatrixMarket MATRIX Coordinate Real General\r\n3\t3\t1\r\n  2\t3 7  \r\n", 3, 3, crlf,
           1);
    const ent_t in[] = {{0, 1, -5}, {1, 0, 7}};
    expect("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -5\n2 1 +7\n", 2, 2, in,
           2);
    const ent_t pat[] = {{0, 2, 1}, {1, 0, 1}};
    expect("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n2 1\n1 3\n", 2, 3, pat, 2);
    /* symmetric: mirrored, the diagonal once */
    const ent_t sym[] = {{0, 0, 2}, {0, 1, 3}, {0, 2, 4}, {1, 0, 3}, {2, 0, 4}, {2, 2, 5}};
    expect("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 3\n3 1 4\n3 3 5\n",
           3, 3, sym, 6);
    const ent_t isym[] = {{0, 1, -3}, {1, 0, -3}};
    expect("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n2 1 -3\n", 2, 2, isym, 2);
    const ent_t psym[] = {{0, 1, 1}, {1, 0, 1}, {2, 2, 1}};
    expect("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", 3, 3, psym, 3);
    /* skew-symmetric: mirrored negated; a zero diagonal entry is allowed */
    const ent_t skew[] = {{0, 1, -3}, {1, 0, 3}, {1, 2, 1.5}, {2, 1, -1.5}, {2, 2, 0}};
    expect("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 3\n3 2 -1.5\n3 3 0\n",
           3, 3, skew, 5);
    /* array: column-major, zeros dropped */
    const ent_t arr[] = {{0, 0, 1}, {0, 2, -3}, {1, 1, 2.5}, {1, 2, 4}};
    expect("%%MatrixMarket matrix array real general\n% c\n2 3\n1\n0\n0\n2.5\n-3\n4\n", 2, 3, arr,
           4);
    const ent_t iarr[] = {{1, 0, 9}};
    expect("%%MatrixMarket matrix array integer general\n2 1\n0\n9\n", 2, 1, iarr, 1);
    expect("%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0, 0, NULL, 0);
    expect("%%MatrixMarket matrix coordinate real general\n5 2 0\n% nothing\n", 5, 2, NULL, 0);
}

/* ------------------------------------------------------------------ malformed --- */

#define BAN "%%MatrixMarket matrix coordinate real general\n"
#define SYM "%%MatrixMarket matrix coordinate real symmetric\n"

static void bad(const char *text, size_t len, int idx64, rmc_status_t st, const char *what)
{
    rmc_csr_t a;
    const char *path = file_n("bad.mtx", text, len);
    rmc_last_error_clear();
    rmc_status_t got = rmc_csr_read_mm(&a, path, idx64);
    const char *msg = rmc_last_error();
    if (got != st || !strstr(msg, what) || !strstr(msg, path) ||
        strncmp(msg, "rmc_csr_read_mm: ", 17) != 0)
        fail_msg("%s\n-> status %d (want %d): \"%s\" (want \"%s\" and the path)", text, (int)got,
                 (int)st, msg, what);
    tu_assert_empty(&a);
}
#define BAD(text, st, what) bad(text, sizeof(text) - 1, 0, st, what)

static void test_malformed(void **state)
{
    (void)state;
    const rmc_status_t F = RMC_ERR_FORMAT;
    BAD("", F, "line 1: empty file");
    BAD("%%MatrixMarkt matrix coordinate real general\n1 1 0\n", F,
        "line 1: not a Matrix Market file");
    BAD("\n" BAN "1 1 0\n", F, "line 1: not a Matrix Market file");
    BAD("%%MatrixMarket matrix coordinate real\n1 1 0\n", F, "line 1: the banner has 3 words");
    BAD("%%MatrixMarket matrix coordinate real general x y\n1 1 0\n", F,
        "line 1: the banner has 5 or more words");
    BAD("%%MatrixMarket vector coordinate real general\n", F, "line 1: object 'vector'");
    BAD("%%MatrixMarket matrix list real general\n", F, "line 1: format 'list'");
    BAD("%%MatrixMarket matrix coordinate complex general\n", F,
        "line 1: field 'complex' is not supported");
    BAD("%%MatrixMarket matrix coordinate real hermitian\n", F, "line 1: symmetry 'hermitian'");
    BAD("%%MatrixMarket matrix array pattern general\n", F, "line 1: an array cannot be pattern");
    BAD("%%MatrixMarket matrix array real symmetric\n", F, "line 1: array 'symmetric'");
    BAD("%%MatrixMarket matrix coordinate pattern skew-symmetric\n", F,
        "line 1: a pattern matrix cannot be skew-symmetric");
    /* the size line */
    BAD(BAN "% c\n", F, "line 3: end of file before the size line");
    BAD(BAN "% c\n3 x 4\n", F, "line 3: column count 'x' is not an integer");
    BAD(BAN "3 4\n", F, "line 2: entry count missing");
    BAD(BAN "3 4 2 9\n", F, "line 2: unexpected '9'");
    BAD(BAN "3 4 2x\n", F, "line 2: entry count '2x' is not an integer");
    BAD(BAN "-3 4 2\n", F, "line 2: negative size");
    BAD(BAN "99999999999999999999 4 2\n", F, "line 2: row count '99999999999999999999' out");
    BAD(SYM "3 4 1\n", F, "line 2: a symmetric matrix must be square");
    BAD("%%MatrixMarket matrix array real general\n2\n", F, "line 2: column count missing");
    /* counts */
    BAD(BAN "3 3 3\n1 1 1\n2 2 2\n", F, "line 5: end of file after 2 of the 3 entries");
    BAD(BAN "3 3 3\n1 1 1\n2 2 2\n% comment\n\n", F,
        "line 7: end of file after 2 of the 3 entries");
    BAD(BAN "2 2 1\n1 1 1\n2 2 2\n", F, "line 4: more entries than the 1");
    BAD("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", F,
        "line 6: end of file after 3 of the 4 entries");
    BAD("%%MatrixMarket matrix array real general\n1 1\n1\n2\n", F, "line 4: more entries");
    /* indices */
    BAD(BAN "2 2 1\n3 1 1\n", F, "line 3: row index 3 out of range [1, 2]");
    BAD(BAN "2 2 2\n1 1 1\n0 1 1\n", F, "line 4: row index 0 out of range [1, 2]");
    BAD(BAN "2 2 1\n1 5 1\n", F, "line 3: column index 5 out of range [1, 2]");
    BAD(BAN "2 2 1\n1 x 2\n", F, "line 3: column index 'x' is not an integer");
    BAD(BAN "2 2 1\n1.0 1 2\n", F, "line 3: row index '1.0' is not an integer");
    /* values */
    BAD(BAN "2 2 1\n1 1 abc\n", F, "line 3: value 'abc' is not a number");
    BAD(BAN "2 2 1\n1 1 1.5x\n", F, "line 3: value '1.5x' is not a number");
    BAD(BAN "2 2 1\n1 1 1e999\n", F, "line 3: value '1e999' out of range");
    BAD(BAN "2 2 1\n1 1\n", F, "line 3: value missing");
    BAD(BAN "2 2 1\n1 1 2 3\n", F, "line 3: unexpected '3'");
    BAD("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", F,
        "line 3: value '1.5' is not an integer");
    BAD("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n", F,
        "line 3: unexpected '5'");
    BAD("%%MatrixMarket matrix array real general\n1 2\n1\nfoo\n", F, "line 4: value 'foo'");
    /* symmetry */
    BAD(SYM "2 2 1\n1 2 3\n", F, "line 3: entry (1, 2) above the diagonal of a symmetric");
    BAD("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 3\n", F,
        "line 3: diagonal entry (2, 2) = 3 of a skew-symmetric matrix is not zero");
    /* not text */
    BAD(BAN "2 2 1\n1 1 \0 2\n", F, "line 3: contains a NUL byte");
    /* 32-bit overflow of a size; 64-bit reads it */
    BAD(BAN "1 3000000000 1\n1 2999999999 5\n", RMC_ERR_TOO_BIG,
        "line 2: a 1 x 3000000000 matrix does not fit 32-bit indices");
    rmc_csr_t a;
    assert_int_equal(
        rmc_csr_read_mm(&a, file("big.mtx", BAN "1 3000000000 1\n1 2999999999 5\n"), 1), RMC_OK);
    assert_true(a.nnz == 1 && rmc_csr_colind(&a, 0) == 2999999998LL && a.val[0] == 5);
    rmc_csr_free(&a);
}

static void test_io(void **state)
{
    (void)state;
    rmc_csr_t a;
    char path[300];
    snprintf(path, sizeof path, "%s/does-not-exist.mtx", dir);
    ASSERT_ERR(rmc_csr_read_mm(&a, path, 0), RMC_ERR_IO, "cannot open: No such file");
    assert_non_null(strstr(rmc_last_error(), path));
    tu_assert_empty(&a);
    /* a folder opens but does not read */
    ASSERT_ERR(rmc_csr_read_mm(&a, dir, 0), RMC_ERR_IO, "line 1: read error: Is a directory");
    assert_non_null(strstr(rmc_last_error(), dir));
    ASSERT_ERR(rmc_csr_read_mm(&a, NULL, 0), RMC_ERR_ARG, "path is NULL");
    ASSERT_ERR(rmc_csr_read_mm(&a, path, 2), RMC_ERR_ARG, "idx64 is 2");
    ASSERT_ERR(rmc_csr_read_mm(NULL, path, 0), RMC_ERR_ARG, "out is NULL");
    /* writing */
    tu_random(&a, 5, 5, 0.5, 0, 3, 0, 0);
    snprintf(path, sizeof path, "%s/no-such-folder/x.mtx", dir);
    ASSERT_ERR(rmc_csr_write_mm(&a, path), RMC_ERR_IO, "cannot open for writing");
    assert_non_null(strstr(rmc_last_error(), path));
    if (access("/dev/full", W_OK) == 0)
        ASSERT_ERR(rmc_csr_write_mm(&a, "/dev/full"), RMC_ERR_IO,
                   "/dev/full: write error: No space left on device");
    ASSERT_ERR(rmc_csr_write_mm(&a, NULL), RMC_ERR_ARG, "path is NULL");
    /* a malformed matrix is not written */
    snprintf(path, sizeof path, "%s/never.mtx", dir);
    ((int32_t *)a.rowptr)[0] = 1;
    ASSERT_ERR(rmc_csr_write_mm(&a, path), RMC_ERR_FORMAT, "rowptr[0] is 1");
    assert_int_not_equal(access(path, F_OK), 0);
    rmc_csr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMOCKA_TESTS(test_roundtrip, test_variants, test_malformed, test_io)};
    return cmocka_run_group_tests_name("mm", tests, setup, teardown);
}
