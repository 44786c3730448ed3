/* A DOCA program's usual start: register a log source, parse flags with argp (command
 * line and a JSON file), log through the standard, buffer and fd backends. Run with
 * arguments by the test harness; see main() for what it checks. */
#include <stdbool.h>
#include "common.h"
#include <doca_argp.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(LOG_ARGP_TEST);

struct config {
	char pci[32];
	int count;
	bool verbose;
	int files;
	char json[128];
	int validated;
};

static doca_error_t pci_cb(void *param, void *config)
{
	struct config *c = config;

	snprintf(c->pci, sizeof(c->pci), "%s", (const char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t count_cb(void *param, void *config)
{
	((struct config *)config)->count = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t verbose_cb(void *param, void *config)
{
	((struct config *)config)->verbose = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t file_cb(void *param, void *config)
{
	(void)param;
	((struct config *)config)->files++;
	return DOCA_SUCCESS;
}

static doca_error_t json_cb(void *param, void *config)
{
	snprintf(((struct config *)config)->json, 128, "%s", (const char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t name_cb(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_SUCCESS;
}

static doca_error_t validate(void *config)
{
	struct config *c = config;

	c->validated = 1;
	return c->count >= 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

static void add(const char *s, const char *l, const char *args, const char *desc, callback_func cb,
		enum doca_argp_type type, int mandatory, int multi)
{
	struct doca_argp_param *p;

	CHECK(doca_argp_param_create(&p));
	if (s)
		doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	if (args)
		doca_argp_param_set_arguments(p, args);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (mandatory)
		doca_argp_param_set_mandatory(p);
	if (multi)
		doca_argp_param_set_multiplicity(p);
	CHECK(doca_argp_register_param(p));
}

static char captured[4096];
static int flushes;

static void on_flush(char *buffer)
{
	strncat(captured, buffer, sizeof(captured) - strlen(captured) - 1);
	flushes++;
}

int main(int argc, char **argv)
{
	struct config cfg = {.count = 0};
	struct doca_logger_backend *buf_backend;
	static char line[512];
	int level, i;

	CHECK(doca_log_create_standard_backend());
	CHECK(doca_argp_init("log_argp", &cfg));
	add("p", "pci-addr", "<PCI>", "device PCI address", pci_cb, DOCA_ARGP_TYPE_STRING, 1, 0);
	add("c", "count", "<n>", "a number", count_cb, DOCA_ARGP_TYPE_INT, 0, 0);
	add(NULL, "verbose", NULL, "a flag", verbose_cb, DOCA_ARGP_TYPE_BOOLEAN, 0, 0);
	add("f", "file", "<path>", "repeatable", file_cb, DOCA_ARGP_TYPE_STRING, 0, 1);
	add(NULL, "extra", "<json>", "a JSON object", json_cb, DOCA_ARGP_TYPE_JSON_OBJ, 0, 0);
	{
		/* Accepted on the command line only. */
		struct doca_argp_param *p;

		CHECK(doca_argp_param_create(&p));
		doca_argp_param_set_long_name(p, "name");
		doca_argp_param_set_arguments(p, "<name>");
		doca_argp_param_set_description(p, "command line only");
		doca_argp_param_set_callback(p, name_cb);
		doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
		doca_argp_param_set_cli_only(p);
		CHECK(doca_argp_register_param(p));
	}
	CHECK(doca_argp_register_validation_callback(validate));
	{
		/* A name already taken (-h is a standard flag) is refused. */
		struct doca_argp_param *p;

		CHECK(doca_argp_param_create(&p));
		doca_argp_param_set_short_name(p, "h");
		doca_argp_param_set_callback(p, pci_cb);
		doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
		EXPECT_ERR(doca_argp_register_param(p), DOCA_ERROR_ALREADY_EXIST);
		CHECK(doca_argp_param_destroy(p));
	}
	CHECK(doca_argp_start(argc, argv));
	CHECK(doca_argp_get_log_level(&level));
	printf("pci=%s count=%d verbose=%d files=%d extra=%s level=%d validated=%d\n", cfg.pci, cfg.count,
	       cfg.verbose, cfg.files, cfg.json, level, cfg.validated);
	ASSERT(cfg.validated == 1);
	ASSERT((uint32_t)level == doca_log_global_level_get());

	DOCA_LOG_INFO("info message %d", 1);
	DOCA_LOG_ERR("error message %s", "two");
	DOCA_LOG_DBG("debug message %d", 3);
	DOCA_DLOG_INFO("developer message, compiled out");

	/* A buffer backend sees each line its level admits. */
	CHECK(doca_log_global_level_set(DOCA_LOG_LEVEL_DEBUG));
	CHECK(doca_log_create_buffer_backend(line, sizeof(line), on_flush, &buf_backend));
	CHECK(doca_log_backend_level_set(buf_backend, DOCA_LOG_LEVEL_WARNING));
	DOCA_LOG_WARN("to the buffer %d", 42);
	DOCA_LOG_INFO("filtered by the backend level");
	ASSERT(flushes == 1);
	ASSERT(strstr(captured, "[DOCA][WARN][LOG_ARGP_TEST:") != NULL);
	ASSERT(strstr(captured, "]: to the buffer 42\n") != NULL);
	CHECK(doca_log_backend_set_lower_level_immutable(buf_backend));
	EXPECT_ERR(doca_log_backend_level_set(buf_backend, DOCA_LOG_LEVEL_DEBUG), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_ERR(doca_log_global_level_set(33), DOCA_ERROR_INVALID_VALUE);

	/* File and fd backends. */
	{
		FILE *f = tmpfile();
		int fds[2];
		char text[512] = {0};
		struct doca_logger_backend *file_backend, *fd_backend;
		ssize_t got;

		ASSERT(f != NULL && pipe(fds) == 0);
		CHECK(doca_log_create_file_backend(f, &file_backend));
		CHECK(doca_log_create_fd_backend(fds[1], &fd_backend));
		DOCA_LOG_ERR("to every backend %d", 7);
		rewind(f);
		ASSERT(fgets(text, sizeof(text), f) != NULL);
		ASSERT(strstr(text, "[DOCA][ERR][LOG_ARGP_TEST:") != NULL && strstr(text, "]: to every backend 7\n"));
		got = read(fds[0], text, sizeof(text) - 1);
		ASSERT(got > 0);
		text[got] = 0;
		ASSERT(strstr(text, "]: to every backend 7\n") != NULL);
		CHECK(doca_log_backend_level_set(fd_backend, DOCA_LOG_LEVEL_CRIT));
		DOCA_LOG_ERR("not for the fd backend");
		DOCA_LOG_CRIT("critical");
		got = read(fds[0], text, sizeof(text) - 1);
		ASSERT(got > 0);
		text[got] = 0;
		ASSERT(strstr(text, "[DOCA][CRIT]") != NULL && strstr(text, "not for the fd") == NULL);
		EXPECT_ERR(doca_log_create_fd_backend(-1, &fd_backend), DOCA_ERROR_INVALID_VALUE);
		/* The streams stay the program's: the backends keep writing to them, so they stay open. */
	}

	/* Rate limiting: 3 per window. */
	doca_log_set_quantity(3);
	ASSERT(doca_log_get_quantity() == 3);
	doca_log_set_bucket_time(60);
	ASSERT(doca_log_get_bucket_time() == 60);
	captured[0] = 0;
	flushes = 0;
	for (i = 0; i < 10; i++)
		DOCA_LOG_RATE_LIMIT_WARN("limited %d", i);
	ASSERT(flushes == 3);

	CHECK(doca_argp_destroy());
	EXPECT_ERR(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	printf("log_argp: ok\n");
	return 0;
}
