// What every route/neighbour source is to fibnicd: a name, Start/Stop, whether
// its initial state is in, and its stats as JSON. fibnicd keeps its sources in
// one SourceRegistry built from the config; /api/v1/status, /metrics and
// fibnicctl show them by iterating it (the JSON key is the source's name).
//
// A source runs on the thread its owner says (the kernel, FPM and file
// sources on fibnicd's event loop, the api source on the web's); call each
// one's methods from that thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace fibnic {

class Source {
 public:
  virtual ~Source() = default;
  // "kernel", "fpm", "file", "api": the key of its stats in /api/v1/status.
  virtual const char* name() const = 0;
  virtual Status Start() = 0;
  virtual void Stop() = 0;
  // The state the source had when it started has been handed to its sink (the
  // kernel's first dump, the files read). A source whose origin has no such
  // moment (zebra replays whenever it connects; the REST API) is done at once.
  // fibnicd writes the device only once every source is done.
  virtual bool initial_sync_done() const = 0;
  virtual nlohmann::json StatsJson() const = 0;  // an object: routes, errors, ...
  // One word for operators (fibnicctl status, the dashboard): "up", or how
  // the source is not — "down" (FPM: no zebra connected), "dumping" or
  // "refusing" (the kernel source).
  virtual std::string State() const { return "up"; }
};

class SourceRegistry {
 public:
  // Sources start in the order they were added and stop in the reverse.
  // Returns the source, for its owner's own calls (a reload, a port).
  template <typename S>
  S& Add(std::unique_ptr<S> source) {
    S& added = *source;
    sources_.push_back(std::move(source));
    return added;
  }
  // Starts every source not yet started; the first failure stops there and
  // comes back naming the source.
  Status StartAll();
  void StopAll();
  bool initial_sync_done() const;
  // {name: StatsJson() with its "state"} for every source.
  nlohmann::json StatsJson() const;
  const std::vector<std::unique_ptr<Source>>& sources() const { return sources_; }

 private:
  std::vector<std::unique_ptr<Source>> sources_;
  size_t started_ = 0;
};

}  // namespace fibnic
