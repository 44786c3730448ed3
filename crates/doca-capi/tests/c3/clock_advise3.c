/* doca_clock (one clock, cross timestamps, what the device lacks) and a cache
 * invalidation task after a DMA copy, as DOCA's cache_invalidate sample does. */
#include <doca_clock.h>
#include <doca_mmap_advise.h>

#include "common3.h"

struct counter {
	int done;
};

static void inv_cb(struct doca_mmap_advise_task_invalidate_cache *task, union doca_data t, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)t;
	ASSERT(doca_task_get_status(doca_mmap_advise_task_invalidate_cache_as_doca_task(task)) == DOCA_SUCCESS);
	n->done++;
	doca_task_free(doca_mmap_advise_task_invalidate_cache_as_doca_task(task));
}

static void copy_cb(struct doca_dma_task_memcpy *task, union doca_data t, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)t;
	ASSERT(doca_task_get_status(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS);
	n->done++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void wait_for(struct doca_pe *pe, struct counter *n, int target)
{
	long spins = 0;

	while (n->done < target) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct doca_clock *clock;
	union doca_clock_timespec_t a, b, c;
	uint64_t margin, max;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_mmap_advise *adv;
	struct doca_dma_task_memcpy *copy;
	struct doca_mmap_advise_task_invalidate_cache *inv;
	struct doca_buf *src, *dst;
	struct counter n = {0};
	union doca_data ud = {.ptr = &n}, tud = {.u64 = 0};
	struct mem m;
	time_t now = time(NULL);

	/* Clocks. */
	CHECK(doca_clock_cap_nic_free_running_is_supported(info));
	CHECK(doca_clock_cap_nic_real_time_is_supported(info));
	EXPECT_ERR(doca_clock_cap_nic_dpa_timer_is_supported(info), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_clock_create(dev, &clock));
	CHECK(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_REAL_TIME, &a));
	ASSERT(a.ts.tv_sec >= now - 1 && a.ts.tv_sec <= now + 1);
	CHECK(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_MONOTONIC, &a));
	CHECK(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_MONOTONIC, &b));
	ASSERT(b.ts.tv_sec > a.ts.tv_sec || (b.ts.tv_sec == a.ts.tv_sec && b.ts.tv_nsec >= a.ts.tv_nsec));
	CHECK(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_COUNTER_CYCLES, &a));
	CHECK(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_COUNTER_CYCLES, &b));
	ASSERT(b.counter >= a.counter);
	CHECK(doca_clock_get_crosstimestamp(clock, DOCA_CLOCK_HOST_REAL_TIME, DOCA_CLOCK_NIC_REAL_TIME, &a, &b, &margin));
	ASSERT(margin < 1000000000ULL);
	ASSERT(b.ts.tv_sec >= now - 1 && b.ts.tv_sec <= now + 1);
	EXPECT_ERR(doca_clock_get_timestamp(clock, DOCA_CLOCK_NIC_DPA_TIMER, &c), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_ERR(doca_clock_get_timestamp(clock, 0x3, &c), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_clock_get_crosstimestamp(clock, DOCA_CLOCK_HOST_REAL_TIME, DOCA_CLOCK_HOST_MONOTONIC, &a, &b,
						 &margin),
		   DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_clock_get_timestamp(clock, DOCA_CLOCK_HOST_REAL_TIME, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_clock_destroy(clock));

	/* A copy, then the cache invalidated over the destination before the CPU reads it. */
	CHECK(doca_mmap_advise_cap_task_cache_invalidate_is_supported(info));
	CHECK(doca_mmap_advise_task_cache_invalidate_get_max_buf_size(info, &max));
	ASSERT(max >= 4096);
	mem_open(&m, dev, 8192, 4);
	memset(m.bytes, 0x5c, 4096);
	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_mmap_advise_create(dev, &adv));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_pe_connect_ctx(pe, doca_mmap_advise_as_ctx(adv)));
	CHECK(doca_ctx_set_user_data(doca_dma_as_ctx(dma), ud));
	CHECK(doca_ctx_set_user_data(doca_mmap_advise_as_ctx(adv), ud));
	CHECK(doca_dma_task_memcpy_set_conf(dma, copy_cb, copy_cb, 1));
	CHECK(doca_mmap_advise_task_invalidate_cache_set_conf(adv, inv_cb, inv_cb, 1));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_start(doca_mmap_advise_as_ctx(adv)));
	EXPECT_ERR(doca_mmap_advise_task_invalidate_cache_set_conf(adv, inv_cb, inv_cb, 1), DOCA_ERROR_NOT_PERMITTED);
	CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes, 4096, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, m.bytes + 4096, 4096, &dst));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, tud, &copy));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(copy)));
	wait_for(pe, &n, 1);
	CHECK(doca_mmap_advise_task_invalidate_cache_alloc_init(adv, dst, tud, &inv));
	ASSERT(doca_mmap_advise_task_invalidate_cache_get_buf(inv) == dst);
	CHECK(doca_task_submit(doca_mmap_advise_task_invalidate_cache_as_doca_task(inv)));
	wait_for(pe, &n, 2);
	ASSERT(memcmp(m.bytes, m.bytes + 4096, 4096) == 0);
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_stop(doca_mmap_advise_as_ctx(adv)));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_mmap_advise_destroy(adv));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	printf("clock_advise3: ok\n");
	return 0;
}
