/* XOR (RAID 5) and P+Q (RAID 6) parity (ISA-L's raid.h). array holds vects buffer
 * pointers of len bytes each; the parity buffers come last. */
#ifndef _RAID_H_
#define _RAID_H_

#ifdef __cplusplus
extern "C" {
#endif

/* array[vects - 1] = XOR of array[0 .. vects - 2]. vects >= 3. Returns 0 on success. */
int xor_gen(int vects, int len, void **array);
/* 0 when the XOR of all vects buffers is zero, else 1. vects >= 2. */
int xor_check(int vects, int len, void **array);
/* P into array[vects - 2], Q into array[vects - 1]. vects >= 4; len a multiple of 32
 * (16 for the _sse and _avx names). Returns 0 on success. */
int pq_gen(int vects, int len, void **array);
/* 0 when P and Q match, else nonzero. len a multiple of 16. */
int pq_check(int vects, int len, void **array);

int xor_gen_sse(int vects, int len, void **array);
int xor_gen_avx(int vects, int len, void **array);
int xor_gen_avx512(int vects, int len, void **array);
int xor_gen_base(int vects, int len, void **array);
int xor_check_sse(int vects, int len, void **array);
int xor_check_base(int vects, int len, void **array);
int pq_gen_sse(int vects, int len, void **array);
int pq_gen_avx(int vects, int len, void **array);
int pq_gen_avx2(int vects, int len, void **array);
int pq_gen_avx512(int vects, int len, void **array);
int pq_gen_base(int vects, int len, void **array);
int pq_check_sse(int vects, int len, void **array);
int pq_check_base(int vects, int len, void **array);

#ifdef __cplusplus
}
#endif
#endif
