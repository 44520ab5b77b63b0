// A RibSink that records what a source told it: the current routes and
// neighbours, and every call in order (to check atomic replaces).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rib/route.h"

namespace fibnic::testing {

class RecordingSink : public RibSink {
 public:
  void UpsertRoute(const Route& r) override {
    std::lock_guard lk(mu_);
    routes_[r.prefix] = r;
    log_.push_back("upsert " + r.prefix.ToString());
  }
  void DeleteRoute(const Prefix& p, RouteSource) override {
    std::lock_guard lk(mu_);
    routes_.erase(p);
    log_.push_back("delete " + p.ToString());
  }
  void UpsertNeighbor(const Neighbor& n) override {
    std::lock_guard lk(mu_);
    neighbors_[n.addr] = n;
    log_.push_back("neigh " + n.addr.ToString());
  }
  void DeleteNeighbor(const IpAddr& a) override {
    std::lock_guard lk(mu_);
    neighbors_.erase(a);
    log_.push_back("neigh-delete " + a.ToString());
  }

  std::map<Prefix, Route> routes() const { std::lock_guard lk(mu_); return routes_; }
  std::map<IpAddr, Neighbor> neighbors() const { std::lock_guard lk(mu_); return neighbors_; }
  std::vector<std::string> TakeLog() {
    std::lock_guard lk(mu_);
    auto out = std::move(log_);
    log_.clear();
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<Prefix, Route> routes_;
  std::map<IpAddr, Neighbor> neighbors_;
  std::vector<std::string> log_;
};

}  // namespace fibnic::testing
