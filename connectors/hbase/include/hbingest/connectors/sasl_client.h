#pragma once
// cyrus-sasl's client side, shared by hbase.sasl (Thrift2 over SASL GSSAPI) and librdkafka's own
// cyrus-sasl (Kafka's sasl.mechanism GSSAPI).

namespace hbingest::connectors {

// Starts cyrus-sasl's client side once per process (idempotent, thread-safe among its own callers)
// with its log lines routed to spdlog. The first SASL connection to a gateway calls it. librdkafka
// calls sasl_client_init itself when it makes its first client, and cyrus-sasl's initialisation
// must not run twice at once: a process that uses both calls this at start-up, before it starts
// any thread or Kafka client. Throws std::runtime_error if cyrus-sasl cannot start.
void init_sasl_client();

}  // namespace hbingest::connectors
