/*
 * tcp_copy's DPU side, a DOCA 1.x program in C++17: listens on TCP, takes the host's
 * export descriptor (JSON text: its "addr" and "len" name the exported range), creates
 * a memory map from it, copies the host's buffer into local memory with a DMA job,
 * prints it, writes a reply back into the host's buffer and answers the sender.
 *
 *   dma_receiver PORT [PCI_ADDR] [REPLY]       (PCI_ADDR default 03:00.0)
 */
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <json-c/json.h>

#include <doca_buf_inventory.h>
#include <doca_dma.h>

#include "tcp_copy.h"

namespace {

struct Dma {
	doca_dev *dev = nullptr;
	doca_mmap *remote = nullptr;
	doca_mmap *local = nullptr;
	doca_buf_inventory *inv = nullptr;
	doca_dma *dma = nullptr;
	doca_ctx *ctx = nullptr;
	doca_workq *wq = nullptr;
	doca_buf *remote_buf = nullptr;
	doca_buf *local_buf = nullptr;

	~Dma()
	{
		if (wq != nullptr) {
			doca_ctx_workq_rm(ctx, wq);
			doca_workq_destroy(wq);
		}
		if (ctx != nullptr) {
			doca_ctx_stop(ctx);
			doca_ctx_dev_rm(ctx, dev);
		}
		if (dma != nullptr)
			doca_dma_destroy(dma);
		if (remote_buf != nullptr)
			doca_buf_refcount_rm(remote_buf, nullptr);
		if (local_buf != nullptr)
			doca_buf_refcount_rm(local_buf, nullptr);
		if (inv != nullptr) {
			doca_buf_inventory_stop(inv);
			doca_buf_inventory_destroy(inv);
		}
		if (local != nullptr) {
			doca_mmap_dev_rm(local, dev);
			doca_mmap_stop(local);
			doca_mmap_destroy(local);
		}
		if (remote != nullptr)
			doca_mmap_destroy(remote);
		if (dev != nullptr)
			doca_dev_close(dev);
	}

	/* One memcpy job of n bytes, waited for. */
	doca_error_t copy(doca_buf *src, doca_buf *dst, size_t n)
	{
		doca_dma_job_memcpy job{};
		doca_event ev{};
		doca_error_t r;

		job.base.type = DOCA_DMA_JOB_MEMCPY;
		job.base.flags = DOCA_JOB_FLAGS_NONE;
		job.base.ctx = ctx;
		job.dst_buff = dst;
		job.src_buff = src;
		job.num_bytes_to_copy = n;
		r = doca_workq_submit(wq, &job.base);
		if (r != DOCA_SUCCESS)
			return r;
		while ((r = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
			;
		if (r == DOCA_ERROR_IO_FAILED)
			r = static_cast<doca_error_t>(ev.result.u64);
		return r;
	}
};

int fail(const char *what, doca_error_t r)
{
	std::fprintf(stderr, "receiver: %s: %s\n", what, doca_get_error_string(r));
	return EXIT_FAILURE;
}

/* Listens on 127.0.0.1:port and takes one connection. */
int accept_one(uint16_t port)
{
	sockaddr_in a{};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0), c;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(fd, 1) != 0) {
		close(fd);
		return -1;
	}
	std::printf("receiver: listening on port %u\n", port);
	std::fflush(stdout);
	c = accept(fd, nullptr, nullptr);
	close(fd);
	return c;
}

} // namespace

int main(int argc, char **argv)
{
	const char *pci = argc > 2 ? argv[2] : "03:00.0";
	std::string reply = argc > 3 ? argv[3] : "Hello back from the DPU";
	std::vector<char> local(TCP_COPY_BUF, 0);
	uint32_t wire_len = 0;
	Dma d;
	doca_error_t r;

	if (argc < 2 || std::atoi(argv[1]) <= 0 || std::atoi(argv[1]) > 65535 || reply.size() >= TCP_COPY_BUF) {
		std::fprintf(stderr, "usage: %s PORT [PCI_ADDR] [REPLY]\n", argv[0]);
		return EXIT_FAILURE;
	}
	int fd = accept_one(static_cast<uint16_t>(std::atoi(argv[1])));
	if (fd < 0) {
		std::perror("receiver: listening");
		return EXIT_FAILURE;
	}
	if (tcp_copy_recv_all(fd, &wire_len, sizeof(wire_len)) != 0 || ntohl(wire_len) == 0 ||
	    ntohl(wire_len) > 65536) {
		std::fprintf(stderr, "receiver: no export descriptor came\n");
		close(fd);
		return EXIT_FAILURE;
	}
	std::vector<uint8_t> desc(ntohl(wire_len) + 1, 0);
	if (tcp_copy_recv_all(fd, desc.data(), ntohl(wire_len)) != 0) {
		std::fprintf(stderr, "receiver: the export descriptor was cut short\n");
		close(fd);
		return EXIT_FAILURE;
	}
	const char *text = reinterpret_cast<const char *>(desc.data());
	json_object *root = json_tokener_parse(text), *jaddr = nullptr, *jlen = nullptr;
	if (root == nullptr || !json_object_object_get_ex(root, "addr", &jaddr) ||
	    !json_object_object_get_ex(root, "len", &jlen)) {
		std::fprintf(stderr, "receiver: the export descriptor is not JSON with addr and len\n");
		json_object_put(root);
		close(fd);
		return EXIT_FAILURE;
	}
	uint64_t host_addr = static_cast<uint64_t>(json_object_get_int64(jaddr));
	size_t host_len = static_cast<size_t>(json_object_get_int64(jlen));
	json_object_put(root);
	std::printf("receiver: the host exported %zu bytes at 0x%" PRIx64 "\n", host_len, host_addr);
	if (host_len == 0 || host_len > TCP_COPY_BUF) {
		std::fprintf(stderr, "receiver: unexpected exported length %zu\n", host_len);
		close(fd);
		return EXIT_FAILURE;
	}
	uint32_t chunks = 1;
	r = tcp_copy_open_device(pci, &d.dev);
	if (r != DOCA_SUCCESS)
		return fail("opening the device", r);
	r = doca_mmap_create_from_export("remote_mmap", desc.data(), std::strlen(text) + 1, d.dev, &d.remote);
	if (r != DOCA_SUCCESS)
		return fail("creating a memory map from the export", r);
	r = doca_mmap_create("local_mmap", &d.local);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_property_set(d.local, DOCA_MMAP_MAX_NUM_CHUNKS, reinterpret_cast<const uint8_t *>(&chunks),
					   sizeof(chunks));
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(d.local);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_dev_add(d.local, d.dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_populate(d.local, local.data(), local.size(), 4096, nullptr, nullptr);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_create("receiver_inventory", 2, DOCA_BUF_EXTENSION_NONE, &d.inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(d.inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_buf_by_addr(d.inv, d.remote, reinterpret_cast<void *>(host_addr), host_len,
						   &d.remote_buf);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_buf_by_addr(d.inv, d.local, local.data(), local.size(), &d.local_buf);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&d.dma);
	if (r == DOCA_SUCCESS) {
		d.ctx = doca_dma_as_ctx(d.dma);
		r = doca_ctx_dev_add(d.ctx, d.dev);
		if (r != DOCA_SUCCESS)
			d.ctx = nullptr;
	}
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(d.ctx);
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(8, &d.wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(d.ctx, d.wq);
	if (r != DOCA_SUCCESS)
		return fail("setting up the DMA", r);
	r = d.copy(d.remote_buf, d.local_buf, host_len);
	if (r != DOCA_SUCCESS)
		return fail("DMA from the host", r);
	local[TCP_COPY_BUF - 1] = 0;
	std::printf("receiver: received: %s\n", local.data());
	std::fill(local.begin(), local.end(), 0);
	std::copy(reply.begin(), reply.end(), local.begin());
	r = d.copy(d.local_buf, d.remote_buf, reply.size() + 1);
	if (r != DOCA_SUCCESS)
		return fail("DMA into the host", r);
	char ack = 'K';
	if (tcp_copy_send_all(fd, &ack, 1) != 0) {
		std::fprintf(stderr, "receiver: the sender went away\n");
		close(fd);
		return EXIT_FAILURE;
	}
	close(fd);
	std::printf("receiver: done\n");
	return EXIT_SUCCESS;
}
