/*
 * erasure_coding_recover: a DOCA 2.2 program in the shape of the DOCA samples, written
 * only against the DOCA headers. It encodes a file into data and redundancy blocks,
 * deletes some blocks, and recovers the file from what is left.
 *
 *   erasure_coding_recover -i FILE -o DIR [-b] [-x cauchy|vandermonde] [-t DATA] [-r RDNC] [-d 0,3]
 *       a file as input: encode it into DIR (with -b: then delete the -d blocks and decode)
 *   erasure_coding_recover -i DIR
 *       a directory as input: decode it (rebuild the missing blocks and DIR/recovered)
 *
 * DIR holds data_<i> and rdnc_<j> block files and a "meta" file. Like DOCA's own sample
 * it runs on the DPU and opens the device at 03:00.0 unless -p names another. Build it
 * like any DPU program: gcc ... $(pkg-config --cflags --libs doca-dpu), or meson
 * (dependency('doca')) with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig/dpu.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>

DOCA_LOG_REGISTER(EC_RECOVER);

#define MAX_BLOCKS 160
#define PATH_LEN 4096

struct ec_config {
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char input[PATH_LEN];
	char output[PATH_LEN];
	bool both;
	enum doca_ec_matrix_types matrix;
	int data_blocks;
	int rdnc_blocks;
	uint32_t deleted[MAX_BLOCKS];
	int n_deleted;
};

static doca_error_t pci_cb(void *param, void *config)
{
	snprintf(((struct ec_config *)config)->pci, DOCA_DEVINFO_PCI_ADDR_SIZE, "%s", (char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t input_cb(void *param, void *config)
{
	snprintf(((struct ec_config *)config)->input, PATH_LEN, "%s", (char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t output_cb(void *param, void *config)
{
	snprintf(((struct ec_config *)config)->output, PATH_LEN, "%s", (char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t both_cb(void *param, void *config)
{
	((struct ec_config *)config)->both = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t matrix_cb(void *param, void *config)
{
	const char *m = param;

	if (strcmp(m, "cauchy") == 0)
		((struct ec_config *)config)->matrix = DOCA_CODING_MATRIX_CAUCHY;
	else if (strcmp(m, "vandermonde") == 0)
		((struct ec_config *)config)->matrix = DOCA_CODING_MATRIX_VANDERMONDE;
	else {
		DOCA_LOG_ERR("matrix must be cauchy or vandermonde, not %s", m);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t data_cb(void *param, void *config)
{
	((struct ec_config *)config)->data_blocks = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t rdnc_cb(void *param, void *config)
{
	((struct ec_config *)config)->rdnc_blocks = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t delete_cb(void *param, void *config)
{
	struct ec_config *c = config;
	char *list = strdup(param), *save = NULL, *tok;

	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	c->n_deleted = 0;
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (c->n_deleted == MAX_BLOCKS) {
			free(list);
			return DOCA_ERROR_INVALID_VALUE;
		}
		c->deleted[c->n_deleted++] = (uint32_t)strtoul(tok, NULL, 10);
	}
	free(list);
	return DOCA_SUCCESS;
}

static doca_error_t validate(void *config)
{
	struct ec_config *c = config;

	if (c->input[0] == 0) {
		DOCA_LOG_ERR("an input (-i) is needed");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->data_blocks < 1 || c->rdnc_blocks < 1 || c->data_blocks + c->rdnc_blocks > MAX_BLOCKS) {
		DOCA_LOG_ERR("block counts out of range");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static void add_param(const char *s, const char *l, const char *args, const char *desc, callback_func cb,
		      enum doca_argp_type type)
{
	struct doca_argp_param *p;

	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		exit(1);
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	if (args)
		doca_argp_param_set_arguments(p, args);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (doca_argp_register_param(p) != DOCA_SUCCESS)
		exit(1);
}

/* The DOCA objects one EC job needs. */
struct ec_state {
	struct doca_dev *dev;
	struct doca_ec *ec;
	struct doca_ctx *ctx;
	struct doca_workq *workq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t mem_len;
};

static doca_error_t open_device(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n, i;
	doca_error_t r;

	r = doca_devinfo_list_create(&list, &n);
	if (r != DOCA_SUCCESS)
		return r;
	r = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		uint8_t eq = 1;

		if (pci[0] != 0 && (doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq) != DOCA_SUCCESS || !eq))
			continue;
		if (doca_ec_job_get_supported(list[i], DOCA_EC_JOB_CREATE) != DOCA_SUCCESS)
			continue;
		r = doca_dev_open(list[i], dev);
		break;
	}
	doca_devinfo_list_destroy(list);
	return r;
}

static doca_error_t state_init(struct ec_state *s, const char *pci, size_t mem_len)
{
	doca_error_t r;

	memset(s, 0, sizeof(*s));
	s->mem_len = mem_len;
	s->mem = aligned_alloc(64, mem_len);
	if (s->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	r = open_device(pci, &s->dev);
	if (r != DOCA_SUCCESS) {
		DOCA_LOG_ERR("no EC device%s%s: %s", pci[0] ? " at " : "", pci, doca_get_error_string(r));
		return r;
	}
	if ((r = doca_ec_create(&s->ec)) != DOCA_SUCCESS)
		return r;
	s->ctx = doca_ec_as_ctx(s->ec);
	if ((r = doca_ctx_dev_add(s->ctx, s->dev)) != DOCA_SUCCESS || (r = doca_ctx_start(s->ctx)) != DOCA_SUCCESS ||
	    (r = doca_workq_create(4, &s->workq)) != DOCA_SUCCESS ||
	    (r = doca_ctx_workq_add(s->ctx, s->workq)) != DOCA_SUCCESS)
		return r;
	if ((r = doca_mmap_create(NULL, &s->mmap)) != DOCA_SUCCESS ||
	    (r = doca_mmap_set_memrange(s->mmap, s->mem, mem_len)) != DOCA_SUCCESS ||
	    (r = doca_mmap_dev_add(s->mmap, s->dev)) != DOCA_SUCCESS || (r = doca_mmap_start(s->mmap)) != DOCA_SUCCESS)
		return r;
	if ((r = doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &s->inv)) != DOCA_SUCCESS ||
	    (r = doca_buf_inventory_start(s->inv)) != DOCA_SUCCESS)
		return r;
	return DOCA_SUCCESS;
}

static void state_destroy(struct ec_state *s)
{
	if (s->inv) {
		doca_buf_inventory_stop(s->inv);
		doca_buf_inventory_destroy(s->inv);
	}
	if (s->mmap) {
		doca_mmap_stop(s->mmap);
		doca_mmap_destroy(s->mmap);
	}
	if (s->workq) {
		doca_ctx_workq_rm(s->ctx, s->workq);
		doca_workq_destroy(s->workq);
	}
	if (s->ec) {
		doca_ctx_stop(s->ctx);
		if (s->dev)
			doca_ctx_dev_rm(s->ctx, s->dev);
		doca_ec_destroy(s->ec);
	}
	if (s->dev)
		doca_dev_close(s->dev);
	free(s->mem);
}

/* Runs one EC job: in_len bytes at mem in, out_len bytes of output at mem + in_len. */
static doca_error_t run_job(struct ec_state *s, int type, struct doca_matrix *m, size_t in_len, size_t out_len)
{
	struct doca_buf *src, *dst;
	struct doca_event ev = {0};
	doca_error_t r;
	struct doca_ec_job job = {
		.base = {.type = type, .flags = DOCA_JOB_FLAGS_NONE, .ctx = s->ctx},
		.coding_matrix = m,
	};

	r = doca_buf_inventory_buf_by_data(s->inv, s->mmap, s->mem, in_len, &src);
	if (r != DOCA_SUCCESS)
		return r;
	r = doca_buf_inventory_buf_by_addr(s->inv, s->mmap, s->mem + in_len, out_len, &dst);
	if (r != DOCA_SUCCESS) {
		doca_buf_refcount_rm(src, NULL);
		return r;
	}
	job.src_buff = src;
	job.dst_buff = dst;
	r = doca_workq_submit(s->workq, &job.base);
	if (r == DOCA_SUCCESS) {
		while ((r = doca_workq_progress_retrieve(s->workq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
		       DOCA_ERROR_AGAIN)
			usleep(1);
		if (r == DOCA_ERROR_IO_FAILED)
			r = (doca_error_t)ev.result.u64;
	}
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	return r;
}

static int write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[PATH_LEN + 64];
	FILE *f;
	size_t w;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	w = fwrite(p, 1, n, f);
	return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* Reads up to n bytes; returns the count, or -1 when the file does not exist. */
static long read_file(const char *path, uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL)
		return -1;
	got = fread(p, 1, n, f);
	fclose(f);
	return (long)got;
}

static doca_error_t encode(struct ec_config *c)
{
	struct ec_state s;
	struct doca_matrix *m = NULL;
	struct stat st;
	size_t block, data_len, rdnc_len;
	char name[64], meta[256];
	doca_error_t r;
	int i;

	if (stat(c->input, &st) != 0 || st.st_size == 0) {
		DOCA_LOG_ERR("cannot read %s", c->input);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Blocks are multiples of 64 bytes; the last data block is padded with zeros. */
	block = ((size_t)st.st_size + (size_t)c->data_blocks - 1) / (size_t)c->data_blocks;
	block = (block + 63) / 64 * 64;
	data_len = block * (size_t)c->data_blocks;
	rdnc_len = block * (size_t)c->rdnc_blocks;
	r = state_init(&s, c->pci, data_len + rdnc_len);
	if (r != DOCA_SUCCESS)
		goto out;
	memset(s.mem, 0, data_len);
	if (read_file(c->input, s.mem, (size_t)st.st_size) != (long)st.st_size) {
		r = DOCA_ERROR_IO_FAILED;
		goto out;
	}
	r = doca_ec_matrix_create(s.ec, c->matrix, (size_t)c->data_blocks, (size_t)c->rdnc_blocks, &m);
	if (r != DOCA_SUCCESS)
		goto out;
	r = run_job(&s, DOCA_EC_JOB_CREATE, m, data_len, rdnc_len);
	if (r != DOCA_SUCCESS)
		goto out;
	mkdir(c->output, 0755);
	for (i = 0; i < c->data_blocks + c->rdnc_blocks; i++) {
		if (i < c->data_blocks)
			snprintf(name, sizeof(name), "data_%d", i);
		else
			snprintf(name, sizeof(name), "rdnc_%d", i - c->data_blocks);
		if (write_file(c->output, name, s.mem + (size_t)i * block, block) != 0) {
			r = DOCA_ERROR_IO_FAILED;
			goto out;
		}
	}
	snprintf(meta, sizeof(meta), "%lld %zu %d %d %d\n", (long long)st.st_size, block, c->data_blocks,
		 c->rdnc_blocks, (int)c->matrix);
	if (write_file(c->output, "meta", (const uint8_t *)meta, strlen(meta)) != 0) {
		r = DOCA_ERROR_IO_FAILED;
		goto out;
	}
	DOCA_LOG_INFO("encoded %s: %d data + %d redundancy blocks of %zu bytes in %s", c->input, c->data_blocks,
		      c->rdnc_blocks, block, c->output);
out:
	if (m)
		doca_ec_matrix_destroy(m);
	state_destroy(&s);
	return r;
}

static void delete_blocks(struct ec_config *c)
{
	char path[PATH_LEN + 64];
	int i;

	for (i = 0; i < c->n_deleted; i++) {
		int b = (int)c->deleted[i];

		if (b < c->data_blocks)
			snprintf(path, sizeof(path), "%s/data_%d", c->output, b);
		else
			snprintf(path, sizeof(path), "%s/rdnc_%d", c->output, b - c->data_blocks);
		if (unlink(path) == 0)
			DOCA_LOG_INFO("deleted block %d", b);
	}
}

static doca_error_t decode(const char *dir, const char *pci)
{
	struct ec_state s = {0};
	struct doca_matrix *m = NULL, *rm = NULL;
	char path[PATH_LEN + 64], meta[256] = {0};
	long long size;
	size_t block;
	int k, rcount, type, i, n_missing = 0, have = 0;
	uint32_t missing[MAX_BLOCKS];
	uint8_t *blocks = NULL;
	doca_error_t r;

	snprintf(path, sizeof(path), "%s/meta", dir);
	if (read_file(path, (uint8_t *)meta, sizeof(meta) - 1) <= 0 ||
	    sscanf(meta, "%lld %zu %d %d %d", &size, &block, &k, &rcount, &type) != 5 || k < 1 || rcount < 1 ||
	    k + rcount > MAX_BLOCKS || block == 0 || block % 64 != 0) {
		DOCA_LOG_ERR("%s is not an encoded directory (its meta file is missing or damaged)", dir);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Every block, in index order; missing ones noted. */
	blocks = malloc(block * (size_t)(k + rcount));
	if (blocks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (i = 0; i < k + rcount; i++) {
		if (i < k)
			snprintf(path, sizeof(path), "%s/data_%d", dir, i);
		else
			snprintf(path, sizeof(path), "%s/rdnc_%d", dir, i - k);
		if (read_file(path, blocks + (size_t)i * block, block) != (long)block)
			missing[n_missing++] = (uint32_t)i;
		else
			have++;
	}
	if (have < k) {
		DOCA_LOG_ERR("only %d blocks are left; %d are needed", have, k);
		free(blocks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (n_missing > 0) {
		int j = 0;

		r = state_init(&s, pci, block * (size_t)(k + n_missing));
		if (r != DOCA_SUCCESS)
			goto out;
		/* The first k surviving blocks, in index order, are the source. */
		for (i = 0; i < k + rcount && j < k; i++) {
			int lost = 0, q;

			for (q = 0; q < n_missing; q++)
				lost |= missing[q] == (uint32_t)i;
			if (!lost)
				memcpy(s.mem + (size_t)(j++) * block, blocks + (size_t)i * block, block);
		}
		r = doca_ec_matrix_create(s.ec, (enum doca_ec_matrix_types)type, (size_t)k, (size_t)rcount, &m);
		if (r == DOCA_SUCCESS)
			r = doca_ec_recover_matrix_create(m, s.ec, missing, (size_t)n_missing, &rm);
		if (r == DOCA_SUCCESS)
			r = run_job(&s, DOCA_EC_JOB_RECOVER, rm, block * (size_t)k, block * (size_t)n_missing);
		if (r != DOCA_SUCCESS)
			goto out;
		for (i = 0; i < n_missing; i++) {
			char name[64];
			int b = (int)missing[i];

			memcpy(blocks + (size_t)b * block, s.mem + block * (size_t)(k + i), block);
			if (b < k)
				snprintf(name, sizeof(name), "data_%d", b);
			else
				snprintf(name, sizeof(name), "rdnc_%d", b - k);
			if (write_file(dir, name, blocks + (size_t)b * block, block) != 0) {
				r = DOCA_ERROR_IO_FAILED;
				goto out;
			}
			DOCA_LOG_INFO("recovered block %d", b);
		}
	}
	r = write_file(dir, "recovered", blocks, (size_t)size) == 0 ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
	if (r == DOCA_SUCCESS)
		DOCA_LOG_INFO("wrote %s/recovered (%lld bytes; %d block(s) rebuilt)", dir, size, n_missing);
out:
	if (rm)
		doca_ec_matrix_destroy(rm);
	if (m)
		doca_ec_matrix_destroy(m);
	if (s.mem)
		state_destroy(&s);
	free(blocks);
	return r;
}

int main(int argc, char **argv)
{
	struct ec_config cfg = {
		.pci = "03:00.0",
		.output = "/tmp/ec_recover",
		.matrix = DOCA_CODING_MATRIX_CAUCHY,
		.data_blocks = 2,
		.rdnc_blocks = 2,
		.deleted = {0},
		.n_deleted = 1,
	};
	struct stat st;
	doca_error_t r;

	doca_log_create_standard_backend();
	r = doca_argp_init("erasure_coding_recover", &cfg);
	if (r != DOCA_SUCCESS)
		return EXIT_FAILURE;
	add_param("p", "pci-addr", "<PCI-ADDRESS>", "DOCA device PCI address - default: 03:00.0", pci_cb,
		  DOCA_ARGP_TYPE_STRING);
	add_param("i", "input", "<path>", "Input file to encode, or encoded directory to decode", input_cb,
		  DOCA_ARGP_TYPE_STRING);
	add_param("o", "output", "<dir>", "Output directory for the blocks - default: /tmp/ec_recover", output_cb,
		  DOCA_ARGP_TYPE_STRING);
	add_param("b", "both", NULL, "Encode, delete and decode in one run", both_cb, DOCA_ARGP_TYPE_BOOLEAN);
	add_param("x", "matrix", "<type>", "Matrix - {cauchy, vandermonde} - default: cauchy", matrix_cb,
		  DOCA_ARGP_TYPE_STRING);
	add_param("t", "data", "<n>", "Data block count - default: 2", data_cb, DOCA_ARGP_TYPE_INT);
	add_param("r", "rdnc", "<n>", "Redundancy block count - default: 2", rdnc_cb, DOCA_ARGP_TYPE_INT);
	add_param("d", "delete_index", "<list>", "Indices of blocks to delete, comma separated - default: 0",
		  delete_cb, DOCA_ARGP_TYPE_STRING);
	doca_argp_register_validation_callback(validate);
	r = doca_argp_start(argc, argv);
	if (r != DOCA_SUCCESS) {
		DOCA_LOG_ERR("bad arguments: %s", doca_get_error_string(r));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	if (stat(cfg.input, &st) == 0 && S_ISDIR(st.st_mode)) {
		r = decode(cfg.input, cfg.pci);
	} else {
		r = encode(&cfg);
		if (r == DOCA_SUCCESS && cfg.both) {
			delete_blocks(&cfg);
			r = decode(cfg.output, cfg.pci);
		}
	}
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("erasure_coding_recover failed: %s", doca_get_error_string(r));
	doca_argp_destroy();
	return r == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
