// fibnicd's sources beside a real FRR (tests/sources/frr_harness.h), on one
// event loop of their own as in fibnicd: the FPM source zebra connects to
// (it only hears which routes to answer) and the kernel source that brings
// zebra's routes from the kernel, once FRR's links exist.
#pragma once

#include <boost/asio.hpp>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "sources/fpm/fpm_source.h"
#include "sources/kernel/kernel_source.h"
#include "tests/sources/frr_harness.h"
#include "tests/support/on_loop.h"

namespace fibnic::testing {

class FrrSources {
 public:
  ~FrrSources() { Stop(); }

  // The kernel source's routes for the FPM source's replies: FPM listens
  // before FRR exists, the kernel source starts once FRR's links do; until
  // then the kernel holds nothing zebra sent.
  class KernelRoutes : public RouteNotes {
   public:
    explicit KernelRoutes(FrrSources& s) : s_(s) {}
    std::optional<Held> Find(const Prefix& p, uint32_t table) const override {
      return s_.kernel ? s_.kernel->route_notes()->Find(p, table) : std::nullopt;
    }
    void SetNote(const Prefix& p, uint8_t note) override {
      if (s_.kernel) s_.kernel->route_notes()->SetNote(p, note);
    }
    void ClearNotes() override {
      if (s_.kernel) s_.kernel->route_notes()->ClearNotes();
    }
    size_t Walk(size_t cursor, size_t max, uint32_t table,
                const std::function<void(const Prefix&, Held&)>& fn) override {
      return s_.kernel ? s_.kernel->route_notes()->Walk(cursor, max, table, fn) : 0;
    }

   private:
    FrrSources& s_;
  };

  // Runs f on the sources' loop and returns what it returns.
  template <typename F>
  auto OnLoop(F f) {
    return fibnic::testing::OnLoop(io, std::move(f));
  }

  // Starts the FPM source and the loop; false if it could not listen.
  bool StartFpm(FpmSourceConfig cfg) {
    cfg.port = 0;
    cfg.routes = &kernel_routes;
    if (!cfg.log) cfg.log = [](const std::string& m) { std::cout << "fpm: " << m << std::endl; };
    fpm = std::make_unique<FpmSource>(io, cfg);
    if (!fpm->Start().ok()) return false;
    thread = std::thread([this] { io.run(); });
    return true;
  }
  // The kernel source into `sink`, the FIBNIC port as FRR's harness names it.
  bool StartKernel(RibSink& sink) {
    KernelSourceConfig kc;
    kc.ports = FrrHarness::Ports();
    kc.log = [](const std::string& m) { std::cout << "kernel: " << m << std::endl; };
    return OnLoop([&] {
      kernel = std::make_unique<KernelSource>(io, sink, kc);
      return kernel->Start().ok();
    });
  }
  void Stop() {
    if (!thread.joinable()) return;
    OnLoop([&] {
      if (fpm) fpm->Stop();
      if (kernel) kernel->Stop();
      return true;
    });
    work.reset();
    io.stop();
    thread.join();
  }

  boost::asio::io_context io;
  KernelRoutes kernel_routes{*this};  // outlives fpm, which uses it
  std::unique_ptr<FpmSource> fpm;
  std::unique_ptr<KernelSource> kernel;

 private:
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread thread;
};

}  // namespace fibnic::testing
