#include "common/daemon/daemonconnector.h"

#include "cloop/buildinfo.h"
#include "common/logging.h"
#include "common/net/hubtls.h"
#include "common/net/huburls.h"
#include "common/tunnel/tunnelclient.h"
#include "common/util/atomicfile.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace cloop::daemon {

namespace {
Error usage(const QString &message)
{
    return Error::make(QStringLiteral("usage"), message, true);
}

identity::EnrollmentBundle::Kind bundleKindFor(protocol::PeerRole role)
{
    return role == protocol::PeerRole::Forwarder ? identity::EnrollmentBundle::Kind::Forwarder
                                                 : identity::EnrollmentBundle::Kind::Executor;
}
} // namespace

DaemonConnector::DaemonConnector(DaemonConnectorOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_credentialFile(m_options.connection.credentialPath.isEmpty()
              ? identity::CredentialFile::defaultPath(m_options.defaultCredentialFile)
              : m_options.connection.credentialPath)
{ }

DaemonConnector::~DaemonConnector() = default;

QString DaemonConnector::roleName() const
{
    return protocol::roleName(m_options.role);
}

Status DaemonConnector::makeClient(
    const QList<QUrl> &hubs, const QString &pinText, const QString &caFile)
{
    auto pins = net::PinSet::parse(pinText);
    if (!pins)
        return pins.error();
    if (pins->isEmpty()) {
        // Only reached with --trust-ca-only: reading a bundle or a credential
        // refuses an empty pin otherwise.
        qCWarning(lcIdentity).noquote()
            << QStringLiteral("--trust-ca-only: %1 is trusted on its certificate's CA "
                              "chain alone, with no pin of its key")
                   .arg(net::describeHubUrls(hubs));
    } else if (m_options.connection.trustCaOnly) {
        qCInfo(lcIdentity).noquote()
            << "--trust-ca-only changes nothing here: the hub's key is pinned, and a pin is "
               "always checked";
    }
    auto trust = trustFor(*pins, caFile);
    if (!trust)
        return trust.error();
    tunnel::TunnelClientOptions options;
    options.hubUrls = hubs;
    options.endpointPath = m_options.endpointPath;
    options.role = m_options.role;
    options.software = QString::fromLatin1(buildinfo::kVersion);
    options.allowInsecurePlaintext = m_options.connection.insecurePlaintext;
    options.insecureOption = QStringLiteral("--insecure-plaintext");
    options.trust = *trust;
    options.capabilities = m_options.capabilities;
    options.channel = m_options.channel;
    if (m_options.role == protocol::PeerRole::Executor)
        options.limits.maxChannels = tunnel::ChannelMultiplexer::Limits::kExecutorMaxChannels;
    m_client = std::make_unique<tunnel::TunnelClient>(options);
    return {};
}

void DaemonConnector::setCapabilities(const QJsonObject &capabilities)
{
    m_options.capabilities = capabilities;
    if (m_client)
        m_client->setCapabilities(capabilities);
}

net::PinRequirement DaemonConnector::pinRequirement() const
{
    return m_options.connection.trustCaOnly ? net::PinRequirement::Optional
                                            : net::PinRequirement::Required;
}

Status DaemonConnector::prepareFromBundle(const QString &bundleText, const QString &source)
{
    auto bundle = identity::EnrollmentBundle::decode(
        bundleText, bundleKindFor(m_options.role), pinRequirement());
    if (!bundle) {
        Error error = bundle.error();
        error.message = QStringLiteral("%1: %2").arg(source, error.message);
        if (error.is(ErrorCode::BundleUnpinned))
            error.message += QStringLiteral(
                ". Ask for a new bundle, or start with --trust-ca-only to trust the hub "
                "on its certificate's CA chain alone");
        return error;
    }
    // Fail before the one-time token is spent if the credential could not be kept.
    if (Status writable
        = util::probeWritableFolder(QFileInfo(m_credentialFile.path()).absolutePath());
        !writable)
        return usage(QStringLiteral("cannot save the credential at %1: %2")
                         .arg(m_credentialFile.path(), writable.error().message));
    if (auto existing = m_credentialFile.load(); existing && existing->credential)
        qCWarning(lcIdentity).noquote()
            << QStringLiteral("%1 holds the credential of %2 %3 (%4); a successful "
                              "enrollment replaces it")
                   .arg(m_credentialFile.path(), roleName())
                   .arg(existing->credential->id)
                   .arg(existing->credential->name);
    m_credential.setServers(bundle->hubs());
    m_credential.pin = bundle->pins;
    m_credential.caFile = m_options.connection.caFile;
    m_credential.extra = m_options.extra;
    if (Status made = makeClient(bundle->hubs(), bundle->pins, m_options.connection.caFile); !made)
        return made;
    m_client->setEnrollmentToken(bundle->token);
    return {};
}

Status DaemonConnector::prepare()
{
    if (!m_options.connection.bundle.isEmpty() && !m_options.connection.tokenFile.isEmpty())
        return usage(QStringLiteral("give either --bundle or --token-file, not both"));
    // A token file goes once redeemed, so a service that always names it
    // (the forwarder's unit) finds it gone on every later start: the saved
    // credential is used then.
    const QString &tokenFile = m_options.connection.tokenFile;
    const bool redeemed = !tokenFile.isEmpty() && !QFileInfo::exists(tokenFile)
        && QFileInfo::exists(m_credentialFile.path());
    if (redeemed)
        qCInfo(lcIdentity).noquote()
            << "the token file" << tokenFile << "is gone (redeemed); using the credential in"
            << m_credentialFile.path();
    if (!tokenFile.isEmpty() && !redeemed) {
        QFile file(m_options.connection.tokenFile);
        if (!file.open(QIODevice::ReadOnly))
            return usage(QStringLiteral("cannot read the token file %1: %2")
                             .arg(m_options.connection.tokenFile, file.errorString()));
        return prepareFromBundle(
            QString::fromUtf8(file.read(2 * identity::EnrollmentBundle::kMaxLength)),
            QStringLiteral("the bundle in %1").arg(m_options.connection.tokenFile));
    }
    if (!m_options.connection.bundle.isEmpty())
        return prepareFromBundle(
            m_options.connection.bundle, QStringLiteral("the bundle given with --bundle"));

    auto loaded = m_credentialFile.load(pinRequirement());
    if (!loaded) {
        Error error = loaded.error();
        if (error.is(ErrorCode::CredentialUnpinned))
            error.message += QStringLiteral(
                ", or start with --trust-ca-only to trust the hub on its certificate's CA "
                "chain alone");
        return error;
    }
    for (const QString &warning : std::as_const(loaded->warnings))
        qCWarning(lcIdentity).noquote() << warning;
    if (!loaded->credential) {
        const QString command = m_options.role == protocol::PeerRole::Forwarder
            ? QStringLiteral(
                "cloop forward enroll`: put the bundle in a file only you can read and start with "
                "cloop forward --token-file FILE")
            : QStringLiteral(
                "cloop executor enroll`: put the bundle in a file only you can read and start with "
                "cloop executor agent --token-file FILE");
        return usage(QStringLiteral(
            "this machine is not enrolled yet (no %1). Follow what is printed by `%2")
                         .arg(m_credentialFile.path(), command));
    }
    m_credential = *loaded->credential;
    const QString caFile
        = m_options.connection.caFile.isEmpty() ? m_credential.caFile : m_options.connection.caFile;
    if (Status made = makeClient(m_credential.servers(), m_credential.pin, caFile); !made)
        return made;
    m_client->setCredential(m_credential.credential);
    qCInfo(lcIdentity).noquote() << roleName() << m_credential.id << m_credential.name << "of"
                                 << net::describeHubUrls(m_credential.servers());
    return {};
}

void DaemonConnector::start()
{
    Q_ASSERT(m_client);
    connect(m_client.get(), &tunnel::TunnelClient::enrolled, this, &DaemonConnector::onEnrolled);
    connect(m_client.get(), &tunnel::TunnelClient::ready, this,
        [this](const protocol::Welcome &welcome) {
            adoptPins(welcome.pins);
            adoptHubs(welcome.hubs);
            Q_EMIT ready(welcome);
        });
    connect(m_client.get(), &tunnel::TunnelClient::controlReceived, this,
        [this](const protocol::ControlMessage &message) {
            if (const auto *announced = std::get_if<protocol::HubPins>(&message))
                adoptPins(announced->pins);
            if (const auto *members = std::get_if<protocol::HubMembers>(&message))
                adoptHubs(members->hubs);
        });
    connect(m_client.get(), &tunnel::TunnelClient::disconnected, this,
        [this](const QString &reason, qint64 retryInMs) {
            qCWarning(lcNet).noquote()
                << "not connected to" << m_client->currentUrl().toString() + QLatin1Char(':')
                << reason << "- retrying in"
                << QString::number(static_cast<double>(retryInMs) / 1000.0, 'f', 1) << "s";
        });
    connect(m_client.get(), &tunnel::TunnelClient::refused, this, [this](const Error &error) {
        qCCritical(lcNet).noquote()
            << "the hub refused this" << roleName() << "for good:" << error.message;
        Q_EMIT finished(kExitRefused);
    });
    m_client->start();
}

void DaemonConnector::stop()
{
    if (m_client)
        m_client->stop();
    Q_EMIT finished(kExitStopped);
}

Result<net::HubTrust> DaemonConnector::trustFor(
    const net::PinSet &pins, const QString &caFile) const
{
    auto trust = net::HubTrust::fromPinsAndCaFile(pins, caFile);
    if (!trust)
        return trust.error();
    // Only what a daemon's own command line offers: it has no --pin.
    trust->setUntrustedRemedy(QStringLiteral(
        " (add the hub's CA with --ca, or enroll with a bundle that pins the hub's key)"));
    trust->setMismatchRemedy(mismatchRemedy());
    return trust;
}

QString DaemonConnector::repinCommand() const
{
    const QString program = m_options.role == protocol::PeerRole::Forwarder
        ? QStringLiteral("cloop forward repin")
        : QStringLiteral("cloop executor agent repin");
    return QStringLiteral("%1 --credential-file %2 --pin PIN")
        .arg(program, m_credentialFile.path());
}

QString DaemonConnector::mismatchRemedy() const
{
    return QStringLiteral(". If the hub's key was rotated while this %1 was away, compare the pin "
                          "`cloop hub pin` prints on the hub, then on this machine run `%2` and "
                          "restart it")
        .arg(roleName(), repinCommand());
}

void DaemonConnector::adoptPins(const QStringList &pins)
{
    // A hub before protocol 26 announces nothing; CA-only trust stays so.
    if (pins.isEmpty() || m_credential.pin.isEmpty())
        return;
    const QString announced = pins.join(QLatin1Char(','));
    auto parsed = net::PinSet::parse(announced);
    const auto current = net::PinSet::parse(m_credential.pin);
    if (!parsed || (current && *parsed == *current))
        return;
    identity::DaemonCredential updated = m_credential;
    updated.pin = announced;
    if (Status saved = saveCredential(updated); !saved) {
        qCWarning(lcIdentity).noquote()
            << "cannot keep the pins the hub announced:" << saved.error().message;
        return;
    }
    const QString caFile
        = m_options.connection.caFile.isEmpty() ? m_credential.caFile : m_options.connection.caFile;
    if (auto trust = trustFor(*parsed, caFile))
        m_client->setTrust(*trust);
    qCInfo(lcIdentity).noquote() << "the hub's keys are now pinned as" << announced << "(kept in"
                                 << m_credentialFile.path() + QLatin1Char(')');
}

void DaemonConnector::adoptHubs(const QList<QUrl> &hubs)
{
    // A hub before protocol 29 announces nothing.
    const QList<QUrl> current = m_credential.servers();
    if (hubs.isEmpty() || hubs == current)
        return;
    const bool keepsOne = std::any_of(hubs.cbegin(), hubs.cend(), [&current](const QUrl &hub) {
        return std::any_of(current.cbegin(), current.cend(),
            [&hub](const QUrl &known) { return net::sameHub(hub, known); });
    });
    if (!keepsOne) {
        if (hubs != m_ignoredHubs)
            qCWarning(lcIdentity).noquote()
                << QStringLiteral("ignoring the hub URLs the hub announced (%1): none of them is "
                                  "one this %2 dials (%3), and a hub never moves a daemon "
                                  "wholly elsewhere")
                       .arg(net::describeHubUrls(hubs), roleName(), net::describeHubUrls(current));
        m_ignoredHubs = hubs;
        return;
    }
    identity::DaemonCredential updated = m_credential;
    updated.setServers(hubs);
    if (Status saved = saveCredential(updated); !saved) {
        qCWarning(lcIdentity).noquote()
            << "cannot keep the hub URLs the hub announced:" << saved.error().message;
        return;
    }
    m_client->setHubUrls(hubs);
    qCInfo(lcIdentity).noquote() << "the hub is now dialled at" << net::describeHubUrls(hubs)
                                 << "in this order (kept in"
                                 << m_credentialFile.path() + QLatin1Char(')');
}

Status DaemonConnector::saveCredential(const identity::DaemonCredential &credential)
{
    if (Status written = m_credentialFile.save(credential); !written)
        return written;
    m_credential = credential;
    return {};
}

void DaemonConnector::giveUp(const QString &reason, int exitCode)
{
    qCCritical(lcNet).noquote() << reason;
    if (m_client)
        m_client->stop();
    Q_EMIT finished(exitCode);
}

void DaemonConnector::onEnrolled(const protocol::Enrolled &enrolled)
{
    identity::DaemonCredential saved = m_credential;
    saved.id = enrolled.id;
    saved.name = enrolled.name;
    saved.credential = enrolled.credential;
    saved.enrolledAt = QDateTime::currentDateTimeUtc();
    if (Status written = m_credentialFile.save(saved); !written) {
        qCCritical(lcIdentity).noquote()
            << "enrolled as" << roleName() << enrolled.id
            << "but could not save the credential:" << written.error().message
            << "- this enrollment is lost; enroll again";
        m_client->stop();
        Q_EMIT finished(kExitFailure);
        return;
    }
    m_credential = saved;
    m_enrolledNow = true;
    qCInfo(lcIdentity).noquote() << QStringLiteral("enrolled as %1 %2 %3; credential saved to %4")
                                        .arg(roleName())
                                        .arg(enrolled.id)
                                        .arg(enrolled.name, m_credentialFile.path());
    if (!m_options.connection.tokenFile.isEmpty()) {
        if (QFile::remove(m_options.connection.tokenFile))
            qCInfo(lcIdentity).noquote()
                << "deleted the redeemed token file" << m_options.connection.tokenFile;
        else
            qCWarning(lcIdentity).noquote()
                << "could not delete the redeemed token file" << m_options.connection.tokenFile;
    }
}

} // namespace cloop::daemon
