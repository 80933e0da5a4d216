#pragma once
// SIGINT/SIGTERM handling: the handler only records the signal; the run loop polls it between
// steps, writes what it must and exits with code 3.
namespace dem {
void installInterruptHandlers();
int pendingInterrupt(); // 0, or the signal number received
} // namespace dem
