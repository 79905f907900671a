// Placeholder until the protobuf format lands: refuses to be made (issue 23).
#include <stdexcept>

#include "formats.h"

namespace hbingest::event_formats {

std::unique_ptr<InputFormat> make_protobuf_format(connectors::SchemaRegistry&, SchemaCacheLimits) {
  throw std::invalid_argument("format protobuf is not built into this hbingest");
}

}  // namespace hbingest::event_formats
