#pragma once

// What the peer channel's tests share: members' TLS identities made in a
// temporary folder, a members table in memory, and a wait that does not
// nap between events.

#include "common/net/spkipin.h"
#include "hub/cluster/peerdirectory.h"
#include "hub/tls/devcertificate.h"

#include <QCoreApplication>
#include <QDir>
#include <QHash>
#include <QTimer>

#include <optional>

namespace cloop::testing {

// generateDevCertificate() for 127.0.0.1 into `directory`, then loaded.
inline Result<hub::TlsIdentity> makeMemberIdentity(const QString &directory, const QString &name)
{
    const QDir dir(directory);
    const QString certificate = dir.filePath(name + QStringLiteral(".cert.pem"));
    const QString key = dir.filePath(name + QStringLiteral(".key.pem"));
    hub::DevCertificateRequest request;
    request.hostNames = { QStringLiteral("127.0.0.1"), QStringLiteral("localhost") };
    request.validDays = 2;
    if (Status made = hub::generateDevCertificate(request, certificate, key); !made)
        return made.error();
    return hub::TlsIdentity::load(certificate, key);
}

inline hub::PeerMember memberOf(
    qint64 id, const QString &name, const hub::TlsIdentity &identity, quint16 port = 0)
{
    hub::PeerMember member;
    member.id = id;
    member.generation = 1;
    member.name = name;
    member.keyPin = identity.pin;
    if (port != 0)
        member.peerUrl = QUrl(QStringLiteral("wss://127.0.0.1:%1").arg(port));
    return member;
}

// The members table as the peer channel reads it: whoever is in it is alive.
class FakePeerDirectory final : public hub::PeerDirectory
{
public:
    void put(const hub::PeerMember &member) { m_members.insert(member.id, member); }
    // The member died: its lease lapsed.
    void remove(qint64 id) { m_members.remove(id); }

    std::optional<hub::PeerMember> liveMemberWithPin(const QString &pin) override
    {
        ++pinReads;
        for (const hub::PeerMember &member : std::as_const(m_members)) {
            if (member.keyPin == pin)
                return member;
        }
        return std::nullopt;
    }
    std::optional<hub::PeerMember> liveMember(qint64 id) override
    {
        ++idReads;
        const auto it = m_members.constFind(id);
        if (it == m_members.cend())
            return std::nullopt;
        return *it;
    }

    int pinReads = 0;
    int idReads = 0;

private:
    QHash<qint64, hub::PeerMember> m_members;
};

// Like QTest::qWaitFor, but sleeps only while no event is pending:
// qWaitFor naps 10 ms after every pass, and a bulk transfer of many round
// trips would crawl. The bound only matters when something hangs.
template <typename Predicate> bool waitUntil(Predicate predicate, int timeoutMs = 60'000)
{
    QTimer deadline;
    deadline.setSingleShot(true);
    deadline.start(timeoutMs);
    while (!predicate()) {
        if (!deadline.isActive())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
        // Outside exec() deleteLater() is honoured only on request.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    }
    return true;
}

} // namespace cloop::testing
