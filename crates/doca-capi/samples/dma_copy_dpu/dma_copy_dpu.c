/*
 * dma_copy_dpu: the DPU side of a DOCA 2.2 DMA copy pair, in the shape of DOCA's "DMA
 * copy" samples. It reads the export descriptor and the host buffer's address and length
 * that dma_copy_host wrote to two files, creates an mmap from the export with the DPU
 * device that represents the host's device, and copies the host's text into DPU memory
 * with a DMA memcpy job. With -w TEXT it then also writes TEXT back into the host's
 * buffer (host <- DPU).
 *
 *   dma_copy_dpu [-p PCI] [-f EXPORT_DESC_PATH] [-b BUFFER_INFO_PATH] [-w TEXT]
 *
 * Defaults: 03:00.0, /tmp/export_desc.txt, /tmp/buffer_info.txt.
 * Build: gcc dma_copy_dpu.c $(pkg-config --cflags --libs doca-dpu)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>

DOCA_LOG_REGISTER(DMA_COPY_DPU);

#define MAX_PATH 4096
#define MAX_TEXT 4096
#define MAX_DESC 1024
#define WORKQ_DEPTH 32
#define SLEEP_NS 10000

struct dma_config {
	char pci_address[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char export_desc_path[MAX_PATH];
	char buf_info_path[MAX_PATH];
	char write_back[MAX_TEXT];
};

static doca_error_t copy_param(char *dst, const char *src, size_t max, const char *what)
{
	if (strnlen(src, max) == max) {
		DOCA_LOG_ERR("%s is too long: at most %zu characters", what, max - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(dst, src);
	return DOCA_SUCCESS;
}

static doca_error_t pci_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->pci_address, param, DOCA_DEVINFO_PCI_ADDR_SIZE,
			  "PCI address");
}

static doca_error_t desc_path_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->export_desc_path, param, MAX_PATH, "export descriptor path");
}

static doca_error_t buf_path_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->buf_info_path, param, MAX_PATH, "buffer info path");
}

static doca_error_t write_back_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->write_back, param, MAX_TEXT, "write-back text");
}

static doca_error_t register_param(const char *s, const char *l, const char *desc, callback_func cb)
{
	struct doca_argp_param *p;
	doca_error_t result = doca_argp_param_create(&p);

	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(p);
}

static doca_error_t register_dma_params(void)
{
	doca_error_t result;

	result = register_param("p", "pci-addr", "DOCA DMA device PCI address", pci_callback);
	if (result == DOCA_SUCCESS)
		result = register_param("f", "export-desc-path", "Path of the host's export descriptor",
					desc_path_callback);
	if (result == DOCA_SUCCESS)
		result = register_param("b", "buffer-info-path", "Path of the host's buffer information",
					buf_path_callback);
	if (result == DOCA_SUCCESS)
		result = register_param("w", "write-back", "Text to write back into the host's buffer",
					write_back_callback);
	return result;
}

static doca_error_t open_device_with_pci(const char *pci_addr, struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	uint8_t is_equal, from_export;
	doca_error_t result;

	result = doca_devinfo_list_create(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to load doca devices list: %s", doca_get_error_string(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nb_devs; i++) {
		if (doca_devinfo_get_is_pci_addr_equal(dev_list[i], pci_addr, &is_equal) != DOCA_SUCCESS || !is_equal)
			continue;
		if (doca_dma_job_get_supported(dev_list[i], DOCA_DMA_JOB_MEMCPY) != DOCA_SUCCESS)
			continue;
		if (doca_devinfo_get_is_mmap_from_export_dpu_supported(dev_list[i], &from_export) != DOCA_SUCCESS ||
		    !from_export)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		break;
	}
	doca_devinfo_list_destroy(dev_list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No DMA device at %s: %s", pci_addr, doca_get_error_string(result));
	return result;
}

static doca_error_t save_buffer_info(const char *path, char *desc, size_t *desc_len, uint64_t *addr, size_t *len)
{
	FILE *fp = fopen(path, "rb");

	if (fp == NULL) {
		DOCA_LOG_ERR("Failed to open %s", path);
		return DOCA_ERROR_IO_FAILED;
	}
	if (desc != NULL) {
		*desc_len = fread(desc, 1, MAX_DESC, fp);
		if (*desc_len == 0 || !feof(fp)) {
			DOCA_LOG_ERR("%s does not hold an export descriptor of at most %d bytes", path, MAX_DESC);
			fclose(fp);
			return DOCA_ERROR_INVALID_VALUE;
		}
	} else {
		uint64_t l;

		if (fscanf(fp, "%" SCNu64 "\n%" SCNu64, addr, &l) != 2) {
			DOCA_LOG_ERR("%s does not hold a buffer address and length", path);
			fclose(fp);
			return DOCA_ERROR_INVALID_VALUE;
		}
		*len = l;
	}
	fclose(fp);
	return DOCA_SUCCESS;
}

static doca_error_t run_job(struct doca_workq *workq, struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_dma_job_memcpy dma_job = {0};
	struct doca_event event = {0};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	doca_error_t result;

	dma_job.base.type = DOCA_DMA_JOB_MEMCPY;
	dma_job.base.flags = DOCA_JOB_FLAGS_NONE;
	dma_job.base.ctx = ctx;
	dma_job.dst_buff = dst;
	dma_job.src_buff = src;
	result = doca_workq_submit(workq, &dma_job.base);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit DMA job: %s", doca_get_error_string(result));
		return result;
	}
	while ((result = doca_workq_progress_retrieve(workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
	       DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to retrieve DMA job: %s", doca_get_error_string(result));
		return result;
	}
	result = (doca_error_t)event.result.u64;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("DMA job event returned unsuccessfully: %s", doca_get_error_string(result));
	return result;
}

static doca_error_t dma_copy_dpu(struct dma_config *cfg)
{
	struct doca_dev *dev = NULL;
	struct doca_dma *dma = NULL;
	struct doca_ctx *ctx = NULL;
	struct doca_workq *workq = NULL;
	struct doca_mmap *local_mmap = NULL, *remote_mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *remote_buf = NULL, *local_buf = NULL, *back_src = NULL, *back_dst = NULL;
	char export_desc[MAX_DESC];
	size_t export_desc_len = 0, remote_len = 0, back_len;
	uint64_t remote_addr = 0;
	char *dpu_buffer = NULL;
	doca_error_t result;

	result = save_buffer_info(cfg->export_desc_path, export_desc, &export_desc_len, NULL, NULL);
	if (result != DOCA_SUCCESS)
		return result;
	result = save_buffer_info(cfg->buf_info_path, NULL, NULL, &remote_addr, &remote_len);
	if (result != DOCA_SUCCESS)
		return result;
	if (remote_len == 0 || remote_len > (1u << 30)) {
		DOCA_LOG_ERR("The host buffer's length %zu is out of range", remote_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	back_len = strlen(cfg->write_back) + 1;
	dpu_buffer = calloc(1, remote_len + back_len);
	if (dpu_buffer == NULL)
		return DOCA_ERROR_NO_MEMORY;

	result = open_device_with_pci(cfg->pci_address, &dev);
	if (result != DOCA_SUCCESS)
		goto out;
	if ((result = doca_dma_create(&dma)) != DOCA_SUCCESS)
		goto out;
	ctx = doca_dma_as_ctx(dma);
	if ((result = doca_ctx_dev_add(ctx, dev)) != DOCA_SUCCESS || (result = doca_ctx_start(ctx)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_workq_create(WORKQ_DEPTH, &workq)) != DOCA_SUCCESS ||
	    (result = doca_ctx_workq_add(ctx, workq)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_mmap_create(NULL, &local_mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_dev_add(local_mmap, dev)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(local_mmap, dpu_buffer, remote_len + back_len)) != DOCA_SUCCESS ||
	    (result = doca_mmap_start(local_mmap)) != DOCA_SUCCESS)
		goto out;
	result = doca_mmap_create_from_export(NULL, export_desc, export_desc_len, dev, &remote_mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create mmap from export: %s", doca_get_error_string(result));
		goto out;
	}
	if ((result = doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &inv)) != DOCA_SUCCESS ||
	    (result = doca_buf_inventory_start(inv)) != DOCA_SUCCESS)
		goto out;
	result = doca_buf_inventory_buf_by_addr(inv, remote_mmap, (void *)(uintptr_t)remote_addr, remote_len,
						&remote_buf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Unable to acquire DOCA buffer representing remote buffer: %s",
			     doca_get_error_string(result));
		goto out;
	}
	result = doca_buf_inventory_buf_by_addr(inv, local_mmap, dpu_buffer, remote_len, &local_buf);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_buf_set_data(remote_buf, (void *)(uintptr_t)remote_addr, remote_len);
	if (result != DOCA_SUCCESS)
		goto out;
	result = run_job(workq, ctx, remote_buf, local_buf);
	if (result != DOCA_SUCCESS)
		goto out;
	DOCA_LOG_INFO("Remote DMA copy was done Successfully");
	dpu_buffer[remote_len - 1] = '\0';
	DOCA_LOG_INFO("Memory content: %s", dpu_buffer);

	if (cfg->write_back[0] != '\0') {
		if (back_len > remote_len) {
			DOCA_LOG_ERR("The write-back text does not fit in the host's buffer (%zu bytes)", remote_len);
			result = DOCA_ERROR_INVALID_VALUE;
			goto out;
		}
		memcpy(dpu_buffer + remote_len, cfg->write_back, back_len);
		if ((result = doca_buf_inventory_buf_by_data(inv, local_mmap, dpu_buffer + remote_len, back_len,
							     &back_src)) != DOCA_SUCCESS ||
		    (result = doca_buf_inventory_buf_by_addr(inv, remote_mmap, (void *)(uintptr_t)remote_addr, back_len,
							     &back_dst)) != DOCA_SUCCESS)
			goto out;
		result = run_job(workq, ctx, back_src, back_dst);
		if (result != DOCA_SUCCESS)
			goto out;
		DOCA_LOG_INFO("Wrote back into host memory: %s", cfg->write_back);
	}

out:
	if (back_dst != NULL)
		doca_buf_refcount_rm(back_dst, NULL);
	if (back_src != NULL)
		doca_buf_refcount_rm(back_src, NULL);
	if (local_buf != NULL)
		doca_buf_refcount_rm(local_buf, NULL);
	if (remote_buf != NULL)
		doca_buf_refcount_rm(remote_buf, NULL);
	if (inv != NULL) {
		doca_buf_inventory_stop(inv);
		doca_buf_inventory_destroy(inv);
	}
	if (remote_mmap != NULL)
		doca_mmap_destroy(remote_mmap);
	if (local_mmap != NULL) {
		doca_mmap_stop(local_mmap);
		doca_mmap_destroy(local_mmap);
	}
	if (workq != NULL) {
		doca_ctx_workq_rm(ctx, workq);
		doca_workq_destroy(workq);
	}
	if (dma != NULL) {
		doca_ctx_stop(ctx);
		doca_ctx_dev_rm(ctx, dev);
		doca_dma_destroy(dma);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	free(dpu_buffer);
	return result;
}

int main(int argc, char **argv)
{
	struct dma_config cfg = {0};
	doca_error_t result;

	strcpy(cfg.pci_address, "03:00.0");
	strcpy(cfg.export_desc_path, "/tmp/export_desc.txt");
	strcpy(cfg.buf_info_path, "/tmp/buffer_info.txt");

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifndef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the DPU");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("dma_copy_dpu", &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_get_error_string(result));
		return EXIT_FAILURE;
	}
	result = register_dma_params();
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = dma_copy_dpu(&cfg);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
