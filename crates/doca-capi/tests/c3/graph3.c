/* Graphs on a progress engine: a copy, a user node that checks it, and a second copy
 * after it; many instances in flight; a failing node failing its instance (its
 * descendants never run); the rules on instances and tasks. */
#include <doca_graph.h>

#include "common3.h"

#define INSTANCES 8
#define LEN 4096

struct inst {
	uint8_t *a, *b, *c;
	int checked;
	struct doca_graph_instance *gi;
	struct doca_dma_task_memcpy *t1, *t2;
	struct doca_buf *a_buf, *b_buf, *b_src, *c_buf;
};

struct totals {
	int ok, failed;
};

static void nop_cb(struct doca_dma_task_memcpy *task, union doca_data a, union doca_data b)
{
	(void)task;
	(void)a;
	(void)b;
	fprintf(stderr, "a task callback ran inside a graph\n");
	exit(1);
}

static doca_error_t check_node(void *cookie)
{
	struct inst *in = cookie;

	if (memcmp(in->a, in->b, LEN) != 0)
		return DOCA_ERROR_UNEXPECTED;
	in->checked++;
	return DOCA_SUCCESS;
}

static void graph_ok(struct doca_graph_instance *gi, union doca_data iud, union doca_data gud)
{
	struct totals *t = gud.ptr;
	struct inst *in = iud.ptr;

	ASSERT(in->gi == gi);
	t->ok++;
}

static void graph_err(struct doca_graph_instance *gi, union doca_data iud, union doca_data gud)
{
	struct totals *t = gud.ptr;

	(void)gi;
	(void)iud;
	t->failed++;
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_pe *pe;
	struct doca_dma *dma1, *dma2;
	struct doca_graph *graph;
	struct doca_graph_node *n1, *n2, *check;
	struct doca_graph_instance *extra = (struct doca_graph_instance *)0x1;
	struct totals totals = {0};
	union doca_data gud = {.ptr = &totals};
	struct inst in[INSTANCES];
	struct mem m;
	long spins = 0;
	int i;

	mem_open(&m, dev, (size_t)3 * INSTANCES * LEN, 4 * INSTANCES);
	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma1));
	CHECK(doca_dma_create(dev, &dma2));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma1)));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma2)));
	CHECK(doca_dma_task_memcpy_set_conf(dma1, nop_cb, nop_cb, INSTANCES));
	CHECK(doca_dma_task_memcpy_set_conf(dma2, nop_cb, nop_cb, INSTANCES));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma1)));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma2)));

	CHECK(doca_graph_create(pe, &graph));
	CHECK(doca_graph_node_create_from_ctx(graph, doca_dma_as_ctx(dma1), &n1));
	CHECK(doca_graph_node_create_from_user(graph, check_node, &check));
	CHECK(doca_graph_node_create_from_ctx(graph, doca_dma_as_ctx(dma2), &n2));
	CHECK(doca_graph_add_dependency(graph, n1, check));
	CHECK(doca_graph_add_dependency(graph, check, n2));
	EXPECT_ERR(doca_graph_add_dependency(graph, n2, n1), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_ERR(doca_graph_start(graph), DOCA_ERROR_BAD_STATE); /* not configured */
	CHECK(doca_graph_set_conf(graph, graph_ok, graph_err, INSTANCES));
	CHECK(doca_graph_set_user_data(graph, gud));
	EXPECT_ERR(doca_graph_instance_create(graph, &extra), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK(doca_graph_start(graph));
	EXPECT_ERR(doca_graph_set_user_data(graph, gud), DOCA_ERROR_BAD_STATE);

	for (i = 0; i < INSTANCES; i++) {
		union doca_data ud = {.ptr = &in[i]};

		memset(&in[i], 0, sizeof(in[i]));
		in[i].a = m.bytes + (size_t)(3 * i) * LEN;
		in[i].b = in[i].a + LEN;
		in[i].c = in[i].b + LEN;
		memset(in[i].a, i + 1, LEN);
		CHECK(doca_graph_instance_create(graph, &in[i].gi));
		CHECK(doca_graph_instance_set_user_data(in[i].gi, ud));
		CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, in[i].a, LEN, &in[i].a_buf));
		CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, in[i].b, LEN, &in[i].b_buf));
		CHECK(doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, in[i].b, LEN, &in[i].b_src));
		CHECK(doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, in[i].c, LEN, &in[i].c_buf));
		CHECK(doca_dma_task_memcpy_alloc_init(dma1, in[i].a_buf, in[i].b_buf, ud, &in[i].t1));
		CHECK(doca_dma_task_memcpy_alloc_init(dma2, in[i].b_src, in[i].c_buf, ud, &in[i].t2));
		/* A task of the other context does not fit the node. */
		EXPECT_ERR(doca_graph_instance_set_ctx_node_data(in[i].gi, n1, doca_dma_task_memcpy_as_task(in[i].t2)),
			   DOCA_ERROR_NOT_PERMITTED);
		CHECK(doca_graph_instance_set_ctx_node_data(in[i].gi, n1, doca_dma_task_memcpy_as_task(in[i].t1)));
		CHECK(doca_graph_instance_set_ctx_node_data(in[i].gi, n2, doca_dma_task_memcpy_as_task(in[i].t2)));
		CHECK(doca_graph_instance_set_user_node_data(in[i].gi, check, &in[i]));
	}
	EXPECT_ERR(doca_graph_instance_create(graph, &extra), DOCA_ERROR_NO_MEMORY);
	ASSERT(extra == (struct doca_graph_instance *)0x1);
	for (i = 0; i < INSTANCES; i++)
		CHECK(doca_graph_instance_submit(in[i].gi));
	EXPECT_ERR(doca_graph_instance_submit(in[0].gi), DOCA_ERROR_IN_USE);
	EXPECT_ERR(doca_graph_instance_destroy(in[0].gi), DOCA_ERROR_IN_USE);
	while (totals.ok + totals.failed < INSTANCES) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
	ASSERT(totals.ok == INSTANCES && totals.failed == 0);
	for (i = 0; i < INSTANCES; i++) {
		ASSERT(in[i].checked == 1);
		ASSERT(memcmp(in[i].a, in[i].c, LEN) == 0);
		ASSERT(doca_task_get_status(doca_dma_task_memcpy_as_task(in[i].t1)) == DOCA_SUCCESS);
	}

	/* Again, with the first copy failing (a source with no data): the instance fails, the
	 * check and the second copy never run. */
	CHECK(doca_buf_reset_data_len(in[0].b_buf));
	CHECK(doca_buf_reset_data_len(in[0].c_buf));
	CHECK(doca_buf_reset_data_len(in[0].a_buf));
	in[0].checked = 0;
	CHECK(doca_graph_instance_submit(in[0].gi));
	spins = 0;
	while (totals.ok + totals.failed < INSTANCES + 1) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
	ASSERT(totals.failed == 1 && in[0].checked == 0);
	ASSERT(doca_task_get_status(doca_dma_task_memcpy_as_task(in[0].t1)) != DOCA_SUCCESS);

	EXPECT_ERR(doca_graph_stop(graph), DOCA_ERROR_IN_USE);
	for (i = 0; i < INSTANCES; i++) {
		CHECK(doca_graph_instance_destroy(in[i].gi));
		doca_task_free(doca_dma_task_memcpy_as_task(in[i].t1));
		doca_task_free(doca_dma_task_memcpy_as_task(in[i].t2));
		CHECK(doca_buf_dec_refcount(in[i].a_buf, NULL));
		CHECK(doca_buf_dec_refcount(in[i].b_buf, NULL));
		CHECK(doca_buf_dec_refcount(in[i].b_src, NULL));
		CHECK(doca_buf_dec_refcount(in[i].c_buf, NULL));
	}
	CHECK(doca_graph_stop(graph));
	/* Inside a graph, a failed node fails its instance; its context keeps running. */
	{
		enum doca_ctx_states st;

		CHECK(doca_ctx_get_state(doca_dma_as_ctx(dma1), &st));
		ASSERT(st == DOCA_CTX_STATE_RUNNING);
		CHECK(doca_ctx_stop(doca_dma_as_ctx(dma1)));
		CHECK(doca_ctx_stop(doca_dma_as_ctx(dma2)));
	}
	CHECK(doca_dma_destroy(dma1));
	CHECK(doca_dma_destroy(dma2));
	/* The engine cannot go while a graph runs on it. */
	EXPECT_ERR(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	CHECK(doca_graph_destroy(graph));
	CHECK(doca_pe_destroy(pe));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	printf("graph3: ok\n");
	return 0;
}
