#include "app/Commands.hpp"

int main(int argc, char** argv) {
    return dem::runCommandLine(argc, argv);
}
