/*
 * sha_create: a DOCA 2.2 program in the shape of DOCA's "SHA create" and "SHA partial
 * create" samples. It hashes a text with one SHA-256 job, then again with partial
 * SHA-256 jobs of 64 bytes (the last one marked final), prints the digest and checks that
 * both agree. Like DOCA's samples it opens the first device that supports SHA-256 jobs
 * and never sets mmap permissions (a new mmap lets the local device read and write).
 *
 *   sha_create [-d TEXT]
 *
 * Build: gcc sha_create.c $(pkg-config --cflags --libs doca)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_buf_inventory.h>
#include <doca_log.h>
#include <doca_sha.h>

DOCA_LOG_REGISTER(SHA_CREATE);

#define MAX_DATA_LEN 4096
#define SEGMENT_LEN 64
#define SLEEP_NS 10000

struct sha_config {
	char data[MAX_DATA_LEN];
};

struct sha_resources {
	struct doca_dev *dev;
	struct doca_sha *sha;
	struct doca_ctx *ctx;
	struct doca_workq *workq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *memory;
};

static doca_error_t data_callback(void *param, void *config)
{
	struct sha_config *conf = config;
	const char *data = param;

	if (strnlen(data, MAX_DATA_LEN) == MAX_DATA_LEN) {
		DOCA_LOG_ERR("data is too long: at most %d characters", MAX_DATA_LEN - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->data, data);
	return DOCA_SUCCESS;
}

static doca_error_t register_sha_params(void)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, "d");
	doca_argp_param_set_long_name(param, "data");
	doca_argp_param_set_description(param, "user data");
	doca_argp_param_set_callback(param, data_callback);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(param);
}

static doca_error_t open_sha_device(struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	doca_error_t result;

	result = doca_devinfo_list_create(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nb_devs; i++) {
		if (doca_sha_job_get_supported(dev_list[i], DOCA_SHA_JOB_SHA256) != DOCA_SUCCESS ||
		    doca_sha_job_get_supported(dev_list[i], DOCA_SHA_JOB_SHA256_PARTIAL) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		if (result == DOCA_SUCCESS)
			break;
	}
	doca_devinfo_list_destroy(dev_list);
	return result;
}

static doca_error_t wait_for_job(struct doca_workq *workq)
{
	struct doca_event event = {0};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	doca_error_t result;

	while ((result = doca_workq_progress_retrieve(workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
	       DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to retrieve SHA job: %s", doca_get_error_string(result));
		return result;
	}
	result = (doca_error_t)event.result.u64;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("SHA job finished unsuccessfully: %s", doca_get_error_string(result));
	return result;
}

static doca_error_t resources_init(struct sha_resources *r, size_t mem_len)
{
	doca_error_t result;

	memset(r, 0, sizeof(*r));
	r->memory = calloc(1, mem_len);
	if (r->memory == NULL)
		return DOCA_ERROR_NO_MEMORY;
	result = open_sha_device(&r->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device supports SHA-256 jobs: %s", doca_get_error_string(result));
		return result;
	}
	if ((result = doca_sha_create(&r->sha)) != DOCA_SUCCESS)
		return result;
	r->ctx = doca_sha_as_ctx(r->sha);
	if ((result = doca_ctx_dev_add(r->ctx, r->dev)) != DOCA_SUCCESS ||
	    (result = doca_ctx_start(r->ctx)) != DOCA_SUCCESS ||
	    (result = doca_workq_create(8, &r->workq)) != DOCA_SUCCESS ||
	    (result = doca_ctx_workq_add(r->ctx, r->workq)) != DOCA_SUCCESS)
		return result;
	if ((result = doca_mmap_create(NULL, &r->mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(r->mmap, r->memory, mem_len)) != DOCA_SUCCESS ||
	    (result = doca_mmap_dev_add(r->mmap, r->dev)) != DOCA_SUCCESS ||
	    (result = doca_mmap_start(r->mmap)) != DOCA_SUCCESS)
		return result;
	if ((result = doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &r->inv)) != DOCA_SUCCESS ||
	    (result = doca_buf_inventory_start(r->inv)) != DOCA_SUCCESS)
		return result;
	return DOCA_SUCCESS;
}

static void resources_destroy(struct sha_resources *r)
{
	if (r->inv != NULL) {
		doca_buf_inventory_stop(r->inv);
		doca_buf_inventory_destroy(r->inv);
	}
	if (r->mmap != NULL) {
		doca_mmap_stop(r->mmap);
		doca_mmap_destroy(r->mmap);
	}
	if (r->workq != NULL) {
		doca_ctx_workq_rm(r->ctx, r->workq);
		doca_workq_destroy(r->workq);
	}
	if (r->sha != NULL) {
		doca_ctx_stop(r->ctx);
		doca_ctx_dev_rm(r->ctx, r->dev);
		doca_sha_destroy(r->sha);
	}
	if (r->dev != NULL)
		doca_dev_close(r->dev);
	free(r->memory);
}

/* One SHA-256 job over the whole text; the digest is copied to digest. */
static doca_error_t sha_one_shot(struct sha_resources *r, size_t len, uint8_t *digest)
{
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_sha_job job = {0};
	uint8_t *resp = r->memory + MAX_DATA_LEN;
	void *out;
	size_t out_len;
	doca_error_t result;

	result = doca_buf_inventory_buf_by_data(r->inv, r->mmap, r->memory, len, &src);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_buf_by_addr(r->inv, r->mmap, resp, DOCA_SHA256_BYTE_COUNT, &dst);
	if (result != DOCA_SUCCESS)
		goto out;
	job.base.type = DOCA_SHA_JOB_SHA256;
	job.base.flags = DOCA_JOB_FLAGS_NONE;
	job.base.ctx = r->ctx;
	job.req_buf = src;
	job.resp_buf = dst;
	job.flags = DOCA_SHA_JOB_FLAGS_NONE;
	result = doca_workq_submit(r->workq, &job.base);
	if (result != DOCA_SUCCESS)
		goto out;
	result = wait_for_job(r->workq);
	if (result != DOCA_SUCCESS)
		goto out;
	if ((result = doca_buf_get_data(dst, &out)) != DOCA_SUCCESS ||
	    (result = doca_buf_get_data_len(dst, &out_len)) != DOCA_SUCCESS)
		goto out;
	if (out_len != DOCA_SHA256_BYTE_COUNT) {
		DOCA_LOG_ERR("SHA-256 response holds %zu bytes", out_len);
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	memcpy(digest, out, DOCA_SHA256_BYTE_COUNT);
out:
	if (dst != NULL)
		doca_buf_refcount_rm(dst, NULL);
	doca_buf_refcount_rm(src, NULL);
	return result;
}

/* The same digest from partial jobs of SEGMENT_LEN bytes, the last one final. */
static doca_error_t sha_partial(struct sha_resources *r, size_t len, uint8_t *digest)
{
	struct doca_sha_partial_session *session = NULL;
	struct doca_buf *dst = NULL;
	uint8_t *resp = r->memory + MAX_DATA_LEN;
	size_t offset = 0, out_len;
	void *out;
	doca_error_t result;

	result = doca_sha_partial_session_create(r->sha, r->workq, &session);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_buf_by_addr(r->inv, r->mmap, resp, DOCA_SHA256_BYTE_COUNT, &dst);
	if (result != DOCA_SUCCESS)
		goto out;
	do {
		struct doca_sha_partial_job job = {0};
		struct doca_buf *src;
		size_t seg = len - offset > SEGMENT_LEN ? SEGMENT_LEN : len - offset;
		int final = offset + seg == len;

		result = doca_buf_inventory_buf_by_data(r->inv, r->mmap, r->memory + offset, seg, &src);
		if (result != DOCA_SUCCESS)
			goto out;
		job.sha_job.base.type = DOCA_SHA_JOB_SHA256_PARTIAL;
		job.sha_job.base.flags = DOCA_JOB_FLAGS_NONE;
		job.sha_job.base.ctx = r->ctx;
		job.sha_job.req_buf = src;
		job.sha_job.resp_buf = dst;
		job.sha_job.flags = final ? DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL : DOCA_SHA_JOB_FLAGS_NONE;
		job.session = session;
		result = doca_workq_submit(r->workq, &job.sha_job.base);
		if (result == DOCA_SUCCESS)
			result = wait_for_job(r->workq);
		doca_buf_refcount_rm(src, NULL);
		if (result != DOCA_SUCCESS)
			goto out;
		offset += seg;
	} while (offset < len);
	if ((result = doca_buf_get_data(dst, &out)) != DOCA_SUCCESS ||
	    (result = doca_buf_get_data_len(dst, &out_len)) != DOCA_SUCCESS)
		goto out;
	if (out_len != DOCA_SHA256_BYTE_COUNT) {
		DOCA_LOG_ERR("partial SHA-256 response holds %zu bytes", out_len);
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	memcpy(digest, out, DOCA_SHA256_BYTE_COUNT);
out:
	if (dst != NULL)
		doca_buf_refcount_rm(dst, NULL);
	doca_sha_partial_session_destroy(r->sha, r->workq, session);
	return result;
}

static doca_error_t sha_create(const char *data)
{
	struct sha_resources r;
	uint8_t one_shot[DOCA_SHA256_BYTE_COUNT], partial[DOCA_SHA256_BYTE_COUNT];
	char hex[2 * DOCA_SHA256_BYTE_COUNT + 1];
	size_t len = strlen(data), i;
	doca_error_t result;

	result = resources_init(&r, MAX_DATA_LEN + DOCA_SHA256_BYTE_COUNT);
	if (result != DOCA_SUCCESS)
		goto out;
	memcpy(r.memory, data, len);
	result = sha_one_shot(&r, len, one_shot);
	if (result != DOCA_SUCCESS)
		goto out;
	result = sha_partial(&r, len, partial);
	if (result != DOCA_SUCCESS)
		goto out;
	for (i = 0; i < DOCA_SHA256_BYTE_COUNT; i++)
		snprintf(hex + 2 * i, 3, "%02x", one_shot[i]);
	if (memcmp(one_shot, partial, DOCA_SHA256_BYTE_COUNT) != 0) {
		DOCA_LOG_ERR("partial SHA-256 differs from the one-shot digest");
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	DOCA_LOG_INFO("SHA256 output is: %s", hex);
	DOCA_LOG_INFO("partial SHA256 of %zu bytes in %zu segment(s) agrees", len,
		      len == 0 ? (size_t)1 : (len + SEGMENT_LEN - 1) / SEGMENT_LEN);
out:
	resources_destroy(&r);
	return result;
}

int main(int argc, char **argv)
{
	struct sha_config sha_conf = {0};
	doca_error_t result;

	strcpy(sha_conf.data, "1234567890abcdef");
	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("sha_create", &sha_conf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_get_error_string(result));
		return EXIT_FAILURE;
	}
	result = register_sha_params();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to register sample parameters: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = sha_create(sha_conf.data);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
