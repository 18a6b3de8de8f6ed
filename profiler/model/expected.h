// The one error-return style of the lower layers (profiler, transport, interposer): a value or an
// error, never both, never an exception.
//
//   Expected<T, E>  - a T, or an E saying why there is none (E defaults to Error: one line).
//   Status          - Expected<void>: success, or an Error.
//
// C++20 has no std::expected (C++23); this is the subset the code base uses, with the same names
// (has_value, value, error, operator*, operator->, unexpected) so moving to std::expected later is
// a rename. value() on an error (and error() on a value) is a programming error: it is checked by
// an assertion in debug builds and is undefined otherwise, as with std::optional's operator*.
// Nothing here allocates beyond what T and E do, and nothing throws.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace gpuwise {

// Why an operation failed, in one line a person can act on.
struct Error {
  std::string message;
};

template <class E> struct Unexpected { E error; };

// `return unexpected(Error{"..."});` or `return unexpected("...");` (an Error from the text).
template <class E> Unexpected<std::decay_t<E>> unexpected(E&& e) {
  return {std::forward<E>(e)};
}
inline Unexpected<Error> unexpected(const char* message) {
  return {Error{message}};
}
inline Unexpected<Error> unexpected(std::string message) {
  return {Error{std::move(message)}};
}

template <class T, class E = Error> class [[nodiscard]] Expected {
public:
  Expected(const T& value) : v_(std::in_place_index<0>, value) {}
  Expected(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}
  template <class U = T, std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                              !std::is_same_v<std::decay_t<U>, Expected> &&
                                              !std::is_same_v<std::decay_t<U>, T>,
                                          int> = 0>
  Expected(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}
  template <class G> Expected(Unexpected<G> u) : v_(std::in_place_index<1>, std::move(u.error)) {}

  // std::expected's name, so moving to it is a rename.
  // NOLINTNEXTLINE(readability-identifier-naming)
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    assert(has_value());
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    assert(has_value());
    return std::move(*std::get_if<0>(&v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& {
    assert(!has_value());
    return *std::get_if<1>(&v_);
  }
  E& error() & {
    assert(!has_value());
    return *std::get_if<1>(&v_);
  }

private:
  std::variant<T, E> v_;
};

template <class E> class [[nodiscard]] Expected<void, E> {
public:
  Expected() = default;
  template <class G> Expected(Unexpected<G> u) : error_(std::move(u.error)) {}

  // NOLINTNEXTLINE(readability-identifier-naming)
  bool has_value() const { return !error_.has_value(); }
  explicit operator bool() const { return has_value(); }

  const E& error() const& {
    assert(!has_value());
    return *error_;
  }

private:
  std::optional<E> error_;
};

using Status = Expected<void, Error>;

} // namespace gpuwise
