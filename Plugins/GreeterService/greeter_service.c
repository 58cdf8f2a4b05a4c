// The service interface target exists for its header; consumers and the provider both
// depend on it, so no plugin links another plugin's code.
#include "greeter_service.h"
