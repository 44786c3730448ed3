/*
 * What DOCA 3.x RDMA test programs share, as NVIDIA's rdma_common.c gives its samples:
 * the first device that runs RDMA writes, a started mmap, a completion callback that
 * records its task's status, and a wait on the progress engine. Include after
 * common3.h.
 */
#ifndef DOCA_CAPI_TEST_RDMA_COMMON3_H_
#define DOCA_CAPI_TEST_RDMA_COMMON3_H_

#include <time.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

static struct doca_dev *open_rdma_device(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0, i;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (i = 0; i < n && dev == NULL; i++)
		if (doca_rdma_cap_task_write_is_supported(list[i]) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &dev));
	CHECK(doca_devinfo_destroy_list(list));
	ASSERT(dev != NULL);
	return dev;
}

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perms)
{
	struct doca_mmap *m;

	CHECK(doca_mmap_create(&m));
	CHECK(doca_mmap_set_memrange(m, mem, len));
	CHECK(doca_mmap_set_permissions(m, perms));
	CHECK(doca_mmap_add_dev(m, dev));
	CHECK(doca_mmap_start(m));
	return m;
}

/* Completions: each callback records its task's status here. */
struct result {
	int done;
	doca_error_t status;
};

static void task_done(struct doca_task *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct result *r = task_user_data.ptr;

	(void)ctx_user_data;
	r->status = doca_task_get_status(task);
	r->done = 1;
}

#define CB(type) ((doca_rdma_task_##type##_completion_cb_t)(void (*)(void))task_done)

static void wait_for(struct doca_pe *pe, struct result *r)
{
	time_t start = time(NULL);

	while (!r->done) {
		if (doca_pe_progress(pe) == 0)
			usleep(10);
		ASSERT(time(NULL) - start < 30);
	}
}

#endif
