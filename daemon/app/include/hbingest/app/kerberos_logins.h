#pragma once
// The Kerberos logins of a command that connects: one kerberos::TicketKeeper per link whose config
// asks for GSSAPI, each into its own MEMORY cache.
//  * kafka: kafka.properties `sasl.mechanism: GSSAPI`; the keytab and principal are librdkafka's own
//    sasl.kerberos.keytab / sasl.kerberos.principal. librdkafka's cyrus-sasl reads the process's
//    default cache, so KRB5CCNAME names "MEMORY:hbingest-kafka" (set_kafka_ccache_env, before any
//    thread: setenv is not safe against a concurrent getenv; it also starts cyrus-sasl's client side
//    with its log routed to spdlog, before librdkafka does) and librdkafka's own kinit is turned
//    off (wiring.cpp, connectors::use_own_kerberos_login).
//  * hbase: hbase.sasl (mechanism GSSAPI): our Thrift transport names its cache explicitly
//    ("MEMORY:hbingest-hbase", Thrift2SaslOptions::ccache), so both links coexist.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/kerberos/ticket_keeper.h"

namespace hbingest::app {

inline constexpr const char* kKafkaCcache = "MEMORY:hbingest-kafka";
inline constexpr const char* kHBaseCcache = "MEMORY:hbingest-hbase";

// The login of the kafka link, or nullopt when kafka.properties do not ask for GSSAPI. Throws
// std::invalid_argument when they do but name no keytab (the daemon cannot log in without one).
std::optional<kerberos::LoginOptions> kafka_login_options(const config::KafkaConfig& kafka);

// The login of the hbase link (hbase.sasl with mechanism GSSAPI) into kHBaseCcache.
kerberos::LoginOptions hbase_login_options(const config::HBaseConfig& hbase);

// Points librdkafka's cyrus-sasl at the kafka link's cache (KRB5CCNAME) when that link uses GSSAPI.
// Call before any thread starts.
void set_kafka_ccache_env(const config::Config& config);

// The links a command connects to (`serve` and `query` only read HBase).
struct KerberosLinks {
  bool kafka = true;
  bool hbase = true;
};

class KerberosLogins {
 public:
  // Logs in every kerberized link of `links` once: throws kerberos::LoginError (one line: link, principal,
  // keytab, cause) when one fails, so the command stops at start with the reason. Then each keeper
  // renews on its own thread. A config without GSSAPI makes an empty object.
  KerberosLogins(const config::Config& config, KerberosLinks links);
  // Stops the keepers (joins their threads).
  ~KerberosLogins();
  KerberosLogins(const KerberosLogins&) = delete;
  KerberosLogins& operator=(const KerberosLogins&) = delete;

  // For /readyz: one sentence per link whose logins are failing while its ticket has expired or
  // expires within kReadinessMargin. Any thread.
  std::vector<std::string> not_ready_reasons() const;
  std::vector<kerberos::KeeperStatus> statuses() const;
  bool empty() const noexcept { return keepers_.empty(); }

  // A ticket this close to its end with the KDC failing is as good as gone: new connections (a
  // writer's reconnect, a rebalance's) would fail within it.
  static constexpr std::chrono::seconds kReadinessMargin{60};

 private:
  std::vector<std::unique_ptr<kerberos::TicketKeeper>> keepers_;
};

// hbingest_kerberos_ticket_valid_until_seconds{link} and hbingest_kerberos_login_failures_total{link},
// read from the keepers at scrape time (server::ScrapeTimeMetrics: held by weak_ptr, nothing to
// unregister). `statuses` must stay callable until the HTTP server is stopped.
class KerberosMetrics final : public prometheus::Collectable {
 public:
  explicit KerberosMetrics(std::function<std::vector<kerberos::KeeperStatus>()> statuses);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<std::vector<kerberos::KeeperStatus>()> statuses_;
};

}  // namespace hbingest::app
