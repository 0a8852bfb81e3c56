#define _GNU_SOURCE
#include "onboard_spawn.h"

#include <signal.h>
#include <spawn.h>

int onboard_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                  int input, int output, int error, const char *directory) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return rc;
    }
    // dup2 onto itself clears FD_CLOEXEC (glibc ≥ 2.29), so a descriptor already at 0, 1 or 2 is kept.
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, input, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, output, 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, error, 2);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0 && directory != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}
