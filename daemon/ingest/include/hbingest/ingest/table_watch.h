#pragma once
// Watches the route tables while the daemon runs: does each exist, is it enabled, has it every
// column family its routes write to? A put into a table that is not writable never "succeeds" on HBase 2.6's Thrift2
// gateway: a missing table or family fails at once and a disabled one after HBase's client has
// retried for ~150 s (its defaults), each as a retriable TIOError, so the writers keep the batch
// and nothing past it is committed. What the writers cannot tell is why. The watch says it once
// per change (a log line, hbingest_table_available{table}, a /readyz reason) and, as the writers'
// TableGate, makes them hold batches for a table known to be unavailable rather than park gateway
// threads in puts that cannot succeed.
//
// Checks run on the watch's own thread (start()): at once, every `interval`, every `recheck` while
// a table is unavailable, and soon (`min_gap` after the last check) after a write failure. Only a
// check HBase answers changes a verdict: one that fails (HBase unreachable, no ADMIN permission)
// keeps the last, and a table never checked counts as writable.
//
// The set of tables grows while the daemon runs (watch(): a template's table first made by an
// event). Such a table is checked at once, on the watch's thread; its writes are held until that
// first check has run, so no put goes to a table not yet known to exist, and a check that cannot
// answer releases them (as for any table never checked). Under `create` a run-time table its first
// checks find missing is created; a table that existed once and disappears is only reported.
//
// Thread safety: writable(), write_failed(), watch() and problems() from any thread; check() runs
// one round on the calling thread, serialised with the watch's own.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/ingest/pipeline_observer.h"
#include "hbingest/ingest/table_bootstrap.h"
#include "hbingest/ingest/writer_pool.h"
#include "hbingest/support/rate_limited_log.h"

namespace hbingest::ingest {

struct TableWatchOptions {
  std::vector<std::string> families{"d"};  // the column families a table's routes write to
  // Per table ("ns:table"), its own families instead of `families` (tables of several routes,
  // or with a row mapping of their own).
  std::map<std::string, std::vector<std::string>, std::less<>> table_families;
  std::chrono::milliseconds interval{30000};  // between checks while every table is writable
  std::chrono::milliseconds recheck{2000};    // between checks while one is not
  std::chrono::milliseconds min_gap{1000};    // a write failure's check waits this long after the last
  // table.create_table: a table watched at run time (watch()) that its checks find missing before it
  // ever existed is created with these settings, with its plan's families and split keys. Unset:
  // it is reported like any unavailable table.
  std::optional<TableSettings> create;
};

class TableWatch final : public TableGate {
 public:
  // `tables`: the routes' tables as "ns:table" (duplicates are watched once). The source and the
  // observer must outlive the watch; the source is used by one thread at a time.
  TableWatch(const std::vector<std::string>& tables, TableWatchOptions options, connectors::TableStatusSource& source,
             PipelineObserver& observer);
  // Stops and joins the thread: waits for a check in progress (up to hbase.read_timeout per call
  // when the gateway does not answer) unless stop() was called early enough.
  ~TableWatch() override;
  TableWatch(const TableWatch&) = delete;
  TableWatch& operator=(const TableWatch&) = delete;

  // Starts the checking thread (once). Its first check runs at once.
  void start();
  // Asks the thread to stop without waiting for it: called as the daemon starts shutting down, so a
  // check still in progress ends while the rest of the shutdown runs, not after it. Verdicts stay.
  void stop();
  // One round over every table.
  void check();
  // Watches a table the routes started writing at run time, or adds families to one watched
  // (`plan.families` empty: options.families). A new table is checked at once on the watch's
  // thread (created there under options.create); until that check has run, writable() is false
  // for it. Never waits for HBase: cheap enough for the pipeline thread.
  void watch(const TablePlan& plan);

  bool writable(const std::string& table) const override;
  void write_failed(const std::string& table) override;
  // One sentence per table known not to be writable, e.g. "HBase table default:events is disabled".
  std::vector<std::string> problems() const;

 private:
  struct Watched {
    std::vector<std::string> families;    // tables_mutex_ (watch() may add some)
    std::vector<std::string> split_keys;  // fixed at insertion
    bool run_time = false;                // added by watch(), not at construction; fixed at insertion
    // Written by the checks only; read by any thread.
    std::atomic<connectors::TableStatus> status{connectors::TableStatus::writable};
    // Added at run time and not checked yet: held (writable() false) until the first check ran.
    std::atomic<bool> first_check_pending{false};
    // Under options.create, a run-time table never seen existing yet (check_mutex_ after insertion).
    bool create_if_missing = false;
    bool known = false;                         // check() has had an answer for it (check_mutex_)
    std::vector<std::string> missing_families;  // of the last answer (missing_mutex_)
  };

  using TableMap = std::map<std::string, std::shared_ptr<Watched>, std::less<>>;

  void run();
  // One round over every table, or over those still waiting for their first check.
  void check_tables(bool only_first);
  void check_table(const std::string& table, Watched& watched, const std::vector<std::string>& families);
  // The table's state as HBase answers it, or nullopt (logged) when it cannot.
  std::optional<connectors::TableState> ask(const std::string& table, const std::vector<std::string>& families);
  void create(const std::string& table, const Watched& watched, const std::vector<std::string>& families);
  bool any_unavailable() const;
  std::shared_ptr<const TableMap> tables() const;
  std::vector<std::string> families_of(const Watched& watched) const;

  const TableWatchOptions options_;
  connectors::TableStatusSource& source_;
  PipelineObserver& observer_;
  std::mutex check_mutex_;  // one check() at a time: the source is not thread-safe
  // The tables as an immutable map: writers copy the pointer under tables_mutex_ (held for that
  // only) and look up without a lock; watch() publishes a copy with the new table, made outside
  // the lock (one copy per table a template makes, of a map bounded by the routes' max_tables). A
  // Watched is shared by every map published and never removed, so a check holds it safely. Not a
  // shared_mutex: glibc's prefers readers, and busy writers starved watch() on the pipeline thread;
  // nor std::atomic<std::shared_ptr>: libstdc++ 12's is a data race to TSan.
  // Declared after check_mutex_, which is the only lock ever held while taking it.
  mutable std::mutex tables_mutex_;  // tables_ and every Watched::families
  std::shared_ptr<const TableMap> tables_;
  mutable std::mutex missing_mutex_;  // Watched::missing_families, for problems() on other threads
  support::RateLimitedLog check_log_{std::chrono::seconds(60)};

  std::mutex mutex_;  // guards the four below
  std::condition_variable wake_;
  bool check_requested_ = false;
  bool first_checks_requested_ = false;  // watch() added a table
  bool stopping_ = false;
  // Last member: started (in start()) after everything it uses exists, joined first.
  std::thread thread_;
};

}  // namespace hbingest::ingest
