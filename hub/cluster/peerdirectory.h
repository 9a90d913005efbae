#pragma once

#include <QString>
#include <QUrl>

#include <optional>

namespace cloop::hub {

// Another member of the hub cluster as the peer channel needs it: who it is
// (id, and the generation of its current start), where it listens for its
// peers, and the SPKI pin of its key, which is all that proves it.
struct PeerMember
{
    qint64 id = 0;
    qint64 generation = 0;
    QString name;
    QUrl peerUrl;
    QString keyPin; // sha256:<base64>
};

// "hub member 2 (hub-b.example:8443)", for every message about a member.
QString describeMember(const PeerMember &member);

// The live members, read at every handshake and every dial: members come,
// go and die, and a member whose lease lapsed must not get through with a
// certificate it still holds. The hub implements it over the members
// table; tests give a fake.
class PeerDirectory
{
public:
    virtual ~PeerDirectory() = default;

    // The live member whose key has this pin, if any.
    virtual std::optional<PeerMember> liveMemberWithPin(const QString &pin) = 0;
    // That member, if it is alive.
    virtual std::optional<PeerMember> liveMember(qint64 id) = 0;
};

} // namespace cloop::hub
