#include "hbingest/app/systemd_notifier.h"

#include <systemd/sd-daemon.h>

namespace hbingest::app {

SystemdNotifier::SystemdNotifier() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_interval_ = std::chrono::milliseconds(usec / 2000);
  }
}

void SystemdNotifier::ready() const { sd_notify(0, "READY=1"); }
void SystemdNotifier::status(const std::string& text) const { sd_notify(0, ("STATUS=" + text).c_str()); }
void SystemdNotifier::watchdog() const { sd_notify(0, "WATCHDOG=1"); }
void SystemdNotifier::stopping() const { sd_notify(0, "STOPPING=1"); }

}  // namespace hbingest::app
