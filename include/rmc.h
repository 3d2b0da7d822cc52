/* RMC umbrella header. */
#ifndef RMC_H
#define RMC_H
#include <rmc/status.h>
#include <rmc/env.h>
#include <rmc/comm.h>
#endif
