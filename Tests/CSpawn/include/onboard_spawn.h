#ifndef ONBOARD_SPAWN_H
#define ONBOARD_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated), its standard input, output and error
/// on the given descriptors, every other descriptor closed, the default signal dispositions and
/// an empty signal mask, in `directory` when it is not NULL. Returns 0 and the child's pid, or
/// the errno of the failure.
///
/// Tests spawn through this rather than Foundation's Process: on Linux, Process.run reads
/// /proc/self/fd with a 256-byte copy past the end of the directory buffer, which crashes a
/// process that holds thousands of sockets (the HTTP load tests) — found by AddressSanitizer.
int onboard_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                  int input, int output, int error, const char *directory);

#endif
