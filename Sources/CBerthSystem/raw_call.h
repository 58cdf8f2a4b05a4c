/*
 * A system call that never touches errno, for code that runs on another process's or
 * thread's memory and thread block (pid_namespace.c's init, namespaces.c's detaching
 * thread), where glibc keeps that one's errno. -errno on failure.
 */
#ifndef BERTH_RAW_CALL_H
#define BERTH_RAW_CALL_H

static inline long raw_call5(long number, long a, long b, long c, long d, long e) {
#if defined(__x86_64__)
    long result;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
#else
#error "raw_call.h: written for x86-64 and arm64 only"
#endif
}

static inline long raw_call(long number, long a, long b, long c, long d) { return raw_call5(number, a, b, c, d, 0); }

#endif
