/*
 * dma_copy_host: the host side of a DOCA 2.2 DMA copy pair, in the shape of DOCA's "DMA
 * copy" samples. It places a text in host memory, exports that memory to the DPU
 * (doca_mmap_export_dpu) and writes the export descriptor and the buffer's address and
 * length to two files, which the DPU side (dma_copy_dpu) reads to copy the text with a
 * DMA job. It then waits until the DPU side is done (a line on stdin) and prints the
 * memory, which the DPU side may have written into.
 *
 *   dma_copy_host [-p PCI] [-d TEXT] [-f EXPORT_DESC_PATH] [-b BUFFER_INFO_PATH]
 *
 * Defaults: 0000:b1:00.0, "This is a sample piece of text", /tmp/export_desc.txt,
 * /tmp/buffer_info.txt. Build: gcc dma_copy_host.c $(pkg-config --cflags --libs doca)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <doca_argp.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_log.h>
#include <doca_mmap.h>

DOCA_LOG_REGISTER(DMA_COPY_HOST);

#define MAX_TEXT 4096
#define MAX_PATH 4096

struct dma_config {
	char pci_address[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char cpy_txt[MAX_TEXT];
	char export_desc_path[MAX_PATH];
	char buf_info_path[MAX_PATH];
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

static doca_error_t text_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->cpy_txt, param, MAX_TEXT, "text");
}

static doca_error_t desc_path_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->export_desc_path, param, MAX_PATH, "export descriptor path");
}

static doca_error_t buf_path_callback(void *param, void *config)
{
	return copy_param(((struct dma_config *)config)->buf_info_path, param, MAX_PATH, "buffer info path");
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
		result = register_param("d", "text", "Text to DMA copy from the host to the DPU", text_callback);
	if (result == DOCA_SUCCESS)
		result = register_param("f", "export-desc-path", "Path to save the export descriptor to",
					desc_path_callback);
	if (result == DOCA_SUCCESS)
		result = register_param("b", "buffer-info-path", "Path to save the buffer information to",
					buf_path_callback);
	return result;
}

static doca_error_t open_device_with_pci(const char *pci_addr, struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	uint8_t is_equal, export_ok;
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
		if (doca_devinfo_get_is_mmap_export_dpu_supported(dev_list[i], &export_ok) != DOCA_SUCCESS ||
		    !export_ok)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		break;
	}
	doca_devinfo_list_destroy(dev_list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No device that exports memory at %s: %s", pci_addr, doca_get_error_string(result));
	return result;
}

/* Writes the export descriptor and the buffer's address and length, as DOCA's sample does. */
static doca_error_t save_config_info_to_files(const void *export_desc, size_t export_desc_len, const char *src_buffer,
					      size_t src_buffer_len, const char *export_desc_path,
					      const char *buf_info_path)
{
	FILE *fp;
	uint64_t buffer_addr = (uintptr_t)src_buffer;
	uint64_t buffer_len = src_buffer_len;

	fp = fopen(export_desc_path, "wb");
	if (fp == NULL) {
		DOCA_LOG_ERR("Failed to create the DMA copy file %s", export_desc_path);
		return DOCA_ERROR_IO_FAILED;
	}
	if (fwrite(export_desc, 1, export_desc_len, fp) != export_desc_len || fclose(fp) != 0) {
		DOCA_LOG_ERR("Failed to write all data into the file %s", export_desc_path);
		return DOCA_ERROR_IO_FAILED;
	}
	fp = fopen(buf_info_path, "w");
	if (fp == NULL) {
		DOCA_LOG_ERR("Failed to create the DMA copy file %s", buf_info_path);
		return DOCA_ERROR_IO_FAILED;
	}
	if (fprintf(fp, "%" PRIu64 "\n%" PRIu64 "\n", buffer_addr, buffer_len) < 0 || fclose(fp) != 0) {
		DOCA_LOG_ERR("Failed to write the buffer information into %s", buf_info_path);
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t dma_copy_host(struct dma_config *cfg)
{
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	const void *export_desc;
	size_t export_desc_len;
	size_t length = strlen(cfg->cpy_txt) + 1;
	char *src_buffer;
	doca_error_t result;

	src_buffer = malloc(length);
	if (src_buffer == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memcpy(src_buffer, cfg->cpy_txt, length);

	result = open_device_with_pci(cfg->pci_address, &dev);
	if (result != DOCA_SUCCESS)
		goto out;
	if ((result = doca_mmap_create(NULL, &mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_dev_add(mmap, dev)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(mmap, src_buffer, length)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_permissions(mmap, DOCA_ACCESS_DPU_READ_WRITE)) != DOCA_SUCCESS ||
	    (result = doca_mmap_start(mmap)) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up the memory map: %s", doca_get_error_string(result));
		goto out;
	}
	result = doca_mmap_export_dpu(mmap, dev, &export_desc, &export_desc_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to export the memory map: %s", doca_get_error_string(result));
		goto out;
	}
	result = save_config_info_to_files(export_desc, export_desc_len, src_buffer, length, cfg->export_desc_path,
					   cfg->buf_info_path);
	if (result != DOCA_SUCCESS)
		goto out;

	DOCA_LOG_INFO("Wait till the DPU has finished and press enter");
	while (getchar() != '\n' && !feof(stdin))
		;
	DOCA_LOG_INFO("Memory content: %s", src_buffer);

out:
	if (mmap != NULL) {
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	free(src_buffer);
	return result;
}

int main(int argc, char **argv)
{
	struct dma_config cfg = {0};
	doca_error_t result;

	strcpy(cfg.pci_address, "b1:00.0");
	strcpy(cfg.cpy_txt, "This is a sample piece of text");
	strcpy(cfg.export_desc_path, "/tmp/export_desc.txt");
	strcpy(cfg.buf_info_path, "/tmp/buffer_info.txt");

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifdef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the host");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("dma_copy_host", &cfg);
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
	result = dma_copy_host(&cfg);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
