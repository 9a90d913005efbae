#pragma once

#include "common/net/spkipin.h"
#include "common/result.h"

#include <QList>
#include <QString>
#include <QUrl>

namespace cloop::identity {

// One paste that carries everything a new daemon needs: where the hub is,
// the one-time token, and the key to pin. Layout:
//
//   <prefix> base64url( JSON{"u":url,"us":urls,"t":token,"p":pins} || checksum )
//
// "u" is the first hub URL, all a bundle held before hubs formed clusters, so
// a daemon of that time still reads a newer bundle; "us" (only when there
// are several) lists every URL in the order they are tried, "u" first.
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
    QUrl hub; // the first hub URL
    QList<QUrl> moreHubs; // further members of the hub's cluster, tried after `hub`
    QString token;
    QString pins;

    // Every hub URL in the order a daemon tries them: `hub`, then `moreHubs`.
    QList<QUrl> hubs() const;
    void setHubs(const QList<QUrl> &urls);

    // The longest bundle decode() takes, whitespace aside: room for
    // net::kMaxHubUrls URLs of the longest length, a cluster's pins and the
    // token. A file holding a bundle is read up to twice that (line breaks).
    static constexpr qsizetype kMaxLength = 8192;

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
    // caller's operator chose CA-only trust. Every hub URL is checked
    // (net::parseHubUrl); plaintext to another host is the daemon's to judge.
    static Result<EnrollmentBundle> decode(const QString &text, Kind expected,
        net::PinRequirement pin = net::PinRequirement::Required);
};

} // namespace cloop::identity
