#include <stdexcept>

#include "hbingest/daemon/commands.h"

namespace hbingest::daemon {

int check_config_command(const Args&) { throw std::runtime_error("not implemented yet"); }

}  // namespace hbingest::daemon
