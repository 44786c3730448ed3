/*
 * doca_log.h: leveled logging (task generation). Application backends print the
 * program's messages between a lower limit (the least severe level shown) and an
 * upper limit (the most severe); SDK backends print the library's own messages.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels: the lower the number, the more severe. */
enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10, /**< Nothing is printed. */
	DOCA_LOG_LEVEL_CRIT = 20,    /**< Critical. */
	DOCA_LOG_LEVEL_ERROR = 30,   /**< Error. */
	DOCA_LOG_LEVEL_WARNING = 40, /**< Warning. */
	DOCA_LOG_LEVEL_INFO = 50,    /**< Information. */
	DOCA_LOG_LEVEL_DEBUG = 60,   /**< Debug. */
	DOCA_LOG_LEVEL_TRACE = 70,   /**< Trace. */
};

struct doca_log_backend;

/** Called by a buffer backend with each formatted line. */
typedef void (*log_flush_callback)(char *buffer);

/** Sets the global lower limit: application backends show messages up to this level. */
DOCA_STABLE
doca_error_t doca_log_level_set_global_lower_limit(uint32_t lower_limit);

/** Sets the global upper limit: application backends show messages from this level. */
DOCA_STABLE
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);

/** The global lower limit (INFO by default). */
DOCA_STABLE
uint32_t doca_log_level_get_global_lower_limit(void);

/** The global upper limit (CRIT by default). */
DOCA_STABLE
uint32_t doca_log_level_get_global_upper_limit(void);

/** Sets the level of the library's own messages on every SDK backend. */
DOCA_STABLE
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t sdk_limit);

/** The SDK limit (INFO by default). */
DOCA_STABLE
uint32_t doca_log_level_get_global_sdk_limit(void);

/** Sets a backend's lower limit. */
DOCA_STABLE
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t lower_limit);

/** Sets a backend's upper limit. */
DOCA_STABLE
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit);

/** Makes a backend's lower limit strict: global changes no longer move it. */
DOCA_STABLE
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend);

/** Makes a backend's upper limit strict. */
DOCA_STABLE
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend);

/** Sets the level of an SDK backend. */
DOCA_STABLE
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

/** Adds the standard backends: stdout up to INFO, stderr from WARNING. */
DOCA_STABLE
doca_error_t doca_log_backend_create_standard(void);

/** An application backend writing to an open stdio stream. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);

/** An application backend writing to a file descriptor. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);

/** An application backend formatting each line into buffer and calling handler. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_buffer(char *buffer, size_t capacity, log_flush_callback handler,
						 struct doca_log_backend **backend);

/** An application backend writing to syslog under name. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend);

/** An SDK backend writing to an open stdio stream. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);

/** An SDK backend writing to a file descriptor. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);

/** An SDK backend formatting each line into buffer and calling handler. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_buffer_sdk(char *buffer, size_t capacity, log_flush_callback handler,
						     struct doca_log_backend **backend);

/* DOCA 2.6's names of the two buffer backends above. */
/** doca_log_backend_create_with_buffer under its DOCA 2.6 name. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity, log_flush_callback handler,
					      struct doca_log_backend **backend);
/** doca_log_backend_create_with_buffer_sdk under its DOCA 2.6 name. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity, log_flush_callback handler,
						  struct doca_log_backend **backend);

/** An SDK backend writing to syslog under name. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend);

/** Registers a source name; *source gets its identifier. */
DOCA_STABLE
doca_error_t doca_log_register_source(const char *source_name, int *source);

/** Unregisters a source. */
DOCA_STABLE
doca_error_t doca_log_unregister_source(int source);

/** Registers a rate-limiting bucket for a source. */
DOCA_STABLE
doca_error_t doca_log_rate_bucket_register(int source, int *bucket);

/** Logs a printf-style message from a source. */
DOCA_STABLE
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...) __attribute__((format(printf, 6, 7)));

/** Logs through a rate-limiting bucket. */
DOCA_STABLE
doca_error_t doca_log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func,
				 int bucket, const char *format, ...) __attribute__((format(printf, 7, 8)));

#define DOCA_LOG_CONCAT_(a, b) a##b
#define DOCA_LOG_CONCAT(a, b) DOCA_LOG_CONCAT_(a, b)

#ifdef __cplusplus
/** Registers a source for the life of the program (C++). */
class doca_log_registrator {
public:
	doca_log_registrator(const char *source_name, int &log_source) noexcept
	{
		doca_log_register_source(source_name, &log_source);
		m_source = log_source;
	}
	~doca_log_registrator() { doca_log_unregister_source(m_source); }

private:
	int m_source{0};
};
#define DOCA_LOG_REGISTER(SOURCE) \
	static int log_source{}; \
	static doca_log_registrator DOCA_LOG_CONCAT(g_register_struct_, __LINE__)(#SOURCE, log_source)
#else
/** Registers this file as log source SOURCE (once per file, at file scope). */
#define DOCA_LOG_REGISTER(SOURCE) \
	static int log_source; \
	static void __attribute__((constructor(101), used)) DOCA_LOG_CONCAT(doca_log_register_, __LINE__)(void) \
	{ \
		doca_log_register_source(#SOURCE, &log_source); \
	} \
	static void __attribute__((destructor(101), used)) DOCA_LOG_CONCAT(doca_log_unregister_, __LINE__)(void) \
	{ \
		doca_log_unregister_source(log_source); \
	}
#endif

/** Logs at a level (CRIT, ERROR, WARNING, INFO, DEBUG, TRACE) from this file's source. */
#define DOCA_LOG(level, format, ...) \
	doca_log(DOCA_LOG_LEVEL_##level, log_source, __FILE__, __LINE__, __func__, format, ##__VA_ARGS__)

#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DEBUG, format, ##__VA_ARGS__)

/* TRACE messages compile to nothing unless DOCA_LOGGING_ALLOW_TRACE is defined. */
#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(TRACE, format, ##__VA_ARGS__)
#else
#define DOCA_LOG_TRC(format, ...) \
	do { \
	} while (0)
#endif

/** Logs through a bucket of this call site: at most a few messages per time window. */
#define DOCA_LOG_RATE_LIMIT(level, format, ...) \
	do { \
		static int log_bucket = -1; \
		if (log_bucket == -1) \
			doca_log_rate_bucket_register(log_source, &log_bucket); \
		doca_log_rate_limit(DOCA_LOG_LEVEL_##level, log_source, __FILE__, __LINE__, __func__, log_bucket, \
				    format, ##__VA_ARGS__); \
	} while (0)

#define DOCA_LOG_RATE_LIMIT_CRIT(format, ...) DOCA_LOG_RATE_LIMIT(CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_ERR(format, ...) DOCA_LOG_RATE_LIMIT(ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_WARN(format, ...) DOCA_LOG_RATE_LIMIT(WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_INFO(format, ...) DOCA_LOG_RATE_LIMIT(INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_DBG(format, ...) DOCA_LOG_RATE_LIMIT(DEBUG, format, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
