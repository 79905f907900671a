// Placeholder until the avro format lands: refuses to be made (issue 23).
#include <stdexcept>

#include "formats.h"

namespace hbingest::event_formats {

std::unique_ptr<InputFormat> make_avro_format(connectors::SchemaRegistry&, SchemaCacheLimits) {
  throw std::invalid_argument("format avro is not built into this hbingest");
}

}  // namespace hbingest::event_formats
