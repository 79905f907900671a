#pragma once
// Label sets of a metric: name → value, ordered by name (the exposition prints them in that order).

#include <map>
#include <string>

namespace hbingest::metrics {

using Labels = std::map<std::string, std::string>;

}  // namespace hbingest::metrics
