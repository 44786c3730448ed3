/*
 * The memory of the RDMA permission matrix (rdma_perms22.c, rdma_perms3.c): eight
 * regions, one per combination of RDMA read (bit 0), write (bit 1) and atomic (bit 2),
 * and what each holds before a round and after it. Include after a header that defines
 * ASSERT, and after pair_files.h.
 */
#ifndef DOCA_CAPI_TEST_PERM_MATRIX_H_
#define DOCA_CAPI_TEST_PERM_MATRIX_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define REGIONS 8 /* every combination of read, write, atomic */
#define REGION 4096
#define WRITE_LEN 64 /* written at a region's start, read at READ_AT */
#define READ_AT 2048
#define ATOMIC_AT 1024
#define SWAPPED 7777 /* what the compare-and-swap leaves */
#define UNTOUCHED 0x5a

/* What the requester reads from region m in round c. */
static inline uint8_t read_byte(int c, int m, size_t i)
{
	return (uint8_t)(c * 31 + m * 7 + i);
}

/* The atomic word of region m before round c. */
static inline uint64_t word_start(int c, int m)
{
	return 1000 + (uint64_t)c * 100 + (uint64_t)m;
}

/* The responder's memory before round c. */
static inline void fill(uint8_t *mem, int c)
{
	int m;
	size_t i;
	uint64_t w;

	for (m = 0; m < REGIONS; m++) {
		uint8_t *r = mem + (size_t)m * REGION;

		memset(r, UNTOUCHED, REGION);
		for (i = 0; i < WRITE_LEN; i++)
			r[READ_AT + i] = read_byte(c, m, i);
		w = word_start(c, m);
		memcpy(r + ATOMIC_AT, &w, 8);
	}
}

/* After round c (its context granting c's flags): every byte of every region is what
 * both layers allowed, and nothing else changed. */
static inline void check_round(const uint8_t *mem, int c)
{
	int m;
	size_t i;
	uint64_t v;

	for (m = 0; m < REGIONS; m++) {
		const uint8_t *r = mem + (size_t)m * REGION;
		int write_ok = (c & 2) && (m & 2), atomic_ok = (c & 4) && (m & 4);

		for (i = 0; i < REGION; i++) {
			if (i < WRITE_LEN)
				ASSERT(r[i] == (write_ok ? pattern(i) : UNTOUCHED));
			else if (i >= READ_AT && i < READ_AT + WRITE_LEN)
				ASSERT(r[i] == read_byte(c, m, i - READ_AT));
			else if (i < ATOMIC_AT || i >= ATOMIC_AT + 8)
				ASSERT(r[i] == UNTOUCHED);
		}
		memcpy(&v, r + ATOMIC_AT, 8);
		ASSERT(v == (atomic_ok ? SWAPPED : word_start(c, m)));
	}
}

/* The name of a file of round (or region) c. */
static inline void name(char *out, size_t n, const char *what, int c)
{
	snprintf(out, n, "%s_%d", what, c);
}

#endif
