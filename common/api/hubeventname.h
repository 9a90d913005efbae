#pragma once

#include <QLatin1StringView>

#include <array>

namespace cloop::api {

// The events of the hub's event stream (docs/api.md), by name.
namespace hubeventname {
inline constexpr QLatin1StringView kForwarderEnrolled { "forwarder.enrolled" };
inline constexpr QLatin1StringView kForwarderConnected { "forwarder.connected" };
inline constexpr QLatin1StringView kForwarderDisconnected { "forwarder.disconnected" };
inline constexpr QLatin1StringView kForwarderDevice { "forwarder.device" };
inline constexpr QLatin1StringView kForwarderRevoked { "forwarder.revoked" };
inline constexpr QLatin1StringView kBindingCreated { "binding.created" };
inline constexpr QLatin1StringView kBindingEnded { "binding.ended" };
inline constexpr QLatin1StringView kRequestFiled { "request.filed" };
inline constexpr QLatin1StringView kRequestDecided { "request.decided" };
inline constexpr QLatin1StringView kExecutorEnrolled { "executor.enrolled" };
inline constexpr QLatin1StringView kExecutorConnected { "executor.connected" };
inline constexpr QLatin1StringView kExecutorDisconnected { "executor.disconnected" };
inline constexpr QLatin1StringView kExecutorRevoked { "executor.revoked" };
inline constexpr QLatin1StringView kRunQueued { "run.queued" };
inline constexpr QLatin1StringView kRunStarted { "run.started" };
inline constexpr QLatin1StringView kRunFinished { "run.finished" };
inline constexpr QLatin1StringView kDeviceAttached { "device.attached" };
inline constexpr QLatin1StringView kDeviceDetached { "device.detached" };
inline constexpr QLatin1StringView kTokenRevoked { "token.revoked" };
inline constexpr QLatin1StringView kRoleChanged { "user.role_changed" };
inline constexpr std::array kAll { kForwarderEnrolled, kForwarderConnected, kForwarderDisconnected,
    kForwarderDevice, kForwarderRevoked, kBindingCreated, kBindingEnded, kRequestFiled,
    kRequestDecided, kExecutorEnrolled, kExecutorConnected, kExecutorDisconnected, kExecutorRevoked,
    kRunQueued, kRunStarted, kRunFinished, kDeviceAttached, kDeviceDetached, kTokenRevoked,
    kRoleChanged };
// What events of one family start with: "forwarder.", "binding.", …
inline constexpr QLatin1StringView kForwarderFamily { "forwarder." };
inline constexpr QLatin1StringView kBindingFamily { "binding." };
inline constexpr QLatin1StringView kRequestFamily { "request." };
inline constexpr QLatin1StringView kExecutorFamily { "executor." };
} // namespace hubeventname

} // namespace cloop::api
