/* The 3.x misuse table: each wrong call returns its documented error, leaves outputs
 * alone and crashes nothing. */
#include <doca_argp.h>
#include <doca_log.h>

#include "common3.h"

static int cases;

#define CASE(expr, code) \
	do { \
		EXPECT_ERR(expr, code); \
		cases++; \
	} while (0)

static void nop_cb(struct doca_dma_task_memcpy *task, union doca_data a, union doca_data b)
{
	(void)a;
	(void)b;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_pe *pe, *pe2;
	struct doca_dma *dma, *out_dma = (struct doca_dma *)0x1;
	struct doca_ctx *ctx;
	struct doca_dma_task_memcpy *task, *out_task = (struct doca_dma_task_memcpy *)0x1;
	struct doca_mmap *out_mmap = (struct doca_mmap *)0x1;
	struct doca_buf_inventory *out_inv = (struct doca_buf_inventory *)0x1;
	struct doca_buf *src, *dst;
	struct doca_log_backend *backend;
	struct mem m;
	union doca_data ud = {.u64 = 7};
	enum doca_ctx_states st;
	size_t n;
	uint32_t u32;
	uint8_t flag;
	doca_notification_handle_t h;

	mem_open(&m, dev, 1 << 16, 16);
	CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.bytes, 64, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, m.bytes + 4096, 64, &dst));

	/* NULL arguments. */
	CASE(doca_pe_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_pe_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ASSERT(doca_pe_progress(NULL) == 0);
	CASE(doca_dma_create(NULL, &out_dma), DOCA_ERROR_INVALID_VALUE);
	ASSERT(out_dma == (struct doca_dma *)0x1);
	CASE(doca_dma_create(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	ASSERT(doca_dma_as_ctx(NULL) == NULL);
	CASE(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ctx_get_state(NULL, &st), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_task_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_task_try_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(NULL);
	ASSERT(doca_task_get_status(NULL) == DOCA_ERROR_INVALID_VALUE);
	ASSERT(doca_task_get_ctx(NULL) == NULL);
	CASE(doca_mmap_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_buf_inventory_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_dma_cap_task_memcpy_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_mmap_cap_is_export_pci_supported(NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_devinfo_get_sf_index(doca_dev_as_devinfo(dev), &u32), DOCA_ERROR_NOT_SUPPORTED);
	ASSERT(out_mmap == (struct doca_mmap *)0x1 && out_inv == (struct doca_buf_inventory *)0x1);

	CHECK(doca_pe_create(&pe));
	CHECK(doca_pe_create(&pe2));
	CHECK(doca_dma_create(dev, &dma));
	ctx = doca_dma_as_ctx(dma);

	/* Not connected: no start. */
	CASE(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	CASE(doca_ctx_get_num_inflight_tasks(ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	/* Not configured: a task type needs its set_conf. */
	CASE(doca_dma_task_memcpy_set_conf(dma, NULL, nop_cb, 4), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_dma_task_memcpy_set_conf(dma, nop_cb, nop_cb, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CASE(doca_pe_connect_ctx(pe, ctx), DOCA_ERROR_NOT_PERMITTED);
	CASE(doca_pe_connect_ctx(pe2, ctx), DOCA_ERROR_NOT_PERMITTED);
	CASE(doca_pe_connect_ctx(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	/* Idle: no tasks. */
	CASE(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &out_task), DOCA_ERROR_BAD_STATE);
	ASSERT(out_task == (struct doca_dma_task_memcpy *)0x1);
	CHECK(doca_dma_task_memcpy_set_conf(dma, nop_cb, nop_cb, 2));
	CASE(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &out_task), DOCA_ERROR_BAD_STATE);
	CHECK(doca_ctx_start(ctx));
	CASE(doca_ctx_start(ctx), DOCA_ERROR_BAD_STATE);
	/* Running: no configuration, no second connection, no destroy. */
	CASE(doca_dma_task_memcpy_set_conf(dma, nop_cb, nop_cb, 2), DOCA_ERROR_BAD_STATE);
	CASE(doca_ctx_set_state_changed_cb(ctx, NULL), DOCA_ERROR_BAD_STATE);
	CASE(doca_dma_destroy(dma), DOCA_ERROR_BAD_STATE);
	CASE(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &task));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &out_task));
	{
		struct doca_dma_task_memcpy *third = (struct doca_dma_task_memcpy *)0x1;

		CASE(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &third), DOCA_ERROR_NO_MEMORY);
		ASSERT(third == (struct doca_dma_task_memcpy *)0x1);
	}
	doca_task_free(doca_dma_task_memcpy_as_task(out_task));
	/* Freed twice: refused, nothing breaks. */
	doca_task_free(doca_dma_task_memcpy_as_task(out_task));
	/* A task with no source is refused, and stays the program's. */
	doca_dma_task_memcpy_set_src(task, NULL);
	CASE(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_src(task, src);
	/* A task is taken: the stop waits for it. */
	CASE(doca_ctx_stop(ctx), DOCA_ERROR_IN_PROGRESS);
	CHECK(doca_ctx_get_state(ctx, &st));
	ASSERT(st == DOCA_CTX_STATE_STOPPING);
	CASE(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_BAD_STATE);
	CASE(doca_ctx_start(ctx), DOCA_ERROR_BAD_STATE);
	CASE(doca_dma_destroy(dma), DOCA_ERROR_BAD_STATE);
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	ASSERT(doca_pe_progress(pe) == 1);
	CHECK(doca_ctx_get_state(ctx, &st));
	ASSERT(st == DOCA_CTX_STATE_IDLE);
	CHECK(doca_ctx_get_num_inflight_tasks(ctx, &n));
	ASSERT(n == 0);

	/* The notification handle. */
	CASE(doca_pe_get_notification_handle(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_pe_get_notification_handle(pe, &h));
	CHECK(doca_pe_clear_notification(pe, h));
	CASE(doca_pe_clear_notification(NULL, h), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_pe_set_event_mode(pe, (enum doca_pe_event_mode)9), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_pe_set_event_mode(pe, DOCA_PE_EVENT_MODE_PROGRESS_ALL));

	/* Memory under the 3.x names. */
	CHECK(doca_mmap_create(&out_mmap));
	CASE(doca_mmap_rm_dev(out_mmap, dev), DOCA_ERROR_NOT_FOUND);
	CHECK(doca_mmap_add_dev(out_mmap, dev));
	CASE(doca_mmap_add_dev(out_mmap, dev), DOCA_ERROR_ALREADY_EXIST);
	CHECK(doca_mmap_set_user_data(out_mmap, ud));
	CHECK(doca_mmap_destroy(out_mmap));
	CASE(doca_mmap_set_user_data(m.mmap, ud), DOCA_ERROR_BAD_STATE);
	CASE(doca_buf_inventory_set_user_data(m.inv, ud), DOCA_ERROR_BAD_STATE);
	{
		uint16_t rc = 0;

		CHECK(doca_buf_inc_refcount(src, &rc));
		ASSERT(rc == 1);
		CHECK(doca_buf_dec_refcount(src, &rc));
		ASSERT(rc == 2);
	}

	/* Logging. */
	CASE(doca_log_level_set_global_lower_limit(55), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_log_backend_create_with_file(NULL, &backend), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_log_backend_create_with_file_sdk(stderr, &backend));
	CASE(doca_log_backend_set_sdk_level(backend, 3), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING));
	CHECK(doca_log_backend_create_with_file(stdout, &backend));
	CASE(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_log_backend_set_level_lower_limit_strict(backend));
	CASE(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_ERROR_NOT_PERMITTED);

	CHECK(doca_dma_destroy(dma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_pe_destroy(pe2));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	printf("misuse3: %d cases\n", cases);
	return 0;
}
