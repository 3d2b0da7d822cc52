/* RMC containers: element types.
 *
 * Every container holds elements of one type, described by an rmc_type_t given at creation (BCL's
 * ObjectContainer, seed 001 §3.3, in C). Two kinds:
 *  - byte-copied ("fixed") types: `size` bytes copied as they are (integers, doubles, plain
 *    structs). max_bytes == 0 and no serialize / deserialize. RMC_TYPE_FIXED makes one.
 *  - serialized ("variable") types: the element as the caller holds it (`size` bytes, e.g. a
 *    `char *` or a struct holding pointers) is turned into at most `max_bytes` bytes by serialize
 *    and back by deserialize. Containers store the serialized form (a 4-byte length and up to
 *    max_bytes bytes per element); an element whose serialized form is longer than max_bytes is
 *    refused with RMC_ERR_TOO_BIG and nothing is stored. RMC_TYPE_STRING(max) is one.
 * hash and equal are used by containers that compare elements (hash maps, Bloom filters); when NULL
 * RMC hashes and compares the serialized bytes (fixed types: the element's bytes).
 *
 * A descriptor is plain data and must stay valid while a container uses it. A collective creation
 * checks that every rank gave the same type (name, size, max_bytes, kind): a mismatch fails with
 * RMC_ERR_TYPE on every rank. */
#ifndef RMC_TYPES_H
#define RMC_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_type {
    const char *name; /* for messages and the creation check; must not be NULL */
    size_t size;      /* bytes of one element as the caller holds it (> 0) */
    size_t max_bytes; /* largest serialized form (variable types), 0 for byte-copied types */
    /* Writes the serialized form of *obj into buf (cap bytes) and returns its length, which may
     * exceed cap (then nothing needs to be written and the container refuses the element). */
    size_t (*serialize)(const void *obj, void *buf, size_t cap);
    /* Builds *obj from len serialized bytes (may allocate: see destroy). */
    rmc_status_t (*deserialize)(const void *buf, size_t len, void *obj);
    uint64_t (*hash)(const void *obj);          /* optional */
    int (*equal)(const void *a, const void *b); /* optional: nonzero when equal */
    void (*destroy)(void *obj);                 /* optional: frees what deserialize took */
} rmc_type_t;

/* A byte-copied type of `sz` bytes named `nm`. */
#define RMC_TYPE_FIXED(nm, sz)                                                                     \
    {                                                                                              \
        (nm), (sz), 0, NULL, NULL, NULL, NULL, NULL                                                \
    }

/* Built-in byte-copied types. */
extern const rmc_type_t rmc_type_i32, rmc_type_i64, rmc_type_u32, rmc_type_u64, rmc_type_f64;

/* NUL-terminated strings of at most `max` bytes (terminator excluded). The element is a `char *`:
 * push &s where `char *s = "..."`; a pop or get stores a malloc'd copy in the `char *` it is given
 * (release it with rmc_type_release or free). Hash and equality compare the text. */
size_t rmc_type_string_serialize(const void *obj, void *buf, size_t cap);
rmc_status_t rmc_type_string_deserialize(const void *buf, size_t len, void *obj);
uint64_t rmc_type_string_hash(const void *obj);
int rmc_type_string_equal(const void *a, const void *b);
void rmc_type_string_destroy(void *obj);
#define RMC_TYPE_STRING(max)                                                                       \
    {                                                                                              \
        "string", sizeof(char *), (max), rmc_type_string_serialize, rmc_type_string_deserialize,   \
            rmc_type_string_hash, rmc_type_string_equal, rmc_type_string_destroy                   \
    }

/* Local. RMC_OK when t is a usable descriptor, else RMC_ERR_TYPE (rmc_last_error says why: NULL
 * name, size 0, a variable type without serialize / deserialize, max_bytes above 2^31, ...). */
rmc_status_t rmc_type_check(const rmc_type_t *t);

/* Bytes one element takes inside a container (a slot): `size` for byte-copied types (elements lie
 * back to back, as in a C array, and move without packing), 4 + max_bytes for variable ones,
 * rounded up to 4 (the length field stays aligned). 0 for an invalid descriptor. */
size_t rmc_type_slot_bytes(const rmc_type_t *t);

/* Local. Frees what a pop / get deserialized into *obj (t->destroy), a no-op for byte-copied types.
 */
void rmc_type_release(const rmc_type_t *t, void *obj);

#ifdef __cplusplus
}
#endif
#endif
