/*
 * A DOCA 1.x program: copies a text from one memory region to another with a DMA job,
 * the way 1.x programs do it: the device found by its PCI address property, a named
 * memory map populated with both regions (two chunks), buffers taken by address, and a
 * memcpy job of num_bytes_to_copy bytes.
 *
 *   dma_local_copy1 [-p BB:DD.F] [-t TEXT]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(DMA_LOCAL_COPY1);

#define MAX_TEXT 4096

struct copy_config {
	struct doca_pci_bdf pci; /* The DMA device. */
	char text[MAX_TEXT];	 /* What is copied. */
};

struct app_state {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *buf_inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *workq;
};

/* "BB:DD.F" into a doca_pci_bdf. */
static doca_error_t parse_pci_addr(const char *text, struct doca_pci_bdf *out)
{
	unsigned int bus, device, function;
	char end;

	if (sscanf(text, "%x:%x.%x%c", &bus, &device, &function, &end) != 3 || bus > 0xff || device > 0x1f ||
	    function > 7)
		return DOCA_ERROR_INVALID_VALUE;
	out->raw = 0;
	out->bus = bus;
	out->device = device;
	out->function = function;
	return DOCA_SUCCESS;
}

static doca_error_t pci_callback(void *param, void *config)
{
	struct copy_config *conf = config;

	if (parse_pci_addr((const char *)param, &conf->pci) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("PCI address must look like BB:DD.F: %s", (const char *)param);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t text_callback(void *param, void *config)
{
	struct copy_config *conf = config;
	const char *text = param;

	if (strlen(text) >= MAX_TEXT) {
		DOCA_LOG_ERR("Text is too long: at most %d characters", MAX_TEXT - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->text, text);
	return DOCA_SUCCESS;
}

static doca_error_t register_params(void)
{
	struct doca_argp_param *pci, *text;
	doca_error_t result;

	result = doca_argp_param_create(&pci);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(pci, "p");
	doca_argp_param_set_long_name(pci, "pci-addr");
	doca_argp_param_set_description(pci, "DMA device PCI address (BB:DD.F) - default: 3b:00.0");
	doca_argp_param_set_callback(pci, pci_callback);
	doca_argp_param_set_type(pci, DOCA_ARGP_TYPE_STRING);
	result = doca_argp_register_param(pci);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_argp_param_create(&text);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(text, "t");
	doca_argp_param_set_long_name(text, "text");
	doca_argp_param_set_description(text, "Text to copy");
	doca_argp_param_set_callback(text, text_callback);
	doca_argp_param_set_type(text, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(text);
}

/* Opens the device whose PCI address property is pci; the 1.3 form of the list. */
static doca_error_t open_local_device(const struct doca_pci_bdf *pci, struct app_state *state)
{
	struct doca_devinfo **list;
	struct doca_pci_bdf addr;
	uint32_t caps;
	doca_error_t result;
	int i;

	result = doca_devinfo_list_create(&list);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list devices: %s", doca_get_error_string(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; list[i] != NULL; i++) {
		if (doca_devinfo_property_get(list[i], DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&addr,
					      sizeof(addr)) != DOCA_SUCCESS ||
		    addr.raw != pci->raw)
			continue;
		caps = 0;
		if (doca_dma_devinfo_caps_get(list[i], &caps) != DOCA_SUCCESS || !(caps & DOCA_DMA_CAP_HW_OFFLOAD))
			continue;
		result = doca_dev_open(list[i], &state->dev);
		break;
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No DMA device at %02x:%02x.%x: %s", pci->bus, pci->device, pci->function,
			     doca_get_error_string(result));
	doca_devinfo_list_destroy(list);
	return result;
}

static doca_error_t create_core_objects(struct app_state *state)
{
	doca_error_t result;

	result = doca_mmap_create("copy_mmap", &state->mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to create mmap: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_buf_inventory_create("copy_inventory", 2, DOCA_BUF_EXTENSION_NONE, &state->buf_inv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to create buffer inventory: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_dma_create(&state->dma);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to create DMA engine: %s", doca_get_error_string(result));
		return result;
	}
	state->ctx = doca_dma_as_ctx(state->dma);
	result = doca_workq_create(32, &state->workq);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Unable to create work queue: %s", doca_get_error_string(result));
	return result;
}

static doca_error_t init_core_objects(struct app_state *state, uint32_t max_chunks)
{
	doca_error_t result;

	result = doca_mmap_property_set(state->mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&max_chunks,
					sizeof(max_chunks));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to set memory map chunks: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_mmap_start(state->mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to start memory map: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_mmap_dev_add(state->mmap, state->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to add device to mmap: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_buf_inventory_start(state->buf_inv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to start buffer inventory: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_ctx_dev_add(state->ctx, state->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to add device to DMA context: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_ctx_start(state->ctx);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to start DMA context: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_ctx_workq_add(state->ctx, state->workq);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Unable to add work queue to context: %s", doca_get_error_string(result));
	return result;
}

static void cleanup_core_objects(struct app_state *state)
{
	if (state->workq != NULL && state->ctx != NULL)
		doca_ctx_workq_rm(state->ctx, state->workq);
	if (state->ctx != NULL) {
		doca_ctx_stop(state->ctx);
		doca_ctx_dev_rm(state->ctx, state->dev);
	}
	if (state->mmap != NULL && state->dev != NULL)
		doca_mmap_dev_rm(state->mmap, state->dev);
}

static void destroy_core_objects(struct app_state *state)
{
	if (state->workq != NULL)
		doca_workq_destroy(state->workq);
	if (state->dma != NULL)
		doca_dma_destroy(state->dma);
	if (state->buf_inv != NULL)
		doca_buf_inventory_destroy(state->buf_inv);
	if (state->mmap != NULL)
		doca_mmap_destroy(state->mmap);
	if (state->dev != NULL)
		doca_dev_close(state->dev);
}

static int freed_chunks;

static void chunk_freed(void *addr, size_t len, void *opaque)
{
	(void)addr;
	(void)len;
	free(opaque);
	freed_chunks++;
}

static doca_error_t dma_local_copy(const struct copy_config *conf)
{
	struct app_state state = {0};
	struct doca_event event = {0};
	struct doca_job doca_job = {0};
	struct doca_dma_job_memcpy dma_job = {0};
	struct doca_buf *src_doca_buf = NULL, *dst_doca_buf = NULL;
	size_t length = strlen(conf->text) + 1, len;
	char *src_buffer = malloc(length), *dst_buffer = malloc(length);
	char name[64];
	uint8_t *head;
	uint32_t num_bufs, depth;
	uint16_t refcount;
	doca_error_t result;

	if (src_buffer == NULL || dst_buffer == NULL) {
		free(src_buffer);
		free(dst_buffer);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(src_buffer, conf->text, length);
	memset(dst_buffer, 0, length);

	result = open_local_device(&conf->pci, &state);
	if (result != DOCA_SUCCESS) {
		free(src_buffer);
		free(dst_buffer);
		return result;
	}
	result = create_core_objects(&state);
	if (result == DOCA_SUCCESS)
		result = init_core_objects(&state, 2);
	if (result == DOCA_SUCCESS) {
		/* Each buffer is a chunk of its own; the free callback frees it with the map. */
		result = doca_mmap_populate(state.mmap, src_buffer, length, 4096, chunk_freed, src_buffer);
		if (result == DOCA_SUCCESS)
			result = doca_mmap_populate(state.mmap, dst_buffer, length, 4096, chunk_freed, dst_buffer);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Unable to populate memory map: %s", doca_get_error_string(result));
	} else {
		free(src_buffer);
		free(dst_buffer);
	}
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_by_addr(state.buf_inv, state.mmap, src_buffer, length, &src_doca_buf);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_by_addr(state.buf_inv, state.mmap, dst_buffer, length, &dst_doca_buf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to take buffers: %s", doca_get_error_string(result));
		goto out;
	}
	if (doca_buf_head_get(src_doca_buf, &head) != DOCA_SUCCESS || head != (uint8_t *)src_buffer ||
	    doca_buf_len_get(dst_doca_buf, &len) != DOCA_SUCCESS || len != length ||
	    doca_buf_refcount_get(dst_doca_buf, &refcount) != DOCA_SUCCESS || refcount != 1) {
		DOCA_LOG_ERR("Buffer head, length or reference count is wrong");
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	if (doca_mmap_property_get(state.mmap, DOCA_MMAP_NAME, (uint8_t *)name, sizeof(name)) != DOCA_SUCCESS ||
	    strcmp(name, "copy_mmap") != 0 ||
	    doca_mmap_property_get(state.mmap, DOCA_MMAP_NUM_BUFS, (uint8_t *)&num_bufs, sizeof(num_bufs)) !=
		    DOCA_SUCCESS ||
	    num_bufs != 2 ||
	    doca_workq_property_get(state.workq, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&depth, sizeof(depth)) !=
		    DOCA_SUCCESS ||
	    depth != 32) {
		DOCA_LOG_ERR("Memory map or work queue properties are wrong");
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}

	doca_job.type = DOCA_DMA_JOB_MEMCPY;
	doca_job.flags = DOCA_JOB_FLAGS_NONE;
	doca_job.ctx = state.ctx;
	doca_job.user_data.u64 = 0x1234;
	dma_job.base = doca_job;
	dma_job.dst_buff = dst_doca_buf;
	dma_job.src_buff = src_doca_buf;
	dma_job.num_bytes_to_copy = length;

	result = doca_workq_submit(state.workq, &dma_job.base);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit DMA job: %s", doca_get_error_string(result));
		goto out;
	}
	while ((result = doca_workq_progress_retrieve(state.workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
	       DOCA_ERROR_AGAIN) {
		/* Nothing yet. */
	}
	if (result != DOCA_SUCCESS || event.result.u64 != DOCA_SUCCESS || event.user_data.u64 != 0x1234) {
		DOCA_LOG_ERR("DMA job failed: %s", doca_get_error_string(result));
		if (result == DOCA_SUCCESS)
			result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	if (memcmp(dst_buffer, src_buffer, length) != 0) {
		DOCA_LOG_ERR("Destination differs from the source after the copy");
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	DOCA_LOG_INFO("Success, memory copied and verified as correct: %s", dst_buffer);
	printf("dma_local_copy1: copied %zu bytes: %s\n", length, dst_buffer);

out:
	if (src_doca_buf != NULL)
		doca_buf_refcount_rm(src_doca_buf, NULL);
	if (dst_doca_buf != NULL)
		doca_buf_refcount_rm(dst_doca_buf, NULL);
	cleanup_core_objects(&state);
	destroy_core_objects(&state);
	if (result == DOCA_SUCCESS && freed_chunks != 2) {
		DOCA_LOG_ERR("%d chunks were freed, not 2", freed_chunks);
		result = DOCA_ERROR_UNEXPECTED;
	}
	return result;
}

int main(int argc, char **argv)
{
	struct copy_config conf = {0};
	doca_error_t result;

	parse_pci_addr("3b:00.0", &conf.pci);
	strcpy(conf.text, "This is a sample piece of text");
	/* The library is the generation the headers describe. */
	if (strcmp(doca_version_runtime(), DOCA_VER_STRING) != 0 || strcmp(doca_version(), "1.4.0079") != 0) {
		fprintf(stderr, "runtime version %s, headers %s\n", doca_version_runtime(), doca_version());
		return EXIT_FAILURE;
	}
	printf("dma_local_copy1: DOCA %s\n", doca_version_runtime());

	result = doca_argp_init("dma_local_copy1", &conf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_get_error_string(result));
		return EXIT_FAILURE;
	}
	result = register_params();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to register parameters: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = dma_local_copy(&conf);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("DMA local copy failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
