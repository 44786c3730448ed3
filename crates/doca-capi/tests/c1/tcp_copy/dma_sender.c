/*
 * tcp_copy's host side, a DOCA 1.x program: maps a buffer holding some text, exports the
 * map for the DPU, sends the export descriptor (JSON text, strlen() + 1 bytes after its
 * length) to the receiver over TCP, waits for the receiver's answer and prints what the
 * buffer holds then (the receiver writes its reply into it by DMA).
 *
 *   dma_sender PORT [PCI_ADDR] [TEXT]        (PCI_ADDR default 3b:00.0)
 */
#include <stdlib.h>

#include <doca_buf_inventory.h>

#include "tcp_copy.h"

int main(int argc, char **argv)
{
	const char *pci = argc > 2 ? argv[2] : "3b:00.0";
	const char *text = argc > 3 ? argv[3] : "Hello from the host over TCP";
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	uint8_t *desc = NULL;
	size_t desc_len = 0;
	uint32_t wire_len;
	char *buffer;
	char ack = 0;
	int fd = -1, rc = EXIT_FAILURE;
	doca_error_t result;

	if (argc < 2 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535 || strlen(text) >= TCP_COPY_BUF) {
		fprintf(stderr, "usage: %s PORT [PCI_ADDR] [TEXT]\n", argv[0]);
		return EXIT_FAILURE;
	}
	buffer = (char *)aligned_alloc(4096, TCP_COPY_BUF);
	if (buffer == NULL)
		return EXIT_FAILURE;
	memset(buffer, 0, TCP_COPY_BUF);
	strcpy(buffer, text);
	result = tcp_copy_open_device(pci, &dev);
	if (result != DOCA_SUCCESS) {
		fprintf(stderr, "no device at %s: %s\n", pci, doca_get_error_string(result));
		free(buffer);
		return EXIT_FAILURE;
	}
	/* Only doca_buf_inventory.h is included: in 1.x it reaches the memory map's calls. */
	result = doca_mmap_create("sender_mmap", &mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_dev_add(mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_populate(mmap, buffer, TCP_COPY_BUF, 4096, NULL, NULL);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_export(mmap, dev, &desc, &desc_len);
	if (result != DOCA_SUCCESS) {
		fprintf(stderr, "exporting the memory map failed: %s\n", doca_get_error_string(result));
		goto out;
	}
	fd = tcp_copy_connect((uint16_t)atoi(argv[1]));
	if (fd < 0) {
		fprintf(stderr, "cannot reach the receiver on port %s\n", argv[1]);
		goto out;
	}
	wire_len = htonl((uint32_t)(strlen((const char *)desc) + 1));
	if (tcp_copy_send_all(fd, &wire_len, sizeof(wire_len)) != 0 ||
	    tcp_copy_send_all(fd, desc, strlen((const char *)desc) + 1) != 0) {
		fprintf(stderr, "sending the export descriptor failed\n");
		goto out;
	}
	printf("sender: sent a %zu-byte export descriptor\n", strlen((const char *)desc) + 1);
	if (tcp_copy_recv_all(fd, &ack, 1) != 0 || ack != 'K') {
		fprintf(stderr, "the receiver did not finish\n");
		goto out;
	}
	printf("sender: buffer now holds: %s\n", buffer);
	rc = EXIT_SUCCESS;
out:
	if (fd >= 0)
		close(fd);
	free(desc);
	if (mmap != NULL) {
		doca_mmap_dev_rm(mmap, dev);
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	doca_dev_close(dev);
	free(buffer);
	return rc;
}
