/* RMC umbrella header. */
#ifndef RMC_H
#define RMC_H
#include <rmc/status.h>
#include <rmc/env.h>
#include <rmc/layer.h>
#include <rmc/comm.h>
#include <rmc/strided.h>
#include <rmc/amo.h>
#include <rmc/progress.h>
#endif
