/* The Greeter plugin's C exports (declared in its manifest for libffi callers). */
#ifndef GREETER_H
#define GREETER_H

#include <stdint.h>
#include "berth.h"

const char *greeter_greet(const char *name);
int32_t greeter_add(int32_t left, int32_t right);
double greeter_average(double left, double right);
float greeter_scale(float value, double factor);
uint8_t greeter_is_even(int64_t value);
berth_bytes greeter_reverse(const uint8_t *data, uint64_t length);
uint64_t greeter_calls(void);

#endif
