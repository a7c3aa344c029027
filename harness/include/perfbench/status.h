// Status: the error type returned across the workload and store boundaries.
#pragma once

#include <string>
#include <utility>

namespace perfbench {

// A recoverable outcome. kSkipped means "cannot run here" (missing device,
// missing op), which the runner records as skipped rather than failed.
class Status {
 public:
  enum class Code { kOk, kError, kSkipped };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  static Status Skipped(std::string reason) { return Status(Code::kSkipped, std::move(reason)); }

  bool ok() const { return code_ == Code::kOk; }
  bool skipped() const { return code_ == Code::kSkipped; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context on the way up: "SetUp: " + "cuda out of memory".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace perfbench

#define PERFBENCH_RETURN_IF_ERROR(expr)              \
  do {                                               \
    ::perfbench::Status perfbench_status_ = (expr);  \
    if (!perfbench_status_.ok()) return perfbench_status_; \
  } while (0)
