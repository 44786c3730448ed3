/* Event-driven mode: the guide's sequence with a real epoll loop. The work queue's
 * handle is an eventfd; arm it, wait in epoll, retrieve, clear. */
#include <sys/epoll.h>
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_mmap.h>

#define JOBS 64

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src[JOBS], *dst[JOBS];
	doca_event_handle_t fd = doca_event_invalid_handle;
	uint8_t *mem = calloc(JOBS, 2 * 1024);
	uint8_t enabled, supported;
	int ep, i, done = 0, wakeups = 0;
	struct epoll_event ee = {.events = EPOLLIN}, out;

	ASSERT(mem != NULL);
	CHECK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK(doca_ctx_get_event_driven_supported(ctx, &supported));
	ASSERT(supported == 1);
	CHECK(doca_ctx_dev_add(ctx, dev));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_workq_create(JOBS, &wq));
	/* Polling mode has no handle. */
	ASSERT(doca_workq_get_event_handle(wq, &fd) != DOCA_SUCCESS);
	ASSERT(fd == doca_event_invalid_handle);
	CHECK(doca_workq_set_event_driven_enable(wq, 1));
	CHECK(doca_workq_get_event_driven_enable(wq, &enabled));
	ASSERT(enabled == 1);
	CHECK(doca_workq_get_event_handle(wq, &fd));
	ASSERT(fd >= 0);
	CHECK(doca_ctx_workq_add(ctx, wq));
	/* Attached: the mode cannot change any more. */
	ASSERT(doca_workq_set_event_driven_enable(wq, 0) != DOCA_SUCCESS);

	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, JOBS * 2 * 1024));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(NULL, 2 * JOBS, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));

	ep = epoll_create1(0);
	ASSERT(ep >= 0);
	ee.data.fd = fd;
	ASSERT(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee) == 0);

	/* Nothing submitted: an armed handle stays quiet. */
	CHECK(doca_workq_event_handle_arm(wq));
	ASSERT(epoll_wait(ep, &out, 1, 50) == 0);

	/* Batches of 8: arm, submit, sleep in epoll until the handle fires, clear, drain. */
	for (i = 0; i < JOBS; i++) {
		struct doca_dma_job_memcpy job = {
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx, .user_data.u64 = (uint64_t)i},
		};
		struct doca_event ev;
		doca_error_t r;

		if (i % 8 == 0)
			CHECK(doca_workq_event_handle_arm(wq));
		memset(mem + i * 2048, i + 1, 1024);
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + i * 2048, 1024, &src[i]));
		CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + i * 2048 + 1024, 1024, &dst[i]));
		job.src_buff = src[i];
		job.dst_buff = dst[i];
		CHECK(doca_workq_submit(wq, &job.base));
		if (i % 8 != 7)
			continue;
		ASSERT(epoll_wait(ep, &out, 1, 5000) == 1);
		ASSERT(out.data.fd == fd);
		wakeups++;
		CHECK(doca_workq_event_handle_clear(wq, fd));
		while (done <= i) {
			r = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
			if (r == DOCA_ERROR_AGAIN) {
				/* More completions to come: sleep again. */
				CHECK(doca_workq_event_handle_arm(wq));
				r = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
				if (r == DOCA_ERROR_AGAIN) {
					ASSERT(epoll_wait(ep, &out, 1, 5000) == 1);
					CHECK(doca_workq_event_handle_clear(wq, fd));
					continue;
				}
			}
			CHECK(r);
			{
				uint8_t *d = mem + ev.user_data.u64 * 2048 + 1024;

				ASSERT(ev.type == DOCA_DMA_JOB_MEMCPY);
				ASSERT(d[0] == (uint8_t)(ev.user_data.u64 + 1) && d[1023] == d[0]);
			}
			done++;
		}
	}
	ASSERT(wakeups == JOBS / 8);
	printf("event_driven: %d jobs, %d wake-ups\n", done, wakeups);

	for (i = 0; i < JOBS; i++) {
		CHECK(doca_buf_refcount_rm(src[i], NULL));
		CHECK(doca_buf_refcount_rm(dst[i], NULL));
	}
	close(ep);
	CHECK(doca_ctx_workq_rm(ctx, wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_ctx_dev_rm(ctx, dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("event_driven: ok\n");
	return 0;
}
