/*
 * sync_event_common.h: what the sync event host and DPU samples share (parameters,
 * device lookup, the comm channel set-up, and the synchronous/asynchronous operations),
 * as DOCA's sync_event_common does.
 */
#ifndef SYNC_EVENT_COMMON_H_
#define SYNC_EVENT_COMMON_H_

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_comm_channel.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_sync_event.h>

#define SYNC_EVENT_CC_SERVICE_NAME "sync_event_sample_cc"
#define SYNC_EVENT_CC_MAX_MSG_SIZE 1024
#define SYNC_EVENT_CC_QUEUE_SIZE 8
#define SLEEP_NS 10000

struct sync_event_config {
	char dev_pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char rep_pci_addr[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	bool is_async_mode;
	bool is_update_atomic;
	int async_num_tasks;
};

struct sync_event_runtime_objects {
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	struct doca_sync_event *se;
	struct doca_ctx *se_ctx;
	struct doca_workq *workq;
	struct doca_comm_channel_ep_t *ep;
	struct doca_comm_channel_addr_t *peer;
};

static doca_error_t se_copy(char *dst, const char *src, size_t max)
{
	if (strnlen(src, max) == max)
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(dst, src);
	return DOCA_SUCCESS;
}

static doca_error_t dev_pci_cb(void *p, void *c)
{
	return se_copy(((struct sync_event_config *)c)->dev_pci_addr, p, DOCA_DEVINFO_PCI_ADDR_SIZE);
}

static doca_error_t rep_pci_cb(void *p, void *c)
{
	return se_copy(((struct sync_event_config *)c)->rep_pci_addr, p, DOCA_DEVINFO_REP_PCI_ADDR_SIZE);
}

static doca_error_t async_cb(void *p, void *c)
{
	((struct sync_event_config *)c)->is_async_mode = *(bool *)p;
	return DOCA_SUCCESS;
}

static doca_error_t atomic_cb(void *p, void *c)
{
	((struct sync_event_config *)c)->is_update_atomic = *(bool *)p;
	return DOCA_SUCCESS;
}

static doca_error_t qdepth_cb(void *p, void *c)
{
	int v = *(int *)p;

	if (v <= 0) {
		fprintf(stderr, "qdepth must be positive\n");
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct sync_event_config *)c)->async_num_tasks = v;
	return DOCA_SUCCESS;
}

static doca_error_t se_param(const char *s, const char *l, const char *desc, callback_func cb, enum doca_argp_type t)
{
	struct doca_argp_param *p;
	doca_error_t result = doca_argp_param_create(&p);

	if (result != DOCA_SUCCESS)
		return result;
	if (s != NULL)
		doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, t);
	return doca_argp_register_param(p);
}

static inline doca_error_t sync_event_params_register(bool dpu)
{
	doca_error_t r = se_param("d", "dev-pci-addr", "Device PCI address", dev_pci_cb, DOCA_ARGP_TYPE_STRING);

	if (r == DOCA_SUCCESS && dpu)
		r = se_param("r", "rep-pci-addr", "DPU representor PCI address", rep_pci_cb, DOCA_ARGP_TYPE_STRING);
	if (r == DOCA_SUCCESS)
		r = se_param(NULL, "async", "Start DOCA Sync Event in asynchronous mode", async_cb,
			     DOCA_ARGP_TYPE_BOOLEAN);
	if (r == DOCA_SUCCESS)
		r = se_param(NULL, "qdepth", "DOCA WorkQ depth (for asynchronous mode)", qdepth_cb,
			     DOCA_ARGP_TYPE_INT);
	if (r == DOCA_SUCCESS)
		r = se_param(NULL, "atomic", "Update DOCA Sync Event using Add operation", atomic_cb,
			     DOCA_ARGP_TYPE_BOOLEAN);
	return r;
}

static inline doca_error_t sync_event_open_dev(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n, i;
	uint8_t eq;
	doca_error_t result = doca_devinfo_list_create(&list, &n);

	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq) {
			result = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_list_destroy(list);
	return result;
}

static inline doca_error_t sync_event_open_rep(struct doca_dev *dev, const char *pci, struct doca_dev_rep **rep)
{
	struct doca_devinfo_rep **reps;
	uint32_t n, i;
	uint8_t eq;
	doca_error_t result = doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &n);

	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_rep_get_is_pci_addr_equal(reps[i], pci, &eq) == DOCA_SUCCESS && eq) {
			result = doca_dev_rep_open(reps[i], rep);
			break;
		}
	}
	doca_devinfo_rep_list_destroy(reps);
	return result;
}

static inline doca_error_t sync_event_cc_init(struct sync_event_runtime_objects *r)
{
	doca_error_t result = doca_comm_channel_ep_create(&r->ep);

	if (result != DOCA_SUCCESS)
		return result;
	if ((result = doca_comm_channel_ep_set_device(r->ep, r->dev)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_max_msg_size(r->ep, SYNC_EVENT_CC_MAX_MSG_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_send_queue_size(r->ep, SYNC_EVENT_CC_QUEUE_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_recv_queue_size(r->ep, SYNC_EVENT_CC_QUEUE_SIZE)) != DOCA_SUCCESS)
		return result;
	if (r->rep != NULL) {
		if ((result = doca_comm_channel_ep_set_device_rep(r->ep, r->rep)) != DOCA_SUCCESS)
			return result;
		return doca_comm_channel_ep_listen(r->ep, SYNC_EVENT_CC_SERVICE_NAME);
	}
	return doca_comm_channel_ep_connect(r->ep, SYNC_EVENT_CC_SERVICE_NAME, &r->peer);
}

/* Starts the event synchronously, or as a context on a new work queue. */
static inline doca_error_t sync_event_start(struct sync_event_config *cfg, struct sync_event_runtime_objects *r)
{
	doca_error_t result;

	if (!cfg->is_async_mode)
		return doca_sync_event_start(r->se);
	r->se_ctx = doca_sync_event_as_ctx(r->se);
	if (r->se_ctx == NULL)
		return DOCA_ERROR_UNEXPECTED;
	if ((result = doca_ctx_start(r->se_ctx)) != DOCA_SUCCESS)
		return result;
	if ((result = doca_workq_create(cfg->async_num_tasks, &r->workq)) != DOCA_SUCCESS)
		return result;
	return doca_ctx_workq_add(r->se_ctx, r->workq);
}

static inline doca_error_t sync_event_poll(struct doca_workq *workq)
{
	struct doca_event ev = {0};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	doca_error_t result;

	while ((result = doca_workq_progress_retrieve(workq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS)
		return result;
	return (doca_error_t)ev.result.u64;
}

/* Waits until the event's value is greater than value. */
static inline doca_error_t sync_event_wait(struct sync_event_config *cfg, struct sync_event_runtime_objects *r,
					   uint64_t value)
{
	struct doca_sync_event_job_wait job = {0};
	doca_error_t result;

	if (!cfg->is_async_mode)
		return doca_sync_event_wait_gt(r->se, value, UINT64_MAX);
	job.base.type = DOCA_SYNC_EVENT_JOB_WAIT_GT;
	job.base.ctx = r->se_ctx;
	job.value = value;
	job.mask = 0xff;
	result = doca_workq_submit(r->workq, &job.base);
	if (result != DOCA_SUCCESS)
		return result;
	return sync_event_poll(r->workq);
}

/* Signals the other side: sets the value, or adds to it with --atomic. */
static inline doca_error_t sync_event_signal(struct sync_event_config *cfg, struct sync_event_runtime_objects *r,
					     uint64_t value)
{
	uint64_t fetched = 0;
	doca_error_t result;

	if (!cfg->is_async_mode)
		return cfg->is_update_atomic ? doca_sync_event_update_add(r->se, 1, &fetched) :
					       doca_sync_event_update_set(r->se, value);
	if (cfg->is_update_atomic) {
		struct doca_sync_event_job_update_add job = {0};

		job.base.type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD;
		job.base.ctx = r->se_ctx;
		job.value = 1;
		job.fetched = &fetched;
		result = doca_workq_submit(r->workq, &job.base);
	} else {
		struct doca_sync_event_job_update_set job = {0};

		job.base.type = DOCA_SYNC_EVENT_JOB_UPDATE_SET;
		job.base.ctx = r->se_ctx;
		job.value = value;
		result = doca_workq_submit(r->workq, &job.base);
	}
	if (result != DOCA_SUCCESS)
		return result;
	return sync_event_poll(r->workq);
}

static inline void sync_event_cleanup(struct sync_event_runtime_objects *r)
{
	if (r->se != NULL) {
		if (r->workq != NULL) {
			doca_ctx_workq_rm(r->se_ctx, r->workq);
			doca_workq_destroy(r->workq);
		}
		if (r->se_ctx != NULL)
			doca_ctx_stop(r->se_ctx);
		else
			doca_sync_event_stop(r->se);
		doca_sync_event_destroy(r->se);
	}
	if (r->ep != NULL) {
		if (r->peer != NULL)
			doca_comm_channel_ep_disconnect(r->ep, r->peer);
		doca_comm_channel_ep_destroy(r->ep);
	}
	if (r->rep != NULL)
		doca_dev_rep_close(r->rep);
	if (r->dev != NULL)
		doca_dev_close(r->dev);
}

#endif /* SYNC_EVENT_COMMON_H_ */
