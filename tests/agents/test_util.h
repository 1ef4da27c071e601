// Shared helpers of the agents tests: run a coroutine to completion, small scripts.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>
#include <future>

#include "agents/asio.h"

namespace kd::agents::test {

template <class T>
T run_sync(boost::asio::io_context& io, boost::asio::awaitable<T> aw) {
  std::future<T> f = boost::asio::co_spawn(io, std::move(aw), boost::asio::use_future);
  io.restart();
  io.run();
  return f.get();
}

}  // namespace kd::agents::test
