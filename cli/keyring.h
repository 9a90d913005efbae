#pragma once

#include "common/result.h"

#include <QString>

#include <chrono>

namespace cloop::cli {

// The desktop's keyring (the Secret Service on Linux) through QtKeychain,
// used synchronously: each call runs its job in a local event loop and gives
// up after the timeout (a keyring may ask the person to unlock it). Where no
// keyring is reachable, as on a headless machine, every call fails quickly
// and the caller chooses what to do; nothing ever falls back to plain text
// here.
class Keyring
{
public:
    explicit Keyring(QString service, std::chrono::milliseconds timeout = std::chrono::seconds(30))
        : m_service(std::move(service))
        , m_timeout(timeout)
    { }

    Status write(const QString &key, const QString &secret) const;
    Result<QString> read(const QString &key) const;
    // Removing what is not there succeeds.
    Status remove(const QString &key) const;

private:
    QString m_service;
    std::chrono::milliseconds m_timeout;
};

} // namespace cloop::cli
