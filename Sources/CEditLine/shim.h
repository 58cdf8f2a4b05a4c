// libedit's readline-compatible interface (Debian: libedit-dev), for the host's REPL.
// libedit's settings are C globals, which Swift 6 cannot touch safely; these accessors
// are called from the main thread only (the REPL's one thread for libedit).
#ifndef CEDITLINE_SHIM_H
#define CEDITLINE_SHIM_H
#include <stdio.h>
#include <editline/readline.h>

/// Settings made once, before `rl_initialize`: no signal handlers of libedit's own (the
/// host handles SIGINT), the name `~/.editrc` sections use, and the completion function.
static inline void berth_edit_configure(const char *name, rl_completion_func_t *complete) {
    rl_catch_signals = 0;
    rl_readline_name = name;
    rl_attempted_completion_function = complete;
}

/// The line being edited (NULL before the first key).
static inline const char *berth_edit_line(void) { return rl_line_buffer; }

/// The length of the line being edited, in characters.
static inline int berth_edit_line_end(void) { return rl_end; }

/// Ends the line being read now (from a key binding).
static inline void berth_edit_finish_line(void) { rl_done = 1; }

/// Tells libedit the completion function's matches are all (no file-name fallback).
static inline void berth_edit_completion_is_complete(void) { rl_attempted_completion_over = 1; }
#endif
