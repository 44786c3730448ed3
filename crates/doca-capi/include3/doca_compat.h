/*
 * doca_compat.h: export and API-stability markers used by every DOCA header.
 *
 * Each function of the interface is marked __DOCA_EXPERIMENTAL. A program that does not
 * define DOCA_ALLOW_EXPERIMENTAL_API gets a "deprecated" warning for each use, as a
 * reminder that the interface may change; defining it (pkg-config's Cflags do) silences
 * the warning.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <string.h>
#include <stdint.h>
#include <doca_config.h>

#if defined(__GNUC__) || defined(__clang__)
#define DOCA_EXPORTED __attribute__((visibility("default")))
#else
#define DOCA_EXPORTED
#endif

#define DOCA_STABLE DOCA_EXPORTED

#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define __DOCA_EXPERIMENTAL DOCA_EXPORTED
#elif defined(__GNUC__) || defined(__clang__)
#define __DOCA_EXPERIMENTAL __attribute__((deprecated("Symbol is defined as experimental"))) DOCA_EXPORTED
#else
#define __DOCA_EXPERIMENTAL DOCA_EXPORTED
#endif

#define DOCA_EXPERIMENTAL __DOCA_EXPERIMENTAL

/* After the markers: doca_version.h declares a marked function. */
#include <doca_version.h>

#endif /* DOCA_COMPAT_H_ */
