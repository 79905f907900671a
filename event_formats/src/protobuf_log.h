#pragma once
// libprotobuf reports through GOOGLE_LOG, which writes to stderr unless a handler is set: that
// would break logging.format json. route_protobuf_logs() installs, once for the process, a handler
// that sends them to spdlog (rate limited: a message repeating for every bad event is not a flood).
//
// While a ProtobufLogCapture lives on a thread, what libprotobuf says on that thread is kept in it
// instead: what it says about one payload or schema (a string that is not UTF-8, a file without a
// syntax statement) belongs in that event's failure or that schema's log line, not in a line of
// its own.

#include <string>

namespace hbingest::event_formats {

void route_protobuf_logs();

class ProtobufLogCapture {
 public:
  ProtobufLogCapture();
  ~ProtobufLogCapture();
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // What libprotobuf said since this capture began, "; "-separated, cut at a few hundred bytes.
  const std::string& text() const { return text_; }
  void append(const std::string& message);

 private:
  std::string text_;
  ProtobufLogCapture* outer_;  // a capture begun earlier on this thread, restored at the end
};

}  // namespace hbingest::event_formats
