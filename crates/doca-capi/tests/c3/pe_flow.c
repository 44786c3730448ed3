/* The progress engine the way DOCA's samples use it: polling, reactive resubmission,
 * event mode on the notification handle, a stop with tasks in flight, a task error that
 * stops its context, several contexts on one engine, try_submit and pool limits. */
#include <sys/epoll.h>
#include <unistd.h>

#include <doca_log.h>

#include "common3.h"

DOCA_LOG_REGISTER(PE_FLOW);

#define NUM_TASKS 16
#define BLOCK 4096

struct run {
	struct mem *m;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_buf *src[NUM_TASKS], *dst[NUM_TASKS];
	struct doca_dma_task_memcpy *tasks[NUM_TASKS];
	int ok, failed, resubmits, stop_in_cb;
	int states[8][2], nstates;
	doca_error_t last_error;
};

static void record_state(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
			 enum doca_ctx_states next)
{
	struct run *r = user_data.ptr;

	ASSERT(ctx == r->ctx);
	ASSERT(r->nstates < 8);
	r->states[r->nstates][0] = prev;
	r->states[r->nstates][1] = next;
	r->nstates++;
}

static void check_copy(struct doca_dma_task_memcpy *task, uint8_t expected)
{
	struct doca_buf *dst = doca_dma_task_memcpy_get_dst(task);
	size_t len = 0;
	void *data = NULL;
	size_t i;

	CHECK(doca_buf_get_data_len(dst, &len));
	CHECK(doca_buf_get_data(dst, &data));
	ASSERT(len == BLOCK);
	for (i = 0; i < len; i++)
		ASSERT(((uint8_t *)data)[i] == expected);
}

static void done_cb(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct run *r = ctx_user_data.ptr;

	ASSERT(doca_task_get_status(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS);
	ASSERT(doca_task_get_ctx(doca_dma_task_memcpy_as_task(task)) == r->ctx);
	check_copy(task, (uint8_t)task_user_data.u64);
	r->ok++;
	if (r->stop_in_cb && r->ok == 1)
		EXPECT_ERR(doca_ctx_stop(r->ctx), DOCA_ERROR_IN_PROGRESS);
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void error_cb(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct run *r = ctx_user_data.ptr;

	(void)task_user_data;
	r->last_error = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	ASSERT(r->last_error != DOCA_SUCCESS);
	r->failed++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

/* Resubmits the same task with the next pair of buffers until every pair was copied. */
static void resubmit_cb(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct run *r = ctx_user_data.ptr;
	int next = r->resubmits + 1;
	union doca_data ud;

	check_copy(task, (uint8_t)task_user_data.u64);
	r->ok++;
	if (next >= NUM_TASKS) {
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		return;
	}
	r->resubmits = next;
	doca_dma_task_memcpy_set_src(task, r->src[next]);
	doca_dma_task_memcpy_set_dst(task, r->dst[next]);
	ASSERT(doca_dma_task_memcpy_get_src(task) == r->src[next]);
	ASSERT(doca_dma_task_memcpy_get_dst(task) == r->dst[next]);
	ud.u64 = (uint64_t)(next + 1);
	doca_task_set_user_data(doca_dma_task_memcpy_as_task(task), ud);
	ASSERT(doca_task_get_user_data(doca_dma_task_memcpy_as_task(task)).u64 == (uint64_t)(next + 1));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
}

static void make_bufs(struct run *r, int base)
{
	int i;

	for (i = 0; i < NUM_TASKS; i++) {
		uint8_t *s = r->m->bytes + (size_t)(base + 2 * i) * BLOCK;
		uint8_t *d = s + BLOCK;

		memset(s, i + 1, BLOCK);
		memset(d, 0, BLOCK);
		CHECK(doca_buf_inventory_buf_get_by_data(r->m->inv, r->m->mmap, s, BLOCK, &r->src[i]));
		CHECK(doca_buf_inventory_buf_get_by_addr(r->m->inv, r->m->mmap, d, BLOCK, &r->dst[i]));
	}
}

static void free_bufs(struct run *r)
{
	int i;

	for (i = 0; i < NUM_TASKS; i++) {
		CHECK(doca_buf_dec_refcount(r->src[i], NULL));
		CHECK(doca_buf_dec_refcount(r->dst[i], NULL));
	}
}

static void reset_dsts(struct run *r)
{
	int i;

	for (i = 0; i < NUM_TASKS; i++)
		CHECK(doca_buf_reset_data_len(r->dst[i]));
}

static void open_run(struct run *r, struct mem *m, struct doca_dev *dev, struct doca_pe *pe,
		     doca_dma_task_memcpy_completion_cb_t ok)
{
	union doca_data ud = {.ptr = r};
	union doca_data back;
	enum doca_ctx_states st;

	memset(r, 0, sizeof(*r));
	r->m = m;
	CHECK(doca_dma_create(dev, &r->dma));
	r->ctx = doca_dma_as_ctx(r->dma);
	ASSERT(r->ctx != NULL);
	CHECK(doca_pe_connect_ctx(pe, r->ctx));
	CHECK(doca_ctx_set_user_data(r->ctx, ud));
	CHECK(doca_ctx_get_user_data(r->ctx, &back));
	ASSERT(back.ptr == r);
	CHECK(doca_ctx_set_state_changed_cb(r->ctx, record_state));
	CHECK(doca_dma_task_memcpy_set_conf(r->dma, ok, error_cb, NUM_TASKS));
	CHECK(doca_ctx_get_state(r->ctx, &st));
	ASSERT(st == DOCA_CTX_STATE_IDLE);
	CHECK(doca_ctx_start(r->ctx));
	CHECK(doca_ctx_get_state(r->ctx, &st));
	ASSERT(st == DOCA_CTX_STATE_RUNNING);
}

static void alloc_all(struct run *r)
{
	int i;

	for (i = 0; i < NUM_TASKS; i++) {
		union doca_data ud = {.u64 = (uint64_t)(i + 1)};

		CHECK(doca_dma_task_memcpy_alloc_init(r->dma, r->src[i], r->dst[i], ud, &r->tasks[i]));
	}
}

static void submit_all(struct run *r)
{
	int i;

	for (i = 0; i < NUM_TASKS; i++)
		CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(r->tasks[i])));
}

static void progress_until(struct doca_pe *pe, int *counter, int target)
{
	long spins = 0;

	while (*counter < target) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
}

static void stop_and_destroy(struct run *r, struct doca_pe *pe)
{
	enum doca_ctx_states st;
	long spins = 0;
	doca_error_t s = doca_ctx_stop(r->ctx);

	ASSERT(s == DOCA_SUCCESS || s == DOCA_ERROR_IN_PROGRESS);
	do {
		(void)doca_pe_progress(pe);
		CHECK(doca_ctx_get_state(r->ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	CHECK(doca_dma_destroy(r->dma));
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_pe *pe;
	struct mem m;
	struct run r, r2;
	size_t n;
	int i;

	CHECK(doca_log_backend_create_standard());
	mem_open(&m, dev, (size_t)8 * NUM_TASKS * BLOCK, 8 * NUM_TASKS);
	CHECK(doca_pe_create(&pe));

	/* Polling: every task completes with its user data, the copy is right. */
	open_run(&r, &m, dev, pe, done_cb);
	ASSERT(r.nstates == 1 && r.states[0][0] == DOCA_CTX_STATE_IDLE && r.states[0][1] == DOCA_CTX_STATE_RUNNING);
	make_bufs(&r, 0);
	alloc_all(&r);
	submit_all(&r);
	CHECK(doca_pe_get_num_inflight_tasks(pe, &n));
	ASSERT(n <= NUM_TASKS);
	progress_until(pe, &r.ok, NUM_TASKS);
	CHECK(doca_pe_get_num_inflight_tasks(pe, &n));
	ASSERT(n == 0);
	CHECK(doca_ctx_get_num_inflight_tasks(r.ctx, &n));
	ASSERT(n == 0);
	ASSERT(doca_pe_progress(pe) == 0);

	/* Pool limits: every task taken, one more is refused. */
	reset_dsts(&r);
	alloc_all(&r);
	{
		struct doca_dma_task_memcpy *extra = NULL;
		union doca_data ud = {.u64 = 0};

		EXPECT_ERR(doca_dma_task_memcpy_alloc_init(r.dma, r.src[0], r.dst[0], ud, &extra),
			   DOCA_ERROR_NO_MEMORY);
		ASSERT(extra == NULL);
	}
	/* try_submit checks the task: no destination is refused, and the task stays ours. */
	doca_dma_task_memcpy_set_dst(r.tasks[0], NULL);
	EXPECT_ERR(doca_task_try_submit(doca_dma_task_memcpy_as_task(r.tasks[0])), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_dst(r.tasks[0], r.dst[0]);
	for (i = 0; i < NUM_TASKS; i++)
		CHECK(doca_task_try_submit(doca_dma_task_memcpy_as_task(r.tasks[i])));

	/* A stop asked from a callback while tasks are in flight: IN_PROGRESS, then idle. */
	r.ok = 0;
	r.stop_in_cb = 1;
	progress_until(pe, &r.ok, 1);
	{
		enum doca_ctx_states st;
		long spins = 0;

		do {
			(void)doca_pe_progress(pe);
			CHECK(doca_ctx_get_state(r.ctx, &st));
			ASSERT(++spins < 100000000L);
		} while (st != DOCA_CTX_STATE_IDLE);
	}
	ASSERT(r.ok + r.failed == NUM_TASKS);
	ASSERT(r.nstates == 3);
	ASSERT(r.states[1][0] == DOCA_CTX_STATE_RUNNING && r.states[1][1] == DOCA_CTX_STATE_STOPPING);
	ASSERT(r.states[2][0] == DOCA_CTX_STATE_STOPPING && r.states[2][1] == DOCA_CTX_STATE_IDLE);
	/* Stopping an idle context does nothing. */
	CHECK(doca_ctx_stop(r.ctx));
	ASSERT(r.nstates == 3);

	/* Restarted: a task that fails (a source with no data) stops its context. */
	r.stop_in_cb = 0;
	r.ok = r.failed = 0;
	CHECK(doca_ctx_start(r.ctx));
	reset_dsts(&r);
	CHECK(doca_buf_reset_data_len(r.src[2]));
	alloc_all(&r);
	submit_all(&r);
	{
		enum doca_ctx_states st;
		long spins = 0;

		do {
			(void)doca_pe_progress(pe);
			CHECK(doca_ctx_get_state(r.ctx, &st));
			ASSERT(++spins < 100000000L);
		} while (st != DOCA_CTX_STATE_IDLE);
	}
	ASSERT(r.failed >= 1 && r.ok + r.failed == NUM_TASKS);
	ASSERT(r.last_error != DOCA_SUCCESS);
	ASSERT(r.states[r.nstates - 1][1] == DOCA_CTX_STATE_IDLE);
	ASSERT(r.states[r.nstates - 2][0] == DOCA_CTX_STATE_RUNNING &&
	       r.states[r.nstates - 2][1] == DOCA_CTX_STATE_STOPPING);
	CHECK(doca_buf_set_data(r.src[2], m.bytes + 4 * BLOCK, BLOCK));
	free_bufs(&r);
	CHECK(doca_dma_destroy(r.dma));

	/* Reactive: one task resubmitted from its callback with the next buffers. */
	open_run(&r, &m, dev, pe, resubmit_cb);
	make_bufs(&r, 0);
	{
		union doca_data ud = {.u64 = 1};

		CHECK(doca_dma_task_memcpy_alloc_init(r.dma, r.src[0], r.dst[0], ud, &r.tasks[0]));
		CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(r.tasks[0])));
	}
	progress_until(pe, &r.ok, NUM_TASKS);
	ASSERT(r.resubmits == NUM_TASKS - 1);

	/* Two contexts on one engine, the second in event mode: sleep on the handle. */
	open_run(&r2, &m, dev, pe, done_cb);
	make_bufs(&r2, 2 * NUM_TASKS);
	alloc_all(&r2);
	{
		doca_notification_handle_t h, h2;
		struct epoll_event ev = {.events = EPOLLIN};
		int ep = epoll_create1(0);
		int rounds = 0;

		CHECK(doca_pe_get_notification_handle(pe, &h));
		CHECK(doca_pe_get_notification_handle(pe, &h2));
		ASSERT(h == h2 && h >= 0);
		ev.data.fd = h;
		ASSERT(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, h, &ev) == 0);
		submit_all(&r2);
		while (r2.ok < NUM_TASKS) {
			struct epoll_event got;

			CHECK(doca_pe_request_notification(pe));
			if (epoll_wait(ep, &got, 1, 10000) != 1) {
				fprintf(stderr, "pe_flow: no notification in 10 s\n");
				return 1;
			}
			CHECK(doca_pe_clear_notification(pe, h));
			while (doca_pe_progress(pe) != 0)
				;
			ASSERT(++rounds < 100000);
		}
		/* DOCA's event sample clears with 0: the engine's own handle is cleared. */
		CHECK(doca_pe_clear_notification(pe, 0));
		close(ep);
	}
	CHECK(doca_ctx_get_num_inflight_tasks(r2.ctx, &n));
	ASSERT(n == 0);

	/* The engine cannot go while contexts are connected. */
	EXPECT_ERR(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	stop_and_destroy(&r, pe);
	stop_and_destroy(&r2, pe);
	free_bufs(&r);
	free_bufs(&r2);
	CHECK(doca_pe_destroy(pe));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	DOCA_LOG_INFO("pe_flow: every check passed");
	printf("pe_flow: ok\n");
	return 0;
}
