#include "hbingest/query/query_engine.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string_view>
#include <utility>

#include "counted_scanner.h"
#include "parallel_scans.h"
#include "serial_scans.h"

namespace hbingest::query {

namespace {

using detail::Clock;

// A range's current chunk and read position, as seen by the merge.
struct Cursor {
  std::vector<connectors::ScannedRow> chunk;
  std::size_t pos = 0;
  bool asked_next = false;  // prefetch() was called for the chunk after this one
  std::string last;         // merge bytes of the row before: to catch a scan out of merge order
  bool has_last = false;
};

struct HeapEntry {
  std::string_view merge;  // KeySpec::merge_bytes of the row; points into the cursor's chunk
  std::string_view key;    // the whole row key, same chunk; valid until that entry is popped
  std::size_t range;
};

// Orders the heap so that top() is the next row to emit: the smallest merge bytes first when the
// scans run forward, the largest when they run backwards, which is each scan's own order. The row
// key (salt included) and the range break ties so that the order is total.
struct HeapAfter {
  bool backwards;
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    const auto ka = std::tie(a.merge, a.key, a.range);
    const auto kb = std::tie(b.merge, b.key, b.range);
    return backwards ? ka < kb : ka > kb;
  }
};

// Which way the scans of a query run. A time-ordered merge reads every range oldest first for asc
// (newest first for desc); a time component stored reversed (MAX - ms) sorts newest first, so
// there the scans run the other way.
bool scans_backwards(const Query& query) {
  const bool desc = query.order == Order::desc;
  return query.merge == MergeBy::time && query.spec->time_descending() ? !desc : desc;
}

// Drives one query's merge over a ScanSource and hands rows to the callback.
class Merger {
 public:
  // `on_chunk` is told the largest row (held_bytes) of every chunk the merge takes.
  Merger(const Query& query, const std::vector<keyspec::ScanRange>& ranges, detail::ScanSource& source,
         const QueryEngine::RowCallback& on_row, std::function<void(std::size_t)> on_chunk)
      : query_(query),
        ranges_(ranges),
        source_(source),
        on_row_(on_row),
        on_chunk_(std::move(on_chunk)),
        event_component_(query.spec->event_component()),
        backwards_(scans_backwards(query)) {}

  void merge_by_time() {
    cursors_.resize(ranges_.size());
    std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapAfter> heap(HeapAfter{scans_backwards(query_)});
    for (std::size_t i = 0; i < ranges_.size(); ++i) {
      if (auto entry = head(i)) heap.push(*entry);
    }
    while (!heap.empty()) {
      if (limit_reached()) {
        stats_.truncated = true;
        return;
      }
      const std::size_t i = heap.top().range;
      heap.pop();
      emit(i);
      if (auto entry = head(i)) heap.push(*entry);
    }
  }

  // Ranges arrive in consumption order already (reversed for desc).
  void merge_by_key() {
    cursors_.resize(ranges_.size());
    for (std::size_t i = 0; i < ranges_.size(); ++i) {
      while (fill(i)) {
        if (limit_reached()) {
          stats_.truncated = true;
          return;
        }
        emit(i);
      }
    }
  }

  QueryStats& stats() { return stats_; }

 private:
  bool limit_reached() const { return query_.limit != 0 && stats_.rows >= query_.limit; }

  // Makes sure cursor i points at a row; false (and the range released) when it is exhausted.
  bool fill(std::size_t i) {
    Cursor& cursor = cursors_[i];
    while (cursor.pos >= cursor.chunk.size()) {
      cursor.chunk = source_.next(i);
      cursor.pos = 0;
      cursor.asked_next = false;
      if (cursor.chunk.empty()) {
        source_.finished(i);
        return false;
      }
      std::size_t largest = 0;
      for (const auto& row : cursor.chunk) largest = std::max(largest, connectors::held_bytes(row));
      on_chunk_(largest);
    }
    return true;
  }

  std::optional<HeapEntry> head(std::size_t i) {
    if (!fill(i)) return std::nullopt;
    Cursor& cursor = cursors_[i];
    const std::string& key = cursor.chunk[cursor.pos].row;
    const auto merge = query_.spec->merge_bytes(key);
    if (!merge) {
      throw QueryError("key spec '" + std::string(query_.spec->source_name()) +
                       "' has no time component: merge by time is impossible, merge by key instead");
    }
    // Within a range the merge bytes follow the scan (everything before them is the plan's fixed
    // prefix); a range whose rows differ before the time component cannot be merged by time.
    if (cursor.has_last && (backwards_ ? *merge > cursor.last : *merge < cursor.last)) {
      throw QueryError("scan " + std::to_string(i) + " (bucket " + std::to_string(ranges_[i].bucket) + ") of table " +
                       query_.table +
                       " returned rows out of time order: the plan must fix the components before time "
                       "(query by event), or merge by key");
    }
    cursor.last.assign(*merge);
    cursor.has_last = true;
    return HeapEntry{*merge, key, i};
  }

  void emit(std::size_t i) {
    Cursor& cursor = cursors_[i];
    connectors::ScannedRow& row = cursor.chunk[cursor.pos++];
    // Three quarters into a chunk, this range is likely to need its next one: ask for it now so
    // that it is (nearly) there when the merge gets to it.
    if (!cursor.asked_next && cursor.pos * 4 >= cursor.chunk.size() * 3) {
      cursor.asked_next = true;
      source_.prefetch(i);
    }
    ResultRow out;
    out.parts = query_.spec->decode(row.row);
    out.key = std::move(row.row);
    out.cells = std::move(row.cells);
    out.bucket = ranges_[i].bucket;
    out.event_component = event_component_;
    ++stats_.rows;
    on_row_(std::move(out));
  }

  const Query& query_;
  const std::vector<keyspec::ScanRange>& ranges_;
  detail::ScanSource& source_;
  const QueryEngine::RowCallback& on_row_;
  std::function<void(std::size_t)> on_chunk_;
  std::optional<std::string> event_component_;
  bool backwards_;
  std::vector<Cursor> cursors_;
  QueryStats stats_;
};

QueryOutcome classify(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const QueryTimeout&) {
    return QueryOutcome::timeout;
  } catch (const connectors::HBaseError&) {
    return QueryOutcome::hbase_error;
  } catch (...) {
    return QueryOutcome::error;
  }
}

}  // namespace

std::string QueryEngine::RowSizes::kind_of(const Query& query) {
  // The unit separator cannot be in a table name; any event id is a kind of its own.
  return query.table + '\x1f' + query.event_id.value_or("");
}

std::optional<std::size_t> QueryEngine::RowSizes::largest(const Query& query) const {
  const std::lock_guard lock(mutex_);
  const auto it = largest_.find(kind_of(query));
  if (it == largest_.end()) return std::nullopt;
  return it->second;
}

void QueryEngine::RowSizes::note(const Query& query, std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  auto kind = kind_of(query);
  if (const auto it = largest_.find(kind); it != largest_.end()) {
    it->second = std::max(it->second, bytes);
  } else if (largest_.size() < kMaxKinds) {
    largest_.emplace(std::move(kind), bytes);
  }
}

QueryEngine::QueryEngine(connectors::ScannerFactory& factory, EngineOptions options, QueryObserver* observer)
    : factory_(factory), options_(options), observer_(observer) {
  if (options_.concurrency < 1 || options_.chunk_rows < 1 || options_.prefetch_chunks < 1) {
    throw std::invalid_argument("query engine: concurrency, chunk_rows and prefetch_chunks must be >= 1 (got " +
                                std::to_string(options_.concurrency) + ", " + std::to_string(options_.chunk_rows) +
                                ", " + std::to_string(options_.prefetch_chunks) + ")");
  }
}

std::vector<keyspec::ScanRange> QueryEngine::plan(const Query& query) const { return plan_query(query); }

std::vector<keyspec::ScanRange> plan_query(const Query& query) {
  if (!query.spec) throw QueryError("query on table '" + query.table + "' has no key spec");
  if (query.full_table_splits) {
    if (query.merge != MergeBy::key) {
      throw QueryError("a full-table query mixes event types in each split: it can only merge by key");
    }
    if (query.event_id || query.from_ms || query.to_ms) {
      throw QueryError("a full-table query takes no event id or time range");
    }
    return query.spec->plan_full_table(*query.full_table_splits);
  }
  if (query.from_ms && query.to_ms && *query.from_ms >= *query.to_ms) {
    throw QueryError("empty time range: from (" + std::to_string(*query.from_ms) + ") must be before to (" +
                     std::to_string(*query.to_ms) + ")");
  }
  keyspec::PlanRequest request;
  if (query.event_id) {
    const auto component = query.spec->event_component();
    if (!component) {
      throw QueryError("key spec '" + std::string(query.spec->source_name()) + "' has no event component");
    }
    request.equals.emplace(*component, *query.event_id);
  }
  request.from_ms = query.from_ms;
  request.to_ms = query.to_ms;
  return query.spec->plan(request);
}

QueryResult QueryEngine::run(const Query& query, const QueryOptions& options) {
  QueryResult result;
  result.stats = execute(query, options, [&](ResultRow&& row) { result.rows.push_back(std::move(row)); });
  return result;
}

QueryStats QueryEngine::stream(const Query& query, const QueryOptions& options, const RowCallback& on_row) {
  return execute(query, options, on_row);
}

namespace {

// The merge needs only the first rows of each range: fetch on demand, in small first chunks.
bool limited_time_merge(const Query& query) { return query.limit != 0 && query.merge == MergeBy::time; }

// A time-merged query with limit L over n ranges needs about L/n rows from each range (its share;
// salting spreads rows evenly). The first call of each range asks for twice its share, so that a
// range rarely needs a second call and the rows read stay near 2·L, however large the ranges are;
// a range that does need more doubles its chunk on each further call, up to the configured size.
// Asking every range for full chunks instead reads up to n·chunk rows to return L (measured in
// bench/: 2.5–9× slower on a small cluster); asking for the bare share (or half again) made most
// ranges take several calls, each a round trip (through a 2 ms round trip a limited query was twice
// as slow as the same query unlimited).
struct ChunkRows {
  int first;
  int max;
};

ChunkRows chunk_rows_for(const Query& query, std::size_t ranges, int configured) {
  constexpr std::size_t kMinChunk = 16;
  if (!limited_time_merge(query) || ranges == 0) return {configured, configured};
  const std::size_t share = (query.limit + ranges - 1) / ranges;
  const std::size_t first = std::max(kMinChunk, 2 * share);
  return {static_cast<int>(std::min(first, static_cast<std::size_t>(configured))), configured};
}

// A byte budget B over n ranges: each range holds at most prefetch_chunks queued chunks, the one
// being merged and the one a call is bringing, so chunks of B / (n x (prefetch_chunks + 2)) bytes
// keep the whole query within B (one row per range at least: the merge needs every range's head). The first chunk is
// sized by the largest row read from the table before; with none yet, it is one row, and the scanner sizes the next
// ones from what it has seen.
std::size_t chunk_bytes_for(const QueryOptions& options, std::size_t ranges, int prefetch_chunks) {
  if (options.max_bytes == 0 || ranges == 0) return 0;
  return std::max<std::size_t>(1, options.max_bytes / (ranges * static_cast<std::size_t>(prefetch_chunks + 2)));
}

int first_chunk_rows(int rows, std::size_t chunk_bytes, std::optional<std::size_t> largest_row) {
  if (chunk_bytes == 0) return rows;
  if (!largest_row || *largest_row == 0) return 1;
  return static_cast<int>(std::clamp<std::size_t>(chunk_bytes / *largest_row, 1, static_cast<std::size_t>(rows)));
}

}  // namespace

QueryStats QueryEngine::execute(const Query& query, const QueryOptions& options, const RowCallback& on_row) {
  const auto started = Clock::now();
  const auto deadline = started + options.deadline.value_or(options_.deadline);
  auto report = [&](QueryOutcome outcome, std::size_t rows) {
    if (observer_) {
      observer_->on_query(outcome, std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started), rows);
    }
  };
  try {
    auto ranges = plan(query);
    if (query.merge == MergeBy::key && query.order == Order::desc) std::reverse(ranges.begin(), ranges.end());

    std::vector<connectors::ScanRequest> requests;
    requests.reserve(ranges.size());
    const auto chunk = chunk_rows_for(query, ranges.size(), options_.chunk_rows);
    const std::size_t chunk_bytes = chunk_bytes_for(options, ranges.size(), options_.prefetch_chunks);
    const int first_rows = first_chunk_rows(chunk.first, chunk_bytes, row_sizes_.largest(query));
    const std::uint64_t priority = next_query_.fetch_add(1);  // oldest query first at the scanner pool
    for (const auto& range : ranges) {
      requests.push_back(connectors::ScanRequest{.table = query.table,
                                                 .start_row = range.start,
                                                 .stop_row = range.stop,
                                                 .columns = query.columns,
                                                 .chunk_rows = first_rows,
                                                 .reversed = scans_backwards(query),
                                                 .max_chunk_rows = chunk.max,
                                                 .max_chunk_bytes = chunk_bytes,
                                                 .priority = priority});
    }
    detail::ScannerOpener opener =
        [this](const connectors::ScanRequest& request) -> std::unique_ptr<connectors::RowScanner> {
      return std::make_unique<detail::CountedScanner>(factory_.open(request), open_scanners_, observer_);
    };

    std::unique_ptr<detail::ScanSource> source;
    if (options.serial) {
      source = std::make_unique<detail::SerialScans>(std::move(requests), std::move(opener), deadline);
    } else {
      const std::size_t window =
          query.merge == MergeBy::key ? static_cast<std::size_t>(options_.concurrency) : ranges.size();
      source = std::make_unique<detail::ParallelScans>(std::move(requests), std::move(opener), options_.concurrency,
                                                       options_.prefetch_chunks, window, limited_time_merge(query),
                                                       deadline);
    }
    Merger merger(query, ranges, *source, on_row,
                  [this, &query](std::size_t largest) { row_sizes_.note(query, largest); });
    if (query.merge == MergeBy::time) {
      merger.merge_by_time();
    } else {
      merger.merge_by_key();
    }
    QueryStats stats = merger.stats();
    stats.scans = ranges.size();
    stats.scans_opened = source->opened();
    // Cancels pending scans and closes the open ones before the query counts as done.
    source.reset();
    stats.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    report(QueryOutcome::ok, stats.rows);
    return stats;
  } catch (...) {
    report(classify(std::current_exception()), 0);
    throw;
  }
}

}  // namespace hbingest::query
