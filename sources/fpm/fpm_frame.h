// FPM framing (zebra's fpm/fpm.h): every frame is a 4-byte header — version
// (1), message type (1 = netlink), total length big-endian including the
// header — followed by one or more netlink messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"

namespace fibnic {

inline constexpr uint8_t kFpmVersion = 1;
inline constexpr uint8_t kFpmTypeNetlink = 1;
inline constexpr size_t kFpmHeaderLen = 4;

// Wraps netlink bytes into one FPM frame (for replayers and tests).
std::vector<uint8_t> EncodeFpmFrame(const uint8_t* netlink, size_t len);

// Splits a TCP byte stream into frames. Feed() may be given any slicing of
// the stream; each complete frame's payload is handed over 4-byte aligned.
class FpmFrameReader {
 public:
  using FrameFn = std::function<Status(const uint8_t* payload, size_t len, uint64_t frame_offset)>;

  // Returns the first error: a bad header (naming its stream offset) or what
  // fn returned for a frame (prefixed with the frame's offset). After an
  // error the stream is unusable; the caller drops the connection.
  Status Feed(const uint8_t* data, size_t len, const FrameFn& fn);

  uint64_t frames() const { return frames_; }
  uint64_t stream_offset() const { return consumed_; }  // start of the pending partial frame
  size_t pending_bytes() const { return pending_.size(); }

 private:
  Status TakeFrame(const uint8_t* frame, size_t len, const FrameFn& fn);
  std::vector<uint8_t> pending_;
  std::vector<uint32_t> aligned_;
  uint64_t consumed_ = 0;
  uint64_t frames_ = 0;
};

}  // namespace fibnic
