/*
 * berth.h — the Berth plugin C ABI, version 1.1.
 *
 * This header is the whole contract between a Berth host and a plugin. Only C types cross
 * it: fixed-width integers, UTF-8 `const char *`, pointer + length byte buffers, opaque
 * handles and function tables. A plugin may be written in Swift (through BerthSDK), in C,
 * or in anything that can export a C function.
 *
 * Versioning rule
 * ---------------
 * BERTH_ABI_VERSION packs a major and a minor number. A host accepts a plugin whose major
 * equals its own, whatever the minor. Minor revisions only append fields at the end of a
 * table, never move or remove one. Every table and every struct passed by pointer starts
 * with `uint32_t struct_size`, set by whoever fills it to `sizeof` of the struct as that
 * side was compiled. A reader uses a field only if `offsetof(field) + sizeof(field) <=
 * struct_size` (see BERTH_HAS_FIELD) and the field is not NULL; a table shorter than the
 * v1.0 minimum (BERTH_PLUGIN_V1_MIN_SIZE / BERTH_HOST_V1_MIN_SIZE) is rejected at the
 * handshake. So an older plugin runs on a newer host (the host sees the short table and
 * treats missing functions as absent), and a newer plugin runs on an older host (the host
 * ignores the fields it does not know; the plugin checks the host table's size before it
 * calls a function added later).
 *
 * Threads
 * -------
 * "main thread" below means the host's main actor: navigation, lifecycle and every call
 * into a plugin's table run there, one at a time, unless a function says otherwise.
 * "any thread" functions are safe to call concurrently.
 *
 * Ownership
 * ---------
 * Pointers passed into a call are borrowed for that call only: copy what you keep.
 * Strings and bytes a plugin returns (export results, plugin_id) stay owned by the
 * plugin; the host copies them before it calls into that plugin again. Nothing a plugin
 * hands the host may point into the plugin image after the plugin's `unload` returns.
 */
#ifndef BERTH_H
#define BERTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------------------- */

#define BERTH_ABI_VERSION_MAJOR 1
#define BERTH_ABI_VERSION_MINOR 2
#define BERTH_MAKE_ABI_VERSION(major, minor) ((uint32_t)(((major) << 16) | ((minor) & 0xFFFF)))
#define BERTH_ABI_VERSION BERTH_MAKE_ABI_VERSION(BERTH_ABI_VERSION_MAJOR, BERTH_ABI_VERSION_MINOR)
#define BERTH_ABI_MAJOR(version) ((uint32_t)(version) >> 16)
#define BERTH_ABI_MINOR(version) ((uint32_t)(version) & 0xFFFF)

/** True when a struct of `struct_size` bytes, as filled by the other side, holds `field`. */
#define BERTH_HAS_FIELD(type, pointer, field) \
    ((pointer)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ---------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------- */

/**
 * Result of every call that can fail. 0 is success; anything else comes with a message.
 * Codes are only ever appended: treat a code you do not know as a failure.
 */
typedef int32_t berth_status;

enum {
    BERTH_OK = 0,
    BERTH_ERR_INVALID_ARGUMENT = 1, /* a caller passed something malformed */
    BERTH_ERR_NOT_FOUND = 2,        /* route, key, state slot or screen does not exist */
    BERTH_ERR_UNSUPPORTED = 3,      /* the other side does not implement this */
    BERTH_ERR_STATE = 4,            /* illegal in the current lifecycle state */
    BERTH_ERR_FAILED = 5,           /* the operation ran and failed */
    BERTH_ERR_CANCELLED = 6,        /* a managed task was cancelled */
    BERTH_ERR_DECODE = 7,           /* a payload could not be decoded */
    BERTH_ERR_DENIED = 8,           /* the plugin's manifest does not declare the capability the
                                       call needs; the message names it (appended in 1.0) */
    BERTH_ERR_UNAVAILABLE = 9,      /* v1.2: a contract's provider is not loaded, was unloaded or reloaded mid-call */
    BERTH_ERR_CRASHED = 10,         /* v1.2: a contract's provider crashed before answering */
    BERTH_ERR_TIMED_OUT = 11        /* v1.2: a contract's provider did not answer in time */
};

#define BERTH_ERROR_MESSAGE_CAPACITY 512

/*
 * The capability names a manifest's "capabilities" lists (Docs/security.md). A call to a
 * berth_host_v1 function outside the declared set answers BERTH_ERR_DENIED. The Swift SDK's
 * and the host's Capability enums, the manifest schema and the docs spell them as here
 * (a test checks that they agree).
 */
#define BERTH_CAPABILITY_NAVIGATE "navigate"                 /* its own routes */
#define BERTH_CAPABILITY_NAVIGATE_ANY "navigate.any"         /* other plugins' routes */
#define BERTH_CAPABILITY_CONTEXT "context"                   /* route contexts */
#define BERTH_CAPABILITY_DELEGATE "delegate"                 /* delegate actions */
#define BERTH_CAPABILITY_STATE_PERSIST "state.persist"       /* persisted values */
#define BERTH_CAPABILITY_SESSION "session"                   /* begin and end the session */
#define BERTH_CAPABILITY_SERVICES_PROVIDE "services.provide" /* others may resolve its services */
#define BERTH_CAPABILITY_SERVICES_CONSUME "services.consume" /* resolve others' services */
#define BERTH_CAPABILITY_TASKS "tasks"                       /* managed tasks */
#define BERTH_CAPABILITY_FILES_READ "files.read"             /* read the manifest's paths (worker) */
#define BERTH_CAPABILITY_FILES_WRITE "files.write"           /* write the manifest's paths (worker) */
#define BERTH_CAPABILITY_NETWORK "network"                   /* TCP connect and bind (worker) */

/**
 * A failure message, filled by the callee. The caller allocates it, sets `struct_size`
 * and zeroes `message`; the callee writes a NUL-terminated UTF-8 line (truncated to fit)
 * and the same code it returns. Never kept past the call.
 */
typedef struct berth_error {
    uint32_t struct_size;
    int32_t code;
    char message[BERTH_ERROR_MESSAGE_CAPACITY];
} berth_error;

/* ---------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------- */

/**
 * A borrowed byte buffer: pointer + length. A frozen two-field value passed and returned
 * by value, so it is the one struct without `struct_size` (it can never grow). `data` may
 * be NULL only when `length` is 0.
 */
typedef struct berth_bytes {
    const uint8_t *data;
    uint64_t length;
} berth_bytes;

/**
 * Where a callee writes bytes of a size only it knows (a rendered view tree, saved state,
 * a state slot). The callee calls `write` zero or more times; the data is appended and
 * copied during the call. Owned by the caller; valid for the duration of the call.
 * Thread: the thread of the call it was passed to.
 */
typedef struct berth_sink {
    uint32_t struct_size;
    void *context;
    berth_status (*write)(void *context, const uint8_t *data, uint64_t length);
} berth_sink;

/* ---------------------------------------------------------------------------------------
 * Opaque handles (owned by the host, valid as documented)
 * ------------------------------------------------------------------------------------- */

/** One loaded generation of a plugin. Valid from the entry call until `unload` returns. */
typedef struct berth_plugin_handle berth_plugin_handle;
/** One open screen (module instance) as the host sees it. Valid from `create` until `destroy`. */
typedef struct berth_screen_handle berth_screen_handle;
/** One running managed task. Valid from `run`'s start until `release` returns. */
typedef struct berth_task_handle berth_task_handle;
/** A plugin's own module instance, opaque to the host. */
typedef void berth_instance;

/* ---------------------------------------------------------------------------------------
 * Enumerations
 * ------------------------------------------------------------------------------------- */

/** Log levels for berth_host_v1.log. */
enum {
    BERTH_LOG_TRACE = 0,
    BERTH_LOG_DEBUG = 1,
    BERTH_LOG_INFO = 2,
    BERTH_LOG_NOTICE = 3,
    BERTH_LOG_WARNING = 4,
    BERTH_LOG_ERROR = 5
};

/** Screen lifecycle events (berth_plugin_v1.screen_event). */
enum {
    BERTH_EVENT_DID_LOAD = 1,       /* flag unused (0) */
    BERTH_EVENT_WILL_APPEAR = 2,    /* flag: isPresentedInitially */
    BERTH_EVENT_DID_APPEAR = 3,     /* flag: isPresentedInitially */
    BERTH_EVENT_WILL_DISAPPEAR = 4, /* flag: isRemovedPermanently */
    BERTH_EVENT_DID_DISAPPEAR = 5   /* flag: isRemovedPermanently */
};

/** Navigation requests (berth_host_v1.navigate). */
enum {
    BERTH_NAVIGATE_PUSH = 1,        /* push `route` on the requesting screen's stack */
    BERTH_NAVIGATE_PRESENT = 2,     /* present `route` modally with its own stack */
    BERTH_NAVIGATE_POP = 3,         /* pop the requesting screen (route ignored) */
    BERTH_NAVIGATE_DISMISS = 4,     /* dismiss the modal holding the requesting screen */
    BERTH_NAVIGATE_POP_TO_ROOT = 5  /* pop the requesting screen's stack to its root */
};

/** Route context delivery modes (berth_host_v1.context_send). */
enum {
    BERTH_CONTEXT_DISPATCH = 0,     /* run observers, navigation unchanged */
    BERTH_CONTEXT_TERMINATE = 1     /* run observers, then anchor-pop, dismiss or back */
};

/** Scope kinds (berth_service_v1.scope). */
enum {
    BERTH_SCOPE_SINGLETON = 0,      /* host lifetime (until the provider unloads) */
    BERTH_SCOPE_SCREEN = 1,         /* one per open screen, cleared on permanent removal */
    BERTH_SCOPE_SESSION = 2,        /* begun and ended explicitly */
    BERTH_SCOPE_REQUEST = 3         /* one per action, context delivery or host command */
};

/* ---------------------------------------------------------------------------------------
 * Services and managed tasks (filled by the plugin, read by the host)
 * ------------------------------------------------------------------------------------- */

/**
 * A scoped service a plugin provides under a string key. The host copies the struct and
 * the key during `service_register`; `context` must stay valid until `unload` returns.
 */
typedef struct berth_service_v1 {
    uint32_t struct_size;
    int32_t scope;                  /* BERTH_SCOPE_* */
    const char *key;                /* e.g. "com.example.profile.ImageCache" */
    void *context;
    /** Make one instance for a scope. Thread: any (never the main thread while it waits). */
    berth_status (*create)(void *context, void **out_instance, berth_error *error);
    /** Release an instance when its scope ends or the provider unloads. Thread: any. */
    void (*release)(void *context, void *instance);
    /** v1.2: answer one call of a contract service on `instance`. `request` is JSON: {"method":"NAME","arguments":[ARG,...]}; write the result as JSON to `reply` ("null" for none). A failure returns an error status with its message. NULL for a service that answers no calls (a C table, resolved with service_resolve). Thread: the provider's lane. */
    berth_status (*call)(void *context, void *instance, berth_bytes request, const berth_sink *reply, berth_error *error);
} berth_service_v1;

/**
 * Work the host runs for a screen and cancels when that screen deactivates. Copied by the
 * host during `task_start`; `context` must stay valid until `release` returns.
 */
typedef struct berth_task_v1 {
    uint32_t struct_size;
    void *context;
    /**
     * The task body. Thread: a host worker thread, never the main thread. Returns when
     * done or soon after cancellation (poll task_is_cancelled, or block in task_sleep).
     */
    void (*run)(void *context, berth_task_handle *task);
    /** Optional: told once that cancellation was requested. Thread: any. */
    void (*cancel)(void *context);
    /** Called exactly once, after `run` returned (or instead of it if never started). Thread: main. */
    void (*release)(void *context);
} berth_task_v1;

/* ---------------------------------------------------------------------------------------
 * View trees and render state batches (ABI 1.1, berth_plugin_v1.render_tree)
 * ------------------------------------------------------------------------------------- */

/**
 * The binary view-tree format `render_tree` writes, described in Docs/view-tree-format.md. Its
 * version is the tree's second 32-bit word; a host reads the versions up to the one it
 * announces in berth_render_input.tree_version. New versions only append (new view kinds,
 * new field bits, new header words counted by `header_size`).
 *
 * All integers are little-endian. A tree is:
 *   header      u32 magic BERTH_VIEW_TREE_MAGIC, u32 version, u32 header_size (bytes, >= 24),
 *               u32 flags (BERTH_VIEW_TREE_*), u32 definition count, u32 node count,
 *               then header_size - 24 bytes a reader skips
 *   definitions each: u32 identity id, u32 length, that many bytes of UTF-8 (the identity
 *               path below the screen); ids count up from 0 (or from where the last tree
 *               stopped), so a host keeps them as an array
 *   alive       u32 length, then a bitmap over berth_render_input.slots: bit i (byte i / 8,
 *               least significant bit first) is set when the pass used slot i
 *   nodes       pre-order: u8 kind (BERTH_VIEW_*), u8 field bits (BERTH_VIEW_FIELD_*),
 *               u16 zero, u32 identity id, u32 child count, then each present field in bit
 *               order: text, label and title as u32 length + UTF-8, is_on and branch as one
 *               byte (0 or 1), value as an i64, style as a u32 (BERTH_VIEW_STYLE_*)
 *
 * Version 2 appends the kinds SPACER, DIVIDER and PICKER and the fields STYLE and TITLE.
 * A plugin writes the highest version both sides know (min of its own and tree_version):
 * for a version-1 host it leaves out style and title, writes a Spacer as an empty Text, a
 * Divider as a Text of rules, and a Picker as a Stepper over the option index.
 */
#define BERTH_VIEW_TREE_VERSION 2
#define BERTH_VIEW_TREE_MAGIC 0x52545642u /* "BVTR" */

/** Tree flags. */
enum {
    /** The plugin forgot every identity id it defined before; this tree defines from 0. */
    BERTH_VIEW_TREE_IDENTITIES_RESET = 1
};

/** View kinds. */
enum {
    BERTH_VIEW_VSTACK = 1,
    BERTH_VIEW_HSTACK = 2,
    BERTH_VIEW_LIST = 3,
    BERTH_VIEW_GROUP = 4,
    BERTH_VIEW_FOR_EACH = 5,
    BERTH_VIEW_IF = 6,
    BERTH_VIEW_TEXT = 7,
    BERTH_VIEW_BUTTON = 8,
    BERTH_VIEW_TOGGLE = 9,
    BERTH_VIEW_TEXT_FIELD = 10,
    BERTH_VIEW_STEPPER = 11,
    /* Version 2. */
    /** Empty room: a blank row in a stack, the width left over in an HStack. */
    BERTH_VIEW_SPACER = 12,
    /** A rule across the stack. */
    BERTH_VIEW_DIVIDER = 13,
    /**
     * One choice among options: `label`, `value` (the selected index, from 0), and one
     * Text child per option. Takes BERTH_INPUT_STEP (up or down) and BERTH_INPUT_SELECT (an index).
     */
    BERTH_VIEW_PICKER = 14
};

/** Field bits of a node, in the order the fields follow it. */
enum {
    BERTH_VIEW_FIELD_TEXT = 1,
    BERTH_VIEW_FIELD_LABEL = 2,
    BERTH_VIEW_FIELD_IS_ON = 4,
    BERTH_VIEW_FIELD_VALUE = 8,
    BERTH_VIEW_FIELD_BRANCH = 16,
    /* Version 2, on any node. */
    /** u32: emphasis bits, foreground colour, padding and border (BERTH_VIEW_STYLE_*). */
    BERTH_VIEW_FIELD_STYLE = 32,
    /** u32 length + UTF-8: the screen's title (the first node with one, in pre-order). */
    BERTH_VIEW_FIELD_TITLE = 64
};

/**
 * The style word (BERTH_VIEW_FIELD_STYLE): bits 0-4 the flags below; bits 8-15 a
 * foreground colour (BERTH_VIEW_COLOR_*, 0 none); bits 16-23 padding in cells on every
 * side (inside the border). A style applies to the node and everything below it; a node's
 * own colour wins over an inherited one. Front ends drop colour under NO_COLOR.
 */
enum {
    BERTH_VIEW_STYLE_BOLD = 1,
    BERTH_VIEW_STYLE_ITALIC = 2,
    BERTH_VIEW_STYLE_UNDERLINE = 4,
    BERTH_VIEW_STYLE_DIM = 8,
    /** A box drawn around the node. */
    BERTH_VIEW_STYLE_BORDER = 16
};
#define BERTH_VIEW_STYLE_FOREGROUND_SHIFT 8
#define BERTH_VIEW_STYLE_PADDING_SHIFT 16

/** Foreground colours of the style word: the eight ANSI colours. */
enum {
    BERTH_VIEW_COLOR_BLACK = 1,
    BERTH_VIEW_COLOR_RED = 2,
    BERTH_VIEW_COLOR_GREEN = 3,
    BERTH_VIEW_COLOR_YELLOW = 4,
    BERTH_VIEW_COLOR_BLUE = 5,
    BERTH_VIEW_COLOR_MAGENTA = 6,
    BERTH_VIEW_COLOR_CYAN = 7,
    BERTH_VIEW_COLOR_WHITE = 8
};

/** An identity id the plugin has not defined (the slot names its identity by path). */
#define BERTH_IDENTITY_UNKNOWN 0xFFFFFFFFu

/**
 * One state slot of the screen, handed to `render_tree`: the slot (identity, index), its
 * type fingerprint and its value. Borrowed for the call.
 */
typedef struct berth_state_slot {
    /** The id the plugin's trees defined for the identity, or BERTH_IDENTITY_UNKNOWN. */
    uint32_t identity_id;
    uint32_t index;
    uint64_t fingerprint;
    /** The identity path when identity_id is BERTH_IDENTITY_UNKNOWN (a slot from a kept state or a C call), else NULL. */
    const char *identity;
    berth_bytes value;
} berth_state_slot;

/**
 * What a render pass starts from: every state slot of the screen, in one batch (no
 * state_read per view). Borrowed for the call.
 */
typedef struct berth_render_input {
    uint32_t struct_size;
    /** The highest BERTH_VIEW_TREE_VERSION the host reads. */
    uint32_t tree_version;
    const berth_state_slot *slots;
    uint64_t slot_count;
} berth_render_input;

/* ---------------------------------------------------------------------------------------
 * View input (delivered through berth_plugin_v1.action)
 * ------------------------------------------------------------------------------------- */

/*
 * A person's input to an interactive view of the screen's last render arrives as an
 * `action` named one of BERTH_INPUT_TAP ... BERTH_INPUT_SELECT. Its payload is the view's
 * identity path (UTF-8, as the tree defined it), the byte BERTH_INPUT_SEPARATOR, then the
 * value: nothing for TAP and TOGGLE, the field's new text (UTF-8) for TYPE,
 * BERTH_INPUT_STEP_UP or BERTH_INPUT_STEP_DOWN for STEP, the option's index in decimal
 * ASCII digits for SELECT. berth_input_split takes a payload apart. No other action name
 * starts with BERTH_INPUT_PREFIX. The host's ViewInput and the Swift SDK spell them as here
 * (a test checks that they agree, and Docs/view-tree-format.md#input lists them).
 */
#define BERTH_INPUT_PREFIX "berth."
#define BERTH_INPUT_TAP "berth.tap"           /* a Button */
#define BERTH_INPUT_TOGGLE "berth.toggle"     /* a Toggle */
#define BERTH_INPUT_TYPE "berth.type"         /* a TextField: value = the new text */
#define BERTH_INPUT_STEP "berth.step"         /* a Stepper or a Picker: value = up or down */
#define BERTH_INPUT_SELECT "berth.select"     /* a Picker: value = an option index */
#define BERTH_INPUT_SEPARATOR 0
#define BERTH_INPUT_STEP_UP "+"
#define BERTH_INPUT_STEP_DOWN "-"

/**
 * Splits a view-input payload into the identity path and the value, both pointing into
 * `payload` (not NUL-terminated). A payload without the separator is all identity, with
 * an empty value.
 */
static inline void berth_input_split(berth_bytes payload, berth_bytes *identity, berth_bytes *value) {
    uint64_t index = 0;
    while (index < payload.length && payload.data[index] != BERTH_INPUT_SEPARATOR) { index++; }
    identity->data = payload.data;
    identity->length = index;
    value->data = index < payload.length ? payload.data + index + 1 : NULL;
    value->length = index < payload.length ? payload.length - index - 1 : 0;
}

/* ---------------------------------------------------------------------------------------
 * The host table (filled by the host, handed to the plugin's entry function)
 * ------------------------------------------------------------------------------------- */

typedef struct berth_host_v1 {
    uint32_t struct_size;
    uint32_t abi_version;

    /* -- logging -------------------------------------------------------------------- */
    /** Log a line attributed to the plugin. Thread: any. `message` borrowed. */
    void (*log)(berth_plugin_handle *plugin, int32_t level, const char *message);

    /* -- navigation and delegate actions (main thread) ------------------------------ */
    /**
     * Ask the host to navigate relative to `screen`. `route` may name a route of another
     * plugin ("com.example.users/picker"); `argument` is handed to the new screen's
     * `create`. For PUSH and PRESENT, `*out_screen_id` (may be NULL) receives the new
     * screen's id, used to observe its delegate actions.
     */
    berth_status (*navigate)(berth_screen_handle *screen, int32_t kind, const char *route,
                             berth_bytes argument, uint64_t *out_screen_id, berth_error *error);
    /** Observe the delegate actions of the child screen `child_screen_id` (see delegate_received). */
    berth_status (*observe_delegate)(berth_screen_handle *screen, uint64_t child_screen_id,
                                     berth_error *error);
    /** Send an action on this screen's delegate channel to whoever observes it. */
    berth_status (*send_delegate)(berth_screen_handle *screen, const char *action,
                                  berth_bytes payload, berth_error *error);

    /* -- route context (main thread) ------------------------------------------------ */
    /** Observe contexts of `type` on this screen's router; a second call is ignored. */
    berth_status (*context_observe)(berth_screen_handle *screen, const char *type, berth_error *error);
    /** Stop observing `type`; a no-op when not observed. */
    berth_status (*context_unobserve)(berth_screen_handle *screen, const char *type, berth_error *error);
    /** Dispatch a context up the hierarchy; `mode` is BERTH_CONTEXT_*. */
    berth_status (*context_send)(berth_screen_handle *screen, const char *type, berth_bytes payload,
                                 int32_t mode, berth_error *error);
    /** 1 when terminate(type) from this screen would find a receiver, else 0. */
    int32_t (*context_can_terminate)(berth_screen_handle *screen, const char *type);

    /* -- state storage (main thread) ------------------------------------------------ */
    /**
     * Read the slot (identity, index) of this screen into `out`. `identity` is the view's
     * structural path below the screen ("CounterScreen/VStack.1/Stepper"); the host adds
     * the plugin and instance namespace. Returns BERTH_ERR_NOT_FOUND when the slot is
     * empty or holds a value with another `fingerprint` (the caller uses its default).
     * During render this also marks the identity alive for the render-pass GC.
     */
    berth_status (*state_read)(berth_screen_handle *screen, const char *identity, uint32_t index,
                               uint64_t fingerprint, const berth_sink *out, berth_error *error);
    /** Write the slot (identity, index) of this screen. */
    berth_status (*state_write)(berth_screen_handle *screen, const char *identity, uint32_t index,
                                uint64_t fingerprint, berth_bytes value, berth_error *error);
    /** Read a persisted value of this plugin (survives reopen, reload and restart). */
    berth_status (*persist_read)(berth_screen_handle *screen, const char *key, const berth_sink *out,
                                 berth_error *error);
    /** Write a persisted value; durable when the call returns. */
    berth_status (*persist_write)(berth_screen_handle *screen, const char *key, berth_bytes value,
                                  berth_error *error);

    /* -- scopes and services -------------------------------------------------------- */
    /** Register a service factory. Thread: main (from the entry function or later). */
    berth_status (*service_register)(berth_plugin_handle *plugin, const berth_service_v1 *service,
                                     berth_error *error);
    /**
     * Resolve `key` in the scope current for `screen` (its screen scope, the session, or
     * the request being handled). Thread: any. `*out_instance` stays valid until that
     * scope ends; it belongs to the provider.
     */
    berth_status (*service_resolve)(berth_screen_handle *screen, const char *key, void **out_instance,
                                    berth_error *error);
    /** Begin a session scope named `session_id` (ends the current one first). Thread: main. */
    berth_status (*session_begin)(berth_plugin_handle *plugin, const char *session_id, berth_error *error);
    /** End the current session scope, releasing its instances. Thread: main. */
    berth_status (*session_end)(berth_plugin_handle *plugin, berth_error *error);

    /* -- managed tasks -------------------------------------------------------------- */
    /**
     * Start a task for `screen` under `key` (a running task with the same key is
     * cancelled first). If the screen is not active the task is cancelled at once:
     * `release` is called and BERTH_ERR_STATE returned. Thread: main.
     */
    berth_status (*task_start)(berth_screen_handle *screen, const char *key, const berth_task_v1 *task,
                               berth_error *error);
    /** Cancel the task `key` of `screen`; a no-op when there is none. Thread: main. */
    berth_status (*task_cancel)(berth_screen_handle *screen, const char *key);
    /** 1 once cancellation was requested. Thread: the task's own. */
    int32_t (*task_is_cancelled)(berth_task_handle *task);
    /** Sleep up to `milliseconds`; BERTH_ERR_CANCELLED as soon as the task is cancelled. */
    berth_status (*task_sleep)(berth_task_handle *task, uint64_t milliseconds);
    /**
     * Deliver `action` with `payload` to the task's screen on the main thread, as if sent
     * by the user. Dropped when the screen is no longer active. Thread: the task's own.
     */
    berth_status (*task_post)(berth_task_handle *task, const char *action, berth_bytes payload);
    /** v1.2: call the contract service `key` in the scope current for `screen` (instance made on first use, as service_resolve). `request` and `reply` as berth_service_v1.call. The provider may run in another process. Errors: BERTH_ERR_UNAVAILABLE, BERTH_ERR_CRASHED, BERTH_ERR_TIMED_OUT, BERTH_ERR_DENIED, BERTH_ERR_NOT_FOUND (no such contract), or the provider's own error (BERTH_ERR_FAILED and its message). Thread: the thread the host calls the plugin on. */
    berth_status (*service_call)(berth_screen_handle *screen, const char *key, berth_bytes request, const berth_sink *reply, berth_error *error);
} berth_host_v1;

/* ---------------------------------------------------------------------------------------
 * The plugin table (filled by the plugin, returned by its entry function)
 * ------------------------------------------------------------------------------------- */

typedef struct berth_plugin_v1 {
    uint32_t struct_size;
    uint32_t abi_version;           /* BERTH_ABI_VERSION the plugin was built with */
    /** The plugin's id; must equal the manifest's `id`. Owned by the plugin. */
    const char *plugin_id;

    /* -- module instances (main thread) --------------------------------------------- */
    /**
     * Create a module instance for `route` (one of the manifest's routes). `screen` is
     * the host's handle for it; keep it to call the host. Required when the manifest
     * declares routes.
     */
    berth_status (*create)(berth_screen_handle *screen, const char *route, berth_bytes argument,
                           berth_instance **out_instance, berth_error *error);
    /** Free the instance. Called once, after deactivate; never fails. Required with create. */
    void (*destroy)(berth_instance *instance);
    /** Start runtime wiring. Called once per activation; the host never activates twice. */
    berth_status (*activate)(berth_instance *instance, berth_error *error);
    /** Stop runtime wiring; the host has already cancelled and awaited the screen's tasks. */
    berth_status (*deactivate)(berth_instance *instance, berth_error *error);
    /** A screen lifecycle event (BERTH_EVENT_*), with its flag (0 or 1). */
    void (*screen_event)(berth_instance *instance, int32_t event, int32_t flag);
    /** Handle an action (a `send`, a posted task result, view input: BERTH_INPUT_*). Optional. */
    berth_status (*action)(berth_instance *instance, const char *name, berth_bytes payload,
                           berth_error *error);
    /**
     * Write the screen's view tree as UTF-8 JSON (Docs/state.md) to `out`. Optional; the
     * host calls it only when `render_tree` is absent (a 1.0 plugin, or a C plugin that
     * keeps JSON). During it the plugin reads its state with state_read.
     */
    berth_status (*render)(berth_instance *instance, const berth_sink *out, berth_error *error);
    /** Write instance state to carry across a reload (opaque bytes). Optional. */
    berth_status (*save_state)(berth_instance *instance, const berth_sink *out, berth_error *error);
    /** Restore what save_state wrote, before activate. Optional. */
    berth_status (*restore_state)(berth_instance *instance, berth_bytes state, berth_error *error);
    /** A route context of `type` this screen observes. Optional. */
    berth_status (*context_received)(berth_instance *instance, const char *type, berth_bytes payload,
                                     berth_error *error);
    /** A delegate action from an observed child screen. Optional. */
    berth_status (*delegate_received)(berth_instance *instance, uint64_t child_screen_id,
                                      const char *action, berth_bytes payload, berth_error *error);
    /**
     * The generation is about to be retired or unloaded: every screen is destroyed and
     * every service instance released. Drop anything the host could still reach. Optional.
     */
    void (*unload)(void);

    /* -- ABI 1.1 -------------------------------------------------------------------- */
    /**
     * One render pass: `input` carries every state slot of the screen (one batch, no
     * state_read per view); write the tree in the binary view-tree format
     * (BERTH_VIEW_TREE_VERSION) to `out`, with the bitmap of the slots the pass used; the
     * host drops the others. Writing nothing means "no tree". Optional: preferred over
     * `render` when present.
     */
    berth_status (*render_tree)(berth_instance *instance, const berth_render_input *input,
                                const berth_sink *out, berth_error *error);
} berth_plugin_v1;

/**
 * The entry function a plugin exports under the symbol its manifest names in `entry`.
 * Called once per loaded generation, on the main thread. `host` and `plugin` stay valid
 * until `unload` returns. Returns the plugin table (static storage in the plugin), or
 * NULL after logging why.
 */
typedef const berth_plugin_v1 *(*berth_entry_v1)(const berth_host_v1 *host, berth_plugin_handle *plugin);

/* ---------------------------------------------------------------------------------------
 * v1.0 minimum table sizes: a table shorter than this is rejected at the handshake.
 * ------------------------------------------------------------------------------------- */

#define BERTH_PLUGIN_V1_MIN_SIZE (offsetof(berth_plugin_v1, unload) + sizeof(void (*)(void)))
#define BERTH_HOST_V1_MIN_SIZE (offsetof(berth_host_v1, task_post) + sizeof(void *))

/* ---------------------------------------------------------------------------------------
 * Layout checks (LP64: x86-64 and arm64 Linux)
 * ------------------------------------------------------------------------------------- */

_Static_assert(sizeof(void *) == 8, "Berth ABI v1 is defined for 64-bit targets");
_Static_assert(sizeof(berth_bytes) == 16, "berth_bytes is two 8-byte fields");
_Static_assert(offsetof(berth_bytes, length) == 8, "berth_bytes.length at byte 8");
_Static_assert(sizeof(berth_error) == 8 + BERTH_ERROR_MESSAGE_CAPACITY, "berth_error layout");
_Static_assert(offsetof(berth_sink, write) == 16, "berth_sink layout");
_Static_assert(offsetof(berth_service_v1, key) == 8, "berth_service_v1 layout");
_Static_assert(sizeof(berth_service_v1) == 48, "berth_service_v1 layout");
_Static_assert(sizeof(berth_task_v1) == 40, "berth_task_v1 layout");
_Static_assert(offsetof(berth_host_v1, log) == 8, "berth_host_v1: functions start at byte 8");
_Static_assert(sizeof(berth_host_v1) == 8 + 22 * 8, "berth_host_v1 v1.2 has 22 functions (v1.0's 21 + service_call)");
_Static_assert(offsetof(berth_plugin_v1, create) == 16, "berth_plugin_v1: functions start at byte 16");
_Static_assert(sizeof(berth_plugin_v1) == 16 + 13 * 8, "berth_plugin_v1 v1.1 has 13 functions (v1.0's 12 + render_tree)");
_Static_assert(BERTH_PLUGIN_V1_MIN_SIZE == 16 + 12 * 8, "v1.0 minimum: the 12 functions of v1.0");
_Static_assert(offsetof(berth_plugin_v1, render_tree) == BERTH_PLUGIN_V1_MIN_SIZE, "render_tree is appended after v1.0");
_Static_assert(sizeof(berth_state_slot) == 40, "berth_state_slot layout");
_Static_assert(offsetof(berth_state_slot, value) == 24, "berth_state_slot layout");
_Static_assert(sizeof(berth_render_input) == 24, "berth_render_input layout");
_Static_assert(offsetof(berth_host_v1, service_call) == BERTH_HOST_V1_MIN_SIZE, "service_call is appended after v1.0");

/* ---------------------------------------------------------------------------------------
 * Describing a plugin (optional; added without changing any table)
 * ------------------------------------------------------------------------------------- */

/** The symbol a plugin may export to describe itself (BerthSDK exports it for Swift plugins). */
#define BERTH_DESCRIBE_SYMBOL "berth_describe_v1"

/**
 * Writes what the plugin's code states about itself to `out`, as one UTF-8 JSON object:
 * `{"id": "...", "routes": [...], "persist": [...], "services": [...], "exports": [...]}`
 * (every field but `id` optional; Docs/manifest.md#generated-facts). Tools call it, never a
 * running host: `berth pack` writes plugin.json from it, and `berth pack` and
 * `berth validate` check a hand-written manifest against it. Called in a process of the
 * tool's own, after the entry function returned a table, on the thread that called the
 * entry, with no screen open and a host table whose functions are all NULL.
 */
typedef berth_status (*berth_describe_function_v1)(const berth_sink *out, berth_error *error);

/** Fill an error (for C plugins): sets the code and a formatted-by-caller message. */
static inline berth_status berth_error_set(berth_error *error, berth_status code, const char *message) {
    if (error != NULL) {
        size_t index = 0;
        error->code = code;
        if (message != NULL) {
            for (; message[index] != '\0' && index + 1 < BERTH_ERROR_MESSAGE_CAPACITY; index++) {
                error->message[index] = message[index];
            }
        }
        error->message[index] = '\0';
    }
    return code;
}

/** A berth_bytes over a NUL-terminated string (without the NUL). */
static inline berth_bytes berth_bytes_from_string(const char *text) {
    berth_bytes bytes = {(const uint8_t *)text, 0};
    if (text != NULL) {
        while (text[bytes.length] != '\0') { bytes.length++; }
    }
    return bytes;
}

#ifdef __cplusplus
}
#endif

#endif /* BERTH_H */
