#include "hub/cluster/peerwire.h"

#include "common/net/hubtls.h"
#include "common/net/spkipin.h"

#include <QSslSocket>

namespace cloop::hub {

tunnel::ChannelMultiplexer::Limits peerMultiplexerLimits()
{
    tunnel::ChannelMultiplexer::Limits limits;
    limits.maxChannels = 4096;
    limits.maxQueuedPerConnection = 64 * 1024 * 1024;
    return limits;
}

QSslConfiguration peerTlsConfiguration(const QList<QSslCertificate> &chain, const QSslKey &key)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificateChain(chain);
    tls.setPrivateKey(key);
    tls.setProtocol(QSsl::TlsV1_2OrLater);
    // On the server this also demands a certificate from the client.
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    // Setting the list (even empty) also stops Qt from loading the
    // system's roots on demand.
    tls.setCaCertificates({});
    return tls;
}

Status verifyMemberKey(const PeerMember &member, const QSslCertificate &leaf)
{
    if (leaf.isNull())
        return Error::make(
            QStringLiteral("peer_unverified"), QStringLiteral("it presented no certificate"));
    const auto pins = net::PinSet::parse(member.keyPin);
    if (!pins || pins->isEmpty())
        return Error::make(QStringLiteral("peer_unverified"),
            QStringLiteral("it has no usable key pin in the members table (\"%1\")")
                .arg(member.keyPin.left(80)));
    if (!pins->matches(leaf))
        return Error::make(QStringLiteral("pin_mismatch"),
            QStringLiteral("it presented the key %1, not its registered key %2")
                .arg(net::PinSet::pinOf(leaf), pins->toString()));
    return {};
}

Result<QList<QSslError>> waivableErrors(const PeerMember &member, const QList<QSslError> &errors,
    const QSslCertificate &leaf, CertificateRole role)
{
    if (Status key = verifyMemberKey(member, leaf); !key)
        return key.error();
    QList<QSslError> purpose;
    QList<QSslError> rest;
    for (const QSslError &error : errors) {
        if (role == CertificateRole::Client && error.error() == QSslError::InvalidPurpose)
            purpose.append(error);
        else
            rest.append(error);
    }
    // The key is the member's: the daemon's rule applies to the rest as it stands.
    const net::HubTrust trust(net::PinSet::ofCertificate(leaf), {});
    auto verdict = trust.judge(rest, leaf);
    if (!verdict)
        return verdict.error();
    return *verdict + purpose;
}

} // namespace cloop::hub
