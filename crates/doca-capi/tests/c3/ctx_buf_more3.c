/* The rest of doca_ctx.h and doca_buf.h that programs of the DOCA 2.6-3.x era call:
 * doca_ctx_flush_tasks after submits without DOCA_TASK_SUBMIT_FLAG_FLUSH, completion
 * vectors, data paths on a DPA or GPU (not here), doca_buf_set_data_len and
 * doca_buf_chain_list_tail. */
#include <doca_log.h>

#include <doca_buf_array.h>
#include <doca_buf_pool.h>

#include "common3.h"

DOCA_LOG_REGISTER(CTX_BUF_MORE3);

#define NUM_TASKS 8
#define BLOCK 1024

static int completed;

static void done_cb(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	ASSERT(doca_task_get_status(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS);
	completed++;
}

static void error_cb(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task;
	(void)task_user_data;
	(void)ctx_user_data;
	ASSERT(0 && "no task fails here");
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct mem m;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_buf *src[NUM_TASKS], *dst[NUM_TASKS];
	struct doca_dma_task_memcpy *tasks[NUM_TASKS];
	struct doca_buf *a, *b, *c;
	uint32_t vectors = 0, n = 0;
	size_t len = 0;
	void *data;
	union doca_data ud = {.u64 = 0};
	int i;

	mem_open(&m, dev, 2 * NUM_TASKS * BLOCK + 4 * BLOCK, 2 * NUM_TASKS + 3);
	memset(m.bytes, 0x5a, NUM_TASKS * BLOCK);
	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma));
	ctx = doca_dma_as_ctx(dma);

	/* Completion vectors: the device has some; an idle context takes a valid one. */
	CHECK(doca_ctx_cap_get_num_completion_vectors(doca_dev_as_devinfo(dev), &vectors));
	ASSERT(vectors >= 1);
	CHECK(doca_ctx_set_completion_vector(ctx, 0));
	EXPECT_ERR(doca_ctx_set_completion_vector(ctx, vectors), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_ctx_cap_get_num_completion_vectors(NULL, &vectors), DOCA_ERROR_INVALID_VALUE);
	/* No DPA or GPU to put a data path on. */
	EXPECT_ERR(doca_ctx_set_datapath_on_dpa(ctx, (struct doca_dpa *)&m), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_ERR(doca_ctx_set_datapath_on_gpu(ctx, (struct doca_gpu *)&m), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_ERR(doca_ctx_set_datapath_on_gpu(ctx, NULL), DOCA_ERROR_INVALID_VALUE);

	CHECK(doca_dma_task_memcpy_set_conf(dma, done_cb, error_cb, NUM_TASKS));
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CHECK(doca_ctx_start(ctx));
	EXPECT_ERR(doca_ctx_set_completion_vector(ctx, 0), DOCA_ERROR_BAD_STATE);

	/* Submits without the flush flag, then one flush, as batching programs do. */
	for (i = 0; i < NUM_TASKS; i++) {
		CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes + i * BLOCK, BLOCK, &src[i]));
		CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, m.bytes + (NUM_TASKS + i) * BLOCK, BLOCK,
							 &dst[i]));
		CHECK(doca_dma_task_memcpy_alloc_init(dma, src[i], dst[i], ud, &tasks[i]));
		CHECK(doca_task_submit_ex(doca_dma_task_memcpy_as_task(tasks[i]), DOCA_TASK_SUBMIT_FLAG_NONE));
	}
	doca_ctx_flush_tasks(ctx);
	while (completed < NUM_TASKS)
		(void)doca_pe_progress(pe);
	for (i = 0; i < NUM_TASKS; i++) {
		ASSERT(memcmp(m.bytes + (NUM_TASKS + i) * BLOCK, m.bytes + i * BLOCK, BLOCK) == 0);
		doca_task_free(doca_dma_task_memcpy_as_task(tasks[i]));
		CHECK(doca_buf_dec_refcount(src[i], NULL));
		CHECK(doca_buf_dec_refcount(dst[i], NULL));
	}

	/* doca_buf_set_data_len: the address stays, the length changes. */
	CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, m.bytes + 2 * NUM_TASKS * BLOCK + 16, 128, &a));
	CHECK(doca_buf_set_data_len(a, 100));
	CHECK(doca_buf_get_data_len(a, &len));
	CHECK(doca_buf_get_data(a, &data));
	ASSERT(len == 100 && data == m.bytes + 2 * NUM_TASKS * BLOCK + 16);
	CHECK(doca_buf_set_data_len(a, 0));
	/* As DOCA's, it always succeeds (past the buffer, a task checks the mmap). */
	CHECK(doca_buf_set_data_len(a, 129));
	CHECK(doca_buf_get_data_len(a, &len));
	ASSERT(len == 129);
	CHECK(doca_buf_set_data_len(a, 0));
	CHECK(doca_buf_dec_refcount(a, NULL));

	/* doca_buf_chain_list_tail: the tail must be list1's last element. */
	CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes + 2 * NUM_TASKS * BLOCK, BLOCK, &a));
	CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes + 2 * NUM_TASKS * BLOCK + BLOCK, BLOCK, &b));
	CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes + 2 * NUM_TASKS * BLOCK + 2 * BLOCK, BLOCK,
						 &c));
	CHECK(doca_buf_chain_list_tail(a, a, b));
	EXPECT_ERR(doca_buf_chain_list_tail(a, a, c), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_buf_chain_list_tail(a, NULL, c), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_buf_chain_list_tail(a, b, c));
	CHECK(doca_buf_get_list_len(a, &n));
	ASSERT(n == 3);
	CHECK(doca_buf_dec_refcount(a, NULL));

	/* doca_buf_inventory_expand: a started inventory grows; the new elements serve. */
	{
		struct doca_buf_inventory *inv;
		struct doca_buf *bufs[6];
		uint32_t num = 0, nfree = 0;
		int k;

		CHECK(doca_buf_inventory_create(2, &inv));
		EXPECT_ERR(doca_buf_inventory_expand(inv, 4), DOCA_ERROR_BAD_STATE);
		CHECK(doca_buf_inventory_start(inv));
		for (k = 0; k < 2; k++)
			CHECK(doca_buf_inventory_buf_get_by_addr(inv, m.mmap, m.bytes + k * 64, 64, &bufs[k]));
		EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(inv, m.mmap, m.bytes, 64, &bufs[2]), DOCA_ERROR_NO_MEMORY);
		EXPECT_ERR(doca_buf_inventory_expand(inv, 0), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_inventory_expand(inv, 4));
		CHECK(doca_buf_inventory_get_num_elements(inv, &num));
		CHECK(doca_buf_inventory_get_num_free_elements(inv, &nfree));
		ASSERT(num == 6 && nfree == 4);
		for (k = 2; k < 6; k++)
			CHECK(doca_buf_inventory_buf_get_by_data(inv, m.mmap, m.bytes + k * 64, 64, &bufs[k]));
		CHECK(doca_buf_get_data(bufs[5], &data));
		ASSERT(data == m.bytes + 5 * 64);
		for (k = 0; k < 6; k++)
			CHECK(doca_buf_dec_refcount(bufs[k], NULL));
		CHECK(doca_buf_inventory_get_num_free_elements(inv, &nfree));
		ASSERT(nfree == 6);
		CHECK(doca_buf_inventory_destroy(inv));
	}

	/* doca_mmap_enable_thread_safety: before start; destroy then goes ahead with a
	 * buffer still out, which stays usable until released. */
	{
		struct doca_mmap *ts;
		struct doca_buf *tb;
		static uint8_t tsmem[256];

		CHECK(doca_mmap_create(&ts));
		CHECK(doca_mmap_set_memrange(ts, tsmem, sizeof(tsmem)));
		CHECK(doca_mmap_add_dev(ts, dev));
		CHECK(doca_mmap_enable_thread_safety(ts));
		CHECK(doca_mmap_start(ts));
		EXPECT_ERR(doca_mmap_enable_thread_safety(ts), DOCA_ERROR_BAD_STATE);
		CHECK(doca_buf_inventory_buf_get_by_data(m.inv, ts, tsmem, 16, &tb));
		CHECK(doca_mmap_destroy(ts));
		CHECK(doca_buf_get_data_len(tb, &len));
		ASSERT(len == 16);
		CHECK(doca_buf_dec_refcount(tb, NULL));
		EXPECT_ERR(doca_mmap_enable_thread_safety(NULL), DOCA_ERROR_INVALID_VALUE);
	}

	/* doca_buf_pool: configured before start, laid out at start from a started mmap. */
	{
		struct doca_mmap *pm;
		struct doca_buf_pool *pool;
		struct doca_buf *pb[4];
		static uint8_t pmem[4096 + 256];
		size_t align = 0;
		uint32_t num = 0, nfree = 0;
		union doca_data pud = {.u64 = 77}, got = {.u64 = 0};
		void *head;
		int k;

		CHECK(doca_mmap_create(&pm));
		CHECK(doca_mmap_set_memrange(pm, pmem, sizeof(pmem)));
		CHECK(doca_mmap_add_dev(pm, dev));
		EXPECT_ERR(doca_buf_pool_create(0, 64, pm, &pool), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_pool_create(4, 1000, pm, &pool));
		CHECK(doca_buf_pool_get_element_alignment(pool, &align));
		ASSERT(align == 1);
		EXPECT_ERR(doca_buf_pool_set_element_alignment(pool, 48), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_pool_set_element_alignment(pool, 256));
		CHECK(doca_buf_pool_set_user_data(pool, pud));
		CHECK(doca_buf_pool_get_user_data(pool, &got));
		ASSERT(got.u64 == 77);
		/* The mmap is not started yet. */
		EXPECT_ERR(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
		CHECK(doca_mmap_start(pm));
		CHECK(doca_buf_pool_start(pool));
		EXPECT_ERR(doca_buf_pool_set_element_alignment(pool, 64), DOCA_ERROR_BAD_STATE);
		CHECK(doca_buf_pool_get_num_elements(pool, &num));
		ASSERT(num == 4);
		for (k = 0; k < 4; k++) {
			CHECK(doca_buf_pool_buf_alloc(pool, &pb[k]));
			CHECK(doca_buf_get_head(pb[k], &head));
			ASSERT(((uintptr_t)head & 255) == 0);
			CHECK(doca_buf_get_len(pb[k], &len));
			ASSERT(len == 1000);
		}
		EXPECT_ERR(doca_buf_pool_buf_alloc(pool, &pb[0]), DOCA_ERROR_NO_MEMORY);
		CHECK(doca_buf_pool_get_num_free_elements(pool, &nfree));
		ASSERT(nfree == 0);
		EXPECT_ERR(doca_buf_pool_destroy(pool), DOCA_ERROR_IN_USE);
		for (k = 0; k < 4; k++)
			CHECK(doca_buf_dec_refcount(pb[k], NULL));
		CHECK(doca_buf_pool_stop(pool));
		EXPECT_ERR(doca_buf_pool_buf_alloc(pool, &pb[0]), DOCA_ERROR_BAD_STATE);
		CHECK(doca_buf_pool_destroy(pool));
		CHECK(doca_mmap_stop(pm));
		CHECK(doca_mmap_destroy(pm));
	}

	/* doca_buf_arr: parameters, start within the mmap; no GPU or DPA to target. */
	{
		struct doca_buf_arr *arr;
		struct doca_gpu_buf_arr *garr = NULL;
		doca_dpa_dev_buf_arr_t darr = 0;

		EXPECT_ERR(doca_buf_arr_create(0, &arr), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_arr_create(8, &arr));
		EXPECT_ERR(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
		CHECK(doca_buf_arr_set_params(arr, m.mmap, 1 << 20, 0));
		EXPECT_ERR(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_arr_set_params(arr, m.mmap, 64, 128));
		EXPECT_ERR(doca_buf_arr_set_target_gpu(arr, (struct doca_gpu *)&m), DOCA_ERROR_NOT_SUPPORTED);
		EXPECT_ERR(doca_buf_arr_set_target_dpa(arr, (struct doca_dpa *)&m), DOCA_ERROR_NOT_SUPPORTED);
		CHECK(doca_buf_arr_start(arr));
		EXPECT_ERR(doca_buf_arr_set_params(arr, m.mmap, 64, 0), DOCA_ERROR_BAD_STATE);
		EXPECT_ERR(doca_buf_arr_get_gpu_handle(arr, &garr), DOCA_ERROR_NOT_SUPPORTED);
		EXPECT_ERR(doca_buf_arr_get_dpa_handle(arr, &darr), DOCA_ERROR_NOT_SUPPORTED);
		CHECK(doca_buf_arr_stop(arr));
		CHECK(doca_buf_arr_destroy(arr));
	}

	/* Task batches: no context here allocates one (in DOCA, Ethernet send queues do). */
	{
		union doca_data bud = doca_task_batch_get_user_data(NULL);

		EXPECT_ERR(doca_task_batch_submit(NULL), DOCA_ERROR_INVALID_VALUE);
		EXPECT_ERR(doca_task_batch_try_submit(NULL), DOCA_ERROR_INVALID_VALUE);
		EXPECT_ERR(doca_task_batch_get_status(NULL), DOCA_ERROR_INVALID_VALUE);
		ASSERT(doca_task_batch_get_tasks_num(NULL) == 0 && doca_task_batch_get_ctx(NULL) == NULL &&
		       bud.u64 == 0);
		ASSERT(DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 == 3 && DOCA_EVENT_BATCH_EVENTS_NUMBER_128 == 7);
	}

	/* Device queries of newer programs. */
	{
		uint64_t rate = 0;
		uint16_t vhca = 0;

		CHECK(doca_devinfo_get_active_rate(doca_dev_as_devinfo(dev), &rate));
		ASSERT(rate >= 1000000);
		CHECK(doca_devinfo_get_vhca_id(doca_dev_as_devinfo(dev), &vhca));
		EXPECT_ERR(doca_devinfo_get_vhca_id(doca_dev_as_devinfo(dev), NULL), DOCA_ERROR_INVALID_VALUE);
		{
			uint8_t reclaim = 1, moderation = 1;
			doca_dpa_dev_mmap_t dpa_handle = 0;

			CHECK(doca_devinfo_cap_is_accelerate_resource_reclaim_supported(doca_dev_as_devinfo(dev), &reclaim));
			ASSERT(reclaim == 0);
			EXPECT_ERR(doca_dev_accelerate_resource_reclaim(dev), DOCA_ERROR_NOT_SUPPORTED);
			CHECK(doca_devinfo_cap_is_notification_moderation_supported(doca_dev_as_devinfo(dev), &moderation));
			ASSERT(moderation == 0);
			EXPECT_ERR(doca_mmap_dev_get_dpa_handle(m.mmap, dev, &dpa_handle), DOCA_ERROR_NOT_SUPPORTED);
		}
	}

	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_pe_destroy(pe));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	printf("ctx_buf_more3: ok\n");
	return 0;
}
