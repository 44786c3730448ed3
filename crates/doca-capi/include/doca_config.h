/*
 * doca_config.h: build-time configuration of the software DOCA C interface.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#include <doca_build_config.h>
#include <doca_api_level.h>

/** This implementation runs entirely in software on the host CPU. */
#define DOCA_SOFTWARE_IMPLEMENTATION 1

#endif /* DOCA_CONFIG_H_ */
