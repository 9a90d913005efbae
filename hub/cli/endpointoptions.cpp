#include "hub/cli/endpointoptions.h"

#include "hub/localaccess.h"

namespace cloop::cli {

void EndpointOptions::addTo(QCommandLineParser &parser)
{
    parser.addOptions({m_hub, m_data, m_pin, m_ca});
}

Result<AdminEndpoint> EndpointOptions::resolve(const QCommandLineParser &parser) const
{
    AdminEndpoint endpoint;
    QString pin = parser.value(m_pin);
    if (parser.isSet(m_hub)) {
        endpoint.url = QUrl(parser.value(m_hub), QUrl::StrictMode);
        endpoint.token = qEnvironmentVariable("CLOOP_TOKEN");
        if (endpoint.token.isEmpty())
            return Error::make(QStringLiteral("usage"),
                               QStringLiteral("--hub needs an API token in $CLOOP_TOKEN"), true);
    } else {
        const QString dataDir = parser.isSet(m_data) ? parser.value(m_data) : hub::defaultHubDataDir();
        auto local = hub::LocalAccess::load(dataDir);
        if (!local)
            return local.error();
        endpoint.url = local->url;
        endpoint.token = local->token;
        if (pin.isEmpty())
            pin = local->pin;
    }
    auto pins = net::PinSet::parse(pin);
    if (!pins)
        return pins.error();
    QList<QSslCertificate> authorities;
    if (parser.isSet(m_ca)) {
        auto loaded = net::HubTrust::loadAuthorities(parser.value(m_ca));
        if (!loaded)
            return loaded.error();
        authorities = *loaded;
    }
    endpoint.trust = net::HubTrust(*pins, authorities);
    return endpoint;
}

} // namespace cloop::cli
