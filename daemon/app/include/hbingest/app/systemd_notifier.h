#pragma once
// sd_notify for Type=notify units: READY=1, STATUS=, WATCHDOG=1, STOPPING=1.
// Every call is a no-op when not run by systemd (NOTIFY_SOCKET unset).

#include <chrono>
#include <optional>
#include <string>

namespace hbingest::app {

class SystemdNotifier {
 public:
  SystemdNotifier();
  void ready() const;
  void status(const std::string& text) const;
  void watchdog() const;
  void stopping() const;
  // The interval to ping at (half of WatchdogSec), when systemd asked for pings.
  std::optional<std::chrono::milliseconds> watchdog_interval() const { return watchdog_interval_; }

 private:
  std::optional<std::chrono::milliseconds> watchdog_interval_;
};

}  // namespace hbingest::app
