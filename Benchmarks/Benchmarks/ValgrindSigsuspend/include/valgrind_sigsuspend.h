/* Nothing to import: this library only replaces sigsuspend (see valgrind_sigsuspend.c). */
