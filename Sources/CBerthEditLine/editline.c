// Binds libedit at run time: see include/CBerthEditLine.h.
#include "CBerthEditLine.h"
#include <dlfcn.h>
#include <stdio.h>

// Functions, with libedit's own names and signatures.
static void (*rl_callback_handler_install_)(const char *, berth_edit_line_fn *);
static void (*rl_callback_handler_remove_)(void);
static void (*rl_callback_read_char_)(void);
static int (*rl_forced_update_display_)(void);
static int (*rl_initialize_)(void);
static int (*rl_add_defun_)(const char *, berth_edit_command_fn *, int);
static char **(*rl_completion_matches_)(const char *, berth_edit_generator_fn *);
static void (*stifle_history_)(int);
static int (*read_history_)(const char *);
static int (*add_history_)(const char *);
static int (*write_history_)(const char *);
// Variables: dlsym gives their addresses.
static int *rl_catch_signals_;
static const char **rl_readline_name_;
static berth_edit_completion_fn **rl_attempted_completion_function_;
static char **rl_line_buffer_;
static int *rl_end_;
static int *rl_done_;
static int *rl_attempted_completion_over_;

static int loaded;

#define BERTH_FIND(handle, name)                                                        \
    do {                                                                                \
        *(void **)&name##_ = dlsym(handle, #name);                                      \
        if (name##_ == NULL) {                                                          \
            snprintf(error, error_size, "%s has no symbol '%s'", library, #name);       \
            return 0;                                                                   \
        }                                                                               \
    } while (0)

int berth_edit_load(const char *path, char *error, size_t error_size) {
    if (loaded) return 1;
    const char *library = path != NULL ? path : "libedit.so.2";
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, error_size, "%s", reason != NULL ? reason : library);
        return 0;
    }
    BERTH_FIND(handle, rl_callback_handler_install);
    BERTH_FIND(handle, rl_callback_handler_remove);
    BERTH_FIND(handle, rl_callback_read_char);
    BERTH_FIND(handle, rl_forced_update_display);
    BERTH_FIND(handle, rl_initialize);
    BERTH_FIND(handle, rl_add_defun);
    BERTH_FIND(handle, rl_completion_matches);
    BERTH_FIND(handle, stifle_history);
    BERTH_FIND(handle, read_history);
    BERTH_FIND(handle, add_history);
    BERTH_FIND(handle, write_history);
    BERTH_FIND(handle, rl_catch_signals);
    BERTH_FIND(handle, rl_readline_name);
    BERTH_FIND(handle, rl_attempted_completion_function);
    BERTH_FIND(handle, rl_line_buffer);
    BERTH_FIND(handle, rl_end);
    BERTH_FIND(handle, rl_done);
    BERTH_FIND(handle, rl_attempted_completion_over);
    loaded = 1;
    return 1;
}

void berth_edit_configure(const char *name, berth_edit_completion_fn *complete) {
    *rl_catch_signals_ = 0;
    *rl_readline_name_ = name;
    *rl_attempted_completion_function_ = complete;
}

int berth_edit_initialize(void) { return rl_initialize_(); }
int berth_edit_add_command(const char *name, berth_edit_command_fn *command, int key) {
    return rl_add_defun_(name, command, key);
}
void berth_edit_handler_install(const char *prompt, berth_edit_line_fn *on_line) {
    rl_callback_handler_install_(prompt, on_line);
}
void berth_edit_handler_remove(void) { rl_callback_handler_remove_(); }
void berth_edit_read_char(void) { rl_callback_read_char_(); }
void berth_edit_redisplay(void) { (void)rl_forced_update_display_(); }
const char *berth_edit_line(void) { return *rl_line_buffer_; }
int berth_edit_line_end(void) { return *rl_end_; }
void berth_edit_finish_line(void) { *rl_done_ = 1; }
void berth_edit_completion_is_complete(void) { *rl_attempted_completion_over_ = 1; }
char **berth_edit_completion_matches(const char *text, berth_edit_generator_fn *generator) {
    return rl_completion_matches_(text, generator);
}
void berth_edit_history_limit(int limit) { stifle_history_(limit); }
int berth_edit_history_read(const char *path) { return read_history_(path); }
int berth_edit_history_add(const char *line) { return add_history_(line); }
int berth_edit_history_write(const char *path) { return write_history_(path); }
