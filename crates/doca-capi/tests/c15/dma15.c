/*
 * A DOCA 1.5 program, written the way 1.5's samples are: devices found by their
 * struct doca_pci_bdf (doca_devinfo_get_pci_addr) and DMA support
 * (doca_dma_job_get_supported), a memory map created with no user data, given its chunk
 * count, started, given the device and then populated, buffers taken by address with
 * their data set, and memcpy jobs on a work queue.
 *
 *   dma15 local [-p BB:DD.F] [-t TEXT]    copies TEXT from one region to another
 *   dma15 host -d DIR [-p BB:DD.F]        exports a region holding a text to DIR, waits
 *                                         for a line on stdin, prints the region
 *   dma15 dpu -d DIR [-p BB:DD.F] [-r BB:DD.F] [-w TEXT]
 *                                         maps the host's export, reads its text by
 *                                         DMA, writes TEXT back
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(DMA15);

#define TEXT_MAX 4096
#define WORKQ_DEPTH 32

struct core {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *buf_inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *workq;
};

static int ranges_freed;

static void range_freed(void *addr, size_t len, void *opaque)
{
	(void)len;
	(void)opaque;
	free(addr);
	ranges_freed++;
}

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

static doca_error_t dma_supported(struct doca_devinfo *devinfo)
{
	return doca_dma_job_get_supported(devinfo, DOCA_DMA_JOB_MEMCPY);
}

/* The device at pci that runs DMA jobs. */
static doca_error_t open_device(const struct doca_pci_bdf *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	struct doca_pci_bdf addr;
	uint32_t n, i;
	doca_error_t result;

	*dev = NULL;
	result = doca_devinfo_list_create(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_pci_addr(list[i], &addr) != DOCA_SUCCESS || addr.raw != pci->raw)
			continue;
		if (dma_supported(list[i]) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(list[i], dev);
		break;
	}
	doca_devinfo_list_destroy(list);
	return result;
}

/* DPU side: the network representor at pci. */
static doca_error_t find_representor(struct doca_dev *dev, const struct doca_pci_bdf *pci)
{
	struct doca_devinfo_rep **reps;
	struct doca_pci_bdf addr;
	uint32_t n, i;
	doca_error_t result;

	result = doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_rep_get_pci_addr(reps[i], &addr) == DOCA_SUCCESS && addr.raw == pci->raw) {
			printf("dma15: representor %02x:%02x.%x\n", addr.bus, addr.device, addr.function);
			result = DOCA_SUCCESS;
		}
	}
	doca_devinfo_rep_list_destroy(reps);
	return result;
}

/* As 1.5's samples set up the Core objects: the map is started before it gets its
 * device and ranges. */
static doca_error_t init_core(struct core *c, uint32_t max_chunks)
{
	doca_error_t result;

	result = doca_mmap_create(NULL, &c->mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_create(NULL, max_chunks, DOCA_BUF_EXTENSION_NONE, &c->buf_inv);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_set_max_num_chunks(c->mmap, max_chunks);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_start(c->mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_dev_add(c->mmap, c->dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_start(c->buf_inv);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_dma_create(&c->dma);
	if (result != DOCA_SUCCESS)
		return result;
	c->ctx = doca_dma_as_ctx(c->dma);
	result = doca_ctx_dev_add(c->ctx, c->dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_ctx_start(c->ctx);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_workq_create(WORKQ_DEPTH, &c->workq);
	if (result != DOCA_SUCCESS)
		return result;
	return doca_ctx_workq_add(c->ctx, c->workq);
}

static void destroy_core(struct core *c)
{
	if (c->workq != NULL) {
		doca_ctx_workq_rm(c->ctx, c->workq);
		doca_workq_destroy(c->workq);
	}
	if (c->ctx != NULL) {
		doca_ctx_stop(c->ctx);
		doca_ctx_dev_rm(c->ctx, c->dev);
	}
	if (c->dma != NULL)
		doca_dma_destroy(c->dma);
	if (c->buf_inv != NULL)
		doca_buf_inventory_destroy(c->buf_inv);
	if (c->mmap != NULL) {
		doca_mmap_dev_rm(c->mmap, c->dev);
		doca_mmap_destroy(c->mmap);
	}
	if (c->dev != NULL)
		doca_dev_close(c->dev);
}

/* One memcpy job from src's data to dst, waited for. */
static doca_error_t dma_copy(struct core *c, struct doca_buf *dst, struct doca_buf *src)
{
	struct doca_dma_job_memcpy job;
	struct doca_event event;
	doca_error_t result;

	memset(&job, 0, sizeof(job));
	memset(&event, 0, sizeof(event));
	job.base.type = DOCA_DMA_JOB_MEMCPY;
	job.base.flags = DOCA_JOB_FLAGS_NONE;
	job.base.ctx = c->ctx;
	job.base.user_data.u64 = 0x15;
	job.dst_buff = dst;
	job.src_buff = src;
	result = doca_workq_submit(c->workq, &job.base);
	if (result != DOCA_SUCCESS)
		return result;
	while ((result = doca_workq_progress_retrieve(c->workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
	       DOCA_ERROR_AGAIN)
		;
	if (result != DOCA_SUCCESS)
		return result;
	if (event.user_data.u64 != 0x15)
		return DOCA_ERROR_UNEXPECTED;
	return (doca_error_t)event.result.u64;
}

static char *alloc_text(size_t len)
{
	char *p = NULL;

	if (posix_memalign((void **)&p, 4096, len) != 0)
		return NULL;
	memset(p, 0, len);
	return p;
}

static int fail(const char *what, doca_error_t result)
{
	fprintf(stderr, "dma15: %s: %s (%s)\n", what, doca_get_error_string(result), doca_get_error_name(result));
	return EXIT_FAILURE;
}

static int run_local(struct core *c, const char *text)
{
	size_t len = strlen(text) + 1;
	char *src = alloc_text(TEXT_MAX), *dst = alloc_text(TEXT_MAX), *extra = alloc_text(TEXT_MAX);
	struct doca_buf *src_buf = NULL, *dst_buf = NULL;
	uint32_t chunks = 0;
	uint8_t flag = 0;
	void *desc = NULL;
	size_t desc_len = 0;
	doca_error_t result;

	if (src == NULL || dst == NULL || extra == NULL)
		return fail("allocating", DOCA_ERROR_NO_MEMORY);
	memcpy(src, text, len);
	result = doca_mmap_populate(c->mmap, src, TEXT_MAX, 4096, range_freed, NULL);
	if (result != DOCA_SUCCESS)
		return fail("populating the source", result);
	result = doca_mmap_populate(c->mmap, dst, TEXT_MAX, 4096, range_freed, NULL);
	if (result != DOCA_SUCCESS)
		return fail("populating the destination", result);
	/* Two chunks were asked for: a third is refused, and the range stays the caller's. */
	result = doca_mmap_populate(c->mmap, extra, TEXT_MAX, 4096, NULL, NULL);
	printf("dma15: a third chunk: %s\n", doca_get_error_name(result));
	free(extra);
	if (doca_mmap_get_max_num_chunks(c->mmap, &chunks) == DOCA_SUCCESS)
		printf("dma15: max chunks %u\n", chunks);
	if (doca_devinfo_get_is_mmap_export_supported(doca_dev_as_devinfo(c->dev), &flag) == DOCA_SUCCESS)
		printf("dma15: export supported %u\n", flag);

	result = doca_buf_inventory_buf_by_addr(c->buf_inv, c->mmap, src, TEXT_MAX, &src_buf);
	if (result != DOCA_SUCCESS)
		return fail("taking the source buffer", result);
	result = doca_buf_inventory_buf_by_addr(c->buf_inv, c->mmap, dst, TEXT_MAX, &dst_buf);
	if (result != DOCA_SUCCESS)
		return fail("taking the destination buffer", result);
	result = doca_buf_set_data(src_buf, src, len);
	if (result != DOCA_SUCCESS)
		return fail("setting the source data", result);
	result = dma_copy(c, dst_buf, src_buf);
	if (result != DOCA_SUCCESS)
		return fail("the DMA job", result);
	printf("dma15: copied %zu bytes: %s\n", len - 1, dst);

	/*
	 * 1.5 writes an output buffer over the data it holds (the data length is ignored):
	 * the same destination takes a second, shorter copy at its start, and its data
	 * length becomes what was written.
	 */
	{
		size_t again = len / 2, dst_len = 0;

		memset(src, 'R', again - 1);
		src[again - 1] = '\0';
		result = doca_buf_set_data(src_buf, src, again);
		if (result == DOCA_SUCCESS)
			result = dma_copy(c, dst_buf, src_buf);
		if (result != DOCA_SUCCESS)
			return fail("a second copy into the same destination", result);
		result = doca_buf_get_data_len(dst_buf, &dst_len);
		if (result != DOCA_SUCCESS)
			return fail("reading the destination's data length", result);
		printf("dma15: copied again into the same destination: %zu bytes, data length %zu: %s\n",
		       again - 1, dst_len, dst);
		if (dst_len != again || memcmp(dst, src, again) != 0 || memcmp(dst + again, text + again, len - again) != 0)
			return fail("the second copy did not land over the first", DOCA_ERROR_UNEXPECTED);
	}

	/* The DPU side does not export (the host does). */
	result = doca_mmap_export(c->mmap, c->dev, &desc, &desc_len);
	printf("dma15: export on this side: %s\n", doca_get_error_name(result));

	doca_buf_refcount_rm(src_buf, NULL);
	doca_buf_refcount_rm(dst_buf, NULL);
	return EXIT_SUCCESS;
}

static int write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[1024], tmp[1040];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (f == NULL)
		return -1;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static size_t read_file(const char *dir, const char *name, char *data, size_t cap)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (f == NULL)
		return 0;
	n = fread(data, 1, cap, f);
	fclose(f);
	return n;
}

static int run_host(struct core *c, const char *dir)
{
	const char *text = "This is a sample piece of text";
	char *region = alloc_text(TEXT_MAX);
	char info[128], line[16];
	void *desc = NULL;
	size_t desc_len = 0;
	doca_error_t result;

	if (region == NULL)
		return fail("allocating", DOCA_ERROR_NO_MEMORY);
	strcpy(region, text);
	result = doca_mmap_populate(c->mmap, region, TEXT_MAX, 4096, range_freed, NULL);
	if (result != DOCA_SUCCESS)
		return fail("populating", result);
	result = doca_mmap_export(c->mmap, c->dev, &desc, &desc_len);
	if (result != DOCA_SUCCESS)
		return fail("exporting", result);
	/* A map is exported once. */
	{
		void *again = NULL;
		size_t again_len = 0;

		printf("dma15: second export: %s\n",
		       doca_get_error_name(doca_mmap_export(c->mmap, c->dev, &again, &again_len)));
	}
	snprintf(info, sizeof(info), "%llu %d\n", (unsigned long long)(uintptr_t)region, TEXT_MAX);
	if (write_file(dir, "desc15.bin", desc, desc_len) != 0 || write_file(dir, "buffer15.txt", info, strlen(info)) != 0)
		return fail("writing the descriptor files", DOCA_ERROR_IO_FAILED);
	free(desc);
	printf("dma15: exported %zu bytes of descriptor; press enter when the DPU is done\n", desc_len);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		line[0] = 0;
	printf("dma15: Memory content: %s\n", region);
	return EXIT_SUCCESS;
}

static int run_dpu(struct core *c, const char *dir, const char *reply)
{
	char desc[8192], info[128];
	unsigned long long addr = 0;
	size_t desc_len, len = 0;
	struct doca_mmap *remote = NULL;
	struct doca_buf *remote_buf = NULL, *local_buf = NULL;
	char *local = alloc_text(TEXT_MAX);
	doca_error_t result;

	desc_len = read_file(dir, "desc15.bin", desc, sizeof(desc));
	memset(info, 0, sizeof(info));
	if (desc_len == 0 || read_file(dir, "buffer15.txt", info, sizeof(info) - 1) == 0 ||
	    sscanf(info, "%llu %zu", &addr, &len) != 2 || len > TEXT_MAX || local == NULL)
		return fail("reading the host's files", DOCA_ERROR_INVALID_VALUE);
	result = doca_mmap_create_from_export(NULL, desc, desc_len, c->dev, &remote);
	if (result != DOCA_SUCCESS)
		return fail("Failed to create mmap from export", result);
	result = doca_mmap_populate(c->mmap, local, TEXT_MAX, 4096, range_freed, NULL);
	if (result != DOCA_SUCCESS)
		return fail("populating", result);
	result = doca_buf_inventory_buf_by_addr(c->buf_inv, remote, (void *)(uintptr_t)addr, len, &remote_buf);
	if (result != DOCA_SUCCESS)
		return fail("taking the remote buffer", result);
	result = doca_buf_inventory_buf_by_addr(c->buf_inv, c->mmap, local, TEXT_MAX, &local_buf);
	if (result != DOCA_SUCCESS)
		return fail("taking the local buffer", result);
	result = doca_buf_set_data(remote_buf, (void *)(uintptr_t)addr, len);
	if (result != DOCA_SUCCESS)
		return fail("setting the remote data", result);
	result = dma_copy(c, local_buf, remote_buf);
	if (result != DOCA_SUCCESS)
		return fail("reading the host's memory", result);
	printf("dma15: Memory content: %s\n", local);

	/* The reply: local data to the host's region. */
	doca_buf_refcount_rm(local_buf, NULL);
	doca_buf_refcount_rm(remote_buf, NULL);
	memset(local, 0, TEXT_MAX);
	strncpy(local, reply, TEXT_MAX - 1);
	result = doca_buf_inventory_buf_by_addr(c->buf_inv, c->mmap, local, TEXT_MAX, &local_buf);
	if (result == DOCA_SUCCESS)
		result = doca_buf_set_data(local_buf, local, strlen(local) + 1);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_by_addr(c->buf_inv, remote, (void *)(uintptr_t)addr, len, &remote_buf);
	if (result == DOCA_SUCCESS)
		result = dma_copy(c, remote_buf, local_buf);
	if (result != DOCA_SUCCESS)
		return fail("writing the reply", result);
	printf("dma15: wrote back into host memory\n");
	doca_buf_refcount_rm(local_buf, NULL);
	doca_buf_refcount_rm(remote_buf, NULL);
	doca_mmap_destroy(remote);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "local";
	const char *pci = strcmp(mode, "host") == 0 ? "b1:00.0" : "03:00.0";
	const char *rep = "b1:00.0", *text = "This is a sample piece of text", *dir = ".";
	const char *reply = "reply from the DPU";
	struct core c;
	struct doca_pci_bdf bdf;
	doca_error_t result;
	int i, rc;

	for (i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-p") == 0)
			pci = argv[i + 1];
		else if (strcmp(argv[i], "-r") == 0)
			rep = argv[i + 1];
		else if (strcmp(argv[i], "-t") == 0)
			text = argv[i + 1];
		else if (strcmp(argv[i], "-d") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "-w") == 0)
			reply = argv[i + 1];
	}
	printf("dma15: DOCA %s (headers %s)\n", doca_version_runtime(), DOCA_VER_STRING);
	memset(&c, 0, sizeof(c));
	result = parse_pci_addr(pci, &bdf);
	if (result != DOCA_SUCCESS)
		return fail("parsing the PCI address", result);
	result = open_device(&bdf, &c.dev);
	if (result != DOCA_SUCCESS) {
		fprintf(stderr, "dma15: No DMA device at %s\n", pci);
		return EXIT_FAILURE;
	}
	if (strcmp(mode, "dpu") == 0) {
		result = parse_pci_addr(rep, &bdf);
		if (result == DOCA_SUCCESS)
			result = find_representor(c.dev, &bdf);
		if (result != DOCA_SUCCESS)
			return fail("finding the representor", result);
	}
	result = init_core(&c, strcmp(mode, "host") == 0 ? 1 : 2);
	if (result != DOCA_SUCCESS)
		return fail("setting up the Core objects", result);
	if (strcmp(mode, "local") == 0)
		rc = run_local(&c, text);
	else if (strcmp(mode, "host") == 0)
		rc = run_host(&c, dir);
	else
		rc = run_dpu(&c, dir, reply);
	destroy_core(&c);
	printf("dma15: ranges freed %d\n", ranges_freed);
	return rc;
}
