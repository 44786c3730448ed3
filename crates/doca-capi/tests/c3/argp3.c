/*
 * doca_argp as DOCA 2.5-3.x programs use it: a parameter with a short name of two
 * letters (-nd), a string one, the standard flags of this generation (--sdk-log-level
 * among them) and -j files with comments. Prints what it was given:
 *
 *   argp3 [DOCA flags] [-nd N] [-s TEXT]
 *
 * Builds as C and as C++.
 */
#include <stdio.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_error.h>
#include <doca_log.h>

struct cfg {
	int nd;
	char s[64];
};

static doca_error_t nd_cb(void *param, void *config)
{
	((struct cfg *)config)->nd = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t s_cb(void *param, void *config)
{
	struct cfg *c = (struct cfg *)config;

	snprintf(c->s, sizeof(c->s), "%s", (const char *)param);
	return DOCA_SUCCESS;
}

static void add(const char *sh, const char *lo, const char *desc, doca_argp_param_cb_t cb, enum doca_argp_type type)
{
	struct doca_argp_param *p;

	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		return;
	doca_argp_param_set_short_name(p, sh);
	doca_argp_param_set_long_name(p, lo);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	(void)doca_argp_register_param(p);
}

int main(int argc, char **argv)
{
	struct cfg c;
	int sdk = -1, app = -1;
	doca_error_t r;

	memset(&c, 0, sizeof(c));
	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return 1;
	if (doca_argp_init("argp3", &c) != DOCA_SUCCESS)
		return 1;
	add("nd", "num-descs", "number of descriptors", nd_cb, DOCA_ARGP_TYPE_INT);
	add("s", "string", "a string", s_cb, DOCA_ARGP_TYPE_STRING);
	r = doca_argp_start(argc, argv);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "argp3: doca_argp_start: %s\n", doca_error_get_name(r));
		doca_argp_destroy();
		return 1;
	}
	if (doca_argp_get_sdk_log_level(&sdk) != DOCA_SUCCESS || doca_argp_get_log_level(&app) != DOCA_SUCCESS)
		return 1;
	printf("argp3: nd=%d s=%s log=%d sdk=%d global_sdk=%u\n", c.nd, c.s, app, sdk,
	       doca_log_level_get_global_sdk_limit());
	doca_argp_destroy();
	return 0;
}
