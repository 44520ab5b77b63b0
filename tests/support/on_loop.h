// Runs a function on an io_context's thread and waits for its result: the
// sources and servers keep their state on their own loop, so tests read it
// (stats, tables) from there rather than racing it.
#pragma once

#include <future>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace fibnic::testing {

template <typename F>
auto OnLoop(boost::asio::io_context& io, F f) {
  std::packaged_task<decltype(f())()> task(std::move(f));
  auto result = task.get_future();
  boost::asio::post(io, [&task] { task(); });
  return result.get();
}

}  // namespace fibnic::testing
