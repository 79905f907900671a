#include "hbingest/server/events_handler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/query/events_request.h"
#include "hbingest/server/bearer_auth.h"
#include "hbingest/server/row_json.h"
#include "hbingest/support/gateway_share.h"

#include "chunk_channel.h"

namespace hbingest::server {

namespace {

constexpr std::string_view kNdjson = "application/x-ndjson";

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse res;
  res.status = status;
  res.body = dump_json(body);
  return res;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, {{"error", message}});
}

bool wants_ndjson(const HttpRequest& request) {
  const auto accept = request.header("accept");
  return accept && accept->find(kNdjson) != std::string::npos;
}

constexpr std::string_view kJsonPrefix = "{\"rows\":[";
constexpr std::size_t kChunkBytes = 32 * 1024;  // rendered rows handed over at a time (at most)
constexpr std::size_t kBufferedChunks = 4;      // between the query and the client
// Room kept under max_response_bytes for what follows the last row (totals, marker, error).
constexpr std::size_t kTrailerReserve = 1024;
constexpr std::size_t kMaxStreamedError = 128;
// A request finding every query slot taken waits this long for one before it gets 429. It is the
// Retry-After of that 429: a client told to come back after it is served no sooner, and a burst
// of queries that each end in a fraction of it is served rather than half refused.
constexpr std::chrono::seconds kAdmissionWait{1};

// Thrown from the row callback to stop the query.
struct ByteCapReached {};
struct ClientGone {};

// How a query ended; complete once its channel is closed.
struct Outcome {
  std::size_t rows = 0;
  std::size_t scans = 0;
  double elapsed_ms = 0;
  std::string truncated_by;  // "", "limit" or "max_response_bytes"
  int status = 0;            // set: it failed with this HTTP status
  std::string error;
  bool retry_after = false;
};

// One query rendering its rows into a channel from a thread of its own. Destroying it cancels the
// query (if still running) and joins the thread.
class QueryRun {
 public:
  // Rows are handed over `chunk_bytes` at a time.
  // `held_back`: what the handler waits for before it streams; the channel must hold that much
  // and one chunk more, or that wait and the query's push would wait for each other forever.
  QueryRun(query::QueryEngine& engine, query::Query events_query, bool ndjson, std::size_t row_bytes_cap,
           std::size_t chunk_bytes, std::size_t held_back, std::size_t scans, std::counting_semaphore<>& slot,
           support::GatewayShare* share)
      : channel_(std::max(kBufferedChunks * chunk_bytes, held_back + chunk_bytes)), chunk_bytes_(chunk_bytes) {
    outcome_.scans = scans;
    thread_ = std::thread([this, &engine, q = std::move(events_query), ndjson, row_bytes_cap, &slot, share] {
      {
        // Until the query is done with the gateways (a client still reading the last chunks does not count).
        const auto running = share != nullptr ? share->register_query() : support::GatewayShare::Registration{};
        produce(engine, q, ndjson, row_bytes_cap);
      }
      slot.release();
      channel_.close();
    });
  }
  ~QueryRun() {
    channel_.cancel();
    thread_.join();
  }
  QueryRun(const QueryRun&) = delete;
  QueryRun& operator=(const QueryRun&) = delete;

  detail::ChunkChannel& channel() { return channel_; }
  // Read it only after the channel has said it is closed (wait_for() true, pop() nullopt).
  const Outcome& outcome() const { return outcome_; }

 private:
  void produce(query::QueryEngine& engine, const query::Query& events_query, bool ndjson, std::size_t cap) {
    const auto start = std::chrono::steady_clock::now();
    std::string pending;
    std::size_t bytes = 0;
    try {
      // The response budget bounds the rows the query holds too: more could not be sent.
      query::QueryOptions options;
      options.max_bytes = cap;
      const auto stats = engine.stream(events_query, options, [&](query::ResultRow&& row) {
        const std::string text = dump_json(row_to_json(row, events_query));
        if (bytes + text.size() + 1 > cap) throw ByteCapReached{};
        if (!ndjson && outcome_.rows > 0) pending += ',';
        pending += text;
        if (ndjson) pending += '\n';
        bytes += text.size() + 1;
        ++outcome_.rows;
        if (pending.size() >= chunk_bytes_) {
          if (!channel_.push(std::move(pending))) throw ClientGone{};
          pending.clear();
        }
      });
      if (stats.truncated) outcome_.truncated_by = "limit";
    } catch (const ByteCapReached&) {
      outcome_.truncated_by = "max_response_bytes";
    } catch (const ClientGone&) {
      return;
    } catch (const query::QueryTimeout& e) {
      fail(504, e.what());
    } catch (const connectors::HBaseError& e) {
      fail(e.retriable() ? 503 : 502, std::string("hbase ") + e.operation() + " on " + e.endpoint() + ": " + e.what());
      outcome_.retry_after = e.retriable();
    } catch (const std::exception& e) {
      fail(500, e.what());
    } catch (...) {
      fail(500, "unknown error");
    }
    outcome_.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!pending.empty()) channel_.push(std::move(pending));
  }

  void fail(int status, std::string message) {
    outcome_.status = status;
    // It may end a streamed body, inside kTrailerReserve: HBase's messages carry Java stack text.
    // 128 bytes stay under the reserve even if every one is escaped as \u00XX.
    if (message.size() > kMaxStreamedError) message = message.substr(0, kMaxStreamedError - 3) + "...";
    outcome_.error = std::move(message);
  }

  detail::ChunkChannel channel_;
  const std::size_t chunk_bytes_;
  Outcome outcome_;
  std::thread thread_;  // last: started once the rest is built
};

// What follows the last row. `streamed`: the status line has gone out, so a failure is told here.
std::string trailer(const Outcome& outcome, bool ndjson, bool streamed) {
  const bool failed = outcome.status != 0;
  const nlohmann::json truncated_by =
      failed ? nlohmann::json("error")
             : (outcome.truncated_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(outcome.truncated_by));
  if (ndjson) {
    if (failed)
      return dump_json({{"error", outcome.error}, {"status", outcome.status}, {"count", outcome.rows}}) + "\n";
    // Not streamed: the headers tell a limit cut; a byte cap is told by a line in both cases.
    const bool marker = outcome.truncated_by == "max_response_bytes" || (streamed && !outcome.truncated_by.empty());
    if (!marker) return {};
    return dump_json({{"truncated", true}, {"truncated_by", truncated_by}, {"count", outcome.rows}}) + "\n";
  }
  nlohmann::json totals = {{"count", outcome.rows},
                           {"truncated", failed || !outcome.truncated_by.empty()},
                           {"truncated_by", truncated_by},
                           {"scans", outcome.scans},
                           {"elapsed_ms", outcome.elapsed_ms}};
  if (failed) {
    totals["error"] = outcome.error;
    totals["status"] = outcome.status;
  }
  return "]," + dump_json(totals).substr(1);  // "{" opened the document before the rows
}

}  // namespace

EventsHandler::EventsHandler(query::QueryEngine& engine, RouteLookup routes, EventsHandlerOptions options)
    : engine_(engine),
      routes_(std::move(routes)),
      options_(std::move(options)),
      rules_{.default_limit = options_.default_limit, .max_limit = options_.max_limit, .full_table_export = false},
      slots_(std::max(0, options_.max_concurrent_queries)),
      waiting_places_(std::max(1, options_.max_concurrent_queries / 2)) {}

query::Query EventsHandler::query_for(const HttpRequest& request) const {
  return query::build_query(query::parse_events_request(request.params, rules_), routes_);
}

HttpResponse EventsHandler::operator()(const HttpRequest& request) {
  if (options_.bearer_token && !server::bearer_token_matches(request, *options_.bearer_token)) {
    return server::unauthorized_response();
  }
  try {
    return run(request);
  } catch (const query::RequestError& e) {
    return json_response(400, {{"error", e.what()}, {"parameter", e.parameter()}});
  }
}

std::optional<std::string> EventsHandler::admit() {
  if (slots_.try_acquire()) return std::nullopt;
  if (!waiting_places_.try_acquire()) {
    return std::to_string(std::max(1, options_.max_concurrent_queries / 2)) + " more waiting for one already";
  }
  const bool admitted = slots_.try_acquire_for(kAdmissionWait);
  waiting_places_.release();
  if (admitted) return std::nullopt;
  return "none ended within " + std::to_string(kAdmissionWait.count()) + " s";
}

HttpResponse EventsHandler::run(const HttpRequest& request) {
  query::Query events_query = query_for(request);
  const std::size_t scans = engine_.plan(events_query).size();  // cannot throw: build_query planned it

  if (const auto refused = admit()) {
    auto res = error_response(429, "too many concurrent queries (max " +
                                       std::to_string(options_.max_concurrent_queries) + ", " + *refused + ")");
    res.headers.emplace_back("Retry-After", std::to_string(kAdmissionWait.count()));
    return res;
  }
  const bool ndjson = wants_ndjson(request);
  const std::size_t reserved = kTrailerReserve + kJsonPrefix.size();
  const std::size_t row_bytes_cap = options_.max_response_bytes > reserved ? options_.max_response_bytes - reserved : 0;
  // Takes over the slot: the query's thread releases it when the query has ended.
  // Chunks no larger than what is held back, so that streaming starts once that much is there.
  const std::size_t chunk_bytes = std::max<std::size_t>(1, std::min(kChunkBytes, options_.stream_after_bytes));
  std::shared_ptr<QueryRun> run;
  try {
    run = std::make_shared<QueryRun>(engine_, std::move(events_query), ndjson, row_bytes_cap, chunk_bytes,
                                     options_.stream_after_bytes, scans, slots_, options_.gateway_share);
  } catch (...) {
    slots_.release();  // no thread took the slot over (e.g. none could be started)
    throw;
  }

  if (run->channel().wait_for(options_.stream_after_bytes)) {
    // Over before anything was sent: the whole answer, with its own status.
    const Outcome& outcome = run->outcome();
    if (outcome.status != 0) {
      auto res = error_response(outcome.status, outcome.error);
      if (outcome.retry_after) res.headers.emplace_back("Retry-After", "1");
      return res;
    }
    HttpResponse res;
    res.content_type = std::string(ndjson ? kNdjson : std::string_view("application/json"));
    if (!ndjson) res.body = kJsonPrefix;
    while (auto chunk = run->channel().pop()) res.body += *chunk;
    res.body += trailer(outcome, ndjson, false);
    if (ndjson) {
      res.headers.emplace_back("X-Hbingest-Count", std::to_string(outcome.rows));
      res.headers.emplace_back("X-Hbingest-Truncated", outcome.truncated_by.empty() ? "false" : "true");
      res.headers.emplace_back("X-Hbingest-Scans", std::to_string(outcome.scans));
    }
    return res;
  }

  HttpResponse res;
  res.content_type = std::string(ndjson ? kNdjson : std::string_view("application/json"));
  res.stream = [run, ndjson](const BodyWriter& write) {
    bool sent = ndjson || write(kJsonPrefix);
    while (sent) {
      auto chunk = run->channel().pop();
      if (!chunk) break;
      sent = write(*chunk);
    }
    if (sent) {
      write(trailer(run->outcome(), ndjson, true));
    } else {
      run->channel().cancel();  // the client is gone: stop the query
    }
  };
  return res;
}

}  // namespace hbingest::server
