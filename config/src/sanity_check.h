#pragma once
// Cross-field rules, checked once every section has been read.

#include "hbingest/config/config.h"
#include "reader.h"

namespace hbingest::config::detail {

// Records a problem for every rule `config` breaks, located at the offending key when the file
// set it (else at its section).
void sanity_check(const Config& config, Reader& reader);

}  // namespace hbingest::config::detail
