/* Helpers shared by the C tests of comch (the 3.x host/DPU channel). */
#ifndef DOCA_CAPI_TEST_COMCH3_H_
#define DOCA_CAPI_TEST_COMCH3_H_

#include <doca_comch.h>

#include "common3.h"

/* On the DPU side: opens the representor of the host function at `pci` ("bus:dev.fn"). */
static inline struct doca_dev_rep *open_rep_at(struct doca_dev *dev, const char *pci)
{
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep = NULL;
	uint32_t nreps = 0, i;
	uint8_t is_addr;

	CHECK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &nreps));
	for (i = 0; i < nreps && rep == NULL; i++) {
		CHECK(doca_devinfo_rep_is_equal_pci_addr(reps[i], pci, &is_addr));
		if (is_addr)
			CHECK(doca_dev_rep_open(reps[i], &rep));
	}
	CHECK(doca_devinfo_rep_destroy_list(reps));
	ASSERT(rep != NULL);
	return rep;
}

/* Send task completion: the task goes back to its pool. */
static inline void comch_send_done(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	doca_task_free(doca_comch_task_send_as_task(task));
}

/* Send task error: the test fails. */
static inline void comch_send_failed(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "send failed: %s\n", doca_error_get_name(doca_task_get_status(doca_comch_task_send_as_task(task))));
	exit(1);
}

#endif
