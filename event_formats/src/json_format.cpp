// decode.format: json — a message value is one JSON object (JsonEvent).
#include <string>

#include "formats.h"
#include "hbingest/event_formats/json_event.h"

namespace hbingest::event_formats {
namespace {

class JsonFormat final : public InputFormat {
 public:
  std::optional<DecodeFailure> parse(std::string_view payload) override {
    if (const auto failure = event_.parse(payload)) {
      if (failure->not_an_object) return DecodeFailure::invalid("not_an_object", "payload is JSON but not an object");
      return DecodeFailure::invalid("invalid_json", "payload is " + failure->message);
    }
    return std::nullopt;
  }
  const Record& record() const override { return event_; }

 private:
  JsonEvent event_;
};

}  // namespace

std::unique_ptr<InputFormat> make_json_format() { return std::make_unique<JsonFormat>(); }

}  // namespace hbingest::event_formats
