/*
 * What the two sides of a pair test tell each other: files in a directory both see, as
 * a user copies descriptors between machines. Include after a header that defines
 * ASSERT; `dir` is set by main.
 */
#ifndef DOCA_CAPI_TEST_PAIR_FILES_H_
#define DOCA_CAPI_TEST_PAIR_FILES_H_

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static const char *dir;

static inline void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* Writes a file whole (a temporary name first, so that the reader never sees half). */
static inline void put_file(const char *name, const void *data, size_t len)
{
	char p[512], tmp[520];
	FILE *f;

	path_of(p, sizeof(p), name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "wb");
	ASSERT(f != NULL);
	ASSERT(fwrite(data, 1, len, f) == len);
	ASSERT(fclose(f) == 0);
	ASSERT(rename(tmp, p) == 0);
}

/* Waits (at most 30 s) for a file, and reads it. */
static inline size_t get_file(const char *name, void *out, size_t cap)
{
	char p[512];
	FILE *f = NULL;
	size_t n;
	int i;

	path_of(p, sizeof(p), name);
	for (i = 0; i < 30000 && f == NULL; i++) {
		f = fopen(p, "rb");
		if (f == NULL)
			usleep(1000);
	}
	ASSERT(f != NULL);
	n = fread(out, 1, cap, f);
	fclose(f);
	return n;
}

/* The bytes the pairs write and check. */
static inline uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

#endif
