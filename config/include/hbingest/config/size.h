#pragma once
// Byte sizes in config values: an integer with an optional unit. Binary units KiB, MiB, GiB, TiB
// (powers of 1024), decimal units KB, MB, GB, TB (powers of 1000), B or no unit for bytes
// ("2MiB", "512KiB", "1000").

#include <cstddef>
#include <string>
#include <string_view>

namespace hbingest::config {

// Throws std::invalid_argument (bad syntax, unknown unit, overflow) quoting the text.
std::size_t parse_size(std::string_view text);

// The largest binary unit that represents the value exactly ("2MiB", "1536KiB", "1000").
std::string format_size(std::size_t bytes);

}  // namespace hbingest::config
