#include "hwif/recording_bar.h"

#include <cstring>

#include "hwif/bar_words.h"

namespace fibnic {

Status RecordingBar::Write32(uint64_t offset, uint32_t value) {
  RETURN_IF_ERROR(inner_.Write32(offset, value));
  writes_.push_back({offset, value});
  if (observer_) return observer_(writes_.back(), writes_.size() - 1);
  return OkStatus();
}

Status RecordingBar::Write(uint64_t offset, const void* src, size_t len) {
  return WriteAsWords(*this, offset, src, len);
}

Status RecordingBar::Replay(size_t k, std::vector<uint8_t>& image) const {
  if (k > writes_.size()) {
    return OutOfRange("replay of " + std::to_string(k) + " writes, only " + std::to_string(writes_.size()) +
                      " recorded");
  }
  for (size_t i = 0; i < k; ++i) {
    RETURN_IF_ERROR(CheckRange("replayed write", writes_[i].offset, 4, image.size()));
    std::memcpy(image.data() + writes_[i].offset, &writes_[i].value, 4);
  }
  return OkStatus();
}

}  // namespace fibnic
