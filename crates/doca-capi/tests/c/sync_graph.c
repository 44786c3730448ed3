/* Sync events in both modes, and a job graph: a DMA node, a user node after it, and a
 * sub-graph node; then a run where the user node fails. */
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_graph.h>
#include <doca_mmap.h>
#include <doca_sync_event.h>

static int user_runs, sub_runs, fail_user;
static uint8_t *mem;

static doca_error_t check_copy(void *cookie, struct doca_event *ev)
{
	ASSERT(cookie == (void *)mem);
	ASSERT(ev != NULL);
	user_runs++;
	if (fail_user)
		return DOCA_ERROR_IO_FAILED;
	return memcmp(mem, mem + 4096, 1024) == 0 ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
}

static doca_error_t in_sub(void *cookie, struct doca_event *ev)
{
	(void)ev;
	ASSERT(cookie == (void *)&sub_runs);
	sub_runs++;
	return DOCA_SUCCESS;
}

static void sync_events(struct doca_dev *dev)
{
	struct doca_sync_event *se;
	struct doca_workq *wq;
	struct doca_event ev;
	uint64_t v = 0, fetched = 0, counter = 0;

	/* Synchronous mode, counter in the program's memory. */
	CHECK(doca_sync_event_create(&se));
	EXPECT_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE); /* no locations yet */
	CHECK(doca_sync_event_publisher_add_location_cpu(se, dev));
	CHECK(doca_sync_event_subscriber_add_location_cpu(se, dev));
	EXPECT_ERR(doca_sync_event_publisher_add_location_gpu(se, NULL), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_sync_event_set_addr(se, &counter));
	CHECK(doca_sync_event_start(se));
	CHECK(doca_sync_event_update_set(se, 10));
	ASSERT(counter == 10);
	CHECK(doca_sync_event_update_add(se, 5, &fetched));
	ASSERT(fetched == 10);
	CHECK(doca_sync_event_get(se, &v));
	ASSERT(v == 15);
	CHECK(doca_sync_event_wait_gt(se, 14, UINT64_MAX));
	CHECK(doca_sync_event_wait_gt_yield(se, 3, 0xff));
	EXPECT_ERR(doca_sync_event_destroy(se), DOCA_ERROR_IN_USE);
	CHECK(doca_sync_event_stop(se));
	CHECK(doca_sync_event_destroy(se));

	/* Asynchronous mode: jobs on a work queue. */
	CHECK(doca_sync_event_create(&se));
	CHECK(doca_sync_event_publisher_add_location_cpu(se, dev));
	CHECK(doca_sync_event_subscriber_add_location_cpu(se, dev));
	CHECK(doca_sync_event_job_get_supported(doca_dev_as_devinfo(dev), DOCA_SYNC_EVENT_JOB_WAIT_GT));
	CHECK(doca_ctx_dev_add(doca_sync_event_as_ctx(se), dev));
	CHECK(doca_ctx_start(doca_sync_event_as_ctx(se)));
	CHECK(doca_workq_create(8, &wq));
	CHECK(doca_ctx_workq_add(doca_sync_event_as_ctx(se), wq));
	EXPECT_ERR(doca_sync_event_get(se, &v), DOCA_ERROR_BAD_STATE); /* jobs only */
	{
		struct doca_sync_event_job_wait wait = {
			.base = {.type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = doca_sync_event_as_ctx(se), .user_data.u64 = 1},
			.value = 7,
			.mask = 0xff,
		};
		struct doca_sync_event_job_update_set set = {
			.base = {.type = DOCA_SYNC_EVENT_JOB_UPDATE_SET, .ctx = doca_sync_event_as_ctx(se), .user_data.u64 = 2},
			.value = 5,
		};
		struct doca_sync_event_job_update_add add = {
			.base = {.type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD, .ctx = doca_sync_event_as_ctx(se), .user_data.u64 = 3},
			.value = 3,
			.fetched = &fetched,
		};
		struct doca_sync_event_job_get get = {
			.base = {.type = DOCA_SYNC_EVENT_JOB_GET, .ctx = doca_sync_event_as_ctx(se), .user_data.u64 = 4},
			.value = &v,
		};
		int seen = 0;

		/* The wait is submitted first and completes only after the add. */
		CHECK(doca_workq_submit(wq, &wait.base));
		EXPECT_ERR(doca_workq_progress_retrieve(wq, &ev, 0), DOCA_ERROR_AGAIN);
		CHECK(doca_workq_submit(wq, &set.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.user_data.u64 == 2);
		CHECK(doca_workq_submit(wq, &add.base));
		while (seen != (1 | 4)) {
			CHECK(wait_event(wq, &ev));
			ASSERT(ev.user_data.u64 == 1 || ev.user_data.u64 == 3);
			seen |= ev.user_data.u64 == 1 ? 1 : 4;
		}
		ASSERT(fetched == 5);
		CHECK(doca_workq_submit(wq, &get.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.type == DOCA_SYNC_EVENT_JOB_GET && v == 8);
	}
	CHECK(doca_ctx_workq_rm(doca_sync_event_as_ctx(se), wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(doca_sync_event_as_ctx(se)));
	CHECK(doca_ctx_dev_rm(doca_sync_event_as_ctx(se), dev));
	CHECK(doca_sync_event_destroy(se));
}

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_graph *graph, *sub;
	struct doca_graph_node *a, *b, *c, *s0, *s1, *cycle_probe;
	struct doca_buf *src2, *dst2;
	struct doca_event ev_s0;
	struct doca_graph_instance *inst, *sub_inst;
	struct doca_event ev, ev_a, ev_b, ev_c, ev_s;
	enum doca_graph_instance_node_state state;
	union doca_data result, ud = {.u64 = 0x6A};
	const struct doca_graph_node *failed[4];
	uint32_t nfailed;
	int run;

	sync_events(dev);

	mem = calloc(1, 16384);
	ASSERT(mem != NULL);
	CHECK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK(doca_ctx_dev_add(ctx, dev));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_workq_create(16, &wq));
	CHECK(doca_ctx_workq_add(ctx, wq));
	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, 16384));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(NULL, 8, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));

	/* sub: s0 (DMA) -> s1 (user). graph: a (DMA) -> b (user), a -> c (sub-graph). */
	CHECK(doca_graph_create(&sub));
	CHECK(doca_graph_ctx_node_create(sub, DOCA_DMA_JOB_MEMCPY, ctx, &s0));
	CHECK(doca_graph_user_node_create(sub, in_sub, &s1));
	CHECK(doca_graph_add_dependency(sub, s0, s1));
	CHECK(doca_graph_start(sub));
	CHECK(doca_graph_create(&graph));
	CHECK(doca_graph_ctx_node_create(graph, DOCA_DMA_JOB_MEMCPY, ctx, &a));
	CHECK(doca_graph_user_node_create(graph, check_copy, &b));
	CHECK(doca_graph_sub_graph_node_create(graph, sub, &c));
	CHECK(doca_graph_add_dependency(graph, a, b));
	CHECK(doca_graph_add_dependency(graph, a, c));
	EXPECT_ERR(doca_graph_add_dependency(graph, b, a), DOCA_ERROR_INVALID_VALUE); /* a cycle */
	EXPECT_ERR(doca_graph_ctx_node_create(graph, 12345, ctx, &cycle_probe), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_graph_start(graph));
	CHECK(doca_graph_workq_add(graph, wq));
	CHECK(doca_graph_instance_create(graph, &inst));
	CHECK(doca_graph_instance_create(sub, &sub_inst));
	EXPECT_ERR(doca_workq_graph_submit(wq, inst, ud), DOCA_ERROR_INVALID_VALUE); /* nodes without data */

	for (run = 0; run < 2; run++) {
		struct doca_dma_job_memcpy job = {
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx, .user_data.u64 = 0xA},
		};

		memset(mem, 0x11 + run, 1024);
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, 1024, &src));
		CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 4096, 4096, &dst));
		job.src_buff = src;
		job.dst_buff = dst;
		fail_user = run;
		{
			struct doca_dma_job_memcpy job2 = {
				.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx, .user_data.u64 = 0xB},
			};

			CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, 1024, &src2));
			CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 8192, 4096, &dst2));
			job2.src_buff = src2;
			job2.dst_buff = dst2;
			CHECK(doca_graph_instance_set_ctx_node_data(sub_inst, s0, &job2.base, &ev_s0));
		}
		CHECK(doca_graph_instance_set_ctx_node_data(inst, a, &job.base, &ev_a));
		CHECK(doca_graph_instance_set_user_node_data(inst, b, mem, &ev_b));
		CHECK(doca_graph_instance_set_user_node_data(sub_inst, s1, &sub_runs, &ev_s));
		CHECK(doca_graph_instance_set_sub_graph_node_data(inst, c, sub_inst, &ev_c));
		EXPECT_ERR(doca_graph_instance_destroy(sub_inst), DOCA_ERROR_BAD_STATE); /* lent to inst */
		ud.u64 = 0x6A + run;
		CHECK(doca_workq_graph_submit(wq, inst, ud));
		EXPECT_ERR(doca_workq_graph_submit(wq, inst, ud), DOCA_ERROR_BAD_STATE); /* running */
		if (run == 0) {
			CHECK(wait_event(wq, &ev));
		} else {
			EXPECT_ERR(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
			ASSERT((doca_error_t)ev.result.u64 != DOCA_SUCCESS);
		}
		/* One event for the whole instance. */
		ASSERT(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == (uint64_t)(0x6A + run));
		EXPECT_ERR(doca_workq_progress_retrieve(wq, &ev, 0), DOCA_ERROR_AGAIN);
		ASSERT(ev_a.type == DOCA_DMA_JOB_MEMCPY && ev_a.user_data.u64 == 0xA);
		ASSERT((doca_error_t)ev_a.result.u64 == DOCA_SUCCESS);
		CHECK(doca_graph_instance_node_get_state(inst, a, &state));
		ASSERT(state == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
		CHECK(doca_graph_instance_node_get_state(inst, b, &state));
		CHECK(doca_graph_instance_node_get_result(inst, b, &result));
		CHECK(doca_graph_instance_get_num_failed_nodes(inst, &nfailed));
		if (run == 0) {
			ASSERT(state == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
			ASSERT(result.u64 == DOCA_SUCCESS && nfailed == 0);
		} else {
			ASSERT(state == DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR);
			ASSERT(result.u64 == DOCA_ERROR_IO_FAILED && nfailed == 1);
			nfailed = 4;
			CHECK(doca_graph_instance_get_failed_nodes(inst, failed, &nfailed));
			ASSERT(nfailed == 1 && failed[0] == b);
		}
		ASSERT(memcmp(mem, mem + 4096, 1024) == 0);
		ASSERT(memcmp(mem, mem + 8192, 1024) == 0);
		ASSERT(ev_s0.type == DOCA_DMA_JOB_MEMCPY && ev_s0.user_data.u64 == 0xB);
		CHECK(doca_buf_refcount_rm(src2, NULL));
		CHECK(doca_buf_refcount_rm(dst2, NULL));
		CHECK(doca_buf_refcount_rm(src, NULL));
		CHECK(doca_buf_refcount_rm(dst, NULL));
	}
	ASSERT(user_runs == 2 && sub_runs == 2);

	EXPECT_ERR(doca_graph_destroy(graph), DOCA_ERROR_IN_USE); /* instances first */
	CHECK(doca_graph_instance_destroy(sub_inst)); /* back from the parent */
	CHECK(doca_graph_instance_destroy(inst));
	CHECK(doca_graph_workq_rm(graph, wq));
	CHECK(doca_graph_stop(graph));
	CHECK(doca_graph_destroy(graph));
	CHECK(doca_graph_stop(sub));
	CHECK(doca_graph_destroy(sub));
	CHECK(doca_ctx_workq_rm(ctx, wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_ctx_dev_rm(ctx, dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("sync_graph: ok\n");
	return 0;
}
