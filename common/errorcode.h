#pragma once

#include <QLatin1StringView>

namespace cloop {

// The error codes that code decides on, as values: whoever makes such an
// error says Error::make(ErrorCode::…), whoever branches on one asks
// error.is(ErrorCode::…), and errorCodeName() is the one place that spells
// them as they cross the wire and the admin API. Codes nobody branches on
// stay text where they are made.
enum class ErrorCode
{
    // Storage

    StorageError, // the database could not answer; nothing was changed

    // Credentials and trust

    Revoked, // the credential was revoked
    UnknownCredential, // the hub never issued it (or its database was replaced)
    BundleUnpinned, // an enrollment bundle without a pin of the hub's key
    CredentialUnpinned, // a credential file without one
    InsecureUrl, // plaintext to a host that is not this machine

    // Dispatch

    DeviceBusy, // another run holds the device: the run waits
    ExecutorCannotAttach, // this executor cannot take the device: try another

    // Device I/O

    WouldBlock, // the interface cannot take the frame now
    LinkDown, // the interface is down
    DeviceGone, // the interface no longer exists
    InterfaceGone, // the interface to remove no longer exists
    InvalidFrame, // a frame the interface cannot carry
    UsbBusy, // another USB/IP connection has the device
};

constexpr QLatin1StringView errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::StorageError:
        return QLatin1StringView("storage_error");
    case ErrorCode::Revoked:
        return QLatin1StringView("revoked");
    case ErrorCode::UnknownCredential:
        return QLatin1StringView("unknown_credential");
    case ErrorCode::BundleUnpinned:
        return QLatin1StringView("bundle_unpinned");
    case ErrorCode::CredentialUnpinned:
        return QLatin1StringView("credential_unpinned");
    case ErrorCode::InsecureUrl:
        return QLatin1StringView("insecure_url");
    case ErrorCode::DeviceBusy:
        return QLatin1StringView("device_busy");
    case ErrorCode::ExecutorCannotAttach:
        return QLatin1StringView("executor_cannot_attach");
    case ErrorCode::WouldBlock:
        return QLatin1StringView("would_block");
    case ErrorCode::LinkDown:
        return QLatin1StringView("link_down");
    case ErrorCode::DeviceGone:
        return QLatin1StringView("device_gone");
    case ErrorCode::InterfaceGone:
        return QLatin1StringView("interface_gone");
    case ErrorCode::InvalidFrame:
        return QLatin1StringView("invalid_frame");
    case ErrorCode::UsbBusy:
        return QLatin1StringView("usb_busy");
    }
    return QLatin1StringView("unknown_error");
}

} // namespace cloop
