#pragma once

#include "common/result.h"
#include "common/tunnel/channelmultiplexer.h"
#include "hub/cluster/peerdirectory.h"

#include <QList>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslError>
#include <QSslKey>

namespace cloop::hub {

// What both ends of a link between hub members agree on: where it is
// served, how its TLS is set up, and how a certificate proves a member.

inline constexpr QLatin1StringView kPeerEndpointPath { "/cluster/peer" };

// One peer link carries the device streams of every run between two
// members, so it may have far more channels than a daemon's tunnel, and
// more queued in all; each channel keeps a daemon's window and cap, so one
// stream still cannot take more than it would on a daemon's tunnel.
tunnel::ChannelMultiplexer::Limits peerMultiplexerLimits();

// Either end of a peer link: this member's certificate chain and key, the
// peer's certificate required, and no certificate authority at all, so
// that only a member's pin can vouch for a key (a certificate any public
// CA issued is not enough).
QSslConfiguration peerTlsConfiguration(const QList<QSslCertificate> &chain, const QSslKey &key);

// Whether `leaf` is the key of `member`: its pin must be the member's.
// Refusals speak of the member as "it": the caller names it.
Status verifyMemberKey(const PeerMember &member, const QSslCertificate &leaf);

// Which end of a link showed the certificate.
enum class CertificateRole
{
    Server, // the member this one dialled
    Client, // a member that connected here
};

// From an sslErrors handler, once the key is known to be the member's:
// the errors it is right to ignore, or why the certificate is refused (an
// expired one, the wrong host name). What is ignored is what
// net::HubTrust::judge ignores for a daemon whose pin vouches ("no trusted
// issuer" and its kin), and for a client certificate also "unsuitable for
// this purpose": a member's certificate is its hub's own, made for serving
// (serverAuth), and the members table pins its key, so that the same key
// also proves the member as a client is what the cluster means it to do.
Result<QList<QSslError>> waivableErrors(const PeerMember &member, const QList<QSslError> &errors,
    const QSslCertificate &leaf, CertificateRole role);

} // namespace cloop::hub
