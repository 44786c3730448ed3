/* Destroying a sync event another thread waits on: destroy is refused while the event
 * is started; stop makes the waiter return an error (it used to read freed memory and
 * return a bogus success); destroy then returns once the waiter has left. Waits that
 * can never end (value >= mask) are refused at once. */
#include "common.h"

#include <pthread.h>
#include <doca_sync_event.h>

static struct doca_sync_event *ev;
static doca_error_t waited = DOCA_SUCCESS;

static void *waiter(void *arg)
{
	(void)arg;
	waited = doca_sync_event_wait_gt(ev, 5, 0xff);
	return NULL;
}

int main(void)
{
	struct doca_dev *dev = open_first_device();
	pthread_t t;
	int round;

	for (round = 0; round < 3; round++) {
		CHECK(doca_sync_event_create(&ev));
		CHECK(doca_sync_event_publisher_add_location_cpu(ev, dev));
		CHECK(doca_sync_event_subscriber_add_location_cpu(ev, dev));
		CHECK(doca_sync_event_start(ev));
		EXPECT_ERR(doca_sync_event_wait_gt(ev, 0, 0), DOCA_ERROR_INVALID_VALUE);
		EXPECT_ERR(doca_sync_event_wait_gt(ev, 0xff, 0xff), DOCA_ERROR_INVALID_VALUE);
		waited = DOCA_SUCCESS;
		ASSERT(pthread_create(&t, NULL, waiter, NULL) == 0);
		usleep(20000);
		EXPECT_ERR(doca_sync_event_destroy(ev), DOCA_ERROR_IN_USE);
		CHECK(doca_sync_event_stop(ev));
		CHECK(doca_sync_event_destroy(ev));
		ASSERT(pthread_join(t, NULL) == 0);
		ASSERT(waited == DOCA_ERROR_BAD_STATE);
	}
	CHECK(doca_dev_close(dev));
	printf("sync_event_waiters: ok\n");
	return 0;
}
