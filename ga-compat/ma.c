/* GA's MA memory allocator (macdecls.h): one arena per process, a stack growing down from its
 * top and a heap growing up from its bottom, blocks named by integer memhandles. Everything is
 * local to the calling process (no communication) and not thread safe (as GA's MA). All of MA's
 * state is the one static struct `ma` below (the ma_cb_* base arrays are public by GA's API).
 *
 * Reproduced from GA 5.8.2's MA (ma.c, table.c, error.c of Debian's libga-mpich.a, read from its
 * disassembly and compared call by call with tests/ga/ma_diff.c): the block layout and sizes, so
 * MA_sizeof_overhead, the MA_inquire_* figures, memhandle numbers and MA_print_stats agree; the
 * placement rules (first fit on the heap's free list, splitting, coalescing, the heap top falling
 * back after frees); the error messages, their levels and return values.
 *
 * Block layout (heap and stack alike), GA's AD descriptor first:
 *
 *     | descriptor (80 bytes) | pad | guard1 (4) | client space | guard2 (4) | pad to 8 |
 *
 * Client space sits on its type's grid: a whole number of elements away from the type's base
 * array (ma_cb_*), so MA_get_index is exact, and on a 2^numalign boundary when moving it there
 * keeps it on the grid. The two guard words (0xaaaaaaaa, 0x55555555) and a checksum of the
 * descriptor are checked whenever a handle is used and by MA_verify_allocator_stuff.
 *
 * Errors, as GA's ma_error: a non-fatal one prints "MA error: <call>: <why>" on stderr (unless
 * MA_set_error_print turned printing off) and the call returns MA_FALSE (0 for the calls that
 * return a number); with MA_set_hard_fail it prints "MA hard failure: ..." and terminates. A fatal
 * one (a bad datatype given to MA_sizeof, MA_sizeof_overhead, MA_get_mbase or MA_inquire_*, a bad
 * nelem to MA_sizeof) prints "MA fatal error: <call>: <why>" and terminates. Terminating calls the
 * MA_set_error_callback function as func("MA aborting", 0), or exit(1) when none is set; if the
 * callback returns, the failing call returns as for a non-fatal error.
 *
 * Where this MA differs from GA 5.8.2's (on purpose; each is a case where GA's is unusable):
 * - MA_init_memhandle_iterator / MA_get_next_memhandle work (GA's only print "not yet
 *   implemented" and return MA_FALSE): they visit every allocated block in memhandle order.
 * - MA_get_index is a signed pointer difference (GA's unsigned division gives garbage when the
 *   arena lies below the base arrays, as with a shared library's .bss above the malloc heap).
 * - MA_inquire_stack returns 0 when the stack has grown below the partition (GA's wraps around
 *   and returns a negative or huge count).
 * - Output pointers that are NULL are an error here (GA dereferences them); requests whose byte
 *   count overflows are refused as "not enough space" (GA wraps around).
 * - MA_init does not call mallopt (GA turns off glibc's mmap and trimming for the whole process)
 *   and ignores MA_USE_ARMCI_MEM (the arena is always malloc'd; ARMCI is not a dependency). The
 *   arena is 32-aligned (GA's: whatever malloc gives, 16), so where MT_C_LDCPL's 32-byte grid
 *   falls, and with it the sizes of such blocks, does not change from run to run.
 * - MA_free_heap_piece sizes the shortened block from its own client space (GA's recomputes the
 *   client space with the current numalign, too small a block if numalign shrank meanwhile).
 * - ma_set_error_callback(), declared but not defined by GA 5.8.2, restores the default
 *   termination (exit(1)), as MA_set_error_callback(NULL) does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macdecls.h"

/* -------------------------------------------------------------------- base arrays --- */
/* GA's base arrays: two elements each (only their addresses matter); aligned to their element
 * size or more so that a client space on the grid is aligned for its type. */
_Alignas(32) MA_LongDoubleComplex ma_cb_ldcpl[2];
_Alignas(32) MA_DoubleComplex ma_cb_dcpl[2];
_Alignas(16) MA_SingleComplex ma_cb_scpl[2];
_Alignas(32) MA_LongDouble ma_cb_ldbl[2];
_Alignas(16) double ma_cb_dbl[2];
_Alignas(16) float ma_cb_float[2];
_Alignas(16) long long ma_cb_longlong[2];
_Alignas(16) long ma_cb_long[2];
_Alignas(16) int ma_cb_int[2];
_Alignas(16) char ma_cb_char[2];

/* ---------------------------------------------------------------------- datatypes --- */
#define MA_NTYPES MT_NUMTYPES /* internal type t = datatype - MT_BASE, 0 .. 16 */

/* Element sizes (GA's ma_sizeof; the Fortran types as GA 5.8.2 built with 8-byte integers). */
static const int ma_size[MA_NTYPES] = {
    1,  /* MT_C_CHAR */
    4,  /* MT_C_INT */
    8,  /* MT_C_LONGINT */
    4,  /* MT_C_FLOAT */
    8,  /* MT_C_DBL */
    16, /* MT_C_LDBL */
    8,  /* MT_C_SCPL */
    16, /* MT_C_DCPL */
    32, /* MT_C_LDCPL */
    1,  /* MT_F_BYTE */
    8,  /* MT_F_INT (Integer) */
    8,  /* MT_F_LOG (Logical) */
    4,  /* MT_F_REAL */
    8,  /* MT_F_DBL */
    8,  /* MT_F_SCPL */
    16, /* MT_F_DCPL */
    8,  /* MT_C_LONGLONG */
};

/* Type names printed by MA_summarize_allocated_blocks (GA's ma_datatype). */
static const char *const ma_type_name[MA_NTYPES] = {
    "char",
    "int",
    "long int",
    "float",
    "double",
    "long double",
    "single precision complex",
    "double precision complex",
    "long double precision complex",
    "byte",
    "integer",
    "logical",
    "real",
    "double precision",
    "single precision complex",
    "double precision complex",
    "long long",
};

/* The base array of type t. The Fortran types (GA: Fortran common blocks) use the C array of the
 * same element type: MT_F_INT and MT_F_LOG are Integer (long), MT_F_BYTE is char. */
static char *ma_base(int t)
{
    switch (t + MT_BASE) {
    case MT_C_CHAR:
    case MT_F_BYTE:
        return ma_cb_char;
    case MT_C_INT:
        return (char *)ma_cb_int;
    case MT_C_LONGINT:
    case MT_F_INT:
    case MT_F_LOG:
        return (char *)ma_cb_long;
    case MT_C_FLOAT:
    case MT_F_REAL:
        return (char *)ma_cb_float;
    case MT_C_DBL:
    case MT_F_DBL:
        return (char *)ma_cb_dbl;
    case MT_C_LDBL:
        return (char *)ma_cb_ldbl;
    case MT_C_SCPL:
    case MT_F_SCPL:
        return (char *)ma_cb_scpl;
    case MT_C_DCPL:
    case MT_F_DCPL:
        return (char *)ma_cb_dcpl;
    case MT_C_LDCPL:
        return (char *)ma_cb_ldcpl;
    default: /* MT_C_LONGLONG */
        return (char *)ma_cb_longlong;
    }
}

static int type_valid(Integer datatype)
{
    return datatype >= MT_FIRST && datatype <= MT_LAST;
}

/* ------------------------------------------------------------------------- blocks --- */
/* A block's descriptor (GA's AD, same 80-byte layout). Free heap fragments reuse it for their
 * size (nbytes) and the free list (next) only. */
typedef struct ma_ad {
    Integer datatype;       /* internal type 0 .. 16 */
    Integer nelem;          /* elements in the block */
    char name[MA_NAMESIZE]; /* the client's name, truncated */
    char *client;           /* client space */
    size_t nbytes;          /* whole block, descriptor to trailing padding */
    struct ma_ad *next;     /* used list (newest first) or free list (by address) */
    size_t checksum;        /* datatype + nelem + client + nbytes */
} ma_ad_t;
_Static_assert(sizeof(ma_ad_t) == 80, "MA's block descriptor is GA's 80 bytes");

typedef unsigned int ma_guard_t;
#define MA_GUARD1      0xaaaaaaaau
#define MA_GUARD2      0x55555555u
#define MA_AD_GUARD    (sizeof(ma_ad_t) + sizeof(ma_guard_t)) /* 84: least descriptor-to-client */
#define MA_BLOCK_FIXED (MA_AD_GUARD + sizeof(ma_guard_t))     /* 88: a block of no elements */
#define MA_ALIGN       8                                      /* blocks start and end 8-aligned */
/* A heap block at least this much larger than needed gives its tail back as a free fragment. */
#define MA_SPLIT_MIN 95
/* Per-block overhead bound in bytes, less the largest element size (GA: 94 + 32 = 126). */
#define MA_OVERHEAD_FIXED 94
#define MA_DEFAULT_BYTES  524288 /* MA_init's heap or stack for a negative nominal size */
#define MA_SEGMENT_ALIGN  32     /* the arena's alignment: the largest element size */

/* Where a memhandle's block must be (GA's BlockLocation). */
typedef enum { LOC_ANY, LOC_HEAP, LOC_STACK, LOC_STACK_TOP } ma_loc_t;

/* The calls MA counts for MA_print_stats, in its order. */
enum {
    C_alloc_get,
    C_allocate_heap,
    C_chop_stack,
    C_free_heap,
    C_free_heap_piece,
    C_get_index,
    C_get_mbase,
    C_get_next_memhandle,
    C_get_numalign,
    C_get_pointer,
    C_init,
    C_initialized,
    C_init_memhandle_iterator,
    C_inquire_avail,
    C_inquire_heap,
    C_inquire_heap_check_stack,
    C_inquire_heap_no_partition,
    C_inquire_stack,
    C_inquire_stack_check_heap,
    C_inquire_stack_no_partition,
    C_pop_stack,
    C_print_stats,
    C_push_get,
    C_push_stack,
    C_set_auto_verify,
    C_set_error_print,
    C_set_hard_fail,
    C_set_numalign,
    C_sizeof,
    C_sizeof_overhead,
    C_summarize_allocated_blocks,
    C_trace,
    C_verify_allocator_stuff,
    C_N
};
static const char *const ma_call_name[C_N] = {
    "MA_alloc_get",
    "MA_allocate_heap",
    "MA_chop_stack",
    "MA_free_heap",
    "MA_free_heap_piece",
    "MA_get_index",
    "MA_get_mbase",
    "MA_get_next_memhandle",
    "MA_get_numalign",
    "MA_get_pointer",
    "MA_init",
    "MA_initialized",
    "MA_init_memhandle_iterator",
    "MA_inquire_avail",
    "MA_inquire_heap",
    "MA_inquire_heap_check_stack",
    "MA_inquire_heap_no_partition",
    "MA_inquire_stack",
    "MA_inquire_stack_check_heap",
    "MA_inquire_stack_no_partition",
    "MA_pop_stack",
    "MA_print_stats",
    "MA_push_get",
    "MA_push_stack",
    "MA_set_auto_verify",
    "MA_set_error_print",
    "MA_set_hard_fail",
    "MA_set_numalign",
    "MA_sizeof",
    "MA_sizeof_overhead",
    "MA_summarize_allocated_blocks",
    "MA_trace",
    "MA_verify_allocator_stuff",
};

/* A memhandle table slot (GA's table.c). */
enum { SLOT_UNUSED = 0, SLOT_USED = 1, SLOT_FREED = 2 };
typedef struct ma_slot {
    ma_ad_t *ad;
    int state;
} ma_slot_t;
#define MA_TABLE_FIRST 32 /* first capacity; doubles when full */

/* ---------------------------------------------------------------------- the state --- */
static struct {
    Integer initialized;
    Integer auto_verify, error_print, hard_fail, trace, numalign;
    void (*terminate)(); /* MA_set_error_callback */
    /* the arena: heap [segment, hp), gap [hp, sp), stack [sp, eos); partition: where the
     * nominal heap ends and the nominal stack begins */
    char *segment, *hp, *sp, *eos, *partition;
    void *arena; /* the allocation holding the arena (kept for leak checkers; never freed) */
    ma_ad_t *hused, *hfree, *sused;
    /* memhandles: slot i is handle i; new handles are taken round-robin from `next` */
    ma_slot_t *table;
    Integer table_cap, table_used, table_next;
    struct {
        unsigned long hblocks, hblocks_max, hbytes, hbytes_max;
        unsigned long sblocks, sblocks_max, sbytes, sbytes_max;
        unsigned long calls[C_N];
    } stats;
} ma = {.error_print = MA_TRUE};

/* ------------------------------------------------------------------------- errors --- */
/* GA's ma_error: see the top of the file. `fatal` errors always print and terminate; `internal`
 * marks an inconsistency of MA itself ("MA internal error"). Returns when the error is not
 * terminating or the callback returned. */
static void ma_err(int fatal, int internal, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ma_err(int fatal, int internal, const char *call, const char *fmt, ...)
{
    int stop = fatal || ma.hard_fail;
    if (stop || ma.error_print) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fflush(stdout);
        fflush(stderr);
        fprintf(stderr, "MA %s%s: %s: %s\n", internal ? "internal " : "",
                fatal  ? "fatal error"
                : stop ? "hard failure"
                       : "error",
                call, msg);
        fflush(stderr);
    }
    if (!stop)
        return;
    fflush(stdout);
    if (ma.terminate)
        ma.terminate("MA aborting", 0);
    else
        exit(1);
}

/* A string argument for a message: GA prints whatever printf makes of it. */
static const char *str_or_null(const char *s)
{
    return s ? s : "(null)";
}

/* Auto-verify (MA_set_auto_verify) before a call: MA_FALSE stops the call. */
static int auto_verify_ok(void)
{
    return !ma.auto_verify || MA_verify_allocator_stuff();
}

/* -------------------------------------------------------------------- memhandles --- */
/* A new memhandle for ad (GA's ma_table_allocate), -1 with an error when memory is short. */
static Integer handle_new(ma_ad_t *ad)
{
    if (ma.table_used >= ma.table_cap) {
        Integer cap = ma.table_cap ? 2 * ma.table_cap : MA_TABLE_FIRST;
        ma_slot_t *t = realloc(ma.table, (size_t)cap * sizeof *t);
        if (!t) {
            ma_err(0, 0, "ma_table_allocate", "could not allocate %zu bytes for ma_table",
                   (size_t)cap * sizeof *t);
            return -1;
        }
        memset(t + ma.table_cap, 0, (size_t)(cap - ma.table_cap) * sizeof *t);
        ma.table_next = ma.table_cap; /* the new slots first */
        ma.table = t;
        ma.table_cap = cap;
    }
    Integer h = ma.table_next;
    while (ma.table[h].state == SLOT_USED)
        h = (h + 1) % ma.table_cap;
    ma.table[h].ad = ad;
    ma.table[h].state = SLOT_USED;
    ma.table_next = (h + 1) % ma.table_cap;
    ma.table_used++;
    return h;
}

/* 1 when h names a live block; otherwise an error naming `call` (GA's ma_table_verify). */
static int handle_valid(Integer h, const char *call)
{
    if (h < 0 || h >= ma.table_cap || ma.table[h].state == SLOT_UNUSED) {
        ma_err(0, 0, call, "handle %ld is not valid", (long)h);
        return 0;
    }
    if (ma.table[h].state == SLOT_FREED) {
        ma_err(0, 0, call, "handle %ld already deallocated", (long)h);
        return 0;
    }
    return 1;
}

/* The memhandle of a block, -1 when none (GA's ma_table_lookup_assoc). */
static Integer handle_of(const ma_ad_t *ad)
{
    for (Integer h = 0; h < ma.table_cap; h++)
        if (ma.table[h].state == SLOT_USED && ma.table[h].ad == ad)
            return h;
    return -1;
}

static void handle_release(Integer h)
{
    ma.table[h].state = SLOT_FREED;
    ma.table_used--;
}

/* ------------------------------------------------------------------ block helpers --- */
static size_t checksum_of(const ma_ad_t *ad)
{
    return (size_t)ad->datatype + (size_t)ad->nelem + (size_t)(uintptr_t)ad->client + ad->nbytes;
}

static ma_guard_t guard_get(const char *p)
{
    ma_guard_t g;
    memcpy(&g, p, sizeof g); /* a char block's leading guard may be unaligned */
    return g;
}

static char *guard2_at(const ma_ad_t *ad)
{
    return ad->client + (size_t)ad->nelem * (size_t)ma_size[ad->datatype];
}

static void guards_set(ma_ad_t *ad)
{
    ma_guard_t g1 = MA_GUARD1, g2 = MA_GUARD2;
    memcpy(ad->client - sizeof g1, &g1, sizeof g1);
    memcpy(guard2_at(ad), &g2, sizeof g2);
}

static void copy_name(ma_ad_t *ad, const char *name)
{
    size_t i = 0;
    for (; name && name[i] && i < MA_NAMESIZE - 1; i++)
        ad->name[i] = name[i];
    ad->name[i] = '\0';
}

static int on_list(const ma_ad_t *list, const ma_ad_t *ad)
{
    for (; list; list = list->next)
        if (list == ad)
            return 1;
    return 0;
}

/* The block of memhandle h, checked (GA's mh2ad): a live handle, inside the arena, a good
 * checksum and guards, and where `loc` says. 0 with an error naming `call` otherwise. */
static int block_of(Integer h, ma_ad_t **out, ma_loc_t loc, const char *call)
{
    if (!handle_valid(h, call))
        return 0;
    ma_ad_t *ad = ma.table[h].ad;
    if ((char *)ad < ma.segment || (char *)ad >= ma.eos) {
        ma_err(0, 0, call, "invalid block address (0x%lx) for memhandle %ld",
               (unsigned long)(uintptr_t)ad, (long)h);
        return 0;
    }
    if (ad->checksum != checksum_of(ad)) {
        ma_err(0, 0, call, "invalid checksum for memhandle %ld (name: '%s')", (long)h, ad->name);
        return 0;
    }
    if (guard_get(ad->client - sizeof(ma_guard_t)) != MA_GUARD1 ||
        guard_get(guard2_at(ad)) != MA_GUARD2) {
        ma_err(0, 0, call, "invalid guard(s) for memhandle %ld (name: '%s')", (long)h, ad->name);
        return 0;
    }
    const char *where = NULL;
    switch (loc) {
    case LOC_HEAP:
        if (!on_list(ma.hused, ad))
            where = "not in heap";
        break;
    case LOC_STACK:
        if (!on_list(ma.sused, ad))
            where = "not in stack";
        break;
    case LOC_STACK_TOP:
        if (!on_list(ma.sused, ad))
            where = "not in stack";
        else if ((char *)ad != ma.sp)
            where = "not top of stack";
        break;
    case LOC_ANY:
        if (!on_list(ma.hused, ad) && !on_list(ma.sused, ad))
            where = "not in heap or stack";
        break;
    }
    if (where) {
        ma_err(0, 0, call, "memhandle %ld (name: '%s') %s", (long)h, ad->name, where);
        return 0;
    }
    *out = ad;
    return 1;
}

/* nelem elements of type t in bytes; 0 when that overflows (no block can be that large). */
static int client_bytes(int t, Integer nelem, uintptr_t *bytes)
{
    if ((uintptr_t)nelem > (UINTPTR_MAX / 4) / (uintptr_t)ma_size[t])
        return 0;
    *bytes = (uintptr_t)nelem * (uintptr_t)ma_size[t];
    return 1;
}

/* The byte count an impossible request reports ("not enough space to allocate N bytes"). */
static unsigned long huge_bytes(int t, Integer nelem)
{
    uintptr_t b;
    return client_bytes(t, nelem, &b) ? (unsigned long)(b + MA_BLOCK_FIXED) : (unsigned long)-1;
}

static uintptr_t round_up(uintptr_t x, uintptr_t a)
{
    return (x + a - 1) / a * a;
}

/* Bytes from x up to the next multiple of a. */
static uintptr_t grid_pad(uintptr_t x, uintptr_t a)
{
    return round_up(x, a) - x;
}

/* Distance from x up to the next point of type t's grid, 0 .. size - 1 (the grid: addresses a
 * whole number of elements away from the type's base array). */
static uintptr_t grid_up(int t, uintptr_t x)
{
    intptr_t size = ma_size[t];
    intptr_t d = (intptr_t)((uintptr_t)ma_base(t) - x) % size;
    return (uintptr_t)(d < 0 ? d + size : d);
}

/* Distance from x down to the previous point of type t's grid, 0 .. size - 1. */
static uintptr_t grid_down(int t, uintptr_t x)
{
    intptr_t size = ma_size[t];
    intptr_t d = (intptr_t)(x - (uintptr_t)ma_base(t)) % size;
    return (uintptr_t)(d < 0 ? d + size : d);
}

/* A heap-side block whose descriptor is at `addr` (GA's balloc_after): client space is the first
 * grid point at or after addr + 84, moved up to a 2^numalign boundary when that lands on the grid;
 * the block ends 8-aligned after the trailing guard. cbytes: the client space's bytes. */
static void place_up(int t, uintptr_t addr, uintptr_t cbytes, uintptr_t *client, uintptr_t *nbytes)
{
    uintptr_t c = addr + MA_AD_GUARD;
    c += grid_up(t, c);
    if (ma.numalign > 0) {
        uintptr_t a = (uintptr_t)1 << ma.numalign, r = c & (a - 1);
        if (r != 0 && (a - r) % (uintptr_t)ma_size[t] == 0)
            c += a - r;
    }
    *client = c;
    *nbytes = round_up(c + cbytes + sizeof(ma_guard_t) - addr, MA_ALIGN);
}

/* The most elements of type t a block at `addr` of at most `gap` bytes holds (GA's inquiry loop:
 * from (gap - 88) / size down to the first count whose block fits; 0 when none does). */
static Integer fit_at(int t, uintptr_t addr, uintptr_t gap)
{
    uintptr_t size = (uintptr_t)ma_size[t];
    if (gap <= MA_BLOCK_FIXED)
        return 0;
    uintptr_t n = (gap - MA_BLOCK_FIXED) / size, c, nb;
    /* the client offset does not depend on n: start at the count the unrounded end allows */
    place_up(t, addr, 0, &c, &nb);
    uintptr_t lead = c - addr + sizeof(ma_guard_t);
    uintptr_t n2 = gap >= lead ? (gap - lead) / size : 0;
    if (n2 < n)
        n = n2;
    while (n > 0) {
        place_up(t, addr, n * size, &c, &nb);
        if (nb <= gap)
            break;
        n--;
    }
    return (Integer)n;
}

/* The most elements of type t one free heap fragment below the partition holds, counting only
 * fragments that beat `least` elements (GA's ma_max_heap_frag_nelem). */
static Integer fit_fragments(int t, Integer least)
{
    Integer best = 0;
    uintptr_t need = (uintptr_t)least * (uintptr_t)ma_size[t] + MA_BLOCK_FIXED;
    for (ma_ad_t *f = ma.hfree; f; f = f->next) {
        if ((char *)f >= ma.partition)
            continue;
        uintptr_t len = f->nbytes;
        if ((char *)f + len >= ma.partition)
            len = (uintptr_t)(ma.partition - (char *)f);
        if (len < need)
            continue;
        Integer n = fit_at(t, (uintptr_t)f, len);
        if (n > best)
            best = n;
    }
    return best;
}

/* A heap block (ad) left the used list: its space goes back (GA's block_free_heap). The heap top
 * falls to the end of the highest used block; free fragments above it vanish into the gap; a
 * block below it joins the address-ordered free list and merges with its neighbours. */
static void heap_release(ma_ad_t *ad)
{
    ma_ad_t *top = NULL;
    for (ma_ad_t *u = ma.hused; u; u = u->next)
        if (u > top)
            top = u;
    if (!top) {
        ma.hfree = NULL;
        ma.hp = ma.segment;
        return;
    }
    ma.hp = (char *)top + top->nbytes;
    for (ma_ad_t **link = &ma.hfree; *link;)
        if (*link > top)
            *link = (*link)->next;
        else
            link = &(*link)->next;
    if (ad > top)
        return;
    ma_ad_t **link = &ma.hfree;
    while (*link && *link < ad)
        link = &(*link)->next;
    ad->next = *link;
    *link = ad;
    for (ma_ad_t *f = ma.hfree; f;)
        if ((char *)f + f->nbytes == (char *)f->next) {
            f->nbytes += f->next->nbytes;
            f->next = f->next->next;
        } else {
            f = f->next;
        }
}

/* ------------------------------------------------------------------------ MA_init --- */
/* MA_init: sets up the arena for nominal_stack and nominal_heap elements of datatype (a negative
 * count: 524288 bytes), each part sized for one block of that many elements. Once per process:
 * a second call is an error. MA_FALSE on a bad datatype or when the arena cannot be allocated. */
Boolean MA_init(Integer datatype, Integer nominal_stack, Integer nominal_heap)
{
    ma.stats.calls[C_init]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    if (ma.initialized) {
        ma_err(0, 0, "MA_init", "MA already initialized");
        return MA_FALSE;
    }
    if (!type_valid(datatype)) {
        ma_err(0, 0, "MA_init", "invalid datatype: %ld", (long)datatype);
        return MA_FALSE;
    }
    int t = (int)(datatype - MT_BASE);
    uintptr_t part[2] = {MA_DEFAULT_BYTES, MA_DEFAULT_BYTES}; /* heap, stack */
    const Integer nominal[2] = {nominal_heap, nominal_stack};
    for (int i = 0; i < 2; i++) {
        if (nominal[i] < 0)
            continue;
        uintptr_t b;
        if (!client_bytes(t, nominal[i], &b)) {
            ma_err(0, 0, "MA_init", "%s of %ld elements of %s is too large", i ? "stack" : "heap",
                   (long)nominal[i], ma_type_name[t]);
            return MA_FALSE;
        }
        part[i] = round_up(b + (uintptr_t)ma_size[t] + MA_OVERHEAD_FIXED, MA_ALIGN);
    }
    uintptr_t total = part[0] + part[1];
    /* 32-aligned (malloc's 16 would leave where MT_C_LDCPL's 32-byte grid falls to chance) */
    char *mem = malloc(total + MA_SEGMENT_ALIGN);
    if (!mem) {
        ma_err(0, 0, "MA_init", "could not allocate %lu bytes", (unsigned long)total);
        return MA_FALSE;
    }
    ma.arena = mem;
    char *seg = mem + grid_pad((uintptr_t)mem, MA_SEGMENT_ALIGN);
    ma.segment = ma.hp = seg;
    ma.eos = ma.sp = seg + total;
    ma.partition = seg + part[0];
    ma.hused = ma.hfree = ma.sused = NULL;
    ma.initialized = MA_TRUE;
    return MA_TRUE;
}

/* MA_initialized: MA_TRUE after a successful MA_init. */
Boolean MA_initialized(void)
{
    ma.stats.calls[C_initialized]++;
    return ma.initialized;
}

/* ------------------------------------------------------------------------- stack --- */
/* MA_push_stack: a block of nelem elements of datatype on top of the stack (its highest free
 * addresses), named `name` (32 characters kept); its memhandle in *memhandle. MA_FALSE when MA is
 * not initialized, the datatype or nelem is bad, or the gap to the heap is too small. */
Boolean MA_push_stack(Integer datatype, Integer nelem, const char *name, Integer *memhandle)
{
    ma.stats.calls[C_push_stack]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    if (ma.trace)
        printf("MA: pushing '%s' (%d)\n", str_or_null(name), (int)nelem);
    const char *nm = str_or_null(name);
    if (!ma.initialized) {
        ma_err(0, 0, "MA_push_stack", "block '%s', MA not yet initialized", nm);
        return MA_FALSE;
    }
    if (!type_valid(datatype)) {
        ma_err(0, 0, "MA_push_stack", "block '%s', invalid datatype: %ld", nm, (long)datatype);
        return MA_FALSE;
    }
    if (nelem < 0) {
        ma_err(0, 0, "MA_push_stack", "block '%s', invalid nelem: %ld", nm, (long)nelem);
        return MA_FALSE;
    }
    if (!memhandle) {
        ma_err(0, 0, "MA_push_stack", "block '%s', memhandle is NULL", nm);
        return MA_FALSE;
    }
    int t = (int)(datatype - MT_BASE);
    uintptr_t sp = (uintptr_t)ma.sp, room = (uintptr_t)(ma.sp - ma.hp), cb;
    if (!client_bytes(t, nelem, &cb) || cb > sp - 2 * MA_BLOCK_FIXED) {
        /* more than the address space below sp: sp - cb would wrap around */
        ma_err(0, 0, "MA_push_stack", "block '%s', not enough space to allocate %lu bytes", nm,
               huge_bytes(t, nelem));
        return MA_FALSE;
    }
    /* client space: the highest grid point leaving room for the trailing guard below sp, moved
     * down to a 2^numalign boundary when that stays on the grid */
    uintptr_t c = sp - sizeof(ma_guard_t) - cb;
    c -= grid_down(t, c);
    if (ma.numalign > 0) {
        uintptr_t a = (uintptr_t)1 << ma.numalign, r = c & (a - 1);
        if (r != 0 && r % (uintptr_t)ma_size[t] == 0)
            c -= r;
    }
    uintptr_t adr = (c - MA_AD_GUARD) & ~(uintptr_t)(MA_ALIGN - 1);
    uintptr_t nbytes = sp - adr;
    if (room < nbytes) {
        ma_err(0, 0, "MA_push_stack", "block '%s', not enough space to allocate %lu bytes", nm,
               (unsigned long)nbytes);
        return MA_FALSE;
    }
    ma_ad_t *ad = (ma_ad_t *)adr;
    Integer h = handle_new(ad);
    if (h < 0)
        return MA_FALSE;
    ad->datatype = t;
    ad->nelem = nelem;
    copy_name(ad, name);
    ad->client = (char *)c;
    ad->nbytes = nbytes;
    ad->next = ma.sused;
    ad->checksum = checksum_of(ad);
    ma.sused = ad;
    guards_set(ad);
    ma.sp = (char *)ad;
    if (++ma.stats.sblocks > ma.stats.sblocks_max)
        ma.stats.sblocks_max = ma.stats.sblocks;
    ma.stats.sbytes += nbytes;
    if (ma.stats.sbytes > ma.stats.sbytes_max)
        ma.stats.sbytes_max = ma.stats.sbytes;
    *memhandle = h;
    return MA_TRUE;
}

/* MA_push_get: MA_push_stack, then MA_get_index of the new block into *index. */
Boolean MA_push_get(Integer datatype, Integer nelem, const char *name, Integer *memhandle,
                    MA_AccessIndex *index)
{
    ma.stats.calls[C_push_get]++;
    if (!MA_push_stack(datatype, nelem, name, memhandle))
        return MA_FALSE;
    return MA_get_index(*memhandle, index);
}

/* MA_pop_stack: frees the block on top of the stack; any other block (lower on the stack, on the
 * heap, freed) is an error and nothing changes. */
Boolean MA_pop_stack(Integer memhandle)
{
    ma.stats.calls[C_pop_stack]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_STACK_TOP, "MA_pop_stack"))
        return MA_FALSE;
    if (ma.trace)
        printf("MA: popping '%s'\n", ad->name);
    ma_ad_t **link = &ma.sused; /* the top block heads the used list */
    while (*link != ad)
        link = &(*link)->next;
    *link = ad->next;
    ma.stats.sblocks--;
    ma.sp += ad->nbytes;
    ma.stats.sbytes -= ad->nbytes;
    handle_release(memhandle);
    return MA_TRUE;
}

/* MA_chop_stack: frees the stack block of memhandle and every block pushed after it. */
Boolean MA_chop_stack(Integer memhandle)
{
    ma.stats.calls[C_chop_stack]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_STACK, "MA_chop_stack"))
        return MA_FALSE;
    unsigned long popped = 0;
    for (ma_ad_t **link = &ma.sused; *link;) {
        ma_ad_t *b = *link;
        if (b > ad) { /* pushed before ad: stays */
            link = &b->next;
            continue;
        }
        Integer h = handle_of(b);
        if (h < 0)
            ma_err(0, 1, "mh_free", "cannot find memhandle for block address 0x%lx",
                   (unsigned long)(uintptr_t)b);
        else
            handle_release(h);
        *link = b->next;
        popped++;
    }
    char *sp = (char *)ad + ad->nbytes;
    ma.stats.sblocks -= popped;
    ma.stats.sbytes -= (unsigned long)(sp - ma.sp);
    ma.sp = sp;
    return MA_TRUE;
}

/* -------------------------------------------------------------------------- heap --- */
/* MA_allocate_heap: a block of nelem elements of datatype on the heap: the first free fragment
 * it fits in (its tail split off when more than 95 bytes are left), else at the heap top (which
 * may grow into the nominal stack up to the stack pointer). Memhandle in *memhandle. MA_FALSE when
 * MA is not initialized, the datatype or nelem is bad, or nothing is large enough. */
Boolean MA_allocate_heap(Integer datatype, Integer nelem, const char *name, Integer *memhandle)
{
    ma.stats.calls[C_allocate_heap]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    if (ma.trace)
        printf("MA: allocating '%s' (%d)\n", str_or_null(name), (int)nelem);
    const char *nm = str_or_null(name);
    if (!ma.initialized) {
        ma_err(0, 0, "MA_allocate_heap", "block '%s', MA not yet initialized", nm);
        return MA_FALSE;
    }
    if (!type_valid(datatype)) {
        ma_err(0, 0, "MA_allocate_heap", "block '%s', invalid datatype: %ld", nm, (long)datatype);
        return MA_FALSE;
    }
    if (nelem < 0) {
        ma_err(0, 0, "MA_allocate_heap", "block '%s', invalid nelem: %ld", nm, (long)nelem);
        return MA_FALSE;
    }
    if (!memhandle) {
        ma_err(0, 0, "MA_allocate_heap", "block '%s', memhandle is NULL", nm);
        return MA_FALSE;
    }
    int t = (int)(datatype - MT_BASE);
    uintptr_t cb, c = 0, nb = 0;
    if (!client_bytes(t, nelem, &cb)) {
        ma_err(0, 0, "MA_allocate_heap", "block '%s', not enough space to allocate %lu bytes", nm,
               huge_bytes(t, nelem));
        return MA_FALSE;
    }
    ma_ad_t *prev = NULL, *f = ma.hfree;
    for (; f; prev = f, f = f->next) {
        place_up(t, (uintptr_t)f, cb, &c, &nb);
        if (f->nbytes >= nb)
            break;
    }
    if (!f) {
        place_up(t, (uintptr_t)ma.hp, cb, &c, &nb);
        if (nb > (uintptr_t)(ma.sp - ma.hp)) {
            ma_err(0, 0, "MA_allocate_heap", "block '%s', not enough space to allocate %lu bytes",
                   nm, (unsigned long)nb);
            return MA_FALSE;
        }
    }
    ma_ad_t *ad = f ? f : (ma_ad_t *)ma.hp;
    Integer h = handle_new(ad);
    if (h < 0)
        return MA_FALSE;
    if (f) {
        if (f->nbytes - nb > MA_SPLIT_MIN) { /* the tail stays free, right after f */
            ma_ad_t *rest = (ma_ad_t *)((char *)f + nb);
            rest->nbytes = f->nbytes - nb;
            rest->next = f->next;
            f->next = rest;
            f->nbytes = nb;
        }
        if (prev)
            prev->next = f->next;
        else
            ma.hfree = f->next;
    } else {
        ad->nbytes = nb;
    }
    ad->client = (char *)c;
    ad->datatype = t;
    ad->nelem = nelem;
    copy_name(ad, name);
    ad->next = ma.hused;
    ma.hused = ad;
    ad->checksum = checksum_of(ad);
    guards_set(ad);
    if ((char *)ad + ad->nbytes > ma.hp)
        ma.hp = (char *)ad + ad->nbytes;
    if (++ma.stats.hblocks > ma.stats.hblocks_max)
        ma.stats.hblocks_max = ma.stats.hblocks;
    ma.stats.hbytes += ad->nbytes;
    if (ma.stats.hbytes > ma.stats.hbytes_max)
        ma.stats.hbytes_max = ma.stats.hbytes;
    *memhandle = h;
    return MA_TRUE;
}

/* MA_alloc_get: MA_allocate_heap, then MA_get_index of the new block into *index. */
Boolean MA_alloc_get(Integer datatype, Integer nelem, const char *name, Integer *memhandle,
                     MA_AccessIndex *index)
{
    ma.stats.calls[C_alloc_get]++;
    if (!MA_allocate_heap(datatype, nelem, name, memhandle))
        return MA_FALSE;
    return MA_get_index(*memhandle, index);
}

/* MA_free_heap: frees a heap block (a stack block or a freed handle is an error). */
Boolean MA_free_heap(Integer memhandle)
{
    ma.stats.calls[C_free_heap]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_HEAP, "MA_free_heap"))
        return MA_FALSE;
    if (ma.trace)
        printf("MA: freeing '%s'\n", ad->name);
    ma_ad_t **link = &ma.hused;
    while (*link != ad)
        link = &(*link)->next;
    *link = ad->next;
    ma.stats.hbytes -= ad->nbytes;
    ma.stats.hblocks--;
    heap_release(ad);
    handle_release(memhandle);
    return MA_TRUE;
}

/* MA_free_heap_piece: frees the last nelem elements of a heap block (all of them, or more, frees
 * the block as MA_free_heap). The block keeps its memhandle and client space; its tail goes back
 * to the heap when more than 95 bytes come free. */
Boolean MA_free_heap_piece(Integer memhandle, Integer nelem)
{
    ma.stats.calls[C_free_heap_piece]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_HEAP, "MA_free_heap_piece"))
        return MA_FALSE;
    if (nelem < 0) {
        ma_err(0, 0, "MA_free_heap_piece", "block '%s', invalid nelem: %ld", ad->name, (long)nelem);
        return MA_FALSE;
    }
    if (nelem >= ad->nelem)
        return MA_free_heap(memhandle);
    if (ma.trace)
        printf("MA: freeing %ld elements of '%s'\n", (long)nelem, ad->name);
    Integer keep = ad->nelem - nelem;
    uintptr_t nb =
        round_up((uintptr_t)ad->client + (uintptr_t)keep * (uintptr_t)ma_size[ad->datatype] +
                     sizeof(ma_guard_t) - (uintptr_t)ad,
                 MA_ALIGN);
    if (nb < ad->nbytes && ad->nbytes - nb > MA_SPLIT_MIN) {
        ma_ad_t *rest = (ma_ad_t *)((char *)ad + nb);
        rest->nbytes = ad->nbytes - nb;
        ad->nbytes = nb;
        ma.stats.hbytes -= rest->nbytes;
        heap_release(rest);
    }
    ad->nelem = keep;
    ad->checksum = checksum_of(ad);
    guards_set(ad);
    return MA_TRUE;
}

/* ------------------------------------------------------------------------- access --- */
/* MA_get_index: the index of a block's client space in its type's base array:
 * &ma_cb_<type>[*index] is the client space (for the Fortran types, the array MA_get_mbase
 * returns). May be negative when the arena lies below the base array. */
Boolean MA_get_index(Integer memhandle, MA_AccessIndex *index)
{
    ma.stats.calls[C_get_index]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_ANY, "MA_get_index"))
        return MA_FALSE;
    if (!index) {
        ma_err(0, 0, "MA_get_index", "index is NULL (memhandle %ld)", (long)memhandle);
        return MA_FALSE;
    }
    intptr_t off = (intptr_t)((uintptr_t)ad->client - (uintptr_t)ma_base((int)ad->datatype));
    *index = (MA_AccessIndex)(off / ma_size[ad->datatype]);
    return MA_TRUE;
}

/* MA_get_pointer: stores the block's client-space address into *(void **)pointer. */
Boolean MA_get_pointer(Integer memhandle, void *pointer)
{
    ma.stats.calls[C_get_pointer]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    ma_ad_t *ad;
    if (!block_of(memhandle, &ad, LOC_ANY, "MA_get_pointer"))
        return MA_FALSE;
    if (!pointer) {
        ma_err(0, 0, "MA_get_pointer", "pointer is NULL (memhandle %ld)", (long)memhandle);
        return MA_FALSE;
    }
    *(void **)pointer = ad->client;
    return MA_TRUE;
}

/* MA_get_mbase: the base array of datatype (ma_cb_<type>); a bad datatype is fatal. */
Pointer MA_get_mbase(Integer datatype)
{
    ma.stats.calls[C_get_mbase]++;
    if (!type_valid(datatype)) {
        ma_err(1, 0, "MA_get_mbase", "invalid datatype: %ld", (long)datatype);
        return NULL;
    }
    return ma_base((int)(datatype - MT_BASE));
}

/* ----------------------------------------------------------------------- inquiry --- */
/* The inquiries: how many elements of datatype one more block could hold. MA not initialized is
 * an error (0); a bad datatype is fatal. */
static int inquire_ok(int call, Integer datatype)
{
    ma.stats.calls[call]++;
    if (!auto_verify_ok())
        return 0;
    if (!ma.initialized) {
        ma_err(0, 0, ma_call_name[call], "MA not yet initialized");
        return 0;
    }
    if (!type_valid(datatype)) {
        ma_err(1, 0, ma_call_name[call], "invalid datatype: %ld", (long)datatype);
        return 0;
    }
    return 1;
}

static uintptr_t umin(uintptr_t a, uintptr_t b)
{
    return a < b ? a : b;
}

/* MA_inquire_avail: one block in the gap between heap top and stack top (free heap fragments
 * are not counted). */
Integer MA_inquire_avail(Integer datatype)
{
    if (!inquire_ok(C_inquire_avail, datatype))
        return 0;
    return fit_at((int)(datatype - MT_BASE), (uintptr_t)ma.hp, (uintptr_t)(ma.sp - ma.hp));
}

/* MA_inquire_heap: one heap block below the partition: in the gap up to the partition or in a
 * free fragment, whichever holds more. */
Integer MA_inquire_heap(Integer datatype)
{
    if (!inquire_ok(C_inquire_heap, datatype))
        return 0;
    int t = (int)(datatype - MT_BASE);
    Integer n =
        ma.hp < ma.partition ? fit_at(t, (uintptr_t)ma.hp, (uintptr_t)(ma.partition - ma.hp)) : 0;
    Integer f = fit_fragments(t, n);
    return f > n ? f : n;
}

/* MA_inquire_heap_check_stack: as MA_inquire_heap, the gap also limited by the stack top (the
 * whole gap once the heap has passed the partition). */
Integer MA_inquire_heap_check_stack(Integer datatype)
{
    if (!inquire_ok(C_inquire_heap_check_stack, datatype))
        return 0;
    int t = (int)(datatype - MT_BASE);
    uintptr_t gap = (uintptr_t)(ma.sp - ma.hp);
    if (ma.hp <= ma.partition)
        gap = umin(gap, (uintptr_t)(ma.partition - ma.hp));
    Integer n = fit_at(t, (uintptr_t)ma.hp, gap);
    Integer f = fit_fragments(t, n);
    return f > n ? f : n;
}

/* MA_inquire_heap_no_partition: one heap block in the whole gap or a free fragment. */
Integer MA_inquire_heap_no_partition(Integer datatype)
{
    if (!inquire_ok(C_inquire_heap_no_partition, datatype))
        return 0;
    int t = (int)(datatype - MT_BASE);
    Integer n = fit_at(t, (uintptr_t)ma.hp, (uintptr_t)(ma.sp - ma.hp));
    Integer f = fit_fragments(t, n);
    return f > n ? f : n;
}

/* MA_inquire_stack: one stack block above the partition (0 once the stack has passed it). GA
 * measures a stack block with the heap's layout at the partition; so does this. */
Integer MA_inquire_stack(Integer datatype)
{
    if (!inquire_ok(C_inquire_stack, datatype))
        return 0;
    if (ma.sp <= ma.partition)
        return 0;
    return fit_at((int)(datatype - MT_BASE), (uintptr_t)ma.partition,
                  (uintptr_t)(ma.sp - ma.partition));
}

/* MA_inquire_stack_check_heap: as MA_inquire_stack, the gap also limited by the heap top (the
 * whole gap once the stack has passed the partition). */
Integer MA_inquire_stack_check_heap(Integer datatype)
{
    if (!inquire_ok(C_inquire_stack_check_heap, datatype))
        return 0;
    uintptr_t gap = (uintptr_t)(ma.sp - ma.hp);
    if (ma.sp >= ma.partition)
        gap = umin(gap, (uintptr_t)(ma.sp - ma.partition));
    return fit_at((int)(datatype - MT_BASE), (uintptr_t)ma.partition, gap);
}

/* MA_inquire_stack_no_partition: one stack block in the whole gap. */
Integer MA_inquire_stack_no_partition(Integer datatype)
{
    if (!inquire_ok(C_inquire_stack_no_partition, datatype))
        return 0;
    return fit_at((int)(datatype - MT_BASE), (uintptr_t)ma.hp, (uintptr_t)(ma.sp - ma.hp));
}

/* MA_sizeof: nelem1 elements of datatype1 in elements of datatype2, rounded up. Bad datatypes or
 * a negative nelem1 are fatal. */
Integer MA_sizeof(Integer datatype1, Integer nelem1, Integer datatype2)
{
    ma.stats.calls[C_sizeof]++;
    if (!auto_verify_ok())
        return 0;
    if (!type_valid(datatype1)) {
        ma_err(1, 0, "MA_sizeof", "invalid datatype: %ld", (long)datatype1);
        return 0;
    }
    if (nelem1 < 0) {
        ma_err(1, 0, "MA_sizeof", "invalid nelem: %ld", (long)nelem1);
        return 0;
    }
    if (!type_valid(datatype2)) {
        ma_err(1, 0, "MA_sizeof", "invalid datatype: %ld", (long)datatype2);
        return 0;
    }
    unsigned long bytes = (unsigned long)nelem1 * (unsigned long)ma_size[datatype1 - MT_BASE];
    unsigned long s2 = (unsigned long)ma_size[datatype2 - MT_BASE];
    return (Integer)((bytes + s2 - 1) / s2);
}

/* MA_sizeof_overhead: the most one block costs beyond its elements, in elements of datatype
 * (126 bytes, rounded up). A bad datatype is fatal. */
Integer MA_sizeof_overhead(Integer datatype)
{
    ma.stats.calls[C_sizeof_overhead]++;
    if (!auto_verify_ok())
        return 0;
    if (!type_valid(datatype)) {
        ma_err(1, 0, "MA_sizeof_overhead", "invalid datatype: %ld", (long)datatype);
        return 0;
    }
    int biggest = 0;
    for (int t = 0; t < MA_NTYPES; t++)
        if (ma_size[t] > biggest)
            biggest = ma_size[t];
    int s = ma_size[datatype - MT_BASE];
    return (biggest + MA_OVERHEAD_FIXED + s - 1) / s;
}

/* ---------------------------------------------------------------------- settings --- */
/* MA_set_auto_verify: with value true, every MA call first runs MA_verify_allocator_stuff and
 * fails when it does. Returns the previous setting. */
Boolean MA_set_auto_verify(Boolean value)
{
    ma.stats.calls[C_set_auto_verify]++;
    Boolean old = ma.auto_verify;
    ma.auto_verify = value;
    return old;
}

/* MA_set_error_print: whether non-fatal errors print (default true). Returns the previous. */
Boolean MA_set_error_print(Boolean value)
{
    ma.stats.calls[C_set_error_print]++;
    Boolean old = ma.error_print;
    ma.error_print = value;
    return old;
}

/* MA_set_hard_fail: whether non-fatal errors terminate (default false). Returns the previous. */
Boolean MA_set_hard_fail(Boolean value)
{
    ma.stats.calls[C_set_hard_fail]++;
    Boolean old = ma.hard_fail;
    ma.hard_fail = value;
    return old;
}

/* MA_set_numalign: client space of later blocks on 2^value-byte boundaries where the type's grid
 * allows (0: the grid only). value in 0 .. 30, else an error. */
Boolean MA_set_numalign(Integer value)
{
    ma.stats.calls[C_set_numalign]++;
    if (value < 0 || value > 30) {
        ma_err(0, 0, "MA_set_numalign", "invalid alignment: %ld", (long)value);
        return MA_FALSE;
    }
    ma.numalign = value;
    return MA_TRUE;
}

/* MA_get_numalign: the MA_set_numalign value into *value. */
Boolean MA_get_numalign(Integer *value)
{
    ma.stats.calls[C_get_numalign]++;
    if (!value) {
        ma_err(0, 0, "MA_get_numalign", "value is NULL");
        return MA_FALSE;
    }
    *value = ma.numalign;
    return MA_TRUE;
}

/* MA_trace: with value true, pushes, pops, allocations and frees print a line on stdout. */
void MA_trace(Boolean value)
{
    ma.trace = value;
}

/* MA_set_error_callback: the function terminating errors call, as func("MA aborting", 0), instead
 * of exit(1) (NULL: exit again). */
void MA_set_error_callback(void (*func)())
{
    ma.terminate = func;
}

/* ma_set_error_callback: back to the default termination, exit(1). */
void ma_set_error_callback(void)
{
    ma.terminate = NULL;
}

/* ------------------------------------------------------------------ verification --- */
typedef struct {
    int blocks, bad, checksum, left, right;
} ma_vcount_t;

/* "<type> block '<name>', handle <h>, address 0x<ad>" (GA's ad_print). */
static void block_print(const ma_ad_t *ad, const char *type)
{
    Integer h = handle_of(ad);
    printf("%s block '%s', handle ", type, ad->name);
    if (h < 0)
        printf("unknown");
    else
        printf("%ld", (long)h);
    printf(", address 0x%lx", (unsigned long)(uintptr_t)ad);
}

/* One problem of a block: the preamble first (once), then the block and the problem. */
static void problem(const ma_ad_t *ad, const char *type, const char **preamble)
{
    if (*preamble) {
        printf("%s", *preamble);
        *preamble = NULL;
    }
    block_print(ad, type);
    printf(":\n\t");
}

/* Checks every block of a used list: checksum and both guards (GA's list_verify). */
static void list_check(const ma_ad_t *list, const char *type, const char **preamble, ma_vcount_t *n)
{
    for (const ma_ad_t *ad = list; ad; ad = ad->next) {
        int bad = 0;
        n->blocks++;
        if (ad->checksum != checksum_of(ad)) {
            problem(ad, type, preamble);
            printf("current checksum %lu != stored checksum %lu\n", (unsigned long)checksum_of(ad),
                   (unsigned long)ad->checksum);
            n->checksum++;
            bad = 1;
        }
        ma_guard_t g = guard_get(ad->client - sizeof(ma_guard_t));
        if (g != MA_GUARD1) {
            problem(ad, type, preamble);
            printf("current left signature %u != proper left signature %u\n", g, MA_GUARD1);
            n->left++;
            bad = 1;
        }
        g = guard_get(guard2_at(ad));
        if (g != MA_GUARD2) {
            problem(ad, type, preamble);
            printf("current right signature %u != proper right signature %u\n", g, MA_GUARD2);
            n->right++;
            bad = 1;
        }
        n->bad += bad;
    }
}

/* MA_verify_allocator_stuff: checks every heap and stack block. MA_TRUE when all are sound; else
 * each problem is printed on stdout (naming the block) and a table of counts goes out as an error
 * (printed even when error printing is off), MA_FALSE. */
Boolean MA_verify_allocator_stuff(void)
{
    ma.stats.calls[C_verify_allocator_stuff]++;
    const char *preamble = "MA_verify_allocator_stuff: starting scan ...\n";
    ma_vcount_t h = {0}, s = {0};
    list_check(ma.hused, "heap", &preamble, &h);
    list_check(ma.sused, "stack", &preamble, &s);
    if (h.bad == 0 && s.bad == 0)
        return MA_TRUE;
    puts("MA_verify_allocator_stuff: scan completed");
    Integer print = ma.error_print;
    ma.error_print = MA_TRUE;
    ma_err(0, 0, "MA_verify_allocator_stuff",
           "\n\t\t\t\theap\tstack\n\t\t\t\t----\t-----\n\tchecksum errors\t\t%4d\t%5d\n\tleft "
           "signature errors\t%4d\t%5d\n\tright signature errors\t%4d\t%5d\n\ttotal bad "
           "blocks\t%4d\t%5d\n\ttotal blocks\t\t%4d\t%5d",
           h.checksum, s.checksum, h.left, s.left, h.right, s.right, h.bad, s.bad, h.blocks,
           s.blocks);
    ma.error_print = print;
    return MA_FALSE;
}

/* Prints every block of a used list; returns how many (GA's list_print). */
static int list_print(const ma_ad_t *list, const char *type)
{
    int n = 0;
    for (const ma_ad_t *ad = list; ad; ad = ad->next, n++) {
        block_print(ad, type);
        puts(":");
        printf("\ttype of elements:\t\t%s\n", ma_type_name[ad->datatype]);
        printf("\tnumber of elements:\t\t%ld\n", (long)ad->nelem);
        printf("\taddress of client space:\t0x%lx\n", (unsigned long)(uintptr_t)ad->client);
        intptr_t off = (intptr_t)((uintptr_t)ad->client - (uintptr_t)ma_base((int)ad->datatype));
        printf("\tindex for client space:\t\t%ld\n", (long)(off / ma_size[ad->datatype]));
        printf("\ttotal number of bytes:\t\t%lu\n", (unsigned long)ad->nbytes);
    }
    return n;
}

/* MA_summarize_allocated_blocks: every allocated block (heap newest first, then the stack from
 * its top) with its handle, type, size and index, on stdout. */
void MA_summarize_allocated_blocks(void)
{
    ma.stats.calls[C_summarize_allocated_blocks]++;
    if (!auto_verify_ok())
        return;
    puts("MA_summarize_allocated_blocks: starting scan ...");
    int nh = list_print(ma.hused, "heap");
    int ns = list_print(ma.sused, "stack");
    printf("MA_summarize_allocated_blocks: scan completed: ");
    printf("%d heap block%s, %d stack block%s\n", nh, nh == 1 ? "" : "s", ns, ns == 1 ? "" : "s");
}

/* MA_print_stats: block and byte counts, current and highest, of heap and stack; with
 * printroutines true also how often each MA call was made. On stdout. */
void MA_print_stats(Boolean printroutines)
{
    ma.stats.calls[C_print_stats]++;
    if (!auto_verify_ok())
        return;
    puts("MA usage statistics:");
    puts("\n\tallocation statistics:");
    puts("\t\t\t\t\t      heap\t     stack");
    puts("\t\t\t\t\t      ----\t     -----");
    printf("\tcurrent number of blocks\t%10lu\t%10lu\n", ma.stats.hblocks, ma.stats.sblocks);
    printf("\tmaximum number of blocks\t%10lu\t%10lu\n", ma.stats.hblocks_max,
           ma.stats.sblocks_max);
    printf("\tcurrent total bytes\t\t%10lu\t%10lu\n", ma.stats.hbytes, ma.stats.sbytes);
    printf("\tmaximum total bytes\t\t%10lu\t%10lu\n", ma.stats.hbytes_max, ma.stats.sbytes_max);
    printf("\tmaximum total K-bytes\t\t%10lu\t%10lu\n", (ma.stats.hbytes_max + 999) / 1000,
           (ma.stats.sbytes_max + 999) / 1000);
    printf("\tmaximum total M-bytes\t\t%10lu\t%10lu\n", (ma.stats.hbytes_max + 999999) / 1000000,
           (ma.stats.sbytes_max + 999999) / 1000000);
    if (!printroutines)
        return;
    puts("\n\tcalls per routine:");
    for (int i = 0; i < C_N; i++)
        printf("\t\t%10lu  %s\n", ma.stats.calls[i], ma_call_name[i]);
}

/* ---------------------------------------------------------------------- iterator --- */
/* MA_init_memhandle_iterator: starts an iteration over the allocated blocks in *ithandle (any
 * number may run at once: the state is the Integer itself). */
Boolean MA_init_memhandle_iterator(Integer *ithandle)
{
    ma.stats.calls[C_init_memhandle_iterator]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    if (!ithandle) {
        ma_err(0, 0, "MA_init_memhandle_iterator", "ithandle is NULL");
        return MA_FALSE;
    }
    *ithandle = 0;
    return MA_TRUE;
}

/* MA_get_next_memhandle: the next allocated block's memhandle (in memhandle order) into
 * *memhandle, MA_TRUE; MA_FALSE without a message once every block has been visited. Blocks
 * freed during the iteration are skipped, blocks allocated during it may or may not be seen. A
 * negative *ithandle (never initialized) is an error. */
Boolean MA_get_next_memhandle(Integer *ithandle, Integer *memhandle)
{
    ma.stats.calls[C_get_next_memhandle]++;
    if (!auto_verify_ok())
        return MA_FALSE;
    if (!ithandle || !memhandle) {
        ma_err(0, 0, "MA_get_next_memhandle", "%s is NULL", ithandle ? "memhandle" : "ithandle");
        return MA_FALSE;
    }
    if (*ithandle < 0) {
        ma_err(0, 0, "MA_get_next_memhandle",
               "invalid iterator %ld (not from "
               "MA_init_memhandle_iterator)",
               (long)*ithandle);
        return MA_FALSE;
    }
    for (Integer h = *ithandle; h < ma.table_cap; h++)
        if (ma.table[h].state == SLOT_USED) {
            *memhandle = h;
            *ithandle = h + 1;
            return MA_TRUE;
        }
    if (*ithandle < ma.table_cap)
        *ithandle = ma.table_cap;
    return MA_FALSE;
}
