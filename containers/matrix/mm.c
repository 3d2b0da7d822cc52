/* Matrix Market input and output of local CSR matrices (include/rmc/csr.h). The reader checks
 * everything it reads (banner, sizes, every index and number, the entry count) and names the path
 * and the line of the first fault; entries become triplets that rmcc_csr_build sorts and sums. */
#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "csr_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

typedef struct {
    FILE *f;
    const char *path, *fn;
    char *line;
    size_t cap;
    long long lineno;
    /* the entries read so far, as 0-based triplets */
    int64_t n, ncap, *row, *col;
    double *val;
} rd_t;

/* Records "PATH: line N: message" for the current line. */
static rmc_status_t rd_fail(rd_t *r, rmc_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static rmc_status_t rd_fail(rd_t *r, rmc_status_t st, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rmc_error_set(st, r->fn, "%s: line %lld: %s", r->path, r->lineno, msg);
}

/* The next line, end of line stripped: 1, or 0 at the end of the file, or -1 (recorded). */
static int next_line(rd_t *r, rmc_status_t *st)
{
    errno = 0;
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) {
        if (ferror(r->f)) {
            r->lineno++;
            *st = rd_fail(r, RMC_ERR_IO, "read error: %s", strerror(errno ? errno : EIO));
            return -1;
        }
        if (errno == ENOMEM) {
            r->lineno++;
            *st = rd_fail(r, RMC_ERR_NOMEM, "no memory for the line");
            return -1;
        }
        return 0;
    }
    r->lineno++;
    if ((size_t)n != strlen(r->line)) {
        *st = rd_fail(r, RMC_ERR_FORMAT, "contains a NUL byte: not a text file");
        return -1;
    }
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = 0;
    return 1;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The next line that is neither blank nor a comment (as next_line). */
static int next_data(rd_t *r, rmc_status_t *st)
{
    for (;;) {
        int k = next_line(r, st);
        if (k <= 0)
            return k;
        const char *p = skip_ws(r->line);
        if (*p && *p != '%')
            return 1;
    }
}

/* "'text'" for messages: the token at p, at most 32 characters. */
static const char *tok(const char *p, char buf[40])
{
    size_t n = 0;
    while (p[n] && p[n] != ' ' && p[n] != '\t' && n < 32)
        n++;
    snprintf(buf, 40, "'%.*s'%s", (int)n, p, p[n] && p[n] != ' ' && p[n] != '\t' ? "..." : "");
    return buf;
}

static int is_end(char c)
{
    return c == 0 || c == ' ' || c == '\t';
}

/* An integer token at *pp (what names it in messages); *pp moves past it. */
static rmc_status_t parse_int(rd_t *r, const char **pp, const char *what, int64_t *v)
{
    const char *p = skip_ws(*pp);
    char b[40], *e;
    if (!*p)
        return rd_fail(r, RMC_ERR_FORMAT, "%s missing", what);
    errno = 0;
    long long x = strtoll(p, &e, 10);
    if (e == p || !is_end(*e))
        return rd_fail(r, RMC_ERR_FORMAT, "%s %s is not an integer", what, tok(p, b));
    if (errno == ERANGE)
        return rd_fail(r, RMC_ERR_FORMAT, "%s %s out of range", what, tok(p, b));
    *v = x;
    *pp = e;
    return RMC_OK;
}

/* A value token: an integer (field integer) or a real. */
static rmc_status_t parse_val(rd_t *r, const char **pp, int integer, double *v)
{
    const char *p = skip_ws(*pp);
    char b[40], *e;
    if (!*p)
        return rd_fail(r, RMC_ERR_FORMAT, "value missing");
    errno = 0;
    if (integer) {
        long long x = strtoll(p, &e, 10);
        if (e == p || !is_end(*e))
            return rd_fail(r, RMC_ERR_FORMAT, "value %s is not an integer", tok(p, b));
        if (errno == ERANGE)
            return rd_fail(r, RMC_ERR_FORMAT, "value %s out of range", tok(p, b));
        *v = (double)x;
    } else {
        double x = strtod(p, &e);
        if (e == p || !is_end(*e))
            return rd_fail(r, RMC_ERR_FORMAT, "value %s is not a number", tok(p, b));
        if (errno == ERANGE && isinf(x))
            return rd_fail(r, RMC_ERR_FORMAT, "value %s out of range", tok(p, b));
        *v = x;
    }
    *pp = e;
    return RMC_OK;
}

static rmc_status_t line_end(rd_t *r, const char *p)
{
    char b[40];
    p = skip_ws(p);
    if (*p)
        return rd_fail(r, RMC_ERR_FORMAT, "unexpected %s after the line's fields", tok(p, b));
    return RMC_OK;
}

static rmc_status_t push(rd_t *r, int64_t i, int64_t j, double v)
{
    if (r->n == r->ncap) {
        int64_t cap = r->ncap ? 2 * r->ncap : 1024;
        int64_t *nr = realloc(r->row, (size_t)cap * sizeof(int64_t));
        if (nr)
            r->row = nr;
        int64_t *nc = nr ? realloc(r->col, (size_t)cap * sizeof(int64_t)) : NULL;
        if (nc)
            r->col = nc;
        double *nv = nc ? realloc(r->val, (size_t)cap * sizeof(double)) : NULL;
        if (!nv)
            return rd_fail(r, RMC_ERR_NOMEM, "no memory for " I64 " entries", LL(cap));
        r->val = nv;
        r->ncap = cap;
    }
    r->row[r->n] = i;
    r->col[r->n] = j;
    r->val[r->n++] = v;
    return RMC_OK;
}

enum { F_REAL, F_INTEGER, F_PATTERN };
enum { S_GENERAL, S_SYMMETRIC, S_SKEW };

/* Which of names[] (case-insensitive) the token at p is: its index, or -1. */
static int which(const char *p, size_t n, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && strncasecmp(p, names[i], n) == 0)
            return i;
    return -1;
}

/* The banner's four words after %%MatrixMarket: 0 array / 1 coordinate, field, symmetry. */
static rmc_status_t parse_banner(rd_t *r, int *coord, int *field, int *sym)
{
    static const char *const formats[] = {"array", "coordinate"};
    static const char *const fields[] = {"real", "integer", "pattern"};
    static const char *const syms[] = {"general", "symmetric", "skew-symmetric"};
    const char *w[6];
    size_t len[6];
    int nw = 0;
    for (const char *p = skip_ws(r->line); *p && nw < 6; p = skip_ws(p)) {
        w[nw] = p;
        while (!is_end(*p))
            p++;
        len[nw] = (size_t)(p - w[nw]);
        nw++;
    }
    char b[40];
    if (nw == 0 || len[0] != 14 || strncasecmp(w[0], "%%MatrixMarket", 14) != 0)
        return rd_fail(r, RMC_ERR_FORMAT, "not a Matrix Market file: no %%%%MatrixMarket banner");
    if (nw != 5) /* (the count stops at 6: "5 or more") */
        return rd_fail(r, RMC_ERR_FORMAT,
                       "the banner has %d%s words after %%%%MatrixMarket, not 4 (object, format, "
                       "field, symmetry)",
                       nw - 1, nw == 6 ? " or more" : "");
    if (len[1] != 6 || strncasecmp(w[1], "matrix", 6) != 0)
        return rd_fail(r, RMC_ERR_FORMAT, "object %s is not supported (matrix only)", tok(w[1], b));
    if ((*coord = which(w[2], len[2], formats, 2)) < 0)
        return rd_fail(r, RMC_ERR_FORMAT, "format %s is not supported (coordinate or array)",
                       tok(w[2], b));
    if ((*field = which(w[3], len[3], fields, 3)) < 0)
        return rd_fail(r, RMC_ERR_FORMAT, "field %s is not supported (real, integer or pattern)",
                       tok(w[3], b));
    if ((*sym = which(w[4], len[4], syms, 3)) < 0)
        return rd_fail(r, RMC_ERR_FORMAT,
                       "symmetry %s is not supported (general, symmetric or skew-symmetric)",
                       tok(w[4], b));
    if (!*coord && *field == F_PATTERN)
        return rd_fail(r, RMC_ERR_FORMAT, "an array cannot be pattern");
    if (!*coord && *sym != S_GENERAL)
        return rd_fail(r, RMC_ERR_FORMAT, "array %s is not supported (general only)", tok(w[4], b));
    if (*field == F_PATTERN && *sym == S_SKEW)
        return rd_fail(r, RMC_ERR_FORMAT, "a pattern matrix cannot be skew-symmetric");
    return RMC_OK;
}

/* "PATH: message" for a failure of the triplet builder (its message has no path). */
static rmc_status_t with_path(rmc_status_t st, const char *fn, const char *path)
{
    char msg[512];
    const char *m = rmc_last_error();
    size_t n = strlen(fn);
    if (strncmp(m, fn, n) == 0 && m[n] == ':')
        m += n + 2;
    snprintf(msg, sizeof msg, "%s", m);
    return rmc_error_set(st, fn, "%s: %s", path, msg);
}

static rmc_status_t read_body(rd_t *r, rmc_csr_t *out, int idx64)
{
    rmc_status_t st = RMC_OK;
    int k = next_line(r, &st), coord = 0, field = 0, sym = 0;
    if (k < 0)
        return st;
    if (k == 0)
        return rmc_error_set(RMC_ERR_FORMAT, r->fn,
                             "%s: line 1: empty file: no %%%%MatrixMarket banner", r->path);
    if ((st = parse_banner(r, &coord, &field, &sym)))
        return st;
    /* the size line */
    if ((k = next_data(r, &st)) < 0)
        return st;
    if (k == 0) {
        r->lineno++;
        return rd_fail(r, RMC_ERR_FORMAT, "end of file before the size line");
    }
    int64_t m, n, nnz = 0;
    const char *p = r->line;
    if ((st = parse_int(r, &p, "row count", &m)) || (st = parse_int(r, &p, "column count", &n)) ||
        (coord && (st = parse_int(r, &p, "entry count", &nnz))) || (st = line_end(r, p)))
        return st;
    if (m < 0 || n < 0 || nnz < 0)
        return rd_fail(r, RMC_ERR_FORMAT, "negative size " I64 " x " I64 ", " I64 " entries", LL(m),
                       LL(n), LL(nnz));
    if (sym != S_GENERAL && m != n)
        return rd_fail(r, RMC_ERR_FORMAT, "a %s matrix must be square, not " I64 " x " I64,
                       sym == S_SYMMETRIC ? "symmetric" : "skew-symmetric", LL(m), LL(n));
    if (!rmcc_fits(m, idx64) || !rmcc_fits(n, idx64))
        return rd_fail(r, RMC_ERR_TOO_BIG,
                       "a " I64 " x " I64 " matrix does not fit 32-bit indices (at most %d): use "
                       "idx64 = 1",
                       LL(m), LL(n), INT32_MAX);
    if (!coord) {
        if (m > 0 && n > INT64_MAX / m)
            return rd_fail(r, RMC_ERR_TOO_BIG, "a " I64 " x " I64 " array has too many entries",
                           LL(m), LL(n));
        nnz = m * n;
    }
    /* the entries */
    for (int64_t e = 0; e < nnz; e++) {
        if ((k = next_data(r, &st)) < 0)
            return st;
        if (k == 0) {
            r->lineno++;
            return rd_fail(r, RMC_ERR_FORMAT,
                           "end of file after " I64 " of the " I64 " entries the size line gives",
                           LL(e), LL(nnz));
        }
        int64_t i, j;
        double v = 1.0;
        p = r->line;
        if (coord) {
            if ((st = parse_int(r, &p, "row index", &i)) ||
                (st = parse_int(r, &p, "column index", &j)))
                return st;
            if (i < 1 || i > m)
                return rd_fail(r, RMC_ERR_FORMAT, "row index " I64 " out of range [1, " I64 "]",
                               LL(i), LL(m));
            if (j < 1 || j > n)
                return rd_fail(r, RMC_ERR_FORMAT, "column index " I64 " out of range [1, " I64 "]",
                               LL(j), LL(n));
            i--;
            j--;
        } else {
            i = e % m;
            j = e / m;
        }
        if (field != F_PATTERN && (st = parse_val(r, &p, field == F_INTEGER, &v)))
            return st;
        if ((st = line_end(r, p)))
            return st;
        if (sym != S_GENERAL && j > i)
            return rd_fail(r, RMC_ERR_FORMAT,
                           "entry (" I64 ", " I64 ") above the diagonal of a %s matrix (the "
                           "lower triangle only is stored)",
                           LL(i + 1), LL(j + 1),
                           sym == S_SYMMETRIC ? "symmetric" : "skew-symmetric");
        if (sym == S_SKEW && i == j && v != 0)
            return rd_fail(r, RMC_ERR_FORMAT,
                           "diagonal entry (" I64 ", " I64 ") = %.17g of a skew-symmetric "
                           "matrix is not zero",
                           LL(i + 1), LL(j + 1), v);
        if (!coord && v == 0)
            continue; /* a dense array's zeros are not entries */
        if ((st = push(r, i, j, v)))
            return st;
        if (sym != S_GENERAL && i != j && (st = push(r, j, i, sym == S_SKEW ? -v : v)))
            return st;
    }
    if ((k = next_data(r, &st)) < 0)
        return st;
    if (k > 0)
        return rd_fail(r, RMC_ERR_FORMAT, "more entries than the " I64 " the size line gives",
                       LL(nnz));
    st = rmcc_csr_build(out, m, n, r->n, r->row, r->col, r->val, 1, idx64, r->fn);
    return st ? with_path(st, r->fn, r->path) : RMC_OK;
}

rmc_status_t rmc_csr_read_mm(rmc_csr_t *out, const char *path, int idx64)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_out_begin(out, idx64, fn);
    if (st)
        return st;
    if (!path)
        return rmc_error_set(RMC_ERR_ARG, fn, "path is NULL");
    rd_t r = {.path = path, .fn = fn};
    if (!(r.f = fopen(path, "r")))
        return rmc_error_set(RMC_ERR_IO, fn, "%s: cannot open: %s", path, strerror(errno));
    st = read_body(&r, out, idx64);
    fclose(r.f);
    free(r.line);
    free(r.row);
    free(r.col);
    free(r.val);
    if (st)
        rmc_csr_free(out);
    return st;
}

rmc_status_t rmc_csr_write_mm(const rmc_csr_t *a, const char *path)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_csr_valid(a, fn, "a");
    if (st)
        return st;
    if (!path)
        return rmc_error_set(RMC_ERR_ARG, fn, "path is NULL");
    FILE *f = fopen(path, "w");
    if (!f)
        return rmc_error_set(RMC_ERR_IO, fn, "%s: cannot open for writing: %s", path,
                             strerror(errno));
    int bad =
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n" I64 " " I64 " " I64 "\n",
                LL(a->nrows), LL(a->ncols), LL(a->nnz)) < 0;
    for (int64_t i = 0; i < a->nrows && !bad; i++)
        for (int64_t k = rmc_csr_rowptr(a, i); k < rmc_csr_rowptr(a, i + 1) && !bad; k++)
            bad = fprintf(f, I64 " " I64 " %.17g\n", LL(i + 1), LL(rmc_csr_colind(a, k) + 1),
                          a->val[k]) < 0;
    int err = bad ? errno : 0;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad)
        return rmc_error_set(RMC_ERR_IO, fn, "%s: write error: %s", path,
                             strerror(err ? err : EIO));
    return RMC_OK;
}
