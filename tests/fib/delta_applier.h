// Test support: applies a Commit()'s deltas to BAR bytes one write at a time
// in the contract's phase order (device/fibnic_image.h), entry writes split
// into VALID=0 / fields / final, and calls back after every step so the
// test can look the device up in each intermediate state.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "device/fibnic_image.h"

namespace fibnic::testing {

// word = the SRAM word just written (only its four /24s changed), or nullopt
// after an entry write (any destination may have changed).
using StepFn = std::function<void(std::optional<uint32_t> word)>;

void ApplyStepwise(std::vector<uint8_t>& bar, const DeviceImage& final_image, const std::vector<DeviceDelta>& deltas,
                   const StepFn& after_step);

}  // namespace fibnic::testing
