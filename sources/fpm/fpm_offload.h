// Offload replies to zebra: after each route zebra sent is on the device, it
// gets an FPM reply (fpm_reply.h) with its state; later changes of state (a
// neighbour resolved, a failed push recovered) are found by walking the
// kernel's routes of zebra's protocols at a quiet point, at most every
// `walk_every`, after commits.
//
// zebra's routes are the kernel's (it installs each before sending it), so
// what zebra was last told is a 2-bit note beside the kernel's route
// (RouteNotes), cleared at each connect (zebra waits for a reply to every
// route it replays) and for each route a frame brings. zebra's protocols are
// those its frames carried: a route of another (BIRD's, a static `ip route`)
// is never answered, as zebra did not install it.
//
// Cost: no per-route memory of its own; the routes sent and not yet asked
// about at most `sent_max`, the question in flight at most `ask_max`
// prefixes; replies waiting for zebra's socket at most `buffer_limit` bytes
// (twice: one buffer being written, one filling). A reply that does not fit
// is counted (overruns) and its route keeps its old note, so the next walk —
// at the next quiet point — sends it. A slow zebra never holds up a commit:
// the device side only answers questions.
#pragma once

#include <bitset>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/ip.h"
#include "sources/fpm/fpm_reply.h"
#include "sources/route_notes.h"

namespace fibnic {

struct FpmReplyConfig {
  uint32_t table = 254;
  size_t ask_max = 4096;
  size_t sent_max = 16384;
  size_t buffer_limit = 1 << 20;
  std::chrono::milliseconds quiet{1000};        // no frame from zebra this long = a quiet point
  std::chrono::milliseconds walk_every{10000};  // re-check every route at most this often
  std::function<void(const std::string&)> log;
};

class FpmReplies : public std::enable_shared_from_this<FpmReplies> {
 public:
  FpmReplies(boost::asio::io_context& io, RouteNotes& notes, FpmOffloadOracle& oracle, FpmReplyConfig config);
  // All on the source's loop.
  void Connected(std::shared_ptr<boost::asio::ip::tcp::socket> socket);
  void Closed();
  void Sent(const Prefix& p, uint8_t protocol);  // zebra sent (installed) this route
  void FramesApplied();  // after each read: ask about the routes zebra sent
  void Stop();
  const FpmReplyCounts& counts() const { return counts_; }
  size_t buffered() const { return out_.size() + (writing_ ? writing_->size() : 0); }

 private:
  void Ask();
  void OnAnswer(uint64_t conn, const std::vector<Prefix>& asked, const std::vector<FpmOffload>& states);
  bool Append(const Prefix& p, uint8_t protocol, FpmOffload state);
  void Flush();
  void Tick();

  boost::asio::io_context& io_;
  RouteNotes& notes_;
  FpmOffloadOracle& oracle_;
  FpmReplyConfig cfg_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<boost::asio::ip::tcp::socket> socket_;
  uint64_t conn_ = 0;  // bumped per connection: answers and writes of an old one are dropped
  bool asking_ = false;
  bool stopped_ = false;
  // The walk: where it is, whether it re-checks every route or only those
  // waiting for a reply, and what is wanted after it.
  bool walking_ = false, walk_all_ = false;
  size_t walk_cursor_ = 0;
  bool want_walk_ = false, want_walk_all_ = false;
  uint64_t commits_walked_ = 0;
  std::chrono::steady_clock::time_point last_frame_, last_full_walk_;
  std::bitset<256> protocols_;   // rtm_protocols zebra's frames carried
  std::vector<Prefix> sent_;     // sent since the last question (at most sent_max)
  // Answered kNone: asked again after a commit; with when first asked.
  std::vector<std::pair<Prefix, std::chrono::steady_clock::time_point>> unknown_;
  std::vector<std::chrono::steady_clock::time_point> asked_since_;  // of the question in flight
  uint64_t unknown_commits_ = 0;  // the commits when the first of them was answered
  std::vector<uint8_t> out_;
  std::shared_ptr<std::vector<uint8_t>> writing_;
  FpmReplyCounts counts_;
};

}  // namespace fibnic
