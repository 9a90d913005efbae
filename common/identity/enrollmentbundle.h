#pragma once

#include "common/net/spkipin.h"
#include "common/result.h"

#include <QString>
#include <QUrl>

namespace cloop::identity {

// One paste that carries everything a new daemon needs: where the hub is,
// the one-time token, and the key to pin. Layout:
//
//   <prefix> base64url( JSON{"u":url,"t":token,"p":pins} || checksum )
//
// checksum = first 4 bytes of SHA-256(prefix || JSON), so a truncated or
// mistyped paste is told apart from a valid bundle before anything is sent.
struct EnrollmentBundle
{
    enum class Kind
    {
        Forwarder,
        Executor
    };

    Kind kind = Kind::Forwarder;
    QUrl hub;
    QString token;
    QString pins;

    static QString prefixFor(Kind kind); // "cloopfwd1." / "cloopexe1."
    QString encode() const;
    // One shell line that puts the bundle in a file only its owner can read
    // and starts `daemonCommand` (e.g. "cloop forward") with --token-file.
    // The bundle appears only as an argument of printf, a shell builtin, so
    // it is never on a process's command line, where every local user could
    // read it.
    QString tokenFileCommand(const QString &daemonCommand, const QString &file) const;
    // The same for the machine's service, run as root: `… install --token-file FILE`.
    QString installCommand(const QString &daemonCommand, const QString &file) const;
    // A bundle without a pin is refused ("bundle_unpinned") unless the
    // caller's operator chose CA-only trust.
    static Result<EnrollmentBundle> decode(const QString &text, Kind expected,
        net::PinRequirement pin = net::PinRequirement::Required);
};

} // namespace cloop::identity
