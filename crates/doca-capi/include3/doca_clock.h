/*
 * doca_clock.h: a device's clocks (free-running and real-time; no DPA timer here) and
 * the host's, read alone or as a cross timestamp with its margin of error.
 */
#ifndef DOCA_CLOCK_H_
#define DOCA_CLOCK_H_

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_clock;
struct doca_dev;
struct doca_devinfo;

/** The clocks. */
#define DOCA_CLOCK_NIC_FREE_RUNNING 0x1		   /**< The NIC's free-running clock (seconds and nanoseconds). */
#define DOCA_CLOCK_NIC_REAL_TIME (0x1 << 1)	   /**< The NIC's real-time clock. */
#define DOCA_CLOCK_NIC_DPA_TIMER (0x1 << 8)	   /**< The NIC's DPA timer. */
#define DOCA_CLOCK_HOST_COUNTER_CYCLES (0x1 << 16) /**< The CPU's cycle counter (a count). */
#define DOCA_CLOCK_HOST_REAL_TIME (0x1 << 17)	   /**< The host's real-time clock. */
#define DOCA_CLOCK_HOST_MONOTONIC (0x1 << 18)	   /**< The host's monotonic clock. */
#define DOCA_CLOCK_HOST_MONOTONIC_RAW (0x1 << 19)  /**< The host's raw monotonic clock. */

/** A reading: a time, or the cycle counter's count. */
union doca_clock_timespec_t {
	struct timespec ts; /**< Seconds and nanoseconds. */
	uint64_t counter;   /**< A raw count. */
};

/** DOCA_SUCCESS when the device has a free-running clock. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_free_running_is_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when the device has a real-time clock. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_real_time_is_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when the device has a DPA timer. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_dpa_timer_is_supported(const struct doca_devinfo *devinfo);

/** A clock of a device. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_create(const struct doca_dev *dev, struct doca_clock **clock);

/** Destroys a clock. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_destroy(struct doca_clock *clock);

/** Reads one clock (one DOCA_CLOCK_* value). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_timestamp(const struct doca_clock *clock, uint64_t clock_type,
				      union doca_clock_timespec_t *clock_ts);

/** Reads a clock and a NIC clock together; the margin is in nanoseconds (cycles for the counter). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_crosstimestamp(const struct doca_clock *clock, uint64_t primary_clock_type,
					   uint64_t nic_clock_type, union doca_clock_timespec_t *primary_clock_ts,
					   union doca_clock_timespec_t *nic_clock_ts, uint64_t *error_margin_nsecs);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CLOCK_H_ */
