#include "hbingest/app/kerberos_logins.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <stdexcept>

#include "hbingest/connectors/kafka_security.h"
#include "hbingest/connectors/sasl_client.h"

namespace hbingest::app {

namespace {

std::string property(const config::KafkaConfig& kafka, const char* key) {
  const auto it = kafka.properties.find(key);
  return it == kafka.properties.end() ? std::string() : it->second;
}

}  // namespace

std::optional<kerberos::LoginOptions> kafka_login_options(const config::KafkaConfig& kafka) {
  if (!connectors::uses_gssapi(kafka.properties)) return std::nullopt;
  kerberos::LoginOptions options;
  options.link = "kafka";
  options.keytab = property(kafka, "sasl.kerberos.keytab");
  // librdkafka's default client principal, so that a config librdkafka accepts logs in the same.
  options.principal = property(kafka, "sasl.kerberos.principal");
  if (options.principal.empty()) options.principal = "kafkaclient";
  options.ccache = kKafkaCcache;
  if (options.keytab.empty()) {
    throw std::invalid_argument(
        "kafka.properties: sasl.mechanism GSSAPI needs sasl.kerberos.keytab: hbingest logs in from the keytab itself "
        "(as sasl.kerberos.principal, here " +
        options.principal + ") and keeps the ticket valid");
  }
  return options;
}

kerberos::LoginOptions hbase_login_options(const config::HBaseConfig& hbase) {
  // check-config requires both with GSSAPI; the keytab is already relative to the config file.
  return kerberos::LoginOptions{"hbase", hbase.sasl.principal.value_or(""), hbase.sasl.keytab.value_or("").string(),
                                kHBaseCcache};
}

void set_kafka_ccache_env(const config::Config& config) {
  if (!connectors::uses_gssapi(config.kafka.properties)) return;
  if (const char* previous = std::getenv("KRB5CCNAME"); previous != nullptr && std::string(previous) != kKafkaCcache) {
    spdlog::info("kerberos: KRB5CCNAME was {}; the kafka link uses the daemon's own cache {} instead", previous,
                 kKafkaCcache);
  }
  ::setenv("KRB5CCNAME", kKafkaCcache, 1);
  // librdkafka starts cyrus-sasl itself with no callbacks when its first client is made: started
  // here first, cyrus's own log lines reach spdlog (and two initialisations never race).
  connectors::init_sasl_client();
}

KerberosLogins::KerberosLogins(const config::Config& config, KerberosLinks links) {
  if (links.hbase && config.hbase.sasl.mechanism == config::SaslMechanism::gssapi) {
    keepers_.push_back(std::make_unique<kerberos::TicketKeeper>(hbase_login_options(config.hbase)));
  }
  if (auto kafka = links.kafka ? kafka_login_options(config.kafka) : std::nullopt) {
    keepers_.push_back(std::make_unique<kerberos::TicketKeeper>(std::move(*kafka)));
  }
}

KerberosLogins::~KerberosLogins() = default;

std::vector<std::string> KerberosLogins::not_ready_reasons() const {
  std::vector<std::string> reasons;
  const auto now = std::chrono::system_clock::now();
  for (const auto& keeper : keepers_) {
    if (auto reason = kerberos::not_ready_reason(keeper->status(), now, kReadinessMargin)) {
      reasons.push_back(std::move(*reason));
    }
  }
  return reasons;
}

std::vector<kerberos::KeeperStatus> KerberosLogins::statuses() const {
  std::vector<kerberos::KeeperStatus> out;
  out.reserve(keepers_.size());
  for (const auto& keeper : keepers_) out.push_back(keeper->status());
  return out;
}

KerberosMetrics::KerberosMetrics(std::function<std::vector<kerberos::KeeperStatus>()> statuses)
    : statuses_(std::move(statuses)) {}

std::vector<prometheus::MetricFamily> KerberosMetrics::Collect() const {
  prometheus::MetricFamily valid_until;
  valid_until.name = "hbingest_kerberos_ticket_valid_until_seconds";
  valid_until.help =
      "End of the link's current Kerberos ticket (unix time). The daemon logs in again at 2/3 of its "
      "lifetime; alert when it comes near while hbingest_kerberos_login_failures_total grows.";
  valid_until.type = prometheus::MetricType::Gauge;
  prometheus::MetricFamily failures;
  failures.name = "hbingest_kerberos_login_failures_total";
  failures.help = "Failed Kerberos logins from the link's keytab (start excluded: that one stops the daemon).";
  failures.type = prometheus::MetricType::Counter;
  for (const auto& status : statuses_()) {
    prometheus::ClientMetric until;
    until.label = {{"link", status.link}};
    until.gauge.value =
        status.valid_until ? std::chrono::duration<double>(status.valid_until->time_since_epoch()).count() : 0.0;
    valid_until.metric.push_back(std::move(until));
    prometheus::ClientMetric failed;
    failed.label = {{"link", status.link}};
    failed.counter.value = static_cast<double>(status.failures);
    failures.metric.push_back(std::move(failed));
  }
  return {std::move(valid_until), std::move(failures)};
}

}  // namespace hbingest::app
