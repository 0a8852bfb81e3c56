#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A parent may have blocked signals in the thread that spawned us (the mask is inherited);
// unblock them so Ctrl-C and SIGTERM end `log --follow` and friends as users expect.
var unblocked = sigset_t()
sigemptyset(&unblocked)
sigprocmask(SIG_SETMASK, &unblocked, nil)

exit(OnboardTool.run(Array(CommandLine.arguments.dropFirst())))
