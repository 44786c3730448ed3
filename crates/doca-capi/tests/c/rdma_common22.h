/*
 * What DOCA 2.2 RDMA test programs share: the first device that runs RDMA write jobs
 * and a started mmap. Include after common.h.
 */
#ifndef DOCA_CAPI_TEST_RDMA_COMMON22_H_
#define DOCA_CAPI_TEST_RDMA_COMMON22_H_

#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

/* The first device that runs RDMA write jobs. */
static struct doca_dev *open_rdma_device(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0, i;

	CHECK(doca_devinfo_list_create(&list, &n));
	for (i = 0; i < n && dev == NULL; i++)
		if (doca_rdma_job_get_supported(list[i], DOCA_RDMA_JOB_WRITE) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &dev));
	CHECK(doca_devinfo_list_destroy(list));
	ASSERT(dev != NULL);
	return dev;
}

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perms)
{
	struct doca_mmap *m;

	CHECK(doca_mmap_create(NULL, &m));
	CHECK(doca_mmap_set_memrange(m, mem, len));
	CHECK(doca_mmap_set_permissions(m, perms));
	CHECK(doca_mmap_dev_add(m, dev));
	CHECK(doca_mmap_start(m));
	return m;
}

#endif
