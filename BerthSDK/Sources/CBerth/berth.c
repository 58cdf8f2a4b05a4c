// The C target exists for its public header; compiling the header here runs its
// _Static_assert layout checks on every build.
#include "berth.h"
