// Opening and identifying a FIBNIC: its read-only CSR block (what a fresh BAR
// file is preset with), the probe that refuses anything that is not a FIBNIC
// of a model we can drive, and the file backend made for a chosen model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hwif/bar.h"
#include "hwif/file_bar.h"
#include "device/fibnic_regs.h"

namespace fibnic {

// Bytes 0 .. kOffControl of a FIBNIC of this model: ID, VERSION, CAPS0..2.
// Preset into a new BAR file; CONTROL and everything after start at zero
// (forwarding off, all tables empty: everything punts).
std::vector<uint8_t> FibnicCsrPreset(const regs::Caps& caps);

// Checks ID, VERSION (major 1; a higher minor only adds registers in reserved
// space), and that CAPS describe a model this host software can drive and
// that fits in the BAR. With `expected`, the CAPS must also describe its model
// (the configured one); the DROP capability is the device's own. Returns the
// device's CAPS.
StatusOr<regs::Caps> ProbeFibnic(Bar& bar, const regs::Caps* expected = nullptr);

// The file backend for a FIBNIC of model caps: created (preset with
// FibnicCsrPreset) when absent, size-checked and probed when present (a file
// made before DROP keeps its CAPS: ProbeFibnic on it tells). A path on a
// bpffs is a BAR map pinned there (hwif/bpf_bar.h: what fibnic-emu's XDP
// path reads), created and checked the same way.
StatusOr<std::unique_ptr<MappedBar>> OpenFibnicFile(const std::string& path, const regs::Caps& caps);

// "2-bit (4 MiB SRAM, 3 next-hops)" — for messages and the dashboard.
std::string DescribeModel(const regs::Caps& caps);

}  // namespace fibnic
