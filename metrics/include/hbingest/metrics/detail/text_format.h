#pragma once
// Prometheus text exposition format 0.0.4: names, escaping and sample lines. Used by Family's
// template code; not part of the API.

#include <string>
#include <string_view>

#include "hbingest/metrics/labels.h"

namespace hbingest::metrics::detail {

bool valid_metric_name(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_label_name(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not "__"-prefixed

// Throws std::invalid_argument naming the metric and the bad label.
void validate_labels(std::string_view metric, const Labels& labels, bool histogram);

// `a="x",b="y"` with values escaped (\\, \", \n); empty for no labels.
std::string format_labels(const Labels& labels);

// Go-compatible float text: "+Inf", "-Inf", "NaN", else the shortest round-trip form.
std::string format_value(double value);

// "# HELP name help\n# TYPE name type\n" with help escaped (\\, \n).
void write_header(std::string& out, std::string_view name, std::string_view help, std::string_view type);

// "name{labels} value\n" (braces omitted when `labels` is empty). `extra` is one more
// already-formatted label (le="0.5") appended after `labels`.
void write_sample(std::string& out, std::string_view name, std::string_view labels, double value,
                  std::string_view extra = {});

}  // namespace hbingest::metrics::detail
