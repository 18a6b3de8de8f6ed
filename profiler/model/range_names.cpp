#include "profiler/model/range_names.h"

#include <cctype>
#include <cstring>
#include <string>

namespace gpuwise::model {

RangeKind nvtxRangeKind(std::string_view name, int64_t* step) {
  *step = -1;
  if (name.rfind("ProfilerStep#", 0) == 0) {
    int64_t n = 0;
    bool digits = false;
    for (char c : name.substr(13)) {
      if (c < '0' || c > '9') break;
      n = n * 10 + (c - '0');
      digits = true;
    }
    if (digits) *step = n;
    return RangeKind::Step;
  }
  if (name.rfind("enumerate(DataLoader)", 0) == 0) return RangeKind::DataLoader;
  if (name.rfind("aten::", 0) == 0) return RangeKind::Operator;
  // "<stem><separators><number>" or "<stem>": the stem, lower case, decides.
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1])))
    --end;
  std::string_view number = name.substr(end);
  while (end > 0 && std::strchr(" _-#:=", name[end - 1]))
    --end;
  if (end == 0 || end > 32) return RangeKind::Annotation;
  std::string stem(name.substr(0, end));
  for (char& c : stem)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  static constexpr const char* kStepStems[] = {"step",       "train_step",    "training_step",
                                               "train step", "training step", "iteration",
                                               "iter",       "train_iter",    "train_iteration"};
  for (const char* s : kStepStems) {
    if (stem != s) continue;
    if (!number.empty() && number.size() < 18) {
      int64_t n = 0;
      for (char c : number)
        n = n * 10 + (c - '0');
      *step = n;
    }
    return RangeKind::Step;
  }
  return RangeKind::Annotation;
}

} // namespace gpuwise::model
