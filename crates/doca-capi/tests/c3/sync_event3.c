/* Sync event tasks on a progress engine (get, notify_set, notify_add, wait_gt, wait_eq, wait_neq),
 * a stop that flushes a wait that never ends, and the synchronous calls. */
#include <doca_graph.h>
#include <doca_sync_event.h>

#include "common3.h"

struct run {
	struct doca_ctx *ctx;
	int done, failed;
	doca_error_t last_error;
};

static void ok_cb(struct doca_task *task, union doca_data t, union doca_data c)
{
	struct run *r = c.ptr;

	(void)t;
	ASSERT(doca_task_get_status(task) == DOCA_SUCCESS);
	r->done++;
	doca_task_free(task);
}

static void err_cb(struct doca_task *task, union doca_data t, union doca_data c)
{
	struct run *r = c.ptr;

	(void)t;
	r->last_error = doca_task_get_status(task);
	r->failed++;
	doca_task_free(task);
}

#define CB(name, type) \
	static void name##_ok(struct type *task, union doca_data t, union doca_data c) \
	{ \
		ok_cb(type##_as_doca_task(task), t, c); \
	} \
	static void name##_err(struct type *task, union doca_data t, union doca_data c) \
	{ \
		err_cb(type##_as_doca_task(task), t, c); \
	}

CB(get, doca_sync_event_task_get)
CB(set, doca_sync_event_task_notify_set)
CB(add, doca_sync_event_task_notify_add)
CB(gt, doca_sync_event_task_wait_gt)
CB(eq, doca_sync_event_task_wait_eq)
CB(neq, doca_sync_event_task_wait_neq)

static int graphs_done;

static void graph_cb(struct doca_graph_instance *gi, union doca_data iud, union doca_data gud)
{
	(void)gi;
	(void)iud;
	(void)gud;
	graphs_done++;
}

static void progress_until(struct doca_pe *pe, struct run *r, int target)
{
	long spins = 0;

	while (r->done + r->failed < target) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct doca_sync_event *se, *sync;
	struct doca_pe *pe;
	struct run r = {0};
	union doca_data ud = {.ptr = &r}, tud = {.u64 = 0};
	struct doca_sync_event_task_get *get;
	struct doca_sync_event_task_notify_set *set;
	struct doca_sync_event_task_notify_add *add;
	struct doca_sync_event_task_wait_gt *gt;
	struct doca_sync_event_task_wait_eq *eq;
	struct doca_sync_event_task_wait_neq *neq;
	uint64_t value = 0, fetched = 0;
	enum doca_ctx_states st;
	long spins = 0;

	CHECK(doca_sync_event_cap_task_get_is_supported(info));
	CHECK(doca_sync_event_cap_task_notify_set_is_supported(info));
	CHECK(doca_sync_event_cap_task_notify_add_is_supported(info));
	CHECK(doca_sync_event_cap_task_wait_gt_is_supported(info));
	CHECK(doca_sync_event_cap_task_wait_eq_is_supported(info));
	CHECK(doca_sync_event_cap_task_wait_neq_is_supported(info));

	CHECK(doca_pe_create(&pe));
	CHECK(doca_sync_event_create(&se));
	CHECK(doca_sync_event_add_publisher_location_cpu(se, dev));
	CHECK(doca_sync_event_add_subscriber_location_cpu(se, dev));
	/* An event has one publisher: a second location (a remote peer here) is refused. */
	EXPECT_ERR(doca_sync_event_add_publisher_location_remote_net(se), DOCA_ERROR_ALREADY_EXIST);
	r.ctx = doca_sync_event_as_ctx(se);
	ASSERT(r.ctx != NULL);
	CHECK(doca_pe_connect_ctx(pe, r.ctx));
	CHECK(doca_ctx_set_user_data(r.ctx, ud));
	CHECK(doca_sync_event_task_get_set_conf(se, get_ok, get_err, 2));
	CHECK(doca_sync_event_task_notify_set_set_conf(se, set_ok, set_err, 2));
	CHECK(doca_sync_event_task_notify_add_set_conf(se, add_ok, add_err, 2));
	CHECK(doca_sync_event_task_wait_gt_set_conf(se, gt_ok, gt_err, 2));
	CHECK(doca_sync_event_task_wait_eq_set_conf(se, eq_ok, eq_err, 2));
	CHECK(doca_sync_event_task_wait_neq_set_conf(se, neq_ok, neq_err, 2));
	CHECK(doca_ctx_start(r.ctx));
	EXPECT_ERR(doca_sync_event_task_get_set_conf(se, get_ok, get_err, 2), DOCA_ERROR_NOT_PERMITTED);

	/* set 5, read it back. */
	CHECK(doca_sync_event_task_notify_set_alloc_init(se, 5, tud, &set));
	ASSERT(doca_sync_event_task_notify_set_get_set_val(set) == 5);
	CHECK(doca_task_submit(doca_sync_event_task_notify_set_as_doca_task(set)));
	progress_until(pe, &r, 1);
	CHECK(doca_sync_event_task_get_alloc_init(se, &value, tud, &get));
	ASSERT(doca_sync_event_task_get_get_ret_val_ptr(get) == &value);
	CHECK(doca_task_submit(doca_sync_event_task_get_as_doca_task(get)));
	progress_until(pe, &r, 2);
	ASSERT(value == 5);

	/* A wait for > 9 waits; add 3 (fetching 5), then a wait for == 8 ends at once. */
	CHECK(doca_sync_event_task_wait_gt_alloc_init(se, 9, 0xff, tud, &gt));
	ASSERT(doca_sync_event_task_wait_gt_get_wait_val(gt) == 9 && doca_sync_event_task_wait_gt_get_mask(gt) == 0xff);
	CHECK(doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(gt)));
	CHECK(doca_sync_event_task_notify_add_alloc_init(se, 3, &fetched, tud, &add));
	CHECK(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)));
	progress_until(pe, &r, 3);
	ASSERT(fetched == 5);
	CHECK(doca_sync_event_task_wait_eq_alloc_init(se, 8, UINT64_MAX, tud, &eq));
	CHECK(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	progress_until(pe, &r, 4);
	ASSERT(r.done == 4 && r.failed == 0);
	/* A wait for != 8 waits: the value is 8. The wait for > 9 and it end once the value
	 * is 10. */
	CHECK(doca_sync_event_task_wait_neq_alloc_init(se, 8, UINT64_MAX, tud, &neq));
	ASSERT(doca_sync_event_task_wait_neq_get_wait_val(neq) == 8 &&
	       doca_sync_event_task_wait_neq_get_mask(neq) == UINT64_MAX);
	CHECK(doca_task_submit(doca_sync_event_task_wait_neq_as_doca_task(neq)));
	(void)doca_pe_progress(pe);
	(void)doca_pe_progress(pe);
	ASSERT(r.done == 4);
	CHECK(doca_sync_event_task_notify_set_alloc_init(se, 10, tud, &set));
	CHECK(doca_task_submit(doca_sync_event_task_notify_set_as_doca_task(set)));
	progress_until(pe, &r, 7);
	ASSERT(r.failed == 0);

	/* In a graph, a get task still writes the value where its pointer says. */
	{
		struct doca_graph *graph;
		struct doca_graph_node *node;
		struct doca_graph_instance *gi;
		uint64_t in_graph = 0;
		long spins = 0;

		CHECK(doca_graph_create(pe, &graph));
		CHECK(doca_graph_node_create_from_ctx(graph, r.ctx, &node));
		CHECK(doca_graph_set_conf(graph, graph_cb, graph_cb, 1));
		CHECK(doca_graph_start(graph));
		CHECK(doca_graph_instance_create(graph, &gi));
		CHECK(doca_sync_event_task_get_alloc_init(se, &in_graph, tud, &get));
		CHECK(doca_graph_instance_set_ctx_node_data(gi, node, doca_sync_event_task_get_as_doca_task(get)));
		CHECK(doca_graph_instance_submit(gi));
		while (graphs_done == 0) {
			(void)doca_pe_progress(pe);
			ASSERT(++spins < 100000000L);
		}
		ASSERT(in_graph == 10);
		ASSERT(doca_task_get_status(doca_sync_event_task_get_as_doca_task(get)) == DOCA_SUCCESS);
		doca_task_free(doca_sync_event_task_get_as_doca_task(get));
		CHECK(doca_graph_instance_destroy(gi));
		CHECK(doca_graph_stop(graph));
		CHECK(doca_graph_destroy(graph));
	}

	/* A wait that can never end is refused; one that does not end yet is flushed by a stop. */
	CHECK(doca_sync_event_task_wait_eq_alloc_init(se, 0x100, 0xff, tud, &eq));
	EXPECT_ERR(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)), DOCA_ERROR_INVALID_VALUE);
	doca_sync_event_task_wait_eq_set_wait_val(eq, 0x42);
	CHECK(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	(void)doca_pe_progress(pe);
	EXPECT_ERR(doca_ctx_stop(r.ctx), DOCA_ERROR_IN_PROGRESS);
	do {
		(void)doca_pe_progress(pe);
		CHECK(doca_ctx_get_state(r.ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	ASSERT(r.failed == 1 && r.last_error != DOCA_SUCCESS);
	CHECK(doca_sync_event_destroy(se));

	/* The synchronous calls, on an event started on its own. */
	CHECK(doca_sync_event_create(&sync));
	CHECK(doca_sync_event_add_publisher_location_cpu(sync, dev));
	CHECK(doca_sync_event_add_subscriber_location_cpu(sync, dev));
	CHECK(doca_sync_event_start(sync));
	CHECK(doca_sync_event_update_set(sync, 40));
	CHECK(doca_sync_event_update_add(sync, 2, &fetched));
	ASSERT(fetched == 40);
	CHECK(doca_sync_event_get(sync, &value));
	ASSERT(value == 42);
	CHECK(doca_sync_event_wait_gt(sync, 41, UINT64_MAX));
	CHECK(doca_sync_event_wait_neq(sync, 41, UINT64_MAX));
	CHECK(doca_sync_event_wait_neq_yield(sync, 0, 0x2));
	EXPECT_ERR(doca_sync_event_destroy(sync), DOCA_ERROR_IN_USE);
	CHECK(doca_sync_event_stop(sync));
	CHECK(doca_sync_event_destroy(sync));

	CHECK(doca_pe_destroy(pe));
	CHECK(doca_dev_close(dev));
	printf("sync_event3: ok\n");
	return 0;
}
