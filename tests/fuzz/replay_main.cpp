// A main for the fuzz targets without libFuzzer: feeds every file named on the command line (or
// found under a named directory, recursively, in sorted order) to LLVMFuzzerTestOneInput once.
// Built with the normal compiler, it makes `make test` replay every corpus file, so an input that
// once crashed a target stays a test. libFuzzer builds replay the same way: `fuzz_X corpus/X/`.
//
// Exits 0 when every input ran (a target reports a finding by aborting, which fails the test);
// 2 when an argument cannot be read or names no input at all.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const fs::path arg = argv[i];
    if (fs::is_directory(arg, ec)) {
      for (auto it = fs::recursive_directory_iterator(arg, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && it->path().filename().string()[0] != '.')
          inputs.push_back(it->path());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    }
    if (ec) {
      std::fprintf(stderr, "%s: %s\n", argv[i], ec.message().c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no inputs (give corpus files or directories)\n",
                 argc > 0 ? argv[0] : "replay");
    return 2;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", path.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs without a finding\n", inputs.size());
  return 0;
}
