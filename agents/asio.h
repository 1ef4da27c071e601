// The Boost.Asio pieces agents/ uses. <utility> comes first because Boost 1.74's
// awaitable.hpp uses std::exchange without including it, which g++ 12 rejects.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
// clang-format on
