/*
 * What the two programs of tcp_copy share: opening a device by its PCI address (the
 * 1.x way: a property of the device information), and whole reads and writes of a TCP
 * socket. Plain C, included from C and C++.
 */
#ifndef TCP_COPY_H_
#define TCP_COPY_H_

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_error.h>

#define TCP_COPY_BUF 4096 /* Bytes each side maps. */

/* Opens the local device whose PCI address is "BB:DD.F". */
static inline doca_error_t tcp_copy_open_device(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	struct doca_pci_bdf want, addr;
	unsigned int bus, device, function;
	uint32_t n = 0, i;
	doca_error_t result;

	if (sscanf(pci, "%x:%x.%x", &bus, &device, &function) != 3)
		return DOCA_ERROR_INVALID_VALUE;
	want.raw = 0;
	want.bus = bus;
	want.device = device;
	want.function = function;
	result = doca_devinfo_list_create(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_property_get(list[i], DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&addr,
					      sizeof(addr)) == DOCA_SUCCESS &&
		    addr.raw == want.raw) {
			result = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_list_destroy(list);
	return result;
}

/* Writes all n bytes; 0 on success. */
static inline int tcp_copy_send_all(int fd, const void *p, size_t n)
{
	const char *c = (const char *)p;

	while (n > 0) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads exactly n bytes; 0 on success, -1 on an error or an early end. */
static inline int tcp_copy_recv_all(int fd, void *p, size_t n)
{
	char *c = (char *)p;

	while (n > 0) {
		ssize_t k = recv(fd, c, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Connects to 127.0.0.1:port, trying for up to 20 s while nobody listens yet. */
static inline int tcp_copy_connect(uint16_t port)
{
	struct sockaddr_in a;
	struct timespec pause = {0, 20 * 1000 * 1000};
	int tries;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (tries = 0; tries < 1000; tries++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		close(fd);
		nanosleep(&pause, NULL);
	}
	return -1;
}

#endif
