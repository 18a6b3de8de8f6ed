// Where the shim looks for libcupti (profiler/cupti/cupti_library.h), and DlCuptiPort walking
// those places: a toolkit's extras/CUPTI/lib64 and a pip wheel's folder are found from the
// libcudart the process loaded, the plain name always comes first, and a miss names every place.
#include "profiler/cupti/cupti_library.h"
#include "profiler/cupti/dl_cupti_port.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

using namespace gpuwise::profiler;
namespace fs = std::filesystem;

using Paths = std::vector<std::string>;

TEST_CASE("CUPTI candidates: the plain name, then beside libcudart, then CUDA_HOME, then "
          "/usr/local/cuda") {
  SECTION("nothing known: the loader's search, then the default toolkit") {
    CHECK(cuptiCandidates({}) == Paths{"libcupti.so.13",
                                       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                       "/usr/local/cuda/lib64/libcupti.so.13"});
  }
  SECTION("PyTorch's wheel and a toolkit's runtime, each loaded: both layouts, in load order") {
    // CUDA_HOME's two places are already in the list from the toolkit's libcudart.
    CuptiSearch s;
    s.cuda_home = "/opt/cuda-13.0";
    s.loaded = {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13",
                "/opt/cuda-13.0/lib64/libcudart.so.13.0.96", "/usr/lib/libcuda.so.1"};
    CHECK(cuptiCandidates(s) ==
          Paths{"libcupti.so.13",
                "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13",
                "/venv/lib/python3.12/site-packages/nvidia/cu13/extras/CUPTI/lib64/libcupti.so.13",
                "/opt/cuda-13.0/lib64/libcupti.so.13",
                "/opt/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13",
                "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                "/usr/local/cuda/lib64/libcupti.so.13"});
  }
  SECTION("the same place twice is tried once") {
    CuptiSearch s;
    s.cuda_home = "/usr/local/cuda";
    s.loaded = {"/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13"};
    Paths c = cuptiCandidates(s);
    CHECK(c == Paths{"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
                     "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"});
    CHECK(std::count(c.begin(), c.end(), "/usr/local/cuda/lib64/libcupti.so.13") == 1);
  }
  SECTION("GPUWISE_CUPTI_LIBRARY: that file and no other") {
    CuptiSearch s;
    s.library = "/somewhere/libcupti.so.13";
    s.cuda_home = "/opt/cuda";
    s.loaded = {"/opt/cuda/lib64/libcudart.so.13"};
    CHECK(cuptiCandidates(s) == Paths{"/somewhere/libcupti.so.13"});
  }
  SECTION("this process's own objects are listed, the test program's libraries among them") {
    Paths loaded = loadedObjects();
    CHECK(std::any_of(loaded.begin(), loaded.end(), [](const std::string& p) {
      return p.find("libc.so.6") != std::string::npos;
    }));
  }
}

TEST_CASE("DlCuptiPort walks the candidates to the first CUPTI that loads, or names them all") {
  char tmpl[] = "/tmp/gw-cupti-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string root = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{root};

  SECTION("found in a toolkit layout, from the libcudart beside it") {
    // The simulated device's CUPTI stands for a toolkit's: <root>/lib64/libcudart.so.13 loaded,
    // <root>/extras/CUPTI/lib64/libcupti.so.13 on disk (with the core library it needs).
    const char* build = std::getenv("GPUWISE_BUILD_DIR");
    REQUIRE(build);
    const std::string sim = std::string(build) + "/simdevice/";
    const std::string extras = root + "/extras/CUPTI/lib64/";
    fs::create_directories(extras);
    fs::copy_file(sim + "libcupti.so.13", extras + "libcupti.so.13");
    fs::copy_file(sim + "libgwsim_core.so", extras + "libgwsim_core.so");
    CuptiSearch s;
    s.loaded = {root + "/lib64/libcudart.so.13"};
    Paths c = cuptiCandidates(s);
    REQUIRE(c.front() == "libcupti.so.13");
    // The plain name is left out here: this machine's loader may know a real libcupti.
    Paths rest(c.begin() + 1, c.end());
    rest.insert(rest.begin(), root + "/no-such/libcupti.so.13");
    DlCuptiPort port(rest);
    INFO(port.whyUnavailable());
    CHECK(port.available());
    CHECK(port.loadedFrom() == extras + "libcupti.so.13");

    // We subscribe by name (cuptiSubscribe_v2): a second client is told "CUPTI for gpuwise",
    // and we are told who holds it when we are the second.
    CUpti_SubscriberHandle ours = nullptr, theirs = nullptr;
    REQUIRE(port.subscribe(&ours, nullptr, nullptr) == CUPTI_SUCCESS);
    CHECK(std::string(port.subscriberHolding()).empty());
    DlCuptiPort second(Paths{extras + "libcupti.so.13"});
    REQUIRE(second.available());
    CHECK(second.subscribe(&theirs, nullptr, nullptr) ==
          CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    CHECK(std::string(second.subscriberHolding()) == "CUPTI for gpuwise");
    CHECK(port.unsubscribe(ours) == CUPTI_SUCCESS);
    CHECK(second.subscribe(&theirs, nullptr, nullptr) == CUPTI_SUCCESS);
    CHECK(std::string(second.subscriberHolding()).empty());
    CHECK(second.unsubscribe(theirs) == CUPTI_SUCCESS);
  }
  SECTION("found nowhere: every place tried is named, and the variable that overrides them") {
    DlCuptiPort port(Paths{root + "/a/libcupti.so.13", root + "/b/libcupti.so.13"});
    CHECK_FALSE(port.available());
    CHECK(port.loadedFrom().empty());
    std::string why = port.whyUnavailable();
    CHECK(why.rfind("libcupti not found (tried " + root + "/a/libcupti.so.13 " + root +
                        "/b/libcupti.so.13): ",
                    0) == 0);
    CHECK(why.find("No such file") != std::string::npos);
    CHECK(why.find("GPUWISE_CUPTI_LIBRARY") != std::string::npos);
  }
  SECTION("a library that is not CUPTI ends the search: no second copy from elsewhere") {
    const char* build = std::getenv("GPUWISE_BUILD_DIR");
    REQUIRE(build);
    const std::string not_cupti = std::string(build) + "/simdevice/libgwsim_core.so";
    DlCuptiPort port(Paths{not_cupti, std::string(build) + "/simdevice/libcupti.so.13"});
    CHECK_FALSE(port.available());
    CHECK(std::string(port.whyUnavailable()) == not_cupti + " lacks cuptiSubscribe");
  }
}
