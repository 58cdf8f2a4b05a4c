// libedit's readline-compatible interface, bound at run time (dlopen of libedit.so.2, which
// the image has) so that building Berth needs no libedit header: the few prototypes the REPL
// uses are declared here, with the types libedit's <editline/readline.h> gives them.
// Every function but berth_edit_load must be called only after it returned 1, and from the
// main thread (the REPL's one thread for libedit; libedit's settings are C globals).
#ifndef CBERTH_EDITLINE_H
#define CBERTH_EDITLINE_H
#include <stddef.h>

typedef char **berth_edit_completion_fn(const char *text, int start, int end);
typedef char *berth_edit_generator_fn(const char *text, int state);
typedef void berth_edit_line_fn(char *line);
typedef int berth_edit_command_fn(int count, int key);

/// Opens libedit (`path`, or the system's libedit.so.2 when NULL) and finds every symbol
/// below. Returns 1 on success; 0 with a one-line reason in `error` otherwise (the library
/// is missing, or lacks a symbol). Idempotent once it succeeded.
int berth_edit_load(const char *path, char *error, size_t error_size);

/// Settings made once, before `berth_edit_initialize`: no signal handlers of libedit's own
/// (the host handles SIGINT), the name `~/.editrc` sections use, and the completion function.
void berth_edit_configure(const char *name, berth_edit_completion_fn *complete);
int berth_edit_initialize(void);
int berth_edit_add_command(const char *name, berth_edit_command_fn *command, int key);

void berth_edit_handler_install(const char *prompt, berth_edit_line_fn *on_line);
void berth_edit_handler_remove(void);
void berth_edit_read_char(void);
void berth_edit_redisplay(void);

/// The line being edited (NULL before the first key) and its length in characters.
const char *berth_edit_line(void);
int berth_edit_line_end(void);
/// Ends the line being read now (from a key binding).
void berth_edit_finish_line(void);
/// Tells libedit the completion function's matches are all (no file-name fallback).
void berth_edit_completion_is_complete(void);
char **berth_edit_completion_matches(const char *text, berth_edit_generator_fn *generator);

void berth_edit_history_limit(int limit);
int berth_edit_history_read(const char *path);
int berth_edit_history_add(const char *line);
int berth_edit_history_write(const char *path);
#endif
