/*
 * The workload of the LTTng 2.16 reference traces (tests/lttng216/record-ust.sh): two threads
 * emit a fixed number of events of each class of ust_fields_tp.h, with payloads that depend
 * only on the thread and the iteration, so that every recording holds the same events (only
 * timestamps and pids differ). Thread N runs on CPU N (when there are two CPUs).
 *
 *   ust_fields [ITERATIONS]   (default 400; record-ust.sh runs 300: 2 x (300 x 4 + 75) events)
 *
 * Build: gcc -O2 -I. -o ust_fields ust_fields.c -llttng-ust -ldl -lpthread
 */
#define _GNU_SOURCE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ust_fields_tp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* At least 8 bytes each (the text8 field copies 8); one is not ASCII (UTF-8 strings). */
static const char *const names[] = {"alpha---", "bravo-two", "charlie-three", "\xc3\xa9lan-vital"};

static unsigned iterations = 400;
static long ncpus;

static void *worker(void *arg)
{
	uint32_t thread = (uint32_t)(uintptr_t)arg;
	char comm[16];
	uint8_t bytes[32];
	int32_t values[4];
	uint32_t i, k;

	/* The procname context is the thread's name: one per thread. */
	snprintf(comm, sizeof(comm), "ust-fields-%u", thread);
	pthread_setname_np(pthread_self(), comm);
	/*
	 * One CPU per thread where there are two, so that each per-CPU stream holds one thread's
	 * events whatever else the machine runs (best effort: the events are the same anyway).
	 */
	if (ncpus > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(thread % ncpus, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (i = 0; i < iterations; i++) {
		const char *name = names[(i + thread) % 4];

		for (k = 0; k < 4; k++)
			values[k] = (int32_t)(thread * 1000 + i * 4 + k) * (k % 2 ? -1 : 1);
		lttng_ust_tracepoint(ust_fields, ints, thread, i);
		/* Sequences of 0 to 4 elements (never longer than the shortest name, 8). */
		lttng_ust_tracepoint(ust_fields, compound, i, name, values, i % 5);
		lttng_ust_tracepoint(ust_fields, floats, i);
		lttng_ust_tracepoint(ust_fields, empty);
#if UST_FIELDS_HAVE_BLOBS
		if (i % 4 == 0) {
			for (k = 0; k < sizeof(bytes); k++)
				bytes[k] = (uint8_t)(i + k * 17 + thread);
			lttng_ust_tracepoint(ust_fields, blobs, bytes, (uint16_t)(i % 33));
		}
#else
		(void)bytes;
#endif
		/* A pause now and then keeps the ring buffers from filling (no discarded events). */
		if (i % 50 == 49) {
			struct timespec ts = {0, 2000000};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[2];
	uintptr_t t;

	if (argc > 1)
		iterations = (unsigned)strtoul(argv[1], NULL, 10);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (t = 0; t < 2; t++) {
		if (pthread_create(&threads[t], NULL, worker, (void *)t) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	for (t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);
	return 0;
}
