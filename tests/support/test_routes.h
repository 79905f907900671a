#pragma once
// Routes for pipeline tests: a table, event types and a key spec, with the default row mapping
// (every top-level field as text in family d), as `routes:` without `columns:` configures them.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/route.h"

namespace hbingest::testing {

// `table` as "ns:table".
inline routing::Route test_route(const std::string& table, std::vector<std::string> event_types, keyspec::KeySpec spec,
                                 const config::DecodeConfig& decode = {}) {
  const auto colon = table.find(':');
  return routing::Route{"routes[0]",
                        {},
                        std::move(event_types),
                        routing::TableTemplate(table.substr(colon + 1), table.substr(0, colon), {}),
                        100,
                        std::make_shared<const keyspec::KeySpec>(std::move(spec)),
                        routing::RowMapping::from_decode(decode),
                        config::OnTombstone::dlq,
                        "test",
                        decode.format};
}

}  // namespace hbingest::testing
