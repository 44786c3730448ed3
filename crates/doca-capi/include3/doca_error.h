/*
 * doca_error.h: the status code every DOCA function returns.
 */
#ifndef DOCA_ERROR_H_
#define DOCA_ERROR_H_

#include <doca_compat.h>
#include <doca_common_defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status of a DOCA call: DOCA_SUCCESS or the reason it failed. */
typedef enum doca_error {
	DOCA_SUCCESS,			   /**< Success. */
	DOCA_ERROR_UNKNOWN,		   /**< Unknown error. */
	DOCA_ERROR_NOT_PERMITTED,	   /**< Operation not permitted. */
	DOCA_ERROR_IN_USE,		   /**< Resource already in use. */
	DOCA_ERROR_NOT_SUPPORTED,	   /**< Operation not supported. */
	DOCA_ERROR_AGAIN,		   /**< Temporarily unavailable: try again. */
	DOCA_ERROR_INVALID_VALUE,	   /**< Invalid input. */
	DOCA_ERROR_NO_MEMORY,		   /**< Out of memory or out of room. */
	DOCA_ERROR_INITIALIZATION,	   /**< Initialization failed. */
	DOCA_ERROR_TIME_OUT,		   /**< Timed out. */
	DOCA_ERROR_SHUTDOWN,		   /**< Shut down. */
	DOCA_ERROR_CONNECTION_RESET,	   /**< Connection reset by peer. */
	DOCA_ERROR_CONNECTION_ABORTED,	   /**< Connection aborted. */
	DOCA_ERROR_CONNECTION_INPROGRESS,  /**< Connection in progress. */
	DOCA_ERROR_NOT_CONNECTED,	   /**< Not connected. */
	DOCA_ERROR_NO_LOCK,		   /**< Could not take a required lock. */
	DOCA_ERROR_NOT_FOUND,		   /**< Not found. */
	DOCA_ERROR_IO_FAILED,		   /**< Input/output failed (a job failed). */
	DOCA_ERROR_BAD_STATE,		   /**< Wrong state for this call. */
	DOCA_ERROR_UNSUPPORTED_VERSION,	   /**< Unsupported version. */
	DOCA_ERROR_OPERATING_SYSTEM,	   /**< An operating-system call failed. */
	DOCA_ERROR_DRIVER,		   /**< Driver failure. */
	DOCA_ERROR_UNEXPECTED,		   /**< Unexpected internal failure. */
	DOCA_ERROR_ALREADY_EXIST,	   /**< Already exists. */
	DOCA_ERROR_FULL,		   /**< Full. */
	DOCA_ERROR_EMPTY,		   /**< Empty. */
	DOCA_ERROR_IN_PROGRESS,		   /**< Still in progress. */
	DOCA_ERROR_TOO_BIG,		   /**< Too big to be held. */
} doca_error_t;

/** True when r is a failure. */
#define DOCA_IS_ERROR(r) doca_unlikely((r) != DOCA_SUCCESS)

/** Keeps the first failure: sets r to t only while r is still DOCA_SUCCESS. */
#define DOCA_ERROR_PROPAGATE(r, t) \
	do { \
		if ((r) == DOCA_SUCCESS) \
			(r) = (t); \
	} while (0)

/** The code's name, e.g. "DOCA_ERROR_BAD_STATE"; unknown codes get a fixed text. */
DOCA_STABLE
const char *doca_error_get_name(doca_error_t error);

/** A short description of the code; unknown codes get a fixed text. */
DOCA_STABLE
const char *doca_error_get_descr(doca_error_t error);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ERROR_H_ */
