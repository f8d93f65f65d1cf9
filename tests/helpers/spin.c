// SPDX-License-Identifier: GPL-2.0
/*
 * spin: a CPU-bound task that stays in user mode, for tests, benchmarks
 * and the demo.  Runs until killed, or for SECONDS if given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	volatile unsigned long counter = 0;
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 0;
	struct timespec start, now;

	if (argc > 2 || seconds < 0) {
		fprintf(stderr, "usage: spin [SECONDS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		for (int i = 0; i < 1000000; i++)
			counter++;
		if (seconds == 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 >= seconds)
			return 0;
	}
}
