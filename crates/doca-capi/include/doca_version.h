/*
 * doca_version.h: the DOCA API version these headers describe, and the version of the
 * library a program runs against.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>
#include <doca_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DOCA_API_1_5)
/* DOCA 1.5 (pkg-config modules under lib/pkgconfig/doca-1.5). */
#define DOCA_VER_MAJOR 1
#define DOCA_VER_MINOR 5
#define DOCA_VER_PATCH 1007
#define DOCA_VER_STRING "1.5.1007"
#else
/** Major version of the DOCA API. */
#define DOCA_VER_MAJOR 2
/** Minor version of the DOCA API. */
#define DOCA_VER_MINOR 2
/** Patch level of the DOCA API. */
#define DOCA_VER_PATCH 80
/** The version as text. */
#define DOCA_VER_STRING "2.2.0080"
#endif

/** A version as one comparable number. */
#define DOCA_VERSION_NUM(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | (patch)))
/** The version these headers describe, as a number. */
#define DOCA_CURRENT_VERSION_NUM DOCA_VERSION_NUM(DOCA_VER_MAJOR, DOCA_VER_MINOR, DOCA_VER_PATCH)
/** True when the headers' version equals the given one. */
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) \
	(DOCA_VERSION_NUM(major, minor, patch) == DOCA_CURRENT_VERSION_NUM)
/** True when the given version is at most the headers' version. */
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) \
	(DOCA_VERSION_NUM(major, minor, patch) <= DOCA_CURRENT_VERSION_NUM)

/** The version the program was compiled against. */
static inline const char *doca_version(void)
{
	return DOCA_VER_STRING;
}

/** The version of the library the program runs against. */
__DOCA_EXPERIMENTAL
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
