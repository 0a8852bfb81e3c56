// libFuzzer's driver entry (compiler-rt's FuzzerInterface.h / FuzzerDriver.cpp), linked in by
// `-sanitize=fuzzer`: runs the whole fuzzing loop on the callback and returns the exit status.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
