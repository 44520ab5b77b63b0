// Offload replies to zebra: after the routes zebra sent are on the device,
// each gets an FPM reply (fpm_reply.h) with its state; later changes of
// state (a neighbour resolved, a failed push recovered) are found by walking
// every route at a quiet point, at most every `walk_every`, after commits.
//
// Cost: per route only FpmZebraRoute::replied (two bits of its word); the
// question in flight holds at most `ask_max` prefixes; replies waiting for
// zebra's socket at most `buffer_limit` bytes (twice: one buffer being
// written, one filling). A reply that does not fit is counted (overruns)
// and its route keeps its old `replied`, so the next walk — at the next
// quiet point — sends it. A slow zebra never holds up a commit: the device
// side only answers questions.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/ip.h"
#include "sources/fpm/fpm_reply.h"

namespace fibnic {

class FpmZebraRoutes;

struct FpmReplyConfig {
  uint32_t table = 254;
  size_t ask_max = 4096;
  size_t buffer_limit = 1 << 20;
  std::chrono::milliseconds quiet{1000};        // no frame from zebra this long = a quiet point
  std::chrono::milliseconds walk_every{10000};  // re-check every route at most this often
  std::function<void(const std::string&)> log;
};

class FpmReplies : public std::enable_shared_from_this<FpmReplies> {
 public:
  FpmReplies(boost::asio::io_context& io, FpmZebraRoutes& table, FpmOffloadOracle& oracle, FpmReplyConfig config);
  // All on the source's loop.
  void Connected(std::shared_ptr<boost::asio::ip::tcp::socket> socket);
  void Closed();
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
  FpmZebraRoutes& table_;
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
  std::vector<Prefix> unknown_;  // answered kNone: asked again after a commit
  uint64_t unknown_commits_ = 0;  // the commits when the first of them was answered
  std::vector<uint8_t> out_;
  std::shared_ptr<std::vector<uint8_t>> writing_;
  FpmReplyCounts counts_;
};

}  // namespace fibnic
