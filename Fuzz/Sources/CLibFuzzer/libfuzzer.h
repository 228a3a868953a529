// libFuzzer's driver, for a program with its own `main` (SwiftPM gives every executable one); the
// symbol comes from the runtime that `-sanitize=fuzzer` links.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
