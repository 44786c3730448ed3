/* Helpers shared by the C tests of the DOCA C interface. */
#ifndef DOCA_CAPI_TEST_COMMON_H_
#define DOCA_CAPI_TEST_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_error.h>
#include <doca_dev.h>
#include <doca_ctx.h>

#define CHECK(expr) \
	do { \
		doca_error_t r_ = (expr); \
		if (r_ != DOCA_SUCCESS) { \
			fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #expr, \
				doca_get_error_name(r_), doca_get_error_string(r_)); \
			exit(1); \
		} \
	} while (0)

#define EXPECT_ERR(expr, code) \
	do { \
		doca_error_t r_ = (expr); \
		if (r_ != (code)) { \
			fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #expr, \
				doca_get_error_name(r_), doca_get_error_name(code)); \
			exit(1); \
		} \
	} while (0)

#define ASSERT(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1); \
		} \
	} while (0)

/* Opens the first device; the list is destroyed before returning. */
static inline struct doca_dev *open_first_device(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	CHECK(doca_devinfo_list_create(&list, &n));
	ASSERT(n > 0);
	CHECK(doca_dev_open(list[0], &dev));
	CHECK(doca_devinfo_list_destroy(list));
	return dev;
}

/* Polls until a job completes; returns the retrieve status, fills ev. */
static inline doca_error_t wait_event(struct doca_workq *wq, struct doca_event *ev)
{
	doca_error_t r;

	while ((r = doca_workq_progress_retrieve(wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		usleep(10);
	return r;
}

#endif
