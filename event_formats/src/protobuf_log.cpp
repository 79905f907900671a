#include "protobuf_log.h"

#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "hbingest/support/rate_limited_log.h"

namespace hbingest::event_formats {
namespace {

// A failure's message carries what libprotobuf said, but not without bound.
constexpr std::size_t kMaxCapturedBytes = 512;

thread_local ProtobufLogCapture* current_capture = nullptr;

spdlog::level::level_enum spdlog_level(google::protobuf::LogLevel level) {
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      return spdlog::level::info;
    case google::protobuf::LOGLEVEL_WARNING:
      return spdlog::level::warn;
    case google::protobuf::LOGLEVEL_ERROR:
      return spdlog::level::err;
    case google::protobuf::LOGLEVEL_FATAL:
      return spdlog::level::critical;
  }
  return spdlog::level::err;
}

// libprotobuf calls it on any thread; nothing may throw back into it.
void log_from_protobuf(google::protobuf::LogLevel level, const char* filename, int line,
                       const std::string& message) noexcept {
  try {
    // A fatal one is a broken invariant inside libprotobuf (it throws or aborts next): always logged.
    if (current_capture != nullptr && level != google::protobuf::LOGLEVEL_FATAL) {
      current_capture->append(message);
      return;
    }
    static support::RateLimitedLog limited(std::chrono::seconds(10));
    // Keyed by where libprotobuf logs from, never by the message (which may hold event data).
    limited.log(spdlog_level(level), std::string("protobuf:") + filename + ":" + std::to_string(line),
                "protobuf: " + message + " (" + filename + ":" + std::to_string(line) + ")");
  } catch (...) {
    // Logging must never throw into libprotobuf.
  }
}

}  // namespace

// SetLogHandler is process-wide and, as its header says, not thread-safe: it is set once, before
// the first protobuf format decodes, and never changed back (the handler only calls spdlog, and
// other formats of the process may still be decoding when one is destroyed).
void route_protobuf_logs() {
  static std::once_flag routed;
  std::call_once(routed, [] {
    spdlog::default_logger_raw();  // the logger registry exists before, and so outlives, any use here
    google::protobuf::SetLogHandler(&log_from_protobuf);
  });
}

ProtobufLogCapture::ProtobufLogCapture() : outer_(current_capture) { current_capture = this; }
ProtobufLogCapture::~ProtobufLogCapture() { current_capture = outer_; }

void ProtobufLogCapture::append(const std::string& message) {
  if (text_.size() >= kMaxCapturedBytes) return;
  if (!text_.empty()) text_ += "; ";
  text_.append(message, 0, kMaxCapturedBytes - std::min(kMaxCapturedBytes, text_.size()));
}

}  // namespace hbingest::event_formats
