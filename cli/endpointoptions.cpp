#include "cli/endpointoptions.h"

#include "cli/storedlogin.h"
#include "hub/localaccess.h"

namespace cloop::cli {

namespace {

// Where the hub, its trust and the token come from, before the flags that
// override them.
struct Source
{
    QUrl url;
    QString token;
    QString pin;
    QString caFile;
    QString description;
};

Result<Source> fromLocalHub(const QString &dataDir)
{
    auto local = hub::LocalAccess::load(dataDir);
    if (!local)
        return local.error();
    return Source { local->url, local->token, local->pin, QString(),
        QStringLiteral("%1/%2").arg(dataDir, hub::LocalAccess::fileName()) };
}

Result<Source> fromLogin(const StoredLogin &store, const LoginRecord &login)
{
    auto token = store.token(login);
    if (!token)
        return token.error();
    return Source {
        login.hub, *token, login.pin, login.caFile,
        QStringLiteral("context \"%1\" of the stored logins (%2)").arg(login.name, store.filePath())
    };
}

// The context for `url`: the current one when it is for that hub, else the
// first that is.
std::optional<LoginRecord> loginFor(const StoredLogin::Contexts &contexts, const QUrl &url)
{
    if (const LoginRecord *current = contexts.named(contexts.current);
        current && current->isFor(url))
        return *current;
    for (const LoginRecord &login : contexts.all) {
        if (login.isFor(url))
            return login;
    }
    return std::nullopt;
}

Error usage(const QString &message)
{
    return Error::make(QStringLiteral("usage"), message, true);
}

} // namespace

void EndpointOptions::addTo(util::CommandLine &commandLine)
{
    commandLine.addOptions({ m_hub, m_data, m_context, m_pin, m_ca });
}

Result<net::HubTrust> makeHubTrust(const QString &pin, const QString &caFile)
{
    auto pins = net::PinSet::parse(pin);
    if (!pins)
        return pins.error();
    return net::HubTrust::fromPinsAndCaFile(*pins, caFile);
}

Result<AdminEndpoint> EndpointOptions::resolve(const QCommandLineParser &parser) const
{
    if (int(parser.isSet(m_hub)) + int(parser.isSet(m_data)) + int(parser.isSet(m_context)) > 1)
        return usage(
            QStringLiteral("give one of --hub URL (a hub elsewhere), --data DIR (the hub on this "
                           "machine) and --context NAME (a stored login), not more"));
    const StoredLogin store;
    auto source = [&]() -> Result<Source> {
        if (parser.isSet(m_data))
            return fromLocalHub(parser.value(m_data));
        if (parser.isSet(m_context)) {
            auto login = store.context(parser.value(m_context));
            if (!login)
                return login.error();
            return fromLogin(store, *login);
        }
        if (parser.isSet(m_hub)) {
            const QUrl url(parser.value(m_hub), QUrl::StrictMode);
            // A URL that is not one says so before anything about tokens.
            if (!parser.value(m_hub).contains(QLatin1String("://")))
                return usage(QStringLiteral("--hub \"%1\" is not a hub URL (write wss://%1)")
                                 .arg(parser.value(m_hub)));
            if (Status acceptable = checkAdminUrl(url); !acceptable)
                return usage(QStringLiteral("--hub \"%1\": %2")
                                 .arg(parser.value(m_hub), acceptable.error().message));
            auto contexts = store.contexts();
            const std::optional<LoginRecord> stored
                = contexts ? loginFor(*contexts, url) : std::nullopt;
            Source fromFlags { url, qEnvironmentVariable("CLOOP_TOKEN"), {}, {},
                QStringLiteral("$CLOOP_TOKEN") };
            if (!stored) {
                if (fromFlags.token.isEmpty())
                    return usage(
                        QStringLiteral("--hub needs an API token: set $CLOOP_TOKEN, or run "
                                       "`cloop login --hub %1` once")
                            .arg(parser.value(m_hub)));
                return fromFlags;
            }
            // $CLOOP_TOKEN wins over the stored token; the login still says how to trust the hub.
            if (!fromFlags.token.isEmpty())
                return Source { url, fromFlags.token, stored->pin, stored->caFile,
                    fromFlags.description };
            return fromLogin(store, *stored);
        }
        auto login = store.load();
        if (!login)
            return login.error();
        if (login->has_value())
            return fromLogin(store, **login);
        auto local = fromLocalHub(hub::defaultHubDataDir());
        if (!local)
            return usage(local.error().message
                + QStringLiteral(", or log in once with `cloop login --hub URL`"));
        return local;
    }();
    if (!source)
        return source.error();
    // Whoever sets $CLOOP_TOKEN means to act as that token's owner, with
    // whichever hub was found: never silently as the local administrator.
    if (const QString token = qEnvironmentVariable("CLOOP_TOKEN");
        !token.isEmpty() && source->token != token) {
        source->token = token;
        source->description = QStringLiteral("$CLOOP_TOKEN");
    }
    if (Status acceptable = checkAdminUrl(source->url); !acceptable)
        return acceptable.error();
    auto trust = makeHubTrust(parser.isSet(m_pin) ? parser.value(m_pin) : source->pin,
        parser.isSet(m_ca) ? parser.value(m_ca) : source->caFile);
    if (!trust)
        return trust.error();
    return AdminEndpoint { source->url, source->token, *trust, source->description };
}

} // namespace cloop::cli
