/* Element types: the built-in descriptors, strings, descriptor checks and element slots. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ct.h"

const rmc_type_t rmc_type_i32 = RMC_TYPE_FIXED("int32", sizeof(int32_t));
const rmc_type_t rmc_type_i64 = RMC_TYPE_FIXED("int64", sizeof(int64_t));
const rmc_type_t rmc_type_u32 = RMC_TYPE_FIXED("uint32", sizeof(uint32_t));
const rmc_type_t rmc_type_u64 = RMC_TYPE_FIXED("uint64", sizeof(uint64_t));
const rmc_type_t rmc_type_f64 = RMC_TYPE_FIXED("double", sizeof(double));

#define MAX_SERIAL ((size_t)1 << 31)

/* ----------------------------------------------------------------------- strings --- */

size_t rmc_type_string_serialize(const void *obj, void *buf, size_t cap)
{
    const char *s = *(const char *const *)obj;
    size_t n = s ? strlen(s) : 0;
    if (n <= cap && n)
        memcpy(buf, s, n);
    return n;
}

rmc_status_t rmc_type_string_deserialize(const void *buf, size_t len, void *obj)
{
    char *s = malloc(len + 1);
    if (!s)
        return RMC_ERR_NOMEM;
    if (len)
        memcpy(s, buf, len);
    s[len] = 0;
    *(char **)obj = s;
    return RMC_OK;
}

uint64_t rmc_type_string_hash(const void *obj)
{
    const char *s = *(const char *const *)obj;
    return rmcc_hash_bytes(s ? s : "", s ? strlen(s) : 0, 0);
}

int rmc_type_string_equal(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return strcmp(x ? x : "", y ? y : "") == 0;
}

void rmc_type_string_destroy(void *obj)
{
    free(*(char **)obj);
    *(char **)obj = NULL;
}

/* ---------------------------------------------------------------------- descriptors --- */

/* Which rule a descriptor breaks (0: none), for rmcc_type_check's message and
 * rmc_type_slot_bytes's 0. */
enum { T_OK, T_NULL, T_NAME, T_SIZE, T_MAX, T_NO_FNS, T_FNS };
static int type_fault(const rmc_type_t *t)
{
    return !t                                                   ? T_NULL
           : !t->name                                           ? T_NAME
           : t->size == 0 || t->size > MAX_SERIAL               ? T_SIZE
           : t->max_bytes > MAX_SERIAL                          ? T_MAX
           : t->max_bytes && (!t->serialize || !t->deserialize) ? T_NO_FNS
           : !t->max_bytes && (t->serialize || t->deserialize)  ? T_FNS
                                                                : T_OK;
}

rmc_status_t rmcc_type_check(const rmc_type_t *t, const char *fn)
{
    switch (type_fault(t)) {
    case T_NULL:
        return rmcc_fail(RMC_ERR_TYPE, fn, "NULL type descriptor");
    case T_NAME:
        return rmcc_fail(RMC_ERR_TYPE, fn, "type descriptor without a name");
    case T_SIZE:
        return rmcc_fail(RMC_ERR_TYPE, fn, "type %s: element size %zu (1 .. 2^31)", t->name,
                         t->size);
    case T_MAX:
        return rmcc_fail(RMC_ERR_TYPE, fn, "type %s: max_bytes %zu above 2^31", t->name,
                         t->max_bytes);
    case T_NO_FNS:
        return rmcc_fail(RMC_ERR_TYPE, fn,
                         "type %s: a serialized type (max_bytes %zu) needs serialize and "
                         "deserialize",
                         t->name, t->max_bytes);
    case T_FNS:
        return rmcc_fail(RMC_ERR_TYPE, fn,
                         "type %s: serialize / deserialize given but max_bytes is 0 (a serialized "
                         "type needs room for at least 1 byte, e.g. RMC_TYPE_STRING(n >= 1))",
                         t->name);
    default:
        return RMC_OK;
    }
}

rmc_status_t rmc_type_check(const rmc_type_t *t)
{
    return rmcc_type_check(t, __func__);
}

size_t rmc_type_slot_bytes(const rmc_type_t *t)
{
    if (type_fault(t))
        return 0;
    return t->max_bytes ? (4 + t->max_bytes + 3) & ~(size_t)3 : t->size;
}

void rmc_type_release(const rmc_type_t *t, void *obj)
{
    if (t && t->max_bytes && t->destroy && obj)
        t->destroy(obj);
}

uint64_t rmcc_type_digest(const rmc_type_t *t)
{
    uint64_t d = rmcc_hash_bytes(t->name, strlen(t->name), t->size);
    d = rmcc_hash_bytes(&t->max_bytes, sizeof(t->max_bytes), d);
    return d;
}

/* --------------------------------------------------------------------------- slots --- */

rmc_status_t rmcc_pack(const rmc_type_t *t, const void *obj, void *slot, const char *fn)
{
    if (!t->max_bytes) {
        memcpy(slot, obj, t->size);
        return RMC_OK;
    }
    char *s = slot;
    size_t n = t->serialize(obj, s + 4, t->max_bytes);
    if (n > t->max_bytes)
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "an element of type %s serializes to %zu bytes (max_bytes %zu)", t->name,
                         n, t->max_bytes);
    uint32_t len = (uint32_t)n;
    memcpy(s, &len, 4);
    return RMC_OK;
}

rmc_status_t rmcc_unpack(const rmc_type_t *t, const void *slot, void *obj, const char *fn)
{
    if (!t->max_bytes) {
        memcpy(obj, slot, t->size);
        return RMC_OK;
    }
    const char *s = slot;
    uint32_t len;
    memcpy(&len, s, 4);
    if (len > t->max_bytes)
        return rmcc_fail(RMC_ERR_INTERNAL, fn, "a slot of type %s holds %u bytes (max_bytes %zu)",
                         t->name, len, t->max_bytes);
    rmc_status_t st = t->deserialize(s + 4, len, obj);
    if (st != RMC_OK)
        return rmcc_fail(st, fn, "deserializing an element of type %s failed: %s", t->name,
                         rmc_status_string(st));
    return RMC_OK;
}

rmc_status_t rmcc_pack_n(const rmc_type_t *t, const void *in, size_t n, char *dst, size_t stride,
                         const char *fn)
{
    for (size_t i = 0; i < n; i++) {
        rmc_status_t st = rmcc_pack(t, (const char *)in + i * t->size, dst + i * stride, fn);
        if (st != RMC_OK)
            return st;
    }
    return RMC_OK;
}

rmc_status_t rmcc_unpack_n(const rmc_type_t *t, const char *src, size_t stride, void *out, size_t n,
                           const char *fn)
{
    for (size_t i = 0; i < n; i++) {
        rmc_status_t st = rmcc_unpack(t, src + i * stride, (char *)out + i * t->size, fn);
        if (st != RMC_OK) {
            for (size_t k = 0; k < i; k++) /* all or nothing */
                rmc_type_release(t, (char *)out + k * t->size);
            return st;
        }
    }
    return RMC_OK;
}

uint64_t rmcc_key_hash(const rmc_type_t *t, const void *key, const char *pk, uint64_t seed)
{
    if (t->hash)
        return rmcc_mix64(t->hash(key) ^ seed);
    if (!t->max_bytes) {
        if (t->size == 8) {
            uint64_t x;
            memcpy(&x, key, 8);
            return rmcc_mix64(x ^ seed);
        }
        return rmcc_hash_bytes(key, t->size, seed);
    }
    uint32_t len;
    memcpy(&len, pk, 4);
    return rmcc_hash_bytes(pk + 4, len, seed);
}
