#include "common/daemon/legclient.h"

#include "common/daemon/daemonconnector.h"
#include "common/logging.h"
#include "common/net/huburls.h"
#include "common/tunnel/tunnelclient.h"

namespace cloop::daemon {

namespace {
// The hub a leg goes to, or why none.
Result<QUrl> legHubUrl(const tunnel::TunnelClient *session, const protocol::DirectLeg &leg)
{
    if (!leg.url.isEmpty())
        return net::parseHubUrl(leg.url, net::PlaintextHubUrls::LoopbackOnly);
    // Asked while the opening that named the leg is read, so on the session
    // that brought it.
    if (!session || session->state() != tunnel::TunnelClient::State::Ready)
        return Error::make(
            QStringLiteral("not_connected"), QStringLiteral("the daemon is not connected now"));
    return session->currentUrl();
}
} // namespace

tunnel::TunnelClient *makeLegClient(const tunnel::TunnelClient *session, const QString &credential,
    const protocol::DirectLeg &leg, QLatin1StringView endpointPath, std::chrono::milliseconds bound,
    QObject *parent)
{
    const auto url = legHubUrl(session, leg);
    if (!url || !session) {
        qCWarning(lcDaemon).noquote()
            << "a leg to" << (leg.url.isEmpty() ? QStringLiteral("the hub") : leg.url.left(200))
            << "is refused:"
            << (url ? QStringLiteral("the daemon has no session") : url.error().message);
        return nullptr;
    }
    tunnel::TunnelClientOptions options = session->options();
    options.hubUrls = { *url };
    options.endpointPath = QString(endpointPath);
    options.capabilities = {};
    options.channel.clear();
    options.streamTicket = leg.ticket;
    options.authenticationTimeout = bound;
    options.initialBackoff = std::chrono::milliseconds(100);
    options.maxBackoff = std::chrono::milliseconds(800);
    options.timing = options.timing.forLegs();
    auto *client = new tunnel::TunnelClient(std::move(options), parent);
    client->setCredential(credential);
    return client;
}

StreamLegDial::Dialer sessionLegDialer(
    const DaemonConnector &connector, QLatin1StringView endpointPath)
{
    return [&connector, endpointPath](const protocol::DirectLeg &leg, QObject *parent) {
        return makeLegClient(connector.client(), connector.credential().credential, leg,
            endpointPath, StreamLegDial::kDialBound, parent);
    };
}

} // namespace cloop::daemon
