#include "hbingest/ingest/table_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace hbingest::ingest {

namespace {

using connectors::TableStatus;

// "'d'" or "'d', 'e'".
std::string quoted(const std::vector<std::string>& families) {
  std::string text;
  for (const auto& family : families) text += (text.empty() ? "'" : ", '") + family + "'";
  return text;
}

// "HBase table ns:t <what>", the sentence /readyz and the log share.
std::string state_of(const std::string& table, TableStatus status, const std::vector<std::string>& missing) {
  const std::string subject = "HBase table " + table;
  switch (status) {
    case TableStatus::writable:
      return subject + " is writable";
    case TableStatus::missing:
      return subject + " does not exist";
    case TableStatus::disabled:
      return subject + " is disabled";
    case TableStatus::family_missing:
      return subject + " has no column " + (missing.size() == 1 ? "family " : "families ") + quoted(missing);
  }
  return subject + " is in an unknown state";
}

// What brings the table back, for the log line an operator reads first.
std::string remedy(TableStatus status, const std::string& table, const std::vector<std::string>& missing) {
  switch (status) {
    case TableStatus::missing:
      return "re-create it with `hbingest bootstrap --config ...`";
    case TableStatus::disabled:
      return "enable it (hbase shell: enable '" + table + "')";
    case TableStatus::family_missing: {
      std::string alter = "add the " + std::string(missing.size() == 1 ? "family" : "families") +
                          " (hbase shell: alter '" + table + "'";
      for (const auto& family : missing) alter += ", {NAME => '" + family + "', TTL => ...}";
      return alter + ")";
    }
    case TableStatus::writable:
      break;
  }
  return "";
}

}  // namespace

TableWatch::TableWatch(const std::vector<std::string>& tables, TableWatchOptions options,
                       connectors::TableStatusSource& source, PipelineObserver& observer)
    : options_(std::move(options)), source_(source), observer_(observer) {
  for (const auto& table : tables) {
    auto& watched = tables_.try_emplace(table).first->second;
    const auto own = options_.table_families.find(table);
    watched.families = own != options_.table_families.end() ? own->second : options_.families;
  }
}

TableWatch::~TableWatch() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void TableWatch::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void TableWatch::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void TableWatch::check() {
  std::lock_guard serial(check_mutex_);
  for (auto& [table, watched] : tables_) {
    {
      // A check can take a read timeout per table when the gateway does not answer: do not make
      // the daemon's shutdown wait for the rest.
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    connectors::TableState state;
    try {
      state = source_.table_status(connectors::TableName::parse(table), watched.families);
    } catch (const std::exception& e) {
      // HBase (or the gateway) cannot tell right now, or our user may not ask: the writers' own
      // errors still show; only an answer changes the verdict.
      check_log_.log(spdlog::level::warn, table,
                     fmt::format("could not check HBase table {} (its last known state stands): {}", table, e.what()));
      continue;
    }
    const TableStatus status = state.status;
    std::vector<std::string> missing_before;
    {
      std::lock_guard lock(missing_mutex_);
      missing_before = std::exchange(watched.missing_families, state.missing_families);
    }
    const TableStatus before = watched.status.exchange(status);
    const bool was_available = before == TableStatus::writable;
    const bool available = status == TableStatus::writable;
    const bool first = !std::exchange(watched.known, true);
    if (first || was_available != available) observer_.on_table_available(table, available);
    if (!available && (first || before != status || missing_before != state.missing_families)) {
      spdlog::error("{}: writes to it are held and its events stay uncommitted until it is writable again; {}",
                    state_of(table, status, state.missing_families), remedy(status, table, state.missing_families));
    } else if (available && !was_available) {
      spdlog::info("HBase table {} is writable again: held writes resume", table);
    }
  }
}

bool TableWatch::writable(const std::string& table) const {
  const auto it = tables_.find(table);
  return it == tables_.end() || it->second.status.load() == TableStatus::writable;
}

void TableWatch::write_failed(const std::string& /*table*/) {
  {
    std::lock_guard lock(mutex_);
    check_requested_ = true;
  }
  wake_.notify_all();
}

std::vector<std::string> TableWatch::problems() const {
  std::vector<std::string> problems;
  for (const auto& [table, watched] : tables_) {
    const auto status = watched.status.load();
    if (status == TableStatus::writable) continue;
    std::lock_guard lock(missing_mutex_);
    problems.push_back(state_of(table, status, watched.missing_families));
  }
  return problems;
}

bool TableWatch::any_unavailable() const {
  return std::any_of(tables_.begin(), tables_.end(),
                     [](const auto& entry) { return entry.second.status.load() != TableStatus::writable; });
}

void TableWatch::run() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Failures reported from here on ask for the next check, not this one.
    check_requested_ = false;
    lock.unlock();
    check();
    const auto last_check = Clock::now();
    lock.lock();
    for (;;) {
      if (stopping_) return;
      const auto period = any_unavailable() ? options_.recheck : options_.interval;
      const auto due = last_check + (check_requested_ ? std::min(options_.min_gap, period) : period);
      if (Clock::now() >= due) break;
      wake_.wait_until(lock, due);
    }
  }
}

}  // namespace hbingest::ingest
