// The gpuwise executable: everything lives in gpuwise_cli (advisor/cli/cli.h), so tests link it.
#include "advisor/cli/cli.h"

int main(int argc, char** argv) {
  return gpuwise::advisor::runCli(argc, argv);
}
