/*
 * greeter_service.h — the Greeting service interface: a C function table the Greeter
 * plugin provides and any plugin may resolve by key (like an OSGi service interface).
 * Only this header is shared; the provider's code stays in its own image.
 */
#ifndef GREETER_SERVICE_H
#define GREETER_SERVICE_H

#include <stdint.h>

#define GREETER_GREETING_SERVICE_KEY "com.example.greeter/Greeting"

typedef struct greeter_greeting_v1 {
    uint32_t struct_size;
    /** A greeting for `name`, owned by the instance, valid until its next call. Thread: any, one at a time. */
    const char *(*greet)(void *instance, const char *name);
    /** How many greetings this instance made. */
    uint64_t (*count)(void *instance);
} greeter_greeting_v1;

/** What `service_resolve` returns for the key: the table first, provider data after. */
typedef struct greeter_greeting_instance {
    const greeter_greeting_v1 *functions;
} greeter_greeting_instance;

#endif
