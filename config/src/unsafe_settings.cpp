#include "unsafe_settings.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "hbingest/support/host_port.h"
#include "hbingest/support/text.h"

namespace hbingest::config::detail {

namespace {

using Properties = std::map<std::string, std::string>;

// The value of the first of `names` (librdkafka aliases) that is set, lowercased.
std::optional<std::pair<std::string, std::string>> property(const Properties& properties,
                                                            std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const auto it = properties.find(name); it != properties.end())
      return std::pair{it->first, support::to_lower(it->second)};
  }
  return std::nullopt;
}

// TLS and SASL settings shared by the consumer and the dead-letter producer (wiring copies the
// consumer's security.*, ssl.* and sasl.* to the producer).
void warn_transport(const Properties& properties, const std::string& section, Reader& r) {
  const auto protocol = property(properties, {"security.protocol"});
  const auto mechanism = property(properties, {"sasl.mechanism", "sasl.mechanisms"});
  if (protocol && protocol->second == "sasl_plaintext" && mechanism && mechanism->second == "plain") {
    r.warning_at(section + ".security.protocol",
                 "sasl_plaintext with sasl.mechanism PLAIN sends the SASL password to the broker in clear text; "
                 "use sasl_ssl");
  }
  if (const auto verify = property(properties, {"enable.ssl.certificate.verification"});
      verify && (verify->second == "false" || verify->second == "0")) {
    r.warning_at(section + ".enable.ssl.certificate.verification",
                 "the broker's certificate is not verified: anyone on the path can impersonate the broker and read "
                 "the events and the SASL credentials");
  }
  if (const auto identification = property(properties, {"ssl.endpoint.identification.algorithm"});
      identification && identification->second == "none") {
    r.warning_at(section + ".ssl.endpoint.identification.algorithm",
                 "the broker's host name is not checked against its certificate: any certificate the CA signed "
                 "is accepted for any broker");
  }
}

void warn_kafka(const Config& c, Reader& r) {
  if (const auto reset = property(c.kafka.properties, {"auto.offset.reset"})) {
    if (reset->second == "latest" || reset->second == "largest" || reset->second == "end") {
      r.warning_at("kafka.properties." + reset->first,
                   "a new consumer group (or one whose committed offsets expired) starts at the end of each "
                   "partition and silently skips every event already in it; hbingest's default is earliest");
    }
  }
  warn_transport(c.kafka.properties, "kafka.properties", r);
}

void warn_dead_letters(const Config& c, Reader& r) {
  if (const auto acks = property(c.dlq.properties, {"acks", "request.required.acks"})) {
    if (acks->second != "all" && acks->second != "-1") {
      r.warning_at("dlq.properties." + acks->first,
                   "a dead letter acknowledged with acks " + acks->second +
                       " can be lost with its broker after the original event's offset was committed; use all");
    }
  }
  warn_transport(c.dlq.properties, "dlq.properties", r);
}

// A non-loopback listen without a token is an error (sanity_check.cpp) unless
// http.allow_unauthenticated says it is meant; what remains for such a config is this warning.
void warn_http(const Config& c, Reader& r) {
  if (!c.http.enabled || c.http.bearer_token || !c.http.allow_unauthenticated) return;
  // A token source that failed to resolve is a problem already; the port is not meant to be open.
  for (const char* source : {"http.bearer_token", "http.token_file", "http.token_env"}) {
    if (r.has_problem(source)) return;
  }
  try {
    const auto listen = support::parse_host_port(c.http.listen, 0);
    if (!support::is_loopback_host(listen.host)) {
      r.warning_at("http.listen",
                   r.shown("http.listen", c.http.listen) +
                       " is reachable from other machines and http.allow_unauthenticated is true: anyone who reaches "
                       "it can read every stored event through /v1/events; set http.token_file or listen on "
                       "127.0.0.1");
    }
  } catch (const std::invalid_argument&) {
    // Reported as a problem by the sanity check.
  }
}

}  // namespace

void warn_gateway_tls(const Config& c, Reader& r) {
  if (c.hbase.tls.enabled && !c.hbase.tls.verify_hostname) {
    r.warning_at("hbase.tls.verify_hostname",
                 "the gateway's host name is not checked against its certificate: any certificate the CA signed "
                 "is accepted for any gateway");
  }
}

void warn_unsafe_settings(const Config& config, Reader& reader) {
  warn_kafka(config, reader);
  warn_dead_letters(config, reader);
  warn_gateway_tls(config, reader);
  warn_http(config, reader);
}

}  // namespace hbingest::config::detail
