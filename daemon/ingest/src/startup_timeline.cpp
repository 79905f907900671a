#include "hbingest/ingest/startup_timeline.h"

#include <spdlog/spdlog.h>

namespace hbingest::ingest {

namespace {

std::string ms_or_unknown(const std::optional<std::chrono::milliseconds>& at) {
  return at ? std::to_string(at->count()) : std::string("?");
}

}  // namespace

void StartupTimeline::mark(std::string_view step) const {
  spdlog::debug("startup: {} after {} ms", step, since_start().count());
}

void StartupTimeline::rows_stored() {
  if (first_row_logged_) return;
  first_row_logged_ = true;
  // A row can only come from a polled message of an assigned partition; "?" would mean a step was
  // not reported, not that it did not happen.
  spdlog::info("first row stored after {} ms (joined group after {} ms, first message after {} ms)",
               since_start().count(), ms_or_unknown(joined_), ms_or_unknown(first_message_));
}

}  // namespace hbingest::ingest
