#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(OnboardTool.run(Array(CommandLine.arguments.dropFirst())))
