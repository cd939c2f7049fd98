#define _GNU_SOURCE
#include "blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sched.h>

void gen(int *a, size_t x, uint64_t seed)
{
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (size_t i = 0; i < x; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (int)(s >> 33);
    }
}

static int cmp_int(const void *p, const void *q)
{
    int a = *(const int *)p, b = *(const int *)q;
    return (a > b) - (a < b);
}

void sort_ints(int *a, size_t x)
{
    qsort(a, x, sizeof *a, cmp_int);
}

uint64_t checksum(const int *a, size_t x)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < x; i++) {
        h ^= (uint64_t)(unsigned)a[i];
        h *= 1099511628211ULL;
    }
    return h;
}

size_t items_for(size_t x)
{
    size_t n = 1000000 / (x ? x : 1);
    if (n < 16)
        n = 16;
    if (n > 2000)
        n = 2000;
    return n;
}

double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

size_t parse_size(const char *what, const char *text)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || v == 0) {
        fprintf(stderr, "%s: `%s` is not a positive whole number\n", what, text);
        exit(2);
    }
    return (size_t)v;
}

void pin(pthread_t t, int i)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
        return;
    int seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &allowed))
            continue;
        if (seen++ == i % CPU_COUNT(&allowed)) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            pthread_setaffinity_np(t, sizeof one, &one);
            return;
        }
    }
}
