#pragma once
// ${NAME} / ${file:PATH} substitution in config scalars (see loader.h for the rules).

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::config::detail {

// Why a substitution failed: names the variable or file and the reason.
class SubstitutionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Replaces every reference in `text`. Relative file paths resolve against `base_dir`. The contents
// read through ${file:} (secrets, whatever the key) are appended to `from_files` when given.
std::string substitute(std::string_view text, const std::filesystem::path& base_dir,
                       std::vector<std::string>* from_files = nullptr);

// Contents of a secret file (one trailing newline stripped); relative paths resolve against
// `base_dir`. Throws SubstitutionError naming the file and the OS error.
std::string read_secret_file(std::string_view path, const std::filesystem::path& base_dir);

// True when `text` holds at least one ${...} reference (not counting "$${" escapes).
bool has_reference(std::string_view text);

}  // namespace hbingest::config::detail
