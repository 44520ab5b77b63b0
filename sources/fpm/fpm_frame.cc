#include "sources/fpm/fpm_frame.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace fibnic {

std::vector<uint8_t> EncodeFpmFrame(const uint8_t* netlink, size_t len) {
  const size_t total = kFpmHeaderLen + len;
  std::vector<uint8_t> out(total);
  out[0] = kFpmVersion;
  out[1] = kFpmTypeNetlink;
  out[2] = static_cast<uint8_t>(total >> 8);
  out[3] = static_cast<uint8_t>(total);
  if (len != 0) std::memcpy(out.data() + kFpmHeaderLen, netlink, len);
  return out;
}

Status FpmFrameReader::TakeFrame(const uint8_t* frame, size_t len, const FrameFn& fn) {
  const size_t payload = len - kFpmHeaderLen;
  aligned_.resize((payload + 3) / 4);
  if (payload != 0) std::memcpy(aligned_.data(), frame + kFpmHeaderLen, payload);
  Status st = fn(reinterpret_cast<const uint8_t*>(aligned_.data()), payload, consumed_);
  if (!st.ok()) return st.WithContext("FPM frame at stream byte " + std::to_string(consumed_));
  consumed_ += len;
  ++frames_;
  return OkStatus();
}

Status FpmFrameReader::Feed(const uint8_t* data, size_t len, const FrameFn& fn) {
  // Frames wholly inside `data` are parsed in place; only a frame split
  // across reads is copied into pending_.
  size_t pos = 0;
  while (pos < len) {
    const uint8_t* hdr;
    size_t avail;
    if (pending_.empty()) {
      hdr = data + pos;
      avail = len - pos;
    } else {
      // Complete the pending header first, then the pending frame.
      const size_t need_hdr = pending_.size() < kFpmHeaderLen ? kFpmHeaderLen - pending_.size() : 0;
      const size_t take_hdr = std::min(need_hdr, len - pos);
      pending_.insert(pending_.end(), data + pos, data + pos + take_hdr);
      pos += take_hdr;
      if (pending_.size() < kFpmHeaderLen) return OkStatus();
      hdr = pending_.data();
      avail = pending_.size();
    }
    if (avail < kFpmHeaderLen) {
      pending_.assign(hdr, hdr + avail);
      return OkStatus();
    }
    const uint8_t version = hdr[0];
    const uint8_t type = hdr[1];
    const size_t flen = (static_cast<size_t>(hdr[2]) << 8) | hdr[3];
    auto where = [&] { return " at stream byte " + std::to_string(consumed_); };
    if (version != kFpmVersion) {
      return InvalidArgument("FPM frame" + where() + ": version " + std::to_string(version) + ", expected 1");
    }
    if (type != kFpmTypeNetlink) {
      return InvalidArgument("FPM frame" + where() + ": message type " + std::to_string(type) +
                             (type == 2 ? " (protobuf)" : "") + ", only netlink (1) is supported");
    }
    if (flen < kFpmHeaderLen) {
      return InvalidArgument("FPM frame" + where() + ": length " + std::to_string(flen) + " is shorter than the header");
    }
    if (pending_.empty()) {
      if (avail < flen) {
        pending_.assign(hdr, hdr + avail);
        return OkStatus();
      }
      RETURN_IF_ERROR(TakeFrame(hdr, flen, fn));
      pos += flen;
    } else {
      const size_t take = std::min(flen - pending_.size(), len - pos);
      pending_.insert(pending_.end(), data + pos, data + pos + take);
      pos += take;
      if (pending_.size() < flen) return OkStatus();
      std::vector<uint8_t> frame;
      frame.swap(pending_);
      RETURN_IF_ERROR(TakeFrame(frame.data(), flen, fn));
    }
  }
  return OkStatus();
}

}  // namespace fibnic
