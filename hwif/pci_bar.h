// The device's BAR through sysfs: /sys/bus/pci/devices/<BDF>/resource0,
// mmap'd uncached (resource files map with _PAGE_PCD; O_SYNC for good measure)
// and accessed only as aligned volatile 32-bit loads/stores (MappedBar). The
// device is chosen by BDF ("0000:03:00.0", domain optional) or by vendor:device
// ID ("10ee:7021", which must then match exactly one function).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwif/mapped_bar.h"

namespace fibnic {

inline constexpr const char* kSysfsPciDevices = "/sys/bus/pci/devices";

struct PciId {
  uint16_t vendor = 0;
  uint16_t device = 0;
  std::string ToString() const;  // "10ee:7021"
  bool operator==(const PciId&) const = default;
};

// "0000:03:00.0" or "03:00.0" → canonical "0000:03:00.0" (lower-case hex).
StatusOr<std::string> NormalizeBdf(std::string_view text);
// "10ee:7021" (hex, 1..4 digits each).
StatusOr<PciId> ParsePciId(std::string_view text);

// The BDFs under sysfs_root (a /sys/bus/pci/devices-like directory) whose
// vendor and device files match id, sorted.
StatusOr<std::vector<std::string>> FindPciDevices(const std::string& sysfs_root, const PciId& id);

// A config value naming the device — a BDF or a vendor:device ID — resolved to
// the one BDF present under sysfs_root. Refuses none or several matches.
StatusOr<std::string> ResolvePciDevice(const std::string& sysfs_root, std::string_view selector);

class PciBar : public MappedBar {
 public:
  // Maps <sysfs_root>/<bdf>/<resource> (the BAR's size is the file's size),
  // enabling the function's memory decoding first if it is disabled.
  static StatusOr<std::unique_ptr<PciBar>> Open(const std::string& sysfs_root, const std::string& bdf,
                                                const std::string& resource = "resource0");
  ~PciBar() override;
  PciBar(const PciBar&) = delete;
  PciBar& operator=(const PciBar&) = delete;

  // Posted writes reach the device before a read of it completes: reading the
  // ID register back orders everything written so far.
  Status Flush() override;
  const std::string& bdf() const { return bdf_; }

 private:
  PciBar(std::string bdf, int fd, uint8_t* map, size_t size);
  std::string bdf_;
  int fd_ = -1;
  uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
};

}  // namespace fibnic
