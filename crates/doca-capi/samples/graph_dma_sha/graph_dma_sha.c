/*
 * graph_dma_sha: a DOCA 2.2 program in the shape of DOCA's graph sample. One graph, run
 * as several instances at once: a DMA node copies a text, a SHA-256 node hashes the
 * copy, and a user node (after both) checks that the copy equals the source. Each
 * instance's digest is printed with its text. Like DOCA's samples it opens the first
 * device that supports both job types and never sets mmap permissions.
 *
 *   graph_dma_sha [-n INSTANCES]
 *
 * Build: gcc graph_dma_sha.c $(pkg-config --cflags --libs doca)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_graph.h>
#include <doca_log.h>
#include <doca_sha.h>

DOCA_LOG_REGISTER(GRAPH_DMA_SHA);

#define MAX_INSTANCES 16
#define SLOT_LEN 256
#define SLEEP_NS 10000

struct graph_config {
	int num_instances;
};

/* What one instance works on: its text, the copy, the digest. */
struct instance_data {
	struct doca_graph_instance *instance;
	char *src;
	char *dst;
	uint8_t *digest;
	size_t len;
	struct doca_buf *src_buf, *dst_buf, *sha_src_buf, *digest_buf;
	struct doca_dma_job_memcpy dma_job;
	struct doca_sha_job sha_job;
	struct doca_event dma_ev, sha_ev, user_ev;
	int completed;
};

static doca_error_t instances_callback(void *param, void *config)
{
	int n = *(int *)param;

	if (n < 1 || n > MAX_INSTANCES) {
		DOCA_LOG_ERR("instances must be 1 to %d, not %d", MAX_INSTANCES, n);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct graph_config *)config)->num_instances = n;
	return DOCA_SUCCESS;
}

static doca_error_t register_params(void)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, "n");
	doca_argp_param_set_long_name(param, "instances");
	doca_argp_param_set_description(param, "Graph instances to run at once - default: 4");
	doca_argp_param_set_callback(param, instances_callback);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	return doca_argp_register_param(param);
}

/* The user node: the copy must equal the source. */
static doca_error_t check_copy(void *cookie, struct doca_event *ev)
{
	struct instance_data *d = cookie;

	(void)ev;
	if (memcmp(d->src, d->dst, d->len) != 0) {
		DOCA_LOG_ERR("the DMA copy differs from its source");
		return DOCA_ERROR_UNEXPECTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t open_device(struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	doca_error_t result;

	result = doca_devinfo_list_create(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nb_devs; i++) {
		if (doca_dma_job_get_supported(dev_list[i], DOCA_DMA_JOB_MEMCPY) != DOCA_SUCCESS ||
		    doca_sha_job_get_supported(dev_list[i], DOCA_SHA_JOB_SHA256) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		if (result == DOCA_SUCCESS)
			break;
	}
	doca_devinfo_list_destroy(dev_list);
	return result;
}

static doca_error_t run_graph(int num_instances)
{
	struct instance_data data[MAX_INSTANCES];
	struct doca_dev *dev = NULL;
	struct doca_dma *dma = NULL;
	struct doca_sha *sha = NULL;
	struct doca_workq *workq = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_graph *graph = NULL;
	struct doca_graph_node *dma_node, *sha_node, *user_node;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	size_t mem_len = (size_t)num_instances * 3 * SLOT_LEN;
	char *memory;
	int i, done = 0;
	doca_error_t result;

	memset(data, 0, sizeof(data));
	memory = calloc(1, mem_len);
	if (memory == NULL)
		return DOCA_ERROR_NO_MEMORY;
	result = open_device(&dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device supports DMA and SHA-256 jobs: %s", doca_get_error_string(result));
		goto out;
	}
	if ((result = doca_dma_create(&dma)) != DOCA_SUCCESS || (result = doca_sha_create(&sha)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_ctx_dev_add(doca_dma_as_ctx(dma), dev)) != DOCA_SUCCESS ||
	    (result = doca_ctx_start(doca_dma_as_ctx(dma))) != DOCA_SUCCESS ||
	    (result = doca_ctx_dev_add(doca_sha_as_ctx(sha), dev)) != DOCA_SUCCESS ||
	    (result = doca_ctx_start(doca_sha_as_ctx(sha))) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_workq_create(4 * MAX_INSTANCES, &workq)) != DOCA_SUCCESS ||
	    (result = doca_ctx_workq_add(doca_dma_as_ctx(dma), workq)) != DOCA_SUCCESS ||
	    (result = doca_ctx_workq_add(doca_sha_as_ctx(sha), workq)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_mmap_create(NULL, &mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(mmap, memory, mem_len)) != DOCA_SUCCESS ||
	    (result = doca_mmap_dev_add(mmap, dev)) != DOCA_SUCCESS || (result = doca_mmap_start(mmap)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_buf_inventory_create(NULL, 4 * MAX_INSTANCES, DOCA_BUF_EXTENSION_NONE, &inv)) !=
		    DOCA_SUCCESS ||
	    (result = doca_buf_inventory_start(inv)) != DOCA_SUCCESS)
		goto out;

	/* The graph: DMA -> SHA -> check, the check also after DMA. */
	if ((result = doca_graph_create(&graph)) != DOCA_SUCCESS ||
	    (result = doca_graph_ctx_node_create(graph, DOCA_DMA_JOB_MEMCPY, doca_dma_as_ctx(dma), &dma_node)) !=
		    DOCA_SUCCESS ||
	    (result = doca_graph_ctx_node_create(graph, DOCA_SHA_JOB_SHA256, doca_sha_as_ctx(sha), &sha_node)) !=
		    DOCA_SUCCESS ||
	    (result = doca_graph_user_node_create(graph, check_copy, &user_node)) != DOCA_SUCCESS ||
	    (result = doca_graph_add_dependency(graph, dma_node, sha_node)) != DOCA_SUCCESS ||
	    (result = doca_graph_add_dependency(graph, dma_node, user_node)) != DOCA_SUCCESS ||
	    (result = doca_graph_add_dependency(graph, sha_node, user_node)) != DOCA_SUCCESS ||
	    (result = doca_graph_start(graph)) != DOCA_SUCCESS || (result = doca_graph_workq_add(graph, workq)) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to build the graph: %s", doca_get_error_string(result));
		goto out;
	}

	for (i = 0; i < num_instances; i++) {
		struct instance_data *d = &data[i];

		d->src = memory + (size_t)i * 3 * SLOT_LEN;
		d->dst = d->src + SLOT_LEN;
		d->digest = (uint8_t *)d->dst + SLOT_LEN;
		d->len = (size_t)snprintf(d->src, SLOT_LEN, "graph instance %d copies and hashes this text", i);
		if ((result = doca_buf_inventory_buf_by_data(inv, mmap, d->src, d->len, &d->src_buf)) != DOCA_SUCCESS ||
		    (result = doca_buf_inventory_buf_by_addr(inv, mmap, d->dst, SLOT_LEN, &d->dst_buf)) != DOCA_SUCCESS ||
		    (result = doca_buf_inventory_buf_by_data(inv, mmap, d->dst, d->len, &d->sha_src_buf)) !=
			    DOCA_SUCCESS ||
		    (result = doca_buf_inventory_buf_by_addr(inv, mmap, d->digest, SLOT_LEN, &d->digest_buf)) !=
			    DOCA_SUCCESS)
			goto out;
		d->dma_job.base.type = DOCA_DMA_JOB_MEMCPY;
		d->dma_job.base.ctx = doca_dma_as_ctx(dma);
		d->dma_job.src_buff = d->src_buf;
		d->dma_job.dst_buff = d->dst_buf;
		d->sha_job.base.type = DOCA_SHA_JOB_SHA256;
		d->sha_job.base.ctx = doca_sha_as_ctx(sha);
		d->sha_job.req_buf = d->sha_src_buf;
		d->sha_job.resp_buf = d->digest_buf;
		d->sha_job.flags = DOCA_SHA_JOB_FLAGS_NONE;
		if ((result = doca_graph_instance_create(graph, &d->instance)) != DOCA_SUCCESS ||
		    (result = doca_graph_instance_set_ctx_node_data(d->instance, dma_node, &d->dma_job.base,
								    &d->dma_ev)) != DOCA_SUCCESS ||
		    (result = doca_graph_instance_set_ctx_node_data(d->instance, sha_node, &d->sha_job.base,
								    &d->sha_ev)) != DOCA_SUCCESS ||
		    (result = doca_graph_instance_set_user_node_data(d->instance, user_node, d, &d->user_ev)) !=
			    DOCA_SUCCESS)
			goto out;
	}
	for (i = 0; i < num_instances; i++) {
		union doca_data user_data = {.u64 = (uint64_t)i};

		result = doca_workq_graph_submit(workq, data[i].instance, user_data);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to submit graph instance %d: %s", i, doca_get_error_string(result));
			goto out;
		}
	}
	while (done < num_instances) {
		struct doca_event ev = {0};
		struct instance_data *d;

		result = doca_workq_progress_retrieve(workq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
		if (result == DOCA_ERROR_AGAIN) {
			nanosleep(&ts, &ts);
			continue;
		}
		if (result != DOCA_SUCCESS || ev.type != DOCA_GRAPH_JOB || ev.user_data.u64 >= (uint64_t)num_instances) {
			DOCA_LOG_ERR("graph instance %" PRIu64 " failed: %s", ev.user_data.u64,
				     doca_get_error_string((doca_error_t)ev.result.u64));
			if (result == DOCA_SUCCESS)
				result = DOCA_ERROR_UNEXPECTED;
			goto out;
		}
		d = &data[ev.user_data.u64];
		if (d->completed++) {
			DOCA_LOG_ERR("graph instance %" PRIu64 " completed twice", ev.user_data.u64);
			result = DOCA_ERROR_UNEXPECTED;
			goto out;
		}
		done++;
	}
	for (i = 0; i < num_instances; i++) {
		char hex[2 * DOCA_SHA256_BYTE_COUNT + 1];
		size_t len, k;

		if ((result = doca_buf_get_data_len(data[i].digest_buf, &len)) != DOCA_SUCCESS)
			goto out;
		if (len != DOCA_SHA256_BYTE_COUNT) {
			result = DOCA_ERROR_UNEXPECTED;
			goto out;
		}
		for (k = 0; k < DOCA_SHA256_BYTE_COUNT; k++)
			snprintf(hex + 2 * k, 3, "%02x", data[i].digest[k]);
		DOCA_LOG_INFO("instance %d: sha256 %s of '%s'", i, hex, data[i].src);
	}
	DOCA_LOG_INFO("%d graph instances completed: copies checked, digests computed", num_instances);
	result = DOCA_SUCCESS;

out:
	for (i = 0; i < num_instances; i++) {
		struct instance_data *d = &data[i];

		if (d->instance != NULL)
			doca_graph_instance_destroy(d->instance);
		if (d->src_buf != NULL)
			doca_buf_refcount_rm(d->src_buf, NULL);
		if (d->dst_buf != NULL)
			doca_buf_refcount_rm(d->dst_buf, NULL);
		if (d->sha_src_buf != NULL)
			doca_buf_refcount_rm(d->sha_src_buf, NULL);
		if (d->digest_buf != NULL)
			doca_buf_refcount_rm(d->digest_buf, NULL);
	}
	if (graph != NULL) {
		doca_graph_workq_rm(graph, workq);
		doca_graph_stop(graph);
		doca_graph_destroy(graph);
	}
	if (inv != NULL) {
		doca_buf_inventory_stop(inv);
		doca_buf_inventory_destroy(inv);
	}
	if (mmap != NULL) {
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (workq != NULL) {
		if (dma != NULL)
			doca_ctx_workq_rm(doca_dma_as_ctx(dma), workq);
		if (sha != NULL)
			doca_ctx_workq_rm(doca_sha_as_ctx(sha), workq);
		doca_workq_destroy(workq);
	}
	if (sha != NULL) {
		doca_ctx_stop(doca_sha_as_ctx(sha));
		doca_ctx_dev_rm(doca_sha_as_ctx(sha), dev);
		doca_sha_destroy(sha);
	}
	if (dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev);
		doca_dma_destroy(dma);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	free(memory);
	return result;
}

int main(int argc, char **argv)
{
	struct graph_config conf = {.num_instances = 4};
	doca_error_t result;

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("graph_dma_sha", &conf);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = register_params();
	if (result != DOCA_SUCCESS) {
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = run_graph(conf.num_instances);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
