#include "sources/fpm/fpm_offload.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

namespace fibnic {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

FpmReplies::FpmReplies(asio::io_context& io, RouteNotes& notes, FpmOffloadOracle& oracle, FpmReplyConfig config)
    : io_(io), notes_(notes), oracle_(oracle), cfg_(std::move(config)), timer_(io) {}

void FpmReplies::Connected(std::shared_ptr<asio::ip::tcp::socket> socket) {
  Closed();
  socket_ = std::move(socket);
  // A new zebra knows nothing of what the last one was told: every route it
  // replays waits for a reply.
  notes_.ClearNotes();
  last_frame_ = last_full_walk_ = Clock::now();
  commits_walked_ = oracle_.commits();
  Tick();
}

void FpmReplies::Closed() {
  ++conn_;
  socket_.reset();
  asking_ = walking_ = want_walk_ = want_walk_all_ = false;
  sent_.clear();
  unknown_.clear();
  out_ = {};
  writing_.reset();
  timer_.cancel();
}

void FpmReplies::Stop() {
  stopped_ = true;
  Closed();
}

void FpmReplies::Sent(const Prefix& p, uint8_t protocol) {
  protocols_.set(protocol);
  // A route zebra (re)sent waits for a reply, even one in the state told before.
  notes_.SetNote(p, 0);
  if (sent_.size() < cfg_.sent_max) {
    sent_.push_back(p);
  } else {
    want_walk_ = true;  // more were sent than remembered: the walk finds them (note 0)
  }
}

void FpmReplies::FramesApplied() {
  last_frame_ = Clock::now();
  Ask();
}

void FpmReplies::Tick() {
  if (stopped_ || !socket_) return;
  const auto now = Clock::now();
  // States can change without a frame (a neighbour resolved, slots moved,
  // the device recovered): at a quiet point after commits, look at every route.
  if (now - last_frame_ >= cfg_.quiet && !walking_ && oracle_.commits() != commits_walked_ &&
      now - last_full_walk_ >= cfg_.walk_every) {
    want_walk_all_ = true;
  }
  Ask();
  timer_.expires_after(cfg_.quiet);
  timer_.async_wait([self = shared_from_this(), conn = conn_](const boost::system::error_code& ec) {
    if (!ec && conn == self->conn_) self->Tick();
  });
}

void FpmReplies::Ask() {
  if (asking_ || stopped_ || !socket_) return;
  std::vector<Prefix> ask;
  ask.swap(sent_);
  asked_since_.assign(ask.size(), Clock::now());
  // Routes the device did not have yet when asked (the kernel's word on a
  // route zebra just installed may reach fibnicd after zebra's frame): asked
  // again once something was committed since.
  if (!unknown_.empty() && oracle_.commits() != unknown_commits_) {
    for (const auto& [p, since] : unknown_) {
      ask.push_back(p);
      asked_since_.push_back(since);
    }
    unknown_.clear();
  }
  if (ask.empty() && !walking_) {
    const bool quiet = Clock::now() - last_frame_ >= cfg_.quiet;
    if (want_walk_all_ && quiet) {
      walking_ = walk_all_ = true;
      want_walk_all_ = want_walk_ = false;
      commits_walked_ = oracle_.commits();
      last_full_walk_ = Clock::now();
      ++counts_.walks;
    } else if (want_walk_) {
      walking_ = true;
      walk_all_ = want_walk_ = false;
    }
    walk_cursor_ = 0;
  }
  while (ask.empty() && walking_) {
    walk_cursor_ = notes_.Walk(walk_cursor_, cfg_.ask_max, cfg_.table, [&](const Prefix& p, RouteNotes::Held& h) {
      if (protocols_[h.protocol] && (walk_all_ || h.note == 0)) ask.push_back(p);
    });
    if (walk_cursor_ == 0) walking_ = false;
    asked_since_.assign(ask.size(), Clock::now());
  }
  if (ask.empty()) return;
  asking_ = true;
  ++counts_.questions;
  auto asked = std::make_shared<const std::vector<Prefix>>(ask);
  oracle_.Ask(std::move(ask), [self = shared_from_this(), conn = conn_, asked](std::vector<FpmOffload> states) {
    asio::post(self->io_, [self, conn, asked, states = std::move(states)] { self->OnAnswer(conn, *asked, states); });
  });
}

void FpmReplies::OnAnswer(uint64_t conn, const std::vector<Prefix>& asked, const std::vector<FpmOffload>& states) {
  if (stopped_ || conn != conn_) return;  // a zebra that has gone; the new one replays
  asking_ = false;
  for (size_t i = 0; i < asked.size() && i < states.size(); ++i) {
    const FpmOffload state = states[i];
    const std::optional<RouteNotes::Held> h = notes_.Find(asked[i], cfg_.table);
    if (state == FpmOffload::kNone) {
      // Not on the device yet (the kernel's word on a route zebra just
      // installed may come after zebra's frame): asked again after a commit.
      // One the kernel still lacks after walk_every is left to the walks
      // (they find it, note 0, should it come), so that a route the kernel
      // never shows is not asked after every commit for good.
      if (h && h->note != 0) continue;  // told before
      const Clock::time_point since = i < asked_since_.size() ? asked_since_[i] : Clock::now();
      if (!h && Clock::now() - since > cfg_.walk_every) continue;
      if (unknown_.size() < cfg_.ask_max) {
        if (unknown_.empty()) unknown_commits_ = oracle_.commits();
        unknown_.emplace_back(asked[i], since);
      } else {
        want_walk_ = true;  // the walk finds it (note 0)
      }
      continue;
    }
    // Gone, not zebra's, or told already.
    if (!h || !protocols_[h->protocol] || h->note == static_cast<uint8_t>(state)) continue;
    if (!Append(asked[i], h->protocol, state)) continue;
    notes_.SetNote(asked[i], static_cast<uint8_t>(state));
  }
  Flush();
  Ask();
}

bool FpmReplies::Append(const Prefix& p, uint8_t protocol, FpmOffload state) {
  if (out_.size() + FpmReplySize(p.family()) > cfg_.buffer_limit) {
    // zebra reads slower than states change: keep the route's old `replied`
    // and send it from the walk at the next quiet point.
    if (!want_walk_all_ && cfg_.log) cfg_.log("offload replies: zebra is not reading; the rest follows at a quiet point");
    ++counts_.overruns;
    want_walk_all_ = true;
    return false;
  }
  AppendFpmReply(out_, p, cfg_.table, protocol, state);
  ++counts_.replies;
  if (state == FpmOffload::kOffloaded) ++counts_.offloaded;
  if (state == FpmOffload::kTrapped) ++counts_.trapped;
  if (state == FpmOffload::kFailed) ++counts_.failed;
  return true;
}

void FpmReplies::Flush() {
  if (writing_ || out_.empty() || !socket_) return;
  writing_ = std::make_shared<std::vector<uint8_t>>();
  writing_->swap(out_);
  asio::async_write(*socket_, asio::buffer(*writing_),
                    [self = shared_from_this(), conn = conn_, buf = writing_](const boost::system::error_code& ec, size_t) {
                      if (conn != self->conn_) return;
                      self->writing_.reset();
                      if (ec) return;  // the read side sees the connection go
                      self->Flush();
                    });
}

}  // namespace fibnic
