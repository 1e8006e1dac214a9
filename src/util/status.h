// Errors as values: a failure names the offending field and says, in one line, what is wrong.
// The CLI turns an Error into "gpuplan: error: <field>: <message>" and exit code 2.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gpuplan {

struct Error {
  std::string field;    // the input that is wrong: a flag, a JSON key, a file
  std::string message;  // one line, for a person

  std::string to_string() const;
};

inline Error make_error(std::string field, std::string message) {
  return Error{std::move(field), std::move(message)};
}

// A value or the reason there is none.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // REQUIRES: !ok()
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing but can fail.
using Status = std::optional<Error>;

}  // namespace gpuplan
