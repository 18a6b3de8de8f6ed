// Internal to advisor/precision: the text the classification rules look at, and the tiny pattern
// language they are written in.
//
// A pattern is a list of alternatives separated by '|'. Each alternative is a lower-case substring,
// optionally prefixed:
//   ^text   the name starts with text (after a leading "void " is dropped)
//   <text   text starts a word: the character before it is not a letter (so "<mma" matches
//           "_mma" and "::mma" but not "gamma")
//   text    text anywhere
// An empty pattern matches every name.
#pragma once

#include "advisor/precision/precision.h"

#include <string>
#include <string_view>

namespace gpuwise::profiler::detail {

// A kernel name prepared for matching: demangled when possible, lower-cased, leading "void "
// dropped.
class NameText {
public:
  explicit NameText(std::string_view name);

  std::string_view text() const { return text_; }
  bool matches(std::string_view pattern) const;

private:
  std::string text_;
};

// Position of `needle` in `hay` at or after `from` whose preceding character is not a letter;
// npos when none.
size_t findWordStart(std::string_view hay, std::string_view needle, size_t from = 0);

// What the element-type words of a name say.
enum class TokenVerdict : uint8_t {
  None,     // no type word at all
  Integer,  // only integer, bool or opaque-byte types: not floating-point arithmetic
  Floating, // `precision` holds the answer
};

struct TokenResult {
  TokenVerdict verdict = TokenVerdict::None;
  Precision precision = Precision::Other;
};

// The precision a name's type words give (see dtype_tokens.cpp for the order of evidence).
TokenResult precisionFromTokens(std::string_view lower_name);

// The narrower of two precisions (fp4 < fp8 < int8 < fp16/bf16 < tf32 < fp32 < fp64), for kernels
// that mix input types; Other loses to anything.
Precision narrower(Precision a, Precision b);

} // namespace gpuwise::profiler::detail
