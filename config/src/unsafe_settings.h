#pragma once
// Settings that load and run but weaken a guarantee: the one list of warnings that check-config
// prints and `run`/`serve` log at warn at start-up (LoadResult::warnings).

#include "hbingest/config/config.h"
#include "reader.h"

namespace hbingest::config::detail {

// Records a warning for each unsafe setting of `config`, at the key that set it.
void warn_unsafe_settings(const Config& config, Reader& reader);

}  // namespace hbingest::config::detail
