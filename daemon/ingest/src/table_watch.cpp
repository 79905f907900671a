#include "hbingest/ingest/table_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
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

// What brings the table back, for the log line an operator reads first. `created_here`: the watch
// creates it (a run-time table under table.create_table); `run_time`: bootstrap cannot make it.
std::string remedy(TableStatus status, const std::string& table, const std::vector<std::string>& missing, bool run_time,
                   bool created_here) {
  switch (status) {
    case TableStatus::missing:
      if (created_here) return "hbingest creates it (table.create_table) and tries again while it cannot";
      if (run_time) {
        return "create it (hbase shell: create '" + table + "', ...) or set table.create_table: true";
      }
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
  auto map = std::make_shared<TableMap>();
  for (const auto& table : tables) {
    auto& watched = (*map)[table];
    if (watched) continue;
    watched = std::make_shared<Watched>();
    const auto own = options_.table_families.find(table);
    watched->families = own != options_.table_families.end() ? own->second : options_.families;
  }
  tables_ = std::move(map);
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

void TableWatch::watch(const TablePlan& plan) {
  const auto& families = plan.families.empty() ? options_.families : plan.families;
  bool added = false;
  bool grew = false;
  for (;;) {
    std::shared_ptr<const TableMap> current;
    {
      std::lock_guard lock(tables_mutex_);
      if (const auto it = tables_->find(plan.table); it != tables_->end()) {
        // Another route writing the same table: its families too, from the next check on.
        auto& known = it->second->families;
        for (const auto& family : families) {
          if (std::find(known.begin(), known.end(), family) == known.end()) {
            known.push_back(family);
            grew = true;
          }
        }
        break;
      }
      current = tables_;
    }
    auto watched = std::make_shared<Watched>();
    watched->families = families;
    watched->split_keys = plan.split_keys;
    watched->run_time = true;
    watched->create_if_missing = options_.create.has_value();
    watched->first_check_pending = true;
    auto next = std::make_shared<TableMap>(*current);  // copied without the writers' lock
    next->emplace(plan.table, std::move(watched));
    {
      std::lock_guard lock(tables_mutex_);
      if (tables_ != current) continue;  // another watch() published meanwhile: add to that one
      tables_ = std::move(next);
    }
    added = true;
    break;
  }
  if (!added && !grew) return;
  {
    std::lock_guard lock(mutex_);
    (added ? first_checks_requested_ : check_requested_) = true;
  }
  wake_.notify_all();
}

std::shared_ptr<const TableWatch::TableMap> TableWatch::tables() const {
  std::lock_guard lock(tables_mutex_);
  return tables_;
}

std::vector<std::string> TableWatch::families_of(const Watched& watched) const {
  std::lock_guard lock(tables_mutex_);
  return watched.families;
}

void TableWatch::check() { check_tables(false); }

void TableWatch::check_tables(bool only_first) {
  std::lock_guard serial(check_mutex_);
  const auto tables = this->tables();  // keeps the names and Watched of this round alive
  for (const auto& [table, watched] : *tables) {
    if (only_first && !watched->first_check_pending.load()) continue;
    {
      // A check can take a read timeout per table when the gateway does not answer: do not make
      // the daemon's shutdown wait for the rest.
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    check_table(table, *watched, families_of(*watched));
  }
}

std::optional<connectors::TableState> TableWatch::ask(const std::string& table,
                                                      const std::vector<std::string>& families) {
  try {
    return source_.table_status(connectors::TableName::parse(table), families);
  } catch (const std::exception& e) {
    // HBase (or the gateway) cannot tell right now, or our user may not ask: the writers' own
    // errors still show; only an answer changes the verdict.
    check_log_.log(spdlog::level::warn, table,
                   fmt::format("could not check HBase table {} (its last known state stands): {}", table, e.what()));
    return std::nullopt;
  }
}

void TableWatch::create(const std::string& table, const Watched& watched, const std::vector<std::string>& families) {
  const auto spec = table_spec(*options_.create, table, watched.split_keys, families);
  try {
    const auto result = source_.ensure_table(spec);
    if (result.outcome == connectors::EnsureOutcome::created) {
      spdlog::info("created HBase table {} ({} {}, TTL {} s, {} regions): a route's template made it", table,
                   families.size() == 1 ? "family" : "families", quoted(families), options_.create->ttl.count(),
                   spec.split_keys.size() + 1);
    }
  } catch (const std::exception& e) {
    // Another replica creating it at the same moment, no CREATE permission, HBase away: the check
    // that follows tells which, and the next one tries again while it is still missing.
    check_log_.log(spdlog::level::warn, "create:" + table,
                   fmt::format("could not create HBase table {} (its writes are held; tried again at the next "
                               "check): {}",
                               table, e.what()));
  }
}

void TableWatch::check_table(const std::string& table, Watched& watched, const std::vector<std::string>& families) {
  auto state = ask(table, families);
  if (state && state->status == TableStatus::missing && watched.create_if_missing) {
    create(table, watched, families);
    state = ask(table, families);
  }
  if (!state) {
    // Unanswered: a table never checked counts as writable, a run-time one too (the writers find out).
    watched.first_check_pending = false;
    return;
  }
  // Seen existing once: from now on a missing table was dropped by someone, reported, not re-created.
  if (state->status != TableStatus::missing) watched.create_if_missing = false;
  const TableStatus status = state->status;
  std::vector<std::string> missing_before;
  {
    std::lock_guard lock(missing_mutex_);
    missing_before = std::exchange(watched.missing_families, state->missing_families);
  }
  const TableStatus before = watched.status.exchange(status);
  // After the status: a writer never sees the table released with the verdict not yet stored.
  watched.first_check_pending = false;
  const bool was_available = before == TableStatus::writable;
  const bool available = status == TableStatus::writable;
  const bool first = !std::exchange(watched.known, true);
  if (first || was_available != available) observer_.on_table_available(table, available);
  if (!available && (first || before != status || missing_before != state->missing_families)) {
    spdlog::error("{}: writes to it are held and its events stay uncommitted until it is writable again; {}",
                  state_of(table, status, state->missing_families),
                  remedy(status, table, state->missing_families, watched.run_time, watched.create_if_missing));
  } else if (available && !was_available) {
    spdlog::info("HBase table {} is writable again: held writes resume", table);
  }
}

bool TableWatch::writable(const std::string& table) const {
  const auto tables = this->tables();
  const auto it = tables->find(table);
  if (it == tables->end()) return true;
  const auto& watched = *it->second;
  return !watched.first_check_pending.load() && watched.status.load() == TableStatus::writable;
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
  const auto tables = this->tables();
  for (const auto& [table, watched] : *tables) {
    const auto status = watched->status.load();
    if (status == TableStatus::writable) continue;
    std::lock_guard lock(missing_mutex_);
    problems.push_back(state_of(table, status, watched->missing_families));
  }
  return problems;
}

bool TableWatch::any_unavailable() const {
  const auto tables = this->tables();
  return std::any_of(tables->begin(), tables->end(),
                     [](const auto& entry) { return entry.second->status.load() != TableStatus::writable; });
}

void TableWatch::run() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Failures reported from here on ask for the next check, not this one.
    check_requested_ = false;
    first_checks_requested_ = false;
    lock.unlock();
    check();
    const auto last_check = Clock::now();
    lock.lock();
    for (;;) {
      if (stopping_) return;
      if (std::exchange(first_checks_requested_, false)) {
        // Tables added since: checked now (their writes are held until then), the others keep
        // their schedule. Bounded by the routes' max_tables, so no gap is needed between them.
        lock.unlock();
        check_tables(true);
        lock.lock();
        continue;
      }
      const auto period = any_unavailable() ? options_.recheck : options_.interval;
      const auto due = last_check + (check_requested_ ? std::min(options_.min_gap, period) : period);
      if (Clock::now() >= due) break;
      wake_.wait_until(lock, due);
    }
  }
}

}  // namespace hbingest::ingest
