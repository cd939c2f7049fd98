/* The three sequential blocks of the example: make an item, sort it, check it.
 * Each works on one item, an array of x ints. */
#ifndef BLOCKS_H
#define BLOCKS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Fill a[0..x) with pseudo-random ints (the item's input), from seed. */
void gen(int *a, size_t x, uint64_t seed);
/* Sort a[0..x) ascending. */
void sort_ints(int *a, size_t x);
/* A checksum of a[0..x) that depends on the order. */
uint64_t checksum(const int *a, size_t x);

/* Items a run processes at size x: about a million elements in all. */
size_t items_for(size_t x);
/* Monotonic clock, ns. */
double now_ns(void);
/* Parse a positive size from a command-line argument, or exit with status 2. */
size_t parse_size(const char *what, const char *text);
/* Keep thread t on the i-th core this process may use (no-op with fewer than two):
 * the program's threads each on a core of their own, and the block benchmarks too. */
void pin(pthread_t t, int i);

#endif
