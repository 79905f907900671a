#pragma once
// Config → component options: the one place that reads config::Config on behalf of the ingest,
// query and connector modules, none of which depends on the config file's shape.

#include <string_view>

#include "hbingest/config/config.h"
#include "hbingest/connectors/dead_letter_producer.h"
#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/http_schema_registry.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/connectors/row_sink.h"
#include "hbingest/connectors/thrift2_options.h"
#include "hbingest/ingest/pipeline.h"
#include "hbingest/ingest/pipeline_metrics.h"
#include "hbingest/ingest/table_bootstrap.h"
#include "hbingest/ingest/table_watch.h"
#include "hbingest/ingest/writer_pool.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query.h"
#include "hbingest/routing/route.h"

namespace hbingest::app {

// With hbase.sasl.mechanism GSSAPI, sasl.ccache is left empty: whoever logs in from hbase.sasl.keytab
// sets it to the private credential cache it keeps (an empty one would use krb5's default cache).
connectors::Thrift2Options thrift2_options(const config::HBaseConfig& hbase);
connectors::KafkaSourceOptions kafka_source_options(const config::KafkaConfig& kafka);
// librdkafka's read-ahead (queued.max.messages.kbytes) in bytes: kafka.properties' value, or an
// eighth of writer.max_inflight_bytes between 1 MiB and 64 MiB (at most half of it). It is counted
// inside writer.max_inflight_bytes: pipeline_options() bounds the events in flight by the rest.
std::size_t kafka_read_ahead_bytes(const config::Config& config);
// The HTTP client's options; schema_registry.url must be set (check-config requires it wherever a
// format reads schemas).
connectors::HttpSchemaRegistryOptions schema_registry_options(const config::SchemaRegistryConfig& registry);
connectors::DeadLetterProducerOptions dead_letter_options(const config::Config& config);
query::EngineOptions engine_options(const config::QueryConfig& query);
connectors::WriteOptions write_options(const config::WriterConfig& writer);
ingest::RetryPolicy retry_policy(const config::WriterConfig& writer);
// The batches the writers may have in flight while a query of this daemon runs (GatewayShare):
// half of writer.writers, at least one.
int writer_batches_while_querying(const config::WriterConfig& writer);
ingest::PipelineOptions pipeline_options(const config::Config& config);
ingest::TableSettings table_settings(const config::Config& config);
ingest::TableWatchOptions table_watch_options(const config::Config& config);
// What creating or watching `table` ("ns:table", the route's or one its template made) needs: the
// route's families and the split keys of its key spec.
ingest::TablePlan table_plan(const routing::Route& route, const std::string& table);
// The tables the routes write that are known before any event: plain names, and what templates make
// of their listed values (not those allowed by a pattern only: they appear at run time).
std::vector<ingest::TablePlan> route_tables(const routing::RouteSet& routes);
// The label values of per-event metric series: the routes' event types and the literal topics.
ingest::MetricLabels metric_labels(const config::Config& config);

}  // namespace hbingest::app
