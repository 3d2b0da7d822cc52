/* The hash map (include/rmc/hashmap.h): per-owner open addressing with quadratic probing, BCL's
 * per-bucket status word (seed 001 §6.1) with a version where BCL counts readers, and a checksum
 * that makes every bucket self-verifying (as Pilaf's, Mitchell et al., USENIX ATC 2013): one state
 * machine for blocking and non-blocking forms.
 *
 * Bucket: the status word (8 bytes), the packed key and value (esz bytes), the checksum (8 bytes).
 * Status word: bits 0-1 the state, bits 2-63 a version that every release of a lock advances.
 *   FREE     never used: a find stops here, an insert takes it (compare-and-swap to RESERVED).
 *   RESERVED an insert is writing the entry, or an operation holds the bucket locked (replace,
 *            erase, update) or as the place it will reuse (a tombstone). Others wait.
 *   READY    holds an entry. Its key never changes until an erase marks it DELETED; the value
 *            changes only under the lock.
 *   DELETED  a tombstone: finds and inserts go past it; an insert made while no erase can run
 *            (promise INSERT / FIND without ERASE, or LOCAL) takes the first tombstone of the key's
 *            probe sequence, holding it while it checks the rest of the sequence for the key.
 * The checksum of a READY bucket hashes its entry and the status word it was published under
 * (entry_cs). A find reads the whole bucket in one read and believes a READY entry only when the
 * checksum matches: a read that raced with a writer (bytes of two versions, or an entry whose
 * words have not all arrived) does not match and is read again. No reader is counted, so a find
 * is one read per probe (BCL's is a fetch-and-add, the read and an add) and writers never wait
 * for readers. A writer locks a READY bucket (compare-and-swap of the exact word it read,
 * READY v -> RESERVED v) only after a read of the bucket matched that word: the entry of version v
 * has then arrived whole, so no write of an earlier holder can land after the lock. That is what
 * lets a holder write the entry and release the lock in one round trip (the put and the add
 * outstanding together): until both arrive, readers see a mismatch and read again, and writers
 * do not lock. A release (an add: RESERVED v -> READY v + 1, -> DELETED v + 1, -> FREE v + 1)
 * publishes a new version under a checksum computed for it; a lock given back with the entry
 * unchanged (a failed update) returns to READY v, whose checksum still holds. With a 16-byte
 * entry any difference in one word changes the checksum (each step is a bijection); otherwise a
 * torn read passes with probability 2^-64.
 *
 * Why tombstones are reused only without concurrent erases: an insert of K that passed a bucket
 * holding X could meet K's other inserter putting K into that same bucket after X's erase, behind
 * it: two entries for K. Without erases running, a tombstone stays one, and the inserters of one
 * key meet at the first tombstone of its sequence (whoever holds it makes the other wait there).
 * Holding a tombstone while waiting for any other bucket could deadlock two inserters of
 * different keys whose sequences cross, so an insert holding one waits only for a reserved bucket
 * of a higher slot than the one it holds (lock order: no cycle of waits); at a lower one it gives
 * its tombstone back, waits for that bucket holding nothing, and starts over, still reusing (the
 * owner's RPC handler never waits: it gives the tombstone back and answers "retry"). It used to
 * give it back and start over at every reserved bucket, and after two restarts to go past the
 * tombstones: concurrent inserts into a table of tombstones kept restarting each other and
 * answered RMC_ERR_FULL with tombstones to spare. A reusing insert thus never passes a tombstone
 * it could take, and answers RMC_ERR_FULL only when every bucket it saw held another key. Not
 * every inserter of a key reuses (the promises are per call): one that went past a tombstone may
 * find the free bucket ending the sequence after another wrote the key into that tombstone (two
 * entries for the key). So an insert that takes a free bucket after passing a tombstone holds it
 * and looks at the buckets before it again: the key there, it gives the free bucket back and
 * replaces that entry's value; a reserved bucket there, it gives it back and starts over (it
 * never waits holding one); else the free bucket is the key's. A reusing insert that meets the
 * held bucket treats it as any reserved bucket. */
#define _GNU_SOURCE
#include "config.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/hashmap.h>
#include <rmc/kv.h>
#include <rmc/queue.h>
#include <rmc/progress.h>
#include "ct.h"

#define HS_FREE     0
#define HS_RESERVED 1
#define HS_READY    2
#define HS_DELETED  3
#define HS_STATE    3
#define HS_VER      4 /* one version */
/* the adds that release a held bucket (RESERVED v): published as a new version */
#define REL_READY   (HS_READY - HS_RESERVED + HS_VER)
#define REL_DELETED (HS_DELETED - HS_RESERVED + HS_VER)
#define REL_FREE    (HS_FREE - HS_RESERVED + HS_VER)
#define HM_CS_SEED  0xbb67ae8584caa73bull
#define HM_PROMISES (RMC_PROMISE_INSERT | RMC_PROMISE_FIND | RMC_PROMISE_ERASE | RMC_PROMISE_LOCAL)
#define HM_PATHS    (RMC_HASHMAP_RDMA | RMC_HASHMAP_RPC)
#define HM_KNOWN    (HM_PROMISES | HM_PATHS)
#define HM_RPC_TRIES 16 /* RPCs told to retry (a bucket busy at the owner) before the RDMA path */

struct rmc_hashmap {
    rmcc_obj_t obj;
    uint64_t id; /* equal on every rank: the collectives' argument check */
    const rmc_type_t *kt, *vt;
    size_t kslot, vslot; /* packed key / value (rmc_type_slot_bytes) */
    size_t voff, bsz;    /* the value's offset in a bucket; bytes per bucket (multiples of 8) */
    size_t esz, csoff;   /* bytes of a packed entry (key and value slots, = bsz - 16); the
                          * checksum's offset in a bucket (8 + esz) */
    size_t per;          /* buckets per rank (a power of two) */
    uint64_t mask;       /* per - 1 */
    rmcc_parts_t pt;     /* each rank's table */
    uint64_t *peers;     /* [nranks] each rank's handle (its address there): RPCs name the map */
    unsigned path;       /* this rank's default: 0 (choose), RMC_HASHMAP_RDMA or RMC_HASHMAP_RPC */
    int plain;           /* fixed-size key and value, no type functions: the buffer's fast paths */
    /* this rank's counts (the store's counters; atomics: RPCs may run on the progress thread) */
    unsigned long long n_inserts, n_exists, n_collisions;
};

static uint64_t next_id;

/* Operation kinds: the map's; then the key/value store's, which run as K_INSERT (insert only a new
 * key) or K_UPDATE (a function of the store's) one-sided, and as themselves in an RPC. */
enum { K_INSERT, K_FIND, K_ERASE, K_UPDATE, K_INSERT_NEW, K_REPLACE, K_ADD };

static inline size_t up8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void h_release(rmcc_obj_t *o)
{
    struct rmc_hashmap *h = (struct rmc_hashmap *)o;
    rmcc_parts_free(&h->pt);
    free(h->peers);
    h->peers = NULL;
}

static inline rmc_status_t check(const struct rmc_hashmap *h, const char *fn)
{
    return rmcc_obj_check(h ? &h->obj : NULL, RMCC_MAGIC_HASHMAP, "hash map", fn);
}

/* ----------------------------------------------------------------------------- keys --- */

#define HM_SEED 0x6a09e667f3bcc908ull

static inline uint64_t key_hash(const rmc_type_t *t, const void *key, const char *pk)
{
    return rmcc_key_hash(t, key, pk, HM_SEED);
}

static inline int owner_of(uint64_t hash)
{
    return (int)(((hash >> 32) * (uint64_t)rmcc.nranks) >> 32);
}

/* memcpy of n bytes, inline for the sizes of plain keys and values (n a run-time size). */
static inline void copy_small(void *dst, const void *src, size_t n)
{
    if (n == 8)
        memcpy(dst, src, 8);
    else if (n == 4)
        memcpy(dst, src, 4);
    else if (n == 16)
        memcpy(dst, src, 16);
    else
        memcpy(dst, src, n);
}

/* key_hash of a plain map's key (h->plain: the key's bytes are its packed form), inline. */
static inline uint64_t plain_hash(const struct rmc_hashmap *h, const void *key)
{
    if (h->kt->size == 8) {
        uint64_t x;
        memcpy(&x, key, 8);
        return rmcc_mix64(x ^ HM_SEED);
    }
    return rmcc_hash_bytes(key, h->kt->size, HM_SEED);
}

/* The key in packed slot `pk` as the caller holds it (what a type's own hash or equal function
 * takes), into *objp: built in `small` (KEY_SMALL bytes) when it fits, else (or with small NULL)
 * malloc'd (*objp NULL and the status when that fails). With fn, a failure is recorded for
 * rmc_last_error under fn's name; without, it is quiet (a comparison or an owner's RPC handler).
 * Release with key_obj_drop.
 */
#define KEY_SMALL 64
static rmc_status_t key_obj(const rmc_type_t *t, const char *pk, char *small, const char *fn,
                            void **objp)
{
    char *obj = small && t->size <= KEY_SMALL ? small : malloc(t->size ? t->size : 1);
    *objp = NULL;
    if (!obj)
        return fn ? rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for a key", t->size) : RMC_ERR_NOMEM;
    rmc_status_t st;
    if (fn)
        st = rmcc_unpack(t, pk, obj, fn);
    else {
        uint32_t len;
        memcpy(&len, pk, 4);
        st = !t->max_bytes ? (memcpy(obj, pk, t->size), RMC_OK)
             : len > t->max_bytes ? RMC_ERR_INTERNAL
                                  : t->deserialize(pk + 4, len, obj);
    }
    if (st == RMC_OK)
        *objp = obj;
    else if (obj != small)
        free(obj);
    return st;
}
static void key_obj_drop(const rmc_type_t *t, void *obj, char *small)
{
    if (!obj)
        return;
    rmc_type_release(t, obj);
    if (obj != small)
        free(obj);
}

/* Does the packed key in `slot` equal the caller's key (packed: pk)? */
static int key_eq(const rmc_type_t *t, const char *slot, const char *pk, const void *key)
{
    if (!t->equal) {
        if (!t->max_bytes)
            return memcmp(slot, pk, t->size) == 0;
        uint32_t la, lb;
        memcpy(&la, slot, 4);
        memcpy(&lb, pk, 4);
        return la == lb && la <= t->max_bytes && memcmp(slot + 4, pk + 4, la) == 0;
    }
    if (!t->max_bytes)
        return t->equal(slot, key) != 0;
    char small[KEY_SMALL];
    void *obj;
    int eq = key_obj(t, slot, small, NULL, &obj) == RMC_OK && t->equal(obj, key) != 0;
    key_obj_drop(t, obj, small);
    return eq;
}

/* rmcc_pack of the map's key (value 0) or value (value 1): a serialized form above its type's
 * max_bytes fails RMC_ERR_TOO_BIG naming which of the two it is and the limit. */
static rmc_status_t pack_part(const rmc_type_t *t, const void *obj, void *slot, int value,
                              const char *fn)
{
    if (!t->max_bytes)
        return rmcc_pack(t, obj, slot, fn);
    char *sl = slot;
    size_t n = t->serialize(obj, sl + 4, t->max_bytes);
    if (n > t->max_bytes)
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "the %s serializes to %zu bytes, above the max_bytes %zu of the map's %s "
                         "type %s",
                         value ? "value" : "key", n, t->max_bytes, value ? "value" : "key",
                         t->name);
    uint32_t len = (uint32_t)n;
    memcpy(sl, &len, 4);
    return RMC_OK;
}

static inline size_t probe_slot(const struct rmc_hashmap *h, uint64_t home, size_t i)
{
    return (size_t)((home + (uint64_t)i * (i + 1) / 2) & h->mask);
}

/* Status word w locked: state RESERVED, its version kept (what a compare-and-swap from w swaps
 * in to hold the bucket, and what the holder's release adds to). */
static inline int64_t locked(int64_t w)
{
    return (w & ~(int64_t)HS_STATE) | HS_RESERVED;
}

/* The checksum of the packed entry at e (esz bytes, a multiple of 8) published under status word
 * w: the word mixed first, then each 8-byte word of the entry chained through a bijective mix. */
static inline uint64_t entry_cs(const struct rmc_hashmap *h, const char *e, int64_t w)
{
    uint64_t x = rmcc_mix64(HM_CS_SEED ^ (uint64_t)w);
    for (size_t i = 0; i < h->esz; i += 8) {
        uint64_t y;
        memcpy(&y, e + i, 8);
        x = rmcc_mix64(x ^ y);
    }
    return x;
}

/* Does the bucket whose bytes are at b (a copy, or the owner's memory) hold a whole entry of
 * status word w (a READY word read before them)? */
static inline int bucket_ok(const struct rmc_hashmap *h, const char *b, int64_t w)
{
    uint64_t cs;
    memcpy(&cs, b + h->csoff, 8);
    return cs == entry_cs(h, b + 8, w);
}

/* Writes the checksum of the entry at e for status word w after it (e + esz). */
static inline void seal(const struct rmc_hashmap *h, char *e, int64_t w)
{
    uint64_t cs = entry_cs(h, e, w);
    memcpy(e + h->esz, &cs, 8);
}

/* The owner publishes bucket b (an entry in place, or a tombstone) whose word was w, with nothing
 * running concurrently on it (RMC_PROMISE_LOCAL, the buffer's inserts, a rehash): the next
 * version in `state`, sealed when READY. */
static inline void publish_local(const struct rmc_hashmap *h, char *b, int64_t w, int state)
{
    int64_t nw = (int64_t)(((uint64_t)w & ~(uint64_t)HS_STATE) + HS_VER) | state;
    if (state == HS_READY)
        seal(h, b + 8, nw);
    __atomic_store_n((int64_t *)(void *)b, nw, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------- operations --- */

enum {
    P_PROBE,   /* issue the probe of bucket i */
    P_PROBED,  /* its status word is in v */
    P_CAND,    /* insert: tried to take a tombstone */
    P_KEYED,   /* the bucket (but its status word: in v) is in land */
    P_LOCKED,  /* tried to lock a READY bucket */
    P_UNCAND,  /* insert: give the held tombstone back, then write the value */
    P_RESTART, /* insert: give the held tombstone back, then wait for the bucket it met */
    P_AWAIT,   /* load that bucket's status word, holding nothing */
    P_AWAITED, /* it is in v: reserved still, wait; else start over from the home */
    P_WRITE,   /* write key and value, then mark READY */
    P_CLAIMED, /* insert: took a free bucket as READY at once: write key and value */
    P_VPROBE,  /* insert that took a free bucket after passing a tombstone: look again at the
                * buckets before it (from the home), holding it */
    P_VPROBED, /* their status word is in v */
    P_VKEYED,  /* a READY one is in land */
    P_VGIVE,   /* give the free bucket back: the key is there (vfound), or start over */
    P_WRITEV,  /* write the value, then mark READY */
    P_UREAD,   /* update: locked, the value is in land */
    P_SEEN1,   /* find: the whole bucket is in land */
    P_RPC,     /* send the operation to the owner */
    P_RPCED,   /* its reply is in land */
    P_FINISH   /* done once the last request completes: result */
};

/* The caller's update (or a buffer's combining) function returned st: its error, for call fn. */
static rmc_status_t update_failed(rmc_status_t st, const char *fn)
{
    return rmcc_fail(st, fn, "the update function returned %s", rmc_status_string(st));
}

typedef struct hop {
    struct rmc_hashmap *h;
    int kind, nb, state, owner;
    unsigned promise, spins;
    unsigned waits; /* _nb: times it stopped to wait for a bucket another operation holds */
    uint64_t home;
    size_t i, slot;
    long cand;   /* insert: the tombstone held (a slot), or -1 */
    long fslot;  /* insert: the free bucket held while the buckets before it are checked, or -1 */
    size_t vend; /* its index in the probe sequence */
    int passed;  /* insert: went past a tombstone since its last start from the home */
    int vfound;  /* the check found the key (P_VGIVE) */
    void *kobj;  /* _nb insert with an equal function: its own copy of the key, or NULL */
    char *b;     /* owner-space address of the current bucket */
    int64_t v;    /* a fetched status word */
    int64_t exp;  /* what a compare-and-swap expected */
    int64_t want; /* what it swapped in */
    int64_t held; /* the status word of the bucket at b while it holds it (RESERVED) */
    int64_t candw, fw; /* ... of the tombstone (cand) and the free bucket (fslot) it holds */
    int fence;         /* _nb: a write is outstanding until a fence of the owner */
    const void *key;
    const char *pk; /* the packed key (kslot bytes) */
    char *kv;       /* insert / update: packed key at 0, value at voff - 8 */
    char *land;     /* a bucket's bytes (bsz) as read */
    void *out;      /* find: the caller's value */
    void *uobj;     /* update: the value as the caller's function sees it */
    rmc_hashmap_update_fn ufn;
    void *uarg;
    int ufailed; /* local_op's update: ufn returned an error (its status, whatever it is, is the
                  * result; insert_packed reads it) */
    rmc_status_t result;
    rmc_request_h r;
    int rpc;             /* through the owner's active message (P_RPC) */
    int rkind;           /* the kind an RPC carries (a store's kind, or kind) */
    int newonly;         /* insert: a present key is RMC_ERR_EXISTS, not replaced */
    int64_t delta;       /* K_ADD's RPC: the addend; the old value comes back in *(int64 *)out */
    unsigned rpc_tries;  /* RPCs told to retry so far */
    rmc_status_t rst;    /* the RPC's status */
    char *pay;           /* its payload (hm_rpc_t, then the packed key or entry) */
    size_t plen, rlen;   /* payload bytes; reply bytes received */
    const char *fn;
    char mem[]; /* buffers: see op_bytes */
} hop_t;

/* An RPC's payload header; then the packed key (find, erase) or entry (insert). The reply: an
 * int32 outcome (RMC_OK, RMC_ERR_NOT_FOUND, RMC_ERR_FULL, RMC_ERR_RETRY), 4 bytes of padding, and
 * a find's packed value. */
typedef struct hm_rpc {
    uint32_t family; /* RMCC_RPC_HASHMAP */
    uint32_t kind;
    uint64_t map; /* the handle at the owner */
    uint64_t hash;
    uint32_t promise, pad;
} hm_rpc_t;
#define HM_REPLY_HDR 8
static size_t rpc_body(const struct rmc_hashmap *h, int kind);
static size_t rpc_reply(const struct rmc_hashmap *h, int kind);

static inline void count(unsigned long long *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static inline char *bucket(const hop_t *o, size_t slot)
{
    return o->h->pt.tab[o->owner] + slot * o->h->bsz;
}

/* The remote operations of a step: blocking, or non-blocking into o->r. */
static rmc_status_t op_cas(hop_t *o, int64_t cmp, int64_t val)
{
    o->exp = cmp;
    o->want = val;
    return o->nb ? rmc_amo_cas_i64_nb(o->b, cmp, val, &o->v, o->owner, &o->r)
                 : rmc_amo_cas_i64(o->b, cmp, val, &o->v, o->owner);
}
static rmc_status_t op_add(hop_t *o, char *b, int64_t add)
{
    return o->nb ? rmc_amo_add_i64_nb(b, add, o->owner, &o->r) : rmc_amo_add_i64(b, add, o->owner);
}
static rmc_status_t op_load(hop_t *o)
{
    /* no non-blocking atomic read: a fetch-and-add of 0 is one */
    return o->nb ? rmc_amo_fetch_add_i64_nb(o->b, 0, &o->v, o->owner, &o->r)
                 : rmc_amo_load_i64(o->b, &o->v, o->owner);
}
static rmc_status_t op_get(hop_t *o, size_t at, size_t bytes)
{
    return o->nb ? rmc_get_nb(o->b + at, o->land + at, bytes, o->owner, &o->r)
                 : rmc_get(o->b + at, o->land + at, bytes, o->owner);
}
/* Publishes the bucket it holds at b (status word o->held): seals the entry in kv for the word
 * it will carry, writes its bytes from offset `at` (to the checksum's end) and, with `rel`
 * (REL_READY), releases the lock by that add, the write and the add outstanding together (see the
 * top); rel 0: the word is READY already (an insert's claim). Blocking: complete at the owner on
 * return; _nb: the add into o->r, the write completed by a fence at P_FINISH. */
static rmc_status_t op_publish(hop_t *o, size_t at, int64_t rel)
{
    const struct rmc_hashmap *h = o->h;
    seal(h, o->kv, o->held + rel);
    rmc_status_t st = rmc_put_nb(o->kv + (at - 8), o->b + at, h->bsz - at, o->owner, NULL);
    if (st != RMC_OK)
        return st;
    atomic_thread_fence(memory_order_release);
    if (o->nb) {
        o->fence = 1;
        return rel ? rmc_amo_add_i64_nb(o->b, rel, o->owner, &o->r) : RMC_OK;
    }
    if (rel && (st = rmc_amo_add_i64(o->b, rel, o->owner)) != RMC_OK)
        return st;
    return rmc_fence(o->owner);
}

static void pause_round(unsigned *spins)
{
    rmc_wait_round(spins);
    rmc_thread_pause();
}

/* Unpacks the value of the bucket in land into the caller's. */
static rmc_status_t take_value(hop_t *o)
{
    return rmcc_unpack(o->h->vt, o->land + o->h->voff, o->out, o->fn);
}

/* After a failed remote operation: the buckets an insert holds (a tombstone, a free bucket being
 * checked) are given back, as far as that still succeeds, so that nobody waits for them forever. */
static void give_back(hop_t *o)
{
    if (o->fslot >= 0)
        (void)rmc_amo_add_i64(bucket(o, (size_t)o->fslot), REL_FREE, o->owner);
    if (o->cand >= 0)
        (void)rmc_amo_add_i64(bucket(o, (size_t)o->cand), REL_DELETED, o->owner);
    o->fslot = o->cand = -1;
}

/* An insert's RMC_ERR_FULL: every bucket of the owner's table held another key (or a tombstone the
 * insert's promise did not let it reuse). */
static rmc_status_t full(const hop_t *o)
{
    return rmcc_fail(RMC_ERR_FULL, o->fn,
                     "rank %d's table (%zu buckets) has no bucket left for the key%s", o->owner,
                     o->h->per,
                     o->promise && !(o->promise & RMC_PROMISE_ERASE)
                         ? ""
                         : " (an insert whose promise allows erases reuses no tombstone)");
}

/* Advances o. Blocking operations run to the end; _nb ones return when a request is outstanding
 * or they must wait (*done = 0). Returns the operation's status once *done. */
static rmc_status_t advance(hop_t *o, int *done)
{
    struct rmc_hashmap *h = o->h;
    rmc_status_t st = RMC_OK;
    int64_t s;
    *done = 0;
#define WAIT_THEN(next)                                                                            \
    do {                                                                                           \
        o->state = (next);                                                                         \
        if (o->nb)                                                                                 \
            return o->waits++, RMC_OK;                                                             \
        pause_round(&o->spins);                                                                    \
    } while (0)
    for (;;) {
        if (o->nb && o->r && o->state == P_RPCED) { /* the RPC's status is the handler's */
            int fin = 0;
            o->rst = rmc_test(&o->r, &fin);
            if (o->rst == RMC_OK && !fin)
                return RMC_OK;
        } else if (o->nb && o->r) {
            int fin = 0;
            if ((st = rmc_test(&o->r, &fin)) != RMC_OK)
                return *done = 1, give_back(o), st;
            if (!fin)
                return RMC_OK;
        }
        switch (o->state) {
        case P_RPC:
            o->state = P_RPCED;
            o->rlen = 0;
            if (o->nb)
                o->rst = rmc_am_send_nb(o->owner, rmcc.rpc_id, o->pay, o->plen, o->land,
                                        HM_REPLY_HDR + rpc_reply(h, o->rkind), &o->rlen, &o->r);
            else
                o->rst = rmc_am_send(o->owner, rmcc.rpc_id, o->pay, o->plen, o->land,
                                     HM_REPLY_HDR + rpc_reply(h, o->rkind), &o->rlen);
            break;
        case P_RPCED: {
            if (o->rst == RMC_ERR_MPI || o->rst == RMC_ERR_TOO_BIG) /* comm's, with its message */
                return *done = 1, rmc_error_in(o->rst, o->fn);
            if (o->rst != RMC_OK) /* the owner's handler refused it */
                return *done = 1, rmcc_fail(o->rst, o->fn,
                                            "rank %d (the key's owner) refused the operation: %s",
                                            o->owner, rmc_status_string(o->rst));
            int32_t out = RMC_ERR_INTERNAL;
            if (o->rlen >= HM_REPLY_HDR)
                memcpy(&out, o->land, 4);
            if (out == RMC_ERR_RETRY) { /* a bucket busy at the owner: again, or one-sided */
                if (++o->rpc_tries >= HM_RPC_TRIES)
                    o->state = P_PROBE;
                else
                    WAIT_THEN(P_RPC);
                break;
            }
            if (out == RMC_OK && o->rkind == K_FIND)
                return *done = 1, rmcc_unpack(h->vt, o->land + HM_REPLY_HDR, o->out, o->fn);
            if (out == RMC_OK && o->rkind == K_ADD && o->out)
                memcpy(o->out, o->land + HM_REPLY_HDR, 8);
            if (out == RMC_ERR_FULL)
                return *done = 1, full(o);
            if (out != RMC_OK && out != RMC_ERR_NOT_FOUND && out != RMC_ERR_EXISTS)
                return *done = 1, rmcc_fail(RMC_ERR_INTERNAL, o->fn,
                                            "rank %d answered an RPC with %d", o->owner, (int)out);
            return *done = 1, (rmc_status_t)out;
        }
        case P_PROBE:
            if (o->i >= h->per) { /* every bucket of the owner seen */
                if (o->kind == K_INSERT && o->cand >= 0) {
                    o->slot = (size_t)o->cand;
                    o->b = bucket(o, o->slot);
                    o->held = o->candw;
                    o->cand = -1;
                    o->state = P_WRITE;
                    break;
                }
                if (o->kind == K_INSERT)
                    return *done = 1, full(o);
                return *done = 1, RMC_ERR_NOT_FOUND;
            }
            o->slot = probe_slot(h, o->home, o->i);
            o->b = bucket(o, o->slot);
            o->state = P_PROBED;
            if (o->kind == K_INSERT) /* a free bucket: READY at once, unless it must check */
                st = o->cand >= 0 ? op_load(o)
                                  : op_cas(o, HS_FREE, o->passed ? HS_RESERVED : HS_READY | HS_VER);
            else if (o->kind == K_FIND) { /* one read of the whole bucket */
                o->state = P_SEEN1;
                st = op_get(o, 0, h->bsz);
            } else
                st = op_load(o);
            break;
        case P_PROBED:
            s = o->v & HS_STATE;
            if (o->kind == K_INSERT) {
                if (o->cand < 0 && o->v == o->exp) { /* the compare-and-swap took a free bucket */
                    o->held = o->want;
                    if (o->passed) { /* a tombstone it passed may hold the key by now */
                        o->fw = o->held;
                        o->fslot = (long)o->slot;
                        o->vend = o->i;
                        o->i = 0;
                        o->state = P_VPROBE;
                    } else
                        o->state = P_CLAIMED;
                    break;
                }
                if (s == HS_FREE && o->cand >= 0) { /* the key is absent: use the tombstone */
                    o->slot = (size_t)o->cand;
                    o->b = bucket(o, o->slot);
                    o->held = o->candw;
                    o->cand = -1;
                    o->state = P_WRITE;
                } else if (s == HS_FREE) { /* free at a later version (given back): take it */
                    st = op_cas(o, o->v,
                                o->passed ? locked(o->v) : o->v + (HS_READY | HS_VER));
                } else if (s == HS_RESERVED && o->cand >= 0 && o->slot > (size_t)o->cand) {
                    WAIT_THEN(P_PROBE); /* holding the tombstone: waits only upwards */
                } else if (s == HS_RESERVED && o->cand >= 0) {
                    o->state = P_RESTART; /* give it back, wait for this bucket, start over */
                } else if (s == HS_RESERVED) {
                    WAIT_THEN(P_PROBE);
                } else if (s == HS_READY) {
                    o->state = P_KEYED;
                    st = op_get(o, 8, h->bsz - 8);
                } else if (o->cand < 0 && o->promise && !(o->promise & RMC_PROMISE_ERASE)) {
                    o->state = P_CAND; /* a tombstone to reuse, unless the key is further on */
                    st = op_cas(o, o->v, locked(o->v));
                } else {
                    count(&h->n_collisions);
                    o->passed |= o->cand < 0;
                    o->i++;
                    o->state = P_PROBE;
                }
            } else { /* erase, update */
                if (s == HS_FREE)
                    return *done = 1, RMC_ERR_NOT_FOUND;
                if (s == HS_RESERVED) {
                    WAIT_THEN(P_PROBE);
                } else if (s == HS_READY) {
                    o->state = P_KEYED;
                    st = op_get(o, 8, h->bsz - 8);
                } else {
                    o->i++;
                    o->state = P_PROBE;
                }
            }
            break;
        case P_CAND:
            if (o->v == o->exp) {
                o->candw = o->want;
                o->cand = (long)o->slot;
                o->i++;
            }
            o->state = P_PROBE; /* taken by another meanwhile: see what it is now */
            break;
        case P_KEYED:
            if (!bucket_ok(h, o->land, o->v)) { /* a writer's, not arrived whole: read again */
                WAIT_THEN(P_PROBE);
                break;
            }
            if (!key_eq(h->kt, o->land + 8, o->pk, o->key)) {
                if (o->kind == K_INSERT)
                    count(&h->n_collisions);
                o->i++;
                o->state = P_PROBE;
                break;
            }
            if (o->kind == K_INSERT && o->newonly) { /* present: nothing to do but give back */
                count(&h->n_exists);
                o->result = RMC_ERR_EXISTS;
                o->state = P_FINISH;
                if (o->cand >= 0) {
                    char *c = bucket(o, (size_t)o->cand);
                    o->cand = -1;
                    st = op_add(o, c, REL_DELETED);
                }
                break;
            }
            o->state = P_LOCKED; /* the version whose entry was just read whole */
            st = op_cas(o, o->v, locked(o->v));
            break;
        case P_LOCKED:
            if (o->v != o->exp) { /* it changed: look again */
                WAIT_THEN(P_PROBE);
                break;
            }
            o->held = o->want;
            if (o->kind == K_INSERT) {
                o->state = o->cand >= 0 ? P_UNCAND : P_WRITEV;
            } else if (o->kind == K_ERASE) {
                o->result = RMC_OK;
                o->state = P_FINISH;
                st = op_add(o, o->b, REL_DELETED);
            } else if (o->rkind == K_REPLACE) { /* the new value is packed already */
                o->state = P_WRITEV;
            } else { /* the value read with the key is the locked version's */
                o->state = P_UREAD;
            }
            break;
        case P_UNCAND:
        case P_RESTART: {
            char *c = bucket(o, (size_t)o->cand);
            o->cand = -1;
            o->state = o->state == P_RESTART ? P_AWAIT : P_WRITEV; /* (b: the bucket it met) */
            st = op_add(o, c, REL_DELETED);
            break;
        }
        case P_AWAIT:
            o->state = P_AWAITED;
            st = op_load(o);
            break;
        case P_AWAITED:
            if ((o->v & HS_STATE) == HS_RESERVED) {
                WAIT_THEN(P_AWAIT);
                break;
            }
            o->i = 0;
            o->passed = 0;
            o->state = P_PROBE;
            break;
        case P_WRITE:
            count(&h->n_inserts);
            o->result = RMC_OK;
            o->state = P_FINISH;
            st = op_publish(o, 8, REL_READY);
            break;
        case P_CLAIMED: /* READY with no entry yet: readers and writers wait for its checksum */
            count(&h->n_inserts);
            o->result = RMC_OK;
            o->state = P_FINISH;
            st = op_publish(o, 8, 0);
            break;
        case P_VPROBE:
            if (o->i >= o->vend) { /* the key is before it nowhere: the free bucket is its */
                o->slot = (size_t)o->fslot;
                o->b = bucket(o, o->slot);
                o->held = o->fw;
                o->fslot = -1;
                o->state = P_WRITE;
                break;
            }
            o->slot = probe_slot(h, o->home, o->i);
            o->b = bucket(o, o->slot);
            o->state = P_VPROBED;
            st = op_load(o);
            break;
        case P_VPROBED:
            s = o->v & HS_STATE;
            if (s == HS_READY) {
                o->state = P_VKEYED;
                st = op_get(o, 8, h->bsz - 8);
            } else if (s == HS_DELETED) {
                o->i++;
                o->state = P_VPROBE;
            } else { /* reserved (or changed): never wait holding a bucket */
                o->vfound = 0;
                o->state = P_VGIVE;
            }
            break;
        case P_VKEYED:
            if (!bucket_ok(h, o->land, o->v)) { /* being written: as a reserved one */
                o->vfound = 0;
                o->state = P_VGIVE;
            } else if (key_eq(h->kt, o->land + 8, o->pk, o->key)) {
                o->vfound = 1;
                o->state = P_VGIVE;
            } else {
                o->i++;
                o->state = P_VPROBE;
            }
            break;
        case P_VGIVE: {
            char *f = bucket(o, (size_t)o->fslot);
            o->fslot = -1;
            if (o->vfound) {
                o->state = P_KEYED; /* the key and its bucket are in land and b: replace */
            } else {
                o->i = 0; /* start over (the bucket it met is busy: wait there) */
                o->passed = 0;
                o->state = P_PROBE;
            }
            st = op_add(o, f, REL_FREE);
            break;
        }
        case P_WRITEV: /* the bucket's own key bytes (equal to the caller's) under the checksum */
            memcpy(o->kv, o->land + 8, h->voff - 8);
            o->result = RMC_OK;
            o->state = P_FINISH;
            st = op_publish(o, h->voff, REL_READY);
            break;
        case P_UREAD: {
            rmc_status_t us = rmcc_unpack(h->vt, o->land + h->voff, o->uobj, o->fn);
            if (us == RMC_OK) {
                us = o->ufn(o->uobj, o->uarg);
                if (us != RMC_OK)
                    update_failed(us, o->fn);
                else
                    us = pack_part(h->vt, o->uobj, o->kv + (h->voff - 8), 1, o->fn);
                rmc_type_release(h->vt, o->uobj);
            }
            if (us == RMC_OK) {
                o->state = P_WRITEV;
                break;
            }
            o->result = us; /* unlock, nothing written: the version read, its checksum holds */
            o->state = P_FINISH;
            st = op_add(o, o->b, HS_READY - HS_RESERVED);
            break;
        }
        case P_SEEN1: {
            int64_t w;
            memcpy(&w, o->land, 8);
            s = w & HS_STATE;
            if (s == HS_FREE)
                return *done = 1, RMC_ERR_NOT_FOUND;
            /* reserved (an insert, perhaps of this key, or a writer of its value), or an entry not
             * arrived whole (find-only: no writer runs, none can be): read it again */
            if (s == HS_RESERVED ||
                (s == HS_READY && o->promise != RMC_PROMISE_FIND && !bucket_ok(h, o->land, w))) {
                WAIT_THEN(P_PROBE);
                break;
            }
            if (s == HS_READY && key_eq(h->kt, o->land + 8, o->pk, o->key))
                return *done = 1, take_value(o);
            o->i++;
            o->state = P_PROBE;
            break;
        }
        case P_FINISH:
            if (o->fence) { /* an _nb publish's write (its add has completed) */
                o->fence = 0;
                if ((st = rmc_fence(o->owner)) != RMC_OK)
                    return *done = 1, st;
            }
            return *done = 1, o->result;
        }
        if (st != RMC_OK)
            return *done = 1, give_back(o), st;
    }
#undef WAIT_THEN
}

/* ------------------------------------------------------------------- the owner alone --- */

/* Packs value object v into a bucket's value slot at dst: a serialized value through a
 * temporary, so that one that does not fit (RMC_ERR_TOO_BIG) leaves the slot as it was; a
 * byte-copied one in place (a copy, which cannot fail). */
static rmc_status_t pack_value(const struct rmc_hashmap *h, const void *v, char *dst,
                               const char *fn)
{
    if (!h->vt->max_bytes)
        return pack_part(h->vt, v, dst, 1, fn);
    char *tmp = malloc(h->vslot);
    if (!tmp)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for a packed value", h->vslot);
    rmc_status_t st = pack_part(h->vt, v, tmp, 1, fn);
    if (st == RMC_OK)
        memcpy(dst, tmp, h->vslot);
    free(tmp);
    return st;
}

/* RMC_PROMISE_LOCAL: the caller owns the key and nothing runs concurrently: plain loads and
 * stores on its own table. */
static rmc_status_t local_op(hop_t *o)
{
    struct rmc_hashmap *h = o->h;
    char *t = h->pt.ltab[o->owner];
    long cand = -1;
    for (size_t i = 0; i < h->per; i++) {
        char *b = t + probe_slot(h, o->home, i) * h->bsz;
        int64_t *sw = (int64_t *)(void *)b;
        int64_t w = __atomic_load_n(sw, __ATOMIC_ACQUIRE), s = w & HS_STATE;
        if (s == HS_DELETED || s == HS_RESERVED) {
            if (cand < 0 && s == HS_DELETED)
                cand = (long)probe_slot(h, o->home, i);
            continue;
        }
        if (s == HS_FREE) {
            if (o->kind != K_INSERT)
                return RMC_ERR_NOT_FOUND;
            if (cand >= 0) {
                b = t + (size_t)cand * h->bsz;
                w = __atomic_load_n((int64_t *)(void *)b, __ATOMIC_ACQUIRE);
            }
            memcpy(b + 8, o->kv, h->esz);
            publish_local(h, b, w, HS_READY);
            count(&h->n_inserts);
            return RMC_OK;
        }
        if (!key_eq(h->kt, b + 8, o->pk, o->key))
            continue;
        if (o->rkind == K_REPLACE) {
            memcpy(b + h->voff, o->kv + (h->voff - 8), h->vslot);
            publish_local(h, b, w, HS_READY);
            return RMC_OK;
        }
        switch (o->kind) {
        case K_INSERT:
            if (o->newonly) {
                count(&h->n_exists);
                return RMC_ERR_EXISTS;
            }
            memcpy(b + h->voff, o->kv + (h->voff - 8), h->vslot);
            publish_local(h, b, w, HS_READY);
            return RMC_OK;
        case K_FIND:
            return rmcc_unpack(h->vt, b + h->voff, o->out, o->fn);
        case K_ERASE:
            publish_local(h, b, w, HS_DELETED);
            return RMC_OK;
        default: {
            rmc_status_t st = rmcc_unpack(h->vt, b + h->voff, o->uobj, o->fn);
            if (st != RMC_OK)
                return st;
            if ((st = o->ufn(o->uobj, o->uarg)) != RMC_OK) {
                o->ufailed = 1;
                update_failed(st, o->fn);
            } else if ((st = pack_value(h, o->uobj, b + h->voff, o->fn)) == RMC_OK)
                publish_local(h, b, w, HS_READY);
            rmc_type_release(h->vt, o->uobj);
            return st;
        }
        }
    }
    if (o->kind == K_INSERT && cand >= 0) {
        char *b = t + (size_t)cand * h->bsz;
        memcpy(b + 8, o->kv, h->esz);
        publish_local(h, b, __atomic_load_n((int64_t *)(void *)b, __ATOMIC_ACQUIRE), HS_READY);
        count(&h->n_inserts);
        return RMC_OK;
    }
    return o->kind == K_INSERT ? RMC_ERR_FULL : RMC_ERR_NOT_FOUND;
}

/* ------------------------------------------------------------------ the owner's RPCs --- */

/* An RPC insert that took the free bucket at index `end` of the probe sequence of hash x after
 * passing a tombstone: the buckets before it again. RMC_OK: the key is in none of them;
 * RMC_ERR_EXISTS: it is in the one at index *at; RMC_ERR_RETRY: one of them is reserved (an
 * insert writing, perhaps this key into a tombstone). */
static int32_t verify_before(const struct rmc_hashmap *h, char *t, uint64_t x, size_t end,
                             const char *e, const void *key, size_t *at)
{
    for (size_t j = 0; j < end; j++) {
        char *b = t + probe_slot(h, x & h->mask, j) * h->bsz;
        int64_t w = __atomic_load_n((int64_t *)(void *)b, __ATOMIC_SEQ_CST), s = w & HS_STATE;
        if (s == HS_DELETED)
            continue;
        if (s != HS_READY || !bucket_ok(h, b, w)) /* (an entry still arriving: as reserved) */
            return RMC_ERR_RETRY;
        if (key_eq(h->kt, b + 8, e, key)) {
            *at = j;
            return RMC_ERR_EXISTS;
        }
    }
    return RMC_OK;
}

/* The owner's RPC handler publishes bucket b, which it holds (word `held`): the entry e (esz
 * bytes) copied in first unless NULL, sealed for the next version, the lock released. */
static void serve_publish(const struct rmc_hashmap *h, char *b, const char *e, int64_t held)
{
    if (e)
        memcpy(b + 8, e, h->esz);
    seal(h, b + 8, held + REL_READY);
    __atomic_fetch_add((int64_t *)(void *)b, REL_READY, __ATOMIC_RELEASE);
}

/* One operation sent by another rank (or this one), executed by the owner on its table with CPU
 * atomics: the same protocol as the one-sided path (thread AMO mode: every atomic on this memory is
 * a CPU atomic, so the two paths mix), but a handler never waits: where the one-sided path would
 * wait (a bucket being written, a lock held by readers) it answers RMC_ERR_RETRY, having changed
 * nothing, and the origin sends it again. e: the packed key (find, erase) or entry (insert); key:
 * the key as the caller holds it, for a type's equal function. */
static int32_t serve_op(struct rmc_hashmap *h, int kind, unsigned promise, uint64_t x,
                        const char *e, const void *key, char *value_out, int64_t delta)
{
    char *t = h->pt.ltab[rmcc.rank];
    const rmc_type_t *kt = h->kt;
    long cand = -1;
    int64_t candw = 0; /* the tombstone's word while it holds it */
    int ins = kind == K_INSERT || kind == K_INSERT_NEW;
    int reuse = ins && promise && !(promise & RMC_PROMISE_ERASE);
    int passed = 0; /* went past a tombstone without taking it */
    int32_t out;
    for (size_t i = 0; i < h->per;) {
        size_t slot = probe_slot(h, x & h->mask, i);
        char *b = t + slot * h->bsz;
        int64_t *sw = (int64_t *)(void *)b;
        /* sequentially consistent, as the compare-and-swaps below: an insert that takes a free
         * bucket and then reads the buckets before it again, and one that takes a tombstone
         * there and then reads on to that bucket, must not both miss the other (see the top) */
        int64_t w = __atomic_load_n(sw, __ATOMIC_SEQ_CST), s = w & HS_STATE;
        if (s == HS_RESERVED) {
            out = RMC_ERR_RETRY;
            goto give_back;
        }
        if (s == HS_FREE) {
            if (!ins) {
                out = RMC_ERR_NOT_FOUND;
                goto give_back;
            }
            if (cand >= 0) {
                b = t + (size_t)cand * h->bsz;
                sw = (int64_t *)(void *)b;
            } else if (!__atomic_compare_exchange_n(sw, &w, locked(w), 0, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
                continue; /* changed meanwhile: look again */
            } else if (passed) { /* a tombstone passed may hold the key by now (see the top) */
                size_t j = 0;
                int32_t seen = verify_before(h, t, x, i, e, key, &j);
                if (seen != RMC_OK) {
                    __atomic_fetch_add(sw, REL_FREE, __ATOMIC_RELEASE);
                    if (seen == RMC_ERR_RETRY) {
                        out = RMC_ERR_RETRY;
                        goto give_back;
                    }
                    i = j; /* the key's bucket: replace there */
                    continue;
                }
            }
            serve_publish(h, b, e, cand < 0 ? locked(w) : candw); /* the word it holds */
            count(&h->n_inserts);
            return RMC_OK;
        }
        if (s == HS_DELETED) {
            if (reuse && cand < 0) {
                candw = locked(w);
                if (!__atomic_compare_exchange_n(sw, &w, candw, 0, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST))
                    continue;
                cand = (long)slot;
            } else
                passed = 1;
            if (ins)
                count(&h->n_collisions);
            i++;
            continue;
        }
        /* READY: an entry not arrived whole (a one-sided writer's) is as a reserved bucket */
        if (!bucket_ok(h, b, w)) {
            out = RMC_ERR_RETRY;
            goto give_back;
        }
        /* its key does not change until it is erased */
        if (kind == K_FIND) {
            int eq = key_eq(kt, b + 8, e, key);
            if (eq)
                memcpy(value_out, b + h->voff, h->vslot);
            /* still that version: no writer locked it before the copy (a writer writes only
             * after its lock), so the value is the checked entry's */
            if (__atomic_load_n(sw, __ATOMIC_SEQ_CST) != w)
                continue; /* look again */
            if (eq)
                return RMC_OK;
            i++;
            continue;
        }
        if (!key_eq(kt, b + 8, e, key)) {
            if (ins)
                count(&h->n_collisions);
            i++;
            continue;
        }
        if (kind == K_INSERT_NEW) {
            count(&h->n_exists);
            out = RMC_ERR_EXISTS;
            goto give_back;
        }
        int64_t held = locked(w); /* the checked version */
        if (!__atomic_compare_exchange_n(sw, &w, held, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            out = RMC_ERR_RETRY; /* it changed */
            goto give_back;
        }
        if (kind == K_ERASE) {
            __atomic_fetch_add(sw, REL_DELETED, __ATOMIC_RELEASE);
        } else {
            if (kind == K_ADD) {
                int64_t v;
                memcpy(&v, b + h->voff, 8);
                memcpy(value_out, &v, 8);
                v = (int64_t)((uint64_t)v + (uint64_t)delta);
                memcpy(b + h->voff, &v, 8);
            } else /* insert (replace), K_REPLACE */
                memcpy(b + h->voff, e + (h->voff - 8), h->vslot);
            serve_publish(h, b, NULL, held);
        }
        out = RMC_OK;
        goto give_back;
    }
    if (ins && cand >= 0) {
        serve_publish(h, t + (size_t)cand * h->bsz, e, candw);
        count(&h->n_inserts);
        return RMC_OK;
    }
    return ins ? RMC_ERR_FULL : RMC_ERR_NOT_FOUND;
give_back:
    if (cand >= 0)
        __atomic_fetch_add((int64_t *)(void *)(t + (size_t)cand * h->bsz), REL_DELETED,
                           __ATOMIC_RELEASE);
    return out;
}

/* The payload bytes after the header of an RPC of `kind`, and the reply bytes after its outcome. */
static size_t rpc_body(const struct rmc_hashmap *h, int kind)
{
    switch (kind) {
    case K_INSERT:
    case K_INSERT_NEW:
    case K_REPLACE:
        return h->esz; /* the packed entry */
    case K_ADD:
        return h->kslot + 8; /* the packed key, the addend */
    default:
        return h->kslot;
    }
}
static size_t rpc_reply(const struct rmc_hashmap *h, int kind)
{
    return kind == K_FIND ? h->vslot : kind == K_ADD ? 8 : 0;
}

rmc_status_t rmcc_hashmap_serve(const void *payload, size_t len, void *reply, size_t reply_cap,
                                size_t *reply_len)
{
    hm_rpc_t hd;
    if (len < sizeof(hd))
        return RMC_ERR_ARG;
    memcpy(&hd, payload, sizeof(hd));
    struct rmc_hashmap *h = (struct rmc_hashmap *)(uintptr_t)hd.map;
    if (!h || h->obj.magic != RMCC_MAGIC_HASHMAP)
        return RMC_ERR_HANDLE;
    const char *e = (const char *)payload + sizeof(hd);
    int kind = (int)hd.kind;
    if (kind == K_UPDATE || kind < K_INSERT || kind > K_ADD ||
        len != sizeof(hd) + rpc_body(h, kind) || reply_cap < HM_REPLY_HDR + rpc_reply(h, kind))
        return RMC_ERR_ARG;
    int64_t delta = 0;
    if (kind == K_ADD)
        memcpy(&delta, e + h->kslot, 8);
    const rmc_type_t *kt = h->kt;
    char small[KEY_SMALL];
    void *obj = NULL;
    if (kt->equal && kt->max_bytes && key_obj(kt, e, small, NULL, &obj) != RMC_OK)
        return RMC_ERR_NOMEM; /* the type's equal needs the key as the caller holds it */
    char *r = reply;
    int32_t out = serve_op(h, kind, hd.promise, hd.hash, e, obj ? obj : e, r + HM_REPLY_HDR, delta);
    key_obj_drop(kt, obj, small);
    memcpy(r, &out, 4);
    memset(r + 4, 0, 4);
    *reply_len = HM_REPLY_HDR + (out == RMC_OK ? rpc_reply(h, kind) : 0);
    return RMC_OK;
}

/* Which path an operation takes: RPC (one active message, the owner does the work) or RDMA
 * (one-sided). Chosen: RPC for an insert or erase whose owner is on another node, in thread AMO
 * mode (where the one-sided path's atomics are active messages too, one round trip each: the RPC
 * is one round trip for the whole operation); RDMA otherwise (node-local owners are reached by
 * CPU atomics on shared memory; a find is one read per probe, which no RPC beats; an update runs
 * the caller's function on the caller). Forced: RMC_HASHMAP_RDMA / _RPC in the promise argument or
 * as the map's default; RPC needs thread AMO mode (with MPI atomics the owner's CPU atomics would
 * not be atomic with other ranks' one-sided ones) and is not there for updates. */
static rmc_status_t choose_path(const struct rmc_hashmap *h, int kind, unsigned promise, int owner,
                                int *rpc, const char *fn)
{
    unsigned force = promise & HM_PATHS ? promise & HM_PATHS : h->path;
    *rpc = 0;
    if (force == RMC_HASHMAP_RDMA || (promise & RMC_PROMISE_LOCAL))
        return RMC_OK;
    int can = rmc_amo_mode() == RMC_AMO_MODE_THREAD && kind != K_UPDATE &&
              sizeof(hm_rpc_t) + h->bsz <= rmc_am_max_payload();
    if (force == RMC_HASHMAP_RPC && !can && !(promise & HM_PATHS))
        return RMC_OK; /* the map's default: an operation without an RPC goes one-sided */
    if (force == RMC_HASHMAP_RPC) {
        if (!can)
            return rmcc_fail(RMC_ERR_UNSUPPORTED, fn,
                             kind == K_UPDATE ? "an update runs on the caller: no RPC path"
                             : rmc_amo_mode() != RMC_AMO_MODE_THREAD
                                 ? "the RPC path needs RMC_AMO=thread (with MPI atomics the "
                                   "owner's CPU atomics are not atomic with other ranks' "
                                   "one-sided ones)"
                                 : "an entry does not fit in an active message "
                                   "(RMC_AM_MAX_PAYLOAD)");
        *rpc = 1;
        return RMC_OK;
    }
    *rpc = can && kind != K_FIND && rmc_same_node(owner) != 1;
    return RMC_OK;
}

/* Fills o's RPC payload (after op_init). */
static void rpc_payload(hop_t *o)
{
    struct rmc_hashmap *h = o->h;
    hm_rpc_t hd = {RMCC_RPC_HASHMAP, (uint32_t)o->rkind, h->peers[o->owner],
                   key_hash(h->kt, o->key, o->pk), o->promise & HM_PROMISES, 0};
    memcpy(o->pay, &hd, sizeof(hd));
    size_t n = rpc_body(h, o->rkind);
    if (o->rkind == K_ADD) {
        memcpy(o->pay + sizeof(hd), o->pk, h->kslot);
        memcpy(o->pay + sizeof(hd) + h->kslot, &o->delta, 8);
    } else
        memcpy(o->pay + sizeof(hd), n == rpc_body(h, K_FIND) ? o->pk : o->kv, n);
    o->plen = sizeof(hd) + n;
    o->state = P_RPC;
}

/* ------------------------------------------------------------------------ entry points --- */

/* Bytes of an operation's buffers: the packed key, the packed entry (insert, update), a landing
 * bucket, the update's value object. */
static size_t op_bytes(const struct rmc_hashmap *h)
{
    return up8(h->kslot) + h->bsz + h->bsz + up8(h->vt->size) + sizeof(hm_rpc_t) + h->bsz;
}

/* Sets up o (its buffers at `mem`): packs the key (and the value of an insert), hashes it. */
static rmc_status_t op_init(hop_t *o, struct rmc_hashmap *h, int kind, const void *key,
                            const void *value, char *mem, const char *fn)
{
    o->h = h;
    o->kind = kind;
    o->state = P_PROBE;
    o->i = 0;
    o->cand = o->fslot = -1;
    o->passed = o->vfound = 0;
    o->kobj = NULL;
    o->spins = o->waits = 0;
    o->r = RMC_REQUEST_NULL;
    o->result = RMC_OK;
    o->key = key;
    o->fn = fn;
    char *pkbuf = mem;
    o->kv = mem + up8(h->kslot);
    memset(o->kv, 0, h->bsz); /* the slots' padding is hashed and written too */
    o->fence = 0;
    o->exp = o->want = o->held = o->candw = o->fw = 0;
    o->land = o->kv + h->bsz;
    o->uobj = o->land + h->bsz;
    o->pay = (char *)o->uobj + up8(h->vt->size);
    o->rpc = 0;
    o->rpc_tries = 0;
    o->rkind = kind;
    o->newonly = 0;
    o->delta = 0;
    rmc_status_t st;
    if (kind == K_INSERT) {
        if ((st = pack_part(h->kt, key, o->kv, 0, fn)) != RMC_OK ||
            (st = pack_part(h->vt, value, o->kv + (h->voff - 8), 1, fn)) != RMC_OK)
            return st;
        o->pk = o->kv;
    } else if (h->kt->max_bytes) {
        if ((st = pack_part(h->kt, key, pkbuf, 0, fn)) != RMC_OK)
            return st;
        o->pk = pkbuf;
    } else {
        o->pk = key;
    }
    uint64_t x = key_hash(h->kt, key, o->pk);
    o->owner = owner_of(x);
    o->home = x & h->mask;
    return RMC_OK;
}

/* An _nb insert's own copy of its key (the caller may change or free the key once the call
 * returns): for a type with an equal function, which compares against the key as the caller holds
 * it; the other types compare the packed key, which the operation holds already. */
static rmc_status_t own_key(hop_t *o, const char *fn)
{
    if (!o->h->kt->equal)
        return RMC_OK;
    rmc_status_t st = key_obj(o->h->kt, o->pk, NULL, fn, &o->kobj);
    if (st == RMC_OK)
        o->key = o->kobj;
    return st;
}
static void drop_key(hop_t *o)
{
    key_obj_drop(o->h->kt, o->kobj, NULL);
    o->kobj = NULL;
}

static rmc_status_t nb_step(void *state, int *done)
{
    hop_t *o = state;
    rmc_status_t st = advance(o, done);
    if (*done) {
        o->h->obj.pending--; /* (rmcc_quiesce) */
        if (o->r) /* after a failure: nothing may stay outstanding */
            rmc_wait(&o->r);
        drop_key(o);
        free(o);
    }
    return st;
}

/* The checks every operation makes: `need` is the pointer it cannot do without (the value of an
 * insert, the result of a find, the function of an update; NULL for an erase). */
static rmc_status_t arg_check(struct rmc_hashmap *h, int kind, const void *key, const void *need,
                              unsigned promise, const char *fn)
{
    static const char *const what[] = {"value", "value", "", "update function",
                                       "value", "value", ""};
    rmc_status_t st = check(h, fn);
    if (st != RMC_OK)
        return st;
    if (!key)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL key");
    if (!need && kind != K_ERASE && kind != K_ADD)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", what[kind]);
    if ((promise & ~(unsigned)HM_KNOWN) || (promise & HM_PATHS) == HM_PATHS)
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "promise 0x%x: a hash map knows INSERT, FIND, ERASE and LOCAL, and one of "
                         "RMC_HASHMAP_RDMA / _RPC",
                         promise);
    return RMC_OK;
}

/* K_ADD one-sided: the value (an int64) gets the delta, *out the value before. */
static rmc_status_t add_fn(void *value, void *arg)
{
    hop_t *o = arg;
    int64_t v;
    memcpy(&v, value, 8);
    if (o->out)
        memcpy(o->out, &v, 8);
    v = (int64_t)((uint64_t)v + (uint64_t)o->delta);
    memcpy(value, &v, 8);
    return RMC_OK;
}

/* One operation of any kind: checks, packing, then the owner's plain path (LOCAL), the state
 * machine run to the end (blocking) or a request (req). */
static rmc_status_t hm_op(struct rmc_hashmap *h, int kind, const void *key, const void *value,
                          void *out, rmc_hashmap_update_fn ufn, void *uarg, unsigned promise,
                          rmc_request_h *req, const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    const void *need = kind == K_UPDATE ? (const void *)(uintptr_t)ufn
                       : kind == K_FIND ? (const void *)out
                                        : value;
    rmc_status_t st = arg_check(h, kind, key, need, promise, fn);
    if (st != RMC_OK)
        return st;
    /* a store's kind: what it carries as an RPC, and how it runs one-sided */
    int rkind = kind, pack_kind = kind;
    if (kind == K_INSERT_NEW)
        kind = pack_kind = K_INSERT;
    else if (kind == K_REPLACE) {
        kind = K_UPDATE;
        pack_kind = K_INSERT; /* the new value packed beside the key */
    } else if (kind == K_ADD)
        kind = pack_kind = K_UPDATE;
    size_t bytes = op_bytes(h);
    hop_t *o;
    _Alignas(16) char small[sizeof(hop_t) + 512];
    if (req || sizeof(hop_t) + bytes > sizeof(small)) {
        if (!(o = malloc(sizeof(hop_t) + bytes)))
            return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for an operation", bytes);
    } else
        o = (hop_t *)(void *)small;
    if ((st = op_init(o, h, pack_kind, key, value, o->mem, fn)) != RMC_OK)
        goto out;
    o->kind = kind;
    o->rkind = rkind;
    o->newonly = rkind == K_INSERT_NEW;
    o->promise = promise & HM_PROMISES;
    o->out = out;
    o->ufn = ufn;
    o->uarg = uarg;
    if (rkind == K_ADD) { /* one-sided: an update adding the delta; *out = the old value */
        o->delta = *(const int64_t *)value;
        o->ufn = add_fn;
        o->uarg = o;
    }
    if (promise & RMC_PROMISE_LOCAL) {
        if (o->owner != rmcc.rank)
            st = rmcc_fail(RMC_ERR_ARG, fn,
                           "RMC_PROMISE_LOCAL for a key rank %d owns (this is rank %d)", o->owner,
                           rmcc.rank);
        else if ((st = local_op(o)) == RMC_ERR_FULL)
            st = full(o);
        goto out;
    }
    if ((st = choose_path(h, rkind, promise, o->owner, &o->rpc, fn)) != RMC_OK)
        goto out;
    if (o->rpc)
        rpc_payload(o);
    int done = 0;
    if (req) {
        o->nb = 1;
        if (kind == K_INSERT && (st = own_key(o, fn)) != RMC_OK)
            goto out;
        h->obj.pending++; /* until nb_step's end: destroy and resize wait for it */
        if ((st = rmc_request_custom(nb_step, o, req)) != RMC_OK) {
            h->obj.pending--;
            goto out;
        }
        return rmc_test(req, &done); /* starts it */
    }
    o->nb = 0;
    st = advance(o, &done);
out:
    drop_key(o);
    if (o != (hop_t *)(void *)small)
        free(o);
    return st;
}

rmc_status_t rmc_hashmap_insert(rmc_hashmap_h h, const void *key, const void *value,
                                unsigned promise)
{
    RMCC_SERIAL();
    return hm_op(h, K_INSERT, key, value, NULL, NULL, NULL, promise, NULL, __func__);
}

/* A find of a plain map on the one-sided path, without building an operation: each probe is one
 * rmc_get of the whole bucket, as in the state machine's P_SEEN1 (the same reads, so the same
 * counts), a READY entry believed when its checksum matches (check; a find-only skips it: no
 * writer runs), the key compared as bytes, the value copied out. RMC_ERR_RETRY: a bucket is
 * reserved or its entry not arrived whole: the general path waits for it. */
#define HM_PLAIN_LAND 64 /* the largest bucket it reads */
static rmc_status_t plain_find(const struct rmc_hashmap *h, const void *key, void *out, int check)
{
    uint64_t x = plain_hash(h, key), home = x & h->mask;
    int owner = owner_of(x);
    size_t bsz = h->bsz, ks = h->kt->size;
    const char *t = h->pt.tab[owner];
    _Alignas(16) char land[HM_PLAIN_LAND];
    for (size_t i = 0; i < h->per; i++) {
        rmc_status_t st = rmc_get(t + probe_slot(h, home, i) * bsz, land, bsz, owner);
        if (st != RMC_OK)
            return st;
        int64_t w, s;
        memcpy(&w, land, 8);
        s = w & HS_STATE;
        if (s == HS_FREE)
            return RMC_ERR_NOT_FOUND;
        if (s == HS_RESERVED || (check && s == HS_READY && !bucket_ok(h, land, w)))
            return RMC_ERR_RETRY;
        uint64_t a, b;
        if (s == HS_READY && (ks == 8 ? (memcpy(&a, land + 8, 8), memcpy(&b, key, 8), a == b)
                                      : memcmp(land + 8, key, ks) == 0)) {
            copy_small(out, land + h->voff, h->vt->size);
            return RMC_OK;
        }
    }
    return RMC_ERR_NOT_FOUND;
}

rmc_status_t rmc_hashmap_find(rmc_hashmap_h h, const void *key, void *value, unsigned promise)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = arg_check(h, K_FIND, key, value, promise, fn);
    if (st != RMC_OK)
        return st;
    unsigned force = promise & HM_PATHS ? promise & HM_PATHS : h->path;
    if (h->plain && h->bsz <= HM_PLAIN_LAND && force != RMC_HASHMAP_RPC &&
        !(promise & RMC_PROMISE_LOCAL) &&
        (st = plain_find(h, key, value, (promise & HM_PROMISES) != RMC_PROMISE_FIND)) !=
            RMC_ERR_RETRY)
        return st;
    return hm_op(h, K_FIND, key, NULL, value, NULL, NULL, promise, NULL, fn);
}

rmc_status_t rmc_hashmap_erase(rmc_hashmap_h h, const void *key, unsigned promise)
{
    RMCC_SERIAL();
    return hm_op(h, K_ERASE, key, NULL, NULL, NULL, NULL, promise, NULL, __func__);
}

rmc_status_t rmc_hashmap_update(rmc_hashmap_h h, const void *key, rmc_hashmap_update_fn fn,
                                void *arg, unsigned promise)
{
    RMCC_SERIAL();
    return hm_op(h, K_UPDATE, key, NULL, NULL, fn, arg, promise, NULL, __func__);
}

rmc_status_t rmc_hashmap_insert_nb(rmc_hashmap_h h, const void *key, const void *value,
                                   unsigned promise, rmc_request_h *req)
{
    RMCC_SERIAL();
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return hm_op(h, K_INSERT, key, value, NULL, NULL, NULL, promise, req, __func__);
}

rmc_status_t rmc_hashmap_find_nb(rmc_hashmap_h h, const void *key, void *value, unsigned promise,
                                 rmc_request_h *req)
{
    RMCC_SERIAL();
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return hm_op(h, K_FIND, key, NULL, value, NULL, NULL, promise, req, __func__);
}

/* Batched find: up to HM_WINDOW operations in flight, each advanced in turn (one outstanding
 * request each) until every key is resolved. */
#define HM_WINDOW 64
rmc_status_t rmc_hashmap_find_n(rmc_hashmap_h h, size_t n, const void *keys, void *values,
                                rmc_status_t *status, unsigned promise)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    /* (n = 0: the arrays are not read and may be NULL, as MPI's buffers of count 0) */
    rmc_status_t st = arg_check(h, K_FIND, n ? keys : fn, n ? values : fn, promise, fn);
    if (st != RMC_OK)
        return st;
    if (n == 0)
        return RMC_OK;
    if (!status)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL status array");
    size_t w = n < HM_WINDOW ? n : HM_WINDOW, stride = (sizeof(hop_t) + op_bytes(h) + 15) & ~15ul;
    char *ops = malloc(w * stride);
    size_t *which = malloc(w * sizeof(size_t));
    if (!ops || !which) {
        free(ops);
        free(which);
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for %zu operations", w * stride, w);
    }
    const char *kin = keys;
    char *vout = values;
    size_t next = 0, live = 0;
    rmc_status_t first_err = RMC_OK;
    unsigned spins = 0;
    for (size_t k = 0; k < w; k++)
        which[k] = SIZE_MAX;
    while (next < n || live) {
        /* a pass moved when an operation was started, finished or took a step; one whose probe
         * must wait for a bucket another operation holds (perhaps one of this rank's outstanding
         * _nb operations, which move on only in RMC's waits) re-reads it at every pass, so such a
         * pass waits a round too: before, a window of probes out of step with each other kept
         * "moving" and the holder never ran again (hung) */
        int moved = 0, waiting = 0;
        for (size_t k = 0; k < w; k++) {
            hop_t *o = (hop_t *)(void *)(ops + k * stride);
            if (which[k] == SIZE_MAX) {
                if (next >= n)
                    continue;
                size_t j = next++;
                st = op_init(o, h, K_FIND, kin + j * h->kt->size, NULL, o->mem, fn);
                o->promise = promise & HM_PROMISES;
                o->out = vout + j * h->vt->size;
                o->nb = 1;
                if (st == RMC_OK && !(promise & RMC_PROMISE_LOCAL) &&
                    (st = choose_path(h, K_FIND, promise, o->owner, &o->rpc, fn)) == RMC_OK &&
                    o->rpc)
                    rpc_payload(o);
                if (st == RMC_OK && (promise & RMC_PROMISE_LOCAL) && o->owner != rmcc.rank)
                    st = rmcc_fail(RMC_ERR_ARG, fn, "RMC_PROMISE_LOCAL for a key rank %d owns",
                                   o->owner);
                else if (st == RMC_OK && (promise & RMC_PROMISE_LOCAL))
                    st = local_op(o), moved = 1;
                else if (st == RMC_OK) {
                    which[k] = j;
                    live++;
                    moved = 1;
                    continue;
                }
                status[j] = st;
                if (st != RMC_OK && st != RMC_ERR_NOT_FOUND && first_err == RMC_OK)
                    first_err = st;
                continue;
            }
            int done = 0;
            rmc_request_h before = o->r;
            unsigned waits = o->waits;
            st = advance(o, &done);
            if (done || o->r != before)
                moved = 1;
            waiting |= o->waits != waits;
            if (!done)
                continue;
            if (o->r)
                rmc_wait(&o->r);
            status[which[k]] = st;
            if (st != RMC_OK && st != RMC_ERR_NOT_FOUND && first_err == RMC_OK)
                first_err = st;
            which[k] = SIZE_MAX;
            live--;
        }
        if (!moved || waiting)
            rmc_wait_round(&spins);
    }
    free(ops);
    free(which);
    return first_err;
}

/* ---------------------------------------------------------------------- collectives --- */

/* Buckets per rank for a total of `capacity`: the next power of two at or above its share. */
static size_t per_rank(size_t capacity)
{
    size_t share = (capacity + (size_t)rmcc.nranks - 1) / (size_t)rmcc.nranks, p = 1;
    while (p < share)
        p <<= 1;
    return p;
}

/* Allocates this rank's table of per buckets of bsz bytes at *off; RMC_ERR_TOO_BIG when its size
 * overflows (it wrapped to a small request, refused as a full segment). */
static rmc_status_t table_alloc(size_t per, size_t bsz, uint64_t *off, const char *fn)
{
    if (bsz && per > SIZE_MAX / bsz)
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "%zu buckets of %zu bytes on this rank: the table's "
                         "size overflows",
                         per, bsz);
    return rmcc_alloc_off(per * bsz, off, fn);
}

/* A capacity (`what`: a map's, a buffer's queue's): 0 is a bad argument, above 2^40 a size
 * (RMC_ERR_TOO_BIG, as arrays' and Bloom filters' limits). */
static rmc_status_t capacity_check(const char *what, size_t capacity, const char *fn)
{
    if (capacity == 0 || capacity > ((size_t)1 << 40))
        return rmcc_fail(capacity ? RMC_ERR_TOO_BIG : RMC_ERR_ARG, fn, "%s %zu (1 .. 2^40)", what,
                         capacity);
    return RMC_OK;
}

rmc_status_t rmc_hashmap_create(size_t capacity, const rmc_type_t *key, const rmc_type_t *value,
                                rmc_hashmap_h *hp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (hp)
        *hp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!hp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if ((st = capacity_check("capacity", capacity, fn)) == RMC_OK &&
             (st = rmcc_type_check(key, fn)) == RMC_OK)
        st = rmcc_type_check(value, fn);
    uint64_t args[2] = {capacity, next_id};
    const rmc_type_t *types[2] = {key, value};
    st = rmcc_create_begin_types(fn, args, 2, types, 2, st);
    if (st != RMC_OK)
        return st;
    struct rmc_hashmap *h = calloc(1, sizeof(*h));
    st = h ? rmcc_parts_init(&h->pt, fn) : RMC_ERR_NOMEM;
    if (st == RMC_OK && !(h->peers = calloc((size_t)rmcc.nranks, sizeof(uint64_t))))
        st = RMC_ERR_NOMEM;
    if (st == RMC_ERR_NOMEM)
        rmcc_fail(st, fn, "hash map handle");
    uint64_t off = 0;
    rmc_status_t mine = st;
    if (st == RMC_OK) {
        h->id = next_id;
        h->kt = key;
        h->vt = value;
        h->kslot = rmc_type_slot_bytes(key);
        h->vslot = rmc_type_slot_bytes(value);
        h->voff = 8 + up8(h->kslot);
        h->esz = h->voff - 8 + up8(h->vslot);
        h->csoff = 8 + h->esz;
        h->bsz = h->csoff + 8;
        h->per = per_rank(capacity);
        h->mask = h->per - 1;
        h->plain = !key->max_bytes && !key->hash && !key->equal && !value->max_bytes;
        mine = table_alloc(h->per, h->bsz, &off, fn);
    }
    st = rmcc_exchange_parts(mine, off, h ? h->pt.offs : NULL, fn);
    next_id++;
    if (st == RMC_OK) {
        /* live before every rank's handle is exchanged (for the RPCs): a peer that leaves that
         * exchange first may send one at once, served while this rank still waits in it */
        rmcc_parts_map(&h->pt);
        rmcc_obj_add(&h->obj, RMCC_MAGIC_HASHMAP, h_release);
        st = rmcc_exchange_parts(RMC_OK, (uint64_t)(uintptr_t)h, h->peers, fn);
        if (st == RMC_OK) {
            *hp = h;
            return RMC_OK;
        }
        rmcc_free_off(off, fn);
        rmcc_obj_kill(&h->obj); /* released; the handle's memory goes at rmc_finalize */
        return st;
    }
    if (mine == RMC_OK)
        rmcc_free_off(off, fn);
    if (h)
        h_release(&h->obj);
    free(h);
    return st;
}

rmc_status_t rmc_hashmap_destroy(rmc_hashmap_h h)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, b;
    if ((st = rmcc_destroy_begin(h ? &h->obj : NULL, RMCC_MAGIC_HASHMAP, "hash map",
                                 h ? h->id : 0, &b, fn)) != RMC_OK)
        return st;
    return rmcc_destroy_finish(&h->obj, b, h->pt.offs[rmcc.rank], fn);
}

/* The hash of a packed key (a bucket's, a buffered entry's). A type with a hash function of its
 * own gets the key as the caller holds it: unpacked for the call. *ok = 0 when that fails. */
static uint64_t packed_hash(const struct rmc_hashmap *h, const char *pk, int *ok)
{
    const rmc_type_t *t = h->kt;
    *ok = 1;
    if (!t->hash)
        return key_hash(t, pk, pk);
    char small[KEY_SMALL];
    void *obj;
    *ok = key_obj(t, pk, small, "rmc_hashmap", &obj) == RMC_OK;
    uint64_t x = *ok ? key_hash(t, obj, pk) : 0;
    key_obj_drop(t, obj, small);
    return x;
}

/* Copies this rank's entries from the table at `from` (per_from buckets) into the empty one at
 * `to` with h's geometry (h->per, h->mask): the owner's plain inserts. */
static rmc_status_t rehash(struct rmc_hashmap *h, const char *from, size_t per_from, char *to)
{
    for (size_t s = 0; s < per_from; s++) {
        const char *b = from + s * h->bsz;
        int64_t w;
        memcpy(&w, b, 8);
        if ((w & HS_STATE) != HS_READY)
            continue;
        int ok;
        uint64_t x = packed_hash(h, b + 8, &ok);
        if (!ok)
            return RMC_ERR_INTERNAL;
        size_t i = 0;
        for (; i < h->per; i++) {
            char *d = to + probe_slot(h, x & h->mask, i) * h->bsz;
            int64_t dw;
            memcpy(&dw, d, 8);
            if (dw == HS_FREE) {
                memcpy(d + 8, b + 8, h->esz);
                publish_local(h, d, dw, HS_READY);
                break;
            }
        }
        if (i == h->per)
            return RMC_ERR_FULL;
    }
    return RMC_OK;
}

rmc_status_t rmc_hashmap_resize(rmc_hashmap_h h, size_t capacity)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(h, fn);
    if (st == RMC_OK)
        st = capacity_check("capacity", capacity, fn);
    uint64_t args[2] = {st == RMC_OK ? h->id : ~0ull, capacity};
    if ((st = rmcc_coll_begin(fn, args, 2, st)) != RMC_OK)
        return st;
    rmcc_quiesce(&h->obj); /* this rank's _nb operations have made their last step */
    if ((st = rmc_barrier()) != RMC_OK) /* every operation on the old tables is complete */
        return st;
    size_t old_per = h->per, new_per = per_rank(capacity);
    uint64_t off = 0, *offs = malloc(sizeof(uint64_t) * (size_t)rmcc.nranks);
    rmc_status_t mine =
        offs ? table_alloc(new_per, h->bsz, &off, fn) : rmcc_fail(RMC_ERR_NOMEM, fn, "offsets");
    int have = mine == RMC_OK;
    if (have) {
        h->per = new_per;
        h->mask = new_per - 1;
        mine = rehash(h, h->pt.ltab[rmcc.rank], old_per, rmcc.lbase[rmcc.rank] + off);
        if (mine == RMC_ERR_FULL)
            rmcc_fail(mine, fn, "rank %d's %zu buckets cannot hold its entries", rmcc.rank,
                      new_per);
        else if (mine != RMC_OK)
            rmcc_fail(mine, fn, "rehashing rank %d's entries failed", rmcc.rank);
    }
    st = rmcc_exchange_parts(mine, off, offs, fn);
    if (st == RMC_OK) {
        rmcc_free_off(h->pt.offs[rmcc.rank], fn);
        memcpy(h->pt.offs, offs, sizeof(uint64_t) * (size_t)rmcc.nranks);
        rmcc_parts_map(&h->pt);
    } else {
        h->per = old_per;
        h->mask = old_per - 1;
        if (have)
            rmcc_free_off(off, fn);
    }
    free(offs);
    rmc_status_t b = rmc_barrier(); /* the new tables are in place everywhere */
    return st != RMC_OK ? st : b;
}

rmc_status_t rmc_hashmap_count(rmc_hashmap_h h, size_t *count)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(h, fn);
    if (st == RMC_OK && !count)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL count");
    uint64_t arg = st == RMC_OK ? h->id : ~0ull;
    if ((st = rmcc_coll_begin(fn, &arg, 1, st)) != RMC_OK)
        return st;
    if ((st = rmc_barrier()) != RMC_OK)
        return st;
    unsigned long long mine = 0, all = 0;
    const char *t = h->pt.ltab[rmcc.rank];
    for (size_t s = 0; s < h->per; s++) {
        int64_t w;
        memcpy(&w, t + s * h->bsz, 8);
        mine += (w & HS_STATE) == HS_READY;
    }
    MPI_Request rq;
    if (MPI_Iallreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, rmcc.comm, &rq) !=
        MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce failed");
    if ((st = rmc_wait_mpi(&rq)) != RMC_OK)
        return st;
    *count = (size_t)all;
    return RMC_OK;
}

rmc_status_t rmc_hashmap_local_foreach(rmc_hashmap_h h, rmc_hashmap_visit_fn visit, void *arg,
                                       int *stopped)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(h, fn);
    if (st != RMC_OK)
        return st;
    if (!visit)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL visit function");
    if (stopped)
        *stopped = 0;
    const rmc_type_t *kt = h->kt, *vt = h->vt;
    char *objs = malloc(up8(kt->size) + vt->size);
    if (!objs)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes", up8(kt->size) + vt->size);
    const char *t = h->pt.ltab[rmcc.rank];
    for (size_t s = 0; s < h->per && st == RMC_OK; s++) {
        const char *b = t + s * h->bsz;
        int64_t w = __atomic_load_n((const int64_t *)(const void *)b, __ATOMIC_ACQUIRE);
        if ((w & HS_STATE) != HS_READY)
            continue;
        const void *k = b + 8, *v = b + h->voff;
        char *ko = objs, *vo = objs + up8(kt->size);
        if (kt->max_bytes) {
            if ((st = rmcc_unpack(kt, b + 8, ko, fn)) != RMC_OK)
                break;
            k = ko;
        }
        if (vt->max_bytes) {
            if ((st = rmcc_unpack(vt, b + h->voff, vo, fn)) != RMC_OK) {
                rmc_type_release(kt, ko);
                break;
            }
            v = vo;
        }
        int r = visit(k, v, arg);
        if (kt->max_bytes)
            rmc_type_release(kt, ko);
        if (vt->max_bytes)
            rmc_type_release(vt, vo);
        if (r) {
            if (stopped)
                *stopped = r;
            break;
        }
    }
    free(objs);
    return st;
}

size_t rmc_hashmap_capacity(rmc_hashmap_h h)
{
    return check(h, __func__) == RMC_OK ? h->per * (size_t)rmcc.nranks : 0;
}

int rmc_hashmap_owner(rmc_hashmap_h h, const void *key)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (check(h, fn) != RMC_OK)
        return -1;
    if (!key) {
        rmcc_fail(RMC_ERR_ARG, fn, "NULL key");
        return -1;
    }
    char small[256], *pk = NULL;
    if (h->kt->max_bytes) {
        pk = h->kslot <= sizeof(small) ? small : malloc(h->kslot);
        if (!pk || pack_part(h->kt, key, pk, 0, fn) != RMC_OK) {
            if (pk != small)
                free(pk);
            return -1;
        }
    }
    int r = owner_of(key_hash(h->kt, key, pk));
    if (pk != small)
        free(pk);
    return r;
}

rmc_status_t rmc_hashmap_set_path(rmc_hashmap_h h, unsigned path)
{
    RMCC_SERIAL();
    rmc_status_t st = check(h, __func__);
    if (st != RMC_OK)
        return st;
    if (path != 0 && path != RMC_HASHMAP_RDMA && path != RMC_HASHMAP_RPC)
        return rmcc_fail(RMC_ERR_ARG, __func__,
                         "path 0x%x (0: chosen per operation, RMC_HASHMAP_RDMA, RMC_HASHMAP_RPC)",
                         path);
    if (path == RMC_HASHMAP_RPC && rmc_amo_mode() != RMC_AMO_MODE_THREAD)
        return rmcc_fail(RMC_ERR_UNSUPPORTED, __func__, "the RPC path needs RMC_AMO=thread");
    h->path = path;
    return RMC_OK;
}

/* ------------------------------------------------------------------- insert buffer --- */

struct rmc_hashmap_buffer {
    rmcc_obj_t obj;
    uint64_t id;
    struct rmc_hashmap *h;
    rmc_type_t etype; /* the queues' element: a packed entry (key slot, value slot) */
    size_t esz, batch;
    rmc_queue_h *q;            /* [nranks] the queue each rank hosts */
    char **buf;                /* [nranks] the batch for each owner */
    size_t *cnt;               /* [nranks] entries in it */
    char *land;                /* batch entries popped from this rank's queue */
    char *tmp;                 /* one entry being packed */
    rmc_hashmap_update_fn combine; /* owners: fn(stored, incoming) instead of replacing, or NULL */
    int only_present;              /* with combine: absent keys are dropped, not inserted */
    char *uobj, *vin;              /* with combine: the stored and the incoming value (vt->size) */
    rmc_hashmap_admit_fn admit;    /* owners: whether an absent key gets in, or NULL (all do) */
    void *admit_arg;
    unsigned long long dropped; /* entries that did not fit in this rank's table */
};

static void buf_release(rmcc_obj_t *o)
{
    struct rmc_hashmap_buffer *b = (struct rmc_hashmap_buffer *)o;
    for (int r = 0; b->buf && r < rmcc.nranks; r++)
        free(b->buf[r]);
    free(b->buf);
    free(b->cnt);
    free(b->q);
    free(b->land);
    free(b->tmp);
    free(b->uobj);
    free(b->vin);
    b->tmp = b->uobj = b->vin = NULL;
    b->buf = NULL;
    b->cnt = NULL;
    b->q = NULL;
    b->land = NULL;
}

/* A live buffer of a live map (the map destroyed first: the buffer named, RMC_ERR_HANDLE). */
static inline rmc_status_t buf_check(const struct rmc_hashmap_buffer *b, const char *fn)
{
    rmc_status_t st = rmcc_obj_check(b ? &b->obj : NULL, RMCC_MAGIC_HMBUF, "hash map buffer", fn);
    if (st != RMC_OK || RMCC_LIKELY(b->h->obj.magic == RMCC_MAGIC_HASHMAP))
        return st;
    return rmcc_fail(RMC_ERR_HANDLE, fn,
                     "the map of hash map buffer %p was destroyed (only "
                     "rmc_hashmap_buffer_destroy is left for the buffer)",
                     (const void *)b);
}

/* The owner inserts a packed entry into its own table (nothing else runs on the map); *nofit = 1
 * when the table had no room for it (RMC_ERR_FULL, not a combining function's status). */
static rmc_status_t insert_packed(struct rmc_hashmap_buffer *b, char *entry, uint64_t x, int *nofit,
                                  const char *fn)
{
    struct rmc_hashmap *h = b->h;
    const rmc_type_t *t = h->kt, *vt = h->vt;
    hop_t o;
    o.h = h;
    o.kind = K_INSERT;
    o.owner = rmcc.rank;
    o.home = x & h->mask;
    o.kv = (char *)entry;
    o.pk = entry;
    o.key = entry;
    o.fn = fn;
    o.rkind = K_INSERT;
    o.newonly = 0;
    o.ufailed = 0;
    char small[KEY_SMALL];
    void *obj = NULL;
    rmc_status_t st = RMC_OK;
    if (t->equal && t->max_bytes) { /* the type's equal needs the key as the caller holds it */
        if ((st = key_obj(t, entry, small, fn, &obj)) != RMC_OK)
            return st;
        o.key = obj;
    }
    if (b->combine) { /* combine with the stored value when the key is there */
        const char *in = entry + (h->voff - 8);
        if (vt->max_bytes && (st = rmcc_unpack(vt, in, b->vin, fn)) == RMC_OK)
            in = b->vin;
        if (st == RMC_OK) {
            o.kind = K_UPDATE;
            o.ufn = b->combine;
            o.uarg = (void *)(uintptr_t)in;
            o.uobj = b->uobj;
            st = local_op(&o);
            if (vt->max_bytes)
                rmc_type_release(vt, b->vin);
            if (st == RMC_ERR_NOT_FOUND && !o.ufailed) { /* absent (not fn's status) */
                o.kind = K_INSERT;
                st = b->only_present ||
                             (b->admit && !b->admit(entry, entry + (h->voff - 8), b->admit_arg))
                         ? RMC_OK
                         : local_op(&o);
            }
        }
    } else if (b->admit) { /* replace where present (K_REPLACE), else ask */
        o.kind = K_FIND;
        o.rkind = K_REPLACE;
        st = local_op(&o);
        if (st == RMC_ERR_NOT_FOUND) {
            o.kind = o.rkind = K_INSERT;
            /* (the entry is in the buffer's own memory: the filter may rewrite its value) */
            st = b->admit(entry, entry + (h->voff - 8), b->admit_arg) ? local_op(&o) : RMC_OK;
        }
    } else
        st = local_op(&o);
    *nofit = st == RMC_ERR_FULL && !o.ufailed;
    key_obj_drop(t, obj, small);
    return st;
}

/* insert_packed of a plain map (b->h->plain) without its indirections: a present key gets the
 * new value, or b's combining function's result; an absent key is dropped (only_present), asked
 * about (admit: it may rewrite the entry's value) or inserted. *added counts a new key; *nofit = 1
 * when the table had no room for it. */
static rmc_status_t plain_insert(struct rmc_hashmap_buffer *b, char *t, char *e, uint64_t home,
                                 unsigned long long *added, int *nofit, const char *fn)
{
    const struct rmc_hashmap *h = b->h;
    size_t bsz = h->bsz, ks = h->kt->size;
    char *cand = NULL; /* the first tombstone, else the free bucket that ends the sequence */
    for (size_t i = 0; i < h->per; i++) {
        char *s = t + probe_slot(h, home, i) * bsz;
        int64_t w = __atomic_load_n((int64_t *)(void *)s, __ATOMIC_ACQUIRE), st = w & HS_STATE;
        if (st == HS_READY) {
            uint64_t x, y;
            if (ks == 8 ? (memcpy(&x, s + 8, 8), memcpy(&y, e, 8), x != y)
                        : memcmp(s + 8, e, ks) != 0)
                continue;
            if (!b->combine) {
                copy_small(s + h->voff, e + (h->voff - 8), h->vslot);
                publish_local(h, s, w, HS_READY);
                return RMC_OK;
            }
            /* fn changes a copy: a failing fn leaves the stored value as it was */
            size_t vs = h->vt->size;
            copy_small(b->uobj, s + h->voff, vs);
            rmc_status_t us = b->combine(b->uobj, e + (h->voff - 8));
            if (us != RMC_OK)
                return update_failed(us, fn);
            copy_small(s + h->voff, b->uobj, vs);
            publish_local(h, s, w, HS_READY);
            return RMC_OK;
        }
        if (st == HS_DELETED && !cand)
            cand = s;
        if (st == HS_FREE) {
            if (!cand)
                cand = s;
            break;
        }
    }
    if (b->only_present || (b->admit && !b->admit(e, e + (h->voff - 8), b->admit_arg)))
        return RMC_OK; /* dropped as the owner was told (before a full table's error, as
                        * insert_packed) */
    if (!cand) {
        *nofit = 1;
        return RMC_ERR_FULL;
    }
    copy_small(cand + 8, e, h->esz);
    publish_local(h, cand, __atomic_load_n((int64_t *)(void *)cand, __ATOMIC_ACQUIRE), HS_READY);
    (*added)++;
    return RMC_OK;
}

/* Inserts n packed entries (a batch popped from this rank's queue, or its own batch for itself);
 * entries that do not fit are counted. The entries are the buffer's memory, which an owner's
 * filter may write (rmc_hashmap_buffer_admit). */
static rmc_status_t insert_batch(struct rmc_hashmap_buffer *b, char *e, size_t n, const char *fn)
{
    /* The table is far bigger than the caches: entry i's home bucket is prefetched D entries
     * ahead of its insert, so the buckets' misses overlap instead of adding up. */
    enum { D = 16 };
    struct rmc_hashmap *h = b->h;
    char *t = h->pt.ltab[rmcc.rank];
    int fast = h->plain;
    uint64_t x[D];
    unsigned bad = 0; /* bit i % D: entry i could not be hashed */
    unsigned long long added = 0;
    rmc_status_t first = RMC_OK; /* every entry is tried: the batch is off the queue already */
    for (size_t i = 0; i < n + D; i++) {
        if (i >= D && !(bad & 1u << (i % D))) { /* insert entry i - D, hash in x[i % D] */
            char *ej = e + (i - D) * b->esz;
            int nofit = 0; /* (a combining function may return RMC_ERR_FULL itself) */
            rmc_status_t st = fast ? plain_insert(b, t, ej, x[i % D] & h->mask, &added, &nofit, fn)
                                   : insert_packed(b, ej, x[i % D], &nofit, fn);
            if (nofit)
                b->dropped++;
            else if (st != RMC_OK && first == RMC_OK)
                first = st;
        }
        bad &= ~(1u << (i % D));
        if (i < n) {
            const char *ei = e + i * b->esz;
            int ok = 1;
            x[i % D] = fast ? plain_hash(h, ei) : packed_hash(h, ei, &ok);
            if (!ok) {
                bad |= 1u << (i % D);
                if (first == RMC_OK)
                    first = rmcc_fail(RMC_ERR_INTERNAL, fn, "hashing a buffered key failed");
            }
            __builtin_prefetch(t + (x[i % D] & h->mask) * h->bsz, 1);
        }
    }
    if (added) /* the store's counter (an RPC on the progress thread may count too) */
        __atomic_fetch_add(&h->n_inserts, added, __ATOMIC_RELAXED);
    return first;
}

/* Takes every batch queued at this rank and inserts it, all of them whatever fails (a peer may
 * wait for room in this queue); returns the first failure. */
static rmc_status_t drain(struct rmc_hashmap_buffer *b, const char *fn)
{
    rmc_status_t first = RMC_OK;
    for (;;) {
        size_t got = 0;
        rmc_status_t st = rmc_queue_pop_upto(b->q[rmcc.rank], b->land, b->batch, &got, 0);
        if (st == RMC_ERR_EMPTY)
            return first;
        if (st != RMC_OK) /* the queue itself failed: nothing more comes out of it */
            return first != RMC_OK ? first : st;
        st = insert_batch(b, b->land, got, fn);
        if (st != RMC_OK && first == RMC_OK)
            first = st;
    }
}

/* Pushes the batch for `owner`; while its queue is full, takes in this rank's own (the owner may
 * be waiting for room here) and keeps RMC's progress going. This rank's own batch goes into its
 * table. */
static rmc_status_t push_batch(struct rmc_hashmap_buffer *b, int owner, const char *fn)
{
    unsigned spins = 0;
    if (owner == rmcc.rank) {
        rmc_status_t st = insert_batch(b, b->buf[owner], b->cnt[owner], fn);
        b->cnt[owner] = 0;
        return st;
    }
    rmc_status_t first = RMC_OK; /* of this rank's own inserts meanwhile */
    while (b->cnt[owner]) {
        rmc_status_t st = rmc_queue_push_n(b->q[owner], b->buf[owner], b->cnt[owner], 0);
        if (st == RMC_OK) {
            b->cnt[owner] = 0;
            break;
        }
        if (st != RMC_ERR_FULL)
            return st;
        if ((st = drain(b, fn)) != RMC_OK && first == RMC_OK)
            first = st;
        pause_round(&spins);
    }
    return first;
}

rmc_status_t rmc_hashmap_buffer_create(rmc_hashmap_h h, size_t queue_capacity, size_t batch,
                                       rmc_hashmap_buffer_h *bp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (bp)
        *bp = NULL;
    rmc_status_t st = check(h, fn);
    if (st == RMC_OK && !bp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if (st == RMC_OK && (batch == 0 || queue_capacity < batch))
        st = rmcc_fail(RMC_ERR_ARG, fn, "batch %zu, queue capacity %zu (1 <= batch <= capacity)",
                       batch, queue_capacity);
    else if (st == RMC_OK)
        st = capacity_check("queue capacity", queue_capacity, fn); /* (>= batch >= 1 here) */
    size_t bytes; /* batch <= capacity: the queue's size bounds a batch's */
    if (st == RMC_OK && __builtin_mul_overflow(queue_capacity, h->esz, &bytes))
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                       "queue capacity %zu x %zu-byte entries: the size overflows (%zu x %zu > "
                       "%zu)",
                       queue_capacity, h->esz, queue_capacity, h->esz, SIZE_MAX);
    uint64_t args[3] = {st == RMC_OK ? h->id : ~0ull, queue_capacity, batch};
    if ((st = rmcc_coll_begin(fn, args, 3, st)) != RMC_OK)
        return st;
    size_t nr = (size_t)rmcc.nranks;
    struct rmc_hashmap_buffer *b = calloc(1, sizeof(*b));
    if (b) {
        b->h = h;
        b->esz = h->esz;
        b->batch = batch;
        b->etype = (rmc_type_t)RMC_TYPE_FIXED("hash map entry", b->esz);
        b->q = calloc(nr, sizeof(*b->q));
        b->buf = calloc(nr, sizeof(*b->buf));
        b->cnt = calloc(nr, sizeof(*b->cnt));
        b->land = malloc(batch * b->esz); /* no overflow: batch <= queue_capacity, checked */
        b->tmp = calloc(1, b->esz); /* (padding: zero, as the batches') */
    }
    st = b && b->q && b->buf && b->cnt && b->land && b->tmp ? RMC_OK
                                                   : rmcc_fail(RMC_ERR_NOMEM, fn, "buffer handle");
    /* zeroed: a plain map's entries are written without their padding */
    for (int r = 0; st == RMC_OK && r < rmcc.nranks; r++)
        if (!(b->buf[r] = calloc(batch, b->esz)))
            st = rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes of batch", batch * b->esz);
    st = rmcc_agree(st);
    int made = 0;
    for (; st == RMC_OK && made < rmcc.nranks; made++)
        st = rmc_queue_create(RMC_QUEUE_CIRCULAR, made, queue_capacity, &b->etype, &b->q[made]);
    if (st == RMC_OK) {
        b->id = next_id++;
        rmcc_obj_add(&b->obj, RMCC_MAGIC_HMBUF, buf_release);
        *bp = b;
        return RMC_OK;
    }
    for (int r = 0; b && b->q && r < made - 1; r++) /* the queues made (collective) */
        rmc_queue_destroy(b->q[r]);
    if (b)
        buf_release(&b->obj);
    free(b);
    return st;
}

rmc_status_t rmc_hashmap_buffer_combine(rmc_hashmap_buffer_h b, rmc_hashmap_update_fn fn,
                                        int only_present)
{
    RMCC_SERIAL();
    const char *fn_name = __func__;
    rmc_status_t st = buf_check(b, fn_name);
    if (st != RMC_OK)
        return st;
    size_t vs = b->h->vt->size;
    if (fn && ((!b->uobj && !(b->uobj = malloc(vs))) || (!b->vin && !(b->vin = malloc(vs)))))
        return rmcc_fail(RMC_ERR_NOMEM, fn_name, "%zu bytes", 2 * vs);
    b->combine = fn;
    b->only_present = fn && only_present;
    return RMC_OK;
}

rmc_status_t rmc_hashmap_buffer_admit(rmc_hashmap_buffer_h b, rmc_hashmap_admit_fn fn, void *arg)
{
    RMCC_SERIAL();
    const char *fn_name = __func__;
    rmc_status_t st = buf_check(b, fn_name);
    if (st != RMC_OK)
        return st;
    const rmc_type_t *kt = b->h->kt, *vt = b->h->vt;
    if (fn && (kt->max_bytes || vt->max_bytes))
        return rmcc_fail(RMC_ERR_TYPE, fn_name,
                         "the map's %s type %s is variable-size (max_bytes %zu): a filter sees "
                         "the entry's bytes, so both types must be byte-copied",
                         kt->max_bytes ? "key" : "value", kt->max_bytes ? kt->name : vt->name,
                         kt->max_bytes ? kt->max_bytes : vt->max_bytes);
    b->admit = fn;
    b->admit_arg = fn ? arg : NULL;
    return RMC_OK;
}

rmc_status_t rmc_hashmap_buffer_insert(rmc_hashmap_buffer_h b, const void *key, const void *value)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = buf_check(b, fn);
    if (st != RMC_OK)
        return st;
    if (!key || !value)
        return rmcc_fail(RMC_ERR_ARG, fn, key ? "NULL value" : "NULL key");
    struct rmc_hashmap *h = b->h;
    int owner;
    if (h->plain) /* (packed below in place: the bytes of key and value) */
        owner = owner_of(plain_hash(h, key));
    else if ((st = pack_part(h->kt, key, b->tmp, 0, fn)) != RMC_OK ||
             (st = pack_part(h->vt, value, b->tmp + (h->voff - 8), 1, fn)) != RMC_OK)
        return st;
    else
        owner = owner_of(key_hash(h->kt, key, b->tmp));
    /* a full batch an earlier push failed to send: sent now, or this insert fails unrecorded */
    if (b->cnt[owner] >= b->batch && (st = push_batch(b, owner, fn)) != RMC_OK)
        return st;
    char *e = b->buf[owner] + b->cnt[owner] * b->esz;
    if (h->plain) {
        copy_small(e, key, h->kt->size);
        copy_small(e + (h->voff - 8), value, h->vt->size);
    } else
        memcpy(e, b->tmp, b->esz);
    if (++b->cnt[owner] < b->batch)
        return RMC_OK;
    return push_batch(b, owner, fn);
}

rmc_status_t rmc_hashmap_buffer_flush(rmc_hashmap_buffer_h b)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = buf_check(b, fn);
    int live = st == RMC_OK;
    /* Push every batch, then wait for every rank to have pushed its own: a peer may still wait for
     * room in this rank's queue, so this rank takes its queue in all along, whatever failed before
     * (the collective's agreement on the first failure comes after, when nobody waits for
     * anybody). */
    for (int r = 0; live && r < rmcc.nranks; r++) {
        rmc_status_t p = push_batch(b, r, fn);
        if (p != RMC_OK && st == RMC_OK)
            st = p;
    }
    MPI_Request rq;
    if (MPI_Ibarrier(rmcc.comm, &rq) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Ibarrier failed");
    int done = 0;
    unsigned spins = 0;
    for (;;) {
        rmc_status_t d = live ? drain(b, fn) : RMC_OK;
        if (d != RMC_OK && st == RMC_OK)
            st = d;
        if (done)
            break;
        if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Test failed");
        if (!done)
            pause_round(&spins);
    }
    /* how many entries did not fit, for every rank's message (the owners alone know) */
    unsigned long long mine = live ? b->dropped : 0, all = 0;
    if (live)
        b->dropped = 0;
    if (MPI_Iallreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, rmcc.comm, &rq) !=
        MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce failed");
    rmc_status_t sum = rmc_wait_mpi(&rq);
    if (st == RMC_OK && sum != RMC_OK)
        st = sum;
    if (st == RMC_OK && all)
        st = rmcc_fail(RMC_ERR_FULL, fn,
                       "the owners' tables had no room for %llu of the entries inserted (%llu in "
                       "this rank's table): resize the map and insert again",
                       all, mine);
    uint64_t arg = buf_check(b, fn) == RMC_OK ? b->id : ~0ull;
    if ((st = rmcc_coll_begin(fn, &arg, 1, st)) != RMC_OK)
        return st;
    return rmc_barrier(); /* the inserts are complete everywhere */
}

rmc_status_t rmc_hashmap_buffer_destroy(rmc_hashmap_buffer_h b)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    /* the buffer alone: its map may have been destroyed first (the queues are the buffer's) */
    rmc_status_t st = rmcc_obj_check(b ? &b->obj : NULL, RMCC_MAGIC_HMBUF, "hash map buffer", fn);
    uint64_t arg = st == RMC_OK ? b->id : ~0ull;
    if ((st = rmcc_coll_begin(fn, &arg, 1, st)) != RMC_OK)
        return st;
    for (int r = 0; r < rmcc.nranks; r++) {
        rmc_status_t d = rmc_queue_destroy(b->q[r]);
        if (st == RMC_OK)
            st = d;
    }
    rmcc_obj_kill(&b->obj);
    return st;
}

/* --------------------------------------------------------- key/value store (PDHT) --- */

struct rmc_kv {
    rmcc_obj_t obj;
    uint64_t id;
    struct rmc_hashmap *h; /* the store's path is its default (h->path) */
};

static rmc_status_t kv_check(const struct rmc_kv *kv, const char *fn)
{
    rmc_status_t st = rmcc_obj_check(kv ? &kv->obj : NULL, RMCC_MAGIC_KV, "key/value store", fn);
    return st == RMC_OK ? check(kv->h, fn) : st;
}

rmc_status_t rmc_kv_create(size_t capacity, const rmc_type_t *key, const rmc_type_t *value,
                           unsigned path, rmc_kv_h *kvp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (kvp)
        *kvp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!kvp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if (path != 0 && path != RMC_HASHMAP_RDMA && path != RMC_HASHMAP_RPC)
        st = rmcc_fail(RMC_ERR_ARG, fn, "path 0x%x (0, RMC_HASHMAP_RDMA or RMC_HASHMAP_RPC)", path);
    else if (path == RMC_HASHMAP_RPC && rmc_amo_mode() != RMC_AMO_MODE_THREAD)
        st = rmcc_fail(RMC_ERR_UNSUPPORTED, fn, "the RPC path needs RMC_AMO=thread");
    uint64_t args[2] = {path, next_id};
    if ((st = rmcc_coll_begin(fn, args, 2, st)) != RMC_OK)
        return st;
    struct rmc_kv *kv = calloc(1, sizeof(*kv));
    st = rmcc_agree(kv ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "store handle"));
    rmc_hashmap_h h = NULL;
    if (st == RMC_OK && (st = rmc_hashmap_create(capacity, key, value, &h)) != RMC_OK)
        rmc_error_in(st, fn); /* the map's message, under this call's name */
    if (st != RMC_OK) {
        free(kv);
        return st;
    }
    kv->id = next_id++;
    kv->h = h;
    h->path = path; /* as rmc_hashmap_set_path: an operation without an RPC goes one-sided */
    rmcc_obj_add(&kv->obj, RMCC_MAGIC_KV, NULL);
    *kvp = kv;
    return RMC_OK;
}

rmc_status_t rmc_kv_destroy(rmc_kv_h kv)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = kv_check(kv, fn);
    uint64_t arg = st == RMC_OK ? kv->id : ~0ull;
    if ((st = rmcc_coll_begin(fn, &arg, 1, st)) != RMC_OK)
        return st;
    st = rmc_hashmap_destroy(kv->h);
    rmcc_obj_kill(&kv->obj);
    return st;
}

rmc_status_t rmc_kv_insert(rmc_kv_h kv, const void *key, const void *value, unsigned flags)
{
    RMCC_SERIAL();
    rmc_status_t st = kv_check(kv, __func__);
    return st != RMC_OK
               ? st
               : hm_op(kv->h, K_INSERT_NEW, key, value, NULL, NULL, NULL, flags, NULL, __func__);
}

rmc_status_t rmc_kv_read(rmc_kv_h kv, const void *key, void *value, unsigned flags)
{
    RMCC_SERIAL();
    rmc_status_t st = kv_check(kv, __func__);
    return st != RMC_OK ? st
                        : hm_op(kv->h, K_FIND, key, NULL, value, NULL, NULL, flags, NULL, __func__);
}

rmc_status_t rmc_kv_update(rmc_kv_h kv, const void *key, const void *value, unsigned flags)
{
    RMCC_SERIAL();
    rmc_status_t st = kv_check(kv, __func__);
    return st != RMC_OK
               ? st
               : hm_op(kv->h, K_REPLACE, key, value, NULL, NULL, NULL, flags, NULL, __func__);
}

rmc_status_t rmc_kv_add(rmc_kv_h kv, const void *key, int64_t delta, int64_t *old, unsigned flags)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = kv_check(kv, fn);
    if (st != RMC_OK)
        return st;
    /* an integer add: on any other 8-byte type (a double, a struct) it would add to the bits */
    const rmc_type_t *vt = kv->h->vt;
    if (vt->max_bytes || vt->size != 8 || vt->serialize ||
        (strcmp(vt->name, rmc_type_i64.name) && strcmp(vt->name, rmc_type_u64.name)))
        return rmcc_fail(RMC_ERR_TYPE, fn,
                         "the store's value type is \"%s\" (%zu bytes): an atomic add needs "
                         "rmc_type_i64 or rmc_type_u64",
                         vt->name, vt->size);
    return hm_op(kv->h, K_ADD, key, &delta, old, NULL, NULL, flags, NULL, fn);
}

rmc_status_t rmc_kv_local_foreach(rmc_kv_h kv, rmc_hashmap_visit_fn visit, void *arg,
                                  int *stopped)
{
    RMCC_SERIAL();
    rmc_status_t st = kv_check(kv, __func__);
    if (st == RMC_OK && (st = rmc_hashmap_local_foreach(kv->h, visit, arg, stopped)) != RMC_OK)
        rmc_error_in(st, __func__); /* the map's message, under this call's name */
    return st;
}

rmc_status_t rmc_kv_counters(rmc_kv_h kv, rmc_kv_counters_t *c)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = kv_check(kv, fn);
    if (st == RMC_OK && !c)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL counters");
    uint64_t arg = st == RMC_OK ? kv->id : ~0ull;
    if ((st = rmcc_coll_begin(fn, &arg, 1, st)) != RMC_OK)
        return st;
    size_t n = 0;
    if ((st = rmc_hashmap_count(kv->h, &n)) != RMC_OK) /* also completes every operation */
        return st;
    struct rmc_hashmap *h = kv->h;
    unsigned long long mine[3] = {__atomic_load_n(&h->n_inserts, __ATOMIC_RELAXED),
                                  __atomic_load_n(&h->n_exists, __ATOMIC_RELAXED),
                                  __atomic_load_n(&h->n_collisions, __ATOMIC_RELAXED)},
                       all[3];
    MPI_Request rq;
    if (MPI_Iallreduce(mine, all, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, rmcc.comm, &rq) !=
        MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce failed");
    if ((st = rmc_wait_mpi(&rq)) != RMC_OK)
        return st;
    *c = (rmc_kv_counters_t){n, all[0], all[1], all[2]};
    return RMC_OK;
}

rmc_hashmap_h rmc_kv_map(rmc_kv_h kv)
{
    return kv_check(kv, __func__) == RMC_OK ? kv->h : NULL;
}
