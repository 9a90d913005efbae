#include "daemon-forward/forwarderdaemon.h"

#include "cloop/buildinfo.h"
#include "common/identity/enrollmentbundle.h"
#include "common/logging.h"
#include "common/net/hubtls.h"
#include "common/tunnel/tunnelclient.h"
#include "common/util/atomicfile.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>

namespace cloop::forward {

namespace {
constexpr QLatin1StringView kEndpoint{"/api/forwarders/connect"};

Error usage(const QString &message)
{
    return Error::make(QStringLiteral("usage"), message, true);
}
} // namespace

ForwarderDaemon::ForwarderDaemon(ForwarderDaemonOptions options, QObject *parent)
    : QObject(parent),
      m_options(std::move(options)),
      m_credentialFile(m_options.credentialPath.isEmpty()
                               ? identity::CredentialFile::defaultPath(QStringLiteral("forwarder.json"))
                               : m_options.credentialPath)
{
}

ForwarderDaemon::~ForwarderDaemon() = default;

Status ForwarderDaemon::prepareFromBundle(const QString &bundleText)
{
    auto bundle = identity::EnrollmentBundle::decode(bundleText, identity::EnrollmentBundle::Kind::Forwarder);
    if (!bundle)
        return bundle.error();
    // Fail before the one-time token is spent if the credential could not be kept.
    if (Status writable = util::probeWritableFolder(QFileInfo(m_credentialFile.path()).absolutePath()); !writable)
        return usage(QStringLiteral("cannot save the credential at %1: %2")
                             .arg(m_credentialFile.path(), writable.error().message));
    if (auto existing = m_credentialFile.load(); existing && existing->credential)
        qCWarning(lcForward).noquote() << QStringLiteral("%1 holds the credential of forwarder %2 (%3); a successful "
                                                         "enrollment replaces it")
                                                  .arg(m_credentialFile.path())
                                                  .arg(existing->credential->id)
                                                  .arg(existing->credential->name);

    m_pendingCredential.server = bundle->hub;
    m_pendingCredential.pin = bundle->pins;
    m_pendingCredential.caFile = m_options.caFile;

    tunnel::TunnelClientOptions options;
    options.hubUrl = bundle->hub;
    options.endpointPath = kEndpoint;
    options.role = protocol::PeerRole::Forwarder;
    options.software = QString::fromLatin1(buildinfo::kVersion);
    options.allowInsecurePlaintext = m_options.insecurePlaintext;
    auto pins = net::PinSet::parse(bundle->pins);
    if (!pins)
        return pins.error();
    QList<QSslCertificate> authorities;
    if (!m_options.caFile.isEmpty()) {
        auto loaded = net::HubTrust::loadAuthorities(m_options.caFile);
        if (!loaded)
            return loaded.error();
        authorities = *loaded;
    }
    options.trust = net::HubTrust(*pins, authorities);
    m_client = std::make_unique<tunnel::TunnelClient>(options);
    m_client->setEnrollmentToken(bundle->token);
    return {};
}

Status ForwarderDaemon::prepare()
{
    if (!m_options.bundle.isEmpty() && !m_options.tokenFile.isEmpty())
        return usage(QStringLiteral("give either --bundle or --token-file, not both"));
    if (!m_options.tokenFile.isEmpty()) {
        QFile file(m_options.tokenFile);
        if (!file.open(QIODevice::ReadOnly))
            return usage(QStringLiteral("cannot read the token file %1: %2")
                                 .arg(m_options.tokenFile, file.errorString()));
        return prepareFromBundle(QString::fromUtf8(file.read(8192)));
    }
    if (!m_options.bundle.isEmpty())
        return prepareFromBundle(m_options.bundle);

    auto loaded = m_credentialFile.load();
    if (!loaded)
        return loaded.error();
    for (const QString &warning : std::as_const(loaded->warnings))
        qCWarning(lcForward).noquote() << warning;
    if (!loaded->credential)
        return usage(QStringLiteral("this machine is not enrolled yet (no %1). Run the command printed "
                                    "by `cloop forward enroll`: cloop forward --bundle cloopfwd1.…")
                             .arg(m_credentialFile.path()));
    const identity::DaemonCredential &credential = *loaded->credential;
    auto pins = net::PinSet::parse(credential.pin);
    if (!pins)
        return pins.error();
    const QString caFile = m_options.caFile.isEmpty() ? credential.caFile : m_options.caFile;
    QList<QSslCertificate> authorities;
    if (!caFile.isEmpty()) {
        auto loadedCa = net::HubTrust::loadAuthorities(caFile);
        if (!loadedCa)
            return loadedCa.error();
        authorities = *loadedCa;
    }
    tunnel::TunnelClientOptions options;
    options.hubUrl = credential.server;
    options.endpointPath = kEndpoint;
    options.role = protocol::PeerRole::Forwarder;
    options.software = QString::fromLatin1(buildinfo::kVersion);
    options.allowInsecurePlaintext = m_options.insecurePlaintext;
    options.trust = net::HubTrust(*pins, authorities);
    m_client = std::make_unique<tunnel::TunnelClient>(options);
    m_client->setCredential(credential.credential);
    qCInfo(lcForward).noquote() << "forwarder" << credential.id << credential.name << "of" << credential.server.toString();
    return {};
}

void ForwarderDaemon::start()
{
    Q_ASSERT(m_client);
    connect(m_client.get(), &tunnel::TunnelClient::enrolled, this, [this](const protocol::Enrolled &enrolled) {
        onEnrolled(enrolled.id, enrolled.name, enrolled.credential);
    });
    connect(m_client.get(), &tunnel::TunnelClient::ready, this, [](const protocol::Welcome &welcome) {
        qCInfo(lcForward).noquote() << "connected to the hub as forwarder" << welcome.id << welcome.name
                                    << "carrying"
                                    << (welcome.device ? welcome.device->describe() : QStringLiteral("nothing"));
    });
    connect(m_client.get(), &tunnel::TunnelClient::disconnected, this, [](const QString &reason, qint64 retryInMs) {
        qCWarning(lcForward).noquote() << "not connected:" << reason << "- retrying in"
                                       << QString::number(retryInMs / 1000.0, 'f', 1) << "s";
    });
    connect(m_client.get(), &tunnel::TunnelClient::refused, this, [this](const Error &error) {
        qCCritical(lcForward).noquote() << "the hub refused this forwarder for good:" << error.message;
        Q_EMIT finished(kExitRefused);
    });
    m_client->start();
}

void ForwarderDaemon::stop()
{
    if (m_client)
        m_client->stop();
    Q_EMIT finished(kExitStopped);
}

void ForwarderDaemon::onEnrolled(qint64 id, const QString &name, const QString &credential)
{
    identity::DaemonCredential saved = m_pendingCredential;
    saved.id = id;
    saved.name = name;
    saved.credential = credential;
    saved.enrolledAt = QDateTime::currentDateTimeUtc();
    if (Status written = m_credentialFile.save(saved); !written) {
        qCCritical(lcForward).noquote() << "enrolled as forwarder" << id << "but could not save the credential:"
                                        << written.error().message
                                        << "- this enrollment is lost; enroll again";
        m_client->stop();
        Q_EMIT finished(kExitFailure);
        return;
    }
    qCInfo(lcForward).noquote() << QStringLiteral("enrolled as forwarder %1 %2; credential saved to %3")
                                           .arg(id)
                                           .arg(name, m_credentialFile.path());
    if (!m_options.tokenFile.isEmpty()) {
        if (QFile::remove(m_options.tokenFile))
            qCInfo(lcForward).noquote() << "deleted the redeemed token file" << m_options.tokenFile;
        else
            qCWarning(lcForward).noquote() << "could not delete the redeemed token file" << m_options.tokenFile;
    }
}

} // namespace cloop::forward
