#include "app/Interrupt.hpp"

#include <csignal>

namespace dem {

namespace {
// The one process-wide value a signal handler may touch.
volatile std::sig_atomic_t received = 0;
extern "C" void onSignal(int sig) {
    received = sig;
}
} // namespace

void installInterruptHandlers() {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

int pendingInterrupt() {
    return received;
}

} // namespace dem
