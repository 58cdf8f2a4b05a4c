#include "bench_callgrind.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAS_CALLGRIND 1
#endif
#endif

#ifdef BENCH_HAS_CALLGRIND
void bench_count_begin(void) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
}
void bench_count_end(void) { CALLGRIND_DUMP_STATS_AT(BENCH_COUNT_DUMP); }
#else
void bench_count_begin(void) {}
void bench_count_end(void) {}
#endif
