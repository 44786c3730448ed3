/*
 * doca_log.h: leveled logging with registered sources and pluggable backends.
 *
 * A source file registers itself once with DOCA_LOG_REGISTER(NAME) and then logs with
 * DOCA_LOG_ERR/WARN/INFO/DBG/CRIT. A message is printed by each backend whose level
 * admits it, if the global level admits it too. The standard backend prints
 *   [HH:MM:SS:usec][DOCA][INF][NAME:line]: message
 * to stdout (errors and critical messages to stderr). Until a program creates a
 * backend, messages go to the standard one.
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
	DOCA_LOG_LEVEL_CRIT = 20,    /**< Critical. */
	DOCA_LOG_LEVEL_ERROR = 30,   /**< Error. */
	DOCA_LOG_LEVEL_WARNING = 40, /**< Warning. */
	DOCA_LOG_LEVEL_INFO = 50,    /**< Information. */
	DOCA_LOG_LEVEL_DEBUG = 60,   /**< Debug. */
};

struct doca_logger_backend;

/** Called by a buffer backend with each formatted line. */
typedef void (*log_flush_callback)(char *buffer);

/** Rate limiting: the length of a bucket's time window, in seconds. */
__DOCA_EXPERIMENTAL
uint16_t doca_log_get_bucket_time(void);

/** Sets the window length of every bucket, in seconds. */
__DOCA_EXPERIMENTAL
void doca_log_set_bucket_time(uint16_t bucket_time);

/** Rate limiting: the most messages a bucket prints per window. */
__DOCA_EXPERIMENTAL
uint16_t doca_log_get_quantity(void);

/** Sets the most messages a bucket prints per window. */
__DOCA_EXPERIMENTAL
void doca_log_set_quantity(uint16_t quantity);

/** Sets a backend's level: it prints messages at this level or more severe. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_level_set(struct doca_logger_backend *logger, uint32_t level);

/** Caps the level a backend may be set to. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_upper_level_limit(struct doca_logger_backend *logger, uint32_t upper_level_limit);

/** Freezes a backend's level. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_lower_level_immutable(struct doca_logger_backend *logger);

/** Freezes a backend's upper level limit. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_upper_level_immutable(struct doca_logger_backend *logger);

/** Sets the global level and the level of every backend whose level is not frozen. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_global_level_set(uint32_t level);

/** Caps the level of every backend whose limit is not frozen. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_global_set_upper_level_limit(uint32_t upper_level_limit);

/** The global level. */
__DOCA_EXPERIMENTAL
uint32_t doca_log_global_level_get(void);

/** Registers a source name; *source gets its identifier. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_source_register(const char *source_name, int *source);

/** Unregisters a source. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_source_destroy(int source);

/** Registers a rate-limiting bucket for a source. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_bucket_register(int source, int *bucket);

/** A backend writing to an open stdio stream. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_create_file_backend(FILE *fptr, struct doca_logger_backend **backend);

/** A backend writing to a file descriptor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_create_fd_backend(int fd, struct doca_logger_backend **backend);

/** A backend formatting each line into buffer (capacity bytes) and calling handler. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_create_buffer_backend(char *buffer, size_t capacity, log_flush_callback handler,
					    struct doca_logger_backend **backend);

/** A backend writing to syslog under name. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_create_syslog_backend(const char *name, struct doca_logger_backend **backend);

/** Adds the standard backend (stdout, errors to stderr). */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_create_standard_backend(void);

/** Logs a printf-style message from a source. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, int line, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

/** Logs a developer message (the DOCA_DLOG_* macros). */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_developer(uint32_t level, int source, int line, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

/** Logs through a rate-limiting bucket. */
__DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_limit(uint32_t level, int source, int line, int bucket, const char *format, ...)
	__attribute__((format(printf, 5, 6)));

#define DOCA_LOG_CONCAT_(a, b) a##b
#define DOCA_LOG_CONCAT(a, b) DOCA_LOG_CONCAT_(a, b)

#ifdef __cplusplus
/** Registers a source for the life of the program (C++). */
class doca_log_registrator {
public:
	doca_log_registrator(const char *source_name, int &log_source) noexcept
	{
		doca_log_source_register(source_name, &log_source);
		m_source = log_source;
	}
	~doca_log_registrator() { doca_log_source_destroy(m_source); }

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
		doca_log_source_register(#SOURCE, &log_source); \
	} \
	static void __attribute__((destructor, used)) DOCA_LOG_CONCAT(doca_log_unregister_, __LINE__)(void) \
	{ \
		doca_log_source_destroy(log_source); \
	}
#endif

/** Logs at a level (CRIT, ERROR, WARNING, INFO, DEBUG) from this file's source. */
#define DOCA_LOG(level, format, ...) \
	doca_log(DOCA_LOG_LEVEL_##level, log_source, __LINE__, format, ##__VA_ARGS__)
#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DEBUG, format, ##__VA_ARGS__)

/* Developer messages compile to nothing unless DOCA_LOGGING_ALLOW_DLOG is defined. */
#ifdef DOCA_LOGGING_ALLOW_DLOG
#define DOCA_DLOG(level, format, ...) \
	doca_log_developer(DOCA_LOG_LEVEL_##level, log_source, __LINE__, format, ##__VA_ARGS__)
#else
#define DOCA_DLOG(level, format, ...) \
	do { \
	} while (0)
#endif
#define DOCA_DLOG_CRIT(format, ...) DOCA_DLOG(CRIT, format, ##__VA_ARGS__)
#define DOCA_DLOG_ERR(format, ...) DOCA_DLOG(ERROR, format, ##__VA_ARGS__)
#define DOCA_DLOG_WARN(format, ...) DOCA_DLOG(WARNING, format, ##__VA_ARGS__)
#define DOCA_DLOG_INFO(format, ...) DOCA_DLOG(INFO, format, ##__VA_ARGS__)
#define DOCA_DLOG_DBG(format, ...) DOCA_DLOG(DEBUG, format, ##__VA_ARGS__)

/** Logs through a bucket of this call site: at most doca_log_get_quantity() messages per window. */
#define DOCA_LOG_RATE_LIMIT(level, format, ...) \
	do { \
		static int log_bucket = -1; \
		if (log_bucket == -1) \
			doca_log_rate_bucket_register(log_source, &log_bucket); \
		doca_log_rate_limit(DOCA_LOG_LEVEL_##level, log_source, __LINE__, log_bucket, format, \
				    ##__VA_ARGS__); \
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
