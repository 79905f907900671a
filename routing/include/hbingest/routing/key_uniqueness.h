#pragma once
// Is a route's row key unique per Kafka record? Two records that build the same key write one row
// (the later one's cells overwrite the earlier one's): silent loss unless the key is meant to keep
// only the latest event per entity.
//
// A key identifies a record by kafka:partition and kafka:offset, and by kafka:topic as well when
// the subscription can deliver more than one topic (several topics, or a ^regex). The default
// `events` key has partition and offset but no topic, so with several topics two records at the
// same partition and offset, of the same event type and millisecond, collide: that is a
// configuration error (use preset `events_by_topic`, or add a component reading kafka:topic). A
// key with no partition/offset at all (timeline, user_history…) keeps one row per entity and
// millisecond by design: a warning says so. A hash of partition and offset keeping fewer than 8
// bytes is neither: it collides after a few hundred to a few ten thousand records, an error.

#include <string>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::routing {

struct KeyUniqueness {
  std::vector<std::string> problems;  // collisions the operator did not ask for: `run` refuses to start
  std::vector<std::string> warnings;  // collisions by design: check-config says so
};

// `name` is the route's place in the config ("routes[0]", "default_route"); `route_topics` its
// `topics` (empty: the subscription's).
KeyUniqueness check_key_uniqueness(const config::Config& config, const std::vector<std::string>& route_topics,
                                   const keyspec::KeySpec& spec, std::string_view name);

}  // namespace hbingest::routing
