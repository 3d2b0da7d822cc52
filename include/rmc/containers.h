/* RMC containers umbrella header: link with -lrmc_containers -lrmc (pkg-config rmc). */
#ifndef RMC_CONTAINERS_H
#define RMC_CONTAINERS_H
#include <rmc/comm.h>
#include <rmc/types.h>
#include <rmc/gptr.h>
#include <rmc/promise.h>
#include <rmc/array.h>
#include <rmc/queue.h>
#include <rmc/hashmap.h>
#include <rmc/bloom.h>
#include <rmc/kv.h>
#include <rmc/csr.h>
#include <rmc/matrix.h>
#include <rmc/sparse.h>
#endif
