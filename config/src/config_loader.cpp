#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "hbingest/config/loader.h"
#include "hbingest/support/secrets.h"
#include "reader.h"
#include "sanity_check.h"
#include "sections.h"
#include "unsafe_settings.h"

namespace hbingest::config {

namespace {

LoadResult load_text(std::string_view yaml, std::string source_name, std::filesystem::path base_dir) {
  LoadResult result;
  detail::Reader reader(std::move(source_name), std::move(base_dir));
  YAML::Node root;
  try {
    // All documents, not YAML::Load's first one: yaml-cpp ends a document at the end of its root
    // node and takes whatever follows (`{...} junk`, a stray line after a flow mapping, a second
    // `---`) as the next document, which Load would ignore without a word.
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(yaml));
    if (documents.size() > 1) {
      reader.problem(documents[1].Mark(), "",
                     "content after the end of the config document (a config is one YAML document; is a line "
                     "outside the closing '}' or ']', or a '---' too many?)");
      result.problems = reader.take_problems();
      return result;
    }
    if (!documents.empty()) root = documents.front();
  } catch (const YAML::Exception& e) {
    // Malformed YAML: nothing below can be trusted, so this is the only problem reported.
    reader.problem(e.mark, "", "malformed YAML: " + e.msg);
    result.problems = reader.take_problems();
    return result;
  }
  if (root.IsNull()) {
    YAML::Mark top;
    reader.problem(top, "", "the config is empty; it needs at least kafka, hbase and routes");
  } else {
    detail::read_mapping(root, "", detail::config_options(), result.config, reader);
    if (root.IsMap()) {
      detail::sanity_check(result.config, reader);
      detail::warn_unsafe_settings(result.config, reader);
    }
  }
  result.problems = reader.take_problems();
  result.warnings = reader.take_warnings();
  result.config.secrets = reader.take_secrets();
  support::register_secrets(result.config.secrets);
  return result;
}

std::string_view file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// Far above any config (routes with inline key specs included), far below a memory problem.
constexpr std::size_t kMaxConfigFileBytes = 4 * 1024 * 1024;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads the config file into `text`; an error message otherwise. Only a regular file of at most
// kMaxConfigFileBytes (or a symlink to one, as a Kubernetes ConfigMap mount is) is read: a FIFO
// nobody writes to, /dev/stdin or /dev/zero would block the loader or never end - at a SIGHUP
// reload too. O_NONBLOCK makes the
// open of a FIFO return at once so fstat can tell; it changes nothing for a regular file.
std::optional<std::string> read_config_file(const std::filesystem::path& path, std::string& text) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return std::string("cannot read the config file: ") + std::strerror(errno);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return std::string("cannot read the config file: ") + std::strerror(errno);
  if (!S_ISREG(status.st_mode)) {
    return "the config must be a regular file, this is " + std::string(file_kind(status.st_mode)) +
           "; nothing was read";
  }
  // Regular is not small: a path pointing at a log, a sparse file or /proc/kcore would be read
  // whole, at every SIGHUP too, until memory runs out. The reads stop past the limit as well, for a
  // file that grows while it is read or whose size says nothing (/proc).
  const auto too_large = [] {
    return "the config file is larger than " + std::to_string(kMaxConfigFileBytes / (1024 * 1024)) +
           " MiB (is the path right?); nothing was loaded";
  };
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxConfigFileBytes) return too_large();
  text.clear();
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n == 0) return std::nullopt;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string("cannot read the config file: ") + std::strerror(errno);
    }
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigFileBytes) return too_large();
  }
}

Config or_throw(LoadResult result) {
  if (!result.problems.empty()) throw ConfigError(std::move(result.problems));
  return std::move(result.config);
}

}  // namespace

LoadResult try_load_config_text(std::string_view yaml, std::string_view source_name) {
  return load_text(yaml, std::string(source_name), std::filesystem::current_path());
}

LoadResult try_load_config(const std::filesystem::path& path) {
  std::string text;
  if (auto error = read_config_file(path, text)) {
    LoadResult result;
    result.problems.push_back(path.string() + ": " + *error);
    return result;
  }
  const std::filesystem::path base_dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  LoadResult result = load_text(text, path.string(), base_dir);
  result.config.source = path;
  return result;
}

Config load_config(const std::filesystem::path& path) { return or_throw(try_load_config(path)); }

Config load_config_text(std::string_view yaml, std::string_view source_name) {
  Config config = or_throw(try_load_config_text(yaml, source_name));
  config.source = std::filesystem::path(source_name);
  return config;
}

}  // namespace hbingest::config
