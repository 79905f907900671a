#include "hbingest/metrics/detail/text_format.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace hbingest::metrics::detail {

namespace {

bool name_char(char c, bool first, bool colon_ok) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || (colon_ok && c == ':') || (!first && std::isdigit(u));
}

void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quote ? "\\\"" : "\"";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, true)) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, false)) return false;
  }
  return true;
}

void validate_labels(std::string_view metric, const Labels& labels, bool histogram) {
  for (const auto& [name, value] : labels) {
    if (!valid_label_name(name)) {
      throw std::invalid_argument("metric '" + std::string(metric) + "': invalid label name '" + name + "'");
    }
    if (histogram && name == "le") {
      throw std::invalid_argument("metric '" + std::string(metric) + "': label 'le' is reserved for histogram buckets");
    }
  }
}

std::string format_labels(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) {
    if (!out.empty()) out += ',';
    out += name;
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 32> buffer{};
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return ec == std::errc{} ? std::string(buffer.data(), end) : std::string("NaN");
}

void write_header(std::string& out, std::string_view name, std::string_view help, std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  append_escaped(out, help, false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void write_sample(std::string& out, std::string_view name, std::string_view labels, double value,
                  std::string_view extra) {
  out += name;
  if (!labels.empty() || !extra.empty()) {
    out += '{';
    out += labels;
    if (!labels.empty() && !extra.empty()) out += ',';
    out += extra;
    out += '}';
  }
  out += ' ';
  out += format_value(value);
  out += '\n';
}

}  // namespace hbingest::metrics::detail
