/* Loads libisal.so.2 the way Hadoop's native erasure coder does (dlopen by name, then
 * dlsym of the functions it needs, with its own prototypes and no ISA-L header),
 * and runs Hadoop's Reed-Solomon scheme: a Cauchy matrix, encode, then decode with data
 * and parity units erased (the decode matrix from the surviving rows, inverted), and
 * an incremental encode through ec_encode_data_update. Buffers and tables follow ISA-L's
 * contract: units 64-byte aligned (gf_vect_mul needs 32), tables made by the library's
 * own init functions (their layout depends on the CPU).
 *
 *   hadoop_coder [EXPECTED_LIBRARY_PATH]
 *
 * Prints the path of the library it loaded; exits 1 on any mismatch, or when the
 * loaded library is not the expected one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char (*gf_mul_fn)(unsigned char, unsigned char);
typedef unsigned char (*gf_inv_fn)(unsigned char);
typedef void (*gf_gen_matrix_fn)(unsigned char *, int, int);
typedef int (*gf_invert_matrix_fn)(unsigned char *, unsigned char *, const int);
typedef int (*gf_vect_mul_fn)(int, unsigned char *, void *, void *);
typedef void (*gf_vect_mul_init_fn)(unsigned char, unsigned char *);
typedef void (*ec_init_tables_fn)(int, int, unsigned char *, unsigned char *);
typedef void (*ec_encode_data_fn)(int, int, int, unsigned char *, unsigned char **, unsigned char **);
typedef void (*ec_encode_data_update_fn)(int, int, int, int, unsigned char *, unsigned char *,
                                         unsigned char **);

static struct {
    gf_mul_fn gf_mul;
    gf_inv_fn gf_inv;
    gf_gen_matrix_fn gf_gen_rs_matrix;
    gf_gen_matrix_fn gf_gen_cauchy_matrix;
    gf_invert_matrix_fn gf_invert_matrix;
    gf_vect_mul_fn gf_vect_mul;
    gf_vect_mul_init_fn gf_vect_mul_init;
    ec_init_tables_fn ec_init_tables;
    ec_encode_data_fn ec_encode_data;
    ec_encode_data_update_fn ec_encode_data_update;
} isal;

#define MAX_UNITS 32
#define CHUNK 65536 + 96 /* not a multiple of 64: the kernels' tails run too */

static int load(void *lib, void **slot, const char *name)
{
    dlerror();
    *slot = dlsym(lib, name);
    if (*slot == NULL) {
        fprintf(stderr, "symbol %s not found: %s\n", name, dlerror());
        return -1;
    }
    return 0;
}

static unsigned rnd_state = 12345;
static unsigned char rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (unsigned char)(rnd_state >> 16);
}

/* Hadoop's decoder: rows of the encode matrix for the valid units, inverted; a row of
 * the inverse per erased data unit, and the products with the encode rows per erased
 * parity unit. */
static int decode(int k, int m, const unsigned char *encode_matrix, unsigned char **units,
                  const int *erased, int n_erased, unsigned char **outputs, int len)
{
    unsigned char tmp[MAX_UNITS * MAX_UNITS], inverse[MAX_UNITS * MAX_UNITS];
    unsigned char decode_matrix[MAX_UNITS * MAX_UNITS];
    unsigned char tables[MAX_UNITS * MAX_UNITS * 32];
    unsigned char *inputs[MAX_UNITS];
    int valid[MAX_UNITS], n_valid = 0;

    for (int i = 0; i < k + m && n_valid < k; i++) {
        int gone = 0;
        for (int e = 0; e < n_erased; e++)
            gone |= erased[e] == i;
        if (!gone)
            valid[n_valid++] = i;
    }
    if (n_valid < k)
        return -1;
    for (int i = 0; i < k; i++) {
        inputs[i] = units[valid[i]];
        memcpy(&tmp[k * i], &encode_matrix[k * valid[i]], (size_t)k);
    }
    if (isal.gf_invert_matrix(tmp, inverse, k) != 0)
        return -1;
    for (int e = 0; e < n_erased; e++) {
        if (erased[e] < k) {
            memcpy(&decode_matrix[k * e], &inverse[k * erased[e]], (size_t)k);
        } else {
            for (int i = 0; i < k; i++) {
                unsigned char s = 0;
                for (int j = 0; j < k; j++)
                    s ^= isal.gf_mul(inverse[j * k + i], encode_matrix[k * erased[e] + j]);
                decode_matrix[k * e + i] = s;
            }
        }
    }
    isal.ec_init_tables(k, n_erased, decode_matrix, tables);
    isal.ec_encode_data(len, k, n_erased, tables, inputs, outputs);
    return 0;
}

static int run(int k, int m, int len)
{
    unsigned char encode_matrix[MAX_UNITS * MAX_UNITS];
    unsigned char tables[MAX_UNITS * MAX_UNITS * 32];
    unsigned char *units[MAX_UNITS], *updated[MAX_UNITS], *outputs[MAX_UNITS];
    int failures = 0;

    isal.gf_gen_cauchy_matrix(encode_matrix, k + m, k);
    isal.ec_init_tables(k, m, &encode_matrix[k * k], tables);
    for (int i = 0; i < k + m; i++) {
        units[i] = updated[i] = outputs[i] = NULL;
        if (posix_memalign((void **)&units[i], 64, (size_t)len) != 0 ||
            posix_memalign((void **)&updated[i], 64, (size_t)len) != 0 ||
            posix_memalign((void **)&outputs[i], 64, (size_t)len) != 0)
            return 1;
        memset(updated[i], 0, (size_t)len);
        if (i < k)
            for (int b = 0; b < len; b++)
                units[i][b] = rnd();
    }
    isal.ec_encode_data(len, k, m, tables, units, &units[k]);

    /* The same parity one data unit at a time. */
    for (int i = 0; i < k; i++)
        isal.ec_encode_data_update(len, k, m, i, tables, units[i], &updated[k]);
    for (int p = k; p < k + m; p++)
        if (memcmp(units[p], updated[p], (size_t)len) != 0) {
            fprintf(stderr, "%d+%d: incremental parity %d differs\n", k, m, p);
            failures++;
        }

    /* Erase every pattern of one unit, and random patterns of up to m units. */
    for (int trial = 0; trial < k + m + 8; trial++) {
        int erased[MAX_UNITS], n = trial < k + m ? 1 : 1 + rnd() % m;
        if (trial < k + m) {
            erased[0] = trial;
        } else {
            for (int e = 0; e < n;) {
                int u = rnd() % (k + m), dup = 0;
                for (int f = 0; f < e; f++)
                    dup |= erased[f] == u;
                if (!dup)
                    erased[e++] = u;
            }
        }
        if (decode(k, m, encode_matrix, units, erased, n, outputs, len) != 0) {
            fprintf(stderr, "%d+%d: decode failed\n", k, m);
            failures++;
            continue;
        }
        for (int e = 0; e < n; e++)
            if (memcmp(outputs[e], units[erased[e]], (size_t)len) != 0) {
                fprintf(stderr, "%d+%d: unit %d decoded wrong\n", k, m, erased[e]);
                failures++;
            }
    }

    /* gf_vect_mul by c, then by 1/c, gives the unit back. */
    unsigned char t[32], u[32];
    int whole = len & ~31;
    unsigned char c = (unsigned char)(2 + k);
    isal.gf_vect_mul_init(c, t);
    isal.gf_vect_mul_init(isal.gf_inv(c), u);
    if (isal.gf_vect_mul(whole, t, units[0], outputs[0]) != 0 ||
        isal.gf_vect_mul(whole, u, outputs[0], outputs[0]) != 0 ||
        memcmp(outputs[0], units[0], (size_t)whole) != 0) {
        fprintf(stderr, "%d+%d: gf_vect_mul round trip failed\n", k, m);
        failures++;
    }
    for (int i = 0; i < k + m; i++) {
        free(units[i]);
        free(updated[i]);
        free(outputs[i]);
    }
    return failures;
}

int main(int argc, char **argv)
{
    void *lib = dlopen("libisal.so.2", RTLD_LAZY | RTLD_GLOBAL);
    if (lib == NULL) {
        fprintf(stderr, "dlopen libisal.so.2: %s\n", dlerror());
        return 1;
    }
    if (load(lib, (void **)&isal.gf_mul, "gf_mul") || load(lib, (void **)&isal.gf_inv, "gf_inv") ||
        load(lib, (void **)&isal.gf_gen_rs_matrix, "gf_gen_rs_matrix") ||
        load(lib, (void **)&isal.gf_gen_cauchy_matrix, "gf_gen_cauchy1_matrix") ||
        load(lib, (void **)&isal.gf_invert_matrix, "gf_invert_matrix") ||
        load(lib, (void **)&isal.gf_vect_mul, "gf_vect_mul") ||
        load(lib, (void **)&isal.gf_vect_mul_init, "gf_vect_mul_init") ||
        load(lib, (void **)&isal.ec_init_tables, "ec_init_tables") ||
        load(lib, (void **)&isal.ec_encode_data, "ec_encode_data") ||
        load(lib, (void **)&isal.ec_encode_data_update, "ec_encode_data_update"))
        return 1;

    Dl_info info;
    if (dladdr((void *)isal.ec_encode_data, &info) == 0 || info.dli_fname == NULL) {
        fprintf(stderr, "dladdr failed\n");
        return 1;
    }
    char *loaded = realpath(info.dli_fname, NULL);
    printf("loaded %s\n", loaded ? loaded : info.dli_fname);
    if (argc > 1) {
        char *expected = realpath(argv[1], NULL);
        if (!loaded || !expected || strcmp(loaded, expected) != 0) {
            fprintf(stderr, "loaded %s, expected %s\n", loaded ? loaded : "?", argv[1]);
            return 1;
        }
        free(expected);
    }
    free(loaded);

    /* Hadoop's default schemes (RS-6-3, RS-10-4, RS-3-2) and a wide one. */
    static const int shapes[][2] = {{6, 3}, {10, 4}, {3, 2}, {12, 12}};
    int failures = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        failures += run(shapes[s][0], shapes[s][1], CHUNK);
    /* The Vandermonde generator is loaded but, as in Hadoop, not used for coding. */
    unsigned char rs[4 * 2];
    isal.gf_gen_rs_matrix(rs, 4, 2);
    if (rs[0] != 1 || rs[3] != 1 || rs[4] != 1) {
        fprintf(stderr, "gf_gen_rs_matrix: unexpected matrix\n");
        failures++;
    }
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
