/* RMC's own node-local shared memory, for reserved regions (rmc_region_reserve).
 *
 * MPI_Win_allocate_shared commits what it allocates (MPICH probes the segment page by page: ~0.8 s
 * per GiB here), so a region meant to be large and filled slowly gets a sparse file in /dev/shm per
 * member instead: created and sized by its owner (no memory is taken until a page is touched or
 * committed), mapped by the node-local members by name, unlinked once they all have it. The owner
 * keeps the descriptor to commit ranges with fallocate, so that running out of shared memory is an
 * error of rmc_region_commit rather than a SIGBUS on the first store. */
#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core.h"

static unsigned next_seq;

static void shm_name(char *buf, size_t cap, unsigned long long key)
{
    snprintf(buf, cap, "/rmc-%u-%u", (unsigned)(key >> 32), (unsigned)(key & 0xffffffffu));
}

rmc_status_t rmci_shm_create(size_t len, rmci_shm_t *s, const char *fn)
{
    char name[64];
    s->map = NULL;
    s->len = len;
    s->fd = -1;
    s->key = ((unsigned long long)(unsigned)getpid() << 32) | ++next_seq;
    shm_name(name, sizeof name, s->key);
    s->fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (s->fd < 0)
        return rmci_fail(RMC_ERR_NOMEM, fn, "shm_open(%s): %s", name, strerror(errno));
    s->named = 1;
    if (ftruncate(s->fd, (off_t)len) != 0) {
        int e = errno;
        rmci_shm_destroy(s);
        return rmci_fail(RMC_ERR_NOMEM, fn, "ftruncate(%s, %zu): %s", name, len, strerror(e));
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, s->fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        rmci_shm_destroy(s);
        return rmci_fail(RMC_ERR_NOMEM, fn, "mmap of %zu bytes: %s", len, strerror(e));
    }
    s->map = p;
    return RMC_OK;
}

rmc_status_t rmci_shm_attach(unsigned long long key, size_t len, char **map, const char *fn)
{
    char name[64];
    shm_name(name, sizeof name, key);
    *map = NULL;
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        return rmci_fail(RMC_ERR_NOMEM, fn, "shm_open(%s) of a node-local member: %s", name,
                         strerror(errno));
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return rmci_fail(RMC_ERR_NOMEM, fn, "mmap of %zu bytes of %s: %s", len, name, strerror(e));
    *map = p;
    return RMC_OK;
}

void rmci_shm_unlink(rmci_shm_t *s)
{
    if (!s->named)
        return;
    char name[64];
    shm_name(name, sizeof name, s->key);
    shm_unlink(name);
    s->named = 0;
}

void rmci_shm_destroy(rmci_shm_t *s)
{
    rmci_shm_unlink(s);
    if (s->map)
        munmap(s->map, s->len);
    if (s->fd >= 0)
        close(s->fd);
    s->map = NULL;
    s->fd = -1;
}

rmc_status_t rmci_shm_commit(rmci_shm_t *s, size_t off, size_t len, const char *fn)
{
    int rc = posix_fallocate(s->fd, (off_t)off, (off_t)len);
    if (rc == 0)
        return RMC_OK;
    if (rc == ENOSPC || rc == ENOMEM || rc == EFBIG)
        return rmci_fail(RMC_ERR_NOMEM, fn,
                         "%zu bytes of shared memory (/dev/shm is full: %s); free memory or give "
                         "the job more shared memory",
                         len, strerror(rc));
    return rmci_fail(RMC_ERR_NOMEM, fn, "posix_fallocate of %zu bytes: %s", len, strerror(rc));
}
