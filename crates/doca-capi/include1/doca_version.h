/*
 * doca_version.h (DOCA 1.x): the API version these headers describe.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include <doca_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Major version of the DOCA API. */
#define DOCA_VER_MAJOR 1
/** Minor version of the DOCA API. */
#define DOCA_VER_MINOR 4
/** Patch level of the DOCA API. */
#define DOCA_VER_PATCH 79
/** The version as text. */
#define DOCA_VER_STRING "1.4.0079"

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

/** The version of the DOCA library the program runs with (NUL-terminated). */
__DOCA_EXPERIMENTAL
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
