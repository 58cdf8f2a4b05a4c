#ifndef BENCH_CALLGRIND_H
#define BENCH_CALLGRIND_H

/* Instruction counts of a measured loop, for a process run under
 * `valgrind --tool=callgrind --instr-atstart=no` (scripts/bench --instructions):
 * bench_count_begin switches instrumentation on (from the first measured loop on) and zeroes
 * the counters; bench_count_end writes them to a dump of their own, marked BENCH_COUNT_DUMP
 * in its description. Each dump is one measured loop, all threads. Outside valgrind, or
 * where valgrind's headers are missing, both do nothing. */
#define BENCH_COUNT_DUMP "berth-measured-loop"

void bench_count_begin(void);
void bench_count_end(void);

#endif
