/* Bloom filters (include/rmc/bloom.h): blocked (one 64-bit block per key, BCL's) and standard
 * (k positions over the whole distributed bit array), both as block-distributed 64-bit words. */
#define _GNU_SOURCE
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/bloom.h>
#include "ct.h"

#define BL_SEED  0x3c6ef372fe94f82bull
#define BL_KMAX  32
#define BL_WORDS ((size_t)1 << 40)

struct rmc_bloom {
    rmcc_obj_t obj;
    uint64_t id;
    rmc_bloom_info_t info;
    const rmc_type_t *kt;
    size_t words; /* 64-bit words in all */
    size_t per;   /* words per rank */
    rmcc_parts_t pt; /* each rank's words */
};

static uint64_t next_id;

static void b_release(rmcc_obj_t *o)
{
    rmcc_parts_free(&((struct rmc_bloom *)o)->pt);
}

static rmc_status_t check(const struct rmc_bloom *b, const char *fn)
{
    return rmcc_obj_check(b ? &b->obj : NULL, RMCC_MAGIC_BLOOM, "Bloom filter", fn);
}

/* ---------------------------------------------------------------------------- theory --- */

/* Blocked: n keys over B blocks (a binomial number L per block), each setting k of 64 bits chosen
 * with replacement; a query of a key not inserted checks k bits of one block. Exact for uniform
 * hashing: sum over L of P(L) * E[(set bits / 64)^k], the occupancy distribution of 64 bits by kL
 * throws built up as L grows. */
static double fp_blocked(size_t n, size_t blocks, unsigned k)
{
    double occ[65] = {1.0}, nxt[65], pw[65];
    for (int j = 0; j <= 64; j++)
        pw[j] = pow(j / 64.0, (double)k);
    double p = 1.0 / (double)blocks, lam = (double)n * p, total = 0, wsum = 0;
    size_t lmax = (size_t)(lam + 12 * sqrt(lam) + 30);
    if (lmax > n)
        lmax = n;
    for (size_t L = 0; L <= lmax; L++) {
        double w;
        if (blocks == 1)
            w = L == n ? 1.0 : 0.0;
        else
            w = exp(lgamma((double)n + 1) - lgamma((double)L + 1) - lgamma((double)(n - L) + 1) +
                    (double)L * log(p) + (double)(n - L) * log1p(-p));
        double f = 0;
        for (int j = 0; j <= 64; j++)
            f += occ[j] * pw[j];
        total += w * f;
        wsum += w;
        for (unsigned t = 0; t < k; t++) { /* one more key: k more throws */
            nxt[0] = 0;
            for (int j = 0; j <= 64; j++) {
                nxt[j] = occ[j] * (j / 64.0) + (j ? occ[j - 1] * ((65 - j) / 64.0) : 0);
            }
            memcpy(occ, nxt, sizeof(occ));
        }
        if (occ[64] > 1 - 1e-9) { /* a block of more keys is full: every query hits (the loop
                                   * was linear in n / blocks: hours at 2^40 keys) */
            total += wsum < 1 ? 1 - wsum : 0;
            break;
        }
    }
    return total;
}

/* Standard: n keys, each setting k of `bits` bits chosen with replacement; a query checks k bits.
 * Exact for small filters, E[(set bits / bits)^k] over the occupancy distribution of kn throws;
 * the classic (1 - e^{-kn/bits})^k underestimates those (7.4e-4 for one key in 15 bits, k = 10,
 * against 2.0e-3 exact and measured), and beyond 2 * 10^7 throw-states it is within a fraction of a
 * percent and is taken. */
static double fp_standard(size_t n, size_t bits, unsigned k)
{
    double m = (double)bits, throws = (double)n * (double)k;
    double *occ = throws * m <= 2e7 ? calloc(bits + 1, sizeof(double)) : NULL;
    if (!occ)
        return pow(1.0 - exp(-throws / m), (double)k);
    occ[0] = 1;
    for (size_t t = 0, top = 0; t < (size_t)throws; t++) { /* top: most bits set so far */
        if (top < bits)
            top++;
        for (size_t j = top; j > 0; j--) /* occ[j - 1] is still the distribution before */
            occ[j] = occ[j] * ((double)j / m) + occ[j - 1] * ((m - (double)(j - 1)) / m);
        occ[0] = 0;
    }
    double fp = 0;
    for (size_t j = 1; j <= bits; j++)
        fp += occ[j] * pow((double)j / m, (double)k);
    free(occ);
    return fp;
}

double rmc_bloom_fp_theory(rmc_bloom_kind_t kind, size_t n, size_t bits, unsigned k)
{
    if (n == 0 || bits == 0 || k == 0 || k > BL_KMAX)
        return -1;
    if (kind == RMC_BLOOM_BLOCKED)
        return bits % 64 ? -1 : fp_blocked(n, bits / 64, k);
    return kind == RMC_BLOOM_STANDARD ? fp_standard(n, bits, k) : -1;
}

/* The smallest filter (and its k) meeting the target. */
static rmc_status_t size_filter(rmc_bloom_info_t *in, size_t *words, const char *fn)
{
    size_t n = in->n;
    double p = in->fp_target;
    if (in->kind == RMC_BLOOM_STANDARD) {
        double m = ceil(-(double)n * log(p) / (M_LN2 * M_LN2));
        unsigned k = (unsigned)lround(m / (double)n * M_LN2);
        k = k < 1 ? 1 : k > BL_KMAX ? BL_KMAX : k;
        while (fp_standard(n, (size_t)m, k) > p)
            m = ceil(m * 1.01);
        if (m / 64 > (double)BL_WORDS)
            return rmcc_fail(RMC_ERR_TOO_BIG, fn, "%.0f bits for %zu keys at rate %g", m, n, p);
        in->bits = (size_t)m;
        in->k = k;
        in->fp_expected = fp_standard(n, in->bits, k);
        *words = (in->bits + 63) / 64;
        return RMC_OK;
    }
    size_t best = 0;
    unsigned bestk = 0;
    for (unsigned k = 1; k <= 16; k++) {
        size_t hi = (n + 7) / 8, lo = 0;
        while (fp_blocked(n, hi, k) > p) {
            lo = hi;
            if ((hi *= 2) > BL_WORDS)
                break;
        }
        if (hi > BL_WORDS)
            continue;
        while (hi - lo > 1) { /* fp(lo) > p >= fp(hi) */
            size_t mid = lo + (hi - lo) / 2;
            if (fp_blocked(n, mid, k) > p)
                lo = mid;
            else
                hi = mid;
        }
        if (!best || hi < best) {
            best = hi;
            bestk = k;
        }
    }
    if (!best)
        return rmcc_fail(RMC_ERR_TOO_BIG, fn, "no blocked filter of at most 2^40 blocks holds %zu "
                                               "keys at rate %g", n, p);
    in->bits = best * 64;
    in->k = bestk;
    in->fp_expected = fp_blocked(n, best, bestk);
    *words = best;
    return RMC_OK;
}

/* ------------------------------------------------------------------------ operations --- */

/* One operation: the words it touches (one for a blocked filter), their masks, the results. */
typedef struct bop {
    struct rmc_bloom *b;
    int insert, nb;
    unsigned n; /* words */
    int *res;
    int owner[BL_KMAX];
    char *addr[BL_KMAX];
    uint64_t mask[BL_KMAX], got[BL_KMAX];
    rmc_request_h r[BL_KMAX];
} bop_t;

/* The key's words and masks. */
static rmc_status_t locate(bop_t *o, const void *key, const char *fn)
{
    struct rmc_bloom *b = o->b;
    const rmc_type_t *t = b->kt;
    char small[256], *pk = NULL;
    if (t->max_bytes) { /* also with a hash of its own: a key above max_bytes is refused */
        size_t slot = rmc_type_slot_bytes(t);
        if (!(pk = slot <= sizeof(small) ? small : malloc(slot)))
            return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes", slot);
        rmc_status_t st = rmcc_pack(t, key, pk, fn);
        if (st != RMC_OK) {
            if (pk != small)
                free(pk);
            return st;
        }
    }
    uint64_t h = rmcc_key_hash(t, key, pk, BL_SEED), h2 = rmcc_mix64(h ^ 0xa54ff53a5f1d36f1ull);
    if (pk != small)
        free(pk);
    size_t w[BL_KMAX];
    unsigned k = b->info.k;
    if (b->info.kind == RMC_BLOOM_BLOCKED) {
        o->n = 1;
        w[0] = (size_t)(((unsigned __int128)h * b->words) >> 64);
        uint64_t m = 0, s = h2;
        for (unsigned i = 0; i < k; i++) {
            m |= 1ull << (s >> 58);
            s = s * 6364136223846793005ull + 1442695040888963407ull;
        }
        o->mask[0] = m;
    } else { /* k positions of their own (mixes of h2 + i c): double hashing (a + i d mod
              * bits) repeats positions over small filters, 69x the theory's rate at 192 bits */
        uint64_t bits = b->info.bits;
        o->n = k;
        for (unsigned i = 0; i < k; i++) {
            uint64_t x = rmcc_mix64(h2 + (uint64_t)i * 0x9e3779b97f4a7c15ull);
            uint64_t a = (uint64_t)(((unsigned __int128)x * bits) >> 64);
            w[i] = a / 64;
            o->mask[i] = 1ull << (a % 64);
        }
    }
    for (unsigned i = 0; i < o->n; i++) {
        o->owner[i] = (int)(w[i] / b->per);
        o->addr[i] = b->pt.tab[o->owner[i]] + (w[i] % b->per) * 8;
        o->r[i] = RMC_REQUEST_NULL;
    }
    return RMC_OK;
}

/* The answer from the words seen: every bit set (before the insert, for an insert). */
static int answer(const bop_t *o)
{
    for (unsigned i = 0; i < o->n; i++)
        if ((o->got[i] & o->mask[i]) != o->mask[i])
            return 0;
    return 1;
}

static rmc_status_t issue(bop_t *o)
{
    rmc_status_t st = RMC_OK;
    for (unsigned i = 0; i < o->n && st == RMC_OK; i++) {
        if (!o->nb && o->n == 1) /* one word: the blocking call itself */
            return o->insert ? rmc_amo_fetch_or_u64(o->addr[0], o->mask[0], &o->got[0], o->owner[0])
                             : rmc_get(o->addr[0], &o->got[0], 8, o->owner[0]);
        st = o->insert
                 ? rmc_amo_fetch_or_u64_nb(o->addr[i], o->mask[i], &o->got[i], o->owner[i], &o->r[i])
                 : rmc_get_nb(o->addr[i], &o->got[i], 8, o->owner[i], &o->r[i]);
    }
    if (st != RMC_OK)
        rmc_wait_all(o->r, o->n);
    else if (!o->nb)
        st = rmc_wait_all(o->r, o->n);
    return st;
}

static rmc_status_t nb_step(void *state, int *done)
{
    bop_t *o = state;
    rmc_status_t st = RMC_OK;
    *done = 1;
    for (unsigned i = 0; i < o->n && st == RMC_OK; i++)
        if (o->r[i]) {
            int fin = 0;
            st = rmc_test(&o->r[i], &fin);
            if (st == RMC_OK && !fin)
                *done = 0;
        }
    if (st != RMC_OK) {
        rmc_wait_all(o->r, o->n);
        *done = 1;
    } else if (*done && o->res)
        *o->res = answer(o);
    if (*done)
        free(o);
    return st;
}

static rmc_status_t bl_op(struct rmc_bloom *b, int insert, const void *key, int *res,
                          unsigned promise, rmc_request_h *req, const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    rmc_status_t st = check(b, fn);
    if (st != RMC_OK)
        return st;
    if (!key)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL key");
    if (!res && !insert)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL result pointer");
    if (promise & ~(unsigned)(RMC_PROMISE_INSERT | RMC_PROMISE_FIND | RMC_PROMISE_LOCAL))
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "promise 0x%x: a Bloom filter knows INSERT, FIND and LOCAL", promise);
    bop_t on_stack, *o = req ? malloc(sizeof(*o)) : &on_stack;
    if (!o)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "a non-blocking operation");
    o->b = b;
    o->insert = insert;
    o->nb = req != NULL;
    o->res = res;
    if ((st = locate(o, key, fn)) != RMC_OK)
        goto out;
    if (promise & RMC_PROMISE_LOCAL) {
        for (unsigned i = 0; i < o->n; i++)
            if (o->owner[i] != rmcc.rank) {
                st = rmcc_fail(RMC_ERR_ARG, fn,
                               "RMC_PROMISE_LOCAL for a key whose bits rank %d holds (this is "
                               "rank %d)",
                               o->owner[i], rmcc.rank);
                goto out;
            }
        for (unsigned i = 0; i < o->n; i++) {
            uint64_t *w = (uint64_t *)(void *)(b->pt.ltab[rmcc.rank] + (o->addr[i] - b->pt.tab[rmcc.rank]));
            o->got[i] = *w;
            if (insert)
                *w |= o->mask[i];
        }
        if (res)
            *res = answer(o);
        goto out;
    }
    if ((st = issue(o)) != RMC_OK)
        goto out;
    if (!req) {
        if (res)
            *res = answer(o);
        return RMC_OK;
    }
    int done = 0;
    if ((st = rmc_request_custom(nb_step, o, req)) != RMC_OK) {
        rmc_wait_all(o->r, o->n);
        goto out;
    }
    return rmc_test(req, &done);
out:
    if (o != &on_stack)
        free(o);
    return st;
}

rmc_status_t rmc_bloom_insert(rmc_bloom_h b, const void *key, int *was_present, unsigned promise)
{
    RMCC_SERIAL();
    return bl_op(b, 1, key, was_present, promise, NULL, __func__);
}

rmc_status_t rmc_bloom_find(rmc_bloom_h b, const void *key, int *present, unsigned promise)
{
    RMCC_SERIAL();
    return bl_op(b, 0, key, present, promise, NULL, __func__);
}

rmc_status_t rmc_bloom_insert_nb(rmc_bloom_h b, const void *key, int *was_present,
                                 unsigned promise, rmc_request_h *req)
{
    RMCC_SERIAL();
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return bl_op(b, 1, key, was_present, promise, req, __func__);
}

rmc_status_t rmc_bloom_find_nb(rmc_bloom_h b, const void *key, int *present, unsigned promise,
                               rmc_request_h *req)
{
    RMCC_SERIAL();
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return bl_op(b, 0, key, present, promise, req, __func__);
}

/* ---------------------------------------------------------------------- collectives --- */

rmc_status_t rmc_bloom_create(rmc_bloom_kind_t kind, size_t n, double fp_rate,
                              const rmc_type_t *key, rmc_bloom_h *bp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (bp)
        *bp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    rmc_bloom_info_t info = {.kind = kind, .n = n, .fp_target = fp_rate};
    size_t words = 0;
    if (!bp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if (kind != RMC_BLOOM_BLOCKED && kind != RMC_BLOOM_STANDARD)
        st = rmcc_fail(RMC_ERR_ARG, fn, "kind %d (RMC_BLOOM_BLOCKED or _STANDARD)", (int)kind);
    else if (n == 0 || n > ((size_t)1 << 40))
        st = rmcc_fail(RMC_ERR_ARG, fn, "%zu keys (1 .. 2^40)", n);
    else if (!(fp_rate >= 1e-9 && fp_rate <= 0.5))
        st = rmcc_fail(RMC_ERR_ARG, fn, "false-positive rate %g (1e-9 .. 0.5)", fp_rate);
    else if ((st = rmcc_type_check(key, fn)) == RMC_OK)
        st = size_filter(&info, &words, fn);
    uint64_t bits;
    memcpy(&bits, &fp_rate, 8);
    uint64_t args[4] = {(uint64_t)kind, n, bits, next_id};
    st = rmcc_create_begin(fn, args, 4, key, st);
    if (st != RMC_OK)
        return st;
    struct rmc_bloom *b = calloc(1, sizeof(*b));
    size_t nr = (size_t)rmcc.nranks;
    st = b ? rmcc_parts_init(&b->pt, fn) : rmcc_fail(RMC_ERR_NOMEM, fn, "filter handle");
    uint64_t off = 0;
    rmc_status_t mine = st;
    if (st == RMC_OK) {
        b->id = next_id;
        b->info = info;
        b->kt = key;
        b->words = words;
        b->per = (words + nr - 1) / nr;
        mine = rmcc_alloc_off(b->per * 8, &off, fn);
    }
    st = rmcc_exchange_parts(mine, off, b ? b->pt.offs : NULL, fn);
    next_id++;
    if (st == RMC_OK) {
        rmcc_parts_map(&b->pt);
        rmcc_obj_add(&b->obj, RMCC_MAGIC_BLOOM, b_release);
        *bp = b;
        return RMC_OK;
    }
    if (mine == RMC_OK)
        rmcc_free_off(off, fn);
    if (b)
        b_release(&b->obj);
    free(b);
    return st;
}

rmc_status_t rmc_bloom_destroy(rmc_bloom_h b)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, bar;
    if ((st = rmcc_destroy_begin(b ? &b->obj : NULL, RMCC_MAGIC_BLOOM, "Bloom filter",
                                 b ? b->id : 0, &bar, fn)) != RMC_OK)
        return st;
    return rmcc_destroy_finish(&b->obj, bar, b->pt.offs[rmcc.rank], fn);
}

rmc_status_t rmc_bloom_info(rmc_bloom_h b, rmc_bloom_info_t *info)
{
    rmc_status_t st = check(b, __func__);
    if (st != RMC_OK)
        return st;
    if (!info)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL info");
    *info = b->info;
    return RMC_OK;
}
